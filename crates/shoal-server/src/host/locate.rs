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
        self.inner.cluster.as_ref().map(|c| c.native_cluster())
    }

    /// Cluster mode: the native-RPC address of the live server whose gRPC
    /// address is `grpc` (None if it is not a live member or serves no
    /// native RPC).
    pub fn native_address_of(&self, grpc: &str) -> Option<String> {
        self.inner.cluster.as_ref()?.native_address_of(grpc)
    }

    /// The regions of `table` that serve now, in key order (a region being
    /// split is absent until its children serve).
    pub fn region_map(&self, table: &str) -> Result<Vec<RegionLocation>, ServiceError> {
        let live = self.table(table)?;
        if !live.record.enabled {
            return Err(ServiceError::TableDisabled(table.to_string()));
        }
        if let Some(c) = &self.inner.cluster {
            return Ok(c.locations(self.address(), &live));
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
