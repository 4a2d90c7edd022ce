//! Version resolution: which cells of a row a reader sees, and which cells a
//! compaction keeps. This is HBase's `ScanQueryMatcher` with the default
//! (classic) delete semantics, as pure synchronous logic.
//!
//! Input: the cells of one (row, family), in cell order (qualifier ↑,
//! timestamp ↓, type code ↓, sequence ↓). Rules, applied in that order:
//!
//! 1. A cell whose sequence number is above the read point does not exist yet.
//! 2. Delete markers are never returned. `DeleteFamily@T` masks every put of the
//!    family with timestamp ≤ T, `DeleteFamilyVersion@T` those with timestamp = T,
//!    `DeleteColumn@T` the column's puts with timestamp ≤ T, `Delete@T` the
//!    column's puts with timestamp = T. Masking ignores sequence numbers: a put
//!    written *after* a marker, with a timestamp the marker covers, is masked too
//!    (HBase's "deletes mask puts" until a major compaction removes the marker).
//!    A marker is only tracked if its timestamp is within or after the read's
//!    time range (older markers can only mask cells outside the range anyway).
//! 3. Of several puts with the same column and timestamp, only the newest
//!    (highest sequence) exists; the others are hidden, not counted.
//!    With `KEEP_DELETED_CELLS` (TRUE or TTL) a read tracks only the markers
//!    *within* its time range (HBase's `seePastDeleteMarkers`): a read as of
//!    before a delete still sees what it deleted.
//! 4. Puts outside the time range `[min, max)` are skipped and not counted.
//! 5. Per column, the newest `max_versions` remaining puts are candidates; a
//!    candidate older than the family's TTL is dropped unless it is among the
//!    newest `min_versions`.
//!
//! The same rules decide what a major compaction keeps (read point ∞, all
//! time, the family's max versions, the TTL at compaction time), so a read
//! over all time sees the same before and after a major compaction — except,
//! exactly as in HBase, for puts outside the compaction (memstore, later
//! files) that a dropped delete marker used to mask. Reads with a time range
//! can see less afterwards, also as in HBase: versions beyond max versions (or
//! expired ones kept only as min versions) that a narrow range used to reach
//! are gone.

use crate::cell::{Cell, CellType};
use bytes::Bytes;

/// HBase's `KEEP_DELETED_CELLS`: whether delete markers, and the puts they
/// mask, survive flushes and compactions (and so stay reachable by reads
/// with a time range before the delete).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KeepDeleted {
    /// Markers mask in flushes and compactions; a major compaction drops
    /// them with what they mask (HBase's default).
    #[default]
    False,
    /// Markers and the puts they mask are kept; only versions and the TTL
    /// remove cells.
    True,
    /// As `True` until a marker is older than the family's TTL; then it
    /// masks and goes, as with `False`.
    Ttl,
}

/// Per-family retention settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Versions kept per column (≥ 1).
    pub max_versions: u32,
    /// Versions kept per column even when older than the TTL.
    pub min_versions: u32,
    /// Time to live in milliseconds; `None` keeps cells forever.
    pub ttl_ms: Option<i64>,
    /// `KEEP_DELETED_CELLS`.
    pub keep_deleted: KeepDeleted,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_versions: 1,
            min_versions: 0,
            ttl_ms: None,
            keep_deleted: KeepDeleted::False,
        }
    }
}

impl Retention {
    /// True if a cell stamped `ts` is older than the TTL at `now_ms`.
    pub fn expired(&self, ts: i64, now_ms: i64) -> bool {
        self.ttl_ms
            .is_some_and(|ttl| ts < now_ms.saturating_sub(ttl))
    }

    /// Whether a flush or compaction at `now_ms` lets a delete marker
    /// stamped `ts` mask the puts beneath it (HBase's `trackDelete`): always
    /// without `KEEP_DELETED_CELLS`, never with TRUE, once expired with TTL.
    pub fn marker_masks_in_compaction(&self, ts: i64, now_ms: i64) -> bool {
        match self.keep_deleted {
            KeepDeleted::False => true,
            KeepDeleted::True => false,
            KeepDeleted::Ttl => self.expired(ts, now_ms),
        }
    }
}

