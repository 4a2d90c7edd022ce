//! The cluster's status as HBase's tools ask it: `MasterService`'s
//! `GetClusterStatus` (`Admin.getClusterMetrics`, the shell's `status`)
//! and balancer calls (`SetBalancerRunning`, `IsBalancerEnabled`,
//! `Balance`), and `AdminService`'s `GetRegionLoad` (`getRegionMetrics`,
//! MapReduce's `TableInputFormat` sizing regions) and `GetServerInfo`.
//! Everything is made from what the host keeps (`Host::status`, the
//! cluster role's view of the members); what Shoal does not know is left
//! unset rather than invented (`docs/hbase-client.md` lists each field).

use super::NativeRpc;
use super::errors::{self, RpcError};
use super::meta::{self, Serving};
use super::names::{self, TableRef};
use crate::catalog::TableRecord;
use crate::metrics::status::{RegionView, StatusView};
use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase as pb;
use std::collections::HashMap;

/// The HBase version Shoal answers as: the one whose protocol it serves.
pub const HBASE_VERSION: &str = "2.6.1";

const MB: u64 = 1024 * 1024;

/// HBase's rounding of a size to whole `unit`s (`roundSize`): 0 stays 0,
/// anything under one unit is 1.
fn round_size(bytes: u64, unit: u64) -> u32 {
    match bytes {
        0 => 0,
        b if b < unit => 1,
        b => (b / unit).min(i32::MAX as u64) as u32,
    }
}

fn region_specifier(name: Bytes) -> pb::RegionSpecifier {
    pb::RegionSpecifier {
        r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
        value: name,
    }
}

/// The load of a region open here (`families`: its table's count, one
/// store each). Request counts per region are not kept: unset.
fn region_load(table: &str, families: usize, r: &RegionView) -> pb::RegionLoad {
    let view = meta::RegionView::new(
        table,
        &r.id,
        r.start_row.clone(),
        r.end_row.clone(),
        Serving::Here,
    );
    let files = r.size_bytes.saturating_sub(r.memstore_bytes);
    pb::RegionLoad {
        region_specifier: region_specifier(view.name),
        stores: Some(families as u32),
        storefiles: Some(r.files),
        storefile_size_mb: Some(round_size(files, MB)),
        mem_store_size_mb: Some(round_size(r.memstore_bytes, MB)),
        region_size_mb: Some(round_size(files, MB)),
        // Compactions finish before the call that asks for one answers.
        compaction_state: Some(pb::region_load::CompactionState::None as i32),
        current_region_cached_ratio: r.cache_ratio.map(|c| c as f32),
        ..Default::default()
    }
}

/// The loads of the regions open here, by table name then key (of
/// `table` only, if named).
fn loads_here(status: &StatusView, table: Option<&str>) -> Vec<pb::RegionLoad> {
    let mut tables: Vec<_> = status
        .tables
        .iter()
        .filter(|t| table.is_none_or(|n| n == t.name))
        .collect();
    tables.sort_by(|a, b| a.name.cmp(&b.name));
    tables
        .iter()
        .flat_map(|t| {
            t.regions
                .iter()
                .map(|r| region_load(&t.name, t.families.len(), r))
        })
        .collect()
}

/// This server's load: its regions, and its requests since it started
/// (`native_calls`: those of the native RPC, which the host's request
/// metrics do not count).
fn server_load_here(status: &StatusView, native_calls: u64) -> pb::ServerLoad {
    pb::ServerLoad {
        total_number_of_requests: Some(status.requests.total_requests() + native_calls),
        region_loads: loads_here(status, None),
        ..Default::default()
    }
}

