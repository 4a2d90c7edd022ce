//! HBase's REST gateway through the real binary, with auth on: one `shoal
//! serve` for the whole binary, shared by its tests.
//!
//! - HBase's own REST client (`RemoteAdmin`, `RemoteHTable` from
//!   hbase-rest 2.6.1, `tests/hbase-client-java/.../HBaseRestIT.java`) runs
//!   against Shoal's gateway and against HBase's own (`RESTServer`, started
//!   by `HBaseRestServer.java` in front of the shared standalone HBase);
//!   the outputs must match line for line, except the steps in [`ALLOWED`]
//!   (`docs/rest.md` says why).
//! - Plain HTTP, as curl sends it: JSON, XML, protobuf and octet-stream
//!   cells, 404s, malformed bodies (400), and auth: no token 401, a token
//!   without a grant 403.
//!
//! Skipped outside CI without Java 17 and Maven (the Java part only).

#![allow(clippy::unwrap_used)] // test code

#[path = "support/hbase.rs"]
mod hbase;
#[path = "support/java.rs"]
mod java;
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::{ServerProcess, shoal_bin};

/// Steps whose lines may differ between HBase's gateway and Shoal's (by
/// the step's name, the text before `: `); docs/rest.md explains each.
const ALLOWED: &[&str] = &[];

/// The shared server and the tokens of its users.
struct Shared {
    server: ServerProcess,
    /// A superuser's token.
    admin: String,
    /// A user with no grant.
    nobody: String,
    _dir: tempfile::TempDir,
}

/// Makes a token for `user` with `shoal token new`, appended to `tokens`.
fn new_token(dir: &Path, tokens: &Path, user: &str) -> String {
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
    std::fs::read_to_string(&out).unwrap().trim().to_string()
}

/// The one server of this binary: auth on, `admin` a superuser.
fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let tokens = dir.path().join("tokens");
        let admin = new_token(dir.path(), &tokens, "admin");
        let nobody = new_token(dir.path(), &tokens, "nobody");
        let config = support::write_config(
            dir.path(),
            &format!(
                "[auth]\nenabled = true\ntokens = {:?}\nsuperusers = [\"admin\"]\n\
                 [thrift]\nenabled = false\n",
                tokens
            ),
        );
        let server = ServerProcess::start(&dir.path().join("data"), Some(&config));
        assert!(server.rest.is_some(), "the REST gateway is on by default");
        Shared {
            server,
            admin,
            nobody,
            _dir: dir,
        }
    })
}

/// An HTTP answer.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One HTTP/1.1 request on a fresh connection, as curl would send it.
fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete HTTP answer");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

// ---- HBase's own client, against both gateways

/// Runs HBaseRestIT against `addr` (with `token`, if any); its output.
fn run_it(cp: &str, addr: &str, token: Option<&str>, what: &str) -> String {
    let started = Instant::now();
    let mut cmd = Command::new("java");
    cmd.args(hbase::JVM_OPTS)
        .arg("-cp")
        .arg(cp)
        .arg("shoal.it.HBaseRestIT")
        .arg(addr);
    if let Some(t) = token {
        cmd.arg(t);
    }
    let out = cmd.output().expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("done rest"),
        "HBaseRestIT against {what} failed:\nstdout:\n{stdout}\nstderr (tail):\n{}",
        java::tail(&String::from_utf8_lossy(&out.stderr), 60),
    );
    eprintln!("{what}: {:.1} s\n{stdout}", started.elapsed().as_secs_f64());
    stdout
}

/// HBase's own REST gateway in front of the shared HBase; stops when
/// dropped.
struct HBaseRest {
    child: Child,
    addr: String,
}

impl Drop for HBaseRest {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `HBaseRestServer` (compiled into `cp`) against ZooKeeper `zk`.
fn start_hbase_rest(cp: &str, zk: SocketAddr, log: &Path) -> HBaseRest {
    let child = Command::new("java")
        .args(hbase::JVM_OPTS)
        .arg("-cp")
        .arg(cp)
        .arg("shoal.it.HBaseRestServer")
        .arg(zk.port().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("start HBase's REST server");
    // Killed when dropped, a panic below included.
    let mut gateway = HBaseRest {
        child,
        addr: String::new(),
    };
    let stdout = gateway.child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(
            Instant::now() < deadline,
            "HBase's REST server did not start"
        );
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(addr) = line.strip_prefix("ready rest=") {
                    gateway.addr = addr.trim().to_string();
                    std::thread::spawn(move || for _ in lines {});
                    return gateway;
                }
            }
            _ => {
                let log = std::fs::read_to_string(log).unwrap_or_default();
                let causes: Vec<&str> = log
                    .lines()
                    .filter(|l| l.contains("Exception") || l.contains("Caused by"))
                    .collect();
                panic!(
                    "HBase's REST server exited:\n{}\n...\n{}",
                    causes.join("\n"),
                    java::tail(&log, 20)
                )
            }
        }
    }
}

