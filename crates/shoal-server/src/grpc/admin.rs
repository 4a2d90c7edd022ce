//! The `Admin` service: tables, regions, server status.

use super::door::Door;
use super::snapshot_convert;
use crate::error::ServiceError;
use crate::host::Host;
use crate::metrics::RequestOp;
use crate::proto_convert as convert;
use bytes::Bytes;
use shoal_proto::v1 as pb;
use tonic::{Request, Response, Status};

/// Serves `shoal.v1.Admin` from a [`Host`].
#[derive(Debug, Clone)]
pub struct AdminService {
    door: Door,
}

impl AdminService {
    /// A service over `host`.
    pub fn new(host: Host) -> AdminService {
        AdminService {
            door: Door::new(host),
        }
    }

    fn describe(&self, name: &str) -> Result<pb::TableDescription, ServiceError> {
        let name = crate::catalog::names::canonical(name);
        let status = self.door.host.status();
        let view = status.tables.iter().find(|t| t.name == name);
        let regions = view.map(|v| v.regions.clone()).unwrap_or_default();
        let record = self
            .door
            .host
            .table_record(name)
            .ok_or_else(|| ServiceError::NoSuchTable(name.to_string()))?;
        Ok(convert::table_description(&record, &regions))
    }
}

impl AdminService {
    async fn change_grant(
        &self,
        req: Request<pb::PermissionRequest>,
        revoke: bool,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let p = r.permission.unwrap_or_default();
                let spec = crate::host::GrantSpec::parse(
                    &p.user, &p.table, &p.family, &p.actions, revoke,
                )?;
                self.door
                    .host
                    .access(&caller)
                    .change_grant(&spec, revoke)
                    .await?;
                Ok(message(if revoke {
                    format!("revoked what {} held on {}", spec.user, spec.scope)
                } else {
                    format!(
                        "granted {} {} on {}",
                        spec.user,
                        spec.actions.letters(),
                        spec.scope
                    )
                }))
            })
            .await
    }
}

fn message(m: impl Into<String>) -> pb::AdminResponse {
    pb::AdminResponse { message: m.into() }
}

