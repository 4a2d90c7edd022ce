//! `[zk_registry]`: a read-only ZooKeeper-protocol registry, so that
//! clients which find HBase through ZooKeeper (`hbase-client` 2.0–2.4,
//! asynchbase, HBase's MapReduce tools) find Shoal's native RPC. Off by
//! default; it needs `[hbase_rpc]`, whose address it tells. Defaults as a
//! ZooKeeper server's: port 2181, sessions of 4s to 40s.

use serde::Deserialize;
use std::net::SocketAddr;
use std::time::Duration;

/// `[zk_registry]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZkRegistrySection {
    /// Serve the registry (default false).
    pub enabled: bool,
    /// Where it listens (default `127.0.0.1:2181`, ZooKeeper's client
    /// port).
    pub addr: SocketAddr,
    /// The znode HBase's data hangs under (default `/hbase`, HBase's
    /// `zookeeper.znode.parent`).
    pub znode_parent: String,
    /// Open connections at most (default 1,000); more are closed at once.
    pub max_connections: usize,
    /// A client asking a shorter session gets this (default 4s, ZooKeeper's
    /// `minSessionTimeout`).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub min_session_timeout: Duration,
    /// A client asking a longer session gets this (default 40s,
    /// ZooKeeper's `maxSessionTimeout`). A connection silent for its
    /// session's timeout is closed (clients ping at a third of it).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub max_session_timeout: Duration,
}

impl Default for ZkRegistrySection {
    fn default() -> Self {
        ZkRegistrySection {
            enabled: false,
            addr: SocketAddr::from(([127, 0, 0, 1], 2181)),
            znode_parent: "/hbase".to_string(),
            max_connections: 1_000,
            min_session_timeout: Duration::from_secs(4),
            max_session_timeout: Duration::from_secs(40),
        }
    }
}

impl ZkRegistrySection {
    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let p = &self.znode_parent;
        let valid_parent = p.starts_with('/')
            && p.len() > 1
            && !p.ends_with('/')
            && !p.contains("//")
            && p.len() <= 1024
            && p.split('/').skip(1).all(|c| c != "." && c != "..");
        if !valid_parent {
            return Err((
                "zk_registry.znode_parent",
                format!("must be an absolute znode path such as \"/hbase\", got {p:?}"),
            ));
        }
        if !(1..=100_000).contains(&self.max_connections) {
            return Err((
                "zk_registry.max_connections",
                format!("must be between 1 and 100000, got {}", self.max_connections),
            ));
        }
        if self.min_session_timeout < Duration::from_secs(1) {
            return Err((
                "zk_registry.min_session_timeout",
                format!("must be at least 1s, got {:?}", self.min_session_timeout),
            ));
        }
        if self.max_session_timeout < self.min_session_timeout
            || self.max_session_timeout > Duration::from_secs(3600)
        {
            return Err((
                "zk_registry.max_session_timeout",
                format!(
                    "must be between zk_registry.min_session_timeout ({:?}) and 1h, got {:?}",
                    self.min_session_timeout, self.max_session_timeout
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_are_named() {
        assert!(ZkRegistrySection::default().validate().is_ok());
        for bad in ["hbase", "/", "/hbase/", "/a//b", "/a/../b"] {
            let s = ZkRegistrySection {
                znode_parent: bad.into(),
                ..Default::default()
            };
            assert_eq!(s.validate().unwrap_err().0, "zk_registry.znode_parent");
        }
        let s = ZkRegistrySection {
            max_session_timeout: Duration::from_secs(2),
            ..Default::default()
        };
        assert_eq!(
            s.validate().unwrap_err().0,
            "zk_registry.max_session_timeout"
        );
        let s = ZkRegistrySection {
            max_connections: 0,
            ..Default::default()
        };
        assert_eq!(s.validate().unwrap_err().0, "zk_registry.max_connections");
    }
}
