//! HBase's native RPC, served by `shoal serve` itself (`[hbase_rpc]`): the
//! protocol of the stock Java client (`hbase-client` 2.5/2.6 configured
//! with `RpcConnectionRegistry`), so Java applications move to Shoal with
//! a configuration change. It calls the same host code as the gRPC and
//! Thrift front doors, through `host.access(caller)` — never another
//! front door.
//!
//! - `wire`: preambles, the connection header, call and answer frames.
//! - `cells`: cell blocks (`KeyValueCodec`).
//! - `names`: HBase's table and region names for Shoal's.
//! - `meta`: the virtual `hbase:meta` the client locates regions in.
//! - `convert`: HBase's Get/Scan/Mutation messages to Shoal's and back.
//! - `filters`: Java filter and comparator classes to Shoal's filters.
//! - `client`, `scanners`: `ClientService` and its scanner leases.
//! - `bulk_load`: `ClientService`'s bulk load (`BulkLoadHFilesTool`).
//! - `master`: `MasterService` (Admin) and `ClientMetaService` (registry).
//! - `registry_facts`: what every registry door says (cluster id, master,
//!   meta location, live servers), also read by `crate::zk_registry`.
//! - `snapshots`: `MasterService`'s snapshot calls (snapshot, list,
//!   clone, restore, delete).
//! - `relay`: table changes a server that is not master relays to it.
//! - `region_admin`: `AdminService`, a region server's flush and compact.
//! - `cluster_status`: `GetClusterStatus` and the balancer calls
//!   (`MasterService`), `GetRegionLoad` and `GetServerInfo`
//!   (`AdminService`): the status HBase's tools read.
//! - `errors`: failures as HBase's exception classes.
//! - `listener`: the port, its connections and their calls.
//!
//! `docs/hbase-client.md` says what is supported and how it differs.

mod bulk_load;
mod capabilities;
mod cells;
mod client;
mod cluster_status;
mod convert;
mod errors;
mod filters;
mod listener;
mod master;
mod meta;
mod multi;
mod names;
mod namespaces;
mod region_admin;
mod region_moves;
pub(crate) mod registry_facts;
mod relay;
mod scan_call;
mod scanners;
mod snapshots;
pub mod wire;

pub use errors::RpcError;
pub use listener::{ConnectionLimits, serve_hbase_rpc};
pub use meta::ServerIdentity;
pub use scanners::Scanners;

use crate::catalog::TableRecord;
use crate::host::{Access, Host};
use crate::security::Caller;
use bytes::Bytes;
use client::CallCells;
use convert::ResultWriter;
use meta::RegionView;
use names::TableRef;
use prost::Message;
use shoal_proto::hbase as pb;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

/// The service a connection talks to (named in its connection header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// Data: Get, Mutate, Multi, Scan, bulk load.
    Client,
    /// Admin: tables and namespaces.
    Master,
    /// The registry: cluster id, master, meta location.
    Meta,
    /// A region server's admin calls: flush, compact, region info.
    Admin,
}

impl Service {
    /// The service named in a connection header.
    pub fn named(name: &str) -> Option<Service> {
        match name {
            "ClientService" => Some(Service::Client),
            "MasterService" => Some(Service::Master),
            "ClientMetaService" => Some(Service::Meta),
            "AdminService" => Some(Service::Admin),
            _ => None,
        }
    }
}

/// Where a call is addressed.
pub(crate) enum Target {
    /// The virtual `hbase:meta`.
    Meta,
    /// A region of a Shoal table.
    Region(std::sync::Arc<RegionView>),
}

