//! Backward iteration over an SST's cells within key bounds.
//!
//! Blocks store keys prefix-compressed and forward-linked, so a backward step
//! inside a block cannot be taken in place: an [`SstRevIter`] decodes one whole
//! block (≈ the block size in memory) and walks it from the end, then moves to
//! the previous block. It starts at the last block that can hold a key within
//! the upper bound, found through the index.

use super::SstError;
use super::iter::ScanRange;
use super::reader::SstReader;
use crate::cell::{Cell, KeyRef};
use bytes::Bytes;
use std::ops::Bound;

/// A backward cursor over an SST's cells.
pub struct SstRevIter {
    reader: SstReader,
    range: ScanRange,
    block: usize,
    entries: Vec<(Bytes, Bytes)>,
    started: bool,
    done: bool,
    fill_cache: bool,
}

impl SstRevIter {
    pub(crate) fn new(reader: SstReader, range: ScanRange, fill_cache: bool) -> SstRevIter {
        SstRevIter {
            reader,
            range,
            block: 0,
            entries: Vec::new(),
            started: false,
            done: false,
            fill_cache,
        }
    }

    fn corrupt(&self, reason: impl Into<String>) -> SstError {
        let offset = self.reader.block_addr(self.block).map_or(0, |a| a.offset);
        SstError::corruption(&self.reader.file().path, offset, reason)
    }

    async fn load(&mut self, i: usize) -> Result<(), SstError> {
        self.block = i;
        let block = self.reader.read_block_with(i, self.fill_cache).await?;
        let mut it = block.iter();
        self.entries.clear();
        let mut more = it.seek_to_first().map_err(|e| self.corrupt(e.0))?;
        while more {
            self.entries
                .push((Bytes::copy_from_slice(it.key()), it.value()));
            more = it.advance().map_err(|e| self.corrupt(e.0))?;
        }
        Ok(())
    }

    /// The previous cell in order (the largest first), or `None` past the start.
    pub async fn next(&mut self) -> Result<Option<Cell>, SstError> {
        if self.done {
            return Ok(None);
        }
        if !self.started {
            self.started = true;
            let n = self.reader.data_block_count();
            let first = match &self.range.end {
                Bound::Unbounded => n.checked_sub(1),
                Bound::Included(e) | Bound::Excluded(e) => {
                    match self.reader.find_block(&e.as_ref())? {
                        Some(i) => Some(i),
                        None => n.checked_sub(1),
                    }
                }
            };
            let Some(first) = first else {
                self.done = true;
                return Ok(None);
            };
            self.load(first).await?;
        }
        loop {
            let Some((key_bytes, value)) = self.entries.pop() else {
                if self.block == 0 {
                    self.done = true;
                    return Ok(None);
                }
                // Stop before loading a block that ends below the lower bound.
                let prev = self.block - 1;
                if let Some(last) = self.reader.block_last_key(prev) {
                    let k = KeyRef::decode(last).map_err(|e| self.corrupt(e.to_string()))?;
                    if !above_start(&self.range, &k) {
                        self.done = true;
                        return Ok(None);
                    }
                }
                self.load(prev).await?;
                continue;
            };
            let key =
                KeyRef::decode(&key_bytes).map_err(|e| self.corrupt(format!("bad key: {e}")))?;
            let below_end = match &self.range.end {
                Bound::Unbounded => true,
                Bound::Included(e) => key <= e.as_ref(),
                Bound::Excluded(e) => key < e.as_ref(),
            };
            if !below_end {
                continue;
            }
            if !above_start(&self.range, &key) {
                self.done = true;
                return Ok(None);
            }
            return Ok(Some(Cell {
                row: key_bytes.slice_ref(key.row),
                family: key_bytes.slice_ref(key.family),
                qualifier: key_bytes.slice_ref(key.qualifier),
                timestamp: key.timestamp,
                kind: key.kind,
                seq: key.seq,
                value,
            }));
        }
    }
}

fn above_start(range: &ScanRange, key: &KeyRef<'_>) -> bool {
    match &range.start {
        Bound::Unbounded => true,
        Bound::Included(s) => *key >= s.as_ref(),
        Bound::Excluded(s) => *key > s.as_ref(),
    }
}
