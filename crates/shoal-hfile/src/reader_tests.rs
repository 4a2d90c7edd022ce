//! Whole files built by hand (from the layouts HBase writes) for what the HBase-written
//! fixtures do not cover: no checksums (minor 0), a one-level index, an empty file, the
//! meta comparator, dictionary-compressed tags, encryption.

use super::*;
use crate::block::build::block_with;
use crate::encoding::testutil::{self, Sample, samples};
use crate::file_info::{self as fi, build as fi_build};
use crate::index::build as index_build;
use crate::order::Comparator;
use crate::trailer::build as trailer_build;
use bytes::Bytes;

struct Spec {
    encrypted: bool,
    encoding: DataBlockEncoding,
    codec: Compression,
    minor: u32,
    format: CellFormat,
    comparator: &'static str,
    cells: Vec<HCell>,
    cells_per_block: usize,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            encrypted: false,
            encoding: DataBlockEncoding::FastDiff,
            codec: Compression::Gz,
            minor: 3,
            format: CellFormat {
                includes_tags: true,
                includes_mvcc: true,
                tags_compressed: false,
            },
            comparator: "org.apache.hadoop.hbase.KeyValue$KVComparator",
            cells: samples(),
            cells_per_block: 4,
        }
    }
}

fn encode(spec: &Spec, cells: &[HCell]) -> (BlockType, Vec<u8>) {
    let f = spec.format;
    let body = match spec.encoding {
        DataBlockEncoding::None => return (BlockType::Data, testutil::encode_plain(cells, f)),
        DataBlockEncoding::Prefix => testutil::encode_prefix(cells, f),
        DataBlockEncoding::Diff => testutil::encode_diff(cells, f),
        DataBlockEncoding::FastDiff => testutil::encode_fast_diff(cells, f),
        DataBlockEncoding::RowIndexV1 => testutil::encode_row_index(cells, f),
    };
    let mut payload = spec.encoding.id().to_be_bytes().to_vec();
    payload.extend_from_slice(&body);
    (BlockType::EncodedData, payload)
}

fn build(spec: &Spec) -> Vec<u8> {
    let checksums = spec.minor >= 1;
    let mut out = Vec::new();
    let mut index = Vec::new();
    let mut last_block = 0;
    for chunk in spec.cells.chunks(spec.cells_per_block.max(1)) {
        let (kind, payload) = encode(spec, chunk);
        let b = block_with(kind, &payload, spec.codec, checksums);
        last_block = out.len() as u64;
        index.push(IndexEntry {
            offset: last_block,
            on_disk_size: b.len() as u32,
            key: Bytes::from(chunk[0].key_bytes()),
        });
        out.extend_from_slice(&b);
    }
    let load_on_open = out.len() as u64;
    let root = index_build::root(&index);
    out.extend_from_slice(&block_with(
        BlockType::RootIndex,
        &root,
        spec.codec,
        checksums,
    ));
    out.extend_from_slice(&block_with(
        BlockType::RootIndex,
        &[],
        spec.codec,
        checksums,
    ));
    let file_info_offset = out.len() as u64;
    let mut entries: Vec<(&[u8], Vec<u8>)> = vec![
        (
            fi::DATA_BLOCK_ENCODING,
            spec.encoding.name().as_bytes().to_vec(),
        ),
        (
            fi::KEY_VALUE_VERSION,
            i32::from(spec.format.includes_mvcc).to_be_bytes().to_vec(),
        ),
    ];
    if let Some(last) = spec.cells.last() {
        entries.push((fi::LAST_KEY, last.key_bytes()));
    }
    if spec.format.includes_tags {
        entries.push((fi::MAX_TAGS_LEN, 100i32.to_be_bytes().to_vec()));
        entries.push((
            fi::TAGS_COMPRESSED,
            vec![u8::from(spec.format.tags_compressed)],
        ));
    }
    let pairs: Vec<(&[u8], &[u8])> = entries.iter().map(|(k, v)| (*k, v.as_slice())).collect();
    let info = fi_build::pb(&pairs);
    out.extend_from_slice(&block_with(
        BlockType::FileInfo,
        &info,
        spec.codec,
        checksums,
    ));
    let empty = spec.cells.is_empty();
    let t = Trailer {
        major_version: 3,
        minor_version: spec.minor,
        trailer_offset: 0,
        file_info_offset,
        load_on_open_offset: load_on_open,
        uncompressed_data_index_size: 0,
        total_uncompressed_bytes: 0,
        data_index_count: index.len() as u32,
        meta_index_count: 0,
        entry_count: spec.cells.len() as u64,
        num_data_index_levels: 1,
        first_data_block_offset: if empty { u64::MAX } else { 0 },
        last_data_block_offset: if empty { u64::MAX } else { last_block },
        comparator_class_name: spec.comparator.into(),
        comparator: Comparator::Cell,
        compression: spec.codec,
        encrypted: spec.encrypted,
    };
    out.extend_from_slice(&trailer_build::v3(&t));
    out
}

