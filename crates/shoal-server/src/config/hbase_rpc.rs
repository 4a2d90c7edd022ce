//! `[hbase_rpc]`: HBase's native RPC, the protocol of the stock Java client
//! (`hbase-client` 2.5/2.6 with `RpcConnectionRegistry`), served by `shoal
//! serve` itself. Defaults as an HBase region server's port: 16020.

use super::units::ByteSize;
use serde::Deserialize;
use std::net::SocketAddr;
use std::time::Duration;

/// `[hbase_rpc]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HbaseRpcSection {
    /// Serve the native RPC (default true).
    pub enabled: bool,
    /// Where it listens (default `127.0.0.1:16020`, HBase's region server
    /// port).
    pub addr: SocketAddr,
    /// The `host:port` clients are told to connect to (in `hbase:meta` and
    /// as the active master); empty: the address it listens on.
    pub advertise_addr: String,
    /// A scanner nobody asked for rows for this long is closed (default
    /// 60s, HBase's `hbase.client.scanner.timeout.period`).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub scanner_timeout: Duration,
    /// Open scanners at most, across all connections (default 10,000).
    pub max_scanners: usize,
    /// Largest call accepted, bytes (default 256 MiB, HBase's
    /// `hbase.ipc.max.request.size`): a larger declared length closes the
    /// connection after a `RequestTooBigException`.
    pub max_message_bytes: ByteSize,
    /// Calls one connection may have in progress at once (default 256);
    /// further calls wait to be read.
    pub max_calls_per_connection: usize,
    /// A scan call that has found no row for this long answers a heartbeat
    /// (default 5s; HBase answers after half its scanner timeout), so a
    /// long filtered scan keeps its lease and the client its patience.
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub heartbeat_interval: Duration,
}

impl Default for HbaseRpcSection {
    fn default() -> Self {
        HbaseRpcSection {
            enabled: true,
            addr: SocketAddr::from(([127, 0, 0, 1], 16020)),
            advertise_addr: String::new(),
            scanner_timeout: Duration::from_secs(60),
            max_scanners: 10_000,
            max_message_bytes: ByteSize(256 << 20),
            max_calls_per_connection: 256,
            heartbeat_interval: Duration::from_secs(5),
        }
    }
}

impl HbaseRpcSection {
    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.scanner_timeout < Duration::from_secs(1) {
            return Err((
                "hbase_rpc.scanner_timeout",
                format!("must be at least 1s, got {:?}", self.scanner_timeout),
            ));
        }
        if self.max_scanners == 0 {
            return Err(("hbase_rpc.max_scanners", "must be at least 1".into()));
        }
        if !(4096..=(1 << 30)).contains(&self.max_message_bytes.0) {
            return Err((
                "hbase_rpc.max_message_bytes",
                format!(
                    "must be between 4KiB and 1GiB, got {}",
                    self.max_message_bytes
                ),
            ));
        }
        if !(1..=4096).contains(&self.max_calls_per_connection) {
            return Err((
                "hbase_rpc.max_calls_per_connection",
                format!(
                    "must be between 1 and 4096, got {}",
                    self.max_calls_per_connection
                ),
            ));
        }
        if self.heartbeat_interval >= self.scanner_timeout {
            return Err((
                "hbase_rpc.heartbeat_interval",
                format!(
                    "must be shorter than hbase_rpc.scanner_timeout ({:?}), got {:?}",
                    self.scanner_timeout, self.heartbeat_interval
                ),
            ));
        }
        if !self.advertise_addr.is_empty() {
            let ok = self
                .advertise_addr
                .rsplit_once(':')
                .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
            if !ok {
                return Err((
                    "hbase_rpc.advertise_addr",
                    format!("must be host:port, got {:?}", self.advertise_addr),
                ));
            }
        }
        Ok(())
    }
}
