//! The data block index as `HFileBlockIndex.BlockIndexWriter` writes it. Entries (first key,
//! offset and on-disk size of each data block) gather in a leaf chunk; once its non-root
//! form reaches the maximum chunk size (`hfile.index.block.max.size`, 128 KiB) it is
//! written as an inline `IDXLEAF2` block between data blocks and becomes one root entry.
//! At close, a file whose entries fit one chunk gets a single-level index (the chunk is
//! the root); otherwise the last leaf is written, and while the root is over the maximum
//! size (and has more than the minimum entries) it is split into `IDXINTE2` intermediate
//! blocks, one level at a time. The root (`IDXROOT2`) of a multi-level index ends with the
//! mid-key metadata: the leaf block holding the middle data block's entry, and where.

use super::block::{BlockWriter, Written};
use super::encode;
use crate::block::BlockType;
use std::io::Write;

/// HBase's `hfile.index.block.max.size` default.
pub const DEFAULT_MAX_CHUNK_SIZE: usize = 128 * 1024;
/// HBase's `hfile.index.block.min.entries` default.
pub const DEFAULT_MIN_ENTRIES: usize = 16;
/// HBase never writes more levels.
const MAX_LEVELS: u32 = 16;
/// Offset and on-disk size before each key of a non-root entry.
const NON_ROOT_ENTRY_OVERHEAD: usize = 12;

/// Entries of one index block (`BlockIndexChunkImpl`).
#[derive(Default)]
struct Chunk {
    keys: Vec<Vec<u8>>,
    offsets: Vec<u64>,
    sizes: Vec<u32>,
    /// For root entries pointing at leaves: data blocks indexed up to and including
    /// this leaf (for the mid-key metadata).
    cumulative: Vec<u64>,
    non_root_entries_size: usize,
    root_size: usize,
}

impl Chunk {
    fn add(&mut self, key: Vec<u8>, offset: u64, size: u32, cumulative: Option<u64>) {
        self.non_root_entries_size += NON_ROOT_ENTRY_OVERHEAD + key.len();
        self.root_size += 8 + 4 + vint_size(key.len()) + key.len();
        self.keys.push(key);
        self.offsets.push(offset);
        self.sizes.push(size);
        if let Some(c) = cumulative {
            self.cumulative.push(c);
        }
    }

    fn len(&self) -> usize {
        self.keys.len()
    }

    fn non_root_size(&self) -> usize {
        4 + 4 * (self.len() + 1) + self.non_root_entries_size
    }

    /// `[offset u64][on-disk size i32][key length vint][key]` per entry.
    fn encode_root(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.root_size);
        for i in 0..self.len() {
            out.extend_from_slice(&self.offsets[i].to_be_bytes());
            out.extend_from_slice(&self.sizes[i].to_be_bytes());
            encode::hadoop_vlong(&mut out, self.keys[i].len() as i64);
            out.extend_from_slice(&self.keys[i]);
        }
        out
    }

    /// `[count i32][count + 1 relative offsets i32][entries: offset, size, key]`.
    fn encode_non_root(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.non_root_size());
        out.extend_from_slice(&(self.len() as u32).to_be_bytes());
        let mut rel = 0usize;
        for k in &self.keys {
            out.extend_from_slice(&(rel as u32).to_be_bytes());
            rel += NON_ROOT_ENTRY_OVERHEAD + k.len();
        }
        out.extend_from_slice(&(rel as u32).to_be_bytes());
        for i in 0..self.len() {
            out.extend_from_slice(&self.offsets[i].to_be_bytes());
            out.extend_from_slice(&self.sizes[i].to_be_bytes());
            out.extend_from_slice(&self.keys[i]);
        }
        out
    }

    /// Leaf offset, leaf on-disk size, and the middle data block's place in that leaf.
    fn mid_key_metadata(&self) -> Option<Vec<u8>> {
        let total = *self.cumulative.last()?;
        if total == 0 || self.cumulative.len() != self.len() {
            return None;
        }
        let mid = (total - 1) / 2;
        let entry = match self.cumulative.binary_search(&mid) {
            Ok(i) => i + 1,
            Err(i) => i,
        };
        let before = if entry > 0 {
            self.cumulative[entry - 1]
        } else {
            0
        };
        let mut out = Vec::with_capacity(16);
        out.extend_from_slice(&self.offsets.get(entry)?.to_be_bytes());
        out.extend_from_slice(&self.sizes.get(entry)?.to_be_bytes());
        out.extend_from_slice(&((mid - before) as u32).to_be_bytes());
        Some(out)
    }
}

/// Bytes of `WritableUtils.writeVInt(n)` for a non-negative `n`.
fn vint_size(n: usize) -> usize {
    let mut out = Vec::new();
    encode::hadoop_vlong(&mut out, n as i64);
    out.len()
}

/// What the trailer needs from the data index.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexSummary {
    pub root_offset: u64,
    pub levels: u32,
    pub root_entries: u32,
    /// Uncompressed payload bytes of all index blocks (leaf, intermediate, root).
    pub uncompressed_size: u64,
    /// Uncompressed bytes (with headers) of the inline leaf blocks.
    pub leaf_bytes_with_headers: u64,
}

pub(crate) struct DataIndexWriter {
    root: Chunk,
    inline: Chunk,
    levels: u32,
    data_blocks: u64,
    max_chunk_size: usize,
    min_entries: usize,
    uncompressed_size: u64,
    leaf_bytes_with_headers: u64,
}

impl DataIndexWriter {
    pub fn new(max_chunk_size: usize, min_entries: usize) -> Self {
        DataIndexWriter {
            root: Chunk::default(),
            inline: Chunk::default(),
            levels: 1,
            data_blocks: 0,
            max_chunk_size: max_chunk_size.max(1),
            min_entries: min_entries.max(2),
            uncompressed_size: 0,
            leaf_bytes_with_headers: 0,
        }
    }

