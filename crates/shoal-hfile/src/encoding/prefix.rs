//! PREFIX encoding: each cell stores how many leading bytes of its key it shares with
//! the previous cell's key, then the rest. Per cell: `[key len minus common][value len]
//! [common]` as 7-bit varints, the key bytes after the common prefix, the value, then
//! the delta-encoder suffix (tags, MVCC). The payload starts with a 4-byte unencoded size.

use super::{CellFormat, DResult, DeltaSuffix, common_prefix, make_cell, take_bytes};
use crate::cursor::Cursor;
use crate::kv::HCell;
use bytes::Bytes;

pub(super) fn decode(data: &Bytes, format: CellFormat) -> DResult<Vec<HCell>> {
    let mut c = Cursor::new(data);
    c.take(4, "unencoded size")?;
    let mut cells = Vec::new();
    let mut suffix = DeltaSuffix::new(format);
    let mut prev_key = Bytes::new();
    while !c.is_empty() {
        let rest_len = c.compressed_int("key length")?;
        let value_len = c.compressed_int("value length")?;
        let common = c.compressed_int("common prefix")?;
        let key = if common == 0 {
            take_bytes(&mut c, data, rest_len, "key")?
        } else {
            let mut key = common_prefix(&prev_key, common)?;
            key.extend_from_slice(c.take(rest_len, "key")?);
            Bytes::from(key)
        };
        let value = take_bytes(&mut c, data, value_len, "value")?;
        let (tags, seq) = suffix.read(&mut c, data)?;
        cells.push(make_cell(&key, value, &tags, seq)?);
        prev_key = key;
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{Sample, encode_prefix, samples};
    use super::*;

    #[test]
    fn decodes_what_the_encoder_logic_writes() {
        for format in Sample::formats() {
            let cells = samples();
            let data = encode_prefix(&cells, format);
            assert_eq!(
                decode(&Bytes::from(data), format).expect("decode"),
                Sample::expected(&cells, format)
            );
        }
    }
}
