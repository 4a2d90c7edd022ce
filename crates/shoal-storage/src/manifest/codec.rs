//! The manifest's byte format (version 1), documented byte by byte in `docs/manifest.md`
//! §1: `SHMF`, u16 version, u16 flags, u32 body length, body, crc32c of everything before.
//!
//! Pure, synchronous code. [`decode`] is total: every length is checked against the bytes
//! that remain before anything is allocated, so garbage gives a reason string, never a
//! panic or a huge allocation.

use std::collections::{BTreeMap, HashSet};

use bytes::{BufMut, Bytes};

use super::{Manifest, StoreFile};
use crate::sst::FileId;

/// Magic bytes at the start of every manifest object.
pub(crate) const MAGIC: [u8; 4] = *b"SHMF";
/// The format version this code writes (and the newest it reads).
pub const FORMAT_VERSION: u16 = 1;
/// Flag bit: the body ends with the bulk-load keys ([`Manifest::loads`]).
const FLAG_LOADS: u16 = 0x0001;
/// Longest bulk-load key accepted.
pub(crate) const MAX_LOAD_KEY_LEN: usize = 1024;
/// Magic + version + flags + body length.
const HEADER_LEN: usize = 12;
const CRC_LEN: usize = 4;

/// Encodes `m` (format version 1).
pub(crate) fn encode(m: &Manifest) -> Bytes {
    let mut body = Vec::with_capacity(128);
    body.put_u64_le(m.seq);
    body.put_u64_le(m.epoch);
    body.put_u128_le(m.writer);
    body.put_u64_le(m.flushed_seq);
    body.put_u64_le(m.max_seq);
    put_bytes(&mut body, &m.start_row);
    put_bytes(&mut body, &m.end_row);
    body.put_u32_le(len32(m.stores.len()));
    for (family, files) in &m.stores {
        put_bytes(&mut body, family.as_bytes());
        body.put_u32_le(len32(files.len()));
        for f in files {
            body.put_u128_le(f.id.0);
            put_bytes(&mut body, f.path.as_bytes());
            body.put_u64_le(f.size);
            body.put_u64_le(f.cell_count);
            body.put_u64_le(f.max_seq);
            body.put_i64_le(f.min_timestamp);
            body.put_i64_le(f.max_timestamp);
            put_bytes(&mut body, &f.first_row);
            put_bytes(&mut body, &f.last_row);
        }
    }
    let mut flags = 0u16;
    if !m.loads.is_empty() {
        flags |= FLAG_LOADS;
        body.put_u32_le(len32(m.loads.len()));
        for key in &m.loads {
            put_bytes(&mut body, key.as_bytes());
        }
    }
    let mut out = Vec::with_capacity(HEADER_LEN + body.len() + CRC_LEN);
    out.extend_from_slice(&MAGIC);
    out.put_u16_le(FORMAT_VERSION);
    out.put_u16_le(flags);
    out.put_u32_le(len32(body.len()));
    out.extend_from_slice(&body);
    let crc = crc32c::crc32c(&out);
    out.put_u32_le(crc);
    Bytes::from(out)
}

/// Lengths beyond u32 cannot occur for real manifests (keys and paths are bounded far
/// below); saturating keeps `encode` total, and `decode` would then reject the object.
fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.put_u32_le(len32(b.len()));
    out.extend_from_slice(b);
}

/// Decodes a manifest object that must hold slot `expected_seq`. The error is the reason
/// it is corrupt; the caller adds the object path.
pub(crate) fn decode(data: &[u8], expected_seq: u64) -> Result<Manifest, String> {
    if data.len() < HEADER_LEN + CRC_LEN {
        return Err(format!(
            "{} bytes is shorter than the smallest manifest ({} bytes)",
            data.len(),
            HEADER_LEN + CRC_LEN
        ));
    }
    if data[..4] != MAGIC {
        return Err(format!("bad magic {:02x?} (expected \"SHMF\")", &data[..4]));
    }
    let version = u16::from_le_bytes([data[4], data[5]]);
    if version != FORMAT_VERSION {
        return Err(if version > FORMAT_VERSION {
            format!(
                "format version {version} was written by a newer Shoal (this one reads up to \
                 {FORMAT_VERSION}); upgrade this server"
            )
        } else {
            format!("unknown format version {version}")
        });
    }
    let flags = u16::from_le_bytes([data[6], data[7]]);
    if flags & !FLAG_LOADS != 0 {
        return Err(format!("unknown flags {flags:#06x}"));
    }
    let body_len = u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize;
    let total = HEADER_LEN
        .checked_add(body_len)
        .and_then(|n| n.checked_add(CRC_LEN));
    if total != Some(data.len()) {
        return Err(format!(
            "body length {body_len} does not match the object length {} (truncated or \
             extended)",
            data.len()
        ));
    }
    let crc_at = HEADER_LEN + body_len;
    let stored = u32::from_le_bytes([
        data[crc_at],
        data[crc_at + 1],
        data[crc_at + 2],
        data[crc_at + 3],
    ]);
    let actual = crc32c::crc32c(&data[..crc_at]);
    if stored != actual {
        return Err(format!(
            "checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"
        ));
    }
    let mut r = Reader {
        buf: &data[HEADER_LEN..crc_at],
    };
    let mut m = read_body(&mut r)?;
    if flags & FLAG_LOADS != 0 {
        m.loads = read_loads(&mut r)?;
    }
    if !r.buf.is_empty() {
        return Err(format!("{} trailing bytes after the body", r.buf.len()));
    }
    if m.seq != expected_seq {
        return Err(format!(
            "holds seq {} but is stored in slot {expected_seq}",
            m.seq
        ));
    }
    Ok(m)
}