    /// Indexes one data block.
    pub fn add_data_block(&mut self, key: Vec<u8>, w: Written) {
        self.inline
            .add(key, w.offset, w.on_disk_size_with_header, None);
        self.data_blocks += 1;
    }

    /// After a data block: writes the leaf chunk as an inline block if it is full.
    pub fn maybe_write_leaf<W: Write>(&mut self, bw: &mut BlockWriter<W>) -> std::io::Result<()> {
        if self.inline.len() > 0 && self.inline.non_root_size() >= self.max_chunk_size {
            self.write_leaf(bw)?;
        }
        Ok(())
    }

    fn write_leaf<W: Write>(&mut self, bw: &mut BlockWriter<W>) -> std::io::Result<()> {
        let chunk = std::mem::take(&mut self.inline);
        let w = bw.write_block(BlockType::LeafIndex, &chunk.encode_non_root())?;
        self.uncompressed_size += u64::from(w.uncompressed_size_without_header);
        self.leaf_bytes_with_headers += w.uncompressed_size_with_header();
        if self.root.len() == 0 {
            self.levels = 2;
        }
        let first = chunk.keys.into_iter().next().unwrap_or_default();
        self.root.add(
            first,
            w.offset,
            w.on_disk_size_with_header,
            Some(self.data_blocks),
        );
        Ok(())
    }

    /// After the last data block: the last leaf (or, if no leaf was written, the chunk
    /// becomes the root), the intermediate levels and the root.
    pub fn finish<W: Write>(mut self, bw: &mut BlockWriter<W>) -> std::io::Result<IndexSummary> {
        if self.inline.len() > 0 {
            if self.root.len() == 0 {
                self.root = std::mem::take(&mut self.inline);
            } else {
                self.write_leaf(bw)?;
            }
        }
        let mid_key = if self.levels > 1 {
            self.root.mid_key_metadata()
        } else {
            None
        };
        while self.root.root_size > self.max_chunk_size
            && self.root.len() > self.min_entries
            && self.levels < MAX_LEVELS
        {
            self.root = self.write_intermediate_level(bw)?;
            self.levels += 1;
        }
        let mut payload = self.root.encode_root();
        if let Some(m) = mid_key {
            payload.extend_from_slice(&m);
        }
        let w = bw.write_block(BlockType::RootIndex, &payload)?;
        self.uncompressed_size += u64::from(w.uncompressed_size_without_header);
        Ok(IndexSummary {
            root_offset: w.offset,
            levels: self.levels,
            root_entries: self.root.len() as u32,
            uncompressed_size: self.uncompressed_size,
            leaf_bytes_with_headers: self.leaf_bytes_with_headers,
        })
    }

    fn write_intermediate_level<W: Write>(
        &mut self,
        bw: &mut BlockWriter<W>,
    ) -> std::io::Result<Chunk> {
        let level = std::mem::take(&mut self.root);
        let mut parent = Chunk::default();
        let mut cur = Chunk::default();
        let n = level.len();
        for (i, key) in level.keys.into_iter().enumerate() {
            cur.add(key, level.offsets[i], level.sizes[i], None);
            if i >= self.min_entries && cur.root_size >= self.max_chunk_size {
                self.write_intermediate(bw, &mut parent, std::mem::take(&mut cur))?;
            }
        }
        debug_assert!(n > 0);
        if cur.len() > 0 {
            self.write_intermediate(bw, &mut parent, cur)?;
        }
        Ok(parent)
    }

    fn write_intermediate<W: Write>(
        &mut self,
        bw: &mut BlockWriter<W>,
        parent: &mut Chunk,
        chunk: Chunk,
    ) -> std::io::Result<()> {
        let w = bw.write_block(BlockType::IntermediateIndex, &chunk.encode_non_root())?;
        self.uncompressed_size += u64::from(w.uncompressed_size_without_header);
        let first = chunk.keys.into_iter().next().unwrap_or_default();
        parent.add(first, w.offset, w.on_disk_size_with_header, None);
        Ok(())
    }
}

/// The meta block index: always empty here (the writer writes no meta blocks).
pub(crate) fn empty_meta_index() -> Vec<u8> {
    Chunk::default().encode_root()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{parse_non_root, parse_root_block};
    use bytes::Bytes;

    fn chunk(n: usize) -> Chunk {
        let mut c = Chunk::default();
        for i in 0..n {
            c.add(
                vec![b'k'; i * 3],
                i as u64 * 100,
                99,
                Some(i as u64 * 4 + 4),
            );
        }
        c
    }

    #[test]
    fn encodings_parse_back_and_sizes_agree() {
        let c = chunk(7);
        let root = c.encode_root();
        assert_eq!(root.len(), c.root_size);
        let parsed = parse_root_block(&Bytes::from(root), 7, false).expect("root");
        assert_eq!(parsed[3].offset, 300);
        let non_root = c.encode_non_root();
        assert_eq!(non_root.len(), c.non_root_size());
        let parsed = parse_non_root(&Bytes::from(non_root)).expect("non-root");
        assert_eq!(parsed[6].key.len(), 18);
    }

    #[test]
    fn mid_key_points_into_the_middle_leaf() {
        // 7 leaves of 4 data blocks each: 28 blocks, the middle one (13) is in leaf 3.
        let m = chunk(7).mid_key_metadata().expect("mid key");
        assert_eq!(&m[..8], &300u64.to_be_bytes());
        assert_eq!(&m[12..], &1u32.to_be_bytes());
    }
}
