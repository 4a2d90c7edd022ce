//! Taking a snapshot: one consistent cut across every region of a table,
//! with no flush and no data file copied.
//!
//! The cut: under the catalog lock (no split or admin change starts), the
//! writes of every region are paused, in key order (each pause waits for
//! that region's writes in flight; new writes wait), every region is
//! captured (its read point, live files and memstore segments, in memory),
//! and the writes go on. A write acknowledged before the snapshot began was
//! done before its region paused, so it is at or below the read point; a
//! write that began after the snapshot ended had to wait for the pause, so
//! it is above it. Writers see one wait of the pause's length (the longest
//! write in flight when it began, plus microseconds per region).
//!
//! Then, while writes go on: the memstore cells at or below each read point
//! are written once under `snapshots/<id>/files/` (the only bytes a
//! snapshot writes; none for a table just flushed), the record goes to
//! `snapshots/<id>/snapshot.json`, its files are held from GC, and the
//! catalog entry that names it is committed: from then on it exists. A
//! failure before the commit leaves nothing named and its objects are
//! deleted (a crash leaves them as garbage under an id no entry names).

use super::{Host, LiveTable, Slot};
use crate::catalog::{RegionRecord, SnapshotEntry};
use crate::error::ServiceError;
use crate::snapshots::record::{FileRecord, SnapshotRecord, SnapshotRegion, files_dir};
use crate::snapshots::validate_snapshot_name;
use shoal_storage::manifest::{FilePin, ManifestStore};
use shoal_storage::region::{Region, RegionCapture};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The longest a snapshot waits for the writes in flight to drain.
const PAUSE_WAIT: Duration = Duration::from_secs(10);

/// What a snapshot holds and what taking it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// Its name.
    pub name: String,
    /// The table it was taken of.
    pub table: String,
    /// When (ms since the epoch).
    pub created_ms: i64,
    /// Regions.
    pub regions: usize,
    /// Files it holds (shared and its own).
    pub files: usize,
    /// Bytes of those files.
    pub bytes: u64,
    /// Bytes it wrote: memstore cells at the cut (0 after a flush).
    pub written_bytes: u64,
    /// How long the table's writes waited for the cut (µs).
    pub pause_micros: u64,
}

