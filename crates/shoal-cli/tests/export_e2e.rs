//! `shoal export hfiles` into a real HBase 2.6.1: a Shoal table with two families
//! (keeping 3 and 5 versions) over three regions, written through the Rust client with
//! more versions than kept, deletes and a large value, is exported as GZ HFiles (one per
//! region and family); HBase's stock client creates the same table in a real HBase,
//! HBase's own `BulkLoadHFilesTool` loads the export directory, and every cell HBase then
//! returns (all versions) equals what Shoal returns. A second export into the same
//! directory is refused.
//!
//! The HBase side is `tests/hbase-client-java/.../ExportCheck.java`, compiled against
//! `tests/hbase-server`'s classpath (it needs hbase-server for the bulk load tool).
//! Outside CI the test is skipped, with a note, without Java 17 and Maven.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

#[path = "support/hbase.rs"]
mod hbase;
#[path = "support/java.rs"]
mod java;
mod support;

use futures::TryStreamExt;
use shoal_client::{RowMutation, Scan};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Instant;
use support::{ServerProcess, shoal_bin};

const TABLE: &str = "exported";
const ROWS: usize = 600;

/// A cell as compared: row, family, qualifier, timestamp, value (hex).
type Seen = (String, String, String, i64, String);

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn shoal(args: &[&str]) -> (bool, String) {
    let out = Command::new(shoal_bin()).args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn row_key(i: usize) -> Vec<u8> {
    format!("{}-{i:05}", (b'a' + (i % 26) as u8) as char).into_bytes()
}

/// Several versions per column (more than the families keep), a binary qualifier, empty
/// and large values, deleted columns and rows.
async fn write_rows(table: &shoal_client::Table) {
    let mut batch = Vec::new();
    for i in 0..ROWS {
        let mut m = RowMutation::new(row_key(i));
        for v in 0..4i64 {
            m = m.put_at("a", "q0", 1_000 + v, format!("a{i}v{v}")).put_at(
                "a",
                "q1",
                2_000 + v,
                format!("{i}"),
            );
        }
        for v in 0..7i64 {
            m = m.put_at("b", "x", 5_000 + v * 10, vec![(i % 251) as u8; v as usize]);
        }
        if i % 7 == 0 {
            m = m.put_at("b", [0u8, 0xff, 0x10], 42, b"");
        }
        if i % 50 == 0 {
            m = m.put_at("b", "big", 7, vec![b'z'; 200_000]);
        }
        batch.push(m);
        if batch.len() == 100 {
            for r in table.mutate_many(std::mem::take(&mut batch)).await.unwrap() {
                r.unwrap();
            }
        }
    }
    for r in table.mutate_many(batch).await.unwrap() {
        r.unwrap();
    }
    for i in (0..ROWS).step_by(13) {
        table
            .mutate(RowMutation::new(row_key(i)).delete_column("a", "q1", None))
            .await
            .unwrap();
    }
    table.delete_row(row_key(5)).await.unwrap();
}

async fn shoal_cells(table: &shoal_client::Table) -> BTreeSet<Seen> {
    let rows: Vec<shoal_client::proto::Row> = table
        .scan(Scan::new().versions(10))
        .try_collect()
        .await
        .unwrap();
    rows.iter()
        .flat_map(|r| {
            r.cells.iter().map(|c| {
                (
                    hex(&r.row),
                    hex(&c.family),
                    hex(&c.qualifier),
                    c.timestamp,
                    hex(&c.value),
                )
            })
        })
        .collect()
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for family in std::fs::read_dir(dir).unwrap() {
        let family = family.unwrap().path();
        for f in std::fs::read_dir(&family).unwrap() {
            let f = f.unwrap().path();
            out.push(format!(
                "{}/{}",
                family.file_name().unwrap().to_string_lossy(),
                f.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    out.sort();
    out
}

/// An export without compression reads back through shoal-hfile's reader: every cell,
/// in HBase's order (the reader checks it), split at the region boundaries.
fn check_uncompressed_export(dir: &Path, addr: &str, cells: usize) {
    let export = dir.join("export-none");
    let to = export.to_str().unwrap();
    let (ok, out) = shoal(&[
        "export", "hfiles", "--table", TABLE, "--to", to, "--addr", addr,
    ]);
    assert!(ok, "{out}");
    let mut total = 0;
    for name in files_under(&export) {
        let path = export.join(&name);
        let f = shoal_hfile::HFile::open(std::fs::File::open(&path).unwrap(), &name).unwrap();
        assert_eq!(f.compression(), shoal_hfile::Compression::None);
        let first = f.first_key().unwrap().unwrap().row;
        let last = f.last_key().unwrap().unwrap().row;
        let region = |row: &[u8]| usize::from(row >= &b"h"[..]) + usize::from(row >= &b"p"[..]);
        assert_eq!(region(&first), region(&last), "{name} spans regions");
        for c in f.cells() {
            c.unwrap();
            total += 1;
        }
    }
    assert_eq!(total, cells);
}

/// Compiles ExportCheck against hbase-server's classpath.
fn compile_check(work: &Path) -> String {
    let jars = hbase::classpath();
    let classes = work.join("classes");
    std::fs::create_dir_all(&classes).unwrap();
    let out = Command::new("javac")
        .args(["-nowarn", "-d"])
        .arg(&classes)
        .arg("-cp")
        .arg(jars)
        .arg(java::project().join("src/main/java/shoal/it/ExportCheck.java"))
        .output()
        .expect("run javac");
    assert!(
        out.status.success(),
        "javac failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    format!("{}:{jars}", classes.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hbase_bulk_loads_the_export_and_reads_back_every_cell() {
    let started = Instant::now();
    // HBase takes the longest to come up: start it while Shoal is filled and exported.
    let hbase = std::thread::spawn(|| hbase::shared(false).map(|h| h.bootstrap()));
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&dir.path().join("data"), None);
    let addr = server.grpc.to_string();
    let client = shoal_client::Client::connect(addr.as_str()).await.unwrap();
    let family = |name: &str, versions| shoal_client::proto::FamilySchema {
        name: name.into(),
        max_versions: Some(versions),
        block_size: Some(4096),
        ..Default::default()
    };
    client
        .admin()
        .create_table(
            TABLE,
            vec![family("a", 3), family("b", 5)],
            vec![b"h".to_vec(), b"p".to_vec()],
        )
        .await
        .unwrap();
    let table = client.table(TABLE);
    write_rows(&table).await;
    let expected = shoal_cells(&table).await;
    let written = Instant::now();

    let export = dir.path().join("export");
    let to = export.to_str().unwrap();
    let (ok, out) = shoal(&[
        "export",
        "hfiles",
        "--table",
        TABLE,
        "--to",
        to,
        "--compression",
        "gz",
        "--addr",
        &addr,
    ]);
    assert!(ok, "{out}");
    eprintln!("{out}");
    assert!(
        out.contains(&format!(
            "6 files, {} rows, {} cells",
            ROWS - 1,
            expected.len()
        )),
        "{out}"
    );
    let files = files_under(&export);
    assert_eq!(files.len(), 6, "one file per region and family: {files:?}");
    assert!(files.iter().all(|f| !f.contains(".tmp")), "{files:?}");
    let (ok, again) = shoal(&[
        "export", "hfiles", "--table", TABLE, "--to", to, "--addr", &addr,
    ]);
    assert!(!ok && again.contains("not empty"), "{again}");
    check_uncompressed_export(dir.path(), &addr, expected.len());
    let exported = Instant::now();

    let Some(bootstrap) = hbase.join().expect("starting HBase panicked") else {
        return;
    };
    let hbase_ready = Instant::now();
    let cp = compile_check(dir.path());
    let splits = format!("{},{}", hex(b"h"), hex(b"p"));
    let out = Command::new("java")
        .arg("-cp")
        .arg(&cp)
        .arg("shoal.it.ExportCheck")
        .args([&bootstrap, TABLE, "a:3,b:5", &splits, to])
        .output()
        .expect("run java (ExportCheck)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let hbase_log = hbase::shared(false).map(|h| h.log()).unwrap_or_default();
    assert!(
        out.status.success() && stdout.lines().any(|l| l == "done"),
        "ExportCheck failed:\n{}\nstderr:\n{}\nHBase log:\n{}",
        java::tail(&stdout, 20),
        java::tail(&stderr, 40),
        java::tail(&hbase_log, 40)
    );
    assert!(stdout.contains("regions 3"), "{}", java::tail(&stdout, 5));
    let in_hbase: BTreeSet<Seen> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("cell\t"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].to_string(),
                f[1].to_string(),
                f[2].to_string(),
                f[3].parse().unwrap(),
                f.get(4).unwrap_or(&"").to_string(),
            )
        })
        .collect();
    let missing: Vec<&Seen> = expected.difference(&in_hbase).take(5).collect();
    let extra: Vec<&Seen> = in_hbase.difference(&expected).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "HBase holds {} cells, Shoal {}; missing in HBase (first 5): {missing:?}; only in HBase: {extra:?}",
        in_hbase.len(),
        expected.len()
    );
    eprintln!(
        "{} cells equal in HBase and Shoal; written {:.0} s, exported {:.0} s, HBase ready {:.0} s, loaded and read {:.0} s",
        expected.len(),
        (written - started).as_secs_f64(),
        (exported - written).as_secs_f64(),
        (hbase_ready - started).as_secs_f64(),
        hbase_ready.elapsed().as_secs_f64()
    );
}