/// What a resolver is deciding for.
#[derive(Debug, Clone)]
pub struct ResolveSpec {
    /// Cells with a higher sequence number are invisible.
    pub read_point: u64,
    /// Inclusive lower timestamp bound.
    pub min_ts: i64,
    /// Exclusive upper timestamp bound.
    pub max_ts: i64,
    /// Versions per column to return (capped by the family's max versions).
    pub max_versions: u32,
    /// The family's retention.
    pub retention: Retention,
    /// Current time in milliseconds (for the TTL).
    pub now_ms: i64,
    /// HBase's raw scan: delete markers and the puts they mask are returned
    /// too (markers mask nothing); versions count puts only, are not capped
    /// by the family's, and nothing expires.
    pub raw: bool,
}

impl ResolveSpec {
    /// What a major compaction keeps: everything a read sees at read point ∞.
    pub fn major_compaction(retention: Retention, now_ms: i64) -> ResolveSpec {
        ResolveSpec {
            read_point: u64::MAX,
            min_ts: i64::MIN,
            max_ts: i64::MAX,
            max_versions: retention.max_versions,
            retention,
            now_ms,
            raw: false,
        }
    }

    fn versions(&self) -> u32 {
        if self.raw {
            return self.max_versions.max(1);
        }
        self.max_versions.min(self.retention.max_versions).max(1)
    }

    fn expired(&self, ts: i64) -> bool {
        !self.raw && self.retention.expired(ts, self.now_ms)
    }

    /// Whether a delete marker stamped `ts` masks for this read: one within
    /// or after the time range (older ones can only mask puts outside it);
    /// with `KEEP_DELETED_CELLS`, one within it only (HBase's
    /// `seePastDeleteMarkers`).
    fn tracks_marker(&self, ts: i64) -> bool {
        match self.retention.keep_deleted {
            KeepDeleted::False => ts >= self.min_ts,
            KeepDeleted::True | KeepDeleted::Ttl => ts >= self.min_ts && ts < self.max_ts,
        }
    }
}

/// Timestamps of version delete markers seen so far in one column or family.
/// Markers arrive in key order, so timestamps descending: lookups are binary
/// searches (a row with 100,000 markers costs O(log n) per cell, not O(n)).
/// Should they ever arrive out of order, lookups fall back to a linear search.
#[derive(Debug, Default)]
struct TsSet {
    ts: Vec<i64>,
    unordered: bool,
}

impl TsSet {
    fn insert(&mut self, ts: i64) {
        if self.ts.last().is_some_and(|&last| ts > last) {
            self.unordered = true;
        }
        self.ts.push(ts);
    }

    fn contains(&self, ts: i64) -> bool {
        if self.unordered {
            self.ts.contains(&ts)
        } else {
            self.ts.binary_search_by(|probe| ts.cmp(probe)).is_ok()
        }
    }

    fn clear(&mut self) {
        self.ts.clear();
        self.unordered = false;
    }
}

/// Streaming resolver for the cells of one (row, family). Feed cells in order
/// with [`FamilyResolver::accept`]; call [`FamilyResolver::reset`] at each new
/// row or family.
#[derive(Debug)]
pub struct FamilyResolver {
    spec: ResolveSpec,
    family_delete_ts: Option<i64>,
    family_version_deletes: TsSet,
    column: Option<Bytes>,
    column_delete_ts: Option<i64>,
    column_version_deletes: TsSet,
    last_put_ts: Option<i64>,
    versions: u32,
    /// A raw read's previous (timestamp, type) in the column.
    last_raw: Option<(i64, CellType)>,
}

impl FamilyResolver {
    /// A resolver for `spec`.
    pub fn new(spec: ResolveSpec) -> FamilyResolver {
        FamilyResolver {
            spec,
            family_delete_ts: None,
            family_version_deletes: TsSet::default(),
            column: None,
            column_delete_ts: None,
            column_version_deletes: TsSet::default(),
            last_put_ts: None,
            versions: 0,
            last_raw: None,
        }
    }

    /// Lets the resolver offer up to the family's max versions per column
    /// (what a filter sees, as in HBase); returns the read's own limit,
    /// which then applies to the cells the filter includes.
    pub fn widen_to_family(&mut self) -> u32 {
        let own = self.spec.versions();
        // A raw read's filter sees every version (HBase: Integer.MAX_VALUE).
        self.spec.max_versions = if self.spec.raw {
            u32::MAX
        } else {
            self.spec.retention.max_versions
        };
        own
    }

