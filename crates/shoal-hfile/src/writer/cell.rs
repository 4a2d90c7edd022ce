//! The cells the writer takes ([`CellRef`]), their KeyValue serialization, HBase's order
//! (`CellComparatorImpl`: row, family, qualifier ascending; timestamp, type, sequence id
//! descending) and the shortened index keys HBase writes between blocks
//! (`HFileWriterImpl.getMidpoint`).

use crate::kv::{CellKind, HCell};
use std::cmp::Ordering;

/// HBase's `Short.MAX_VALUE` row length limit.
pub const MAX_ROW_LEN: usize = i16::MAX as usize;
/// HBase's `Byte.MAX_VALUE` family length limit.
pub const MAX_FAMILY_LEN: usize = i8::MAX as usize;
/// `HConstants.LATEST_TIMESTAMP`, the timestamp of index keys that sort first in a row.
const LATEST_TIMESTAMP: i64 = i64::MAX;
/// `KeyValue.Type.Maximum`: sorts before every stored type at equal timestamps.
const TYPE_MAXIMUM: u8 = 255;

/// One cell to append: borrowed parts, no tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellRef<'a> {
    pub row: &'a [u8],
    pub family: &'a [u8],
    pub qualifier: &'a [u8],
    pub timestamp: i64,
    pub kind: CellKind,
    pub value: &'a [u8],
    /// MVCC / sequence id written with the cell (0 for exported data).
    pub seq_id: u64,
}

impl<'a> CellRef<'a> {
    /// A Put with sequence id 0.
    pub fn put(
        row: &'a [u8],
        family: &'a [u8],
        qualifier: &'a [u8],
        timestamp: i64,
        value: &'a [u8],
    ) -> Self {
        CellRef {
            row,
            family,
            qualifier,
            timestamp,
            kind: CellKind::Put,
            value,
            seq_id: 0,
        }
    }

    /// Borrows a cell read by this crate's reader (its tags, if any, are not included).
    pub fn from_cell(c: &'a HCell) -> Self {
        CellRef {
            row: &c.row,
            family: &c.family,
            qualifier: &c.qualifier,
            timestamp: c.timestamp,
            kind: c.kind,
            value: &c.value,
            seq_id: c.seq_id,
        }
    }

    /// Length of the serialized KeyValue key.
    pub(crate) fn key_len(&self) -> usize {
        key_len(self.row.len(), self.family.len(), self.qualifier.len())
    }

    /// The serialized KeyValue key.
    pub(crate) fn key(&self) -> Vec<u8> {
        key(
            self.row,
            self.family,
            self.qualifier,
            self.timestamp,
            self.kind.code(),
        )
    }
}

fn key_len(row: usize, family: usize, qualifier: usize) -> usize {
    2 + row + 1 + family + qualifier + 8 + 1
}

