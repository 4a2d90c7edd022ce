//! Opening an HFile (trailer, then the load-on-open section: data index root, meta index
//! root, file info, bloom metadata) and iterating its cells block by block.

use crate::block::{Block, BlockHeader, BlockReader, BlockType};
use crate::compression::Compression;
use crate::encoding::{self, CellFormat, DataBlockEncoding, DecodeError};
use crate::error::{ErrorKind, HFileError};
use crate::file_info::{self, FileInfo};
use crate::index::{self, IndexEntry};
use crate::kv::{HCell, Key, parse_key};
use crate::source::ReadAt;
use crate::trailer::{Trailer, read_trailer};
use std::cmp::Ordering;

/// More index levels than any real file has (HBase splits a level at 128 KiB of keys).
const MAX_INDEX_LEVELS: u32 = 16;

/// An open HFile: trailer and load-on-open section read, data blocks read on demand.
pub struct HFile<S> {
    source: S,
    name: String,
    trailer: Trailer,
    file_info: FileInfo,
    encoding: DataBlockEncoding,
    format: CellFormat,
    root_index: Vec<IndexEntry>,
    meta_index: Vec<IndexEntry>,
    /// Types of the load-on-open blocks after the file info (bloom metadata).
    trailing_blocks: Vec<BlockType>,
}

impl<S: ReadAt> HFile<S> {
    /// Reads the trailer and the load-on-open section of `source`; `name` appears in
    /// every error.
    pub fn open(source: S, name: &str) -> Result<Self, HFileError> {
        let trailer = read_trailer(&source, name)?;
        check_trailer(&trailer, source.len(), name)?;
        let mut file = HFile {
            source,
            name: name.to_owned(),
            trailer,
            file_info: FileInfo::default(),
            encoding: DataBlockEncoding::None,
            format: CellFormat::default(),
            root_index: Vec::new(),
            meta_index: Vec::new(),
            trailing_blocks: Vec::new(),
        };
        file.load_on_open()?;
        Ok(file)
    }

    fn err(&self, offset: u64, kind: ErrorKind) -> HFileError {
        HFileError::new(&self.name, offset, kind)
    }

