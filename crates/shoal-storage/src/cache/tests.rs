//! Block cache behaviour over an in-memory source.

use super::*;
use crate::cell::{Cell, KeyRef};
use crate::sst::{MemoryFetcher, ScanRange, SstFile, SstReader, SstWriter, SstWriterOptions};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::Ordering;

async fn file(rows: u32, id: u128) -> (Arc<MemoryFetcher>, SstFile) {
    let out = sst_bytes(rows, id).await;
    let source = Arc::new(MemoryFetcher::new());
    let path = format!("{id}.sst");
    source.insert(path.clone(), out);
    (
        source,
        SstFile {
            id: FileId(id),
            path,
        },
    )
}

/// An SST of `rows` rows of 100 B in 1 KiB blocks.
async fn sst_bytes(rows: u32, id: u128) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = SstWriterOptions {
        block_size: 1024,
        ..SstWriterOptions::default()
    };
    let mut w = SstWriter::new(FileId(id), "f.sst", "cf", opts, &mut out).unwrap();
    for i in 0..rows {
        w.add(&Cell::put(
            format!("row{i:06}"),
            "cf",
            "q",
            1,
            1,
            vec![b'v'; 100],
        ))
        .await
        .unwrap();
    }
    w.finish().await.unwrap();
    out
}

/// An L2 in a hash map, for tests.
#[derive(Default)]
struct MapL2(Mutex<HashMap<(FileId, u64), Bytes>>);

impl L2 for MapL2 {
    fn get(&self, file: FileId, offset: u64) -> BoxFuture<'_, Option<Bytes>> {
        let v = self.0.lock().unwrap().get(&(file, offset)).cloned();
        Box::pin(async move { v })
    }
    fn insert(&self, file: FileId, offset: u64, frame: Bytes) {
        self.0.lock().unwrap().insert((file, offset), frame);
    }
    fn remove_file(&self, file: FileId) {
        self.0.lock().unwrap().retain(|k, _| k.0 != file);
    }
    fn contains(&self, file: FileId, offset: u64) -> bool {
        self.0.lock().unwrap().contains_key(&(file, offset))
    }
}

async fn scan_all(reader: &SstReader) -> usize {
    let mut it = reader.iter(ScanRange::all());
    let mut n = 0;
    while it.next().await.unwrap().is_some() {
        n += 1;
    }
    n
}

#[tokio::test]
async fn second_read_is_served_from_l1_without_requests() {
    let (source, f) = file(2000, 1).await;
    let cache = BlockCache::new(CacheConfig::default(), source.clone(), None);
    let view = cache.family(FamilyCachePolicy::default());
    let reader = SstReader::open(view.clone(), f.clone()).await.unwrap();
    assert_eq!(scan_all(&reader).await, 2000);
    let requests = source.fetch_count();
    // Reopen and rescan: tail from the meta pool, blocks from the data pool.
    let reader = SstReader::open(view, f).await.unwrap();
    assert_eq!(scan_all(&reader).await, 2000);
    assert_eq!(
        source.fetch_count(),
        requests,
        "no object-store request on a warm cache"
    );
    let m = cache.metrics();
    assert!(m.data.hits >= reader.data_block_count() as u64);
    assert_eq!(m.meta.hits, 1);
    assert_eq!(m.object_store_gets, requests);
}

