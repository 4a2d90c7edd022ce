//! The server's settings: a TOML file (`--config`), every key documented in
//! `docs/config.md` with its default. Unknown keys and bad values are refused
//! at startup with a message naming the key.

use serde::Deserialize;
pub use shoal_storage::object::Emulation;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

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
    pub limits: crate::request_limits::LimitsSection,
    /// Cluster mode (etcd); absent = a single node with no etcd.
    pub cluster: Option<crate::cluster_config::ClusterSection>,
    /// HBase's Thrift1 gateway (happybase).
    pub thrift: crate::thrift_config::ThriftSection,
    /// HBase's native RPC (the Java client).
    pub hbase_rpc: crate::hbase_rpc_config::HbaseRpcSection,
    /// TLS on the listeners.
    pub tls: crate::security_config::TlsSection,
    /// Tokens, permissions and the audit log.
    pub auth: crate::security_config::AuthSection,
}

/// `[server]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSection {
    /// gRPC address (default 127.0.0.1:7070).
    pub grpc_addr: SocketAddr,
    /// HTTP address for /metrics and the status page (default 127.0.0.1:7071).
    pub http_addr: SocketAddr,
    /// Where the embedded default keeps everything (default ./shoal-data).
    pub data_dir: PathBuf,
    /// Most time a graceful shutdown waits for in-flight calls (default 30s).
    #[serde(with = "humantime_serde_compat")]
    pub shutdown_timeout: Duration,
    /// A new connection that has not sent the HTTP/2 preface (gRPC) or its
    /// first request's headers (HTTP) by then is closed; also the HTTP/1
    /// header read timeout (default 10s).
    #[serde(with = "humantime_serde_compat")]
    pub handshake_timeout: Duration,
    /// A connection with no call in flight for this long is closed (GOAWAY
    /// first on HTTP/2) (default 5m).
    #[serde(with = "humantime_serde_compat")]
    pub idle_timeout: Duration,
    /// HTTP/2 PING (and TCP keepalive probe) interval (default 30s).
    #[serde(with = "humantime_serde_compat")]
    pub keepalive_interval: Duration,
    /// A PING not answered in this long closes the connection (default 10s).
    #[serde(with = "humantime_serde_compat")]
    pub keepalive_timeout: Duration,
    /// Calls in flight at once on one HTTP/2 connection (default 256).
    pub max_streams_per_connection: u32,
    /// Open connections across both listeners; beyond it new ones are
    /// closed at once. Lowered at start to fit the open-files limit
    /// (default 10000).
    pub max_connections: usize,
    /// Threads that serve gRPC, Thrift and native RPC connections, each a
    /// one-worker runtime a connection stays on; 0 (the default) serves
    /// them on the shared runtime.
    pub serving_threads: usize,
    /// A measuring tool, never for data: gets answer an empty row and
    /// mutations are acknowledged without being applied, so a benchmark
    /// measures the transport and the server's request handling alone (the
    /// floor under the real figures). Admin calls work as usual.
    pub noop: bool,
}

impl Default for ServerSection {
    fn default() -> Self {
        ServerSection {
            grpc_addr: SocketAddr::from(([127, 0, 0, 1], 7070)),
            http_addr: SocketAddr::from(([127, 0, 0, 1], 7071)),
            data_dir: PathBuf::from("./shoal-data"),
            shutdown_timeout: Duration::from_secs(30),
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            keepalive_interval: Duration::from_secs(30),
            keepalive_timeout: Duration::from_secs(10),
            max_streams_per_connection: 256,
            max_connections: 10_000,
            serving_threads: 0,
            noop: false,
        }
    }
}

pub use crate::object_store_config::ObjectStoreSection;

/// Where WAL segments go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WalBackendName {
    /// fsync'd files in `wal.dir` (default).
    #[default]
    Local,
    /// Objects in the object store (survives losing the machine).
    Object,
}

/// `[wal]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WalSection {
    /// `local` (default) or `object`.
    pub backend: WalBackendName,
    /// Local segment directory; empty = `<data_dir>/wal`.
    pub dir: PathBuf,
    /// Local backend: how long a group commit waits for more appends, only
    /// while they arrive fast enough that two or more are expected in that
    /// time (default 0 = never; see `docs/config.md`).
    #[serde(with = "humantime_serde_compat")]
    pub commit_delay: Duration,
    /// Once the WAL's live segments hold more than this, the regions holding
    /// its oldest entries are flushed so they can go: what a crash leaves to
    /// replay stays about this size (default 256MiB; 0 = no bound).
    pub max_unflushed: ByteSize,
}

