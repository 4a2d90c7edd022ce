//! HBase's snapshot and cluster-status Admin calls through the stock
//! client (`hbase-client` 2.6.1), each program run against a real
//! standalone HBase 2.6.1 (one per test binary, shared by both tests,
//! started while the programs run against Shoal) and against `shoal
//! serve`; their outputs must be the same line for line, except the
//! steps named in each test's allow-list, whose reasons
//! `docs/hbase-client.md` gives.
//!
//! - `tests/hbase-client-java/.../HBaseSnapshotIT.java` takes a snapshot
//!   of a table with split keys, changes the table, lists the snapshot,
//!   clones it, restores the table to it, deletes it, restores a dropped
//!   table from another, and tries each error case (unknown snapshots, a
//!   name taken twice, a clone onto an existing table, a restore of an
//!   enabled table, a snapshot of a missing table).
//! - `.../HBaseStatusIT.java` asks `getClusterMetrics` (all of it and
//!   subsets), `getRegionMetrics` per server (and per table), turns and
//!   asks the balancer, and alters a table then waits for its regions to
//!   show it, as `hbase shell`'s `status` and `alter` and MapReduce's
//!   `TableInputFormat` do.
//!
//! - `.../HBaseNamespaceIT.java` makes, describes, lists, alters and drops
//!   a namespace, a pre-split table in it (written, read, scanned, listed
//!   by namespace and by pattern), and tries each error case (a table in a
//!   missing namespace, a namespace made twice or with a bad name, a
//!   non-empty one dropped, a missing one listed, `default` dropped).
//!
//! Skipped outside CI without Java 17 and Maven, as `hbase_client_e2e.rs`.

#![allow(clippy::unwrap_used)] // test code

#[path = "support/hbase.rs"]
mod hbase;
#[path = "support/java.rs"]
mod java;
mod support;

use std::process::Command;
use std::time::Instant;
use support::ServerProcess;

/// Steps whose lines may differ between HBase and Shoal (by the step's
/// name, the text before `: `); each is explained in docs/hbase-client.md.
const ALLOWED: &[&str] = &[];

/// The status program's steps that may differ: none.
const STATUS_ALLOWED: &[&str] = &[];

/// The namespace program's steps that may differ (docs/hbase-client.md,
/// "Namespaces"): HBase's master throws a plain IllegalArgumentException
/// for a bad namespace name, which its client retries until it gives up;
/// Shoal refuses it at once with a DoNotRetryIOException naming the bad
/// character.
const NAMESPACE_ALLOWED: &[&str] = &["createNamespace bad name"];

/// One Java program of this binary: its class, the line it ends with.
struct Program {
    class: &'static str,
    done: &'static str,
}

const SNAPSHOTS: Program = Program {
    class: "HBaseSnapshotIT",
    done: "done snapshots",
};

const NAMESPACES: Program = Program {
    class: "HBaseNamespaceIT",
    done: "done namespaces",
};

const STATUS: Program = Program {
    class: "HBaseStatusIT",
    done: "done status",
};

/// Runs the program against `bootstrap`; its output.
fn run(
    program: &Program,
    cp: &str,
    bootstrap: &str,
    what: &str,
    context: &dyn Fn() -> String,
) -> String {
    let started = Instant::now();
    let out = Command::new("java")
        .args(hbase::JVM_OPTS)
        .arg("-cp")
        .arg(cp)
        .arg(format!("shoal.it.{}", program.class))
        .arg(bootstrap)
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains(program.done),
        "{} against {what} failed:\nstdout:\n{stdout}\nstderr (tail):\n{}\n{}",
        program.class,
        java::tail(&String::from_utf8_lossy(&out.stderr), 60),
        context(),
    );
    eprintln!("{what}: {:.1} s\n{stdout}", started.elapsed().as_secs_f64());
    stdout
}

