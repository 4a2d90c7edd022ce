//! Prefetch-on-open: when a region opens, its files' blocks are copied into L2
//! in the background, so the cache is warm before the reads arrive.
//!
//! A prefetch is rate-limited (bytes per second), skips blocks L2 already
//! holds, reports progress (bytes done of bytes total) through the cache
//! metrics and its handle, and stops promptly when cancelled (the region
//! closed) or when its handle is dropped.
//!
//! Consecutive missing blocks are read together: one ranged GET of up to
//! [`RUN_BYTES`], cut into frames that are each verified before they enter
//! L2, with [`RUNS_IN_FLIGHT`] GETs at once. One GET per 64 KiB block would
//! spend a first-byte latency (~30 ms on S3) per block: about 2 MB/s.
//! With a peer tier (cluster mode), a run is first asked of the peer that
//! served the region before (one call for the run); only the blocks it
//! does not hold are read from the object store. Then, for a region that
//! opens, the blocks go on from L2 into L1 while it has room (`fill_l1`).

use super::sources::Source;
use super::{BlockCache, BlockSources, FamilyCachePolicy};
use crate::sst::{BlockAddr, BlockKind};
use futures::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Most bytes one prefetch GET reads (consecutive blocks of one file).
pub const RUN_BYTES: u64 = 8 << 20;
/// Prefetch GETs in flight at once, per prefetch.
pub const RUNS_IN_FLIGHT: usize = 4;

/// The blocks of one file to prefetch.
#[derive(Debug, Clone)]
pub struct PrefetchFile {
    /// Object path of the file.
    pub path: String,
    /// Its data blocks.
    pub blocks: Vec<BlockAddr>,
    /// Once L2 holds the blocks, also decode them into this policy's L1
    /// pool while it has room (a region opening); `None` warms L2 only (a
    /// warm-up ahead of a move).
    pub l1: Option<FamilyCachePolicy>,
}

/// Progress of one prefetch.
#[derive(Debug, Default)]
pub struct PrefetchProgress {
    /// Bytes the prefetch set out to warm.
    pub total_bytes: AtomicU64,
    /// Bytes warmed or found already cached.
    pub done_bytes: AtomicU64,
    /// Blocks L2 already held.
    pub skipped_blocks: AtomicU64,
    /// Blocks fetched from the object store.
    pub fetched_blocks: AtomicU64,
    /// Blocks copied from a peer's L2 instead.
    pub peer_blocks: AtomicU64,
    /// Blocks whose fetch failed (left for reads to fetch).
    pub failed_blocks: AtomicU64,
    /// Blocks decoded from L2 into L1 after the copy.
    pub l1_blocks: AtomicU64,
}

