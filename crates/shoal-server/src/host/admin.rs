//! Table administration: create, describe, alter, disable, enable, truncate,
//! drop, list, flush, compact. Each operation holds the catalog lock for its
//! whole run, so admin operations never interleave; data calls go on, and
//! meet regions in motion as `Moving` slots (they wait and retry).

use super::{Host, LiveTable, Slot};
use crate::catalog::schema::object_root;
use crate::catalog::{
    Catalog, FamilyPatch, FamilySchema, RegionRecord, TableRecord, validate_table_name,
};
use crate::error::ServiceError;
use bytes::Bytes;
use shoal_storage::region::Region;
use std::collections::BTreeMap;

/// A new region record with a fresh id under `root` (the table's
/// [`TableRecord::object_root`]).
pub(crate) fn new_region_record(root: &str, start_row: Bytes, end_row: Bytes) -> RegionRecord {
    let id = ulid::Ulid::new().to_string().to_ascii_lowercase();
    // A short hash in front spreads regions over object-store key prefixes
    // (S3 partitions request rates by prefix).
    let hash = crc32c::crc32c(id.as_bytes()) & 0xff;
    RegionRecord {
        dir: format!("data/{hash:02x}/{root}/{id}"),
        id,
        start_row,
        end_row,
    }
}

/// Regions covering all rows, cut at `split_keys` (sorted, unique, non-empty),
/// under `root`.
fn regions_for(root: &str, split_keys: &[Bytes]) -> Vec<RegionRecord> {
    let mut bounds = vec![Bytes::new()];
    bounds.extend(split_keys.iter().cloned());
    bounds.push(Bytes::new());
    bounds
        .windows(2)
        .map(|w| new_region_record(root, w[0].clone(), w[1].clone()))
        .collect()
}

/// Err unless the namespace table `name` would be in exists.
pub(crate) fn need_namespace(catalog: &Catalog, name: &str) -> Result<(), ServiceError> {
    let ns = crate::catalog::names::namespace_of(name);
    if catalog.has_namespace(ns) {
        Ok(())
    } else {
        Err(ServiceError::NoSuchNamespace(ns.to_string()))
    }
}

impl Host {
    /// The catalog's name for a new table called `name` (checked; its
    /// namespace exists now: a commit checks again).
    pub(crate) async fn new_table_name(&self, name: &str) -> Result<String, ServiceError> {
        validate_table_name(name).map_err(ServiceError::InvalidArgument)?;
        let name = crate::catalog::names::canonical(name).to_string();
        need_namespace(self.inner.catalog.lock().await.current(), &name)?;
        Ok(name)
    }

    /// Creates a table with `families` (patches over the defaults), pre-split
    /// at `split_keys`.
    pub async fn create_table(
        &self,
        name: &str,
        families: Vec<FamilyPatch>,
        split_keys: Vec<Bytes>,
    ) -> Result<TableRecord, ServiceError> {
        let name = &self.new_table_name(name).await?;
        if families.is_empty() {
            return Err(ServiceError::InvalidArgument(format!(
                "table {} needs at least one column family",
                crate::error::shown(name)
            )));
        }
        let limits = &self.config().limits;
        limits.check_families(families.len())?;
        limits.check_split_keys(&split_keys)?;
        let mut schemas: Vec<FamilySchema> = Vec::new();
        for patch in &families {
            let f = patch.apply(FamilySchema::new(patch.name.clone()));
            f.validate().map_err(ServiceError::InvalidArgument)?;
            if schemas.iter().any(|s| s.name == f.name) {
                return Err(ServiceError::InvalidArgument(format!(
                    "column family {:?} is given twice",
                    f.name
                )));
            }
            schemas.push(f);
        }
        schemas.sort_by(|a, b| a.name.cmp(&b.name));
        let mut keys = split_keys;
        if keys.iter().any(|k| k.is_empty()) {
            return Err(ServiceError::InvalidArgument(
                "split keys must not be empty".into(),
            ));
        }
        keys.sort();
        keys.dedup();
        if self.inner.cluster.is_some() {
            return self.create_table_in_cluster(name, schemas, &keys).await;
        }
        let mut catalog = self.inner.catalog.lock().await;
        if catalog.current().table(name).is_some() {
            return Err(ServiceError::TableExists(name.to_string()));
        }
        need_namespace(catalog.current(), name)?;
        let id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        let record = TableRecord {
            name: name.to_string(),
            regions: regions_for(&object_root(name, &id), &keys),
            id,
            enabled: true,
            families: schemas,
            split_parents: Vec::new(),
            holds: Vec::new(),
            reset_ms: 0,
        };
        let mut next = catalog.current().clone();
        next.tables.push(record.clone());
        next.tables.sort_by(|a, b| a.name.cmp(&b.name));
        catalog.commit(next).await?;
        let live = self.open_live(&record).await?;
        self.install(live);
        tracing::info!(
            table = name,
            regions = record.regions.len(),
            "table created"
        );
        Ok(record)
    }

