//! Bulk ingest into a region: loaded cells are read back with their
//! timestamps and delete markers; writes after the load win, writes before
//! it lose; a load key makes a retry a no-op, also after a reopen; cells
//! outside the region are skipped; unsorted input or a failing source
//! commits nothing.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::Bytes;
use futures::stream;
use shoal_storage::cell::{Cell, CellType};
use shoal_storage::object::Bucket;
use shoal_storage::region::{
    FamilyConfig, Get, IngestBatch, IngestFile, Region, RegionConfig, RegionEnv, RegionError,
    RowMutation, Scan,
};
use shoal_storage::wal::{Wal, WalOptions};

fn config(start: &str, end: &str) -> RegionConfig {
    let mut cf = FamilyConfig::new("cf");
    cf.retention.max_versions = 3;
    let mut c = RegionConfig::new("r", "data/t/r", vec![cf]);
    c.start_row = Bytes::from(start.to_string());
    c.end_row = Bytes::from(end.to_string());
    c
}

fn file(cells: Vec<Cell>) -> IngestFile {
    let batches: Vec<IngestBatch> = cells.chunks(3).map(|c| Ok(c.to_vec())).collect();
    IngestFile {
        family: Bytes::from_static(b"cf"),
        cells: Box::pin(stream::iter(batches)),
    }
}

fn put(row: &str, q: &str, ts: i64, v: &str) -> Cell {
    Cell::put(row.to_string(), "cf", q.to_string(), ts, 0, v.to_string())
}

async fn values(region: &Region, row: &str) -> Vec<(String, i64, String)> {
    let mut get = Get::new(row.to_string());
    get.max_versions = 10;
    let r = region.get(&get).await.unwrap();
    r.cells
        .iter()
        .map(|c| {
            (
                String::from_utf8(c.qualifier.to_vec()).unwrap(),
                c.timestamp,
                String::from_utf8(c.value.to_vec()).unwrap(),
            )
        })
        .collect()
}

async fn open(bucket: &Bucket, dir: &std::path::Path, start: &str, end: &str) -> Region {
    let wal = Wal::open(WalOptions::local(dir)).await.unwrap();
    Region::open(config(start, end), RegionEnv::new(bucket.clone(), wal))
        .await
        .unwrap()
}

#[tokio::test]
async fn loaded_cells_read_back_and_later_writes_win() {
    let dir = tempfile::tempdir().unwrap();
    let bucket = Bucket::memory();
    let region = open(&bucket, dir.path(), "", "").await;
    // Written before the load at the same timestamp: the load wins.
    region
        .mutate(RowMutation::new("a").put_at("cf", "q", 100, "before"))
        .await
        .unwrap();
    let cells = vec![
        put("a", "q", 100, "loaded"),
        put("a", "q", 50, "old"),
        Cell::delete("b", "cf", "", 70, CellType::DeleteFamily, 0),
        put("b", "q", 80, "kept"),
        put("b", "q", 60, "masked"),
        put("c", "q", 100, "c1"),
        put("c", "q", 100, "c1-dup"), // same key again: kept once (the first)
    ];
    let report = region
        .ingest(Some("load-1".into()), vec![file(cells)])
        .await
        .unwrap();
    assert_eq!((report.files, report.cells, report.duplicates), (1, 6, 1));
    assert_eq!(
        values(&region, "a").await,
        vec![
            ("q".into(), 100, "loaded".into()),
            ("q".into(), 50, "old".into())
        ]
    );
    assert_eq!(
        values(&region, "b").await,
        vec![("q".into(), 80, "kept".into())]
    );
    assert_eq!(
        values(&region, "c").await,
        vec![("q".into(), 100, "c1".into())]
    );
    // Written after the load at the same timestamp: the write wins.
    region
        .mutate(RowMutation::new("c").put_at("cf", "q", 100, "after"))
        .await
        .unwrap();
    assert_eq!(
        values(&region, "c").await,
        vec![("q".into(), 100, "after".into())]
    );

    // The same key again: nothing happens, also after a reopen.
    let again = region
        .ingest(
            Some("load-1".into()),
            vec![file(vec![put("z", "q", 1, "no")])],
        )
        .await
        .unwrap();
    assert!(again.already_loaded);
    region.close().await.unwrap();
    let region = open(&bucket, dir.path(), "", "").await;
    let again = region
        .ingest(
            Some("load-1".into()),
            vec![file(vec![put("z", "q", 1, "no")])],
        )
        .await
        .unwrap();
    assert!(again.already_loaded);
    assert!(values(&region, "z").await.is_empty());
    assert_eq!(
        values(&region, "c").await,
        vec![("q".into(), 100, "after".into())]
    );
    // A write after the reopen still sorts above the loaded cells.
    region
        .mutate(RowMutation::new("a").put_at("cf", "q", 100, "reopened"))
        .await
        .unwrap();
    assert_eq!(values(&region, "a").await[0].2, "reopened");
}

