//! Streams sorted cells into an SST.
//!
//! The writer holds one data block being built, the index entries (one per
//! data block) and the bloom hashes (8 bytes per distinct row) — never the file.
//! Each finished data block is framed and handed to an [`SstSink`] at once; the
//! object-store sink turns those into multipart-upload parts. At `finish` the
//! tail (bloom, index leaves, root index, meta) and the footer follow.
//!
//! Invariants the writer enforces: keys strictly increase in cell order, every
//! cell belongs to the writer's family and passes the cell model's limits, and
//! a file has at least one cell.

use super::SstError;
use super::block::BlockBuilder;
use super::bloom::{BloomBuilder, BloomKind, bloom_hash, row_col_hash};
use super::compression::{Compression, seal};
use super::fetch::{BlockAddr, FileId};
use super::footer::{BlockHandle, FORMAT_VERSION, Footer};
use super::meta::FileMeta;
use super::varint::put_varint;
use crate::cell::{Cell, KeyRef};
use bytes::Bytes;
use serde::Deserialize;
use std::cmp::Ordering;
use std::future::Future;

/// Knobs of the SST writer. The defaults suit most families.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SstWriterOptions {
    /// Target size of a data block before compression, in bytes (default 64 KiB).
    /// A block is cut once it reaches this size, so one cell larger than the
    /// target makes a block of its own.
    pub block_size: usize,
    /// A full key is stored every this many entries (default 16).
    pub restart_interval: usize,
    /// Data block compression (default lz4).
    pub compression: Compression,
    /// Zstandard level, 1..=19 (default 3).
    pub zstd_level: i32,
    /// What the bloom filter indexes (default row).
    pub bloom: BloomKind,
    /// Bloom bits per key, 1..=32 (default 10, about 1% false positives).
    pub bloom_bits_per_key: u32,
    /// Size at which the block index is split into leaves under a root
    /// (a two-level index), in bytes (default 64 KiB).
    pub index_block_size: usize,
}

impl Default for SstWriterOptions {
    fn default() -> Self {
        SstWriterOptions {
            block_size: 64 * 1024,
            restart_interval: 16,
            compression: Compression::Lz4,
            zstd_level: 3,
            bloom: BloomKind::Row,
            bloom_bits_per_key: 10,
            index_block_size: 64 * 1024,
        }
    }
}

impl SstWriterOptions {
    /// Checks every option's range.
    pub fn validate(&self) -> Result<(), SstError> {
        let bad = |name, reason: String| Err(SstError::InvalidOption { name, reason });
        if !(256..=64 * 1024 * 1024).contains(&self.block_size) {
            return bad(
                "block_size",
                format!("{} is outside 256 B..=64 MiB", self.block_size),
            );
        }
        if !(1..=1024).contains(&self.restart_interval) {
            return bad(
                "restart_interval",
                format!("{} is outside 1..=1024", self.restart_interval),
            );
        }
        if !(1..=19).contains(&self.zstd_level) {
            return bad(
                "zstd_level",
                format!("{} is outside 1..=19", self.zstd_level),
            );
        }
        if !(1..=32).contains(&self.bloom_bits_per_key) {
            return bad(
                "bloom_bits_per_key",
                format!("{} is outside 1..=32", self.bloom_bits_per_key),
            );
        }
        if !(256..=64 * 1024 * 1024).contains(&self.index_block_size) {
            return bad(
                "index_block_size",
                format!("{} is outside 256 B..=64 MiB", self.index_block_size),
            );
        }
        Ok(())
    }
}

/// Where a writer's bytes go, in order.
pub trait SstSink: Send {
    /// Appends bytes to the file.
    fn write(&mut self, data: Bytes) -> impl Future<Output = Result<(), SstError>> + Send;
    /// Makes the file complete and visible.
    fn finish(self) -> impl Future<Output = Result<(), SstError>> + Send;
    /// Discards everything written.
    fn abort(self) -> impl Future<Output = Result<(), SstError>> + Send;
}

/// An in-memory sink: the file is the vector.
impl SstSink for Vec<u8> {
    async fn write(&mut self, data: Bytes) -> Result<(), SstError> {
        self.extend_from_slice(&data);
        Ok(())
    }

    async fn finish(self) -> Result<(), SstError> {
        Ok(())
    }

    async fn abort(self) -> Result<(), SstError> {
        Ok(())
    }
}

/// An in-memory sink writing into a borrowed vector.
impl SstSink for &mut Vec<u8> {
    async fn write(&mut self, data: Bytes) -> Result<(), SstError> {
        self.extend_from_slice(&data);
        Ok(())
    }

    async fn finish(self) -> Result<(), SstError> {
        Ok(())
    }

    async fn abort(self) -> Result<(), SstError> {
        self.clear();
        Ok(())
    }
}

