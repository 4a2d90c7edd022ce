//! The HFile writer against this crate's reader: every cell HBase's fixtures hold (all
//! delete types, big values, long rows) and large generated files (many blocks, index of
//! three and more levels; NONE, GZ and SNAPPY) read back equal; cells out of order and
//! cells HBase cannot store are refused.

use crate::cells::{cell, fixture_cells, generated, write_all};
use crate::support::all_cells;
use shoal_hfile::{
    CellKind, CellRef, Compression, HCell, HFile, HFileSummary, HFileWriter, HFileWriterOptions,
    WriteError,
};

fn read_back(bytes: Vec<u8>, name: &str) -> (HFile<Vec<u8>>, Vec<HCell>) {
    let f = HFile::open(bytes, name).unwrap_or_else(|e| panic!("{e}"));
    let cells = all_cells(&f).unwrap_or_else(|e| panic!("{e}"));
    (f, cells)
}

/// The index walked through every level lists each data block once, in order, and its
/// keys are the first keys; the first and last keys are the cells'.
fn check_structure(f: &HFile<Vec<u8>>, s: &HFileSummary, cells: &[HCell]) {
    let entries = f.data_block_offsets().expect("index");
    assert_eq!(entries.len() as u64, s.data_blocks);
    assert_eq!(f.data_block_count().expect("blocks"), entries.len());
    assert!(entries.windows(2).all(|w| w[0].offset < w[1].offset));
    assert_eq!(f.trailer().num_data_index_levels, s.index_levels);
    let first = f.first_key().expect("first key").expect("parse");
    assert_eq!(first.row, cells[0].row);
    let last = f.last_key().expect("last key").expect("parse");
    let tail = &cells[cells.len() - 1];
    assert_eq!(
        (last.row, last.timestamp),
        (tail.row.clone(), tail.timestamp)
    );
    assert_eq!(Some(cells[0].key_bytes()), s.first_key);
}

#[test]
fn hbase_fixture_cells_round_trip() {
    let cells = fixture_cells();
    assert_eq!(cells.len(), 1421);
    for codec in [Compression::None, Compression::Gz, Compression::Snappy] {
        let options = HFileWriterOptions {
            block_size: 2048,
            index_block_max_size: 512,
            index_min_entries: 4,
            compression: codec,
            ..HFileWriterOptions::default()
        };
        let (bytes, s) = write_all(&cells, options);
        let (f, back) = read_back(bytes, "fixture-cells");
        assert_eq!(back, cells, "{codec:?}");
        assert_eq!(f.compression(), codec);
        assert!(s.index_levels >= 2, "{s:?}");
        check_structure(&f, &s, &cells);
    }
}

#[test]
fn large_files_with_multi_level_indexes_round_trip() {
    let cells = generated(60_000);
    for (codec, block_size, index_max, min_levels) in [
        (Compression::None, 64 * 1024, 128 * 1024, 1),
        (Compression::None, 256, 1024, 3),
        (Compression::Gz, 1024, 2048, 2),
        (Compression::Snappy, 512, 1024, 3),
    ] {
        let options = HFileWriterOptions {
            block_size,
            index_block_max_size: index_max,
            compression: codec,
            ..HFileWriterOptions::default()
        };
        let (bytes, s) = write_all(&cells, options);
        let (f, back) = read_back(bytes, "generated");
        assert_eq!(back.len(), cells.len());
        assert!(back == cells, "{codec:?} {block_size}: cells differ");
        assert!(
            s.index_levels >= min_levels,
            "{codec:?} {block_size}: {s:?}"
        );
        check_structure(&f, &s, &cells);
        eprintln!(
            "{codec:?} block {block_size}: {} bytes, {} blocks, {} levels",
            s.bytes, s.data_blocks, s.index_levels
        );
    }
}

#[test]
fn huge_cells_and_duplicate_keys() {
    let big = vec![7u8; 300_000];
    let mut cells = vec![
        cell("a", "q", 5, CellKind::Put, &big, 9),
        cell("a", "q", 5, CellKind::Put, b"older", 3),
        cell("a", "q", 5, CellKind::Put, b"oldest", 3),
        cell(&"r".repeat(32_767), "q", 1, CellKind::Put, &big, 0),
    ];
    cells.push(cell("z", "", i64::MIN, CellKind::Put, b"", 0));
    let (bytes, _) = write_all(
        &cells,
        HFileWriterOptions {
            block_size: 100,
            compression: Compression::Snappy,
            ..HFileWriterOptions::default()
        },
    );
    assert_eq!(read_back(bytes, "huge").1, cells);
}

#[test]
fn out_of_order_cells_are_refused() {
    let first = cell("b", "q", 10, CellKind::Put, b"v", 5);
    let later = [
        cell("a", "q", 10, CellKind::Put, b"v", 5),
        cell("b", "p", 10, CellKind::Put, b"v", 5),
        cell("b", "q", 11, CellKind::Put, b"v", 5),
        cell("b", "q", 10, CellKind::DeleteColumn, b"", 5),
        cell("b", "q", 10, CellKind::Put, b"v", 6),
    ];
    for bad in &later {
        let mut out = Vec::new();
        let mut w = HFileWriter::new(&mut out, HFileWriterOptions::default()).expect("writer");
        w.append(&CellRef::from_cell(&first)).expect("first");
        let e = w
            .append(&CellRef::from_cell(bad))
            .expect_err("out of order");
        assert!(matches!(e, WriteError::OutOfOrder(_)), "{e}");
        assert!(e.to_string().contains("row \"b\""), "{e}");
        // The refused cell left nothing behind: the file holds the first cell only.
        w.append(&CellRef::from_cell(&cell(
            "c",
            "",
            1,
            CellKind::Put,
            b"",
            0,
        )))
        .expect("in order");
        w.finish().expect("finish");
        assert_eq!(read_back(out, "order").1.len(), 2);
    }
}

#[test]
fn cells_hbase_cannot_store_are_refused() {
    let mut w = HFileWriter::new(Vec::new(), HFileWriterOptions::default()).expect("writer");
    let long_row = vec![b'r'; 32_768];
    let e = w
        .put(&long_row, b"f", b"q", 1, b"v")
        .expect_err("row too long");
    assert!(matches!(e, WriteError::BadCell(_)), "{e}");
    let long_family = vec![b'f'; 128];
    assert!(w.put(b"r", &long_family, b"q", 1, b"v").is_err());
    w.put(b"r", b"f", b"q", 1, b"v").expect("fine");
}
