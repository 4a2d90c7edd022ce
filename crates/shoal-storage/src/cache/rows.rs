//! The row cache: the newest version of every column of a row, kept whole,
//! for point gets of hot rows (RocksDB's `row_cache`, Cassandra's row cache).
//!
//! Block caching keeps 64 KiB blocks, so under a skewed key choice most of a
//! cached block is rows nobody reads; a hot row's entry here costs its own
//! bytes only, and a hit skips the memstore, the merge and every block. The
//! cache holds values, not handles: each entry is one compact copy of its
//! cells, never a slice of a block (which would pin the block's memory
//! outside every budget).
//!
//! This file owns the pool and its entries; when an entry may be kept and when
//! it must go is the region's business (`region/row_cache.rs`), keyed by the
//! region instance so a reopened or split region never sees another's rows.

use super::l1::{Pool, Weighted};
use crate::cell::Cell;
use bytes::Bytes;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A cached row's key: the region instance and the row.
pub(crate) type RowKey = (u64, Bytes);

/// One cached row: its cells' bytes in one buffer (the row once, each
/// family once per run, qualifiers and values) and a small fixed record per
/// cell, so an entry costs little more than its data; [`Cell`]s are made on
/// a hit as slices of the buffer.
#[derive(Clone)]
pub(crate) struct CachedRow {
    /// The entry holds the newest version of each column among versions
    /// stamped at or after this (the read's time range started here and
    /// ran to the end of time).
    pub(super) from: i64,
    pub(super) buf: Bytes,
    pub(super) row_len: u32,
    pub(super) cells: Arc<[Span]>,
}

/// Where one cell's parts sit in the buffer, and its fixed fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) family: (u32, u32),
    pub(super) qualifier: (u32, u32),
    pub(super) value: (u32, u32),
    pub(super) timestamp: i64,
    pub(super) seq: u64,
    pub(super) kind: crate::cell::CellType,
}

impl Weighted for CachedRow {
    fn weight(&self) -> usize {
        self.buf.len() + std::mem::size_of_val(&*self.cells)
    }

    /// An entry read from an earlier start answers more gets. (Both are
    /// the row as it is now: a write removes the key's entry.)
    fn supersedes(&self, old: &Self) -> bool {
        self.from < old.from
    }
}

impl CachedRow {
    /// A compact copy of `cells` (all of `row`; the caller keeps the buffer
    /// under 4 GiB by the pool's size limit).
    pub(super) fn copy_of(row: &Bytes, from: i64, cells: &[Cell]) -> CachedRow {
        let mut buf = Vec::with_capacity(data_len(row.len(), cells));
        buf.extend_from_slice(row);
        let mut spans = Vec::with_capacity(cells.len());
        let mut family = (0, 0);
        let mut last_family: Option<&[u8]> = None;
        for c in cells {
            if last_family != Some(&c.family[..]) {
                family = push(&mut buf, &c.family);
                last_family = Some(&c.family);
            }
            spans.push(Span {
                family,
                qualifier: push(&mut buf, &c.qualifier),
                value: push(&mut buf, &c.value),
                timestamp: c.timestamp,
                seq: c.seq,
                kind: c.kind,
            });
        }
        CachedRow {
            from,
            row_len: row.len() as u32,
            buf: Bytes::from(buf),
            cells: spans.into(),
        }
    }

    pub(super) fn part(&self, (at, len): (u32, u32)) -> &[u8] {
        &self.buf[at as usize..(at + len) as usize]
    }

    pub(super) fn slice(&self, (at, len): (u32, u32)) -> Bytes {
        self.buf.slice(at as usize..(at + len) as usize)
    }

    /// The row's key.
    pub(crate) fn row(&self) -> &[u8] {
        self.part((0, self.row_len))
    }

    /// Each cell's family and type, in order (what a region checks before
    /// it takes an entry built elsewhere).
    pub(crate) fn families_and_types(
        &self,
    ) -> impl Iterator<Item = (&[u8], crate::cell::CellType)> {
        self.cells.iter().map(|s| (self.part(s.family), s.kind))
    }

