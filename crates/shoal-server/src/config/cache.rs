//! `[cache]`: the block cache's budgets: L1 (data, in-memory families,
//! index and bloom blocks, whole rows) and L2 (a local disk), prefetch on
//! open and caching compaction output.

use super::units::ByteSize;
use serde::Deserialize;
use std::path::PathBuf;

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

impl CacheSection {
    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.enabled && self.l2_capacity.0 != 0 && self.l2_capacity.0 < (64 << 20) {
            return Err((
                "cache.l2_capacity",
                format!(
                    "must be 0 (no L2) or at least 64MiB, got {}",
                    self.l2_capacity
                ),
            ));
        }
        if self.prefetch_rate.0 == 0 {
            return Err(("cache.prefetch_rate", "must be positive".into()));
        }
        Ok(())
    }
}