/// Controls a running prefetch; dropping it cancels the prefetch.
#[derive(Debug)]
pub struct PrefetchHandle {
    cancel: watch::Sender<bool>,
    progress: Arc<PrefetchProgress>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl PrefetchHandle {
    /// Progress so far (shared: it keeps updating while the prefetch runs).
    pub fn progress(&self) -> Arc<PrefetchProgress> {
        self.progress.clone()
    }

    /// Asks the prefetch to stop; it does so before its next block.
    pub fn cancel(&self) {
        let _ = self.cancel.send(true);
    }

    /// Waits for the prefetch to finish (or stop after a cancel).
    pub async fn wait(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for PrefetchHandle {
    fn drop(&mut self) {
        let _ = self.cancel.send(true);
    }
}

impl BlockCache {
    /// Starts copying `files`' blocks into L2 at most `bytes_per_sec` (0 =
    /// unlimited). Without an L2 there is nothing durable to warm and the
    /// prefetch finishes at once.
    pub fn prefetch(&self, files: Vec<PrefetchFile>, bytes_per_sec: u64) -> PrefetchHandle {
        self.prefetch_counted(files, bytes_per_sec, None)
    }

    /// [`BlockCache::prefetch`] for one region, whose block sources count
    /// what the prefetch copies (from a peer or the object store).
    pub fn prefetch_counted(
        &self,
        files: Vec<PrefetchFile>,
        bytes_per_sec: u64,
        sources: Option<Arc<BlockSources>>,
    ) -> PrefetchHandle {
        let progress = Arc::new(PrefetchProgress::default());
        let total: u64 = files
            .iter()
            .flat_map(|f| f.blocks.iter())
            .map(|b| b.len)
            .sum();
        progress.total_bytes.store(total, Ordering::Relaxed);
        self.inner
            .prefetch_total
            .fetch_add(total, Ordering::Relaxed);
        let (cancel, cancelled) = watch::channel(false);
        let cache = self.clone();
        let p = progress.clone();
        let task = tokio::spawn(async move {
            let Some(l2) = cache.inner.l2.clone() else {
                return;
            };
            // Runs of consecutive blocks L2 lacks; blocks it holds count as
            // done at once.
            // A run is at most a quarter second's worth of the rate limit,
            // so a slow prefetch still advances block by block.
            let run_cap = if bytes_per_sec > 0 {
                RUN_BYTES.min(bytes_per_sec / 4)
            } else {
                RUN_BYTES
            };
            let l1_files: Vec<(FamilyCachePolicy, Vec<BlockAddr>)> = files
                .iter()
                .filter_map(|f| Some((f.l1?, f.blocks.clone())))
                .collect();
            let mut runs: Vec<(Arc<str>, Vec<BlockAddr>)> = Vec::new();
            for file in files {
                let path: Arc<str> = Arc::from(file.path.as_str());
                let mut run: Vec<BlockAddr> = Vec::new();
                for addr in file.blocks {
                    if l2.contains(addr.file, addr.offset) {
                        p.skipped_blocks.fetch_add(1, Ordering::Relaxed);
                        p.done_bytes.fetch_add(addr.len, Ordering::Relaxed);
                        cache
                            .inner
                            .prefetch_done
                            .fetch_add(addr.len, Ordering::Relaxed);
                        if !run.is_empty() {
                            runs.push((path.clone(), std::mem::take(&mut run)));
                        }
                        continue;
                    }
                    let contiguous = run
                        .last()
                        .is_none_or(|l: &BlockAddr| l.offset + l.len == addr.offset);
                    let run_bytes: u64 = run.iter().map(|b| b.len).sum();
                    if !run.is_empty() && (!contiguous || run_bytes + addr.len > run_cap) {
                        runs.push((path.clone(), std::mem::take(&mut run)));
                    }
                    run.push(addr);
                }
                if !run.is_empty() {
                    runs.push((path, run));
                }
            }
            let start = Instant::now();
            let done = AtomicU64::new(0);
            let fetches = futures::stream::iter(runs.into_iter().map(|(path, blocks)| {
                let (cache, p, l2, sources) = (&cache, &p, &l2, sources.as_deref());
                let (done, mut cancelled) = (&done, cancelled.clone());
                async move {
                    if *cancelled.borrow() {
                        return;
                    }
                    // The rate limit: a run starts when the bytes before it
                    // are due (its bytes are reserved first, so runs in
                    // flight queue behind each other).
                    let bytes: u64 = blocks.iter().map(|b| b.len).sum();
                    let before = done.fetch_add(bytes, Ordering::Relaxed);
                    if bytes_per_sec > 0 {
                        let due = Duration::from_secs_f64(before as f64 / bytes_per_sec as f64);
                        let elapsed = start.elapsed();
                        if due > elapsed {
                            tokio::select! {
                                _ = tokio::time::sleep(due - elapsed) => {}
                                _ = cancelled.changed() => return,
                            }
                        }
                        if *cancelled.borrow() {
                            return;
                        }
                    }
                    let mut missing = blocks.clone();
                    if let Some(frames) = cache
                        .peer_frames(&path, &blocks, super::PeerAsk::Prefetch)
                        .await
                    {
                        missing.clear();
                        for (b, frame) in blocks.iter().zip(frames) {
                            match frame {
                                Some(frame) => {
                                    l2.insert(b.file, b.offset, frame);
                                    p.peer_blocks.fetch_add(1, Ordering::Relaxed);
                                    if let Some(s) = sources {
                                        s.count(Source::PrefetchPeer);
                                    }
                                }
                                None => missing.push(*b),
                            }
                        }
                    }
                    for run in contiguous(&missing) {
                        fetch_run(cache, l2, p, sources, &path, run).await;
                    }
                    p.done_bytes.fetch_add(bytes, Ordering::Relaxed);
                    cache
                        .inner
                        .prefetch_done
                        .fetch_add(bytes, Ordering::Relaxed);
                }
            }))
            .buffer_unordered(RUNS_IN_FLIGHT);
            let mut fetches = std::pin::pin!(fetches);
            while fetches.next().await.is_some() {
                if *cancelled.borrow() {
                    return;
                }
            }
            super::fill_l1::fill_l1_in_background(
                cache.clone(),
                l2.clone(),
                l1_files,
                cancelled.clone(),
                p.clone(),
            )
            .await;
        });
        PrefetchHandle {
            cancel,
            progress,
            task: Some(task),
        }
    }
}

/// `blocks` (ascending) cut where one does not start where the last ended.
fn contiguous(blocks: &[BlockAddr]) -> Vec<&[BlockAddr]> {
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..=blocks.len() {
        if i == blocks.len() || blocks[i - 1].offset + blocks[i - 1].len != blocks[i].offset {
            if i > start {
                runs.push(&blocks[start..i]);
            }
            start = i;
        }
    }
    runs
}

/// Reads consecutive `blocks` of `path` from the object store in one GET and
/// puts each verified frame into L2.
async fn fetch_run(
    cache: &BlockCache,
    l2: &Arc<dyn super::L2>,
    p: &PrefetchProgress,
    sources: Option<&BlockSources>,
    path: &str,
    blocks: &[BlockAddr],
) {
    let bytes: u64 = blocks.iter().map(|b| b.len).sum();
    let whole = BlockAddr {
        file: blocks[0].file,
        offset: blocks[0].offset,
        len: bytes,
    };
    match cache
        .inner
        .source
        .fetch(path, whole, BlockKind::DataNoFill)
        .await
    {
        Ok(data) if data.len() as u64 == bytes => {
            cache.inner.source_gets.fetch_add(1, Ordering::Relaxed);
            cache.inner.source_bytes.fetch_add(bytes, Ordering::Relaxed);
            for (i, b) in blocks.iter().enumerate() {
                if let Some(s) = sources {
                    s.count(Source::PrefetchStore {
                        gets: (i == 0) as u64,
                    });
                }
                let at = (b.offset - whole.offset) as usize;
                let frame = data.slice(at..at + b.len as usize);
                if super::frame_is_sound(&frame, b.len) {
                    l2.insert(b.file, b.offset, frame);
                    p.fetched_blocks.fetch_add(1, Ordering::Relaxed);
                } else {
                    tracing::debug!(path = %path, offset = b.offset, "prefetched frame failed its checksum; left for reads");
                    p.failed_blocks.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        Ok(_) | Err(_) => {
            tracing::debug!(path = %path, offset = whole.offset, len = bytes, "prefetch GET failed; the blocks are left for reads");
            p.failed_blocks
                .fetch_add(blocks.len() as u64, Ordering::Relaxed);
        }
    }
}
