//! Bytes on disk of the L2 cache.
//!
//! A cache directory holds `VERSION` (the format line below) and `slot-NNNNN`
//! segment files. A segment is written front to back and never modified in
//! place; when the cache is full the oldest segment is truncated and reused.
//!
//! ```text
//! segment = header | entry* | [seal]
//! header  = magic "SHL2SEG1" | generation: u64 LE                     (16 bytes)
//! entry   = magic: u32 LE = 0x454E5452 | file: u128 LE | offset: u64 LE
//!           | len: u32 LE | crc32c: u32 LE | data[len]                 (36 + len bytes)
//!           crc32c covers file, offset, len and data
//! seal    = index | index_len: u32 LE | index_crc: u32 LE | magic "SHL2SEAL"
//! index   = (file: u128 LE | offset: u64 LE | pos: u32 LE | len: u32 LE)*
//! ```
//!
//! A sealed segment is recovered by reading its seal; an unsealed one (the
//! segment being written when the process stopped) by scanning its entries up
//! to the first one whose checksum fails. Every entry is verified again when
//! it is read, so a torn or corrupted entry is a miss, never data.

/// The line stored in `VERSION`; any other content wipes the directory.
pub(crate) const VERSION_LINE: &str = "shoal-l2-cache format 1\n";
pub(crate) const SEGMENT_MAGIC: &[u8; 8] = b"SHL2SEG1";
pub(crate) const SEAL_MAGIC: &[u8; 8] = b"SHL2SEAL";
pub(crate) const HEADER_LEN: u64 = 16;
pub(crate) const ENTRY_MAGIC: u32 = 0x454E_5452;
pub(crate) const ENTRY_HEADER_LEN: usize = 36;
pub(crate) const INDEX_ENTRY_LEN: usize = 32;
pub(crate) const SEAL_TRAILER_LEN: usize = 16;

/// A cached block's key: file id and block offset, stored as three `u64`s so
/// an index entry packs into 24 bytes (a `u128` would force 16-byte alignment
/// and 32 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    file_hi: u64,
    file_lo: u64,
    offset: u64,
}

impl Key {
    pub(crate) fn new(file: u128, offset: u64) -> Key {
        Key {
            file_hi: (file >> 64) as u64,
            file_lo: file as u64,
            offset,
        }
    }

    pub(crate) fn file(&self) -> u128 {
        (u128::from(self.file_hi) << 64) | u128::from(self.file_lo)
    }

    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }
}

pub(crate) fn segment_header(generation: u64) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[..8].copy_from_slice(SEGMENT_MAGIC);
    h[8..].copy_from_slice(&generation.to_le_bytes());
    h
}

pub(crate) fn parse_header(h: &[u8]) -> Option<u64> {
    if h.len() < HEADER_LEN as usize || &h[..8] != SEGMENT_MAGIC {
        return None;
    }
    Some(u64::from_le_bytes(h[8..16].try_into().ok()?))
}

fn entry_crc(key: Key, data: &[u8]) -> u32 {
    let mut fields = [0u8; 28];
    fields[..16].copy_from_slice(&key.file().to_le_bytes());
    fields[16..24].copy_from_slice(&key.offset().to_le_bytes());
    fields[24..28].copy_from_slice(&(data.len() as u32).to_le_bytes());
    crc32c::crc32c_append(crc32c::crc32c(&fields), data)
}

/// Appends one entry to `out`.
pub(crate) fn encode_entry(out: &mut Vec<u8>, key: Key, data: &[u8]) {
    out.extend_from_slice(&ENTRY_MAGIC.to_le_bytes());
    out.extend_from_slice(&key.file().to_le_bytes());
    out.extend_from_slice(&key.offset().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&entry_crc(key, data).to_le_bytes());
    out.extend_from_slice(data);
}

/// Parses an entry header: the key, the data length and the stored checksum.
pub(crate) fn parse_entry_header(h: &[u8]) -> Option<(Key, u32, u32)> {
    if h.len() < ENTRY_HEADER_LEN || u32::from_le_bytes(h[..4].try_into().ok()?) != ENTRY_MAGIC {
        return None;
    }
    let file = u128::from_le_bytes(h[4..20].try_into().ok()?);
    let offset = u64::from_le_bytes(h[20..28].try_into().ok()?);
    let len = u32::from_le_bytes(h[28..32].try_into().ok()?);
    let crc = u32::from_le_bytes(h[32..36].try_into().ok()?);
    Some((Key::new(file, offset), len, crc))
}

