//! Capturing a region for a snapshot and seeding a new region from the
//! capture: the seeded region reads exactly what the original held at the
//! cut (files shared in place, memstore cells at or below the cut written
//! out), writes after the cut are absent, the seed's own writes go to its
//! own directory, and neither region's GC deletes the other's files.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::Bytes;
use shoal_storage::manifest::GcOptions;
use shoal_storage::object::Bucket;
use shoal_storage::region::{
    FamilyConfig, Region, RegionConfig, RegionEnv, RegionSeed, RowMutation, Scan, seed_region,
};
use shoal_storage::wal::{Wal, WalOptions};

async fn cells(region: &Region) -> Vec<(String, String, i64)> {
    let mut scan = Scan::all();
    scan.max_versions = 10;
    let mut s = region.scanner(scan).unwrap();
    let mut out = Vec::new();
    while let Some(r) = s.next().await.unwrap() {
        for c in r.cells {
            out.push((
                String::from_utf8(c.row.to_vec()).unwrap(),
                String::from_utf8(c.value.to_vec()).unwrap(),
                c.timestamp,
            ));
        }
    }
    out
}

#[tokio::test]
async fn a_seed_of_a_capture_reads_the_cut_and_nothing_after() {
    let dir = tempfile::tempdir().unwrap();
    let bucket = Bucket::memory();
    let wal = Wal::open(WalOptions::local(dir.path())).await.unwrap();
    let env = RegionEnv::new(bucket.clone(), wal.clone());
    let mut family = FamilyConfig::new("cf");
    family.retention.max_versions = 10;
    let config = RegionConfig::new("src", "data/00/t1/src", vec![family.clone()]);
    let src = Region::open(config, env.clone()).await.unwrap();
    let put = |row: &str, v: &str, ts: i64| {
        RowMutation::new(row.to_string()).put_at("cf", "q", ts, v.to_string())
    };
    for i in 0..50 {
        src.mutate(put(&format!("k{i:02}"), "flushed", 1))
            .await
            .unwrap();
    }
    src.flush().await.unwrap();
    for i in 0..50 {
        src.mutate(put(&format!("k{i:02}"), "in-memory", 2))
            .await
            .unwrap();
    }
    let at_cut = cells(&src).await;
    let capture = {
        let pause = src.pause_writes().await.unwrap();
        pause.capture()
    };
    // Writes after the cut, some of them flushed: none is in the capture.
    for i in 0..50 {
        src.mutate(put(&format!("k{i:02}"), "after", 3))
            .await
            .unwrap();
    }
    src.mutate(put("z-new", "after", 3)).await.unwrap();
    assert!(capture.memstore_cells() >= 50);
    let dumped = src
        .write_captured_memstore(&capture, "snapshots/s1/files/src")
        .await
        .unwrap();
    assert_eq!(dumped.len(), 1);
    src.flush().await.unwrap();
    src.compact(true).await.unwrap();

    let mut stores = capture.stores.clone();
    for (family, file) in dumped {
        stores.entry(family).or_default().push(file);
    }
    let seed = RegionSeed {
        region_dir: "data/01/t2/clone".into(),
        start_row: Bytes::new(),
        end_row: Bytes::new(),
        stores,
        seq: capture.read_point,
    };
    assert!(seed_region(&bucket, &seed).await.unwrap());
    // Seeding again (a resumed clone) leaves the manifest alone.
    assert!(!seed_region(&bucket, &seed).await.unwrap());
    let clone = Region::open(
        RegionConfig::new("clone", "data/01/t2/clone", vec![family]),
        env.clone(),
    )
    .await
    .unwrap();
    assert_eq!(cells(&clone).await, at_cut);
    assert!(
        !clone.has_references(),
        "shared files are not split references"
    );

    // The clone's own writes land in its own directory; the source's GC
    // deletes the files it no longer needs, except those the clone reads
    // (kept here by the capture's pins, as a snapshot's holds keep them).
    clone.mutate(put("k00", "clone", 4)).await.unwrap();
    clone.flush().await.unwrap();
    let gc = GcOptions {
        grace: std::time::Duration::ZERO,
        ..GcOptions::default()
    };
    src.collect_garbage(&gc).await.unwrap();
    clone.collect_garbage(&gc).await.unwrap();
    let after = cells(&clone).await;
    assert_eq!(after[0], ("k00".into(), "clone".into(), 4));
    assert_eq!(&after[1..], &at_cut[..]);
    let own = bucket.list("data/01/t2/clone/cf/").await.unwrap();
    assert_eq!(own.len(), 1, "the clone's flush, under its own directory");
    drop(capture);
}
