//! `MasterService`'s snapshot calls, as HBase 2.x's `Admin` makes them:
//! `Snapshot`, `IsSnapshotDone`, `GetCompletedSnapshots`, `DeleteSnapshot`
//! and `RestoreSnapshot` — which is both `Admin.cloneSnapshot` and
//! `Admin.restoreSnapshot`: a clone when the table named does not exist,
//! a restore when it is the snapshot's own table (a snapshot whose table
//! was dropped is cloned back under its name, as HBase does).
//!
//! Every call is done before it answers (Shoal's snapshot is one paused
//! cut of the table, `host/snapshot_take.rs`), so the procedure id a
//! `Snapshot` or `RestoreSnapshot` answers is already FINISHED when the
//! client asks `getProcedureResult`, and `IsSnapshotDone` is true for
//! every snapshot that exists. FLUSH, SKIPFLUSH and DISABLED snapshots
//! all take the same cut (nothing is flushed; the memstore's cells at the
//! cut are written once). A snapshot's TTL, owner, ACLs, maximum file
//! size and type are accepted and not kept: a snapshot is listed as a
//! FLUSH snapshot of layout version 2 with no TTL (`docs/hbase-client.md`,
//! "Snapshots").

use super::NativeRpc;
use super::errors::{self, RpcError};
use crate::error::ServiceError;
use crate::host::SnapshotListing;
use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase as pb;

/// HBase's `SnapshotDescriptionUtils.SNAPSHOT_LAYOUT_VERSION` (manifest v2).
const LAYOUT_VERSION: i32 = 2;

/// How long a client that polls `IsSnapshotDone` may wait: HBase's default
/// (`hbase.snapshot.master.timeout.millis`, 5 minutes). Shoal's snapshot
/// is done when the call answers.
const EXPECTED_TIMEOUT_MS: i64 = 300_000;

/// What HBase's client is told about a snapshot.
fn description(s: &SnapshotListing) -> pb::SnapshotDescription {
    pb::SnapshotDescription {
        name: s.name.clone(),
        // As HBase keeps it: `TableName.getNameAsString()`, which leaves
        // out the `default` namespace.
        table: Some(s.table.clone()),
        creation_time: Some(s.created_ms),
        r#type: Some(pb::snapshot_description::Type::Flush as i32),
        version: Some(LAYOUT_VERSION),
        owner: None,
        users_and_permissions: None,
        ttl: Some(0),
        max_file_size: None,
    }
}

/// The name a request's snapshot has (HBase's client always sends one).
fn name_of(d: &pb::SnapshotDescription) -> Result<&str, RpcError> {
    if d.name.is_empty() {
        return Err(RpcError::invalid("a snapshot without a name"));
    }
    Ok(&d.name)
}

impl NativeRpc {
    /// One snapshot call: the encoded answer.
    pub(super) async fn snapshots(&self, method: &str, param: Bytes) -> Result<Vec<u8>, RpcError> {
        let access = self.access();
        Ok(match method {
            "Snapshot" => {
                let r: pb::SnapshotRequest = errors::request(method, param)?;
                let table = self.snapshot_table(r.snapshot.table.as_deref())?;
                let name = name_of(&r.snapshot)?;
                access
                    .take_snapshot(&table, name)
                    .await
                    .map_err(|e| match e {
                        // HBase's words for a missing table here.
                        ServiceError::NoSuchTable(_) => RpcError::fatal(
                            errors::SNAPSHOT_CREATION,
                            format!(
                                "Table {} doesn't exist, can't take snapshot {}",
                                crate::error::shown(&table),
                                crate::error::shown(name)
                            ),
                        ),
                        other => RpcError::from(other),
                    })?;
                pb::SnapshotResponse {
                    expected_timeout: EXPECTED_TIMEOUT_MS,
                    // As HBase: a client that sent a nonce waits on the
                    // procedure; one that did not polls IsSnapshotDone.
                    proc_id: (r.nonce_group.is_some() && r.nonce.is_some())
                        .then(|| self.procedure() as i64),
                }
                .encode_to_vec()
            }
            "IsSnapshotDone" => {
                let r: pb::IsSnapshotDoneRequest = errors::request(method, param)?;
                let Some(wanted) = r.snapshot else {
                    return Err(RpcError::fatal(
                        errors::UNKNOWN_SNAPSHOT,
                        "No snapshot name passed in request, can't figure out which snapshot \
                         you want to check.",
                    ));
                };
                let name = name_of(&wanted)?;
                if !access.list_snapshots().await.iter().any(|s| s.name == name) {
                    return Err(RpcError::fatal(
                        errors::UNKNOWN_SNAPSHOT,
                        format!(
                            "snapshot {} is not currently running or one of the known \
                             completed snapshots",
                            crate::error::shown(name)
                        ),
                    ));
                }
                pb::IsSnapshotDoneResponse {
                    done: Some(true),
                    snapshot: None,
                }
                .encode_to_vec()
            }
            "GetCompletedSnapshots" => {
                let _: pb::GetCompletedSnapshotsRequest = errors::request(method, param)?;
                pb::GetCompletedSnapshotsResponse {
                    snapshots: access
                        .list_snapshots()
                        .await
                        .iter()
                        .map(description)
                        .collect(),
                }
                .encode_to_vec()
            }
            "DeleteSnapshot" => {
                let r: pb::DeleteSnapshotRequest = errors::request(method, param)?;
                access.delete_snapshot(name_of(&r.snapshot)?).await?;
                pb::DeleteSnapshotResponse {}.encode_to_vec()
            }
            "RestoreSnapshot" => {
                let r: pb::RestoreSnapshotRequest = errors::request(method, param)?;
                self.restore_or_clone(&r.snapshot).await?;
                pb::RestoreSnapshotResponse {
                    proc_id: self.procedure(),
                }
                .encode_to_vec()
            }
            _ => return Err(super::master::not_served(method)),
        })
    }

    /// `RestoreSnapshot`: restores the snapshot's own table, or clones the
    /// snapshot into the table named (which must not exist). A snapshot
    /// the caller may not see goes to the clone, which answers that it
    /// does not exist, or that the caller may not read it.
    async fn restore_or_clone(&self, d: &pb::SnapshotDescription) -> Result<(), RpcError> {
        let name = name_of(d)?;
        let target = self.snapshot_table(d.table.as_deref())?;
        let access = self.access();
        let own = access
            .list_snapshots()
            .await
            .iter()
            .any(|s| s.name == name && s.table == target);
        if own {
            access.restore_snapshot(name).await?;
        } else {
            access.clone_snapshot(name, &target).await?;
        }
        Ok(())
    }

    /// The Shoal table a snapshot description names (`ns:table` or
    /// `table`), or the error HBase would give.
    fn snapshot_table(&self, table: Option<&str>) -> Result<String, RpcError> {
        let Some(table) = table.filter(|t| !t.is_empty()) else {
            return Err(RpcError::invalid(
                "Descriptor doesn't apply to a table, so we can't build it.",
            ));
        };
        let (namespace, qualifier) = table.split_once(':').unwrap_or(("", table));
        self.user_table(&pb::TableName {
            namespace: Bytes::copy_from_slice(namespace.as_bytes()),
            qualifier: Bytes::copy_from_slice(qualifier.as_bytes()),
        })
    }
}