    /// Forgets all state: the next cell starts a new (row, family).
    pub fn reset(&mut self) {
        self.family_delete_ts = None;
        self.family_version_deletes.clear();
        self.reset_column(None);
    }

    fn reset_column(&mut self, column: Option<Bytes>) {
        self.column = column;
        self.column_delete_ts = None;
        self.column_version_deletes.clear();
        self.last_put_ts = None;
        self.versions = 0;
        self.last_raw = None;
    }

    /// True once nothing more of the current column can be visible: it has
    /// given its `max_versions` puts, so every later cell of it (older
    /// versions, and version markers that could only mask those) would be
    /// refused. A reader may then skip the rest of the column unread. Never
    /// true for the empty qualifier, whose column shares its place with the
    /// family's delete markers (which mask other columns).
    pub fn column_complete(&self) -> bool {
        // A raw read still answers the markers beneath its last put.
        !self.spec.raw
            && self.versions >= self.spec.versions()
            && self.column.as_ref().is_some_and(|q| !q.is_empty())
    }

    /// True if `cell` (the next in order) is visible.
    pub fn accept(&mut self, cell: &Cell) -> bool {
        // The column first, even for a cell the read cannot see: otherwise
        // `column_complete` would still speak of the previous column, and a
        // reader skipping "the rest of this column" would skip the visible
        // older versions of a column whose newest write is after the read
        // point (a row read during updates missing a field).
        if self.column.as_deref() != Some(&cell.qualifier[..]) {
            self.reset_column(Some(cell.qualifier.clone()));
        }
        if cell.seq > self.spec.read_point {
            return false;
        }
        if self.spec.raw {
            return self.accept_raw(cell);
        }
        let ts = cell.timestamp;
        if cell.kind.is_delete() {
            if self.spec.tracks_marker(ts) {
                match cell.kind {
                    CellType::DeleteFamily => {
                        self.family_delete_ts =
                            Some(self.family_delete_ts.map_or(ts, |t| t.max(ts)))
                    }
                    CellType::DeleteFamilyVersion => self.family_version_deletes.insert(ts),
                    CellType::DeleteColumn => {
                        self.column_delete_ts =
                            Some(self.column_delete_ts.map_or(ts, |t| t.max(ts)))
                    }
                    CellType::Delete => self.column_version_deletes.insert(ts),
                    CellType::Put => {}
                }
            }
            return false;
        }
        if self.family_delete_ts.is_some_and(|t| ts <= t)
            || self.column_delete_ts.is_some_and(|t| ts <= t)
            || self.family_version_deletes.contains(ts)
            || self.column_version_deletes.contains(ts)
        {
            return false;
        }
        if self.last_put_ts == Some(ts) {
            return false;
        }
        self.last_put_ts = Some(ts);
        if ts >= self.spec.max_ts || ts < self.spec.min_ts {
            return false;
        }
        if self.versions >= self.spec.versions() {
            return false;
        }
        if self.spec.expired(ts) && self.versions >= self.spec.retention.min_versions {
            return false;
        }
        self.versions += 1;
        true
    }
}

impl FamilyResolver {
    /// A raw read (HBase's `RawScanQueryMatcher`): every cell in the time
    /// range, markers included and masking nothing; a duplicate of the
    /// previous (timestamp, type) goes; past the read's versions of puts
    /// the rest of the column goes.
    fn accept_raw(&mut self, cell: &Cell) -> bool {
        let ts = cell.timestamp;
        if ts >= self.spec.max_ts || ts < self.spec.min_ts {
            return false;
        }
        if self.last_raw == Some((ts, cell.kind)) {
            return false;
        }
        if !cell.kind.is_delete() {
            self.versions += 1;
        }
        if self.versions > self.spec.versions() {
            return false;
        }
        self.last_raw = Some((ts, cell.kind));
        true
    }
}

