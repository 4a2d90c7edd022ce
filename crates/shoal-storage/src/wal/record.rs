//! The bytes of a WAL segment: a fixed header, then records back to back.
//!
//! ```text
//! header (44 bytes):
//!   magic "SHOALWAL" (8) | version: u32 LE (2; 1 is still read) | flags: u32 LE
//!   | segment: u64 LE | writer: u128 LE (a ULID: per Wal::open for local segments; per
//!   object, with flags bit 0 set, for segment objects)
//!   | crc32c: u32 LE over the 40 bytes before it
//! record:
//!   len: u32 LE (bytes of body) | crc: u32 LE | body
//!   crc = crc32c(the 4 len bytes ‖ body) XOR mask(segment)   (version 1: no mask)
//! body:
//!   region_len: LEB128 varint | region: UTF-8 | seq: u64 LE | payload (the rest)
//! seal (version 2): a record whose body is region_len 0 and seq = its own offset
//! ```
//!
//! Version 2 lets a segment file be *recycled*: a retired segment's file is reused for
//! a later segment by rewriting its header only, and the new records overwrite the old
//! ones. The mask, distinct for any 2^32 consecutive segment numbers, makes every record
//! left over from the file's earlier life fail its checksum, so a scan stops at the
//! first byte the new segment has not written. A *seal*, written (and synced) when the
//! writer leaves a segment, marks where its records end, so what follows it is known
//! to be leftovers rather than damage.
//!
//! Pure code, no I/O. Decoding never panics and never allocates more than the input:
//! every length is checked against [`MAX_RECORD_BYTES`] / [`MAX_REGION_BYTES`] and against
//! the bytes that remain, and a record is accepted only if its checksum matches.
//! `docs/wal.md` is the normative description.

use bytes::Bytes;

use super::WalEntry;

/// First eight bytes of every segment.
pub const MAGIC: [u8; 8] = *b"SHOALWAL";
/// The format version written.
pub const FORMAT_VERSION: u32 = 2;
/// The oldest format version still read (no record mask, no seals).
pub const OLDEST_READABLE_VERSION: u32 = 1;
/// Size of the segment header.
pub const HEADER_LEN: usize = 44;
/// Size of a record's `len` and `crc32c` fields.
pub const RECORD_PREFIX_LEN: usize = 8;
/// Largest record body: region, sequence number and payload together.
pub const MAX_RECORD_BYTES: usize = 256 << 20;
/// Longest region name.
pub const MAX_REGION_BYTES: usize = 1024;
/// Smallest possible body: a one-byte varint and a sequence number.
const MIN_BODY_LEN: usize = 1 + 8;
/// Header flag (bit 0): the writer id is this segment's own ULID, generated just
/// before its bytes were assembled, and its millisecond timestamp is the segment's
/// time. Set on every segment object; readers that do not know it ignore flags.
pub const FLAG_OBJECT_TIME: u32 = 1;

/// A decoded segment header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SegmentHeader {
    pub segment: u64,
    pub writer: u128,
    pub version: u32,
    pub flags: u32,
}

impl SegmentHeader {
    /// The segment's time, ms since the Unix epoch: the timestamp of its writer
    /// ULID when [`FLAG_OBJECT_TIME`] is set, else `None` (local segments, and
    /// objects written by builds before the flag).
    pub fn time_ms(&self) -> Option<u64> {
        (self.flags & FLAG_OBJECT_TIME != 0).then(|| ulid::Ulid(self.writer).timestamp_ms())
    }

    /// What this segment's record checksums are XORed with.
    pub fn mask(&self) -> u32 {
        if self.version >= 2 {
            record_mask(self.segment)
        } else {
            0
        }
    }
}

/// The record-checksum mask of segment `n` (version 2): a bijection of its low 32
/// bits, so any two segments fewer than 2^32 apart have different masks.
pub(crate) fn record_mask(n: u64) -> u32 {
    ((n as u32) ^ 0x5348_4f41).wrapping_mul(0x9e37_79b1)
}

