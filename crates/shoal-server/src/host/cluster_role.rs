//! The other half of the seam: what the host, and the front doors through
//! it, ask of the cluster this server is a member of — who is master,
//! table changes that must settle across servers, moves, the balancer, a
//! split's registration, and the cluster as the directory shows it. The
//! host holds it as `Option<Arc<dyn ClusterRole>>` (`None` on a single
//! server) and names no cluster type; the cluster (`cluster/`) implements
//! it.
//!
//! Each `Host` method here is the single-server answer, or a call through
//! the seam in cluster mode. Nothing here decides anything about the
//! cluster: the decisions are the cluster's (`cluster/`, `shoal-cluster`).

use super::{Host, LiveTable, NativeCluster, RegionLocation};
use crate::catalog::{Catalog, RegionRecord, TableRecord};
use crate::error::ServiceError;
use crate::metrics::status::ClusterView;
use futures::future::BoxFuture;
use std::sync::atomic::Ordering;

/// This server as a member of a cluster, as the host asks it.
///
/// Methods that act on the host take it as an argument: the cluster holds
/// no reference to the host that holds it.
pub(crate) trait ClusterRole: Send + Sync {
    /// Err(NotMaster, naming the master if known) unless this server is
    /// master now.
    fn require_master(&self) -> Result<(), ServiceError>;

    /// The master committed catalog `version`: publish it at once, so that
    /// a server told to reopen a region afterwards reads it first (a
    /// failure is logged; the master's next round publishes it).
    fn publish_catalog(&self, version: u64) -> BoxFuture<'_, ()>;

    /// On a server that is not master: read the catalog again if the master
    /// published a newer version than the one `host` serves (bounded;
    /// concurrent callers share one check).
    fn catch_up_catalog<'a>(&'a self, host: &'a Host) -> BoxFuture<'a, ()>;

    /// Waits until every region of `record` is served (`open`) or none is
    /// (`!open`), as the cluster's records show; false on the deadline.
    fn settle<'a>(&'a self, record: &'a TableRecord, open: bool) -> BoxFuture<'a, bool>;

    /// Has every serving region of `record` reopened where it is (with the
    /// catalog as it is now) and waits, bounded, for all of them.
    fn reopen<'a>(&'a self, record: &'a TableRecord) -> BoxFuture<'a, Result<(), ServiceError>>;

    /// Moves `region` to server `to` (empty: the least loaded other server)
    /// and waits, bounded, until it serves there.
    fn move_region<'a>(
        &'a self,
        region: &'a str,
        to: &'a str,
    ) -> BoxFuture<'a, Result<String, ServiceError>>;

    /// Turns the balancer on or off; returns its former state.
    fn balance_switch(&self, on: bool) -> BoxFuture<'_, Result<bool, ServiceError>>;

    /// On the master: registers the split of `parent` (served by `server`)
    /// into `children`, committing the catalog through `host`.
    fn register_split<'a>(
        &'a self,
        host: &'a Host,
        server: &'a str,
        table: &'a str,
        parent: &'a str,
        children: Vec<RegionRecord>,
    ) -> BoxFuture<'a, Result<(), ServiceError>>;

    /// On the owner of a region that split: has the master register the
    /// children, then has `host` read the catalog that lists them.
    fn register_split_with_master<'a>(
        &'a self,
        host: &'a Host,
        table: &'a str,
        parent: &'a str,
        children: &'a [RegionRecord],
    ) -> BoxFuture<'a, Result<Catalog, ServiceError>>;

    /// On the master: the cut of snapshot `id` of `table` (enabled) across
    /// the servers that own its regions: every owner pauses its regions,
    /// then, once all have, captures them and lets go (`snapshot_pause.rs`
    /// is each server's part, this server's through `host`).
    fn snapshot_cut<'a>(
        &'a self,
        host: &'a Host,
        table: &'a LiveTable,
        id: &'a str,
    ) -> BoxFuture<'a, Result<super::SnapshotCutPart, ServiceError>>;

    /// Every live server with the regions it serves (as the last round saw
    /// the records).
    fn servers(&self) -> Vec<shoal_proto::v1::ClusterServer>;

    /// The cluster as HBase's client is told it.
    fn native_cluster(&self) -> NativeCluster;

    /// The native-RPC address of the live server whose gRPC address is
    /// `grpc` (None if it is not a live member or serves no native RPC).
    fn native_address_of(&self, grpc: &str) -> Option<String>;

    /// The region map's entries of `table`: every region with its owner as
    /// the last round saw it (absent while unassigned); `here` is this
    /// server's gRPC address, for the regions it answers itself.
    fn locations(&self, here: &str, table: &LiveTable) -> Vec<RegionLocation>;

    /// Counts a read answered by a region being closed here for a move.
    fn count_move_read(&self);

    /// The cluster as this server sees it, for the status page and
    /// `/metrics`.
    fn view(&self) -> ClusterView;
}

