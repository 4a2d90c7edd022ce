//! Using snapshots: list, describe, clone into a new table, restore a table
//! to one, delete one, and the garbage collection that knows about them.
//!
//! A clone or a restored table reads the snapshot's files where they are:
//! each of its regions starts from a manifest that lists them (no byte is
//! copied), and its own flushes and compactions write new files under its
//! own directories. The table *holds* the snapshot (`TableRecord::holds`),
//! so the snapshot's files stay while the table does, even after the
//! snapshot is deleted (it is then hidden, and kept in the catalog marked
//! deleted until no table holds it).
//!
//! GC rule: a file is deleted only when no table's manifests, no snapshot
//! in the catalog (deleted ones kept for a clone included) and no reader
//! need it. Region GC skips files the snapshots hold; a dropped table's or
//! a restored table's old files that a snapshot holds stay where they are;
//! when the last snapshot holding a file goes, the file is deleted then (if
//! its region is gone) or by its region's next GC (if the region lives).

use super::admin::new_region_record;
use super::{Host, LiveTable};
use crate::catalog::{Catalog, SnapshotEntry, TableRecord, validate_table_name};
use crate::error::ServiceError;
use crate::snapshots::record::{SnapshotRecord, dir_of_file, snapshot_dir};
use shoal_storage::region::{RegionSeed, seed_region};
use std::collections::{BTreeMap, HashSet};

/// A snapshot as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotListing {
    /// Its name.
    pub name: String,
    /// The table it was taken of.
    pub table: String,
    /// When (ms since the epoch).
    pub created_ms: i64,
}

impl From<&SnapshotEntry> for SnapshotListing {
    fn from(e: &SnapshotEntry) -> SnapshotListing {
        SnapshotListing {
            name: e.name.clone(),
            table: e.table.clone(),
            created_ms: e.created_ms,
        }
    }
}

impl Host {
    /// Every snapshot, by name.
    pub async fn list_snapshots(&self) -> Vec<SnapshotListing> {
        let catalog = self.inner.catalog.lock().await;
        catalog
            .current()
            .snapshots
            .iter()
            .filter(|s| !s.deleted)
            .map(SnapshotListing::from)
            .collect()
    }

    /// Snapshot `name`'s record.
    pub async fn describe_snapshot(&self, name: &str) -> Result<SnapshotRecord, ServiceError> {
        let entry = self.snapshot_entry(name).await?;
        SnapshotRecord::read(&self.inner.env.bucket, &entry.id, name).await
    }

    pub(crate) async fn snapshot_entry(&self, name: &str) -> Result<SnapshotEntry, ServiceError> {
        let catalog = self.inner.catalog.lock().await;
        catalog
            .current()
            .snapshot(name)
            .cloned()
            .ok_or_else(|| ServiceError::NoSuchSnapshot(name.to_string()))
    }

    /// Clones snapshot `name` into new table `target` (enabled), sharing
    /// its files.
    pub async fn clone_snapshot(
        &self,
        name: &str,
        target: &str,
    ) -> Result<TableRecord, ServiceError> {
        validate_table_name(target).map_err(ServiceError::InvalidArgument)?;
        self.not_in_cluster_mode("cloning a snapshot")?;
        let _one = self.inner.snapshot_lock.lock().await;
        let entry = self.snapshot_entry(name).await?;
        if self.table(target).is_ok() {
            return Err(ServiceError::TableExists(target.to_string()));
        }
        let snapshot = SnapshotRecord::read(&self.inner.env.bucket, &entry.id, name).await?;
        let table_id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        let record = TableRecord {
            name: target.to_string(),
            id: table_id.clone(),
            enabled: true,
            families: snapshot.table.families.clone(),
            regions: self.seed_regions(&snapshot, &table_id).await?,
            split_parents: Vec::new(),
            holds: vec![entry.id.clone()],
        };
        {
            let mut catalog = self.inner.catalog.lock().await;
            let current = catalog.current();
            if current.table(target).is_some() {
                return Err(ServiceError::TableExists(target.to_string()));
            }
            if current.snapshot(name).map(|s| &s.id) != Some(&entry.id) {
                return Err(ServiceError::NoSuchSnapshot(name.to_string()));
            }
            let mut next = current.clone();
            next.tables.push(record.clone());
            next.tables.sort_by(|a, b| a.name.cmp(&b.name));
            catalog.commit(next).await?;
        }
        let live = self
            .open_table_regions(&record)
            .await
            .map_err(|(_, e)| ServiceError::Region(*e))?;
        self.install(live);
        tracing::info!(
            snapshot = name,
            table = target,
            regions = record.regions.len(),
            "snapshot cloned"
        );
        Ok(record)
    }