    fn blocks(&self, end: u64) -> BlockReader<'_, S> {
        BlockReader {
            source: &self.source,
            file: &self.name,
            has_checksums: self.trailer.has_checksums(),
            compression: self.trailer.compression,
            end,
        }
    }

    fn load_on_open(&mut self) -> Result<(), HFileError> {
        let t = &self.trailer;
        let reader = self.blocks(t.trailer_offset);
        let root = reader.read_expecting(t.load_on_open_offset, BlockType::RootIndex)?;
        let multi_level = t.num_data_index_levels > 1;
        let root_index = index::parse_root_block(&root.data, t.data_index_count, multi_level)
            .map_err(|e| self.err(root.offset, ErrorKind::Corrupt(format!("data index: {e}"))))?;
        let meta = reader.read_expecting(next_offset(&root), BlockType::RootIndex)?;
        let meta_index = index::parse_root_block(&meta.data, t.meta_index_count, false)
            .map_err(|e| self.err(meta.offset, ErrorKind::Corrupt(format!("meta index: {e}"))))?;
        let info = reader.read_expecting(next_offset(&meta), BlockType::FileInfo)?;
        let file_info = file_info::parse(&info.data)
            .map_err(|e| self.err(info.offset, ErrorKind::Corrupt(format!("file info: {e}"))))?;
        let mut trailing = Vec::new();
        let mut offset = next_offset(&info);
        while offset < t.trailer_offset {
            let b = reader.read(offset)?;
            trailing.push(b.header.block_type);
            offset = next_offset(&b);
        }
        let encoding = file_info
            .data_block_encoding()
            .map_err(|name| self.err(info.offset, ErrorKind::UnknownEncodingName(name)))?;
        self.format = file_info.cell_format();
        self.encoding = encoding;
        self.file_info = file_info;
        self.root_index = root_index;
        self.meta_index = meta_index;
        self.trailing_blocks = trailing;
        Ok(())
    }

    /// The name given at open.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn trailer(&self) -> &Trailer {
        &self.trailer
    }

    pub fn file_info(&self) -> &FileInfo {
        &self.file_info
    }

    /// The data block encoding the file info names.
    pub fn encoding(&self) -> DataBlockEncoding {
        self.encoding
    }

    pub fn compression(&self) -> Compression {
        self.trailer.compression
    }

    /// Whether cells carry tags and MVCC.
    pub fn cell_format(&self) -> CellFormat {
        self.format
    }

    /// Root level of the data index.
    pub fn root_index(&self) -> &[IndexEntry] {
        &self.root_index
    }

    /// The meta block index (names of meta blocks).
    pub fn meta_index(&self) -> &[IndexEntry] {
        &self.meta_index
    }

    /// True if a general (row or row+column) bloom filter's metadata is present.
    pub fn has_general_bloom(&self) -> bool {
        self.trailing_blocks.contains(&BlockType::GeneralBloomMeta)
    }

    /// True if a delete-family bloom filter's metadata is present.
    pub fn has_delete_family_bloom(&self) -> bool {
        self.trailing_blocks
            .contains(&BlockType::DeleteFamilyBloomMeta)
    }

    /// The first cell's key: the first key of the root data index, which HBase writes
    /// unshortened for the first block.
    pub fn first_key(&self) -> Option<Result<Key, HFileError>> {
        let e = self.root_index.first()?;
        Some(parse_key(&e.key).map_err(|m| {
            self.err(
                self.trailer.load_on_open_offset,
                ErrorKind::Corrupt(format!("first index key: {m}")),
            )
        }))
    }

    /// The last cell's key, from the file info's `hfile.LASTKEY`.
    pub fn last_key(&self) -> Option<Result<Key, HFileError>> {
        let k = self.file_info.last_key()?;
        Some(parse_key(k).map_err(|m| {
            self.err(
                self.trailer.load_on_open_offset,
                ErrorKind::Corrupt(format!("last key: {m}")),
            )
        }))
    }

    /// Every data block the index lists, in order, walking all index levels.
    pub fn data_block_offsets(&self) -> Result<Vec<IndexEntry>, HFileError> {
        if let Some(name) = self
            .file_info
            .get(file_info::INDEX_BLOCK_ENCODING)
            .filter(|n| n.as_ref() != b"NONE")
        {
            return Err(self.err(
                self.trailer.load_on_open_offset,
                ErrorKind::Unsupported(format!(
                    "index block encoding {}",
                    String::from_utf8_lossy(name)
                )),
            ));
        }
        let mut level = self.root_index.clone();
        self.check_ascending(&level)?;
        let reader = self.blocks(self.trailer.load_on_open_offset);
        for depth in 1..self.trailer.num_data_index_levels {
            let wanted = if depth + 1 == self.trailer.num_data_index_levels {
                BlockType::LeafIndex
            } else {
                BlockType::IntermediateIndex
            };
            let mut next = Vec::new();
            for e in &level {
                let b = reader.read_expecting(e.offset, wanted)?;
                check_size(&b, e, &self.name)?;
                let entries = index::parse_non_root(&b.data)
                    .map_err(|m| self.err(b.offset, ErrorKind::Corrupt(format!("index: {m}"))))?;
                next.extend(entries);
            }
            self.check_ascending(&next)?;
            level = next;
        }
        Ok(level)
    }

    /// Index entries must name blocks in file order without overlap (which also bounds
    /// each level by the file's size, whatever the index claims).
    fn check_ascending(&self, entries: &[IndexEntry]) -> Result<(), HFileError> {
        for pair in entries.windows(2) {
            let end = pair[0]
                .offset
                .saturating_add(u64::from(pair[0].on_disk_size));
            if end > pair[1].offset {
                return Err(self.err(
                    pair[1].offset,
                    ErrorKind::Corrupt(format!(
                        "index entry for block {} overlaps or precedes the one before",
                        pair[1].offset
                    )),
                ));
            }
        }
        Ok(())
    }

    /// The header of the block at `offset` (the whole block is read and its checksums
    /// verified).
    pub fn block_header(&self, offset: u64) -> Result<BlockHeader, HFileError> {
        Ok(self
            .blocks(self.trailer.trailer_offset)
            .read(offset)?
            .header)
    }

    /// Counts the data blocks by walking the blocks from the first data block to the
    /// last (without decoding them).
    pub fn data_block_count(&self) -> Result<usize, HFileError> {
        let t = &self.trailer;
        if t.data_index_count == 0 {
            return Ok(0);
        }
        let reader = self.blocks(t.load_on_open_offset);
        let (mut offset, mut n) = (t.first_data_block_offset, 0);
        while offset <= t.last_data_block_offset {
            let b = reader.read(offset)?;
            n += usize::from(b.header.block_type.is_data());
            offset = next_offset(&b);
        }
        Ok(n)
    }

    /// All cells in file order, one data block in memory at a time.
    pub fn cells(&self) -> Cells<'_, S> {
        let t = &self.trailer;
        Cells {
            file: self,
            next_offset: t.first_data_block_offset,
            block_offset: t.first_data_block_offset,
            done: false,
            pending: Vec::new().into_iter(),
            prev: None,
            count: 0,
        }
    }
}

fn next_offset(b: &Block) -> u64 {
    b.offset + b.header.on_disk_len() as u64
}

fn check_size(b: &Block, e: &IndexEntry, file: &str) -> Result<(), HFileError> {
    if b.header.on_disk_len() as u64 != u64::from(e.on_disk_size) {
        return Err(HFileError::new(
            file,
            b.offset,
            ErrorKind::Corrupt(format!(
                "index says the block is {} bytes, its header says {}",
                e.on_disk_size,
                b.header.on_disk_len()
            )),
        ));
    }
    Ok(())
}

