//! Unit tests of the writer's pieces against the reader's parsers; whole-file round trips
//! are in `tests/writer.rs`.

use super::*;
use crate::HFile;

fn write(cells: &[CellRef<'_>], options: HFileWriterOptions) -> (Vec<u8>, HFileSummary) {
    let mut out = Vec::new();
    let mut w = HFileWriter::new(&mut out, options).expect("writer");
    for c in cells {
        w.append(c).expect("append");
    }
    let s = w.finish().expect("finish");
    (out, s)
}

#[test]
fn trailer_reads_back() {
    let (bytes, s) = write(
        &[CellRef::put(b"r", b"f", b"q", 7, b"v")],
        HFileWriterOptions::default(),
    );
    assert_eq!(s.bytes, bytes.len() as u64);
    let t = crate::trailer::read_trailer(bytes.as_slice(), "t").expect("trailer");
    assert_eq!((t.major_version, t.minor_version), (3, 3));
    assert_eq!(t.entry_count, 1);
    assert_eq!(t.comparator_class_name, COMPARATOR_CLASS);
    assert_eq!(t.first_data_block_offset, 0);
    assert_eq!(t.num_data_index_levels, 1);
    assert_eq!(t.trailer_offset, bytes.len() as u64 - 4096);
}

#[test]
fn empty_file_opens() {
    let (bytes, s) = write(&[], HFileWriterOptions::default());
    assert_eq!(s.cells, 0);
    let f = HFile::open(bytes, "empty").expect("open");
    assert_eq!(f.trailer().first_data_block_offset, u64::MAX);
    assert_eq!(f.cells().count(), 0);
    assert!(f.file_info().last_key().is_none());
}

#[test]
fn file_info_has_the_store_file_keys() {
    let cells = [
        CellRef {
            kind: CellKind::DeleteFamily,
            ..CellRef::put(b"r", b"f", b"", 50, b"")
        },
        CellRef {
            seq_id: 9,
            ..CellRef::put(b"r", b"f", b"q", 40, b"value")
        },
    ];
    let options = HFileWriterOptions {
        create_time_ms: 1234,
        bulkload_time_ms: Some(99),
        ..HFileWriterOptions::default()
    };
    let (bytes, _) = write(&cells, options);
    let f = HFile::open(bytes, "info").expect("open");
    let info = f.file_info();
    let get = |k: &str| info.get(k.as_bytes()).map(|v| v.to_vec());
    let long = |v: i64| Some(v.to_be_bytes().to_vec());
    assert_eq!(get("MAX_MEMSTORE_TS_KEY"), long(9));
    assert_eq!(get("KEY_VALUE_VERSION"), Some(1i32.to_be_bytes().to_vec()));
    let mut range = 0i64.to_be_bytes().to_vec();
    range.extend_from_slice(&50i64.to_be_bytes());
    assert_eq!(get("TIMERANGE"), Some(range));
    assert_eq!(get("EARLIEST_PUT_TS"), long(40));
    assert_eq!(get("DELETE_FAMILY_COUNT"), long(1));
    assert_eq!(get("hfile.CREATE_TIME_TS"), long(1234));
    assert_eq!(get("BULKLOAD_TIMESTAMP"), long(99));
    assert_eq!(get("BLOOM_FILTER_TYPE"), Some(b"NONE".to_vec()));
    assert_eq!(get("hfile.LASTKEY"), Some(cells[1].key()));
    assert_eq!(get("DATA_BLOCK_ENCODING"), None);
    let format = f.cell_format();
    assert!(format.includes_tags && format.includes_mvcc && !format.tags_compressed);
}

#[test]
fn options_are_checked() {
    let bad = [
        HFileWriterOptions {
            compression: Compression::Lzo,
            ..HFileWriterOptions::default()
        },
        HFileWriterOptions {
            bytes_per_checksum: 10,
            ..HFileWriterOptions::default()
        },
        HFileWriterOptions {
            block_size: 0,
            ..HFileWriterOptions::default()
        },
    ];
    for o in bad {
        assert!(HFileWriter::new(Vec::new(), o).is_err());
    }
}
