//! Table changes in cluster mode, and the admin calls that act on the
//! cluster (moves, the balancer, a split's registration). The master makes
//! table changes: the host reloads the catalog (a former master may have
//! committed since), commits the change with create-if-absent (two masters
//! cannot both commit a version) and serves it (`host/catalog_sync.rs`);
//! here the version is published in etcd, and the master serves nothing
//! itself: its round assigns the new regions, or closes those no longer
//! needed, and the call waits (bounded) until the cluster shows the result.
//! Other servers answer NotMaster with the master's address, and the client
//! sends the call there.
//!
//! These are [`ClusterState`]'s side of the host's seam
//! (`crate::host::ClusterRole`, implemented in `seam.rs`).

use super::ClusterState;
use crate::catalog::{Catalog, RegionRecord, TableRecord};
use crate::error::ServiceError;
use crate::host::Host;
use std::time::{Duration, Instant};

/// Longest a table change waits for its regions to open or close.
const SETTLE_DEADLINE: Duration = Duration::from_secs(30);

impl ClusterState {
    /// Err(NotMaster) unless this server is master.
    pub(crate) fn require_master(&self) -> Result<(), ServiceError> {
        if self.is_master() {
            Ok(())
        } else {
            Err(ServiceError::NotMaster(self.master_addr()))
        }
    }

    /// The master committed catalog `version`: published at once (not at
    /// the next round), so a server told to reopen a region afterwards
    /// reads this catalog first.
    pub(crate) async fn publish_catalog(&self, version: u64) {
        if let Some((etcd, prefix)) = self.etcd.get() {
            let key = format!("{prefix}/catalog");
            if let Err(e) = etcd
                .put(key.as_bytes(), version.to_string().as_bytes(), 0)
                .await
            {
                tracing::warn!(error = %e, "publishing the catalog version failed; the next round does");
            }
        }
    }

    /// Cluster mode, on a server that is not master: reads the catalog
    /// version the master published in etcd and, if it is newer than the
    /// one served here, the catalog, so that a read that follows a table
    /// change made through another server sees it (the server's round
    /// would read it only at its next turn). Concurrent callers share
    /// checks: each waits for one that began after it asked. Bounded
    /// (500 ms); after a failure (etcd unreachable) reads skip the check
    /// for 2 s and answer from the catalog served here.
    pub(crate) async fn catch_up_catalog(&self, host: &Host) {
        if self.is_master() {
            return;
        }
        let Some((etcd, prefix)) = self.etcd.get() else {
            return;
        };
        use std::sync::atomic::Ordering;
        let wanted = self.catalog_checks_begun.load(Ordering::SeqCst) + 1;
        let mut checks = self.catalog_checks.lock().await;
        let (done, failed_at) = *checks;
        if done >= wanted || failed_at.is_some_and(|t| t.elapsed() < Duration::from_secs(2)) {
            return;
        }
        let this = self.catalog_checks_begun.fetch_add(1, Ordering::SeqCst) + 1;
        let key = format!("{prefix}/catalog");
        let check = async {
            let published = match etcd.get(key.as_bytes()).await {
                Ok(Some(kv)) => String::from_utf8_lossy(&kv.value)
                    .parse::<u64>()
                    .unwrap_or(0),
                Ok(None) => return true,
                Err(_) => return false,
            };
            let mut catalog = host.lock_catalog().await;
            if published > catalog.version()
                && let Err(e) = host.reload_catalog(&mut catalog).await
            {
                tracing::warn!(error = %e, "reading the catalog failed; the next round retries");
                return false;
            }
            true
        };
        let ok = tokio::time::timeout(Duration::from_millis(500), check)
            .await
            .unwrap_or(false);
        if !ok {
            tracing::debug!("catching up with the published catalog failed; reads skip it for 2 s");
        }
        *checks = (this, (!ok).then(Instant::now));
    }

