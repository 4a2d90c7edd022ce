//! ROW_INDEX_V1 encoding: the cells as plain KeyValues (see `plain`), then
//! `[row count i32][row count × i32 offsets of each row's first cell, relative to the
//! first cell][i32 size of the cells part]`.

use super::{CellFormat, DResult, DecodeError, plain};
use crate::cursor::Cursor;
use crate::kv::HCell;
use bytes::Bytes;

pub(super) fn decode(data: &Bytes, format: CellFormat) -> DResult<Vec<HCell>> {
    let n = data.len();
    if n < 8 {
        return Err(DecodeError::Overrun(format!(
            "ROW_INDEX_V1 block of {n} bytes has no row index"
        )));
    }
    let cells_len = Cursor::new(&data[n - 4..]).len32("cells size")?;
    if cells_len > n - 8 {
        return Err(DecodeError::Overrun(format!(
            "cells size {cells_len} overruns a block of {n} bytes"
        )));
    }
    let mut index = Cursor::new(&data[cells_len..n - 4]);
    let rows = index.len32("row count")?;
    if rows.checked_mul(4) != Some(index.remaining()) {
        return Err(DecodeError::Corrupt(format!(
            "row index of {rows} rows does not fill its {} bytes",
            index.remaining()
        )));
    }
    let (cells, starts) = plain::decode(&data.slice(..cells_len), format)?;
    check_row_offsets(&mut index, &cells, &starts)?;
    Ok(cells)
}

/// Each indexed offset must be the start of the first cell of a new row, in order.
fn check_row_offsets(index: &mut Cursor<'_>, cells: &[HCell], starts: &[usize]) -> DResult<()> {
    let mut row_starts = cells
        .iter()
        .zip(starts)
        .enumerate()
        .filter(|(i, (cell, _))| *i == 0 || cells[*i - 1].row != cell.row)
        .map(|(_, (_, start))| *start);
    while !index.is_empty() {
        let offset = index.len32("row offset")?;
        if row_starts.next() != Some(offset) {
            return Err(DecodeError::Corrupt(format!(
                "row index offset {offset} is not the start of the next row"
            )));
        }
    }
    if row_starts.next().is_some() {
        return Err(DecodeError::Corrupt("row index misses rows".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{Sample, encode_row_index, samples};
    use super::*;

    #[test]
    fn decodes_what_the_encoder_logic_writes() {
        for format in Sample::formats() {
            let cells = samples();
            let data = encode_row_index(&cells, format);
            assert_eq!(
                decode(&Bytes::from(data), format).expect("decode"),
                Sample::expected(&cells, format)
            );
        }
    }

    #[test]
    fn empty_block_has_an_empty_index() {
        let data = Bytes::from(vec![0u8; 8]);
        assert_eq!(decode(&data, CellFormat::default()), Ok(vec![]));
    }
}
