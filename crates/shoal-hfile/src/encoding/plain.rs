//! Plain KeyValues, as in unencoded `DATABLK*` blocks and inside ROW_INDEX_V1 blocks:
//! `[key len i32][value len i32][key][value]`, then `[tags len u16][tags]` if the file
//! includes tags, then the MVCC as a Hadoop vlong if it includes MVCC.

use super::{CellFormat, DResult, make_cell, mvcc, take_bytes};
use crate::cursor::Cursor;
use crate::kv::HCell;
use bytes::Bytes;

/// Decodes the cells filling `data`; also returns where each cell starts.
pub(super) fn decode(data: &Bytes, format: CellFormat) -> DResult<(Vec<HCell>, Vec<usize>)> {
    let mut c = Cursor::new(data);
    let mut cells = Vec::new();
    let mut starts = Vec::new();
    while !c.is_empty() {
        starts.push(c.pos());
        let key_len = c.len32("key length")?;
        let value_len = c.len32("value length")?;
        let key = take_bytes(&mut c, data, key_len, "key")?;
        let value = take_bytes(&mut c, data, value_len, "value")?;
        let tags = if format.includes_tags {
            let n = usize::from(c.u16("tags length")?);
            take_bytes(&mut c, data, n, "tags")?
        } else {
            Bytes::new()
        };
        let seq = mvcc(&mut c, format)?;
        cells.push(make_cell(&key, value, &tags, seq)?);
    }
    Ok((cells, starts))
}
