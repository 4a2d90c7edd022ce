//! A memstore segment: a concurrent skiplist of cells keyed by encoded cell
//! key (the active segment), or a flat arena of cells (an immutable segment
//! after in-memory compaction); both answer the same ordered lookups.

use super::flat::{FlatBuilder, FlatCells};
use crate::cell::key::encoded_row;
use crate::cell::{Cell, CellError, KeyRef, compare_encoded};
use crate::sst::row_words::word;
use bytes::Bytes;
use crossbeam_skiplist::SkipMap;
use std::cmp::Ordering as CmpOrdering;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Bytes charged per entry on top of key and value: skiplist node, tower and
/// the key/value handles (an estimate of the real allocation, measured against
/// the allocator in the memstore benchmark).
pub const ENTRY_OVERHEAD: usize = 112;

/// An encoded cell key ordered in cell order, with the first 16 bytes of its
/// row kept beside it as two big-endian words (zero-padded).
///
/// A skiplist search compares the searched key with one node per step, and
/// the node's encoded bytes live in a heap block of their own: a second cache
/// miss per step on a large memstore. The words sit in the node itself, so
/// keys whose rows differ within their first 16 bytes (most steps of a search)
/// are ordered without touching that block. If two keys' words differ, their
/// rows differ in the same order (a shorter row pads with zeros and sorts
/// first, as bytes do); equal words say nothing and the bytes decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemKey {
    words: [u64; 2],
    bytes: Box<[u8]>,
}

/// The words of an encoded key's row. A key whose row cannot be read (only
/// corrupt input makes one) gets the largest words: such keys sort after
/// every valid key, so its words never order it before one, and a tie
/// falls through to the full comparison.
#[inline]
fn row_words(encoded: &[u8]) -> [u64; 2] {
    let Some(row) = encoded_row(encoded) else {
        return [u64::MAX; 2];
    };
    [word(row, 0), word(row, 8)]
}

impl MemKey {
    /// Encodes a key (the caller has validated the cell).
    pub fn new(key: &KeyRef<'_>) -> Result<MemKey, CellError> {
        Ok(MemKey::from_boxed(key.encode()?.into_boxed_slice()))
    }

    /// A key from its encoding (already validated).
    pub fn from_encoded(bytes: &[u8]) -> MemKey {
        MemKey::from_boxed(bytes.into())
    }

    fn from_boxed(bytes: Box<[u8]>) -> MemKey {
        MemKey {
            words: row_words(&bytes),
            bytes,
        }
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The decoded key view.
    pub fn key(&self) -> Result<KeyRef<'_>, CellError> {
        KeyRef::decode(&self.bytes)
    }
}

impl Ord for MemKey {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        // Rows that differ in their first 16 bytes: decided by the words
        // alone, without reading either key's bytes.
        let order = self.words.cmp(&other.words);
        if order != CmpOrdering::Equal {
            return order;
        }
        // Keys of different rows are ordered by their rows alone, without
        // decoding the rest. A MemKey is always a valid encoding (made from
        // a validated cell), so this agrees with the full comparison, which
        // orders only valid keys by row.
        if let (Some(a), Some(b)) = (encoded_row(&self.bytes), encoded_row(&other.bytes)) {
            let order = a.cmp(b);
            if order != CmpOrdering::Equal {
                return order;
            }
        }
        compare_encoded(&self.bytes, &other.bytes)
    }
}

impl PartialOrd for MemKey {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

/// A sorted run of cells: the active, concurrently writable skiplist, or an
/// immutable flat run made from one or several of them by in-memory
/// compaction.
#[derive(Debug)]
pub struct Segment {
    kind: Kind,
    bytes: AtomicUsize,
    max_seq: AtomicU64,
}

#[derive(Debug)]
enum Kind {
    Skip(Box<SkipMap<MemKey, Bytes>>),
    Flat(FlatCells),
}

impl Default for Segment {
    fn default() -> Self {
        Segment::new()
    }
}

impl Segment {
    /// An empty skiplist segment.
    pub fn new() -> Segment {
        Segment {
            kind: Kind::Skip(Box::new(SkipMap::new())),
            bytes: AtomicUsize::new(0),
            max_seq: AtomicU64::new(0),
        }
    }

