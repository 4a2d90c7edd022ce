//! Blocks: sorted key/value entries with key prefix compression and restart points.
//!
//! The same layout holds data blocks (key = encoded cell key, value = cell value)
//! and index blocks (key = last cell key of a block, value = that block's handle).
//!
//! ```text
//! entry    = varint shared | varint unshared | varint value_len | key[shared..] | value
//! block    = entry* | restart: u32 LE * n | n: u32 LE
//! ```
//!
//! Every `restart_interval`-th entry stores its whole key (`shared = 0`); the
//! restart array holds those entries' offsets, so a seek binary-searches the
//! restarts and then scans at most one interval. Keys within a block are in
//! strictly increasing cell order; the builder's caller guarantees it.
//!
//! [`Block::new`] and [`BlockIter`] validate every offset and length: a malformed
//! block yields a [`BlockError`], never a panic, however its bytes were produced.

use super::row_words::RowWords;
use super::varint::{get_len, put_varint};
use crate::cell::key::encoded_row;
use crate::cell::{KeyRef, cmp_encoded};
use bytes::Bytes;
use std::cmp::Ordering;
use std::sync::Arc;

/// Why a block's bytes are malformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockError(pub String);

impl std::fmt::Display for BlockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn malformed<T>(reason: impl Into<String>) -> Result<T, BlockError> {
    Err(BlockError(reason.into()))
}

/// Builds one block in memory.
#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    since_restart: usize,
    last_key: Vec<u8>,
    entries: usize,
}

impl BlockBuilder {
    /// A builder that stores a full key every `restart_interval` entries (≥ 1).
    pub fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: Vec::new(),
            restart_interval: restart_interval.max(1),
            since_restart: 0,
            last_key: Vec::new(),
            entries: 0,
        }
    }

    /// Appends an entry. `key` must sort after the previous key (not checked here).
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.since_restart == 0 || self.since_restart >= self.restart_interval {
            self.restarts.push(self.buf.len() as u32);
            self.since_restart = 0;
            0
        } else {
            self.last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        };
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, (key.len() - shared) as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.since_restart += 1;
        self.entries += 1;
    }

    /// Size the block would have if finished now.
    pub fn estimated_len(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// Number of entries added since the last finish.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// True when nothing was added since the last finish.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The last key added.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Returns the finished block and resets the builder for the next one.
    pub fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buf);
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        self.restarts.clear();
        self.since_restart = 0;
        self.last_key.clear();
        self.entries = 0;
        out
    }
}

/// A decoded (decompressed, checksum-verified) block.
#[derive(Debug, Clone)]
pub struct Block {
    data: Bytes,
    restarts_at: usize,
    num_restarts: usize,
    /// Words of the restart keys' rows, for seeks (see [`RowWords`]).
    hints: Arc<RowWords>,
}

impl Block {
    /// Wraps raw block bytes after checking the restart array's bounds.
    pub fn new(data: Bytes) -> Result<Block, BlockError> {
        if data.len() < 4 {
            return malformed(format!("{} bytes is too short for a block", data.len()));
        }
        let n_at = data.len() - 4;
        let num_restarts =
            u32::from_le_bytes([data[n_at], data[n_at + 1], data[n_at + 2], data[n_at + 3]])
                as usize;
        let restarts_len = num_restarts
            .checked_mul(4)
            .filter(|&l| l <= n_at)
            .ok_or_else(|| {
                BlockError(format!(
                    "{num_restarts} restarts do not fit a {}-byte block",
                    data.len()
                ))
            })?;
        let restarts_at = n_at - restarts_len;
        if num_restarts == 0 && restarts_at != 0 {
            return malformed("entries without restart points");
        }
        let mut block = Block {
            data,
            restarts_at,
            num_restarts,
            hints: Arc::default(),
        };
        let mut prev = 0usize;
        for i in 0..num_restarts {
            let r = block.restart(i);
            if r >= restarts_at || (i > 0 && r <= prev) || (i == 0 && r != 0) {
                return malformed(format!(
                    "restart point {i} at {r} is out of order or bounds"
                ));
            }
            prev = r;
        }
        block.hints = Arc::new(block.restart_words());
        Ok(block)
    }

    /// The row words of the restart keys, or none if a restart key does
    /// not parse (seeks then compare keys, and report the malformed one).
    fn restart_words(&self) -> RowWords {
        let mut rows = Vec::with_capacity(self.num_restarts);
        for i in 0..self.num_restarts {
            let Some(row) = self.restart_key(i).ok().and_then(encoded_row) else {
                return RowWords::default();
            };
            rows.push(row);
        }
        RowWords::build(&rows, |prefix| self.data.slice_ref(prefix))
    }

