//! The read path: gets and scans.
//!
//! A read fixes its read point when it starts, snapshots each wanted family
//! (memstore segments, then files), merges each family's sources into one
//! sorted stream, resolves versions per (row, family), and assembles rows by
//! taking, at each step, the smallest next row across the families.

use super::filter::{Filter, FilterState};
use super::ops::{Columns, Get, RowResult, Scan};
use super::row_cache;
use super::store::FamilyStream;
use super::versions::ResolveSpec;
use super::{Region, RegionError};
use crate::cell::{Cell, CellKey};
use crate::sst::ScanRange;
use bytes::Bytes;
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

/// A forward scan over a region, yielding rows (or chunks of wide rows).
pub struct RegionScanner {
    families: Vec<FamilyStream>,
    limit: usize,
    batch: usize,
    rows: usize,
    pending: VecDeque<RowResult>,
    region: Region,
    reverse: bool,
    /// The scan's filter and its state, run cell by cell in the families
    /// (HBase's protocol: `filter/eval.rs`).
    filter: Option<FilterState>,
    /// The filter ended this region's scan.
    filter_done: bool,
    /// The filter was done right after the last row answered.
    done_at_answered_row: bool,
    /// Per family: the filter needs it to decide on a row. The others
    /// (HBase's joined heap) are read only for rows the filter let through.
    essential: Vec<bool>,
    /// Keeps the read point registered while the scan runs.
    _guard: Option<super::mvcc::ReadGuard>,
    /// Cells in the last row returned: the next row's vector starts that
    /// large, so a row is not gathered through several reallocations.
    last_width: usize,
}

/// The most cells a row's vector is sized for up front.
const MAX_WIDTH_HINT: usize = 1024;

impl Region {
    /// Reads one row at the current read point.
    pub async fn get(&self, get: &Get) -> Result<RowResult, RegionError> {
        self.check_readable()?;
        if get.row.is_empty() {
            return Err(RegionError::InvalidArgument {
                region: self.id().to_string(),
                reason: "row key is empty".into(),
            });
        }
        if !self.inner.config.contains_row(&get.row) {
            return Err(RegionError::RowOutOfRange {
                region: self.id().to_string(),
                row: String::from_utf8_lossy(&get.row).into_owned(),
            });
        }
        let rows = self
            .inner
            .rows
            .as_ref()
            .filter(|_| row_cache::RegionRows::answers(get));
        if let Some(rows) = rows {
            for family in get.columns.families.keys() {
                self.store(family)?;
            }
            if let Some(cells) = rows.lookup(get) {
                return Ok(RowResult {
                    row: get.row.clone(),
                    cells,
                });
            }
        }
        // Taken before the read's snapshot (see `row_cache.rs`).
        let instance = rows.map(|r| r.instance());
        let guard = self.inner.mvcc.reader();
        let read_point = guard.point();
        let result = self.get_at(get, read_point, Some(guard)).await?;
        if let (Some(rows), Some(instance)) = (rows, instance)
            && row_cache::RegionRows::fills(get)
        {
            rows.offer(
                instance,
                &get.row,
                get.time_range.min,
                read_point,
                &result.cells,
            );
        }
        Ok(result)
    }

    /// Reads one row at `read_point`. Pass the read's guard unless the point
    /// is `u64::MAX` (which sees every cell and needs no protection).
    pub(crate) async fn get_at(
        &self,
        get: &Get,
        read_point: u64,
        guard: Option<super::mvcc::ReadGuard>,
    ) -> Result<RowResult, RegionError> {
        let range = ScanRange {
            start: Bound::Included(CellKey::first_of_row(get.row.clone())),
            end: Bound::Excluded(CellKey::first_of_row(row_successor(&get.row))),
        };
        let scan = Scan {
            columns: get.columns.clone(),
            time_range: get.time_range,
            max_versions: get.max_versions,
            per_family: get.per_family.clone(),
            ..Scan::all()
        };
        let mut scanner = self
            .build_scanner(&scan, range, read_point, guard, Some(&get.row))?
            .with_filter(get.filter.clone());
        let mut cells = Vec::new();
        while let Some(row) = scanner.next().await? {
            // One row, normally: take its cells without moving them.
            if cells.is_empty() {
                cells = row.cells;
            } else {
                cells.extend(row.cells);
            }
        }
        Ok(RowResult {
            row: get.row.clone(),
            cells,
        })
    }

