//! A store: one column family of a region — its memstore and its files — and
//! the per-family read stream that merges them and resolves versions.
//!
//! The file set is an immutable list swapped atomically (flush adds a file,
//! compaction replaces inputs with the output). A reader snapshots the memstore
//! segments *first* and the file set *second*: a flush installs its file before
//! it drops the flushed segments, so a read can see a cell twice (merged away)
//! but never miss it.

use super::config::FamilyConfig;
use super::filter::{Code, FilterState, Skipping};
use super::merge::{MergeIter, Source};
use super::ops::Columns;
use super::versions::{FamilyResolver, ResolveSpec};
use crate::cell::{Cell, CellError, KeyRef};
use crate::manifest::{FilePin, StoreFile};
use crate::memstore::{Memstore, Segment};
use crate::sst::{ScanRange, SstError, SstReader};
use bytes::Bytes;
use std::sync::{Arc, RwLock};

/// A live file of a store: its reader, its manifest entry, and a pin that keeps
/// GC away while anyone holds it.
#[derive(Debug, Clone)]
pub(crate) struct LiveFile {
    pub(crate) reader: SstReader,
    pub(crate) entry: StoreFile,
    pub(crate) _pin: Arc<FilePin>,
}

/// One column family of a region.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) config: FamilyConfig,
    pub(crate) memstore: Memstore,
    /// Newest first.
    files: RwLock<Arc<Vec<LiveFile>>>,
}

/// What a read of one store sees.
pub(crate) struct StoreSnapshot {
    pub(crate) segments: Vec<Arc<Segment>>,
    pub(crate) files: Arc<Vec<LiveFile>>,
}

impl Store {
    pub(crate) fn new(
        config: FamilyConfig,
        files: Vec<LiveFile>,
        budget: crate::memstore::MemstoreBudget,
    ) -> Store {
        Store {
            config,
            memstore: Memstore::with_budget(budget),
            files: RwLock::new(Arc::new(files)),
        }
    }

    pub(crate) fn name(&self) -> &Bytes {
        &self.config.name
    }

    /// The current file set, newest first.
    pub(crate) fn files(&self) -> Arc<Vec<LiveFile>> {
        self.files.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the file set: removes `remove` (by id) and puts `add` in front.
    pub(crate) fn swap_files(&self, remove: &[crate::sst::FileId], add: Option<LiveFile>) {
        let mut files = self.files.write().unwrap_or_else(|e| e.into_inner());
        let mut next: Vec<LiveFile> = add.into_iter().collect();
        next.extend(
            files
                .iter()
                .filter(|f| !remove.contains(&f.entry.id))
                .cloned(),
        );
        *files = Arc::new(next);
    }

    /// Segments first, then files (see the module doc for why).
    pub(crate) fn snapshot(&self) -> StoreSnapshot {
        let segments = self.memstore.segments();
        let files = self.files();
        StoreSnapshot { segments, files }
    }
}

impl StoreSnapshot {
    /// A merged stream over `range`, skipping files that cannot hold `only_row`
    /// (bloom filter and key range) or the time range.
    pub(crate) fn merge(
        &self,
        range: &ScanRange,
        only_row: Option<&[u8]>,
        time: (i64, i64),
        reverse: bool,
        fill_cache: bool,
    ) -> Result<MergeIter, CellError> {
        let mut sources = Vec::with_capacity(self.segments.len() + self.files.len());
        for seg in &self.segments {
            if !seg.is_empty() {
                sources.push(Source::memstore(seg.clone(), range, reverse)?);
            }
        }
        for f in self.files.iter() {
            if let Some(row) = only_row
                && !f.reader.may_contain_row(row)
            {
                continue;
            }
            // A file whose newest cell is older than the range's start cannot
            // contribute, nor can one entirely newer than its end — except for
            // delete markers, which may mask older files, so only skip on the
            // lower bound of the time range.
            if f.entry.max_timestamp < time.0 {
                continue;
            }
            sources.push(Source::sst(&f.reader, range.clone(), reverse, fill_cache));
        }
        Ok(MergeIter::new(sources, reverse))
    }
}

/// The visible cells of one family, row by row.
pub(crate) struct FamilyStream {
    /// The family it reads.
    family: Bytes,
    merge: MergeIter,
    /// Keeps the snapshot's files pinned (GC never deletes them) while the
    /// stream may still read them.
    _files: Arc<Vec<LiveFile>>,
    reverse: bool,
    raw: Vec<Cell>,
    resolver: FamilyResolver,
    columns: Columns,
    peeked: Option<Cell>,
    exhausted: bool,
    /// Raw cells read since the last yield to the runtime.
    since_yield: u32,
    /// Versions per column a filtered read answers (HBase's
    /// `versionsAfterFilter`): the filter sees up to the family's max
    /// versions, and this many of those it includes are answered.
    versions_after_filter: u32,
    /// The filter ended this family's part of the scan (HBase closes a
    /// store's scanner when its filter is done): no more cells from it.
    closed: bool,
    /// Which of a row's answered cells this family gives (HBase's store
    /// offset and limit).
    window: RowWindow,
}

/// HBase's `storeOffset` and `storeLimit`: of the cells a family would
/// answer for a row (filter and versions applied), the first `offset` are
/// passed over and at most `limit` answered; the row ends in this family
/// right after the last one answered (the filter sees nothing after it),
/// as HBase's store scanner seeks to the next row there.
#[derive(Debug, Clone, Copy, Default)]
struct RowWindow {
    offset: u32,
    limit: Option<u32>,
    counted: u32,
}

/// What the window makes of one cell the family would answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InWindow {
    /// Before the offset: counted, not answered.
    Skip,
    /// Answered.
    Answer,
    /// Answered, and the last of the row: the rest goes unread.
    AnswerLast,
}

