//! The server's settings: a TOML file (`--config`), every key documented in
//! `docs/config.md` with its default. Unknown keys and bad values are refused
//! at startup with a message naming the key.
//!
//! One file per section, each with its defaults and a `validate` that checks
//! that section alone and names the offending key: `server`, `object_store`,
//! `wal`, `cache`, `regions`, `memstore`, `limits`, `cluster`, `thrift`,
//! `rest`, `hbase_rpc`, `zk_registry`, `security` (`[tls]` and `[auth]`), `snapshots`. `units` holds what values
//! are written in (`ByteSize`, durations). This file holds the whole
//! [`ServerConfig`], its loading, and the checks that span sections
//! (listeners that would share a port, what cluster mode needs of TLS and
//! the WAL). Sections import `units`, never this file nor each other.

pub mod cache;
pub mod cluster;
pub mod hbase_rpc;
pub mod limits;
pub mod memstore;
pub mod object_store;
pub mod regions;
pub mod rest;
pub mod security;
pub mod server;
pub mod snapshots;
pub mod thrift;
mod units;
pub mod wal;
pub mod zk_registry;

pub use cache::CacheSection;
pub use cluster::ClusterSection;
pub use hbase_rpc::HbaseRpcSection;
pub use limits::LimitsSection;
pub use memstore::{MemstoreSection, machine_memory};
pub use object_store::ObjectStoreSection;
pub use regions::RegionsSection;
pub use rest::RestSection;
pub use security::{AuthSection, TlsListenerName, TlsSection, valid_user};
pub use server::ServerSection;
pub use shoal_storage::object::Emulation;
pub use snapshots::{PointInTime, SnapshotsSection};
pub use thrift::{ThriftProtocol, ThriftSection, ThriftTransport};
pub use units::ByteSize;
pub use wal::{WalBackendName, WalSection};
pub use zk_registry::ZkRegistrySection;

use serde::Deserialize;
use std::path::PathBuf;