#[tokio::test]
async fn l2_serves_what_l1_evicted_and_bad_frames_are_misses() {
    let (source, f) = file(2000, 2).await;
    let l2 = Arc::new(MapL2::default());
    let tiny = CacheConfig {
        l1_data_bytes: 0,
        l1_meta_bytes: 0,
        ..CacheConfig::default()
    };
    let cache = BlockCache::new(tiny, source.clone(), Some(l2.clone()));
    let view = cache.family(FamilyCachePolicy::default());
    let reader = SstReader::open(view.clone(), f.clone()).await.unwrap();
    assert_eq!(scan_all(&reader).await, 2000);
    let requests = source.fetch_count();
    assert_eq!(scan_all(&reader).await, 2000);
    assert_eq!(source.fetch_count(), requests, "L2 served the rescan");
    assert!(cache.metrics().l2_hits >= reader.data_block_count() as u64);

    // Corrupt every L2 entry: reads still return correct data, from the source.
    for v in l2.0.lock().unwrap().values_mut() {
        let mut b = v.to_vec();
        let mid = b.len() / 2;
        b[mid] ^= 0xff;
        *v = Bytes::from(b);
    }
    let reader = SstReader::open(view, f).await.unwrap();
    assert_eq!(scan_all(&reader).await, 2000);
    assert!(cache.metrics().l2_corrupt >= reader.data_block_count() as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_misses_send_one_request_per_block() {
    let (source, f) = file(200, 3).await;
    let cache = BlockCache::new(CacheConfig::default(), source.clone(), None);
    let view = cache.family(FamilyCachePolicy::default());
    let reader = SstReader::open(view, f).await.unwrap();
    let before = source.fetch_count();
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let r = reader.clone();
            tokio::spawn(async move {
                r.first_at_or_after(KeyRef::first_of_row(b"row000100"))
                    .await
                    .unwrap()
            })
        })
        .collect();
    for t in tasks {
        assert!(t.await.unwrap().is_some());
    }
    let m = cache.metrics();
    // Every task either hit L1, joined the one fetch, or (after it completed) hit L1.
    assert_eq!(source.fetch_count() - before, 1, "{m:?}");
}

#[tokio::test]
async fn cache_on_write_and_file_eviction() {
    let source = Arc::new(MemoryFetcher::new());
    let l2 = Arc::new(MapL2::default());
    let cache = BlockCache::new(CacheConfig::default(), source.clone(), Some(l2.clone()));
    let policy = FamilyCachePolicy::default();
    let mut out = Vec::new();
    let opts = SstWriterOptions {
        block_size: 1024,
        ..SstWriterOptions::default()
    };
    let mut w = SstWriter::new(FileId(9), "9.sst", "cf", opts, &mut out).unwrap();
    let c2 = cache.clone();
    w.set_block_observer(Box::new(move |addr, raw, frame| {
        c2.insert_written(policy, addr, raw, frame)
    }));
    for i in 0..1000u32 {
        w.add(&Cell::put(
            format!("row{i:06}"),
            "cf",
            "q",
            1,
            1,
            vec![b'v'; 100],
        ))
        .await
        .unwrap();
    }
    w.finish().await.unwrap();
    source.insert("9.sst", out);
    let view = cache.family(policy);
    let reader = SstReader::open(
        view,
        SstFile {
            id: FileId(9),
            path: "9.sst".into(),
        },
    )
    .await
    .unwrap();
    let after_open = source.fetch_count();
    assert_eq!(scan_all(&reader).await, 1000);
    assert_eq!(
        source.fetch_count(),
        after_open,
        "written blocks were cached"
    );
    assert!(l2.0.lock().unwrap().len() >= reader.data_block_count());

    cache.evict_file(FileId(9));
    assert!(l2.0.lock().unwrap().is_empty());
    let m = cache.metrics();
    assert_eq!((m.data.entries, m.meta.entries), (0, 0));
}

#[tokio::test]
async fn families_without_cache_on_read_and_in_memory_pools() {
    let (source, f) = file(500, 4).await;
    let cache = BlockCache::new(CacheConfig::default(), source.clone(), None);
    let no_fill = cache.family(FamilyCachePolicy {
        cache_data_on_read: false,
        ..FamilyCachePolicy::default()
    });
    let reader = SstReader::open(no_fill, f.clone()).await.unwrap();
    scan_all(&reader).await;
    assert_eq!(cache.metrics().data.entries, 0);
    let hot = cache.family(FamilyCachePolicy {
        in_memory: true,
        ..FamilyCachePolicy::default()
    });
    let reader = SstReader::open(hot, f).await.unwrap();
    scan_all(&reader).await;
    let m = cache.metrics();
    assert_eq!(m.data.entries, 0);
    assert_eq!(m.in_memory.entries, reader.data_block_count() as u64);
}

/// Prefetches `blocks` of `f` with no rate limit and waits for it.
async fn prefetch_all(
    cache: &BlockCache,
    f: &SstFile,
    blocks: &[BlockAddr],
) -> Arc<PrefetchProgress> {
    let handle = cache.prefetch(
        vec![PrefetchFile {
            path: f.path.clone(),
            blocks: blocks.to_vec(),
            l1: None,
        }],
        0,
    );
    let progress = handle.progress();
    handle.wait().await;
    progress
}

