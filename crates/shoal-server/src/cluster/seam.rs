//! How the cluster implements the host's seam: [`ClusterState`] is the
//! lease-backed [`RegionOwnership`] (a term is one etcd lease, held by this
//! server's own clock; docs/cluster.md, rule 3) and this server's
//! [`ClusterRole`]. Each method is a call into `state.rs` (the lease),
//! `admin.rs` (table changes, moves, splits) or `views.rs` (the directory).

use super::ClusterState;
use crate::catalog::{Catalog, RegionRecord, TableRecord};
use crate::error::ServiceError;
use crate::host::{ClusterRole, Host, LiveTable, NativeCluster, RegionLocation, RegionOwnership};
use crate::metrics::status::ClusterView;
use futures::future::BoxFuture;

impl RegionOwnership for ClusterState {
    fn term(&self) -> Option<u64> {
        self.lease_token()
    }

    fn holds(&self, term: u64) -> bool {
        ClusterState::holds(self, term)
    }

    fn held(&self) -> bool {
        self.lease_held()
    }

    fn owner_addr(&self, region: &str) -> Option<String> {
        self.owner(region).map(|o| o.addr)
    }
}

impl ClusterRole for ClusterState {
    fn require_master(&self) -> Result<(), ServiceError> {
        ClusterState::require_master(self)
    }

    fn publish_catalog(&self, version: u64) -> BoxFuture<'_, ()> {
        Box::pin(ClusterState::publish_catalog(self, version))
    }

    fn catch_up_catalog<'a>(&'a self, host: &'a Host) -> BoxFuture<'a, ()> {
        Box::pin(ClusterState::catch_up_catalog(self, host))
    }

    fn settle<'a>(&'a self, record: &'a TableRecord, open: bool) -> BoxFuture<'a, bool> {
        Box::pin(ClusterState::settle(self, record, open))
    }

    fn reopen<'a>(&'a self, record: &'a TableRecord) -> BoxFuture<'a, Result<(), ServiceError>> {
        Box::pin(ClusterState::reopen(self, record))
    }

    fn move_region<'a>(
        &'a self,
        region: &'a str,
        to: &'a str,
    ) -> BoxFuture<'a, Result<String, ServiceError>> {
        Box::pin(ClusterState::move_region(self, region, to))
    }

    fn balance_switch(&self, on: bool) -> BoxFuture<'_, Result<bool, ServiceError>> {
        Box::pin(ClusterState::balance_switch(self, on))
    }

    fn register_split<'a>(
        &'a self,
        host: &'a Host,
        server: &'a str,
        table: &'a str,
        parent: &'a str,
        children: Vec<RegionRecord>,
    ) -> BoxFuture<'a, Result<(), ServiceError>> {
        Box::pin(ClusterState::register_split(
            self, host, server, table, parent, children,
        ))
    }

    fn register_split_with_master<'a>(
        &'a self,
        host: &'a Host,
        table: &'a str,
        parent: &'a str,
        children: &'a [RegionRecord],
    ) -> BoxFuture<'a, Result<Catalog, ServiceError>> {
        Box::pin(ClusterState::register_split_with_master(
            self, host, table, parent, children,
        ))
    }

    fn snapshot_cut<'a>(
        &'a self,
        host: &'a Host,
        table: &'a LiveTable,
        id: &'a str,
    ) -> BoxFuture<'a, Result<crate::host::SnapshotCutPart, ServiceError>> {
        Box::pin(ClusterState::snapshot_cut(self, host, table, id))
    }

    fn servers(&self) -> Vec<shoal_proto::v1::ClusterServer> {
        ClusterState::servers(self)
    }

    fn native_cluster(&self) -> NativeCluster {
        ClusterState::native_cluster(self)
    }

    fn native_address_of(&self, grpc: &str) -> Option<String> {
        ClusterState::native_address_of(self, grpc)
    }

    fn locations(&self, here: &str, table: &LiveTable) -> Vec<RegionLocation> {
        ClusterState::locations(self, here, table)
    }

    fn count_move_read(&self) {
        self.move_reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn view(&self) -> ClusterView {
        ClusterState::view(self)
    }
}