/// Runs `program` against a fresh Shoal and then against the shared HBase
/// (which starts meanwhile); the two outputs, or `None` where Java or
/// HBase is not there (outside CI).
fn both_answers(dir: &std::path::Path, program: &Program) -> Option<(String, String)> {
    if !java::present() {
        return None;
    }
    // HBase starts (half a minute and more) while the program runs
    // against Shoal.
    let real = std::thread::spawn(|| hbase::shared(false));
    let source = java::project().join(format!("src/main/java/shoal/it/{}.java", program.class));
    let cp = java::compile(&dir.join("java"), &[source])?;
    let server = ServerProcess::start(&dir.join("data"), None);
    let addr = server.hbase.expect("the native RPC port").to_string();
    let shoal = run(program, &cp, &addr, "shoal", &|| {
        format!(
            "server stderr (tail):\n{}",
            java::tail(&server.stderr(), 40)
        )
    });
    let real = match real.join() {
        Ok(real) => real,
        Err(panic) => std::panic::resume_unwind(panic),
    }?;
    let reference = run(program, &cp, &real.bootstrap(), "hbase", &|| {
        format!("hbase.log (tail):\n{}", java::tail(&real.log(), 40))
    });
    Some((shoal, reference))
}

#[test]
fn snapshot_calls_answer_as_hbase_answers() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let Some((shoal, reference)) = both_answers(dir.path(), &SNAPSHOTS) else {
        return;
    };
    let found = java::differences(&shoal, &reference, ALLOWED);
    assert!(
        found.is_empty(),
        "Shoal's snapshot calls answer otherwise than HBase's ({} differences):\n{}",
        found.len(),
        found.join("\n")
    );
    // Not vacuous: the reference did what the program says.
    for expected in [
        "cloneSnapshot s1: ok",
        "clone cells: 9 r0/q=v1-0",
        "restored cells: 9 r0/q=v1-0",
        "restoreSnapshot enabled table: org.apache.hadoop.hbase.TableNotDisabledException",
        "cloneSnapshot onto an existing table: org.apache.hadoop.hbase.TableExistsException",
    ] {
        assert!(
            reference.lines().any(|l| l.starts_with(expected)),
            "HBase printed no line {expected:?}"
        );
    }
    eprintln!("whole test: {:.1} s", started.elapsed().as_secs_f64());
}

#[test]
fn cluster_status_calls_answer_as_hbase_answers() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let Some((shoal, reference)) = both_answers(dir.path(), &STATUS) else {
        return;
    };
    let found = java::differences(&shoal, &reference, STATUS_ALLOWED);
    assert!(
        found.is_empty(),
        "Shoal's cluster-status calls answer otherwise than HBase's ({} differences):\n{}",
        found.len(),
        found.join("\n")
    );
    // Not vacuous: the reference did what the program says.
    for expected in [
        "live servers: 1",
        "cluster regions: status_t=4 status_u=1",
        "getRegionMetrics(server, table): regions=4 all of the table=true",
        "balance while off: false",
        "alter then wait: stores per region=[2] families=2",
    ] {
        assert!(
            reference.lines().any(|l| l.starts_with(expected)),
            "HBase printed no line {expected:?}"
        );
    }
    eprintln!("whole test: {:.1} s", started.elapsed().as_secs_f64());
}

#[test]
fn namespace_calls_answer_as_hbase_answers() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let Some((shoal, reference)) = both_answers(dir.path(), &NAMESPACES) else {
        return;
    };
    let found = java::differences(&shoal, &reference, NAMESPACE_ALLOWED);
    assert!(
        found.is_empty(),
        "Shoal's namespace calls answer otherwise than HBase's ({} differences):\n{}",
        found.len(),
        found.join("\n")
    );
    // Not vacuous: the reference did what the program says.
    for expected in [
        "createTable in a missing namespace: org.apache.hadoop.hbase.NamespaceNotFoundException",
        "createNamespace: ok",
        "put and get across regions: v-z",
        "listTableNamesByNamespace: [ns_it:t1]",
        "deleteNamespace: ok",
    ] {
        assert!(
            reference.lines().any(|l| l.starts_with(expected)),
            "HBase printed no line {expected:?}"
        );
    }
    eprintln!("whole test: {:.1} s", started.elapsed().as_secs_f64());
}
