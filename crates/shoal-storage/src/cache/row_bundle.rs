//! The row bundle: row-cache entries as one buffer, the way a region's
//! former owner hands its cached rows to the next (`docs/cluster.md`).
//!
//! An entry already is one buffer of bytes (the row, then each cell's
//! family when it changes, qualifier and value, in order) and a fixed record
//! per cell (`rows.rs`), so the bundle writes the buffer as it is, one
//! `memcpy`, and per cell only the lengths and fixed fields from which the
//! receiver rebuilds the records: no per-cell objects on either side
//! (protobuf's `HandedRow` built a message per cell, then a `Cell` per cell,
//! then the copy).
//!
//! Layout (integers little-endian; `v` is a LEB128 varint, `z` a zigzag one):
//!
//! ```text
//! "SHRB" 1                                    magic, version
//! per row:
//!   u32 buf_len  u32 row_len  u32 cells  i64 from
//!   buf_len bytes                             the entry's buffer
//!   per cell: u8 new_family  [v family_len]  v qualifier_len  v value_len
//!             z timestamp  v seq  u8 type
//! u32 crc32c of everything before it
//! ```
//!
//! The first cell of a row always starts a family; the lengths must add up
//! to the buffer exactly.
//!
//! A bundle is verified whole (checksum, then every span inside its row's
//! buffer and every cell type known) before any of it is used; one that fails
//! hands nothing over.

use super::rows::{CachedRow, Span};
use crate::cell::CellType;
use crate::sst::varint::{get_varint, put_varint};
use bytes::{BufMut, Bytes};
use std::sync::Arc;

/// A row-cache entry in the per-cell form that servers of earlier versions
/// hand over (`RowBundle::from_rows`, `RowBundle::to_rows`): the newest
/// version of every column of `row` stamped at or after `from`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedRow {
    /// The row.
    pub row: Bytes,
    /// The entry answers gets of versions stamped at or after this.
    pub from: i64,
    /// Its cells, in order.
    pub cells: Vec<crate::cell::Cell>,
}

const MAGIC: &[u8; 4] = b"SHRB";
const VERSION: u8 = 1;
const HEADER: usize = MAGIC.len() + 1;
const ROW_HEADER: usize = 4 + 4 + 4 + 8;
/// Most bytes of one cell's record (flag, three lengths, timestamp, seq,
/// type): for the buffer's size.
const MAX_CELL_RECORD: usize = 1 + 3 * 5 + 10 + 10 + 1;
/// Fewest bytes of one cell's record.
const MIN_CELL_RECORD: usize = 1 + 1 + 1 + 1 + 1 + 1;
const TRAILER: usize = 4;

/// A bundle that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RowBundleError {
    /// Its bytes are not the ones written (checksum mismatch or cut short).
    #[error("row bundle is damaged: {0}")]
    Damaged(String),
    /// Written by an unknown version, or its contents break the layout.
    #[error("row bundle is malformed: {0}")]
    Malformed(String),
}

/// Cached rows of one region as one verified buffer (see the file comment).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RowBundle {
    bytes: Bytes,
}

impl RowBundle {
    /// A bundle as received (checked when used).
    pub fn from_bytes(bytes: Bytes) -> RowBundle {
        RowBundle { bytes }
    }

    /// Its encoded bytes (empty for a bundle of no rows).
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// Bytes it takes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True if it holds no rows (an empty buffer is a bundle of none).
    pub fn is_empty(&self) -> bool {
        self.bytes.len() <= HEADER + TRAILER
    }

    /// Entries in order, as many as fit `max_bytes` encoded (always the
    /// first, so a bundle is never empty for want of room).
    pub(crate) fn encode<'a, I>(entries: I, max_bytes: usize) -> RowBundle
    where
        I: IntoIterator<Item = &'a CachedRow>,
        I::IntoIter: Clone,
    {
        let entries = entries.into_iter();
        // One allocation of the most it can take: growing by doubling
        // copied megabytes several times over, and the pages a generous
        // estimate leaves untouched cost nothing.
        let most: usize = entries
            .clone()
            .map(|e| ROW_HEADER + e.buf.len() + e.cells.len() * MAX_CELL_RECORD)
            .sum();
        let mut out = Vec::with_capacity(HEADER + most.min(max_bytes) + TRAILER);
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        for entry in entries {
            let start = out.len();
            out.put_u32_le(entry.buf.len() as u32);
            out.put_u32_le(entry.row_len);
            out.put_u32_le(entry.cells.len() as u32);
            out.put_i64_le(entry.from);
            out.extend_from_slice(&entry.buf);
            if !put_cells(&mut out, entry) {
                // Not laid out as `CachedRow::copy_of` lays entries out
                // (never so today): left out rather than sent wrong.
                debug_assert!(false, "an entry out of layout");
                out.truncate(start);
                continue;
            }
            if start > HEADER && out.len() + TRAILER > max_bytes {
                out.truncate(start);
                break;
            }
        }
        let crc = crc32c::crc32c(&out);
        out.put_u32_le(crc);
        RowBundle {
            bytes: Bytes::from(out),
        }
    }