/// What a minor compaction keeps of one (row, family): every delete marker, and
/// every put not masked by a marker among the inputs. Nothing else is dropped,
/// so a minor compaction never changes what any read sees (a deliberate choice:
/// HBase also drops excess versions here, which can resurrect or hide data when
/// a newer file holds a delete; we leave that to major compactions). With
/// `KEEP_DELETED_CELLS` only the markers [`Retention::marker_masks_in_compaction`]
/// lets mask do.
#[derive(Debug, Default)]
pub struct MinorCompactionFilter {
    /// Markers stamped before this mask (`None`: all of them).
    masks_before: Option<i64>,
    family_delete_ts: Option<i64>,
    family_version_deletes: TsSet,
    column: Option<Bytes>,
    column_delete_ts: Option<i64>,
    column_version_deletes: TsSet,
}

impl MinorCompactionFilter {
    /// The filter for a family with `retention`, compacting at `now_ms`.
    pub fn new(retention: Retention, now_ms: i64) -> MinorCompactionFilter {
        let masks_before = match retention.keep_deleted {
            KeepDeleted::False => None,
            KeepDeleted::True => Some(i64::MIN),
            KeepDeleted::Ttl => Some(
                retention
                    .ttl_ms
                    .map_or(i64::MIN, |ttl| now_ms.saturating_sub(ttl)),
            ),
        };
        MinorCompactionFilter {
            masks_before,
            ..MinorCompactionFilter::default()
        }
    }

    /// Forgets all state: the next cell starts a new (row, family).
    pub fn reset(&mut self) {
        *self = MinorCompactionFilter {
            masks_before: self.masks_before,
            ..MinorCompactionFilter::default()
        };
    }

    /// True if `cell` (the next in order) is kept.
    pub fn keep(&mut self, cell: &Cell) -> bool {
        if self.column.as_deref() != Some(&cell.qualifier[..]) {
            self.column = Some(cell.qualifier.clone());
            self.column_delete_ts = None;
            self.column_version_deletes.clear();
        }
        let ts = cell.timestamp;
        if cell.kind.is_delete() && self.masks_before.is_some_and(|cut| ts >= cut) {
            // Kept, and masking nothing (KEEP_DELETED_CELLS).
            return true;
        }
        match cell.kind {
            CellType::DeleteFamily => {
                self.family_delete_ts = Some(self.family_delete_ts.map_or(ts, |t| t.max(ts)));
                true
            }
            CellType::DeleteFamilyVersion => {
                self.family_version_deletes.insert(ts);
                true
            }
            CellType::DeleteColumn => {
                self.column_delete_ts = Some(self.column_delete_ts.map_or(ts, |t| t.max(ts)));
                true
            }
            CellType::Delete => {
                self.column_version_deletes.insert(ts);
                true
            }
            CellType::Put => {
                !(self.family_delete_ts.is_some_and(|t| ts <= t)
                    || self.column_delete_ts.is_some_and(|t| ts <= t)
                    || self.family_version_deletes.contains(ts)
                    || self.column_version_deletes.contains(ts))
            }
        }
    }
}

/// What a flush keeps of one (row, family), as HBase's flush keeps it (its
/// `COMPACT_RETAIN_DELETES` scan): delete markers; no put a marker in the
/// flushed cells masks; per column, the newest `max_versions` puts (a
/// time-range read after a flush no longer reaches older ones, as in
/// HBase), and of those none older than the TTL beyond the `min_versions`
/// newest. The first put past those ends the column: it and every older
/// cell of the column (markers too) go, as HBase's flush seeks past them. Cells above the oldest read point in progress are kept and
/// neither counted nor masking: a read that started before them must still
/// find the versions beneath.
#[derive(Debug)]
pub struct FlushFilter {
    retention: Retention,
    now_ms: i64,
    read_point: u64,
    markers: MinorCompactionFilter,
    column: Option<Bytes>,
    last_put_ts: Option<i64>,
    versions: u32,
    /// The current column gave its versions: the rest of it goes.
    column_done: bool,
}

impl FlushFilter {
    /// A filter for a flush at `read_point`, at `now_ms`.
    pub fn new(retention: Retention, now_ms: i64, read_point: u64) -> FlushFilter {
        FlushFilter {
            retention,
            now_ms,
            read_point,
            markers: MinorCompactionFilter::new(retention, now_ms),
            column: None,
            last_put_ts: None,
            versions: 0,
            column_done: false,
        }
    }

