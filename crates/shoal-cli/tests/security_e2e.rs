//! Authentication and permissions through the real binary: tokens made by
//! `shoal token new`, a server with `[auth]` on, the shell as a superuser
//! and as users with narrow grants: no token and a wrong token refused,
//! each kind of call allowed and denied by its permission, a creator owning
//! its table, grants surviving a restart, revoke, the HTTP surface asking
//! for a token, Thrift calls acting as `auth.thrift_user`, and the audit
//! lines written.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{ServerProcess, shell, shoal_bin};

/// Makes a token for `user` with `shoal token new`, appended to `tokens`;
/// returns the file holding the token.
fn new_token(dir: &Path, tokens: &Path, user: &str) -> PathBuf {
    let out = dir.join(format!("{user}.token"));
    let run = Command::new(shoal_bin())
        .args(["token", "new", user, "--file"])
        .arg(tokens)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let printed = String::from_utf8(run.stdout).unwrap();
    assert_eq!(
        printed.trim(),
        std::fs::read_to_string(&out).unwrap().trim()
    );
    out
}

/// Runs shell commands as the holder of `token`: (exit code, stdout, stderr).
fn as_user(server: &ServerProcess, token: &Path, script: &str) -> (i32, String, String) {
    let t = token.to_str().unwrap();
    shell(server.grpc, &["--token-file", t], script)
}

/// Asserts `script` succeeds for the holder of `token`; returns stdout.
fn allowed(server: &ServerProcess, token: &Path, script: &str) -> String {
    let (code, out, err) = as_user(server, token, script);
    assert_eq!(code, 0, "{script}: {out}\n{err}");
    out
}

/// Asserts `script` is refused with a message holding every `needles`.
fn denied(server: &ServerProcess, token: &Path, script: &str, needles: &[&str]) {
    let (code, out, err) = as_user(server, token, script);
    assert_ne!(code, 0, "{script} was allowed: {out}");
    for n in needles {
        assert!(err.contains(n), "{script}: {n:?} not in {err}");
    }
}

/// GET with an optional bearer token: (status, body).
fn http_get(addr: SocketAddr, path: &str, token: Option<&str>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let code = raw
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, raw)
}

/// The number of table names Thrift's `getTableNames` answers (binary
/// protocol, buffered transport).
fn thrift_table_count(addr: SocketAddr) -> u32 {
    let mut call = vec![0x80, 0x01, 0x00, 0x01];
    call.extend_from_slice(&13u32.to_be_bytes());
    call.extend_from_slice(b"getTableNames");
    call.extend_from_slice(&1u32.to_be_bytes());
    call.push(0);
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(&call).unwrap();
    // Header (4) + name length (4) + name (13) + seqid (4), then the
    // success field: type 0x0f (list), id 0, element type, count.
    let mut head = [0u8; 4 + 4 + 13 + 4 + 1 + 2 + 1 + 4];
    s.read_exact(&mut head).unwrap();
    assert_eq!(&head[..4], &[0x80, 0x01, 0x00, 0x02], "a reply");
    assert_eq!(head[25], 0x0f, "the success field: a list");
    u32::from_be_bytes(head[29..33].try_into().unwrap())
}