fn read_body(r: &mut Reader<'_>) -> Result<Manifest, String> {
    let seq = r.u64("seq")?;
    let epoch = r.u64("epoch")?;
    let writer = r.u128("writer")?;
    let flushed_seq = r.u64("flushed_seq")?;
    let max_seq = r.u64("max_seq")?;
    let start_row = r.bytes("start_row")?;
    let end_row = r.bytes("end_row")?;
    let families = r.u32("family count")?;
    let mut stores = BTreeMap::new();
    let mut ids = HashSet::new();
    let mut previous: Option<String> = None;
    for _ in 0..families {
        let family = r.string("family name")?;
        if family.is_empty() {
            return Err("empty family name".into());
        }
        if previous.as_ref().is_some_and(|p| *p >= family) {
            return Err(format!("family {family:?} is out of order or duplicated"));
        }
        let count = r.u32("file count")?;
        // Each file takes at least 92 bytes; refuse counts the body cannot hold before
        // reserving memory for them.
        if (count as usize).saturating_mul(92) > r.buf.len() {
            return Err(format!(
                "family {family:?} claims {count} files, more than the body can hold"
            ));
        }
        let mut files = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let id = FileId(r.u128("file id")?);
            if !ids.insert(id) {
                return Err(format!("file {id} is listed twice"));
            }
            files.push(StoreFile {
                id,
                path: r.string("file path")?,
                size: r.u64("file size")?,
                cell_count: r.u64("cell count")?,
                max_seq: r.u64("file max_seq")?,
                min_timestamp: r.i64("min_timestamp")?,
                max_timestamp: r.i64("max_timestamp")?,
                first_row: r.bytes("first_row")?,
                last_row: r.bytes("last_row")?,
            });
        }
        previous = Some(family.clone());
        stores.insert(family, files);
    }
    Ok(Manifest {
        seq,
        epoch,
        writer,
        flushed_seq,
        max_seq,
        start_row,
        end_row,
        stores,
        loads: Vec::new(),
    })
}

