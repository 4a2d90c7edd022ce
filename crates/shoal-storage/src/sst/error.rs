//! Errors of the SST writer and reader.

use crate::cell::CellError;
use crate::object::ObjectError;

/// Everything that can go wrong writing or reading an SST.
#[derive(Debug, thiserror::Error)]
pub enum SstError {
    /// Bytes of the file are not what was written: a checksum mismatch, an
    /// impossible length, a bad magic number. Never returned as data.
    #[error("corrupt SST {file} at offset {offset}: {reason}")]
    Corruption {
        /// Object path of the file.
        file: String,
        /// Byte offset of the damaged block (or of the footer).
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// The object is not a Shoal SST at all.
    #[error("{file} is not a Shoal SST: {reason}")]
    NotAnSst {
        /// Object path of the file.
        file: String,
        /// What was seen instead.
        reason: String,
    },
    /// A Shoal SST written by a format version this build cannot read.
    #[error("SST {file} has format version {found}; this build reads version {supported}")]
    UnsupportedVersion {
        /// Object path of the file.
        file: String,
        /// Version in the footer.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// Reading or writing the underlying object failed.
    #[error("object store I/O for SST {file}: {source}")]
    Object {
        /// Object path of the file.
        file: String,
        /// The object layer's error.
        #[source]
        source: ObjectError,
    },
    /// A fetch shared with other readers of the same block failed.
    #[error("reading SST {file}: {source}")]
    Shared {
        /// Object path of the file.
        file: String,
        /// The error the shared fetch ended with.
        #[source]
        source: std::sync::Arc<SstError>,
    },
    /// A cell the writer cannot store.
    #[error("cell rejected by the writer of SST {file}: {source}")]
    Cell {
        /// Object path of the file.
        file: String,
        /// The cell model's complaint.
        #[source]
        source: CellError,
    },
    /// Cells must be added in strictly increasing key order.
    #[error("cells added out of order to SST {file}: {detail}")]
    OutOfOrder {
        /// Object path of the file.
        file: String,
        /// The two keys.
        detail: String,
    },
    /// Every cell of a file belongs to the writer's family.
    #[error("SST {file} is for family {expected:?}, got a cell of family {found:?}")]
    WrongFamily {
        /// Object path of the file.
        file: String,
        /// The writer's family.
        expected: String,
        /// The cell's family.
        found: String,
    },
    /// A file with no cells is never written; the caller should skip it.
    #[error("SST {file} would hold no cells; empty files are not written")]
    Empty {
        /// Object path of the file.
        file: String,
    },
    /// A writer or reader option out of range.
    #[error("invalid SST option {name}: {reason}")]
    InvalidOption {
        /// Option name.
        name: &'static str,
        /// Why it was refused.
        reason: String,
    },
}

impl SstError {
    pub(crate) fn corruption(file: &str, offset: u64, reason: impl Into<String>) -> SstError {
        SstError::Corruption {
            file: file.to_string(),
            offset,
            reason: reason.into(),
        }
    }

    /// True if the error means the file's bytes are damaged or not an SST.
    pub fn is_corruption(&self) -> bool {
        matches!(
            self,
            SstError::Corruption { .. } | SstError::NotAnSst { .. }
        )
    }
}