    async fn create_table_in_cluster(
        &self,
        name: &str,
        schemas: Vec<FamilySchema>,
        keys: &[Bytes],
    ) -> Result<TableRecord, ServiceError> {
        let id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        let record = TableRecord {
            name: name.to_string(),
            regions: regions_for(&object_root(name, &id), keys),
            id,
            enabled: true,
            families: schemas,
            split_parents: Vec::new(),
            holds: Vec::new(),
            reset_ms: 0,
        };
        let r = record.clone();
        self.commit_as_master(|next| {
            if next.table(name).is_some() {
                return Err(ServiceError::TableExists(name.to_string()));
            }
            need_namespace(next, name)?;
            next.tables.push(r);
            next.tables.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(())
        })
        .await?;
        self.settle(&record, true).await;
        tracing::info!(
            table = name,
            regions = record.regions.len(),
            "table created"
        );
        Ok(record)
    }

    async fn open_live(&self, record: &TableRecord) -> Result<LiveTable, ServiceError> {
        self.open_table_regions(record)
            .await
            .map_err(|(_, e)| ServiceError::Region(*e))
    }

    /// The catalog record of `name`.
    pub async fn describe_table(&self, name: &str) -> Result<TableRecord, ServiceError> {
        Ok(self.table(name)?.record.clone())
    }

    /// Every table's record, by name.
    pub async fn list_tables(&self) -> Vec<TableRecord> {
        self.tables().iter().map(|t| t.record.clone()).collect()
    }

    /// Marks every region of the live table as moving and returns its open
    /// regions (to close).
    fn park(&self, name: &str) -> Result<(Vec<Region>, std::sync::Arc<LiveTable>), ServiceError> {
        let live = self.table(name)?;
        let regions = live.open_regions();
        let parked = LiveTable {
            record: live.record.clone(),
            regions: live
                .regions
                .iter()
                .map(|(k, (r, _))| (k.clone(), (r.clone(), Slot::Moving)))
                .collect(),
        };
        self.install(parked);
        Ok((regions, live))
    }

    /// Changes families: adds or updates `upsert` (only the settings given),
    /// deletes `delete`. Regions reopen with the new settings.
    pub async fn alter_table(
        &self,
        name: &str,
        upsert: Vec<FamilyPatch>,
        delete: Vec<String>,
    ) -> Result<TableRecord, ServiceError> {
        self.config().limits.check_families(upsert.len())?;
        if self.inner.cluster.is_some() {
            return self.alter_table_in_cluster(name, upsert, delete).await;
        }
        let mut catalog = self.inner.catalog.lock().await;
        let record = catalog
            .current()
            .table(name)
            .cloned()
            .ok_or_else(|| ServiceError::NoSuchTable(name.to_string()))?;
        let record = self.altered(record, &upsert, &delete)?;
        self.replace_record(&mut catalog, name, &record).await?;
        tracing::info!(table = name, "table altered");
        Ok(record)
    }

    /// `record` with `upsert` and `delete` applied, checked.
    fn altered(
        &self,
        mut record: TableRecord,
        upsert: &[FamilyPatch],
        delete: &[String],
    ) -> Result<TableRecord, ServiceError> {
        let name = record.name.clone();
        for family in delete {
            let before = record.families.len();
            record.families.retain(|f| &f.name != family);
            if record.families.len() == before {
                return Err(ServiceError::NoSuchFamily {
                    table: name,
                    family: family.clone(),
                });
            }
        }
        for patch in upsert {
            let base = record
                .families
                .iter()
                .find(|f| f.name == patch.name)
                .cloned()
                .unwrap_or_else(|| FamilySchema::new(patch.name.clone()));
            let f = patch.apply(base);
            f.validate().map_err(ServiceError::InvalidArgument)?;
            record.families.retain(|x| x.name != f.name);
            record.families.push(f);
        }
        self.config().limits.check_families(record.families.len())?;
        if record.families.is_empty() {
            return Err(ServiceError::InvalidArgument(format!(
                "table {name:?} would have no column family left"
            )));
        }
        record.families.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(record)
    }

