//! Writing HFiles as HBase 2.x's `HFileWriterImpl` (through `StoreFileWriter`) does:
//! HFile v3, minor version 3, data block encoding NONE, compression NONE, GZ or SNAPPY,
//! CRC32C block checksums, a data index of one or more levels, an empty meta index,
//! the file info a store file carries, and the protobuf trailer. The output is what
//! HBase's bulk load (`BulkLoadHFilesTool`) takes.
//!
//! Layout written, in order: data blocks (with inline leaf index blocks between them once
//! the index outgrows one chunk), intermediate index blocks, the root data index (the
//! load-on-open section starts here), the meta index root, the file info, the trailer.
//! Cells carry a zero tags length and their MVCC (`KEY_VALUE_VERSION` 1), as a region
//! server's flush writes them.

mod block;
mod cell;
mod compress;
mod encode;
mod file_info;
mod index;
mod trailer;

pub use cell::{CellRef, MAX_FAMILY_LEN, MAX_ROW_LEN};

use crate::block::BlockType;
use crate::checksum::ChecksumType;
use crate::compression::Compression;
use crate::kv::CellKind;
use block::BlockWriter;
use file_info::Stats;
use index::DataIndexWriter;
use std::cmp::Ordering;
use std::io::Write;
use trailer::{TRAILER_SIZE, Trailer};

/// What HBase 2.x writes for `CellComparatorImpl` (its HBase 1.x compatible name).
pub const COMPARATOR_CLASS: &str = "org.apache.hadoop.hbase.KeyValue$KVComparator";

