//! The disk cache: round trips, restart, eviction, corruption, versioning, drops.

use super::*;

fn config(dir: &Path, segments: u64) -> DiskCacheConfig {
    DiskCacheConfig {
        dir: dir.to_path_buf(),
        capacity_bytes: segments << 20,
        segment_bytes: 1 << 20,
        queue_bytes: 64 << 20,
        nice: 0,
        // Two segments open at a time: every test here also runs with more
        // segments than open files.
        open_files: 4,
        page_cache_reads: false,
    }
}

fn page_cache_config(dir: &Path, segments: u64) -> DiskCacheConfig {
    DiskCacheConfig {
        page_cache_reads: true,
        ..config(dir, segments)
    }
}

fn frame(i: u64) -> Bytes {
    Bytes::from(
        (0..4000u64)
            .map(|j| (i.wrapping_mul(31) + j) as u8)
            .collect::<Vec<_>>(),
    )
}

async fn get(c: &DiskCache, i: u64) -> Option<Bytes> {
    c.get(FileId(u128::from(i % 7)), i).await
}

fn put(c: &DiskCache, i: u64) {
    c.insert(FileId(u128::from(i % 7)), i, frame(i));
}

#[tokio::test]
async fn round_trip_and_restart() {
    round_trip_and_restart_with(config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trip_and_restart_through_the_page_cache() {
    round_trip_and_restart_with(page_cache_config).await;
}

async fn round_trip_and_restart_with(config: fn(&Path, u64) -> DiskCacheConfig) {
    let dir = tempfile::tempdir().unwrap();
    let c = DiskCache::open(config(dir.path(), 8)).unwrap();
    assert!(c.wait_recovered(Duration::from_secs(5)));
    for i in 0..500 {
        put(&c, i);
    }
    c.flush();
    for i in 0..500 {
        assert_eq!(get(&c, i).await, Some(frame(i)), "{i}");
    }
    assert!(get(&c, 10_000).await.is_none());
    let m = c.metrics();
    assert_eq!((m.inserts, m.entries, m.dropped), (500, 500, 0));
    assert!(m.index_bytes / m.entries <= 100);
    c.close();
    drop(c);

    let c = DiskCache::open(config(dir.path(), 8)).unwrap();
    assert!(c.wait_recovered(Duration::from_secs(5)));
    assert_eq!(c.metrics().recovered_entries, 500);
    for i in 0..500 {
        assert_eq!(get(&c, i).await, Some(frame(i)), "after restart {i}");
    }
    let m = c.metrics();
    if config(dir.path(), 8).page_cache_reads {
        // Just written and read: the page cache has them, bar eviction.
        assert!(m.page_cache_hits > 0, "{m:?}");
    } else {
        assert_eq!(m.page_cache_hits, 0);
    }
}

#[tokio::test]
async fn unsealed_segments_are_scanned_and_torn_entries_dropped() {
    let dir = tempfile::tempdir().unwrap();
    {
        let c = DiskCache::open(config(dir.path(), 8)).unwrap();
        for i in 0..100 {
            put(&c, i);
        }
        c.flush();
        // No close: the segment stays unsealed, as after kill -9. Tear its tail.
        let slot = (0..8)
            .map(|s| dir.path().join(format!("slot-{s:05}")))
            .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .unwrap();
        let len = std::fs::metadata(&slot).unwrap().len();
        let f = OpenOptions::new().write(true).open(&slot).unwrap();
        f.set_len(len - 100).unwrap();
        std::mem::forget(c); // simulate a crash: no seal, writer never told to stop
    }
    let c = DiskCache::open(config(dir.path(), 8)).unwrap();
    assert!(c.wait_recovered(Duration::from_secs(5)));
    assert_eq!(
        c.metrics().recovered_entries,
        99,
        "the torn last entry is gone"
    );
    for i in 0..99 {
        assert_eq!(get(&c, i).await, Some(frame(i)));
    }
    assert!(get(&c, 99).await.is_none());
}

#[tokio::test]
async fn full_cache_evicts_oldest_segments() {
    let dir = tempfile::tempdir().unwrap();
    let c = DiskCache::open(config(dir.path(), 3)).unwrap();
    for i in 0..2000 {
        put(&c, i);
    }
    c.flush();
    let m = c.metrics();
    assert!(m.evicted > 0);
    assert!(m.bytes_used <= 3 << 20, "{m:?}");
    assert_eq!(get(&c, 1999).await, Some(frame(1999)));
    assert!(get(&c, 0).await.is_none(), "oldest evicted");
    let total: u64 = (0..3)
        .map(|s| {
            std::fs::metadata(dir.path().join(format!("slot-{s:05}")))
                .unwrap()
                .len()
        })
        .sum();
    assert!(total <= 3 << 20);
}

#[tokio::test]
async fn corruption_and_truncation_are_misses_never_wrong_data() {
    corruption_and_truncation_with(config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corruption_and_truncation_through_the_page_cache() {
    corruption_and_truncation_with(page_cache_config).await;
}

async fn corruption_and_truncation_with(config: fn(&Path, u64) -> DiskCacheConfig) {
    let dir = tempfile::tempdir().unwrap();
    {
        let c = DiskCache::open(config(dir.path(), 8)).unwrap();
        for i in 0..600 {
            put(&c, i);
        }
        c.close();
    }
    // Flip bytes all over every slot file, and truncate one.
    let mut seed = 12345u64;
    for s in 0..8 {
        let p = dir.path().join(format!("slot-{s:05}"));
        let mut bytes = std::fs::read(&p).unwrap();
        if bytes.is_empty() {
            continue;
        }
        for _ in 0..40 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (seed >> 33) as usize % bytes.len();
            bytes[at] ^= 0x5a;
        }
        if s == 1 {
            bytes.truncate(bytes.len() / 2);
        }
        std::fs::write(&p, bytes).unwrap();
    }
    let c = DiskCache::open(config(dir.path(), 8)).unwrap();
    assert!(c.wait_recovered(Duration::from_secs(5)));
    let mut hits = 0;
    for i in 0..600 {
        if let Some(v) = get(&c, i).await {
            assert_eq!(v, frame(i), "wrong data for {i}");
            hits += 1;
        }
    }
    assert!(hits > 0 && hits < 600, "{hits}");
}

#[tokio::test]
async fn another_version_is_wiped() {
    let dir = tempfile::tempdir().unwrap();
    {
        let c = DiskCache::open(config(dir.path(), 4)).unwrap();
        put(&c, 1);
        c.close();
    }
    std::fs::write(dir.path().join("VERSION"), "shoal-l2-cache format 0\n").unwrap();
    let c = DiskCache::open(config(dir.path(), 4)).unwrap();
    assert!(c.wait_recovered(Duration::from_secs(5)));
    assert!(get(&c, 1).await.is_none());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("VERSION")).unwrap(),
        format::VERSION_LINE
    );
}

#[tokio::test]
async fn a_full_queue_drops_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path(), 8);
    cfg.queue_bytes = 10_000; // two frames
    let c = DiskCache::open(cfg).unwrap();
    for i in 0..1000 {
        put(&c, i);
    }
    c.flush();
    let m = c.metrics();
    assert_eq!(m.inserts + m.dropped, 1000, "{m:?}");
    assert!(m.dropped > 0);
}