/// Why the configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML is malformed, has an unknown key, or a value of the wrong type.
    #[error("config file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (names the key and line).
        message: String,
    },
    /// A value is out of range.
    #[error("config key `{key}`: {message}")]
    Invalid {
        /// The dotted key, e.g. `cache.l2_capacity`.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// Everything `shoal serve` can be told.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Listening addresses and the data directory.
    pub server: ServerSection,
    /// Where durable data lives.
    pub object_store: ObjectStoreSection,
    /// The write-ahead log.
    pub wal: WalSection,
    /// The block cache.
    pub cache: CacheSection,
    /// Region sizes, splits, compactions.
    pub regions: RegionsSection,
    /// Memstore limits, in-memory compaction and flush scheduling.
    pub memstore: MemstoreSection,
    /// How much work one request may ask for.
    pub limits: LimitsSection,
    /// Cluster mode (etcd); absent = a single node with no etcd.
    pub cluster: Option<ClusterSection>,
    /// HBase's Thrift1 gateway (happybase).
    pub thrift: ThriftSection,
    /// HBase's REST gateway.
    pub rest: RestSection,
    /// HBase's native RPC (the Java client).
    pub hbase_rpc: HbaseRpcSection,
    /// The read-only ZooKeeper registry (clients that find HBase there).
    pub zk_registry: ZkRegistrySection,
    /// TLS on the listeners.
    pub tls: TlsSection,
    /// Tokens, permissions and the audit log.
    pub auth: AuthSection,
    /// The point-in-time window.
    pub snapshots: SnapshotsSection,
}
impl ServerConfig {
    /// Reads and checks a TOML file.
    pub fn from_file(path: &std::path::Path) -> Result<ServerConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let config = ServerConfig::from_toml(&text).map_err(|e| match e {
            ConfigError::Parse { message, .. } => ConfigError::Parse {
                path: path.to_owned(),
                message,
            },
            other => other,
        })?;
        Ok(config)
    }

    /// Parses and checks TOML text.
    pub fn from_toml(text: &str) -> Result<ServerConfig, ConfigError> {
        let config: ServerConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: PathBuf::from("<inline>"),
            message: e.to_string(),
        })?;
        config.validate()?;
        Ok(config)
    }
    /// Checks ranges; the error names the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.server.validate().map_err(invalid)?;
        self.validate_listeners()?;
        self.tls.validate().map_err(invalid)?;
        self.auth
            .validate(self.thrift.enabled, self.cluster.is_some())
            .map_err(invalid)?;
        self.validate_cluster()?;
        self.wal.validate().map_err(invalid)?;
        self.regions.validate().map_err(invalid)?;
        self.memstore
            .validate(self.regions.flush_size)
            .map_err(invalid)?;
        self.cache.validate().map_err(invalid)?;
        self.object_store
            .resolve(&self.objects_dir())
            .map_err(invalid)?;
        self.limits.validate().map_err(invalid)?;
        self.snapshots.validate().map_err(invalid)?;
        if self.snapshots.point_in_time_window.is_some()
            && self.wal.backend != WalBackendName::Object
        {
            return Err(invalid((
                "wal.backend",
                "snapshots.point_in_time_window needs \"object\": a local WAL is deleted once \
                 flushed and lives on one machine, so it cannot replay the window's writes"
                    .into(),
            )));
        }
        Ok(())
    }

    /// The Thrift and native RPC sections, and that neither listens where
    /// another listener already does.
    fn validate_listeners(&self) -> Result<(), ConfigError> {
        self.thrift.validate().map_err(invalid)?;
        if self.thrift.enabled
            && self.thrift.addr.port() != 0
            && [self.server.grpc_addr, self.server.http_addr].contains(&self.thrift.addr)
        {
            return Err(invalid((
                "thrift.addr",
                format!(
                    "{} is already server.grpc_addr or server.http_addr",
                    self.thrift.addr
                ),
            )));
        }
        self.validate_rest()?;
        self.hbase_rpc.validate().map_err(invalid)?;
        if self.hbase_rpc.enabled
            && self.hbase_rpc.addr.port() != 0
            && [
                self.server.grpc_addr,
                self.server.http_addr,
                self.thrift.addr,
            ]
            .contains(&self.hbase_rpc.addr)
        {
            return Err(invalid((
                "hbase_rpc.addr",
                format!(
                    "{} is already server.grpc_addr, server.http_addr or thrift.addr",
                    self.hbase_rpc.addr
                ),
            )));
        }
        self.validate_zk_registry()
    }

    /// The `[zk_registry]` section, and what it needs of the rest: the
    /// native RPC it tells clients of, and a port of its own.
    fn validate_zk_registry(&self) -> Result<(), ConfigError> {
        let zk = &self.zk_registry;
        zk.validate().map_err(invalid)?;
        if !zk.enabled {
            return Ok(());
        }
        if !self.hbase_rpc.enabled {
            return Err(invalid((
                "zk_registry.enabled",
                "the ZooKeeper registry tells clients where HBase's native RPC is: turn \
                 hbase_rpc.enabled on too"
                    .into(),
            )));
        }
        let others = [
            self.server.grpc_addr,
            self.server.http_addr,
            self.thrift.addr,
            self.hbase_rpc.addr,
        ];
        if zk.addr.port() != 0 && others.contains(&zk.addr) {
            return Err(invalid((
                "zk_registry.addr",
                format!(
                    "{} is already server.grpc_addr, server.http_addr, thrift.addr or hbase_rpc.addr",
                    zk.addr
                ),
            )));
        }
        Ok(())
    }

    /// The `[rest]` section, and that it does not listen where gRPC, HTTP
    /// or Thrift does.
    fn validate_rest(&self) -> Result<(), ConfigError> {
        self.rest.validate().map_err(invalid)?;
        if self.rest.enabled
            && self.rest.addr.port() != 0
            && [
                self.server.grpc_addr,
                self.server.http_addr,
                self.thrift.addr,
                self.hbase_rpc.addr,
            ]
            .contains(&self.rest.addr)
        {
            return Err(invalid((
                "rest.addr",
                format!(
                    "{} is already server.grpc_addr, server.http_addr, thrift.addr or hbase_rpc.addr",
                    self.rest.addr
                ),
            )));
        }
        Ok(())
    }

    /// The `[cluster]` section, and what cluster mode needs of the rest: a
    /// CA to call other servers with when TLS is on, and the object WAL.
    fn validate_cluster(&self) -> Result<(), ConfigError> {
        if self.cluster.is_some() && self.tls.enabled() && self.tls.ca.as_os_str().is_empty() {
            return Err(invalid((
                "tls.ca",
                "cluster mode with TLS: name the CA this server trusts when it calls another \
                 server"
                    .into(),
            )));
        }
        if let Some(cluster) = &self.cluster {
            cluster.validate().map_err(invalid)?;
            if self.wal.backend != WalBackendName::Object {
                return Err(invalid((
                    "wal.backend",
                    "cluster mode needs \"object\": a local WAL dies with its machine, and the \
                     server that takes over this one's regions could not replay it"
                        .into(),
                )));
            }
        }
        Ok(())
    }

    /// The WAL directory.
    pub fn wal_dir(&self) -> PathBuf {
        if self.wal.dir.as_os_str().is_empty() {
            self.server.data_dir.join("wal")
        } else {
            self.wal.dir.clone()
        }
    }

    /// The L2 cache directory.
    pub fn l2_dir(&self) -> PathBuf {
        if self.cache.l2_dir.as_os_str().is_empty() {
            self.server.data_dir.join("cache")
        } else {
            self.cache.l2_dir.clone()
        }
    }

    /// The object store directory of the embedded default.
    pub fn objects_dir(&self) -> PathBuf {
        self.server.data_dir.join("objects")
    }
}