    /// Cluster mode: every serving region of `record` is reopened where it
    /// is (its owner flushes and closes it, the master gives it back, it
    /// opens with the catalog as it is now); waits (bounded) for all.
    pub(crate) async fn reopen(&self, record: &TableRecord) -> Result<(), ServiceError> {
        let Some((etcd, prefix)) = self.etcd.get() else {
            return Err(ServiceError::Unavailable(
                "not connected to etcd yet".into(),
            ));
        };
        let unavailable = |e: shoal_cluster::EtcdError| ServiceError::Unavailable(e.to_string());
        let mut before = std::collections::HashMap::new();
        for r in &record.regions {
            let Some((a, _)) = shoal_cluster::assignment::read(etcd, prefix, &r.id)
                .await
                .map_err(unavailable)?
            else {
                continue;
            };
            let Some(owner) = a.owner.clone() else {
                continue;
            };
            match shoal_cluster::assignment::request_reopen(etcd, prefix, &r.id, &owner)
                .await
                .map_err(unavailable)?
            {
                Ok(()) => {
                    before.insert(r.id.clone(), a.epoch);
                }
                Err(reason) => {
                    tracing::warn!(region = %r.id, %reason, "region not reopened; it opens with the new schema when it next moves")
                }
            }
        }
        let start = Instant::now();
        while start.elapsed() < SETTLE_DEADLINE {
            let d = self.directory();
            if before
                .iter()
                .all(|(id, epoch)| d.owners.get(id).is_some_and(|o| o.open && o.epoch > *epoch))
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tracing::warn!(table = %record.name, "regions did not all reopen in time; they go on reopening");
        Ok(())
    }

    /// Waits until every region of `table` is served (`open`) or none is
    /// (`!open`), as the cluster's records show; false on the deadline.
    pub(crate) async fn settle(&self, record: &TableRecord, open: bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < SETTLE_DEADLINE {
            let d = self.directory();
            let done = record.regions.iter().all(|r| {
                let served = d.owners.get(&r.id).is_some_and(|o| o.open);
                served == open
            });
            if done {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tracing::warn!(table = %record.name, open, "regions did not settle in time; the cluster goes on with it");
        false
    }

    /// Cluster mode: moves `region` to server `to` (empty: the least loaded
    /// other server) and waits (bounded) until it serves there.
    pub(crate) async fn move_region(&self, region: &str, to: &str) -> Result<String, ServiceError> {
        self.require_master()?;
        let Some((etcd, prefix)) = self.etcd.get() else {
            return Err(ServiceError::Unavailable(
                "not connected to etcd yet".into(),
            ));
        };
        let d = self.directory();
        let Some(owner) = d.owners.get(region) else {
            return Err(ServiceError::InvalidArgument(format!(
                "no region {region:?} is assigned (see status 'detailed')"
            )));
        };
        let target = if to.is_empty() {
            d.servers
                .iter()
                .filter(|s| s.name != owner.name)
                .min_by_key(|s| (s.regions, s.name.clone()))
                .map(|s| s.name.clone())
                .ok_or_else(|| {
                    ServiceError::FailedPrecondition("no other server to move it to".into())
                })?
        } else {
            d.servers
                .iter()
                .find(|s| s.name == to || s.addr == to)
                .map(|s| s.name.clone())
                .ok_or_else(|| {
                    ServiceError::InvalidArgument(format!("no live server named {to:?}"))
                })?
        };
        let unavailable = |e: shoal_cluster::EtcdError| ServiceError::Unavailable(e.to_string());
        shoal_cluster::assignment::request_move(etcd, prefix, region, &target)
            .await
            .map_err(unavailable)?
            .map_err(ServiceError::FailedPrecondition)?;
        let start = Instant::now();
        while start.elapsed() < SETTLE_DEADLINE {
            if self
                .owner(region)
                .is_some_and(|o| o.name == target && o.open)
            {
                return Ok(format!("region {region} moved to {target}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(format!(
            "region {region} is moving to {target} (not serving there yet)"
        ))
    }

    /// Cluster mode: turns the balancer on or off; returns the former state.
    pub(crate) async fn balance_switch(&self, on: bool) -> Result<bool, ServiceError> {
        self.require_master()?;
        let Some((etcd, prefix)) = self.etcd.get() else {
            return Err(ServiceError::Unavailable(
                "not connected to etcd yet".into(),
            ));
        };
        let key = format!("{prefix}/balancer");
        let unavailable = |e: shoal_cluster::EtcdError| ServiceError::Unavailable(e.to_string());
        let previous = etcd
            .get(key.as_bytes())
            .await
            .map_err(unavailable)?
            .is_none_or(|kv| kv.value != b"off");
        etcd.put(key.as_bytes(), if on { b"on" } else { b"off" }, 0)
            .await
            .map_err(unavailable)?;
        self.balancer_on
            .store(on, std::sync::atomic::Ordering::Relaxed);
        Ok(previous)
    }

    /// Cluster mode, on the master: registers the split of `parent` (served
    /// by `server`) into `children`. The children's records (open on the
    /// same server, logging to the same WAL run) are written first, then
    /// the catalog, then the parent's record goes: a master that dies
    /// midway leaves either the parent served (children records of regions
    /// the catalog does not have are retired) or both children.
    pub(crate) async fn register_split(
        &self,
        host: &Host,
        server: &str,
        table: &str,
        parent: &str,
        children: Vec<RegionRecord>,
    ) -> Result<(), ServiceError> {
        self.require_master()?;
        let Some((etcd, prefix)) = self.etcd.get() else {
            return Err(ServiceError::Unavailable(
                "not connected to etcd yet".into(),
            ));
        };
        let unavailable = |e: shoal_cluster::EtcdError| ServiceError::Unavailable(e.to_string());
        use shoal_cluster::assignment::{self, Assignment, RegionState};
        let Some((record, revision)) = assignment::read(etcd, prefix, parent)
            .await
            .map_err(unavailable)?
        else {
            return Err(ServiceError::FailedPrecondition(format!(
                "region {parent} has no assignment"
            )));
        };
        if record.owner.as_deref() != Some(server) || record.state != RegionState::Open {
            return Err(ServiceError::FailedPrecondition(format!(
                "region {parent} is not served by {server} ({:?} by {:?})",
                record.state, record.owner
            )));
        }
        if children.len() != 2 {
            return Err(ServiceError::InvalidArgument(
                "a split has two children".into(),
            ));
        }
        let _exclusive = self.master_work.lock().await;
        for c in &children {
            let child = Assignment {
                v: 1,
                region: c.id.clone(),
                owner: Some(server.to_owned()),
                epoch: record.epoch + 1,
                state: RegionState::Open,
                replay: Vec::new(),
                owner_wal: record.owner_wal.clone(),
                to: None,
                last_owner: None,
                left_at_ms: None,
                reads_at: None,
            };
            if !assignment::write(etcd, prefix, &child, 0)
                .await
                .map_err(unavailable)?
            {
                return Err(ServiceError::FailedPrecondition(format!(
                    "region {} already has an assignment",
                    c.id
                )));
            }
        }
        let parent_id = parent.to_owned();
        host.commit_as_master(|next| {
            let t = next
                .table_mut(table)
                .ok_or_else(|| ServiceError::NoSuchTable(table.to_string()))?;
            let at = t
                .regions
                .iter()
                .position(|r| r.id == parent_id)
                .ok_or_else(|| {
                    ServiceError::FailedPrecondition(format!(
                        "region {parent_id} is not in the catalog"
                    ))
                })?;
            let parent_record = t.regions[at].clone();
            t.regions.splice(at..=at, children.iter().cloned());
            t.split_parents.push(crate::catalog::SplitParentRecord {
                region: parent_record,
                children_dirs: children.iter().map(|c| c.dir.clone()).collect(),
            });
            Ok(())
        })
        .await?;
        // The catalog lists the children: the split happened. A failure
        // from here on leaves the parent's record, which the master retires
        // (its region is no longer in the catalog).
        if let Err(e) = assignment::delete(etcd, prefix, parent, revision).await {
            tracing::warn!(region = parent, error = %e, "deleting a split parent's record failed; the master retires it");
        }
        tracing::info!(table, parent, server, "split registered");
        Ok(())
    }

    /// On the owner of a region that split: has the master register the
    /// children (this server when it is master, else over gRPC), then has
    /// `host` read the catalog that lists them.
    pub(crate) async fn register_split_with_master(
        &self,
        host: &Host,
        table: &str,
        parent: &str,
        children: &[RegionRecord],
    ) -> Result<Catalog, ServiceError> {
        if self.is_master() {
            self.register_split(host, &self.name, table, parent, children.to_vec())
                .await?;
        } else {
            let master = self.master_addr().ok_or_else(|| {
                ServiceError::Unavailable("no master to register a split with".into())
            })?;
            let channel = crate::security::peer::connect(
                host.config(),
                &master,
                std::time::Duration::from_secs(30),
            )
            .await
            .map_err(|e| ServiceError::Unavailable(format!("the master: {e}")))?;
            let mut admin = shoal_proto::v1::admin_client::AdminClient::new(channel);
            let security = host.security().clone();
            admin
                .register_split(crate::security::peer::authorize(
                    &security,
                    tonic::Request::new(shoal_proto::v1::RegisterSplitRequest {
                        server: self.name.clone(),
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
        let mut catalog = host.lock_catalog().await;
        host.reload_catalog(&mut catalog).await?;
        Ok(catalog.current().clone())
    }
}
