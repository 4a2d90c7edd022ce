//! Captures of a region for a snapshot: the exact state at one read point,
//! taken while the region's writes are paused, without a flush.
//!
//! A snapshot's cut across many regions is: pause the writes of every
//! region (each [`Region::pause_writes`] waits for the writes in flight and
//! holds new ones back), [`Region::capture`] each one, let the writes go.
//! While a region's writes are paused no write is in flight, so every write
//! it acknowledged is at or below its read point and none above it has
//! started. A capture costs no I/O: it takes the region's read point, its
//! live files (pinned, so GC keeps them) and its memstore segments, all
//! in memory. The segments' cells at or below the read point are written
//! out afterwards ([`Region::write_captured_memstore`]) while writes go on;
//! cells written after the cut share the active segment and are left out by
//! their sequence numbers, as a read at that point leaves them out.

use super::flush::store_file_entry;
use super::{Region, RegionError};
use crate::manifest::{FilePin, StoreFile};
use crate::memstore::Segment;
use crate::sst::{FileId, SstWriter, UploadSink};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A region's writes held back: no write is in flight while it lives. It
/// owns what it holds, so it may be kept across calls (a cluster's cut
/// holds the pauses of several servers' regions at once).
#[must_use = "writes resume as soon as the pause is dropped"]
pub struct WritePause {
    region: Region,
    _gate: tokio::sync::OwnedRwLockWriteGuard<()>,
}

impl std::fmt::Debug for WritePause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WritePause({})", self.region.id())
    }
}

impl WritePause {
    /// The paused region.
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// The region's state at this instant. No I/O.
    pub fn capture(&self) -> RegionCapture {
        self.region.capture_paused()
    }
}

/// One region as it was at a read point: its files and the memstore cells
/// at or below the point.
pub struct RegionCapture {
    /// The region's id.
    pub region_id: String,
    /// Every write the region acknowledged before the cut is at or below it.
    pub read_point: u64,
    /// The region's first row (inclusive; empty = unbounded).
    pub start_row: Bytes,
    /// The region's end row (exclusive; empty = unbounded).
    pub end_row: Bytes,
    /// Live files by family at the cut, oldest first (as a manifest lists
    /// them). They hold no cell above the read point: every cell in a file
    /// was written before the cut.
    pub stores: BTreeMap<String, Vec<StoreFile>>,
    /// Per family: the memstore segments at the cut.
    segments: Vec<(Bytes, Vec<Arc<Segment>>)>,
    /// Keeps the captured files from GC until the snapshot holds them.
    _pins: Vec<FilePin>,
}

impl std::fmt::Debug for RegionCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegionCapture")
            .field("region_id", &self.region_id)
            .field("read_point", &self.read_point)
            .field("files", &self.stores.values().map(Vec::len).sum::<usize>())
            .finish()
    }
}

impl RegionCapture {
    /// Cells in the captured memstores (all of them, above the point too;
    /// only those at or below it are written).
    pub fn memstore_cells(&self) -> usize {
        self.segments
            .iter()
            .flat_map(|(_, s)| s.iter())
            .map(|s| s.len())
            .sum()
    }
}

impl Region {
    /// The ids of the files the region reads now.
    pub fn file_ids(&self) -> Vec<FileId> {
        self.inner
            .stores
            .values()
            .flat_map(|s| s.files().iter().map(|f| f.entry.id).collect::<Vec<_>>())
            .collect()
    }

    /// Holds this region's writes back until the pause is dropped: waits
    /// for the writes in flight, and new ones wait meanwhile. Refused once
    /// the region is closing.
    pub async fn pause_writes(&self) -> Result<WritePause, RegionError> {
        self.check_open()?;
        let gate = self.inner.write_gate.clone().write_owned().await;
        if self.inner.closing.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(RegionError::Closed {
                region: self.id().to_string(),
            });
        }
        self.check_open()?;
        Ok(WritePause {
            region: self.clone(),
            _gate: gate,
        })
    }

    /// The region's state at this instant; its writes are paused (only a
    /// [`WritePause`] calls this).
    fn capture_paused(&self) -> RegionCapture {
        let read_point = self.inner.mvcc.read_point();
        let mut stores = BTreeMap::new();
        let mut segments = Vec::new();
        let mut pins = Vec::new();
        for (family, store) in &self.inner.stores {
            // Segments first, then files (as every reader takes them): a
            // flush installs its file before it drops its segments, so a
            // cell may be seen twice (merged away on read), never missed.
            let snap = store.snapshot();
            let name = String::from_utf8_lossy(family).into_owned();
            // The store lists newest first; a manifest oldest first.
            let files: Vec<StoreFile> = snap.files.iter().rev().map(|f| f.entry.clone()).collect();
            for f in &files {
                pins.push(self.inner.env.pins.pin(f.id));
            }
            stores.insert(name, files);
            segments.push((family.clone(), snap.segments));
        }
        RegionCapture {
            region_id: self.id().to_string(),
            read_point,
            start_row: self.inner.config.start_row.clone(),
            end_row: self.inner.config.end_row.clone(),
            stores,
            segments,
            _pins: pins,
        }
    }

    /// Writes `capture`'s memstore cells at or below its read point as one
    /// file per family under `dir` (`<dir>/<family>/<file-id>.sst`), with
    /// the family's file settings; returns each file by family. Every
    /// version is kept (a read of the snapshot resolves them as a read of
    /// the region would). Families with no such cell write nothing.
    pub async fn write_captured_memstore(
        &self,
        capture: &RegionCapture,
        dir: &str,
    ) -> Result<Vec<(String, StoreFile)>, RegionError> {
        let mut out = Vec::new();
        for (family, segments) in &capture.segments {
            if segments.iter().all(|s| s.is_empty()) {
                continue;
            }
            let Some(store) = self.inner.stores.get(family) else {
                continue;
            };
            let name = String::from_utf8_lossy(family).into_owned();
            let id = FileId::generate();
            let path = format!("{}/{}/{}.sst", dir.trim_end_matches('/'), name, id);
            let sink = UploadSink::new(&self.inner.env.bucket, &path)
                .await
                .map_err(|e| self.sst_error(e))?;
            let mut writer = SstWriter::new(
                id,
                path.clone(),
                family.clone(),
                store.config.sst.clone(),
                sink,
            )
            .map_err(|e| self.sst_error(e))?;
            let mut written = 0u64;
            let result = async {
                for cell in crate::memstore::merged_cells(segments) {
                    if cell.seq <= capture.read_point {
                        writer.add(&cell).await?;
                        written += 1;
                    }
                }
                Ok::<_, crate::sst::SstError>(())
            }
            .await;
            if result.is_err() || written == 0 {
                if let Err(abort) = writer.abort().await {
                    tracing::warn!(path = %path, error = %abort, "aborting a snapshot's memstore file");
                }
                result.map_err(|e| self.sst_error(e))?;
                continue;
            }
            let summary = writer.finish().await.map_err(|e| self.sst_error(e))?;
            out.push((name, store_file_entry(id, path, &summary)));
        }
        Ok(out)
    }
}