impl Default for WalSection {
    fn default() -> Self {
        WalSection {
            backend: WalBackendName::default(),
            dir: PathBuf::new(),
            commit_delay: Duration::ZERO,
            max_unflushed: ByteSize(shoal_storage::wal::DEFAULT_MAX_UNFLUSHED),
        }
    }
}

impl WalSection {
    /// The flush scheduler's bound on the WAL (`None`: no bound).
    pub fn max_unflushed_bytes(&self) -> Option<u64> {
        (self.max_unflushed.0 > 0).then_some(self.max_unflushed.0)
    }
}

/// `[cache]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheSection {
    /// Use a block cache at all (default true).
    pub enabled: bool,
    /// L1 budget for data blocks (default 256MiB).
    pub l1_data: ByteSize,
    /// L1 budget for in-memory families (default 64MiB).
    pub l1_in_memory: ByteSize,
    /// L1 budget for index, bloom and meta blocks (default 64MiB).
    pub l1_meta: ByteSize,
    /// L1 budget for whole rows served to point gets (default 64MiB; 0
    /// turns the row cache off).
    pub l1_rows: ByteSize,
    /// L2 directory; empty = `<data_dir>/cache`.
    pub l2_dir: PathBuf,
    /// L2 disk budget; 0 disables L2 (default 10GiB).
    pub l2_capacity: ByteSize,
    /// Read L2 through the page cache, hits served on the calling task
    /// (default true; false = `O_DIRECT` reads).
    pub l2_page_cache: bool,
    /// Prefetch-on-open rate per region, per second (default 64MiB).
    pub prefetch_rate: ByteSize,
    /// Compaction output is cached as written when its inputs total at most
    /// this (default 256MiB).
    pub cache_compaction_output_max: ByteSize,
}

impl Default for CacheSection {
    fn default() -> Self {
        CacheSection {
            enabled: true,
            l1_data: ByteSize(256 << 20),
            l1_in_memory: ByteSize(64 << 20),
            l1_meta: ByteSize(64 << 20),
            l1_rows: ByteSize(64 << 20),
            l2_dir: PathBuf::new(),
            l2_capacity: ByteSize(10 << 30),
            l2_page_cache: true,
            prefetch_rate: ByteSize(64 << 20),
            cache_compaction_output_max: ByteSize(256 << 20),
        }
    }
}

/// `[regions]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RegionsSection {
    /// A region flushes once its memstores hold this much (default 128MiB).
    pub flush_size: ByteSize,
    /// A region splits once its files and memstore pass this (default 2GiB).
    pub split_size: ByteSize,
    /// How often regions are checked for splitting (default 10s).
    #[serde(with = "humantime_serde_compat")]
    pub split_check_interval: Duration,
    /// Compactions running at once across all regions (default 2).
    pub compaction_concurrency: usize,
    /// A store with this many files after a flush starts a minor compaction (default 5).
    pub compaction_trigger_files: usize,
    /// Regions opened at once at startup (default 8).
    pub open_concurrency: usize,
    /// Threads of the background runtime that runs flushes and compactions
    /// (default 2).
    pub background_threads: usize,
    /// Nice value of the background threads, 0–19 (default 10: writers and
    /// readers get the CPU first).
    pub background_nice: i32,
    /// How long a region remembers an increment's or append's nonce, so a
    /// client's retry of it is not applied twice (default 30m, HBase's
    /// `hbase.server.hashNonce.gracePeriod`); "0s" = not at all.
    #[serde(with = "humantime_serde_compat")]
    pub nonce_window: Duration,
    /// Nonces a region remembers at most; the oldest is forgotten first
    /// (default 100,000, about 10 MiB at most per region).
    pub nonce_capacity: usize,
}

