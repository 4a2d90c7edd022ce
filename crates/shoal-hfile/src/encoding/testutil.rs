//! Encoders for tests, written from the logic of HBase's Java encoders
//! (`PrefixKeyDeltaEncoder`, `DiffKeyDeltaEncoder`, `FastDiffDeltaEncoder`,
//! `RowIndexEncoderV1`, `NoneEncoder`), to check the decoders against hand-built blocks.

use super::CellFormat;
use super::tag_dictionary::TagDictionary;
use crate::kv::{CellKind, HCell, Tag};
use bytes::Bytes;

pub(crate) struct Sample;

impl Sample {
    pub fn formats() -> Vec<CellFormat> {
        let mut out = Vec::new();
        for includes_tags in [false, true] {
            for includes_mvcc in [false, true] {
                for tags_compressed in [false, true] {
                    if tags_compressed && !includes_tags {
                        continue;
                    }
                    out.push(CellFormat {
                        includes_tags,
                        includes_mvcc,
                        tags_compressed,
                    });
                }
            }
        }
        out
    }

    /// What a decoder returns for `cells` written with `format` (no tags or sequence ids
    /// unless the format stores them).
    pub fn expected(cells: &[HCell], format: CellFormat) -> Vec<HCell> {
        cells
            .iter()
            .map(|c| HCell {
                tags: if format.includes_tags {
                    c.tags.clone()
                } else {
                    vec![]
                },
                seq_id: if format.includes_mvcc { c.seq_id } else { 0 },
                ..c.clone()
            })
            .collect()
    }
}

fn cell(row: &[u8], q: &[u8], ts: i64, kind: CellKind, value: &[u8], seq: u64) -> HCell {
    HCell {
        row: Bytes::copy_from_slice(row),
        family: Bytes::from_static(b"fam"),
        qualifier: Bytes::copy_from_slice(q),
        timestamp: ts,
        kind,
        value: Bytes::copy_from_slice(value),
        tags: vec![],
        seq_id: seq,
    }
}

/// Cells in HBase order exercising the encoders' cases: shared and unshared rows, row
/// lengths that differ in either byte, same and different key/value lengths, values and
/// types, timestamps near and far apart, empty qualifiers and values, tags, big mvcc.
pub(crate) fn samples() -> Vec<HCell> {
    let long_row = vec![b'r'; 300];
    let mut long_row2 = long_row.clone();
    long_row2.push(b'x');
    let mut out = vec![
        cell(b"a", b"", 1, CellKind::DeleteFamily, b"", 0),
        cell(b"a", b"q1", 1_700_000_000_000, CellKind::Put, b"v1", 1),
        cell(b"a", b"q1", 1_699_999_999_999, CellKind::Put, b"v1", 2),
        cell(b"a", b"q1", 5, CellKind::Delete, b"", 300),
        cell(b"a", b"q2", 5, CellKind::Put, b"value-two", 1 << 40),
        cell(b"ab", b"q2", 5, CellKind::DeleteColumn, b"", 7),
        cell(b"ab", b"q2", 4, CellKind::DeleteFamilyVersion, b"", 7),
        cell(
            &long_row,
            b"qualifier",
            i64::MAX,
            CellKind::Put,
            &[7u8; 1000],
            9,
        ),
        cell(&long_row2, b"qualifier", 0, CellKind::Put, &[7u8; 1000], 9),
        cell(&long_row2, b"qualifier-longer", 0, CellKind::Put, b"x", 10),
        cell(b"s", b"q", 1 << 33, CellKind::Put, b"x", 11),
        cell(b"t", b"q", 1 << 33, CellKind::Put, b"x", 11),
    ];
    out[1].tags = vec![Tag {
        kind: 8,
        value: Bytes::from_static(b"ttl"),
    }];
    out[4].tags = vec![
        Tag {
            kind: 1,
            value: Bytes::from_static(b"a"),
        },
        Tag {
            kind: 2,
            value: Bytes::new(),
        },
    ];
    out[2].tags = out[1].tags.clone();
    out[5].tags = vec![out[4].tags[1].clone(), out[1].tags[0].clone()];
    out[6].tags = out[4].tags.clone();
    out
}

fn tags_bytes(c: &HCell) -> Vec<u8> {
    let mut out = Vec::new();
    for t in &c.tags {
        out.extend_from_slice(&((t.value.len() + 1) as u16).to_be_bytes());
        out.push(t.kind);
        out.extend_from_slice(&t.value);
    }
    out
}

pub(crate) fn compressed_int(out: &mut Vec<u8>, mut v: usize) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

