//! A memstore segment: a concurrent skiplist of cells keyed by encoded cell key.

use crate::cell::{Cell, CellError, KeyRef, compare_encoded};
use bytes::Bytes;
use crossbeam_skiplist::SkipMap;
use std::cmp::Ordering as CmpOrdering;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Bytes charged per entry on top of key and value: skiplist node, tower and
/// the key/value handles (an estimate of the real allocation, measured against
/// the allocator in the memstore benchmark).
pub const ENTRY_OVERHEAD: usize = 96;

/// An encoded cell key ordered in cell order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemKey(Box<[u8]>);

impl MemKey {
    /// Encodes a key (the caller has validated the cell).
    pub fn new(key: &KeyRef<'_>) -> Result<MemKey, CellError> {
        Ok(MemKey(key.encode()?.into_boxed_slice()))
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The decoded key view.
    pub fn key(&self) -> Result<KeyRef<'_>, CellError> {
        KeyRef::decode(&self.0)
    }
}

impl Ord for MemKey {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        compare_encoded(&self.0, &other.0)
    }
}

impl PartialOrd for MemKey {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

/// A sorted, concurrently writable run of cells.
#[derive(Debug, Default)]
pub struct Segment {
    map: SkipMap<MemKey, Bytes>,
    bytes: AtomicUsize,
    max_seq: AtomicU64,
}

impl Segment {
    /// An empty segment.
    pub fn new() -> Segment {
        Segment::default()
    }

    /// Inserts a cell; returns the bytes accounted for it (0 for an exact
    /// duplicate key, which replaces the old entry).
    pub fn insert(&self, cell: &Cell) -> Result<usize, CellError> {
        cell.validate()?;
        let key = MemKey::new(&cell.key())?;
        let charge = key.0.len() + cell.value.len() + ENTRY_OVERHEAD;
        let dup = self.map.contains_key(&key);
        self.map.insert(key, cell.value.clone());
        self.max_seq.fetch_max(cell.seq, Ordering::Relaxed);
        if dup {
            return Ok(0);
        }
        self.bytes.fetch_add(charge, Ordering::Relaxed);
        Ok(charge)
    }

    /// Accounted bytes.
    pub fn size(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True if the segment holds no cell.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Highest sequence number inserted.
    pub fn max_seq(&self) -> u64 {
        self.max_seq.load(Ordering::Relaxed)
    }

    /// The first cell whose key is after `after` (or the first cell if `None`).
    /// Scans call this repeatedly: each call is O(log n) and holds no borrow,
    /// so an iterator can live across awaits.
    pub fn next_after(&self, after: Option<&MemKey>) -> Option<(MemKey, Bytes)> {
        let entry = match after {
            None => self.map.front(),
            Some(k) => self.map.lower_bound(Bound::Excluded(k)),
        }?;
        Some((entry.key().clone(), entry.value().clone()))
    }

    /// The last cell whose key is before `before` (or the last cell if `None`):
    /// the backward counterpart of [`Segment::next_after`].
    pub fn prev_before(&self, before: Option<&MemKey>) -> Option<(MemKey, Bytes)> {
        let entry = match before {
            None => self.map.back(),
            Some(k) => self.map.upper_bound(Bound::Excluded(k)),
        }?;
        Some((entry.key().clone(), entry.value().clone()))
    }

    /// The last cell whose key is ≤ `at`.
    pub fn last_at_or_before(&self, at: &MemKey) -> Option<(MemKey, Bytes)> {
        let entry = self.map.upper_bound(Bound::Included(at))?;
        Some((entry.key().clone(), entry.value().clone()))
    }

    /// The first cell whose key is ≥ `from`.
    pub fn first_at_or_after(&self, from: &MemKey) -> Option<(MemKey, Bytes)> {
        let entry = self.map.lower_bound(Bound::Included(from))?;
        Some((entry.key().clone(), entry.value().clone()))
    }

    /// Visits every cell in order (for flushes); stops at the first error `f` returns.
    pub fn for_each<E>(
        &self,
        mut f: impl FnMut(&MemKey, &Bytes) -> Result<(), E>,
    ) -> Result<(), E> {
        for e in self.map.iter() {
            f(e.key(), e.value())?;
        }
        Ok(())
    }

    /// Iterates the cells in order (for flushes). The iterator borrows the
    /// segment; frozen segments are immutable, so it sees a stable sequence.
    pub fn iter(&self) -> impl Iterator<Item = Cell> + Send + '_ {
        self.map.iter().filter_map(|e| to_cell(e.key(), e.value()))
    }

    /// All cells in order, decoded (for flushes and tests).
    pub fn cells(&self) -> Vec<Cell> {
        self.map
            .iter()
            .filter_map(|e| to_cell(e.key(), e.value()))
            .collect()
    }
}

/// Rebuilds a cell from a memstore entry. Keys are validated on insert, so the
/// decode cannot fail; `None` is returned rather than panicking if it ever did.
pub(crate) fn to_cell(key: &MemKey, value: &Bytes) -> Option<Cell> {
    let k = key.key().ok()?;
    Some(Cell {
        row: Bytes::copy_from_slice(k.row),
        family: Bytes::copy_from_slice(k.family),
        qualifier: Bytes::copy_from_slice(k.qualifier),
        timestamp: k.timestamp,
        kind: k.kind,
        seq: k.seq,
        value: value.clone(),
    })
}
