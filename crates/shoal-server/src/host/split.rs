//! Splits: a region past its size (or on request) becomes two children that
//! read the parent's files within their own key bounds (no data is copied);
//! each child then major-compacts into files of its own, and the janitor
//! deletes the parent's files once neither child reads them.
//!
//! Order of a split, under the catalog lock: park the region (calls wait),
//! close it (every acknowledged write is flushed), write the two child
//! manifests, commit the catalog (children replace the parent; the parent is
//! kept as a split parent), open the children, release the parent's WAL
//! entries. A failure before the catalog commit reopens the parent; the
//! catalog commit is the point of no return.

use super::admin::new_region_record;
use super::{Host, LiveTable, Slot};
use crate::catalog::{Catalog, CatalogStore, RegionRecord, SplitParentRecord};
use crate::error::ServiceError;
use bytes::Bytes;
use shoal_storage::region::{Region, SplitChild, parent_released, write_child_manifests};
use std::sync::atomic::Ordering;

/// A region parked for its split: its slot is `Moving` (calls wait) and
/// it is closed (every acknowledged write flushed).
#[derive(Clone, Copy)]
struct Parked<'a> {
    /// The table as it was when the split began.
    live: &'a LiveTable,
    /// The region's key (start row) in the table.
    key: &'a Bytes,
    record: &'a RegionRecord,
    region: &'a Region,
}

/// Where `region` (of `record`) splits: at `row` if given, else at its
/// middle (flushed first, so the middle counts every write). Refused
/// unless inside the region.
async fn split_row_of(
    region: &Region,
    record: &RegionRecord,
    row: Option<Bytes>,
) -> Result<Bytes, ServiceError> {
    let region_id = record.id.as_str();
    let split_row = match row {
        Some(r) => r,
        None => {
            if region.memstore_size() > 0 {
                region.flush().await.map_err(ServiceError::Region)?;
            }
            region
                .split_point()
                .await
                .map_err(ServiceError::Region)?
                .ok_or_else(|| {
                    ServiceError::InvalidArgument(format!(
                        "region {region_id} is too small to split"
                    ))
                })?
        }
    };
    let inside =
        split_row > record.start_row && (record.end_row.is_empty() || split_row < record.end_row);
    if !inside {
        return Err(ServiceError::InvalidArgument(format!(
            "split row is not inside region {region_id}"
        )));
    }
    Ok(split_row)
}

impl Host {
    /// Splits the region of `table` holding `row` at `row`; without a row,
    /// splits every region of the table at its middle. Returns the new
    /// regions.
    pub async fn split(
        &self,
        table: &str,
        row: Option<Bytes>,
    ) -> Result<Vec<RegionRecord>, ServiceError> {
        self.not_in_cluster_mode(
            "splitting by hand (regions split by themselves past regions.split_size)",
        )?;
        let live = self.table(table)?;
        if !live.record.enabled {
            return Err(ServiceError::TableDisabled(table.to_string()));
        }
        match row {
            Some(row) => {
                if row.is_empty() {
                    return Err(ServiceError::InvalidArgument(
                        "split row must not be empty".into(),
                    ));
                }
                crate::config::limits::check_row_key(&row, "split row")?;
                let Some((record, _)) = live.slot_for(&row) else {
                    return Err(ServiceError::Unavailable(format!(
                        "no region of table {table} holds the split row"
                    )));
                };
                if record.start_row == row {
                    return Err(ServiceError::InvalidArgument(format!(
                        "a region of table {table} already starts at this row"
                    )));
                }
                self.split_region(table, &record.id.clone(), Some(row))
                    .await
            }
            None => {
                let mut out = Vec::new();
                let ids: Vec<String> = live.regions.values().map(|(r, _)| r.id.clone()).collect();
                for id in ids {
                    match self.split_region(table, &id, None).await {
                        Ok(children) => out.extend(children),
                        Err(ServiceError::InvalidArgument(reason)) => {
                            tracing::info!(table, region = %id, reason, "region not split");
                        }
                        Err(e) => return Err(e),
                    }
                }
                if out.is_empty() {
                    return Err(ServiceError::InvalidArgument(format!(
                        "no region of table {table} could be split (too little data, or still compacting away a previous split's references)"
                    )));
                }
                Ok(out)
            }
        }
    }