/// Applies `mask` to the checksum of every record in `records` (whole records back
/// to back, as [`encode_record_into`] writes them with no mask). Appenders encode
/// before they know their segment; the writer masks each batch as it writes it.
pub(crate) fn mask_records(records: &mut [u8], mask: u32) {
    let mut pos = 0;
    while pos + RECORD_PREFIX_LEN <= records.len() {
        let len = le_u32(records, pos) as usize;
        let crc = le_u32(records, pos + 4) ^ mask;
        records[pos + 4..pos + 8].copy_from_slice(&crc.to_le_bytes());
        pos += RECORD_PREFIX_LEN + len;
    }
    debug_assert_eq!(pos, records.len(), "records end on a record boundary");
}

/// Bytes of a seal record.
pub(crate) const SEAL_LEN: usize = RECORD_PREFIX_LEN + MIN_BODY_LEN;

/// The seal record of a version-2 segment numbered `segment`, to be written at byte
/// `offset` of it (just past its last record): an empty region name (which no entry
/// may have) and the seal's own offset as its seq, so a seal copied elsewhere in the
/// file does not pass for one.
pub(crate) fn encode_seal(segment: u64, offset: u64) -> [u8; SEAL_LEN] {
    let mut rec = [0u8; SEAL_LEN];
    rec[..4].copy_from_slice(&(MIN_BODY_LEN as u32).to_le_bytes());
    // rec[8]: the region name's length, a one-byte varint 0.
    rec[9..].copy_from_slice(&offset.to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&rec[..4]), &rec[RECORD_PREFIX_LEN..])
        ^ record_mask(segment);
    rec[4..8].copy_from_slice(&crc.to_le_bytes());
    rec
}

/// Why a header was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeaderError {
    /// Fewer than [`HEADER_LEN`] bytes.
    Short(usize),
    BadMagic,
    BadChecksum,
    UnsupportedVersion(u32),
}

impl std::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderError::Short(n) => {
                write!(f, "segment header truncated: {n} of {HEADER_LEN} bytes")
            }
            HeaderError::BadMagic => write!(f, "not a Shoal WAL segment (bad magic)"),
            HeaderError::BadChecksum => write!(f, "segment header checksum mismatch"),
            HeaderError::UnsupportedVersion(v) => write!(f, "unsupported format version {v}"),
        }
    }
}

/// A header of the current format version (local segments).
pub(crate) fn encode_header(segment: u64, writer: u128) -> [u8; HEADER_LEN] {
    encode_header_version(segment, writer, FORMAT_VERSION)
}

/// A header of format `version` with no flags.
pub(crate) fn encode_header_version(segment: u64, writer: u128, version: u32) -> [u8; HEADER_LEN] {
    encode_header_flags(segment, writer, version, 0)
}

/// The header of a segment object: version 1 (an object is never reused, so it
/// needs no mask or seal, and a server of an older build can still read a dead
/// server's objects during a rolling upgrade; it ignores the flags) with
/// [`FLAG_OBJECT_TIME`]: `ulid` is the object's own, its timestamp the object's time.
pub(crate) fn encode_object_header(segment: u64, ulid: u128) -> [u8; HEADER_LEN] {
    encode_header_flags(segment, ulid, OLDEST_READABLE_VERSION, FLAG_OBJECT_TIME)
}