    /// Starts a scan at the current read point.
    pub fn scanner(&self, scan: Scan) -> Result<RegionScanner, RegionError> {
        self.check_readable()?;
        // A scan never leaves the region's range: a split child shares its
        // parent's files, which hold rows of both children.
        let cfg = &self.inner.config;
        let start_row = scan.start_row.clone().max(cfg.start_row.clone());
        let stop_row = match (scan.stop_row.is_empty(), cfg.end_row.is_empty()) {
            (true, _) => cfg.end_row.clone(),
            (false, true) => scan.stop_row.clone(),
            (false, false) => scan.stop_row.clone().min(cfg.end_row.clone()),
        };
        let start = if start_row.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Included(CellKey::first_of_row(start_row))
        };
        let end = if stop_row.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Excluded(CellKey::first_of_row(stop_row))
        };
        let guard = self.inner.mvcc.reader();
        self.build_scanner(
            &scan,
            ScanRange { start, end },
            guard.point(),
            Some(guard),
            None,
        )
    }

    fn build_scanner(
        &self,
        scan: &Scan,
        range: ScanRange,
        read_point: u64,
        guard: Option<super::mvcc::ReadGuard>,
        only_row: Option<&[u8]>,
    ) -> Result<RegionScanner, RegionError> {
        if scan.max_versions == 0 {
            return Err(RegionError::InvalidArgument {
                region: self.id().to_string(),
                reason: "max_versions must be at least 1".into(),
            });
        }
        let ranges = std::iter::once(&scan.time_range).chain(scan.per_family.time_ranges.values());
        if let Some(empty) = ranges.into_iter().find(|t| t.min >= t.max) {
            return Err(RegionError::InvalidArgument {
                region: self.id().to_string(),
                reason: format!("empty time range [{}, {})", empty.min, empty.max),
            });
        }
        let wanted: Vec<&Bytes> = if scan.columns.families.is_empty() {
            self.inner.stores.keys().collect()
        } else {
            for f in scan.columns.families.keys() {
                self.store(f)?;
            }
            scan.columns.families.keys().collect()
        };
        let now = self.inner.env.clock.now_ms();
        let mut families = Vec::with_capacity(wanted.len());
        for family in wanted {
            let store = self.store(family)?;
            let snapshot = store.snapshot();
            let time_range = scan.per_family.time_range(family, scan.time_range);
            let merge = snapshot
                .merge(
                    &range,
                    only_row,
                    (time_range.min, time_range.max),
                    scan.reverse,
                    only_row.is_some() || (scan.cache_blocks && store.config.cache.cache_scans),
                )
                .map_err(|source| RegionError::Cell {
                    region: self.id().to_string(),
                    source,
                })?;
            let spec = ResolveSpec {
                read_point,
                min_ts: time_range.min,
                max_ts: time_range.max,
                max_versions: scan.max_versions,
                retention: store.config.retention,
                now_ms: now,
                raw: scan.raw,
            };
            let columns = Columns {
                families: scan
                    .columns
                    .families
                    .get(family)
                    .map(|q| [(family.clone(), q.clone())].into_iter().collect())
                    .unwrap_or_default(),
            };
            families.push(
                FamilyStream::new(
                    family.clone(),
                    merge,
                    snapshot.files.clone(),
                    spec,
                    columns,
                    scan.reverse,
                )
                .with_row_window(scan.per_family.offset, scan.per_family.limit),
            );
        }
        Ok(RegionScanner {
            families,
            limit: scan.limit,
            batch: scan.batch,
            rows: 0,
            pending: VecDeque::new(),
            region: self.clone(),
            reverse: scan.reverse,
            filter: None,
            filter_done: false,
            done_at_answered_row: false,
            essential: Vec::new(),
            _guard: guard,
            last_width: 16,
        })
    }
}

/// The smallest row after `row`: `row` followed by a zero byte.
fn row_successor(row: &[u8]) -> Bytes {
    let mut v = Vec::with_capacity(row.len() + 1);
    v.extend_from_slice(row);
    v.push(0);
    Bytes::from(v)
}

impl RegionScanner {
    /// Runs `filter` in this region's scan, as HBase runs it (before a
    /// batch size cuts rows into chunks; the row limit counts rows the
    /// filter let through). A filter that is done ends the region's scan.
    pub fn with_filter(mut self, filter: Option<Arc<Filter>>) -> RegionScanner {
        if let Some(f) = filter {
            let state = FilterState::new(&f, self.reverse);
            self.essential = self
                .families
                .iter()
                .map(|fs| state.is_family_essential(fs.family()))
                .collect();
            self.filter = Some(state);
            for family in &mut self.families {
                family.for_filter();
            }
        }
        self
    }

    /// True once the scan's filter is done (HBase's `isFilterDone`) at a
    /// row it did not answer: the region's scan ended past the last row
    /// answered. (Done right at an answered row, HBase's region scanner
    /// says so with that row; done further on, only a later call finds it.)
    pub fn filter_done_past_rows(&self) -> bool {
        self.filter_done && !self.done_at_answered_row
    }