    /// Forgets all state: the next cell starts a new (row, family).
    pub fn reset(&mut self) {
        self.markers.reset();
        self.column = None;
        self.last_put_ts = None;
        self.versions = 0;
        self.column_done = false;
    }

    /// True if `cell` (the next in order) is kept.
    pub fn keep(&mut self, cell: &Cell) -> bool {
        if cell.seq > self.read_point {
            // Too new for a read in flight: kept, not counted, and (a
            // marker) masking nothing beneath it yet.
            return true;
        }
        if self.column.as_deref() != Some(&cell.qualifier[..]) {
            self.column = Some(cell.qualifier.clone());
            self.last_put_ts = None;
            self.versions = 0;
            self.column_done = false;
        }
        // HBase's flush seeks past the rest of a column once it has its
        // versions: older markers of the column go too — but never the
        // family's markers, which sort in the empty qualifier's place and
        // mask every column of the row (dropping one would bring back
        // cells of other columns it deleted).
        if self.column_done
            && !matches!(
                cell.kind,
                CellType::DeleteFamily | CellType::DeleteFamilyVersion
            )
        {
            return false;
        }
        if !self.markers.keep(cell) {
            return false;
        }
        if cell.kind.is_delete() {
            return true;
        }
        if self.last_put_ts == Some(cell.timestamp) {
            // Not counted: a same-timestamp write the newer one hides.
            return true;
        }
        self.last_put_ts = Some(cell.timestamp);
        self.versions += 1;
        let expired = self.retention.expired(cell.timestamp, self.now_ms);
        if self.versions > self.retention.max_versions.max(1)
            || (expired && self.versions > self.retention.min_versions)
        {
            self.column_done = true;
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::compare_cells;

    #[test]
    fn ts_set_finds_markers_in_order_and_out_of_order() {
        let mut s = TsSet::default();
        for ts in [90, 70, 70, 50, 10] {
            s.insert(ts);
        }
        for (ts, want) in [(90, true), (80, false), (70, true), (10, true), (5, false)] {
            assert_eq!(s.contains(ts), want, "{ts}");
        }
        s.insert(95);
        assert!(s.contains(95) && s.contains(50) && !s.contains(60));
        s.clear();
        assert!(!s.contains(90));
    }

    fn put(q: &str, ts: i64, seq: u64) -> Cell {
        Cell::put("r", "f", q.to_string(), ts, seq, format!("{q}@{ts}#{seq}"))
    }
    fn del(q: &str, ts: i64, kind: CellType, seq: u64) -> Cell {
        Cell::delete("r", "f", q.to_string(), ts, kind, seq)
    }

    fn resolve(mut cells: Vec<Cell>, spec: ResolveSpec) -> Vec<String> {
        cells.sort_by(compare_cells);
        let mut r = FamilyResolver::new(spec);
        cells
            .iter()
            .filter(|c| r.accept(c))
            .map(|c| String::from_utf8_lossy(&c.value).into_owned())
            .collect()
    }

    fn spec(max_versions: u32) -> ResolveSpec {
        ResolveSpec {
            raw: false,
            read_point: u64::MAX,
            min_ts: i64::MIN,
            max_ts: i64::MAX,
            max_versions,
            retention: Retention {
                max_versions: 3,
                min_versions: 0,
                ttl_ms: None,
                keep_deleted: KeepDeleted::False,
            },
            now_ms: 1000,
        }
    }

    #[test]
    fn newest_versions_win() {
        let cells = vec![
            put("a", 1, 1),
            put("a", 2, 2),
            put("a", 3, 3),
            put("a", 4, 4),
            put("b", 1, 5),
        ];
        assert_eq!(resolve(cells.clone(), spec(1)), ["a@4#4", "b@1#5"]);
        // Capped by the family's max versions (3).
        assert_eq!(
            resolve(cells, spec(10)),
            ["a@4#4", "a@3#3", "a@2#2", "b@1#5"]
        );
    }

    #[test]
    fn markers_mask_by_timestamp_not_sequence() {
        let cells = vec![
            put("a", 5, 1),
            del("a", 5, CellType::Delete, 2),
            put("a", 5, 3),
            put("a", 4, 4),
        ];
        // Both puts at ts 5 are masked, including the later one; ts 4 shows.
        assert_eq!(resolve(cells, spec(3)), ["a@4#4"]);
        let cells = vec![
            put("a", 5, 1),
            put("a", 3, 2),
            del("a", 4, CellType::DeleteColumn, 3),
            put("b", 1, 4),
        ];
        assert_eq!(resolve(cells, spec(3)), ["a@5#1", "b@1#4"]);
        let cells = vec![
            put("a", 5, 1),
            put("b", 3, 2),
            del("", 4, CellType::DeleteFamily, 3),
            put("", 9, 4),
        ];
        assert_eq!(resolve(cells, spec(3)), ["@9#4", "a@5#1"]);
        let cells = vec![
            put("a", 5, 1),
            put("b", 4, 2),
            del("", 4, CellType::DeleteFamilyVersion, 3),
        ];
        assert_eq!(resolve(cells, spec(3)), ["a@5#1"]);
    }

    #[test]
    fn read_point_hides_later_writes_and_markers() {
        let cells = vec![
            put("a", 5, 1),
            del("a", 9, CellType::DeleteColumn, 3),
            put("a", 6, 4),
        ];
        let mut s = spec(3);
        s.read_point = 2;
        assert_eq!(resolve(cells, s), ["a@5#1"]);
    }

    /// As a reader that skips a column once `column_complete` says so
    /// (SEEK_NEXT_COL): a column whose newest write is after the read
    /// point, after a complete column, still gives its visible version.
    #[test]
    fn a_column_updated_after_the_read_point_is_not_skipped() {
        let mut cells = vec![
            put("a", 5, 1),
            put("b", 5, 2),
            put("b", 7, 9), // after the read point
            put("c", 5, 3),
        ];
        cells.sort_by(compare_cells);
        let mut s = spec(1);
        s.read_point = 5;
        let mut r = FamilyResolver::new(s);
        let mut seen = Vec::new();
        let mut skip: Option<Bytes> = None;
        for c in &cells {
            if skip.as_ref().is_some_and(|q| *q == c.qualifier) {
                continue;
            }
            skip = None;
            if r.accept(c) {
                seen.push(String::from_utf8_lossy(&c.value).into_owned());
            }
            if r.column_complete() {
                skip = Some(c.qualifier.clone());
            }
        }
        assert_eq!(seen, ["a@5#1", "b@5#2", "c@5#3"]);
    }

    #[test]
    fn a_raw_read_answers_markers_and_what_they_mask() {
        let cells = vec![
            put("a", 5, 1),
            del("a", 4, CellType::DeleteColumn, 2),
            put("a", 4, 3),
            put("a", 3, 4),
            put("a", 3, 5),
        ];
        let mut s = spec(2);
        s.raw = true;
        // Two puts (4, then the newest write at 3); the marker counts no version.
        let got = resolve(cells.clone(), s.clone());
        assert_eq!(got, ["a@5#1", "", "a@4#3"]);
        s.max_versions = 10;
        assert_eq!(resolve(cells, s), ["a@5#1", "", "a@4#3", "a@3#5"]);
    }

    #[test]
    fn same_timestamp_keeps_only_the_newest_write() {
        let cells = vec![put("a", 5, 1), put("a", 5, 2), put("a", 4, 3)];
        assert_eq!(resolve(cells, spec(2)), ["a@5#2", "a@4#3"]);
    }

    #[test]
    fn time_range_and_ttl() {
        let cells = vec![put("a", 1, 1), put("a", 5, 2), put("a", 9, 3)];
        let mut s = spec(3);
        s.min_ts = 2;
        s.max_ts = 9;
        assert_eq!(resolve(cells.clone(), s), ["a@5#2"]);
        let mut s = spec(3);
        s.retention.ttl_ms = Some(996); // now 1000: ts < 4 expired
        assert_eq!(resolve(cells.clone(), s.clone()), ["a@9#3", "a@5#2"]);
        s.retention.ttl_ms = Some(10); // everything expired
        assert!(resolve(cells.clone(), s.clone()).is_empty());
        s.retention.min_versions = 1;
        assert_eq!(resolve(cells, s), ["a@9#3"]);
    }

    #[test]
    fn a_flush_keeps_markers_and_drops_masked_and_excess_versions() {
        let mut cells = [
            put("a", 5, 1),
            put("a", 4, 2),
            put("a", 3, 3),
            put("b", 9, 4),
            del("b", 8, CellType::DeleteColumn, 5),
            put("b", 7, 6),
            put("c", 2, 99), // above the read point: kept, not counted
            put("c", 1, 7),
        ];
        cells.sort_by(compare_cells);
        let retention = Retention {
            max_versions: 2,
            min_versions: 0,
            ttl_ms: None,
            keep_deleted: KeepDeleted::False,
        };
        let mut f = FlushFilter::new(retention, 1000, 50);
        let kept: Vec<(String, i64)> = cells
            .iter()
            .filter(|c| f.keep(c))
            .map(|c| {
                (
                    String::from_utf8_lossy(&c.qualifier).into_owned(),
                    c.timestamp,
                )
            })
            .collect();
        let want: Vec<(String, i64)> = [("a", 5), ("a", 4), ("b", 9), ("b", 8), ("c", 2), ("c", 1)]
            .into_iter()
            .map(|(q, t)| (q.to_string(), t))
            .collect();
        assert_eq!(kept, want);
    }

    /// Found by the region model: a family's marker sorts in the empty
    /// qualifier's place, after that column's puts; the column having its
    /// versions must not take the marker with it (it masks other columns).
    #[test]
    fn a_flush_keeps_family_markers_past_the_empty_column_s_versions() {
        let mut cells = [
            put("", 1005, 1),
            put("", 1001, 3),
            del("", 1000, CellType::DeleteFamily, 2),
            del("", 999, CellType::DeleteFamilyVersion, 2),
            del("", 998, CellType::Delete, 2),
        ];
        cells.sort_by(compare_cells);
        let retention = Retention {
            max_versions: 1,
            min_versions: 1,
            ttl_ms: None,
            keep_deleted: KeepDeleted::False,
        };
        let mut f = FlushFilter::new(retention, 1000, 50);
        let kept: Vec<(i64, CellType)> = cells
            .iter()
            .filter(|c| f.keep(c))
            .map(|c| (c.timestamp, c.kind))
            .collect();
        assert_eq!(
            kept,
            [
                (1005, CellType::Put),
                (1000, CellType::DeleteFamily),
                (999, CellType::DeleteFamilyVersion)
            ]
        );
    }

    #[test]
    fn a_flush_keeps_what_a_read_in_progress_sees() {
        // A read at point 10 sees a@3 (#10) and b@7 (#5): the newer a@4
        // (#11) and the marker over b (#12) are above its point.
        let mut cells = [
            put("a", 4, 11),
            put("a", 3, 10),
            put("a", 2, 9),
            del("b", 8, CellType::DeleteColumn, 12),
            put("b", 7, 5),
        ];
        cells.sort_by(compare_cells);
        let retention = Retention {
            max_versions: 1,
            min_versions: 0,
            ttl_ms: None,
            keep_deleted: KeepDeleted::False,
        };
        let mut f = FlushFilter::new(retention, 1000, 10);
        let kept: Vec<(String, i64)> = cells
            .iter()
            .filter(|c| f.keep(c))
            .map(|c| {
                (
                    String::from_utf8_lossy(&c.qualifier).into_owned(),
                    c.timestamp,
                )
            })
            .collect();
        let want: Vec<(String, i64)> = [("a", 4), ("a", 3), ("b", 8), ("b", 7)]
            .into_iter()
            .map(|(q, t)| (q.to_string(), t))
            .collect();
        assert_eq!(kept, want);
    }

    #[test]
    fn minor_compaction_keeps_markers_and_unmasked_puts() {
        let mut cells = [
            put("a", 5, 1),
            del("a", 4, CellType::DeleteColumn, 2),
            put("a", 3, 3),
            put("a", 2, 4),
            put("b", 7, 5),
            put("b", 6, 6),
        ];
        cells.sort_by(compare_cells);
        let mut f = MinorCompactionFilter::default();
        let kept: Vec<_> = cells
            .iter()
            .filter(|c| f.keep(c))
            .map(|c| (c.qualifier.clone(), c.timestamp, c.kind))
            .collect();
        assert_eq!(kept.len(), 4, "{kept:?}");
    }
}
