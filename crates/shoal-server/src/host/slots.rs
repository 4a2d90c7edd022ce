//! The slots of the live tables as something else drives them: the narrow
//! API the cluster's assignment rounds use to serve what they were given
//! (`cluster/`). Serve a catalog with every region elsewhere except
//! those open here; find a region; set or change one slot; list what is
//! open or in motion here; give one region, or every region, up without
//! flushing.
//!
//! Every change swaps a new `LiveTable` in under the tables' lock, as admin
//! operations and splits do, so routing never sees a table half changed.

use super::{Host, LiveTable, Slot};
use crate::catalog::{Catalog, RegionRecord, TableRecord};
use shoal_storage::region::Region;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Host {
    /// Serves `catalog`'s tables: regions open here stay open, and so do
    /// regions in motion here (parked for a split, opening, closing, or a
    /// closed copy still answering reads) — their mover sets their slot
    /// when done; every other region is served elsewhere. Open regions the
    /// catalog no longer lists (a dropped table) are given up.
    ///
    /// Keeping the motion matters: a catalog read while a region is parked
    /// for its split must not make it look unserved here, or this server's
    /// next round would open it again and let it take writes the split's
    /// children never see.
    pub(crate) fn install_tables(&self, catalog: &Catalog) {
        self.inner.security.set_grants(catalog);
        let mut tables = self.inner.tables.write().unwrap_or_else(|e| e.into_inner());
        let mut here: BTreeMap<String, Slot> = BTreeMap::new();
        for t in tables.values() {
            for (record, slot) in t.regions.values() {
                if !matches!(slot, Slot::Elsewhere) {
                    here.insert(record.id.clone(), slot.clone());
                }
            }
        }
        let mut next = BTreeMap::new();
        for table in &catalog.tables {
            let regions = if table.enabled {
                table
                    .regions
                    .iter()
                    .map(|r| {
                        let slot = here.remove(&r.id).unwrap_or(Slot::Elsewhere);
                        (r.start_row.clone(), (r.clone(), slot))
                    })
                    .collect()
            } else {
                BTreeMap::new()
            };
            next.insert(
                table.name.clone(),
                Arc::new(LiveTable {
                    record: table.clone(),
                    regions,
                }),
            );
        }
        *tables = next;
        drop(tables);
        // Still open but no longer in an enabled table: closed here (the
        // master's round retires their records). One in motion is left to
        // its mover (a split parent the catalog replaced by its children).
        for (id, slot) in here {
            let Slot::Open(region) = slot else { continue };
            tracing::info!(region = %id, "region open here is no longer served by its table; closing it");
            let host = self.clone();
            tokio::spawn(async move {
                let _ = host.close_regions(vec![region]).await;
            });
        }
    }

    /// Cluster mode at start: serve the catalog's tables, none of their
    /// regions here yet.
    pub(crate) async fn install_catalog(&self) {
        let catalog = self.inner.catalog.lock().await.current().clone();
        self.install_tables(&catalog);
    }

    /// The table record and region record of region `id`.
    pub(crate) fn find_region(&self, id: &str) -> Option<(TableRecord, RegionRecord)> {
        self.tables().iter().find_map(|t| {
            t.record
                .regions
                .iter()
                .find(|r| r.id == id)
                .map(|r| (t.record.clone(), r.clone()))
        })
    }

    /// Puts `slot` in place of region `id`'s slot; false if the region is
    /// not in a served table.
    pub(crate) fn set_slot(&self, id: &str, slot: Slot) -> bool {
        self.update_slot(id, |s| *s = slot).is_some()
    }

    /// Runs `change` on region `id`'s slot under the tables' lock; `None`
    /// if the region is not in a served table.
    pub(crate) fn update_slot<R>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Slot) -> R,
    ) -> Option<R> {
        let mut tables = self.inner.tables.write().unwrap_or_else(|e| e.into_inner());
        let (name, key) = tables.iter().find_map(|(name, t)| {
            t.regions
                .iter()
                .find(|(_, (r, _))| r.id == id)
                .map(|(k, _)| (name.clone(), k.clone()))
        })?;
        let mut next = LiveTable::clone(tables.get(&name)?);
        let out = next.regions.get_mut(&key).map(|entry| change(&mut entry.1));
        tables.insert(name, Arc::new(next));
        out
    }

    /// The open region `id`, if open here.
    pub(crate) fn open_region_here(&self, id: &str) -> Option<Region> {
        self.tables().iter().find_map(|t| {
            t.regions.values().find_map(|(r, s)| match s {
                Slot::Open(region) if r.id == id => Some(region.clone()),
                _ => None,
            })
        })
    }

    /// True while region `id` is being split or closed here (a closed
    /// copy still answering reads is closed).
    pub(crate) fn moving_here(&self, id: &str) -> bool {
        self.tables()
            .iter()
            .any(|t| t.regions.values().any(|(r, s)| r.id == id && in_motion(s)))
    }

    /// Ids of the regions open here, those being split or closed here, and
    /// a split's children being installed: the round must neither reopen
    /// nor hand them out meanwhile.
    pub(crate) fn open_region_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .tables()
            .iter()
            .flat_map(|t| {
                t.regions
                    .values()
                    .filter(|(_, s)| matches!(s, Slot::Open(_)) || in_motion(s))
                    .map(|(r, _)| r.id.clone())
                    .collect::<Vec<_>>()
            })
            .collect();
        ids.extend(
            self.inner
                .installing
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned(),
        );
        ids
    }

    /// True while a split here installs region `id`.
    pub(crate) fn installing(&self, id: &str) -> bool {
        self.inner
            .installing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(id)
    }

    /// Cluster mode: marks (or unmarks) a split's children as being
    /// installed here (nothing on a single server, where no round opens
    /// regions).
    pub(crate) fn set_installing(&self, ids: &[String], on: bool) {
        if self.inner.cluster.is_none() {
            return;
        }
        let mut set = self
            .inner
            .installing
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for id in ids {
            if on {
                set.insert(id.clone());
            } else {
                set.remove(id);
            }
        }
    }

    /// Region `id` (`region`, in motion here) is given up without
    /// flushing: this server may no longer own it.
    pub(crate) fn give_up(&self, id: &str, region: &Region) {
        region.abandon();
        self.retire(region);
        self.set_slot(id, Slot::Elsewhere);
    }

    /// The lease is lost: every region is given up at once, without
    /// flushing (this server cannot know whether another owns them now;
    /// their edits are in its WAL run, which the next owners replay).
    pub(crate) fn abandon_all(&self) -> usize {
        let mut tables = self.inner.tables.write().unwrap_or_else(|e| e.into_inner());
        let mut given_up = Vec::new();
        for t in tables.values_mut() {
            let mut next = LiveTable::clone(t);
            for (_, slot) in next.regions.values_mut() {
                match slot {
                    Slot::Open(r) => {
                        given_up.push(r.clone());
                        *slot = Slot::Elsewhere;
                    }
                    // A closed copy answers nothing more; one still in its
                    // closing flush is given up by its close (it fails).
                    Slot::Closing {
                        region,
                        reads_until: Some(_),
                    } => {
                        region.end_reads();
                        *slot = Slot::Elsewhere;
                    }
                    Slot::Closing { region, .. } => region.abandon(),
                    Slot::Moving | Slot::Elsewhere => {}
                }
            }
            *t = Arc::new(next);
        }
        drop(tables);
        for r in &given_up {
            r.abandon();
            self.retire(r);
        }
        given_up.len()
    }
}

