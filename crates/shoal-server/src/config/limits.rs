//! `[limits]`: how much work one request may ask for, checked once in the
//! host API so every front door gets the same answer. Each limit is a config
//! key; a request past one is refused with INVALID_ARGUMENT (the request
//! itself is too big) or RESOURCE_EXHAUSTED (the server is busy with other
//! requests' bytes), and the message names the key.
//!
//! The sizes are chosen so that whatever is accepted can be read back with
//! default settings: one cell (row + family + qualifier + value) always fits
//! one response message, and rows larger than a message are streamed in
//! pieces (see `grpc::data`).

use super::units::ByteSize;
use crate::error::ServiceError;
use serde::Deserialize;
use shoal_storage::region::{RowMutation, RowOp};
use std::time::Duration;

/// Largest gRPC message the server decodes or encodes. Every accepted cell
/// must fit in one.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;
/// Room left in a message for the framing around one cell.
const MESSAGE_OVERHEAD: u64 = 64 << 10;

/// `[limits]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsSection {
    /// Most changes (cells) in one row mutation (default 100000).
    pub max_cells_per_mutation: usize,
    /// Most columns in one increment or append (default 10000).
    pub max_columns_per_increment: usize,
    /// Most rows in one MultiGet or MultiMutate (default 10000).
    pub max_rows_per_batch: usize,
    /// Most column families in one table (default 100).
    pub max_families_per_table: usize,
    /// Most split keys given when creating a table (default 10000).
    pub max_split_keys: usize,
    /// Longest qualifier (default 1MiB).
    pub max_qualifier_bytes: ByteSize,
    /// Largest value (default 32MiB; at most 60MiB so one cell always fits a
    /// 64 MiB message).
    pub max_value_bytes: ByteSize,
    /// Bytes of request messages being received or served at once, across
    /// the server; a request that would pass it is refused with
    /// RESOURCE_EXHAUSTED (default 512MiB).
    pub request_bytes_in_flight: ByteSize,
    /// A scan whose client takes no message for this long is closed, releasing
    /// its read point and files (default 60s, HBase's scanner timeout).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub scan_lease: Duration,
    /// A streamed scan message is sent once it holds this many bytes of cells
    /// (default 4MiB); a row larger than this is sent in pieces.
    pub scan_message_bytes: ByteSize,
}

impl Default for LimitsSection {
    fn default() -> Self {
        LimitsSection {
            max_cells_per_mutation: 100_000,
            max_columns_per_increment: 10_000,
            max_rows_per_batch: 10_000,
            max_families_per_table: 100,
            max_split_keys: 10_000,
            max_qualifier_bytes: ByteSize(1 << 20),
            max_value_bytes: ByteSize(32 << 20),
            request_bytes_in_flight: ByteSize(512 << 20),
            scan_lease: Duration::from_secs(60),
            scan_message_bytes: ByteSize(4 << 20),
        }
    }
}