fn java_sources() -> Vec<PathBuf> {
    ["HBaseRestIT", "HBaseRestServer"]
        .iter()
        .map(|c| java::project().join(format!("src/main/java/shoal/it/{c}.java")))
        .collect()
}

#[test]
fn hbase_rest_client_gets_what_hbase_s_gateway_answers() {
    if !java::present() {
        return;
    }
    let started = Instant::now();
    // HBase starts (half a minute and more) while the program runs
    // against Shoal.
    let real = std::thread::spawn(|| hbase::shared(false));
    let dir = tempfile::tempdir().unwrap();
    let Some(cp) = java::compile(&dir.path().join("java"), &java_sources()) else {
        return;
    };
    let s = shared();
    let rest = s.server.rest.unwrap().to_string();
    let shoal = run_it(&cp, &rest, Some(&s.admin), "shoal");
    let real = match real.join() {
        Ok(real) => real,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    let Some(real) = real else {
        return;
    };
    let gateway = start_hbase_rest(&cp, real.zk, &dir.path().join("hbase-rest.log"));
    let reference = run_it(&cp, &gateway.addr, None, "hbase");
    let found = java::differences(&shoal, &reference, ALLOWED);
    assert!(
        found.is_empty(),
        "Shoal's REST gateway answers otherwise than HBase's ({} differences):\n{}",
        found.len(),
        found.join("\n")
    );
    // Not vacuous: the reference did what the program says.
    for expected in [
        "cluster version: 2.6.1",
        "get r1 versions: r1/cf:a@2000=v2 r1/cf:a@1000=v1 r1/cf:b@1000=b1",
        "checkAndPut right value: true",
        "scan page filter: [s0/cf:a@1000=s0, s1/cf:a@1000=s1]",
        "regions missing: 404",
    ] {
        assert!(
            reference.lines().any(|l| l.starts_with(expected)),
            "HBase printed no line {expected:?}"
        );
    }
    eprintln!("whole test: {:.1} s", started.elapsed().as_secs_f64());
}

// ---- plain HTTP

/// Creates table `name` with family `cf` as `admin`, through the gateway.
fn create_table(addr: SocketAddr, admin: &str, name: &str) {
    let auth = format!("Bearer {admin}");
    let a = http(
        addr,
        "PUT",
        &format!("/{name}/schema"),
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        br#"{"name":"x","ColumnSchema":[{"name":"cf","VERSIONS":"2"}]}"#,
    );
    assert_eq!(a.status, 201, "{}", a.text());
}

#[test]
fn curl_reads_and_writes_cells_in_every_representation() {
    let s = shared();
    let addr = s.server.rest.unwrap();
    let auth = format!("Bearer {}", s.admin);
    let h = |extra: &[(&'static str, &'static str)]| {
        let mut v: Vec<(&str, String)> = vec![("Authorization", auth.clone())];
        v.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        v
    };
    let send = |method: &str, path: &str, extra: &[(&'static str, &'static str)], body: &[u8]| {
        let headers = h(extra);
        let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        http(addr, method, path, &refs, body)
    };
    create_table(addr, &s.admin, "curl_t");

    // JSON in, JSON out.
    let put = format!(
        r#"{{"Row":[{{"key":"{}","Cell":[{{"column":"{}","timestamp":5,"$":"{}"}}]}}]}}"#,
        b64(b"row1"),
        b64(b"cf:a"),
        b64(b"value1")
    );
    let a = send(
        "PUT",
        "/curl_t/row1",
        &[("Content-Type", "application/json")],
        put.as_bytes(),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    let a = send(
        "GET",
        "/curl_t/row1",
        &[("Accept", "application/json")],
        b"",
    );
    assert_eq!(a.status, 200);
    assert_eq!(a.header("content-type"), Some("application/json"));
    let json: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"Row":[{"key": b64(b"row1"), "Cell":[{"column": b64(b"cf:a"), "timestamp": 5, "$": b64(b"value1")}]}]})
    );

    // XML in, XML out.
    let xml = format!(
        r#"<?xml version="1.0"?><CellSet><Row key="{}"><Cell column="{}">{}</Cell></Row></CellSet>"#,
        b64(b"row2"),
        b64(b"cf:b"),
        b64(b"value2")
    );
    let a = send(
        "POST",
        "/curl_t/row2",
        &[("Content-Type", "text/xml")],
        xml.as_bytes(),
    );
    assert_eq!(a.status, 200, "{}", a.text());
    let a = send("GET", "/curl_t/row2/cf:b", &[("Accept", "text/xml")], b"");
    assert_eq!(a.status, 200);
    assert!(
        a.text()
            .contains(&format!("<Row key=\"{}\">", b64(b"row2"))),
        "{}",
        a.text()
    );
    assert!(
        a.text().contains(&format!(">{}</Cell>", b64(b"value2"))),
        "{}",
        a.text()
    );

    // Octet-stream in and out, with the timestamp in a header.
    let a = send(
        "PUT",
        "/curl_t/row3/cf:c",
        &[
            ("Content-Type", "application/octet-stream"),
            ("X-Timestamp", "77"),
        ],
        b"\x00raw\xff",
    );
    assert_eq!(a.status, 200, "{}", a.text());
    let a = send(
        "GET",
        "/curl_t/row3/cf:c",
        &[("Accept", "application/octet-stream")],
        b"",
    );
    assert_eq!((a.status, a.body.as_slice()), (200, &b"\x00raw\xff"[..]));
    assert_eq!(a.header("x-timestamp"), Some("77"));

    // Protobuf out: HBase's CellSet message (rows = 1, key = 1, values = 2,
    // column = 2, timestamp = 3, data = 4).
    let a = send(
        "GET",
        "/curl_t/row3",
        &[("Accept", "application/x-protobuf")],
        b"",
    );
    assert_eq!(a.status, 200);
    assert_eq!(a.header("content-type"), Some("application/x-protobuf"));
    let body = &a.body;
    assert!(body.windows(4).any(|w| w == b"row3") && body.windows(4).any(|w| w == b"cf:c"));

    // Rows of a prefix, a multiget, and the table list as text.
    let a = send(
        "GET",
        "/curl_t/row*",
        &[("Accept", "application/json")],
        b"",
    );
    let json: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(json["Row"].as_array().map(|r| r.len()), Some(3), "{json}");
    let a = send(
        "GET",
        "/curl_t/multiget?row=row3&row=row1",
        &[("Accept", "application/json")],
        b"",
    );
    let json: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(json["Row"][0]["key"], b64(b"row3"));
    let a = send("GET", "/", &[], b"");
    assert_eq!(a.status, 200);
    assert!(a.text().lines().any(|l| l == "curl_t"), "{}", a.text());

    // 404s.
    assert_eq!(send("GET", "/curl_t/nosuchrow", &[], b"").status, 404);
    assert_eq!(send("GET", "/nosuchtable/row1", &[], b"").status, 404);
    assert_eq!(send("GET", "/nosuchtable/schema", &[], b"").status, 404);
    assert_eq!(
        send("GET", "/curl_t/scanner/nosuchscanner", &[], b"").status,
        404
    );

    // Bad input: 400 with a message, and the server goes on.
    let a = send(
        "PUT",
        "/curl_t/row1",
        &[("Content-Type", "application/json")],
        b"{\"Row\": [",
    );
    assert_eq!(a.status, 400);
    assert!(a.text().contains("malformed JSON"), "{}", a.text());
    let a = send(
        "PUT",
        "/curl_t/row1",
        &[("Content-Type", "application/json")],
        br#"{"Row":[{"key":"not base64!","Cell":[]}]}"#,
    );
    assert_eq!(a.status, 400);
    let a = send(
        "PUT",
        "/curl_t/row1",
        &[("Content-Type", "application/x-protobuf")],
        b"\x0a\xff\xff\xff",
    );
    assert_eq!(a.status, 400);
    let a = send(
        "POST",
        "/curl_t/scanner",
        &[("Content-Type", "application/json")],
        br#"{"filter":"{\"type\":\"FuzzyRowFilter\"}"}"#,
    );
    assert_eq!(a.status, 400);
    assert!(a.text().contains("FuzzyRowFilter"), "{}", a.text());
    assert_eq!(
        send("GET", "/curl_t/row1/cf:a/notatime", &[], b"").status,
        400
    );
    assert_eq!(send("GET", "/", &[], b"").status, 200);
}