/// A slot whose region is being split or closed here (not a closed copy
/// still answering reads: that one is closed).
fn in_motion(slot: &Slot) -> bool {
    matches!(
        slot,
        Slot::Moving
            | Slot::Closing {
                reads_until: None,
                ..
            }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;

    async fn host_with_table(dir: &std::path::Path) -> (Host, Catalog, String) {
        let mut config = ServerConfig::default();
        config.server.data_dir = dir.to_path_buf();
        let host = Host::open(config).await.expect("host");
        let record = host
            .create_table(
                "t",
                vec![crate::catalog::FamilyPatch {
                    name: "cf".into(),
                    ..Default::default()
                }],
                vec![],
            )
            .await
            .expect("table");
        let catalog = host.inner.catalog.lock().await.current().clone();
        (host, catalog, record.regions[0].id.clone())
    }

    /// A catalog read while a region is parked (for its split) keeps it
    /// parked: it never looks unserved here, which would have the round
    /// open it again behind the split's back.
    #[tokio::test]
    async fn a_catalog_read_keeps_a_region_in_motion_in_motion() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (host, catalog, id) = host_with_table(dir.path()).await;
        let region = host.open_region_here(&id).expect("open");
        host.set_slot(&id, Slot::Moving);
        host.install_tables(&catalog);
        assert!(host.moving_here(&id));
        assert!(host.open_region_ids().contains(&id));
        // An open region stays open.
        host.set_slot(&id, Slot::Open(region.clone()));
        host.install_tables(&catalog);
        assert!(host.open_region_here(&id).is_some());
        // A catalog without the region (a split parent replaced by its
        // children) drops a parked slot without closing anything.
        host.set_slot(&id, Slot::Moving);
        let mut without = catalog.clone();
        without.tables.clear();
        host.install_tables(&without);
        assert!(!host.moving_here(&id));
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        region
            .flush()
            .await
            .expect("the parked region was not closed");
    }
}
