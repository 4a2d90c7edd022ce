//! DIFF encoding. The payload starts with a 4-byte unencoded size, then the block's
//! family once (`[len u8][family]`; every cell of an HFile has the same family). Each
//! cell: a flag byte, key length and value length as 7-bit varints unless the flag says
//! they equal the previous cell's, the length of the key prefix shared with the previous
//! key (varint), then
//! - if the shared prefix does not cover the row (with its 2-byte length): the rest of the
//!   row-length-and-row, then the whole qualifier (the family is implied);
//! - otherwise: the rest of the qualifier;
//!
//! then the timestamp in 1–8 little-endian bytes (or its difference from the previous
//! cell's), the type byte unless the same as before, the value, and the delta suffix.

use super::{
    CellFormat, DResult, DeltaSuffix, check_key_len, common_prefix, make_cell, sub, take_bytes,
};
use crate::cursor::Cursor;
use crate::kv::{HCell, TIMESTAMP_TYPE_LEN};
use bytes::Bytes;

const FLAG_SAME_KEY_LENGTH: u8 = 1;
const FLAG_SAME_VALUE_LENGTH: u8 = 1 << 1;
const FLAG_SAME_TYPE: u8 = 1 << 2;
const FLAG_TIMESTAMP_IS_DIFF: u8 = 1 << 3;
const SHIFT_TIMESTAMP_LENGTH: u8 = 4;
const MASK_TIMESTAMP_LENGTH: u8 = 0b111 << SHIFT_TIMESTAMP_LENGTH;
const FLAG_TIMESTAMP_SIGN: u8 = 1 << 7;

/// What the next cell may take from the previous one.
#[derive(Default)]
struct Prev {
    key: Vec<u8>,
    key_len: usize,
    value_len: usize,
    row_len: usize,
    timestamp: i64,
    type_code: u8,
}

pub(super) fn decode(data: &Bytes, format: CellFormat) -> DResult<Vec<HCell>> {
    let mut c = Cursor::new(data);
    c.take(4, "unencoded size")?;
    if c.is_empty() {
        return Ok(Vec::new());
    }
    let family_len = c.u8("family length")?;
    let mut family = vec![family_len];
    family.extend_from_slice(c.take(usize::from(family_len), "family")?);
    let mut cells = Vec::new();
    let mut suffix = DeltaSuffix::new(format);
    let mut prev = Prev::default();
    let mut first = true;
    while !c.is_empty() {
        let flag = c.u8("flag")?;
        let key_len = if flag & FLAG_SAME_KEY_LENGTH != 0 {
            prev.key_len
        } else {
            c.compressed_int("key length")?
        };
        let value_len = if flag & FLAG_SAME_VALUE_LENGTH != 0 {
            prev.value_len
        } else {
            c.compressed_int("value length")?
        };
        let common = c.compressed_int("common prefix")?;
        let mut key = common_prefix(&prev.key, common)?;
        if first || common < prev.row_len + 2 {
            prev.row_len = read_row(&mut c, &mut key)?;
            key.extend_from_slice(&family);
            let qualifier_len = sub(key_len, key.len() + TIMESTAMP_TYPE_LEN, "qualifier length")?;
            key.extend_from_slice(c.take(qualifier_len, "qualifier")?);
        } else {
            let rest = sub(key_len, common + TIMESTAMP_TYPE_LEN, "qualifier rest")?;
            key.extend_from_slice(c.take(rest, "qualifier")?);
        }
        let timestamp = read_timestamp(&mut c, flag, prev.timestamp)?;
        key.extend_from_slice(&timestamp.to_be_bytes());
        let type_code = if flag & FLAG_SAME_TYPE != 0 {
            prev.type_code
        } else {
            c.u8("type")?
        };
        key.push(type_code);
        check_key_len(&key, key_len)?;
        let value = take_bytes(&mut c, data, value_len, "value")?;
        let (tags, seq) = suffix.read(&mut c, data)?;
        let key_bytes = Bytes::from(key);
        cells.push(make_cell(&key_bytes, value, &tags, seq)?);
        prev = Prev {
            key: key_bytes.to_vec(),
            key_len,
            value_len,
            row_len: prev.row_len,
            timestamp,
            type_code,
        };
        first = false;
    }
    Ok(cells)
}

/// Completes the row length and row after the shared prefix already in `key`; returns
/// the row length. Shared by DIFF and FAST_DIFF.
pub(super) fn read_row(c: &mut Cursor<'_>, key: &mut Vec<u8>) -> DResult<usize> {
    if key.len() < 2 {
        key.extend_from_slice(c.take(2 - key.len(), "row length")?);
    }
    let row_len = usize::from(u16::from_be_bytes([key[0], key[1]]));
    let rest = sub(row_len + 2, key.len(), "row rest")?;
    key.extend_from_slice(c.take(rest, "row")?);
    Ok(row_len)
}

fn read_timestamp(c: &mut Cursor<'_>, flag: u8, prev: i64) -> DResult<i64> {
    let fit = usize::from((flag & MASK_TIMESTAMP_LENGTH) >> SHIFT_TIMESTAMP_LENGTH) + 1;
    let mut v = c.le_long(fit, "timestamp")? as i64;
    if flag & FLAG_TIMESTAMP_SIGN != 0 {
        v = v.wrapping_neg();
    }
    if flag & FLAG_TIMESTAMP_IS_DIFF != 0 {
        v = prev.wrapping_sub(v);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{Sample, encode_diff, samples};
    use super::*;

    #[test]
    fn decodes_what_the_encoder_logic_writes() {
        for format in Sample::formats() {
            let cells = samples();
            let data = encode_diff(&cells, format);
            assert_eq!(
                decode(&Bytes::from(data), format).expect("decode"),
                Sample::expected(&cells, format)
            );
        }
    }
}
