//! [`WalError`]: the one error type of the write-ahead log.
//!
//! Every variant names the segment (a file path or an object key) it concerns and says
//! what the operator can do. The type is `Clone` (sources are behind `Arc`) because one
//! failed group commit answers every append of its batch with the same error.

use std::sync::Arc;

use crate::object::ObjectError;

/// Errors of the write-ahead log.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum WalError {
    /// A local file-system operation on a segment (or the WAL directory) failed.
    #[error(
        "WAL {path}: {action} failed: {source}; check the disk (space, permissions, \
         health) and restart — acknowledged entries already on disk are safe"
    )]
    Io {
        /// The segment file or WAL directory.
        path: String,
        /// What was being done ("fdatasync", "create segment", …).
        action: &'static str,
        /// The operating system's error.
        #[source]
        source: Arc<std::io::Error>,
    },

    /// An object-store request for a segment failed.
    #[error("WAL object {path}: {action} failed: {source}")]
    Object {
        /// The segment object key (relative to the bucket).
        path: String,
        /// What was being done ("put segment", "list segments", …).
        action: &'static str,
        /// The object-store layer's error, which says what to do.
        #[source]
        source: Arc<ObjectError>,
    },

    /// A segment holds bytes that are not what was written, somewhere other than the torn
    /// tail of the last segment of the previous run. Opening stops rather than silently
    /// dropping acknowledged entries.
    #[error(
        "WAL segment {segment} is corrupt at byte offset {offset}: {reason}. Entries from \
         this offset on cannot be read, and they may have been acknowledged. Restore the \
         segment from a backup, or — accepting the loss of those entries — truncate the \
         segment at offset {offset} (or move it aside if the offset is 0) and reopen"
    )]
    Corrupt {
        /// The segment file or object.
        segment: String,
        /// Byte offset of the first bad record (0 for a bad header).
        offset: u64,
        /// What was wrong.
        reason: String,
    },

    /// A segment written by a format version this build cannot read.
    #[error(
        "WAL segment {segment} has format version {found}; this build reads version \
         {supported}: run a Shoal build that understands it"
    )]
    UnsupportedVersion {
        /// The segment file or object.
        segment: String,
        /// The version in the segment header.
        found: u32,
        /// The version this build reads and writes.
        supported: u32,
    },

    /// Another writer created the segment object this WAL was about to write: two
    /// servers are appending under the same prefix.
    #[error(
        "WAL object {segment} was created by another writer: two processes are using the \
         WAL prefix {prefix:?}. Give every server its own prefix (wal/<server-id>) and stop \
         the other writer; this WAL no longer accepts appends"
    )]
    ConcurrentWriter {
        /// The segment object that already existed.
        segment: String,
        /// The WAL prefix in the bucket.
        prefix: String,
    },

    /// An earlier write or sync failed; since the state of the segment is then unknown,
    /// the WAL accepts no more appends.
    #[error(
        "the WAL stopped accepting appends after an earlier failure ({cause}); entries \
         acknowledged before it are durable — restart the server to recover"
    )]
    Poisoned {
        /// The failure that stopped the WAL.
        cause: Arc<WalError>,
    },

    /// `append` after `close` (or after the WAL's writer stopped).
    #[error("the WAL is closed; reopen it with Wal::open to append")]
    Closed,

    /// An entry larger than a record can hold.
    #[error(
        "WAL entry for region {region:?} seq {seq} is too large: {what} is {bytes} bytes, \
         the limit is {limit}; split the mutation batch"
    )]
    EntryTooLarge {
        /// The region of the entry.
        region: String,
        /// The entry's sequence number.
        seq: u64,
        /// "region name" or "record".
        what: &'static str,
        /// Its size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },

    /// An entry without a region name (the log reserves the empty name for seals).
    #[error("WAL entry seq {seq} has an empty region name")]
    EmptyRegion {
        /// The entry's sequence number.
        seq: u64,
    },

    /// `WalOptions` are unusable.
    #[error("invalid WAL option `{option}`: {message}")]
    InvalidOptions {
        /// The option's field name.
        option: &'static str,
        /// What is wrong with it.
        message: String,
    },

    /// `WalOptions::history` with the local backend.
    #[error(
        "WAL history needs the object-store backend: a local WAL lives on one machine \
         and is deleted once flushed; set the WAL backend to `object` or turn history off"
    )]
    HistoryNeedsObjectStore,

    /// The history asked for starts before what is kept under a WAL prefix: the
    /// segments it needs may have been deleted (aged out of the window, or written
    /// before history was turned on).
    #[error(
        "WAL history under {prefix:?} does not reach back to the requested time: the \
         segments it needs may have been deleted; history is readable from {} on",
        describe_ms(.oldest_ms)
    )]
    HistoryGone {
        /// The WAL prefix.
        prefix: String,
        /// Time (ms since the epoch) of its oldest mark: the earliest start it can
        /// serve. `None` if it has no mark.
        oldest_ms: Option<u64>,
    },

    /// A segment object to be read as history has no time: it was written by a
    /// build from before segment times (header flag `FLAG_OBJECT_TIME`).
    #[error(
        "WAL segment {segment} carries no write time (written by an older Shoal build); \
         history can only be read from segments written since the upgrade"
    )]
    NoSegmentTime {
        /// The segment object.
        segment: String,
    },
}

fn describe_ms(ms: &Option<u64>) -> String {
    match ms {
        Some(ms) => format!("{ms} ms since the epoch"),
        None => "no time (it has no mark)".to_owned(),
    }
}

impl WalError {
    pub(crate) fn io(
        path: impl std::fmt::Display,
        action: &'static str,
        source: std::io::Error,
    ) -> WalError {
        WalError::Io {
            path: path.to_string(),
            action,
            source: Arc::new(source),
        }
    }

    pub(crate) fn object(
        path: impl Into<String>,
        action: &'static str,
        source: ObjectError,
    ) -> WalError {
        WalError::Object {
            path: path.into(),
            action,
            source: Arc::new(source),
        }
    }

    /// True for [`WalError::Corrupt`].
    pub fn is_corrupt(&self) -> bool {
        matches!(self, WalError::Corrupt { .. })
    }
}