/// What a finished file is.
#[derive(Debug, Clone)]
pub struct SstSummary {
    /// The file's id.
    pub id: FileId,
    /// Total bytes.
    pub size: u64,
    /// Its meta block.
    pub meta: FileMeta,
    /// Index levels (1 or 2).
    pub index_levels: u8,
}

/// Called with each data block as it is written: its address, the raw
/// (decoded) block and the frame as stored. This is how flush output enters
/// the block cache while it is written (cache-on-write).
pub type BlockObserver = Box<dyn FnMut(BlockAddr, &Bytes, &Bytes) + Send>;

/// Writes one SST from cells added in order.
pub struct SstWriter<S: SstSink> {
    id: FileId,
    observer: Option<BlockObserver>,
    path: String,
    family: Bytes,
    options: SstWriterOptions,
    sink: S,
    offset: u64,
    block: BlockBuilder,
    index: Vec<(Vec<u8>, BlockHandle)>,
    bloom: Option<BloomBuilder>,
    key_buf: Vec<u8>,
    first_key: Option<Vec<u8>>,
    last_key: Vec<u8>,
    min_ts: i64,
    max_ts: i64,
    max_seq: u64,
    cells: u64,
    deletes: u64,
    raw_data_bytes: u64,
}

impl<S: SstSink> SstWriter<S> {
    /// A writer of file `id` (named `path` in errors) holding cells of `family`.
    pub fn new(
        id: FileId,
        path: impl Into<String>,
        family: impl Into<Bytes>,
        options: SstWriterOptions,
        sink: S,
    ) -> Result<SstWriter<S>, SstError> {
        options.validate()?;
        let bloom = (options.bloom != BloomKind::None)
            .then(|| BloomBuilder::new(options.bloom, options.bloom_bits_per_key));
        Ok(SstWriter {
            id,
            observer: None,
            path: path.into(),
            family: family.into(),
            block: BlockBuilder::new(options.restart_interval),
            options,
            sink,
            offset: 0,
            index: Vec::new(),
            bloom,
            key_buf: Vec::new(),
            first_key: None,
            last_key: Vec::new(),
            min_ts: i64::MAX,
            max_ts: i64::MIN,
            max_seq: 0,
            cells: 0,
            deletes: 0,
            raw_data_bytes: 0,
        })
    }

    /// Calls `observer` with every data block written from now on.
    pub fn set_block_observer(&mut self, observer: BlockObserver) {
        self.observer = Some(observer);
    }

    /// Cells added so far.
    pub fn cell_count(&self) -> u64 {
        self.cells
    }

    /// Bytes handed to the sink so far (the file size if finished now, minus the tail).
    pub fn bytes_written(&self) -> u64 {
        self.offset
    }

    /// Adds the next cell; it must sort after every cell added before.
    pub async fn add(&mut self, cell: &Cell) -> Result<(), SstError> {
        if cell.family != self.family {
            return Err(SstError::WrongFamily {
                file: self.path.clone(),
                expected: String::from_utf8_lossy(&self.family).into_owned(),
                found: String::from_utf8_lossy(&cell.family).into_owned(),
            });
        }
        let cell_err = |source| SstError::Cell {
            file: self.path.clone(),
            source,
        };
        cell.validate().map_err(cell_err)?;
        self.key_buf.clear();
        cell.key()
            .encode_into(&mut self.key_buf)
            .map_err(cell_err)?;
        let (new_row, new_column) = if self.first_key.is_none() {
            (true, true)
        } else {
            let prev = KeyRef::decode(&self.last_key).map_err(cell_err)?;
            if prev.cmp(&cell.key()) != Ordering::Less {
                return Err(SstError::OutOfOrder {
                    file: self.path.clone(),
                    detail: format!("{:?} is not after {:?}", cell.key(), prev),
                });
            }
            let new_row = prev.row != &cell.row[..];
            (new_row, new_row || prev.qualifier != &cell.qualifier[..])
        };
        if let Some(bloom) = &mut self.bloom {
            match self.options.bloom {
                BloomKind::Row if new_row => bloom.add_hash(bloom_hash(&cell.row)),
                BloomKind::RowCol if new_column => {
                    bloom.add_hash(row_col_hash(&cell.row, &cell.qualifier))
                }
                _ => {}
            }
        }
        if !self.block.is_empty() && self.block.estimated_len() >= self.options.block_size {
            self.flush_block().await?;
        }
        self.block.add(&self.key_buf, &cell.value);
        if self.first_key.is_none() {
            self.first_key = Some(self.key_buf.clone());
        }
        std::mem::swap(&mut self.last_key, &mut self.key_buf);
        self.min_ts = self.min_ts.min(cell.timestamp);
        self.max_ts = self.max_ts.max(cell.timestamp);
        self.max_seq = self.max_seq.max(cell.seq);
        self.cells += 1;
        if cell.kind.is_delete() {
            self.deletes += 1;
        }
        Ok(())
    }