impl Host {
    /// Err(NotMaster) in cluster mode unless this server is master.
    pub(crate) fn require_master(&self) -> Result<(), ServiceError> {
        match &self.inner.cluster {
            Some(c) => c.require_master(),
            None => Ok(()),
        }
    }

    /// Refuses a table change cluster mode does not make yet.
    pub(crate) fn not_in_cluster_mode(&self, what: &str) -> Result<(), ServiceError> {
        if self.inner.cluster.is_some() {
            return Err(ServiceError::FailedPrecondition(format!(
                "{what} is not available in cluster mode yet (see docs/cluster.md)"
            )));
        }
        Ok(())
    }

    /// Cluster mode, on a server that is not master: catches up with the
    /// catalog version the master published, so that a read that follows a
    /// table change made through another server sees it (see
    /// [`ClusterRole::catch_up_catalog`]).
    pub(crate) async fn catch_up_catalog(&self) {
        if let Some(c) = &self.inner.cluster {
            c.catch_up_catalog(self).await;
        }
    }

    /// Cluster mode: waits until every region of `record` is served
    /// (`open`) or none is (`!open`); false on the deadline. True at once
    /// on a single server.
    pub(crate) async fn settle(&self, record: &TableRecord, open: bool) -> bool {
        match &self.inner.cluster {
            Some(c) => c.settle(record, open).await,
            None => true,
        }
    }

    /// Cluster mode: every serving region of `record` is reopened where it
    /// is (its owner flushes and closes it, the master gives it back, it
    /// opens with the catalog as it is now); waits (bounded) for all.
    pub(crate) async fn reopen_in_cluster(&self, record: &TableRecord) -> Result<(), ServiceError> {
        match &self.inner.cluster {
            Some(c) => c.reopen(record).await,
            None => Ok(()),
        }
    }

    /// Cluster mode: moves `region` to server `to` (empty: the least loaded
    /// other server) and waits (bounded) until it serves there.
    pub async fn move_region(&self, region: &str, to: &str) -> Result<String, ServiceError> {
        match &self.inner.cluster {
            Some(c) => c.move_region(region, to).await,
            None => Err(ServiceError::FailedPrecondition(
                "moving a region needs cluster mode: a single server serves every region".into(),
            )),
        }
    }

    /// Turns the balancer on or off; returns the former state. Cluster
    /// mode: on the master, in etcd. Single node: remembered here (one
    /// server has nothing to balance).
    pub async fn balance_switch(&self, on: bool) -> Result<bool, ServiceError> {
        match &self.inner.cluster {
            Some(c) => c.balance_switch(on).await,
            None => Ok(self.inner.balancer_on.swap(on, Ordering::Relaxed)),
        }
    }

    /// A balance asked for now: whether the balancer ran. Single node:
    /// while on, it runs and finds nothing to move. Cluster mode: the
    /// master balances in its rounds while the switch is on; the answer is
    /// the switch (no extra round is started).
    pub fn balance(&self) -> bool {
        self.balancer_on()
    }

    /// The balancer's switch: cluster mode, as this server last read it
    /// (every round); single node, as last turned (on at start).
    pub fn balancer_on(&self) -> bool {
        match &self.inner.cluster {
            Some(c) => c.view().balancer_on,
            None => self.inner.balancer_on.load(Ordering::Relaxed),
        }
    }

    /// Cluster mode, on the master: registers the split of `parent` (served
    /// by `server`) into `children`. The children's records (open on the
    /// same server, logging to the same WAL run) are written first, then
    /// the catalog, then the parent's record goes: a master that dies
    /// midway leaves either the parent served (children records of regions
    /// the catalog does not have are retired) or both children.
    pub async fn register_split(
        &self,
        server: &str,
        table: &str,
        parent: &str,
        children: Vec<RegionRecord>,
    ) -> Result<(), ServiceError> {
        match &self.inner.cluster {
            Some(c) => {
                c.register_split(self, server, table, parent, children)
                    .await
            }
            None => Err(ServiceError::FailedPrecondition(
                "registering a split needs cluster mode".into(),
            )),
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
    ) -> Result<Catalog, ServiceError> {
        match &self.inner.cluster {
            Some(c) => {
                c.register_split_with_master(self, table, parent, children)
                    .await
            }
            None => Err(ServiceError::FailedPrecondition(
                "not in cluster mode".into(),
            )),
        }
    }

    /// Cluster mode: every live server with the regions it serves (as the
    /// last round saw the records); empty on a single node.
    pub fn cluster_servers(&self) -> Vec<shoal_proto::v1::ClusterServer> {
        self.inner
            .cluster
            .as_ref()
            .map(|c| c.servers())
            .unwrap_or_default()
    }
}
