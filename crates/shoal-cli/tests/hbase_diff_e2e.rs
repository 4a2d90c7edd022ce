//! The differential test against real HBase: the stock `hbase-client`
//! 2.6.1 drives the same seeded random operation sequences through a real,
//! standalone HBase 2.6.1 (A, `support/hbase.rs`) and a `shoal serve` (B),
//! on identical fresh tables, and compares every answer (cells in order,
//! booleans, errors by class). The program is
//! `tests/hbase-client-java/src/main/java/shoal/it/HBaseDiff.java` (and
//! `diff/`); its allow-list of known, chosen differences is printed first.
//! The test fails on any divergence outside that list and shows the
//! driver's output: the seed, the operation, both answers, minimized.
//!
//! CI mode: 250 operations for each of 20 seeds, two at a time, the driver
//! starting no seed once the test has run about 150 s (it gets 40 to 110
//! s, whatever HBase's start left); `SHOAL_HBASE_DIFF_SEEDS` / `_OPS`
//! change the seeds and operations. `scripts/hbase-diff` is the long mode.
//! Outside CI the test is skipped, with a note, when Java 17 or Maven is
//! missing.

#![allow(clippy::unwrap_used)] // test code

#[path = "support/hbase.rs"]
mod hbase;
#[path = "support/java.rs"]
mod java;
mod support;

use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use support::ServerProcess;

/// Seeds and operations per seed in CI (the long mode runs thousands).
const SEEDS: &str = "1..20";
const OPS: &str = "250";
/// The whole test's target: the driver gets what is left of it after HBase
/// started (at least `MIN_BUDGET`, at most `MAX_BUDGET`), and starts no seed
/// after that (it says so).
const TARGET: Duration = Duration::from_secs(150);
const MIN_BUDGET: u64 = 40;
const MAX_BUDGET: u64 = 110;
/// Kills the driver if it runs past this (a hang, not a divergence).
const HARD_LIMIT: Duration = Duration::from_secs(240);

/// The compiled driver (HBaseDiff and `diff/`) and its classpath, or None
/// (skipped) outside CI without Java and Maven.
fn driver(work: &Path) -> Option<String> {
    let src = java::project().join("src/main/java/shoal/it");
    let mut sources = vec![src.join("HBaseDiff.java")];
    for entry in std::fs::read_dir(src.join("diff")).expect("the driver's diff/ sources") {
        let path = entry.expect("a diff/ source").path();
        if path.extension().is_some_and(|e| e == "java") {
            sources.push(path);
        }
    }
    java::compile(work, &sources)
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

#[test]
fn shoal_answers_as_hbase_does() {
    let started = Instant::now();
    // HBase takes the longest to come up: start it while the driver compiles.
    let hbase = std::thread::spawn(|| hbase::shared(false).map(|h| h.bootstrap()));
    let dir = tempfile::tempdir().unwrap();
    let cp = driver(dir.path());
    let Some(hbase_addr) = hbase.join().expect("starting HBase panicked") else {
        return;
    };
    let Some(cp) = cp else {
        return;
    };
    let ready = started.elapsed();
    let budget = TARGET
        .saturating_sub(ready)
        .as_secs()
        .clamp(MIN_BUDGET, MAX_BUDGET);
    eprintln!(
        "HBase and the driver ready after {:.0} s; the driver's budget: {budget} s",
        ready.as_secs_f64()
    );
    let server = ServerProcess::start(&dir.path().join("data"), None);
    let shoal_addr = server.hbase.expect("the native RPC port").to_string();
    let stdout_path = dir.path().join("driver.out");
    let stderr_path = dir.path().join("driver.err");
    let mut child = Command::new("java")
        .arg("-cp")
        .arg(&cp)
        .arg("shoal.it.HBaseDiff")
        .args(["--a", &hbase_addr, "--b", &shoal_addr])
        .args(["--seeds", &env_or("SHOAL_HBASE_DIFF_SEEDS", SEEDS)])
        .args(["--ops", &env_or("SHOAL_HBASE_DIFF_OPS", OPS)])
        .args(["--max-seconds", &budget.to_string(), "--jobs", "2"])
        .args(["--minimize", "--minimize-max", "1"])
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("start java (HBaseDiff)");
    let deadline = Instant::now() + HARD_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut stdout = String::new();
    std::fs::File::open(&stdout_path)
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("summary "))
        .unwrap_or("(no summary line)")
        .to_string();
    eprintln!(
        "{summary}; whole test {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let hbase_log = hbase::shared(false).map(|h| h.log()).unwrap_or_default();
    assert!(
        status.is_some_and(|s| s.success()) && summary.contains(" divergences=0 "),
        "Shoal answered differently from HBase 2.6.1 ({}):\n{stdout}\n\
         driver stderr (tail):\n{}\nshoal stderr (tail):\n{}\nhbase log (tail):\n{}",
        match status {
            None => format!(
                "the driver ran past {} s and was killed",
                HARD_LIMIT.as_secs()
            ),
            Some(s) => format!("driver exit {s}"),
        },
        java::tail(&stderr, 20),
        java::tail(&server.stderr(), 10),
        java::tail(&hbase_log, 20),
    );
}