    /// The full key stored at restart point `i`, read in place (a restart
    /// entry shares nothing with the entry before it).
    fn restart_key(&self, i: usize) -> Result<&[u8], BlockError> {
        let data = &self.data[..self.restarts_at];
        let at = self.restart(i);
        let mut pos = at;
        let limit = data.len();
        let (Some(shared), Some(unshared), Some(_)) = (
            get_len(data, &mut pos, limit),
            get_len(data, &mut pos, limit),
            get_len(data, &mut pos, limit),
        ) else {
            return malformed(format!("truncated entry header at restart {i} ({at})"));
        };
        if shared != 0 {
            return malformed(format!("restart point {i} ({at}) shares {shared} bytes"));
        }
        data.get(pos..pos + unshared)
            .ok_or_else(|| BlockError(format!("restart point {i} ({at}) overruns the block")))
    }

    #[inline]
    fn restart(&self, i: usize) -> usize {
        let at = self.restarts_at + 4 * i;
        let d = &self.data;
        u32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]) as usize
    }

    /// True if the block holds no entries.
    pub fn is_empty(&self) -> bool {
        self.restarts_at == 0
    }

    /// Size of the raw block in bytes.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// An iterator positioned before the first entry.
    pub fn iter(&self) -> BlockIter {
        BlockIter {
            block: self.clone(),
            next_at: 0,
            key: Vec::new(),
            value: 0..0,
            valid: false,
        }
    }
}

/// A cursor over one block's entries.
#[derive(Debug, Clone)]
pub struct BlockIter {
    block: Block,
    next_at: usize,
    key: Vec<u8>,
    value: std::ops::Range<usize>,
    valid: bool,
}

impl BlockIter {
    /// True when positioned on an entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current entry's key (empty when not valid).
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current entry's value, sharing the block's memory.
    pub fn value(&self) -> Bytes {
        self.block.data.slice(self.value.clone())
    }

    /// Moves to the next entry; returns false (and becomes invalid) at the end.
    pub fn advance(&mut self) -> Result<bool, BlockError> {
        if self.next_at >= self.block.restarts_at {
            self.valid = false;
            return Ok(false);
        }
        let data = &self.block.data[..self.block.restarts_at];
        let mut pos = self.next_at;
        let limit = data.len();
        let (Some(shared), Some(unshared), Some(value_len)) = (
            get_len(data, &mut pos, limit),
            get_len(data, &mut pos, limit),
            get_len(data, &mut pos, limit),
        ) else {
            self.valid = false;
            return malformed(format!("truncated entry header at {}", self.next_at));
        };
        if shared > self.key.len() {
            self.valid = false;
            return malformed(format!(
                "entry at {} shares {shared} bytes of a {}-byte previous key",
                self.next_at,
                self.key.len()
            ));
        }
        let key_end = pos + unshared;
        let value_end = key_end + value_len;
        if value_end > limit {
            self.valid = false;
            return malformed(format!("entry at {} overruns the block", self.next_at));
        }
        self.key.truncate(shared);
        self.key.extend_from_slice(&data[pos..key_end]);
        self.value = key_end..value_end;
        self.next_at = value_end;
        self.valid = true;
        Ok(true)
    }

    /// Positions on the first entry; false if the block is empty.
    pub fn seek_to_first(&mut self) -> Result<bool, BlockError> {
        self.next_at = 0;
        self.key.clear();
        self.advance()
    }

    fn seek_to_restart(&mut self, i: usize) {
        self.next_at = self.block.restart(i);
        self.key.clear();
        self.valid = false;
    }

    fn current_cmp(&self, target: &KeyRef<'_>) -> Result<Ordering, BlockError> {
        cmp_encoded(&self.key, target).map_err(|e| BlockError(format!("bad key: {e}")))
    }

    /// Positions on the first entry whose key is ≥ `target`; returns false (and
    /// becomes invalid) if every key is smaller. After an error the iterator is
    /// invalid.
    pub fn seek(&mut self, target: &KeyRef<'_>) -> Result<bool, BlockError> {
        let result = self.seek_inner(target);
        if result.is_err() {
            self.valid = false;
        }
        result
    }

    /// Restart `mid`'s key compared with `target`: by the row words when
    /// they decide (`target_word` is the target row's word), else by the key.
    #[inline]
    fn restart_cmp(
        &self,
        mid: usize,
        target: &KeyRef<'_>,
        target_word: Option<u64>,
    ) -> Result<Ordering, BlockError> {
        if let Some(order) = self.block.hints.cmp(mid, target_word) {
            return Ok(order);
        }
        cmp_encoded(self.block.restart_key(mid)?, target)
            .map_err(|e| BlockError(format!("bad key at restart {mid}: {e}")))
    }

