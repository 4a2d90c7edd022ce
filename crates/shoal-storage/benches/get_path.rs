//! The engine's share of a cached get: a region of YCSB-shaped rows (ten
//! 100-byte fields per row) flushed and major-compacted into one file whose
//! blocks all sit in the L1 cache, read by whole-row gets of random rows on a
//! single-threaded runtime. No network, no RPC: what is left is the seek
//! through the file's index and block, the merge, version resolution and the
//! row's cells, which is the engine's part of a server's CPU per get.
//!
//! Run with `cargo bench -p shoal-storage --bench get_path`; profile with
//! `perf record --call-graph dwarf` on the bench binary (the bench profile
//! keeps debug info).

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use shoal_storage::cache::{BlockCache, CacheConfig};
use shoal_storage::object::Bucket;
use shoal_storage::region::{FamilyConfig, Get, Region, RegionConfig, RegionEnv, RowMutation};
use shoal_storage::sst::BucketFetcher;
use shoal_storage::wal::{Wal, WalOptions};
use std::sync::Arc;
use std::time::Duration;

/// Rows in the region (`GET_PATH_ROWS`, default 20,000: 30 MB of blocks,
/// more than the CPU's caches, as a server's working set is).
fn rows() -> u64 {
    std::env::var("GET_PATH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}
const FIELDS: usize = 10;
const FIELD_LEN: usize = 100;

fn row(i: u64) -> Bytes {
    Bytes::from(format!(
        "user{:019}",
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 10_000_000_000_000_000_000
    ))
}

fn ycsb_row(i: u64) -> RowMutation {
    let mut m = RowMutation::new(row(i));
    for f in 0..FIELDS {
        m = m.put(
            "family",
            format!("field{f}"),
            vec![b'a' + (f as u8); FIELD_LEN],
        );
    }
    m
}

struct Setup {
    _dir: tempfile::TempDir,
    region: Region,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let wal = Wal::open(WalOptions::local(dir.path().join("wal")))
        .await
        .expect("wal");
    let bucket = Bucket::memory();
    let cache = BlockCache::new(
        CacheConfig::default(),
        Arc::new(BucketFetcher::new(bucket.clone())),
        None,
    );
    let env = RegionEnv::new(bucket, wal).with_cache(cache);
    let config = RegionConfig::new(
        "bench",
        "data/00/bench/r1",
        vec![FamilyConfig::new("family")],
    );
    let region = Region::open(config, env).await.expect("region");
    for i in 0..rows() {
        region.mutate(ycsb_row(i)).await.expect("put");
    }
    region.flush().await.expect("flush");
    region.compact(true).await.expect("major compaction");
    Setup { _dir: dir, region }
}

fn gets(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let s = rt.block_on(setup());
    let rows = rows();
    // Touch every row once so every block is in L1.
    for i in 0..rows {
        let got = rt.block_on(s.region.get(&Get::new(row(i)))).expect("get");
        assert_eq!(got.cells.len(), FIELDS);
    }
    let mut group = c.benchmark_group("get_path");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(5));
    let mut i = 0u64;
    group.bench_function("cached_row_10x100B", |b| {
        b.iter(|| {
            i = (i + 7919) % rows;
            let got = rt.block_on(s.region.get(&Get::new(row(i)))).expect("get");
            assert_eq!(got.cells.len(), FIELDS);
        })
    });
    group.finish();
}

criterion_group!(benches, gets);
criterion_main!(benches);
