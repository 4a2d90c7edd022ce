//! Bloom filter over a file's rows (or row + qualifier pairs).
//!
//! ```text
//! bloom block = kind: u8 | probes: u8 | bit array (bit i is byte i/8, bit i%8)
//! ```
//!
//! The hash is FNV-1a 64 over the filter key followed by MurmurHash3's fmix64
//! finalizer; probe `i` (0 ≤ i < probes) sets bit `(h + i·δ) mod m` where
//! `δ = rotl(h, 32) | 1` and `m` is the bit count (double hashing, as in
//! Kirsch–Mitzenmacher). The filter key is the row for [`BloomKind::Row`] and
//! `row_len: u16 BE | row | qualifier` for [`BloomKind::RowCol`]. At the default
//! 10 bits per key and 7 probes the false-positive rate is about 0.8%.

use serde::Deserialize;

/// What the bloom filter indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BloomKind {
    /// No filter.
    None,
    /// Rows: answers "may this file hold row R?". The default (HBase's ROW).
    #[default]
    Row,
    /// Row and qualifier: answers "may this file hold column R:Q?" (HBase's ROWCOL).
    RowCol,
}

impl BloomKind {
    /// The kind byte stored in the bloom block.
    pub fn code(self) -> u8 {
        match self {
            BloomKind::None => 0,
            BloomKind::Row => 1,
            BloomKind::RowCol => 2,
        }
    }

    /// Parses a kind byte.
    pub fn from_code(code: u8) -> Option<BloomKind> {
        match code {
            0 => Some(BloomKind::None),
            1 => Some(BloomKind::Row),
            2 => Some(BloomKind::RowCol),
            _ => None,
        }
    }
}

/// The filter's 64-bit hash of a key.
pub fn bloom_hash(key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    fmix64(h)
}

/// Hash of a (row, qualifier) pair, as [`BloomKind::RowCol`] filters it.
pub fn row_col_hash(row: &[u8], qualifier: &[u8]) -> u64 {
    let mut key = Vec::with_capacity(2 + row.len() + qualifier.len());
    key.extend_from_slice(&(row.len().min(u16::MAX as usize) as u16).to_be_bytes());
    key.extend_from_slice(row);
    key.extend_from_slice(qualifier);
    bloom_hash(&key)
}

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

fn probe_positions(h: u64, probes: u8, bits: u64) -> impl Iterator<Item = u64> {
    let delta = h.rotate_left(32) | 1;
    (0..u64::from(probes)).map(move |i| h.wrapping_add(i.wrapping_mul(delta)) % bits)
}

/// Collects key hashes while a file is written, then sizes and builds the filter.
#[derive(Debug)]
pub(crate) struct BloomBuilder {
    kind: BloomKind,
    bits_per_key: u32,
    hashes: Vec<u64>,
}

impl BloomBuilder {
    pub(crate) fn new(kind: BloomKind, bits_per_key: u32) -> BloomBuilder {
        BloomBuilder {
            kind,
            bits_per_key,
            hashes: Vec::new(),
        }
    }

    /// Records one key's hash. Callers skip consecutive duplicates.
    pub(crate) fn add_hash(&mut self, h: u64) {
        self.hashes.push(h);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The encoded bloom block (unframed).
    pub(crate) fn finish(self) -> Vec<u8> {
        let n = self.hashes.len() as u64;
        let bits = (n * u64::from(self.bits_per_key)).max(64).div_ceil(8) * 8;
        // ln 2 · bits/key probes minimise the false-positive rate.
        let probes = ((f64::from(self.bits_per_key) * 0.69).round() as u8).clamp(1, 30);
        let mut out = vec![0u8; 2 + (bits / 8) as usize];
        out[0] = self.kind.code();
        out[1] = probes;
        let array = &mut out[2..];
        for h in self.hashes {
            for p in probe_positions(h, probes, bits) {
                array[(p / 8) as usize] |= 1 << (p % 8);
            }
        }
        out
    }
}

/// A decoded bloom filter.
#[derive(Debug, Clone)]
pub struct BloomFilter {
    kind: BloomKind,
    probes: u8,
    bits: bytes::Bytes,
}

impl BloomFilter {
    /// Parses a bloom block; the error is a human-readable reason.
    pub fn decode(block: bytes::Bytes) -> Result<BloomFilter, String> {
        if block.len() < 3 {
            return Err(format!("bloom block of {} bytes is too short", block.len()));
        }
        let kind = BloomKind::from_code(block[0])
            .ok_or_else(|| format!("unknown bloom kind {}", block[0]))?;
        if kind == BloomKind::None {
            return Err("bloom block of kind none".into());
        }
        let probes = block[1];
        if probes == 0 || probes > 30 {
            return Err(format!("bloom block has {probes} probes"));
        }
        Ok(BloomFilter {
            kind,
            probes,
            bits: block.slice(2..),
        })
    }

    /// What this filter indexes.
    pub fn kind(&self) -> BloomKind {
        self.kind
    }

    /// False only if the key's hash was certainly never added.
    pub fn may_contain_hash(&self, h: u64) -> bool {
        let bits = self.bits.len() as u64 * 8;
        probe_positions(h, self.probes, bits)
            .all(|p| self.bits[(p / 8) as usize] & (1 << (p % 8)) != 0)
    }

    /// Bytes of the bit array.
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    /// True if the bit array is empty (never for a decoded filter).
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives() {
        let mut b = BloomBuilder::new(BloomKind::Row, 10);
        for i in 0..20_000u32 {
            b.add_hash(bloom_hash(format!("user{i}").as_bytes()));
        }
        let f = BloomFilter::decode(bytes::Bytes::from(b.finish())).unwrap();
        for i in 0..20_000u32 {
            assert!(f.may_contain_hash(bloom_hash(format!("user{i}").as_bytes())));
        }
        let fp = (0..100_000u32)
            .filter(|i| f.may_contain_hash(bloom_hash(format!("other{i}").as_bytes())))
            .count();
        // Expected ~0.8%; allow generous slack so the test is about behaviour.
        assert!(fp < 2_000, "{fp} false positives in 100000");
    }

    #[test]
    fn hash_is_stable() {
        // Part of the file format: these values must never change.
        assert_eq!(bloom_hash(b""), fmix64(0xcbf2_9ce4_8422_2325));
        assert_eq!(bloom_hash(b"row1"), bloom_hash(b"row1"));
        assert_ne!(row_col_hash(b"ab", b"c"), row_col_hash(b"a", b"bc"));
    }

    #[test]
    fn malformed_blocks_are_errors() {
        assert!(BloomFilter::decode(bytes::Bytes::from_static(&[1, 7])).is_err());
        assert!(BloomFilter::decode(bytes::Bytes::from_static(&[9, 7, 0])).is_err());
        assert!(BloomFilter::decode(bytes::Bytes::from_static(&[1, 0, 0])).is_err());
    }
}
