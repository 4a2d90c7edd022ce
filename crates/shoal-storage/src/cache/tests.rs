//! Block cache behaviour over an in-memory source.

use super::*;
use crate::cell::{Cell, KeyRef};
use crate::sst::{MemoryFetcher, ScanRange, SstFile, SstReader, SstWriter, SstWriterOptions};
use std::collections::HashMap;
use std::sync::Mutex;

async fn file(rows: u32, id: u128) -> (Arc<MemoryFetcher>, SstFile) {
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
        in_memory: false,
    });
    let reader = SstReader::open(no_fill, f.clone()).await.unwrap();
    scan_all(&reader).await;
    assert_eq!(cache.metrics().data.entries, 0);
    let hot = cache.family(FamilyCachePolicy {
        cache_data_on_read: true,
        in_memory: true,
    });
    let reader = SstReader::open(hot, f).await.unwrap();
    scan_all(&reader).await;
    let m = cache.metrics();
    assert_eq!(m.data.entries, 0);
    assert_eq!(m.in_memory.entries, reader.data_block_count() as u64);
}
