//! Flat cells: an immutable, sorted run of cells in one contiguous arena with
//! an offset index — what in-memory compaction turns a skiplist segment into.
//!
//! Layout of the arena, per cell, in cell order:
//!
//! ```text
//! key_len: u32 LE | encoded key (see `cell::key`) | value
//! ```
//!
//! `offsets[i]` is where cell `i` starts; it ends where cell `i + 1` starts
//! (or at the arena's end). Overhead per cell beyond the cell's own bytes
//! (row, family, qualifier, timestamp, type, sequence, value): the 4-byte
//! offset, the 4-byte key length and the key encoding's 3 length bytes —
//! 11 bytes, against roughly 100 for a skiplist entry.
//!
//! Lookups binary-search the offsets, decoding only the keys they touch.
//! Every row of a run starts with the run's common row prefix (that of its
//! first and last rows: the run is sorted); a target outside it is before or
//! after the whole run. Beside each offset sits the next 8 bytes of the
//! cell's row after that common prefix (zero-padded) as a big-endian number:
//! a probe whose number differs from the target's is decided from that
//! compact array alone, without touching the arena (a cache miss per probe
//! in a large run); only equal numbers decode the key. Two rows whose padded
//! numbers differ compare as the numbers do (a row that ends inside the 8
//! bytes pads with zeros, below any byte that continues a longer row, or ties
//! with a zero byte and is decoded).
//! Values are handed out as slices of the arena (no copy).

use super::MemKey;
use crate::cell::KeyRef;
use bytes::{Bytes, BytesMut};
use std::cmp::Ordering;

/// An immutable sorted run of cells.
#[derive(Debug, Clone, Default)]
pub struct FlatCells {
    arena: Bytes,
    offsets: Vec<u32>,
    /// Per cell, the 8 bytes of its row after `common`, zero-padded,
    /// big-endian.
    prefixes: Vec<u64>,
    /// The row prefix every cell of the run shares.
    common: Bytes,
}

/// Builds a [`FlatCells`] from cells appended in strictly ascending key order.
#[derive(Debug, Default)]
pub struct FlatBuilder {
    arena: BytesMut,
    offsets: Vec<u32>,
}

/// A row's first 8 bytes, zero-padded, as a big-endian number.
fn row_prefix(row: &[u8]) -> u64 {
    let mut p = [0u8; 8];
    let n = row.len().min(8);
    p[..n].copy_from_slice(&row[..n]);
    u64::from_be_bytes(p)
}

/// The row of an encoded key (it follows a 2-byte length).
fn key_row(key: &[u8]) -> &[u8] {
    let row_len = key
        .get(..2)
        .map_or(0, |l| u16::from_be_bytes([l[0], l[1]]) as usize);
    key.get(2..2 + row_len).unwrap_or_default()
}

/// Largest arena a flat run may have (offsets are 32-bit).
pub const MAX_FLAT_BYTES: usize = u32::MAX as usize;

impl FlatBuilder {
    /// A builder sized for `cells` cells of `bytes` arena bytes in total.
    pub fn with_capacity(cells: usize, bytes: usize) -> FlatBuilder {
        FlatBuilder {
            arena: BytesMut::with_capacity(bytes),
            offsets: Vec::with_capacity(cells),
        }
    }

    /// Arena bytes an entry of this key and value takes.
    pub fn entry_len(key: &[u8], value: &[u8]) -> usize {
        4 + key.len() + value.len()
    }

    /// Appends a cell (its encoded key and value). Returns false, appending
    /// nothing, if the arena would pass [`MAX_FLAT_BYTES`].
    pub fn push(&mut self, key: &[u8], value: &[u8]) -> bool {
        let start = self.arena.len();
        if start + FlatBuilder::entry_len(key, value) > MAX_FLAT_BYTES {
            return false;
        }
        self.offsets.push(start as u32);
        self.arena
            .extend_from_slice(&(key.len() as u32).to_le_bytes());
        self.arena.extend_from_slice(key);
        self.arena.extend_from_slice(value);
        true
    }

