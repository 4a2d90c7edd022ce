//! The read-only ZooKeeper registry (`[zk_registry]`) against the clients
//! that find HBase through ZooKeeper, on the real `shoal` binary:
//! hbase-client 2.4 (`tests/hbase-client-24`) configured only with the
//! quorum and port, asynchbase (`tests/asynchbase`), and a raw ZooKeeper
//! client written here (garbage, writes, unknown paths, huge frames).
//!
//! One server serves the test functions running at once (they share it
//! while any holds it). Java and Maven as in `support/java.rs`: without
//! them outside CI the Java tests are skipped with a note.
#![allow(clippy::unwrap_used)] // test code

#[path = "support/java.rs"]
mod java;
mod support;
#[path = "support/zk.rs"]
mod zk;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use support::ServerProcess;
use zk::{Zk, cluster_id, protobuf};

/// The server the running tests share, and its data.
struct Shared {
    server: ServerProcess,
    zk: SocketAddr,
    _dir: tempfile::TempDir,
}

static SHARED: Mutex<Weak<Shared>> = Mutex::new(Weak::new());

/// The server, started by the first test to ask while none runs; it stops
/// when the last test holding it ends.
fn shared() -> Arc<Shared> {
    let mut slot = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = slot.upgrade() {
        return s;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = support::write_config(
        dir.path(),
        "[zk_registry]\nenabled = true\naddr = \"127.0.0.1:0\"\n",
    );
    let server = ServerProcess::start(&dir.path().join("data"), Some(&config));
    let zk = server.zk.expect("the ZooKeeper registry's listening line");
    let s = Arc::new(Shared {
        server,
        zk,
        _dir: dir,
    });
    *slot = Arc::downgrade(&s);
    s
}

#[test]
fn raw_clients_get_zookeeper_errors_and_the_server_keeps_answering() {
    let shared = shared();
    let addr = shared.zk;
    let mut zk = Zk::open(addr);
    let id = cluster_id(&mut zk);
    assert_eq!(id.len(), 36, "{id}");
    let native = shared.server.hbase.unwrap();
    let rs = zk.children("/hbase/rs");
    assert_eq!(rs.len(), 1);
    assert!(
        rs[0].starts_with(&format!("{},{},", native.ip(), native.port())),
        "{rs:?} names {native}"
    );
    let meta = protobuf(&zk.data("/hbase/meta-region-server")).to_vec();
    assert!(
        meta.windows(native.ip().to_string().len())
            .any(|w| w == native.ip().to_string().as_bytes()),
        "meta-region-server names the native RPC"
    );
    let mut top = zk.children("/hbase");
    top.sort();
    for z in ["hbaseid", "master", "meta-region-server", "rs"] {
        assert!(top.contains(&z.to_string()), "{top:?}");
    }
    assert!(zk.children("/hbase/backup-masters").is_empty());
    // exists: a 68-byte Stat.
    let (_, err, stat) = zk.ask(2, 3, Some("/hbase/master"));
    assert_eq!((err, stat.len()), (0, 68));
    // Unknown path: NONODE; a write: NOTREADONLY; an unknown op (addWatch):
    // UNIMPLEMENTED; a ping: its own xid back. The session goes on.
    assert_eq!(zk.ask(3, 4, Some("/hbase/nope")).1, -101);
    assert_eq!(zk.ask(4, 3, Some("/zookeeper/quota")).1, -101);
    assert_eq!(zk.ask(5, 1, Some("/hbase/x")).1, -119);
    assert_eq!(zk.ask(6, 2, Some("/hbase/master")).1, -119);
    assert_eq!(zk.ask(7, 106, Some("/hbase")).1, -6);
    assert_eq!(zk.ask(-2, 11, None).0, -2);
    // A read without its path: MARSHALLINGERROR.
    assert_eq!(zk.ask(8, 4, None).1, -5);
    assert_eq!(cluster_id(&mut zk), id);
    // closeSession: answered, then the connection ends.
    assert_eq!(zk.ask(9, -11, None).1, 0);
    assert!(zk.frame().is_none(), "closed after closeSession");

    // Garbage instead of a ConnectRequest: the connection is closed.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut buf = [0u8; 16];
    assert!(
        matches!(s.read(&mut buf), Ok(0) | Err(_)),
        "garbage: closed"
    );
    // A 2 GB frame in an open session: closed, nothing allocated.
    let mut zk = Zk::open(addr);
    zk.s.write_all(&0x8000_0000u32.to_be_bytes()).unwrap();
    assert!(zk.frame().is_none(), "2 GB frame: closed");
    let mut zk = Zk::open(addr);
    zk.s.write_all(&0x7fff_ffffu32.to_be_bytes()).unwrap();
    assert!(zk.frame().is_none(), "huge frame: closed");
    // A frame too short for a request header: closed.
    let mut zk = Zk::open(addr);
    zk.send(&[1, 2]);
    assert!(zk.frame().is_none(), "headerless frame: closed");
    // And the server still answers.
    let mut zk = Zk::open(addr);
    assert_eq!(cluster_id(&mut zk), id);
}

// ---- The Java clients. ----

fn tests_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests")
        .join(name)
}

