//! A real, standalone HBase 2.6.1 on 127.0.0.1, for differential tests of
//! Shoal against HBase itself: master, region server and ZooKeeper in one
//! JVM, data in a temp directory, and optionally HBase's Thrift1 gateway
//! (buffered transport, binary protocol: happybase's default).
//!
//! This module owns starting and stopping that JVM. The jars come from
//! Maven Central through `tests/hbase-server/pom.xml` (Maven only gives the
//! classpath, offline: `scripts/test` fetches the jars into `~/.m2` first);
//! the launcher, `tests/hbase-server/src/main/java/shoal/hbase/Standalone.java`,
//! is compiled with `javac` and run with `java`. It configures everything
//! itself (loopback ports below 32768, no web UIs, log at WARN in
//! `<work>/hbase.log`), checks that a client bootstrapped from the master
//! port can create a table, put and get, prints its addresses and runs until
//! its stdin is closed. Clients connect as Shoal's tests do, with
//! `hbase.client.registry.impl=org.apache.hadoop.hbase.client.RpcConnectionRegistry`
//! and `hbase.client.bootstrap.servers` set to [`RealHBase::master`] (the
//! region server's port works as well).
//!
//! Outside CI the caller is told to skip (None, with a note) when Java 17
//! or Maven is missing; in CI (`CI` set) that is a failure.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long HBase may take from launch to serving a client.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// A running standalone HBase. Dropping it kills the JVM and removes its
/// data; the one from [`shared`] stops when the test process exits (its
/// stdin closes) and removes its data itself.
pub struct RealHBase {
    /// The master's RPC address (bootstrap server for `RpcConnectionRegistry`).
    pub master: SocketAddr,
    /// The region server's RPC address.
    pub rs: SocketAddr,
    /// ZooKeeper's client address.
    pub zk: SocketAddr,
    /// HBase's Thrift1 gateway, when started with `thrift`.
    pub thrift: Option<SocketAddr>,
    child: Child,
    /// Kept open: the JVM stops when it reaches end of file.
    stdin: Option<ChildStdin>,
    work: Option<tempfile::TempDir>,
    log: PathBuf,
}

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/hbase-server")
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// JVM options the launcher needs on Java 17: the ones HBase's own
/// `bin/hbase` and test runs use, and a small heap.
pub const JVM_OPTS: &[&str] = &[
    "-Xmx384m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.net.preferIPv4Stack=true",
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
    "--add-modules",
    "jdk.unsupported",
    "--add-opens",
    "java.base/java.io=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.nio=ALL-UNNAMED",
    "--add-opens",
    "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.util=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-exports",
    "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports",
    "java.security.jgss/sun.security.krb5=ALL-UNNAMED",
    "--add-exports",
    "java.base/sun.net.dns=ALL-UNNAMED",
    "--add-exports",
    "java.base/sun.net.util=ALL-UNNAMED",
];

/// Maven's classpath for `tests/hbase-server` (offline), resolved once per
/// test process (hbase-server, hbase-client and their dependencies).
pub fn classpath() -> &'static str {
    static JARS: OnceLock<String> = OnceLock::new();
    JARS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("create a temp dir for Maven's classpath file");
        let cp_file = dir.path().join("classpath.txt");
        let out = Command::new("mvn")
            .args(["-q", "-B", "-o", "-f"])
            .arg(project().join("pom.xml"))
            .arg("dependency:build-classpath")
            .arg(format!("-Dmdep.outputFile={}", cp_file.display()))
            .output()
            .expect("run mvn");
        assert!(
            out.status.success(),
            "mvn could not give hbase-server 2.6.1's classpath offline (scripts/test fetches it first):\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let jars = std::fs::read_to_string(&cp_file).expect("read the classpath Maven wrote");
        jars.trim().to_string()
    })
}

