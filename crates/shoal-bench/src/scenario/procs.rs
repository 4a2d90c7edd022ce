//! Child processes measured from the outside, for `import`: the CPU time
//! of any process from `/proc/<pid>/stat` (a JVM's threads included), a
//! child run to completion whose CPU is read as a zombie just before it is
//! reaped (so nothing of it is lost), and the Java side: Maven's classpath
//! for `tests/hbase-hfile-gen`, `javac`, and the JVM options HBase's
//! `bin/hbase` uses on Java 17.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The options HBase's `bin/hbase` gives Java 17 (as `scripts/gen-hbase-fixtures`).
pub const JVM_OPTS: &[&str] = &[
    "-XX:+UseParallelGC",
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

/// Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`, 100 if
/// that cannot be asked).
fn ticks() -> f64 {
    static T: OnceLock<f64> = OnceLock::new();
    *T.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .filter(|t| *t > 0.0)
            .unwrap_or(100.0)
    })
}

/// A process's state letter and its user + system CPU seconds so far.
fn stat(pid: u32) -> Option<(char, f64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields follow the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let state = f.first()?.chars().next()?;
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((state, (utime + stime) / ticks()))
}

/// CPU seconds (user + system, every thread) of a running process.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    stat(pid).map(|(_, s)| s)
}

/// A child that has exited: its status, wall time, CPU and output lines.
#[derive(Debug)]
pub struct Finished {
    /// Exit status.
    pub status: ExitStatus,
    /// From spawn to exit.
    pub wall: Duration,
    /// Its CPU seconds, read from its zombie (None: /proc unreadable).
    pub cpu: Option<f64>,
    /// Its stdout, by line.
    pub stdout: Vec<String>,
}

/// Lines a running child printed on stderr, as they come, with the instant.
pub type StderrLines = std::sync::mpsc::Receiver<(Instant, String)>;

/// A child started by [`spawn`], killed and reaped if dropped unfinished.
pub struct Running {
    child: Option<Child>,
    started: Instant,
    out: Option<std::thread::JoinHandle<Vec<String>>>,
    /// Its stderr lines (also appended to the log file given to [`spawn`]).
    pub stderr: StderrLines,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Starts `cmd` with stdout collected and stderr both streamed to
/// [`Running::stderr`] and appended to `log`.
pub fn spawn(mut cmd: Command, log: &Path) -> std::io::Result<Running> {
    use std::io::Write;
    let mut logf = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let started = Instant::now();
    let (stdout, stderr) = match (child.stdout.take(), child.stderr.take()) {
        (Some(o), Some(e)) => (o, e),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("no pipes to the child"));
        }
    };
    let out = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<_>>()
    });
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = writeln!(logf, "{line}");
            let _ = tx.send((Instant::now(), line));
        }
    });
    Ok(Running {
        child: Some(child),
        started,
        out: Some(out),
        stderr: rx,
    })
}

impl Running {
    /// Its process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// When it was started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// True once it has exited (a zombie not yet reaped, or gone).
    pub fn exited(&self) -> bool {
        self.pid()
            .and_then(stat)
            .is_none_or(|(state, _)| state == 'Z')
    }

    /// Waits for it to exit; its CPU is read while it is a zombie, then it
    /// is reaped.
    pub async fn finish(&mut self) -> std::io::Result<Finished> {
        let Some(mut child) = self.child.take() else {
            return Err(std::io::Error::other("already finished"));
        };
        let pid = child.id();
        let mut cpu = None;
        loop {
            match stat(pid) {
                Some(('Z', s)) => {
                    cpu = Some(s);
                    break;
                }
                Some(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                None => break,
            }
        }
        let status = child.wait()?;
        let wall = self.started.elapsed();
        let stdout = self
            .out
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        Ok(Finished {
            status,
            wall,
            cpu,
            stdout,
        })
    }
}

/// `tests/hbase-hfile-gen` compiled: the classpath to run its classes with.
/// Maven is asked offline first, then Maven Central.
pub fn java_classpath(project: &Path, classes: &Path) -> Result<String, String> {
    for tool in ["java", "javac", "mvn"] {
        let ok = Command::new(tool)
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        if !ok {
            return Err(format!(
                "{tool} not found: the import scenario needs Java 17 and Maven"
            ));
        }
    }
    let cp_file = classes.with_extension("classpath");
    let pom = project.join("pom.xml");
    let mvn = |offline: bool| {
        let mut c = Command::new("mvn");
        c.args(["-q", "-B"]);
        if offline {
            c.arg("-o");
        }
        c.arg("-f")
            .arg(&pom)
            .arg("dependency:build-classpath")
            .arg(format!("-Dmdep.outputFile={}", cp_file.display()))
            .stdin(Stdio::null())
            .output()
    };
    let got = match mvn(true) {
        Ok(o) if o.status.success() => Ok(o),
        _ => mvn(false),
    }
    .map_err(|e| format!("running mvn: {e}"))?;
    if !got.status.success() {
        return Err(format!(
            "mvn dependency:build-classpath failed:\n{}",
            String::from_utf8_lossy(&got.stdout)
        ));
    }
    let jars = std::fs::read_to_string(&cp_file)
        .map_err(|e| format!("reading {}: {e}", cp_file.display()))?;
    let sources: Vec<PathBuf> = std::fs::read_dir(project.join("src/main/java/shoal/hfilegen"))
        .map_err(|e| format!("listing {}: {e}", project.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    let javac = Command::new("javac")
        .args(["-nowarn", "-XDsuppressNotes", "-d"])
        .arg(classes)
        .arg("-cp")
        .arg(jars.trim())
        .args(&sources)
        .output()
        .map_err(|e| format!("running javac: {e}"))?;
    if !javac.status.success() {
        return Err(format!(
            "javac failed:\n{}",
            String::from_utf8_lossy(&javac.stderr)
        ));
    }
    Ok(format!("{}:{}", classes.display(), jars.trim()))
}

/// `java <JVM_OPTS> -Xmx<heap> -cp <cp> -Djava.io.tmpdir=<tmp> <class> <args>`.
pub fn java(cp: &str, heap: &str, tmp: &Path, class: &str, args: &[String]) -> Command {
    let mut c = Command::new("java");
    c.args(JVM_OPTS)
        .arg(format!("-Xmx{heap}"))
        .arg(format!("-Djava.io.tmpdir={}", tmp.display()))
        .arg("-cp")
        .arg(cp)
        .arg(class)
        .args(args);
    c
}

/// `name{op="…"} value` samples of a Prometheus text page, by op.
pub fn by_op(metrics: &str, name: &str) -> Vec<(String, f64)> {
    let prefix = format!("{name}{{op=\"");
    metrics
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(&prefix)?;
            let (op, rest) = rest.split_once('"')?;
            let value = rest.trim_start_matches('}').trim().parse::<f64>().ok()?;
            Some((op.to_string(), value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_cpu_is_readable() {
        let s = cpu_seconds(std::process::id());
        assert!(s.is_some_and(|s| s >= 0.0));
    }

    #[test]
    fn samples_by_op() {
        let page = "# HELP x\nshoal_object_store_requests_total{op=\"put\"} 12\n\
                    shoal_object_store_requests_total{op=\"get\"} 3\nother 1\n";
        let got = by_op(page, "shoal_object_store_requests_total");
        assert_eq!(got, vec![("put".into(), 12.0), ("get".into(), 3.0)]);
    }
}
