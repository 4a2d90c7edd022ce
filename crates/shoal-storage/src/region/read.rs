//! The read path: gets and scans.
//!
//! A read fixes its read point when it starts, snapshots each wanted family
//! (memstore segments, then files), merges each family's sources into one
//! sorted stream, resolves versions per (row, family), and assembles rows by
//! taking, at each step, the smallest next row across the families.

use super::filter::{Decision, Filter, FilterRun};
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
    /// The scan's filter, applied to each complete row.
    filter: Option<FilterRun>,
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
            ..Scan::all()
        };
        let mut scanner = self.build_scanner(&scan, range, read_point, guard, Some(&get.row))?;
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
        if scan.time_range.min >= scan.time_range.max {
            return Err(RegionError::InvalidArgument {
                region: self.id().to_string(),
                reason: format!(
                    "empty time range [{}, {})",
                    scan.time_range.min, scan.time_range.max
                ),
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
            let merge = snapshot
                .merge(
                    &range,
                    only_row,
                    (scan.time_range.min, scan.time_range.max),
                    scan.reverse,
                    only_row.is_some() || (scan.cache_blocks && store.config.cache.cache_scans),
                )
                .map_err(|source| RegionError::Cell {
                    region: self.id().to_string(),
                    source,
                })?;
            let spec = ResolveSpec {
                read_point,
                min_ts: scan.time_range.min,
                max_ts: scan.time_range.max,
                max_versions: scan.max_versions,
                retention: store.config.retention,
                now_ms: now,
            };
            let columns = Columns {
                families: scan
                    .columns
                    .families
                    .get(family)
                    .map(|q| [(family.clone(), q.clone())].into_iter().collect())
                    .unwrap_or_default(),
            };
            families.push(FamilyStream::new(
                merge,
                snapshot.files.clone(),
                spec,
                columns,
                scan.reverse,
            ));
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
    /// Applies `filter` to every complete row (before a batch size cuts it
    /// into chunks; the row limit counts rows the filter let through).
    pub fn with_filter(mut self, filter: Option<Arc<Filter>>) -> RegionScanner {
        self.filter = filter.map(|f| FilterRun::new(f, self.reverse));
        self
    }

    /// True once the filter ended the scan (`PageFilter`, `WHILE`, …):
    /// later regions have nothing to add either.
    pub fn filter_stopped(&self) -> bool {
        self.filter.as_ref().is_some_and(FilterRun::stopped)
    }

    /// The next row (or chunk of a row, with a batch size), or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<RowResult>, RegionError> {
        if let Some(chunk) = self.pending.pop_front() {
            return Ok(Some(chunk));
        }
        if self.limit > 0 && self.rows >= self.limit {
            return Ok(None);
        }
        let mut skipped = 0u32;
        let cells = loop {
            let Some(cells) = self.next_full_row().await? else {
                return Ok(None);
            };
            let Some(run) = self.filter.as_mut() else {
                break cells;
            };
            let row = cells[0].row.clone();
            match run.apply(&row, cells) {
                Decision::Emit(cells) => break cells,
                Decision::Skip => {
                    // A filter that matches little reads far: let other
                    // tasks (and a cancelled call's drop) in now and then.
                    skipped += 1;
                    if skipped.is_multiple_of(256) {
                        tokio::task::yield_now().await;
                    }
                }
                Decision::Stop => return Ok(None),
            }
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

    /// The visible cells of the next row that has any.
    async fn next_full_row(&mut self) -> Result<Option<Vec<Cell>>, RegionError> {
        loop {
            self.region.check_readable()?;
            let mut next: Option<Bytes> = None;
            for f in &mut self.families {
                let row = f.next_row().await.map_err(|e| self.region.sst_error(e))?;
                // Forward scans take the smallest next row, reverse the largest.
                if let Some(r) = row
                    && next
                        .as_ref()
                        .is_none_or(|n| if self.reverse { r > *n } else { r < *n })
                {
                    next = Some(r);
                }
            }
            let Some(row) = next else {
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