/// Refuses what cannot be read before touching any block.
fn check_trailer(t: &Trailer, file_len: u64, name: &str) -> Result<(), HFileError> {
    let at = |kind| HFileError::new(name, t.trailer_offset, kind);
    if t.encrypted {
        return Err(at(ErrorKind::Unsupported("encrypted HFiles".into())));
    }
    if !t.compression.is_supported() {
        return Err(at(ErrorKind::UnsupportedCompression(t.compression.name())));
    }
    if t.load_on_open_offset >= t.trailer_offset {
        return Err(at(ErrorKind::Corrupt(format!(
            "load-on-open offset {} is not before the trailer",
            t.load_on_open_offset
        ))));
    }
    if !(1..=MAX_INDEX_LEVELS).contains(&t.num_data_index_levels) {
        return Err(at(ErrorKind::Corrupt(format!(
            "{} data index levels",
            t.num_data_index_levels
        ))));
    }
    debug_assert!(t.trailer_offset <= file_len);
    Ok(())
}

/// Iterator over an HFile's cells; see [`HFile::cells`]. After an error it ends.
pub struct Cells<'a, S> {
    file: &'a HFile<S>,
    next_offset: u64,
    /// Offset of the block the pending cells came from.
    block_offset: u64,
    done: bool,
    pending: std::vec::IntoIter<HCell>,
    prev: Option<HCell>,
    count: u64,
}

impl<S: ReadAt> Cells<'_, S> {
    /// Decodes the next data block, skipping inline index and bloom blocks; `None` after
    /// the last data block.
    fn next_block(&mut self) -> Result<Option<Vec<HCell>>, HFileError> {
        let t = &self.file.trailer;
        if t.data_index_count == 0 {
            // No data blocks (HBase leaves the first data block offset unset); the
            // entry count is still checked.
            return Ok(None);
        }
        let reader = self.file.blocks(t.load_on_open_offset);
        while self.next_offset <= t.last_data_block_offset {
            let block = reader.read(self.next_offset)?;
            self.next_offset = next_offset(&block);
            if block.header.block_type.is_data() {
                self.block_offset = block.offset;
                return self.decode(&block).map(Some);
            }
        }
        Ok(None)
    }

    fn decode(&self, block: &Block) -> Result<Vec<HCell>, HFileError> {
        encoding::decode_block(block.header.block_type, &block.data, self.file.format).map_err(
            |e| {
                let kind = match e {
                    DecodeError::Overrun(m) => ErrorKind::CellOverrunsBlock(m),
                    DecodeError::Corrupt(m) => ErrorKind::Corrupt(format!("data block: {m}")),
                    DecodeError::Unsupported(m) => ErrorKind::Unsupported(m),
                    DecodeError::UnknownEncoding(id) => ErrorKind::UnknownEncodingId(id),
                };
                self.file.err(block.offset, kind)
            },
        )
    }

    fn check_order(&self, cell: &HCell) -> Result<(), HFileError> {
        let Some(prev) = &self.prev else {
            return Ok(());
        };
        if self.file.trailer.comparator.compare(prev, cell) == Ordering::Greater {
            return Err(self.file.err(
                self.block_offset,
                ErrorKind::OutOfOrder(format!(
                    "cell {} ({}) sorts before the previous cell ({})",
                    self.count,
                    describe(cell),
                    describe(prev)
                )),
            ));
        }
        Ok(())
    }

    fn check_count(&self) -> Result<(), HFileError> {
        let t = &self.file.trailer;
        if self.count != t.entry_count {
            return Err(self.file.err(
                t.trailer_offset,
                ErrorKind::Corrupt(format!(
                    "trailer counts {} cells, the data blocks hold {}",
                    t.entry_count, self.count
                )),
            ));
        }
        Ok(())
    }

    fn fail(&mut self, e: HFileError) -> Option<Result<HCell, HFileError>> {
        self.done = true;
        self.pending = Vec::new().into_iter();
        Some(Err(e))
    }
}

fn describe(c: &HCell) -> String {
    format!(
        "row {:?} family {:?} qualifier {:?} ts {} {} seq {}",
        String::from_utf8_lossy(&c.row),
        String::from_utf8_lossy(&c.family),
        String::from_utf8_lossy(&c.qualifier),
        c.timestamp,
        c.kind.name(),
        c.seq_id
    )
}

impl<S: ReadAt> Iterator for Cells<'_, S> {
    type Item = Result<HCell, HFileError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(cell) = self.pending.next() {
                if let Err(e) = self.check_order(&cell) {
                    return self.fail(e);
                }
                self.count += 1;
                self.prev = Some(cell.clone());
                return Some(Ok(cell));
            }
            if self.done {
                return None;
            }
            match self.next_block() {
                Ok(Some(cells)) => self.pending = cells.into_iter(),
                Ok(None) => {
                    self.done = true;
                    if let Err(e) = self.check_count() {
                        return Some(Err(e));
                    }
                    return None;
                }
                Err(e) => return self.fail(e),
            }
        }
    }
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
