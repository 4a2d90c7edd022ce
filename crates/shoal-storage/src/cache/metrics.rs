//! Cache metrics as plain data, for the server's Prometheus export.

use super::l1::{Pool, Weighted};
use std::hash::Hash;
use std::sync::atomic::Ordering;

/// One L1 pool's counters and gauges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolSnapshot {
    /// Lookups that found the entry.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Entries added.
    pub inserts: u64,
    /// Entries evicted to make room.
    pub evictions: u64,
    /// Inserts refused (an entry larger than a shard's budget).
    pub rejected: u64,
    /// Bytes charged (entries plus per-entry overhead).
    pub bytes_used: u64,
    /// Budget left.
    pub bytes_free: u64,
    /// Entries held.
    pub entries: u64,
}

impl PoolSnapshot {
    pub(crate) fn of<K: Hash + Eq + Clone, V: Weighted>(pool: &Pool<K, V>) -> PoolSnapshot {
        let c = &pool.counters;
        let (used, entries) = pool.usage();
        PoolSnapshot {
            hits: c.hits.load(Ordering::Relaxed),
            misses: c.misses.load(Ordering::Relaxed),
            inserts: c.inserts.load(Ordering::Relaxed),
            evictions: c.evictions.load(Ordering::Relaxed),
            rejected: c.rejected.load(Ordering::Relaxed),
            bytes_used: used as u64,
            bytes_free: pool.capacity().saturating_sub(used) as u64,
            entries: entries as u64,
        }
    }

    /// hits / (hits + misses), or 0 with no lookups.
    pub fn hit_ratio(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            0.0
        } else {
            self.hits as f64 / total as f64
        }
    }
}

/// Every tier's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheMetricsSnapshot {
    /// L1 pool of decoded data blocks.
    pub data: PoolSnapshot,
    /// L1 pool of in-memory families' data blocks.
    pub in_memory: PoolSnapshot,
    /// L1 pool of file tails (index, bloom, meta).
    pub meta: PoolSnapshot,
    /// L1 pool of whole rows for point gets.
    pub rows: PoolSnapshot,
    /// L2 lookups that returned a sound frame.
    pub l2_hits: u64,
    /// L2 lookups that did not (including corrupt entries).
    pub l2_misses: u64,
    /// L2 entries that failed their checksum (counted as misses too).
    pub l2_corrupt: u64,
    /// Object-store requests caused by misses.
    pub object_store_gets: u64,
    /// Bytes those requests returned.
    pub object_store_bytes: u64,
    /// Misses that joined a fetch already in flight instead of sending a request.
    pub shared_misses: u64,
    /// Bytes all prefetches set out to warm.
    pub prefetch_bytes_total: u64,
    /// Bytes prefetches have warmed (or found cached) so far.
    pub prefetch_bytes_done: u64,
    /// The peer tier's figures (cluster mode), both directions.
    pub peer: super::PeerSnapshot,
    /// The L2 tier's own figures (inserts, drops, evictions, bytes, index
    /// memory, recovery), when there is an L2.
    pub l2: Option<super::DiskCacheMetrics>,
}