impl LimitsSection {
    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let positive = [
            ("limits.max_cells_per_mutation", self.max_cells_per_mutation),
            (
                "limits.max_columns_per_increment",
                self.max_columns_per_increment,
            ),
            ("limits.max_rows_per_batch", self.max_rows_per_batch),
            ("limits.max_families_per_table", self.max_families_per_table),
        ];
        for (key, v) in positive {
            if v == 0 {
                return Err((key, "must be at least 1".into()));
            }
        }
        let cell_max = MAX_MESSAGE_BYTES as u64 - MESSAGE_OVERHEAD;
        let qualifier_cap = shoal_storage::cell::MAX_QUALIFIER_LEN as u64;
        if self.max_qualifier_bytes.0 == 0 || self.max_qualifier_bytes.0 > qualifier_cap {
            return Err((
                "limits.max_qualifier_bytes",
                format!(
                    "must be between 1 byte and {}, got {}",
                    ByteSize(qualifier_cap),
                    self.max_qualifier_bytes
                ),
            ));
        }
        if self.max_value_bytes.0 == 0
            || self.max_value_bytes.0 + self.max_qualifier_bytes.0 > cell_max
        {
            return Err((
                "limits.max_value_bytes",
                format!(
                    "must be positive and, with limits.max_qualifier_bytes ({}), leave one \
                     cell within a 64MiB message (at most {} together), got {}",
                    self.max_qualifier_bytes,
                    ByteSize(cell_max),
                    self.max_value_bytes
                ),
            ));
        }
        if self.request_bytes_in_flight.0 < MAX_MESSAGE_BYTES as u64 {
            return Err((
                "limits.request_bytes_in_flight",
                format!(
                    "must be at least 64MiB (one whole request), got {}",
                    self.request_bytes_in_flight
                ),
            ));
        }
        if self.scan_lease < Duration::from_millis(100) {
            return Err(("limits.scan_lease", "must be at least 100ms".into()));
        }
        if !((4 << 10)..=(32 << 20)).contains(&self.scan_message_bytes.0) {
            return Err((
                "limits.scan_message_bytes",
                format!(
                    "must be between 4KiB and 32MiB, got {}",
                    self.scan_message_bytes
                ),
            ));
        }
        Ok(())
    }

    /// A row mutation within the cell, qualifier and value limits.
    pub fn check_mutation(&self, m: &RowMutation) -> Result<(), ServiceError> {
        if m.ops.len() > self.max_cells_per_mutation {
            return Err(too_many(
                "limits.max_cells_per_mutation",
                self.max_cells_per_mutation,
                m.ops.len(),
                "changes in one row mutation",
            ));
        }
        for op in &m.ops {
            match op {
                RowOp::Put {
                    qualifier, value, ..
                } => {
                    self.check_qualifier(qualifier)?;
                    self.check_value(value)?;
                }
                RowOp::DeleteVersion { qualifier, .. } | RowOp::DeleteColumn { qualifier, .. } => {
                    self.check_qualifier(qualifier)?
                }
                RowOp::DeleteFamily { .. }
                | RowOp::DeleteFamilyVersion { .. }
                | RowOp::DeleteRow { .. } => {}
            }
        }
        Ok(())
    }

    /// An increment's or append's columns: count, qualifiers, and (for
    /// appends) the bytes appended.
    pub fn check_columns<'a>(
        &self,
        qualifiers: impl ExactSizeIterator<Item = (&'a [u8], usize)>,
        what: &str,
    ) -> Result<(), ServiceError> {
        if qualifiers.len() > self.max_columns_per_increment {
            return Err(too_many(
                "limits.max_columns_per_increment",
                self.max_columns_per_increment,
                qualifiers.len(),
                &format!("columns in one {what}"),
            ));
        }
        for (q, value_len) in qualifiers {
            self.check_qualifier(q)?;
            if value_len as u64 > self.max_value_bytes.0 {
                return Err(too_big(
                    "limits.max_value_bytes",
                    self.max_value_bytes,
                    value_len,
                    "value",
                ));
            }
        }
        Ok(())
    }

    /// Rows in one batch call.
    pub fn check_batch(&self, n: usize, what: &str) -> Result<(), ServiceError> {
        if n > self.max_rows_per_batch {
            return Err(too_many(
                "limits.max_rows_per_batch",
                self.max_rows_per_batch,
                n,
                &format!("{what} in one call"),
            ));
        }
        Ok(())
    }

    /// Families of a table being created or altered.
    pub fn check_families(&self, n: usize) -> Result<(), ServiceError> {
        if n > self.max_families_per_table {
            return Err(too_many(
                "limits.max_families_per_table",
                self.max_families_per_table,
                n,
                "column families in one table",
            ));
        }
        Ok(())
    }

    /// Split keys given at table creation.
    pub fn check_split_keys(&self, keys: &[bytes::Bytes]) -> Result<(), ServiceError> {
        if keys.len() > self.max_split_keys {
            return Err(too_many(
                "limits.max_split_keys",
                self.max_split_keys,
                keys.len(),
                "split keys",
            ));
        }
        for k in keys {
            check_row_key(k, "split key")?;
        }
        Ok(())
    }

    fn check_qualifier(&self, q: &[u8]) -> Result<(), ServiceError> {
        if q.len() as u64 > self.max_qualifier_bytes.0 {
            return Err(too_big(
                "limits.max_qualifier_bytes",
                self.max_qualifier_bytes,
                q.len(),
                "qualifier",
            ));
        }
        Ok(())
    }

    fn check_value(&self, v: &[u8]) -> Result<(), ServiceError> {
        if v.len() as u64 > self.max_value_bytes.0 {
            return Err(too_big(
                "limits.max_value_bytes",
                self.max_value_bytes,
                v.len(),
                "value",
            ));
        }
        Ok(())
    }
}

