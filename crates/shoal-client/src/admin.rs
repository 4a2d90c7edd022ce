//! Table and region administration. Reads, flushes and compactions are
//! retried like any idempotent call; calls that change a table's state are
//! retried only when the request surely was not applied (see `retry`).

use crate::retry::Idempotence;
use crate::route::at_master;
use crate::{Client, ClientError};
use shoal_proto::v1 as pb;

/// Admin calls. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Admin {
    pub(crate) client: Client,
}

/// Runs one Admin call with retries.
macro_rules! call {
    ($self:ident, $kind:ident, $method:ident, $req:expr) => {{
        let req = $req;
        at_master(&$self.client, Idempotence::$kind, |conn| {
            let (mut admin, req) = (conn.admin, req.clone());
            async move { admin.$method(req).await }
        })
        .await
        .map(|r| r.into_inner())
    }};
}

fn table(name: &str) -> pb::TableRequest {
    pb::TableRequest {
        name: name.to_string(),
    }
}

impl Admin {
    /// Cluster mode: moves region `region` to server `server` (empty: the
    /// master picks one); returns what happened.
    pub async fn move_region(&self, region: &str, server: &str) -> Result<String, ClientError> {
        let req = pb::MoveRequest {
            region: region.to_string(),
            server: server.to_string(),
        };
        Ok(call!(self, NotIdempotent, r#move, req)?.message)
    }

    /// Cluster mode: turns the balancer on or off; returns its former state.
    pub async fn balance_switch(&self, on: bool) -> Result<bool, ClientError> {
        let req = pb::BalanceSwitchRequest { on };
        Ok(call!(self, Idempotent, balance_switch, req)?.previous)
    }

    /// Grants `user` the permissions `actions` (letters R, W, C, A) globally
    /// (`table` empty), on a table, or on one family of it (`family` set);
    /// what the user held at that scope is replaced, as in HBase's shell.
    pub async fn grant(
        &self,
        user: &str,
        actions: &str,
        table: &str,
        family: &str,
    ) -> Result<String, ClientError> {
        let req = pb::PermissionRequest {
            permission: Some(pb::Permission {
                user: user.to_string(),
                table: table.to_string(),
                family: family.to_string(),
                actions: actions.to_string(),
            }),
        };
        Ok(call!(self, Idempotent, grant, req)?.message)
    }

    /// Removes what `user` holds at the scope (`table` empty: global).
    pub async fn revoke(
        &self,
        user: &str,
        table: &str,
        family: &str,
    ) -> Result<String, ClientError> {
        let req = pb::PermissionRequest {
            permission: Some(pb::Permission {
                user: user.to_string(),
                table: table.to_string(),
                family: family.to_string(),
                actions: String::new(),
            }),
        };
        Ok(call!(self, NotIdempotent, revoke, req)?.message)
    }

    /// The grants on `table` (empty: every scope) of `user` (empty: all
    /// users), and the caller's name as the server knows it.
    pub async fn user_permissions(
        &self,
        table: &str,
        user: &str,
    ) -> Result<pb::UserPermissionResponse, ClientError> {
        let req = pb::UserPermissionRequest {
            table: table.to_string(),
            user: user.to_string(),
        };
        call!(self, Idempotent, user_permission, req)
    }

    /// Creates a table with `families` (unset settings take their defaults),
    /// pre-split at `split_keys`.
    pub async fn create_table(
        &self,
        name: &str,
        families: Vec<pb::FamilySchema>,
        split_keys: Vec<Vec<u8>>,
    ) -> Result<pb::TableDescription, ClientError> {
        let r = call!(
            self,
            NotIdempotent,
            create_table,
            pb::CreateTableRequest {
                name: name.to_string(),
                families,
                split_keys,
            }
        )?;
        Ok(r.table.unwrap_or_default())
    }

    /// A family with default settings.
    pub fn family(name: &str) -> pb::FamilySchema {
        pb::FamilySchema {
            name: name.to_string(),
            ..Default::default()
        }
    }

    /// A table's families, state and regions.
    pub async fn describe(&self, name: &str) -> Result<pb::TableDescription, ClientError> {
        let r = call!(self, Idempotent, describe_table, table(name))?;
        Ok(r.table.unwrap_or_default())
    }

    /// True if the table exists.
    pub async fn exists(&self, name: &str) -> Result<bool, ClientError> {
        match self.describe(name).await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Adds or changes families (only the settings given) and deletes others.
    pub async fn alter(
        &self,
        name: &str,
        upsert: Vec<pb::FamilySchema>,
        delete: Vec<String>,
    ) -> Result<pb::TableDescription, ClientError> {
        let r = call!(
            self,
            NotIdempotent,
            alter_table,
            pb::AlterTableRequest {
                name: name.to_string(),
                upsert_families: upsert,
                delete_families: delete,
            }
        )?;
        Ok(r.table.unwrap_or_default())
    }

    /// Closes the table's regions.
    pub async fn disable(&self, name: &str) -> Result<String, ClientError> {
        Ok(call!(self, NotIdempotent, disable_table, table(name))?.message)
    }

    /// Opens the table's regions again.
    pub async fn enable(&self, name: &str) -> Result<String, ClientError> {
        Ok(call!(self, NotIdempotent, enable_table, table(name))?.message)
    }

    /// Deletes every row, keeping the schema and region boundaries.
    pub async fn truncate(&self, name: &str) -> Result<String, ClientError> {
        Ok(call!(self, NotIdempotent, truncate_table, table(name))?.message)
    }

    /// Deletes a disabled table.
    pub async fn drop_table(&self, name: &str) -> Result<String, ClientError> {
        Ok(call!(self, NotIdempotent, drop_table, table(name))?.message)
    }

    /// Makes namespace `name` with `properties` (HBase's free-form
    /// strings); needs ADMIN globally.
    pub async fn create_namespace(
        &self,
        name: &str,
        properties: std::collections::HashMap<String, String>,
    ) -> Result<pb::Namespace, ClientError> {
        let req = pb::Namespace {
            name: name.to_string(),
            properties,
        };
        let r = call!(self, NotIdempotent, create_namespace, req)?;
        Ok(r.namespace.unwrap_or_default())
    }

    /// Replaces namespace `name`'s properties.
    pub async fn alter_namespace(
        &self,
        name: &str,
        properties: std::collections::HashMap<String, String>,
    ) -> Result<pb::Namespace, ClientError> {
        let req = pb::Namespace {
            name: name.to_string(),
            properties,
        };
        let r = call!(self, Idempotent, alter_namespace, req)?;
        Ok(r.namespace.unwrap_or_default())
    }

    /// Drops namespace `name`, which must hold no table.
    pub async fn drop_namespace(&self, name: &str) -> Result<String, ClientError> {
        let req = pb::NamespaceRequest {
            name: name.to_string(),
        };
        Ok(call!(self, NotIdempotent, drop_namespace, req)?.message)
    }

    /// Namespace `name`.
    pub async fn describe_namespace(&self, name: &str) -> Result<pb::Namespace, ClientError> {
        let req = pb::NamespaceRequest {
            name: name.to_string(),
        };
        let r = call!(self, Idempotent, describe_namespace, req)?;
        Ok(r.namespace.unwrap_or_default())
    }

    /// Every namespace the caller holds anything in (`default` and `hbase`
    /// included), by name.
    pub async fn list_namespaces(&self) -> Result<Vec<pb::Namespace>, ClientError> {
        Ok(call!(
            self,
            Idempotent,
            list_namespaces,
            pb::ListNamespacesRequest {}
        )?
        .namespaces)
    }

    /// Every table.
    pub async fn list(&self) -> Result<Vec<pb::TableDescription>, ClientError> {
        Ok(call!(self, Idempotent, list_tables, pb::ListTablesRequest {})?.tables)
    }

    /// Splits the region holding `row` at `row`, or every region at its middle.
    pub async fn split(
        &self,
        name: &str,
        row: Option<Vec<u8>>,
    ) -> Result<Vec<pb::RegionInfo>, ClientError> {
        let r = call!(
            self,
            NotIdempotent,
            split,
            pb::SplitRequest {
                table: name.to_string(),
                split_row: row,
            }
        )?;
        Ok(r.regions)
    }

    /// Flushes every region's memstore.
    pub async fn flush(&self, name: &str) -> Result<String, ClientError> {
        Ok(call!(self, Idempotent, flush, table(name))?.message)
    }

    /// Compacts every region (major: rewrites all files into one per family).
    pub async fn compact(&self, name: &str, major: bool) -> Result<String, ClientError> {
        Ok(call!(
            self,
            Idempotent,
            compact,
            pb::CompactRequest {
                table: name.to_string(),
                major,
            }
        )?
        .message)
    }

    /// The server's status.
    pub async fn status(&self) -> Result<pb::StatusResponse, ClientError> {
        call!(self, Idempotent, status, pb::StatusRequest {})
    }

    /// Takes snapshot `name` of `table`: a consistent cut of all its
    /// regions, no data copied (`docs/snapshots.md`).
    pub async fn snapshot(
        &self,
        table: &str,
        name: &str,
    ) -> Result<pb::SnapshotDescription, ClientError> {
        let req = pb::SnapshotRequest {
            table: table.to_string(),
            name: name.to_string(),
        };
        Ok(call!(self, NotIdempotent, snapshot, req)?
            .snapshot
            .unwrap_or_default())
    }

    /// Every snapshot the caller may see, by name.
    pub async fn list_snapshots(&self) -> Result<Vec<pb::SnapshotDescription>, ClientError> {
        let req = pb::ListSnapshotsRequest {};
        Ok(call!(self, Idempotent, list_snapshots, req)?.snapshots)
    }

    /// What snapshot `name` holds.
    pub async fn describe_snapshot(
        &self,
        name: &str,
    ) -> Result<pb::SnapshotDescription, ClientError> {
        let req = pb::SnapshotNameRequest {
            name: name.to_string(),
        };
        Ok(call!(self, Idempotent, describe_snapshot, req)?
            .snapshot
            .unwrap_or_default())
    }

    /// Deletes snapshot `name` (its files stay while a clone reads them).
    pub async fn delete_snapshot(&self, name: &str) -> Result<String, ClientError> {
        let req = pb::SnapshotNameRequest {
            name: name.to_string(),
        };
        Ok(call!(self, NotIdempotent, delete_snapshot, req)?.message)
    }

    /// Clones snapshot `name` into new table `table`, sharing its files.
    pub async fn clone_snapshot(
        &self,
        name: &str,
        table: &str,
    ) -> Result<pb::TableDescription, ClientError> {
        let req = pb::CloneSnapshotRequest {
            name: name.to_string(),
            table: table.to_string(),
        };
        Ok(call!(self, NotIdempotent, clone_snapshot, req)?
            .table
            .unwrap_or_default())
    }

    /// Restores snapshot `name`'s table (disabled first) to it.
    pub async fn restore_snapshot(&self, name: &str) -> Result<pb::TableDescription, ClientError> {
        let req = pb::SnapshotNameRequest {
            name: name.to_string(),
        };
        Ok(call!(self, NotIdempotent, restore_snapshot, req)?
            .table
            .unwrap_or_default())
    }

    /// Takes snapshot `name` of `table` as it was at `at_ms` (ms since the
    /// epoch, inside the server's point-in-time window).
    pub async fn snapshot_at(
        &self,
        table: &str,
        at_ms: i64,
        name: &str,
    ) -> Result<pb::SnapshotDescription, ClientError> {
        let req = pb::SnapshotAtRequest {
            table: table.to_string(),
            at_ms,
            name: name.to_string(),
        };
        Ok(call!(self, NotIdempotent, snapshot_at, req)?
            .snapshot
            .unwrap_or_default())
    }

    /// Clones `table` as it was at `at_ms` into new table `target`.
    pub async fn clone_at(
        &self,
        table: &str,
        at_ms: i64,
        target: &str,
    ) -> Result<pb::TableDescription, ClientError> {
        let req = pb::CloneAtRequest {
            table: table.to_string(),
            at_ms,
            target: target.to_string(),
        };
        Ok(call!(self, NotIdempotent, clone_at, req)?
            .table
            .unwrap_or_default())
    }

    /// Restores `table` (disabled first) to what it was at `at_ms`.
    pub async fn restore_at(
        &self,
        table: &str,
        at_ms: i64,
    ) -> Result<pb::TableDescription, ClientError> {
        let req = pb::RestoreAtRequest {
            table: table.to_string(),
            at_ms,
        };
        Ok(call!(self, NotIdempotent, restore_at, req)?
            .table
            .unwrap_or_default())
    }

    /// Names snapshot `id`, whose record and files were copied into the
    /// server's bucket under `snapshots/<id>/` (`shoal snapshot import`),
    /// `name`. The server checks that every file is there first.
    /// Registering the same id and name again answers the same.
    pub async fn register_snapshot(
        &self,
        id: &str,
        name: &str,
    ) -> Result<pb::SnapshotDescription, ClientError> {
        let req = pb::RegisterSnapshotRequest {
            id: id.to_string(),
            name: name.to_string(),
        };
        Ok(call!(self, Idempotent, register_snapshot, req)?
            .snapshot
            .unwrap_or_default())
    }
}
