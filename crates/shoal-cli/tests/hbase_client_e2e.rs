//! HBase's own Java client (`hbase-client` 2.6.1 and 2.5.10 from Maven
//! Central, unchanged, configured with `RpcConnectionRegistry`) against a
//! real `shoal serve`: the program in `tests/hbase-client-java` checks
//! Admin, every data call, scans, filters and errors (`api`), a table
//! split while the client writes and scans (`split`), and writes that go
//! on across a kill -9 and restart of the server (`write`, then `verify`),
//! and `api` again against a two-server cluster (etcd), where the client
//! finds each region's server in `hbase:meta` and table changes go to the
//! master, then `HBaseStatusIT` (the cluster's status, the balancer).
//!
//! Maven gives the client's classpath (offline: `scripts/test` fetches the
//! jars first); the program is compiled with `javac` and run with `java`.
//! Outside CI the test is skipped, with a note, when Java 17 or Maven is
//! missing.

#![allow(clippy::unwrap_used)] // test code

#[path = "../../shoal-cluster/tests/support/mod.rs"]
mod etcd_support;
mod support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::ServerProcess;

const VERSIONS: [&str; 2] = ["2.6.1", "2.5.10"];

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/hbase-client-java")
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// The compiled program and its classpath for one client version, or None
/// (skipped) outside CI without Java and Maven.
fn client(version: &str, work: &Path) -> Option<String> {
    if !(have("java") && have("javac") && have("mvn")) {
        if std::env::var_os("CI").is_some() {
            panic!("CI: Java 17 (javac) and Maven are needed: scripts/test installs them");
        }
        eprintln!(
            "skipped: install Java 17 and Maven (scripts/test does) to run the hbase-client test"
        );
        return None;
    }
    let cp_file = work.join(format!("classpath-{version}.txt"));
    let out = Command::new("mvn")
        .args(["-q", "-B", "-o", "-f"])
        .arg(project().join("pom.xml"))
        .arg("dependency:build-classpath")
        .arg(format!("-Dhbase.version={version}"))
        .arg(format!("-Dmdep.outputFile={}", cp_file.display()))
        .output()
        .expect("run mvn");
    assert!(
        out.status.success(),
        "mvn could not give hbase-client {version}'s classpath offline (scripts/test fetches it first):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let jars = std::fs::read_to_string(&cp_file).expect("classpath file");
    let classes = work.join(format!("classes-{version}"));
    std::fs::create_dir_all(&classes).unwrap();
    let out = Command::new("javac")
        .args(["-nowarn", "-d"])
        .arg(&classes)
        .arg("-cp")
        .arg(jars.trim())
        // The benchmark's program too, so that it keeps compiling; and
        // the cluster-status program, run against the cluster below.
        .arg(project().join("src/main/java/shoal/it/HBaseClientIT.java"))
        .arg(project().join("src/main/java/shoal/it/HBaseStatusIT.java"))
        .arg(project().join("src/main/java/shoal/it/HBaseBench.java"))
        .output()
        .expect("run javac");
    assert!(
        out.status.success(),
        "javac failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(format!("{}:{}", classes.display(), jars.trim()))
}

fn java(cp: &str, addr: SocketAddr, args: &[&str]) -> Command {
    let mut c = Command::new("java");
    c.arg("-cp")
        .arg(cp)
        .arg("shoal.it.HBaseClientIT")
        .arg(addr.to_string())
        .args(args);
    c
}

/// Runs one mode to its end; panics with its output if it fails.
fn run(cp: &str, addr: SocketAddr, args: &[&str], server: &ServerProcess) -> String {
    let out = java(cp, addr, args).output().expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains(&format!("done {}", args[0])),
        "hbase-client {args:?} failed:\nstdout:\n{stdout}\nstderr:\n{}\nserver stderr (tail):\n{}",
        tail(&String::from_utf8_lossy(&out.stderr), 60),
        tail(&server.stderr(), 40),
    );
    stdout
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[test]
fn the_java_client_works_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    for version in VERSIONS {
        let Some(cp) = client(version, dir.path()) else {
            return;
        };
        let data = dir.path().join(format!("data-{version}"));
        let server = ServerProcess::start(&data, None);
        let addr = server.hbase.expect("the native RPC port");
        let out = run(&cp, addr, &["api"], &server);
        for check in [
            "ok admin create/describe/disable/enable",
            "ok checkAndMutate/RowMutations/mutateRow",
            "ok put list/get list/batch/BufferedMutator",
            "ok scans: forward, reversed, bounds, caching, max result size, limit, batch",
            "ok filters and comparators",
            "ok unsupported filter: DoNotRetryIOException naming it",
            "ok admin compact/majorCompact",
            "ok admin truncate",
        ] {
            assert!(
                out.contains(check),
                "hbase-client {version}: missing {check:?}:\n{out}"
            );
        }
        if version == VERSIONS[0] {
            let out = run(&cp, addr, &["split", "it_split"], &server);
            assert!(out.contains("ok split while writing and scanning"), "{out}");
        }
        drop(server);
    }
}

/// A free loopback port (bound, then released).
fn free_port() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

#[test]
fn the_java_client_retries_across_a_kill_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let Some(cp) = client(VERSIONS[0], dir.path()) else {
        return;
    };
    let data = dir.path().join("data");
    let addr = free_port();
    let server = ServerProcess::start_with_hbase_addr(&data, None, addr);
    let mut writer = java(&cp, addr, &["write", "it_restart"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the writer");
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    let stdout = writer.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(n) = line.strip_prefix("acked ").and_then(|n| n.parse().ok()) {
                let _ = tx.send(n);
            }
        }
    });
    let wait_for = |at_least: u64, what: &str| -> u64 {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(n) if n >= at_least => return n,
                Ok(_) => {}
                Err(_) => panic!("the writer did not reach {at_least} acknowledged rows {what}"),
            }
        }
    };
    let before = wait_for(400, "before the kill");
    server.kill9();
    std::thread::sleep(Duration::from_millis(500));
    let server = ServerProcess::start_with_hbase_addr(&data, None, addr);
    let after = wait_for(before + 400, "after the restart");
    let _ = writer.kill();
    let _ = writer.wait();
    // Everything acknowledged, before and after the restart, is there.
    let mut last = after;
    while let Ok(n) = rx.try_recv() {
        last = last.max(n);
    }
    let out = run(
        &cp,
        addr,
        &["verify", "it_restart", &last.to_string()],
        &server,
    );
    assert!(
        out.contains("ok every acknowledged write survived the restart"),
        "{out}"
    );
}