#[test]
fn auth_refuses_missing_tokens_and_missing_grants() {
    let s = shared();
    let addr = s.server.rest.unwrap();
    create_table(addr, &s.admin, "auth_t");
    let a = http(addr, "GET", "/auth_t/schema", &[], b"");
    assert_eq!(a.status, 401, "{}", a.text());
    assert!(a.header("www-authenticate").is_some());
    let a = http(
        addr,
        "GET",
        "/",
        &[("Authorization", "Bearer not-a-token")],
        b"",
    );
    assert_eq!(a.status, 401);
    let nobody = format!("Bearer {}", s.nobody);
    let a = http(
        addr,
        "GET",
        "/auth_t/row1",
        &[("Authorization", &nobody)],
        b"",
    );
    assert_eq!(a.status, 403, "{}", a.text());
    let a = http(
        addr,
        "PUT",
        "/auth_t/row1/cf:a",
        &[
            ("Authorization", &nobody),
            ("Content-Type", "application/octet-stream"),
        ],
        b"v",
    );
    assert_eq!(a.status, 403, "{}", a.text());
    // The table list shows a user only the tables it holds a grant on.
    let a = http(addr, "GET", "/", &[("Authorization", &nobody)], b"");
    assert_eq!(a.status, 200);
    assert!(!a.text().contains("auth_t"), "{}", a.text());
}