/// A region's state at the cut: in memory (live) or read from its
/// manifest (a disabled table's).
enum Captured {
    Live(Region, RegionCapture),
    /// A closed region's state, its files pinned until the snapshot holds
    /// them.
    Offline {
        region: SnapshotRegion,
        _pins: Vec<FilePin>,
    },
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Host {
    /// Takes snapshot `name` of `table` (enabled or not).
    pub async fn take_snapshot(
        &self,
        table: &str,
        name: &str,
    ) -> Result<SnapshotInfo, ServiceError> {
        validate_snapshot_name(name)?;
        self.not_in_cluster_mode("taking a snapshot")?;
        let _one = self.inner.snapshot_lock.lock().await;
        let id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        let created_ms = now_ms();
        let (live, captured, pause) = {
            let catalog = self.inner.catalog.lock().await;
            if catalog.current().snapshot(name).is_some() {
                return Err(ServiceError::SnapshotExists(name.to_string()));
            }
            let live = self.table(table)?;
            let (captured, pause) = if live.record.enabled {
                self.capture_live(&live).await?
            } else {
                (self.capture_offline(&live).await?, Duration::ZERO)
            };
            (live, captured, pause)
        };
        let mut record = SnapshotRecord {
            format: crate::snapshots::record::FORMAT,
            name: name.to_string(),
            id: id.clone(),
            created_ms,
            table: live.record.clone(),
            regions: Vec::with_capacity(captured.len()),
            pause_micros: pause.as_micros() as u64,
        };
        record.table.holds.clear();
        let written = match self.record_regions(&id, &captured, &mut record).await {
            Ok(w) => w,
            Err(e) => {
                self.delete_dir(&crate::snapshots::record::snapshot_dir(&id))
                    .await;
                return Err(e);
            }
        };
        if let Err(e) = self.commit_snapshot(&record).await {
            self.inner.snapshot_holds.release(&id);
            self.delete_dir(&crate::snapshots::record::snapshot_dir(&id))
                .await;
            return Err(e);
        }
        drop(captured);
        let info = SnapshotInfo {
            name: name.to_string(),
            table: table.to_string(),
            created_ms,
            regions: record.regions.len(),
            files: record.files().count(),
            bytes: record.bytes(),
            written_bytes: written,
            pause_micros: record.pause_micros,
        };
        tracing::info!(
            snapshot = name,
            table,
            regions = info.regions,
            files = info.files,
            bytes = info.bytes,
            written_bytes = written,
            pause_micros = info.pause_micros,
            "snapshot taken"
        );
        Ok(info)
    }

    /// The cut of an enabled table: every region paused, captured, let go.
    /// Refused while a region is not open here (moving: retry).
    async fn capture_live(
        &self,
        live: &LiveTable,
    ) -> Result<(Vec<(RegionRecord, Captured)>, Duration), ServiceError> {
        let mut regions: Vec<(RegionRecord, Region)> = Vec::new();
        for (record, slot) in live.regions.values() {
            match slot {
                Slot::Open(r) => regions.push((record.clone(), r.clone())),
                _ => {
                    return Err(ServiceError::Unavailable(format!(
                        "region {} of table {} is moving",
                        record.id,
                        crate::error::shown(&live.record.name)
                    )));
                }
            }
        }
        let mut pauses = Vec::with_capacity(regions.len());
        let mut first_paused: Option<Instant> = None;
        let acquire = async {
            for (_, r) in &regions {
                pauses.push(r.pause_writes().await?);
                first_paused.get_or_insert_with(Instant::now);
            }
            Ok::<_, shoal_storage::region::RegionError>(())
        };
        match tokio::time::timeout(PAUSE_WAIT, acquire).await {
            Err(_) => {
                return Err(ServiceError::Unavailable(format!(
                    "the writes in flight to table {} did not finish within {PAUSE_WAIT:?}",
                    crate::error::shown(&live.record.name)
                )));
            }
            Ok(Err(e)) => return Err(ServiceError::Region(e)),
            Ok(Ok(())) => {}
        }
        let captures: Vec<RegionCapture> = regions
            .iter()
            .zip(&pauses)
            .map(|((_, r), p)| r.capture(p))
            .collect();
        let pause = first_paused.map(|t| t.elapsed()).unwrap_or_default();
        drop(pauses);
        let captured = regions
            .into_iter()
            .zip(captures)
            .map(|((record, region), c)| (record, Captured::Live(region, c)))
            .collect();
        Ok((captured, pause))
    }

    /// A disabled table: its regions are closed (every write flushed), so
    /// each one's newest manifest is its state.
    async fn capture_offline(
        &self,
        live: &LiveTable,
    ) -> Result<Vec<(RegionRecord, Captured)>, ServiceError> {
        let bucket = &self.inner.env.bucket;
        let mut out = Vec::new();
        for record in &live.record.regions {
            let manifest = ManifestStore::new(bucket.clone(), record.dir.clone())
                .load_latest()
                .await
                .map_err(|source| {
                    ServiceError::Region(shoal_storage::region::RegionError::Manifest {
                        region: record.id.clone(),
                        source,
                    })
                })?;
            let (families, read_point, pins) = match manifest {
                Some(m) => {
                    let pins = self.inner.env.pins.pin_manifest(&m);
                    let families = m
                        .stores
                        .iter()
                        .map(|(f, files)| (f.clone(), files.iter().map(FileRecord::of).collect()))
                        .collect();
                    (families, m.max_seq, pins)
                }
                None => (BTreeMap::new(), 0, Vec::new()),
            };
            let region = SnapshotRegion {
                id: record.id.clone(),
                start_row: record.start_row.clone(),
                end_row: record.end_row.clone(),
                read_point,
                families,
            };
            out.push((
                record.clone(),
                Captured::Offline {
                    region,
                    _pins: pins,
                },
            ));
        }
        Ok(out)
    }

    /// Fills `record`'s regions from the captures, writing each live one's
    /// memstore cells at the cut. Returns the bytes written.
    async fn record_regions(
        &self,
        id: &str,
        captured: &[(RegionRecord, Captured)],
        record: &mut SnapshotRecord,
    ) -> Result<u64, ServiceError> {
        let mut written = 0;
        for (region_record, c) in captured {
            let region = match c {
                Captured::Offline { region, .. } => region.clone(),
                Captured::Live(region, capture) => {
                    let dumped = region
                        .write_captured_memstore(capture, &files_dir(id, &region_record.id))
                        .await
                        .map_err(ServiceError::Region)?;
                    let mut families: BTreeMap<String, Vec<FileRecord>> = capture
                        .stores
                        .iter()
                        .map(|(f, files)| (f.clone(), files.iter().map(FileRecord::of).collect()))
                        .collect();
                    for (family, file) in dumped {
                        written += file.size;
                        families
                            .entry(family)
                            .or_default()
                            .push(FileRecord::of(&file));
                    }
                    SnapshotRegion {
                        id: region_record.id.clone(),
                        start_row: capture.start_row.clone(),
                        end_row: capture.end_row.clone(),
                        read_point: capture.read_point,
                        families,
                    }
                }
            };
            record.regions.push(region);
        }
        Ok(written)
    }

    /// Writes `record`, holds its files, and commits the catalog entry that
    /// names it (the snapshot exists from here).
    async fn commit_snapshot(&self, record: &SnapshotRecord) -> Result<(), ServiceError> {
        record.write(&self.inner.env.bucket).await?;
        self.name_snapshot(record).await
    }

    /// Holds the files of `record` (already in the bucket) and commits the
    /// catalog entry that names it: from here the snapshot exists. Refused,
    /// before anything is held, if its name is taken or its id is already
    /// named (a deleted snapshot a clone still reads included: its holds
    /// are its own). Shared by taking a snapshot and registering an
    /// imported one (`snapshot_register.rs`). A failed commit lets go of
    /// the hold.
    pub(super) async fn name_snapshot(&self, record: &SnapshotRecord) -> Result<(), ServiceError> {
        let mut catalog = self.inner.catalog.lock().await;
        let current = catalog.current();
        if current.snapshot(&record.name).is_some() {
            return Err(ServiceError::SnapshotExists(record.name.clone()));
        }
        if let Some(other) = current.snapshots.iter().find(|s| s.id == record.id) {
            return Err(ServiceError::FailedPrecondition(format!(
                "snapshot id {} is already named {} in the catalog{}",
                record.id,
                crate::error::shown(&other.name),
                if other.deleted {
                    " (deleted, kept while a clone reads it)"
                } else {
                    ""
                }
            )));
        }
        let mut next = current.clone();
        next.snapshots.push(SnapshotEntry {
            name: record.name.clone(),
            id: record.id.clone(),
            table: record.table.name.clone(),
            created_ms: record.created_ms,
            deleted: false,
        });
        next.snapshots.sort_by(|a, b| a.name.cmp(&b.name));
        // Held before the commit: no instant where the catalog names it and
        // its files are not held.
        self.inner.snapshot_holds.hold(record);
        if let Err(e) = catalog.commit(next).await {
            self.inner.snapshot_holds.release(&record.id);
            return Err(e.into());
        }
        Ok(())
    }
}