    /// A flat segment holding `cells`, whose highest sequence is `max_seq`.
    pub fn from_flat(cells: FlatCells, max_seq: u64) -> Segment {
        Segment {
            bytes: AtomicUsize::new(cells.memory()),
            kind: Kind::Flat(cells),
            max_seq: AtomicU64::new(max_seq),
        }
    }

    /// True for a flat (in-memory compacted) segment.
    pub fn is_flat(&self) -> bool {
        matches!(self.kind, Kind::Flat(_))
    }

    /// The cells of a flat segment (`None` for a skiplist): immutable, so a
    /// reader can walk them by index.
    pub fn flat(&self) -> Option<&FlatCells> {
        match &self.kind {
            Kind::Flat(f) => Some(f),
            Kind::Skip(_) => None,
        }
    }

    /// Inserts a cell; returns the bytes accounted for it (0 for an exact
    /// duplicate key, which replaces the old entry). Flat segments are
    /// immutable and refuse.
    pub fn insert(&self, cell: &Cell) -> Result<usize, CellError> {
        let Kind::Skip(map) = &self.kind else {
            return Err(CellError::Malformed {
                what: "memstore segment",
                reason: "a flat segment is immutable".into(),
            });
        };
        cell.validate()?;
        let key = MemKey::new(&cell.key())?;
        let charge = key.bytes.len() + cell.value.len() + ENTRY_OVERHEAD;
        // One search, not a lookup then an insert.
        let mut inserted = false;
        let entry = map.get_or_insert_with(key, || {
            inserted = true;
            cell.value.clone()
        });
        self.max_seq.fetch_max(cell.seq, Ordering::Relaxed);
        if !inserted {
            // An exact duplicate key (the same write, replayed): its value
            // replaces the old one, should they differ.
            if *entry.value() != cell.value {
                let key = entry.key().clone();
                drop(entry);
                map.insert(key, cell.value.clone());
            }
            return Ok(0);
        }
        self.bytes.fetch_add(charge, Ordering::Relaxed);
        Ok(charge)
    }

    /// Accounted bytes: the estimate charged per skiplist entry, or a flat
    /// segment's exact memory.
    pub fn size(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        match &self.kind {
            Kind::Skip(m) => m.len(),
            Kind::Flat(f) => f.len(),
        }
    }

    /// True if the segment holds no cell.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Highest sequence number inserted.
    pub fn max_seq(&self) -> u64 {
        self.max_seq.load(Ordering::Relaxed)
    }

    /// The first cell whose key is after `after` (or the first cell if `None`).
    /// Scans call this repeatedly: each call is O(log n) and holds no borrow,
    /// so an iterator can live across awaits.
    pub fn next_after(&self, after: Option<&MemKey>) -> Option<(MemKey, Bytes)> {
        match &self.kind {
            Kind::Skip(map) => {
                let entry = match after {
                    None => map.front(),
                    Some(k) => map.lower_bound(Bound::Excluded(k)),
                }?;
                Some((entry.key().clone(), entry.value().clone()))
            }
            Kind::Flat(f) => f.entry(after.map_or(0, |k| f.lower_bound(k, true))),
        }
    }

    /// The last cell whose key is before `before` (or the last cell if `None`):
    /// the backward counterpart of [`Segment::next_after`].
    pub fn prev_before(&self, before: Option<&MemKey>) -> Option<(MemKey, Bytes)> {
        match &self.kind {
            Kind::Skip(map) => {
                let entry = match before {
                    None => map.back(),
                    Some(k) => map.upper_bound(Bound::Excluded(k)),
                }?;
                Some((entry.key().clone(), entry.value().clone()))
            }
            Kind::Flat(f) => {
                let end = before.map_or(f.len(), |k| f.lower_bound(k, false));
                f.entry(end.checked_sub(1)?)
            }
        }
    }

