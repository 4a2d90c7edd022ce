//! One HFile block read from the file: header parsed, checksums verified, payload
//! decompressed. A block is `[header][on-disk data][checksums]`; the header is
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic naming the block type (`DATABLK*`, `DATABLKE`, `IDXLEAF2`, …) |
//! | 4 | on-disk size without header (data plus checksums) |
//! | 4 | uncompressed size without header (and without checksums) |
//! | 8 | offset of the previous block of the same type |
//! | 1 | checksum type (minor version ≥ 1 only) |
//! | 4 | bytes per checksum chunk (minor version ≥ 1 only) |
//! | 4 | on-disk data size including header, excluding checksums (minor version ≥ 1 only) |
//!
//! so 33 bytes with checksums, 24 without (minor version 0).

use crate::checksum::ChecksumType;
use crate::compression::{Compression, DecompressError};
use crate::cursor::Cursor;
use crate::error::{At, ErrorKind, HFileError};
use crate::source::ReadAt;
use bytes::Bytes;

pub(crate) const HEADER_LEN_WITH_CHECKSUM: usize = 33;
pub(crate) const HEADER_LEN_NO_CHECKSUM: usize = 24;

/// The kinds of block, by their 8-byte magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockType {
    Data,
    EncodedData,
    LeafIndex,
    BloomChunk,
    Meta,
    IntermediateIndex,
    RootIndex,
    FileInfo,
    GeneralBloomMeta,
    DeleteFamilyBloomMeta,
    Trailer,
    IndexV1,
}

const MAGICS: [(BlockType, &[u8; 8]); 12] = [
    (BlockType::Data, b"DATABLK*"),
    (BlockType::EncodedData, b"DATABLKE"),
    (BlockType::LeafIndex, b"IDXLEAF2"),
    (BlockType::BloomChunk, b"BLMFBLK2"),
    (BlockType::Meta, b"METABLKc"),
    (BlockType::IntermediateIndex, b"IDXINTE2"),
    (BlockType::RootIndex, b"IDXROOT2"),
    (BlockType::FileInfo, b"FILEINF2"),
    (BlockType::GeneralBloomMeta, b"BLMFMET2"),
    (BlockType::DeleteFamilyBloomMeta, b"DFBLMET2"),
    (BlockType::Trailer, b"TRABLK\"$"),
    (BlockType::IndexV1, b"IDXBLK)+"),
];

impl BlockType {
    pub fn from_magic(magic: &[u8]) -> Option<BlockType> {
        MAGICS
            .iter()
            .find(|(_, m)| m.as_slice() == magic)
            .map(|(t, _)| *t)
    }

    pub fn magic(self) -> &'static [u8; 8] {
        MAGICS
            .iter()
            .find(|(t, _)| *t == self)
            .map_or(b"????????", |(_, m)| *m)
    }

    pub fn is_data(self) -> bool {
        matches!(self, BlockType::Data | BlockType::EncodedData)
    }

    fn name(self) -> String {
        String::from_utf8_lossy(self.magic()).into_owned()
    }
}

/// A parsed block header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    pub block_type: BlockType,
    pub on_disk_size_without_header: usize,
    pub uncompressed_size_without_header: usize,
    pub prev_block_offset: i64,
    pub checksum_type: ChecksumType,
    pub bytes_per_checksum: usize,
    /// Header plus on-disk data, without checksums.
    pub on_disk_data_size_with_header: usize,
    pub header_len: usize,
}

impl BlockHeader {
    /// Header, data and checksums: the block's whole length in the file.
    pub fn on_disk_len(&self) -> usize {
        self.header_len + self.on_disk_size_without_header
    }
}

/// A block with its payload unpacked: decompressed, header and checksums removed.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    pub offset: u64,
    pub header: BlockHeader,
    pub data: Bytes,
}

/// What every block read needs to know about the file.
pub(crate) struct BlockReader<'a, S: ?Sized> {
    pub source: &'a S,
    pub file: &'a str,
    pub has_checksums: bool,
    pub compression: Compression,
    /// Blocks must end at or before this offset (the trailer's).
    pub end: u64,
}

