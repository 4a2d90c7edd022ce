//! Data block encodings: turning the unpacked payload of a `DATABLK*` or `DATABLKE` block
//! into cells. An encoded block's payload starts with the 2-byte encoding id; the delta
//! encoders (PREFIX, DIFF, FAST_DIFF) then hold a 4-byte unencoded size and their cells;
//! ROW_INDEX_V1 holds plain KeyValues and a row index at the end.
//!
//! Per-cell suffixes differ: plain KeyValues (NONE, ROW_INDEX_V1) carry a 2-byte tags
//! length, the delta encoders a 7-bit varint one; both then carry the MVCC as a Hadoop
//! vlong when the file includes it.

mod diff;
mod fast_diff;
mod plain;
mod prefix;
mod row_index;
mod tag_dictionary;

use crate::block::BlockType;
use crate::cursor::Cursor;
use crate::kv::HCell;
use bytes::Bytes;

/// HBase's `DataBlockEncoding`s that 2.x can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataBlockEncoding {
    None,
    Prefix,
    Diff,
    FastDiff,
    RowIndexV1,
}

const ENCODINGS: [(DataBlockEncoding, u16, &str); 5] = [
    (DataBlockEncoding::None, 0, "NONE"),
    (DataBlockEncoding::Prefix, 2, "PREFIX"),
    (DataBlockEncoding::Diff, 3, "DIFF"),
    (DataBlockEncoding::FastDiff, 4, "FAST_DIFF"),
    (DataBlockEncoding::RowIndexV1, 7, "ROW_INDEX_V1"),
];

impl DataBlockEncoding {
    pub fn from_id(id: u16) -> Option<Self> {
        ENCODINGS.iter().find(|e| e.1 == id).map(|e| e.0)
    }

    pub fn from_name(name: &str) -> Option<Self> {
        ENCODINGS.iter().find(|e| e.2 == name).map(|e| e.0)
    }

    pub fn id(self) -> u16 {
        ENCODINGS.iter().find(|e| e.0 == self).map_or(0, |e| e.1)
    }

    /// The name HBase uses (`FAST_DIFF`, …), as in the file info's `DATA_BLOCK_ENCODING`.
    pub fn name(self) -> &'static str {
        ENCODINGS
            .iter()
            .find(|e| e.0 == self)
            .map_or("NONE", |e| e.2)
    }
}

/// What each stored cell carries besides its key and value, from the file info.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellFormat {
    /// Tags are stored (v3 file with `MAX_TAGS_LEN` in the file info).
    pub includes_tags: bool,
    /// The MVCC / sequence id is stored (`KEY_VALUE_VERSION` is 1).
    pub includes_mvcc: bool,
    /// Tags in encoded blocks are dictionary-compressed (`TAGS_COMPRESSED`).
    pub tags_compressed: bool,
}

/// Why a data block did not decode.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// A length or field ran past the end of the block.
    Overrun(String),
    Corrupt(String),
    UnknownEncoding(u16),
}

impl From<String> for DecodeError {
    fn from(e: String) -> Self {
        DecodeError::Overrun(e)
    }
}

type DResult<T> = Result<T, DecodeError>;

/// Decodes every cell of an unpacked data block.
pub(crate) fn decode_block(
    block_type: BlockType,
    data: &Bytes,
    format: CellFormat,
) -> DResult<Vec<HCell>> {
    if block_type == BlockType::Data {
        return plain::decode(data, format).map(|(cells, _)| cells);
    }
    let mut c = Cursor::new(data);
    let id = c.u16("encoding id")?;
    let payload = data.slice(2..);
    match DataBlockEncoding::from_id(id) {
        Some(DataBlockEncoding::None) => plain::decode(&payload, format).map(|(cells, _)| cells),
        Some(DataBlockEncoding::Prefix) => prefix::decode(&payload, format),
        Some(DataBlockEncoding::Diff) => diff::decode(&payload, format),
        Some(DataBlockEncoding::FastDiff) => fast_diff::decode(&payload, format),
        Some(DataBlockEncoding::RowIndexV1) => row_index::decode(&payload, format),
        None => Err(DecodeError::UnknownEncoding(id)),
    }
}

/// Takes `n` bytes as a slice of `data` (the buffer `c` reads).
fn take_bytes(c: &mut Cursor<'_>, data: &Bytes, n: usize, what: &str) -> DResult<Bytes> {
    let start = c.pos();
    c.take(n, what)?;
    Ok(data.slice(start..start + n))
}

