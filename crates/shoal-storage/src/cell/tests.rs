//! Cell order, key and cell encoding: unit and property tests.

use super::*;
use proptest::prelude::*;

fn arb_kind() -> impl Strategy<Value = CellType> {
    prop_oneof![
        Just(CellType::Put),
        Just(CellType::Delete),
        Just(CellType::DeleteFamilyVersion),
        Just(CellType::DeleteColumn),
        Just(CellType::DeleteFamily),
    ]
}

fn arb_cell() -> impl Strategy<Value = Cell> {
    (
        prop::collection::vec(any::<u8>(), 1..6),
        prop::collection::vec(prop::sample::select(vec![b'a', b'b']), 0..3),
        prop::collection::vec(any::<u8>(), 0..4),
        prop_oneof![any::<i64>(), -2i64..3],
        arb_kind(),
        prop_oneof![any::<u64>(), 0u64..3],
        prop::collection::vec(any::<u8>(), 0..16),
    )
        .prop_map(
            |(row, family, qualifier, timestamp, kind, seq, value)| Cell {
                row: row.into(),
                family: family.into(),
                qualifier: qualifier.into(),
                timestamp,
                kind,
                seq,
                value: value.into(),
            },
        )
}

/// The order spelled out as a tuple, independently of `KeyRef::cmp`.
fn reference_key(c: &Cell) -> impl Ord {
    (
        c.row.to_vec(),
        c.family.to_vec(),
        c.qualifier.to_vec(),
        std::cmp::Reverse(c.timestamp),
        std::cmp::Reverse(c.kind.code()),
        std::cmp::Reverse(c.seq),
    )
}

proptest! {
    #[test]
    fn order_matches_reference(a in arb_cell(), b in arb_cell()) {
        prop_assert_eq!(compare_cells(&a, &b), reference_key(&a).cmp(&reference_key(&b)));
    }

    #[test]
    fn key_encoding_round_trips(c in arb_cell()) {
        let enc = c.key().encode().unwrap();
        prop_assert_eq!(enc.len(), c.key().encoded_len());
        let dec = KeyRef::decode(&enc).unwrap();
        prop_assert_eq!(dec, c.key());
    }

    #[test]
    fn cell_encoding_round_trips(cells in prop::collection::vec(arb_cell(), 0..8)) {
        let mut buf = Vec::new();
        for c in &cells {
            encode_cell(c, &mut buf).unwrap();
        }
        let buf = Bytes::from(buf);
        let mut pos = 0;
        let mut out = Vec::new();
        while pos < buf.len() {
            let (c, n) = decode_cell(&buf.slice(pos..)).unwrap();
            pos += n;
            out.push(c);
        }
        prop_assert_eq!(out, cells);
    }

    #[test]
    fn decoding_garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = KeyRef::decode(&bytes);
        let _ = decode_cell(&Bytes::from(bytes));
    }

    #[test]
    fn truncated_cells_are_errors(c in arb_cell(), cut in 0usize..1000) {
        let mut buf = Vec::new();
        encode_cell(&c, &mut buf).unwrap();
        let cut = cut % buf.len();
        prop_assert!(decode_cell(&Bytes::copy_from_slice(&buf[..cut])).is_err());
    }
}

#[test]
fn delete_markers_sort_before_puts_at_same_timestamp() {
    let mk = |kind| Cell::delete("r", "f", "q", 5, kind, 1);
    let mut cells = [
        Cell::put("r", "f", "q", 5, 1, "v"),
        mk(CellType::Delete),
        mk(CellType::DeleteColumn),
        mk(CellType::DeleteFamily),
        mk(CellType::DeleteFamilyVersion),
    ];
    cells.sort_by(compare_cells);
    let kinds: Vec<_> = cells.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [
            CellType::DeleteFamily,
            CellType::DeleteColumn,
            CellType::DeleteFamilyVersion,
            CellType::Delete,
            CellType::Put
        ]
    );
}

#[test]
fn newer_timestamps_and_sequences_sort_first() {
    let old = Cell::put("r", "f", "q", 1, 9, "a");
    let new = Cell::put("r", "f", "q", 2, 1, "b");
    assert_eq!(compare_cells(&new, &old), std::cmp::Ordering::Less);
    let lo_seq = Cell::put("r", "f", "q", 2, 1, "a");
    let hi_seq = Cell::put("r", "f", "q", 2, 2, "b");
    assert_eq!(compare_cells(&hi_seq, &lo_seq), std::cmp::Ordering::Less);
    // Negative timestamps still order by value.
    let neg = Cell::put("r", "f", "q", -1, 1, "a");
    assert_eq!(compare_cells(&old, &neg), std::cmp::Ordering::Less);
}

#[test]
fn first_of_row_sorts_before_every_cell_of_the_row() {
    let first = KeyRef::first_of_row(b"r");
    let c = Cell::delete("r", "a", "", i64::MAX, CellType::DeleteFamily, u64::MAX);
    assert!(first <= c.key());
    let prev = Cell::put(&b"q\xff"[..], "f", "q", 0, 0, "");
    assert!(prev.key() < first);
}

#[test]
fn limits_are_enforced() {
    let long_row = Cell::put(vec![0u8; MAX_ROW_LEN + 1], "f", "q", 0, 0, "");
    assert!(matches!(
        long_row.validate(),
        Err(CellError::TooLong { field: "row", .. })
    ));
    let long_fam = Cell::put("r", vec![0u8; MAX_FAMILY_LEN + 1], "q", 0, 0, "");
    assert!(matches!(
        long_fam.validate(),
        Err(CellError::TooLong {
            field: "family",
            ..
        })
    ));
    let empty = Cell::put("", "f", "q", 0, 0, "");
    assert_eq!(empty.validate(), Err(CellError::EmptyRow));
    let mut buf = Vec::new();
    assert!(encode_cell(&long_row, &mut buf).is_err());
    assert!(buf.is_empty());
}

#[test]
fn unknown_type_code_is_an_error() {
    let mut enc = Cell::put("r", "f", "q", 0, 0, "").key().encode().unwrap();
    let type_at = enc.len() - 9;
    enc[type_at] = 5;
    assert_eq!(KeyRef::decode(&enc), Err(CellError::UnknownType(5)));
}
