//! Membership and the master: each server is a key under
//! `<prefix>/servers/<name>` bound to its lease, so a server that dies (or
//! is cut off from etcd for longer than its TTL) leaves the member list by
//! itself; the master is the server whose name holds `<prefix>/master`, also
//! bound to its lease, taken with a create-if-absent transaction, so at most
//! one holds it and a successor takes it once it lapses.

use crate::etcd::{Etcd, EtcdError};
use crate::lease::KeptLease;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What a server says about itself in etcd (JSON, versioned).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberInfo {
    /// Format version (1).
    pub v: u32,
    /// Its name in the cluster.
    pub name: String,
    /// Where clients and servers reach its gRPC API.
    pub addr: String,
    /// When it joined, ms since the Unix epoch.
    pub joined_ms: u64,
    /// The WAL run it writes now (its regions' edits not yet flushed are
    /// there): a run no record and no member names can be deleted.
    #[serde(default)]
    pub wal: String,
    /// Where HBase's Java client reaches it (its native RPC, `host:port`);
    /// empty when it does not serve one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hbase: String,
}

/// Why joining failed.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// etcd failed.
    #[error(transparent)]
    Etcd(#[from] EtcdError),
    /// Another live server has the name.
    #[error(
        "a server named {0:?} is already in the cluster; give each server its own [cluster] name"
    )]
    NameTaken(String),
}

/// This server's membership: its lease and its key.
#[derive(Debug)]
pub struct Membership {
    etcd: Etcd,
    prefix: String,
    info: MemberInfo,
    lease: KeptLease,
}

fn servers_prefix(prefix: &str) -> String {
    format!("{prefix}/servers/")
}

fn draining_prefix(prefix: &str) -> String {
    format!("{prefix}/draining/")
}

fn master_key(prefix: &str) -> String {
    format!("{prefix}/master")
}

impl Membership {
    /// Joins the cluster under `prefix` as `name` at `addr`, writing the WAL
    /// run `wal`, with a lease of `ttl`. Refused if a live server already
    /// has the name.
    pub async fn join(
        etcd: &Etcd,
        prefix: &str,
        name: &str,
        addr: &str,
        wal: &str,
        ttl: Duration,
    ) -> Result<Membership, JoinError> {
        Membership::join_with_native(etcd, prefix, name, addr, wal, ttl, "").await
    }

    /// As [`Membership::join`], also announcing the native-RPC address
    /// `hbase` (HBase's Java client; empty: none).
    pub async fn join_with_native(
        etcd: &Etcd,
        prefix: &str,
        name: &str,
        addr: &str,
        wal: &str,
        ttl: Duration,
        hbase: &str,
    ) -> Result<Membership, JoinError> {
        let lease = KeptLease::grant(etcd, ttl).await?;
        let info = MemberInfo {
            v: 1,
            name: name.to_owned(),
            addr: addr.to_owned(),
            joined_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            wal: wal.to_owned(),
            hbase: hbase.to_owned(),
        };
        let value = serde_json::to_vec(&info).unwrap_or_default();
        let key = format!("{}{name}", servers_prefix(prefix));
        if !etcd
            .compare_and_swap(key.as_bytes(), 0, &value, lease.id())
            .await?
        {
            // Leave nothing behind: the lease is ours alone.
            let _ = lease.revoke().await;
            return Err(JoinError::NameTaken(name.to_owned()));
        }
        tracing::info!(name, addr, lease = lease.id(), "joined the cluster");
        Ok(Membership {
            etcd: etcd.clone(),
            prefix: prefix.to_owned(),
            info,
            lease,
        })
    }

    /// This server as the cluster sees it.
    pub fn info(&self) -> &MemberInfo {
        &self.info
    }

    /// The lease (its id binds keys to this server's life).
    pub fn lease(&self) -> &KeptLease {
        &self.lease
    }

    /// True while this server holds its lease by its own clock: it may
    /// acknowledge writes only then.
    pub fn is_member(&self) -> bool {
        self.lease.is_held()
    }

    /// Tries to become master; true if this server is master now.
    pub async fn campaign(&self) -> Result<bool, EtcdError> {
        Ok(self.campaign_for_master().await?.as_deref() == Some(self.info.name.as_str()))
    }

    /// Tries to become master; returns who is master after the attempt
    /// (this server's name if it is). One etcd transaction: it creates the
    /// master key, or reads its holder.
    pub async fn campaign_for_master(&self) -> Result<Option<String>, EtcdError> {
        let key = master_key(&self.prefix);
        let me = self.info.name.as_bytes();
        let (created, holder) = self
            .etcd
            .create_or_read(key.as_bytes(), me, self.lease.id())
            .await?;
        if created {
            tracing::info!(name = %self.info.name, "became master");
            return Ok(Some(self.info.name.clone()));
        }
        Ok(holder.map(|kv| String::from_utf8_lossy(&kv.value).into_owned()))
    }

    /// Says this server is stopping: the master moves its regions away and
    /// gives it no more (the key goes with the lease).
    pub async fn drain(&self) -> Result<(), EtcdError> {
        let key = format!("{}{}", draining_prefix(&self.prefix), self.info.name);
        self.etcd
            .put(key.as_bytes(), b"1", self.lease.id())
            .await
            .map(|_| ())
    }

    /// Leaves at once: the lease is revoked, so the member key (and the
    /// master key, if held) go now rather than after the TTL.
    pub async fn leave(self) -> Result<(), EtcdError> {
        tracing::info!(name = %self.info.name, "leaving the cluster");
        self.lease.revoke().await
    }
}

/// The live members under `prefix`, by name.
pub async fn members(etcd: &Etcd, prefix: &str) -> Result<Vec<MemberInfo>, EtcdError> {
    let (kvs, _) = etcd.get_prefix(servers_prefix(prefix).as_bytes()).await?;
    Ok(kvs
        .into_iter()
        .filter_map(|kv| match serde_json::from_slice::<MemberInfo>(&kv.value) {
            Ok(info) => Some(info),
            Err(e) => {
                tracing::warn!(key = %String::from_utf8_lossy(&kv.key), error = %e, "unreadable member record; skipped");
                None
            }
        })
        .collect())
}

/// The master's name, if one holds the key.
pub async fn master(etcd: &Etcd, prefix: &str) -> Result<Option<String>, EtcdError> {
    Ok(etcd
        .get(master_key(prefix).as_bytes())
        .await?
        .map(|kv| String::from_utf8_lossy(&kv.value).into_owned()))
}

/// The servers that said they are stopping, by name.
pub async fn draining(etcd: &Etcd, prefix: &str) -> Result<Vec<String>, EtcdError> {
    let p = draining_prefix(prefix);
    let (kvs, _) = etcd.get_prefix(p.as_bytes()).await?;
    Ok(kvs
        .into_iter()
        .filter_map(|kv| {
            String::from_utf8_lossy(&kv.key)
                .strip_prefix(&p)
                .map(str::to_owned)
        })
        .collect())
}
