//! Failover between servers that share a bucket and keep their WALs in it:
//! server A dies with acknowledged writes in its WAL (some flushed, some not);
//! server B reads A's WAL, reopens the region with A's entries (fencing A),
//! logs them again in its own WAL and serves them; then A's WAL is deleted,
//! B dies too, and server C recovers everything from B's WAL alone.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use shoal_storage::manifest::ManifestError;
use shoal_storage::object::Bucket;
use shoal_storage::region::{
    FamilyConfig, Get, Region, RegionConfig, RegionEnv, RegionError, RowMutation,
};
use shoal_storage::wal::{ForeignWal, Wal, WalOptions};

fn config() -> RegionConfig {
    RegionConfig::new("r1", "data/5e/t1/r1", vec![FamilyConfig::new("cf")])
}

/// A server's view: its own WAL under `prefix` in the shared bucket.
async fn server(bucket: &Bucket, prefix: &str) -> RegionEnv {
    let wal = Wal::open(WalOptions::object(bucket.clone(), prefix))
        .await
        .unwrap();
    RegionEnv::new(bucket.clone(), wal)
}

async fn put(region: &Region, i: u32) {
    region
        .mutate(RowMutation::new(format!("row{i:04}")).put("cf", "q", format!("v{i}")))
        .await
        .unwrap();
}

async fn assert_rows(region: &Region, rows: impl Iterator<Item = u32>) {
    for i in rows {
        let got = region.get(&Get::new(format!("row{i:04}"))).await.unwrap();
        assert_eq!(
            got.value(b"cf", b"q").map(|v| v.to_vec()),
            Some(format!("v{i}").into_bytes()),
            "row{i:04} lost"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_servers_wal_is_replayed_logged_again_and_deleted() {
    let bucket = Bucket::memory();

    // A: 100 acknowledged writes, the first 60 flushed.
    let env_a = server(&bucket, "wal/a/run1").await;
    let a = Region::open(config(), env_a).await.unwrap();
    for i in 0..60 {
        put(&a, i).await;
    }
    a.flush().await.unwrap();
    for i in 60..100 {
        put(&a, i).await;
    }
    // A dies (its handle stays around, as a paused process would).

    // B takes over with what A's WAL holds past the flushed point.
    let dead = ForeignWal::read(&bucket, "wal/a/run1").await.unwrap();
    assert_eq!(dead.regions(), ["r1"]);
    assert!(dead.entries("r1", 0).len() >= 40);
    let env_b = server(&bucket, "wal/b/run1").await;
    let b = Region::open_with_recovered(config(), env_b, dead.entries("r1", 0))
        .await
        .unwrap();
    assert_rows(&b, 0..100).await;
    for i in 100..120 {
        put(&b, i).await;
    }

    // The former owner is fenced: its next commit fails and stays failed.
    put(&a, 500).await; // its own WAL still takes it (the host must not ack it)
    match a.flush().await {
        Err(RegionError::Manifest {
            source: ManifestError::Fenced { .. },
            ..
        })
        | Err(RegionError::Fenced { .. }) => {}
        other => panic!("the former owner committed: {other:?}"),
    }

    // Every region of A's WAL has been reopened: A's WAL goes.
    let deleted = ForeignWal::delete(&bucket, "wal/a/run1").await.unwrap();
    assert!(deleted > 0);
    assert_eq!(
        ForeignWal::read(&bucket, "wal/a/run1")
            .await
            .unwrap()
            .segment_count(),
        0
    );

    // B dies; C recovers everything from B's WAL alone (A's entries were
    // logged again there).
    let from_b = ForeignWal::read(&bucket, "wal/b/run1").await.unwrap();
    let env_c = server(&bucket, "wal/c/run1").await;
    let c = Region::open_with_recovered(config(), env_c, from_b.entries("r1", 0))
        .await
        .unwrap();
    assert_rows(&c, 0..120).await;
    let ghost = c.get(&Get::new("row0500")).await.unwrap();
    assert!(ghost.cells.is_empty(), "a fenced owner's write appeared");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_in_both_wals_are_replayed_once_and_flushed_ones_not_at_all() {
    let bucket = Bucket::memory();
    let env_a = server(&bucket, "wal/a/run1").await;
    let a = Region::open(config(), env_a).await.unwrap();
    for i in 0..10 {
        put(&a, i).await;
    }
    a.flush().await.unwrap();
    for i in 10..20 {
        put(&a, i).await;
    }
    let dead = ForeignWal::read(&bucket, "wal/a/run1").await.unwrap();
    // Handing in every entry, flushed ones included: only those past the
    // flushed point are replayed and logged again.
    let env_b = server(&bucket, "wal/b/run1").await;
    let b = Region::open_with_recovered(config(), env_b, dead.entries("r1", 0))
        .await
        .unwrap();
    assert_rows(&b, 0..20).await;
    let relogged = ForeignWal::read(&bucket, "wal/b/run1").await.unwrap();
    let seqs: Vec<u64> = relogged.entries("r1", 0).iter().map(|e| e.seq).collect();
    assert_eq!(seqs.len(), 10, "{seqs:?}");
    let mut unique = seqs.clone();
    unique.dedup();
    assert_eq!(unique, seqs);
}
