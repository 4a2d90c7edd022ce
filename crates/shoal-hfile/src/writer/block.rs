//! Writing one block as `HFileBlock.Writer` does: the 33-byte header (magic, on-disk size
//! without header, uncompressed size without header, offset of the previous block of the
//! same type, checksum type, bytes per checksum, on-disk data size with header), the
//! compressed payload, then a CRC32C of every `bytes_per_checksum` bytes of header and
//! payload. Also keeps the output position and the previous offset of each block type.

use super::compress;
use crate::block::{BlockType, HEADER_LEN_WITH_CHECKSUM};
use crate::checksum::ChecksumType;
use crate::compression::Compression;
use std::io::Write;

/// Sizes of one written block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Written {
    pub offset: u64,
    /// Header, compressed payload and checksums.
    pub on_disk_size_with_header: u32,
    /// The payload before compression.
    pub uncompressed_size_without_header: u32,
}

impl Written {
    pub fn uncompressed_size_with_header(&self) -> u64 {
        u64::from(self.uncompressed_size_without_header) + HEADER_LEN_WITH_CHECKSUM as u64
    }
}

pub(crate) struct BlockWriter<W> {
    out: W,
    pos: u64,
    compression: Compression,
    checksum: ChecksumType,
    bytes_per_checksum: u32,
    /// Offset of the last block written of each type (a handful of types).
    prev_by_type: Vec<(BlockType, u64)>,
}

impl<W: Write> BlockWriter<W> {
    pub fn new(
        out: W,
        compression: Compression,
        checksum: ChecksumType,
        bytes_per_checksum: u32,
    ) -> Self {
        BlockWriter {
            out,
            pos: 0,
            compression,
            checksum,
            bytes_per_checksum,
            prev_by_type: Vec::new(),
        }
    }

    /// Bytes written so far: the offset of the next block.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Writes one block of `kind` holding `payload`.
    pub fn write_block(&mut self, kind: BlockType, payload: &[u8]) -> std::io::Result<Written> {
        let on_disk = compress::compress(self.compression, payload)?;
        let data_len = HEADER_LEN_WITH_CHECKSUM + on_disk.len();
        let sums_len = self
            .checksum
            .checksum_bytes(data_len, self.bytes_per_checksum as usize)
            .unwrap_or(0);
        let total = data_len + sums_len;
        let size = |n: usize, what: &str| {
            u32::try_from(n)
                .ok()
                .filter(|n| *n <= i32::MAX as u32)
                .ok_or_else(|| {
                    std::io::Error::other(format!("{what} of {n} bytes does not fit a block"))
                })
        };
        let on_disk_without_header = size(total - HEADER_LEN_WITH_CHECKSUM, "block")?;
        let uncompressed = size(payload.len(), "block payload")?;
        let prev = self
            .prev_by_type
            .iter()
            .find(|(t, _)| *t == kind)
            .map_or(-1, |&(_, o)| o as i64);
        let mut block = Vec::with_capacity(total);
        block.extend_from_slice(kind.magic());
        block.extend_from_slice(&on_disk_without_header.to_be_bytes());
        block.extend_from_slice(&uncompressed.to_be_bytes());
        block.extend_from_slice(&prev.to_be_bytes());
        block.push(self.checksum.code());
        block.extend_from_slice(&self.bytes_per_checksum.to_be_bytes());
        block.extend_from_slice(&(data_len as u32).to_be_bytes());
        block.extend_from_slice(&on_disk);
        let sums = self
            .checksum
            .compute(&block, self.bytes_per_checksum as usize);
        block.extend_from_slice(&sums);
        debug_assert_eq!(block.len(), total);
        self.out.write_all(&block)?;
        let offset = self.pos;
        self.pos += total as u64;
        match self.prev_by_type.iter_mut().find(|(t, _)| *t == kind) {
            Some(entry) => entry.1 = offset,
            None => self.prev_by_type.push((kind, offset)),
        }
        Ok(Written {
            offset,
            on_disk_size_with_header: total as u32,
            uncompressed_size_without_header: uncompressed,
        })
    }

    /// Writes bytes that are not a block (the trailer).
    pub fn write_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
