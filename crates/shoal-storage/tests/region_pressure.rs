//! The write path under pressure: in-memory compaction (flattened segments
//! answer like skiplists and take less memory), the memstore budget (a writer
//! that outruns flushes is slowed, memory stays under the limit, nothing is
//! lost; a write that cannot be admitted fails with a clear error), periodic
//! flushes, and a bounded stress run of concurrent writes, flushes,
//! compactions, in-memory compactions and a split that must not deadlock.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::Bytes;
use shoal_storage::memstore::{BudgetOptions, InMemoryCompaction, MemstoreBudget};
use shoal_storage::object::{Bucket, Emulation};
use shoal_storage::region::{
    FamilyConfig, FlushScheduler, Get, ManualClock, Region, RegionConfig, RegionEnv, RegionError,
    RowMutation, Scan, SchedulerOptions, SplitChild, write_child_manifests,
};
use shoal_storage::wal::{Wal, WalOptions};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn config(id: &str, imc: InMemoryCompaction) -> RegionConfig {
    let family = FamilyConfig {
        in_memory_compaction: imc,
        ..FamilyConfig::new("cf")
    };
    RegionConfig::new(id, format!("data/t/{id}"), vec![family])
}

async fn env(dir: &std::path::Path, bucket: Bucket) -> RegionEnv {
    let wal = Wal::open(WalOptions::local(dir.join("wal"))).await.unwrap();
    RegionEnv::new(bucket, wal)
}

/// `len` bytes that do not compress (so flush uploads are full size).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn key(i: usize) -> String {
    format!("row{i:06}")
}

async fn count_rows(region: &Region) -> usize {
    let mut s = region.scanner(Scan::all()).unwrap();
    let mut n = 0;
    while s.next().await.unwrap().is_some() {
        n += 1;
    }
    n
}

async fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_compaction_flattens_segments_and_reads_see_every_cell() {
    let dir = tempfile::tempdir().unwrap();
    let e = env(dir.path(), Bucket::memory()).await;
    let mut sizes = Vec::new();
    for (id, imc) in [
        ("none", InMemoryCompaction::None),
        ("basic", InMemoryCompaction::Basic),
    ] {
        let mut c = config(id, imc);
        c.in_memory_flush_size = 64 << 10;
        let region = Region::open(c, e.clone()).await.unwrap();
        for i in 0..3000 {
            region
                .mutate(RowMutation::new(key(i)).put("cf", "q", vec![b'v'; 200]))
                .await
                .unwrap();
        }
        if imc == InMemoryCompaction::Basic {
            wait_for("flattening", || {
                let s = region.write_stats();
                s.imc_flattens > 0 && s.flat_bytes > 0
            })
            .await;
            wait_for("the pipeline to be merged", || {
                region.write_stats().imc_merges > 0
            })
            .await;
        }
        assert_eq!(count_rows(&region).await, 3000);
        let got = region.get(&Get::new(key(1234))).await.unwrap();
        assert_eq!(got.value(b"cf", b"q").unwrap().len(), 200);
        sizes.push(region.memstore_size());
        region.flush().await.unwrap();
        assert_eq!(region.memstore_size(), 0);
        assert_eq!(count_rows(&region).await, 3000);
    }
    assert!(
        sizes[1] < sizes[0],
        "flat segments take less memory than skiplists: {sizes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_that_outruns_flushes_is_slowed_and_memory_stays_under_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    // Flushes upload to a slow object store.
    let bucket = Bucket::memory().with_emulation(Some(Emulation {
        latency: Duration::from_millis(20),
        jitter: Duration::from_millis(5),
        bandwidth_bytes_per_sec: 1_000_000,
    }));
    let mut e = env(dir.path(), bucket).await;
    let limit = 2 << 20;
    e.memstore = MemstoreBudget::new(BudgetOptions {
        limit,
        flush_fraction: 0.5,
        block_timeout: Duration::from_secs(60),
    });
    let mut c = config("r", InMemoryCompaction::Basic);
    c.flush_size = 512 << 10;
    c.in_memory_flush_size = 128 << 10;
    let region = Region::open(c, e.clone()).await.unwrap();

    let peak = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (b, peak, done) = (e.memstore.clone(), peak.clone(), done.clone());
        tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(b.used(), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
    };
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let region = region.clone();
            tokio::spawn(async move {
                for i in (w..4000).step_by(4) {
                    region
                        .mutate(RowMutation::new(key(i)).put("cf", "q", noise(1000, i as u64)))
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    done.store(true, Ordering::Relaxed);
    sampler.await.unwrap();
    let stats = e.memstore.stats();
    eprintln!(
        "peak {} blocked {} flushes {:?} used {}",
        peak.load(Ordering::Relaxed),
        stats.blocked_writes.load(Ordering::Relaxed),
        region.write_stats(),
        e.memstore.used()
    );
    assert!(
        stats.blocked_writes.load(Ordering::Relaxed) > 0,
        "4 MB of writes against a 2 MiB budget and 1 MB/s flushes must wait"
    );
    assert_eq!(stats.block_timeouts.load(Ordering::Relaxed), 0);
    // Admission happens before a write: each of the 4 writers may pass the
    // limit by one mutation (about 1.1 KB accounted).
    let peak = peak.load(Ordering::Relaxed);
    assert!(peak <= limit + 4 * 2048, "peak {peak} > limit {limit}");
    assert_eq!(count_rows(&region).await, 4000, "no write is lost");
    assert!(region.write_stats().flushes >= 4);
}

#[tokio::test]
async fn a_write_that_cannot_be_admitted_fails_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = env(dir.path(), Bucket::memory()).await;
    e.memstore = MemstoreBudget::new(BudgetOptions {
        limit: 64 << 10,
        flush_fraction: 0.9,
        block_timeout: Duration::from_millis(200),
    });
    // No flush can run: memory is never released.
    e.flush_slots = Arc::new(tokio::sync::Semaphore::new(0));
    let region = Region::open(config("r", InMemoryCompaction::None), e.clone())
        .await
        .unwrap();
    let mut written = 0;
    let err = loop {
        match region
            .mutate(RowMutation::new(key(written)).put("cf", "q", vec![b'x'; 1000]))
            .await
        {
            Ok(()) => written += 1,
            Err(e) => break e,
        }
        assert!(written < 1000, "the budget never blocked");
    };
    assert!(matches!(err, RegionError::Busy { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("too busy") && msg.contains("flushes are not keeping up"),
        "{msg}"
    );
    assert_eq!(e.memstore.stats().block_timeouts.load(Ordering::Relaxed), 1);
    // Every acknowledged write is readable.
    assert_eq!(count_rows(&region).await, written);
}

#[tokio::test]
async fn the_per_region_blocking_size_holds_writes_until_a_flush() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = env(dir.path(), Bucket::memory()).await;
    e.memstore = MemstoreBudget::new(BudgetOptions {
        block_timeout: Duration::from_millis(200),
        ..BudgetOptions::default()
    });
    e.flush_slots = Arc::new(tokio::sync::Semaphore::new(0));
    let mut c = config("r", InMemoryCompaction::None);
    c.flush_size = 16 << 10;
    c.blocking_multiplier = 2;
    let region = Region::open(c, e.clone()).await.unwrap();
    let mut written = 0usize;
    let err = loop {
        match region
            .mutate(RowMutation::new(key(written)).put("cf", "q", vec![b'x'; 1000]))
            .await
        {
            Ok(()) => written += 1,
            Err(e) => break e,
        }
        assert!(written < 1000, "the region never blocked");
    };
    assert!(err.to_string().contains("blocking size"), "{err}");
    assert!(region.memstore_size() >= 32 << 10);
    assert!(region.memstore_size() < (32 << 10) + 2048);
    // Let flushes run: the next write is admitted.
    e.flush_slots.add_permits(1);
    region
        .mutate(RowMutation::new("late").put("cf", "q", "v"))
        .await
        .unwrap();
    assert_eq!(count_rows(&region).await, written + 1);
}

#[tokio::test]
async fn an_old_memstore_is_flushed_periodically() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = env(dir.path(), Bucket::memory()).await;
    let clock = ManualClock::new(1_000_000);
    e.clock = Arc::new(clock.clone());
    e.scheduler = FlushScheduler::new(SchedulerOptions {
        flush_interval: Some(Duration::from_secs(60)),
        jitter: 0.2,
        check_every: Duration::from_millis(10),
        max_wal_bytes: None,
    });
    let region = Region::open(config("r", InMemoryCompaction::Basic), e.clone())
        .await
        .unwrap();
    region
        .mutate(RowMutation::new("a").put("cf", "q", "v"))
        .await
        .unwrap();
    let rounds = e.scheduler.rounds();
    wait_for("three scheduler rounds", || {
        e.scheduler.rounds() >= rounds + 3
    })
    .await;
    assert_eq!(region.write_stats().flushes, 0, "not old yet");
    // Past the interval and any jitter (≤ 20 % of it).
    clock.advance(73_000);
    wait_for("a periodic flush", || region.write_stats().flushes == 1).await;
    assert_eq!(region.memstore_size(), 0);
    assert_eq!(
        e.memstore.stats().periodic_flushes.load(Ordering::Relaxed),
        1
    );
    // Nothing new: no further flush.
    clock.advance(200_000);
    let rounds = e.scheduler.rounds();
    wait_for("three scheduler rounds", || {
        e.scheduler.rounds() >= rounds + 3
    })
    .await;
    assert_eq!(region.write_stats().flushes, 1);
}

/// Regions `old` (written first) and `hot` (written after) log to one
/// object-store WAL, one object per write, 10 KiB each; the scheduler's
/// WAL bound is `bound`. Returns the WAL and the regions once every write
/// is acknowledged.
async fn fill_wal_past(bound: Option<u64>) -> (Wal, FlushScheduler, Region, Region) {
    let bucket = Bucket::memory();
    let wal = Wal::open(WalOptions::object(bucket.clone(), "wal/s1"))
        .await
        .unwrap();
    let mut e = RegionEnv::new(bucket, wal.clone());
    e.scheduler = FlushScheduler::new(SchedulerOptions {
        flush_interval: None,
        jitter: 0.0,
        check_every: Duration::from_millis(10),
        max_wal_bytes: bound,
    });
    let old = Region::open(config("old", InMemoryCompaction::None), e.clone())
        .await
        .unwrap();
    let hot = Region::open(config("hot", InMemoryCompaction::None), e.clone())
        .await
        .unwrap();
    for i in 0..10 {
        old.mutate(RowMutation::new(key(i)).put("cf", "q", noise(10 << 10, i as u64)))
            .await
            .unwrap();
    }
    for i in 0..20 {
        hot.mutate(RowMutation::new(key(i)).put("cf", "q", noise(10 << 10, 100 + i as u64)))
            .await
            .unwrap();
    }
    (wal, e.scheduler.clone(), old, hot)
}

/// HBase's `maxlogs`, by bytes: a WAL holding more than its bound has the
/// regions with entries in its oldest segments flushed, and those segments
/// go; regions whose entries are all newer are left alone.
#[tokio::test]
async fn a_wal_past_its_bound_flushes_the_regions_holding_its_oldest_entries() {
    let bound = 256 << 10;
    let (wal, scheduler, old, hot) = fill_wal_past(Some(bound)).await;
    // 300 KiB of records, 100 KiB of them the old region's (the oldest).
    wait_for("the old region's flush", || old.write_stats().flushes == 1).await;
    wait_for("its segments deleted", || wal.live_bytes() <= bound).await;
    let m = wal.metrics();
    assert!(
        m.segments_deleted >= 10,
        "the old region's ten objects go: {m:?}"
    );
    assert_eq!(m.release_flushes, 1, "{m:?}");
    assert_eq!(m.live_bytes, wal.live_bytes());
    assert!(
        wal.live_bytes() >= 200 << 10,
        "the hot region's entries stay"
    );
    let rounds = scheduler.rounds();
    wait_for("three more scheduler rounds", || {
        scheduler.rounds() >= rounds + 3
    })
    .await;
    assert_eq!(
        hot.write_stats().flushes,
        0,
        "the log is within its bound again: the hot region is not flushed"
    );
    assert_eq!(old.memstore_size(), 0);
    assert!(hot.memstore_size() >= 200 << 10);
}

/// The same writes without a bound: nothing flushes, every segment stays.
#[tokio::test]
async fn without_a_wal_bound_nothing_is_flushed_for_the_log() {
    let (wal, scheduler, old, hot) = fill_wal_past(None).await;
    let rounds = scheduler.rounds();
    wait_for("three scheduler rounds", || {
        scheduler.rounds() >= rounds + 3
    })
    .await;
    assert_eq!(old.write_stats().flushes + hot.write_stats().flushes, 0);
    let m = wal.metrics();
    assert_eq!((m.segments_deleted, m.release_flushes), (0, 0), "{m:?}");
    assert!(wal.live_bytes() >= 300 << 10);
}

/// Writers, flushes, major and minor compactions, in-memory compaction with
/// a tiny threshold, a small budget that blocks writers, and a split of the
/// region in the middle; everything must finish (no deadlock) and every
/// acknowledged write must be readable from the children.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_deadlock_under_writes_flushes_compactions_and_a_split() {
    let result = tokio::time::timeout(Duration::from_secs(120), stress()).await;
    assert!(result.is_ok(), "the stress run did not finish: deadlock?");
}

async fn stress() {
    let dir = tempfile::tempdir().unwrap();
    let bucket = Bucket::memory();
    let mut e = env(dir.path(), bucket.clone()).await;
    e.memstore = MemstoreBudget::new(BudgetOptions {
        limit: 1 << 20,
        flush_fraction: 0.7,
        block_timeout: Duration::from_secs(60),
    });
    e.background = Some(shoal_storage::background::Background::new(1, 5).unwrap());
    let mk = |id: &str, start: &str, end: &str| {
        let mut c = config(id, InMemoryCompaction::Eager);
        c.start_row = Bytes::from(start.to_string());
        c.end_row = Bytes::from(end.to_string());
        c.flush_size = 256 << 10;
        c.in_memory_flush_size = 16 << 10;
        c.pipeline_max_segments = 2;
        c.compaction_trigger_files = 3;
        c
    };
    let parent = Region::open(mk("p", "", ""), e.clone()).await.unwrap();
    let regions = Arc::new(std::sync::RwLock::new(vec![parent.clone()]));
    let acked = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));

    let route = |regions: &std::sync::RwLock<Vec<Region>>, row: &str| {
        regions
            .read()
            .unwrap()
            .iter()
            .find(|r| r.config().contains_row(row.as_bytes()))
            .cloned()
            .unwrap()
    };
    let mut tasks = Vec::new();
    for w in 0..4usize {
        let (regions, acked, stop) = (regions.clone(), acked.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let row = format!("k{:02}-{w}-{i:06}", i % 97);
                // Overwrites of a few hot rows give eager merges work.
                let m = RowMutation::new(row.clone())
                    .put("cf", "q", vec![b'x'; 300])
                    .put("cf", "hot", i.to_string());
                match route(&regions, &row).mutate(m).await {
                    Ok(()) => {
                        acked.lock().unwrap().push(row);
                        i += 1;
                    }
                    // The region is being split: retry on the children.
                    Err(RegionError::Closed { .. }) => {
                        tokio::time::sleep(Duration::from_millis(5)).await
                    }
                    Err(e) => panic!("write failed: {e}"),
                }
            }
        }));
    }
    {
        let (regions, stop) = (regions.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let rs = regions.read().unwrap().clone();
                for r in rs {
                    let res = if n.is_multiple_of(3) {
                        r.compact(n.is_multiple_of(2)).await.map(|_| ())
                    } else {
                        r.flush().await.map(|_| ())
                    };
                    match res {
                        Ok(()) | Err(RegionError::Closed { .. }) => {}
                        Err(e) => panic!("flush/compaction failed: {e}"),
                    }
                }
                n += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }
    {
        // Readers scan while everything moves.
        let (regions, stop) = (regions.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let rs = regions.read().unwrap().clone();
                for r in rs {
                    if let Ok(mut s) = r.scanner(Scan::all()) {
                        let mut n = 0;
                        loop {
                            match s.next().await {
                                Ok(Some(_)) if n < 500 => n += 1,
                                _ => break,
                            }
                        }
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }));
    }
    // Writes, flushes and compactions under way before the split.
    wait_for("writes before the split", || {
        acked.lock().unwrap().len() >= 300
    })
    .await;
    // Split the parent at "k50" while writes go on.
    parent.close().await.unwrap();
    let manifest = parent.current_manifest().await;
    let children = [
        SplitChild {
            region_id: "a".into(),
            region_dir: "data/t/a".into(),
            start_row: Bytes::new(),
            end_row: Bytes::from_static(b"k50"),
        },
        SplitChild {
            region_id: "b".into(),
            region_dir: "data/t/b".into(),
            start_row: Bytes::from_static(b"k50"),
            end_row: Bytes::new(),
        },
    ];
    write_child_manifests(&bucket, &manifest, &children)
        .await
        .unwrap();
    let a = Region::open(mk("a", "", "k50"), e.clone()).await.unwrap();
    let b = Region::open(mk("b", "k50", ""), e.clone()).await.unwrap();
    *regions.write().unwrap() = vec![a.clone(), b.clone()];
    a.compact_references_in_background();
    b.compact_references_in_background();
    // Writes go on in the children until both have rewritten the parent's
    // files into their own.
    let before = acked.lock().unwrap().len();
    wait_for(
        "writes after the split and the children's compactions",
        || {
            acked.lock().unwrap().len() >= before + 300
                && !a.has_references()
                && !b.has_references()
        },
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() > 500, "only {} writes", acked.len());
    for row in acked.iter().step_by(7) {
        let r = route(&regions, row);
        let got = r.get(&Get::new(row.clone())).await.unwrap();
        assert!(got.value(b"cf", b"q").is_some(), "acknowledged {row} lost");
    }
    let total = count_rows(&a).await + count_rows(&b).await;
    assert_eq!(total, acked.len(), "every acknowledged row, once");
}