    /// True if the entry can answer a get of versions stamped at or after
    /// `from`: it was read from no later a start.
    pub(crate) fn covers(&self, from: i64) -> bool {
        self.from <= from
    }

    /// The row's cells stamped at or after `from` for which
    /// `wanted(family, qualifier)`, in order. With one version per column,
    /// that is exactly the newest version in `[from, end of time)`: the
    /// versions in such a range are a newest-first prefix of all of them.
    pub(crate) fn cells(
        &self,
        from: i64,
        mut wanted: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Vec<Cell> {
        let row = self.slice((0, self.row_len));
        let mut out = Vec::with_capacity(self.cells.len());
        let mut family: Option<((u32, u32), Bytes)> = None;
        for s in self.cells.iter() {
            if s.timestamp < from || !wanted(self.part(s.family), self.part(s.qualifier)) {
                continue;
            }
            let family = match &family {
                Some((span, bytes)) if *span == s.family => bytes.clone(),
                _ => {
                    let bytes = self.slice(s.family);
                    family = Some((s.family, bytes.clone()));
                    bytes
                }
            };
            out.push(Cell {
                row: row.clone(),
                family,
                qualifier: self.slice(s.qualifier),
                timestamp: s.timestamp,
                kind: s.kind,
                seq: s.seq,
                value: self.slice(s.value),
            });
        }
        out
    }
}

fn push(buf: &mut Vec<u8>, bytes: &[u8]) -> (u32, u32) {
    let at = buf.len() as u32;
    buf.extend_from_slice(bytes);
    (at, bytes.len() as u32)
}

/// Bytes of a copy's buffer: the row, each family once per run, qualifiers
/// and values.
fn data_len(row_len: usize, cells: &[Cell]) -> usize {
    let mut len = row_len;
    let mut last_family: Option<&[u8]> = None;
    for c in cells {
        if last_family != Some(&c.family[..]) {
            len += c.family.len();
            last_family = Some(&c.family);
        }
        len += c.qualifier.len() + c.value.len();
    }
    len
}

/// Bytes an entry of these cells is charged.
fn estimated_weight(row_len: usize, cells: &[Cell]) -> usize {
    data_len(row_len, cells) + cells.len() * std::mem::size_of::<Span>()
}

/// The server-wide pool of cached rows.
pub(crate) struct RowPool {
    pool: Pool<RowKey, CachedRow>,
    doorkeeper: Doorkeeper,
}

/// Admission: a row enters the cache on its second miss within a window of
/// recent misses (TinyLFU's doorkeeper), so a row read once is never copied
/// in and never evicts a row read again. Without it, every miss of a table
/// much larger than the budget copied a row in and evicted one, and the cache
/// cost more than it saved (`docs/cache.md`).
struct Doorkeeper {
    /// One bit per hash slot: seen once in this window.
    bits: Box<[AtomicU64]>,
    /// Misses offered since the last reset.
    offers: AtomicU64,
    /// Misses per window: about as many rows as the budget holds.
    window: u64,
}

impl Doorkeeper {
    fn new(budget: usize) -> Doorkeeper {
        // ~2 KiB per cached row; 8 bits per row of the window keeps false
        // "seen before" answers near 12 %.
        let window = (budget as u64 / 2048).max(1024);
        let words = (window * 8).div_ceil(64).next_power_of_two();
        Doorkeeper {
            bits: (0..words).map(|_| AtomicU64::new(0)).collect(),
            offers: AtomicU64::new(0),
            window,
        }
    }

