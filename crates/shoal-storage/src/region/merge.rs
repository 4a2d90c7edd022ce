//! Merging iterator: the cells of several sorted sources (memstore segments and
//! SST files) as one sorted stream — ascending, or descending for reverse
//! scans — each key once.
//!
//! Sources are ordered newest first, so when two sources hold an identical key
//! (all six fields equal — the same write, as WAL replay after a flush can
//! produce) the first source's copy is returned and the others are skipped.

use crate::cell::{Cell, CellError, CellKey, KeyRef};
use crate::memstore::{MemKey, Segment};
use crate::sst::{ScanRange, SstError, SstIter, SstReader, SstRevIter};
use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

/// A memstore segment walked without holding a borrow, so the cursor can
/// live across awaits: a skiplist by re-seeking from the last key returned,
/// a flat (immutable) segment by index.
pub(crate) struct MemCursor {
    segment: Arc<Segment>,
    /// The bound to start from (taken on the first step).
    from: Option<(MemKey, bool)>,
    last: Option<MemKey>,
    /// Flat segments: the index of the last cell returned.
    pos: Option<usize>,
    /// The bound to stop at.
    stop: Bound<CellKey>,
    reverse: bool,
    done: bool,
}

impl MemCursor {
    fn new(
        segment: Arc<Segment>,
        range: &ScanRange,
        reverse: bool,
    ) -> Result<MemCursor, CellError> {
        let (from_bound, stop) = if reverse {
            (&range.end, range.start.clone())
        } else {
            (&range.start, range.end.clone())
        };
        let from = match from_bound {
            Bound::Included(k) => Some((MemKey::new(&k.as_ref())?, true)),
            Bound::Excluded(k) => Some((MemKey::new(&k.as_ref())?, false)),
            Bound::Unbounded => None,
        };
        Ok(MemCursor {
            segment,
            from,
            last: None,
            pos: None,
            stop,
            reverse,
            done: false,
        })
    }

    fn next(&mut self) -> Option<Cell> {
        if self.done {
            return None;
        }
        let seg = &self.segment;
        if let Some(flat) = seg.flat() {
            let i = match (self.pos, self.from.take(), self.reverse) {
                (Some(p), _, false) => Some(p + 1),
                (Some(p), _, true) => p.checked_sub(1),
                (None, Some((k, true)), false) => Some(flat.lower_bound(&k, false)),
                (None, Some((k, false)), false) => Some(flat.lower_bound(&k, true)),
                (None, Some((k, true)), true) => flat.lower_bound(&k, true).checked_sub(1),
                (None, Some((k, false)), true) => flat.lower_bound(&k, false).checked_sub(1),
                (None, None, false) => Some(0),
                (None, None, true) => flat.len().checked_sub(1),
            };
            let Some(cell) = i.and_then(|i| flat.cell(i)) else {
                self.done = true;
                return None;
            };
            if !self.within(&cell) {
                self.done = true;
                return None;
            }
            self.pos = i;
            return Some(cell);
        }
        let entry = match (self.last.as_ref(), self.from.take(), self.reverse) {
            (Some(l), _, false) => seg.next_after(Some(l)),
            (Some(l), _, true) => seg.prev_before(Some(l)),
            (None, Some((k, true)), false) => seg.first_at_or_after(&k),
            (None, Some((k, false)), false) => seg.next_after(Some(&k)),
            (None, Some((k, true)), true) => seg.last_at_or_before(&k),
            (None, Some((k, false)), true) => seg.prev_before(Some(&k)),
            (None, None, false) => seg.next_after(None),
            (None, None, true) => seg.prev_before(None),
        };
        let Some((key, value)) = entry else {
            self.done = true;
            return None;
        };
        let Some(cell) = crate::memstore::to_cell(&key, &value) else {
            self.done = true;
            return None;
        };
        if !self.within(&cell) {
            self.done = true;
            return None;
        }
        self.last = Some(key);
        Some(cell)
    }

    /// True if `cell` is on this side of the stop bound.
    fn within(&self, cell: &Cell) -> bool {
        match (&self.stop, self.reverse) {
            (Bound::Unbounded, _) => true,
            (Bound::Included(e), false) => cell.key() <= e.as_ref(),
            (Bound::Excluded(e), false) => cell.key() < e.as_ref(),
            (Bound::Included(s), true) => cell.key() >= s.as_ref(),
            (Bound::Excluded(s), true) => cell.key() > s.as_ref(),
        }
    }
}

impl MemCursor {
    /// Forward only: the first cell ≥ `target`, found with one lookup
    /// instead of stepping (and decoding) through the cells before it.
    fn seek(&mut self, target: &MemKey) -> Option<Cell> {
        if self.done {
            return None;
        }
        if let (Some(flat), Some(p), false) = (self.segment.flat(), self.pos, self.reverse) {
            // The cell at `p` was returned, so it is below the target.
            let i = flat.lower_bound_from(p + 1, target, false);
            let Some(cell) = flat.cell(i) else {
                self.done = true;
                return None;
            };
            if !self.within(&cell) {
                self.done = true;
                return None;
            }
            self.pos = Some(i);
            return Some(cell);
        }
        self.from = Some((target.clone(), true));
        self.last = None;
        self.pos = None;
        self.next()
    }
}

/// Cells a file source steps over before a skip seeks instead: stepping
/// through a few is cheaper than a lookup in the file's index and block.
const STEPS_BEFORE_SEEK: usize = 16;

/// One sorted input.
// The memstore cursor is held inline: every read has one per segment, and
// boxing it would add an allocation to each; the few file sources per read
// waste the difference.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Source {
    /// A memstore segment.
    Mem(MemCursor),
    /// An SST file, forward.
    Sst(Box<SstIter>),
    /// An SST file, backward.
    SstRev(Box<SstRevIter>),
}

