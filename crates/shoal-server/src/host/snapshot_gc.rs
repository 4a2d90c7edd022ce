//! Garbage collection that knows about snapshots.
//!
//! The rule: a file is deleted only when no table's manifests, no snapshot
//! in the catalog (deleted ones a clone or restored table still reads
//! included) and no reader need it. Region GC skips files the snapshots
//! hold (`snapshots/holds.rs`); a dropped or restored table's old files a
//! snapshot holds stay where they are; when the last snapshot holding a
//! file goes, the file is deleted then (its region is gone) or by its
//! region's next GC (the region lives). Objects under `snapshots/<id>/`
//! that no catalog entry names (a snapshot or import that died before its
//! commit) are swept once they are older than the GC grace.

use super::Host;
use crate::catalog::{Catalog, SnapshotEntry};
use crate::error::ServiceError;
use crate::snapshots::record::{SnapshotRecord, dir_of_file, snapshot_dir};
use shoal_storage::manifest::GcOptions;
use std::collections::{BTreeMap, HashSet};

impl Host {
    /// Deleted snapshots no table holds any more leave the catalog, and
    /// their files go. Run after a table is dropped or restored, and by
    /// the periodic checks (a crash between the steps is finished there).
    pub(crate) async fn release_unheld_snapshots(&self) {
        if self.require_master().is_err() {
            return;
        }
        let mut gone: Vec<SnapshotEntry> = Vec::new();
        let committed = self
            .change_catalog(|next| {
                gone = next
                    .snapshots
                    .iter()
                    .filter(|s| s.deleted && !next.snapshot_held(&s.id))
                    .cloned()
                    .collect();
                if gone.is_empty() {
                    // Nothing to change: refuse, so nothing is committed.
                    return Err(ServiceError::InvalidArgument(String::new()));
                }
                next.snapshots
                    .retain(|s| !gone.iter().any(|g| g.id == s.id));
                Ok(())
            })
            .await;
        let current = match committed {
            Ok(c) => c,
            Err(ServiceError::InvalidArgument(_)) => return,
            Err(e) => {
                tracing::warn!(error = %e, "releasing deleted snapshots failed; retried later");
                return;
            }
        };
        for s in gone {
            self.remove_snapshot_objects(&s.id, &s.name, &current).await;
            tracing::info!(snapshot = %s.name, "a deleted snapshot's files are released: no table reads them any more");
        }
    }

    /// Deletes what snapshot `id` alone kept (it has left `catalog`): its
    /// own objects, and the files it held of regions that are gone. Files
    /// of live regions are left to their regions' GC.
    pub(crate) async fn remove_snapshot_objects(&self, id: &str, name: &str, catalog: &Catalog) {
        let bucket = &self.inner.env.bucket;
        let record = SnapshotRecord::read(bucket, id, name).await;
        // Only this snapshot's hold goes (a sync with `catalog`, read
        // earlier, could let go of a snapshot committed since).
        self.inner.snapshot_holds.release(id);
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

    /// One full garbage collection with `options`: every open region's GC,
    /// released split parents, deleted snapshots no table reads, and
    /// abandoned snapshot objects. The server runs these pieces on its own
    /// schedule with the default grace; this runs them all at once (tools
    /// and tests). Returns the files region GC deleted.
    pub async fn collect_garbage(&self, options: &GcOptions) -> usize {
        let mut deleted = 0;
        for t in self.tables() {
            for r in t.open_regions() {
                match r.collect_garbage(options).await {
                    Ok(report) => deleted += report.ssts_deleted,
                    Err(e) => {
                        tracing::warn!(region = %r.id(), error = %e, "garbage collection failed")
                    }
                }
            }
        }
        if let Err(e) = self.clean_split_parents().await {
            tracing::warn!(error = %e, "cleaning split parents failed; retried later");
        }
        self.release_unheld_snapshots().await;
        self.sweep_snapshots_older_than(options.grace, options.now)
            .await;
        deleted
    }

    /// Deletes the objects of snapshots that never reached the catalog
    /// (every object under `snapshots/<id>/` older than the GC grace, and
    /// no entry names `id`). Returns how many were swept.
    pub(crate) async fn sweep_abandoned_snapshots(&self) -> usize {
        self.sweep_snapshots_older_than(GcOptions::DEFAULT_GRACE, std::time::SystemTime::now())
            .await
    }

    async fn sweep_snapshots_older_than(
        &self,
        grace: std::time::Duration,
        now: std::time::SystemTime,
    ) -> usize {
        let bucket = &self.inner.env.bucket;
        let objects = match bucket.list("snapshots/").await {
            Ok(o) => o,
            Err(e) => {
                tracing::warn!(error = %e, "listing snapshots/ failed; the sweep is retried later");
                return 0;
            }
        };
        let known: HashSet<String> = {
            let catalog = self.inner.catalog.lock().await;
            catalog
                .current()
                .snapshots
                .iter()
                .map(|s| s.id.clone())
                .collect()
        };
        // Per id: is every object older than the grace?
        let mut old_enough: BTreeMap<String, bool> = BTreeMap::new();
        for o in &objects {
            let Some(id) = o
                .path
                .strip_prefix("snapshots/")
                .and_then(|r| r.split('/').next())
            else {
                continue;
            };
            let old = now
                .duration_since(o.last_modified)
                .is_ok_and(|age| age >= grace);
            let e = old_enough.entry(id.to_string()).or_insert(true);
            *e = *e && old;
        }
        let mut swept = 0;
        for (id, old) in old_enough {
            if old && !known.contains(&id) {
                tracing::info!(snapshot_id = %id, "objects of a snapshot that was never committed are swept");
                self.delete_dir(&snapshot_dir(&id)).await;
                swept += 1;
            }
        }
        swept
    }
}