#[tonic::async_trait]
impl pb::admin_server::Admin for AdminService {
    async fn create_table(
        &self,
        req: Request<pb::CreateTableRequest>,
    ) -> Result<Response<pb::CreateTableResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let families = r
                    .families
                    .into_iter()
                    .map(convert::family_patch)
                    .collect::<Result<Vec<_>, _>>()?;
                let keys = r.split_keys.into_iter().map(Bytes::from).collect();
                self.door
                    .host
                    .access(&caller)
                    .create_table(&r.name, families, keys)
                    .await?;
                Ok(pb::CreateTableResponse {
                    table: Some(self.describe(&r.name)?),
                })
            })
            .await
    }

    async fn describe_table(
        &self,
        req: Request<pb::TableRequest>,
    ) -> Result<Response<pb::DescribeTableResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                self.door
                    .host
                    .access(&caller)
                    .describe_table(&r.name)
                    .await?;
                Ok(pb::DescribeTableResponse {
                    table: Some(self.describe(&r.name)?),
                })
            })
            .await
    }

    async fn alter_table(
        &self,
        req: Request<pb::AlterTableRequest>,
    ) -> Result<Response<pb::AlterTableResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let upsert = r
                    .upsert_families
                    .into_iter()
                    .map(convert::family_patch)
                    .collect::<Result<Vec<_>, _>>()?;
                if upsert.is_empty() && r.delete_families.is_empty() {
                    return Err(ServiceError::InvalidArgument(
                        "alter: nothing to change (give families to add/change or delete)".into(),
                    ));
                }
                self.door
                    .host
                    .access(&caller)
                    .alter_table(&r.name, upsert, r.delete_families)
                    .await?;
                Ok(pb::AlterTableResponse {
                    table: Some(self.describe(&r.name)?),
                })
            })
            .await
    }

    async fn disable_table(
        &self,
        req: Request<pb::TableRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                self.door
                    .host
                    .access(&caller)
                    .disable_table(&r.name)
                    .await?;
                Ok(message(format!("table {} disabled", r.name)))
            })
            .await
    }

    async fn enable_table(
        &self,
        req: Request<pb::TableRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                self.door.host.access(&caller).enable_table(&r.name).await?;
                Ok(message(format!("table {} enabled", r.name)))
            })
            .await
    }

    async fn truncate_table(
        &self,
        req: Request<pb::TableRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                self.door
                    .host
                    .access(&caller)
                    .truncate_table(&r.name)
                    .await?;
                Ok(message(format!("table {} truncated", r.name)))
            })
            .await
    }

    async fn drop_table(
        &self,
        req: Request<pb::TableRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                self.door.host.access(&caller).drop_table(&r.name).await?;
                Ok(message(format!("table {} dropped", r.name)))
            })
            .await
    }

    async fn list_tables(
        &self,
        req: Request<pb::ListTablesRequest>,
    ) -> Result<Response<pb::ListTablesResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, _| {
                let status = self.door.host.status();
                let tables = self
                    .door
                    .host
                    .access(&caller)
                    .list_tables()
                    .await
                    .iter()
                    .map(|t| {
                        let regions = status
                            .tables
                            .iter()
                            .find(|v| v.name == t.name)
                            .map(|v| v.regions.clone())
                            .unwrap_or_default();
                        convert::table_description(t, &regions)
                    })
                    .collect();
                Ok(pb::ListTablesResponse { tables })
            })
            .await
    }

    async fn split(
        &self,
        req: Request<pb::SplitRequest>,
    ) -> Result<Response<pb::SplitResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let children = self
                    .door
                    .host
                    .access(&caller)
                    .split(&r.table, r.split_row.map(Bytes::from))
                    .await?;
                let described = self.describe(&r.table)?;
                Ok(pb::SplitResponse {
                    regions: described
                        .regions
                        .into_iter()
                        .filter(|info| children.iter().any(|c| c.id == info.id))
                        .collect(),
                })
            })
            .await
    }

    async fn r#move(
        &self,
        req: Request<pb::MoveRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                Ok(message(
                    self.door
                        .host
                        .access(&caller)
                        .move_region(&r.region, &r.server)
                        .await?,
                ))
            })
            .await
    }

    async fn register_split(
        &self,
        req: Request<pb::RegisterSplitRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let children = r
                    .children
                    .into_iter()
                    .map(|c| crate::catalog::RegionRecord {
                        id: c.id,
                        dir: c.dir,
                        start_row: c.start_row.into(),
                        end_row: c.end_row.into(),
                    })
                    .collect();
                self.door
                    .host
                    .access(&caller)
                    .register_split(&r.server, &r.table, &r.parent, children)
                    .await?;
                Ok(message(format!("split of {} registered", r.parent)))
            })
            .await
    }

    async fn peer_blocks(
        &self,
        req: Request<pb::PeerBlocksRequest>,
    ) -> Result<Response<pb::PeerBlocksResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let mut blocks = Vec::with_capacity(r.blocks.len());
                for b in &r.blocks {
                    let file = shoal_storage::sst::FileId::parse(&b.file).ok_or_else(|| {
                        ServiceError::InvalidArgument(format!("{:?} is not a file id", b.file))
                    })?;
                    blocks.push(shoal_storage::sst::BlockAddr {
                        file,
                        offset: b.offset,
                        len: b.len,
                    });
                }
                let frames = self.door.host.access(&caller).peer_blocks(&blocks).await?;
                Ok(pb::PeerBlocksResponse {
                    frames: frames.into_iter().map(Option::unwrap_or_default).collect(),
                })
            })
            .await
    }

    async fn end_move_reads(
        &self,
        req: Request<pb::EndMoveReadsRequest>,
    ) -> Result<Response<pb::EndMoveReadsResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                // At most half the message limit of rows, whatever is asked.
                let max = r
                    .max_row_bytes
                    .min(crate::config::limits::MAX_MESSAGE_BYTES as u64 / 2);
                let rows = self
                    .door
                    .host
                    .access(&caller)
                    .end_move_reads(&r.region, &r.server, max, r.keep_reads)
                    .await?;
                let message = if r.keep_reads {
                    format!("rows of {} handed over; its reads go on here", r.region)
                } else {
                    format!("reads of {} ended here", r.region)
                };
                if r.bundle || rows.is_empty() {
                    return Ok(pb::EndMoveReadsResponse {
                        message,
                        row_bundle: rows.into_bytes(),
                        ..Default::default()
                    });
                }
                // A next owner of an earlier version: the rows in the per-cell
                // form, converted on a blocking thread (megabytes of rows).
                let packed = r.packed;
                let (rows, packed_rows) = self
                    .door
                    .host
                    .spawn_move_work(move || {
                        let rows = rows.to_rows()?;
                        Ok::<_, shoal_storage::region::RowBundleError>(if packed {
                            (Vec::new(), crate::cluster::move_reads::pack(rows, max))
                        } else {
                            (
                                crate::cluster::move_reads::to_wire(rows, max),
                                bytes::Bytes::new(),
                            )
                        })
                    })
                    .await
                    .map_err(|e| ServiceError::Unavailable(format!("packing handed rows: {e}")))?
                    .map_err(|e| ServiceError::Unavailable(format!("packing handed rows: {e}")))?;
                Ok(pb::EndMoveReadsResponse {
                    message,
                    rows,
                    packed_rows,
                    row_bundle: bytes::Bytes::new(),
                })
            })
            .await
    }

    async fn balance_switch(
        &self,
        req: Request<pb::BalanceSwitchRequest>,
    ) -> Result<Response<pb::BalanceSwitchResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                Ok(pb::BalanceSwitchResponse {
                    previous: self.door.host.access(&caller).balance_switch(r.on).await?,
                })
            })
            .await
    }

    async fn flush(
        &self,
        req: Request<pb::TableRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let n = self.door.host.access(&caller).flush_table(&r.name).await?;
                Ok(message(format!("flushed {n} region(s) of {}", r.name)))
            })
            .await
    }

    async fn compact(
        &self,
        req: Request<pb::CompactRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let n = self
                    .door
                    .host
                    .access(&caller)
                    .compact_table(&r.table, r.major)
                    .await?;
                let kind = if r.major {
                    "major-compacted"
                } else {
                    "compacted"
                };
                Ok(message(format!("{kind} {n} region(s) of {}", r.table)))
            })
            .await
    }

    async fn grant(
        &self,
        req: Request<pb::PermissionRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.change_grant(req, false).await
    }

    async fn revoke(
        &self,
        req: Request<pb::PermissionRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.change_grant(req, true).await
    }

    async fn user_permission(
        &self,
        req: Request<pb::UserPermissionRequest>,
    ) -> Result<Response<pb::UserPermissionResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let grants = self
                    .door
                    .host
                    .access(&caller)
                    .user_permissions(&r.table, &r.user)
                    .await?;
                Ok(pb::UserPermissionResponse {
                    permissions: grants
                        .into_iter()
                        .map(|g| pb::Permission {
                            user: g.user,
                            table: match g.namespace {
                                Some(ns) => format!("@{ns}"),
                                None => g.table.unwrap_or_default(),
                            },
                            family: g.family.unwrap_or_default(),
                            actions: g.actions,
                        })
                        .collect(),
                    caller: caller.user().to_string(),
                })
            })
            .await
    }

    async fn snapshot(
        &self,
        req: Request<pb::SnapshotRequest>,
    ) -> Result<Response<pb::SnapshotResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let info = self
                    .door
                    .host
                    .access(&caller)
                    .take_snapshot(&r.table, &r.name)
                    .await?;
                Ok(pb::SnapshotResponse {
                    snapshot: Some(snapshot_convert::taken(&info)),
                })
            })
            .await
    }

    async fn list_snapshots(
        &self,
        req: Request<pb::ListSnapshotsRequest>,
    ) -> Result<Response<pb::ListSnapshotsResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, _| {
                let all = self.door.host.access(&caller).list_snapshots().await;
                Ok(pb::ListSnapshotsResponse {
                    snapshots: all.iter().map(snapshot_convert::listed).collect(),
                })
            })
            .await
    }

    async fn describe_snapshot(
        &self,
        req: Request<pb::SnapshotNameRequest>,
    ) -> Result<Response<pb::SnapshotResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let record = self
                    .door
                    .host
                    .access(&caller)
                    .describe_snapshot(&r.name)
                    .await?;
                Ok(pb::SnapshotResponse {
                    snapshot: Some(snapshot_convert::described(&record)),
                })
            })
            .await
    }

    async fn delete_snapshot(
        &self,
        req: Request<pb::SnapshotNameRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                self.door
                    .host
                    .access(&caller)
                    .delete_snapshot(&r.name)
                    .await?;
                Ok(message(format!("deleted snapshot {}", r.name)))
            })
            .await
    }

    async fn clone_snapshot(
        &self,
        req: Request<pb::CloneSnapshotRequest>,
    ) -> Result<Response<pb::CreateTableResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                self.door
                    .host
                    .access(&caller)
                    .clone_snapshot(&r.name, &r.table)
                    .await?;
                Ok(pb::CreateTableResponse {
                    table: Some(self.describe(&r.table)?),
                })
            })
            .await
    }

    async fn restore_snapshot(
        &self,
        req: Request<pb::SnapshotNameRequest>,
    ) -> Result<Response<pb::CreateTableResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let record = self
                    .door
                    .host
                    .access(&caller)
                    .restore_snapshot(&r.name)
                    .await?;
                Ok(pb::CreateTableResponse {
                    table: Some(self.describe(&record.name)?),
                })
            })
            .await
    }

    async fn snapshot_at(
        &self,
        req: Request<pb::SnapshotAtRequest>,
    ) -> Result<Response<pb::SnapshotResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let info = self
                    .door
                    .host
                    .access(&caller)
                    .snapshot_at(&r.table, r.at_ms, &r.name)
                    .await?;
                Ok(pb::SnapshotResponse {
                    snapshot: Some(snapshot_convert::taken(&info)),
                })
            })
            .await
    }

    async fn clone_at(
        &self,
        req: Request<pb::CloneAtRequest>,
    ) -> Result<Response<pb::CreateTableResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                self.door
                    .host
                    .access(&caller)
                    .clone_at(&r.table, r.at_ms, &r.target)
                    .await?;
                Ok(pb::CreateTableResponse {
                    table: Some(self.describe(&r.target)?),
                })
            })
            .await
    }

    async fn restore_at(
        &self,
        req: Request<pb::RestoreAtRequest>,
    ) -> Result<Response<pb::CreateTableResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let record = self
                    .door
                    .host
                    .access(&caller)
                    .restore_at(&r.table, r.at_ms)
                    .await?;
                Ok(pb::CreateTableResponse {
                    table: Some(self.describe(&record.name)?),
                })
            })
            .await
    }

    async fn create_namespace(
        &self,
        req: Request<pb::Namespace>,
    ) -> Result<Response<pb::NamespaceResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let access = self.door.host.access(&caller);
                let ns = access
                    .create_namespace(&r.name, r.properties.into_iter().collect())
                    .await?;
                Ok(namespace_response(ns))
            })
            .await
    }

    async fn alter_namespace(
        &self,
        req: Request<pb::Namespace>,
    ) -> Result<Response<pb::NamespaceResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let access = self.door.host.access(&caller);
                let ns = access
                    .modify_namespace(&r.name, r.properties.into_iter().collect())
                    .await?;
                Ok(namespace_response(ns))
            })
            .await
    }

    async fn drop_namespace(
        &self,
        req: Request<pb::NamespaceRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                self.door
                    .host
                    .access(&caller)
                    .delete_namespace(&r.name)
                    .await?;
                Ok(message(format!("namespace {} dropped", r.name)))
            })
            .await
    }

    async fn list_namespaces(
        &self,
        req: Request<pb::ListNamespacesRequest>,
    ) -> Result<Response<pb::ListNamespacesResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, _| {
                let all = self.door.host.access(&caller).list_namespaces().await;
                Ok(pb::ListNamespacesResponse {
                    namespaces: all.into_iter().map(namespace_message).collect(),
                })
            })
            .await
    }

    async fn describe_namespace(
        &self,
        req: Request<pb::NamespaceRequest>,
    ) -> Result<Response<pb::NamespaceResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let ns = self
                    .door
                    .host
                    .access(&caller)
                    .describe_namespace(&r.name)
                    .await?;
                Ok(namespace_response(ns))
            })
            .await
    }

    async fn snapshot_pause(
        &self,
        req: Request<pb::SnapshotPauseRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let hold = std::time::Duration::from_millis(r.hold_ms.min(60_000));
                self.door
                    .host
                    .access(&caller)
                    .snapshot_pause(&r.id, &r.table, &r.regions, hold)
                    .await?;
                Ok(message(format!("paused {} region(s)", r.regions.len())))
            })
            .await
    }

    async fn snapshot_capture(
        &self,
        req: Request<pb::SnapshotPartRequest>,
    ) -> Result<Response<pb::SnapshotPartResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let (json, written, pause) = self
                    .door
                    .host
                    .access(&caller)
                    .snapshot_capture(&r.id)
                    .await?;
                Ok(pb::SnapshotPartResponse {
                    regions_json: json,
                    written_bytes: written,
                    pause_micros: pause,
                })
            })
            .await
    }

    async fn register_snapshot(
        &self,
        req: Request<pb::RegisterSnapshotRequest>,
    ) -> Result<Response<pb::SnapshotResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                let info = self
                    .door
                    .host
                    .access(&caller)
                    .register_snapshot(&r.id, &r.name)
                    .await?;
                Ok(pb::SnapshotResponse {
                    snapshot: Some(snapshot_convert::taken(&info)),
                })
            })
            .await
    }

    async fn snapshot_release(
        &self,
        req: Request<pb::SnapshotPartRequest>,
    ) -> Result<Response<pb::AdminResponse>, Status> {
        self.door
            .unary(req, RequestOp::Admin, async |caller, r| {
                self.door.host.access(&caller).snapshot_release(&r.id)?;
                Ok(message("released"))
            })
            .await
    }

    async fn status(
        &self,
        req: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusResponse>, Status> {
        // Any authenticated caller may read the status (as HBase's
        // cluster metrics), of the tables it may see; the layer has
        // refused the others.
        self.door
            .unary(req, RequestOp::Admin, async |caller, _| {
                let s = self.door.host.access(&caller).status();
                let (l1_ratio, l2_ratio, l1_bytes, l2_bytes, gets) = match &s.cache {
                    Some(c) => {
                        let pools = [&c.data, &c.in_memory, &c.meta, &c.rows];
                        let l1_hits: u64 = pools.iter().map(|p| p.hits).sum();
                        let l1_lookups = l1_hits + pools.iter().map(|p| p.misses).sum::<u64>();
                        let l2_lookups = c.l2_hits + c.l2_misses;
                        (
                            ratio(l1_hits, l1_lookups),
                            ratio(c.l2_hits, l2_lookups),
                            pools.iter().map(|p| p.bytes_used).sum(),
                            c.l2.as_ref().map_or(0, |l2| l2.bytes_used),
                            c.object_store_gets,
                        )
                    }
                    None => (0.0, 0.0, 0, 0, 0),
                };
                Ok(pb::StatusResponse {
                    version: s.version.to_string(),
                    uptime_seconds: s.uptime.as_secs(),
                    data_location: s.data_location.clone(),
                    tables: s.tables.len() as u32,
                    regions: s.tables.iter().map(|t| t.regions.len() as u32).sum(),
                    memstore_bytes: s.memstore_bytes,
                    store_bytes: s
                        .tables
                        .iter()
                        .flat_map(|t| t.regions.iter().map(|r| r.size_bytes))
                        .sum(),
                    l1_hit_ratio: l1_ratio,
                    l2_hit_ratio: l2_ratio,
                    l1_bytes,
                    l2_bytes,
                    requests: s.requests.total_requests(),
                    object_store_gets: gets,
                    cluster_name: s
                        .cluster
                        .as_ref()
                        .map(|c| c.name.clone())
                        .unwrap_or_default(),
                    master: s
                        .cluster
                        .as_ref()
                        .and_then(|c| c.master.as_ref().map(|m| m.0.clone()))
                        .unwrap_or_default(),
                    balancer_on: s.cluster.as_ref().is_some_and(|c| c.balancer_on),
                    servers: self.door.host.cluster_servers(),
                    cpu_user_seconds: s.cpu.user.as_secs_f64(),
                    cpu_system_seconds: s.cpu.system.as_secs_f64(),
                })
            })
            .await
    }
}

fn ratio(hits: u64, lookups: u64) -> f64 {
    if lookups == 0 {
        0.0
    } else {
        hits as f64 / lookups as f64
    }
}

/// A namespace as the gRPC surface shows it.
fn namespace_message(ns: crate::catalog::NamespaceRecord) -> pb::Namespace {
    pb::Namespace {
        name: ns.name,
        properties: ns.properties.into_iter().collect(),
    }
}

fn namespace_response(ns: crate::catalog::NamespaceRecord) -> pb::NamespaceResponse {
    pb::NamespaceResponse {
        namespace: Some(namespace_message(ns)),
    }
}
