//! A read-only ZooKeeper-protocol registry (`[zk_registry]`): the few
//! reads with which clients that find HBase through ZooKeeper
//! (`hbase-client` 2.0–2.4, asynchbase, HBase's MapReduce tools reading
//! `/hbase/hbaseid`) learn the cluster id, the active master and where
//! `hbase:meta` is — then they talk to Shoal's native RPC. It is not a
//! coordination service: no writes, no watches that fire, no sessions
//! that expire, no quorum.
//!
//! - `jute`: ZooKeeper's record encoding.
//! - `messages`: the connect, header, `Stat` records and the op and error
//!   numbers.
//! - `znodes`: the tree under `znode_parent`, made from the facts every
//!   registry door tells (`crate::hbase_rpc::registry_facts`).
//! - `requests`: one request answered (pure).
//! - `session`: one connection's frames, opening and requests.
//! - `listener`: the port, its connection cap.
//!
//! `docs/hbase-client.md` says what is served and what is refused.

mod jute;
mod listener;
mod messages;
mod requests;
mod session;
mod znodes;

pub use listener::{ZkLimits, serve_zk_registry};

use crate::config::ZkRegistrySection;
use crate::hbase_rpc::ServerIdentity;
use crate::hbase_rpc::registry_facts::{RegistryFacts, cluster_id_of};
use crate::host::Host;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use znodes::Tree;

/// The registry's state, shared by its connections.
pub struct ZkRegistry {
    host: Host,
    /// The native RPC clients are sent to.
    me: ServerIdentity,
    parent: String,
    cluster_id: String,
    started_ms: i64,
    min_timeout: Duration,
    max_timeout: Duration,
    /// The next session number (the high bits are the start time).
    sessions: AtomicU64,
}

impl ZkRegistry {
    /// The registry of `host`, whose native RPC is `me`.
    pub fn new(host: Host, me: ServerIdentity, section: &ZkRegistrySection) -> ZkRegistry {
        let started_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        ZkRegistry {
            cluster_id: cluster_id_of(&host.data_location()),
            host,
            me,
            parent: section.znode_parent.clone(),
            started_ms,
            min_timeout: section.min_session_timeout,
            max_timeout: section.max_session_timeout,
            // Like ZooKeeper's: time in the high bits, a count below.
            sessions: AtomicU64::new(((started_ms as u64) << 24) | 1),
        }
    }

    /// The tree as the facts are now.
    fn tree(&self) -> Tree<'_> {
        Tree {
            parent: &self.parent,
            cluster_id: &self.cluster_id,
            me: &self.me,
            facts: RegistryFacts::now(&self.host, &self.me),
            started_ms: self.started_ms,
        }
    }

    /// The session timeout a client asking `asked_ms` gets.
    fn negotiate(&self, asked_ms: i32) -> Duration {
        let asked = Duration::from_millis(u64::try_from(asked_ms).unwrap_or(0));
        asked.clamp(self.min_timeout, self.max_timeout)
    }

    /// The session a client resuming `asked` (0: a new one) gets.
    fn session_for(&self, asked: i64) -> i64 {
        if asked != 0 {
            return asked;
        }
        (self.sessions.fetch_add(1, Ordering::Relaxed) & (i64::MAX as u64)) as i64
    }

    /// A session password (checked by nothing: sessions hold nothing).
    fn password(&self) -> [u8; 16] {
        rand::random()
    }
}