/// Runs `class` with `args` on `cp`; its stdout, or a panic with its output.
fn run_java(cp: &str, class: &str, args: &[&str], shared: &Shared) -> String {
    let out = Command::new("java")
        .arg("-cp")
        .arg(cp)
        .arg(class)
        .args(args)
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.lines().any(|l| l == "done"),
        "{class} failed:\nstdout:\n{stdout}\nstderr:\n{}\nserver stderr (tail):\n{}",
        java::tail(&String::from_utf8_lossy(&out.stderr), 60),
        java::tail(&shared.server.stderr(), 40),
    );
    stdout
}

#[test]
fn hbase_client_2_4_finds_shoal_through_zookeeper() {
    // Held from the start, so the tests running meanwhile share it.
    let shared = shared();
    let work = tempfile::tempdir().unwrap();
    let project = tests_dir("hbase-client-24");
    let Some(cp) = java::compile_with_pom(
        work.path(),
        &project.join("pom.xml"),
        &[project.join("src/main/java/shoal/it/ZkRegistryIT.java")],
    ) else {
        return;
    };
    let zk = shared.zk;
    let out = run_java(
        &cp,
        "shoal.it.ZkRegistryIT",
        &[&zk.ip().to_string(), &zk.port().to_string(), "zk_it24"],
        &shared,
    );
    let id = cluster_id(&mut Zk::open(zk));
    let expected = format!(
        "created zk_it24\n\
         listed true\n\
         put 3\n\
         get row1 v1\n\
         scan row0=v0 row1=v1 row2=v2\n\
         deleted row1, get true\n\
         cluster id {id}\n\
         master true, live servers 1\n\
         dropped true\n\
         done\n"
    );
    assert_eq!(out, expected);
}

#[test]
fn asynchbase_puts_and_gets_through_zookeeper() {
    // Held from the start, so the tests running meanwhile share it.
    let shared = shared();
    let work = tempfile::tempdir().unwrap();
    let project = tests_dir("asynchbase");
    let Some(cp) = java::compile_with_pom(
        work.path(),
        &project.join("pom.xml"),
        &[project.join("src/main/java/shoal/it/AsyncHBaseIT.java")],
    ) else {
        return;
    };
    let (code, out, err) = support::shell(shared.server.grpc, &[], "create 'zk_async', 'f'\n");
    assert_eq!(code, 0, "create the table:\n{out}\n{err}");
    let out = run_java(
        &cp,
        "shoal.it.AsyncHBaseIT",
        &[&shared.zk.to_string(), "/hbase", "zk_async"],
        &shared,
    );
    assert_eq!(
        out,
        "table exists zk_async\n\
         put 3\n\
         get row0 q=v0\n\
         get row1 q=v1\n\
         get row2 q=v2\n\
         get absent 0\n\
         done\n"
    );
}
