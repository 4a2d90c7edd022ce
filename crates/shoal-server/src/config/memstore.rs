//! `[memstore]`: the global memstore limit (bytes or a fraction of memory),
//! when writes wait, in-memory compaction, and flush scheduling.

use super::units::ByteSize;
use serde::Deserialize;
use std::time::Duration;

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
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub block_timeout: Duration,
    /// A region's writes wait while its memstores hold `flush_size` × this (default 4).
    pub blocking_multiplier: usize,
    /// Active segment size at which in-memory compaction takes it (default 2MiB).
    pub in_memory_flush_size: ByteSize,
    /// Flat segments in the pipeline before they merge (default 4).
    pub pipeline_max_segments: usize,
    /// A region whose oldest edit is this old flushes; "0s" = never (default 1h).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
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

    /// Checks every value against the regions' `flush_size`;
    /// `Err((key, message))` names the offending key.
    pub fn validate(&self, flush_size: ByteSize) -> Result<(), (&'static str, String)> {
        if !(self.global_limit_fraction > 0.0 && self.global_limit_fraction <= 0.9) {
            return Err((
                "memstore.global_limit_fraction",
                format!("must be in (0, 0.9], got {}", self.global_limit_fraction),
            ));
        }
        if self.global_limit.0 != 0 && self.global_limit.0 < flush_size.0 {
            return Err((
                "memstore.global_limit",
                format!(
                    "must be 0 or at least regions.flush_size ({}), got {}",
                    flush_size, self.global_limit
                ),
            ));
        }
        if !(self.flush_watermark > 0.0 && self.flush_watermark <= 1.0) {
            return Err((
                "memstore.flush_watermark",
                format!("must be in (0, 1], got {}", self.flush_watermark),
            ));
        }
        if self.block_timeout < Duration::from_millis(10) {
            return Err(("memstore.block_timeout", "must be at least 10ms".into()));
        }
        if self.blocking_multiplier < 2 {
            return Err((
                "memstore.blocking_multiplier",
                format!("must be at least 2, got {}", self.blocking_multiplier),
            ));
        }
        if self.in_memory_flush_size.0 < (64 << 10) {
            return Err((
                "memstore.in_memory_flush_size",
                format!("must be at least 64KiB, got {}", self.in_memory_flush_size),
            ));
        }
        if self.pipeline_max_segments == 0 {
            return Err((
                "memstore.pipeline_max_segments",
                "must be at least 1".into(),
            ));
        }
        if !(0.0..=1.0).contains(&self.flush_jitter) {
            return Err((
                "memstore.flush_jitter",
                format!("must be in [0, 1], got {}", self.flush_jitter),
            ));
        }
        if self.flush_concurrency == 0 {
            return Err(("memstore.flush_concurrency", "must be at least 1".into()));
        }
        Ok(())
    }
}

/// Memory this server may use: the machine's, or its cgroup's limit when
/// that is lower (a container); 8 GiB if neither can be read.
pub fn machine_memory() -> u64 {
    crate::memory::available_memory().0
}