/// `[memstore]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemstoreSection {
    /// Total memstore bytes at which writes wait; 0 = `global_limit_fraction`
    /// of the machine's memory (default 0).
    pub global_limit: ByteSize,
    /// Fraction of the machine's memory (or of the cgroup's memory limit, when
    /// lower) when `global_limit` is 0 (default 0.4).
    pub global_limit_fraction: f64,
    /// Fraction of the limit above which the largest regions flush (default 0.95).
    pub flush_watermark: f64,
    /// Longest a write waits for memory before failing (default 30s).
    #[serde(with = "humantime_serde_compat")]
    pub block_timeout: Duration,
    /// A region's writes wait while its memstores hold `flush_size` × this (default 4).
    pub blocking_multiplier: usize,
    /// Active segment size at which in-memory compaction takes it (default 2MiB).
    pub in_memory_flush_size: ByteSize,
    /// Flat segments in the pipeline before they merge (default 4).
    pub pipeline_max_segments: usize,
    /// A region whose oldest edit is this old flushes; "0s" = never (default 1h).
    #[serde(with = "humantime_serde_compat")]
    pub flush_interval: Duration,
    /// Random extra wait before a periodic flush, as a fraction of the interval (default 0.2).
    pub flush_jitter: f64,
    /// Flushes writing at once across all regions (default 2).
    pub flush_concurrency: usize,
}

impl Default for MemstoreSection {
    fn default() -> Self {
        MemstoreSection {
            global_limit: ByteSize(0),
            global_limit_fraction: 0.4,
            flush_watermark: 0.95,
            block_timeout: Duration::from_secs(30),
            blocking_multiplier: 4,
            in_memory_flush_size: ByteSize(2 << 20),
            pipeline_max_segments: 4,
            flush_interval: Duration::from_secs(3600),
            flush_jitter: 0.2,
            flush_concurrency: 2,
        }
    }
}

impl MemstoreSection {
    /// The active-segment size in-memory compaction takes, capped at a
    /// quarter of the flush size (so a flush has several segments to merge).
    pub fn effective_in_memory_flush_size(&self, flush_size: u64) -> u64 {
        self.in_memory_flush_size
            .0
            .min(flush_size / 4)
            .max(64 << 10)
    }

    /// The global limit in bytes (resolving the fraction of memory).
    pub fn limit_bytes(&self) -> u64 {
        if self.global_limit.0 > 0 {
            return self.global_limit.0;
        }
        (machine_memory() as f64 * self.global_limit_fraction) as u64
    }
}

/// Memory this server may use: the machine's, or its cgroup's limit when
/// that is lower (a container); 8 GiB if neither can be read.
pub fn machine_memory() -> u64 {
    crate::memory::available_memory().0
}