    /// True if `hash` was offered before in this window (and is admitted).
    fn admit(&self, hash: u64) -> bool {
        if self.offers.fetch_add(1, Ordering::Relaxed) % self.window == self.window - 1 {
            for w in self.bits.iter() {
                w.store(0, Ordering::Relaxed);
            }
        }
        let slot = hash as usize % (self.bits.len() * 64);
        let bit = 1u64 << (slot % 64);
        self.bits[slot / 64].fetch_or(bit, Ordering::Relaxed) & bit != 0
    }
}

/// A hash of a region instance's row (FNV-1a, then a multiply to spread
/// the low bits): the doorkeeper's slot, and the region's write stripe.
pub(crate) fn row_hash(region: u64, row: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ region.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for &b in row {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 16
}

impl RowPool {
    pub(crate) fn new(bytes: usize, shards: usize) -> RowPool {
        RowPool {
            pool: Pool::new(bytes, shards),
            doorkeeper: Doorkeeper::new(bytes),
        }
    }

    /// True if a missed row may be cached now: while an eighth of the pool
    /// is free, every miss (a copy there evicts nothing, and a cache filling
    /// after a restart or a region's move warms twice as fast); after that,
    /// a row's second miss in a while.
    pub(crate) fn admit(&self, region: u64, row: &[u8]) -> bool {
        let seen = self.doorkeeper.admit(row_hash(region, row));
        seen || self.pool.free_bytes() >= (self.pool.capacity() / 8) as u64
    }

    pub(crate) fn enabled(&self) -> bool {
        self.pool.capacity() > 0
    }

    pub(crate) fn get(&self, region: u64, row: &Bytes) -> Option<CachedRow> {
        self.pool.get(&(region, row.clone()))
    }

    /// Caches a copy of `cells` unless `refuse` (checked under the entry's
    /// shard lock, where [`RowPool::remove`] also runs) says no. Rows too
    /// large for a shard are not copied at all.
    pub(crate) fn insert_unless(
        &self,
        region: u64,
        row: &Bytes,
        from: i64,
        cells: &[Cell],
        refuse: impl FnOnce() -> bool,
    ) -> bool {
        if cells.is_empty() {
            return false;
        }
        if estimated_weight(row.len(), cells) > self.pool.max_weight() {
            self.pool.counters.rejected.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        self.insert_entry_unless(region, CachedRow::copy_of(row, from, cells), refuse)
    }

    /// Caches `entry` (an entry built elsewhere: a former owner's, from a
    /// row bundle) unless `refuse` says no, as [`RowPool::insert_unless`].
    pub(crate) fn insert_entry_unless(
        &self,
        region: u64,
        entry: CachedRow,
        refuse: impl FnOnce() -> bool,
    ) -> bool {
        if entry.cells.is_empty() {
            return false;
        }
        if entry.weight() > self.pool.max_weight() {
            self.pool.counters.rejected.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let key = (region, entry.slice((0, entry.row_len)));
        self.pool.insert_unless(key, entry, refuse)
    }

    pub(crate) fn remove(&self, region: u64, row: &Bytes) {
        self.pool.remove(&(region, row.clone()));
    }

    pub(crate) fn forget_region(&self, region: u64) -> usize {
        self.pool.remove_where(|k| k.0 == region)
    }

    /// Copies of region `region`'s entries, up to about `max_bytes`.
    pub(crate) fn entries_of(&self, region: u64, max_bytes: usize) -> Vec<CachedRow> {
        self.pool
            .collect_where(|k| k.0 == region, max_bytes)
            .into_iter()
            .map(|(_, entry)| entry)
            .collect()
    }

    pub(crate) fn pool(&self) -> &Pool<RowKey, CachedRow> {
        &self.pool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(family: &str, q: &str, value: &[u8]) -> Cell {
        Cell::put(
            Bytes::from_static(b"row-1"),
            Bytes::copy_from_slice(family.as_bytes()),
            Bytes::copy_from_slice(q.as_bytes()),
            7,
            3,
            Bytes::copy_from_slice(value),
        )
    }

    #[test]
    fn a_copy_is_equal_and_shares_nothing_with_the_source() {
        let block = Bytes::from(vec![9u8; 65536]);
        let mut cells = vec![
            cell("a", "q1", b"v1"),
            cell("a", "q2", b""),
            cell("b", "", b"x"),
        ];
        cells[0].value = block.slice(10..20);
        let copy = CachedRow::copy_of(&Bytes::from_static(b"row-1"), i64::MIN, &cells);
        assert_eq!(copy.cells(i64::MIN, |_, _| true), cells);
        assert_eq!(copy.cells(i64::MIN, |f, _| f == b"b"), cells[2..]);
        assert_eq!(copy.cells(i64::MIN, |_, q| q == b"q2"), cells[1..2]);
        assert_eq!(copy.cells(8, |_, _| true), [], "all stamped 7");
        assert!(copy.covers(0) && copy.covers(i64::MIN));
        // With the source cells gone, the block's last handle is ours: the
        // copy holds no slice of it.
        let weight = estimated_weight(5, &cells);
        drop(cells);
        assert!(block.is_unique());
        let data = 5 + 1 + 2 + 10 + 2 + 1 + 1;
        assert_eq!(copy.weight(), data + 3 * size_of::<Span>());
        assert_eq!(copy.weight(), weight);
    }

    #[test]
    fn rows_are_admitted_at_once_while_the_pool_has_room() {
        let pool = RowPool::new(64 << 10, 1);
        let value = vec![0u8; 1000];
        let mut n = 0u32;
        // Empty: the first miss of each row is admitted.
        while pool.pool.free_bytes() >= (pool.pool.capacity() / 8) as u64 {
            let row = Bytes::from(format!("row-{n}"));
            assert!(pool.admit(1, &row), "first miss of row {n} with room");
            assert!(pool.insert_unless(1, &row, 0, &[cell("a", "q", &value)], || false));
            n += 1;
        }
        assert!(n > 40, "{n} rows fit");
        // Nearly full: back to the second miss.
        assert!(!pool.admit(1, b"new"), "first miss, nearly full");
        assert!(pool.admit(1, b"new"), "second miss");
    }

    /// A pool whose room is taken, so only the doorkeeper admits.
    fn full_pool() -> RowPool {
        let pool = RowPool::new(4 << 20, 1);
        let value = vec![0u8; 4000];
        let mut n = 0u32;
        while pool.pool.free_bytes() >= (pool.pool.capacity() / 8) as u64 {
            let row = Bytes::from(format!("filler-{n}"));
            assert!(pool.insert_unless(9, &row, 0, &[cell("a", "q", &value)], || false));
            n += 1;
        }
        pool
    }

    #[test]
    fn rows_are_admitted_on_their_second_miss_in_a_window() {
        let pool = full_pool();
        assert!(!pool.admit(1, b"a"), "first miss");
        assert!(pool.admit(1, b"a"), "second miss");
        assert!(!pool.admit(2, b"a"), "another region's row");
        // A window later the first miss is forgotten.
        let window = pool.doorkeeper.window;
        assert!(!pool.admit(1, b"b"));
        for i in 0..window {
            pool.admit(3, &i.to_be_bytes());
        }
        assert!(!pool.admit(1, b"b"), "forgotten after a window");
        // Rows read once are rarely admitted.
        let admitted = (0..window / 2)
            .filter(|i| pool.admit(4, &i.to_be_bytes()))
            .count() as u64;
        assert!(admitted < window / 8, "{admitted} of {}", window / 2);
    }

    #[test]
    fn refused_and_oversized_rows_are_not_cached() {
        let pool = RowPool::new(64 << 10, 1);
        let row = Bytes::from_static(b"row-1");
        let small = [cell("a", "q", b"v")];
        assert!(!pool.insert_unless(1, &row, 0, &small, || true));
        assert!(pool.get(1, &row).is_none());
        assert!(pool.insert_unless(1, &row, 0, &small, || false));
        assert!(pool.get(1, &row).is_some());
        assert!(pool.get(2, &row).is_none(), "another region's row");
        let big = [cell("a", "q", &vec![0u8; 70 << 10])];
        assert!(!pool.insert_unless(3, &row, 0, &big, || false));
        pool.remove(1, &row);
        assert!(pool.get(1, &row).is_none());
        assert!(pool.insert_unless(1, &row, 0, &small, || false));
        // Read from an earlier start, the entry replaces the narrower one.
        assert!(!pool.get(1, &row).is_some_and(|e| e.covers(i64::MIN)));
        assert!(pool.insert_unless(1, &row, i64::MIN, &small, || false));
        assert!(pool.get(1, &row).is_some_and(|e| e.covers(i64::MIN)));
        assert!(pool.insert_unless(1, &row, 0, &small, || false));
        assert!(
            pool.get(1, &row).is_some_and(|e| e.covers(i64::MIN)),
            "kept"
        );
        assert_eq!(pool.forget_region(1), 1);
        assert!(pool.get(1, &row).is_none());
    }
}