#[test]
fn the_java_client_finds_regions_across_a_cluster() {
    if !etcd_support::have_etcd() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(cp) = client(VERSIONS[0], dir.path()) else {
        return;
    };
    let etcd = etcd_support::EtcdServer::start();
    let bucket = dir.path().join("bucket");
    std::fs::create_dir_all(&bucket).unwrap();
    let servers: Vec<ServerProcess> = ["s1", "s2"]
        .iter()
        .map(|name| {
            let cfg_dir = dir.path().join(format!("{name}-config"));
            std::fs::create_dir_all(&cfg_dir).unwrap();
            let cfg = support::write_config(
                &cfg_dir,
                &format!(
                    "[object_store]\nurl = \"file://{}\"\n[wal]\nbackend = \"object\"\n\
                     [cluster]\netcd = [\"{}\"]\nname = \"{name}\"\nlease_ttl = \"2s\"\n",
                    bucket.display(),
                    etcd.endpoint()
                ),
            );
            ServerProcess::start(&dir.path().join(format!("{name}-data")), Some(&cfg))
        })
        .collect();
    // The client knows only the first server; regions of its tables are
    // spread over both by the balancer.
    let addr = servers[0].hbase.expect("the native RPC port");
    let out = java(&cp, addr, &["api"]).output().expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("done api"),
        "hbase-client against a cluster failed:\nstdout:\n{stdout}\nstderr:\n{}\nservers:\n{}\n----\n{}",
        tail(&String::from_utf8_lossy(&out.stderr), 60),
        tail(&servers[0].stderr(), 30),
        tail(&servers[1].stderr(), 30),
    );
    // The cluster's status as HBase's tools read it: both servers live,
    // the other one a backup master, each answering its own regions'
    // loads, the balancer's switch the cluster's (turned at the master).
    let out = Command::new("java")
        .arg("-cp")
        .arg(&cp)
        .arg("shoal.it.HBaseStatusIT")
        .arg(addr.to_string())
        .output()
        .expect("run java");
    let status = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && status.contains("done status"),
        "HBaseStatusIT against a cluster failed:\nstdout:\n{status}\nstderr:\n{}",
        tail(&String::from_utf8_lossy(&out.stderr), 60),
    );
    for line in [
        "live servers: 2",
        "servers by name: 2",
        "backup masters: 1",
        "master: true",
        "admin.getRegionServers: 2",
        "getRegionMetrics(server, missing table): 0",
        "balancerSwitch off: previous=true",
        "isBalancerEnabled after off: false",
        "balance while off: false",
        "balancerSwitch on: previous=false",
        "balance: true",
    ] {
        assert!(
            status.lines().any(|l| l == line),
            "HBaseStatusIT against a cluster: no line {line:?}:\n{status}"
        );
    }
    // Both servers served the client's regions.
    for s in &servers {
        let log = s.stderr();
        assert!(
            log.contains("region opened"),
            "a server that opened no region:\n{log}"
        );
    }
}
