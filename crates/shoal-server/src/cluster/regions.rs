//! The regions driver: the `RegionHost` the assignment rounds drive. It
//! opens a region as its new owner, closes one flushing for a move, and
//! leaves the lease's loss to the node (which has the host give every
//! region up without flushing).
//!
//! Opening an assigned region runs as named steps, in this order:
//! 1. **replay**: read what the dead former owners logged for the region
//!    ([`RegionsDriver::replay_entries`]);
//! 2. **warm**: point the cache's peer reads at the former owner
//!    ([`RegionsDriver::warm`]);
//! 3. **open**: fence the region's manifest with the next epoch and replay
//!    into it, under the lease held as the open began
//!    ([`RegionsDriver::open_fenced`]);
//! 4. **hand over**: end the former owner's reads before the region takes
//!    a write, collecting its cached rows ([`RegionsDriver::hand_over`]);
//! 5. **serve**: the region's slot opens, the handed rows are taken, and
//!    the lease is checked once more ([`RegionsDriver::serve`]).
//!
//! The driver calls the host's narrow API only (`host/slots.rs`,
//! `host/closed_copy.rs`, the environment a region opens in).

use super::ClusterState;
use super::peer_reads::PeerReads;
use crate::catalog::{RegionRecord, TableRecord};
use crate::host::{Host, Slot};
use shoal_cluster::assignment::MoveReads;
use shoal_cluster::rounds::{RegionHost, RegionHostError};
use shoal_storage::manifest::Manifest;
use shoal_storage::region::{Region, RegionConfig, RegionError, RowBundle};
use shoal_storage::wal::{ForeignWal, WalEntry};
use std::sync::Arc;
use std::time::Instant;

/// Opens and closes the regions the rounds assign to this server.
#[derive(Clone)]
pub(crate) struct RegionsDriver {
    pub(crate) host: Host,
    pub(crate) state: Arc<ClusterState>,
    /// The cache's peer tier (cluster mode with `cluster.peer_reads` and a
    /// cache), wired by the node.
    pub(crate) peer_reads: Option<Arc<PeerReads>>,
}

impl RegionsDriver {
    /// The driver of `host`'s regions for the cluster `state` describes.
    pub(crate) fn new(
        host: Host,
        state: Arc<ClusterState>,
        peer_reads: Option<Arc<PeerReads>>,
    ) -> RegionsDriver {
        RegionsDriver {
            host,
            state,
            peer_reads,
        }
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
        reads_at: Option<&MoveReads>,
    ) -> Result<(), RegionHostError> {
        let host = &self.host;
        if host.open_region_here(id).is_some() || host.installing(id) {
            return Ok(());
        }
        if host.moving_here(id) {
            return Err(RegionHostError::Busy {
                region: id.to_string(),
                reason: "being split or closed here".into(),
            });
        }
        let started = Instant::now();
        let (table, record) = self.assigned_region(id).await?;
        let entries = self
            .replay_entries(id, replay)
            .await
            .map_err(|reason| failed(id, reason))?;
        let replayed = entries.len();
        let wal_read_ms = started.elapsed().as_millis() as u64;
        let config = host.region_config(&table, &record);
        self.warm(&config, last_owner);
        // Calls that reach this server for the region while it opens wait
        // for the open (as for a region being closed or split) instead of
        // bouncing back to the client as not served here.
        host.set_slot(id, Slot::Moving);
        // The region's newest manifest, if a warm handoff read it lately.
        let hint = self.state.handoffs.take_hint(id);
        // Owned only under the lease held as the open began: a server paused
        // mid-open past its lease (its regions given to others meanwhile)
        // neither fences the new owner nor serves the region when it wakes,
        // even after it rejoined with a new lease.
        let may_own = host.ownership_from_now();
        let region = self
            .open_fenced(id, config, entries, hint, &may_own)
            .await?;
        let handed = self
            .hand_over(id, &region, reads_at, started)
            .await
            .map_err(|reason| failed(id, reason))?;
        self.serve(id, &region, handed, &may_own).await?;
        let open_ms = started.elapsed().as_millis() as u64;
        self.state.departed.forget(id);
        if !replay.is_empty() {
            self.state.record_failover(id, replay.len(), open_ms);
        }
        tracing::info!(region = id, table = %table.name, replay_runs = replay.len(), replayed, wal_read_ms, open_ms, "region opened as its owner");
        Ok(())
    }

    /// The table and region records of assigned region `id`, reading the
    /// catalog again if this server does not know it yet (a table created
    /// since it last read the catalog).
    async fn assigned_region(
        &self,
        id: &str,
    ) -> Result<(TableRecord, RegionRecord), RegionHostError> {
        let host = &self.host;
        let found = match host.find_region(id) {
            Some(f) => Some(f),
            None => {
                let mut catalog = host.lock_catalog().await;
                host.reload_catalog(&mut catalog)
                    .await
                    .map_err(|e| failed(id, format!("reading the catalog: {e}")))?;
                drop(catalog);
                host.find_region(id)
            }
        };
        found.ok_or_else(|| RegionHostError::Unknown {
            region: id.to_string(),
            reason: "it is in no enabled table of the catalog".into(),
        })
    }

