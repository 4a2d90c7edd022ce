//! HBase's per-block checksums: the header and on-disk data of a block are cut into
//! chunks of `bytes_per_checksum` bytes, and a 4-byte big-endian checksum of each chunk
//! follows the data, in order. Types: NULL (no checksums), CRC32, CRC32C.

/// The checksum algorithm a block header names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChecksumType {
    Null,
    Crc32,
    Crc32c,
}

/// The first chunk whose stored checksum differs from the computed one.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Mismatch {
    pub chunk: usize,
    pub stored: u32,
    pub computed: u32,
}

impl ChecksumType {
    pub fn from_code(code: u8) -> Option<ChecksumType> {
        match code {
            0 => Some(ChecksumType::Null),
            1 => Some(ChecksumType::Crc32),
            2 => Some(ChecksumType::Crc32c),
            _ => None,
        }
    }

    pub fn code(self) -> u8 {
        match self {
            ChecksumType::Null => 0,
            ChecksumType::Crc32 => 1,
            ChecksumType::Crc32c => 2,
        }
    }

    fn of(self, chunk: &[u8]) -> u32 {
        match self {
            ChecksumType::Null => 0,
            ChecksumType::Crc32 => crc32fast::hash(chunk),
            ChecksumType::Crc32c => crc32c::crc32c(chunk),
        }
    }

    /// Bytes of checksums that follow `data_len` bytes of header and data.
    pub fn checksum_bytes(self, data_len: usize, bytes_per_checksum: usize) -> Option<usize> {
        if self == ChecksumType::Null {
            return Some(0);
        }
        if bytes_per_checksum == 0 {
            return None;
        }
        data_len.div_ceil(bytes_per_checksum).checked_mul(4)
    }

    /// Checks `stored` (the checksum bytes) against `data` (header plus on-disk data).
    /// The caller made sure `stored` has the length [`Self::checksum_bytes`] gives.
    pub(crate) fn verify(
        self,
        data: &[u8],
        stored: &[u8],
        bytes_per_checksum: usize,
    ) -> Result<(), Mismatch> {
        if self == ChecksumType::Null || bytes_per_checksum == 0 {
            return Ok(());
        }
        let sums = stored.chunks_exact(4);
        for (chunk, (piece, sum)) in data.chunks(bytes_per_checksum).zip(sums).enumerate() {
            let stored = u32::from_be_bytes([sum[0], sum[1], sum[2], sum[3]]);
            let computed = self.of(piece);
            if stored != computed {
                return Err(Mismatch {
                    chunk,
                    stored,
                    computed,
                });
            }
        }
        Ok(())
    }

    /// The checksum bytes for `data` (used to build test files).
    pub fn compute(self, data: &[u8], bytes_per_checksum: usize) -> Vec<u8> {
        if self == ChecksumType::Null || bytes_per_checksum == 0 {
            return Vec::new();
        }
        data.chunks(bytes_per_checksum)
            .flat_map(|piece| self.of(piece).to_be_bytes())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifies_each_chunk() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for t in [ChecksumType::Crc32, ChecksumType::Crc32c] {
            let sums = t.compute(&data, 300);
            assert_eq!(Some(sums.len()), t.checksum_bytes(data.len(), 300));
            assert_eq!(sums.len(), 16);
            assert!(t.verify(&data, &sums, 300).is_ok());
            let mut bad = data.clone();
            bad[650] ^= 1;
            assert_eq!(t.verify(&bad, &sums, 300).map_err(|m| m.chunk), Err(2));
        }
    }

    #[test]
    fn known_values() {
        assert_eq!(ChecksumType::Crc32.of(b"123456789"), 0xcbf4_3926);
        assert_eq!(ChecksumType::Crc32c.of(b"123456789"), 0xe306_9283);
    }
}
