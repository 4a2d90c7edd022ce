//! The memstore: a column family's recent writes, in memory, in cell order.
//!
//! A [`Memstore`] is one *active* [`Segment`] (a lock-free skiplist that writers
//! insert into concurrently) plus a list of *frozen* segments waiting to be
//! flushed. Freezing swaps in a fresh active segment in O(1), so a flush never
//! blocks writers: they only take a shared lock on the active-segment pointer,
//! and the freeze takes the exclusive side for the duration of a pointer swap.
//!
//! Size accounting is O(1) per write (atomic adds of the cell's bytes plus a
//! fixed per-entry overhead); nothing walks a segment under a lock.
//!
//! Invariants:
//! - A segment never holds two cells with the same key (an identical re-insert,
//!   as WAL replay can produce, replaces the value with the same bytes).
//! - Frozen segments are immutable and ordered oldest first; a segment leaves
//!   the list only after the file holding its cells is committed.

mod segment;

pub(crate) use segment::to_cell;
pub use segment::{MemKey, Segment};

use crate::cell::{Cell, CellError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

/// One column family's in-memory writes.
#[derive(Debug, Default)]
pub struct Memstore {
    active: RwLock<Arc<Segment>>,
    frozen: RwLock<Vec<Arc<Segment>>>,
    bytes: AtomicUsize,
}

impl Memstore {
    /// An empty memstore.
    pub fn new() -> Memstore {
        Memstore::default()
    }

    /// Inserts a cell into the active segment.
    pub fn insert(&self, cell: &Cell) -> Result<(), CellError> {
        let active = self.active.read().unwrap_or_else(|e| e.into_inner());
        let added = active.insert(cell)?;
        self.bytes.fetch_add(added, Ordering::Relaxed);
        Ok(())
    }

    /// Accounted bytes across the active and frozen segments.
    pub fn size(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Accounted bytes of the active segment only.
    pub fn active_size(&self) -> usize {
        self.active.read().unwrap_or_else(|e| e.into_inner()).size()
    }

    /// Freezes the active segment (if it holds anything) and starts a new one.
    /// Returns the newly frozen segment.
    pub fn freeze(&self) -> Option<Arc<Segment>> {
        let mut active = self.active.write().unwrap_or_else(|e| e.into_inner());
        if active.is_empty() {
            return None;
        }
        let old = std::mem::replace(&mut *active, Arc::new(Segment::new()));
        // Publish to the frozen list before releasing the active lock, so a
        // reader that takes the segment list never misses the frozen cells.
        self.frozen
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(old.clone());
        Some(old)
    }

    /// Frozen segments, oldest first.
    pub fn frozen(&self) -> Vec<Arc<Segment>> {
        self.frozen
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Drops frozen segments whose cells are now in a committed file.
    pub fn remove_flushed(&self, flushed: &[Arc<Segment>]) {
        let mut frozen = self.frozen.write().unwrap_or_else(|e| e.into_inner());
        frozen.retain(|s| {
            let gone = flushed.iter().any(|f| Arc::ptr_eq(f, s));
            if gone {
                self.bytes.fetch_sub(s.size(), Ordering::Relaxed);
            }
            !gone
        });
    }

    /// Every segment, newest first (active, then frozen from newest): what a read
    /// must merge. Taken under the active lock so a concurrent freeze cannot make
    /// a segment appear in neither place.
    pub fn segments(&self) -> Vec<Arc<Segment>> {
        let active = self.active.read().unwrap_or_else(|e| e.into_inner());
        let frozen = self.frozen.read().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::with_capacity(frozen.len() + 1);
        out.push(active.clone());
        out.extend(frozen.iter().rev().cloned());
        out
    }

    /// True if no segment holds a cell.
    pub fn is_empty(&self) -> bool {
        self.segments().iter().all(|s| s.is_empty())
    }
}

#[cfg(test)]
mod tests;