    /// A bundle of rows in the older per-cell form (from a server of an
    /// earlier version).
    pub fn from_rows(rows: &[HandedRow]) -> RowBundle {
        let entries: Vec<CachedRow> = rows
            .iter()
            .filter(|h| !h.cells.is_empty())
            .map(|h| CachedRow::copy_of(&h.row, h.from, &h.cells))
            .collect();
        RowBundle::encode(&entries, usize::MAX)
    }

    /// Its rows in the older per-cell form (for a server of an earlier
    /// version).
    pub fn to_rows(&self) -> Result<Vec<HandedRow>, RowBundleError> {
        Ok(self
            .entries()?
            .into_iter()
            .map(|e| HandedRow {
                row: e.slice((0, e.row_len)),
                from: e.from,
                cells: e.cells(e.from, |_, _| true),
            })
            .collect())
    }

    /// Its entries, each a copy of its bytes (a cached entry must not pin
    /// the whole bundle's memory), after checking all of it.
    pub(crate) fn entries(&self) -> Result<Vec<CachedRow>, RowBundleError> {
        let b = &self.bytes[..];
        if b.is_empty() {
            return Ok(Vec::new());
        }
        if b.len() < HEADER + TRAILER {
            return Err(RowBundleError::Damaged(format!("{} bytes", b.len())));
        }
        let (body, trailer) = b.split_at(b.len() - TRAILER);
        let stored = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
        let actual = crc32c::crc32c(body);
        if stored != actual {
            return Err(RowBundleError::Damaged(format!(
                "checksum {actual:#010x}, written {stored:#010x}"
            )));
        }
        if &body[..MAGIC.len()] != MAGIC || body[MAGIC.len()] != VERSION {
            return Err(RowBundleError::Malformed(format!(
                "unknown header {:?}",
                &body[..HEADER]
            )));
        }
        let mut r = Reader {
            b: body,
            at: HEADER,
        };
        let mut entries = Vec::new();
        while r.at < body.len() {
            entries.push(r.entry()?);
        }
        Ok(entries)
    }
}

/// A cursor over a bundle's checked body.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], RowBundleError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.b.len())
            .ok_or_else(|| {
                RowBundleError::Malformed(format!("{n} bytes wanted at {}, past its end", self.at))
            })?;
        let out = &self.b[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, RowBundleError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, RowBundleError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn varint(&mut self) -> Result<u64, RowBundleError> {
        get_varint(self.b, &mut self.at)
            .ok_or_else(|| RowBundleError::Malformed(format!("a bad varint at {}", self.at)))
    }

    fn entry(&mut self) -> Result<CachedRow, RowBundleError> {
        let buf_len = self.u32()?;
        let row_len = self.u32()?;
        let cells = self.u32()? as usize;
        let from = self.u64()? as i64;
        if row_len == 0 || row_len > buf_len || cells == 0 {
            return Err(RowBundleError::Malformed(format!(
                "a row of {row_len} bytes in {buf_len}, {cells} cells"
            )));
        }
        let buf = Bytes::copy_from_slice(self.take(buf_len as usize)?);
        // Bounded by the bytes left, so a huge count fails before allocating.
        if cells > (self.b.len() - self.at) / MIN_CELL_RECORD {
            return Err(RowBundleError::Malformed(format!(
                "{cells} cells past the bundle's end"
            )));
        }
        let mut spans = Vec::with_capacity(cells);
        let mut at = row_len;
        let mut span = |len: u64| -> Result<(u32, u32), RowBundleError> {
            let len = u32::try_from(len).ok();
            let end = len
                .and_then(|len| at.checked_add(len))
                .filter(|&e| e <= buf_len);
            match (len, end) {
                (Some(len), Some(end)) => {
                    let out = (at, len);
                    at = end;
                    Ok(out)
                }
                _ => Err(RowBundleError::Malformed(format!(
                    "cells past a row's buffer of {buf_len} bytes"
                ))),
            }
        };
        let mut family = None;
        for _ in 0..cells {
            if self.take(1)?[0] != 0 {
                family = Some(span(self.varint()?)?);
            }
            let family = family.ok_or_else(|| {
                RowBundleError::Malformed("a row's first cell starts no family".into())
            })?;
            let qualifier = span(self.varint()?)?;
            let value = span(self.varint()?)?;
            let zigzag = self.varint()?;
            let timestamp = ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64);
            let seq = self.varint()?;
            let code = self.take(1)?[0];
            let kind = CellType::from_code(code)
                .map_err(|_| RowBundleError::Malformed(format!("cell type {code}")))?;
            spans.push(Span {
                family,
                qualifier,
                value,
                timestamp,
                seq,
                kind,
            });
        }
        if at != buf_len {
            return Err(RowBundleError::Malformed(format!(
                "cells of {at} bytes in a row's buffer of {buf_len}"
            )));
        }
        let spans: Arc<[Span]> = spans.into();
        Ok(CachedRow {
            from,
            buf,
            row_len,
            cells: spans,
        })
    }
}