/// `/namespaces` as HBase's gateway serves it, and a table in a namespace
/// written and read by `ns:table`.
#[test]
fn namespaces_and_namespaced_tables_over_rest() {
    let s = shared();
    let addr = s.server.rest.unwrap();
    let auth = format!("Bearer {}", s.admin);
    let send = |method: &str, path: &str, content: &str, body: &[u8]| {
        let headers = [
            ("Authorization", auth.as_str()),
            ("Accept", content),
            ("Content-Type", content),
        ];
        http(addr, method, path, &headers, body)
    };
    let json = "application/json";
    let xml = "text/xml";
    let a = send("GET", "/namespaces", json, b"");
    assert_eq!(a.status, 200, "{}", a.text());
    let list: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
    let names = list["Namespace"].as_array().unwrap();
    assert!(
        names.contains(&"default".into()) && names.contains(&"hbase".into()),
        "{list}"
    );

    let made = send(
        "POST",
        "/namespaces/rest_ns",
        json,
        br#"{"properties":{"a":"1"}}"#,
    );
    assert_eq!(made.status, 201, "{}", made.text());
    let again = send("POST", "/namespaces/rest_ns", json, b"");
    assert_eq!(again.status, 403, "{}", again.text());
    assert!(again.text().contains("already exists"), "{}", again.text());
    let d = send("GET", "/namespaces/rest_ns", json, b"");
    assert_eq!(d.status, 200);
    let props: serde_json::Value = serde_json::from_slice(&d.body).unwrap();
    assert_eq!(props, serde_json::json!({"properties": {"a": "1"}}));
    let body = b"<NamespaceProperties><properties><entry><key>b</key><value>2</value></entry></properties></NamespaceProperties>";
    let altered = send("PUT", "/namespaces/rest_ns", xml, body);
    assert_eq!(altered.status, 200, "{}", altered.text());
    let d = send("GET", "/namespaces/rest_ns", xml, b"");
    assert!(
        d.text()
            .contains("<entry><key>b</key><value>2</value></entry>")
            && !d.text().contains("<key>a</key>"),
        "{}",
        d.text()
    );
    let missing = send("PUT", "/namespaces/rest_missing", json, b"");
    assert_eq!(missing.status, 403, "{}", missing.text());
    let pb = http(
        addr,
        "GET",
        "/namespaces",
        &[
            ("Authorization", auth.as_str()),
            ("Accept", "application/x-protobuf"),
        ],
        b"",
    );
    assert_eq!(pb.status, 200);
    assert!(
        pb.body.windows(7).any(|w| w == b"rest_ns"),
        "protobuf lists rest_ns"
    );

    // A table in it, named ns:table in the path.
    create_table(addr, &s.admin, "rest_ns:t");
    let cell = format!(
        r#"{{"Row":[{{"key":"{}","Cell":[{{"column":"{}","$":"{}"}}]}}]}}"#,
        b64(b"r1"),
        b64(b"cf:q"),
        b64(b"in-ns")
    );
    let put = send("PUT", "/rest_ns:t/r1", json, cell.as_bytes());
    assert_eq!(put.status, 200, "{}", put.text());
    let got = send(
        "GET",
        "/rest_ns%3At/r1/cf:q",
        "application/octet-stream",
        b"",
    );
    assert_eq!(got.status, 200, "{}", got.text());
    assert_eq!(got.body, b"in-ns");
    let tables = send("GET", "/namespaces/rest_ns/tables", json, b"");
    let tables: serde_json::Value = serde_json::from_slice(&tables.body).unwrap();
    assert_eq!(tables, serde_json::json!({"table": [{"name": "t"}]}));

    // Dropping: not while it holds a table; then gone.
    let full = send("DELETE", "/namespaces/rest_ns", json, b"");
    assert_eq!(full.status, 403, "{}", full.text());
    let dropped = send("DELETE", "/rest_ns:t/schema", json, b"");
    assert_eq!(dropped.status, 200, "{}", dropped.text());
    assert_eq!(send("DELETE", "/namespaces/rest_ns", json, b"").status, 200);
    assert_eq!(send("GET", "/namespaces/rest_ns", json, b"").status, 404);
    assert_eq!(send("DELETE", "/namespaces/rest_ns", json, b"").status, 404);
    let reserved = send("DELETE", "/namespaces/default", json, b"");
    assert_eq!(reserved.status, 403, "{}", reserved.text());
}