    /// The last cell whose key is ≤ `at`.
    pub fn last_at_or_before(&self, at: &MemKey) -> Option<(MemKey, Bytes)> {
        match &self.kind {
            Kind::Skip(map) => {
                let entry = map.upper_bound(Bound::Included(at))?;
                Some((entry.key().clone(), entry.value().clone()))
            }
            Kind::Flat(f) => f.entry(f.lower_bound(at, true).checked_sub(1)?),
        }
    }

    /// The first cell whose key is ≥ `from`.
    pub fn first_at_or_after(&self, from: &MemKey) -> Option<(MemKey, Bytes)> {
        match &self.kind {
            Kind::Skip(map) => {
                let entry = map.lower_bound(Bound::Included(from))?;
                Some((entry.key().clone(), entry.value().clone()))
            }
            Kind::Flat(f) => f.entry(f.lower_bound(from, false)),
        }
    }

    /// Visits every entry in order (encoded key, value); stops at the first
    /// error `f` returns.
    pub fn for_each<E>(&self, mut f: impl FnMut(&[u8], &Bytes) -> Result<(), E>) -> Result<(), E> {
        match &self.kind {
            Kind::Skip(map) => {
                for e in map.iter() {
                    f(e.key().as_bytes(), e.value())?;
                }
            }
            Kind::Flat(flat) => {
                for i in 0..flat.len() {
                    f(flat.key_bytes(i), &flat.value(i))?;
                }
            }
        }
        Ok(())
    }

    /// Iterates the cells in order (for flushes). The iterator borrows the
    /// segment; frozen segments are immutable, so it sees a stable sequence.
    pub fn iter(&self) -> Box<dyn Iterator<Item = Cell> + Send + '_> {
        match &self.kind {
            Kind::Skip(map) => Box::new(map.iter().filter_map(|e| to_cell(e.key(), e.value()))),
            Kind::Flat(f) => Box::new(
                (0..f.len()).filter_map(move |i| to_cell_encoded(f.key_bytes(i), f.value(i))),
            ),
        }
    }

    /// All cells in order, decoded (for flushes and tests).
    pub fn cells(&self) -> Vec<Cell> {
        self.iter().collect()
    }

    /// This segment's cells as a flat segment (for a skiplist segment that
    /// has stopped taking writes).
    pub fn flatten(&self) -> Segment {
        let (mut cells, mut bytes) = (0usize, 0usize);
        let _ = self.for_each(|k, v| {
            cells += 1;
            bytes += FlatBuilder::entry_len(k, v);
            Ok::<_, ()>(())
        });
        let mut b = FlatBuilder::with_capacity(cells, bytes);
        let _ = self.for_each(|k, v| if b.push(k, v) { Ok(()) } else { Err(()) });
        Segment::from_flat(b.finish(), self.max_seq())
    }
}
/// Rebuilds a cell from a memstore entry. Keys are validated on insert, so the
/// decode cannot fail; `None` is returned rather than panicking if it ever did.
pub(crate) fn to_cell(key: &MemKey, value: &Bytes) -> Option<Cell> {
    to_cell_encoded(key.as_bytes(), value.clone())
}

/// Rebuilds a cell from an encoded key and its value.
pub(crate) fn to_cell_encoded(key: &[u8], value: Bytes) -> Option<Cell> {
    let k = KeyRef::decode(key).ok()?;
    Some(Cell {
        row: Bytes::copy_from_slice(k.row),
        family: Bytes::copy_from_slice(k.family),
        qualifier: Bytes::copy_from_slice(k.qualifier),
        timestamp: k.timestamp,
        kind: k.kind,
        seq: k.seq,
        value,
    })
}