    fn seek_inner(&mut self, target: &KeyRef<'_>) -> Result<bool, BlockError> {
        let target_word = self.block.hints.target(target.row);
        // Binary search for the last restart whose key is < target.
        let (mut lo, mut hi) = (0usize, self.block.num_restarts);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let order = self.restart_cmp(mid, target, target_word)?;
            if order == Ordering::Less {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if self.block.num_restarts == 0 {
            self.valid = false;
            return Ok(false);
        }
        self.seek_to_restart(lo);
        while self.advance()? {
            if self.current_cmp(target)? != Ordering::Less {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Cell;
    use proptest::prelude::*;

    fn keys(rows: &[u32]) -> Vec<(Vec<u8>, Vec<u8>)> {
        rows.iter()
            .map(|r| {
                let c = Cell::put(format!("row{r:08}"), "f", "q", 7, 1, format!("v{r}"));
                (c.key().encode().unwrap(), c.value.to_vec())
            })
            .collect()
    }

    fn build(entries: &[(Vec<u8>, Vec<u8>)], interval: usize) -> Block {
        let mut b = BlockBuilder::new(interval);
        for (k, v) in entries {
            b.add(k, v);
        }
        let est = b.estimated_len();
        let raw = b.finish();
        assert_eq!(raw.len(), est);
        Block::new(Bytes::from(raw)).unwrap()
    }

    proptest! {
        #[test]
        fn round_trip_and_seek(mut rows in prop::collection::btree_set(0u32..5000, 0..300), interval in 1usize..20, probe in 0u32..5100) {
            let rows: Vec<u32> = std::mem::take(&mut rows).into_iter().collect();
            let entries = keys(&rows);
            let block = build(&entries, interval);
            let mut it = block.iter();
            let mut got = Vec::new();
            let mut more = it.seek_to_first().unwrap();
            while more {
                got.push((it.key().to_vec(), it.value().to_vec()));
                more = it.advance().unwrap();
            }
            prop_assert_eq!(&got, &entries);

            let probe_row = format!("row{probe:08}");
            let target = KeyRef::first_of_row(probe_row.as_bytes());
            let expect = rows.iter().position(|&r| r >= probe);
            let found = it.seek(&target).unwrap();
            prop_assert_eq!(found, expect.is_some());
            if let Some(i) = expect {
                prop_assert_eq!(it.key(), &entries[i].0[..]);
            }
        }

        #[test]
        fn seek_agrees_with_sorted_order_for_any_rows(
            rows in prop::collection::btree_set(prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0xff]), 1..12), 1..120),
            interval in 1usize..8,
            probe in prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0xff]), 1..12),
        ) {
            // Rows full of zero bytes and prefixes of one another: the row
            // hints' zero padding must never misorder them.
            let rows: Vec<Vec<u8>> = rows.into_iter().collect();
            let entries: Vec<(Vec<u8>, Vec<u8>)> = rows
                .iter()
                .map(|r| {
                    let c = Cell::put(r.clone(), "f", "q", 7, 1, "v");
                    (c.key().encode().unwrap(), c.value.to_vec())
                })
                .collect();
            let block = build(&entries, interval);
            let mut it = block.iter();
            for (i, row) in rows.iter().chain(std::iter::once(&probe)).enumerate() {
                let expect = rows.iter().position(|r| r >= row);
                let found = it.seek(&KeyRef::first_of_row(row)).unwrap();
                prop_assert_eq!(found, expect.is_some(), "probe {}", i);
                if let Some(j) = expect {
                    prop_assert_eq!(it.key(), &entries[j].0[..]);
                }
            }
        }

        #[test]
        fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(block) = Block::new(Bytes::from(bytes)) {
                let mut it = block.iter();
                let _ = it.seek(&KeyRef::first_of_row(b"m"));
                let mut it = block.iter();
                while let Ok(true) = it.advance() {}
            }
        }
    }

    #[test]
    fn prefix_compression_shrinks_similar_keys() {
        let entries = keys(&(0..100).collect::<Vec<_>>());
        let shared = build(&entries, 16).len();
        let unshared = build(&entries, 1).len();
        // Each key shares its 11-byte "..row0000000" prefix with the previous one.
        assert!(shared + 100 * 8 < unshared, "{shared} vs {unshared}");
    }

    #[test]
    fn empty_block() {
        let block = build(&[], 16);
        assert!(block.is_empty());
        assert!(!block.iter().seek_to_first().unwrap());
        assert!(!block.iter().seek(&KeyRef::first_of_row(b"a")).unwrap());
    }
}
