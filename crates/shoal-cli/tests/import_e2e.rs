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

#[path = "support/hbase_fixtures.rs"]
mod fixtures;
mod support;

use fixtures::{expected_visible, fixtures, now_ms, region_starts, shoal_cells};
use futures::TryStreamExt;
use std::path::Path;
use std::process::Command;
use support::{ServerProcess, shoal_bin};

fn shoal(args: &[&str]) -> (bool, String) {
    let out = Command::new(shoal_bin()).args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
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

    // Not an HFile (or cut short): found before anything is created.
    std::fs::write(&hfile, &original[..original.len() / 2]).unwrap();
    let (ok, out) = shoal(&[
        "import",
        "hbase-snapshot",
        &root_s,
        "imp_snap",
        "--addr",
        &addr,
    ]);
    assert!(!ok, "{out}");
    assert!(out.contains(name), "{out}");
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
