//! The differential test through Thrift: happybase 1.3.0 (PyPI) drives the
//! same seeded random operation sequences against HBase 2.6.1's own Thrift1
//! gateway (a real standalone HBase from Maven Central, started here) and
//! against `shoal serve`'s, and compares every answer
//! (`tests/happybase/diff.py`: puts, deletes, row/rows/cells reads, scans
//! with bounds, prefixes, columns, filter strings, limits, batch sizes and
//! reversed order, counters, batches). Known differences are excluded from
//! generation by name (the script's `ALLOW`, documented in
//! `docs/hbase-client.md`); any other divergence fails the test, printed
//! with its seed. The longer run is the same script with more seeds:
//! `python crates/shoal-cli/tests/happybase/diff.py --a HBASE --b SHOAL
//! --seeds 1..1000`.
//!
//! Skipped with a note outside CI when Java, Maven or happybase are missing
//! (`scripts/test` installs them all).

#![allow(clippy::unwrap_used)] // test code

#[path = "support/hbase.rs"]
mod hbase;
mod support;

use std::process::Command;
use support::ServerProcess;

/// Seeds and operations per seed of the CI run (about 30 s here).
const SEEDS: &str = "1..12";
const OPS: &str = "120";

#[test]
fn happybase_answers_as_against_hbase_thrift_gateway() {
    let python = match std::env::var("SHOAL_PYTHON") {
        Ok(p) => p,
        Err(_) if std::env::var_os("CI").is_some() => {
            panic!("CI: SHOAL_PYTHON (a Python with happybase) is not set: scripts/test sets it")
        }
        Err(_) => {
            eprintln!("skipped: set SHOAL_PYTHON to a Python with happybase (scripts/test does)");
            return;
        }
    };
    let Some(reference) = hbase::shared(true) else {
        return;
    };
    let hbase_thrift = reference
        .thrift
        .expect("the shared HBase runs its Thrift gateway");
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&dir.path().join("data"), None);
    let shoal_thrift = server.thrift.expect("the gateway is on by default");
    let out = Command::new(&python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/happybase/diff.py"
        ))
        .args(["--a", &hbase_thrift.to_string()])
        .args(["--b", &shoal_thrift.to_string()])
        .args(["--seeds", SEEDS, "--ops", OPS])
        .output()
        .expect("run diff.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "happybase against HBase's gateway and Shoal's diverged:\n{stdout}\n{}\nserver stderr (tail):\n{}\nHBase log (tail):\n{}",
        String::from_utf8_lossy(&out.stderr),
        server
            .stderr()
            .lines()
            .rev()
            .take(30)
            .collect::<Vec<_>>()
            .join("\n"),
        reference.log()
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("summary "))
        .unwrap_or_default();
    assert!(
        summary.contains("divergences=0") && summary.contains("ops=1440"),
        "{summary}"
    );
    eprintln!("{summary}");
}
