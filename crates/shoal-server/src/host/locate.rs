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

impl Host {
    /// Records the gRPC address clients reach this server at.
    pub fn set_address(&self, address: String) {
        let _ = self.inner.address.set(address);
    }

    /// The gRPC address clients reach this server at ("" before it listens).
    pub fn address(&self) -> &str {
        self.inner.address.get().map_or("", String::as_str)
    }

    /// Cluster mode: the master's native-RPC address (None on a single
    /// node, or while unknown).
    pub fn master_hbase_addr(&self) -> Option<String> {
        let d = self.inner.cluster.as_ref()?.directory();
        let (name, _) = d.master?;
        d.servers
            .into_iter()
            .find(|s| s.name == name)
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
