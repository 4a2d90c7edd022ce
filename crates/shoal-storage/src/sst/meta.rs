//! The meta block: what a file holds, readable without touching its data.
//!
//! ```text
//! meta = varint format_version | bytes family | bytes first_key | bytes last_key
//!      | min_timestamp: i64 LE | max_timestamp: i64 LE | max_seq: u64 LE
//!      | varint cell_count | varint delete_count | varint data_block_count
//!      | varint raw_data_bytes | varint stored_data_bytes | compression: u8
//!      | (later versions may append fields; readers ignore what follows)
//! bytes = varint length | that many bytes
//! ```
//!
//! Keys are encoded cell keys (see `cell::key`).

use super::compression::Compression;
use super::varint::{get_len, get_varint, put_varint};
use crate::cell::{CellKey, KeyRef};
use bytes::Bytes;

/// Summary of one SST file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// Format version the file was written with.
    pub format_version: u32,
    /// Column family every cell belongs to.
    pub family: Bytes,
    /// Smallest key in the file.
    pub first_key: CellKey,
    /// Largest key in the file.
    pub last_key: CellKey,
    /// Oldest cell timestamp.
    pub min_timestamp: i64,
    /// Newest cell timestamp.
    pub max_timestamp: i64,
    /// Highest write sequence number.
    pub max_seq: u64,
    /// Cells in the file.
    pub cell_count: u64,
    /// Of which delete markers.
    pub delete_count: u64,
    /// Data blocks in the file.
    pub data_block_count: u64,
    /// Data bytes before compression.
    pub raw_data_bytes: u64,
    /// Data bytes as stored (frames included).
    pub stored_data_bytes: u64,
    /// Compression the writer asked for (a block may still be stored raw).
    pub compression: Compression,
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

impl FileMeta {
    /// Encodes the meta block body.
    pub(crate) fn encode(&self) -> Result<Vec<u8>, crate::cell::CellError> {
        let mut out = Vec::with_capacity(128);
        put_varint(&mut out, u64::from(self.format_version));
        put_bytes(&mut out, &self.family);
        put_bytes(&mut out, &self.first_key.as_ref().encode()?);
        put_bytes(&mut out, &self.last_key.as_ref().encode()?);
        out.extend_from_slice(&self.min_timestamp.to_le_bytes());
        out.extend_from_slice(&self.max_timestamp.to_le_bytes());
        out.extend_from_slice(&self.max_seq.to_le_bytes());
        for v in [
            self.cell_count,
            self.delete_count,
            self.data_block_count,
            self.raw_data_bytes,
            self.stored_data_bytes,
        ] {
            put_varint(&mut out, v);
        }
        out.push(self.compression.code());
        Ok(out)
    }

    /// Decodes a meta block body; the error is a human-readable reason.
    pub(crate) fn decode(buf: &[u8]) -> Result<FileMeta, String> {
        let mut pos = 0;
        let truncated = || "meta block truncated".to_string();
        let version = get_varint(buf, &mut pos).ok_or_else(truncated)?;
        let bytes = |pos: &mut usize| -> Result<&[u8], String> {
            let n = get_len(buf, pos, buf.len()).ok_or_else(truncated)?;
            let s = buf.get(*pos..*pos + n).ok_or_else(truncated)?;
            *pos += n;
            Ok(s)
        };
        let family = Bytes::copy_from_slice(bytes(&mut pos)?);
        let first = KeyRef::decode(bytes(&mut pos)?).map_err(|e| format!("first key: {e}"))?;
        let last = KeyRef::decode(bytes(&mut pos)?).map_err(|e| format!("last key: {e}"))?;
        let fixed = |pos: &mut usize| -> Result<[u8; 8], String> {
            let s = buf.get(*pos..*pos + 8).ok_or_else(truncated)?;
            *pos += 8;
            let mut w = [0u8; 8];
            w.copy_from_slice(s);
            Ok(w)
        };
        let min_timestamp = i64::from_le_bytes(fixed(&mut pos)?);
        let max_timestamp = i64::from_le_bytes(fixed(&mut pos)?);
        let max_seq = u64::from_le_bytes(fixed(&mut pos)?);
        let mut counts = [0u64; 5];
        for c in &mut counts {
            *c = get_varint(buf, &mut pos).ok_or_else(truncated)?;
        }
        let code = *buf.get(pos).ok_or_else(truncated)?;
        let compression =
            Compression::from_code(code).ok_or_else(|| format!("unknown compression {code}"))?;
        if first > last {
            return Err("first key sorts after last key".into());
        }
        Ok(FileMeta {
            format_version: u32::try_from(version)
                .map_err(|_| format!("format version {version}"))?,
            family,
            first_key: first.to_owned_key(),
            last_key: last.to_owned_key(),
            min_timestamp,
            max_timestamp,
            max_seq,
            cell_count: counts[0],
            delete_count: counts[1],
            data_block_count: counts[2],
            raw_data_bytes: counts[3],
            stored_data_bytes: counts[4],
            compression,
        })
    }
}
