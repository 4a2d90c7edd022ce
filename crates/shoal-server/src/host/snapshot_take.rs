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

use super::Host;
use super::snapshot_pause::CutPart;
use crate::catalog::{SnapshotEntry, TableRecord};
use crate::error::ServiceError;
use crate::snapshots::record::{SnapshotRecord, SnapshotRegion, families_of, snapshot_dir};
use crate::snapshots::validate_snapshot_name;
use shoal_storage::manifest::ManifestStore;
use std::collections::BTreeMap;

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

/// Wall-clock milliseconds since the epoch (0 if the clock is before it).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Host {
    /// Takes snapshot `name` of `table` (enabled or not). In cluster mode
    /// on the master, which coordinates the cut across the servers.
    pub async fn take_snapshot(
        &self,
        table: &str,
        name: &str,
    ) -> Result<SnapshotInfo, ServiceError> {
        validate_snapshot_name(name)?;
        self.take_snapshot_named(table, name).await
    }

    /// [`Host::take_snapshot`] with a name already checked (or a base's,
    /// which users cannot give).
    pub(super) async fn take_snapshot_named(
        &self,
        table: &str,
        name: &str,
    ) -> Result<SnapshotInfo, ServiceError> {
        self.require_master()?;
        let _one = self.inner.snapshot_lock.lock().await;
        let id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        let created_ms = now_ms();
        let (live, cut) = {
            // Single server: no split or admin change starts meanwhile.
            let catalog = match self.inner.cluster {
                None => Some(self.inner.catalog.lock().await),
                Some(_) => None,
            };
            let exists = match &catalog {
                Some(c) => c.current().snapshot(name).is_some(),
                None => self.snapshot_in_newest_catalog(name).await,
            };
            if exists {
                return Err(ServiceError::SnapshotExists(name.to_string()));
            }
            let live = self.table(table)?;
            let cut = if !live.record.enabled {
                self.cut_offline(&live.record).await
            } else if let Some(cluster) = &self.inner.cluster {
                cluster.snapshot_cut(self, &live, &id).await
            } else {
                match self.pause_regions(table, None).await {
                    Ok(paused) => self.capture_paused(&id, paused).await,
                    Err(e) => Err(e),
                }
            };
            (live, cut)
        };
        let cut = match cut {
            Ok(cut) => cut,
            Err(e) => {
                self.delete_dir(&snapshot_dir(&id)).await;
                return Err(e);
            }
        };
        let mut record = SnapshotRecord {
            format: crate::snapshots::record::FORMAT,
            name: name.to_string(),
            id: id.clone(),
            created_ms,
            table: live.record.clone(),
            regions: cut.regions,
            pause_micros: cut.pause.as_micros() as u64,
        };
        record.table.holds.clear();
        record.regions.sort_by(|a, b| a.start_row.cmp(&b.start_row));
        if let Err(e) = self.commit_snapshot(&record).await {
            self.delete_dir(&snapshot_dir(&id)).await;
            return Err(e);
        }
        let info = SnapshotInfo {
            name: name.to_string(),
            table: table.to_string(),
            created_ms,
            regions: record.regions.len(),
            files: record.files().count(),
            bytes: record.bytes(),
            written_bytes: cut.written,
            pause_micros: record.pause_micros,
        };
        tracing::info!(
            snapshot = name,
            table,
            regions = info.regions,
            files = info.files,
            bytes = info.bytes,
            written_bytes = info.written_bytes,
            pause_micros = info.pause_micros,
            "snapshot taken"
        );
        Ok(info)
    }

    /// Cluster mode: true if the newest catalog names snapshot `name`.
    async fn snapshot_in_newest_catalog(&self, name: &str) -> bool {
        let mut catalog = self.inner.catalog.lock().await;
        let _ = self.reload_catalog(&mut catalog).await;
        catalog.current().snapshot(name).is_some()
    }

    /// A disabled table: its regions are closed (every write flushed), so
    /// each one's newest manifest is its state.
    async fn cut_offline(&self, table: &TableRecord) -> Result<CutPart, ServiceError> {
        let bucket = &self.inner.env.bucket;
        let mut part = CutPart::default();
        for record in &table.regions {
            let manifest = ManifestStore::new(bucket.clone(), record.dir.clone())
                .load_latest()
                .await
                .map_err(|source| {
                    ServiceError::Region(shoal_storage::region::RegionError::Manifest {
                        region: record.id.clone(),
                        source,
                    })
                })?;
            let (families, read_point) = match manifest {
                Some(m) => (families_of(&m.stores), m.max_seq),
                None => (BTreeMap::new(), 0),
            };
            part.regions.push(SnapshotRegion {
                id: record.id.clone(),
                start_row: record.start_row.clone(),
                end_row: record.end_row.clone(),
                read_point,
                families,
            });
        }
        Ok(part)
    }

    /// Writes `record`, holds its files, and commits the catalog entry that
    /// names it (the snapshot exists from here).
    pub(super) async fn commit_snapshot(
        &self,
        record: &SnapshotRecord,
    ) -> Result<(), ServiceError> {
        record.write(&self.inner.env.bucket).await?;
        self.name_snapshot(record).await
    }

    /// Holds the files of `record` (already in the bucket) and commits the
    /// catalog entry that names it: from here the snapshot exists. Refused
    /// if its name is taken or its id is already named (a deleted snapshot
    /// a clone still reads included: its holds are its own and are never
    /// let go here). Shared by taking a snapshot and registering an
    /// imported one (`snapshot_register.rs`). A failed commit lets go of
    /// the hold.
    pub(super) async fn name_snapshot(&self, record: &SnapshotRecord) -> Result<(), ServiceError> {
        let id_taken = |catalog: &crate::catalog::Catalog| {
            catalog
                .snapshots
                .iter()
                .find(|s| s.id == record.id)
                .map(|other| {
                    ServiceError::FailedPrecondition(format!(
                        "snapshot id {} is already named {} in the catalog{}",
                        record.id,
                        crate::error::shown(&other.name),
                        if other.deleted {
                            " (deleted, kept while a clone reads it)"
                        } else {
                            ""
                        }
                    ))
                })
        };
        {
            let mut catalog = self.inner.catalog.lock().await;
            if self.inner.cluster.is_some() {
                self.reload_catalog(&mut catalog).await?;
            }
            if let Some(e) = id_taken(catalog.current()) {
                return Err(e);
            }
        }
        // Held before the commit: no instant where the catalog names it and
        // its files are not held.
        self.inner.snapshot_holds.hold(record);
        let mut ours = true;
        let entry = SnapshotEntry {
            name: record.name.clone(),
            id: record.id.clone(),
            table: record.table.name.clone(),
            created_ms: record.created_ms,
            deleted: false,
            base: crate::snapshots::record::is_base_name(&record.name),
        };
        let committed = self
            .change_catalog(|next| {
                if let Some(e) = id_taken(next) {
                    ours = false;
                    return Err(e);
                }
                if next.snapshot(&entry.name).is_some() {
                    return Err(ServiceError::SnapshotExists(entry.name.clone()));
                }
                next.snapshots.push(entry);
                next.snapshots.sort_by(|a, b| a.name.cmp(&b.name));
                Ok(())
            })
            .await;
        if let Err(e) = committed {
            if ours {
                self.inner.snapshot_holds.release(&record.id);
            }
            return Err(e);
        }
        Ok(())
    }
}
