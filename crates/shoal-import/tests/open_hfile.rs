//! An HBase-written HFile as bulk-load cells: every cell, in order, read in
//! place from a local directory or through ranged reads from any other store; a row
//! range clips it; a file of another family is refused.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::Bytes;
use futures::StreamExt;
use shoal_import::{RowRange, open_hfile};
use shoal_storage::cell::Cell;
use shoal_storage::object::{Bucket, ObjectStoreConfig};
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shoal-hfile/tests/fixtures")
}

async fn cells(bucket: &Bucket, range: RowRange) -> (Vec<Cell>, u64) {
    let opened = open_hfile(
        bucket,
        "hfiles/FAST_DIFF-SNAPPY.hfile",
        Bytes::from_static(b"f"),
        range,
    )
    .await
    .unwrap();
    let (mut file, stats) = (opened.file, opened.stats);
    let mut out = Vec::new();
    while let Some(batch) = file.cells.next().await {
        out.extend(batch.unwrap());
    }
    let fetched = stats
        .bytes_fetched
        .load(std::sync::atomic::Ordering::Relaxed);
    (out, fetched)
}

#[tokio::test]
async fn every_cell_in_place_or_fetched_and_clipped_by_range() {
    let url = format!("file://{}", fixtures().canonicalize().unwrap().display());
    let local = Bucket::open(&ObjectStoreConfig::from_url(&url).unwrap())
        .await
        .unwrap();
    let (all, fetched) = cells(&local, RowRange::default()).await;
    assert_eq!(all.len(), 1421, "the fixture's cell count (README)");
    assert_eq!(fetched, 0, "a local file is read where it is");
    assert!(
        all.windows(2).all(|w| w[0].key() <= w[1].key()),
        "in cell order"
    );

    let memory = Bucket::memory();
    let data = std::fs::read(fixtures().join("hfiles/FAST_DIFF-SNAPPY.hfile")).unwrap();
    let size = data.len() as u64;
    memory
        .put("hfiles/FAST_DIFF-SNAPPY.hfile", Bytes::from(data))
        .await
        .unwrap();
    let (same, fetched) = cells(&memory, RowRange::default()).await;
    assert_eq!(same, all);
    // The trailer and index windows, then the data from its start.
    assert!(
        fetched >= size && fetched <= 2 * size,
        "{fetched} of {size}"
    );

    let range = RowRange {
        start: Bytes::from_static(b"com.example.www/users/000546"),
        end: Bytes::from_static(b"org"),
    };
    let (clipped, _) = cells(&local, range.clone()).await;
    let want: Vec<&Cell> = all.iter().filter(|c| range.contains(&c.row)).collect();
    assert!(!want.is_empty() && want.len() < all.len());
    assert_eq!(clipped.iter().collect::<Vec<_>>(), want);
}

#[tokio::test]
async fn a_file_of_another_family_is_refused() {
    let url = format!("file://{}", fixtures().canonicalize().unwrap().display());
    let local = Bucket::open(&ObjectStoreConfig::from_url(&url).unwrap())
        .await
        .unwrap();
    let err = open_hfile(
        &local,
        "hfiles/NONE-NONE.hfile",
        Bytes::from_static(b"other"),
        RowRange::default(),
    )
    .await
    .err()
    .unwrap();
    assert!(err.to_string().contains("holds family \"f\""), "{err}");
}
