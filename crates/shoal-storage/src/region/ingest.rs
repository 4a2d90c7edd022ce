//! Bulk ingest: cells written outside the write path (HBase's bulk load, an
//! import of HBase's files) become part of a region as new files, in one
//! manifest commit.
//!
//! How it stays correct:
//! - **Atomic per region.** Every file of one [`Region::ingest`] call is
//!   written first (invisible garbage until referenced) and then listed by a
//!   single manifest commit; a crash before it leaves the region as it was.
//! - **Later writes win.** Each file takes a fresh sequence number from the
//!   region's MVCC counter (reserved and completed at once, so nothing waits
//!   on it), stamped on all its cells: a write applied after the load sorts
//!   above a loaded cell with the same key, one applied before sorts below,
//!   as HBase's bulk load with `assignSeqId`. Files of one call are numbered
//!   in the order given, so a later file wins over an earlier one.
//! - **Only the region's rows.** Cells outside the region's key range are
//!   skipped and counted (the caller splits its input by region, as HBase's
//!   tool does, or relies on this to clip a file that spans regions).
//! - **Once per key.** A call with a load key already in the manifest
//!   ([`crate::manifest::Manifest::loads`]) changes nothing: a load retried
//!   after a crash between commit and acknowledgement is not applied twice.
//!   Children of a split inherit the keys.
//! - **Never collected before it is committed.** Each new file is pinned
//!   from its creation until the commit: converting a large input can take
//!   longer than GC's grace period for uncommitted files
//!   (`docs/manifest.md` §3).
//! - **Sorted input only.** Cells must come in the cell order; an identical
//!   key repeated (HBase files may hold one key at several MVCC numbers) is
//!   kept once, the first (newest). Anything else out of order fails the
//!   load, naming the cell.

use super::store::Store;
use super::{Region, RegionError};
use crate::cell::{Cell, KeyRef};
use crate::manifest::StoreFile;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use std::cmp::Ordering;
use std::pin::Pin;

/// Cells of one input, in batches, in cell order; an `Err` is the source's
/// reason (e.g. a corrupt input file) and fails the whole load.
pub type IngestBatch = Result<Vec<Cell>, String>;

/// One input file of a bulk load: its family and its cells.
pub struct IngestFile {
    /// The family every cell belongs to.
    pub family: Bytes,
    /// The cells (their `seq` is replaced by the load's).
    pub cells: Pin<Box<dyn Stream<Item = IngestBatch> + Send>>,
}

/// What a bulk load did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestReport {
    /// The load key was already committed: nothing was written.
    pub already_loaded: bool,
    /// Files committed (an input with no cell in range makes none).
    pub files: usize,
    /// Cells written.
    pub cells: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Cells skipped for lying outside the region's range.
    pub outside: u64,
    /// Repeated identical keys kept once.
    pub duplicates: u64,
}

impl Region {
    /// Writes `files` as new files of this region and commits them in one
    /// manifest commit (see the module docs). With `load_key`, a key that
    /// was already committed makes this a no-op, and the key is recorded.
    pub async fn ingest(
        &self,
        load_key: Option<String>,
        files: Vec<IngestFile>,
    ) -> Result<IngestReport, RegionError> {
        self.check_open()?;
        let mut report = IngestReport::default();
        if let Some(key) = &load_key
            && self.inner.manifest.lock().await.current().has_load(key)
        {
            report.already_loaded = true;
            return Ok(report);
        }
        let mut written: Vec<(Bytes, StoreFile)> = Vec::with_capacity(files.len());
        // Pinned from creation to commit: converting large inputs can take
        // longer than GC's grace period for uncommitted files.
        let mut pins = Vec::with_capacity(files.len());
        for file in files {
            let store = self.store(&file.family)?;
            // Reserved and completed at once: no reader or writer waits on it.
            let seq = self.inner.mvcc.begin();
            self.inner.mvcc.complete(seq);
            if let Some(entry) = self
                .write_ingest_file(store, seq, file, &mut report, &mut pins)
                .await?
            {
                written.push((file_family(store), entry));
            }
        }
        self.commit_ingest(load_key, written, &mut report).await?;
        drop(pins);
        Ok(report)
    }

