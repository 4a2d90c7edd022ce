//! Filling L1 from L2 when a region opens: after the prefetch has made L2
//! hold the region's blocks, the blocks are decoded into L1 in the
//! background while L1 has room for them, so the first reads after a
//! restart find decoded blocks instead of each paying an L2 read, a
//! checksum and a decode on the request path.
//!
//! The fill never chooses which blocks deserve L1: it runs for a family's
//! blocks only when L1 has room for all of them (after a restart with L1
//! larger than the data, say). With less room, L1 is left to the reads,
//! which bring in the blocks that are hot; arbitrary blocks filled in their
//! place would only cost a decode each (measured: a rolling restart with
//! an 8 MiB L1 per server lost throughput when the fill ran there).
//!
//! The fill never evicts (a block goes in only if its L1 shard has room),
//! never reads the object store (only blocks L2 returns), verifies every
//! frame's checksum like any read, yields to other tasks after each block,
//! and stops when the prefetch is cancelled (the region closed).
//!
//! It runs on a thread of its own at the lowest CPU priority (`nice` 19 on
//! Linux), not on the runtime that serves requests: a restart's fill is
//! seconds of checksums and decodes, and on a small machine it took a core
//! from the requests of the server's first seconds (measured at 3,000 paced
//! inserts/s just after a restart: a first second with p99 41 ms where the
//! rest of the run stayed under 10 ms, and none without the fill). At the
//! lowest priority it uses what the requests leave.

use super::prefetch::PrefetchProgress;
use super::{BlockCache, FamilyCachePolicy, L2};
use crate::sst::{Block, BlockAddr, unseal, unseal_verified};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use tokio::sync::watch;

/// The runtime fills run on: one thread ("shoal-l1-fill") at the lowest CPU
/// priority, started on first use and kept for the process. `None` if the
/// thread could not start (fills then run where they are called).
fn fill_runtime() -> Option<&'static tokio::runtime::Handle> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Handle>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .thread_name("shoal-l1-fill-io")
                .build()
                .ok()?;
            let handle = runtime.handle().clone();
            std::thread::Builder::new()
                .name("shoal-l1-fill".into())
                .spawn(move || {
                    lowest_priority();
                    runtime.block_on(std::future::pending::<()>());
                })
                .ok()?;
            Some(handle)
        })
        .as_ref()
}

/// Gives the calling thread the lowest CPU priority (threads it starts, such
/// as its runtime's blocking threads, inherit it).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn lowest_priority() {
    // SAFETY: setpriority takes plain integers and touches no memory of
    // ours; on Linux, PRIO_PROCESS with id 0 means the calling thread. A
    // failure leaves the priority as it was, which is only slower.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
    if rc != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "could not lower the L1 fill's priority");
    }
}

#[cfg(not(target_os = "linux"))]
fn lowest_priority() {}

/// [`fill_l1`] on the fill thread; returns when it has ended.
pub(super) async fn fill_l1_in_background(
    cache: BlockCache,
    l2: Arc<dyn L2>,
    files: Vec<(FamilyCachePolicy, Vec<BlockAddr>)>,
    cancelled: watch::Receiver<bool>,
    progress: Arc<PrefetchProgress>,
) {
    let fill = async move { fill_l1(&cache, &l2, &files, &cancelled, &progress).await };
    match fill_runtime() {
        Some(runtime) => {
            // A panic in the fill is its own; the region goes on without it.
            let _ = runtime.spawn(fill).await;
        }
        None => fill.await,
    }
}

/// Copies `blocks` that L2 holds into the L1 pool of `policy`, while it has
/// room; returns early if `cancelled` turns true.
pub(super) async fn fill_l1(
    cache: &BlockCache,
    l2: &Arc<dyn L2>,
    files: &[(FamilyCachePolicy, Vec<BlockAddr>)],
    cancelled: &watch::Receiver<bool>,
    progress: &PrefetchProgress,
) {
    let files: Vec<_> = files.iter().filter(|(p, _)| p.cache_data_on_read).collect();
    for (policy, blocks) in &files {
        let pool = cache.pool(policy);
        // Bytes the fill would add to this pool, over every file it fills.
        let wanted: u64 = files
            .iter()
            .filter(|(p, _)| std::ptr::eq(cache.pool(p), pool))
            .flat_map(|(_, blocks)| blocks)
            .map(|b| b.len + super::l1::ENTRY_OVERHEAD as u64)
            .sum();
        if pool.free_bytes() < wanted {
            continue;
        }
        for addr in blocks {
            if *cancelled.borrow() {
                return;
            }
            let key = (addr.file, addr.offset);
            if pool.contains(&key) {
                continue;
            }
            let Some(frame) = l2.get(addr.file, addr.offset).await else {
                continue;
            };
            if frame.len() as u64 != addr.len {
                continue;
            }
            // A frame that fails its checksum is left for a read to find
            // (and count) and fetch again.
            let raw = if l2.verifies_payload() {
                unseal_verified(&frame)
            } else {
                unseal(&frame)
            };
            let Ok(raw) = raw else {
                continue;
            };
            let Ok(block) = Block::new(raw) else {
                continue;
            };
            if pool.insert_if_room(key, block) {
                progress.l1_blocks.fetch_add(1, Ordering::Relaxed);
            }
            tokio::task::yield_now().await;
        }
    }
}
