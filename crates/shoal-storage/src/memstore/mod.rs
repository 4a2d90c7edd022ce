//! The memstore: a column family's recent writes, in memory, in cell order.
//!
//! A [`Memstore`] is one *active* [`Segment`] (a lock-free skiplist that writers
//! insert into concurrently), a *pipeline* of immutable segments, and the
//! segments a flush is writing. In-memory compaction rotates a full active
//! segment into the pipeline, flattens it into a compact sorted array and
//! merges flat segments when they pile up; a flush takes the whole pipeline.
//! Rotating and freezing swap in a fresh active segment in O(1), so neither
//! blocks writers: they only take a shared lock on the active-segment
//! pointer, and the swap takes the exclusive side for a pointer swap.
//! Flattening and merging build the new segment outside every lock and
//! install it with a pointer swap (if a flush took the inputs meanwhile, the
//! work is discarded).
//!
//! Size accounting is O(1) per write (atomic adds of the cell's bytes plus a
//! fixed per-entry overhead); nothing walks a segment under a lock.
//!
//! Invariants:
//! - A segment never holds two cells with the same key (an identical re-insert,
//!   as WAL replay can produce, replaces the value with the same bytes).
//! - Pipeline and flushing segments are immutable and ordered oldest first; a
//!   segment leaves the memstore only after the file holding its cells is
//!   committed. A replacement (flattened or merged) holds exactly the cells a
//!   read at any current or future read point sees in what it replaces.

mod budget;
mod compact;
mod flat;
mod segment;

pub use budget::{BudgetOptions, BudgetStats, MemstoreBudget, WeakBudget};
pub use compact::{InMemoryCompaction, MergeStats, merge};
pub use flat::{FlatBuilder, FlatCells};
pub(crate) use segment::to_cell;
pub use segment::{ENTRY_OVERHEAD, MemKey, Segment};

use crate::cell::{Cell, CellError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

/// One column family's in-memory writes.
#[derive(Debug, Default)]
pub struct Memstore {
    active: RwLock<Arc<Segment>>,
    /// Immutable segments not yet taken by a flush, oldest first: skiplists
    /// waiting to be flattened, and flat segments.
    pipeline: RwLock<Vec<Arc<Segment>>>,
    /// Segments a flush is writing (or failed to write and will retry),
    /// oldest first. All are older than every pipeline segment.
    flushing: RwLock<Vec<Arc<Segment>>>,
    bytes: AtomicUsize,
    /// The server-wide budget this memstore's bytes count against.
    budget: Option<MemstoreBudget>,
}

impl Drop for Memstore {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.sub(self.bytes.load(Ordering::Relaxed));
        }
    }
}

/// What one in-memory compaction pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PipelineReport {
    /// Skiplist segments flattened.
    pub flattened: usize,
    /// Merges of flat segments.
    pub merges: usize,
    /// Cells dropped by eager merges.
    pub cells_dropped: usize,
    /// Change of the accounted bytes (negative: memory freed).
    pub bytes_delta: isize,
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

impl Memstore {
    /// An empty memstore.
    pub fn new() -> Memstore {
        Memstore::default()
    }

    /// An empty memstore whose bytes count against `budget`.
    pub fn with_budget(budget: MemstoreBudget) -> Memstore {
        Memstore {
            active: RwLock::default(),
            pipeline: RwLock::default(),
            flushing: RwLock::default(),
            bytes: AtomicUsize::new(0),
            budget: Some(budget),
        }
    }

    /// Inserts a cell into the active segment; returns the bytes it added.
    pub fn insert(&self, cell: &Cell) -> Result<usize, CellError> {
        let active = read(&self.active);
        let added = active.insert(cell)?;
        self.bytes.fetch_add(added, Ordering::Relaxed);
        if let Some(b) = &self.budget {
            b.add(added);
        }
        Ok(added)
    }

