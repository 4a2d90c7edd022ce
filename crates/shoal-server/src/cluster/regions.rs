//! The host as a cluster member sees its regions: the catalog's tables
//! served with every region elsewhere except those assigned here, and the
//! `RegionHost` the assignment rounds drive (open a region as its new owner
//! after replaying the WAL runs of its dead former owners, close it
//! flushing for a move, give every region up without flushing when the
//! lease is lost).

use crate::catalog::{Catalog, RegionRecord, TableRecord};
use crate::host::{Host, LiveTable, Slot};
use shoal_cluster::rounds::RegionHost;
use shoal_storage::region::{Region, RowBundle};
use shoal_storage::wal::ForeignWal;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

impl Host {
    /// Serves `catalog`'s tables: regions open here stay open, every other
    /// region is served elsewhere. Open regions the catalog no longer lists
    /// (a dropped table) are given up.
    pub(crate) fn install_tables(&self, catalog: &Catalog) {
        self.inner.security.set_grants(catalog);
        let mut tables = self.inner.tables.write().unwrap_or_else(|e| e.into_inner());
        let mut open: BTreeMap<String, Region> = BTreeMap::new();
        for t in tables.values() {
            for (record, slot) in t.regions.values() {
                if let Slot::Open(r) = slot {
                    open.insert(record.id.clone(), r.clone());
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
                        let slot = open.remove(&r.id).map_or(Slot::Elsewhere, Slot::Open);
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
        // Still open but no longer in an enabled table: the master's round
        // closes these through their records; until then they stay open
        // (a server round closes them).
        for (id, region) in open {
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
    fn open_region_here(&self, id: &str) -> Option<Region> {
        self.tables().iter().find_map(|t| {
            t.regions.values().find_map(|(r, s)| match s {
                Slot::Open(region) if r.id == id => Some(region.clone()),
                _ => None,
            })
        })
    }

    /// Opens region `id` as its owner, replaying `replay` (WAL runs of
    /// former owners) first. `last_owner` served it before: with peer reads
    /// on, blocks this server lacks are asked of it before the object store
    /// (the region's prefetch-on-open included). `reads_at`: a former owner
    /// still answering its reads, ended before the region takes a write.
    pub(crate) async fn open_assigned(
        &self,
        id: &str,
        replay: &[String],
        last_owner: Option<&str>,
        reads_at: Option<&shoal_cluster::assignment::MoveReads>,
    ) -> Result<(), String> {
        if self.open_region_here(id).is_some() || self.installing(id) {
            return Ok(());
        }
        if self.moving_here(id) {
            return Err(format!("region {id} is being split or closed here"));
        }
        let started = Instant::now();
        let found = match self.find_region(id) {
            Some(f) => Some(f),
            None => {
                // A table created since this server last read the catalog.
                let mut catalog = self.inner.catalog.lock().await;
                self.reload_catalog(&mut catalog)
                    .await
                    .map_err(|e| e.to_string())?;
                drop(catalog);
                self.find_region(id)
            }
        };
        let Some((table, record)) = found else {
            return Err(format!("region {id} is in no enabled table of the catalog"));
        };
        let mut foreign = Vec::new();
        for run in replay {
            let wal = self.foreign_wal(run).await?;
            foreign.extend(wal.entries(id, 0));
        }
        // A write logged again by an owner whose open then failed (a bulk
        // relog only partly written) can be there twice, in one run or two:
        // one sequence number is one write, replayed once.
        foreign.sort_by_key(|e| e.seq);
        foreign.dedup_by_key(|e| e.seq);
        let replayed = foreign.len();
        let wal_read_ms = started.elapsed().as_millis() as u64;
        let config = self.region_config(&table, &record);
        if let (Some(reads), Some(last)) = (&self.inner.peer_reads, last_owner) {
            reads.hint(&config.region_dir, last);
        }
        // Calls that reach this server for the region while it opens wait
        // for the open (as for a region being closed or split) instead of
        // bouncing back to the client as not served here.
        self.set_slot(id, Slot::Moving);
        let hint = self
            .inner
            .cluster
            .as_ref()
            .and_then(|c| c.handoffs.take_hint(id));
        // Owned only under the lease held as the open began: a server paused
        // mid-open past its lease (its regions given to others meanwhile)
        // neither fences the new owner nor serves the region when it wakes,
        // even after it rejoined with a new lease.
        let may_own = self.ownership_from_now();
        let region =
            match Region::open_guarded(config, self.region_env_for(id), foreign, hint, &may_own)
                .await
            {
                Ok(r) => r,
                Err(e) => {
                    self.set_slot(id, Slot::Elsewhere);
                    return Err(e.to_string());
                }
            };
        // The read point the region opened at: no write is taken before
        // the former owner's reads end, so its handed rows are as of this.
        let opened_at = region.read_point();
        // The former owner may still answer reads from its closed copy: no
        // write is taken here before it stopped (`move_reads.rs`).
        let mut handed = RowBundle::default();
        if let Some(reads) = reads_at {
            match self.end_reads_at(id, reads, started).await {
                Ok(rows) => handed = rows,
                Err(e) => {
                    self.give_up(id, &region);
                    return Err(format!("region {id}: {e}"));
                }
            }
        }
        if !self.set_slot(id, Slot::Open(region.clone())) {
            let _ = region.close().await;
            return Err(format!("region {id}'s table changed while it opened"));
        }
        // The former owner's hot rows, taken once the region serves: a
        // write since the open refuses its row (the row cache's rule).
        // As move work, as the former owner collected them: the region's
        // reads go on meanwhile, and come first for the CPU.
        if !handed.is_empty() {
            let (r, bytes) = (region.clone(), handed.len());
            let kept = self
                .spawn_move_work(move || r.take_handed_rows(&handed, opened_at))
                .await
                .map_err(|e| e.to_string())
                .and_then(|kept| kept.map_err(|e| e.to_string()))
                .unwrap_or_else(|e| {
                    tracing::warn!(region = %id, error = %e, "taking the rows handed over failed; none kept");
                    0
                });
            if let Some(c) = &self.inner.cluster {
                c.handed_rows
                    .fetch_add(kept as u64, std::sync::atomic::Ordering::Relaxed);
            }
            tracing::debug!(region = %id, bytes, kept, "rows handed over by the former owner");
        }
        // The lease may have been lost between the open's last check and the
        // slot: `fence_and_rejoin` clears the lease (a new generation) before
        // it gives up the open regions, so either it saw this slot open and
        // abandoned it, or this check sees the new generation.
        if !may_own() {
            self.give_up(id, &region);
            return Err(format!(
                "region {id}: this server lost its cluster lease while opening it; not served here"
            ));
        }
        let open_ms = started.elapsed().as_millis() as u64;
        if let Some(c) = &self.inner.cluster {
            c.departed.forget(id);
            if !replay.is_empty() {
                c.record_failover(id, replay.len(), open_ms);
            }
        }
        tracing::info!(region = id, table = %table.name, replay_runs = replay.len(), replayed, wal_read_ms, open_ms, "region opened as its owner");
        Ok(())
    }

    /// WAL run `run` of a dead former owner, read once for all the regions
    /// that replay it (kept 30 s: the run is final once its owner's lease
    /// lapsed — anything appended later was never acknowledged).
    async fn foreign_wal(&self, run: &str) -> Result<Arc<ForeignWal>, String> {
        let read = || async {
            ForeignWal::read(&self.inner.env.bucket, run)
                .await
                .map(Arc::new)
                .map_err(|e| format!("reading WAL run {run}: {e}"))
        };
        let Some(state) = &self.inner.cluster else {
            return read().await;
        };
        let mut cache = state.foreign_wals.lock().await;
        cache.retain(|_, (at, _)| at.elapsed() < std::time::Duration::from_secs(30));
        if let Some((_, wal)) = cache.get(run) {
            return Ok(wal.clone());
        }
        let wal = read().await?;
        cache.insert(run.to_owned(), (Instant::now(), wal.clone()));
        Ok(wal)
    }

    /// Flushes and closes region `id` (it moves to another server).
    /// `handoff`: the record names the next owner, so with
    /// `cluster.move_reads` on the region goes on answering reads until
    /// that owner ends them; `Ok(Some(bound))` then, the longest it does.
    pub(crate) async fn close_assigned(
        &self,
        id: &str,
        handoff: bool,
    ) -> Result<Option<std::time::Duration>, String> {
        let Some(region) = self.open_region_here(id) else {
            return Err(format!("region {id} is not open here"));
        };
        let started = Instant::now();
        let may_own = self.ownership_from_now();
        let bound = Some(self.move_reads_bound()).filter(|b| handoff && !b.is_zero());
        let closed = match bound {
            Some(_) => {
                self.set_slot(
                    id,
                    Slot::Closing {
                        region: region.clone(),
                        reads_until: None,
                    },
                );
                let closed = region.close_keeping_reads().await;
                if closed.is_ok() {
                    self.retire(&region);
                }
                closed
            }
            None => {
                self.set_slot(id, Slot::Moving);
                self.close_regions(vec![region.clone()]).await
            }
        };
        match closed {
            Ok(()) => {
                match bound {
                    Some(b) => self.keep_move_reads(id, region.clone(), b),
                    None => {
                        self.set_slot(id, Slot::Elsewhere);
                    }
                }
                if let Some(c) = &self.inner.cluster {
                    use std::sync::atomic::Ordering;
                    // Its blocks stay in L2 until evicted: reported to the
                    // master, which may give the region back here.
                    c.departed.remember(id, region.data_blocks());
                    c.moves_out.fetch_add(1, Ordering::Relaxed);
                    c.move_ms
                        .fetch_add(started.elapsed().as_millis() as u64, Ordering::Relaxed);
                }
                tracing::info!(
                    region = id,
                    close_ms = started.elapsed().as_millis() as u64,
                    reads_on = bound.is_some(),
                    "region closed for a move"
                );
                Ok(bound)
            }
            // Fenced by a newer owner, or the lease was lost meanwhile (the
            // region is not among those `abandon_all` gave up, being in
            // motion): never served here again.
            Err(e) if region.is_fenced() || !may_own() => {
                self.give_up(id, &region);
                Err(format!("{e}; given up here"))
            }
            Err(e) => {
                self.set_slot(id, Slot::Open(region));
                Err(e.to_string())
            }
        }
    }

    /// Region `id` (`region`, in motion here) is given up without
    /// flushing: this server may no longer own it.
    fn give_up(&self, id: &str, region: &Region) {
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

    /// True while region `id` is being split or closed here (a closed
    /// copy still answering reads is closed).
    fn moving_here(&self, id: &str) -> bool {
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
        if let Some(c) = &self.inner.cluster {
            ids.extend(
                c.installing
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .iter()
                    .cloned(),
            );
        }
        ids
    }

    /// True while a split here installs region `id`.
    fn installing(&self, id: &str) -> bool {
        self.inner.cluster.as_ref().is_some_and(|c| {
            c.installing
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(id)
        })
    }

    /// Marks (or unmarks) a split's children as being installed here.
    pub(crate) fn set_installing(&self, ids: &[String], on: bool) {
        if let Some(c) = &self.inner.cluster {
            let mut set = c.installing.lock().unwrap_or_else(|e| e.into_inner());
            for id in ids {
                if on {
                    set.insert(id.clone());
                } else {
                    set.remove(id);
                }
            }
        }
    }

    /// Cluster mode, on the owner of a region that split: has the master
    /// register the children (this server when it is master, else over
    /// gRPC), then reads the catalog that lists them.
    pub(crate) async fn register_split_with_master(
        &self,
        table: &str,
        parent: &str,
        children: &[RegionRecord],
    ) -> Result<Catalog, crate::error::ServiceError> {
        use crate::error::ServiceError;
        let Some(state) = &self.inner.cluster else {
            return Err(ServiceError::FailedPrecondition(
                "not in cluster mode".into(),
            ));
        };
        if state.is_master() {
            self.register_split(&state.name, table, parent, children.to_vec())
                .await?;
        } else {
            let master = state.master_addr().ok_or_else(|| {
                ServiceError::Unavailable("no master to register a split with".into())
            })?;
            let channel = crate::security::peer::connect(
                self.config(),
                &master,
                std::time::Duration::from_secs(30),
            )
            .await
            .map_err(|e| ServiceError::Unavailable(format!("the master: {e}")))?;
            let mut admin = shoal_proto::v1::admin_client::AdminClient::new(channel);
            let security = self.security().clone();
            admin
                .register_split(crate::security::peer::authorize(
                    &security,
                    tonic::Request::new(shoal_proto::v1::RegisterSplitRequest {
                        server: state.name.clone(),
                        table: table.to_owned(),
                        parent: parent.to_owned(),
                        children: children
                            .iter()
                            .map(|c| shoal_proto::v1::SplitChildSpec {
                                id: c.id.clone(),
                                dir: c.dir.clone(),
                                start_row: c.start_row.to_vec(),
                                end_row: c.end_row.to_vec(),
                            })
                            .collect(),
                    }),
                ))
                .await
                .map_err(|s| {
                    ServiceError::Unavailable(format!(
                        "the master refused or lost the split: {}",
                        s.message()
                    ))
                })?;
        }
        let mut catalog = self.inner.catalog.lock().await;
        self.reload_catalog(&mut catalog).await?;
        Ok(catalog.current().clone())
    }

    /// The region map's entries in cluster mode: every region of the table
    /// with its owner as the last round saw it (absent while unassigned).
    pub(crate) fn cluster_locations(&self, table: &LiveTable) -> Vec<crate::host::RegionLocation> {
        let Some(state) = &self.inner.cluster else {
            return Vec::new();
        };
        let d = state.directory();
        table
            .regions
            .values()
            .filter_map(|(record, slot)| {
                let (server, epoch, hbase) = match (slot, d.owners.get(&record.id)) {
                    // A closed copy answering reads until its next owner
                    // opens: reads may come here (writes wait for the owner).
                    (Slot::Open(_), o)
                    | (
                        Slot::Closing {
                            reads_until: Some(_),
                            ..
                        },
                        o,
                    ) => (
                        self.address().to_owned(),
                        o.map_or(0, |o| o.epoch),
                        String::new(),
                    ),
                    (_, Some(o)) if o.open && !o.addr.is_empty() => {
                        (o.addr.clone(), o.epoch, o.hbase.clone())
                    }
                    _ => return None,
                };
                Some(crate::host::RegionLocation {
                    start_row: record.start_row.clone(),
                    end_row: record.end_row.clone(),
                    region_id: record.id.clone(),
                    server,
                    epoch,
                    hbase,
                })
            })
            .collect()
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

/// The host as the assignment rounds drive it.
pub(crate) struct Regions<'a>(pub(crate) &'a Host);

impl RegionHost for Regions<'_> {
    async fn open(
        &self,
        region: &str,
        _epoch: u64,
        replay: &[String],
        last_owner: Option<&str>,
        reads_at: Option<&shoal_cluster::assignment::MoveReads>,
    ) -> Result<(), String> {
        self.0
            .open_assigned(region, replay, last_owner, reads_at)
            .await
    }

    async fn close(
        &self,
        region: &str,
        handoff: bool,
    ) -> Result<Option<std::time::Duration>, String> {
        self.0.close_assigned(region, handoff).await
    }

    fn end_reads(&self, region: &str) {
        if let Err(e) = self.0.end_closed_copy(region) {
            tracing::warn!(region, error = %e, "ending the reads of a region closed here failed");
        }
    }

    fn open_regions(&self) -> Vec<String> {
        self.0.open_region_ids()
    }

    fn warm_up(&self, region: &str, epoch: u64, owner: &str) -> bool {
        self.0.warm_up(region, epoch, owner)
    }
}
