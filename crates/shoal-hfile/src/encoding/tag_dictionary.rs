//! Dictionary-compressed tags (`hfile.TAGS_COMPRESSED`), as HBase's
//! `TagCompressionContext` writes them in PREFIX, DIFF and FAST_DIFF blocks. After the
//! cell's total (uncompressed) tags length, each tag is either `0xff`, its length as a
//! 7-bit varint and its bytes (type and value), which then enter the dictionary; or a
//! 2-byte big-endian index of a dictionary entry. The dictionary is per block, holds 127
//! entries and, when full, replaces the least recently used one (both adding and looking
//! up count as use).

use super::{DResult, DecodeError};
use crate::cursor::Cursor;
use bytes::Bytes;

/// HBase creates the dictionary with `Byte.MAX_VALUE` entries.
const CAPACITY: usize = 127;
const NOT_IN_DICTIONARY: u8 = 0xff;
/// A cell's tags length is stored in 2 bytes elsewhere, so it cannot be larger.
const MAX_TAGS_LEN: usize = u16::MAX as usize;

#[derive(Default)]
pub(super) struct TagDictionary {
    entries: Vec<Bytes>,
    /// Entry indexes, least recently used first.
    recency: Vec<u16>,
}

impl TagDictionary {
    fn touch(&mut self, idx: u16) {
        self.recency.retain(|i| *i != idx);
        self.recency.push(idx);
    }

    fn get(&mut self, idx: u16) -> DResult<Bytes> {
        let entry = self.entries.get(usize::from(idx)).cloned().ok_or_else(|| {
            DecodeError::Corrupt(format!(
                "compressed tags name missing dictionary entry {idx}"
            ))
        })?;
        self.touch(idx);
        Ok(entry)
    }

    /// Adds an entry (empty ones are not kept); returns its index.
    pub(super) fn add(&mut self, entry: Bytes) -> Option<u16> {
        if entry.is_empty() {
            return None;
        }
        let idx = if self.entries.len() < CAPACITY {
            self.entries.push(entry);
            (self.entries.len() - 1) as u16
        } else {
            let idx = *self.recency.first()?;
            self.entries[usize::from(idx)] = entry;
            idx
        };
        self.touch(idx);
        Some(idx)
    }

    /// Finds an entry and counts it as used (the encoder's side, for tests).
    #[cfg(test)]
    pub(super) fn find(&mut self, entry: &[u8]) -> Option<u16> {
        let idx = self.entries.iter().position(|e| e.as_ref() == entry)? as u16;
        self.touch(idx);
        Some(idx)
    }

    /// Reads compressed tags that expand to `len` bytes of serialized tags.
    pub(super) fn uncompress(&mut self, c: &mut Cursor<'_>, len: usize) -> DResult<Bytes> {
        if len > MAX_TAGS_LEN {
            return Err(DecodeError::Corrupt(format!(
                "tags length {len} over 65535"
            )));
        }
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let status = c.u8("compressed tag")?;
            let tag = if status == NOT_IN_DICTIONARY {
                let n = c.compressed_int("compressed tag length")?;
                let tag = Bytes::copy_from_slice(c.take(n, "compressed tag")?);
                self.add(tag.clone());
                tag
            } else if status < 0x80 {
                let idx = u16::from_be_bytes([status, c.u8("tag dictionary index")?]);
                self.get(idx)?
            } else {
                return Err(DecodeError::Corrupt(format!(
                    "bad compressed tag status {status:#x}"
                )));
            };
            let tag_len = u16::try_from(tag.len())
                .map_err(|_| DecodeError::Corrupt("compressed tag over 65535 bytes".into()))?;
            out.extend_from_slice(&tag_len.to_be_bytes());
            out.extend_from_slice(&tag);
        }
        if out.len() != len {
            return Err(DecodeError::Corrupt(format!(
                "compressed tags expand to {} bytes, not {len}",
                out.len()
            )));
        }
        Ok(Bytes::from(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recently_used_entry_is_replaced() {
        let mut d = TagDictionary::default();
        for i in 0..CAPACITY {
            assert_eq!(d.add(Bytes::from(vec![i as u8 + 1])), Some(i as u16));
        }
        assert_eq!(d.get(0).map(|b| b.to_vec()), Ok(vec![1]));
        // Entry 0 was just used, so entry 1 is the least recently used.
        assert_eq!(d.add(Bytes::from_static(b"new")), Some(1));
        assert_eq!(d.find(b"new"), Some(1));
        assert!(d.get(200).is_err());
        assert_eq!(d.add(Bytes::new()), None);
    }

    #[test]
    fn uncompresses_literals_and_references() {
        let mut d = TagDictionary::default();
        let data = [0xff, 3, 8, b'h', b'i', 0x00, 0x00];
        let mut c = Cursor::new(&data);
        let tags = d.uncompress(&mut c, 10).expect("tags");
        assert_eq!(tags.as_ref(), &[0, 3, 8, b'h', b'i', 0, 3, 8, b'h', b'i']);
        assert!(d.uncompress(&mut Cursor::new(&[0x00, 0x05]), 5).is_err());
        assert!(d.uncompress(&mut Cursor::new(&[0x00, 0x00]), 4).is_err());
    }
}
