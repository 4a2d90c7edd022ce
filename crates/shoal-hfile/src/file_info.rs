//! The file info block (`FILEINF2`): a map of byte-string keys to byte-string values.
//! HBase 2.x writes `PBUF` and a length-delimited `FileInfoProto` (repeated
//! `BytesBytesPair`); older files hold a Writable map (`i32` count, then per entry a
//! vint-length key, a class-code byte and a vint-length value).

use crate::cursor::Cursor;
use crate::encoding::{CellFormat, DataBlockEncoding};
use crate::protobuf::{self, Field};
use crate::trailer::PBUF_MAGIC;
use bytes::Bytes;
use std::collections::BTreeMap;

pub const LAST_KEY: &[u8] = b"hfile.LASTKEY";
pub const MAX_TAGS_LEN: &[u8] = b"hfile.MAX_TAGS_LEN";
pub const TAGS_COMPRESSED: &[u8] = b"hfile.TAGS_COMPRESSED";
pub const KEY_VALUE_VERSION: &[u8] = b"KEY_VALUE_VERSION";
pub const DATA_BLOCK_ENCODING: &[u8] = b"DATA_BLOCK_ENCODING";
pub const INDEX_BLOCK_ENCODING: &[u8] = b"INDEX_BLOCK_ENCODING";
/// `KEY_VALUE_VERSION` value meaning each cell carries its MVCC.
const KEY_VALUE_VERSION_WITH_MVCC: i32 = 1;

/// The file info map, in key order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileInfo {
    entries: BTreeMap<Bytes, Bytes>,
}

impl FileInfo {
    pub fn get(&self, key: &[u8]) -> Option<&Bytes> {
        self.entries.get(key)
    }

    pub fn entries(&self) -> &BTreeMap<Bytes, Bytes> {
        &self.entries
    }

    /// The serialized key of the file's last cell (`hfile.LASTKEY`).
    pub fn last_key(&self) -> Option<&Bytes> {
        self.get(LAST_KEY)
    }

    /// The data block encoding named by `DATA_BLOCK_ENCODING` (NONE when absent), or the
    /// unknown name.
    pub fn data_block_encoding(&self) -> Result<DataBlockEncoding, String> {
        match self.get(DATA_BLOCK_ENCODING) {
            None => Ok(DataBlockEncoding::None),
            Some(name) => {
                let name = String::from_utf8_lossy(name);
                DataBlockEncoding::from_name(&name).ok_or_else(|| name.into_owned())
            }
        }
    }

    /// What each cell carries: tags if `hfile.MAX_TAGS_LEN` is present, MVCC if
    /// `KEY_VALUE_VERSION` is 1, dictionary-compressed tags if `hfile.TAGS_COMPRESSED`.
    pub fn cell_format(&self) -> CellFormat {
        let includes_tags = self.get(MAX_TAGS_LEN).is_some();
        let includes_mvcc = self
            .get(KEY_VALUE_VERSION)
            .and_then(|v| <[u8; 4]>::try_from(v.as_ref()).ok())
            .is_some_and(|v| i32::from_be_bytes(v) == KEY_VALUE_VERSION_WITH_MVCC);
        let tags_compressed = includes_tags
            && self
                .get(TAGS_COMPRESSED)
                .is_some_and(|v| v.first() != Some(&0) && !v.is_empty());
        CellFormat {
            includes_tags,
            includes_mvcc,
            tags_compressed,
        }
    }
}

/// Parses the unpacked payload of a file info block.
pub(crate) fn parse(data: &[u8]) -> Result<FileInfo, String> {
    match data.strip_prefix(PBUF_MAGIC.as_slice()) {
        Some(rest) => parse_pb(rest),
        None => parse_writable(data),
    }
}

fn parse_pb(data: &[u8]) -> Result<FileInfo, String> {
    let (msg, _) = protobuf::delimited(data)?;
    let mut info = FileInfo::default();
    for field in protobuf::fields(msg)? {
        if let Field::Bytes(1, pair) = field {
            let (k, v) = parse_pair(pair)?;
            info.entries.insert(k, v);
        }
    }
    Ok(info)
}

/// A `BytesBytesPair { bytes first = 1; bytes second = 2; }`.
fn parse_pair(pair: &[u8]) -> Result<(Bytes, Bytes), String> {
    let (mut first, mut second) = (None, None);
    for field in protobuf::fields(pair)? {
        match field {
            Field::Bytes(1, b) => first = Some(Bytes::copy_from_slice(b)),
            Field::Bytes(2, b) => second = Some(Bytes::copy_from_slice(b)),
            _ => {}
        }
    }
    match (first, second) {
        (Some(k), Some(v)) => Ok((k, v)),
        _ => Err("file info entry lacks its key or value".into()),
    }
}

fn parse_writable(data: &[u8]) -> Result<FileInfo, String> {
    let mut c = Cursor::new(data);
    let count = c.len32("file info entry count")?;
    let mut info = FileInfo::default();
    for _ in 0..count {
        let n = c.hadoop_vlen("file info key length")?;
        let key = Bytes::copy_from_slice(c.take(n, "file info key")?);
        c.u8("file info class code")?;
        let n = c.hadoop_vlen("file info value length")?;
        let value = Bytes::copy_from_slice(c.take(n, "file info value")?);
        info.entries.insert(key, value);
    }
    Ok(info)
}

#[cfg(test)]
pub(crate) mod build {
    //! File info payloads for hand-built test files.
    use crate::protobuf::encode;

    pub fn pb(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
        let mut msg = Vec::new();
        for (k, v) in entries {
            let mut pair = Vec::new();
            encode::bytes_field(&mut pair, 1, k);
            encode::bytes_field(&mut pair, 2, v);
            encode::bytes_field(&mut msg, 1, &pair);
        }
        let mut out = b"PBUF".to_vec();
        encode::varint(&mut out, msg.len() as u64);
        out.extend_from_slice(&msg);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pb_map_and_format() {
        let one = 1i32.to_be_bytes();
        let data = build::pb(&[
            (KEY_VALUE_VERSION, &one),
            (MAX_TAGS_LEN, &0i32.to_be_bytes()),
            (DATA_BLOCK_ENCODING, b"FAST_DIFF"),
        ]);
        let info = parse(&data).expect("file info");
        assert_eq!(info.entries().len(), 3);
        assert_eq!(info.data_block_encoding(), Ok(DataBlockEncoding::FastDiff));
        let f = info.cell_format();
        assert!(f.includes_tags && f.includes_mvcc && !f.tags_compressed);
    }

    #[test]
    fn writable_map() {
        let mut data = 1i32.to_be_bytes().to_vec();
        data.push(3);
        data.extend_from_slice(b"abc");
        data.push(0);
        data.push(2);
        data.extend_from_slice(b"xy");
        let info = parse(&data).expect("file info");
        assert_eq!(info.get(b"abc").map(|v| v.as_ref()), Some(&b"xy"[..]));
        assert!(parse(&[0, 0, 0, 2, 1]).is_err());
    }

    #[test]
    fn unknown_encoding_name() {
        let info = parse(&build::pb(&[(DATA_BLOCK_ENCODING, b"PREFIX_TREE")])).expect("info");
        assert_eq!(info.data_block_encoding(), Err("PREFIX_TREE".into()));
    }
}