pub(crate) fn vlong(out: &mut Vec<u8>, v: i64) {
    if (-112..=127).contains(&v) {
        out.push(v as u8);
        return;
    }
    let (mut len, x) = if v < 0 { (-120i32, !v) } else { (-112i32, v) };
    let mut tmp = x;
    while tmp != 0 {
        tmp >>= 8;
        len -= 1;
    }
    out.push(len as i8 as u8);
    let n = if len < -120 {
        -(len + 120)
    } else {
        -(len + 112)
    };
    for idx in (0..n).rev() {
        out.push((x >> (idx * 8)) as u8);
    }
}

/// Tags and mvcc after a delta-encoded cell (`afterEncodingKeyValue`), tags
/// dictionary-compressed (`TagCompressionContext.compressTags`) if the format says so.
fn delta_suffix(out: &mut Vec<u8>, c: &HCell, format: CellFormat, dict: &mut TagDictionary) {
    if format.includes_tags {
        let t = tags_bytes(c);
        compressed_int(out, t.len());
        if format.tags_compressed {
            for tag in &c.tags {
                let mut body = vec![tag.kind];
                body.extend_from_slice(&tag.value);
                match dict.find(&body) {
                    Some(idx) => out.extend_from_slice(&idx.to_be_bytes()),
                    None => {
                        out.push(0xff);
                        compressed_int(out, body.len());
                        out.extend_from_slice(&body);
                        dict.add(Bytes::from(body));
                    }
                }
            }
        } else {
            out.extend_from_slice(&t);
        }
    }
    if format.includes_mvcc {
        vlong(out, c.seq_id as i64);
    }
}

/// One plain KeyValue (`NoneEncoder.write`).
pub(crate) fn plain_cell(out: &mut Vec<u8>, c: &HCell, format: CellFormat) {
    let key = c.key_bytes();
    out.extend_from_slice(&(key.len() as u32).to_be_bytes());
    out.extend_from_slice(&(c.value.len() as u32).to_be_bytes());
    out.extend_from_slice(&key);
    out.extend_from_slice(&c.value);
    if format.includes_tags {
        let t = tags_bytes(c);
        out.extend_from_slice(&(t.len() as u16).to_be_bytes());
        out.extend_from_slice(&t);
    }
    if format.includes_mvcc {
        vlong(out, c.seq_id as i64);
    }
}

fn common_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Common prefix of two keys, without timestamp and type.
fn common_without_ts(a: &[u8], b: &[u8]) -> usize {
    common_len(&a[..a.len() - 9], &b[..b.len() - 9])
}

pub(crate) fn encode_prefix(cells: &[HCell], format: CellFormat) -> Vec<u8> {
    let mut out = vec![0; 4];
    let mut dict = TagDictionary::default();
    let mut prev: Option<Vec<u8>> = None;
    for c in cells {
        let key = c.key_bytes();
        let common = prev.as_ref().map_or(0, |p| common_len(&key, p));
        compressed_int(&mut out, key.len() - common);
        compressed_int(&mut out, c.value.len());
        compressed_int(&mut out, common);
        out.extend_from_slice(&key[common..]);
        out.extend_from_slice(&c.value);
        delta_suffix(&mut out, c, format, &mut dict);
        prev = Some(key);
    }
    out
}

fn fits_in(v: i64) -> usize {
    if v < 0 {
        return 8;
    }
    (1..8).find(|n| v < 1i64 << (8 * n)).unwrap_or(8)
}

fn le(out: &mut Vec<u8>, v: i64, n: usize) {
    out.extend_from_slice(&v.to_le_bytes()[..n]);
}

/// Row-length-and-row after the common prefix, then the whole qualifier; or only the
/// qualifier's rest when the row (and so the family) is shared.
fn row_and_qualifier(out: &mut Vec<u8>, c: &HCell, key: &[u8], common: usize) {
    let row_end = 2 + c.row.len();
    if common < row_end {
        out.extend_from_slice(&key[common..row_end]);
        out.extend_from_slice(&c.qualifier);
    } else {
        out.extend_from_slice(&key[common..key.len() - 9]);
    }
}

