//! What this server's directory (the cluster as its last round saw it)
//! tells the host and its callers: the servers and their regions, the
//! cluster as HBase's client is told it, the owner of each region for the
//! region map, and the cluster's part of the status view. Reads only; the
//! node's round writes the directory (`node.rs`).

use super::ClusterState;
use crate::host::{LiveTable, NativeCluster, RegionLocation, Slot};
use crate::metrics::status::ClusterView;
use std::sync::atomic::Ordering::Relaxed;

impl ClusterState {
    /// Every live server with the regions it serves (as the last round saw
    /// the records).
    pub(crate) fn servers(&self) -> Vec<shoal_proto::v1::ClusterServer> {
        let d = self.directory();
        d.servers
            .iter()
            .map(|s| {
                let mut ids: Vec<String> = d
                    .owners
                    .iter()
                    .filter(|(_, o)| o.open && o.name == s.name)
                    .map(|(id, _)| id.clone())
                    .collect();
                ids.sort();
                shoal_proto::v1::ClusterServer {
                    name: s.name.clone(),
                    addr: s.addr.clone(),
                    regions: ids.len() as u32,
                    region_ids: ids,
                }
            })
            .collect()
    }

    /// The cluster as HBase's client is told it: the servers by their
    /// native-RPC addresses.
    pub(crate) fn native_cluster(&self) -> NativeCluster {
        let d = self.directory();
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
        NativeCluster {
            master,
            servers: servers.into_iter().map(|(_, hbase)| hbase).collect(),
            is_master: self.is_master(),
            lease_held: self.lease_held(),
        }
    }

    /// The native-RPC address of the live server whose gRPC address is
    /// `grpc` (None if it is not a live member or serves no native RPC).
    pub(crate) fn native_address_of(&self, grpc: &str) -> Option<String> {
        let d = self.directory();
        d.servers
            .into_iter()
            .find(|s| s.addr == grpc)
            .map(|s| s.hbase)
            .filter(|h| !h.is_empty())
    }

    /// The region map's entries in cluster mode: every region of the table
    /// with its owner as the last round saw it (absent while unassigned);
    /// `here` is this server's gRPC address.
    pub(crate) fn locations(&self, here: &str, table: &LiveTable) -> Vec<RegionLocation> {
        let d = self.directory();
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
                    ) => (here.to_owned(), o.map_or(0, |o| o.epoch), String::new()),
                    (_, Some(o)) if o.open && !o.addr.is_empty() => {
                        (o.addr.clone(), o.epoch, o.hbase.clone())
                    }
                    _ => return None,
                };
                Some(RegionLocation {
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

    /// The cluster as this server sees it, for the status view.
    pub(crate) fn view(&self) -> ClusterView {
        let d = self.directory();
        ClusterView {
            name: self.name.clone(),
            is_master: self.is_master(),
            master: d.master,
            servers: d.servers,
            lease_held: self.lease_held(),
            lease_age_s: self.lease_age_s(),
            failovers: (self.failovers.load(Relaxed), self.failover_ms.load(Relaxed)),
            moves_out: (self.moves_out.load(Relaxed), self.move_ms.load(Relaxed)),
            lease_losses: self.lease_losses.load(Relaxed),
            move_reads: (
                self.move_reads.load(Relaxed),
                self.move_reads_ended.load(Relaxed),
                self.move_reads_waited.load(Relaxed),
            ),
            handed_rows: self.handed_rows.load(Relaxed),
            balancer_on: self.balancer_on.load(Relaxed),
            recent: self.recent_failovers(),
            peer_calls: self.peer_call_stats(),
        }
    }
}