impl RowWindow {
    fn start_row(&mut self) {
        self.counted = 0;
    }

    fn count(&mut self) -> InWindow {
        self.counted = self.counted.saturating_add(1);
        if self.counted <= self.offset {
            InWindow::Skip
        } else if self
            .limit
            .is_some_and(|l| self.counted >= l.saturating_add(self.offset))
        {
            InWindow::AnswerLast
        } else {
            InWindow::Answer
        }
    }
}

/// A filtered row's progress within one family.
#[derive(Default)]
struct FilteredRow {
    skip: Skipping,
    /// The column of the last included cell and how many it has.
    column: Option<Bytes>,
    included: u32,
}

/// Raw cells a stream reads between yields to the runtime: a scan that
/// skips millions of invisible cells (deleted, other columns, other times)
/// still lets its task be cancelled and other tasks run.
const CELLS_PER_YIELD: u32 = 1024;

impl FamilyStream {
    pub(crate) fn new(
        family: Bytes,
        merge: MergeIter,
        files: Arc<Vec<LiveFile>>,
        spec: ResolveSpec,
        columns: Columns,
        reverse: bool,
    ) -> FamilyStream {
        FamilyStream {
            family,
            merge,
            _files: files,
            reverse,
            raw: Vec::new(),
            resolver: FamilyResolver::new(spec),
            columns,
            peeked: None,
            exhausted: false,
            since_yield: 0,
            versions_after_filter: u32::MAX,
            closed: false,
            window: RowWindow::default(),
        }
    }

    /// Answers, per row, at most `limit` of the family's cells after the
    /// first `offset` (HBase's per-family limit and offset).
    pub(crate) fn with_row_window(mut self, offset: u32, limit: Option<u32>) -> FamilyStream {
        self.window = RowWindow {
            offset,
            limit,
            counted: 0,
        };
        self
    }

    /// The family this stream reads.
    pub(crate) fn family(&self) -> &[u8] {
        &self.family
    }

    /// Prepares the stream for a filtered read: the resolver offers up to
    /// the family's max versions, of which the read's own limit applies to
    /// those the filter includes.
    pub(crate) fn for_filter(&mut self) {
        self.versions_after_filter = self.resolver.widen_to_family();
    }

    async fn peek(&mut self) -> Result<Option<&Cell>, SstError> {
        if self.peeked.is_none() && !self.exhausted {
            self.since_yield += 1;
            if self.since_yield >= CELLS_PER_YIELD {
                self.since_yield = 0;
                tokio::task::yield_now().await;
            }
            self.peeked = self.merge.next().await?;
            self.exhausted = self.peeked.is_none();
        }
        Ok(self.peeked.as_ref())
    }

    /// The row of the next raw cell (visible or not), if any.
    pub(crate) async fn next_row(&mut self) -> Result<Option<Bytes>, SstError> {
        if self.closed {
            return Ok(None);
        }
        Ok(self.peek().await?.map(|c| c.row.clone()))
    }