    /// Cluster mode: the master commits the new schema, then every region
    /// of the table is reopened where it is (flushed, closed, opened again
    /// with the new families); waits (bounded) for them.
    async fn alter_table_in_cluster(
        &self,
        name: &str,
        upsert: Vec<FamilyPatch>,
        delete: Vec<String>,
    ) -> Result<TableRecord, ServiceError> {
        let mut altered = None;
        self.commit_as_master(|next| {
            let t = next
                .table_mut(name)
                .ok_or_else(|| ServiceError::NoSuchTable(name.to_string()))?;
            let record = self.altered(t.clone(), &upsert, &delete)?;
            *t = record.clone();
            altered = Some(record);
            Ok(())
        })
        .await?;
        let record = altered.ok_or_else(|| ServiceError::NoSuchTable(name.to_string()))?;
        if record.enabled {
            self.reopen_in_cluster(&record).await?;
        }
        tracing::info!(table = name, "table altered");
        Ok(record)
    }

    /// Replaces the table's catalog record: parks and closes its regions,
    /// commits `record`, then serves the regions `record` lists (opened if
    /// the table is enabled). A failure before the commit serves the table
    /// as it was.
    async fn replace_record(
        &self,
        catalog: &mut crate::catalog::CatalogStore,
        name: &str,
        record: &TableRecord,
    ) -> Result<(), ServiceError> {
        let (regions, old) = self.park(name)?;
        let result = async {
            self.close_regions(regions)
                .await
                .map_err(ServiceError::Region)?;
            let mut next = catalog.current().clone();
            if let Some(t) = next.table_mut(name) {
                *t = record.clone();
            }
            catalog.commit(next).await?;
            Ok::<_, ServiceError>(())
        }
        .await;
        if let Err(e) = result {
            self.reopen_after_failure(&old).await;
            return Err(e);
        }
        let live = if record.enabled {
            self.open_live(record).await?
        } else {
            LiveTable {
                record: record.clone(),
                regions: BTreeMap::new(),
            }
        };
        self.install(live);
        Ok(())
    }

    /// After a failed admin operation: serve the table as it was (reopening
    /// any region the operation closed).
    async fn reopen_after_failure(&self, old: &LiveTable) {
        match self.open_table_regions(&old.record).await {
            Ok(live) if old.record.enabled => self.install(live),
            Ok(_) => self.install(old.clone()),
            Err((region, e)) => {
                tracing::error!(table = %old.record.name, region, error = %e, "reopening a region after a failed admin operation failed");
            }
        }
    }

    /// Closes the table's regions; it stays in the catalog.
    pub async fn disable_table(&self, name: &str) -> Result<(), ServiceError> {
        if self.inner.cluster.is_some() {
            return self.set_enabled_in_cluster(name, false).await;
        }
        let mut catalog = self.inner.catalog.lock().await;
        let live = self.table(name)?;
        if !live.record.enabled {
            return Err(ServiceError::TableDisabled(name.to_string()));
        }
        let (regions, old) = self.park(name)?;
        let result = async {
            self.close_regions(regions)
                .await
                .map_err(ServiceError::Region)?;
            let mut next = catalog.current().clone();
            if let Some(t) = next.table_mut(name) {
                t.enabled = false;
            }
            catalog.commit(next).await?;
            Ok::<_, ServiceError>(())
        }
        .await;
        if let Err(e) = result {
            self.reopen_after_failure(&old).await;
            return Err(e);
        }
        let mut record = old.record.clone();
        record.enabled = false;
        self.install(LiveTable {
            record,
            regions: BTreeMap::new(),
        });
        tracing::info!(table = name, "table disabled");
        Ok(())
    }

