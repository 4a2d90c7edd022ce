//! A region reading through the block cache: flush output is cached as it is
//! written (reads after a flush send no object-store request), compaction
//! output too, and compacted-away files leave the cache.

use bytes::Bytes;
use shoal_storage::cache::{BlockCache, CacheConfig};
use shoal_storage::object::Bucket;
use shoal_storage::region::{
    FamilyConfig, Get, Region, RegionConfig, RegionEnv, RowMutation, Scan,
};
use shoal_storage::sst::BucketFetcher;
use shoal_storage::wal::{Wal, WalOptions};
use std::sync::Arc;

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
