//! Region engine benchmarks: put throughput through the local WAL (one writer,
//! and many concurrent writers sharing group commits), get latency from the
//! memstore and from SSTs in an in-memory bucket (no block cache yet: every SST
//! get fetches and decodes a block), flush throughput, and compaction
//! throughput (a major compaction rewriting a 24 MB store of three files in a local
//! directory).
//!
//! Run with `cargo bench -p shoal-storage --bench region`. The WAL fsyncs to the
//! machine's disk under the system temp dir, so put numbers are bounded by its
//! fsync latency; that is the point.

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shoal_storage::object::{Bucket, ObjectStoreConfig};
use shoal_storage::region::{FamilyConfig, Get, Region, RegionConfig, RegionEnv, RowMutation};
use shoal_storage::wal::{Wal, WalOptions};
use std::time::{Duration, Instant};

const VALUE_LEN: usize = 1000;

struct Setup {
    _dir: tempfile::TempDir,
    region: Region,
    wal: Wal,
}

async fn setup(flush_size: usize) -> Setup {
    setup_on(flush_size, false).await
}

/// A region on an in-memory bucket, or on a local directory (the embedded
/// default, whose uploads write to a file rather than build one buffer).
async fn setup_on(flush_size: usize, local: bool) -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let wal = Wal::open(WalOptions::local(dir.path().join("wal")))
        .await
        .expect("wal");
    let bucket = if local {
        Bucket::open(&ObjectStoreConfig::local(dir.path().join("store")))
            .await
            .expect("bucket")
    } else {
        Bucket::memory()
    };
    let env = RegionEnv::new(bucket, wal.clone());
    let mut config = RegionConfig::new("bench", "data/00/bench/r1", vec![FamilyConfig::new("cf")]);
    config.flush_size = flush_size;
    let region = Region::open(config, env).await.expect("region");
    Setup {
        _dir: dir,
        region,
        wal,
    }
}

fn row(i: u64) -> Bytes {
    Bytes::from(format!(
        "user{:019}",
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 10_000_000_000_000_000_000
    ))
}

fn put(i: u64) -> RowMutation {
    RowMutation::new(row(i)).put("cf", "field0", vec![b'x'; VALUE_LEN])
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn puts(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("region_put");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(1));
    group.bench_function("single_writer_1KB", |b| {
        let s = rt.block_on(setup(usize::MAX));
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            rt.block_on(s.region.mutate(put(i))).expect("put");
        });
        rt.block_on(s.wal.close()).expect("close");
    });
    for writers in [16u64, 64] {
        group.bench_function(format!("{writers}_writers_1KB"), |b| {
            let s = rt.block_on(setup(usize::MAX));
            b.iter_custom(|iters| {
                let per = iters.div_ceil(writers);
                let start = Instant::now();
                rt.block_on(async {
                    let tasks: Vec<_> = (0..writers)
                        .map(|w| {
                            let r = s.region.clone();
                            tokio::spawn(async move {
                                for k in 0..per {
                                    r.mutate(put(w * 1_000_000_000 + k)).await.expect("put");
                                }
                            })
                        })
                        .collect();
                    for t in tasks {
                        t.await.expect("task");
                    }
                });
                // Report time per put: total time scaled to `iters` puts.
                start
                    .elapsed()
                    .mul_f64(iters as f64 / (per * writers) as f64)
            });
            rt.block_on(s.wal.close()).expect("close");
        });
    }
    group.finish();
}

fn gets_and_flush(c: &mut Criterion) {
    let rt = runtime();
    const ROWS: u64 = 20_000;
    let s = rt.block_on(async {
        let s = setup(usize::MAX).await;
        let tasks: Vec<_> = (0..16u64)
            .map(|w| {
                let r = s.region.clone();
                tokio::spawn(async move {
                    for k in (w..ROWS).step_by(16) {
                        r.mutate(put(k)).await.expect("put");
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.expect("task");
        }
        s
    });
    let mut group = c.benchmark_group("region_get");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
    let mut i = 0u64;
    group.bench_function("memstore", |b| {
        b.iter(|| {
            i = (i + 7919) % ROWS;
            let got = rt.block_on(s.region.get(&Get::new(row(i)))).expect("get");
            assert_eq!(got.cells.len(), 1);
        })
    });
    rt.block_on(s.region.flush()).expect("flush");
    group.bench_function("sst_in_memory_bucket", |b| {
        b.iter(|| {
            i = (i + 7919) % ROWS;
            let got = rt.block_on(s.region.get(&Get::new(row(i)))).expect("get");
            assert_eq!(got.cells.len(), 1);
        })
    });
    group.finish();

    let mut group = c.benchmark_group("region_flush");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    let rows = 8_000u64;
    group.throughput(Throughput::Bytes(rows * (VALUE_LEN as u64 + 40)));
    group.bench_function("8MB_memstore", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let s = rt.block_on(setup(usize::MAX));
                rt.block_on(async {
                    let tasks: Vec<_> = (0..16u64)
                        .map(|w| {
                            let r = s.region.clone();
                            tokio::spawn(async move {
                                for k in (w..rows).step_by(16) {
                                    r.mutate(put(k)).await.expect("put");
                                }
                            })
                        })
                        .collect();
                    for t in tasks {
                        t.await.expect("task");
                    }
                });
                let start = Instant::now();
                rt.block_on(s.region.flush()).expect("flush");
                total += start.elapsed();
                rt.block_on(s.wal.close()).expect("close");
            }
            total
        })
    });
    group.finish();
}

/// A YCSB-like value: printable bytes that do not compress away.
fn random_value(i: u64) -> Vec<u8> {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..VALUE_LEN)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b' ' + (x % 95) as u8
        })
        .collect()
}

fn compactions(c: &mut Criterion) {
    let rt = runtime();
    const FILES: u64 = 3;
    const ROWS: u64 = 8_000;
    let s = rt.block_on(async {
        let s = setup_on(usize::MAX, true).await;
        for f in 0..FILES {
            let rows: Vec<u64> = (f * ROWS..(f + 1) * ROWS).collect();
            for chunk in rows.chunks(200) {
                let batch = chunk
                    .iter()
                    .map(|&k| RowMutation::new(row(k)).put("cf", "field0", random_value(k)))
                    .collect();
                for r in s.region.mutate_batch(batch).await {
                    r.expect("put");
                }
            }
            s.region.flush().await.expect("flush");
        }
        s
    });
    let mut group = c.benchmark_group("region_compact");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Bytes(FILES * ROWS * (VALUE_LEN as u64 + 40)));
    // Every iteration rewrites the whole store (after the first, one file).
    group.bench_function("major_24MB", |b| {
        b.iter(|| rt.block_on(s.region.compact(true)).expect("compact"))
    });
    group.finish();
}

criterion_group!(benches, puts, gets_and_flush, compactions);
criterion_main!(benches);