pub(crate) fn encode_diff(cells: &[HCell], format: CellFormat) -> Vec<u8> {
    let mut out = vec![0; 4];
    let mut dict = TagDictionary::default();
    let mut prev: Option<&HCell> = None;
    for c in cells {
        let key = c.key_bytes();
        let mut flag = 0u8;
        let (ts_bytes, ts_value);
        let mut common = 0;
        match prev {
            None => {
                let mut ts = c.timestamp;
                if ts < 0 {
                    flag |= 1 << 7;
                    ts = -ts;
                }
                ts_bytes = fits_in(ts);
                ts_value = ts;
                flag |= ((ts_bytes - 1) as u8) << 4;
                out.push(c.family.len() as u8);
                out.extend_from_slice(&c.family);
            }
            Some(p) => {
                let pkey = p.key_bytes();
                common = common_without_ts(&key, &pkey);
                if key.len() == pkey.len() {
                    flag |= 1;
                }
                if c.value.len() == p.value.len() {
                    flag |= 2;
                }
                if c.kind == p.kind {
                    flag |= 4;
                }
                let mut ts = c.timestamp;
                let mut diff = p.timestamp.wrapping_sub(ts);
                let neg_ts = ts < 0;
                if neg_ts {
                    ts = -ts;
                }
                let neg_diff = diff < 0;
                if neg_diff {
                    diff = -diff;
                }
                if fits_in(diff) < fits_in(ts) {
                    ts_bytes = fits_in(diff);
                    ts_value = diff;
                    flag |= ((ts_bytes - 1) as u8) << 4 | 8;
                    if neg_diff {
                        flag |= 1 << 7;
                    }
                } else {
                    ts_bytes = fits_in(ts);
                    ts_value = ts;
                    flag |= ((ts_bytes - 1) as u8) << 4;
                    if neg_ts {
                        flag |= 1 << 7;
                    }
                }
            }
        }
        out.push(flag);
        if flag & 1 == 0 {
            compressed_int(&mut out, key.len());
        }
        if flag & 2 == 0 {
            compressed_int(&mut out, c.value.len());
        }
        compressed_int(&mut out, common);
        row_and_qualifier(&mut out, c, &key, common);
        le(&mut out, ts_value, ts_bytes);
        if flag & 4 == 0 {
            out.push(c.kind.code());
        }
        out.extend_from_slice(&c.value);
        delta_suffix(&mut out, c, format, &mut dict);
        prev = Some(c);
    }
    out
}

pub(crate) fn encode_fast_diff(cells: &[HCell], format: CellFormat) -> Vec<u8> {
    let mut out = vec![0; 4];
    let mut dict = TagDictionary::default();
    let mut prev: Option<&HCell> = None;
    for c in cells {
        let key = c.key_bytes();
        match prev {
            None => {
                out.push(0);
                compressed_int(&mut out, key.len());
                compressed_int(&mut out, c.value.len());
                compressed_int(&mut out, 0);
                out.extend_from_slice(&key);
                out.extend_from_slice(&c.value);
            }
            Some(p) => {
                let pkey = p.key_bytes();
                let common = common_without_ts(&key, &pkey);
                let ts = c.timestamp.to_be_bytes();
                let shared_ts = common_len(&ts[..7], &p.timestamp.to_be_bytes()[..7]);
                let mut flag = shared_ts as u8;
                if key.len() == pkey.len() {
                    flag |= 1 << 3;
                }
                if c.value.len() == p.value.len() {
                    flag |= 1 << 4;
                }
                if c.kind == p.kind {
                    flag |= 1 << 5;
                }
                if c.value == p.value {
                    flag |= 1 << 6;
                }
                out.push(flag);
                if flag & (1 << 3) == 0 {
                    compressed_int(&mut out, key.len());
                }
                if flag & (1 << 4) == 0 {
                    compressed_int(&mut out, c.value.len());
                }
                compressed_int(&mut out, common);
                row_and_qualifier(&mut out, c, &key, common);
                out.extend_from_slice(&ts[shared_ts..]);
                if flag & (1 << 5) == 0 {
                    out.push(c.kind.code());
                }
                if flag & (1 << 6) == 0 {
                    out.extend_from_slice(&c.value);
                }
            }
        }
        delta_suffix(&mut out, c, format, &mut dict);
        prev = Some(c);
    }
    out
}

pub(crate) fn encode_row_index(cells: &[HCell], format: CellFormat) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        if i == 0 || cells[i - 1].row != c.row {
            offsets.push(out.len() as u32);
        }
        plain_cell(&mut out, c, format);
    }
    let cells_len = out.len() as u32;
    out.extend_from_slice(&(offsets.len() as u32).to_be_bytes());
    for o in offsets {
        out.extend_from_slice(&o.to_be_bytes());
    }
    out.extend_from_slice(&cells_len.to_be_bytes());
    out
}

pub(crate) fn encode_plain(cells: &[HCell], format: CellFormat) -> Vec<u8> {
    let mut out = Vec::new();
    for c in cells {
        plain_cell(&mut out, c, format);
    }
    out
}
