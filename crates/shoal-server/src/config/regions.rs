//! `[regions]`: region sizes (flush, split), split checks, compactions,
//! opening at startup, the background runtime, and nonce memory.

use super::units::ByteSize;
use serde::Deserialize;
use std::time::Duration;

/// `[regions]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RegionsSection {
    /// A region flushes once its memstores hold this much (default 128MiB).
    pub flush_size: ByteSize,
    /// A region splits once its files and memstore pass this (default 2GiB).
    pub split_size: ByteSize,
    /// How often regions are checked for splitting (default 10s).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
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
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub nonce_window: Duration,
    /// Nonces a region remembers at most; the oldest is forgotten first
    /// (default 100,000, about 10 MiB at most per region).
    pub nonce_capacity: usize,
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

impl RegionsSection {
    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.flush_size.0 < (1 << 20) {
            return Err((
                "regions.flush_size",
                format!("must be at least 1MiB, got {}", self.flush_size),
            ));
        }
        if self.split_size.0 < self.flush_size.0 {
            return Err((
                "regions.split_size",
                format!(
                    "must be at least regions.flush_size ({}), got {}",
                    self.flush_size, self.split_size
                ),
            ));
        }
        if self.split_check_interval < Duration::from_millis(100) {
            return Err((
                "regions.split_check_interval",
                "must be at least 100ms".into(),
            ));
        }
        if self.compaction_concurrency == 0 {
            return Err((
                "regions.compaction_concurrency",
                "must be at least 1".into(),
            ));
        }
        if self.compaction_trigger_files < 2 {
            return Err((
                "regions.compaction_trigger_files",
                "must be at least 2".into(),
            ));
        }
        if self.open_concurrency == 0 {
            return Err(("regions.open_concurrency", "must be at least 1".into()));
        }
        if self.background_threads == 0 {
            return Err(("regions.background_threads", "must be at least 1".into()));
        }
        if !(0..=19).contains(&self.background_nice) {
            return Err((
                "regions.background_nice",
                format!("must be between 0 and 19, got {}", self.background_nice),
            ));
        }
        Ok(())
    }
}
