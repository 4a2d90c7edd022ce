//! `[cluster]`: several `shoal serve` processes over one bucket, coordinated
//! by etcd. Absent, the server is today's single node with no etcd.

use serde::Deserialize;
use std::time::Duration;

/// `[cluster]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterSection {
    /// etcd endpoints, e.g. `["http://127.0.0.1:2379"]` (at least one).
    pub etcd: Vec<String>,
    /// This server's name in the cluster; empty = its advertised address.
    pub name: String,
    /// The gRPC address other servers and clients use to reach this one;
    /// empty = the bound gRPC address.
    pub advertise_addr: String,
    /// The etcd lease: a server that misses it for this long is dead, its
    /// regions move (default 3s).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub lease_ttl: Duration,
    /// Key prefix of this cluster in etcd (default `/shoal`), so clusters can
    /// share an etcd.
    pub prefix: String,
    /// Read a region's blocks from the L2 of the server that served it
    /// before, ahead of the object store, after it moved here (default on).
    pub peer_reads: bool,
    /// How long a peer has to answer a block read before the object store
    /// is asked instead (default 50ms); a peer that misses it is skipped
    /// for `peer_backoff`.
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub peer_read_timeout: Duration,
    /// How long a peer that failed or missed its deadline is not asked
    /// (default 30s).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub peer_backoff: Duration,
    /// How long after a region moved here its former owner is asked for its
    /// blocks (default 10m; prefetch-on-open has copied them by then).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub peer_window: Duration,
    /// A server that died or drained (a restart) and is back within this
    /// long gets its regions back, where its L2 holds their blocks; they are
    /// served elsewhere meanwhile (default 30s; 0s: never).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub retain: Duration,
    /// Warm handoff: before a move the master decides (balance, drain, a
    /// server's return), the target copies the region's blocks from the
    /// owner's L2 while the owner serves, for at most this long (default
    /// 5s; 0s: moves are immediate and the blocks follow by peer reads).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub handoff_warmup: Duration,
    /// Placement follows caches (default on): a region with no live owner
    /// goes to the server that served it last, the balancer first moves a
    /// region whose blocks the target still holds, and a draining server's
    /// regions go back to where they were served before, each unless that
    /// server is busier than the least loaded by two. Off: the plain
    /// balancer (least loaded first).
    pub cache_aware: bool,
    /// Reads through a move: a server closing a region for a move the
    /// master or an operator decided goes on answering its reads from the
    /// flushed copy until the next owner has opened it and asks it to stop
    /// (before taking a write), for at most this long (default 2s; 0s:
    /// reads wait for the next owner as writes do).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub move_reads: Duration,
    /// Most regions the master keeps in motion at once for the moves it
    /// decides (a drain's, moves home after a restart, balance), drains
    /// first; unserved regions are placed regardless (default 0: no limit;
    /// 1 moves one region at a time, as HBase's region mover does).
    pub max_moving_regions: usize,
}

impl Default for ClusterSection {
    fn default() -> Self {
        ClusterSection {
            etcd: Vec::new(),
            name: String::new(),
            advertise_addr: String::new(),
            lease_ttl: Duration::from_secs(3),
            prefix: "/shoal".into(),
            peer_reads: true,
            peer_read_timeout: Duration::from_millis(50),
            peer_backoff: Duration::from_secs(30),
            peer_window: Duration::from_secs(600),
            retain: Duration::from_secs(30),
            handoff_warmup: Duration::from_secs(5),
            cache_aware: true,
            move_reads: Duration::from_secs(2),
            max_moving_regions: 0,
        }
    }
}

impl ClusterSection {
    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.etcd.is_empty() {
            return Err((
                "cluster.etcd",
                "needs at least one endpoint, e.g. [\"http://127.0.0.1:2379\"]".into(),
            ));
        }
        for e in &self.etcd {
            if !(e.starts_with("http://") || e.starts_with("https://")) || e.len() < 10 {
                return Err((
                    "cluster.etcd",
                    format!("{e:?} is not an endpoint like \"http://host:2379\""),
                ));
            }
        }
        if !(Duration::from_secs(1)..=Duration::from_secs(60)).contains(&self.lease_ttl) {
            return Err((
                "cluster.lease_ttl",
                format!("must be between 1s and 60s, got {:?}", self.lease_ttl),
            ));
        }
        if !self.advertise_addr.is_empty()
            && self
                .advertise_addr
                .rsplit_once(':')
                .is_none_or(|(host, port)| host.is_empty() || port.parse::<u16>().is_err())
        {
            return Err((
                "cluster.advertise_addr",
                format!(
                    "{:?} is not host:port (the address clients and servers reach this one at)",
                    self.advertise_addr
                ),
            ));
        }
        if !(Duration::from_millis(1)..=Duration::from_secs(10)).contains(&self.peer_read_timeout) {
            return Err((
                "cluster.peer_read_timeout",
                format!(
                    "must be between 1ms and 10s, got {:?}",
                    self.peer_read_timeout
                ),
            ));
        }
        if self.peer_backoff > Duration::from_secs(3600) {
            return Err((
                "cluster.peer_backoff",
                format!("must be at most 1h, got {:?}", self.peer_backoff),
            ));
        }
        if self.peer_window > Duration::from_secs(7 * 24 * 3600) {
            return Err((
                "cluster.peer_window",
                format!("must be at most 7 days, got {:?}", self.peer_window),
            ));
        }
        if self.handoff_warmup > Duration::from_secs(600) {
            return Err((
                "cluster.handoff_warmup",
                format!("must be at most 10m, got {:?}", self.handoff_warmup),
            ));
        }
        if self.move_reads > Duration::from_secs(60) {
            return Err((
                "cluster.move_reads",
                format!("must be at most 60s, got {:?}", self.move_reads),
            ));
        }
        if self.retain > Duration::from_secs(24 * 3600) {
            return Err((
                "cluster.retain",
                format!("must be at most 24h, got {:?}", self.retain),
            ));
        }
        if !self.prefix.starts_with('/') || self.prefix.ends_with('/') {
            return Err((
                "cluster.prefix",
                format!("{:?} must start with '/' and not end with one", self.prefix),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_section_passes_and_each_bad_value_names_its_key() {
        let ok = ClusterSection {
            etcd: vec!["http://127.0.0.1:2379".into()],
            ..ClusterSection::default()
        };
        ok.validate().expect("valid");
        let bad = |f: fn(&mut ClusterSection)| {
            let mut c = ok.clone();
            f(&mut c);
            c.validate().expect_err("refused").0
        };
        assert_eq!(bad(|c| c.etcd.clear()), "cluster.etcd");
        assert_eq!(bad(|c| c.etcd = vec!["localhost".into()]), "cluster.etcd");
        assert_eq!(
            bad(|c| c.lease_ttl = Duration::from_millis(10)),
            "cluster.lease_ttl"
        );
        assert_eq!(
            bad(|c| c.advertise_addr = "nohost".into()),
            "cluster.advertise_addr"
        );
        assert_eq!(bad(|c| c.prefix = "shoal".into()), "cluster.prefix");
        assert_eq!(
            bad(|c| c.peer_read_timeout = Duration::ZERO),
            "cluster.peer_read_timeout"
        );
        assert_eq!(
            bad(|c| c.peer_backoff = Duration::from_secs(7200)),
            "cluster.peer_backoff"
        );
        assert_eq!(
            bad(|c| c.move_reads = Duration::from_secs(61)),
            "cluster.move_reads"
        );
    }
}
