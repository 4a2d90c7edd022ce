//! `[rest]`: HBase's REST gateway ("Stargate", `docs/rest.md`), served by
//! `shoal serve` itself on its own port (default 8080, HBase's). The limits
//! bound what one request can make the server do: the body it reads, the
//! rows and cells one answer holds, and the scanners clients keep open.

use super::units::ByteSize;
use serde::Deserialize;
use std::net::SocketAddr;
use std::time::Duration;

/// `[rest]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RestSection {
    /// Serve the gateway (default true).
    pub enabled: bool,
    /// Where it listens (default `127.0.0.1:8080`, HBase's REST port).
    pub addr: SocketAddr,
    /// A scanner nobody asked for rows for this long is closed (default
    /// 60s, HBase's `hbase.rest.scannercache.expire.time`'s order).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub scanner_timeout: Duration,
    /// Open scanners at most (default 10,000, HBase's
    /// `hbase.rest.scannercache.size`): one more is refused with 503 until
    /// one closes or expires.
    pub max_scanners: usize,
    /// Largest request body read, bytes (default 64 MiB): a larger one is
    /// refused with 413.
    pub max_body_bytes: ByteSize,
    /// Rows one answer holds at most (default 10,000): a row glob or a
    /// multiget past it is refused with 400 (a scanner pages instead).
    pub max_rows_per_response: usize,
    /// Cells one answer holds at most (default 100,000); a scanner's page
    /// stops there and the next GET goes on.
    pub max_cells_per_response: usize,
}

impl Default for RestSection {
    fn default() -> Self {
        RestSection {
            enabled: true,
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            scanner_timeout: Duration::from_secs(60),
            max_scanners: 10_000,
            max_body_bytes: ByteSize(64 << 20),
            max_rows_per_response: 10_000,
            max_cells_per_response: 100_000,
        }
    }
}

impl RestSection {
    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.scanner_timeout < Duration::from_secs(1) {
            return Err((
                "rest.scanner_timeout",
                format!("must be at least 1s, got {:?}", self.scanner_timeout),
            ));
        }
        if self.max_scanners == 0 {
            return Err(("rest.max_scanners", "must be at least 1".into()));
        }
        if !(4096..=(1 << 30)).contains(&self.max_body_bytes.0) {
            return Err((
                "rest.max_body_bytes",
                format!("must be between 4KiB and 1GiB, got {}", self.max_body_bytes),
            ));
        }
        if self.max_rows_per_response == 0 {
            return Err(("rest.max_rows_per_response", "must be at least 1".into()));
        }
        if self.max_cells_per_response == 0 {
            return Err(("rest.max_cells_per_response", "must be at least 1".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_hbase_s_port_and_valid() {
        let s = RestSection::default();
        assert_eq!(s.addr.port(), 8080);
        assert!(s.validate().is_ok());
        let bad: RestSection = toml::from_str("max_scanners = 0").unwrap_or_default();
        assert_eq!(bad.validate().map_err(|e| e.0), Err("rest.max_scanners"));
    }
}