/// Verifies a whole entry (header + data) read back for `key`; returns the data range.
pub(crate) fn verify_entry(buf: &[u8], key: Key) -> Option<std::ops::Range<usize>> {
    let (k, len, crc) = parse_entry_header(buf)?;
    let end = ENTRY_HEADER_LEN.checked_add(len as usize)?;
    if k != key || buf.len() < end {
        return None;
    }
    let data = &buf[ENTRY_HEADER_LEN..end];
    (entry_crc(k, data) == crc).then_some(ENTRY_HEADER_LEN..end)
}

/// One recovered index record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) key: Key,
    pub(crate) pos: u32,
    pub(crate) len: u32,
}

/// The seal of a segment whose entries are `records`.
pub(crate) fn encode_seal(records: &[Record]) -> Vec<u8> {
    let mut out = Vec::with_capacity(records.len() * INDEX_ENTRY_LEN + SEAL_TRAILER_LEN);
    for r in records {
        out.extend_from_slice(&r.key.file().to_le_bytes());
        out.extend_from_slice(&r.key.offset().to_le_bytes());
        out.extend_from_slice(&r.pos.to_le_bytes());
        out.extend_from_slice(&r.len.to_le_bytes());
    }
    let crc = crc32c::crc32c(&out);
    let len = out.len() as u32;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(SEAL_MAGIC);
    out
}

/// Reads a seal's trailer: the index length, if the trailer is valid.
pub(crate) fn parse_seal_trailer(t: &[u8]) -> Option<(u32, u32)> {
    if t.len() != SEAL_TRAILER_LEN || &t[8..16] != SEAL_MAGIC {
        return None;
    }
    Some((
        u32::from_le_bytes(t[..4].try_into().ok()?),
        u32::from_le_bytes(t[4..8].try_into().ok()?),
    ))
}

/// Decodes a seal's index, checking its checksum.
pub(crate) fn parse_seal_index(index: &[u8], crc: u32) -> Option<Vec<Record>> {
    if !index.len().is_multiple_of(INDEX_ENTRY_LEN) || crc32c::crc32c(index) != crc {
        return None;
    }
    index
        .chunks_exact(INDEX_ENTRY_LEN)
        .map(|c| {
            Some(Record {
                key: Key::new(
                    u128::from_le_bytes(c[..16].try_into().ok()?),
                    u64::from_le_bytes(c[16..24].try_into().ok()?),
                ),
                pos: u32::from_le_bytes(c[24..28].try_into().ok()?),
                len: u32::from_le_bytes(c[28..32].try_into().ok()?),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_verify_and_reject_damage() {
        let mut buf = Vec::new();
        encode_entry(&mut buf, Key::new(7, 64), b"frame bytes");
        assert_eq!(verify_entry(&buf, Key::new(7, 64)), Some(36..47));
        assert_eq!(verify_entry(&buf, Key::new(7, 65)), None, "wrong key");
        for i in 0..buf.len() {
            let mut bad = buf.clone();
            bad[i] ^= 0x10;
            assert_eq!(verify_entry(&bad, Key::new(7, 64)), None, "byte {i}");
        }
        assert_eq!(verify_entry(&buf[..45], Key::new(7, 64)), None, "torn");
    }

    #[test]
    fn seals_round_trip() {
        let records = vec![
            Record {
                key: Key::new(1, 2),
                pos: 16,
                len: 100,
            },
            Record {
                key: Key::new(3, 4),
                pos: 156,
                len: 9,
            },
        ];
        let seal = encode_seal(&records);
        let t = &seal[seal.len() - SEAL_TRAILER_LEN..];
        let (len, crc) = parse_seal_trailer(t).unwrap();
        let index =
            &seal[seal.len() - SEAL_TRAILER_LEN - len as usize..seal.len() - SEAL_TRAILER_LEN];
        assert_eq!(parse_seal_index(index, crc), Some(records));
        assert_eq!(parse_seal_index(&index[1..], crc), None);
    }
}