    /// Opens the table's regions again.
    pub async fn enable_table(&self, name: &str) -> Result<(), ServiceError> {
        if self.inner.cluster.is_some() {
            return self.set_enabled_in_cluster(name, true).await;
        }
        let mut catalog = self.inner.catalog.lock().await;
        let live = self.table(name)?;
        if live.record.enabled {
            return Err(ServiceError::InvalidArgument(format!(
                "table {name:?} is already enabled"
            )));
        }
        let mut record = live.record.clone();
        record.enabled = true;
        let opened = self.open_live(&record).await?;
        let mut next = catalog.current().clone();
        if let Some(t) = next.table_mut(name) {
            t.enabled = true;
        }
        if let Err(e) = catalog.commit(next).await {
            let _ = self.close_regions(opened.open_regions()).await;
            return Err(e.into());
        }
        self.install(opened);
        tracing::info!(table = name, "table enabled");
        Ok(())
    }

    /// Deletes every row of a disabled table (HBase's rule: a table must be
    /// disabled to be truncated): the table gets new, empty regions with the
    /// same boundaries and comes back enabled, as HBase's does; the old data
    /// is deleted afterwards.
    pub async fn truncate_table(&self, name: &str) -> Result<(), ServiceError> {
        if self.inner.cluster.is_some() {
            return self.truncate_table_in_cluster(name).await;
        }
        let mut catalog = self.inner.catalog.lock().await;
        let live = self.table(name)?;
        if live.record.enabled {
            return Err(ServiceError::TableEnabled(name.to_string()));
        }
        let old_record = live.record.clone();
        let mut record = old_record.clone();
        record.enabled = true;
        record.regions = old_record
            .regions
            .iter()
            .map(|r| {
                new_region_record(
                    &record.object_root(),
                    r.start_row.clone(),
                    r.end_row.clone(),
                )
            })
            .collect();
        record.split_parents.clear();
        record.reset_ms = super::snapshot_take::now_ms();
        self.replace_record(&mut catalog, name, &record).await?;
        self.delete_region_data(&old_record).await;
        tracing::info!(table = name, "table truncated");
        Ok(())
    }

    /// Cluster mode: the master gives the disabled table new, empty
    /// regions with the same boundaries and enables it, waits (bounded) for
    /// them to serve, then deletes the old regions' data.
    async fn truncate_table_in_cluster(&self, name: &str) -> Result<(), ServiceError> {
        let mut old = None;
        let mut new = None;
        self.commit_as_master(|next| {
            let t = next
                .table_mut(name)
                .ok_or_else(|| ServiceError::NoSuchTable(name.to_string()))?;
            if t.enabled {
                return Err(ServiceError::TableEnabled(name.to_string()));
            }
            old = Some(t.clone());
            let root = t.object_root();
            let regions = t
                .regions
                .iter()
                .map(|r| new_region_record(&root, r.start_row.clone(), r.end_row.clone()))
                .collect();
            t.regions = regions;
            t.split_parents.clear();
            t.enabled = true;
            t.reset_ms = super::snapshot_take::now_ms();
            new = Some(t.clone());
            Ok(())
        })
        .await?;
        if let Some(record) = &new {
            self.settle(record, true).await;
        }
        if let Some(record) = &old {
            self.delete_region_data(record).await;
        }
        tracing::info!(table = name, "table truncated");
        Ok(())
    }

    /// Removes a disabled table and deletes its data.
    pub async fn drop_table(&self, name: &str) -> Result<(), ServiceError> {
        if self.inner.cluster.is_some() {
            let mut dropped = None;
            self.commit_as_master(|next| {
                let t = next
                    .table(name)
                    .ok_or_else(|| ServiceError::NoSuchTable(name.to_string()))?;
                if t.enabled {
                    return Err(ServiceError::TableEnabled(name.to_string()));
                }
                dropped = Some(t.clone());
                next.tables.retain(|t| t.name != name);
                // HBase removes a deleted table's permissions with it.
                next.grants.retain(|g| g.table.as_deref() != Some(name));
                Ok(())
            })
            .await?;
            if let Some(record) = dropped {
                self.delete_region_data(&record).await;
            }
            self.release_unheld_snapshots().await;
            tracing::info!(table = name, "table dropped");
            return Ok(());
        }
        let mut catalog = self.inner.catalog.lock().await;
        let live = self.table(name)?;
        if live.record.enabled {
            return Err(ServiceError::TableEnabled(name.to_string()));
        }
        let mut next = catalog.current().clone();
        next.tables.retain(|t| t.name != name);
        // HBase removes a deleted table's permissions with it.
        next.grants.retain(|g| g.table.as_deref() != Some(name));
        catalog.commit(next).await?;
        self.refresh_grants(&catalog);
        self.uninstall(name);
        drop(catalog);
        self.delete_region_data(&live.record).await;
        self.release_unheld_snapshots().await;
        tracing::info!(table = name, "table dropped");
        Ok(())
    }