    /// Replay, step 1 of an open: region `id`'s entries in the WAL runs of
    /// its dead former owners (`replay`), in sequence order. A write logged
    /// again by an owner whose open then failed (a bulk relog only partly
    /// written) can be there twice, in one run or two: one sequence number
    /// is one write, replayed once.
    async fn replay_entries(&self, id: &str, replay: &[String]) -> Result<Vec<WalEntry>, String> {
        let mut foreign = Vec::new();
        for run in replay {
            let wal = self.foreign_wal(run).await?;
            foreign.extend(wal.entries(id, 0));
        }
        foreign.sort_by_key(|e| e.seq);
        foreign.dedup_by_key(|e| e.seq);
        Ok(foreign)
    }

    /// WAL run `run` of a dead former owner, read once for all the regions
    /// that replay it (kept 30 s: the run is final once its owner's lease
    /// lapsed — anything appended later was never acknowledged).
    async fn foreign_wal(&self, run: &str) -> Result<Arc<ForeignWal>, String> {
        let read = || async {
            ForeignWal::read(self.host.bucket(), run)
                .await
                .map(Arc::new)
                .map_err(|e| format!("reading WAL run {run}: {e}"))
        };
        let mut cache = self.state.foreign_wals.lock().await;
        cache.retain(|_, (at, _)| at.elapsed() < std::time::Duration::from_secs(30));
        if let Some((_, wal)) = cache.get(run) {
            return Ok(wal.clone());
        }
        let wal = read().await?;
        cache.insert(run.to_owned(), (Instant::now(), wal.clone()));
        Ok(wal)
    }

    /// Warm, step 2 of an open: with peer reads on, blocks of the region
    /// (`config`) this server lacks are asked of `last_owner`, which served
    /// it before, before the object store — its prefetch-on-open included.
    fn warm(&self, config: &RegionConfig, last_owner: Option<&str>) {
        if let (Some(reads), Some(last)) = (&self.peer_reads, last_owner) {
            reads.hint(&config.region_dir, last);
        }
    }

    /// Open, step 3: fences region `id`'s manifest with the next epoch
    /// (from `hint`, the manifest a warm handoff read, if it did) and
    /// replays `entries` into it, logging them again in this server's WAL,
    /// all while `may_own` holds. On failure the region is served
    /// elsewhere.
    async fn open_fenced(
        &self,
        id: &str,
        config: RegionConfig,
        entries: Vec<WalEntry>,
        hint: Option<(Manifest, Instant)>,
        may_own: &(dyn Fn() -> bool + Sync),
    ) -> Result<Region, RegionHostError> {
        let env = self.host.region_env_for(id);
        match Region::open_guarded(config, env, entries, hint, may_own).await {
            Ok(r) => Ok(r),
            Err(e) => {
                self.host.set_slot(id, Slot::Elsewhere);
                Err(match e {
                    RegionError::Fenced { .. } => RegionHostError::GivenUp {
                        region: id.to_string(),
                        reason: e.to_string(),
                    },
                    e => failed(id, e.to_string()),
                })
            }
        }
    }

    /// Hand over, step 4: the former owner may still answer reads from its
    /// closed copy (`reads_at`, from a record read at `since`): no write is
    /// taken here before it stopped (`move_reads.rs`). Returns the rows it
    /// handed over, as of the read point `region` opened at (none without
    /// a former owner reading). A former owner that refuses (it serves the
    /// region as open) fails the open, and the region is given up.
    async fn hand_over(
        &self,
        id: &str,
        region: &Region,
        reads_at: Option<&MoveReads>,
        since: Instant,
    ) -> Result<(RowBundle, u64), String> {
        // The read point the region opened at: no write is taken before
        // the former owner's reads end, so its handed rows are as of this.
        let opened_at = region.read_point();
        let Some(reads) = reads_at else {
            return Ok((RowBundle::default(), opened_at));
        };
        match self.end_reads_at(id, reads, since).await {
            Ok(rows) => Ok((rows, opened_at)),
            Err(e) => {
                self.host.give_up(id, region);
                Err(format!("region {id}: {e}"))
            }
        }
    }

