//! Flush: frozen memstore segments → one SST per family → manifest commit →
//! WAL release.
//!
//! Order of events, and why:
//! 1. Read the read point `R` *before* freezing: every mutation numbered ≤ `R`
//!    is already in the memstore, hence in the segments about to be frozen.
//!    (Cells numbered above `R` may be frozen too; they are flushed as well and,
//!    if the WAL replays them later, merged away as identical keys.)
//! 2. Freeze every family's active segment (O(1); writers continue into new
//!    segments) and write the frozen segments of each family as one SST.
//! 3. Commit a manifest adding the files and recording `flushed_seq = R`.
//!    Until this commit the new files are invisible garbage; a crash here loses
//!    nothing because the WAL still holds every entry.
//! 4. Install each file in its store *before* dropping its segments (a reader
//!    may briefly see both; never neither).
//! 5. Tell the WAL that entries ≤ `R` are flushed, so it can delete segments.

use super::store::{LiveFile, Store};
use super::versions::FlushFilter;
use super::{Region, RegionError};
use crate::manifest::StoreFile;
use crate::memstore::Segment;
use crate::sst::{FileId, SstFile, SstReader, SstSummary, SstWriter, UploadSink};
use bytes::Bytes;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// What a flush did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlushReport {
    /// Files written (one per family with data).
    pub files: usize,
    /// Cells written.
    pub cells: u64,
    /// Bytes written.
    pub bytes: u64,
    /// WAL sequence the region's files now cover.
    pub flushed_seq: u64,
}

pub(crate) fn store_file_entry(id: FileId, path: String, summary: &SstSummary) -> StoreFile {
    let m = &summary.meta;
    StoreFile {
        id,
        path,
        size: summary.size,
        cell_count: m.cell_count,
        max_seq: m.max_seq,
        min_timestamp: m.min_timestamp,
        max_timestamp: m.max_timestamp,
        first_row: m.first_key.row.clone(),
        last_row: m.last_key.row.clone(),
    }
}

impl Region {
    /// The object path of a new file of `store`.
    pub(crate) fn new_file_path(&self, store: &Store, id: FileId) -> String {
        format!(
            "{}/{}/{}.sst",
            self.inner.config.region_dir,
            String::from_utf8_lossy(store.name()),
            id
        )
    }

    /// Opens a file just written and pins it.
    pub(crate) async fn open_new_file(
        &self,
        store: &Store,
        entry: StoreFile,
    ) -> Result<LiveFile, RegionError> {
        let pin = Arc::new(self.inner.env.pins.pin(entry.id));
        let file = SstFile {
            id: entry.id,
            path: entry.path.clone(),
        };
        let reader = SstReader::open(self.inner.env.family_fetcher(&store.config), file)
            .await
            .map_err(|e| self.sst_error(e))?;
        Ok(LiveFile {
            reader,
            entry,
            _pin: pin,
        })
    }

    /// Starts a new SST of `store` on the object store (a fresh id and path);
    /// with `cache_on_write` its blocks enter the cache as they are written.
    pub(crate) async fn new_file_writer(
        &self,
        store: &Store,
        cache_on_write: bool,
    ) -> Result<(FileId, String, SstWriter<UploadSink>), RegionError> {
        let id = FileId::generate();
        let path = self.new_file_path(store, id);
        let sink = UploadSink::new(&self.inner.env.bucket, &path)
            .await
            .map_err(|e| self.sst_error(e))?;
        let mut writer = SstWriter::new(
            id,
            path.clone(),
            store.name().clone(),
            store.config.sst.clone(),
            sink,
        )
        .map_err(|e| self.sst_error(e))?;
        if cache_on_write {
            self.cache_on_write(&mut writer, store);
        }
        Ok((id, path, writer))
    }

    /// Makes a new file's blocks enter the cache as they are written.
    pub(crate) fn cache_on_write<S: crate::sst::SstSink>(
        &self,
        writer: &mut SstWriter<S>,
        store: &Store,
    ) {
        if let Some(cache) = &self.inner.env.cache {
            let cache = cache.clone();
            let policy = store.config.cache;
            writer.set_block_observer(Box::new(move |addr, raw, frame| {
                cache.insert_written(policy, addr, raw, frame)
            }));
        }
    }

    /// Writes the memstores out as files and commits them (on the
    /// background runtime, if the environment has one).
    pub async fn flush(&self) -> Result<FlushReport, RegionError> {
        let region = self.clone();
        self.on_background(async move { region.flush_now().await })
            .await
    }