impl Source {
    pub(crate) fn memstore(
        segment: Arc<Segment>,
        range: &ScanRange,
        reverse: bool,
    ) -> Result<Source, CellError> {
        Ok(Source::Mem(MemCursor::new(segment, range, reverse)?))
    }

    pub(crate) fn sst(
        reader: &SstReader,
        range: ScanRange,
        reverse: bool,
        fill_cache: bool,
    ) -> Source {
        if reverse {
            Source::SstRev(Box::new(reader.rev_iter_with(range, fill_cache)))
        } else {
            Source::Sst(Box::new(reader.iter_with(range, fill_cache)))
        }
    }

    async fn next(&mut self) -> Result<Option<Cell>, SstError> {
        match self {
            Source::Mem(m) => Ok(m.next()),
            Source::Sst(it) => it.next().await,
            Source::SstRev(it) => it.next().await,
        }
    }

    /// Forward only: the first cell ≥ `target` after `head` (this source's
    /// current head, which is < `target`).
    async fn skip_to(
        &mut self,
        target: &KeyRef<'_>,
        mem_target: &MemKey,
    ) -> Result<Option<Cell>, SstError> {
        match self {
            Source::Mem(m) => Ok(m.seek(mem_target)),
            Source::Sst(it) => {
                for _ in 0..STEPS_BEFORE_SEEK {
                    match it.next().await? {
                        Some(c) if c.key() < *target => {}
                        other => return Ok(other),
                    }
                }
                it.seek(*target).await?;
                it.next().await
            }
            Source::SstRev(it) => {
                // Reverse scans never skip (see `MergeIter::skip_to`); step.
                loop {
                    match it.next().await? {
                        Some(c) if c.key() < *target => {}
                        other => return Ok(other),
                    }
                }
            }
        }
    }
}

/// The merged stream.
pub(crate) struct MergeIter {
    sources: Vec<Source>,
    /// The next cell of each source, read ahead to compare them (with one
    /// source: a cell `skip_to` read and `next` has not returned yet).
    heads: Vec<Option<Cell>>,
    reverse: bool,
    started: bool,
}

impl MergeIter {
    /// Merges `sources` (newest first), ascending or descending.
    pub(crate) fn new(sources: Vec<Source>, reverse: bool) -> MergeIter {
        let n = sources.len();
        MergeIter {
            sources,
            heads: vec![None; n],
            reverse,
            started: false,
        }
    }

    /// Forward merges only: moves every source to its first cell ≥
    /// `target`, so `next` returns the first cell ≥ `target`. Memstore
    /// sources get there in one lookup (a hot column's thousands of versions
    /// cost one seek, not one step each). Only called with a `target` after
    /// every cell already returned.
    pub(crate) async fn skip_to(&mut self, target: &KeyRef<'_>) -> Result<(), SstError> {
        if self.reverse {
            return Ok(());
        }
        if let [source] = &mut self.sources[..] {
            // One source: its head (buffered, or read now) moves on if below.
            let head = match self.heads[0].take() {
                Some(c) => Some(c),
                None => source.next().await?,
            };
            self.heads[0] = match head {
                Some(h) if h.key() < *target => match MemKey::new(target) {
                    Ok(mem_target) => source.skip_to(target, &mem_target).await?,
                    // An invalid target (cannot come from a real cell).
                    Err(_) => Some(h),
                },
                other => other,
            };
            return Ok(());
        }
        if !self.started {
            self.started = true;
            for i in 0..self.sources.len() {
                self.heads[i] = self.sources[i].next().await?;
            }
        }
        let mut mem_target = None;
        for i in 0..self.sources.len() {
            if self.heads[i].as_ref().is_none_or(|h| h.key() >= *target) {
                continue;
            }
            let mem_target = match &mem_target {
                Some(k) => k,
                None => {
                    let Ok(k) = MemKey::new(target) else {
                        // An invalid target (cannot come from a real cell):
                        // leave the sources where they are.
                        return Ok(());
                    };
                    mem_target.insert(k)
                }
            };
            self.heads[i] = self.sources[i].skip_to(target, mem_target).await?;
        }
        Ok(())
    }

    /// The next cell in order.
    pub(crate) async fn next(&mut self) -> Result<Option<Cell>, SstError> {
        if let [source] = &mut self.sources[..] {
            // One source (a compacted family with an empty memstore, the
            // common case for reads): nothing to merge or de-duplicate, and a
            // cell passes through without waiting in a head. A head is only
            // buffered by `skip_to`.
            if let Some(c) = self.heads[0].take() {
                return Ok(Some(c));
            }
            return source.next().await;
        }
        if !self.started {
            self.started = true;
            for i in 0..self.sources.len() {
                self.heads[i] = self.sources[i].next().await?;
            }
        }
        let want = if self.reverse {
            Ordering::Greater
        } else {
            Ordering::Less
        };
        let mut best: Option<usize> = None;
        for (i, head) in self.heads.iter().enumerate() {
            let Some(c) = head else { continue };
            let better = match best.and_then(|b| self.heads[b].as_ref()) {
                None => true,
                Some(cur) => c.key().cmp(&cur.key()) == want,
            };
            if better {
                best = Some(i);
            }
        }
        let Some(b) = best else {
            return Ok(None);
        };
        let out = self.heads[b].take();
        self.heads[b] = self.sources[b].next().await?;
        if let Some(cell) = &out {
            // Skip identical keys in other (older) sources.
            for i in 0..self.heads.len() {
                while self.heads[i]
                    .as_ref()
                    .is_some_and(|h| h.key() == cell.key())
                {
                    self.heads[i] = self.sources[i].next().await?;
                }
            }
        }
        Ok(out)
    }
}
