//! Where a table's regions are served: the region map clients cache to send
//! each row's calls to its server. On a single node every region is here.

use super::{Host, Slot};
use crate::error::ServiceError;
use bytes::Bytes;

/// One region's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionLocation {
    /// First row (inclusive); empty = unbounded.
    pub start_row: Bytes,
    /// End row (exclusive); empty = unbounded.
    pub end_row: Bytes,
    /// The region id.
    pub region_id: String,
    /// The gRPC address of the server serving it.
    pub server: String,
    /// The assignment epoch (0 on a single node).
    pub epoch: u64,
    /// The native-RPC address of the server serving it ("": this server,
    /// or one that serves no native RPC).
    pub hbase: String,
}

/// Cluster mode: the servers HBase's Java client may use, by their
/// native-RPC addresses, as of this server's last round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeCluster {
    /// The master's (None while no master is known, or it serves no
    /// native RPC).
    pub master: Option<String>,
    /// Every live server's that serves one, in the order of their names.
    pub servers: Vec<String>,
    /// True if this server is the master.
    pub is_master: bool,
    /// True while this server holds its lease (its directory is current).
    pub lease_held: bool,
}

impl Host {
    /// Records the gRPC address clients reach this server at.
    pub fn set_address(&self, address: String) {
        let _ = self.inner.address.set(address);
    }

    /// The gRPC address clients reach this server at ("" before it listens).
    pub fn address(&self) -> &str {
        self.inner.address.get().map_or("", String::as_str)
    }

    /// Cluster mode: the cluster as HBase's client is told it (None on a
    /// single node).
    pub fn native_cluster(&self) -> Option<NativeCluster> {
        let state = self.inner.cluster.as_ref()?;
        let d = state.directory();
        let master_name = d.master.as_ref().map(|(name, _)| name.clone());
        let mut servers: Vec<(String, String)> = d
            .servers
            .into_iter()
            .filter(|s| !s.hbase.is_empty())
            .map(|s| (s.name, s.hbase))
            .collect();
        servers.sort();
        let master = master_name.and_then(|m| {
            servers
                .iter()
                .find(|(name, _)| *name == m)
                .map(|(_, hbase)| hbase.clone())
        });
        Some(NativeCluster {
            master,
            servers: servers.into_iter().map(|(_, hbase)| hbase).collect(),
            is_master: state.is_master(),
            lease_held: state.lease_held(),
        })
    }

    /// Cluster mode: the native-RPC address of the live server whose gRPC
    /// address is `grpc` (None if it is not a live member or serves no
    /// native RPC).
    pub fn native_address_of(&self, grpc: &str) -> Option<String> {
        let d = self.inner.cluster.as_ref()?.directory();
        d.servers
            .into_iter()
            .find(|s| s.addr == grpc)
            .map(|s| s.hbase)
            .filter(|h| !h.is_empty())
    }

    /// The regions of `table` that serve now, in key order (a region being
    /// split is absent until its children serve).
    pub fn region_map(&self, table: &str) -> Result<Vec<RegionLocation>, ServiceError> {
        let live = self.table(table)?;
        if !live.record.enabled {
            return Err(ServiceError::TableDisabled(table.to_string()));
        }
        if self.inner.cluster.is_some() {
            return Ok(self.cluster_locations(&live));
        }
        Ok(live
            .regions
            .values()
            .filter(|(_, slot)| matches!(slot, Slot::Open(_)))
            .map(|(record, _)| RegionLocation {
                start_row: record.start_row.clone(),
                end_row: record.end_row.clone(),
                region_id: record.id.clone(),
                server: self.address().to_owned(),
                epoch: 0,
                hbase: String::new(),
            })
            .collect())
    }
}
