//! What a major compaction keeps of a family with `KEEP_DELETED_CELLS`
//! (TRUE or TTL): HBase's `MajorCompactionScanQueryMatcher` with its
//! `ScanWildcardColumnTracker`, as pure logic over the cells of one (row,
//! family) in cell order.
//!
//! - A delete marker masks nothing and stays (TRUE; TTL: until it is older
//!   than the TTL, when it masks the puts beneath it and is dropped, as
//!   without the setting).
//! - Per column, puts count as versions whether deleted or not; markers do
//!   not count. The first cell beyond `max_versions` puts ends the column
//!   (it and every older cell of it go); so does the first cell older than
//!   the TTL once the column has given `min_versions` puts.
//! - A cell with the same timestamp and type as the previous one kept (a
//!   duplicate write) goes.
//!
//! So reads with a time range before a delete find what it deleted until
//! versions or the TTL remove it, as in HBase.

use super::versions::{KeepDeleted, MinorCompactionFilter, Retention};
use crate::cell::{Cell, CellType};
use bytes::Bytes;

/// The major compaction filter for a family keeping deleted cells.
#[derive(Debug)]
pub struct KeptDeletesCompaction {
    retention: Retention,
    now_ms: i64,
    /// The markers that mask (TTL: the expired ones).
    markers: MinorCompactionFilter,
    column: Option<Bytes>,
    puts: u32,
    last: Option<(i64, CellType)>,
    column_done: bool,
}

impl KeptDeletesCompaction {
    /// A filter for `retention` (whose `keep_deleted` is not FALSE) at `now_ms`.
    pub fn new(retention: Retention, now_ms: i64) -> KeptDeletesCompaction {
        KeptDeletesCompaction {
            retention,
            now_ms,
            markers: MinorCompactionFilter::new(retention, now_ms),
            column: None,
            puts: 0,
            last: None,
            column_done: false,
        }
    }

    /// Forgets all state: the next cell starts a new (row, family).
    pub fn reset(&mut self) {
        self.markers.reset();
        self.column = None;
        self.reset_column();
    }

    fn reset_column(&mut self) {
        self.puts = 0;
        self.last = None;
        self.column_done = false;
    }

    /// True if `cell` (the next in order) is kept.
    pub fn keep(&mut self, cell: &Cell) -> bool {
        if self.column.as_deref() != Some(&cell.qualifier[..]) {
            self.column = Some(cell.qualifier.clone());
            self.reset_column();
        }
        if self.column_done {
            return false;
        }
        let unmasked = self.markers.keep(cell);
        if cell.kind.is_delete() {
            if self.retention.keep_deleted == KeepDeleted::Ttl
                && self
                    .retention
                    .marker_masks_in_compaction(cell.timestamp, self.now_ms)
            {
                return false;
            }
        } else if !unmasked {
            return false;
        }
        self.check_versions(cell)
    }

    /// HBase's `ScanWildcardColumnTracker.checkVersions` for one cell.
    fn check_versions(&mut self, cell: &Cell) -> bool {
        let key = (cell.timestamp, cell.kind);
        if self.last == Some(key) {
            return false;
        }
        if !cell.kind.is_delete() {
            self.puts += 1;
        }
        let r = &self.retention;
        if self.puts > r.max_versions.max(1)
            || (self.puts > r.min_versions && r.expired(cell.timestamp, self.now_ms))
        {
            self.column_done = true;
            return false;
        }
        self.last = Some(key);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::compare_cells;

    fn put(q: &str, ts: i64) -> Cell {
        Cell::put("r", "f", q.to_string(), ts, 1, "v")
    }
    fn del(q: &str, ts: i64, kind: CellType) -> Cell {
        Cell::delete("r", "f", q.to_string(), ts, kind, 2)
    }

    fn kept(mut cells: Vec<Cell>, retention: Retention, now: i64) -> Vec<(String, i64, CellType)> {
        cells.sort_by(compare_cells);
        let mut f = KeptDeletesCompaction::new(retention, now);
        cells
            .iter()
            .filter(|c| f.keep(c))
            .map(|c| {
                (
                    String::from_utf8_lossy(&c.qualifier).into_owned(),
                    c.timestamp,
                    c.kind,
                )
            })
            .collect()
    }

    fn retention(keep_deleted: KeepDeleted, max: u32, ttl_ms: Option<i64>) -> Retention {
        Retention {
            max_versions: max,
            min_versions: 0,
            ttl_ms,
            keep_deleted,
        }
    }

    #[test]
    fn markers_and_deleted_puts_stay_counted_as_versions() {
        let cells = vec![
            put("a", 5),
            del("a", 4, CellType::DeleteColumn),
            put("a", 4),
            put("a", 3),
            put("a", 2),
            del("", 9, CellType::DeleteFamily),
        ];
        let got = kept(cells, retention(KeepDeleted::True, 2, None), 1000);
        assert_eq!(
            got,
            [
                ("".into(), 9, CellType::DeleteFamily),
                ("a".into(), 5, CellType::Put),
                ("a".into(), 4, CellType::DeleteColumn),
                ("a".into(), 4, CellType::Put),
            ]
        );
    }

    #[test]
    fn ttl_variant_drops_expired_markers_and_what_they_mask() {
        // now 1000, TTL 500: stamps below 500 are expired.
        let cells = vec![
            put("a", 900),
            del("a", 800, CellType::Delete),
            put("a", 800),
            del("b", 400, CellType::DeleteColumn),
            put("b", 300),
        ];
        let got = kept(cells, retention(KeepDeleted::Ttl, 3, Some(500)), 1000);
        assert_eq!(
            got,
            [
                ("a".into(), 900, CellType::Put),
                ("a".into(), 800, CellType::Delete),
                ("a".into(), 800, CellType::Put),
            ]
        );
    }

    #[test]
    fn expired_cells_go_beyond_min_versions() {
        let cells = vec![put("a", 900), put("a", 300), put("a", 200)];
        let mut r = retention(KeepDeleted::True, 3, Some(500));
        r.min_versions = 2;
        let got = kept(cells, r, 1000);
        assert_eq!(
            got,
            [
                ("a".into(), 900, CellType::Put),
                ("a".into(), 300, CellType::Put)
            ]
        );
    }
}