fn blocks_of(reader: &SstReader) -> Vec<BlockAddr> {
    (0..reader.data_block_count())
        .filter_map(|i| reader.block_addr(i))
        .collect()
}

#[tokio::test]
async fn prefetch_warms_l2_skips_cached_blocks_and_reports_progress() {
    let (source, f) = file(2000, 5).await;
    let l2 = Arc::new(MapL2::default());
    let cache = BlockCache::new(CacheConfig::default(), source.clone(), Some(l2.clone()));
    let reader = SstReader::open(cache.family(FamilyCachePolicy::default()), f.clone())
        .await
        .unwrap();
    // Warm one block by reading it.
    reader.read_block(0).await.unwrap();
    let blocks = blocks_of(&reader);
    let total: u64 = blocks.iter().map(|b| b.len).sum();
    let progress = prefetch_all(&cache, &f, &blocks).await;
    assert_eq!(progress.total_bytes.load(Ordering::Relaxed), total);
    assert_eq!(progress.done_bytes.load(Ordering::Relaxed), total);
    assert_eq!(progress.skipped_blocks.load(Ordering::Relaxed), 1);
    assert_eq!(
        progress.fetched_blocks.load(Ordering::Relaxed),
        blocks.len() as u64 - 1
    );
    for b in &blocks {
        assert!(l2.contains(b.file, b.offset));
    }
    let m = cache.metrics();
    assert_eq!(
        (m.prefetch_bytes_total, m.prefetch_bytes_done),
        (total, total)
    );
}

#[tokio::test(start_paused = true)]
async fn prefetch_is_rate_limited_and_cancellable() {
    let (source, f) = file(2000, 6).await;
    let l2 = Arc::new(MapL2::default());
    let cache = BlockCache::new(CacheConfig::default(), source, Some(l2.clone()));
    let reader = SstReader::open(cache.family(FamilyCachePolicy::default()), f.clone())
        .await
        .unwrap();
    let blocks = blocks_of(&reader);
    assert!(blocks.len() > 10);
    // One block per simulated second.
    let rate = blocks[0].len;
    let handle = cache.prefetch(
        vec![PrefetchFile {
            path: f.path.clone(),
            blocks: blocks.clone(),
            l1: None,
        }],
        rate,
    );
    tokio::time::sleep(std::time::Duration::from_millis(3500)).await;
    let fetched = handle.progress().fetched_blocks.load(Ordering::Relaxed);
    assert!(
        (3..=5).contains(&fetched),
        "rate limit: {fetched} blocks in 3.5 s"
    );
    handle.cancel();
    let progress = handle.progress();
    handle.wait().await;
    let after = progress.fetched_blocks.load(Ordering::Relaxed);
    assert!(after <= fetched + 1, "stopped after cancel: {after}");
    assert!(l2.0.lock().unwrap().len() < blocks.len());
}

/// A peer tier over another cache's L2 (as the server's gRPC peer reads
/// are), that can corrupt what it returns or fail.
struct TestPeer {
    other: BlockCache,
    mode: Mutex<PeerMode>,
    calls: AtomicU64,
}

#[derive(Clone, Copy, PartialEq)]
enum PeerMode {
    Honest,
    Corrupt,
    Dead,
}

impl PeerTier for TestPeer {
    fn frames<'a>(
        &'a self,
        _path: &'a str,
        blocks: &'a [BlockAddr],
        _ask: super::PeerAsk,
    ) -> BoxFuture<'a, PeerAnswer> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::Relaxed);
            let mode = *self.mode.lock().unwrap();
            match mode {
                PeerMode::Dead => PeerAnswer::Failed,
                PeerMode::Honest => PeerAnswer::Frames(self.other.l2_frames(blocks).await),
                PeerMode::Corrupt => PeerAnswer::Frames(
                    self.other
                        .l2_frames(blocks)
                        .await
                        .into_iter()
                        .map(|f| {
                            f.map(|f| {
                                let mut b = f.to_vec();
                                b[0] ^= 0x55;
                                Bytes::from(b)
                            })
                        })
                        .collect(),
                ),
            }
        })
    }
}

