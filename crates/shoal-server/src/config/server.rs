//! `[server]`: the listening addresses, the data directory, connection
//! timeouts and caps, the serving threads, and the no-op measuring mode.

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

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
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub shutdown_timeout: Duration,
    /// A new connection that has not sent the HTTP/2 preface (gRPC) or its
    /// first request's headers (HTTP) by then is closed; also the HTTP/1
    /// header read timeout (default 10s).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub handshake_timeout: Duration,
    /// A connection with no call in flight for this long is closed (GOAWAY
    /// first on HTTP/2) (default 5m).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub idle_timeout: Duration,
    /// HTTP/2 PING (and TCP keepalive probe) interval (default 30s).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub keepalive_interval: Duration,
    /// A PING not answered in this long closes the connection (default 10s).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
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

impl ServerSection {
    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.data_dir.as_os_str().is_empty() {
            return Err(("server.data_dir", "must not be empty".into()));
        }
        if self.grpc_addr == self.http_addr && self.grpc_addr.port() != 0 {
            return Err((
                "server.http_addr",
                format!("is the same as server.grpc_addr ({})", self.grpc_addr),
            ));
        }
        for (key, value) in [
            ("server.handshake_timeout", self.handshake_timeout),
            ("server.idle_timeout", self.idle_timeout),
            ("server.keepalive_interval", self.keepalive_interval),
            ("server.keepalive_timeout", self.keepalive_timeout),
        ] {
            if value < Duration::from_millis(100) {
                return Err((key, format!("must be at least 100ms, got {value:?}")));
            }
        }
        if self.max_streams_per_connection == 0 {
            return Err((
                "server.max_streams_per_connection",
                "must be at least 1".into(),
            ));
        }
        if self.serving_threads > 1024 {
            return Err((
                "server.serving_threads",
                format!("at most 1024, got {}", self.serving_threads),
            ));
        }
        if self.max_connections == 0 {
            return Err(("server.max_connections", "must be at least 1".into()));
        }
        Ok(())
    }
}
