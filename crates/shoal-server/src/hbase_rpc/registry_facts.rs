//! The facts HBase's connection registries tell a client, made from the
//! host's state in one place so that every registry door says the same:
//! the native RPC's `ClientMetaService` (`master.rs`) and the ZooKeeper
//! registry (`crate::zk_registry`). The cluster id, the active master,
//! the server holding `hbase:meta`, and the live servers.
//!
//! On a single node every answer is this server. In a cluster the active
//! master is the master (none while one is being elected: the client asks
//! again); the live servers are every server serving a native RPC; and
//! `hbase:meta` is served by the server answering (each server makes
//! `hbase:meta` from its own view of the cluster), except that a server
//! without its lease has a stale view and names the master (or another
//! live server) instead.

use super::meta::ServerIdentity;
use crate::host::Host;
use shoal_proto::hbase as pb;

/// What a registry says about the cluster, as native-RPC addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryFacts {
    /// The active master's (None while a master is being elected).
    pub master: Option<String>,
    /// Every live server's, this one included, in a stable order.
    pub servers: Vec<String>,
    /// The server clients should read `hbase:meta` from.
    pub meta: String,
}

impl RegistryFacts {
    /// The facts as `me`, the native RPC of `host`, sees them now.
    pub fn now(host: &Host, me: &ServerIdentity) -> RegistryFacts {
        let cluster = host.native_cluster();
        let here = me.address();
        let servers: Vec<String> = match &cluster {
            Some(c) if !c.servers.is_empty() => c.servers.clone(),
            _ => vec![here.clone()],
        };
        let master: Option<String> = match &cluster {
            None => Some(here.clone()),
            Some(c) => c.master.clone(),
        };
        let meta = match &cluster {
            Some(c) if !c.lease_held => master
                .clone()
                .filter(|m| *m != here)
                .or_else(|| servers.iter().find(|s| **s != here).cloned())
                .unwrap_or(here),
            _ => here,
        };
        RegistryFacts {
            master,
            servers,
            meta,
        }
    }

    /// The live servers other than the active master (every live server
    /// can become master, as `GetMasters` answers).
    pub fn backup_masters(&self) -> impl Iterator<Item = &String> {
        self.servers
            .iter()
            .filter(move |s| Some(*s) != self.master.as_ref())
    }
}

/// A server named by its native-RPC address: `me` with its start code,
/// another as HBase names a server it knows only by address (start code 1).
pub fn server_name_at(me: &ServerIdentity, address: &str) -> pb::ServerName {
    if address == me.address() {
        return me.server_name();
    }
    ServerIdentity::parse(address)
        .unwrap_or_else(|| me.clone())
        .server_name()
}

/// The cluster id of the data at `data_location` (stable for one object
/// store): its MD5, shaped as a UUID, as HBase's cluster ids are.
pub fn cluster_id_of(data_location: &str) -> String {
    use md5::{Digest, Md5};
    let d = Md5::digest(data_location.as_bytes());
    let h: String = d.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_ids_look_like_uuids_and_are_stable() {
        let a = cluster_id_of("file:///x");
        assert_eq!(a, cluster_id_of("file:///x"));
        assert_ne!(a, cluster_id_of("file:///y"));
        let parts: Vec<usize> = a.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12]);
    }

    #[test]
    fn servers_are_named_with_start_codes_when_known() {
        let me = ServerIdentity {
            host: "h".into(),
            port: 16020,
            start_code: 77,
        };
        assert_eq!(server_name_at(&me, "h:16020").start_code, Some(77));
        let other = server_name_at(&me, "g:16021");
        assert_eq!(
            (other.host_name.as_str(), other.port, other.start_code),
            ("g", Some(16021), Some(1))
        );
        let f = RegistryFacts {
            master: Some("a:1".into()),
            servers: vec!["a:1".into(), "b:2".into()],
            meta: "a:1".into(),
        };
        assert_eq!(f.backup_masters().collect::<Vec<_>>(), ["b:2"]);
    }
}
