//! Forward iteration over an SST's cells within key bounds.
//!
//! An [`SstIter`] walks data blocks in order, fetching each only when the scan
//! reaches it, and stops without fetching the next block once the current
//! block's last key passes the upper bound. `seek` jumps with the block index
//! and a binary search inside the block.

use super::SstError;
use super::block::BlockIter;
use super::reader::SstReader;
use crate::cell::{Cell, CellKey, KeyRef};
use bytes::Bytes;
use std::ops::Bound;

/// Key bounds of a scan.
#[derive(Debug, Clone)]
pub struct ScanRange {
    /// Lower bound.
    pub start: Bound<CellKey>,
    /// Upper bound.
    pub end: Bound<CellKey>,
}

impl ScanRange {
    /// Every cell.
    pub fn all() -> ScanRange {
        ScanRange {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
        }
    }

    /// Rows in `[start_row, stop_row)`, HBase's scan convention; an empty row
    /// means unbounded on that side.
    pub fn rows(start_row: impl Into<Bytes>, stop_row: impl Into<Bytes>) -> ScanRange {
        let (start, stop) = (start_row.into(), stop_row.into());
        ScanRange {
            start: if start.is_empty() {
                Bound::Unbounded
            } else {
                Bound::Included(CellKey::first_of_row(start))
            },
            end: if stop.is_empty() {
                Bound::Unbounded
            } else {
                Bound::Excluded(CellKey::first_of_row(stop))
            },
        }
    }

    fn below_end(&self, key: &KeyRef<'_>) -> bool {
        match &self.end {
            Bound::Unbounded => true,
            Bound::Included(e) => *key <= e.as_ref(),
            Bound::Excluded(e) => *key < e.as_ref(),
        }
    }

    fn above_start(&self, key: &KeyRef<'_>) -> bool {
        match &self.start {
            Bound::Unbounded => true,
            Bound::Included(s) => *key >= s.as_ref(),
            Bound::Excluded(s) => *key > s.as_ref(),
        }
    }
}

/// A cursor over an SST's cells.
pub struct SstIter {
    reader: SstReader,
    range: ScanRange,
    /// Block the cursor is in, and the cursor positioned on the next cell to
    /// return (or exhausted, in which case the next block is loaded on demand).
    block: usize,
    cursor: Option<BlockIter>,
    started: bool,
    done: bool,
    fill_cache: bool,
    /// False once a cell at or above the start bound was returned: keys only
    /// grow from there, so later cells skip the comparison.
    check_start: bool,
    /// The row and family of the last cell returned, shared with the next
    /// cell when it has the same.
    last_row: Bytes,
    last_family: Bytes,
}

/// `last` when it holds `bytes`, else a copy of `bytes` (kept in `last`).
#[inline]
fn reuse_or_copy(last: &mut Bytes, bytes: &[u8]) -> Bytes {
    if last[..] != *bytes {
        *last = Bytes::copy_from_slice(bytes);
    }
    last.clone()
}

impl SstIter {
    pub(crate) fn new(reader: SstReader, range: ScanRange, fill_cache: bool) -> SstIter {
        SstIter {
            reader,
            range,
            block: 0,
            cursor: None,
            started: false,
            done: false,
            fill_cache,
            check_start: true,
            last_row: Bytes::new(),
            last_family: Bytes::new(),
        }
    }

    fn corrupt(&self, reason: impl Into<String>) -> SstError {
        let offset = self.reader.block_addr(self.block).map_or(0, |a| a.offset);
        SstError::corruption(&self.reader.file().path, offset, reason)
    }

    /// Positions the iterator so that `next` returns the first cell ≥ `target`
    /// (and within the range).
    pub async fn seek(&mut self, target: KeyRef<'_>) -> Result<(), SstError> {
        self.started = true;
        self.done = false;
        self.cursor = None;
        self.check_start = true;
        let target = match &self.range.start {
            Bound::Included(s) | Bound::Excluded(s) if s.as_ref() > target => s.clone(),
            _ => target.to_owned_key(),
        };
        let Some(i) = self.reader.find_block(&target.as_ref())? else {
            self.done = true;
            return Ok(());
        };
        self.block = i;
        let block = self.reader.read_block_with(i, self.fill_cache).await?;
        let mut it = block.iter();
        if !it.seek(&target.as_ref()).map_err(|e| self.corrupt(e.0))? {
            // The index said this block's last key is ≥ target: the block lies.
            return Err(self.corrupt("block ends before the key its index entry promises"));
        }
        self.cursor = Some(it);
        Ok(())
    }

    /// The next cell in order, or `None` at the end of the range.
    pub async fn next(&mut self) -> Result<Option<Cell>, SstError> {
        if !self.started {
            match self.range.start.clone() {
                Bound::Unbounded => {
                    self.started = true;
                    self.block = 0;
                    self.cursor = None;
                    self.load_block(0).await?;
                }
                Bound::Included(s) | Bound::Excluded(s) => self.seek(s.as_ref()).await?,
            }
        }
        loop {
            if self.done {
                return Ok(None);
            }
            let Some(cursor) = &mut self.cursor else {
                return Ok(None);
            };
            if !cursor.valid() {
                // Current block exhausted: stop if its last key already reached
                // the end of the range, else move to the next block.
                let past_end = match self.reader.block_last_key(self.block) {
                    Some(k) => {
                        let k = KeyRef::decode(k).map_err(|e| self.corrupt(e.to_string()))?;
                        !self.range.below_end(&k)
                    }
                    None => true,
                };
                if past_end || self.block + 1 >= self.reader.data_block_count() {
                    self.done = true;
                    return Ok(None);
                }
                self.block += 1;
                self.load_block(self.block).await?;
                continue;
            }
            // Decode in place; the cell's row and family reuse the previous
            // cell's copies when equal (a row's cells share both), so most
            // cells copy only their qualifier.
            let key = match KeyRef::decode(cursor.key()) {
                Ok(k) => k,
                Err(e) => {
                    let reason = format!("bad key: {e}");
                    return Err(self.corrupt(reason));
                }
            };
            if !self.range.below_end(&key) {
                self.done = true;
                return Ok(None);
            }
            let skip = self.check_start && !self.range.above_start(&key);
            let cell = (!skip).then(|| Cell {
                row: reuse_or_copy(&mut self.last_row, key.row),
                family: reuse_or_copy(&mut self.last_family, key.family),
                qualifier: Bytes::copy_from_slice(key.qualifier),
                timestamp: key.timestamp,
                kind: key.kind,
                seq: key.seq,
                value: cursor.value(),
            });
            if let Err(e) = cursor.advance() {
                return Err(self.corrupt(e.0));
            }
            match cell {
                // Only an exclusive start bound equal to this key lands here.
                None => continue,
                Some(cell) => {
                    self.check_start = false;
                    return Ok(Some(cell));
                }
            }
        }
    }

    async fn load_block(&mut self, i: usize) -> Result<(), SstError> {
        let block = self.reader.read_block_with(i, self.fill_cache).await?;
        let mut it = block.iter();
        if !it.seek_to_first().map_err(|e| self.corrupt(e.0))? {
            return Err(self.corrupt("empty data block"));
        }
        self.cursor = Some(it);
        Ok(())
    }
}
