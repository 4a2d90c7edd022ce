//! The cell key: a borrowed view ([`KeyRef`]) with HBase's order, an owned form
//! ([`CellKey`]) for bounds and seeks, and the key's byte encoding.
//!
//! Encoded key (all integers big-endian):
//!
//! ```text
//! row_len: u16 | row | family_len: u8 | family | qualifier | timestamp: i64 | type: u8 | seq: u64
//! ```
//!
//! The qualifier has no length of its own: it is whatever lies between the
//! family and the fixed 17-byte suffix. Row first means adjacent keys in a block
//! share long prefixes, which the block format's prefix compression exploits.
//! The encoding is not memcmp-ordered; compare decoded [`KeyRef`]s.

use super::{CellError, CellType, MAX_FAMILY_LEN, MAX_QUALIFIER_LEN, MAX_ROW_LEN, check_len};
use bytes::Bytes;
use std::cmp::Ordering;

/// Fixed bytes of an encoded key: row length, family length, timestamp, type, seq.
pub const KEY_OVERHEAD: usize = 2 + 1 + 8 + 1 + 8;
const SUFFIX_LEN: usize = 8 + 1 + 8;

/// A borrowed cell key, ordered as HBase orders cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyRef<'a> {
    /// Row key.
    pub row: &'a [u8],
    /// Column family.
    pub family: &'a [u8],
    /// Column qualifier.
    pub qualifier: &'a [u8],
    /// Version timestamp.
    pub timestamp: i64,
    /// Put or delete marker.
    pub kind: CellType,
    /// Write sequence number.
    pub seq: u64,
}

impl Ord for KeyRef<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.row
            .cmp(other.row)
            .then_with(|| self.family.cmp(other.family))
            .then_with(|| self.qualifier.cmp(other.qualifier))
            .then_with(|| other.timestamp.cmp(&self.timestamp))
            .then_with(|| other.kind.code().cmp(&self.kind.code()))
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for KeyRef<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<'a> KeyRef<'a> {
    /// The smallest key of `row`: sorts before every cell of the row.
    pub fn first_of_row(row: &'a [u8]) -> KeyRef<'a> {
        KeyRef {
            row,
            family: &[],
            qualifier: &[],
            timestamp: i64::MAX,
            kind: CellType::FIRST,
            seq: u64::MAX,
        }
    }

    /// The smallest key of column (row, family, qualifier): sorts before every
    /// version of that column.
    pub fn first_of_column(row: &'a [u8], family: &'a [u8], qualifier: &'a [u8]) -> KeyRef<'a> {
        KeyRef {
            row,
            family,
            qualifier,
            timestamp: i64::MAX,
            kind: CellType::FIRST,
            seq: u64::MAX,
        }
    }

    /// The largest key of column (row, family, qualifier): sorts after, or
    /// with, every version of that column (a cell can only equal it with
    /// timestamp `i64::MIN` and sequence 0).
    pub fn last_of_column(row: &'a [u8], family: &'a [u8], qualifier: &'a [u8]) -> KeyRef<'a> {
        KeyRef {
            row,
            family,
            qualifier,
            timestamp: i64::MIN,
            kind: CellType::LAST,
            seq: 0,
        }
    }

    /// Checks component lengths against the format's limits.
    pub fn validate(&self) -> Result<(), CellError> {
        if self.row.is_empty() {
            return Err(CellError::EmptyRow);
        }
        check_len("row", self.row.len(), MAX_ROW_LEN)?;
        check_len("family", self.family.len(), MAX_FAMILY_LEN)?;
        check_len("qualifier", self.qualifier.len(), MAX_QUALIFIER_LEN)
    }

    /// Length of the encoded key.
    pub fn encoded_len(&self) -> usize {
        KEY_OVERHEAD + self.row.len() + self.family.len() + self.qualifier.len()
    }

    /// Appends the encoded key to `out`. The key must satisfy [`KeyRef::validate`]
    /// apart from the empty-row rule (bounds use the empty row); longer components
    /// are an error rather than a silently truncated length.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), CellError> {
        check_len("row", self.row.len(), MAX_ROW_LEN)?;
        check_len("family", self.family.len(), MAX_FAMILY_LEN)?;
        check_len("qualifier", self.qualifier.len(), MAX_QUALIFIER_LEN)?;
        out.reserve(self.encoded_len());
        // Lengths were checked above, so these casts cannot truncate.
        out.extend_from_slice(&(self.row.len() as u16).to_be_bytes());
        out.extend_from_slice(self.row);
        out.push(self.family.len() as u8);
        out.extend_from_slice(self.family);
        out.extend_from_slice(self.qualifier);
        out.extend_from_slice(&self.timestamp.to_be_bytes());
        out.push(self.kind.code());
        out.extend_from_slice(&self.seq.to_be_bytes());
        Ok(())
    }

    /// The encoded key as a new vector.
    pub fn encode(&self) -> Result<Vec<u8>, CellError> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Decodes an encoded key, validating every length.
    pub fn decode(buf: &'a [u8]) -> Result<KeyRef<'a>, CellError> {
        if buf.len() < KEY_OVERHEAD {
            return Err(CellError::malformed(
                "key",
                format!(
                    "{} bytes, shorter than the {KEY_OVERHEAD}-byte minimum",
                    buf.len()
                ),
            ));
        }
        let row_len = u16::from_be_bytes([buf[0], buf[1]]) as usize;
        if row_len > MAX_ROW_LEN {
            return Err(CellError::malformed(
                "key",
                format!("row length {row_len} over the limit"),
            ));
        }
        let fam_len_at = 2 + row_len;
        // The suffix must still fit after row and the family length byte.
        if fam_len_at + 1 + SUFFIX_LEN > buf.len() {
            return Err(CellError::malformed(
                "key",
                format!("row length {row_len} overruns a {}-byte key", buf.len()),
            ));
        }
        let row = &buf[2..fam_len_at];
        let fam_len = buf[fam_len_at] as usize;
        let fam_start = fam_len_at + 1;
        let qual_start = fam_start + fam_len;
        let suffix_start = buf.len() - SUFFIX_LEN;
        if fam_len > MAX_FAMILY_LEN || qual_start > suffix_start {
            return Err(CellError::malformed(
                "key",
                format!("family length {fam_len} overruns a {}-byte key", buf.len()),
            ));
        }
        let suffix = &buf[suffix_start..];
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&suffix[0..8]);
        let kind = CellType::from_code(suffix[8])?;
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&suffix[9..17]);
        Ok(KeyRef {
            row,
            family: &buf[fam_start..qual_start],
            qualifier: &buf[qual_start..suffix_start],
            timestamp: i64::from_be_bytes(ts),
            kind,
            seq: u64::from_be_bytes(seq),
        })
    }

    /// An owned copy of this key.
    pub fn to_owned_key(&self) -> CellKey {
        CellKey {
            row: Bytes::copy_from_slice(self.row),
            family: Bytes::copy_from_slice(self.family),
            qualifier: Bytes::copy_from_slice(self.qualifier),
            timestamp: self.timestamp,
            kind: self.kind,
            seq: self.seq,
        }
    }
}

/// An owned cell key, for seek targets and scan bounds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CellKey {
    /// Row key.
    pub row: Bytes,
    /// Column family.
    pub family: Bytes,
    /// Column qualifier.
    pub qualifier: Bytes,
    /// Version timestamp.
    pub timestamp: i64,
    /// Put or delete marker.
    pub kind: CellType,
    /// Write sequence number.
    pub seq: u64,
}

