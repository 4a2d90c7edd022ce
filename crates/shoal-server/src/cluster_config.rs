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
    #[serde(with = "crate::config::humantime_serde_compat")]
    pub lease_ttl: Duration,
    /// Key prefix of this cluster in etcd (default `/shoal`), so clusters can
    /// share an etcd.
    pub prefix: String,
}

impl Default for ClusterSection {
    fn default() -> Self {
        ClusterSection {
            etcd: Vec::new(),
            name: String::new(),
            advertise_addr: String::new(),
            lease_ttl: Duration::from_secs(3),
            prefix: "/shoal".into(),
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
    }
}