    /// The next row (or chunk of a row, with a batch size), or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<RowResult>, RegionError> {
        if let Some(chunk) = self.pending.pop_front() {
            return Ok(Some(chunk));
        }
        if self.limit > 0 && self.rows >= self.limit {
            return Ok(None);
        }
        let next = if self.filter.is_some() {
            self.next_filtered_row().await?
        } else {
            self.next_full_row().await?
        };
        let Some(cells) = next else {
            return Ok(None);
        };
        self.rows += 1;
        let row = cells[0].row.clone();
        if self.batch == 0 || cells.len() <= self.batch {
            return Ok(Some(RowResult { row, cells }));
        }
        for chunk in cells.chunks(self.batch) {
            self.pending.push_back(RowResult {
                row: row.clone(),
                cells: chunk.to_vec(),
            });
        }
        Ok(self.pending.pop_front())
    }

    /// The smallest next row across the families (the largest, reversed),
    /// of the essential ones when a filter names some (`essential`).
    async fn next_row_key(&mut self) -> Result<Option<Bytes>, RegionError> {
        let mut next: Option<Bytes> = None;
        for (i, f) in self.families.iter_mut().enumerate() {
            if self.essential.get(i) == Some(&false) {
                continue;
            }
            let row = f.next_row().await.map_err(|e| self.region.sst_error(e))?;
            if let Some(r) = row
                && next
                    .as_ref()
                    .is_none_or(|n| if self.reverse { r > *n } else { r < *n })
            {
                next = Some(r);
            }
        }
        Ok(next)
    }

    /// The next row the filter lets through, as HBase's region scanner
    /// runs it: the row key first (a skipped row's cells still pass the
    /// filter, unanswered, as in HBase), then each family's cells, then the
    /// row-level decision; the filter is reset between rows, and once it is
    /// done the region's scan ends.
    async fn next_filtered_row(&mut self) -> Result<Option<Vec<Cell>>, RegionError> {
        let mut skipped = 0u32;
        loop {
            self.region.check_readable()?;
            if self.filter_done {
                return Ok(None);
            }
            let Some(row) = self.next_row_key().await? else {
                return Ok(None);
            };
            let Some(filter) = self.filter.as_mut() else {
                return Ok(None);
            };
            let skip_row = filter.filter_row_key(&row);
            if skip_row && filter.all_remaining() {
                self.filter_done = true;
                return Ok(None);
            }
            let mut cells = Vec::with_capacity(self.last_width);
            for (i, f) in self.families.iter_mut().enumerate() {
                if self.essential[i] {
                    f.take_row_filtered(&row, &mut cells, filter)
                        .await
                        .map_err(|e| self.region.sst_error(e))?;
                }
            }
            let dropped = skip_row || filter.filter_gathered_row(&mut cells);
            if !dropped && self.essential.contains(&false) {
                // The families the filter did not need, for this row only,
                // after its decision (HBase's joined heap), kept in family
                // order.
                for (i, f) in self.families.iter_mut().enumerate() {
                    if !self.essential[i] {
                        f.seek_row(&row)
                            .await
                            .map_err(|e| self.region.sst_error(e))?;
                        f.take_row_filtered(&row, &mut cells, filter)
                            .await
                            .map_err(|e| self.region.sst_error(e))?;
                    }
                }
                cells.sort_by(|a, b| a.family.cmp(&b.family));
            }
            // A row left with no cell answers nothing.
            let dropped = dropped || cells.is_empty();
            if filter.failed() {
                return Err(RegionError::CompareNoOp {
                    region: self.region.id().to_string(),
                    what: "a SingleColumnValueFilter met its column",
                });
            }
            filter.reset();
            self.filter_done = filter.all_remaining();
            self.done_at_answered_row = !dropped;
            if !dropped {
                self.last_width = cells.len().min(MAX_WIDTH_HINT);
                return Ok(Some(cells));
            }
            // A filter that matches little reads far: let other tasks (and
            // a cancelled call's drop) in now and then.
            skipped += 1;
            if skipped.is_multiple_of(256) {
                tokio::task::yield_now().await;
            }
        }
    }

    /// The visible cells of the next row that has any.
    async fn next_full_row(&mut self) -> Result<Option<Vec<Cell>>, RegionError> {
        loop {
            self.region.check_readable()?;
            let Some(row) = self.next_row_key().await? else {
                return Ok(None);
            };
            // Rows of a table tend to have alike widths: size for the last.
            let mut cells = Vec::with_capacity(self.last_width);
            for f in &mut self.families {
                f.take_row(&row, &mut cells)
                    .await
                    .map_err(|e| self.region.sst_error(e))?;
            }
            if !cells.is_empty() {
                self.last_width = cells.len().min(MAX_WIDTH_HINT);
                return Ok(Some(cells));
            }
        }
    }
}