/// Another member's load, as this server knows it: its regions by name,
/// each with its stores (its table's families, from the catalog); their
/// other figures are that server's (`GetRegionLoad` there gives them).
fn server_load_named(
    regions: &[String],
    known: &HashMap<String, (Bytes, usize)>,
) -> pb::ServerLoad {
    pb::ServerLoad {
        region_loads: regions
            .iter()
            .filter_map(|id| known.get(id))
            .map(|(name, families)| pb::RegionLoad {
                region_specifier: region_specifier(name.clone()),
                stores: Some(*families as u32),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Region names and store counts by Shoal region id, for the tables
/// listed.
fn region_names(tables: &[TableRecord]) -> HashMap<String, (Bytes, usize)> {
    tables
        .iter()
        .flat_map(|t| {
            t.regions.iter().map(|r| {
                let number = names::region_number(&r.id);
                let name = names::region_name(&t.name, &r.start_row, number).0;
                (r.id.clone(), (name, t.families.len()))
            })
        })
        .collect()
}

/// A table's regions by state, as this server sees them: of `total`,
/// `open` are served; the rest are in transition (enabled: between
/// servers) or closed (disabled).
fn region_states(
    name: pb::TableName,
    total: usize,
    open: usize,
    enabled: bool,
) -> pb::TableRegionStatesCount {
    let open = open.min(total);
    let rest = (total - open) as u32;
    pb::TableRegionStatesCount {
        table_name: name,
        region_states_count: pb::RegionStatesCount {
            open_regions: open as u32,
            split_regions: 0,
            closed_regions: if enabled { 0 } else { rest },
            regions_in_transition: if enabled { rest } else { 0 },
            total_regions: total as u32,
        },
    }
}

impl NativeRpc {
    /// One of this module's MasterService calls: the encoded answer.
    pub(super) async fn cluster_status_call(
        &self,
        method: &str,
        param: Bytes,
    ) -> Result<Vec<u8>, RpcError> {
        Ok(match method {
            "GetClusterStatus" => {
                let r: pb::GetClusterStatusRequest = errors::request(method, param)?;
                pb::GetClusterStatusResponse {
                    cluster_status: self.cluster_status(&r.options).await,
                }
                .encode_to_vec()
            }
            "IsBalancerEnabled" => pb::IsBalancerEnabledResponse {
                enabled: self.host.balancer_on(),
            }
            .encode_to_vec(),
            "SetBalancerRunning" => {
                let r: pb::SetBalancerRunningRequest = errors::request(method, param)?;
                pb::SetBalancerRunningResponse {
                    prev_balance_value: Some(self.access().balance_switch(r.on).await?),
                }
                .encode_to_vec()
            }
            "Balance" => {
                let r: pb::BalanceRequest = errors::request(method, param)?;
                self.balance(r)?
            }
            _ => return Err(super::master::not_served(method)),
        })
    }

    /// `Balance`: whether the balancer ran (as HBase: not while it is off,
    /// unless a dry run). A single node has nothing to move; in a cluster
    /// the master's rounds move regions, and the moves are not counted.
    fn balance(&self, r: pb::BalanceRequest) -> Result<Vec<u8>, RpcError> {
        let ran = self.access().balance()? || r.dry_run == Some(true);
        let moves = (ran && self.host.native_cluster().is_none()).then_some(0);
        Ok(pb::BalanceResponse {
            balancer_ran: ran,
            moves_calculated: moves,
            moves_executed: moves,
        }
        .encode_to_vec())
    }

    /// The cluster's status, with the parts `options` asks for (none: all).
    async fn cluster_status(&self, options: &[i32]) -> pb::ClusterStatus {
        use pb::Option as O;
        let wanted = |o: O| options.is_empty() || options.contains(&(o as i32));
        let mut s = pb::ClusterStatus::default();
        if wanted(O::HbaseVersion) {
            s.hbase_version = Some(pb::HBaseVersionFileContent {
                version: HBASE_VERSION.to_string(),
            });
        }
        if wanted(O::ClusterId) {
            s.cluster_id = Some(pb::ClusterId {
                cluster_id: self.cluster_id.clone(),
            });
        }
        let (master, others) = self.masters();
        if wanted(O::Master) {
            s.master = master;
        }
        if wanted(O::BackupMasters) {
            s.backup_masters = others;
        }
        if wanted(O::BalancerOn) {
            s.balancer_on = Some(self.host.balancer_on());
        }
        if wanted(O::LiveServers) || wanted(O::Tasks) || wanted(O::ServersName) {
            let live = self.live_servers().await;
            if wanted(O::ServersName) {
                s.servers_name = live.iter().map(|l| l.server.clone()).collect();
            }
            if wanted(O::LiveServers) || wanted(O::Tasks) {
                s.live_servers = live;
            }
        }
        if wanted(O::TableToRegionsCount) {
            s.table_region_states_count = self.table_region_states().await;
        }
        // Dead and unknown servers, regions in transition, coprocessors,
        // tasks and the info port: none (left empty or unset).
        s
    }

    /// The master and the others (every live server can become master,
    /// as `GetMasters` answers).
    fn masters(&self) -> (Option<pb::ServerName>, Vec<pb::ServerName>) {
        let Some(c) = self.host.native_cluster() else {
            return (Some(self.me.server_name()), Vec::new());
        };
        let others = c
            .servers
            .iter()
            .filter(|s| Some(*s) != c.master.as_ref())
            .map(|s| self.server_at(s))
            .collect();
        (c.master.as_deref().map(|m| self.server_at(m)), others)
    }

    /// Every live server with its load: this one's from its own status;
    /// in cluster mode the other members (as the cluster role knows them,
    /// those serving a native RPC) with their regions named.
    async fn live_servers(&self) -> Vec<pb::LiveServerInfo> {
        let status = self.host.status();
        let here = pb::LiveServerInfo {
            server: self.me.server_name(),
            server_load: server_load_here(
                &status,
                self.calls.load(std::sync::atomic::Ordering::Relaxed),
            ),
        };
        let members = self.host.cluster_servers();
        if members.is_empty() {
            return vec![here];
        }
        let names = region_names(&self.access().list_tables().await);
        let mut out = vec![here];
        for m in members.iter().filter(|m| m.addr != self.host.address()) {
            if let Some(native) = self.host.native_address_of(&m.addr) {
                out.push(pb::LiveServerInfo {
                    server: self.server_at(&native),
                    server_load: server_load_named(&m.region_ids, &names),
                });
            }
        }
        out
    }

    /// Every table's regions by state (`hbase:meta`: its one region).
    async fn table_region_states(&self) -> Vec<pb::TableRegionStatesCount> {
        let access = self.access();
        let mut tables = self.meta_tables(None).await;
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        let mut out = vec![region_states(
            meta::meta_region_info().table_name,
            1,
            1,
            true,
        )];
        for t in &tables {
            let views = meta::regions(&access, t);
            let open = views
                .iter()
                .filter(|v| t.enabled && v.server != Serving::Nowhere)
                .count();
            out.push(region_states(
                meta::table_name(&t.name),
                views.len(),
                open,
                t.enabled,
            ));
        }
        out
    }

    /// One of this module's AdminService calls: the encoded answer.
    pub(super) fn region_server_status(
        &self,
        method: &str,
        param: Bytes,
    ) -> Result<Vec<u8>, RpcError> {
        Ok(match method {
            "GetRegionLoad" => {
                let r: pb::GetRegionLoadRequest = errors::request(method, param)?;
                let status = self.host.status();
                let loads = match r.table_name.as_ref() {
                    None => loads_here(&status, None),
                    Some(t) => match names::table_ref(&t.namespace, &t.qualifier) {
                        TableRef::Table(name) => loads_here(&status, Some(&name)),
                        // hbase:meta is no region with a load.
                        TableRef::Meta => Vec::new(),
                    },
                };
                pb::GetRegionLoadResponse {
                    region_loads: loads,
                }
                .encode_to_vec()
            }
            "GetServerInfo" => pb::GetServerInfoResponse {
                server_info: pb::ServerInfo {
                    server_name: self.me.server_name(),
                    webui_port: None,
                },
            }
            .encode_to_vec(),
            _ => {
                return Err(RpcError::fatal(
                    errors::UNKNOWN_PROTOCOL,
                    format!(
                        "AdminService.{method} is not served by Shoal (docs/hbase-client.md lists what is)"
                    ),
                ));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_as_hbase_rounds_them() {
        assert_eq!(round_size(0, MB), 0);
        assert_eq!(round_size(1, MB), 1);
        assert_eq!(round_size(MB - 1, MB), 1);
        assert_eq!(round_size(MB, MB), 1);
        assert_eq!(round_size(5 * MB + 7, MB), 5);
        assert_eq!(round_size(u64::MAX, 1), i32::MAX as u32);
    }

    #[test]
    fn a_region_load_names_the_region_as_meta_does() {
        let r = RegionView {
            id: "01hzzzzzzzzzzzzzzzzzzzzzzz".into(),
            start_row: Bytes::from_static(b"m"),
            end_row: Bytes::new(),
            size_bytes: 3 * MB + 10,
            memstore_bytes: 10,
            files: 2,
            cache_ratio: None,
            block_sources: None,
            has_references: false,
            prefetch: None,
        };
        let load = region_load("t", 2, &r);
        let view =
            meta::RegionView::new("t", &r.id, r.start_row.clone(), Bytes::new(), Serving::Here);
        assert_eq!(load.region_specifier.value, view.name);
        assert_eq!(load.stores, Some(2));
        assert_eq!(load.storefiles, Some(2));
        assert_eq!(load.storefile_size_mb, Some(3));
        assert_eq!(load.mem_store_size_mb, Some(1));
        assert_eq!(load.read_requests_count, None);
        let counts = region_states(meta::table_name("t"), 4, 3, true);
        assert_eq!(counts.region_states_count.regions_in_transition, 1);
        assert_eq!(counts.region_states_count.total_regions, 4);
    }
}