#[test]
fn tokens_permissions_grants_and_audit_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    let admin = new_token(dir.path(), &tokens, "admin");
    let alice = new_token(dir.path(), &tokens, "alice");
    let bob = new_token(dir.path(), &tokens, "bob");
    let audit = dir.path().join("audit.log");
    let config = support::write_config(
        dir.path(),
        &format!(
            "[auth]\nenabled = true\ntokens = {:?}\nsuperusers = [\"admin\"]\n\
             thrift_user = \"gateway\"\naudit_log = {:?}\n",
            tokens.display().to_string(),
            audit.display().to_string()
        ),
    );
    let data = dir.path().join("data");
    let server = ServerProcess::start(&data, Some(&config));

    // No token, a wrong token.
    let (code, _, err) = shell(server.grpc, &[], "list\n");
    assert_ne!(code, 0);
    assert!(err.contains("needs a token"), "{err}");
    let wrong = dir.path().join("wrong.token");
    std::fs::write(&wrong, "not-a-token\n").unwrap();
    denied(&server, &wrong, "list\n", &["not valid"]);

    // The superuser sets up; the grants replace per scope, as HBase's.
    allowed(
        &server,
        &admin,
        "create 't1', 'cf', 'cf2'\nput 't1', 'r1', 'cf:q', 'v1'\n\
         grant 'alice', 'R', 't1'\ngrant 'bob', 'W', 't1', 'cf'\n",
    );
    let perms = allowed(&server, &admin, "user_permission 't1'\n");
    assert!(
        perms.contains("alice") && perms.contains("actions=R"),
        "{perms}"
    );
    assert!(perms.contains("t1,cf: actions=W"), "{perms}");

    // alice: READ on t1.
    let got = allowed(&server, &alice, "get 't1', 'r1'\nscan 't1'\nlist\n");
    assert!(got.contains("value=v1") && got.contains("t1"), "{got}");
    denied(
        &server,
        &alice,
        "put 't1', 'r2', 'cf:q', 'x'\n",
        &["permission denied", "alice", "WRITE", "\"t1\""],
    );
    denied(&server, &alice, "incr 't1', 'c', 'cf:n', 1\n", &["WRITE"]);
    denied(
        &server,
        &alice,
        "create 't2', 'cf'\n",
        &["CREATE", "global"],
    );
    denied(
        &server,
        &alice,
        "flush 't1'\n",
        &["CREATE or ADMIN", "\"t1\""],
    );
    denied(&server, &alice, "disable 't1'\n", &["CREATE or ADMIN"]);
    denied(&server, &alice, "grant 'alice', 'RW', 't1'\n", &["ADMIN"]);
    denied(&server, &alice, "user_permission\n", &["ADMIN", "global"]);

    // bob: WRITE on family cf of t1 only.
    allowed(&server, &bob, "put 't1', 'r3', 'cf:q', 'b'\n");
    denied(
        &server,
        &bob,
        "put 't1', 'r3', 'cf2:q', 'b'\n",
        &["WRITE", "family \"cf2\""],
    );
    denied(&server, &bob, "get 't1', 'r1'\n", &["READ"]);
    denied(&server, &bob, "scan 't1'\n", &["READ"]);
    denied(&server, &bob, "deleteall 't1', 'r1'\n", &["WRITE"]);
    let listed = allowed(&server, &bob, "list\n");
    assert!(
        listed.contains("t1"),
        "a table bob holds a grant on: {listed}"
    );

    // CREATE globally: alice creates t2 and owns it (RWCA on it).
    allowed(&server, &admin, "grant 'alice', 'C'\n");
    allowed(
        &server,
        &alice,
        "create 't2', 'cf'\nput 't2', 'r', 'cf:q', 'mine'\nflush 't2'\n",
    );
    denied(&server, &bob, "get 't2', 'r'\n", &["READ"]);
    let listed = allowed(&server, &bob, "list\n");
    assert!(!listed.contains("t2"), "bob sees t2: {listed}");

    // HTTP: /healthz and (by default) /metrics open; the rest need a token.
    assert_eq!(http_get(server.http, "/healthz", None).0, 200);
    assert_eq!(http_get(server.http, "/metrics", None).0, 200);
    let (code, page) = http_get(server.http, "/api/status", None);
    assert_eq!(code, 401, "{page}");
    assert!(page.contains("WWW-Authenticate: Bearer") || page.contains("www-authenticate: Bearer"));
    let admin_token = std::fs::read_to_string(&admin).unwrap();
    assert_eq!(
        http_get(server.http, "/api/status", Some(admin_token.trim())).0,
        200
    );
    assert_eq!(http_get(server.http, "/", Some("wrong")).0, 401);
    // Each caller sees only the tables it may see (as `list`), and the
    // storage location only as a global ADMIN.
    let bob_token = std::fs::read_to_string(&bob).unwrap();
    for path in ["/api/status", "/"] {
        let (code, as_admin) = http_get(server.http, path, Some(admin_token.trim()));
        assert_eq!(code, 200);
        assert!(as_admin.contains("t2"), "{path} as admin: {as_admin}");
        let (code, as_bob) = http_get(server.http, path, Some(bob_token.trim()));
        assert_eq!(code, 200);
        assert!(as_bob.contains("t1"), "{path} as bob: {as_bob}");
        assert!(!as_bob.contains("t2"), "{path} as bob names t2: {as_bob}");
        assert!(
            !as_bob.contains(&data.display().to_string()),
            "{path} as bob shows the storage path: {as_bob}"
        );
    }

    // Thrift calls act as `gateway`, which holds nothing yet.
    let thrift = server.thrift.unwrap();
    assert_eq!(thrift_table_count(thrift), 0);
    allowed(&server, &admin, "grant 'gateway', 'R', 't1'\n");
    assert_eq!(thrift_table_count(thrift), 1);

    // The grants survive a restart.
    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    let server = ServerProcess::start(&data, Some(&config));
    let got = allowed(&server, &alice, "get 't1', 'r1'\nget 't2', 'r'\n");
    assert!(
        got.contains("value=v1") && got.contains("value=mine"),
        "{got}"
    );
    denied(&server, &bob, "get 't1', 'r1'\n", &["READ"]);
    assert_eq!(thrift_table_count(server.thrift.unwrap()), 1);

    // A token added to the file works after SIGHUP, not before.
    let carol = new_token(dir.path(), &tokens, "carol");
    denied(&server, &carol, "list\n", &["not valid"]);
    let hup = Command::new("kill")
        .args(["-HUP", &server.pid().unwrap().to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    let mut served = false;
    for _ in 0..50 {
        if as_user(&server, &carol, "list\n").0 == 0 {
            served = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(served, "carol's token was not taken on SIGHUP");

    // Revoke; dropping a table drops its grants.
    allowed(&server, &admin, "revoke 'alice', 't1'\n");
    denied(&server, &alice, "get 't1', 'r1'\n", &["READ"]);
    allowed(&server, &alice, "disable 't2'\ndrop 't2'\n");
    let perms = allowed(&server, &admin, "user_permission\n");
    assert!(!perms.contains("t2"), "t2's grants outlived it: {perms}");
    let (code, _, err) = as_user(&server, &admin, "revoke 'alice', 't1'\n");
    assert_ne!(code, 0);
    assert!(err.contains("holds nothing"), "{err}");

    // Namespaces: only a global ADMIN makes one; a grant on `@ns` covers
    // every table in it (and CREATE there), nothing outside it.
    denied(
        &server,
        &bob,
        "create_namespace 'ns1'\n",
        &["ADMIN", "global"],
    );
    allowed(
        &server,
        &admin,
        "create_namespace 'ns1'\ncreate 'ns1:t', 'cf'\nput 'ns1:t', 'r', 'cf:q', 'nsv'\n\
         grant 'bob', 'RC', '@ns1'\n",
    );
    let got = allowed(
        &server,
        &bob,
        "get 'ns1:t', 'r'\ncreate 'ns1:mine', 'cf'\nlist_namespace\nlist_namespace_tables 'ns1'\n",
    );
    assert!(got.contains("value=nsv"), "{got}");
    assert!(got.contains("ns1") && got.contains("mine"), "{got}");
    denied(&server, &bob, "create 'outside', 'cf'\n", &["CREATE"]);
    denied(&server, &bob, "put 'ns1:t', 'r', 'cf:q', 'x'\n", &["WRITE"]);
    denied(&server, &alice, "get 'ns1:t', 'r'\n", &["READ"]);
    let perms = allowed(&server, &admin, "user_permission '@ns1'\n");
    assert!(perms.contains("bob") && perms.contains("@ns1"), "{perms}");
    let (code, _, err) = as_user(&server, &admin, "drop_namespace 'ns1'\n");
    assert_ne!(code, 0);
    assert!(err.contains("only an empty namespace"), "{err}");
    allowed(
        &server,
        &admin,
        "disable 'ns1:t'\ndrop 'ns1:t'\ndisable 'ns1:mine'\ndrop 'ns1:mine'\ndrop_namespace 'ns1'\n",
    );
    let perms = allowed(&server, &admin, "user_permission\n");
    assert!(
        !perms.contains("@ns1"),
        "the namespace's grants outlived it: {perms}"
    );

    // The audit log: admin operations, permission changes, denials and
    // refused tokens, one JSON object per line.
    let log = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let has = |op: &str, outcome: &str, user: &str| {
        lines
            .iter()
            .any(|l| l["op"] == op && l["outcome"] == outcome && l["user"] == user)
    };
    assert!(has("create_table", "ok", "admin"), "{log}");
    assert!(has("create_table", "ok", "alice"), "{log}");
    assert!(has("grant", "ok", "admin"), "{log}");
    assert!(has("revoke", "ok", "admin"), "{log}");
    assert!(has("revoke", "failed", "admin"), "{log}");
    assert!(has("drop_table", "ok", "alice"), "{log}");
    assert!(has("mutate", "denied", "alice"), "{log}");
    assert!(has("create_table", "denied", "alice"), "{log}");
    assert!(has("get", "denied", "bob"), "{log}");
    assert!(has("create_namespace", "ok", "admin"), "{log}");
    assert!(has("create_namespace", "denied", "bob"), "{log}");
    assert!(has("delete_namespace", "failed", "admin"), "{log}");
    assert!(has("authenticate", "unauthenticated", ""), "{log}");
    // Every line from a door that knows the client names its address.
    let from_loopback = |l: &serde_json::Value| {
        l["peer"]
            .as_str()
            .is_some_and(|p| p.starts_with("127.0.0.1:"))
    };
    for (op, via) in [
        ("authenticate", "grpc"),
        ("authenticate", "http"),
        ("grant", "grpc"),
        ("get", "grpc"),
        ("get", "frames"),
        ("mutate", "frames"),
    ] {
        assert!(
            lines
                .iter()
                .filter(|l| l["op"] == op && l["via"] == via)
                .all(from_loopback),
            "{op} via {via} without a peer address:\n{log}"
        );
    }
    assert!(
        lines
            .iter()
            .any(|l| l["op"] == "authenticate" && from_loopback(l)),
        "{log}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["via"] == "http" && l["outcome"] == "unauthenticated"),
        "{log}"
    );
}

/// Starts `shoal serve` with `config`, expecting it to refuse; returns its
/// stderr.
fn refused_at_start(dir: &Path, config: &Path) -> String {
    let out = Command::new(shoal_bin())
        .args(["serve", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--config")
        .arg(config)
        .args(["--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "the server started");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn auth_settings_are_checked_at_start() {
    let dir = tempfile::tempdir().unwrap();
    // Auth on with Thrift on and no thrift_user: refused, naming the key.
    let config = support::write_config(
        dir.path(),
        "[auth]\nenabled = true\ntokens = \"/nonexistent\"\n",
    );
    let err = refused_at_start(dir.path(), &config);
    assert!(err.contains("auth.thrift_user"), "{err}");
    // A missing token file: refused, naming the file.
    let config = support::write_config(
        dir.path(),
        "[auth]\nenabled = true\ntokens = \"/nonexistent/tokens\"\n[thrift]\nenabled = false\n",
    );
    let err = refused_at_start(dir.path(), &config);
    assert!(err.contains("/nonexistent/tokens"), "{err}");
    // TLS with a certificate and no key: refused, naming the key.
    let config = support::write_config(dir.path(), "[tls]\ncert = \"/x.pem\"\n");
    let err = refused_at_start(dir.path(), &config);
    assert!(err.contains("tls.key"), "{err}");
}