impl<S: ReadAt + ?Sized> BlockReader<'_, S> {
    fn header_len(&self) -> usize {
        if self.has_checksums {
            HEADER_LEN_WITH_CHECKSUM
        } else {
            HEADER_LEN_NO_CHECKSUM
        }
    }

    /// Reads, verifies and unpacks the block at `offset`.
    pub fn read(&self, offset: u64) -> Result<Block, HFileError> {
        let at = At {
            file: self.file,
            offset,
        };
        let header_bytes = self.read_bytes(offset, self.header_len(), at)?;
        let header = parse_header(&header_bytes, self.has_checksums, at)?;
        let mut whole = header_bytes;
        let rest = self.read_bytes(
            offset + whole.len() as u64,
            header.on_disk_size_without_header,
            at,
        )?;
        whole.extend_from_slice(&rest);
        self.verify_checksums(&header, &whole, at)?;
        let on_disk = &whole[header.header_len..header.on_disk_data_size_with_header];
        let data = self.unpack(&header, on_disk, at)?;
        Ok(Block {
            offset,
            header,
            data: Bytes::from(data),
        })
    }

    /// Reads the block at `offset` and checks it has type `wanted`.
    pub fn read_expecting(&self, offset: u64, wanted: BlockType) -> Result<Block, HFileError> {
        let block = self.read(offset)?;
        if block.header.block_type != wanted {
            return Err(HFileError::new(
                self.file,
                offset,
                ErrorKind::UnexpectedBlockType {
                    found: block.header.block_type.name(),
                    wanted: wanted.name(),
                },
            ));
        }
        Ok(block)
    }

    fn read_bytes(&self, offset: u64, len: usize, at: At<'_>) -> Result<Vec<u8>, HFileError> {
        let fits = offset
            .checked_add(len as u64)
            .is_some_and(|end| end <= self.end);
        if !fits {
            return Err(at.truncated(format!(
                "block needs {len} bytes at offset {offset}, but block data ends at {}",
                self.end
            )));
        }
        self.source.read_at(offset, len).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                at.truncated(format!(
                    "{len} bytes at {offset} run past the end of the file"
                ))
            } else {
                at.err(ErrorKind::Io(e))
            }
        })
    }

    fn verify_checksums(
        &self,
        header: &BlockHeader,
        whole: &[u8],
        at: At<'_>,
    ) -> Result<(), HFileError> {
        if !self.has_checksums {
            return Ok(());
        }
        let (data, stored) = whole.split_at(header.on_disk_data_size_with_header);
        header
            .checksum_type
            .verify(data, stored, header.bytes_per_checksum)
            .map_err(|m| {
                at.err(ErrorKind::ChecksumMismatch {
                    block_offset: at.offset,
                    chunk: m.chunk,
                    stored: m.stored,
                    computed: m.computed,
                })
            })
    }

    fn unpack(
        &self,
        header: &BlockHeader,
        on_disk: &[u8],
        at: At<'_>,
    ) -> Result<Vec<u8>, HFileError> {
        self.compression
            .decompress(on_disk, header.uncompressed_size_without_header)
            .map_err(|e| match e {
                DecompressError::Unsupported(name) => {
                    at.err(ErrorKind::UnsupportedCompression(name))
                }
                DecompressError::Failed(codec, detail) => {
                    at.err(ErrorKind::Decompression { codec, detail })
                }
            })
    }
}

/// Parses and sanity-checks a header (`bytes` is exactly the header).
pub(crate) fn parse_header(
    bytes: &[u8],
    has_checksums: bool,
    at: At<'_>,
) -> Result<BlockHeader, HFileError> {
    let mut c = Cursor::new(bytes);
    let bad = |e: String| at.corrupt(format!("block header: {e}"));
    let magic = c.take(8, "magic").map_err(bad)?;
    let block_type = BlockType::from_magic(magic).ok_or_else(|| {
        at.err(ErrorKind::BadBlockMagic(
            String::from_utf8_lossy(magic).into_owned(),
        ))
    })?;
    let on_disk_size_without_header = c.len32("on-disk size").map_err(bad)?;
    let uncompressed_size_without_header = c.len32("uncompressed size").map_err(bad)?;
    let prev_block_offset = c.i64("previous block offset").map_err(bad)?;
    let header_len = bytes.len();
    let mut header = BlockHeader {
        block_type,
        on_disk_size_without_header,
        uncompressed_size_without_header,
        prev_block_offset,
        checksum_type: ChecksumType::Null,
        bytes_per_checksum: 0,
        on_disk_data_size_with_header: header_len + on_disk_size_without_header,
        header_len,
    };
    if has_checksums {
        let code = c.u8("checksum type").map_err(bad)?;
        header.checksum_type = ChecksumType::from_code(code)
            .ok_or_else(|| at.err(ErrorKind::UnknownChecksumType(code)))?;
        header.bytes_per_checksum = c.len32("bytes per checksum").map_err(bad)?;
        header.on_disk_data_size_with_header = c.len32("on-disk data size").map_err(bad)?;
        check_checksum_layout(&header).map_err(|e| at.corrupt(format!("block header: {e}")))?;
    }
    Ok(header)
}