    /// Restores `name`'s table (disabled) to snapshot `name`: its regions,
    /// families and data become the snapshot's; it stays disabled. A table
    /// that no longer exists is created from the snapshot (as HBase does).
    pub async fn restore_snapshot(&self, name: &str) -> Result<TableRecord, ServiceError> {
        self.not_in_cluster_mode("restoring a snapshot")?;
        let entry = self.snapshot_entry(name).await?;
        let live = match self.table(&entry.table) {
            Ok(live) => live,
            Err(ServiceError::NoSuchTable(_)) => {
                return self.clone_snapshot(name, &entry.table).await;
            }
            Err(e) => return Err(e),
        };
        if live.record.enabled {
            return Err(ServiceError::TableEnabled(entry.table.clone()));
        }
        let _one = self.inner.snapshot_lock.lock().await;
        let snapshot = SnapshotRecord::read(&self.inner.env.bucket, &entry.id, name).await?;
        let old = live.record.clone();
        let regions = self.seed_regions(&snapshot, &old.id).await?;
        let record = {
            let mut catalog = self.inner.catalog.lock().await;
            let mut next = catalog.current().clone();
            if next.snapshot(name).map(|s| &s.id) != Some(&entry.id) {
                return Err(ServiceError::NoSuchSnapshot(name.to_string()));
            }
            let t = next
                .table_mut(&entry.table)
                .ok_or_else(|| ServiceError::NoSuchTable(entry.table.clone()))?;
            if t.enabled {
                return Err(ServiceError::TableEnabled(entry.table.clone()));
            }
            t.families = snapshot.table.families.clone();
            t.regions = regions;
            t.split_parents.clear();
            t.holds = vec![entry.id.clone()];
            let record = t.clone();
            catalog.commit(next).await?;
            record
        };
        self.install(LiveTable {
            record: record.clone(),
            regions: BTreeMap::new(),
        });
        // The table's former regions go (files a snapshot holds stay), and
        // snapshots only they held are released.
        self.delete_region_data(&old).await;
        self.release_unheld_snapshots().await;
        tracing::info!(snapshot = name, table = %entry.table, regions = record.regions.len(), "table restored to a snapshot");
        Ok(record)
    }

    /// New regions of table `table_id` with `snapshot`'s bounds, each seeded
    /// with the snapshot's files of its region.
    async fn seed_regions(
        &self,
        snapshot: &SnapshotRecord,
        table_id: &str,
    ) -> Result<Vec<crate::catalog::RegionRecord>, ServiceError> {
        let mut out = Vec::with_capacity(snapshot.regions.len());
        for (i, region) in snapshot.regions.iter().enumerate() {
            let record =
                new_region_record(table_id, region.start_row.clone(), region.end_row.clone());
            let seed = RegionSeed {
                region_dir: record.dir.clone(),
                start_row: region.start_row.clone(),
                end_row: region.end_row.clone(),
                stores: snapshot.region_stores(i)?,
                seq: region.read_point,
            };
            seed_region(&self.inner.env.bucket, &seed)
                .await
                .map_err(|source| {
                    ServiceError::Region(shoal_storage::region::RegionError::Manifest {
                        region: record.id.clone(),
                        source,
                    })
                })?;
            out.push(record);
        }
        Ok(out)
    }