    /// Cluster mode: enables or disables `name` and waits for its regions
    /// to open or close.
    async fn set_enabled_in_cluster(&self, name: &str, enabled: bool) -> Result<(), ServiceError> {
        let mut record = None;
        self.commit_as_master(|next| {
            let t = next
                .table_mut(name)
                .ok_or_else(|| ServiceError::NoSuchTable(name.to_string()))?;
            match (t.enabled, enabled) {
                (true, true) => {
                    return Err(ServiceError::InvalidArgument(format!(
                        "table {name:?} is already enabled"
                    )));
                }
                (false, false) => return Err(ServiceError::TableDisabled(name.to_string())),
                _ => {}
            }
            t.enabled = enabled;
            record = Some(t.clone());
            Ok(())
        })
        .await?;
        if let Some(record) = record {
            self.settle(&record, enabled).await;
        }
        tracing::info!(table = name, enabled, "table state changed");
        Ok(())
    }

    /// Deletes the objects of every region (and split parent) of `record`
    /// and releases their WAL entries. Failures are logged: the objects are
    /// unreferenced garbage either way.
    pub(crate) async fn delete_region_data(&self, record: &TableRecord) {
        let dirs: Vec<(String, String)> = record
            .regions
            .iter()
            .chain(record.split_parents.iter().map(|p| &p.region))
            .map(|r| (r.id.clone(), r.dir.clone()))
            .collect();
        for (id, dir) in dirs {
            self.release_wal(&id).await;
            self.delete_dir(&dir).await;
        }
    }

    /// Deletes every object under `dir/`, except files a snapshot holds.
    pub(crate) async fn delete_dir(&self, dir: &str) {
        let bucket = &self.inner.env.bucket;
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        // Files a snapshot holds stay (`snapshot_use.rs`: they go with it).
        let held = |path: &str| {
            path.rsplit('/')
                .next()
                .and_then(|n| n.strip_suffix(".sst"))
                .and_then(shoal_storage::sst::FileId::parse)
                .is_some_and(|id| self.inner.env.pins.is_pinned(id))
        };
        let paths = match bucket.list(&prefix).await {
            Ok(objects) => objects
                .into_iter()
                .map(|o| o.path)
                .filter(|p| !held(p))
                .collect::<Vec<_>>(),
            Err(e) => {
                tracing::warn!(dir, error = %e, "listing a deleted region's objects failed; they stay as garbage");
                return;
            }
        };
        if let Err(e) = bucket.delete_many(paths).await {
            tracing::warn!(dir, error = %e, "deleting a deleted region's objects failed; they stay as garbage");
        }
    }

    /// Flushes every region of the table.
    pub async fn flush_table(&self, name: &str) -> Result<usize, ServiceError> {
        let live = self.table(name)?;
        if !live.record.enabled {
            return Err(ServiceError::TableDisabled(name.to_string()));
        }
        let regions = live.open_regions();
        for r in &regions {
            r.flush().await.map_err(ServiceError::Region)?;
        }
        Ok(regions.len())
    }

    /// Compacts every region of the table (major: rewrites all files).
    pub async fn compact_table(&self, name: &str, major: bool) -> Result<usize, ServiceError> {
        let live = self.table(name)?;
        if !live.record.enabled {
            return Err(ServiceError::TableDisabled(name.to_string()));
        }
        let regions = live.open_regions();
        for r in &regions {
            r.compact(major).await.map_err(ServiceError::Region)?;
        }
        Ok(regions.len())
    }

    /// Flushes (or, with `compact`, compacts — major or not) one region of
    /// the table, served here; NotServing if it is not.
    pub async fn region_work(
        &self,
        table: &str,
        region: &str,
        compact: Option<bool>,
    ) -> Result<(), ServiceError> {
        let live = self.table(table)?;
        if !live.record.enabled {
            return Err(ServiceError::TableDisabled(table.to_string()));
        }
        let Some(r) = live.open_regions().into_iter().find(|r| r.id() == region) else {
            return Err(self.not_serving(table, region));
        };
        match compact {
            None => r.flush().await.map(|_| ()),
            Some(major) => r.compact(major).await.map(|_| ()),
        }
        .map_err(ServiceError::Region)
    }
}