/// Two caches over one source: `old` (warm: every block in its L2) and
/// `new` (cold), with `old` as `new`'s peer.
struct Moved {
    source: Arc<MemoryFetcher>,
    f: SstFile,
    new: BlockCache,
    peer: Arc<TestPeer>,
    /// The file opened on `new` (its tail read from the object store).
    reader: SstReader,
    /// The object store's request count once `reader` is open.
    before: u64,
}

async fn moved(id: u128, mode: PeerMode) -> Moved {
    let (source, f) = file(2000, id).await;
    let old = BlockCache::new(
        CacheConfig::default(),
        source.clone(),
        Some(Arc::new(MapL2::default())),
    );
    let reader = SstReader::open(old.family(FamilyCachePolicy::default()), f.clone())
        .await
        .unwrap();
    assert_eq!(scan_all(&reader).await, 2000);
    let tiny = CacheConfig {
        l1_data_bytes: 0,
        ..CacheConfig::default()
    };
    let new = BlockCache::new(tiny, source.clone(), Some(Arc::new(MapL2::default())));
    let peer = Arc::new(TestPeer {
        other: old,
        mode: Mutex::new(mode),
        calls: AtomicU64::new(0),
    });
    new.set_peer_tier(Some(peer.clone()));
    let reader = SstReader::open(new.family(FamilyCachePolicy::default()), f.clone())
        .await
        .unwrap();
    let before = source.fetch_count();
    Moved {
        source,
        f,
        new,
        peer,
        reader,
        before,
    }
}

#[tokio::test]
async fn a_moved_files_blocks_come_from_the_peer_not_the_object_store() {
    let Moved {
        source,
        new,
        peer,
        reader,
        before,
        ..
    } = moved(10, PeerMode::Honest).await;
    assert_eq!(scan_all(&reader).await, 2000);
    let blocks = reader.data_block_count() as u64;
    assert_eq!(
        source.fetch_count(),
        before,
        "no block read from the object store"
    );
    let m = new.metrics();
    assert_eq!(m.peer.hits, blocks);
    assert_eq!(m.object_store_gets, 1, "only the tail");
    assert_eq!(peer.other.metrics().peer.served, blocks);
    // The peer's blocks entered L2: a rescan asks nobody.
    let calls = peer.calls.load(Ordering::Relaxed);
    assert_eq!(scan_all(&reader).await, 2000);
    assert_eq!(peer.calls.load(Ordering::Relaxed), calls);
    assert_eq!(source.fetch_count(), before);
}

#[tokio::test]
async fn corrupt_peer_frames_are_never_returned() {
    let Moved {
        source,
        new,
        peer: _,
        reader,
        before,
        ..
    } = moved(11, PeerMode::Corrupt).await;
    // Every cell is right: each block came from the object store.
    let mut it = reader.iter(ScanRange::all());
    let mut n = 0;
    while let Some(c) = it.next().await.unwrap() {
        assert_eq!(c.row, format!("row{n:06}").as_bytes());
        assert_eq!(&c.value[..], &[b'v'; 100][..]);
        n += 1;
    }
    assert_eq!(n, 2000);
    let blocks = reader.data_block_count() as u64;
    let m = new.metrics();
    assert_eq!(m.peer.corrupt, blocks);
    assert_eq!(m.peer.hits, 0);
    assert_eq!(source.fetch_count() - before, blocks);
}

#[tokio::test]
async fn a_dead_peer_falls_back_to_the_object_store() {
    let Moved {
        source,
        new,
        peer: _,
        reader,
        before,
        ..
    } = moved(12, PeerMode::Dead).await;
    assert_eq!(scan_all(&reader).await, 2000);
    let blocks = reader.data_block_count() as u64;
    let m = new.metrics();
    assert_eq!(m.peer.fallbacks, blocks);
    assert_eq!(source.fetch_count() - before, blocks);
}