/// Reads what follows each cell of a delta-encoded block: tags (varint length, then the
/// tags, dictionary-compressed if the file says so) and MVCC. One per block: the tag
/// dictionary starts empty in every block.
struct DeltaSuffix {
    format: CellFormat,
    tags: tag_dictionary::TagDictionary,
}

impl DeltaSuffix {
    fn new(format: CellFormat) -> Self {
        DeltaSuffix {
            format,
            tags: tag_dictionary::TagDictionary::default(),
        }
    }

    fn read(&mut self, c: &mut Cursor<'_>, data: &Bytes) -> DResult<(Bytes, i64)> {
        let mut tags = Bytes::new();
        if self.format.includes_tags {
            let n = c.compressed_int("tags length")?;
            tags = if self.format.tags_compressed && n > 0 {
                self.tags.uncompress(c, n)?
            } else {
                take_bytes(c, data, n, "tags")?
            };
        }
        let seq = mvcc(c, self.format)?;
        Ok((tags, seq))
    }
}

fn mvcc(c: &mut Cursor<'_>, format: CellFormat) -> DResult<i64> {
    if format.includes_mvcc {
        Ok(c.hadoop_vlong("mvcc")?)
    } else {
        Ok(0)
    }
}

/// Builds the cell, reporting a bad key or type as corruption.
fn make_cell(key: &Bytes, value: Bytes, tags: &Bytes, seq: i64) -> DResult<HCell> {
    crate::kv::cell_from_parts(key, value, tags, seq).map_err(DecodeError::Corrupt)
}

/// The first `common` bytes of the previous key, checked.
fn common_prefix(prev_key: &[u8], common: usize) -> DResult<Vec<u8>> {
    prev_key.get(..common).map(<[u8]>::to_vec).ok_or_else(|| {
        DecodeError::Corrupt(format!(
            "common prefix {common} longer than the previous key ({} bytes)",
            prev_key.len()
        ))
    })
}

fn check_key_len(key: &[u8], key_len: usize) -> DResult<()> {
    if key.len() != key_len {
        return Err(DecodeError::Corrupt(format!(
            "rebuilt key has {} bytes, its length says {key_len}",
            key.len()
        )));
    }
    Ok(())
}

/// `a - b`, or a corruption error naming `what`.
fn sub(a: usize, b: usize, what: &str) -> DResult<usize> {
    a.checked_sub(b)
        .ok_or_else(|| DecodeError::Corrupt(format!("{what}: {a} - {b} is negative")))
}

#[cfg(test)]
pub(crate) mod testutil;

#[cfg(test)]
mod tests {
    use super::testutil::{Sample, encode_fast_diff, encode_plain, samples};
    use super::*;

    fn encoded(id: u16, body: &[u8]) -> Bytes {
        let mut out = id.to_be_bytes().to_vec();
        out.extend_from_slice(body);
        Bytes::from(out)
    }

    #[test]
    fn plain_blocks_decode_as_data_and_as_encoding_none() {
        for format in Sample::formats() {
            let cells = samples();
            let body = encode_plain(&cells, format);
            let want = Sample::expected(&cells, format);
            assert_eq!(
                decode_block(BlockType::Data, &Bytes::from(body.clone()), format),
                Ok(want.clone())
            );
            assert_eq!(
                decode_block(BlockType::EncodedData, &encoded(0, &body), format),
                Ok(want)
            );
        }
    }

    #[test]
    fn unknown_ids_are_refused() {
        let format = CellFormat::default();
        let body = encode_fast_diff(&samples(), format);
        assert_eq!(
            decode_block(BlockType::EncodedData, &encoded(6, &body), format),
            Err(DecodeError::UnknownEncoding(6))
        );
    }

    #[test]
    fn every_truncation_of_every_encoding_is_an_error_not_a_panic() {
        let format = CellFormat {
            includes_tags: true,
            includes_mvcc: true,
            tags_compressed: false,
        };
        let cells = samples();
        for (id, body) in [
            (2, testutil::encode_prefix(&cells, format)),
            (3, testutil::encode_diff(&cells, format)),
            (4, encode_fast_diff(&cells, format)),
            (7, testutil::encode_row_index(&cells, format)),
        ] {
            let whole = encoded(id, &body);
            for cut in 0..whole.len() {
                let got = decode_block(BlockType::EncodedData, &whole.slice(..cut), format);
                // A cut between cells of a delta encoding decodes to fewer cells.
                if let Ok(got) = got {
                    assert!(got.len() < cells.len(), "encoding {id} cut {cut}");
                }
            }
        }
    }
}
