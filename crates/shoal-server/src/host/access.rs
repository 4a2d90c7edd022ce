//! The host API as a front door calls it: every call made on behalf of a
//! [`Caller`], its permissions checked here, once, for gRPC, Thrift and
//! HTTP alike (HBase's AccessController rules, `docs/security.md`), admin
//! operations and denials written to the audit log. With auth off every
//! check passes and nothing but admin operations is audited.
//!
//! What each call needs (a wider grant covers a narrower scope):
//! - get, scan: READ on each family read (all families: READ on the table,
//!   or on every family of it);
//! - put, delete, increment, append: WRITE on each family written;
//!   check-and-mutate: READ on the checked family as well;
//! - region map, describe: any permission on the table; list: the tables
//!   the caller holds any permission on;
//! - create: CREATE globally (the creator then holds RWCA on the table, as
//!   HBase's table owner does); alter, enable, disable, truncate, drop,
//!   flush, compact, split: CREATE or ADMIN on the table;
//! - move, balance, split registration, registering an imported snapshot:
//!   ADMIN globally;
//! - grant, revoke, list grants: ADMIN globally, or on the table for
//!   grants on it; anyone may list their own.

use super::{GrantSpec, Host, RegionLocation, ScanStream};
use crate::catalog::{FamilyPatch, GrantRecord, RegionRecord, TableRecord};
use crate::error::ServiceError;
use crate::security::audit::Outcome;
use crate::security::permissions::{Action, Scope};
use crate::security::{Caller, Security};
use bytes::Bytes;
use shoal_storage::region::filter::Filter;
use shoal_storage::region::{
    Changed, CheckAndMutate, Columns, Condition, Get, Nonce, RowChange, RowChanges, RowMutation,
    RowOp, RowResult, Scan,
};
use std::sync::Arc;

/// The host, acting for one caller.
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    host: &'a Host,
    caller: &'a Caller,
}

fn table_object(table: &str) -> String {
    format!("table {}", crate::error::shown(table))
}

fn family_object(table: &str, family: &str) -> String {
    format!(
        "family {} of table {}",
        crate::error::shown(family),
        crate::error::shown(table)
    )
}

impl Host {
    /// This host acting for `caller`: what every front door calls.
    pub fn access<'a>(&'a self, caller: &'a Caller) -> Access<'a> {
        Access { host: self, caller }
    }
}

impl<'a> Access<'a> {
    fn security(&self) -> &Security {
        &self.host.inner.security
    }

