//! A set of data blocks' footprint in the cache: how many of their bytes
//! each tier holds. The cluster's cache facts are made of these (each server
//! reports, per region it holds or held, what its L1 and L2 keep), so the
//! master can place a region where its blocks already are.

use super::BlockCache;
use crate::sst::BlockAddr;

/// Bytes of a set of data blocks, and how many of them each tier holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Bytes of all the blocks (their frames).
    pub total: u64,
    /// Bytes of those in L1.
    pub l1: u64,
    /// Bytes of those in L2.
    pub l2: u64,
    /// Bytes of those in either tier (what a reader finds without the
    /// object store).
    pub cached: u64,
}

impl Footprint {
    /// Adds another set's figures.
    pub fn add(&mut self, other: Footprint) {
        self.total += other.total;
        self.l1 += other.l1;
        self.l2 += other.l2;
        self.cached += other.cached;
    }
}

impl BlockCache {
    /// Where `blocks` are cached now. Counts no hit or miss and touches no
    /// entry's recency (a report must not keep blocks warm).
    pub fn footprint<'a>(&self, blocks: impl IntoIterator<Item = &'a BlockAddr>) -> Footprint {
        let inner = &self.inner;
        let mut f = Footprint::default();
        for b in blocks {
            let key = (b.file, b.offset);
            let l1 = inner.data.contains(&key) || inner.in_memory.contains(&key);
            let l2 = inner
                .l2
                .as_ref()
                .is_some_and(|l2| l2.contains(b.file, b.offset));
            f.total += b.len;
            f.l1 += if l1 { b.len } else { 0 };
            f.l2 += if l2 { b.len } else { 0 };
            f.cached += if l1 || l2 { b.len } else { 0 };
        }
        f
    }
}