/// The native RPC's state, shared by every connection.
pub struct NativeRpc {
    host: Host,
    caller: Caller,
    scanners: Scanners,
    /// The next procedure id (table changes are done when they answer).
    procedures: AtomicU64,
    me: ServerIdentity,
    cluster_id: String,
    /// Regions by encoded name, as the client last learned them.
    regions: Mutex<HashMap<String, std::sync::Arc<RegionView>>>,
    /// A scan call with no row found yet answers a heartbeat after this.
    heartbeat: std::time::Duration,
    /// Cluster mode: other servers' native-RPC addresses by their gRPC
    /// ones, for the texts of errors.
    names: Option<errors::ServerNames>,
    /// Cluster mode: table changes may be relayed to the master (not
    /// when the native RPC has TLS: the relay speaks plain TCP).
    relay: bool,
    /// Calls answered since start (the host's request metrics count the
    /// other front doors' calls; these are added to them in the server's
    /// load, `cluster_status.rs`).
    calls: AtomicU64,
    /// The region normalizer's switch (`capabilities.rs`): on at start,
    /// as HBase's.
    normalizer_on: std::sync::atomic::AtomicBool,
}

impl NativeRpc {
    /// The native RPC of `host`, acting for `caller`, announcing itself as
    /// `me`.
    pub fn new(host: Host, caller: Caller, me: ServerIdentity, scanners: Scanners) -> NativeRpc {
        let cluster_id = registry_facts::cluster_id_of(&host.data_location());
        let names = host.native_cluster().map(|_| {
            let host = host.clone();
            let names: errors::ServerNames =
                std::sync::Arc::new(move |grpc: &str| host.native_address_of(grpc));
            names
        });
        let relay = names.is_some()
            && !host
                .config()
                .tls
                .covers(crate::config::TlsListenerName::HbaseRpc);
        NativeRpc {
            names,
            relay,
            host,
            caller,
            scanners,
            procedures: AtomicU64::new(1),
            me,
            cluster_id,
            regions: Mutex::new(HashMap::new()),
            heartbeat: std::time::Duration::from_secs(5),
            calls: AtomicU64::new(0),
            normalizer_on: std::sync::atomic::AtomicBool::new(true),
        }
    }

    /// Answers a heartbeat after `every` when a scan call finds no row (a
    /// client that takes heartbeats then keeps its scanner alive).
    pub fn with_heartbeat(mut self, every: std::time::Duration) -> NativeRpc {
        self.heartbeat = every;
        self
    }

    /// The cluster id clients are told (stable for one object store).
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// The open scanners.
    pub fn scanners(&self) -> &Scanners {
        &self.scanners
    }