/// Why writing failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("I/O error writing the HFile: {0}")]
    Io(#[from] std::io::Error),
    #[error("cells out of order: {0}")]
    OutOfOrder(String),
    #[error("cell cannot be stored in an HFile: {0}")]
    BadCell(String),
    #[error("the HFile writer cannot compress with {0} (it writes NONE, GZ and SNAPPY)")]
    UnsupportedCompression(&'static str),
    #[error("bad writer option: {0}")]
    BadOption(String),
}

/// How to write. [`Default`] is HBase's defaults for a store file.
#[derive(Clone, Debug)]
pub struct HFileWriterOptions {
    /// A data block is closed once its cells reach this many bytes (HBase: 64 KiB).
    pub block_size: usize,
    pub compression: Compression,
    /// CRC32C (HBase's default), CRC32 or NULL.
    pub checksum: ChecksumType,
    /// `hbase.hstore.bytes.per.checksum`: 16 KiB.
    pub bytes_per_checksum: u32,
    /// `hfile.index.block.max.size`: 128 KiB.
    pub index_block_max_size: usize,
    /// `hfile.index.block.min.entries`: 16.
    pub index_min_entries: usize,
    /// `hfile.CREATE_TIME_TS`, milliseconds since the epoch.
    pub create_time_ms: i64,
    /// `MAX_SEQ_ID_KEY`. A bulk load gives the file a sequence id of its own, so 0 fits.
    pub max_seq_id: u64,
    /// `MAJOR_COMPACTION_KEY`.
    pub major_compaction: bool,
    /// `BULKLOAD_TIMESTAMP`, as HBase's `HFileOutputFormat2` writes it.
    pub bulkload_time_ms: Option<i64>,
}

impl Default for HFileWriterOptions {
    fn default() -> Self {
        HFileWriterOptions {
            block_size: 64 * 1024,
            compression: Compression::None,
            checksum: ChecksumType::Crc32c,
            bytes_per_checksum: 16 * 1024,
            index_block_max_size: index::DEFAULT_MAX_CHUNK_SIZE,
            index_min_entries: index::DEFAULT_MIN_ENTRIES,
            create_time_ms: now_ms(),
            max_seq_id: 0,
            major_compaction: false,
            bulkload_time_ms: None,
        }
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// What [`HFileWriter::finish`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HFileSummary {
    pub cells: u64,
    pub bytes: u64,
    pub data_blocks: u64,
    pub index_levels: u32,
    /// Serialized KeyValue keys of the first and last cell (None without cells).
    pub first_key: Option<Vec<u8>>,
    pub last_key: Option<Vec<u8>>,
}

/// The key parts of a cell the writer remembers (the last one, the first of a block).
#[derive(Clone, Debug)]
struct OwnedKey {
    row: Vec<u8>,
    family: Vec<u8>,
    qualifier: Vec<u8>,
    timestamp: i64,
    kind: CellKind,
    seq_id: u64,
}

impl OwnedKey {
    fn of(c: &CellRef<'_>) -> Self {
        OwnedKey {
            row: c.row.to_vec(),
            family: c.family.to_vec(),
            qualifier: c.qualifier.to_vec(),
            timestamp: c.timestamp,
            kind: c.kind,
            seq_id: c.seq_id,
        }
    }

    fn as_ref(&self) -> CellRef<'_> {
        CellRef {
            row: &self.row,
            family: &self.family,
            qualifier: &self.qualifier,
            timestamp: self.timestamp,
            kind: self.kind,
            value: b"",
            seq_id: self.seq_id,
        }
    }
}

/// Writes one HFile to `W`; cells must come in HBase's order. Call [`HFileWriter::finish`]
/// at the end: without it the output is no HFile.
pub struct HFileWriter<W: Write> {
    blocks: BlockWriter<W>,
    options: HFileWriterOptions,
    index: DataIndexWriter,
    /// The data block being filled.
    block: Vec<u8>,
    first_in_block: Option<OwnedKey>,
    last: Option<OwnedKey>,
    last_of_previous_block: Option<OwnedKey>,
    first_key: Option<Vec<u8>>,
    first_data_block: Option<u64>,
    last_data_block: Option<u64>,
    data_blocks: u64,
    /// Uncompressed bytes with headers of the blocks HBase counts (see `finish`).
    total_uncompressed: u64,
    stats: Stats,
}

impl<W: Write> HFileWriter<W> {
    pub fn new(out: W, options: HFileWriterOptions) -> Result<Self, WriteError> {
        if !compress::can_write(options.compression) {
            return Err(WriteError::UnsupportedCompression(
                options.compression.name(),
            ));
        }
        if options.checksum != ChecksumType::Null
            && (options.bytes_per_checksum as usize) < crate::block::HEADER_LEN_WITH_CHECKSUM
        {
            return Err(WriteError::BadOption(format!(
                "bytes per checksum {} is under the block header's 33 bytes",
                options.bytes_per_checksum
            )));
        }
        if options.block_size == 0 || options.index_block_max_size == 0 {
            return Err(WriteError::BadOption(
                "block size and index block size must be positive".into(),
            ));
        }
        if options.index_min_entries < 2 {
            return Err(WriteError::BadOption(
                "index blocks need at least 2 entries".into(),
            ));
        }
        Ok(HFileWriter {
            blocks: BlockWriter::new(
                out,
                options.compression,
                options.checksum,
                options.bytes_per_checksum,
            ),
            index: DataIndexWriter::new(options.index_block_max_size, options.index_min_entries),
            options,
            block: Vec::new(),
            first_in_block: None,
            last: None,
            last_of_previous_block: None,
            first_key: None,
            first_data_block: None,
            last_data_block: None,
            data_blocks: 0,
            total_uncompressed: 0,
            stats: Stats::default(),
        })
    }

    /// Appends a Put with sequence id 0.
    pub fn put(
        &mut self,
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        timestamp: i64,
        value: &[u8],
    ) -> Result<(), WriteError> {
        self.append(&CellRef::put(row, family, qualifier, timestamp, value))
    }

    /// Appends one cell. It must not sort before the previous one (HBase's order: row,
    /// family, qualifier ascending, timestamp and type descending, then sequence id
    /// descending); a refused cell leaves the writer as it was.
    pub fn append(&mut self, cell: &CellRef<'_>) -> Result<(), WriteError> {
        check_sizes(cell)?;
        let duplicate = match &self.last {
            None => false,
            Some(last) => match cell::compare_keys(&last.as_ref(), cell) {
                Ordering::Greater => {
                    return Err(WriteError::OutOfOrder(format!(
                        "{} after {}",
                        describe(cell),
                        describe(&last.as_ref())
                    )));
                }
                Ordering::Equal if cell.seq_id > last.seq_id => {
                    return Err(WriteError::OutOfOrder(format!(
                        "{} has a higher sequence id than the same key before it ({})",
                        describe(cell),
                        last.seq_id
                    )));
                }
                Ordering::Equal => true,
                Ordering::Less => false,
            },
        };
        // As HBase: a block ends once it holds `block_size` bytes, but never between
        // cells of the same key.
        if !duplicate && self.block.len() >= self.options.block_size {
            self.finish_block()?;
        }
        let key_len = cell.key_len();
        self.block
            .extend_from_slice(&(key_len as u32).to_be_bytes());
        self.block
            .extend_from_slice(&(cell.value.len() as u32).to_be_bytes());
        self.block.extend_from_slice(&cell.key());
        self.block.extend_from_slice(cell.value);
        self.block.extend_from_slice(&0u16.to_be_bytes());
        encode::hadoop_vlong(&mut self.block, cell.seq_id as i64);
        if self.first_in_block.is_none() {
            self.first_in_block = Some(OwnedKey::of(cell));
        }
        if self.first_key.is_none() {
            self.first_key = Some(cell.key());
        }
        self.stats.add(cell, key_len);
        self.last = Some(OwnedKey::of(cell));
        Ok(())
    }

    /// Writes the data block being filled, and its index entry.
    fn finish_block(&mut self) -> Result<(), WriteError> {
        let Some(first) = self.first_in_block.take() else {
            return Ok(());
        };
        let w = self.blocks.write_block(BlockType::Data, &self.block)?;
        self.block.clear();
        self.first_data_block.get_or_insert(w.offset);
        self.last_data_block = Some(w.offset);
        self.data_blocks += 1;
        self.total_uncompressed += w.uncompressed_size_with_header();
        let key = cell::index_key(
            self.last_of_previous_block
                .as_ref()
                .map(OwnedKey::as_ref)
                .as_ref(),
            &first.as_ref(),
        );
        self.index.add_data_block(key, w);
        self.index.maybe_write_leaf(&mut self.blocks)?;
        self.last_of_previous_block = self.last.clone();
        Ok(())
    }

    /// Writes the last data block, the index, the file info and the trailer, and flushes.
    pub fn finish(mut self) -> Result<HFileSummary, WriteError> {
        self.finish_block()?;
        let index = std::mem::replace(&mut self.index, DataIndexWriter::new(1, 2));
        let summary = index.finish(&mut self.blocks)?;
        // HBase counts the leaf index blocks, the meta index and the file info in the
        // total uncompressed bytes, but not the root and intermediate data index blocks.
        self.total_uncompressed += summary.leaf_bytes_with_headers;
        let meta = self
            .blocks
            .write_block(BlockType::RootIndex, &index::empty_meta_index())?;
        self.total_uncompressed += meta.uncompressed_size_with_header();
        let last_key = self.last.as_ref().map(|k| k.as_ref().key());
        let info = file_info::encode(&self.stats, &self.options, last_key.as_deref());
        let info = self.blocks.write_block(BlockType::FileInfo, &info)?;
        self.total_uncompressed += info.uncompressed_size_with_header();
        let trailer = Trailer {
            file_info_offset: info.offset,
            load_on_open_offset: summary.root_offset,
            uncompressed_data_index_size: summary.uncompressed_size,
            total_uncompressed_bytes: self.total_uncompressed + TRAILER_SIZE as u64,
            data_index_count: summary.root_entries,
            entry_count: self.stats.cells,
            levels: summary.levels,
            first_data_block: self.first_data_block,
            last_data_block: self.last_data_block,
            compression: self.options.compression,
        };
        self.blocks.write_raw(&trailer.encode())?;
        self.blocks.flush()?;
        Ok(HFileSummary {
            cells: self.stats.cells,
            bytes: self.blocks.pos(),
            data_blocks: self.data_blocks,
            index_levels: summary.levels,
            first_key: self.first_key,
            last_key,
        })
    }
}

fn check_sizes(c: &CellRef<'_>) -> Result<(), WriteError> {
    let bad = |m: String| Err(WriteError::BadCell(format!("{m} ({})", describe(c))));
    if c.row.len() > MAX_ROW_LEN {
        return bad(format!(
            "row of {} bytes (at most {MAX_ROW_LEN})",
            c.row.len()
        ));
    }
    if c.family.len() > MAX_FAMILY_LEN {
        return bad(format!(
            "family of {} bytes (at most {MAX_FAMILY_LEN})",
            c.family.len()
        ));
    }
    if c.key_len() + c.value.len() > (i32::MAX as usize) - 64 {
        return bad("key and value over 2 GiB".into());
    }
    if c.seq_id > i64::MAX as u64 {
        return bad(format!("sequence id {} over 2^63", c.seq_id));
    }
    Ok(())
}

fn describe(c: &CellRef<'_>) -> String {
    format!(
        "row {:?} family {:?} qualifier {:?} ts {} {} seq {}",
        String::from_utf8_lossy(&c.row[..c.row.len().min(64)]),
        String::from_utf8_lossy(c.family),
        String::from_utf8_lossy(&c.qualifier[..c.qualifier.len().min(64)]),
        c.timestamp,
        c.kind.name(),
        c.seq_id
    )
}

#[cfg(test)]
mod tests;