impl Default for RegionsSection {
    fn default() -> Self {
        RegionsSection {
            flush_size: ByteSize(128 << 20),
            split_size: ByteSize(2 << 30),
            split_check_interval: Duration::from_secs(10),
            compaction_concurrency: 2,
            compaction_trigger_files: 5,
            open_concurrency: 8,
            background_threads: 2,
            background_nice: 10,
            nonce_window: Duration::from_secs(30 * 60),
            nonce_capacity: 100_000,
        }
    }
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
        let invalid = |key: &str, message: String| ConfigError::Invalid {
            key: key.into(),
            message,
        };
        if self.server.data_dir.as_os_str().is_empty() {
            return Err(invalid("server.data_dir", "must not be empty".into()));
        }
        if self.server.grpc_addr == self.server.http_addr && self.server.grpc_addr.port() != 0 {
            return Err(invalid(
                "server.http_addr",
                format!(
                    "is the same as server.grpc_addr ({})",
                    self.server.grpc_addr
                ),
            ));
        }
        let s = &self.server;
        for (key, value) in [
            ("server.handshake_timeout", s.handshake_timeout),
            ("server.idle_timeout", s.idle_timeout),
            ("server.keepalive_interval", s.keepalive_interval),
            ("server.keepalive_timeout", s.keepalive_timeout),
        ] {
            if value < Duration::from_millis(100) {
                return Err(invalid(
                    key,
                    format!("must be at least 100ms, got {value:?}"),
                ));
            }
        }
        if s.max_streams_per_connection == 0 {
            return Err(invalid(
                "server.max_streams_per_connection",
                "must be at least 1".into(),
            ));
        }
        if s.serving_threads > 1024 {
            return Err(invalid(
                "server.serving_threads",
                format!("at most 1024, got {}", s.serving_threads),
            ));
        }
        if s.max_connections == 0 {
            return Err(invalid(
                "server.max_connections",
                "must be at least 1".into(),
            ));
        }
        self.thrift
            .validate()
            .map_err(|(key, message)| invalid(key, message))?;
        if self.thrift.enabled
            && self.thrift.addr.port() != 0
            && [self.server.grpc_addr, self.server.http_addr].contains(&self.thrift.addr)
        {
            return Err(invalid(
                "thrift.addr",
                format!(
                    "{} is already server.grpc_addr or server.http_addr",
                    self.thrift.addr
                ),
            ));
        }
        self.hbase_rpc
            .validate()
            .map_err(|(key, message)| invalid(key, message))?;
        if self.hbase_rpc.enabled
            && self.hbase_rpc.addr.port() != 0
            && [
                self.server.grpc_addr,
                self.server.http_addr,
                self.thrift.addr,
            ]
            .contains(&self.hbase_rpc.addr)
        {
            return Err(invalid(
                "hbase_rpc.addr",
                format!(
                    "{} is already server.grpc_addr, server.http_addr or thrift.addr",
                    self.hbase_rpc.addr
                ),
            ));
        }
        self.tls
            .validate()
            .map_err(|(key, message)| invalid(key, message))?;
        self.auth
            .validate(self.thrift.enabled, self.cluster.is_some())
            .map_err(|(key, message)| invalid(key, message))?;
        if self.cluster.is_some() && self.tls.enabled() && self.tls.ca.as_os_str().is_empty() {
            return Err(invalid(
                "tls.ca",
                "cluster mode with TLS: name the CA this server trusts when it calls another \
                 server"
                    .into(),
            ));
        }
        if let Some(cluster) = &self.cluster {
            cluster
                .validate()
                .map_err(|(key, message)| invalid(key, message))?;
            if self.wal.backend != WalBackendName::Object {
                return Err(invalid(
                    "wal.backend",
                    "cluster mode needs \"object\": a local WAL dies with its machine, and the \
                     server that takes over this one's regions could not replay it"
                        .into(),
                ));
            }
        }
        if self.wal.commit_delay > Duration::from_millis(10) {
            return Err(invalid(
                "wal.commit_delay",
                format!(
                    "must be at most 10ms (it adds up to that to every put), got {:?}",
                    self.wal.commit_delay
                ),
            ));
        }
        if self.wal.max_unflushed.0 != 0 && self.wal.max_unflushed.0 < (1 << 20) {
            return Err(invalid(
                "wal.max_unflushed",
                format!(
                    "must be 0 (no bound) or at least 1MiB, got {}",
                    self.wal.max_unflushed
                ),
            ));
        }
        let r = &self.regions;
        if r.flush_size.0 < (1 << 20) {
            return Err(invalid(
                "regions.flush_size",
                format!("must be at least 1MiB, got {}", r.flush_size),
            ));
        }
        if r.split_size.0 < r.flush_size.0 {
            return Err(invalid(
                "regions.split_size",
                format!(
                    "must be at least regions.flush_size ({}), got {}",
                    r.flush_size, r.split_size
                ),
            ));
        }
        if r.split_check_interval < Duration::from_millis(100) {
            return Err(invalid(
                "regions.split_check_interval",
                "must be at least 100ms".into(),
            ));
        }
        if r.compaction_concurrency == 0 {
            return Err(invalid(
                "regions.compaction_concurrency",
                "must be at least 1".into(),
            ));
        }
        if r.compaction_trigger_files < 2 {
            return Err(invalid(
                "regions.compaction_trigger_files",
                "must be at least 2".into(),
            ));
        }
        if r.open_concurrency == 0 {
            return Err(invalid(
                "regions.open_concurrency",
                "must be at least 1".into(),
            ));
        }
        if r.background_threads == 0 {
            return Err(invalid(
                "regions.background_threads",
                "must be at least 1".into(),
            ));
        }
        if !(0..=19).contains(&r.background_nice) {
            return Err(invalid(
                "regions.background_nice",
                format!("must be between 0 and 19, got {}", r.background_nice),
            ));
        }
        let m = &self.memstore;
        if !(m.global_limit_fraction > 0.0 && m.global_limit_fraction <= 0.9) {
            return Err(invalid(
                "memstore.global_limit_fraction",
                format!("must be in (0, 0.9], got {}", m.global_limit_fraction),
            ));
        }
        if m.global_limit.0 != 0 && m.global_limit.0 < r.flush_size.0 {
            return Err(invalid(
                "memstore.global_limit",
                format!(
                    "must be 0 or at least regions.flush_size ({}), got {}",
                    r.flush_size, m.global_limit
                ),
            ));
        }
        if !(m.flush_watermark > 0.0 && m.flush_watermark <= 1.0) {
            return Err(invalid(
                "memstore.flush_watermark",
                format!("must be in (0, 1], got {}", m.flush_watermark),
            ));
        }
        if m.block_timeout < Duration::from_millis(10) {
            return Err(invalid(
                "memstore.block_timeout",
                "must be at least 10ms".into(),
            ));
        }
        if m.blocking_multiplier < 2 {
            return Err(invalid(
                "memstore.blocking_multiplier",
                format!("must be at least 2, got {}", m.blocking_multiplier),
            ));
        }
        if m.in_memory_flush_size.0 < (64 << 10) {
            return Err(invalid(
                "memstore.in_memory_flush_size",
                format!("must be at least 64KiB, got {}", m.in_memory_flush_size),
            ));
        }
        if m.pipeline_max_segments == 0 {
            return Err(invalid(
                "memstore.pipeline_max_segments",
                "must be at least 1".into(),
            ));
        }
        if !(0.0..=1.0).contains(&m.flush_jitter) {
            return Err(invalid(
                "memstore.flush_jitter",
                format!("must be in [0, 1], got {}", m.flush_jitter),
            ));
        }
        if m.flush_concurrency == 0 {
            return Err(invalid(
                "memstore.flush_concurrency",
                "must be at least 1".into(),
            ));
        }
        let c = &self.cache;
        if c.enabled && c.l2_capacity.0 != 0 && c.l2_capacity.0 < (64 << 20) {
            return Err(invalid(
                "cache.l2_capacity",
                format!("must be 0 (no L2) or at least 64MiB, got {}", c.l2_capacity),
            ));
        }
        if c.prefetch_rate.0 == 0 {
            return Err(invalid("cache.prefetch_rate", "must be positive".into()));
        }
        self.object_store
            .resolve(&self.objects_dir())
            .map_err(|(key, message)| invalid(key, message))?;
        self.limits
            .validate()
            .map_err(|(key, message)| invalid(key, message))?;
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

/// A size in bytes: an integer, or a string with a unit (`"64MiB"`,
/// `"10 GiB"`, `"512KB"`; KB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl std::fmt::Display for ByteSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.0;
        for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
            if b >= size && b.is_multiple_of(size) {
                return write!(f, "{}{unit}", b / size);
            }
        }
        write!(f, "{b}B")
    }
}