/// Writes `entry`'s cell records; false if its spans do not follow its
/// buffer in order (the only layout a receiver can rebuild).
fn put_cells(out: &mut Vec<u8>, entry: &CachedRow) -> bool {
    let mut at = entry.row_len;
    let mut family = None;
    for s in entry.cells.iter() {
        if family == Some(s.family) {
            out.push(0);
        } else {
            if s.family.0 != at {
                return false;
            }
            at += s.family.1;
            family = Some(s.family);
            out.push(1);
            put_varint(out, u64::from(s.family.1));
        }
        if s.qualifier.0 != at || s.value.0 != at + s.qualifier.1 {
            return false;
        }
        at = s.value.0 + s.value.1;
        put_varint(out, u64::from(s.qualifier.1));
        put_varint(out, u64::from(s.value.1));
        put_varint(out, ((s.timestamp << 1) ^ (s.timestamp >> 63)) as u64);
        put_varint(out, s.seq);
        out.push(s.kind.code());
    }
    at as usize == entry.buf.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Cell;

    fn row(key: &str, n: usize, from: i64) -> HandedRow {
        let row = Bytes::from(key.to_owned());
        HandedRow {
            cells: (0..n)
                .map(|i| {
                    let mut c = Cell::put(
                        row.clone(),
                        Bytes::from(if i % 3 == 0 { "a" } else { "b" }),
                        Bytes::from(format!("q{i}")),
                        100 + i as i64,
                        7 + i as u64,
                        Bytes::from(vec![i as u8; i * 10]),
                    );
                    if i == 1 {
                        c.value = Bytes::new();
                    }
                    c
                })
                .collect(),
            row,
            from,
        }
    }

    fn sample() -> Vec<HandedRow> {
        (0..30)
            .map(|k| row(&format!("row{k:02}"), 1 + k % 5, k as i64 - 10))
            .collect()
    }

    #[test]
    fn rows_come_back_as_written() {
        let rows = sample();
        let bundle = RowBundle::from_rows(&rows);
        assert!(!bundle.is_empty());
        assert_eq!(bundle.to_rows().unwrap(), rows);
        let copy = RowBundle::from_bytes(bundle.clone().into_bytes());
        assert_eq!(copy.to_rows().unwrap(), rows);
        assert_eq!(RowBundle::default().to_rows().unwrap(), []);
        assert!(RowBundle::default().is_empty());
        assert!(RowBundle::from_rows(&[]).is_empty());
    }

    #[test]
    fn a_byte_cap_keeps_a_prefix_and_at_least_one_row() {
        let rows = sample();
        let entries: Vec<CachedRow> = rows
            .iter()
            .map(|h| CachedRow::copy_of(&h.row, h.from, &h.cells))
            .collect();
        let all = RowBundle::encode(&entries, usize::MAX);
        for cap in [1, 100, 500, 2_000, all.len() - 1, all.len()] {
            let some = RowBundle::encode(&entries, cap);
            let back = some.to_rows().unwrap();
            assert!(!back.is_empty(), "cap {cap}");
            assert!(some.len() <= cap || back.len() == 1, "cap {cap}");
            assert_eq!(back[..], rows[..back.len()], "cap {cap}");
        }
        assert_eq!(
            RowBundle::encode(&entries, all.len()).to_rows().unwrap(),
            rows
        );
    }

    #[test]
    fn any_damage_is_found_and_nothing_is_returned() {
        let bytes = RowBundle::from_rows(&sample()).into_bytes();
        // Every single flipped bit, and every cut, is refused.
        for i in (0..bytes.len()).step_by(7) {
            let mut bad = bytes.to_vec();
            bad[i] ^= 1 << (i % 8);
            let err = RowBundle::from_bytes(bad.into()).to_rows().unwrap_err();
            assert!(
                matches!(err, RowBundleError::Damaged(_)),
                "bit at {i}: {err}"
            );
        }
        for cut in [1, 5, 8, bytes.len() / 2, bytes.len() - 1] {
            assert!(RowBundle::from_bytes(bytes.slice(..cut)).to_rows().is_err());
        }
    }

    /// A body with a valid checksum but contents that break the layout.
    fn sealed(body: Vec<u8>) -> RowBundle {
        let mut b = body;
        let crc = crc32c::crc32c(&b);
        b.put_u32_le(crc);
        RowBundle::from_bytes(b.into())
    }

    /// A body of one row whose cells are each `cell` (up to 4 written).
    fn one_row(buf_len: u32, row_len: u32, cells: u32, cell: &[u8]) -> Vec<u8> {
        let mut b = b"SHRB\x01".to_vec();
        b.put_u32_le(buf_len);
        b.put_u32_le(row_len);
        b.put_u32_le(cells);
        b.put_i64_le(0);
        b.extend(std::iter::repeat_n(b'x', buf_len as usize));
        for _ in 0..cells.min(4) {
            b.extend_from_slice(cell);
        }
        b
    }

    /// New family of 1 byte, qualifier 1, value `value`, stamped 1, seq 1.
    fn cell_of(flag: u8, value: u8, kind: u8) -> Vec<u8> {
        vec![flag, 1, 1, value, 2, 1, kind]
    }

    #[test]
    fn a_well_sealed_bundle_that_breaks_the_layout_is_refused() {
        let ok = one_row(10, 2, 1, &cell_of(1, 6, 4));
        let rows = sealed(ok).to_rows().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].cells[0].value.len(), 6);
        assert_eq!(rows[0].cells[0].timestamp, 1);
        let bad = [
            (
                "cells past the buffer",
                one_row(10, 2, 1, &cell_of(1, 7, 4)),
            ),
            (
                "cells short of the buffer",
                one_row(10, 2, 1, &cell_of(1, 5, 4)),
            ),
            (
                "a length past u32",
                one_row(10, 2, 1, &[1, 0x80, 0x80, 0x80, 0x80, 0x20, 1, 6, 2, 1, 4]),
            ),
            (
                "a bad varint",
                one_row(
                    10,
                    2,
                    1,
                    &[
                        1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                    ],
                ),
            ),
            ("unknown type", one_row(10, 2, 1, &cell_of(1, 6, 99))),
            (
                "first cell in no family",
                one_row(10, 2, 1, &cell_of(0, 6, 4)),
            ),
            ("empty row key", one_row(10, 0, 1, &cell_of(1, 6, 4))),
            (
                "row longer than its buffer",
                one_row(10, 11, 1, &cell_of(1, 6, 4)),
            ),
            ("no cells", one_row(10, 2, 0, &cell_of(1, 6, 4))),
            (
                "a billion cells",
                one_row(10, 2, 1 << 30, &cell_of(1, 6, 4)),
            ),
            (
                "buffer past the end",
                one_row(10, 2, 1, &cell_of(1, 6, 4))[..20].to_vec(),
            ),
            ("version 2", {
                let mut b = one_row(10, 2, 1, &cell_of(1, 6, 4));
                b[4] = 2;
                b
            }),
        ];
        for (what, body) in bad {
            let err = sealed(body).to_rows().unwrap_err();
            assert!(matches!(err, RowBundleError::Malformed(_)), "{what}: {err}");
        }
    }
}
