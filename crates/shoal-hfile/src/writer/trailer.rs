//! The fixed file trailer the writer ends a file with (HBase's `FixedFileTrailer` for
//! v3): `TRABLK"$`, the length-delimited `FileTrailerProto` (no `PBUF` prefix), zero
//! padding, and `minor << 24 | major` in the last 4 bytes: 4096 bytes.

use super::{COMPARATOR_CLASS, encode};
use crate::compression::Compression;
use crate::trailer::TRAILER_MAGIC;

/// HFile v3 trailer size.
pub(crate) const TRAILER_SIZE: usize = 4096;
const MAJOR_VERSION: u32 = 3;
const MINOR_VERSION: u32 = 3;

/// The trailer fields the writer sets.
pub(crate) struct Trailer {
    pub file_info_offset: u64,
    pub load_on_open_offset: u64,
    pub uncompressed_data_index_size: u64,
    pub total_uncompressed_bytes: u64,
    pub data_index_count: u32,
    pub entry_count: u64,
    pub levels: u32,
    pub first_data_block: Option<u64>,
    pub last_data_block: Option<u64>,
    pub compression: Compression,
}

impl Trailer {
    /// `TRABLK"$`, the length-delimited `FileTrailerProto` (no `PBUF` prefix), zero
    /// padding, and the version in the last 4 bytes: 4096 bytes.
    pub fn encode(&self) -> Vec<u8> {
        // HBase's UNSET (-1) as a uint64.
        let unset = |o: Option<u64>| o.unwrap_or(u64::MAX);
        let mut msg = Vec::new();
        encode::uint_field(&mut msg, 1, self.file_info_offset);
        encode::uint_field(&mut msg, 2, self.load_on_open_offset);
        encode::uint_field(&mut msg, 3, self.uncompressed_data_index_size);
        encode::uint_field(&mut msg, 4, self.total_uncompressed_bytes);
        encode::uint_field(&mut msg, 5, u64::from(self.data_index_count));
        encode::uint_field(&mut msg, 6, 0);
        encode::uint_field(&mut msg, 7, self.entry_count);
        encode::uint_field(&mut msg, 8, u64::from(self.levels));
        encode::uint_field(&mut msg, 9, unset(self.first_data_block));
        encode::uint_field(&mut msg, 10, unset(self.last_data_block));
        encode::bytes_field(&mut msg, 11, COMPARATOR_CLASS.as_bytes());
        encode::uint_field(&mut msg, 12, u64::from(self.compression.ordinal()));
        let mut out = Vec::with_capacity(TRAILER_SIZE);
        out.extend_from_slice(TRAILER_MAGIC);
        encode::varint(&mut out, msg.len() as u64);
        out.extend_from_slice(&msg);
        out.resize(TRAILER_SIZE - 4, 0);
        out.extend_from_slice(&((MINOR_VERSION << 24) | MAJOR_VERSION).to_be_bytes());
        out
    }
}
