//! Importing HBase's files through the real binary: `shoal import
//! hbase-snapshot` of a snapshot real HBase 2.6.1 took (5 regions, two of
//! them split daughters reading their parent's files through references,
//! SNAPPY / GZ / uncompressed families, FAST_DIFF and PREFIX encodings,
//! versions, every delete marker, a TTL) reads back exactly the cells HBase
//! itself showed for a clone of that snapshot; a repeated import resumes
//! without loading twice; a missing or damaged file is one clear error and
//! the import finishes once the file is back. `shoal bulkload` loads
//! HBase-written HFiles across regions, and later writes win.
//!
//! The fixtures are in `crates/shoal-hfile/tests/fixtures` (written by
//! `scripts/gen-hbase-fixtures`; see the README there).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use futures::TryStreamExt;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{ServerProcess, shoal_bin};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shoal-hfile/tests/fixtures")
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

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A cell as compared: row, family, qualifier, timestamp, value (or its
/// length and SHA-256 for the large ones the fixture abbreviates).
type Seen = (Vec<u8>, Vec<u8>, Vec<u8>, i64, String);

fn value_key(v: &[u8]) -> String {
    if v.len() > 1024 {
        let digest = ring::digest::digest(&ring::digest::SHA256, v);
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        format!("len={},sha256={hex}", v.len())
    } else {
        v.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// HBase's visible cells of the clone, less those a TTL has expired since
/// (the `ttl` family keeps an hour; the fixture's TTL is read from its
/// descriptor line).
fn expected_visible(now_ms: i64) -> (BTreeSet<Seen>, Vec<Vec<u8>>) {
    let text =
        std::fs::read_to_string(fixtures().join("hbase-root/imp_snap.expected-visible")).unwrap();
    let mut starts = Vec::new();
    let mut cells = BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# region start keys (hex, '' = first) = ") {
            starts = rest
                .split(',')
                .map(|k| unhex(k.trim_matches('\'')))
                .collect();
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let (family, ts) = (unhex(f[1]), f[3].parse::<i64>().unwrap());
        assert_eq!(f[4], "Put", "a normal scan shows only puts: {line}");
        if family == b"ttl" && ts < now_ms - 3_600_000 {
            continue;
        }
        cells.insert((unhex(f[0]), family, unhex(f[2]), ts, f[5].to_string()));
    }
    assert!(!starts.is_empty() && !cells.is_empty());
    (cells, starts)
}

async fn shoal_cells(addr: &str, table: &str) -> BTreeSet<Seen> {
    let client = shoal_client::Client::connect(addr).await.unwrap();
    let rows: Vec<shoal_client::proto::Row> = client
        .table(table)
        .scan(shoal_client::Scan::new().versions(10))
        .try_collect()
        .await
        .unwrap();
    let mut seen = BTreeSet::new();
    for r in rows {
        for c in r.cells {
            seen.insert((
                r.row.to_vec(),
                c.family.to_vec(),
                c.qualifier.to_vec(),
                c.timestamp,
                value_key(&c.value),
            ));
        }
    }
    seen
}

async fn region_starts(addr: &str, table: &str) -> Vec<Vec<u8>> {
    let client = shoal_client::Client::connect(addr).await.unwrap();
    let described = client.admin().describe(table).await.unwrap();
    described
        .regions
        .iter()
        .map(|r| r.start_row.to_vec())
        .collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Copies the fixture's HBase root dir (to damage it).
fn copy_root(to: &Path) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let target = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &target);
            } else {
                std::fs::copy(e.path(), target).unwrap();
            }
        }
    }
    copy(&fixtures().join("hbase-root"), to);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_hbase_snapshot_imports_with_every_visible_cell() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&dir.path().join("data"), None);
    let addr = server.grpc.to_string();
    let root = fixtures().join("hbase-root");
    let root = root.to_str().unwrap();

    let (ok, out) = shoal(&[
        "import",
        "hbase-snapshot",
        root,
        "imp_snap",
        "--addr",
        &addr,
    ]);
    assert!(ok, "{out}");
    assert!(
        out.contains("5 regions, 3 families, 30 store files"),
        "{out}"
    );
    assert!(out.contains("2207 cells loaded"), "{out}");

    let (expected, starts) = expected_visible(now_ms());
    assert_eq!(
        region_starts(&addr, "imp").await,
        starts,
        "HBase's region boundaries"
    );
    let got = shoal_cells(&addr, "imp").await;
    let missing: Vec<_> = expected.difference(&got).take(5).collect();
    let extra: Vec<_> = got.difference(&expected).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{} cells expected, {} read; missing {missing:?}; extra {extra:?}",
        expected.len(),
        got.len()
    );

    // The same import again: refused without --resume, a no-op with it.
    let (ok, out) = shoal(&[
        "import",
        "hbase-snapshot",
        root,
        "imp_snap",
        "--addr",
        &addr,
    ]);
    assert!(!ok && out.contains("--resume"), "{out}");
    let (ok, out) = shoal(&[
        "import",
        "hbase-snapshot",
        root,
        "imp_snap",
        "--addr",
        &addr,
        "--resume",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("0 cells loaded"), "{out}");
    assert_eq!(shoal_cells(&addr, "imp").await, got);

    // Unknown snapshot: the error lists the ones there are.
    let (ok, out) = shoal(&["import", "hbase-snapshot", root, "nope", "--addr", &addr]);
    assert!(
        !ok && out.contains("no snapshot \"nope\"") && out.contains("imp_snap"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_damaged_file_is_one_clear_error_and_the_import_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&dir.path().join("data"), None);
    let addr = server.grpc.to_string();
    let root = dir.path().join("hbase-root");
    copy_root(&root);
    let root_s = root.to_str().unwrap().to_string();
    let family_dir =
        |region: &str, family: &str| root.join("data/default/imp").join(region).join(family);
    // A plain HFile of the first region, [,r0050) (imp_snap.manifest).
    let region = "68a4f035064da1bc1315175ad0571675";
    let hfile = std::fs::read_dir(family_dir(region, "cf"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let original = std::fs::read(&hfile).unwrap();

    // Missing: nothing is created.
    std::fs::remove_file(&hfile).unwrap();
    let (ok, out) = shoal(&[
        "import",
        "hbase-snapshot",
        &root_s,
        "imp_snap",
        "--addr",
        &addr,
    ]);
    assert!(!ok, "{out}");
    let name = hfile.file_name().unwrap().to_str().unwrap();
    assert!(out.contains("is missing") && out.contains(name), "{out}");
    let client = shoal_client::Client::connect(addr.as_str()).await.unwrap();
    assert!(
        !client.admin().exists("imp").await.unwrap(),
        "nothing half imported"
    );

    // Damaged inside a data block: the region's load fails naming the file
    // and the offset; that region commits nothing.
    let mut damaged = original.clone();
    damaged[200] ^= 0x5a;
    std::fs::write(&hfile, &damaged).unwrap();
    let (ok, out) = shoal(&[
        "import",
        "hbase-snapshot",
        &root_s,
        "imp_snap",
        "--addr",
        &addr,
    ]);
    assert!(!ok, "{out}");
    assert!(out.contains(name) && out.contains("offset"), "{out}");
    let first_region: Vec<shoal_client::proto::Row> = client
        .table("imp")
        .scan(shoal_client::Scan::new().stop("r0050"))
        .try_collect()
        .await
        .unwrap();
    assert!(
        first_region.is_empty(),
        "the damaged region committed nothing"
    );

    // Repaired: --resume finishes, and the result is the whole snapshot.
    std::fs::write(&hfile, &original).unwrap();
    let (ok, out) = shoal(&[
        "import",
        "hbase-snapshot",
        &root_s,
        "imp_snap",
        "--addr",
        &addr,
        "--resume",
    ]);
    assert!(ok, "{out}");
    let (expected, _) = expected_visible(now_ms());
    assert_eq!(shoal_cells(&addr, "imp").await, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulkload_loads_hbase_hfiles_across_regions_and_later_writes_win() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&dir.path().join("data"), None);
    let addr = server.grpc.to_string();
    let load = dir.path().join("load/f");
    std::fs::create_dir_all(&load).unwrap();
    std::fs::copy(
        fixtures().join("hfiles/FAST_DIFF-SNAPPY.hfile"),
        load.join("0123abcd"),
    )
    .unwrap();
    let client = shoal_client::Client::connect(addr.as_str()).await.unwrap();
    let family = shoal_client::proto::FamilySchema {
        name: "f".into(),
        max_versions: Some(10),
        ..Default::default()
    };
    client
        .admin()
        .create_table(
            "bl",
            vec![family],
            vec![b"com.example.www/users/000546".to_vec(), b"org".to_vec()],
        )
        .await
        .unwrap();
    let load_dir = dir.path().join("load");
    let (ok, out) = shoal(&[
        "bulkload",
        load_dir.to_str().unwrap(),
        "bl",
        "--addr",
        &addr,
    ]);
    assert!(ok, "{out}");
    // Every cell of the file, once, over the three regions.
    assert!(out.contains("into 3 regions of bl: 1421 cells"), "{out}");
    let before = shoal_cells(&addr, "bl").await;
    assert!(!before.is_empty());

    // A write after the load at a loaded cell's exact key wins over it.
    let (row, fam, qual, ts, _) = before.iter().next().unwrap().clone();
    let table = client.table("bl");
    table
        .mutate(shoal_client::RowMutation::new(&row).put_at(&fam, &qual, ts, "later"))
        .await
        .unwrap();
    let got = table
        .get(
            shoal_client::Get::new(&row)
                .column(&fam, &qual)
                .timestamp(ts),
        )
        .await
        .unwrap();
    assert_eq!(&got.cells[0].value[..], b"later");
    // The same directory again: loaded again (a new load), and the later
    // load wins over the write at that key, as in HBase.
    let (ok, out) = shoal(&[
        "bulkload",
        load_dir.to_str().unwrap(),
        "bl",
        "--addr",
        &addr,
    ]);
    assert!(ok, "{out}");
    let got = table
        .get(
            shoal_client::Get::new(&row)
                .column(&fam, &qual)
                .timestamp(ts),
        )
        .await
        .unwrap();
    assert_ne!(&got.cells[0].value[..], b"later");
    assert_eq!(shoal_cells(&addr, "bl").await, before);
}
