//! Splitting a region: children read the parent's files only within their
//! own key bounds, compact them away into files of their own, and the
//! parent's files are released; closing a region under concurrent writes
//! loses no acknowledged write; a region closed for a handoff reads on
//! (and takes nothing else) until its reads end.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::Bytes;
use shoal_storage::object::Bucket;
use shoal_storage::region::{
    FamilyConfig, Get, Region, RegionConfig, RegionEnv, RegionError, RowMutation, Scan, SplitChild,
    parent_released, write_child_manifests,
};
use shoal_storage::wal::{Wal, WalOptions};

fn config(id: &str, start: &str, end: &str) -> RegionConfig {
    let mut c = RegionConfig::new(id, format!("data/t/{id}"), vec![FamilyConfig::new("cf")]);
    c.start_row = Bytes::from(start.to_string());
    c.end_row = Bytes::from(end.to_string());
    c
}

async fn rows(region: &Region, reverse: bool) -> Vec<String> {
    let mut scan = Scan::all();
    scan.reverse = reverse;
    let mut s = region.scanner(scan).unwrap();
    let mut out = Vec::new();
    while let Some(r) = s.next().await.unwrap() {
        out.push(String::from_utf8(r.row.to_vec()).unwrap());
    }
    out
}

#[tokio::test]
async fn children_see_only_their_range_and_compact_references_away() {
    let dir = tempfile::tempdir().unwrap();
    let bucket = Bucket::memory();
    let wal = Wal::open(WalOptions::local(dir.path())).await.unwrap();
    let env = RegionEnv::new(bucket.clone(), wal.clone());
    let parent = Region::open(config("p", "", ""), env.clone())
        .await
        .unwrap();
    let keys: Vec<String> = (0..200).map(|i| format!("k{i:03}")).collect();
    for k in &keys {
        parent
            .mutate(RowMutation::new(k.clone()).put("cf", "q", k.clone()))
            .await
            .unwrap();
    }
    parent.flush().await.unwrap();
    // Some rows stay in the memstore: close must flush them.
    for k in &keys[..10] {
        parent
            .mutate(RowMutation::new(k.clone()).put("cf", "q2", "late"))
            .await
            .unwrap();
    }
    let split_row = parent.split_point().await.unwrap().expect("a split point");
    assert!(split_row[..] > b"k000"[..] && split_row[..] <= b"k199"[..]);
    parent.close().await.unwrap();
    let manifest = parent.current_manifest().await;
    let split = String::from_utf8(split_row.to_vec()).unwrap();
    let children = [
        SplitChild {
            region_id: "a".into(),
            region_dir: "data/t/a".into(),
            start_row: Bytes::new(),
            end_row: split_row.clone(),
        },
        SplitChild {
            region_id: "b".into(),
            region_dir: "data/t/b".into(),
            start_row: split_row.clone(),
            end_row: Bytes::new(),
        },
    ];
    write_child_manifests(&bucket, &manifest, &children)
        .await
        .unwrap();
    // Idempotent: a retried split leaves the manifests alone.
    write_child_manifests(&bucket, &manifest, &children)
        .await
        .unwrap();
    let a = Region::open(config("a", "", &split), env.clone())
        .await
        .unwrap();
    let b = Region::open(config("b", &split, ""), env.clone())
        .await
        .unwrap();
    let (left, right): (Vec<String>, Vec<String>) = keys
        .iter()
        .cloned()
        .partition(|k| k.as_str() < split.as_str());
    assert_eq!(rows(&a, false).await, left);
    assert_eq!(rows(&b, false).await, right);
    let mut rev = right.clone();
    rev.reverse();
    assert_eq!(rows(&b, true).await, rev);
    assert!(a.has_references() && b.has_references());
    assert!(
        !parent_released(&bucket, "data/t/p", &["data/t/a".into(), "data/t/b".into()])
            .await
            .unwrap()
    );
    // A row of the sibling is out of range, for reads and writes.
    let sibling_row = right[0].clone();
    assert!(matches!(
        a.get(&Get::new(sibling_row.clone())).await,
        Err(RegionError::RowOutOfRange { .. })
    ));
    assert!(matches!(
        a.mutate(RowMutation::new(sibling_row).put("cf", "q", "x"))
            .await,
        Err(RegionError::RowOutOfRange { .. })
    ));
    let late = a.get(&Get::new("k003")).await.unwrap();
    assert_eq!(late.value(b"cf", b"q2").map(|v| &v[..]), Some(&b"late"[..]));

    a.compact(true).await.unwrap();
    b.compact(true).await.unwrap();
    assert!(!a.has_references() && !b.has_references());
    assert_eq!(rows(&a, false).await, left);
    assert_eq!(rows(&b, false).await, right);
    assert!(
        parent_released(&bucket, "data/t/p", &["data/t/a".into(), "data/t/b".into()])
            .await
            .unwrap()
    );
    // The children's own files hold only their own rows.
    a.close().await.unwrap();
    let a = Region::open(config("a", "", &split), env.clone())
        .await
        .unwrap();
    let dump = a.dump().await.unwrap();
    assert!(dump.iter().all(|c| c.row < split_row));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_under_concurrent_writes_keeps_every_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let bucket = Bucket::memory();
    let wal = Wal::open(WalOptions::local(dir.path())).await.unwrap();
    let env = RegionEnv::new(bucket.clone(), wal);
    let region = Region::open(config("r", "", ""), env).await.unwrap();
    let mut writers = Vec::new();
    for w in 0..4 {
        let r = region.clone();
        writers.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0..10_000 {
                let row = format!("w{w}-{i:05}");
                match r
                    .mutate(RowMutation::new(row.clone()).put("cf", "q", "v"))
                    .await
                {
                    Ok(()) => acked.push(row),
                    Err(RegionError::Closed { .. }) => break,
                    Err(e) => panic!("{e}"),
                }
            }
            acked
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    region.close().await.unwrap();
    let mut acked = Vec::new();
    for w in writers {
        acked.extend(w.await.unwrap());
    }
    assert!(!acked.is_empty());
    // The closed region's files alone (no WAL replay: a new WAL directory)
    // hold every acknowledged write.
    let dir2 = tempfile::tempdir().unwrap();
    let wal2 = Wal::open(WalOptions::local(dir2.path())).await.unwrap();
    let reopened = Region::open(config("r", "", ""), RegionEnv::new(bucket, wal2))
        .await
        .unwrap();
    let present: std::collections::HashSet<String> =
        rows(&reopened, false).await.into_iter().collect();
    for row in &acked {
        assert!(present.contains(row), "acknowledged {row} is missing");
    }
}

#[tokio::test]
async fn a_region_closed_for_a_handoff_reads_its_flushed_copy_until_its_reads_end() {
    let dir = tempfile::tempdir().unwrap();
    let bucket = Bucket::memory();
    let wal = Wal::open(WalOptions::local(dir.path())).await.unwrap();
    let env = RegionEnv::new(bucket.clone(), wal);
    let region = Region::open(config("r", "", ""), env).await.unwrap();
    for k in ["a", "b", "c"] {
        region
            .mutate(RowMutation::new(k).put("cf", "q", k))
            .await
            .unwrap();
    }
    region.close_keeping_reads().await.unwrap();
    assert!(region.reads_only());
    // Reads go on: gets and scans see every acknowledged write.
    let got = region.get(&Get::new("b")).await.unwrap();
    assert_eq!(got.cells.len(), 1);
    assert_eq!(&got.cells[0].value[..], b"b");
    assert_eq!(rows(&region, false).await, vec!["a", "b", "c"]);
    // Nothing else is taken: no write, flush, compaction or second close.
    let refused = region
        .mutate(RowMutation::new("d").put("cf", "q", "d"))
        .await;
    assert!(
        matches!(refused, Err(RegionError::Closed { .. })),
        "{refused:?}"
    );
    assert!(matches!(
        region.flush().await,
        Err(RegionError::Closed { .. })
    ));
    assert!(matches!(
        region.compact(true).await,
        Err(RegionError::Closed { .. })
    ));
    assert!(matches!(
        region.close().await,
        Err(RegionError::Closed { .. })
    ));
    // The flushed copy holds everything (a new WAL: nothing to replay).
    let dir2 = tempfile::tempdir().unwrap();
    let wal2 = Wal::open(WalOptions::local(dir2.path())).await.unwrap();
    let next = Region::open(config("r", "", ""), RegionEnv::new(bucket, wal2))
        .await
        .unwrap();
    assert_eq!(rows(&next, false).await, vec!["a", "b", "c"]);
    // A scan begun before the reads end stops with `Closed` after it.
    let mut scan = region.scanner(Scan::all()).unwrap();
    region.end_reads();
    assert!(!region.reads_only());
    assert!(matches!(scan.next().await, Err(RegionError::Closed { .. })));
    assert!(matches!(
        region.get(&Get::new("b")).await,
        Err(RegionError::Closed { .. })
    ));
}

#[tokio::test]
async fn a_deleted_family_leaves_the_manifest_and_its_files_are_collected() {
    let dir = tempfile::tempdir().unwrap();
    let bucket = Bucket::memory();
    let wal = Wal::open(WalOptions::local(dir.path())).await.unwrap();
    let env = RegionEnv::new(bucket.clone(), wal);
    let mut two = config("r", "", "");
    two.families.push(FamilyConfig::new("old"));
    let region = Region::open(two, env.clone()).await.unwrap();
    region
        .mutate(
            RowMutation::new("a")
                .put("cf", "q", "1")
                .put("old", "q", "2"),
        )
        .await
        .unwrap();
    region.close().await.unwrap();
    // A closed region's file pins go with it.
    drop(region);
    assert_eq!(bucket.list("data/t/r/old/").await.unwrap().len(), 1);
    // Reopened without the family (an alter deleted it).
    let region = Region::open(config("r", "", ""), env.clone())
        .await
        .unwrap();
    let m = region.current_manifest().await;
    assert!(!m.stores.contains_key("old"), "{:?}", m.stores.keys());
    assert_eq!(m.stores["cf"].len(), 1);
    let options = shoal_storage::manifest::GcOptions {
        grace: std::time::Duration::ZERO,
        now: std::time::SystemTime::now() + std::time::Duration::from_secs(1),
    };
    let report = region.collect_garbage(&options).await.unwrap();
    assert!(report.ssts_deleted >= 1, "{report:?}");
    assert!(bucket.list("data/t/r/old/").await.unwrap().is_empty());
    assert_eq!(bucket.list("data/t/r/cf/").await.unwrap().len(), 1);
    let row = region.get(&Get::new("a")).await.unwrap();
    assert_eq!(row.value(b"cf", b"q").map(|v| &v[..]), Some(&b"1"[..]));
}