    fn access(&self) -> Access<'_> {
        self.host.access(&self.caller)
    }

    fn cached(&self, encoded: &str) -> Option<std::sync::Arc<RegionView>> {
        self.regions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(encoded)
            .cloned()
    }

    /// Learns the regions of `table` as they are now.
    async fn learn(&self, table: &str) -> Result<(), RpcError> {
        let record = self.access().describe_table(table).await?;
        let views = meta::regions(&self.access(), &record);
        let mut map = self.regions.lock().unwrap_or_else(|e| e.into_inner());
        // Bounded: names of regions long gone are forgotten first.
        if map.len() > 100_000 {
            map.clear();
        }
        for v in views {
            map.insert(v.encoded.clone(), std::sync::Arc::new(v));
        }
        Ok(())
    }

    /// The region a call names.
    async fn resolve(&self, spec: &pb::RegionSpecifier) -> Result<Target, RpcError> {
        use pb::region_specifier::RegionSpecifierType as T;
        let unknown = || {
            RpcError::not_serving(format!(
                "Region {} is not online on {}",
                String::from_utf8_lossy(&spec.value),
                self.me.address()
            ))
        };
        match T::try_from(spec.r#type) {
            Ok(T::RegionName) => {
                // The common case first: a name already known, no allocation.
                if let Some(v) = names::encoded_part(&spec.value).and_then(|e| self.cached(e)) {
                    return Ok(Target::Region(v));
                }
                let (table, encoded) = names::parse_region_name(&spec.value).ok_or_else(unknown)?;
                let table = match table {
                    TableRef::Meta => return Ok(Target::Meta),
                    TableRef::Table(t) => t,
                };
                let encoded = encoded.ok_or_else(unknown)?;
                if let Some(v) = self.cached(&encoded) {
                    return Ok(Target::Region(v));
                }
                self.learn(&table).await?;
                self.cached(&encoded)
                    .map(Target::Region)
                    .ok_or_else(unknown)
            }
            Ok(T::EncodedRegionName) => {
                let encoded = String::from_utf8_lossy(&spec.value).into_owned();
                if encoded == "1588230740" {
                    return Ok(Target::Meta);
                }
                if let Some(v) = self.cached(&encoded) {
                    return Ok(Target::Region(v));
                }
                for t in self.access().list_tables().await {
                    self.learn(&t.name).await?;
                }
                self.cached(&encoded)
                    .map(Target::Region)
                    .ok_or_else(unknown)
            }
            Err(_) => Err(RpcError::invalid("unknown region specifier type")),
        }
    }

    /// The tables meta rows are made for: the one named, or all the
    /// caller may see. In cluster mode a server that is not master first
    /// catches up with the catalog the master published, so a table
    /// change the client made at the master shows in the `hbase:meta` it
    /// reads here.
    async fn meta_tables(&self, table: Option<&[u8]>) -> Vec<TableRecord> {
        self.host.catch_up_catalog().await;
        match table.map(names::table_ref_str) {
            Some(TableRef::Table(t)) => self
                .access()
                .describe_table(&t)
                .await
                .ok()
                .into_iter()
                .collect(),
            Some(_) => Vec::new(),
            None => self.access().list_tables().await,
        }
    }

    /// Answers one call: the encoded message and the cell block.
    /// `relayed`: another server relayed it (it is not relayed again).
    pub async fn call(
        &self,
        service: Service,
        method: &str,
        param: Bytes,
        cells: Bytes,
        cell_blocks: bool,
        relayed: bool,
    ) -> Result<(Vec<u8>, Vec<u8>), RpcError> {
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        errors::naming_servers(
            self.names.clone(),
            self.answer(service, method, param, cells, cell_blocks, relayed),
        )
        .await
    }

    async fn answer(
        &self,
        service: Service,
        method: &str,
        param: Bytes,
        cells: Bytes,
        cell_blocks: bool,
        relayed: bool,
    ) -> Result<(Vec<u8>, Vec<u8>), RpcError> {
        let mut w = ResultWriter::new(cell_blocks);
        let decoded = if cells.is_empty() {
            Vec::new()
        } else {
            cells::decode(cells).map_err(|e| RpcError::invalid(e.to_string()))?
        };
        let mut cells = CallCells {
            cells: decoded.into_iter(),
        };
        // Each method's future is boxed: this one (held per call in the
        // connection's set of calls in progress, and moved into it) stays
        // small instead of as large as the largest method's.
        let message = match service {
            Service::Meta => self.registry(method)?,
            Service::Master => Box::pin(self.master(method, param, relayed)).await?,
            Service::Admin => Box::pin(self.region_admin(method, param)).await?,
            Service::Client => match method {
                "Get" => Box::pin(self.get(errors::request(method, param)?, &mut w))
                    .await?
                    .encode_to_vec(),
                "Mutate" => {
                    Box::pin(self.mutate(errors::request(method, param)?, &mut cells, &mut w))
                        .await?
                        .encode_to_vec()
                }
                "Multi" => {
                    Box::pin(self.multi(errors::request(method, param)?, &mut cells, &mut w))
                        .await?
                        .encode_to_vec()
                }
                "Scan" => Box::pin(self.scan(errors::request(method, param)?, &mut w))
                    .await?
                    .encode_to_vec(),
                "PrepareBulkLoad" | "BulkLoadHFile" | "CleanupBulkLoad" => {
                    Box::pin(self.bulk_load_call(method, param)).await?
                }
                _ => {
                    return Err(RpcError::fatal(
                        errors::UNKNOWN_PROTOCOL,
                        format!(
                            "ClientService.{method} is not served by Shoal (docs/hbase-client.md lists what is)"
                        ),
                    ));
                }
            },
        };
        Ok((message, w.block))
    }
}
