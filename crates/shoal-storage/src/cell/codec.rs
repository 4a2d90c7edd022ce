//! Self-delimiting encoding of a whole cell, for logs and other byte streams.
//!
//! ```text
//! key_len: u32 BE | value_len: u32 BE | key (see `key`) | value
//! ```
//!
//! Decoding is zero-copy over a [`Bytes`] buffer and validates every length; a
//! truncated or malformed buffer is a [`CellError`].

use super::{Cell, CellError, KeyRef, MAX_VALUE_LEN, check_len};
use bytes::Bytes;

const HEADER_LEN: usize = 8;

/// Length of `cell` once encoded.
pub fn encoded_cell_len(cell: &Cell) -> usize {
    HEADER_LEN + cell.key().encoded_len() + cell.value.len()
}

/// Appends the encoding of `cell` to `out`. Fails if a component is too long.
pub fn encode_cell(cell: &Cell, out: &mut Vec<u8>) -> Result<(), CellError> {
    cell.validate()?;
    let key = cell.key();
    out.reserve(encoded_cell_len(cell));
    // validate() bounds every component so both lengths fit in a u32.
    out.extend_from_slice(&(key.encoded_len() as u32).to_be_bytes());
    out.extend_from_slice(&(cell.value.len() as u32).to_be_bytes());
    key.encode_into(out)?;
    out.extend_from_slice(&cell.value);
    Ok(())
}

/// Decodes one cell from the front of `buf`, returning it and the bytes consumed.
/// Row, family, qualifier and value share `buf`'s allocation.
pub fn decode_cell(buf: &Bytes) -> Result<(Cell, usize), CellError> {
    if buf.len() < HEADER_LEN {
        return Err(CellError::malformed(
            "cell",
            format!(
                "{} bytes, shorter than the {HEADER_LEN}-byte header",
                buf.len()
            ),
        ));
    }
    let key_len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
    let value_len = u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]) as usize;
    check_len("value", value_len, MAX_VALUE_LEN)?;
    let total = HEADER_LEN
        .checked_add(key_len)
        .and_then(|n| n.checked_add(value_len))
        .ok_or_else(|| CellError::malformed("cell", "length overflow"))?;
    if total > buf.len() {
        return Err(CellError::malformed(
            "cell",
            format!("needs {total} bytes, only {} present", buf.len()),
        ));
    }
    let key_bytes = buf.slice(HEADER_LEN..HEADER_LEN + key_len);
    let key = KeyRef::decode(&key_bytes)?;
    if key.row.is_empty() {
        return Err(CellError::EmptyRow);
    }
    let cell = Cell {
        row: key_bytes.slice_ref(key.row),
        family: key_bytes.slice_ref(key.family),
        qualifier: key_bytes.slice_ref(key.qualifier),
        timestamp: key.timestamp,
        kind: key.kind,
        seq: key.seq,
        value: buf.slice(HEADER_LEN + key_len..total),
    };
    Ok((cell, total))
}