    async fn write_frame(&mut self, frame: Vec<u8>) -> Result<BlockHandle, SstError> {
        let handle = BlockHandle {
            offset: self.offset,
            len: frame.len() as u64,
        };
        self.offset += frame.len() as u64;
        self.sink.write(Bytes::from(frame)).await?;
        Ok(handle)
    }

    async fn flush_block(&mut self) -> Result<(), SstError> {
        let last_key = self.block.last_key().to_vec();
        let raw = self.block.finish();
        self.raw_data_bytes += raw.len() as u64;
        let frame = Bytes::from(seal(
            &raw,
            self.options.compression,
            self.options.zstd_level,
        ));
        let handle = BlockHandle {
            offset: self.offset,
            len: frame.len() as u64,
        };
        if let Some(observer) = &mut self.observer {
            let addr = BlockAddr {
                file: self.id,
                offset: handle.offset,
                len: handle.len,
            };
            observer(addr, &Bytes::from(raw), &frame);
        }
        self.offset += handle.len;
        self.sink.write(frame).await?;
        self.index.push((last_key, handle));
        Ok(())
    }

    /// Writes the tail and footer and completes the file. A writer that saw no
    /// cells aborts its sink and returns [`SstError::Empty`].
    pub async fn finish(mut self) -> Result<SstSummary, SstError> {
        let Some(first_key) = self.first_key.take() else {
            self.sink.abort().await?;
            return Err(SstError::Empty { file: self.path });
        };
        if !self.block.is_empty() {
            self.flush_block().await?;
        }
        let stored_data_bytes = self.offset;
        let tail_offset = self.offset;

        let bloom = match self.bloom.take() {
            Some(b) if !b.is_empty() => Some(
                self.write_frame(seal(&b.finish(), Compression::None, 0))
                    .await?,
            ),
            _ => None,
        };

        // Index: one block if small enough, else leaves of index_block_size under a root.
        let restart = self.options.restart_interval;
        let entries = std::mem::take(&mut self.index);
        let data_block_count = entries.len() as u64;
        let single = build_index_block(&entries, restart);
        let (index, index_levels) = if single.len() <= self.options.index_block_size {
            (
                self.write_frame(seal(&single, Compression::None, 0))
                    .await?,
                1,
            )
        } else {
            drop(single);
            let mut leaves = Vec::new();
            let mut leaf = BlockBuilder::new(restart);
            let mut value = Vec::with_capacity(20);
            for (i, (key, handle)) in entries.iter().enumerate() {
                value.clear();
                put_varint(&mut value, handle.offset);
                put_varint(&mut value, handle.len);
                leaf.add(key, &value);
                if leaf.estimated_len() >= self.options.index_block_size || i + 1 == entries.len() {
                    let last = leaf.last_key().to_vec();
                    let frame = seal(&leaf.finish(), Compression::None, 0);
                    leaves.push((last, self.write_frame(frame).await?));
                }
            }
            let root = build_index_block(&leaves, restart);
            (
                self.write_frame(seal(&root, Compression::None, 0)).await?,
                2,
            )
        };

        let cell_err = |source| SstError::Cell {
            file: self.path.clone(),
            source,
        };
        let first = KeyRef::decode(&first_key).map_err(cell_err)?.to_owned_key();
        let last = KeyRef::decode(&self.last_key)
            .map_err(cell_err)?
            .to_owned_key();
        let meta = FileMeta {
            format_version: FORMAT_VERSION,
            family: self.family.clone(),
            first_key: first,
            last_key: last,
            min_timestamp: self.min_ts,
            max_timestamp: self.max_ts,
            max_seq: self.max_seq,
            cell_count: self.cells,
            delete_count: self.deletes,
            data_block_count,
            raw_data_bytes: self.raw_data_bytes,
            stored_data_bytes,
            compression: self.options.compression,
        };
        let meta_body = meta.encode().map_err(cell_err)?;
        let meta_handle = self
            .write_frame(seal(&meta_body, Compression::None, 0))
            .await?;
        let footer = Footer {
            tail_offset,
            index,
            bloom,
            meta: meta_handle,
            index_levels,
            format_version: FORMAT_VERSION,
        };
        self.offset += super::footer::FOOTER_LEN as u64;
        self.sink
            .write(Bytes::copy_from_slice(&footer.encode()))
            .await?;
        self.sink.finish().await?;
        Ok(SstSummary {
            id: self.id,
            size: self.offset,
            meta,
            index_levels,
        })
    }

    /// Abandons the file, discarding what was written.
    pub async fn abort(self) -> Result<(), SstError> {
        self.sink.abort().await
    }
}

fn build_index_block(entries: &[(Vec<u8>, BlockHandle)], restart_interval: usize) -> Vec<u8> {
    let mut b = BlockBuilder::new(restart_interval);
    let mut value = Vec::with_capacity(20);
    for (key, handle) in entries {
        value.clear();
        put_varint(&mut value, handle.offset);
        put_varint(&mut value, handle.len);
        b.add(key, &value);
    }
    b.finish()
}
