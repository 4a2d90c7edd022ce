//! Cell blocks in HBase's `KeyValueCodec`: each cell an int32 length, then
//! a KeyValue — int32 key length, int32 value length, then the key (int16
//! row length, row, int8 family length, family, qualifier, int64
//! timestamp, int8 type) and the value. Tags are never sent over RPC.

use bytes::{Buf, BufMut, Bytes};

/// A cell's type byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvType {
    /// A value.
    Put,
    /// One version of a column.
    Delete,
    /// A family's cells at exactly one timestamp.
    DeleteFamilyVersion,
    /// A column's versions at or below the timestamp.
    DeleteColumn,
    /// A family's cells at or below the timestamp.
    DeleteFamily,
}

impl KvType {
    /// The wire byte.
    pub fn code(self) -> u8 {
        match self {
            KvType::Put => 4,
            KvType::Delete => 8,
            KvType::DeleteFamilyVersion => 10,
            KvType::DeleteColumn => 12,
            KvType::DeleteFamily => 14,
        }
    }

    fn from_code(code: u8) -> Option<KvType> {
        Some(match code {
            4 => KvType::Put,
            8 => KvType::Delete,
            10 => KvType::DeleteFamilyVersion,
            12 => KvType::DeleteColumn,
            14 => KvType::DeleteFamily,
            _ => return None,
        })
    }
}

/// One cell of a block; its parts are slices of the received buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The row.
    pub row: Bytes,
    /// The family.
    pub family: Bytes,
    /// The qualifier.
    pub qualifier: Bytes,
    /// The timestamp (`i64::MAX`: "now", HBase's LATEST_TIMESTAMP).
    pub timestamp: i64,
    /// What it is.
    pub kind: KvType,
    /// The value.
    pub value: Bytes,
}

/// A cell block that does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed cell block: {0}")]
pub struct CellBlockError(pub String);

fn bad(what: impl Into<String>) -> CellBlockError {
    CellBlockError(what.into())
}

/// Decodes every cell of a block.
pub fn decode(mut block: Bytes) -> Result<Vec<KeyValue>, CellBlockError> {
    let mut cells = Vec::new();
    while block.has_remaining() {
        if block.remaining() < 4 {
            return Err(bad("a cell length is cut short"));
        }
        let len = block.get_u32() as usize;
        if len > block.remaining() {
            return Err(bad(format!(
                "a cell of {len} bytes, but only {} bytes remain",
                block.remaining()
            )));
        }
        cells.push(decode_one(block.split_to(len))?);
    }
    Ok(cells)
}

fn decode_one(mut kv: Bytes) -> Result<KeyValue, CellBlockError> {
    if kv.remaining() < 8 {
        return Err(bad("a cell shorter than its two lengths"));
    }
    let key_len = kv.get_u32() as usize;
    let value_len = kv.get_u32() as usize;
    if key_len.checked_add(value_len) != Some(kv.remaining()) {
        return Err(bad(format!(
            "a cell says key {key_len} + value {value_len} bytes, but holds {}",
            kv.remaining()
        )));
    }
    let mut key = kv.split_to(key_len);
    let value = kv;
    // Row length, family length, timestamp and type: 2 + 1 + 8 + 1.
    if key.remaining() < 12 {
        return Err(bad("a cell key shorter than its fixed parts"));
    }
    let row_len = key.get_u16() as usize;
    if key.remaining() < row_len + 10 {
        return Err(bad("a cell's row runs past its key"));
    }
    let row = key.split_to(row_len);
    let family_len = key.get_u8() as usize;
    if key.remaining() < family_len + 9 {
        return Err(bad("a cell's family runs past its key"));
    }
    let family = key.split_to(family_len);
    let qualifier = key.split_to(key.remaining() - 9);
    let timestamp = key.get_i64();
    let code = key.get_u8();
    let kind = KvType::from_code(code).ok_or_else(|| bad(format!("cell type {code}")))?;
    Ok(KeyValue {
        row,
        family,
        qualifier,
        timestamp,
        kind,
        value,
    })
}

/// Appends one cell to a block.
pub fn encode(
    out: &mut Vec<u8>,
    row: &[u8],
    family: &[u8],
    qualifier: &[u8],
    timestamp: i64,
    kind: KvType,
    value: &[u8],
) {
    let key_len = 2 + row.len() + 1 + family.len() + qualifier.len() + 8 + 1;
    let total = 8 + key_len + value.len();
    out.reserve(4 + total);
    out.put_u32(total as u32);
    out.put_u32(key_len as u32);
    out.put_u32(value.len() as u32);
    out.put_u16(row.len() as u16);
    out.extend_from_slice(row);
    out.put_u8(family.len() as u8);
    out.extend_from_slice(family);
    out.extend_from_slice(qualifier);
    out.put_i64(timestamp);
    out.put_u8(kind.code());
    out.extend_from_slice(value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut block = Vec::new();
        encode(&mut block, b"row1", b"cf", b"q", 42, KvType::Put, b"value");
        encode(&mut block, b"r", b"f", b"", 7, KvType::DeleteFamily, b"");
        let cells = decode(Bytes::from(block)).unwrap();
        assert_eq!(cells.len(), 2);
        assert_eq!(&cells[0].row[..], b"row1");
        assert_eq!(&cells[0].family[..], b"cf");
        assert_eq!(&cells[0].qualifier[..], b"q");
        assert_eq!(cells[0].timestamp, 42);
        assert_eq!(cells[0].kind, KvType::Put);
        assert_eq!(&cells[0].value[..], b"value");
        assert_eq!(cells[1].kind, KvType::DeleteFamily);
        assert!(cells[1].qualifier.is_empty());
    }

    #[test]
    fn truncated_and_lying_blocks_are_refused() {
        let mut block = Vec::new();
        encode(&mut block, b"row1", b"cf", b"q", 42, KvType::Put, b"value");
        for cut in 1..block.len() {
            assert!(
                decode(Bytes::copy_from_slice(&block[..cut])).is_err(),
                "{cut}"
            );
        }
        // A row length past the key.
        let mut lying = block.clone();
        lying[12] = 0xff;
        assert!(decode(Bytes::from(lying)).is_err());
        // An unknown type.
        let mut odd = block.clone();
        let type_at = 4 + 8 + 2 + 4 + 1 + 2 + 1 + 8;
        odd[type_at] = 99;
        assert!(decode(Bytes::from(odd)).is_err());
    }
}