#[tokio::test]
async fn cells_outside_the_region_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let region = open(&Bucket::memory(), dir.path(), "b", "d").await;
    let cells = vec![
        put("a", "q", 1, "x"),
        put("b", "q", 1, "in"),
        put("c", "q", 1, "in"),
        put("d", "q", 1, "x"),
    ];
    let report = region.ingest(None, vec![file(cells)]).await.unwrap();
    assert_eq!((report.cells, report.outside), (2, 2));
    let mut s = region.scanner(Scan::all()).unwrap();
    let mut rows = Vec::new();
    while let Some(r) = s.next().await.unwrap() {
        rows.push(r.row.clone());
    }
    assert_eq!(rows, vec![Bytes::from("b"), Bytes::from("c")]);
}

#[tokio::test]
async fn bad_input_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let region = open(&Bucket::memory(), dir.path(), "", "").await;
    let unsorted = vec![put("b", "q", 1, "x"), put("a", "q", 1, "x")];
    let err = region
        .ingest(
            Some("k".into()),
            vec![file(vec![put("m", "q", 1, "x")]), file(unsorted)],
        )
        .await
        .unwrap_err();
    assert!(matches!(err, RegionError::IngestSource { .. }), "{err}");
    assert!(err.to_string().contains("out of order"), "{err}");
    let failing = IngestFile {
        family: Bytes::from_static(b"cf"),
        cells: Box::pin(stream::iter(vec![
            Ok(vec![put("n", "q", 1, "x")]),
            Err("checksum mismatch at offset 77".to_string()),
        ])),
    };
    let err = region
        .ingest(Some("k".into()), vec![failing])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("offset 77"), "{err}");
    assert!(values(&region, "m").await.is_empty());
    assert!(values(&region, "n").await.is_empty());
    // The key was not recorded: the load can be retried.
    let ok = region
        .ingest(Some("k".into()), vec![file(vec![put("m", "q", 1, "x")])])
        .await
        .unwrap();
    assert!(!ok.already_loaded);
    assert_eq!(values(&region, "m").await.len(), 1);
    let unknown = IngestFile {
        family: Bytes::from_static(b"nope"),
        cells: Box::pin(stream::iter(Vec::<IngestBatch>::new())),
    };
    let err = region.ingest(None, vec![unknown]).await.unwrap_err();
    assert!(matches!(err, RegionError::NoSuchFamily { .. }), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_collection_during_a_long_load_keeps_its_files() {
    use shoal_storage::manifest::GcOptions;
    use std::time::{Duration, SystemTime};
    let dir = tempfile::tempdir().unwrap();
    let region = open(&Bucket::memory(), dir.path(), "", "").await;
    // The second input is read only once the first input's file is
    // finished (written, not committed); it says so, then waits until GC
    // has run: by then that file is (to a GC two hours on) old.
    let (first_written, written) = tokio::sync::oneshot::channel::<()>();
    let (go, wait) = tokio::sync::oneshot::channel::<()>();
    let slow = IngestFile {
        family: Bytes::from_static(b"cf"),
        cells: Box::pin(stream::once(async move {
            let _ = first_written.send(());
            let _ = wait.await;
            Ok(vec![put("b", "q", 1, "second")])
        })),
    };
    let loading = {
        let region = region.clone();
        tokio::spawn(async move {
            region
                .ingest(None, vec![file(vec![put("a", "q", 1, "first")]), slow])
                .await
        })
    };
    written.await.unwrap();
    let later = GcOptions {
        grace: Duration::ZERO,
        now: SystemTime::now() + Duration::from_secs(7200),
    };
    region.collect_garbage(&later).await.unwrap();
    go.send(()).unwrap();
    let report = loading.await.unwrap().unwrap();
    assert_eq!(report.files, 2);
    assert_eq!(
        values(&region, "a").await,
        vec![("q".into(), 1, "first".into())]
    );
    assert_eq!(
        values(&region, "b").await,
        vec![("q".into(), 1, "second".into())]
    );
}