    /// The finished run.
    pub fn finish(mut self) -> FlatCells {
        self.offsets.shrink_to_fit();
        let mut run = FlatCells {
            arena: self.arena.freeze(),
            offsets: self.offsets,
            prefixes: Vec::new(),
            common: Bytes::new(),
        };
        if !run.is_empty() {
            let first = key_row(run.key_bytes(0));
            let last = key_row(run.key_bytes(run.len() - 1));
            let n = first
                .iter()
                .zip(last)
                .take_while(|(a, b)| a == b)
                .count()
                .min(first.len());
            run.common = Bytes::copy_from_slice(&first[..n]);
        }
        let l = run.common.len();
        run.prefixes = (0..run.len())
            .map(|i| row_prefix(&key_row(run.key_bytes(i))[l..]))
            .collect();
        run
    }
}

impl FlatCells {
    /// Number of cells.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// True if the run holds no cell.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// Bytes of memory the run holds (arena and index).
    pub fn memory(&self) -> usize {
        self.arena.len()
            + self.offsets.capacity() * 4
            + self.prefixes.capacity() * 8
            + self.common.len()
    }

    fn bounds(&self, i: usize) -> (usize, usize) {
        let start = self.offsets[i] as usize;
        let end = self
            .offsets
            .get(i + 1)
            .map_or(self.arena.len(), |&o| o as usize);
        (start, end)
    }

    /// The encoded key of cell `i`.
    pub fn key_bytes(&self, i: usize) -> &[u8] {
        let (start, _) = self.bounds(i);
        let mut len = [0u8; 4];
        len.copy_from_slice(&self.arena[start..start + 4]);
        let klen = u32::from_le_bytes(len) as usize;
        &self.arena[start + 4..start + 4 + klen]
    }

    /// The value of cell `i`, sharing the arena.
    pub fn value(&self, i: usize) -> Bytes {
        let (start, end) = self.bounds(i);
        let klen = self.key_bytes(i).len();
        self.arena.slice(start + 4 + klen..end)
    }

    /// Cell `i` with every field a slice of the arena (no copy), or `None`
    /// past the end (or for a key that does not decode, which validation on
    /// insert rules out).
    pub fn cell(&self, i: usize) -> Option<crate::cell::Cell> {
        if i >= self.len() {
            return None;
        }
        let key = self.key_bytes(i);
        let k = KeyRef::decode(key).ok()?;
        Some(crate::cell::Cell {
            row: self.arena.slice_ref(k.row),
            family: self.arena.slice_ref(k.family),
            qualifier: self.arena.slice_ref(k.qualifier),
            timestamp: k.timestamp,
            kind: k.kind,
            seq: k.seq,
            value: self.value(i),
        })
    }

    /// Cell `i` as a memstore entry.
    pub fn entry(&self, i: usize) -> Option<(MemKey, Bytes)> {
        if i >= self.len() {
            return None;
        }
        Some((MemKey::from_encoded(self.key_bytes(i)), self.value(i)))
    }

    fn cmp_at(&self, i: usize, target: &KeyRef<'_>) -> Ordering {
        // Keys were validated when they entered the memstore; a key that
        // failed to decode would sort last (never happens).
        match KeyRef::decode(self.key_bytes(i)) {
            Ok(k) => k.cmp(target),
            Err(_) => Ordering::Greater,
        }
    }

