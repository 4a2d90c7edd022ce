//! HBase's MapReduce tools, unmodified (`hbase-mapreduce` 2.6.1 from Maven
//! Central, `tests/hbase-mapreduce/pom.xml`), run in Hadoop's local mode
//! against `shoal serve`: `RowCounter`, `Export` then `Import`, and
//! `CopyTable`. Their input splits must follow Shoal's regions (one map
//! task per region) and their counters must equal the rows written; the
//! copies must hold every row. The client finds Shoal by its native RPC
//! (the two lines of docs/hbase-client.md); `Import` and `CopyTable` also
//! read the cluster id from ZooKeeper (`/hbase/hbaseid`), which Shoal's
//! read-only ZooKeeper registry answers.
//!
//! Skipped outside CI without Java 17 and Maven, as `hbase_client_e2e.rs`.

#![allow(clippy::unwrap_used)] // test code

#[path = "support/hbase.rs"]
mod hbase;
#[path = "support/java.rs"]
mod java;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use support::{ServerProcess, shell};

/// The tools' classpath (Maven, offline: `scripts/test` fetches the jars).
fn classpath(work: &Path) -> String {
    let pom = java::project().join("../hbase-mapreduce/pom.xml");
    let out_file = work.join("mr-classpath.txt");
    let out = Command::new("mvn")
        .args(["-q", "-B", "-o", "-f"])
        .arg(&pom)
        .arg("dependency:build-classpath")
        .arg(format!("-Dmdep.outputFile={}", out_file.display()))
        .output()
        .expect("run mvn");
    assert!(
        out.status.success(),
        "mvn could not give hbase-mapreduce 2.6.1's classpath offline (scripts/test fetches it first):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&out_file)
        .expect("classpath file")
        .trim()
        .to_string()
}

/// How the jobs run: their classpath, Hadoop's scratch space, the log
/// settings that print the job's counters, and where Shoal answers.
struct Jobs {
    cp: String,
    work: PathBuf,
    log4j: PathBuf,
    native: String,
    zk_port: u16,
}

/// What one job printed: its stderr, where Hadoop logs the counters.
struct Ran {
    log: String,
}

impl Ran {
    /// The value of counter `name` (`  NAME=123`), if printed.
    fn counter(&self, name: &str) -> Option<u64> {
        self.log.lines().find_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            (k == name).then(|| v.trim().parse().ok()).flatten()
        })
    }

    /// How many input splits the job had.
    fn splits(&self) -> Option<u64> {
        self.log.lines().find_map(|l| {
            l.split_once("number of splits:")
                .and_then(|(_, n)| n.trim().parse().ok())
        })
    }
}

impl Jobs {
    /// Runs tool `class` with `args`; fails the test if it fails.
    fn run(&self, class: &str, args: &[&str]) -> Ran {
        let started = Instant::now();
        let out = Command::new("java")
            .args(hbase::JVM_OPTS)
            .arg("--add-opens=java.base/java.nio=ALL-UNNAMED")
            .arg(format!(
                "-Dlog4j.configuration=file:{}",
                self.log4j.display()
            ))
            .arg("-cp")
            .arg(&self.cp)
            .arg(format!("org.apache.hadoop.hbase.mapreduce.{class}"))
            .args([
                "-Dhbase.client.registry.impl=org.apache.hadoop.hbase.client.RpcConnectionRegistry",
                &format!("-Dhbase.client.bootstrap.servers={}", self.native),
                "-Dhbase.zookeeper.quorum=127.0.0.1",
                &format!("-Dhbase.zookeeper.property.clientPort={}", self.zk_port),
                "-Dmapreduce.framework.name=local",
                &format!("-Dhadoop.tmp.dir={}", self.work.join("hadoop").display()),
                "-Dhbase.client.retries.number=5",
            ])
            .args(args)
            .current_dir(&self.work)
            .output()
            .expect("run java");
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "{class} {args:?} failed ({:?}):\n{}",
            out.status,
            java::tail(&log, 60)
        );
        eprintln!("{class}: {:.1} s", started.elapsed().as_secs_f64());
        Ran { log }
    }
}

