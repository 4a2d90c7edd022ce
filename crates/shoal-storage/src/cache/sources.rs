//! Where one region's blocks came from: counters the cache adds to as it
//! serves a region's reads and prefetches, by tier (L1, L2, a peer's L2,
//! the object store).
//!
//! The server keeps one [`BlockSources`] per region it has touched, across
//! closes and reopens, so a region that moved here shows how its first reads
//! and its warm-up were served: from a former owner's cache or from the
//! object store. Reads count the tier that answered them; prefetches
//! (warm-up on open and warm handoffs) count apart, and only what they
//! copied (a block L2 already held is not a read), so a read hit ratio is
//! not diluted by background copying.

use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};

/// One region's block sources (shared by its families' cache views and its
/// prefetches).
#[derive(Debug, Default)]
pub struct BlockSources {
    l1: AtomicU64,
    l2: AtomicU64,
    peer: AtomicU64,
    store_blocks: AtomicU64,
    prefetch_peer: AtomicU64,
    prefetch_store: AtomicU64,
    store_gets: AtomicU64,
}

/// Which tier served a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    L1,
    L2,
    Peer,
    /// The object store; `gets` is 1 for a block read alone, 0 for the
    /// later blocks of one ranged GET.
    Store {
        gets: u64,
    },
    /// Copied by a prefetch from a peer's L2.
    PrefetchPeer,
    /// Copied by a prefetch from the object store (`gets` as for `Store`).
    PrefetchStore {
        gets: u64,
    },
}

impl BlockSources {
    pub(crate) fn count(&self, source: Source) {
        let c = match source {
            Source::L1 => &self.l1,
            Source::L2 => &self.l2,
            Source::Peer => &self.peer,
            Source::Store { gets } => {
                self.store_gets.fetch_add(gets, Ordering::Relaxed);
                &self.store_blocks
            }
            Source::PrefetchPeer => &self.prefetch_peer,
            Source::PrefetchStore { gets } => {
                self.store_gets.fetch_add(gets, Ordering::Relaxed);
                &self.prefetch_store
            }
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts so far.
    pub fn snapshot(&self) -> BlockSourcesSnapshot {
        BlockSourcesSnapshot {
            l1: self.l1.load(Ordering::Relaxed),
            l2: self.l2.load(Ordering::Relaxed),
            peer: self.peer.load(Ordering::Relaxed),
            object_store: self.store_blocks.load(Ordering::Relaxed),
            prefetch_peer: self.prefetch_peer.load(Ordering::Relaxed),
            prefetch_object_store: self.prefetch_store.load(Ordering::Relaxed),
            object_store_gets: self.store_gets.load(Ordering::Relaxed),
        }
    }
}

/// A region's block sources at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BlockSourcesSnapshot {
    /// Data blocks reads found decoded in memory.
    pub l1: u64,
    /// Data blocks reads found in this server's L2.
    pub l2: u64,
    /// Data blocks reads got from a former owner's L2.
    pub peer: u64,
    /// Data blocks reads got from the object store.
    pub object_store: u64,
    /// Data blocks prefetches copied from a former owner's L2.
    pub prefetch_peer: u64,
    /// Data blocks prefetches copied from the object store.
    pub prefetch_object_store: u64,
    /// Object-store GETs for the blocks of reads and prefetches (a prefetch
    /// reads a run of blocks in one GET).
    pub object_store_gets: u64,
}

impl BlockSourcesSnapshot {
    /// Blocks reads asked for.
    pub fn reads(&self) -> u64 {
        self.l1 + self.l2 + self.peer + self.object_store
    }

    /// Blocks from every tier, reads and prefetches.
    pub fn total(&self) -> u64 {
        self.reads() + self.prefetch_peer + self.prefetch_object_store
    }

    /// Fraction of all blocks (reads and prefetches) that came from the
    /// object store, if any came.
    pub fn object_store_fraction(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| (self.object_store + self.prefetch_object_store) as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_tier_and_gets_separately() {
        let s = BlockSources::default();
        s.count(Source::L1);
        s.count(Source::L1);
        s.count(Source::L2);
        s.count(Source::Peer);
        s.count(Source::Store { gets: 1 });
        s.count(Source::Store { gets: 0 });
        s.count(Source::PrefetchPeer);
        s.count(Source::PrefetchStore { gets: 1 });
        let snap = s.snapshot();
        assert_eq!(
            snap,
            BlockSourcesSnapshot {
                l1: 2,
                l2: 1,
                peer: 1,
                object_store: 2,
                prefetch_peer: 1,
                prefetch_object_store: 1,
                object_store_gets: 2
            }
        );
        assert_eq!(snap.reads(), 6);
        assert_eq!(snap.total(), 8);
        assert_eq!(snap.object_store_fraction(), Some(3.0 / 8.0));
        assert_eq!(
            BlockSourcesSnapshot::default().object_store_fraction(),
            None
        );
    }
}