    /// Deletes snapshot `name`. Its files go now, unless a clone or a
    /// restored table still reads them: then it is hidden (marked deleted)
    /// and its files go when the last such table does.
    pub async fn delete_snapshot(&self, name: &str) -> Result<(), ServiceError> {
        let _one = self.inner.snapshot_lock.lock().await;
        let mut catalog = self.inner.catalog.lock().await;
        let mut next = catalog.current().clone();
        let Some(entry) = next
            .snapshots
            .iter_mut()
            .find(|s| s.name == name && !s.deleted)
        else {
            return Err(ServiceError::NoSuchSnapshot(name.to_string()));
        };
        entry.deleted = true;
        let id = entry.id.clone();
        let held = next.snapshot_held(&id);
        if !held {
            next.snapshots.retain(|s| s.id != id);
        }
        catalog.commit(next).await?;
        if held {
            tracing::info!(
                snapshot = name,
                "snapshot deleted; its files stay while a clone reads them"
            );
            return Ok(());
        }
        let current = catalog.current().clone();
        drop(catalog);
        self.remove_snapshot_objects(&id, name, &current).await;
        tracing::info!(snapshot = name, "snapshot deleted");
        Ok(())
    }

    /// Deleted snapshots no table holds any more leave the catalog, and
    /// their files go. Run after a table is dropped or restored, and by
    /// the periodic checks (a crash between the steps is finished there).
    pub(crate) async fn release_unheld_snapshots(&self) {
        let (gone, current) = {
            let mut catalog = self.inner.catalog.lock().await;
            let c = catalog.current();
            let gone: Vec<SnapshotEntry> = c
                .snapshots
                .iter()
                .filter(|s| s.deleted && !c.snapshot_held(&s.id))
                .cloned()
                .collect();
            if gone.is_empty() {
                return;
            }
            let mut next = c.clone();
            next.snapshots
                .retain(|s| !gone.iter().any(|g| g.id == s.id));
            if let Err(e) = catalog.commit(next).await {
                tracing::warn!(error = %e, "releasing deleted snapshots failed; retried later");
                return;
            }
            (gone, catalog.current().clone())
        };
        for s in gone {
            self.remove_snapshot_objects(&s.id, &s.name, &current).await;
            tracing::info!(snapshot = %s.name, "a deleted snapshot's files are released: no table reads them any more");
        }
    }

    /// Deletes what snapshot `id` alone kept (it has left `catalog`): its
    /// own objects, and the files it held of regions that are gone. Files
    /// of live regions are left to their regions' GC.
    async fn remove_snapshot_objects(&self, id: &str, name: &str, catalog: &Catalog) {
        let bucket = &self.inner.env.bucket;
        let record = SnapshotRecord::read(bucket, id, name).await;
        self.inner.snapshot_holds.release(id);
        let _ = self.inner.snapshot_holds.sync(bucket, catalog).await;
        if let Ok(record) = record {
            let live_dirs: HashSet<&str> = catalog
                .tables
                .iter()
                .flat_map(|t| {
                    t.regions
                        .iter()
                        .chain(t.split_parents.iter().map(|p| &p.region))
                })
                .map(|r| r.dir.as_str())
                .collect();
            let own = format!("{}/", snapshot_dir(id));
            let orphans: Vec<String> = record
                .files()
                .filter(|f| !f.path.starts_with(&own))
                .filter(|f| dir_of_file(&f.path).is_some_and(|d| !live_dirs.contains(d)))
                .filter(|f| {
                    f.file_id()
                        .is_some_and(|fid| !self.inner.env.pins.is_pinned(fid))
                })
                .map(|f| f.path.clone())
                .collect();
            if let Err(e) = bucket.delete_many(orphans).await {
                tracing::warn!(snapshot = name, error = %e, "deleting a snapshot's files failed; they stay as garbage");
            }
        }
        self.delete_dir(&snapshot_dir(id)).await;
    }
}
