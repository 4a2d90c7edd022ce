//! FAST_DIFF encoding. The payload starts with a 4-byte unencoded size. The first cell is
//! a zero flag byte, key length, value length and a zero shared-prefix length (7-bit
//! varints), its whole key and its value. Every later cell: a flag byte, key and value
//! lengths unless the flag says they equal the previous cell's, the shared key prefix
//! length, then
//! - if the shared prefix does not cover the row (with its 2-byte length): the rest of the
//!   row-length-and-row and the whole qualifier (the family is the previous key's);
//! - otherwise: the rest of the qualifier;
//!
//! then the timestamp's big-endian bytes after as many leading bytes as the flag says are
//! shared with the previous timestamp, the type byte unless the same as before, and the
//! value unless the flag says it equals the previous value. Then the delta suffix.

use super::diff::read_row;
use super::{
    CellFormat, DResult, DecodeError, DeltaSuffix, check_key_len, common_prefix, make_cell, sub,
    take_bytes,
};
use crate::cursor::Cursor;
use crate::kv::{HCell, TIMESTAMP_TYPE_LEN};
use bytes::Bytes;

const MASK_TIMESTAMP_LENGTH: u8 = 0b111;
const FLAG_SAME_KEY_LENGTH: u8 = 1 << 3;
const FLAG_SAME_VALUE_LENGTH: u8 = 1 << 4;
const FLAG_SAME_TYPE: u8 = 1 << 5;
const FLAG_SAME_VALUE: u8 = 1 << 6;

/// What the next cell may take from the previous one.
#[derive(Default)]
struct Prev {
    key: Bytes,
    key_len: usize,
    value_len: usize,
    value: Bytes,
    row_len: usize,
}

impl Prev {
    /// Family length byte and family of the previous key.
    fn family(&self) -> DResult<&[u8]> {
        let at = self.row_len + 2;
        let len = usize::from(*self.key.get(at).ok_or_else(|| corrupt("no family"))?);
        self.key
            .get(at..at + 1 + len)
            .ok_or_else(|| corrupt("family overruns the previous key"))
    }

    /// Timestamp bytes and type byte at the end of the previous key.
    fn timestamp_and_type(&self) -> DResult<&[u8]> {
        let n = self.key.len();
        self.key
            .get(n.saturating_sub(TIMESTAMP_TYPE_LEN)..)
            .filter(|s| s.len() == TIMESTAMP_TYPE_LEN)
            .ok_or_else(|| corrupt("previous key too short"))
    }
}

fn corrupt(what: &str) -> DecodeError {
    DecodeError::Corrupt(what.to_owned())
}

pub(super) fn decode(data: &Bytes, format: CellFormat) -> DResult<Vec<HCell>> {
    let mut c = Cursor::new(data);
    c.take(4, "unencoded size")?;
    let mut cells = Vec::new();
    let mut suffix = DeltaSuffix::new(format);
    let mut prev: Option<Prev> = None;
    while !c.is_empty() {
        let flag = c.u8("flag")?;
        let (key, value, key_len, value_len) = match &prev {
            None => first_cell(&mut c, data)?,
            Some(p) => next_cell(&mut c, data, flag, p)?,
        };
        let (tags, seq) = suffix.read(&mut c, data)?;
        cells.push(make_cell(&key, value.clone(), &tags, seq)?);
        let row_len = usize::from(u16::from_be_bytes([key[0], key[1]]));
        prev = Some(Prev {
            key,
            key_len,
            value_len,
            value,
            row_len,
        });
    }
    Ok(cells)
}

type Parts = (Bytes, Bytes, usize, usize);

fn first_cell(c: &mut Cursor<'_>, data: &Bytes) -> DResult<Parts> {
    let key_len = c.compressed_int("key length")?;
    let value_len = c.compressed_int("value length")?;
    let common = c.compressed_int("common prefix")?;
    if common != 0 {
        return Err(corrupt("first cell of a block shares a prefix"));
    }
    if key_len < 2 + TIMESTAMP_TYPE_LEN {
        return Err(corrupt("key too short"));
    }
    let key = take_bytes(c, data, key_len, "key")?;
    let value = take_bytes(c, data, value_len, "value")?;
    Ok((key, value, key_len, value_len))
}

fn next_cell(c: &mut Cursor<'_>, data: &Bytes, flag: u8, prev: &Prev) -> DResult<Parts> {
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
    if common < prev.row_len + 2 {
        read_row(c, &mut key)?;
        key.extend_from_slice(prev.family()?);
        let qualifier_len = sub(key_len, key.len() + TIMESTAMP_TYPE_LEN, "qualifier length")?;
        key.extend_from_slice(c.take(qualifier_len, "qualifier")?);
    } else {
        let rest = sub(key_len, common + TIMESTAMP_TYPE_LEN, "qualifier rest")?;
        key.extend_from_slice(c.take(rest, "qualifier")?);
    }
    let prev_ts_type = prev.timestamp_and_type()?;
    let shared_ts = usize::from(flag & MASK_TIMESTAMP_LENGTH);
    key.extend_from_slice(&prev_ts_type[..shared_ts]);
    key.extend_from_slice(c.take(8 - shared_ts, "timestamp")?);
    if flag & FLAG_SAME_TYPE != 0 {
        key.push(prev_ts_type[8]);
    } else {
        key.push(c.u8("type")?);
    }
    check_key_len(&key, key_len)?;
    let value = if flag & FLAG_SAME_VALUE != 0 {
        if prev.value.len() != value_len {
            return Err(corrupt("same value flagged with a different value length"));
        }
        prev.value.clone()
    } else {
        take_bytes(c, data, value_len, "value")?
    };
    Ok((Bytes::from(key), value, key_len, value_len))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{Sample, encode_fast_diff, samples};
    use super::*;

    #[test]
    fn decodes_what_the_encoder_logic_writes() {
        for format in Sample::formats() {
            let cells = samples();
            let data = encode_fast_diff(&cells, format);
            assert_eq!(
                decode(&Bytes::from(data), format).expect("decode"),
                Sample::expected(&cells, format)
            );
        }
    }
}
