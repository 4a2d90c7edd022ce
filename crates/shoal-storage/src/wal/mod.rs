//! The write-ahead log: one per server, shared by all its regions.
//!
//! A region appends one entry per write — its name, the write's sequence number and an
//! opaque payload (an encoded mutation batch) — and acknowledges the client only after
//! [`Wal::append`] returns `Ok`, which happens once the entry is durable. After a crash,
//! [`Wal::open`] reads every segment back, and the region replays its entries above the
//! sequence number its manifest says is already flushed ([`Wal::take_recovered`]). Once a
//! flush has committed, [`Wal::mark_flushed`] lets go of the segments it covers.
//!
//! # Mechanism
//!
//! - **Group commit** (`writer.rs`): appends queue (bounded in bytes: `append` waits when
//!   full); one writer turns whatever is queued into one batch and makes it durable
//!   with one write + `fdatasync` (local, on a thread of its own) or one PUT (object, a
//!   task). Batches grow with load and need no timer.
//! - **Segments**: local files `<dir>/<n:020>.wal` rolled at `segment_bytes`
//!   (`local.rs`), or one object `<prefix>/<n:020>.wal` per batch (`object.rs`).
//!   Numbers grow monotonically across restarts; every open starts a new segment and
//!   never appends to an old one.
//! - **Format** (`record.rs`, `docs/wal.md`): a checksummed header, then records
//!   `len | crc32c | region | seq | payload`.
//! - **Retention** (`retention.rs`): each segment's max seq per region, against each
//!   region's flushed seq.
//! - **History** (object backend, [`WalOptions::history`]; `stamp.rs`, `history.rs`,
//!   `pitr.rs`): every segment object carries its own time; flushed segments are kept
//!   for a window instead of deleted, a checkpoint `<prefix>/history.json` says what is
//!   flushed and which segment starts which time, and [`read_history`] reads the entries
//!   of a time range back for a point-in-time restore.
//!
//! # Invariants
//!
//! - `append` returns `Ok` only when the entry is durable; an `Err` means "unknown": the
//!   entry may or may not be recovered (never garbled).
//! - Recovery returns only records whose checksum matches. The last local segment of the
//!   previous run may end in a torn record (a crash mid-write): it is cut, counted,
//!   logged and truncated away. A bad record anywhere else is [`WalError::Corrupt`] —
//!   acknowledged entries would otherwise vanish silently.
//! - A segment is deleted only when every region in it is flushed past its entries there,
//!   and never while it is being written. With history, not even then: only once a mark
//!   after it is older than the window, and only after a checkpoint no longer offers a
//!   reader a starting point before it.

mod error;
mod foreign;
mod history;
mod local;
mod log;
pub(crate) mod metrics;
mod object;
mod pitr;
mod record;
mod recycle;
mod retention;
mod stamp;
mod writer;

pub use error::WalError;
pub use foreign::ForeignWal;
pub use log::Wal;
pub use metrics::{BATCH_HISTOGRAM_BUCKETS, LATENCY_HISTOGRAM_BUCKETS, WalMetricsSnapshot};
pub use pitr::{SweepReport, TimedEntry, read_history, sweep_history, wal_prefixes};
pub use record::{
    FLAG_OBJECT_TIME, FORMAT_VERSION, HEADER_LEN, MAGIC, MAX_RECORD_BYTES, MAX_REGION_BYTES,
};

use crate::object::Bucket;

/// Default size at which a local segment is closed and a new one started.
pub const DEFAULT_SEGMENT_BYTES: u64 = 64 << 20;
/// Default upper bound on the bytes of one group commit.
pub const DEFAULT_MAX_BATCH_BYTES: usize = 4 << 20;
/// Default bound on a WAL's live record bytes before the regions holding its
/// oldest entries are flushed (`wal.max_unflushed`; the flush scheduler's
/// `max_wal_bytes`).
pub const DEFAULT_MAX_UNFLUSHED: u64 = 256 << 20;

/// Where the WAL keeps its segments.
#[derive(Debug, Clone)]
pub enum WalBackend {
    /// Segment files in a local directory (created if missing), fsync'd.
    Local {
        /// The WAL directory; nothing else should live in it.
        dir: std::path::PathBuf,
    },
    /// Segment objects in a bucket, one per group commit.
    Object {
        /// The bucket.
        bucket: Bucket,
        /// Key prefix owned by this WAL alone, e.g. `wal/<server-id>`.
        prefix: String,
    },
}

/// How to open a [`Wal`].
#[derive(Debug, Clone)]
pub struct WalOptions {
    /// Where the segments live.
    pub backend: WalBackend,
    /// Local backend: start a new segment once the current one reaches this many bytes.
    pub segment_bytes: u64,
    /// Most record bytes in one group commit (an entry larger than this goes alone).
    /// The append queue holds at most twice this.
    pub max_batch_bytes: usize,
    /// Local backend: create each segment ahead of time, filled with zeros to
    /// `segment_bytes`, so a group commit overwrites allocated blocks and its
    /// `fdatasync` has no file-system metadata to journal (default true).
    pub preallocate: bool,
    /// Local backend: how long a group commit waits for more appends before
    /// its write and `fdatasync`, only while appends arrive fast enough that
    /// two or more are expected in that time (so a lone or slow writer never
    /// waits). Fewer, larger group commits take kernel work and wake-ups off
    /// every put at high rates, for at most this much added latency.
    /// Default 0 (off).
    pub commit_delay: std::time::Duration,
    /// Object backend: keep the WAL's history for this window (point-in-time
    /// restore): flushed segments are not deleted but aged out once older than
    /// the window, and `<prefix>/history.json` records what is flushed and where
    /// each time starts (`history.rs`, `docs/wal.md`). `None` (the default): flushed
    /// segments are deleted. Refused with the local backend
    /// ([`WalError::HistoryNeedsObjectStore`]).
    pub history: Option<std::time::Duration>,
}

impl WalOptions {
    /// Local segment files in `dir`, default sizes.
    pub fn local(dir: impl Into<std::path::PathBuf>) -> WalOptions {
        WalOptions {
            backend: WalBackend::Local { dir: dir.into() },
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            max_batch_bytes: DEFAULT_MAX_BATCH_BYTES,
            preallocate: true,
            commit_delay: std::time::Duration::ZERO,
            history: None,
        }
    }

    /// Segment objects in `bucket` under `prefix`, default sizes.
    pub fn object(bucket: Bucket, prefix: impl Into<String>) -> WalOptions {
        WalOptions {
            backend: WalBackend::Object {
                bucket,
                prefix: prefix.into(),
            },
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            max_batch_bytes: DEFAULT_MAX_BATCH_BYTES,
            preallocate: false,
            commit_delay: std::time::Duration::ZERO,
            history: None,
        }
    }

    /// These options with the WAL's history kept for `window` ([`WalOptions::history`]).
    pub fn with_history(self, window: std::time::Duration) -> WalOptions {
        WalOptions {
            history: Some(window),
            ..self
        }
    }
}

/// One entry of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalEntry {
    /// The region that wrote it.
    pub region: String,
    /// The region's sequence number for the write.
    pub seq: u64,
    /// The encoded mutation batch, opaque to the WAL.
    pub payload: bytes::Bytes,
}

#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod tests;