/// A row key (or a key used as one: a split key) within the format's limit.
pub fn check_row_key(row: &[u8], what: &str) -> Result<(), ServiceError> {
    let max = shoal_storage::cell::MAX_ROW_LEN;
    if row.len() > max {
        return Err(ServiceError::InvalidArgument(format!(
            "{what} of {} bytes is longer than the {max}-byte row key limit",
            row.len()
        )));
    }
    Ok(())
}

fn too_many(key: &str, limit: usize, got: usize, what: &str) -> ServiceError {
    ServiceError::InvalidArgument(format!("{got} {what}; at most {limit} ({key})"))
}

fn too_big(key: &str, limit: ByteSize, got: usize, what: &str) -> ServiceError {
    ServiceError::InvalidArgument(format!(
        "a {what} of {got} bytes is larger than {limit} ({key})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn put(q: usize, v: usize) -> RowOp {
        RowOp::Put {
            family: Bytes::from_static(b"f"),
            qualifier: Bytes::from(vec![b'q'; q]),
            timestamp: None,
            value: Bytes::from(vec![0u8; v]),
        }
    }

    #[test]
    fn defaults_are_valid_and_each_bad_value_names_its_key() {
        LimitsSection::default().validate().expect("defaults");
        let bad = |f: fn(&mut LimitsSection)| {
            let mut l = LimitsSection::default();
            f(&mut l);
            l.validate().expect_err("refused").0
        };
        assert_eq!(
            bad(|l| l.max_cells_per_mutation = 0),
            "limits.max_cells_per_mutation"
        );
        assert_eq!(
            bad(|l| l.max_value_bytes = ByteSize(64 << 20)),
            "limits.max_value_bytes"
        );
        assert_eq!(
            bad(|l| l.request_bytes_in_flight = ByteSize(1 << 20)),
            "limits.request_bytes_in_flight"
        );
        assert_eq!(
            bad(|l| l.scan_message_bytes = ByteSize(1)),
            "limits.scan_message_bytes"
        );
    }

    #[test]
    fn mutations_at_each_limit_pass_and_one_past_is_refused_naming_it() {
        let l = LimitsSection {
            max_cells_per_mutation: 3,
            max_qualifier_bytes: ByteSize(8),
            max_value_bytes: ByteSize(16),
            ..LimitsSection::default()
        };
        let m = |ops: Vec<RowOp>| RowMutation {
            row: Bytes::from_static(b"r"),
            ops,
        };
        l.check_mutation(&m(vec![put(8, 16), put(1, 1), put(1, 1)]))
            .expect("at the limits");
        let msg = |e: ServiceError| e.to_string();
        let e = l
            .check_mutation(&m(vec![put(1, 1); 4]))
            .expect_err("4 cells");
        assert!(msg(e).contains("limits.max_cells_per_mutation"));
        let e = l
            .check_mutation(&m(vec![put(9, 1)]))
            .expect_err("qualifier");
        assert!(msg(e).contains("limits.max_qualifier_bytes"));
        let e = l.check_mutation(&m(vec![put(1, 17)])).expect_err("value");
        assert!(msg(e).contains("limits.max_value_bytes"));
    }

    #[test]
    fn split_keys_longer_than_a_row_key_are_refused() {
        let l = LimitsSection::default();
        let ok = Bytes::from(vec![b'k'; shoal_storage::cell::MAX_ROW_LEN]);
        l.check_split_keys(std::slice::from_ref(&ok))
            .expect("at the limit");
        let long = Bytes::from(vec![b'k'; shoal_storage::cell::MAX_ROW_LEN + 1]);
        assert!(l.check_split_keys(&[long]).is_err());
    }
}
