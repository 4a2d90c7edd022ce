//! HBase's sort order of cells, as named by the trailer's comparator class: rows
//! ascending (bytewise, or `hbase:meta`'s table,startkey,id order), then family and
//! qualifier ascending, timestamp descending, type descending, sequence id descending.

use crate::kv::HCell;
use std::cmp::Ordering;

/// Which comparator the file was written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparator {
    /// `CellComparator(Impl)`, `InnerStoreCellComparator`, `KeyValue$KVComparator`.
    Cell,
    /// `MetaCellComparator`, `KeyValue$MetaComparator`: rows of `hbase:meta`.
    Meta,
    /// `KeyValue$RawBytesComparator`, `Bytes$ByteArrayComparator`: the serialized key's
    /// bytes.
    RawBytes,
}

const CELL_NAMES: &[&str] = &[
    "",
    "org.apache.hadoop.hbase.CellComparator",
    "org.apache.hadoop.hbase.CellComparatorImpl",
    "org.apache.hadoop.hbase.InnerStoreCellComparator",
    "org.apache.hadoop.hbase.KeyValue$KVComparator",
    "org.apache.hadoop.hbase.KeyValue$KeyComparator",
];
const META_NAMES: &[&str] = &[
    "org.apache.hadoop.hbase.MetaCellComparator",
    "org.apache.hadoop.hbase.CellComparator$MetaCellComparator",
    "org.apache.hadoop.hbase.CellComparatorImpl$MetaCellComparator",
    "org.apache.hadoop.hbase.KeyValue$MetaComparator",
    "org.apache.hadoop.hbase.KeyValue$MetaKeyComparator",
];
const RAW_NAMES: &[&str] = &[
    "org.apache.hadoop.hbase.KeyValue$RawBytesComparator",
    "org.apache.hadoop.hbase.util.Bytes$ByteArrayComparator",
];

impl Comparator {
    /// The comparator a trailer's class name means (an empty name is HBase's default).
    pub fn from_class_name(name: &str) -> Option<Comparator> {
        if CELL_NAMES.contains(&name) {
            Some(Comparator::Cell)
        } else if META_NAMES.contains(&name) {
            Some(Comparator::Meta)
        } else if RAW_NAMES.contains(&name) {
            Some(Comparator::RawBytes)
        } else {
            None
        }
    }

    /// Orders two cells as HBase does (sequence id last, descending).
    pub fn compare(self, a: &HCell, b: &HCell) -> Ordering {
        let keys = match self {
            Comparator::RawBytes => a.key_bytes().cmp(&b.key_bytes()),
            Comparator::Cell => a.row.cmp(&b.row).then_with(|| compare_columns(a, b)),
            Comparator::Meta => {
                compare_meta_rows(&a.row, &b.row).then_with(|| compare_columns(a, b))
            }
        };
        keys.then_with(|| b.seq_id.cmp(&a.seq_id))
    }
}

fn compare_columns(a: &HCell, b: &HCell) -> Ordering {
    a.family
        .cmp(&b.family)
        .then_with(|| a.qualifier.cmp(&b.qualifier))
        .then_with(|| b.timestamp.cmp(&a.timestamp))
        .then_with(|| b.kind.code().cmp(&a.kind.code()))
}

/// `hbase:meta` rows are `table,startkey,regionid`: compare the table (up to the first
/// comma; a row without one sorts first), then the start key (up to the last comma), then
/// the region id after it.
fn compare_meta_rows(a: &[u8], b: &[u8]) -> Ordering {
    let (a_comma, b_comma) = (first_comma(a), first_comma(b));
    let a_table = &a[..a_comma.unwrap_or(a.len())];
    let b_table = &b[..b_comma.unwrap_or(b.len())];
    let (ai, bi) = match (a_comma, b_comma) {
        (Some(ai), Some(bi)) => (ai + 1, bi + 1),
        _ => {
            return a_table
                .cmp(b_table)
                .then(a_comma.is_some().cmp(&b_comma.is_some()));
        }
    };
    a_table.cmp(b_table).then_with(|| {
        let (a_start, a_id) = split_last_comma(a, ai);
        let (b_start, b_id) = split_last_comma(b, bi);
        a_start.cmp(b_start).then_with(|| a_id.cmp(b_id))
    })
}

fn first_comma(row: &[u8]) -> Option<usize> {
    row.iter().position(|b| *b == b',')
}

/// The start key (from `from` to the last comma) and the region id after that comma; with
/// no further comma the start key runs to the end and, as in HBase, the id is the row.
fn split_last_comma(row: &[u8], from: usize) -> (&[u8], &[u8]) {
    match row[from..].iter().rposition(|b| *b == b',') {
        Some(i) => (&row[from..from + i], &row[from + i + 1..]),
        None => (&row[from..], row),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::CellKind;
    use bytes::Bytes;

    fn cell(row: &str, q: &str, ts: i64, kind: CellKind) -> HCell {
        HCell {
            row: Bytes::copy_from_slice(row.as_bytes()),
            family: Bytes::from_static(b"f"),
            qualifier: Bytes::copy_from_slice(q.as_bytes()),
            timestamp: ts,
            kind,
            value: Bytes::new(),
            tags: vec![],
            seq_id: 0,
        }
    }

    #[test]
    fn cell_order() {
        let c = Comparator::Cell;
        let a = cell("a", "q", 5, CellKind::Put);
        assert_eq!(
            c.compare(&a, &cell("b", "q", 5, CellKind::Put)),
            Ordering::Less
        );
        assert_eq!(
            c.compare(&a, &cell("a", "q", 4, CellKind::Put)),
            Ordering::Less
        );
        assert_eq!(
            c.compare(&cell("a", "q", 5, CellKind::DeleteColumn), &a),
            Ordering::Less
        );
        assert_eq!(
            c.compare(&a, &cell("a", "r", 9, CellKind::Put)),
            Ordering::Less
        );
    }

    #[test]
    fn meta_rows_compare_by_parts() {
        // Bytewise "t,a" > "t!,a" but meta orders table "t" first.
        assert_eq!(compare_meta_rows(b"t,a,1", b"t!,a,1"), Ordering::Less);
        assert_eq!(compare_meta_rows(b"t,a,1", b"t,a,2"), Ordering::Less);
        assert_eq!(compare_meta_rows(b"t,a,9", b"t,a\x00,1"), Ordering::Less);
    }

    #[test]
    fn names_recognised() {
        assert_eq!(
            Comparator::from_class_name("org.apache.hadoop.hbase.KeyValue$KVComparator"),
            Some(Comparator::Cell)
        );
        assert_eq!(
            Comparator::from_class_name("org.apache.hadoop.hbase.MetaCellComparator"),
            Some(Comparator::Meta)
        );
        assert_eq!(Comparator::from_class_name("com.example.Mine"), None);
    }
}