fn read_all(bytes: Vec<u8>) -> Result<Vec<HCell>, HFileError> {
    let f = HFile::open(bytes, "built.hfile")?;
    f.cells().collect()
}

#[test]
fn every_encoding_codec_and_minor_version_reads_back() {
    for encoding in [
        DataBlockEncoding::None,
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::RowIndexV1,
    ] {
        for codec in [Compression::None, Compression::Snappy, Compression::Zstd] {
            for minor in [0, 3] {
                for format in Sample::formats() {
                    let spec = Spec {
                        encoding,
                        codec,
                        minor,
                        format,
                        ..Spec::default()
                    };
                    let want = Sample::expected(&spec.cells, format);
                    let bytes = build(&spec);
                    let f = HFile::open(bytes, "built.hfile").expect("opens");
                    assert_eq!(f.encoding(), encoding);
                    assert_eq!(f.trailer().has_checksums(), minor >= 1);
                    let got: Result<Vec<_>, _> = f.cells().collect();
                    assert_eq!(got.expect("cells"), want, "{encoding:?} {codec:?} {minor}");
                    let blocks = f.data_block_offsets().expect("index");
                    assert_eq!(blocks.len(), f.data_block_count().expect("count"));
                }
            }
        }
    }
}

#[test]
fn an_empty_file_has_no_cells() {
    let spec = Spec {
        cells: vec![],
        ..Spec::default()
    };
    let f = HFile::open(build(&spec), "empty.hfile").expect("opens");
    assert_eq!(f.cells().count(), 0);
    assert!(f.first_key().is_none() && f.last_key().is_none());
    assert_eq!(f.data_block_offsets().expect("index"), vec![]);
}

#[test]
fn compressed_tags_are_refused_clearly() {
    let spec = Spec {
        format: CellFormat {
            includes_tags: true,
            includes_mvcc: true,
            tags_compressed: true,
        },
        ..Spec::default()
    };
    let e = read_all(build(&spec)).expect_err("compressed tags");
    assert!(matches!(e.kind, ErrorKind::Unsupported(_)), "{e}");
    assert!(e.to_string().contains("TAGS_COMPRESSED"), "{e}");
}

#[test]
fn meta_comparator_orders_meta_rows() {
    // Bytewise "t,a,1" > "t!,a,1", but hbase:meta orders by table first.
    let mk = |row: &str| {
        let mut c = samples()[1].clone();
        c.row = Bytes::copy_from_slice(row.as_bytes());
        c
    };
    let cells = vec![mk("t,a,1"), mk("t!,a,1")];
    let spec = Spec {
        cells: cells.clone(),
        comparator: "org.apache.hadoop.hbase.MetaCellComparator",
        ..Spec::default()
    };
    assert_eq!(read_all(build(&spec)).expect("meta order"), cells);
    let spec = Spec {
        cells,
        ..Spec::default()
    };
    let e = read_all(build(&spec)).expect_err("default order");
    assert!(matches!(e.kind, ErrorKind::OutOfOrder(_)), "{e}");
}

#[test]
fn a_wrong_entry_count_is_an_error() {
    let mut bytes = build(&Spec::default());
    // Field 7 (entry count) is a one-byte varint 12 in the trailer's protobuf.
    let trailer = bytes.len() - 4096;
    let at = bytes[trailer..]
        .windows(2)
        .position(|w| w == [0x38, 12])
        .expect("entry count field")
        + trailer;
    bytes[at + 1] = 13;
    let e = read_all(bytes).expect_err("count");
    assert!(e.to_string().contains("trailer counts 13 cells"), "{e}");
}

#[test]
fn unknown_comparators_are_refused() {
    let spec = Spec {
        comparator: "com.example.MyComparator",
        ..Spec::default()
    };
    let e = HFile::open(build(&spec), "c.hfile").err().expect("refused");
    assert!(matches!(e.kind, ErrorKind::UnknownComparator(_)), "{e}");
}

#[test]
fn encrypted_files_are_refused() {
    let spec = Spec {
        encrypted: true,
        ..Spec::default()
    };
    let e = HFile::open(build(&spec), "e.hfile").err().expect("refused");
    assert!(
        e.to_string().contains("unsupported: encrypted HFiles"),
        "{e}"
    );
}