    /// Serve, step 5: region `id` opens for calls here, then takes the rows
    /// `handed` over (read at the read point it opened at). The lease may
    /// have been lost between the open's last check and the slot: the
    /// region is given up then.
    async fn serve(
        &self,
        id: &str,
        region: &Region,
        (handed, opened_at): (RowBundle, u64),
        may_own: &(dyn Fn() -> bool + Sync),
    ) -> Result<(), RegionHostError> {
        if !self.host.set_slot(id, Slot::Open(region.clone())) {
            let _ = region.close().await;
            return Err(RegionHostError::Busy {
                region: id.to_string(),
                reason: "its table changed while it opened".into(),
            });
        }
        self.take_handed_rows(id, region, handed, opened_at).await;
        // `fence_and_rejoin` clears the lease (a new generation) before it
        // gives up the open regions, so either it saw this slot open and
        // abandoned it, or this check sees the new generation.
        if !may_own() {
            self.host.give_up(id, region);
            return Err(RegionHostError::GivenUp {
                region: id.to_string(),
                reason: "this server lost its cluster lease while opening it".into(),
            });
        }
        Ok(())
    }

    /// The former owner's hot rows, taken once the region serves: a write
    /// since the open refuses its row (the row cache's rule). As move work,
    /// as the former owner collected them: the region's reads go on
    /// meanwhile, and come first for the CPU.
    async fn take_handed_rows(&self, id: &str, region: &Region, handed: RowBundle, opened_at: u64) {
        if handed.is_empty() {
            return;
        }
        let (r, bytes) = (region.clone(), handed.len());
        let kept = self
            .host
            .spawn_move_work(move || r.take_handed_rows(&handed, opened_at))
            .await
            .map_err(|e| e.to_string())
            .and_then(|kept| kept.map_err(|e| e.to_string()))
            .unwrap_or_else(|e| {
                tracing::warn!(region = %id, error = %e, "taking the rows handed over failed; none kept");
                0
            });
        self.state
            .handed_rows
            .fetch_add(kept as u64, std::sync::atomic::Ordering::Relaxed);
        tracing::debug!(region = %id, bytes, kept, "rows handed over by the former owner");
    }

    /// Flushes and closes region `id` (it moves to another server).
    /// `handoff`: the record names the next owner, so with
    /// `cluster.move_reads` on the region goes on answering reads until
    /// that owner ends them; `Ok(Some(bound))` then, the longest it does.
    pub(crate) async fn close_assigned(
        &self,
        id: &str,
        handoff: bool,
    ) -> Result<Option<std::time::Duration>, RegionHostError> {
        let host = &self.host;
        let Some(region) = host.open_region_here(id) else {
            return Err(RegionHostError::NotOpen {
                region: id.to_string(),
            });
        };
        let started = Instant::now();
        let may_own = host.ownership_from_now();
        let bound = Some(self.move_reads_bound()).filter(|b| handoff && !b.is_zero());
        let closed = match bound {
            Some(_) => {
                host.set_slot(
                    id,
                    Slot::Closing {
                        region: region.clone(),
                        reads_until: None,
                    },
                );
                let closed = region.close_keeping_reads().await;
                if closed.is_ok() {
                    host.retire(&region);
                }
                closed
            }
            None => {
                host.set_slot(id, Slot::Moving);
                host.close_regions(vec![region.clone()]).await
            }
        };
        match closed {
            Ok(()) => {
                match bound {
                    Some(b) => host.keep_move_reads(id, region.clone(), b),
                    None => {
                        host.set_slot(id, Slot::Elsewhere);
                    }
                }
                use std::sync::atomic::Ordering;
                // Its blocks stay in L2 until evicted: reported to the
                // master, which may give the region back here.
                self.state.departed.remember(id, region.data_blocks());
                self.state.moves_out.fetch_add(1, Ordering::Relaxed);
                self.state
                    .move_ms
                    .fetch_add(started.elapsed().as_millis() as u64, Ordering::Relaxed);
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
                host.give_up(id, &region);
                Err(RegionHostError::GivenUp {
                    region: id.to_string(),
                    reason: e.to_string(),
                })
            }
            Err(e) => {
                host.set_slot(id, Slot::Open(region));
                Err(failed(id, e.to_string()))
            }
        }
    }
}

impl RegionHost for RegionsDriver {
    async fn open(
        &self,
        region: &str,
        _epoch: u64,
        replay: &[String],
        last_owner: Option<&str>,
        reads_at: Option<&MoveReads>,
    ) -> Result<(), RegionHostError> {
        self.open_assigned(region, replay, last_owner, reads_at)
            .await
    }

    async fn close(
        &self,
        region: &str,
        handoff: bool,
    ) -> Result<Option<std::time::Duration>, RegionHostError> {
        self.close_assigned(region, handoff).await
    }

    fn end_reads(&self, region: &str) {
        if let Err(e) = self.host.end_closed_copy(region) {
            tracing::warn!(region, error = %e, "ending the reads of a region closed here failed");
        }
    }

    fn open_regions(&self) -> Vec<String> {
        self.host.open_region_ids()
    }

    fn warm_up(&self, region: &str, epoch: u64, owner: &str) -> bool {
        RegionsDriver::warm_up(self, region, epoch, owner)
    }
}

/// A failure reading or writing region `id`'s data.
fn failed(id: &str, reason: String) -> RegionHostError {
    RegionHostError::Failed {
        region: id.to_string(),
        reason,
    }
}