/// The data must fit in the block and the checksums must exactly fill the rest.
fn check_checksum_layout(h: &BlockHeader) -> Result<(), String> {
    let total = h.on_disk_len();
    let data = h.on_disk_data_size_with_header;
    if data < h.header_len || data > total {
        return Err(format!(
            "on-disk data size {data} outside [{}, {total}]",
            h.header_len
        ));
    }
    let wanted = h
        .checksum_type
        .checksum_bytes(data, h.bytes_per_checksum)
        .ok_or_else(|| format!("{} bytes per checksum", h.bytes_per_checksum))?;
    if total - data != wanted {
        return Err(format!(
            "{} checksum bytes where {wanted} are needed",
            total - data
        ));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod build {
    //! Block bytes for hand-built test files.
    use super::*;
    use crate::compression::framing;

    /// A block with HBase checksums (CRC32C, 512-byte chunks) around `payload`.
    pub fn block(kind: BlockType, payload: &[u8], codec: Compression) -> Vec<u8> {
        block_with(kind, payload, codec, true)
    }

    /// A block with a 33-byte header and checksums, or (minor version 0) a 24-byte header
    /// and none.
    pub fn block_with(
        kind: BlockType,
        payload: &[u8],
        codec: Compression,
        checksums: bool,
    ) -> Vec<u8> {
        let on_disk = framing::compress(codec, payload, 1000);
        if !checksums {
            let mut out = kind.magic().to_vec();
            out.extend_from_slice(&(on_disk.len() as u32).to_be_bytes());
            out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            out.extend_from_slice(&(-1i64).to_be_bytes());
            out.extend_from_slice(&on_disk);
            return out;
        }
        let data_len = HEADER_LEN_WITH_CHECKSUM + on_disk.len();
        let sums = data_len.div_ceil(512) * 4;
        let mut out = kind.magic().to_vec();
        out.extend_from_slice(&((on_disk.len() + sums) as u32).to_be_bytes());
        out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        out.extend_from_slice(&(-1i64).to_be_bytes());
        out.push(ChecksumType::Crc32c.code());
        out.extend_from_slice(&512u32.to_be_bytes());
        out.extend_from_slice(&(data_len as u32).to_be_bytes());
        out.extend_from_slice(&on_disk);
        let sums = ChecksumType::Crc32c.compute(&out, 512);
        out.extend_from_slice(&sums);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(bytes: &[u8], codec: Compression) -> BlockReader<'_, [u8]> {
        BlockReader {
            source: bytes,
            file: "b",
            has_checksums: true,
            compression: codec,
            end: bytes.len() as u64,
        }
    }

    #[test]
    fn reads_a_block_back() {
        let payload: Vec<u8> = (0..3000u32).map(|i| (i % 13) as u8).collect();
        for codec in [Compression::None, Compression::Gz, Compression::Snappy] {
            let bytes = build::block(BlockType::Data, &payload, codec);
            let b = reader(&bytes, codec).read(0).expect("block");
            assert_eq!(b.header.block_type, BlockType::Data);
            assert_eq!(b.data.as_ref(), payload.as_slice());
            assert_eq!(b.header.on_disk_len(), bytes.len());
        }
    }

    #[test]
    fn flipped_byte_is_a_checksum_error() {
        let payload = vec![7u8; 2000];
        let bytes = build::block(BlockType::Data, &payload, Compression::None);
        for i in [40, 600, 1500] {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            let e = reader(&bad, Compression::None).read(0).expect_err("flip");
            assert!(matches!(e.kind, ErrorKind::ChecksumMismatch { .. }), "{e}");
        }
    }

    #[test]
    fn truncation_and_bad_magic() {
        let bytes = build::block(BlockType::Data, &[1, 2, 3], Compression::None);
        for n in 0..bytes.len() {
            let e = reader(&bytes[..n], Compression::None)
                .read(0)
                .expect_err("short");
            assert!(matches!(e.kind, ErrorKind::Truncated(_)), "{n}: {e}");
        }
        let mut bad = bytes.clone();
        bad[0] = b'X';
        let e = reader(&bad, Compression::None).read(0).expect_err("magic");
        assert!(matches!(e.kind, ErrorKind::BadBlockMagic(_)), "{e}");
    }
}