    /// Splits one region (by id) at `row`, or at its middle.
    pub(crate) async fn split_region(
        &self,
        table: &str,
        region_id: &str,
        row: Option<Bytes>,
    ) -> Result<Vec<RegionRecord>, ServiceError> {
        // Cluster mode: the master commits the catalog (possibly this very
        // server, which then takes the lock itself).
        let mut catalog_guard = match self.inner.cluster {
            None => Some(self.inner.catalog.lock().await),
            Some(_) => None,
        };
        let live = self.table(table)?;
        let Some((key, (record, slot))) = live
            .regions
            .iter()
            .find(|(_, (r, _))| r.id == region_id)
            .map(|(k, v)| (k.clone(), v.clone()))
        else {
            return Err(ServiceError::Unavailable(format!(
                "region {region_id} of table {table} is gone (split or dropped)"
            )));
        };
        let Slot::Open(region) = slot else {
            return Err(ServiceError::Unavailable(format!(
                "region {region_id} is already moving"
            )));
        };
        if region.has_references() {
            return Err(ServiceError::InvalidArgument(format!(
                "region {region_id} still reads files of another region of its table (its split parent's, or those a restore_snapshot gave back); it can split after its compaction"
            )));
        }
        let split_row = split_row_of(&region, &record, row).await?;
        let children = [
            new_region_record(
                &live.record.object_root(),
                record.start_row.clone(),
                split_row.clone(),
            ),
            new_region_record(
                &live.record.object_root(),
                split_row.clone(),
                record.end_row.clone(),
            ),
        ];

        // Park the region: calls to it wait until the children are open.
        self.replace_slot(&live, &key, (record.clone(), Slot::Moving));
        if let Err(e) = region.close().await {
            self.replace_slot(&live, &key, (record.clone(), Slot::Open(region)));
            return Err(ServiceError::Region(e));
        }
        let parked = Parked {
            live: &live,
            key: &key,
            record: &record,
            region: &region,
        };
        let committed = self
            .commit_split(table, &parked, &children, catalog_guard.as_mut())
            .await;
        let next = match committed {
            Ok(next) => next,
            Err(e) => return Err(self.split_not_committed(table, &parked, &children, e).await),
        };
        // Point of no return: the catalog lists the children.
        let opened = self.open_children(table, &parked, &children, &next).await?;
        let child_ids: Vec<String> = children.iter().map(|c| c.id.clone()).collect();
        self.set_installing(&child_ids, false);
        self.retire(&region);
        self.inner.splits.fetch_add(1, Ordering::Relaxed);
        self.release_wal(region_id).await;
        tracing::info!(
            table,
            parent = region_id,
            split_row = %String::from_utf8_lossy(&split_row),
            left = %children[0].id,
            right = %children[1].id,
            "region split"
        );
        // Rewrite the parent's files into each child's own files.
        for (_, r) in opened {
            r.compact_references_in_background();
        }
        Ok(children.to_vec())
    }

    /// Writes the children's manifests (references to the parent's files),
    /// then has the catalog list the children instead of the parent: the
    /// catalog commit here under `catalog` (single server), or in cluster
    /// mode the master's registration (the children counted as installing
    /// here meanwhile). Returns the catalog that lists them.
    async fn commit_split(
        &self,
        table: &str,
        parked: &Parked<'_>,
        children: &[RegionRecord; 2],
        catalog: Option<&mut tokio::sync::MutexGuard<'_, CatalogStore>>,
    ) -> Result<Catalog, ServiceError> {
        let region_id = parked.record.id.as_str();
        let parent_manifest = parked.region.current_manifest().await;
        let split_children: Vec<SplitChild> = children
            .iter()
            .map(|c| SplitChild {
                region_id: c.id.clone(),
                region_dir: c.dir.clone(),
                start_row: c.start_row.clone(),
                end_row: c.end_row.clone(),
            })
            .collect();
        write_child_manifests(&self.inner.env.bucket, &parent_manifest, &split_children)
            .await
            .map_err(|source| {
                ServiceError::Region(shoal_storage::region::RegionError::Manifest {
                    region: region_id.to_string(),
                    source,
                })
            })?;
        let Some(catalog) = catalog else {
            // Cluster mode: the master registers the children.
            let ids: Vec<String> = children.iter().map(|c| c.id.clone()).collect();
            self.set_installing(&ids, true);
            return match self
                .register_split_with_master(table, region_id, children)
                .await
            {
                Ok(next) => Ok(next),
                Err(e) => {
                    self.set_installing(&ids, false);
                    Err(e)
                }
            };
        };
        let mut next = catalog.current().clone();
        let Some(t) = next.table_mut(table) else {
            return Err(ServiceError::NoSuchTable(table.to_string()));
        };
        let at = t
            .regions
            .iter()
            .position(|r| r.id == region_id)
            .ok_or_else(|| ServiceError::Unavailable(format!("region {region_id} is gone")))?;
        t.regions.splice(at..=at, children.iter().cloned());
        t.split_parents.push(SplitParentRecord {
            region: parked.record.clone(),
            children_dirs: children.iter().map(|c| c.dir.clone()).collect(),
        });
        catalog.commit(next.clone()).await?;
        Ok(next)
    }

