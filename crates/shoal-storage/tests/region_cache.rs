//! A region reading through the block cache: flush output is cached as it is
//! written (reads after a flush send no object-store request), compaction
//! output too, and compacted-away files leave the cache.

use bytes::Bytes;
use shoal_storage::cache::{BlockCache, CacheConfig, DiskCache, DiskCacheConfig};
use shoal_storage::object::Bucket;
use shoal_storage::region::{
    FamilyConfig, Get, Region, RegionConfig, RegionEnv, RowMutation, Scan,
};
use shoal_storage::sst::BucketFetcher;
use shoal_storage::wal::{Wal, WalOptions};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

fn gets(bucket: &Bucket) -> u64 {
    let m = bucket.metrics();
    m.get.requests + m.ranged_get.requests
}

#[tokio::test]
async fn flush_and_compaction_output_is_served_from_the_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bucket = Bucket::memory();
    let wal = Wal::open(WalOptions::local(dir.path())).await.expect("wal");
    let cache = BlockCache::new(
        CacheConfig::default(),
        Arc::new(BucketFetcher::new(bucket.clone())),
        None,
    );
    let env = RegionEnv::new(bucket.clone(), wal).with_cache(cache.clone());
    let mut family = FamilyConfig::new("cf");
    family.sst.block_size = 1024;
    let config = RegionConfig::new("r1", "data/00/t1/r1", vec![family]);
    let region = Region::open(config, env).await.expect("open");

    for round in 0..3 {
        for i in 0..200 {
            let row = format!("row{:04}", i * 3 + round);
            region
                .mutate(RowMutation::new(Bytes::from(row)).put("cf", "q", vec![b'v'; 50]))
                .await
                .expect("put");
        }
        region.flush().await.expect("flush");
    }
    // Opening each new file read its tail once; after that, nothing.
    let before = gets(&bucket);
    let mut scanner = region.scanner(Scan::all()).expect("scan");
    let mut rows = 0;
    while scanner.next().await.expect("scan").is_some() {
        rows += 1;
    }
    assert_eq!(rows, 600);
    assert_eq!(gets(&bucket), before, "flushed blocks were cached on write");

    region.compact(true).await.expect("major compaction");
    let after_compaction = gets(&bucket);
    let got = region
        .get(&Get::new(Bytes::from_static(b"row0301")))
        .await
        .expect("get");
    assert_eq!(got.cells.len(), 1);
    assert_eq!(
        gets(&bucket),
        after_compaction,
        "compaction output was cached on write"
    );
    // The three inputs' blocks and tails left the cache: only the output remains.
    let m = cache.metrics();
    assert_eq!(m.meta.entries, 1, "{m:?}");
}

async fn region_with_files(
    bucket: &Bucket,
    wal_dir: &std::path::Path,
    env_cache: Option<BlockCache>,
    rows: usize,
) -> Region {
    let wal = Wal::open(WalOptions::local(wal_dir)).await.expect("wal");
    let mut env = RegionEnv::new(bucket.clone(), wal);
    if let Some(c) = env_cache {
        env = env.with_cache(c);
    }
    env.prefetch_bytes_per_sec = 64 * 1024;
    let mut family = FamilyConfig::new("cf");
    family.sst.block_size = 4096;
    let config = RegionConfig::new("r1", "data/00/t1/r1", vec![family]);
    let region = Region::open(config, env).await.expect("open");
    for i in 0..rows {
        region
            .mutate(RowMutation::new(Bytes::from(format!("row{i:05}"))).put(
                "cf",
                "q",
                vec![b'v'; 200],
            ))
            .await
            .expect("put");
    }
    region
}

#[tokio::test]
async fn scans_can_bypass_the_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bucket = Bucket::memory();
    let region = region_with_files(&bucket, dir.path(), None, 2000).await;
    region.close().await.expect("close");
    drop(region);
    let cache = BlockCache::new(
        CacheConfig::default(),
        Arc::new(BucketFetcher::new(bucket.clone())),
        None,
    );
    let region = region_with_files(&bucket, dir.path(), Some(cache.clone()), 0).await;
    let mut s = region
        .scanner(Scan {
            cache_blocks: false,
            ..Scan::all()
        })
        .expect("scan");
    while s.next().await.expect("scan").is_some() {}
    assert_eq!(cache.metrics().data.entries, 0, "a no-cache scan filled L1");
    let mut s = region.scanner(Scan::all()).expect("scan");
    while s.next().await.expect("scan").is_some() {}
    assert!(cache.metrics().data.entries > 0);
}

