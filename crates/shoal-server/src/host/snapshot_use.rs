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
//! What garbage collection does about them is in `snapshot_gc.rs`.

use super::admin::new_region_record;
use super::{Host, LiveTable};
use crate::catalog::schema::object_root;
use crate::catalog::{SnapshotEntry, TableRecord};
use crate::error::ServiceError;
use crate::snapshots::record::SnapshotRecord;
use shoal_storage::region::{RegionSeed, seed_region};
use std::collections::BTreeMap;
use std::time::Instant;

/// Regions a clone or a restore seeds at once (see `Host::seed_regions`).
/// One at a time, a 128-region clone on a local-disk bucket took 2.7 s,
/// about 2 s of it seeding (`docs/benchmarks.md`, `snapshots`).
const SEED_CONCURRENCY: usize = 16;

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
    /// Every snapshot, by name (not the point-in-time window's bases).
    pub async fn list_snapshots(&self) -> Vec<SnapshotListing> {
        let catalog = self.inner.catalog.lock().await;
        catalog
            .current()
            .snapshots
            .iter()
            .filter(|s| !s.deleted && !s.base)
            .map(SnapshotListing::from)
            .collect()
    }

    /// Every snapshot entry of the catalog, deleted ones a table still
    /// holds included (for tools and tests; users list with
    /// [`Host::list_snapshots`]).
    pub async fn snapshot_entries(&self) -> Vec<SnapshotEntry> {
        self.inner.catalog.lock().await.current().snapshots.clone()
    }

    /// Snapshot `name`'s record.
    pub async fn describe_snapshot(&self, name: &str) -> Result<SnapshotRecord, ServiceError> {
        let entry = self.snapshot_entry(name).await?;
        SnapshotRecord::read(&self.inner.env.bucket, &entry.id, name).await
    }

    pub(crate) async fn snapshot_entry(&self, name: &str) -> Result<SnapshotEntry, ServiceError> {
        let mut catalog = self.inner.catalog.lock().await;
        if self.inner.cluster.is_some() {
            // Another server may have changed it (the master commits).
            self.reload_catalog(&mut catalog).await?;
        }
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
        let target = &self.new_table_name(target).await?;
        self.require_master()?;
        let _one = self.inner.snapshot_lock.lock().await;
        let entry = self.snapshot_entry(name).await?;
        if self.table(target).is_ok() {
            return Err(ServiceError::TableExists(target.to_string()));
        }
        let snapshot = SnapshotRecord::read(&self.inner.env.bucket, &entry.id, name).await?;
        let table_id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        let started = Instant::now();
        let record = TableRecord {
            name: target.to_string(),
            id: table_id.clone(),
            enabled: true,
            families: snapshot.table.families.clone(),
            regions: self
                .seed_regions(&snapshot, &object_root(target, &table_id))
                .await?,
            split_parents: Vec::new(),
            holds: vec![entry.id.clone()],
            reset_ms: 0,
        };
        let seeded = started.elapsed();
        let added = record.clone();
        self.change_catalog(|next| {
            if next.table(target).is_some() {
                return Err(ServiceError::TableExists(target.to_string()));
            }
            if next.snapshot(name).map(|s| &s.id) != Some(&entry.id) {
                return Err(ServiceError::NoSuchSnapshot(name.to_string()));
            }
            next.tables.push(added);
            next.tables.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(())
        })
        .await?;
        let committed = started.elapsed();
        if self.inner.cluster.is_some() {
            // The master's round assigns the regions; wait until they serve.
            self.settle(&record, true).await;
        } else {
            let live = self
                .open_table_regions(&record)
                .await
                .map_err(|(_, e)| ServiceError::Region(*e))?;
            self.install(live);
        }
        tracing::info!(
            snapshot = name,
            table = target,
            regions = record.regions.len(),
            seed_ms = seeded.as_millis() as u64,
            catalog_ms = (committed - seeded).as_millis() as u64,
            open_ms = (started.elapsed() - committed).as_millis() as u64,
            "snapshot cloned"
        );
        Ok(record)
    }

    /// Restores `name`'s table (disabled) to snapshot `name`: its regions,
    /// families and data become the snapshot's; it stays disabled. A table
    /// that no longer exists is created from the snapshot (as HBase does).
    pub async fn restore_snapshot(&self, name: &str) -> Result<TableRecord, ServiceError> {
        self.require_master()?;
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
        let regions = self.seed_regions(&snapshot, &old.object_root()).await?;
        let committed = self
            .change_catalog(|next| {
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
                t.reset_ms = super::snapshot_take::now_ms();
                Ok(())
            })
            .await?;
        let record = committed
            .table(&entry.table)
            .cloned()
            .ok_or_else(|| ServiceError::NoSuchTable(entry.table.clone()))?;
        if self.inner.cluster.is_none() {
            self.install(LiveTable {
                record: record.clone(),
                regions: BTreeMap::new(),
            });
        }
        // The table's former regions go (files a snapshot holds stay), and
        // snapshots only they held are released.
        self.delete_region_data(&old).await;
        self.release_unheld_snapshots().await;
        tracing::info!(snapshot = name, table = %entry.table, regions = record.regions.len(), "table restored to a snapshot");
        Ok(record)
    }

    /// New regions of table `table_id` with `snapshot`'s bounds, each seeded
    /// with the snapshot's files of its region, in the snapshot's order.
    /// [`SEED_CONCURRENCY`] at once: each seed is a few object-store
    /// requests (a LIST, two conditional PUTs), so one after another they
    /// made most of a clone's time.
    async fn seed_regions(
        &self,
        snapshot: &SnapshotRecord,
        root: &str,
    ) -> Result<Vec<crate::catalog::RegionRecord>, ServiceError> {
        use futures::{StreamExt, TryStreamExt};
        // Owned futures, built before they run: nothing borrowed from
        // `snapshot` is captured.
        let mut seeds = Vec::with_capacity(snapshot.regions.len());
        for (i, region) in snapshot.regions.iter().enumerate() {
            let record = new_region_record(root, region.start_row.clone(), region.end_row.clone());
            let seed = RegionSeed {
                region_dir: record.dir.clone(),
                start_row: region.start_row.clone(),
                end_row: region.end_row.clone(),
                stores: snapshot.region_stores(i)?,
                seq: region.read_point,
            };
            let bucket = self.inner.env.bucket.clone();
            seeds.push(async move {
                seed_region(&bucket, &seed).await.map_err(|source| {
                    ServiceError::Region(shoal_storage::region::RegionError::Manifest {
                        region: record.id.clone(),
                        source,
                    })
                })?;
                Ok::<_, ServiceError>(record)
            });
        }
        futures::stream::iter(seeds)
            .buffered(SEED_CONCURRENCY)
            .try_collect()
            .await
    }

    /// Deletes snapshot `name`. Its files go now, unless a clone or a
    /// restored table still reads them: then it is hidden (marked deleted)
    /// and its files go when the last such table does.
    pub async fn delete_snapshot(&self, name: &str) -> Result<(), ServiceError> {
        self.require_master()?;
        let _one = self.inner.snapshot_lock.lock().await;
        let mut deleted: Option<(String, bool)> = None;
        let current = self
            .change_catalog(|next| {
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
                deleted = Some((id, held));
                Ok(())
            })
            .await?;
        let Some((id, held)) = deleted else {
            return Err(ServiceError::NoSuchSnapshot(name.to_string()));
        };
        if held {
            tracing::info!(
                snapshot = name,
                "snapshot deleted; its files stay while a clone reads them"
            );
            return Ok(());
        }
        self.remove_snapshot_objects(&id, name, &current).await;
        tracing::info!(snapshot = name, "snapshot deleted");
        Ok(())
    }
}