#[test]
fn bad_settings_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = DiskCache::open(config(dir.path(), 1)).unwrap_err();
    assert!(err.to_string().contains("capacity_bytes"), "{err}");
}

#[tokio::test]
async fn removing_a_file_forgets_its_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let c = DiskCache::open(config(dir.path(), 8)).unwrap();
    for i in 0..70 {
        put(&c, i);
    }
    c.flush();
    let before = c.metrics();
    c.remove_file(FileId(3));
    for i in 0..70 {
        let got = get(&c, i).await;
        if i % 7 == 3 {
            assert!(got.is_none(), "{i} still cached");
        } else {
            assert_eq!(got, Some(frame(i)));
        }
    }
    for i in (3..70).step_by(7) {
        assert!(!c.contains(FileId(3), i));
    }
    // After enough removals the entries leave the index and free their bytes.
    for f in 100..(100 + REMOVED_SWEEP as u128) {
        c.remove_file(FileId(f));
    }
    let after = c.metrics();
    assert_eq!(after.entries, before.entries - 10);
    assert!(after.bytes_used < before.bytes_used);
    assert_eq!(get(&c, 1).await, Some(frame(1)));
}

#[test]
fn direct_reads_return_exact_ranges_including_at_the_end_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let Some(f) = open_direct(&path) else {
        return; // a file system without direct I/O: the buffered path is used
    };
    for (pos, len) in [
        (0, 10),
        (1, 4095),
        (4095, 2),
        (5000, 9000),
        (19_990, 10),
        (0, 20_000),
    ] {
        let got = read_direct(&f, pos as u64, len).unwrap();
        assert_eq!(&got[..], &data[pos..pos + len], "pos {pos} len {len}");
    }
    assert!(read_direct(&f, 19_990, 11).is_err(), "past the end");
}