    /// The host itself, for what needs no permission (status, metrics).
    pub fn host(&self) -> &'a Host {
        self.host
    }

    /// The caller.
    pub fn caller(&self) -> &'a Caller {
        self.caller
    }

    fn free(&self) -> bool {
        self.security().unrestricted(self.caller)
    }

    /// True if the caller passes every check (auth off, or a superuser).
    pub(super) fn unrestricted(&self) -> bool {
        self.free()
    }

    /// Err unless the caller may do `action` globally.
    pub(super) fn need_global(&self, op: &str, action: Action) -> Result<(), ServiceError> {
        if self.free() || self.security().acl().global(self.caller.user(), action) {
            return Ok(());
        }
        Err(self
            .security()
            .deny(self.caller, op, action.name(), "global"))
    }

    /// Err unless the caller holds one of `actions` on the whole table.
    fn need_table(&self, op: &str, table: &str, actions: &[Action]) -> Result<(), ServiceError> {
        if self.free() {
            return Ok(());
        }
        let acl = self.security().acl();
        if actions
            .iter()
            .any(|a| acl.table(self.caller.user(), table, *a))
        {
            return Ok(());
        }
        let needed = match actions {
            [Action::Create, Action::Admin] => "CREATE or ADMIN",
            [a, ..] => a.name(),
            [] => "a permission",
        };
        Err(self
            .security()
            .deny(self.caller, op, needed, &table_object(table)))
    }

    /// Err unless the caller may do `action` to every family in `families`
    /// (None: every family of the table).
    fn need_families<'f>(
        &self,
        op: &str,
        table: &str,
        families: Option<impl Iterator<Item = &'f [u8]>>,
        action: Action,
    ) -> Result<(), ServiceError> {
        if self.free() {
            return Ok(());
        }
        let acl = self.security().acl();
        let user = self.caller.user();
        if acl.table(user, table, action) {
            return Ok(());
        }
        let deny = |family: &str| {
            Err(self.security().deny(
                self.caller,
                op,
                action.name(),
                &family_object(table, family),
            ))
        };
        match families {
            Some(families) => {
                for f in families {
                    let f = std::str::from_utf8(f).unwrap_or("");
                    if !acl.family(user, table, f, action) {
                        return deny(f);
                    }
                }
                Ok(())
            }
            None => {
                // Every family: each must be granted (a table with no
                // record is not visible: the table-level answer stands).
                let Some(record) = self.host.table_record(table) else {
                    return Err(self.security().deny(
                        self.caller,
                        op,
                        action.name(),
                        &table_object(table),
                    ));
                };
                for f in &record.families {
                    if !acl.family(user, table, &f.name, action) {
                        return deny(&f.name);
                    }
                }
                Ok(())
            }
        }
    }

    fn need_read(&self, op: &str, table: &str, columns: &Columns) -> Result<(), ServiceError> {
        if columns.families.is_empty() {
            self.need_families(op, table, None::<std::iter::Empty<&[u8]>>, Action::Read)
        } else {
            self.need_families(
                op,
                table,
                Some(columns.families.keys().map(|f| &f[..])),
                Action::Read,
            )
        }
    }

    fn need_write(&self, op: &str, table: &str, m: &RowMutation) -> Result<(), ServiceError> {
        if self.free() {
            return Ok(());
        }
        if m.ops.iter().any(|o| matches!(o, RowOp::DeleteRow { .. })) {
            return self.need_families(op, table, None::<std::iter::Empty<&[u8]>>, Action::Write);
        }
        let families = m.ops.iter().filter_map(|o| match o {
            RowOp::Put { family, .. }
            | RowOp::DeleteVersion { family, .. }
            | RowOp::DeleteColumn { family, .. }
            | RowOp::DeleteFamily { family, .. }
            | RowOp::DeleteFamilyVersion { family, .. } => Some(&family[..]),
            RowOp::DeleteRow { .. } => None,
        });
        self.need_families(op, table, Some(families), Action::Write)
    }

    fn need_visible(&self, op: &str, table: &str) -> Result<(), ServiceError> {
        if self.free() || self.security().acl().sees_table(self.caller.user(), table) {
            return Ok(());
        }
        Err(self
            .security()
            .deny(self.caller, op, "a permission", &table_object(table)))
    }

    /// The server's status as this caller may see it: only the tables it
    /// can see, and the storage location only for a global ADMIN (as
    /// `ListTables` hides the rest).
    pub fn status(&self) -> crate::metrics::status::StatusView {
        self.trim_status(self.host.status())
    }

    /// `view` cut down to what this caller may see (see [`Access::status`]).
    pub fn trim_status(
        &self,
        mut view: crate::metrics::status::StatusView,
    ) -> crate::metrics::status::StatusView {
        let user = self.caller.user();
        if self.free() || self.security().acl().global(user, Action::Admin) {
            return view;
        }
        let acl = self.security().acl();
        view.tables.retain(|t| acl.sees_table(user, &t.name));
        view.data_location = "(shown to global ADMIN only)".into();
        view
    }

    /// Audits an admin operation's outcome and passes it on.
    pub(super) fn audited<T>(
        &self,
        op: &str,
        object: &str,
        result: Result<T, ServiceError>,
    ) -> Result<T, ServiceError> {
        let (outcome, detail) = match &result {
            Ok(_) => (Outcome::Ok, String::new()),
            Err(e) => (Outcome::Failed, e.to_string()),
        };
        self.security()
            .audit()
            .record(self.caller, op, object, outcome, &detail);
        result
    }

    // ---- data

    /// [`Host::get`], with READ checked.
    pub async fn get(&self, table: &str, get: Get) -> Result<RowResult, ServiceError> {
        self.need_read("get", table, &get.columns)?;
        self.host.get(table, get).await
    }

    /// [`Host::multi_get`], with READ checked for every get.
    pub async fn multi_get(
        &self,
        table: &str,
        gets: Vec<Get>,
    ) -> Result<Vec<RowResult>, ServiceError> {
        for g in &gets {
            self.need_read("multi_get", table, &g.columns)?;
        }
        self.host.multi_get(table, gets).await
    }

    /// [`Host::mutate`], with WRITE checked.
    pub async fn mutate(&self, table: &str, m: RowMutation) -> Result<(), ServiceError> {
        self.need_write("mutate", table, &m)?;
        self.host.mutate(table, m).await
    }

    /// [`Host::mutate_many`]; one mutation the caller may not make refuses
    /// the whole batch.
    pub async fn mutate_many(
        &self,
        table: &str,
        ms: Vec<RowMutation>,
    ) -> Result<Vec<Result<(), ServiceError>>, ServiceError> {
        for m in &ms {
            self.need_write("multi_mutate", table, m)?;
        }
        self.host.mutate_many(table, ms).await
    }

    /// [`Host::increment`], with WRITE checked.
    pub async fn increment(
        &self,
        table: &str,
        row: Bytes,
        columns: Vec<(Bytes, Bytes, i64)>,
        nonce: Option<Nonce>,
    ) -> Result<Changed<i64>, ServiceError> {
        self.need_families(
            "increment",
            table,
            Some(columns.iter().map(|(f, _, _)| &f[..])),
            Action::Write,
        )?;
        self.host.increment(table, row, columns, nonce).await
    }

    /// [`Host::append`], with WRITE checked.
    pub async fn append(
        &self,
        table: &str,
        row: Bytes,
        columns: Vec<(Bytes, Bytes, Bytes)>,
        nonce: Option<Nonce>,
    ) -> Result<Changed<Bytes>, ServiceError> {
        self.need_families(
            "append",
            table,
            Some(columns.iter().map(|(f, _, _)| &f[..])),
            Action::Write,
        )?;
        self.host.append(table, row, columns, nonce).await
    }

    /// [`Host::check_and_mutate`], with READ on the checked family and
    /// WRITE on those written.
    pub async fn check_and_mutate(
        &self,
        table: &str,
        check: CheckAndMutate,
    ) -> Result<bool, ServiceError> {
        self.need_families(
            "check_and_mutate",
            table,
            Some(std::iter::once(&check.family[..])),
            Action::Read,
        )?;
        self.need_write("check_and_mutate", table, &check.mutation)?;
        self.host.check_and_mutate(table, check).await
    }

    /// [`Host::mutate_changes`], with WRITE on every family changed and
    /// READ on the checked one.
    pub async fn mutate_changes(
        &self,
        table: &str,
        changes: RowChanges,
        condition: Option<Condition>,
        nonce: Option<Nonce>,
    ) -> Result<Option<Vec<shoal_storage::cell::Cell>>, ServiceError> {
        if let Some(c) = &condition {
            self.need_families(
                "mutate_row",
                table,
                Some(std::iter::once(&c.family[..])),
                Action::Read,
            )?;
        }
        let mut ops = RowMutation::new(changes.row.clone());
        let mut counted: Vec<&[u8]> = Vec::new();
        for change in &changes.changes {
            match change {
                RowChange::Op(op) => ops.ops.push(op.clone()),
                RowChange::Increment(cols) => counted.extend(cols.iter().map(|(f, _, _)| &f[..])),
                RowChange::Append(cols) => counted.extend(cols.iter().map(|(f, _, _)| &f[..])),
            }
        }
        self.need_write("mutate_row", table, &ops)?;
        self.need_families(
            "mutate_row",
            table,
            Some(counted.into_iter()),
            Action::Write,
        )?;
        self.host
            .mutate_changes(table, changes, condition, nonce)
            .await
    }

    /// [`Host::check_and_increment`], with READ on the checked family and
    /// WRITE on the incremented ones.
    pub async fn check_and_increment(
        &self,
        table: &str,
        condition: Condition,
        row: Bytes,
        columns: Vec<(Bytes, Bytes, i64)>,
        nonce: Option<Nonce>,
    ) -> Result<Option<Changed<i64>>, ServiceError> {
        self.need_families(
            "check_and_increment",
            table,
            Some(std::iter::once(&condition.family[..])),
            Action::Read,
        )?;
        self.need_families(
            "check_and_increment",
            table,
            Some(columns.iter().map(|(f, _, _)| &f[..])),
            Action::Write,
        )?;
        self.host
            .check_and_increment(table, condition, row, columns, nonce)
            .await
    }

    /// [`Host::check_and_append`], with READ on the checked family and
    /// WRITE on the appended ones.
    pub async fn check_and_append(
        &self,
        table: &str,
        condition: Condition,
        row: Bytes,
        columns: Vec<(Bytes, Bytes, Bytes)>,
        nonce: Option<Nonce>,
    ) -> Result<Option<Changed<Bytes>>, ServiceError> {
        self.need_families(
            "check_and_append",
            table,
            Some(std::iter::once(&condition.family[..])),
            Action::Read,
        )?;
        self.need_families(
            "check_and_append",
            table,
            Some(columns.iter().map(|(f, _, _)| &f[..])),
            Action::Write,
        )?;
        self.host
            .check_and_append(table, condition, row, columns, nonce)
            .await
    }

    /// [`Host::scan_filtered`], with READ checked.
    pub fn scan_filtered(
        &self,
        table: &str,
        scan: Scan,
        filter: Option<Arc<Filter>>,
    ) -> Result<ScanStream, ServiceError> {
        self.need_read("scan", table, &scan.columns)?;
        self.host.scan_filtered(table, scan, filter)
    }

    /// [`Host::region_map`]: any permission on the table.
    pub fn region_map(&self, table: &str) -> Result<Vec<RegionLocation>, ServiceError> {
        self.need_visible("region_map", table)?;
        self.host.region_map(table)
    }

    // ---- admin

    /// Err unless the caller may make table `name`: CREATE globally or on
    /// its namespace.
    fn need_create_in(&self, name: &str) -> Result<(), ServiceError> {
        let ns = crate::catalog::names::namespace_of(name);
        if self.free()
            || self
                .security()
                .acl()
                .namespace(self.caller.user(), ns, Action::Create)
        {
            return Ok(());
        }
        self.need_global("create_table", Action::Create)
    }

    /// [`Host::create_table`]: CREATE globally or on the table's namespace;
    /// the creator then holds RWCA on the table.
    pub async fn create_table(
        &self,
        name: &str,
        families: Vec<FamilyPatch>,
        split_keys: Vec<Bytes>,
    ) -> Result<TableRecord, ServiceError> {
        let object = table_object(name);
        self.need_create_in(name)?;
        let result = self.host.create_table(name, families, split_keys).await;
        let result = self.audited("create_table", &object, result)?;
        if self.security().auth_enabled() && !self.free() {
            let owner = GrantSpec {
                user: self.caller.user().to_string(),
                scope: Scope::Table(result.name.clone()),
                actions: crate::security::permissions::Actions::parse("RWCA")
                    .map_err(ServiceError::InvalidArgument)?,
            };
            let granted = self.host.change_grant(&owner).await.map(|_| ());
            self.audited("grant", &object, granted.map(|_| ()))
                .map_err(|e| {
                    ServiceError::Unavailable(format!(
                        "table {name:?} was created, but granting its creator RWCA on it failed ({e}); a superuser can grant it"
                    ))
                })?;
        }
        Ok(result)
    }

    /// [`Host::describe_table`]: any permission on the table.
    pub async fn describe_table(&self, name: &str) -> Result<TableRecord, ServiceError> {
        self.need_visible("describe_table", name)?;
        self.host.describe_table(name).await
    }

    /// [`Host::list_tables`]: the tables the caller holds any permission on.
    pub async fn list_tables(&self) -> Vec<TableRecord> {
        let all = self.host.list_tables().await;
        if self.free() {
            return all;
        }
        let acl = self.security().acl();
        all.into_iter()
            .filter(|t| acl.sees_table(self.caller.user(), &t.name))
            .collect()
    }

    async fn table_admin<T>(
        &self,
        op: &str,
        name: &str,
        f: impl std::future::Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, ServiceError> {
        self.need_table(op, name, &[Action::Create, Action::Admin])?;
        let result = f.await;
        self.audited(op, &table_object(name), result)
    }

    /// [`Host::alter_table`]: CREATE or ADMIN on the table.
    pub async fn alter_table(
        &self,
        name: &str,
        upsert: Vec<FamilyPatch>,
        delete: Vec<String>,
    ) -> Result<TableRecord, ServiceError> {
        self.table_admin(
            "alter_table",
            name,
            self.host.alter_table(name, upsert, delete),
        )
        .await
    }

    /// [`Host::disable_table`]: CREATE or ADMIN on the table.
    pub async fn disable_table(&self, name: &str) -> Result<(), ServiceError> {
        self.table_admin("disable_table", name, self.host.disable_table(name))
            .await
    }

    /// [`Host::enable_table`]: CREATE or ADMIN on the table.
    pub async fn enable_table(&self, name: &str) -> Result<(), ServiceError> {
        self.table_admin("enable_table", name, self.host.enable_table(name))
            .await
    }

    /// [`Host::truncate_table`]: CREATE or ADMIN on the table.
    pub async fn truncate_table(&self, name: &str) -> Result<(), ServiceError> {
        self.table_admin("truncate_table", name, self.host.truncate_table(name))
            .await
    }

    /// [`Host::drop_table`]: CREATE or ADMIN on the table (its grants go
    /// with it).
    pub async fn drop_table(&self, name: &str) -> Result<(), ServiceError> {
        self.table_admin("drop_table", name, self.host.drop_table(name))
            .await
    }

    /// [`Host::flush_table`]: CREATE or ADMIN on the table.
    pub async fn flush_table(&self, name: &str) -> Result<usize, ServiceError> {
        self.table_admin("flush", name, self.host.flush_table(name))
            .await
    }

    /// [`Host::compact_table`]: CREATE or ADMIN on the table.
    pub async fn compact_table(&self, name: &str, major: bool) -> Result<usize, ServiceError> {
        self.table_admin("compact", name, self.host.compact_table(name, major))
            .await
    }

    /// [`Host::region_work`]: CREATE or ADMIN on the table.
    pub async fn region_work(
        &self,
        table: &str,
        region: &str,
        compact: Option<bool>,
    ) -> Result<(), ServiceError> {
        let op = match compact {
            None => "flush",
            Some(_) => "compact",
        };
        self.table_admin(op, table, self.host.region_work(table, region, compact))
            .await
    }

    /// [`Host::split`]: CREATE or ADMIN on the table.
    pub async fn split(
        &self,
        table: &str,
        row: Option<Bytes>,
    ) -> Result<Vec<RegionRecord>, ServiceError> {
        self.table_admin("split", table, self.host.split(table, row))
            .await
    }

    /// [`Host::bulk_load`]: CREATE or ADMIN on the table (as HBase's
    /// AccessController asks for a bulk load).
    pub async fn bulk_load(
        &self,
        table: &str,
        load: super::BulkLoad,
    ) -> Result<super::BulkLoadOutcome, ServiceError> {
        self.table_admin("bulk_load", table, self.host.bulk_load(table, load))
            .await
    }

    /// [`Host::take_snapshot`]: ADMIN on the table (as HBase's
    /// AccessController asks).
    pub async fn take_snapshot(
        &self,
        table: &str,
        name: &str,
    ) -> Result<super::SnapshotInfo, ServiceError> {
        self.need_table("snapshot", table, &[Action::Admin])?;
        let result = self.host.take_snapshot(table, name).await;
        self.audited("snapshot", &snapshot_object(name, table), result)
    }

    /// [`Host::list_snapshots`]: those of tables the caller may ADMIN.
    pub async fn list_snapshots(&self) -> Vec<super::SnapshotListing> {
        let all = self.host.list_snapshots().await;
        if self.free() {
            return all;
        }
        let acl = self.security().acl();
        all.into_iter()
            .filter(|s| acl.table(self.caller.user(), &s.table, Action::Admin))
            .collect()
    }

    /// The table snapshot `name` was taken of, once the caller may ADMIN
    /// it.
    async fn snapshot_admin(&self, op: &str, name: &str) -> Result<String, ServiceError> {
        let table = self.host.snapshot_entry(name).await?.table;
        self.need_table(op, &table, &[Action::Admin])?;
        Ok(table)
    }

    /// [`Host::describe_snapshot`]: ADMIN on its table.
    pub async fn describe_snapshot(
        &self,
        name: &str,
    ) -> Result<crate::snapshots::SnapshotRecord, ServiceError> {
        self.snapshot_admin("describe_snapshot", name).await?;
        self.host.describe_snapshot(name).await
    }

    /// [`Host::delete_snapshot`]: ADMIN on its table.
    pub async fn delete_snapshot(&self, name: &str) -> Result<(), ServiceError> {
        let table = self.snapshot_admin("delete_snapshot", name).await?;
        let result = self.host.delete_snapshot(name).await;
        self.audited("delete_snapshot", &snapshot_object(name, &table), result)
    }

    /// [`Host::clone_snapshot`]: CREATE globally (a new table), and ADMIN
    /// on the snapshot's table (its data is read).
    pub async fn clone_snapshot(
        &self,
        name: &str,
        target: &str,
    ) -> Result<TableRecord, ServiceError> {
        self.need_global("clone_snapshot", Action::Create)?;
        let table = self.snapshot_admin("clone_snapshot", name).await?;
        let result = self.host.clone_snapshot(name, target).await;
        let object = format!(
            "{} into {}",
            snapshot_object(name, &table),
            table_object(target)
        );
        self.audited("clone_snapshot", &object, result)
    }

    /// [`Host::restore_snapshot`]: ADMIN on its table.
    pub async fn restore_snapshot(&self, name: &str) -> Result<TableRecord, ServiceError> {
        let table = self.snapshot_admin("restore_snapshot", name).await?;
        let result = self.host.restore_snapshot(name).await;
        self.audited("restore_snapshot", &snapshot_object(name, &table), result)
    }

    /// [`Host::snapshot_at`]: ADMIN on the table, as a snapshot.
    pub async fn snapshot_at(
        &self,
        table: &str,
        at_ms: i64,
        name: &str,
    ) -> Result<super::SnapshotInfo, ServiceError> {
        self.need_table("snapshot_at", table, &[Action::Admin])?;
        let result = self.host.snapshot_at(table, at_ms, name).await;
        let object = format!("{} at {at_ms}", snapshot_object(name, table));
        self.audited("snapshot_at", &object, result)
    }

    /// [`Host::clone_at`]: CREATE globally and ADMIN on the table, as a
    /// clone.
    pub async fn clone_at(
        &self,
        table: &str,
        at_ms: i64,
        target: &str,
    ) -> Result<TableRecord, ServiceError> {
        self.need_global("clone_at", Action::Create)?;
        self.need_table("clone_at", table, &[Action::Admin])?;
        let result = self.host.clone_at(table, at_ms, target).await;
        let object = format!(
            "{} at {at_ms} into {}",
            table_object(table),
            table_object(target)
        );
        self.audited("clone_at", &object, result)
    }

    /// [`Host::restore_at`]: ADMIN on the table, as a restore.
    pub async fn restore_at(&self, table: &str, at_ms: i64) -> Result<TableRecord, ServiceError> {
        self.need_table("restore_at", table, &[Action::Admin])?;
        let result = self.host.restore_at(table, at_ms).await;
        let object = format!("{} to {at_ms}", table_object(table));
        self.audited("restore_at", &object, result)
    }

    /// [`Host::hold_snapshot_pause`]: ADMIN globally (the master calls it).
    pub async fn snapshot_pause(
        &self,
        id: &str,
        table: &str,
        regions: &[String],
        hold: std::time::Duration,
    ) -> Result<(), ServiceError> {
        self.need_global("snapshot_pause", Action::Admin)?;
        self.host
            .hold_snapshot_pause(id, table, regions, hold)
            .await
    }

    /// [`Host::capture_snapshot_pause`]: ADMIN globally; the part as JSON,
    /// the bytes written and the pause.
    pub async fn snapshot_capture(&self, id: &str) -> Result<(Vec<u8>, u64, u64), ServiceError> {
        self.need_global("snapshot_capture", Action::Admin)?;
        let part = self.host.capture_snapshot_pause(id).await?;
        let json = serde_json::to_vec(&part.regions)
            .map_err(|e| ServiceError::InvalidArgument(format!("encoding a snapshot part: {e}")))?;
        Ok((json, part.written, part.pause.as_micros() as u64))
    }

    /// [`Host::release_snapshot_pause`]: ADMIN globally.
    pub fn snapshot_release(&self, id: &str) -> Result<(), ServiceError> {
        self.need_global("snapshot_release", Action::Admin)?;
        self.host.release_snapshot_pause(id);
        Ok(())
    }

    /// [`Host::register_snapshot`]: ADMIN globally (the snapshot's objects
    /// were written into the bucket by someone holding its credentials; the
    /// table it was taken of may not exist here).
    pub async fn register_snapshot(
        &self,
        id: &str,
        name: &str,
    ) -> Result<super::SnapshotInfo, ServiceError> {
        let object = format!(
            "snapshot {} (id {})",
            crate::error::shown(name),
            crate::error::shown(id)
        );
        self.need_global("register_snapshot", Action::Admin)?;
        let result = self.host.register_snapshot(id, name).await;
        let object = match &result {
            Ok(info) => format!("{object} of {}", table_object(&info.table)),
            Err(_) => object,
        };
        self.audited("register_snapshot", &object, result)
    }

    /// [`Host::move_region`]: ADMIN globally.
    pub async fn move_region(&self, region: &str, to: &str) -> Result<String, ServiceError> {
        let object = format!("region {}", crate::error::shown(region));
        self.need_global("move", Action::Admin)?;
        let result = self.host.move_region(region, to).await;
        self.audited("move", &object, result)
    }

    /// [`Host::balance_switch`]: ADMIN globally.
    pub async fn balance_switch(&self, on: bool) -> Result<bool, ServiceError> {
        self.need_global("balance_switch", Action::Admin)?;
        let result = self.host.balance_switch(on).await;
        self.audited("balance_switch", if on { "on" } else { "off" }, result)
    }

    /// [`Host::balance`]: ADMIN globally.
    pub fn balance(&self) -> Result<bool, ServiceError> {
        self.need_global("balance", Action::Admin)?;
        self.audited("balance", "balancer", Ok(self.host.balance()))
    }

    /// [`Host::register_split`]: ADMIN globally (servers call it).
    pub async fn register_split(
        &self,
        server: &str,
        table: &str,
        parent: &str,
        children: Vec<RegionRecord>,
    ) -> Result<(), ServiceError> {
        self.need_global("register_split", Action::Admin)?;
        let result = self
            .host
            .register_split(server, table, parent, children)
            .await;
        self.audited("register_split", &table_object(table), result)
    }

    /// Cluster mode, for another server: frames of `blocks` from this
    /// server's L2 (a server's token: global admin).
    pub async fn peer_blocks(
        &self,
        blocks: &[shoal_storage::sst::BlockAddr],
    ) -> Result<Vec<Option<bytes::Bytes>>, ServiceError> {
        self.need_global("peer_blocks", Action::Admin)?;
        self.host.peer_blocks(blocks).await
    }

    /// Cluster mode, for a region's next owner: stop answering reads of
    /// `region` from its closed copy (a server's token: global admin).
    /// Returns the closed copy's cached rows, up to `max_row_bytes`; with
    /// `keep_reads`, only those (its reads go on).
    pub async fn end_move_reads(
        &self,
        region: &str,
        next_owner: &str,
        max_row_bytes: u64,
        keep_reads: bool,
    ) -> Result<shoal_storage::region::RowBundle, ServiceError> {
        self.need_global("end_move_reads", Action::Admin)?;
        self.host
            .end_move_reads(region, next_owner, max_row_bytes, keep_reads)
            .await
    }

    // ---- permissions

    fn need_grant_admin(&self, op: &str, scope: &Scope) -> Result<(), ServiceError> {
        match scope {
            Scope::Global => self.need_global(op, Action::Admin),
            Scope::Namespace(ns) => {
                if self.free()
                    || self
                        .security()
                        .acl()
                        .namespace(self.caller.user(), ns, Action::Admin)
                {
                    return Ok(());
                }
                self.need_global(op, Action::Admin)
            }
            Scope::Table(t) | Scope::Family(t, _) => self.need_table(op, t, &[Action::Admin]),
        }
    }

    /// Grants (replacing what the user held at the scope) or revokes.
    pub async fn change_grant(&self, spec: &GrantSpec, revoke: bool) -> Result<(), ServiceError> {
        let op = if revoke { "revoke" } else { "grant" };
        self.need_grant_admin(op, &spec.scope)?;
        let object = spec.scope.to_string();
        let result = self.host.change_grant(spec).await.and_then(|changed| {
            if revoke && !changed {
                Err(ServiceError::FailedPrecondition(format!(
                    "user {} holds nothing on {object} to revoke",
                    crate::error::shown(&spec.user)
                )))
            } else {
                Ok(())
            }
        });
        let detail = if revoke {
            format!("user={}", spec.user)
        } else {
            format!("user={} actions={}", spec.user, spec.actions.letters())
        };
        let (outcome, detail) = match &result {
            Ok(()) => (Outcome::Ok, detail),
            Err(e) => (Outcome::Failed, format!("{detail}: {e}")),
        };
        self.security()
            .audit()
            .record(self.caller, op, &object, outcome, &detail);
        result
    }

    /// The grants on `table` (empty: all; `@ns`: on namespace `ns`), of
    /// `user` (empty: everyone). ADMIN (globally, or on the table or
    /// namespace) sees others' grants; anyone sees their own.
    pub async fn user_permissions(
        &self,
        table: &str,
        user: &str,
    ) -> Result<Vec<GrantRecord>, ServiceError> {
        let own = !user.is_empty() && user == self.caller.user();
        if !own {
            let scope = if table.is_empty() {
                Scope::Global
            } else if let Some(ns) = table.strip_prefix('@') {
                Scope::Namespace(ns.to_string())
            } else {
                Scope::Table(table.to_string())
            };
            self.need_grant_admin("user_permission", &scope)?;
        }
        Ok(self
            .host
            .grants()
            .await
            .into_iter()
            .filter(|g| match table.strip_prefix('@') {
                _ if table.is_empty() => true,
                Some(ns) => g.namespace.as_deref() == Some(ns),
                None => g.table.as_deref() == Some(crate::catalog::names::canonical(table)),
            })
            .filter(|g| user.is_empty() || g.user == user)
            .collect())
    }
}

/// How an audit line names snapshot `name` of `table`.
fn snapshot_object(name: &str, table: &str) -> String {
    format!(
        "snapshot {} of {}",
        crate::error::shown(name),
        table_object(table)
    )
}