    /// Consumes every raw cell of `row` and returns the visible ones, in cell
    /// order. A reverse stream delivers a row's cells backwards; they are
    /// gathered (one row's worth of memory) and resolved forwards.
    pub(crate) async fn take_row(
        &mut self,
        row: &[u8],
        out: &mut Vec<Cell>,
    ) -> Result<(), SstError> {
        self.resolver.reset();
        self.window.start_row();
        let mut row_done = false;
        if !self.reverse {
            while let Some(c) = self.peek().await? {
                if &c.row[..] != row {
                    break;
                }
                let cell = self.peeked.take().expect("peeked above");
                if row_done {
                    continue;
                }
                let visible = self.resolver.accept(&cell)
                    && self.columns.wants(&cell.family, &cell.qualifier)
                    && match self.window.count() {
                        InWindow::Answer => true,
                        InWindow::Skip => false,
                        InWindow::AnswerLast => {
                            row_done = true;
                            true
                        }
                    };
                // A column that gave all its versions: skip its older ones
                // in one seek (HBase's SEEK_NEXT_COL) instead of reading
                // each — a hot row's column can have thousands in the
                // memstore.
                if self.resolver.column_complete() {
                    let past = KeyRef::last_of_column(&cell.row, &cell.family, &cell.qualifier);
                    self.merge.skip_to(&past).await?;
                }
                if visible {
                    out.push(cell);
                }
            }
            return Ok(());
        }
        self.raw.clear();
        while let Some(c) = self.peek().await? {
            if &c.row[..] != row {
                break;
            }
            let cell = self.peeked.take().expect("peeked above");
            self.raw.push(cell);
        }
        for cell in self.raw.drain(..).rev() {
            if self.resolver.accept(&cell) && self.columns.wants(&cell.family, &cell.qualifier) {
                match self.window.count() {
                    InWindow::Answer => out.push(cell),
                    InWindow::Skip => {}
                    InWindow::AnswerLast => {
                        out.push(cell);
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}

impl FamilyStream {
    /// As [`FamilyStream::take_row`], with `filter` run on each visible
    /// cell as HBase's store scanner runs it: the filter's code decides
    /// what is answered and what is skipped unseen (the rest of a column,
    /// of the row in this family, or up to a hint), the read's version
    /// limit counts the cells it includes, and once the filter is done the
    /// family stops for the rest of the scan.
    pub(crate) async fn take_row_filtered(
        &mut self,
        row: &[u8],
        out: &mut Vec<Cell>,
        filter: &mut FilterState,
    ) -> Result<(), SstError> {
        if self.closed {
            return Ok(());
        }
        // A family with no cell in this row takes no part in it (HBase's
        // region heap asks only the stores positioned on the row).
        if self.peek().await?.is_none_or(|c| &c.row[..] != row) {
            return Ok(());
        }
        self.resolver.reset();
        self.window.start_row();
        let mut state = FilteredRow::default();
        if self.reverse {
            self.raw.clear();
            while let Some(c) = self.peek().await? {
                if &c.row[..] != row {
                    break;
                }
                let cell = self.peeked.take().expect("peeked above");
                self.raw.push(cell);
            }
            let raw = std::mem::take(&mut self.raw);
            for cell in raw.iter().rev() {
                if !self.offer(cell, &mut state, filter, out) {
                    break;
                }
            }
            self.raw = raw;
            self.raw.clear();
        } else {
            while let Some(c) = self.peek().await? {
                if &c.row[..] != row {
                    break;
                }
                let cell = self.peeked.take().expect("peeked above");
                if !self.offer(&cell, &mut state, filter, out) {
                    return Ok(());
                }
                if self.resolver.column_complete() {
                    let past = KeyRef::last_of_column(&cell.row, &cell.family, &cell.qualifier);
                    self.merge.skip_to(&past).await?;
                }
            }
        }
        // HBase's store scanner asks the filter once more at the next cell
        // it peeks (the next row's first): a done filter closes it there.
        if !self.closed && filter.all_remaining() && self.peek().await?.is_some() {
            self.closed = true;
        }
        Ok(())
    }

    /// Moves past every row before `row` (after it, reversed) unread: a
    /// family the filter does not need (HBase's joined heap) is read only
    /// for the rows the others let through.
    pub(crate) async fn seek_row(&mut self, row: &[u8]) -> Result<(), SstError> {
        if self.closed {
            return Ok(());
        }
        if !self.reverse {
            if self.peek().await?.is_none_or(|c| &c.row[..] >= row) {
                return Ok(());
            }
            self.peeked = None;
            self.merge.skip_to(&KeyRef::first_of_row(row)).await?;
            return Ok(());
        }
        while self.peek().await?.is_some_and(|c| &c.row[..] > row) {
            self.peeked = None;
        }
        Ok(())
    }

    /// One raw cell of a filtered row; false once the family is closed.
    fn offer(
        &mut self,
        cell: &Cell,
        state: &mut FilteredRow,
        filter: &mut FilterState,
        out: &mut Vec<Cell>,
    ) -> bool {
        if filter.all_remaining() {
            self.closed = true;
            return false;
        }
        if state.skip.skips(cell) {
            return true;
        }
        if !(self.resolver.accept(cell) && self.columns.wants(&cell.family, &cell.qualifier)) {
            return true;
        }
        let mut code = filter.filter_cell(cell);
        if code.includes() {
            if state.column.as_ref() != Some(&cell.qualifier) {
                state.column = Some(cell.qualifier.clone());
                state.included = 0;
            }
            state.included += 1;
            if state.included > self.versions_after_filter {
                code = if code == Code::IncludeAndSeekNextRow {
                    Code::NextRow
                } else {
                    Code::NextCol
                };
            }
        }
        if code.includes() {
            match self.window.count() {
                InWindow::Answer => out.push(filter.transform_cell(cell.clone())),
                InWindow::Skip => {}
                InWindow::AnswerLast => {
                    out.push(filter.transform_cell(cell.clone()));
                    state.skip.rest_of_row(cell);
                    return true;
                }
            }
        }
        state.skip.after(code, cell, filter, self.reverse);
        true
    }
}