    /// [`Region::flush`] on the calling task.
    pub(crate) async fn flush_now(&self) -> Result<FlushReport, RegionError> {
        self.check_open()?;
        let _guard = self.inner.flush_lock.lock().await;
        let _slot =
            self.inner
                .env
                .flush_slots
                .acquire()
                .await
                .map_err(|_| RegionError::Closed {
                    region: self.id().to_string(),
                })?;
        let started = std::time::Instant::now();
        // Edits from now on start a new age for the periodic flush.
        self.inner.oldest_edit_ms.store(0, Ordering::Relaxed);
        let flushed_seq = self.inner.mvcc.read_point();
        let mut work = Vec::new();
        for store in self.inner.stores.values() {
            let frozen = store.memstore.freeze_for_flush();
            if !frozen.is_empty() {
                work.push((store, frozen));
            }
        }
        let mut report = FlushReport {
            flushed_seq,
            ..FlushReport::default()
        };
        if work.is_empty() {
            return Ok(report);
        }

        // Per store: its new file, or None when the flush dropped every
        // cell (all expired or masked, as HBase's flush drops them). A
        // version is dropped only if no read in progress can still need it:
        // cells above the oldest read's point are kept and not counted (as
        // HBase's flush counts from its smallest read point), so a get that
        // began before a newer version was visible still finds the one it
        // sees. Readers that begin later start at or above this point.
        let keep_above = self.inner.mvcc.smallest_read_point();
        let mut written = Vec::with_capacity(work.len());
        for (store, segments) in &work {
            let entry = self.write_segments(store, segments, keep_above).await?;
            if let Some(entry) = &entry {
                report.files += 1;
                report.cells += entry.cell_count;
                report.bytes += entry.size;
            }
            written.push(entry);
        }

        {
            let mut manifest = self.inner.manifest.lock().await;
            let entries = written.clone();
            let families: Vec<String> = work
                .iter()
                .map(|(s, _)| String::from_utf8_lossy(s.name()).into_owned())
                .collect();
            manifest
                .commit(move |m| {
                    for (family, entry) in families.into_iter().zip(entries) {
                        let Some(entry) = entry else { continue };
                        m.max_seq = m.max_seq.max(entry.max_seq);
                        m.stores.entry(family).or_default().push(entry);
                    }
                    m.flushed_seq = m.flushed_seq.max(flushed_seq);
                })
                .await
                .map_err(|e| self.manifest_error(e))?;
        }

        for ((store, segments), entry) in work.iter().zip(written) {
            if let Some(entry) = entry {
                let live = self.open_new_file(store, entry).await?;
                store.swap_files(&[], Some(live));
            }
            store.memstore.remove_flushed(segments);
        }
        self.inner
            .env
            .wal
            .mark_flushed(self.id(), flushed_seq)
            .await
            .map_err(|source| RegionError::Wal {
                region: self.id().to_string(),
                source,
            })?;
        let stats = &self.inner.stats;
        stats.flushes.fetch_add(1, Ordering::Relaxed);
        stats
            .flush_micros
            .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
        stats.flush_bytes.fetch_add(report.bytes, Ordering::Relaxed);
        tracing::debug!(region = %self.id(), files = report.files, cells = report.cells, bytes = report.bytes, flushed_seq, "flushed");
        self.maybe_schedule_compaction();
        Ok(report)
    }

    /// Writes one store's frozen segments as a file, keeping what HBase's
    /// flush keeps (`FlushFilter`); None if nothing is kept.
    async fn write_segments(
        &self,
        store: &Store,
        segments: &[Arc<Segment>],
        read_point: u64,
    ) -> Result<Option<StoreFile>, RegionError> {
        let (id, path, mut writer) = self.new_file_writer(store, true).await?;
        let now = self.inner.env.clock.now_ms();
        let mut keep = FlushFilter::new(store.config.retention, now, read_point);
        let mut written = 0u64;
        let result = async {
            // Several segments (the in-memory pipeline, or an earlier flush
            // that failed): one sorted pass, identical keys once.
            let mut row: Option<Bytes> = None;
            for cell in crate::memstore::merged_cells(segments) {
                if row.as_ref() != Some(&cell.row) {
                    keep.reset();
                    row = Some(cell.row.clone());
                }
                if keep.keep(&cell) {
                    writer.add(&cell).await?;
                    written += 1;
                }
            }
            Ok::<_, crate::sst::SstError>(())
        }
        .await;
        if result.is_err() || written == 0 {
            if let Err(abort) = writer.abort().await {
                tracing::warn!(path = %path, error = %abort, "aborting a flush upload");
            }
            return match result {
                Err(e) => Err(self.sst_error(e)),
                Ok(()) => Ok(None),
            };
        }
        let summary = writer.finish().await.map_err(|e| self.sst_error(e))?;
        Ok(Some(store_file_entry(id, path, &summary)))
    }
}
