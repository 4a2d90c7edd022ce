//! `[thrift]`: HBase's Thrift1 gateway (the one happybase speaks), served by
//! `shoal serve` itself. Defaults as HBase's gateway: port 9090, buffered
//! transport, binary protocol. Every connection's protocol and transport are
//! recognised from its first bytes, so clients of any of the four kinds are
//! served; `transport` and `protocol` only name what is advertised.

use super::units::ByteSize;
use serde::Deserialize;
use std::net::SocketAddr;
use std::time::Duration;

/// `[thrift]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThriftSection {
    /// Serve the gateway (default true).
    pub enabled: bool,
    /// Where it listens (default `127.0.0.1:9090`, HBase's port).
    pub addr: SocketAddr,
    /// `buffered` (default, HBase's `threadpool` server) or `framed`.
    pub transport: ThriftTransport,
    /// `binary` (default) or `compact`.
    pub protocol: ThriftProtocol,
    /// A scanner nobody asked for rows for this long is closed (default 60s,
    /// HBase's scanner lease).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub scanner_timeout: Duration,
    /// Open scanners at most, across all connections (default 10,000): one
    /// more is refused with an IOError until one closes or expires.
    pub max_scanners: usize,
    /// Largest Thrift message accepted, bytes (default 64 MiB): a larger
    /// declared frame or message closes the connection.
    pub max_message_bytes: ByteSize,
}

/// The transport a `[thrift]` gateway advertises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThriftTransport {
    /// Messages back to back on the stream.
    Buffered,
    /// Each message behind a 4-byte length.
    Framed,
}

/// The protocol a `[thrift]` gateway advertises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThriftProtocol {
    /// TBinaryProtocol.
    Binary,
    /// TCompactProtocol.
    Compact,
}

impl Default for ThriftSection {
    fn default() -> Self {
        ThriftSection {
            enabled: true,
            addr: SocketAddr::from(([127, 0, 0, 1], 9090)),
            transport: ThriftTransport::Buffered,
            protocol: ThriftProtocol::Binary,
            scanner_timeout: Duration::from_secs(60),
            max_scanners: 10_000,
            max_message_bytes: ByteSize(64 << 20),
        }
    }
}

impl ThriftSection {
    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.scanner_timeout < Duration::from_secs(1) {
            return Err((
                "thrift.scanner_timeout",
                format!("must be at least 1s, got {:?}", self.scanner_timeout),
            ));
        }
        if self.max_scanners == 0 {
            return Err(("thrift.max_scanners", "must be at least 1".into()));
        }
        if !(4096..=(1 << 30)).contains(&self.max_message_bytes.0) {
            return Err((
                "thrift.max_message_bytes",
                format!(
                    "must be between 4KiB and 1GiB, got {}",
                    self.max_message_bytes
                ),
            ));
        }
        Ok(())
    }
}
