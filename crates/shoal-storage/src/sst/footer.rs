//! The fixed-size footer at the end of every SST: where the tail blocks are.
//!
//! ```text
//! offset  size  field (little-endian)
//!      0     8  tail_offset   first byte of the tail (bloom, index and meta blocks)
//!      8    16  index handle  (offset u64, length u64) of the root index block
//!     24    16  bloom handle  (0, 0) when the file has no bloom filter
//!     40    16  meta handle
//!     56     1  index_levels  1 (root indexes data blocks) or 2 (root indexes leaves)
//!     57     3  reserved, zero
//!     60     4  format_version
//!     64     8  magic "SHOALSST"
//!     72     4  crc32c of bytes 0..72
//! ```

/// Bytes in the footer.
pub const FOOTER_LEN: usize = 76;
/// The file magic, the ASCII bytes `SHOALSST`.
pub const MAGIC: [u8; 8] = *b"SHOALSST";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Where a block lives in its file: offset and length of its whole frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BlockHandle {
    /// Byte offset of the frame in the file.
    pub offset: u64,
    /// Length of the frame, trailer included.
    pub len: u64,
}

impl BlockHandle {
    /// One past the frame's last byte (saturating, so a corrupt handle cannot overflow).
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.len)
    }
}

/// The decoded footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// Offset of the first tail block.
    pub tail_offset: u64,
    /// Root index block.
    pub index: BlockHandle,
    /// Bloom block, if any.
    pub bloom: Option<BlockHandle>,
    /// Meta block.
    pub meta: BlockHandle,
    /// 1 or 2.
    pub index_levels: u8,
    /// Format version.
    pub format_version: u32,
}

/// Why a footer could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FooterError {
    /// The bytes are not a Shoal SST footer (wrong magic or length).
    NotAnSst(String),
    /// A Shoal SST of a version this build cannot read.
    UnsupportedVersion(u32),
    /// A Shoal footer with a bad checksum or impossible fields.
    Corrupt(String),
}

impl Footer {
    /// Encodes the footer.
    pub fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut out = [0u8; FOOTER_LEN];
        let bloom = self.bloom.unwrap_or_default();
        let words = [
            self.tail_offset,
            self.index.offset,
            self.index.len,
            bloom.offset,
            bloom.len,
            self.meta.offset,
            self.meta.len,
        ];
        for (i, w) in words.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        out[56] = self.index_levels;
        out[60..64].copy_from_slice(&self.format_version.to_le_bytes());
        out[64..72].copy_from_slice(&MAGIC);
        let crc = crc32c::crc32c(&out[..72]);
        out[72..76].copy_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decodes and validates a footer. `file_len` is the whole file's length; every
    /// handle must lie inside the tail, before the footer.
    pub fn decode(buf: &[u8], file_len: u64) -> Result<Footer, FooterError> {
        if buf.len() != FOOTER_LEN {
            return Err(FooterError::NotAnSst(format!(
                "footer needs {FOOTER_LEN} bytes, got {}",
                buf.len()
            )));
        }
        if buf[64..72] != MAGIC {
            return Err(FooterError::NotAnSst("bad magic at end of file".into()));
        }
        let stored = u32::from_le_bytes([buf[72], buf[73], buf[74], buf[75]]);
        let actual = crc32c::crc32c(&buf[..72]);
        if stored != actual {
            return Err(FooterError::Corrupt(format!(
                "footer checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"
            )));
        }
        let version = u32::from_le_bytes([buf[60], buf[61], buf[62], buf[63]]);
        if version != FORMAT_VERSION {
            return Err(FooterError::UnsupportedVersion(version));
        }
        if buf[57..60] != [0, 0, 0] {
            return Err(FooterError::Corrupt(
                "reserved footer bytes are not zero".into(),
            ));
        }
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&buf[i * 8..i * 8 + 8]);
            u64::from_le_bytes(w)
        };
        let footer = Footer {
            tail_offset: word(0),
            index: BlockHandle {
                offset: word(1),
                len: word(2),
            },
            bloom: match (word(3), word(4)) {
                (_, 0) => None,
                (offset, len) => Some(BlockHandle { offset, len }),
            },
            meta: BlockHandle {
                offset: word(5),
                len: word(6),
            },
            index_levels: buf[56],
            format_version: version,
        };
        if !(1..=2).contains(&footer.index_levels) {
            return Err(FooterError::Corrupt(format!(
                "{} index levels",
                footer.index_levels
            )));
        }
        let footer_at = file_len
            .checked_sub(FOOTER_LEN as u64)
            .ok_or_else(|| FooterError::NotAnSst("file shorter than a footer".into()))?;
        if footer.tail_offset > footer_at {
            return Err(FooterError::Corrupt(format!(
                "tail offset {} beyond footer at {footer_at}",
                footer.tail_offset
            )));
        }
        let handles = [Some(footer.index), footer.bloom, Some(footer.meta)];
        for h in handles.into_iter().flatten() {
            if h.offset < footer.tail_offset || h.end() > footer_at || h.len == 0 {
                return Err(FooterError::Corrupt(format!(
                    "block handle {}+{} outside the tail {}..{footer_at}",
                    h.offset, h.len, footer.tail_offset
                )));
            }
        }
        Ok(footer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Footer {
        Footer {
            tail_offset: 100,
            index: BlockHandle {
                offset: 150,
                len: 40,
            },
            bloom: Some(BlockHandle {
                offset: 100,
                len: 50,
            }),
            meta: BlockHandle {
                offset: 190,
                len: 30,
            },
            index_levels: 1,
            format_version: FORMAT_VERSION,
        }
    }

    #[test]
    fn round_trips() {
        let f = sample();
        let file_len = 220 + FOOTER_LEN as u64;
        assert_eq!(Footer::decode(&f.encode(), file_len), Ok(f));
        let no_bloom = Footer { bloom: None, ..f };
        assert_eq!(Footer::decode(&no_bloom.encode(), file_len), Ok(no_bloom));
    }

    #[test]
    fn every_flipped_bit_is_rejected() {
        let enc = sample().encode();
        for i in 0..FOOTER_LEN {
            for bit in 0..8 {
                let mut bad = enc;
                bad[i] ^= 1 << bit;
                assert!(
                    Footer::decode(&bad, 220 + FOOTER_LEN as u64).is_err(),
                    "byte {i} bit {bit}"
                );
            }
        }
    }

    #[test]
    fn handles_outside_the_file_are_rejected() {
        let enc = sample().encode();
        assert!(matches!(
            Footer::decode(&enc, 200),
            Err(FooterError::Corrupt(_))
        ));
        assert!(matches!(
            Footer::decode(&enc, 10),
            Err(FooterError::Corrupt(_) | FooterError::NotAnSst(_))
        ));
    }

    #[test]
    fn other_versions_are_named() {
        let mut f = sample();
        f.format_version = 7;
        assert_eq!(
            Footer::decode(&f.encode(), 220 + FOOTER_LEN as u64),
            Err(FooterError::UnsupportedVersion(7))
        );
    }
}