    /// Accounted bytes across all segments.
    pub fn size(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Accounted bytes of the active segment only.
    pub fn active_size(&self) -> usize {
        read(&self.active).size()
    }

    /// Moves the active segment (if it holds anything) to the end of the
    /// pipeline and starts a new one: O(1), for in-memory compaction.
    /// Returns false if the active segment was empty.
    pub fn rotate(&self) -> bool {
        let mut active = write(&self.active);
        if active.is_empty() {
            return false;
        }
        let old = std::mem::replace(&mut *active, Arc::new(Segment::new()));
        // Publish before releasing the active lock, so a reader that takes
        // the segment list never misses the rotated cells.
        write(&self.pipeline).push(old);
        true
    }

    /// [`Memstore::rotate`], if the active segment still holds at least
    /// `min_bytes` once the exclusive lock is held (concurrent writers that
    /// all saw it full rotate it once).
    pub fn rotate_if_at_least(&self, min_bytes: usize) -> bool {
        let mut active = write(&self.active);
        if active.is_empty() || active.size() < min_bytes {
            return false;
        }
        let old = std::mem::replace(&mut *active, Arc::new(Segment::new()));
        write(&self.pipeline).push(old);
        true
    }

    /// Takes everything written so far for a flush: the active segment is
    /// rotated and the whole pipeline joins the segments being flushed.
    /// Returns every segment the flush must write, oldest first (including
    /// those of an earlier flush that failed).
    pub fn freeze_for_flush(&self) -> Vec<Arc<Segment>> {
        let mut active = write(&self.active);
        let mut pipeline = write(&self.pipeline);
        let mut flushing = write(&self.flushing);
        if !active.is_empty() {
            let old = std::mem::replace(&mut *active, Arc::new(Segment::new()));
            pipeline.push(old);
        }
        flushing.append(&mut pipeline);
        flushing.clone()
    }

    /// Segments a flush holds, oldest first.
    pub fn flushing(&self) -> Vec<Arc<Segment>> {
        read(&self.flushing).clone()
    }

    /// Immutable segments not yet taken by a flush, oldest first.
    pub fn pipeline(&self) -> Vec<Arc<Segment>> {
        read(&self.pipeline).clone()
    }

    /// Drops flushed segments whose cells are now in a committed file.
    /// Returns the bytes released.
    pub fn remove_flushed(&self, flushed: &[Arc<Segment>]) -> usize {
        let mut flushing = write(&self.flushing);
        let mut released = 0;
        flushing.retain(|s| {
            let gone = flushed.iter().any(|f| Arc::ptr_eq(f, s));
            if gone {
                released += s.size();
            }
            !gone
        });
        self.bytes.fetch_sub(released, Ordering::Relaxed);
        if let Some(b) = &self.budget {
            b.sub(released);
        }
        released
    }

    /// Replaces `old` (a run of adjacent pipeline segments) with `new`, if
    /// the run is still in the pipeline (a flush may have taken it). Returns
    /// the change of accounted bytes.
    fn replace_in_pipeline(&self, old: &[Arc<Segment>], new: Segment) -> Option<isize> {
        let mut pipeline = write(&self.pipeline);
        let head = old.first()?;
        let first = pipeline.iter().position(|s| Arc::ptr_eq(s, head))?;
        let run = pipeline.get(first..first + old.len())?;
        if !run.iter().zip(old).all(|(a, b)| Arc::ptr_eq(a, b)) {
            return None;
        }
        let before: usize = old.iter().map(|s| s.size()).sum();
        let after = new.size();
        pipeline.splice(first..first + old.len(), [Arc::new(new)]);
        if after >= before {
            self.bytes.fetch_add(after - before, Ordering::Relaxed);
        } else {
            self.bytes.fetch_sub(before - after, Ordering::Relaxed);
        }
        if let Some(b) = &self.budget {
            b.apply(after as isize - before as isize);
        }
        Some(after as isize - before as isize)
    }

    /// One in-memory compaction pass: flattens the pipeline's skiplist
    /// segments, then merges the pipeline into one flat segment if it holds
    /// more than `max_segments`. With the eager policy the merge drops what
    /// no reader can see; `smallest_read_point` is asked right before it.
    pub fn compact_pipeline(
        &self,
        policy: InMemoryCompaction,
        max_segments: usize,
        smallest_read_point: impl Fn() -> u64,
    ) -> PipelineReport {
        let mut report = PipelineReport::default();
        if policy == InMemoryCompaction::None {
            return report;
        }
        for seg in self.pipeline() {
            if seg.is_flat() {
                continue;
            }
            let flat = seg.flatten();
            if let Some(d) = self.replace_in_pipeline(std::slice::from_ref(&seg), flat) {
                report.flattened += 1;
                report.bytes_delta += d;
            }
        }
        let pipeline = self.pipeline();
        if pipeline.len() > max_segments.max(1) && pipeline.iter().all(|s| s.is_flat()) {
            let eager = (policy == InMemoryCompaction::Eager).then(&smallest_read_point);
            if let Some((merged, stats)) = merge(&pipeline, eager)
                && let Some(d) = self.replace_in_pipeline(&pipeline, merged)
            {
                report.merges += 1;
                report.cells_dropped += stats.cells_in - stats.cells_out;
                report.bytes_delta += d;
            }
        }
        report
    }

    /// Every segment, newest first (active, then the pipeline and the
    /// flushing segments from newest): what a read must merge. Taken under
    /// the active lock so a concurrent rotation or freeze cannot make a
    /// segment appear in neither place.
    pub fn segments(&self) -> Vec<Arc<Segment>> {
        let active = read(&self.active);
        let pipeline = read(&self.pipeline);
        let flushing = read(&self.flushing);
        let mut out = Vec::with_capacity(pipeline.len() + flushing.len() + 1);
        out.push(active.clone());
        out.extend(pipeline.iter().rev().cloned());
        out.extend(flushing.iter().rev().cloned());
        out
    }

    /// True if no segment holds a cell.
    pub fn is_empty(&self) -> bool {
        self.segments().iter().all(|s| s.is_empty())
    }
}

/// The cells of several segments (oldest first) as one stream in cell order,
/// each key once (the newest segment's copy): what a flush writes.
pub fn merged_cells(segments: &[Arc<Segment>]) -> impl Iterator<Item = Cell> + Send + '_ {
    let mut iters: Vec<_> = segments.iter().rev().map(|s| s.iter()).collect();
    let mut heads: Vec<Option<Cell>> = iters.iter_mut().map(|it| it.next()).collect();
    std::iter::from_fn(move || {
        let mut best: Option<usize> = None;
        for (i, head) in heads.iter().enumerate() {
            let Some(c) = head else { continue };
            if best
                .and_then(|b| heads[b].as_ref())
                .is_none_or(|cur| c.key() < cur.key())
            {
                best = Some(i);
            }
        }
        let b = best?;
        let out = heads[b].take()?;
        heads[b] = iters[b].next();
        for (i, it) in iters.iter_mut().enumerate() {
            if i != b {
                while heads[i].as_ref().is_some_and(|c| c.key() == out.key()) {
                    heads[i] = it.next();
                }
            }
        }
        Some(out)
    })
}

#[cfg(test)]
mod tests;
