//! How a region is set up: its identity, key range, families and their settings.

use super::versions::Retention;
use crate::sst::SstWriterOptions;
use bytes::Bytes;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// One column family's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyConfig {
    /// Family name: 1–127 bytes of `[A-Za-z0-9_.-]`, not starting with `.`.
    pub name: Bytes,
    /// Versions, min versions and TTL.
    pub retention: Retention,
    /// Block size, compression and bloom filter of the family's files.
    pub sst: SstWriterOptions,
    /// How the family uses the block cache.
    pub cache: crate::cache::FamilyCachePolicy,
    /// In-memory compaction of the family's memstore (default basic).
    pub in_memory_compaction: crate::memstore::InMemoryCompaction,
}

impl FamilyConfig {
    /// A family with default settings (1 version, no TTL, 64 KiB lz4 blocks, row bloom).
    pub fn new(name: impl Into<Bytes>) -> FamilyConfig {
        FamilyConfig {
            name: name.into(),
            retention: Retention::default(),
            sst: SstWriterOptions::default(),
            cache: crate::cache::FamilyCachePolicy::default(),
            in_memory_compaction: crate::memstore::InMemoryCompaction::default(),
        }
    }

    /// The in-memory compaction its memstore runs: eager merges drop masked
    /// puts, which a family keeping deleted cells keeps, so it runs basic.
    pub fn pipeline_compaction(&self) -> crate::memstore::InMemoryCompaction {
        use crate::memstore::InMemoryCompaction;
        if self.in_memory_compaction == InMemoryCompaction::Eager
            && self.retention.keep_deleted != super::versions::KeepDeleted::False
        {
            return InMemoryCompaction::Basic;
        }
        self.in_memory_compaction
    }

    /// The same family keeping `n` versions.
    pub fn with_max_versions(mut self, n: u32) -> FamilyConfig {
        self.retention.max_versions = n;
        self
    }
}

/// Checks a family name; the error says what is wrong.
pub fn validate_family_name(name: &[u8]) -> Result<(), String> {
    if name.is_empty() || name.len() > crate::cell::MAX_FAMILY_LEN {
        return Err(format!(
            "must be 1 to {} bytes long",
            crate::cell::MAX_FAMILY_LEN
        ));
    }
    if name[0] == b'.' {
        return Err("must not start with '.'".into());
    }
    if let Some(bad) = name
        .iter()
        .find(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')))
    {
        return Err(format!(
            "contains {:?}; use letters, digits, '_', '-' and '.'",
            *bad as char
        ));
    }
    Ok(())
}

/// Size-tiered minor compaction settings (HBase's exploring policy, simplified).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionPolicy {
    /// Fewest files a minor compaction merges (default 3).
    pub min_files: usize,
    /// Most files a minor compaction merges (default 10): bounds fan-in.
    pub max_files: usize,
    /// A file joins a selection only if it is at most `ratio` × the others'
    /// total size (default 1.2), so big old files are not rewritten for small
    /// new ones.
    pub ratio: f64,
}

impl Default for CompactionPolicy {
    fn default() -> Self {
        CompactionPolicy {
            min_files: 3,
            max_files: 10,
            ratio: 1.2,
        }
    }
}

/// A region's identity and settings.
#[derive(Debug, Clone)]
pub struct RegionConfig {
    /// Unique region id; tags its WAL entries.
    pub region_id: String,
    /// Object prefix holding the region's manifest and files.
    pub region_dir: String,
    /// First row (inclusive); empty = unbounded.
    pub start_row: Bytes,
    /// Row the region ends before (exclusive); empty = unbounded.
    pub end_row: Bytes,
    /// The column families.
    pub families: Vec<FamilyConfig>,
    /// Flush once the memstores hold this many bytes (default 128 MiB).
    pub flush_size: usize,
    /// Writes wait while the memstores hold `flush_size` × this (default 4):
    /// the region's flushes are not keeping up.
    pub blocking_multiplier: usize,
    /// In-memory compaction moves the active segment into the pipeline once
    /// it holds this many bytes (default 2 MiB).
    pub in_memory_flush_size: usize,
    /// Flat segments in the pipeline before they are merged into one
    /// (default 4).
    pub pipeline_max_segments: usize,
    /// Minor compaction selection.
    pub compaction: CompactionPolicy,
    /// Files compacted since the last minor compaction trigger this many files
    /// per store (default 5): a flush that leaves a store with at least this
    /// many files starts a background minor compaction.
    pub compaction_trigger_files: usize,
    /// How long, and how many, increment and append nonces the region
    /// remembers (default 30 minutes, 100,000; see `nonces.rs`).
    pub nonces: super::nonces::NonceOptions,
}

impl RegionConfig {
    /// A region covering all rows with the given families and default settings.
    pub fn new(
        region_id: impl Into<String>,
        region_dir: impl Into<String>,
        families: Vec<FamilyConfig>,
    ) -> RegionConfig {
        RegionConfig {
            region_id: region_id.into(),
            region_dir: region_dir.into(),
            start_row: Bytes::new(),
            end_row: Bytes::new(),
            families,
            flush_size: 128 << 20,
            blocking_multiplier: 4,
            in_memory_flush_size: 2 << 20,
            pipeline_max_segments: 4,
            compaction: CompactionPolicy::default(),
            compaction_trigger_files: 5,
            nonces: super::nonces::NonceOptions::default(),
        }
    }

    /// True if `row` belongs to this region.
    pub fn contains_row(&self, row: &[u8]) -> bool {
        row >= &self.start_row[..] && (self.end_row.is_empty() || row < &self.end_row[..])
    }
}

/// The time source for default timestamps and TTLs (milliseconds since the epoch).
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now_ms(&self) -> i64;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }
}

/// A clock tests move by hand.
#[derive(Debug, Default, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock reading `now_ms`.
    pub fn new(now_ms: i64) -> ManualClock {
        ManualClock(Arc::new(AtomicI64::new(now_ms)))
    }

    /// Sets the time.
    pub fn set(&self, now_ms: i64) {
        self.0.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the time forward.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}