    /// The split failed before its commit (`e`), or in cluster mode was not
    /// confirmed by the master. Cluster mode: the master may or may not
    /// have registered the children; whichever its records say is opened
    /// by this server's next round (the parent is flushed; so are the
    /// children's files), and nothing is deleted here. Single server: the
    /// children's files go and the parent opens again. Returns `e`.
    async fn split_not_committed(
        &self,
        table: &str,
        parked: &Parked<'_>,
        children: &[RegionRecord; 2],
        e: ServiceError,
    ) -> ServiceError {
        let Parked {
            live,
            key,
            record,
            region,
        } = *parked;
        let region_id = record.id.as_str();
        if self.inner.cluster.is_some() {
            tracing::warn!(table, region = region_id, error = %e, "split not confirmed by the master; the next round opens the parent or the children, whichever is registered");
            self.replace_slot(live, key, (record.clone(), Slot::Elsewhere));
            self.retire(region);
            return e;
        }
        tracing::warn!(table, region = region_id, error = %e, "split failed before its commit; reopening the parent");
        for c in children {
            self.delete_dir(&c.dir).await;
        }
        match self.open_region(&live.record, record).await {
            Ok(r) => self.replace_slot(live, key, (record.clone(), Slot::Open(r))),
            Err(re) => {
                tracing::error!(table, region = region_id, error = %re, "reopening a region after a failed split failed; it stays offline until restart");
            }
        }
        e
    }

    /// Opens the children `next` lists in place of the parent, each taking
    /// the parent's nonces (a retry of an increment or append the parent
    /// applied is refused by the child holding its row), and serves them.
    async fn open_children(
        &self,
        table: &str,
        parked: &Parked<'_>,
        children: &[RegionRecord; 2],
        next: &Catalog,
    ) -> Result<Vec<(RegionRecord, Region)>, ServiceError> {
        let table_record = next
            .table(table)
            .cloned()
            .ok_or_else(|| ServiceError::NoSuchTable(table.to_string()))?;
        let mut opened: Vec<(RegionRecord, Region)> = Vec::new();
        let child_ids: Vec<String> = children.iter().map(|c| c.id.clone()).collect();
        for c in children {
            let r = match self.open_region(&table_record, c).await {
                Ok(r) => r,
                Err(e) => {
                    // Cluster mode: the round opens it from its record.
                    self.set_installing(&child_ids, false);
                    return Err(ServiceError::Region(e));
                }
            };
            // A retry of an increment or append the parent applied is
            // refused by the child holding its row.
            r.adopt_nonces(parked.region);
            opened.push((c.clone(), r));
        }
        let current = self.table(table)?;
        let mut regions = current.regions.clone();
        regions.remove(parked.key);
        for (c, r) in &opened {
            regions.insert(c.start_row.clone(), (c.clone(), Slot::Open(r.clone())));
        }
        self.install(LiveTable {
            record: table_record,
            regions,
        });
        Ok(opened)
    }

    fn replace_slot(&self, live: &LiveTable, key: &Bytes, slot: (RegionRecord, Slot)) {
        let current = self.table(&live.record.name).ok();
        let base = current.as_deref().unwrap_or(live);
        let mut regions = base.regions.clone();
        regions.insert(key.clone(), slot);
        self.install(LiveTable {
            record: base.record.clone(),
            regions,
        });
    }

    /// True while a reader (a scan that started before a child's
    /// compaction) still holds one of the parent's files: the janitor waits
    /// for it rather than pull the file from under it.
    async fn parent_files_in_use(&self, parent_dir: &str) -> bool {
        let store = shoal_storage::manifest::ManifestStore::new(
            self.inner.env.bucket.clone(),
            parent_dir.to_string(),
        );
        match store.load_latest().await {
            Ok(Some(m)) => m.files().any(|f| self.inner.env.pins.is_pinned(f.id)),
            Ok(None) => false,
            // Unreadable: keep the files; the next check tries again.
            Err(_) => true,
        }
    }

    /// Deletes the files of split parents that no child reads any more.
    pub(crate) async fn clean_split_parents(&self) -> Result<usize, ServiceError> {
        let candidates: Vec<(String, SplitParentRecord)> = self
            .tables()
            .iter()
            .flat_map(|t| {
                t.record
                    .split_parents
                    .iter()
                    .map(|p| (t.record.name.clone(), p.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut cleaned = 0;
        for (table, parent) in candidates {
            let released = parent_released(
                &self.inner.env.bucket,
                &parent.region.dir,
                &parent.children_dirs,
            )
            .await
            .map_err(|source| {
                ServiceError::Region(shoal_storage::region::RegionError::Manifest {
                    region: parent.region.id.clone(),
                    source,
                })
            })?;
            if !released || self.parent_files_in_use(&parent.region.dir).await {
                continue;
            }
            {
                let mut catalog = self.inner.catalog.lock().await;
                let mut next = catalog.current().clone();
                let Some(t) = next.table_mut(&table) else {
                    continue;
                };
                t.split_parents.retain(|p| p.region.id != parent.region.id);
                let record = t.clone();
                catalog.commit(next).await?;
                if let Ok(live) = self.table(&table) {
                    self.install(LiveTable {
                        record,
                        regions: live.regions.clone(),
                    });
                }
            }
            self.delete_dir(&parent.region.dir).await;
            cleaned += 1;
            tracing::info!(table, parent = %parent.region.id, "split parent's files deleted");
        }
        Ok(cleaned)
    }
}