impl std::str::FromStr for ByteSize {
    type Err = String;
    fn from_str(s: &str) -> Result<ByteSize, String> {
        let s = s.trim();
        let split = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let (num, unit) = s.split_at(split);
        let num: f64 = num
            .parse()
            .map_err(|_| format!("{s:?} is not a size like \"64MiB\" or 1048576"))?;
        let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "kb" | "k" => 1000,
            "mb" | "m" => 1000 * 1000,
            "gb" | "g" => 1000 * 1000 * 1000,
            "tb" | "t" => 1000 * 1000 * 1000 * 1000,
            "kib" => 1 << 10,
            "mib" => 1 << 20,
            "gib" => 1 << 30,
            "tib" => 1 << 40,
            other => return Err(format!("unknown size unit {other:?} in {s:?}")),
        };
        let bytes = num * mult as f64;
        if !(0.0..=(u64::MAX as f64)).contains(&bytes) {
            return Err(format!("{s:?} is out of range"));
        }
        Ok(ByteSize(bytes as u64))
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ByteSize, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Str(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(ByteSize(n)),
            Raw::Str(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// Durations as humantime strings (`"10s"`, `"1m 30s"`).
pub(crate) mod humantime_serde_compat {
    use serde::{Deserialize, Deserializer};
    use std::time::Duration;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let s = String::deserialize(d)?;
        humantime::parse_duration(&s).map_err(|e| {
            serde::de::Error::custom(format!("{s:?} is not a duration like \"10s\": {e}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented example is valid, spells out every default, and the
    /// key table lists every key it has.
    #[test]
    fn docs_config_md_matches_the_code() {
        let doc = include_str!("../../../docs/config.md");
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
        let doc = include_str!("../../../docs/config.md");
        let first = doc.find("```toml").unwrap() + "```toml".len();
        let start = first + doc[first..].find("```toml").unwrap() + "```toml".len();
        let end = start + doc[start..].find("```").unwrap();
        let example = &doc[start..end];
        let parsed = ServerConfig::from_toml(example).unwrap();
        let cluster = parsed.cluster.expect("a [cluster] table");
        let defaults = crate::cluster_config::ClusterSection::default();
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
        let doc = include_str!("../../../docs/config.md");
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
}
