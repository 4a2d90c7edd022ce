//! Errors of the region engine.

use crate::cell::CellError;
use crate::manifest::ManifestError;
use crate::sst::SstError;
use crate::wal::WalError;

/// Everything a region operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    /// The request names a family the region does not have.
    #[error("region {region}: no such column family {family:?}")]
    NoSuchFamily {
        /// Region id.
        region: String,
        /// The family asked for.
        family: String,
    },
    /// The row is outside the region's key range.
    #[error("region {region}: row {row:?} is outside the region's range")]
    RowOutOfRange {
        /// Region id.
        region: String,
        /// The row.
        row: String,
    },
    /// A malformed request.
    #[error("region {region}: {reason}")]
    InvalidArgument {
        /// Region id.
        region: String,
        /// What is wrong.
        reason: String,
    },
    /// A NO_OP comparison met a value to compare (a SingleColumnValueFilter
    /// reaching its column, a check of an existing cell with an operand):
    /// HBase fails the request there ("Unknown Compare op NO_OP").
    #[error("region {region}: Unknown Compare op NO_OP ({what})")]
    CompareNoOp {
        /// Region id.
        region: String,
        /// Where it was met.
        what: &'static str,
    },
    /// Another server owns the region now; this instance stopped serving it.
    #[error("region {region} was taken over by a newer owner; reopen it to serve it again")]
    Fenced {
        /// Region id.
        region: String,
    },
    /// The region was closed.
    #[error("region {region} is closed")]
    Closed {
        /// Region id.
        region: String,
    },
    /// A cell is invalid (too long, empty row …).
    #[error("region {region}: {source}")]
    Cell {
        /// Region id.
        region: String,
        /// The cell model's complaint.
        #[source]
        source: CellError,
    },
    /// The write-ahead log failed; the write was not applied.
    #[error("region {region}: write-ahead log: {source}")]
    Wal {
        /// Region id.
        region: String,
        /// The WAL error.
        #[source]
        source: WalError,
    },
    /// Reading or committing the manifest failed.
    #[error("region {region}: manifest: {source}")]
    Manifest {
        /// Region id.
        region: String,
        /// The manifest error.
        #[source]
        source: ManifestError,
    },
    /// Reading or writing a store file failed.
    #[error("region {region}: store file: {source}")]
    Sst {
        /// Region id.
        region: String,
        /// The SST error.
        #[source]
        source: SstError,
    },
    /// The cells of a bulk load could not be read (a bad or unreadable
    /// input file); nothing of the load was committed.
    #[error("region {region}: bulk load: {reason}")]
    IngestSource {
        /// Region id.
        region: String,
        /// What the source reported.
        reason: String,
    },
    /// The write waited for memstore memory longer than the block timeout:
    /// flushes are not keeping up. Retry later.
    #[error("region {region}: too busy: {reason}")]
    Busy {
        /// Region id.
        region: String,
        /// What the write waited for.
        reason: String,
    },
}

impl RegionError {
    /// True if the region must stop serving (fenced or closed).
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            RegionError::Fenced { .. } | RegionError::Closed { .. }
        )
    }
}
