//! HBase's cell and its total order.
//!
//! A [`Cell`] is one version of one column of one row: (row, family, qualifier,
//! timestamp, type, value), plus the internal sequence number (MVCC write number)
//! that the region assigns when the write is applied.
//!
//! The order is HBase's (`CellComparator`), and everything sorted in Shoal —
//! memstores, SST blocks, the block index, merges — uses it:
//!
//! 1. row, ascending (unsigned bytes),
//! 2. family, ascending,
//! 3. qualifier, ascending,
//! 4. timestamp, **descending** (newest version first),
//! 5. type code, **descending**, so at one timestamp the delete markers come
//!    before the put they mask (DeleteFamily, DeleteColumn, DeleteFamilyVersion,
//!    Delete, then Put),
//! 6. sequence number, **descending** (the latest write of an identical key first).
//!
//! Two cells with equal keys (all six fields) are the same write; no sorted
//! structure holds both.
//!
//! [`key`] holds the borrowed key view and its byte encoding (the form keys take
//! inside SST blocks and indexes); [`codec`] holds the self-delimiting encoding
//! of a whole cell (used by the WAL). Decoding validates every length: a
//! malformed input is a [`CellError`], never a panic.

pub mod codec;
pub mod key;

use bytes::Bytes;
use std::cmp::Ordering;

pub use codec::{decode_cell, encode_cell, encoded_cell_len};
pub use key::{CellKey, KeyRef, cmp_encoded, compare_encoded};

/// Longest row key, in bytes (HBase's `Short.MAX_VALUE`).
pub const MAX_ROW_LEN: usize = i16::MAX as usize;
/// Longest column family name, in bytes (HBase's `Byte.MAX_VALUE`).
pub const MAX_FAMILY_LEN: usize = i8::MAX as usize;
/// Longest qualifier, in bytes. Bounded so that an encoded key always fits a u32.
pub const MAX_QUALIFIER_LEN: usize = 64 * 1024 * 1024;
/// Largest value, in bytes (HBase's default client limit is 10 MiB; we allow more
/// but keep every encoded cell within a u32).
pub const MAX_VALUE_LEN: usize = 512 * 1024 * 1024;

/// What a cell is: a value, or one of HBase's four delete markers.
///
/// The discriminants are HBase's `KeyValue.Type` codes, so the sort order
/// (type code descending) and any future wire compatibility match HBase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum CellType {
    /// A value.
    Put = 4,
    /// Deletes the one version of this column at exactly this timestamp.
    Delete = 8,
    /// Deletes every column of the family at exactly this timestamp.
    DeleteFamilyVersion = 10,
    /// Deletes all versions of this column at or below this timestamp.
    DeleteColumn = 12,
    /// Deletes all columns of the family at or below this timestamp.
    DeleteFamily = 14,
}

impl CellType {
    /// The HBase type code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Parses a type code; unknown codes are an error.
    pub fn from_code(code: u8) -> Result<CellType, CellError> {
        match code {
            4 => Ok(CellType::Put),
            8 => Ok(CellType::Delete),
            10 => Ok(CellType::DeleteFamilyVersion),
            12 => Ok(CellType::DeleteColumn),
            14 => Ok(CellType::DeleteFamily),
            other => Err(CellError::UnknownType(other)),
        }
    }

    /// True for the four delete markers.
    pub fn is_delete(self) -> bool {
        self != CellType::Put
    }

    /// The marker that sorts first at a given (row, family, qualifier, timestamp).
    pub const FIRST: CellType = CellType::DeleteFamily;
    /// The type that sorts last at a given (row, family, qualifier, timestamp).
    pub const LAST: CellType = CellType::Put;
}

/// Why a cell or key could not be built or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CellError {
    /// A component is longer than the format allows.
    #[error("{field} is {len} bytes, longer than the limit of {max} bytes")]
    TooLong {
        /// Which component ("row", "family", "qualifier", "value").
        field: &'static str,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A row key must not be empty (HBase reserves the empty row for "start of table").
    #[error("row key is empty; every cell needs a non-empty row")]
    EmptyRow,
    /// A type code that is not one of HBase's.
    #[error("unknown cell type code {0}")]
    UnknownType(u8),
    /// Encoded bytes that do not form a valid key or cell.
    #[error("malformed encoded {what}: {reason}")]
    Malformed {
        /// "key" or "cell".
        what: &'static str,
        /// What was wrong.
        reason: String,
    },
}

impl CellError {
    pub(crate) fn malformed(what: &'static str, reason: impl Into<String>) -> CellError {
        CellError::Malformed {
            what,
            reason: reason.into(),
        }
    }
}

/// One version of one column of one row.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cell {
    /// Row key (non-empty, at most [`MAX_ROW_LEN`] bytes).
    pub row: Bytes,
    /// Column family name (at most [`MAX_FAMILY_LEN`] bytes).
    pub family: Bytes,
    /// Column qualifier (may be empty).
    pub qualifier: Bytes,
    /// Version timestamp, milliseconds since the epoch by convention.
    pub timestamp: i64,
    /// Put or delete marker.
    pub kind: CellType,
    /// Internal write sequence number (MVCC); higher is newer.
    pub seq: u64,
    /// The value (empty for delete markers).
    pub value: Bytes,
}

impl Cell {
    /// A put cell. Call [`Cell::validate`] before trusting sizes from a user.
    pub fn put(
        row: impl Into<Bytes>,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        timestamp: i64,
        seq: u64,
        value: impl Into<Bytes>,
    ) -> Cell {
        Cell {
            row: row.into(),
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp,
            kind: CellType::Put,
            seq,
            value: value.into(),
        }
    }

    /// A delete marker of the given type (empty value).
    pub fn delete(
        row: impl Into<Bytes>,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        timestamp: i64,
        kind: CellType,
        seq: u64,
    ) -> Cell {
        Cell {
            row: row.into(),
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp,
            kind,
            seq,
            value: Bytes::new(),
        }
    }

    /// The cell's sort key.
    pub fn key(&self) -> KeyRef<'_> {
        KeyRef {
            row: &self.row,
            family: &self.family,
            qualifier: &self.qualifier,
            timestamp: self.timestamp,
            kind: self.kind,
            seq: self.seq,
        }
    }

    /// Checks every component against the format's limits.
    pub fn validate(&self) -> Result<(), CellError> {
        self.key().validate()?;
        check_len("value", self.value.len(), MAX_VALUE_LEN)
    }

    /// Bytes this cell occupies in memory beyond the struct itself (row, family,
    /// qualifier and value), used for memstore and block size accounting.
    pub fn payload_len(&self) -> usize {
        self.row.len() + self.family.len() + self.qualifier.len() + self.value.len()
    }
}

/// Compares two cells by key (HBase's order); values are not compared.
pub fn compare_cells(a: &Cell, b: &Cell) -> Ordering {
    a.key().cmp(&b.key())
}

pub(crate) fn check_len(field: &'static str, len: usize, max: usize) -> Result<(), CellError> {
    if len > max {
        Err(CellError::TooLong { field, len, max })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