impl CellKey {
    /// The borrowed view, which carries the order.
    pub fn as_ref(&self) -> KeyRef<'_> {
        KeyRef {
            row: &self.row,
            family: &self.family,
            qualifier: &self.qualifier,
            timestamp: self.timestamp,
            kind: self.kind,
            seq: self.seq,
        }
    }

    /// The smallest key of `row`.
    pub fn first_of_row(row: impl Into<Bytes>) -> CellKey {
        CellKey {
            row: row.into(),
            family: Bytes::new(),
            qualifier: Bytes::new(),
            timestamp: i64::MAX,
            kind: CellType::FIRST,
            seq: u64::MAX,
        }
    }
}

impl Ord for CellKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_ref().cmp(&other.as_ref())
    }
}

impl PartialOrd for CellKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Compares an encoded key with `target` in cell order, decoding only as far
/// as the order needs. A seek compares against many keys whose rows differ
/// from the target's, and those comparisons end at the row: no family,
/// qualifier or suffix is parsed. The lengths read are checked (never a
/// panic); a key whose row decides the order is not validated further, and
/// any other is decoded in full, so a malformed one is an error.
#[inline]
pub fn cmp_encoded(encoded: &[u8], target: &KeyRef<'_>) -> Result<Ordering, CellError> {
    if let Some(row) = encoded_row(encoded) {
        let order = row.cmp(target.row);
        if order != Ordering::Equal {
            return Ok(order);
        }
    }
    Ok(KeyRef::decode(encoded)?.cmp(target))
}

/// The row of an encoded key, if its row length fits the key (the rest is
/// not checked).
#[inline]
pub(crate) fn encoded_row(encoded: &[u8]) -> Option<&[u8]> {
    if encoded.len() < KEY_OVERHEAD {
        return None;
    }
    let row_len = u16::from_be_bytes([encoded[0], encoded[1]]) as usize;
    (row_len <= MAX_ROW_LEN && 2 + row_len + 1 + SUFFIX_LEN <= encoded.len())
        .then(|| &encoded[2..2 + row_len])
}

/// Compares two encoded keys in cell order. Keys that fail to decode (which
/// only corrupt input can produce) sort after valid ones and bytewise among
/// themselves, so the order stays total.
pub fn compare_encoded(a: &[u8], b: &[u8]) -> Ordering {
    match (KeyRef::decode(a), KeyRef::decode(b)) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}