    /// Writes one input as a file of `store`, every cell at `seq`; None if
    /// no cell of it lies in the region.
    async fn write_ingest_file(
        &self,
        store: &Store,
        seq: u64,
        mut file: IngestFile,
        report: &mut IngestReport,
        pins: &mut Vec<crate::manifest::FilePin>,
    ) -> Result<Option<StoreFile>, RegionError> {
        let (id, path, mut writer) = self.new_file_writer(store, false).await?;
        pins.push(self.inner.env.pins.pin(id));
        let mut last: Option<Cell> = None;
        let mut count = 0u64;
        let result: Result<(), RegionError> = async {
            while let Some(batch) = file.cells.next().await {
                let batch = batch.map_err(|reason| RegionError::IngestSource {
                    region: self.id().to_string(),
                    reason,
                })?;
                for mut cell in batch {
                    if !self.inner.config.contains_row(&cell.row) {
                        report.outside += 1;
                        continue;
                    }
                    cell.seq = seq;
                    if let Some(prev) = &last {
                        match order(prev, &cell) {
                            Ordering::Less => {}
                            Ordering::Equal => {
                                report.duplicates += 1;
                                continue;
                            }
                            Ordering::Greater => {
                                return Err(self.unsorted(prev, &cell));
                            }
                        }
                    }
                    writer.add(&cell).await.map_err(|e| self.sst_error(e))?;
                    count += 1;
                    last = Some(cell);
                }
            }
            Ok(())
        }
        .await;
        if result.is_err() || count == 0 {
            if let Err(abort) = writer.abort().await {
                tracing::warn!(path = %path, error = %abort, "aborting a bulk-load upload");
            }
            return result.map(|()| None);
        }
        let summary = writer.finish().await.map_err(|e| self.sst_error(e))?;
        report.files += 1;
        report.cells += count;
        report.bytes += summary.size;
        Ok(Some(super::flush::store_file_entry(id, path, &summary)))
    }

    /// One manifest commit listing every written file (and the load key),
    /// then the files go live in their stores.
    async fn commit_ingest(
        &self,
        load_key: Option<String>,
        written: Vec<(Bytes, StoreFile)>,
        report: &mut IngestReport,
    ) -> Result<(), RegionError> {
        if written.is_empty() && load_key.is_none() {
            return Ok(());
        }
        {
            let mut manifest = self.inner.manifest.lock().await;
            if let Some(key) = &load_key
                && manifest.current().has_load(key)
            {
                // A concurrent call with the same key committed first.
                *report = IngestReport {
                    already_loaded: true,
                    ..IngestReport::default()
                };
                return Ok(());
            }
            let entries: Vec<(String, StoreFile)> = written
                .iter()
                .map(|(f, e)| (String::from_utf8_lossy(f).into_owned(), e.clone()))
                .collect();
            manifest
                .commit(move |m| {
                    for (family, entry) in entries {
                        m.max_seq = m.max_seq.max(entry.max_seq);
                        m.stores.entry(family).or_default().push(entry);
                    }
                    if let Some(key) = load_key {
                        m.record_load(key);
                    }
                })
                .await
                .map_err(|e| self.manifest_error(e))?;
        }
        for (family, entry) in written {
            let store = self.store(&family)?;
            let live = self.open_new_file(store, entry).await?;
            store.swap_files(&[], Some(live));
        }
        tracing::info!(
            region = %self.id(),
            files = report.files,
            cells = report.cells,
            bytes = report.bytes,
            outside = report.outside,
            "bulk load committed"
        );
        self.maybe_schedule_compaction();
        Ok(())
    }

    fn unsorted(&self, prev: &Cell, cell: &Cell) -> RegionError {
        RegionError::IngestSource {
            region: self.id().to_string(),
            reason: format!(
                "cells out of order: row {:?} qualifier {:?} at {} after row {:?} qualifier {:?} at {}",
                String::from_utf8_lossy(&cell.row),
                String::from_utf8_lossy(&cell.qualifier),
                cell.timestamp,
                String::from_utf8_lossy(&prev.row),
                String::from_utf8_lossy(&prev.qualifier),
                prev.timestamp
            ),
        }
    }
}

fn file_family(store: &Store) -> Bytes {
    store.name().clone()
}

/// The cell order with every cell of a load at one sequence number.
fn order(a: &Cell, b: &Cell) -> Ordering {
    fn key(c: &Cell) -> KeyRef<'_> {
        KeyRef { seq: 0, ..c.key() }
    }
    key(a).cmp(&key(b))
}
