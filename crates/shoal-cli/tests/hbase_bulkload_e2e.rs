//! HBase's bulk load through HBase's own tool: `BulkLoadHFilesTool`
//! (hbase-server 2.6.1, run in-process by
//! `tests/hbase-client-java/.../HBaseBulkLoadIT.java`) loads a real HBase
//! HFile (the fixture `v2-NONE-NONE.hfile`: 1,421 cells over 207 rows,
//! every delete-marker type) into a table of four regions — the split keys
//! fall inside the file's rows, so the tool splits the file itself — then,
//! after puts at loaded keys, a second HFile (written by HBase's writer)
//! while other rows are put concurrently, then more puts. The same program
//! runs against Shoal and against a real standalone HBase 2.6.1, each with
//! its own copy of the input (HBase moves the files it loads); every
//! version of every cell read back with the stock client after the first
//! load and at the end must be the same on both.
//!
//! The fixture used is an HFile v2 one (no tags): Shoal drops cell tags
//! (docs/hbase-client.md), and HBase honours TTL tags, which the v3
//! fixtures carry on cells timestamped in 2023.
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
use support::ServerProcess;

/// The fixture HFile, as HBase 2.6.1 wrote it.
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shoal-hfile/tests/fixtures/hfiles/v2-NONE-NONE.hfile")
}

/// `<work>/load1/f/<hex name>`: the layout the tool reads.
fn lay_out(work: &Path) {
    let family = work.join("load1").join("f");
    std::fs::create_dir_all(&family).unwrap();
    std::fs::copy(fixture(), family.join("0123456789abcdef0123456789abcdef")).unwrap();
}

/// Runs the program against `bootstrap`; its dump.
fn run(cp: &str, bootstrap: &str, work: &Path, what: &str, context: &dyn Fn() -> String) -> String {
    lay_out(work);
    let out_file = work.join("cells.txt");
    let started = std::time::Instant::now();
    let out = Command::new("java")
        .args(hbase::JVM_OPTS)
        .arg("-cp")
        .arg(cp)
        .arg("shoal.it.HBaseBulkLoadIT")
        .arg(bootstrap)
        .arg("it_bulkload")
        .arg(work)
        .arg(&out_file)
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("done bulkload"),
        "HBaseBulkLoadIT against {what} failed:\nstdout:\n{stdout}\nstderr (tail):\n{}\n{}",
        java::tail(&String::from_utf8_lossy(&out.stderr), 80),
        context(),
    );
    eprintln!("{what}: {:.1} s\n{stdout}", started.elapsed().as_secs_f64());
    std::fs::read_to_string(&out_file).unwrap()
}

/// The first line where `a` and `b` differ, with neighbours.
fn first_difference(a: &[&str], b: &[&str]) -> String {
    let i = a
        .iter()
        .zip(b.iter())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let show = |v: &[&str]| {
        v[i.saturating_sub(2)..(i + 3).min(v.len())]
            .iter()
            .map(|l| if l.len() > 200 { &l[..200] } else { l })
            .collect::<Vec<_>>()
            .join("\n  ")
    };
    format!(
        "line {i} (shoal {} lines, hbase {} lines)\nshoal:\n  {}\nhbase:\n  {}",
        a.len(),
        b.len(),
        show(a),
        show(b)
    )
}

#[test]
fn bulk_load_tool_loads_into_shoal_as_into_hbase() {
    let dir = tempfile::tempdir().unwrap();
    if !java::present() {
        return;
    }
    let cp = java::compile_against(
        &dir.path().join("java"),
        &[java::project().join("src/main/java/shoal/it/HBaseBulkLoadIT.java")],
        hbase::classpath(),
    );

    let server = ServerProcess::start(&dir.path().join("data"), None);
    let shoal_addr = server.hbase.expect("the native RPC port").to_string();
    let shoal_work = dir.path().join("shoal-input");
    let shoal = run(&cp, &shoal_addr, &shoal_work, "shoal", &|| {
        format!(
            "server stderr (tail):\n{}",
            java::tail(&server.stderr(), 40)
        )
    });

    let Some(real) = hbase::start(false) else {
        return;
    };
    let hbase_work = dir.path().join("hbase-input");
    let reference = run(&cp, &real.bootstrap(), &hbase_work, "hbase", &|| {
        format!("hbase.log (tail):\n{}", java::tail(&real.log(), 40))
    });

    let shoal: Vec<&str> = shoal.lines().collect();
    let reference: Vec<&str> = reference.lines().collect();
    for phase in ["phase1 ", "final "] {
        let a: Vec<&str> = shoal
            .iter()
            .copied()
            .filter(|l| l.starts_with(phase))
            .collect();
        let b: Vec<&str> = reference
            .iter()
            .copied()
            .filter(|l| l.starts_with(phase))
            .collect();
        assert!(!b.is_empty(), "HBase shows no cells in {phase}");
        assert!(a == b, "{phase}differs: {}", first_difference(&a, &b));
    }
    // The interesting cases are present: loaded cells, puts after a load
    // that won, a second load that won over puts, concurrent puts.
    let fin: Vec<&str> = shoal
        .iter()
        .copied()
        .filter(|l| l.starts_with("final "))
        .collect();
    let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    for marker in [
        "put-after-load1-",
        "load2-",
        "load2-new-",
        "put-after-load2-",
        "v199",
    ] {
        assert!(
            fin.iter().any(|l| l.contains(&hex(marker))),
            "no {marker:?} value in the final cells"
        );
    }
    // The tool split the fixture file (one file, four regions: four
    // groups), writing the halves under load1/f/.tmp; Shoal read them there.
    assert!(
        fixture_groups(&shoal_work) >= 2,
        "the tool did not split the fixture HFile across regions"
    );
}

/// Split halves the tool left under `<work>/load1/f/.tmp`.
fn fixture_groups(work: &Path) -> usize {
    std::fs::read_dir(work.join("load1/f/.tmp"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.ends_with(".top") || n.ends_with(".bottom")
                })
                .count()
        })
        .unwrap_or(0)
}