/// The log4j settings: warnings, and the job's progress and counters.
const LOG4J: &str = "log4j.rootLogger=WARN, console
log4j.logger.org.apache.hadoop.mapreduce.Job=INFO
log4j.logger.org.apache.hadoop.mapreduce.JobSubmitter=INFO
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%p %c{1}: %m%n
";

/// The rows the test writes: two per letter, so every region holds some.
fn rows() -> Vec<String> {
    ('a'..='z')
        .flat_map(|c| [format!("{c}1"), format!("{c}2")])
        .collect()
}

/// The row count `shoal shell` gives for `table`.
fn count(server: &ServerProcess, table: &str) -> u64 {
    let (code, out, err) = shell(server.grpc, &[], &format!("count '{table}'\n"));
    assert_eq!(code, 0, "count {table}: {err}");
    out.lines()
        .find_map(|l| {
            l.trim()
                .strip_suffix(" row(s)")
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or_else(|| panic!("no count in {out:?}"))
}

#[test]
fn rowcounter_export_import_and_copytable_run_against_shoal() {
    if !java::present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let config = support::write_config(
        dir.path(),
        "[zk_registry]\nenabled = true\naddr = \"127.0.0.1:0\"\n",
    );
    let server = ServerProcess::start(&dir.path().join("data"), Some(&config));
    let mut script = String::from("create 'src', 'cf', SPLITS => ['g', 'p']\n");
    for r in rows() {
        script.push_str(&format!("put 'src', '{r}', 'cf:q', 'v-{r}'\n"));
        script.push_str(&format!("put 'src', '{r}', 'cf:n', '{}'\n", r.len()));
    }
    script.push_str("create 'dst', 'cf'\ncreate 'copy', 'cf'\n");
    let (code, _, err) = shell(server.grpc, &[], &script);
    assert_eq!(code, 0, "{err}");
    let work = dir.path().join("jobs");
    std::fs::create_dir_all(&work).unwrap();
    let log4j = work.join("log4j.properties");
    std::fs::write(&log4j, LOG4J).unwrap();
    let jobs = Jobs {
        cp: classpath(&work),
        work: work.clone(),
        log4j,
        native: server.hbase.expect("native RPC").to_string(),
        zk_port: server.zk.expect("the ZooKeeper registry's address").port(),
    };
    let written = rows().len() as u64;

    // RowCounter: one split per region, every row counted.
    let rc = jobs.run("RowCounter", &["src"]);
    assert_eq!(rc.splits(), Some(3), "{}", java::tail(&rc.log, 40));
    assert_eq!(
        rc.counter("ROWS"),
        Some(written),
        "{}",
        java::tail(&rc.log, 40)
    );

    // Export to files, then Import into another table.
    let export_dir = work.join("export");
    let ex = jobs.run("Export", &["src", &export_dir.display().to_string()]);
    assert_eq!(ex.splits(), Some(3));
    assert_eq!(ex.counter("Map output records"), Some(written));
    let im = jobs.run("Import", &["dst", &export_dir.display().to_string()]);
    assert_eq!(im.counter("Map input records"), Some(written));
    assert_eq!(count(&server, "dst"), written);

    // CopyTable into a table of the same server.
    let cp = jobs.run("CopyTable", &["--new.name=copy", "src"]);
    assert_eq!(cp.splits(), Some(3));
    assert_eq!(count(&server, "copy"), written);

    // The copies hold the same cells.
    for table in ["dst", "copy"] {
        let (code, out, err) = shell(server.grpc, &[], &format!("get '{table}', 'm2'\n"));
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("value=v-m2") && out.contains("cf:n"),
            "{table}: {out}"
        );
    }
    eprintln!("whole test: {:.1} s", started.elapsed().as_secs_f64());
}
