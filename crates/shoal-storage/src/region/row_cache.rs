//! A region's use of the row cache: which gets it answers, and the rule that
//! keeps a cached row from ever hiding a write.
//!
//! What is cached: the result of a whole-row get of the newest versions (one
//! version, a time range open at its end, as HBase clients send `[0, ∞)`),
//! with the range's start, for regions whose families have no TTL (a TTL
//! would make a cached cell expire while it sits in the cache) and all cache
//! their data. A get of some families or columns, newest version, is answered
//! from the whole row's entry by picking its cells.
//!
//! The rule, for a write of sequence `s` to row `r`: *before* the write
//! becomes visible (before the read point can reach `s`), it raises the
//! stripe mark of `r` to at least `s` and then removes `r`'s entry, under the
//! entry's pool-shard lock. A get that computed `r` at read point `p` inserts
//! its result only if, under that same lock, the stripe mark is still `≤ p`.
//! So for any write `s > p` (which the result cannot contain) either the mark
//! step came first and the insert is refused, or the insert came first and
//! the write removes it. An entry present is therefore the row as of now, and
//! a hit needs no read point. Marks are per stripe of rows, not per row (a
//! write to another row of the stripe refuses an insert now and then; it is
//! never wrong). A flush changes no visible cell. A compaction can: dropping
//! a delete marker makes a put it masked (stamped at or before it, written
//! after it) visible again, as in HBase. So a compaction, once its files are
//! installed, gives the region a new key in the pool; reads that started
//! before offer under the old key, where nothing looks.

use super::config::FamilyConfig;
use super::ops::{Get, TimeRange};
pub use crate::cache::HandedRow;
use crate::cache::{BlockCache, CachedRow, RowBundle, RowBundleError};
use crate::cell::Cell;
use bytes::Bytes;
use std::sync::atomic::{AtomicU64, Ordering};

/// Stripes of write marks per region.
const STRIPES: usize = 64;

/// Region instances get distinct keys in the server-wide pool.
static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

/// One open region's row-cache state.
pub(super) struct RegionRows {
    cache: BlockCache,
    /// This instance's key in the pool, renewed whenever a compaction
    /// rewrites files: dropping delete markers can make a masked cell
    /// visible again (as in HBase), so older entries are left unreachable
    /// for eviction to take, and reads that began before offer under the
    /// old key.
    instance: AtomicU64,
    /// Per stripe: the highest sequence written to a row of the stripe.
    marks: Box<[AtomicU64]>,
}

impl std::fmt::Debug for RegionRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegionRows")
            .field("instance", &self.instance.load(Ordering::Relaxed))
            .finish()
    }
}

impl RegionRows {
    /// The state for a region with `families`, or `None` if its rows may not
    /// be cached (no row cache, a TTL, or a family that does not cache data).
    pub(super) fn new(cache: Option<&BlockCache>, families: &[FamilyConfig]) -> Option<RegionRows> {
        let cache = cache?;
        cache.rows()?;
        if families
            .iter()
            .any(|f| f.retention.ttl_ms.is_some() || !f.cache.cache_data_on_read)
        {
            return None;
        }
        Some(RegionRows {
            cache: cache.clone(),
            instance: AtomicU64::new(NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed)),
            marks: (0..STRIPES).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    fn mark(&self, row: &[u8]) -> &AtomicU64 {
        &self.marks[(crate::cache::row_hash(0, row) % STRIPES as u64) as usize]
    }

    /// The key of entries now; a read takes it before its snapshot and
    /// offers its result under it.
    pub(super) fn instance(&self) -> u64 {
        self.instance.load(Ordering::SeqCst)
    }

    /// A compaction replaced files (after its new file set is installed).
    pub(super) fn files_rewritten(&self) {
        let old = self.instance.swap(
            NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed),
            Ordering::SeqCst,
        );
        if let Some(rows) = self.cache.rows() {
            rows.forget_region(old);
        }
    }

    /// A write of `seq` to `row` is about to become visible: see the rule.
    pub(super) fn note_write(&self, row: &Bytes, seq: u64) {
        self.mark(row).fetch_max(seq, Ordering::SeqCst);
        if let Some(rows) = self.cache.rows() {
            rows.remove(self.instance(), row);
        }
    }

    /// True if the cache may answer `get`.
    pub(super) fn answers(get: &Get) -> bool {
        get.filter.is_none()
            && get.per_family.is_empty()
            && get.max_versions == 1
            && get.time_range.max == TimeRange::ALL.max
            && get
                .columns
                .families
                .values()
                .all(|q| q.as_ref().is_none_or(|set| !set.is_empty()))
    }

    /// True if `get`'s result may be cached: a whole row.
    pub(super) fn fills(get: &Get) -> bool {
        Self::answers(get) && get.columns.families.is_empty()
    }

    /// The cached answer to `get` (which [`RegionRows::answers`]).
    pub(super) fn lookup(&self, get: &Get) -> Option<Vec<Cell>> {
        let entry = self.cache.rows()?.get(self.instance(), &get.row)?;
        let from = get.time_range.min;
        if !entry.covers(from) {
            return None;
        }
        Some(entry.cells(from, |family, qualifier| {
            get.columns.wants(family, qualifier)
        }))
    }

    /// Offers a whole row read at `read_point`; kept unless a write the read
    /// could not see has been noted since (see the rule).
    pub(super) fn offer(
        &self,
        instance: u64,
        row: &Bytes,
        from: i64,
        read_point: u64,
        cells: &[Cell],
    ) {
        if cells.is_empty() {
            // Absent rows are left to the bloom filters.
            return;
        }
        let Some(rows) = self.cache.rows() else {
            return;
        };
        if !rows.admit(instance, row) {
            return;
        }
        let mark = self.mark(row);
        rows.insert_unless(instance, row, from, cells, || {
            mark.load(Ordering::SeqCst) > read_point
        });
    }

    /// This instance's entries, for the region's next owner: up to about
    /// `max_bytes` of bundle, recently read ones first.
    pub(super) fn hand_over(&self, max_bytes: usize) -> RowBundle {
        let Some(rows) = self.cache.rows() else {
            return RowBundle::default();
        };
        RowBundle::encode(&rows.entries_of(self.instance(), max_bytes), max_bytes)
    }

    /// Takes the rows a former owner handed over, those for which `fits`,
    /// each as the row as of this region's state at `read_point` (its
    /// open: the former owner's final state). The rule holds as for a read
    /// at `read_point`: a row whose stripe took a write since is refused.
    /// They skip admission (the former owner's reads chose them). Returns
    /// how many were kept; a bundle that fails its checks keeps none.
    pub(super) fn take_over(
        &self,
        handed: &RowBundle,
        read_point: u64,
        fits: impl Fn(&CachedRow) -> bool,
    ) -> Result<usize, RowBundleError> {
        let Some(rows) = self.cache.rows() else {
            return Ok(0);
        };
        let instance = self.instance();
        let mut kept = 0;
        for entry in handed.entries()? {
            if !fits(&entry) {
                continue;
            }
            let mark = self.mark(entry.row());
            if rows
                .insert_entry_unless(instance, entry, || mark.load(Ordering::SeqCst) > read_point)
            {
                kept += 1;
            }
        }
        Ok(kept)
    }

    /// Drops every entry of this region instance.
    pub(super) fn forget(&self) {
        if let Some(rows) = self.cache.rows() {
            rows.forget_region(self.instance());
        }
    }
}

impl Drop for RegionRows {
    fn drop(&mut self) {
        self.forget();
    }
}