fn encode_header_flags(segment: u64, writer: u128, version: u32, flags: u32) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&version.to_le_bytes());
    h[12..16].copy_from_slice(&flags.to_le_bytes());
    h[16..24].copy_from_slice(&segment.to_le_bytes());
    h[24..40].copy_from_slice(&writer.to_le_bytes());
    let crc = crc32c::crc32c(&h[..40]);
    h[40..44].copy_from_slice(&crc.to_le_bytes());
    h
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// `buf` starts with a segment; checks and decodes its header.
pub(crate) fn decode_header(buf: &[u8]) -> Result<SegmentHeader, HeaderError> {
    if buf.len() < HEADER_LEN {
        return Err(HeaderError::Short(buf.len()));
    }
    let h = &buf[..HEADER_LEN];
    if h[0..8] != MAGIC {
        return Err(HeaderError::BadMagic);
    }
    if crc32c::crc32c(&h[..40]) != le_u32(h, 40) {
        return Err(HeaderError::BadChecksum);
    }
    let version = le_u32(h, 8);
    if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(HeaderError::UnsupportedVersion(version));
    }
    let mut w = [0u8; 16];
    w.copy_from_slice(&h[24..40]);
    // Flags are never a reason to refuse a segment: bits this build does not know
    // describe the segment, not its bytes.
    Ok(SegmentHeader {
        segment: le_u64(h, 16),
        writer: u128::from_le_bytes(w),
        version,
        flags: le_u32(h, 12),
    })
}

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`; `None` if truncated or longer than ten bytes.
fn get_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for i in 0..10 {
        let b = *buf.get(*pos + i)?;
        if i == 9 && b > 1 {
            return None;
        }
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *pos += i + 1;
            return Some(v);
        }
    }
    None
}

/// Body length of a record for `region` and a payload of `payload_len` bytes.
pub(crate) fn body_len(region: &str, payload_len: usize) -> usize {
    varint_len(region.len() as u64) + region.len() + 8 + payload_len
}

/// Encodes one record (prefix and body). The caller has checked the limits
/// ([`MAX_REGION_BYTES`], [`MAX_RECORD_BYTES`]).
pub(crate) fn encode_record(region: &str, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(RECORD_PREFIX_LEN + body_len(region, payload.len()));
    encode_record_into(&mut out, region, seq, payload);
    out
}

/// [`encode_record`], appended to `out` (several records back to back).
pub(crate) fn encode_record_into(out: &mut Vec<u8>, region: &str, seq: u64, payload: &[u8]) {
    let start = out.len();
    let body = body_len(region, payload.len());
    let len = u32::try_from(body).unwrap_or(u32::MAX).to_le_bytes();
    out.extend_from_slice(&len);
    out.extend_from_slice(&[0; 4]);
    put_varint(out, region.len() as u64);
    out.extend_from_slice(region.as_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(payload);
    let crc = crc32c::crc32c_append(crc32c::crc32c(&len), &out[start + RECORD_PREFIX_LEN..]);
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// The first record that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadRecord {
    /// Offset of the record's first byte in the segment.
    pub offset: usize,
    pub reason: String,
}

/// The result of scanning a segment's records.
#[derive(Debug, Default)]
pub(crate) struct RecordScan {
    /// Every good record before the first bad one, in file order.
    pub entries: Vec<WalEntry>,
    /// Offset just past the last good record.
    pub valid_len: usize,
    /// The first bad record, if any; nothing after it is returned.
    pub bad: Option<BadRecord>,
    /// The scan ended at a seal (version 2): `valid_len` is just past it, and
    /// whatever follows is left over from the file's earlier life.
    pub sealed: bool,
}

/// Decodes the records of a segment whose header is `header`, from `start` (just
/// past the header) to the end, stopping at the first bad one or at a seal.
/// Payloads are slices of `segment` (no copy).
pub(crate) fn scan_records(segment: &Bytes, header: &SegmentHeader, start: usize) -> RecordScan {
    let buf: &[u8] = segment;
    let mask = header.mask();
    let seals = header.version >= 2;
    let mut scan = RecordScan {
        valid_len: start.min(buf.len()),
        ..RecordScan::default()
    };
    let mut pos = scan.valid_len;
    while pos < buf.len() {
        match decode_record(segment, pos, mask) {
            Ok((entry, next)) if seals && entry.region.is_empty() => {
                if entry.seq != pos as u64 || !entry.payload.is_empty() {
                    scan.bad = Some(BadRecord {
                        offset: pos,
                        reason: format!(
                            "malformed seal (says offset {}, {} payload bytes)",
                            entry.seq,
                            entry.payload.len()
                        ),
                    });
                    break;
                }
                scan.valid_len = next;
                scan.sealed = true;
                break;
            }
            Ok((entry, next)) => {
                scan.entries.push(entry);
                pos = next;
                scan.valid_len = next;
            }
            Err(reason) => {
                scan.bad = Some(BadRecord {
                    offset: pos,
                    reason,
                });
                break;
            }
        }
    }
    scan
}

/// Decodes the record at `pos`; returns it and the offset of the next one.
fn decode_record(segment: &Bytes, pos: usize, mask: u32) -> Result<(WalEntry, usize), String> {
    let buf: &[u8] = segment;
    let remaining = buf.len() - pos;
    if remaining < RECORD_PREFIX_LEN {
        return Err(format!(
            "truncated record: {remaining} bytes left, a record prefix needs {RECORD_PREFIX_LEN}"
        ));
    }
    let len = le_u32(buf, pos) as usize;
    if !(MIN_BODY_LEN..=MAX_RECORD_BYTES).contains(&len) {
        return Err(format!(
            "impossible record length {len} (must be {MIN_BODY_LEN}..={MAX_RECORD_BYTES})"
        ));
    }
    if len > remaining - RECORD_PREFIX_LEN {
        return Err(format!(
            "record length {len} runs past the end of the segment ({} bytes left)",
            remaining - RECORD_PREFIX_LEN
        ));
    }
    let body_start = pos + RECORD_PREFIX_LEN;
    let end = body_start + len;
    let body = &buf[body_start..end];
    let stored = le_u32(buf, pos + 4);
    let actual = crc32c::crc32c_append(crc32c::crc32c(&buf[pos..pos + 4]), body) ^ mask;
    if stored != actual {
        return Err(format!(
            "record checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"
        ));
    }
    let mut at = 0;
    let region_len = get_varint(body, &mut at).ok_or("bad region length varint")?;
    let region_len = usize::try_from(region_len)
        .ok()
        .filter(|&n| n <= MAX_REGION_BYTES && n + 8 <= body.len() - at)
        .ok_or_else(|| format!("impossible region length {region_len}"))?;
    let region = std::str::from_utf8(&body[at..at + region_len])
        .map_err(|e| format!("region name is not UTF-8: {e}"))?
        .to_owned();
    at += region_len;
    let seq = le_u64(body, at);
    at += 8;
    let payload = segment.slice(body_start + at..end);
    Ok((
        WalEntry {
            region,
            seq,
            payload,
        },
        end,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header of the segments built here: number 7, version 2.
    const H: SegmentHeader = SegmentHeader {
        segment: 7,
        writer: 42,
        version: FORMAT_VERSION,
        flags: 0,
    };

    /// Segment 7 (version 2) holding `records`, masked as the writer writes them.
    fn segment(records: &[(&str, u64, &[u8])]) -> Bytes {
        segment_numbered(7, records).into()
    }

    fn segment_numbered(n: u64, records: &[(&str, u64, &[u8])]) -> Vec<u8> {
        let mut out = encode_header(n, 42).to_vec();
        let mut batch = Vec::new();
        for (r, s, p) in records {
            encode_record_into(&mut batch, r, *s, p);
        }
        mask_records(&mut batch, record_mask(n));
        out.extend_from_slice(&batch);
        out
    }

    /// A version-1 header: records unmasked, no seals.
    fn header_v1(n: u64) -> [u8; HEADER_LEN] {
        encode_header_version(n, 42, OLDEST_READABLE_VERSION)
    }

    #[test]
    fn version_1_segments_are_still_read() {
        let mut seg = header_v1(9).to_vec();
        for (r, s, p) in [("r1", 1u64, &b"one"[..]), ("", 2, b"")] {
            seg.extend_from_slice(&encode_record(r, s, p));
        }
        let seg = Bytes::from(seg);
        let h = decode_header(&seg).expect("v1 header");
        assert_eq!((h.version, h.segment, h.mask()), (1, 9, 0));
        let scan = scan_records(&seg, &h, HEADER_LEN);
        assert_eq!((scan.bad.clone(), scan.sealed), (None, false));
        // Version 1 had no seals: an empty region name was an entry like any other.
        assert_eq!(seqs_of(&scan), vec![1, 2]);
    }

    fn seqs_of(scan: &RecordScan) -> Vec<u64> {
        scan.entries.iter().map(|e| e.seq).collect()
    }

    #[test]
    fn masks_differ_for_nearby_segments_and_make_other_segments_records_fail() {
        let masks: std::collections::HashSet<u32> = (0..100_000u64).map(record_mask).collect();
        assert_eq!(masks.len(), 100_000);
        // Segment 6's records, left in a file now used as segment 7, fail its checksums.
        let mut recycled = segment_numbered(6, &[("a", 1, b"old"), ("a", 2, b"older")]);
        recycled[..HEADER_LEN].copy_from_slice(&encode_header(7, 42));
        let scan = scan_records(&Bytes::from(recycled), &H, HEADER_LEN);
        assert!(scan.entries.is_empty());
        assert_eq!(scan.valid_len, HEADER_LEN);
        assert!(scan.bad.is_some_and(|b| b.reason.contains("checksum")));
    }

    #[test]
    fn a_seal_ends_the_scan_and_what_follows_it_is_ignored() {
        let mut seg = segment_numbered(7, &[("a", 1, b"new"), ("b", 2, b"newer")]);
        let end = seg.len();
        seg.extend_from_slice(&encode_seal(7, end as u64));
        let sealed_len = seg.len();
        // Leftovers after it: records of segment 7's own, even (they are not read).
        seg.extend_from_slice(&segment_numbered(7, &[("c", 3, b"leftover")])[HEADER_LEN..]);
        let scan = scan_records(&Bytes::from(seg.clone()), &H, HEADER_LEN);
        assert_eq!(seqs_of(&scan), vec![1, 2]);
        assert!(scan.sealed);
        assert_eq!((scan.bad.clone(), scan.valid_len), (None, sealed_len));
        // A seal whose offset is not its own is damage, not an end.
        let mut moved = segment_numbered(7, &[("a", 1, b"new")]);
        moved.extend_from_slice(&encode_seal(7, 3));
        let scan = scan_records(&Bytes::from(moved), &H, HEADER_LEN);
        assert!(!scan.sealed);
        assert!(
            scan.bad
                .is_some_and(|b| b.reason.contains("malformed seal"))
        );
        // Another segment's seal fails its checksum.
        let mut other = segment_numbered(7, &[("a", 1, b"new")]);
        let at = other.len() as u64;
        other.extend_from_slice(&encode_seal(8, at));
        let scan = scan_records(&Bytes::from(other), &H, HEADER_LEN);
        assert!(!scan.sealed);
        assert!(scan.bad.is_some_and(|b| b.reason.contains("checksum")));
    }

    #[test]
    fn header_round_trips_and_rejects_damage() {
        let h = encode_header(12345, u128::MAX - 3);
        assert_eq!(
            decode_header(&h),
            Ok(SegmentHeader {
                segment: 12345,
                writer: u128::MAX - 3,
                version: FORMAT_VERSION,
                flags: 0,
            })
        );
        for cut in 0..HEADER_LEN {
            assert_eq!(decode_header(&h[..cut]), Err(HeaderError::Short(cut)));
        }
        for i in 0..HEADER_LEN {
            let mut bad = h;
            bad[i] ^= 0x10;
            assert!(decode_header(&bad).is_err(), "flip at {i} accepted");
        }
    }

    #[test]
    fn object_headers_carry_their_time_and_unknown_flags_are_accepted() {
        let ulid = ulid::Ulid::from_parts(1_700_000_000_123, 99);
        let h = decode_header(&encode_object_header(5, ulid.0)).expect("header");
        assert_eq!((h.version, h.flags, h.segment), (1, FLAG_OBJECT_TIME, 5));
        assert_eq!(h.time_ms(), Some(1_700_000_000_123));
        // No flag, no time (local segments; objects of older builds).
        let plain = decode_header(&encode_header_version(5, ulid.0, 1)).expect("header");
        assert_eq!(plain.time_ms(), None);
        // A flag this build does not know does not make the header unreadable.
        let other = decode_header(&encode_header_flags(5, 1, 1, 0x8000_0002)).expect("header");
        assert_eq!((other.flags, other.time_ms()), (0x8000_0002, None));
    }

    #[test]
    fn records_round_trip() {
        let big = vec![7u8; 70_000];
        let seg = segment(&[
            ("r1", 1, b"hello"),
            ("-", 0, b""),
            ("région", u64::MAX, &big),
        ]);
        let scan = scan_records(&seg, &H, HEADER_LEN);
        assert_eq!(scan.bad, None);
        assert_eq!(scan.valid_len, seg.len());
        let got: Vec<_> = scan
            .entries
            .iter()
            .map(|e| (e.region.as_str(), e.seq, e.payload.len()))
            .collect();
        assert_eq!(
            got,
            vec![("r1", 1, 5), ("-", 0, 0), ("région", u64::MAX, 70_000)]
        );
        assert_eq!(&scan.entries[0].payload[..], b"hello");
    }

    #[test]
    fn every_truncation_keeps_exactly_the_whole_records() {
        let seg = segment(&[("a", 1, b"one"), ("b", 2, b"two two"), ("a", 3, b"three")]);
        let ends: Vec<usize> = {
            let s = scan_records(&seg, &H, HEADER_LEN);
            let mut pos = HEADER_LEN;
            s.entries
                .iter()
                .map(|e| {
                    pos += RECORD_PREFIX_LEN + body_len(&e.region, e.payload.len());
                    pos
                })
                .collect()
        };
        for cut in HEADER_LEN..=seg.len() {
            let scan = scan_records(&seg.slice(..cut), &H, HEADER_LEN);
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            assert_eq!(scan.entries.len(), whole, "cut at {cut}");
            assert_eq!(
                scan.bad.is_some(),
                !ends.contains(&cut) && cut != HEADER_LEN,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn every_flip_is_detected_and_nothing_after_it_is_returned() {
        let seg = segment(&[("a", 1, b"one"), ("b", 2, b"two two"), ("a", 3, b"three")]);
        for i in HEADER_LEN..seg.len() {
            for bit in [0x01u8, 0x80] {
                let mut bad = seg.to_vec();
                bad[i] ^= bit;
                let scan = scan_records(&Bytes::from(bad), &H, HEADER_LEN);
                let bad_rec = scan.bad.expect("flip detected");
                assert!(bad_rec.offset <= i);
                assert_eq!(scan.valid_len, bad_rec.offset);
            }
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in 0..2000usize {
            let mut data = Vec::with_capacity(len);
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                data.push(x as u8);
            }
            let data = Bytes::from(data);
            let _ = decode_header(&data);
            let _ = scan_records(&data, &H, 0);
            let _ = scan_records(&data, &SegmentHeader { version: 1, ..H }, 0);
        }
        // A huge length is rejected without allocating it.
        let mut rec = u32::MAX.to_le_bytes().to_vec();
        rec.extend_from_slice(&[0; 12]);
        let scan = scan_records(&Bytes::from(rec), &H, 0);
        assert!(
            scan.bad
                .is_some_and(|b| b.reason.contains("impossible record length"))
        );
    }
}