#[tokio::test]
async fn prefetch_copies_from_the_peer_and_reads_only_what_it_lacks() {
    let Moved {
        source,
        f,
        new,
        peer,
        reader,
        ..
    } = moved(13, PeerMode::Honest).await;
    let blocks = blocks_of(&reader);
    // The peer lost two blocks in the middle.
    let lost = [blocks[5], blocks[6]];
    let before = source.fetch_count();
    // A peer holding every block but those two.
    let old_l2 = MapL2::default();
    for b in &blocks {
        if !lost.contains(b)
            && let Some(Some(frame)) = peer.other.l2_frames(&[*b]).await.pop()
        {
            old_l2.insert(b.file, b.offset, frame);
        }
    }
    let old = BlockCache::new(
        CacheConfig::default(),
        source.clone(),
        Some(Arc::new(old_l2)),
    );
    let partial = Arc::new(TestPeer {
        other: old,
        mode: Mutex::new(PeerMode::Honest),
        calls: AtomicU64::new(0),
    });
    new.set_peer_tier(Some(partial));
    let progress = prefetch_all(&new, &f, &blocks).await;
    assert_eq!(
        progress.peer_blocks.load(Ordering::Relaxed),
        blocks.len() as u64 - 2
    );
    assert_eq!(progress.fetched_blocks.load(Ordering::Relaxed), 2);
    assert_eq!(
        source.fetch_count() - before,
        1,
        "one GET for the two lost blocks"
    );
    // Everything is in L2 now: a scan asks neither the object store nor the peer.
    let reader = SstReader::open(new.family(FamilyCachePolicy::default()), f)
        .await
        .unwrap();
    let before = source.fetch_count();
    let hits = new.metrics().peer.hits;
    assert_eq!(scan_all(&reader).await, 2000);
    assert_eq!(source.fetch_count(), before);
    assert_eq!(new.metrics().peer.hits, hits);
}

#[tokio::test]
async fn a_damaged_block_from_the_object_store_never_enters_l2() {
    let (source, f) = file(2000, 14).await;
    let l2 = Arc::new(MapL2::default());
    let cache = BlockCache::new(CacheConfig::default(), source.clone(), Some(l2.clone()));
    let view = cache.family(FamilyCachePolicy::default());
    let reader = SstReader::open(view, f.clone()).await.unwrap();
    let first = reader.block_addr(0).unwrap();
    // Damage the first data block in the object store.
    let mut bytes = sst_bytes(2000, 14).await;
    bytes[(first.offset + first.len / 2) as usize] ^= 0xff;
    source.insert(f.path.clone(), bytes);
    let mut it = reader.iter(ScanRange::all());
    assert!(
        it.next().await.is_err(),
        "a damaged block is an error, never data"
    );
    assert!(!l2.contains(first.file, first.offset), "not cached");
}

#[tokio::test]
async fn a_regions_block_sources_count_each_tier_that_served_it() {
    // Cold, no peer: every block from the object store, one GET each; a
    // rescan finds them in L1.
    let (source, f) = file(2000, 20).await;
    let cache = BlockCache::new(
        CacheConfig::default(),
        source.clone(),
        Some(Arc::new(MapL2::default())),
    );
    let sources = Arc::new(BlockSources::default());
    let view = cache.family_counted(FamilyCachePolicy::default(), Some(sources.clone()));
    let reader = SstReader::open(view, f).await.unwrap();
    let blocks = reader.data_block_count() as u64;
    assert_eq!(scan_all(&reader).await, 2000);
    let s = sources.snapshot();
    assert_eq!((s.object_store, s.object_store_gets), (blocks, blocks));
    assert_eq!((s.l1, s.l2, s.peer), (0, 0, 0));
    assert_eq!(scan_all(&reader).await, 2000);
    assert_eq!(sources.snapshot().l1, blocks);
    assert_eq!(sources.snapshot().object_store, blocks);

    // Moved, with a warm peer: reads count the peer, then this server's L2
    // (L1 holds nothing here).
    let Moved { new, f, .. } = moved(21, PeerMode::Honest).await;
    let sources = Arc::new(BlockSources::default());
    let view = new.family_counted(FamilyCachePolicy::default(), Some(sources.clone()));
    let reader = SstReader::open(view, f).await.unwrap();
    let blocks = reader.data_block_count() as u64;
    assert_eq!(scan_all(&reader).await, 2000);
    assert_eq!(sources.snapshot().peer, blocks);
    assert_eq!(scan_all(&reader).await, 2000);
    let s = sources.snapshot();
    assert_eq!((s.peer, s.l2, s.object_store), (blocks, blocks, 0));
    assert_eq!(s.object_store_fraction(), Some(0.0));

    // A counted prefetch from a cold cache with no peer: every block from
    // the object store, in far fewer GETs than blocks (runs).
    let (source, f) = file(2000, 22).await;
    let cache = BlockCache::new(
        CacheConfig::default(),
        source,
        Some(Arc::new(MapL2::default())),
    );
    let reader = SstReader::open(cache.family(FamilyCachePolicy::default()), f.clone())
        .await
        .unwrap();
    let addrs = blocks_of(&reader);
    let sources = Arc::new(BlockSources::default());
    cache
        .prefetch_counted(
            vec![PrefetchFile {
                path: f.path.clone(),
                blocks: addrs.clone(),
                l1: None,
            }],
            0,
            Some(sources.clone()),
        )
        .wait()
        .await;
    let s = sources.snapshot();
    assert_eq!(s.prefetch_object_store, addrs.len() as u64);
    assert_eq!(s.reads(), 0, "a prefetch is not a read");
    assert!(
        s.object_store_gets >= 1 && s.object_store_gets < s.prefetch_object_store / 4,
        "{s:?}"
    );
}