/// A section's `(key, message)` as the error that refuses the file.
fn invalid((key, message): (&str, String)) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The documented example is valid, spells out every default, and the
    /// key table lists every key it has.
    #[test]
    fn docs_config_md_matches_the_code() {
        let doc = include_str!("../../../../docs/config.md");
        let start = doc.find("```toml").unwrap() + "```toml".len();
        let end = start + doc[start..].find("```").unwrap();
        let example = &doc[start..end];
        let parsed = ServerConfig::from_toml(example).unwrap();
        let defaults = ServerConfig::default();
        assert_eq!(format!("{parsed:?}"), format!("{defaults:?}"));
        let mut section = String::new();
        for line in example.lines() {
            let line = line.trim();
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = name.to_string();
            } else if let Some((key, _)) = line.split_once('=') {
                let full = format!("`{section}.{}`", key.trim());
                assert!(
                    doc.contains(&format!("| {full} |")),
                    "{full} is not in the key table"
                );
            }
        }
    }

    /// The documented cluster example (the second TOML block) is valid,
    /// gives the cluster section's defaults, and each of its keys is in the
    /// key table; without the object WAL it is refused naming the key.
    #[test]
    fn docs_cluster_example_matches_the_code() {
        let doc = include_str!("../../../../docs/config.md");
        let first = doc.find("```toml").unwrap() + "```toml".len();
        let start = first + doc[first..].find("```toml").unwrap() + "```toml".len();
        let end = start + doc[start..].find("```").unwrap();
        let example = &doc[start..end];
        let parsed = ServerConfig::from_toml(example).unwrap();
        let cluster = parsed.cluster.expect("a [cluster] table");
        let defaults = ClusterSection::default();
        assert_eq!(cluster.etcd, vec!["http://127.0.0.1:2379".to_string()]);
        assert_eq!(cluster.lease_ttl, defaults.lease_ttl);
        assert_eq!(cluster.prefix, defaults.prefix);
        for key in ["etcd", "name", "advertise_addr", "lease_ttl", "prefix"] {
            assert!(doc.contains(&format!("| `cluster.{key}` |")), "{key}");
        }
        let local = example.replace("backend = \"object\"", "backend = \"local\"");
        let e = ServerConfig::from_toml(&local).unwrap_err();
        assert!(e.to_string().contains("wal.backend"), "{e}");
    }

    /// The documented TLS and auth example is valid and each of its keys
    /// is in the key table.
    #[test]
    fn docs_security_example_matches_the_code() {
        let doc = include_str!("../../../../docs/config.md");
        let at = doc.find("```toml\n[tls]").expect("the [tls] example") + "```toml".len();
        let end = at + doc[at..].find("```").unwrap();
        let example = &doc[at..end];
        let parsed = ServerConfig::from_toml(example).unwrap();
        assert!(parsed.tls.enabled() && parsed.auth.enabled);
        assert_eq!(parsed.auth.superusers, vec!["admin".to_string()]);
        let mut section = String::new();
        for line in example.lines() {
            let line = line.trim();
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = name.to_string();
            } else if let Some((key, _)) = line.split_once('=') {
                let key = key.trim();
                let alone = format!("| `{section}.{key}` |");
                let paired = format!("`{section}.{key}`,");
                let second = format!(", `{section}.{key}` |");
                assert!(
                    doc.contains(&alone) || doc.contains(&paired) || doc.contains(&second),
                    "{section}.{key} is not in the key table"
                );
            }
        }
    }

    #[test]
    fn empty_file_gives_defaults() {
        let c = ServerConfig::from_toml("").unwrap();
        assert_eq!(c.server.grpc_addr.port(), 7070);
        assert_eq!(c.regions.flush_size, ByteSize(128 << 20));
        assert_eq!(c.wal_dir(), PathBuf::from("./shoal-data/wal"));
    }

    #[test]
    fn the_rest_section_is_read_and_checked() {
        let c = ServerConfig::from_toml(
            "[rest]\naddr = \"127.0.0.1:18080\"\nmax_scanners = 5\nscanner_timeout = \"30s\"\nmax_body_bytes = \"1MiB\"",
        )
        .unwrap();
        assert_eq!(c.rest.addr.port(), 18080);
        assert_eq!(c.rest.max_scanners, 5);
        assert_eq!(c.rest.scanner_timeout, Duration::from_secs(30));
        assert_eq!(c.rest.max_body_bytes, ByteSize(1 << 20));
        for (text, key) in [
            ("[rest]\naddr = \"127.0.0.1:9090\"", "rest.addr"),
            ("[rest]\nmax_body_bytes = 10", "rest.max_body_bytes"),
            ("[rest]\nscanner_timeout = \"10ms\"", "rest.scanner_timeout"),
        ] {
            let err = ServerConfig::from_toml(text).unwrap_err().to_string();
            assert!(err.contains(key), "{text}: {err}");
        }
        let off = ServerConfig::from_toml("[rest]\nenabled = false\naddr = \"127.0.0.1:9090\"");
        assert!(off.is_ok(), "a gateway turned off may name any address");
    }

    #[test]
    fn sizes_and_durations_parse() {
        let c = ServerConfig::from_toml(
            "[cache]\nl2_capacity = \"1 GiB\"\nl1_data = 1048576\nl1_rows = \"32MiB\"\nl2_page_cache = false\n[regions]\nsplit_check_interval = \"2s\"\nsplit_size = \"3GB\"",
        )
        .unwrap();
        assert_eq!(c.cache.l2_capacity, ByteSize(1 << 30));
        assert_eq!(c.cache.l1_data, ByteSize(1 << 20));
        assert_eq!(c.cache.l1_rows, ByteSize(32 << 20));
        assert!(!c.cache.l2_page_cache);
        assert_eq!(
            ServerConfig::from_toml("").unwrap().cache.l1_rows,
            ByteSize(64 << 20)
        );
        assert_eq!(c.regions.split_check_interval, Duration::from_secs(2));
        assert_eq!(c.regions.split_size, ByteSize(3_000_000_000));
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key() {
        let e = ServerConfig::from_toml("[cache]\nl2_capacty = 5").unwrap_err();
        assert!(e.to_string().contains("l2_capacty"), "{e}");
        let e = ServerConfig::from_toml("[nope]\nx = 1").unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
        let e = ServerConfig::from_toml("[cache]\nl2_capacity = \"12 parsecs\"").unwrap_err();
        assert!(e.to_string().contains("parsecs"), "{e}");
        let e = ServerConfig::from_toml("[regions]\nflush_size = 10").unwrap_err();
        assert!(e.to_string().contains("regions.flush_size"), "{e}");
        let e = ServerConfig::from_toml("[server]\ngrpc_addr = \"localhost\"").unwrap_err();
        assert!(e.to_string().contains("grpc_addr"), "{e}");
        let e = ServerConfig::from_toml("[regions]\nsplit_check_interval = \"soon\"").unwrap_err();
        assert!(e.to_string().contains("soon"), "{e}");
        let e = ServerConfig::from_toml("[memstore]\nflush_watermark = 1.5").unwrap_err();
        assert!(e.to_string().contains("memstore.flush_watermark"), "{e}");
        let e = ServerConfig::from_toml("[memstore]\nin_memory_flush_size = \"1KiB\"").unwrap_err();
        assert!(
            e.to_string().contains("memstore.in_memory_flush_size"),
            "{e}"
        );
        let e = ServerConfig::from_toml("[server]\nidle_timeout = \"10ms\"").unwrap_err();
        assert!(e.to_string().contains("server.idle_timeout"), "{e}");
        let e = ServerConfig::from_toml("[server]\nmax_connections = 0").unwrap_err();
        assert!(e.to_string().contains("server.max_connections"), "{e}");
        let e = ServerConfig::from_toml("[server]\nmax_streams_per_connection = 0").unwrap_err();
        assert!(
            e.to_string().contains("server.max_streams_per_connection"),
            "{e}"
        );
        let e = ServerConfig::from_toml("[regions]\nbackground_nice = 25").unwrap_err();
        assert!(e.to_string().contains("regions.background_nice"), "{e}");
    }

    /// The ZooKeeper registry needs the native RPC it points at, and a
    /// port of its own.
    #[test]
    fn zk_registry_needs_the_native_rpc_and_its_own_port() {
        let on = "[zk_registry]\nenabled = true\n";
        let c = ServerConfig::from_toml(on).unwrap();
        assert_eq!(c.zk_registry.addr.port(), 2181);
        let e =
            ServerConfig::from_toml(&format!("{on}[hbase_rpc]\nenabled = false\n")).unwrap_err();
        assert!(e.to_string().contains("zk_registry.enabled"), "{e}");
        let e = ServerConfig::from_toml(&format!("{on}addr = \"127.0.0.1:16020\"\n")).unwrap_err();
        assert!(e.to_string().contains("zk_registry.addr"), "{e}");
        let e = ServerConfig::from_toml("[zk_registry]\nznode_parent = \"hbase\"").unwrap_err();
        assert!(e.to_string().contains("zk_registry.znode_parent"), "{e}");
    }
}