#[tokio::test]
async fn prefetch_warms_l2_on_open_and_stops_on_close() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bucket = Bucket::memory();
    let region = region_with_files(&bucket, &dir.path().join("wal"), None, 3000).await;
    region.close().await.expect("close");
    drop(region);

    let l2 = DiskCache::open(DiskCacheConfig {
        segment_bytes: 1 << 20,
        ..DiskCacheConfig::new(dir.path().join("l2"), 64 << 20)
    })
    .expect("l2");
    let cache = BlockCache::new(
        CacheConfig::default(),
        Arc::new(BucketFetcher::new(bucket.clone())),
        Some(Arc::new(l2.clone())),
    );
    // 64 KiB/s: the ~700 KB file takes about 10 s, so the close below lands mid-way.
    let region = region_with_files(&bucket, &dir.path().join("wal"), Some(cache.clone()), 0).await;
    let progress = region.prefetch_progress().expect("prefetch started");
    let total = progress.total_bytes.load(Ordering::Relaxed);
    assert!(total > 0);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while progress.fetched_blocks.load(Ordering::Relaxed) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "prefetch made no progress"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    region.close().await.expect("close");
    let at_close = progress.done_bytes.load(Ordering::Relaxed);
    // Give a still-running prefetch the chance to continue; it must not.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let later = progress.done_bytes.load(Ordering::Relaxed);
    assert!(
        later <= at_close + 8192,
        "prefetch kept going after close: {at_close} -> {later}"
    );
    assert!(
        later < total,
        "prefetch finished before close; slow it down"
    );
    l2.flush();
    assert!(l2.metrics().entries >= 2);
}

/// A region whose files L2 holds, reopened with an empty L1 of
/// `l1_data_bytes`: the open's prefetch finds every block in L2.
async fn reopened_with_warm_l2(
    dir: &std::path::Path,
    l1_data_bytes: usize,
) -> (Region, BlockCache, DiskCache) {
    let bucket = Bucket::memory();
    let l2_config = DiskCacheConfig {
        segment_bytes: 1 << 20,
        ..DiskCacheConfig::new(dir.join("l2"), 64 << 20)
    };
    {
        let l2 = DiskCache::open(l2_config.clone()).expect("l2");
        let cache = BlockCache::new(
            CacheConfig::default(),
            Arc::new(BucketFetcher::new(bucket.clone())),
            Some(Arc::new(l2.clone())),
        );
        let region = region_with_files(&bucket, &dir.join("wal"), Some(cache.clone()), 3000).await;
        region.flush().await.expect("flush");
        region.close().await.expect("close");
        l2.close();
    }
    let l2 = DiskCache::open(l2_config).expect("l2");
    assert!(l2.wait_recovered(Duration::from_secs(10)));
    let cache = BlockCache::new(
        CacheConfig {
            l1_data_bytes,
            shards: 1,
            ..CacheConfig::default()
        },
        Arc::new(BucketFetcher::new(bucket.clone())),
        Some(Arc::new(l2.clone())),
    );
    let region = region_with_files(&bucket, &dir.join("wal"), Some(cache.clone()), 0).await;
    (region, cache, l2)
}

/// Waits until the open's prefetch, L1 fill included, has stopped moving.
async fn settled(progress: &shoal_storage::cache::PrefetchProgress) -> u64 {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut last = u64::MAX;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = progress.l1_blocks.load(Ordering::Relaxed);
        if now == last {
            return now;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the L1 fill never settled"
        );
        last = now;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reopened_region_fills_l1_from_l2_so_first_reads_hit_l1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (region, cache, l2) = reopened_with_warm_l2(dir.path(), 256 << 20).await;
    let progress = region.prefetch_progress().expect("prefetch started");
    let filled = settled(&progress).await;
    let m = cache.metrics();
    assert!(filled > 10, "{filled} blocks filled");
    assert_eq!(m.data.entries, filled, "{m:?}");
    assert_eq!(
        progress.fetched_blocks.load(Ordering::Relaxed),
        0,
        "L2 held all"
    );
    let l2_hits = l2.metrics().hits;
    for i in (0..3000).step_by(7) {
        let got = region
            .get(&Get::new(Bytes::from(format!("row{i:05}"))))
            .await
            .expect("get");
        assert_eq!(got.cells.len(), 1);
    }
    let after = cache.metrics();
    assert_eq!(after.data.misses, m.data.misses, "every first read hit L1");
    assert_eq!(l2.metrics().hits, l2_hits, "and none read L2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_l1_too_small_for_the_region_is_left_to_the_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Room for a handful of the ~180 4 KiB blocks: the fill does not pick.
    let (region, cache, _l2) = reopened_with_warm_l2(dir.path(), 40 << 10).await;
    let progress = region.prefetch_progress().expect("prefetch started");
    assert_eq!(settled(&progress).await, 0);
    let m = cache.metrics();
    assert_eq!(m.data.entries, 0, "{m:?}");
    // Reads still fill it, as always.
    let got = region
        .get(&Get::new(Bytes::from_static(b"row00042")))
        .await
        .expect("get");
    assert_eq!(got.cells.len(), 1);
    assert_eq!(cache.metrics().data.entries, 1);
}