/// Every cell of a scan, for comparing two reads of one file.
async fn scan_cells(reader: &SstReader) -> Vec<String> {
    let mut it = reader.iter(ScanRange::all());
    let mut out = Vec::new();
    while let Some(c) = it.next().await.unwrap() {
        out.push(format!("{c:?}"));
    }
    out
}

/// The disk cache checks every byte it returns, so the cache skips its own
/// frame check and the reader its checksum pass on disk-cache hits: damaged
/// disk-cache entries must still be misses, read again from the source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_disk_cache_entries_are_read_from_the_source() {
    let (source, f) = file(2000, 11).await;
    let dir = tempfile::tempdir().unwrap();
    let disk = || {
        DiskCache::open(DiskCacheConfig {
            dir: dir.path().to_path_buf(),
            capacity_bytes: 16 << 20,
            segment_bytes: 1 << 20,
            queue_bytes: 64 << 20,
            nice: 0,
            open_files: 8,
            page_cache_reads: false,
        })
        .unwrap()
    };
    let tiny = CacheConfig {
        l1_data_bytes: 0,
        l1_meta_bytes: 0,
        ..CacheConfig::default()
    };
    let expected = {
        let l2 = Arc::new(disk());
        assert!(l2.verifies_payload());
        let cache = BlockCache::new(tiny.clone(), source.clone(), Some(l2.clone()));
        let reader = SstReader::open(cache.family(FamilyCachePolicy::default()), f.clone())
            .await
            .unwrap();
        let cells = scan_cells(&reader).await;
        assert_eq!(cells.len(), 2000);
        l2.close();
        cells
    };
    // Flip one byte in every 2,000 of the first three quarters of every slot
    // file: entries, not the segment's index at its end (a damaged index
    // makes recovery scan the entries, which stops at the first bad one).
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let p = entry.unwrap().path();
        if !p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("slot-")
        {
            continue;
        }
        let mut bytes = std::fs::read(&p).unwrap();
        for at in (1000..bytes.len() * 3 / 4).step_by(2000) {
            bytes[at] ^= 0x5a;
        }
        std::fs::write(&p, bytes).unwrap();
    }
    let l2 = Arc::new(disk());
    assert!(l2.wait_recovered(std::time::Duration::from_secs(5)));
    let cache = BlockCache::new(tiny, source.clone(), Some(l2.clone()));
    let reader = SstReader::open(cache.family(FamilyCachePolicy::default()), f)
        .await
        .unwrap();
    let before = source.fetch_count();
    assert_eq!(scan_cells(&reader).await, expected, "never wrong data");
    let m = cache.metrics();
    assert!(m.l2_hits > 0, "undamaged entries still hit: {m:?}");
    assert!(
        m.l2.as_ref().is_some_and(|d| d.corrupt > 0),
        "damaged entries were found: {m:?}"
    );
    assert!(
        source.fetch_count() > before,
        "damaged entries are read from the source"
    );
}