/// `[row len u16][row][family len u8][family][qualifier][timestamp i64][type u8]`. The
/// caller checked the row and family lengths.
fn key(row: &[u8], family: &[u8], qualifier: &[u8], timestamp: i64, type_code: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(key_len(row.len(), family.len(), qualifier.len()));
    out.extend_from_slice(&(row.len() as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.push(family.len() as u8);
    out.extend_from_slice(family);
    out.extend_from_slice(qualifier);
    out.extend_from_slice(&timestamp.to_be_bytes());
    out.push(type_code);
    out
}

/// HBase's order of keys, sequence id ignored (as `compareKeyIgnoresMvcc`).
pub(crate) fn compare_keys(a: &CellRef<'_>, b: &CellRef<'_>) -> Ordering {
    a.row
        .cmp(b.row)
        .then_with(|| a.family.cmp(b.family))
        .then_with(|| a.qualifier.cmp(b.qualifier))
        .then_with(|| b.timestamp.cmp(&a.timestamp))
        .then_with(|| b.kind.code().cmp(&a.kind.code()))
}

/// The key HBase puts in the index for a block whose first cell is `right`, the previous
/// block having ended with `left`: a short key `k` with `left < k <= right`.
pub(crate) fn index_key(left: Option<&CellRef<'_>>, right: &CellRef<'_>) -> Vec<u8> {
    let Some(left) = left else {
        return right.key();
    };
    if let Some(row) = midpoint(left.row, right.row) {
        return key(&row, b"", b"", LATEST_TIMESTAMP, TYPE_MAXIMUM);
    }
    if let Some(family) = midpoint(left.family, right.family) {
        return key(right.row, &family, b"", LATEST_TIMESTAMP, TYPE_MAXIMUM);
    }
    if let Some(qualifier) = midpoint(left.qualifier, right.qualifier) {
        return key(
            right.row,
            right.family,
            &qualifier,
            LATEST_TIMESTAMP,
            TYPE_MAXIMUM,
        );
    }
    right.key()
}

/// `getMinimumMidpointArray`: the shortest array after `left` and not after `right`, or
/// None when they are equal. `left <= right` holds (the writer checked the order).
fn midpoint(left: &[u8], right: &[u8]) -> Option<Vec<u8>> {
    let min = left.len().min(right.len());
    let diff = (0..min).find(|&i| left[i] != right[i]);
    match diff {
        None if left.len() < right.len() => {
            let mut m = right[..=min].to_vec();
            m[min] = 0;
            Some(m)
        }
        None => None,
        Some(i) => {
            let mut m = left[..=i].to_vec();
            m[i] = m[i].wrapping_add(1);
            Some(m)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::parse_key;
    use bytes::Bytes;

    fn c<'a>(row: &'a [u8], q: &'a [u8], ts: i64) -> CellRef<'a> {
        CellRef::put(row, b"f", q, ts, b"")
    }

    /// The index key sorts after `left` and not after `right`.
    fn check(left: CellRef<'_>, right: CellRef<'_>) -> Vec<u8> {
        let k = index_key(Some(&left), &right);
        let parsed = parse_key(&Bytes::from(k.clone())).expect("key");
        let as_cell = |row: &Bytes, f: &Bytes, q: &Bytes| (row.to_vec(), f.to_vec(), q.to_vec());
        let (r, f, q) = as_cell(&parsed.row, &parsed.family, &parsed.qualifier);
        let fake = |ts| CellRef {
            row: &r,
            family: &f,
            qualifier: &q,
            timestamp: ts,
            kind: CellKind::Put,
            value: b"",
            seq_id: 0,
        };
        // Type Maximum sorts first among equal timestamps; compare with LATEST_TIMESTAMP
        // and a Put type instead, which sorts after Maximum: if that is still <= right,
        // the real key is too.
        let k_cell = fake(parsed.timestamp);
        assert_ne!(compare_keys(&left, &k_cell), Ordering::Greater);
        assert_ne!(compare_keys(&k_cell, &right), Ordering::Greater);
        if parsed.type_code == TYPE_MAXIMUM {
            // Strictly after left: a different (greater) row, family or qualifier.
            assert_eq!(
                (left.row, left.family, left.qualifier).cmp(&(&r[..], &f[..], &q[..])),
                Ordering::Less
            );
        }
        k
    }

    #[test]
    fn midpoints_are_short_and_between() {
        assert_eq!(midpoint(b"abc", b"abz"), Some(b"abd".to_vec()));
        assert_eq!(midpoint(b"ab", b"abc"), Some(b"ab\0".to_vec()));
        assert_eq!(midpoint(b"ab", b"ab"), None);
        assert_eq!(midpoint(b"", b"x"), Some(b"\0".to_vec()));
        let k = check(c(b"row-0001", b"q", 5), c(b"row-0100", b"q", 5));
        assert_eq!(
            parse_key(&Bytes::from(k)).expect("k").row.as_ref(),
            b"row-01"
        );
        check(c(b"r", b"qa", 5), c(b"r", b"qb", 5));
        let same = check(c(b"r", b"q", 9), c(b"r", b"q", 5));
        assert_eq!(same, c(b"r", b"q", 5).key());
        check(c(b"a\xfe", b"q", 1), c(b"a\xff", b"", 1));
    }

    #[test]
    fn first_block_key_is_the_cell_key() {
        let right = c(b"r", b"q", 5);
        assert_eq!(index_key(None, &right), right.key());
    }
}