/// Compiles the launcher into `dir`.
fn compile(dir: &Path, jars: &str) {
    let out = Command::new("javac")
        .args(["-nowarn", "-d"])
        .arg(dir)
        .arg("-cp")
        .arg(jars)
        .arg(project().join("src/main/java/shoal/hbase/Standalone.java"))
        .output()
        .expect("run javac");
    assert!(
        out.status.success(),
        "javac failed on Standalone.java:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Parses `ready master=… rs=… zk=… thrift=…`.
fn parse_ready(line: &str) -> Option<(SocketAddr, SocketAddr, SocketAddr, Option<SocketAddr>)> {
    let rest = line.strip_prefix("ready ")?;
    let (mut master, mut rs, mut zk, mut thrift) = (None, None, None, None);
    for field in rest.split_whitespace() {
        let (key, value) = field.split_once('=')?;
        match key {
            "master" => master = value.parse().ok(),
            "rs" => rs = value.parse().ok(),
            "zk" => zk = value.parse().ok(),
            "thrift" if value != "-" => thrift = Some(value.parse().ok()?),
            _ => {}
        }
    }
    Some((master?, rs?, zk?, thrift))
}

/// Starts a standalone HBase (with the Thrift1 gateway when `thrift`), or
/// None (skipped, with a note) outside CI without Java 17 and Maven.
/// Panics, with the end of HBase's log, when it does not come up within
/// two minutes (once more first if a port it picked was taken meanwhile).
pub fn start(thrift: bool) -> Option<RealHBase> {
    if !(have("java") && have("javac") && have("mvn")) {
        if std::env::var_os("CI").is_some() {
            panic!("CI: Java 17 (javac) and Maven are needed: scripts/test installs them");
        }
        eprintln!(
            "skipped: install Java 17 and Maven (scripts/test does) to run the tests against real HBase"
        );
        return None;
    }
    // The launcher's class lives apart from HBase's data: the JVM has loaded
    // it before it prints `ready`, so it is removed then.
    let classes = tempfile::Builder::new()
        .prefix("shoal-hbase-classes-")
        .tempdir()
        .expect("create a temp dir for the launcher's classes");
    let jars = classpath();
    compile(classes.path(), jars);
    let cp = format!("{}:{jars}", classes.path().display());
    let first = match launch(&cp, thrift) {
        Ok(hbase) => return Some(hbase),
        Err(failure) => failure,
    };
    // The launcher picks free ports, but another process may bind one
    // before HBase does.
    if !first.contains("Address already in use") {
        panic!("{first}");
    }
    match launch(&cp, thrift) {
        Ok(hbase) => Some(hbase),
        Err(failure) => panic!("{failure}"),
    }
}

/// One launch: the running server, or why it did not come up (with the
/// ends of its stderr and log).
fn launch(cp: &str, thrift: bool) -> Result<RealHBase, String> {
    let launched = Instant::now();
    let work = tempfile::Builder::new()
        .prefix("shoal-hbase-")
        .tempdir()
        .expect("create a temp dir for HBase's data");
    let log = work.path().join("hbase.log");
    let stderr_path = work.path().join("stderr.log");
    let stderr = std::fs::File::create(&stderr_path).expect("create HBase's stderr log");
    let mut cmd = Command::new("java");
    cmd.args(JVM_OPTS)
        .arg("-cp")
        .arg(cp)
        .arg("shoal.hbase.Standalone")
        .arg(work.path())
        // For the shared server, which is never dropped: the JVM removes
        // its data itself once its stdin closes.
        .arg("--delete-work");
    if thrift {
        cmd.arg("--thrift");
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("start java (standalone HBase)");
    let stdin = child.stdin.take();
    let stdout = child.stdout.take().expect("the JVM's stdout");
    let (tx, rx) = mpsc::channel::<String>();
    // Reads every line, so the JVM never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = launched + READY_TIMEOUT;
    let failure = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some((master, rs, zk, thrift)) = parse_ready(&line) {
                    return Ok(RealHBase {
                        master,
                        rs,
                        zk,
                        thrift,
                        child,
                        stdin,
                        work: Some(work),
                        log,
                    });
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                break format!("not ready within {} s", READY_TIMEOUT.as_secs());
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break format!("exited ({:?}) before it was ready", child.wait().ok());
            }
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    let err_text = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    Err(format!(
        "standalone HBase {failure}\nstderr (tail):\n{}\nhbase.log (tail):\n{}",
        tail(&err_text, 40),
        tail(&log_text, 80)
    ))
}

/// One standalone HBase for all the tests of this test binary, started by
/// the first call, or None (skipped) as with [`start`]. It always runs the
/// Thrift gateway (under a second more to start), so that whichever test
/// comes first, `thrift` callers find it: `thrift` only says that the
/// caller needs it. It stops, and removes its data, when the test process
/// exits (its stdin closes).
pub fn shared(thrift: bool) -> Option<&'static RealHBase> {
    static SHARED: OnceLock<Option<RealHBase>> = OnceLock::new();
    let hbase = SHARED.get_or_init(|| start(true)).as_ref()?;
    assert!(
        !thrift || hbase.thrift.is_some(),
        "the shared HBase has no Thrift gateway"
    );
    Some(hbase)
}

impl RealHBase {
    /// The bootstrap servers value for `RpcConnectionRegistry`.
    pub fn bootstrap(&self) -> String {
        self.master.to_string()
    }

    /// HBase's log so far (WARN and above, and the launcher's own lines).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The JVM's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for RealHBase {
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.work.take();
    }
}
