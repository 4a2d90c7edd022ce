//! Prefetch-on-open: when a region opens, its files' blocks are copied into L2
//! in the background, so the cache is warm before the reads arrive.
//!
//! A prefetch is rate-limited (bytes per second), skips blocks L2 already
//! holds, reports progress (bytes done of bytes total) through the cache
//! metrics and its handle, and stops promptly when cancelled (the region
//! closed) or when its handle is dropped.

use super::BlockCache;
use crate::sst::{BlockAddr, BlockKind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The blocks of one file to prefetch.
#[derive(Debug, Clone)]
pub struct PrefetchFile {
    /// Object path of the file.
    pub path: String,
    /// Its data blocks.
    pub blocks: Vec<BlockAddr>,
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
    /// Blocks whose fetch failed (left for reads to fetch).
    pub failed_blocks: AtomicU64,
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
        let (cancel, mut cancelled) = watch::channel(false);
        let cache = self.clone();
        let p = progress.clone();
        let task = tokio::spawn(async move {
            let Some(l2) = cache.inner.l2.clone() else {
                return;
            };
            let start = Instant::now();
            let mut done = 0u64;
            for file in files {
                for addr in file.blocks {
                    if *cancelled.borrow() {
                        return;
                    }
                    if l2.contains(addr.file, addr.offset) {
                        p.skipped_blocks.fetch_add(1, Ordering::Relaxed);
                    } else {
                        match cache
                            .block_frame(&file.path, addr, BlockKind::Data, true)
                            .await
                        {
                            Ok(_) => p.fetched_blocks.fetch_add(1, Ordering::Relaxed),
                            Err(e) => {
                                tracing::debug!(path = %file.path, offset = addr.offset, error = %e, "prefetch fetch failed");
                                p.failed_blocks.fetch_add(1, Ordering::Relaxed)
                            }
                        };
                    }
                    done += addr.len;
                    p.done_bytes.fetch_add(addr.len, Ordering::Relaxed);
                    cache
                        .inner
                        .prefetch_done
                        .fetch_add(addr.len, Ordering::Relaxed);
                    if bytes_per_sec > 0 {
                        let due = Duration::from_secs_f64(done as f64 / bytes_per_sec as f64);
                        let elapsed = start.elapsed();
                        if due > elapsed {
                            tokio::select! {
                                _ = tokio::time::sleep(due - elapsed) => {}
                                _ = cancelled.changed() => {}
                            }
                        }
                    }
                }
            }
        });
        PrefetchHandle {
            cancel,
            progress,
            task: Some(task),
        }
    }
}