fn read_loads(r: &mut Reader<'_>) -> Result<Vec<String>, String> {
    let count = r.u32("load key count")? as usize;
    // Each key takes at least its 4-byte length.
    if count == 0 || count > super::MAX_LOAD_KEYS || count.saturating_mul(4) > r.buf.len() {
        return Err(format!("bad load key count {count}"));
    }
    let mut loads = Vec::with_capacity(count);
    for _ in 0..count {
        let key = r.string("load key")?;
        if key.is_empty() || key.len() > MAX_LOAD_KEY_LEN {
            return Err(format!("load key of {} bytes", key.len()));
        }
        loads.push(key);
    }
    Ok(loads)
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.buf.len() < n {
            return Err(format!(
                "{what}: needs {n} bytes, only {} remain in the body",
                self.buf.len()
            ));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn i64(&mut self, what: &str) -> Result<i64, String> {
        Ok(i64::from_le_bytes(self.array(what)?))
    }

    fn u128(&mut self, what: &str) -> Result<u128, String> {
        Ok(u128::from_le_bytes(self.array(what)?))
    }

    fn bytes(&mut self, what: &str) -> Result<Bytes, String> {
        let len = self.u32(what)? as usize;
        Ok(Bytes::copy_from_slice(self.take(len, what)?))
    }

    fn string(&mut self, what: &str) -> Result<String, String> {
        let len = self.u32(what)? as usize;
        let raw = self.take(len, what)?;
        String::from_utf8(raw.to_vec()).map_err(|_| format!("{what} is not valid UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        let file = |id: u128, fam: &str| StoreFile {
            id: FileId(id),
            path: format!("data/r/{fam}/{}.sst", FileId(id)),
            size: 1000 + id as u64,
            cell_count: 10,
            max_seq: 77,
            min_timestamp: -5,
            max_timestamp: i64::MAX,
            first_row: Bytes::from_static(b"a"),
            last_row: Bytes::from_static(b"zz\0"),
        };
        let mut stores = BTreeMap::new();
        stores.insert("cf".to_owned(), vec![file(1, "cf"), file(2, "cf")]);
        stores.insert("meta".to_owned(), vec![file(3, "meta")]);
        stores.insert("empty".to_owned(), vec![]);
        Manifest {
            seq: 42,
            epoch: 3,
            writer: u128::MAX - 7,
            flushed_seq: 100,
            max_seq: 120,
            start_row: Bytes::from_static(b"b"),
            end_row: Bytes::new(),
            stores,
            loads: Vec::new(),
        }
    }

    #[test]
    fn round_trip() {
        let m = sample();
        let bytes = encode(&m);
        assert_eq!(&bytes[..4], b"SHMF");
        assert_eq!(decode(&bytes, 42).expect("decode"), m);
        let empty = Manifest {
            seq: 1,
            ..Manifest::default()
        };
        assert_eq!(decode(&encode(&empty), 1).expect("decode"), empty);
    }

    #[test]
    fn load_keys_round_trip_and_leave_the_plain_format_alone() {
        let plain = encode(&sample());
        assert_eq!(&plain[6..8], &[0, 0], "no loads: flags stay 0");
        let mut m = sample();
        m.record_load("hbase-snapshot:s1:r1:cf:abc".into());
        m.record_load("bulk:2".into());
        m.record_load("bulk:2".into());
        assert_eq!(m.loads.len(), 2);
        let bytes = encode(&m);
        assert_eq!(decode(&bytes, 42).expect("decode"), m);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut], 42).is_err());
        }
        for _ in 0..super::super::MAX_LOAD_KEYS + 5 {
            let n = m.loads.len();
            m.record_load(format!("k{n}"));
        }
        assert_eq!(m.loads.len(), super::super::MAX_LOAD_KEYS);
        assert!(
            !m.has_load("hbase-snapshot:s1:r1:cf:abc"),
            "the oldest went first"
        );
        assert_eq!(decode(&encode(&m), 42).expect("decode"), m);
    }

    #[test]
    fn wrong_slot_is_corrupt() {
        let err = decode(&encode(&sample()), 43).expect_err("slot mismatch");
        assert!(err.contains("slot 43"), "{err}");
    }

    #[test]
    fn every_truncation_and_flipped_byte_is_rejected() {
        let bytes = encode(&sample());
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len], 42).is_err(), "truncated to {len}");
        }
        for i in 0..bytes.len() {
            for bit in [0x01u8, 0x80] {
                let mut b = bytes.to_vec();
                b[i] ^= bit;
                assert!(decode(&b, 42).is_err(), "flip byte {i} bit {bit:#x}");
            }
        }
        let mut extended = bytes.to_vec();
        extended.push(0);
        assert!(decode(&extended, 42).is_err());
    }

    #[test]
    fn newer_version_says_so() {
        let mut b = encode(&sample()).to_vec();
        b[4] = 2;
        let err = decode(&b, 42).expect_err("newer");
        assert!(err.contains("newer Shoal"), "{err}");
    }

    /// Re-seals a body with a valid header and checksum, to reach the body checks.
    fn seal(body: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.put_u16_le(FORMAT_VERSION);
        out.put_u16_le(0);
        out.put_u32_le(body.len() as u32);
        out.extend_from_slice(body);
        let crc = crc32c::crc32c(&out);
        out.put_u32_le(crc);
        out
    }

    #[test]
    fn garbage_bodies_with_valid_checksums_are_rejected() {
        let good = encode(&sample());
        let body = &good[HEADER_LEN..good.len() - CRC_LEN];
        // Every truncation of the body, re-sealed.
        for len in 0..body.len() {
            assert!(
                decode(&seal(&body[..len]), 42).is_err(),
                "body truncated to {len}"
            );
        }
        // Pseudo-random garbage bodies, re-sealed: an error or a manifest, never a panic.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for n in 0..2000usize {
            let len = n % 300;
            let garbage: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Mostly small bytes so that lengths and counts are sometimes plausible.
                    if x.is_multiple_of(3) {
                        (x >> 8) as u8
                    } else {
                        (x % 4) as u8
                    }
                })
                .collect();
            let _ = decode(&seal(&garbage), 42);
        }
        // A huge file count is refused before allocating.
        let mut m = sample();
        m.stores.clear();
        let enc = encode(&m);
        let mut fixed = enc[HEADER_LEN..enc.len() - CRC_LEN].to_vec();
        fixed.truncate(fixed.len() - 4); // drop the family count
        fixed.put_u32_le(1);
        put_bytes(&mut fixed, b"cf");
        fixed.put_u32_le(u32::MAX);
        let err = decode(&seal(&fixed), 42).expect_err("huge count");
        assert!(err.contains("more than the body can hold"), "{err}");
    }

    #[test]
    fn duplicate_ids_and_unsorted_families_are_rejected() {
        let mut m = sample();
        let dup = m.stores["cf"][0].clone();
        m.stores.get_mut("meta").expect("meta").push(dup);
        let err = decode(&encode(&m), 42).expect_err("dup");
        assert!(err.contains("listed twice"), "{err}");
    }
}