    /// As [`FlatCells::lower_bound`], for a caller that knows every cell
    /// before `from` is below `target`: an exponential search from `from`,
    /// so a target a few cells ahead costs a few comparisons, not a search
    /// of the whole run.
    pub fn lower_bound_from(&self, from: usize, target: &MemKey, strict: bool) -> usize {
        let Ok(t) = target.key() else {
            return self.len();
        };
        let before = |i: usize| {
            let ord = self.cmp_at(i, &t);
            if strict {
                ord != Ordering::Greater
            } else {
                ord == Ordering::Less
            }
        };
        // `lo` is known before the target; find `hi` not before it.
        if from >= self.len() || !before(from) {
            return from.min(self.len());
        }
        let (mut lo, mut step) = (from, 1usize);
        let mut hi = loop {
            let probe = lo.saturating_add(step);
            if probe >= self.len() {
                break self.len();
            }
            if !before(probe) {
                break probe;
            }
            lo = probe;
            step = step.saturating_mul(2);
        };
        // Invariant: cell `lo` is before the target; `hi` is not (or the end).
        let mut lo = lo + 1;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Index of the first cell whose key is ≥ `target` (or > it if `strict`).
    pub fn lower_bound(&self, target: &MemKey, strict: bool) -> usize {
        let Ok(t) = target.key() else {
            return self.len();
        };
        if self.is_empty() {
            return 0;
        }
        // Outside the run's common prefix: before or after every cell.
        let l = self.common.len();
        let shared = t.row.len().min(l);
        match t.row[..shared].cmp(&self.common[..shared]) {
            Ordering::Less => return 0,
            Ordering::Greater => return self.len(),
            // A target row that is a proper prefix of every row sorts first.
            Ordering::Equal if t.row.len() < l => return 0,
            Ordering::Equal => {}
        }
        let target_prefix = row_prefix(&t.row[l..]);
        let mut lo = 0;
        let mut hi = self.len();
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let ord = match self.prefixes[mid].cmp(&target_prefix) {
                Ordering::Equal => self.cmp_at(mid, &t),
                other => other,
            };
            let before = if strict {
                ord != Ordering::Greater
            } else {
                ord == Ordering::Less
            };
            if before {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::CellType;

    /// Rows that stress the prefix shortcut: empty-ish, shorter and longer
    /// than 8 bytes, zero bytes inside and at the end, shared long prefixes.
    fn rows(seed: u64) -> Vec<Vec<u8>> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..400)
            .map(|_| {
                let len = 1 + (next() % 12) as usize;
                let common = (next() % 3) as usize * 4;
                (0..len)
                    .map(|i| {
                        if i < common {
                            b'u'
                        } else {
                            [0u8, 1, b'a', b'b', 0xff][(next() % 5) as usize]
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn lower_bound_with_row_prefixes_matches_a_linear_search() {
        for seed in 1..20u64 {
            check_run(seed, b"");
            // Every row sharing a long prefix ("user0000…" keys), and
            // targets inside and outside it.
            check_run(seed, b"user0000");
        }
        let empty = FlatBuilder::default().finish();
        let t = MemKey::from_encoded(&KeyRef::first_of_row(b"a").encode().unwrap());
        assert_eq!(empty.lower_bound(&t, false), 0);
        assert_eq!(empty.lower_bound_from(0, &t, false), 0);
    }

    fn check_run(seed: u64, shared: &[u8]) {
        {
            let rows_of = |seed: u64| -> Vec<Vec<u8>> {
                rows(seed)
                    .into_iter()
                    .map(|r| [shared, &r[..]].concat())
                    .collect()
            };
            let mut keys: Vec<Vec<u8>> = rows_of(seed)
                .iter()
                .enumerate()
                .map(|(i, row)| {
                    KeyRef {
                        row,
                        family: b"f",
                        qualifier: if i % 2 == 0 { b"a" } else { b"b" },
                        timestamp: (i % 3) as i64,
                        kind: CellType::Put,
                        seq: i as u64,
                    }
                    .encode()
                    .unwrap()
                })
                .collect();
            keys.sort_by(|a, b| crate::cell::key::compare_encoded(a, b));
            keys.dedup();
            let mut b = FlatBuilder::with_capacity(keys.len(), 0);
            for k in &keys {
                assert!(b.push(k, b"v"));
            }
            let flat = b.finish();
            // Targets: every key, and keys that fall between them.
            let mut targets: Vec<Vec<u8>> = keys.clone();
            for row in rows_of(seed + 100).into_iter().chain(rows(seed + 200)) {
                targets.push(KeyRef::first_of_row(&row).encode().unwrap());
            }
            for row in [&b"user"[..], b"user000", b"user00009", b"zzz", b"\0"] {
                targets.push(KeyRef::first_of_row(row).encode().unwrap());
            }
            for t in &targets {
                let mk = MemKey::from_encoded(t);
                for strict in [false, true] {
                    let want = keys
                        .iter()
                        .position(|k| {
                            let o = crate::cell::key::compare_encoded(k, t);
                            if strict {
                                o == Ordering::Greater
                            } else {
                                o != Ordering::Less
                            }
                        })
                        .unwrap_or(keys.len());
                    assert_eq!(flat.lower_bound(&mk, strict), want, "seed {seed}");
                    // From any start at or before the answer, the exponential
                    // search agrees.
                    for from in [
                        0,
                        want / 2,
                        want.saturating_sub(1),
                        want,
                        want.saturating_sub(7),
                    ] {
                        assert_eq!(
                            flat.lower_bound_from(from, &mk, strict),
                            want,
                            "seed {seed} from {from}"
                        );
                    }
                }
            }
        }
    }
}
