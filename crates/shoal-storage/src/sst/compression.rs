//! Block compression kinds and the physical frame every block is stored in.
//!
//! ```text
//! frame   = payload | kind: u8 | crc32c(payload | kind): u32 LE
//! payload = raw bytes                                  (kind 0, none)
//!         | varint raw_len | lz4 block                 (kind 1)
//!         | varint raw_len | zstd frame                (kind 2)
//! ```
//!
//! The checksum is verified before anything else is looked at, and the declared
//! raw length is bounded and must match what the decompressor produced, so a
//! corrupt frame is always an error and never a panic or an oversized allocation.
//! A block that does not shrink by at least 1/8 is stored uncompressed.

use super::varint::{get_len, put_varint};
use serde::Deserialize;

/// Bytes a frame adds after the payload: kind byte and crc32c.
pub const FRAME_TRAILER_LEN: usize = 5;
/// Largest raw block the reader accepts (a block holds at least one cell, and a
/// cell is bounded by the cell model's limits).
pub const MAX_RAW_BLOCK_LEN: usize = 1 << 30;

/// Compression applied to each data block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Stored as is.
    None,
    /// LZ4 block format: fast, modest ratio. The default.
    #[default]
    Lz4,
    /// Zstandard: slower to write, better ratio.
    Zstd,
}

impl Compression {
    /// The kind byte stored in each frame.
    pub fn code(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 1,
            Compression::Zstd => 2,
        }
    }

    /// Parses a kind byte.
    pub fn from_code(code: u8) -> Option<Compression> {
        match code {
            0 => Some(Compression::None),
            1 => Some(Compression::Lz4),
            2 => Some(Compression::Zstd),
            _ => None,
        }
    }

    /// Lower-case name, as used in config.
    pub fn as_str(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

/// Wraps `raw` in a frame, compressing it with `compression` when that pays.
pub(crate) fn seal(raw: &[u8], compression: Compression, zstd_level: i32) -> Vec<u8> {
    let compressed = match compression {
        Compression::None => None,
        Compression::Lz4 => {
            let mut out = Vec::with_capacity(raw.len() / 2 + 16);
            put_varint(&mut out, raw.len() as u64);
            out.extend_from_slice(&lz4_flex::block::compress(raw));
            Some(out)
        }
        Compression::Zstd => {
            let mut out = Vec::with_capacity(raw.len() / 2 + 16);
            put_varint(&mut out, raw.len() as u64);
            // Compressing an in-memory slice only fails on allocation failure or
            // an invalid level; the level is validated by the writer options.
            match zstd::bulk::compress(raw, zstd_level) {
                Ok(z) => {
                    out.extend_from_slice(&z);
                    Some(out)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "zstd compression failed; storing block uncompressed");
                    None
                }
            }
        }
    };
    let (kind, payload): (Compression, &[u8]) = match &compressed {
        Some(c) if c.len() < raw.len() - raw.len() / 8 => (compression, c),
        _ => (Compression::None, raw),
    };
    let mut frame = Vec::with_capacity(payload.len() + FRAME_TRAILER_LEN);
    frame.extend_from_slice(payload);
    frame.push(kind.code());
    let crc = crc32c::crc32c(&frame);
    frame.extend_from_slice(&crc.to_le_bytes());
    frame
}

/// Verifies a frame's checksum and returns the raw block, decompressing if needed.
/// The error is a human-readable reason; callers add the file and offset.
pub(crate) fn unseal(frame: &bytes::Bytes) -> Result<bytes::Bytes, String> {
    check_len(frame)?;
    let body_len = frame.len() - 4;
    let stored = u32::from_le_bytes([
        frame[body_len],
        frame[body_len + 1],
        frame[body_len + 2],
        frame[body_len + 3],
    ]);
    let actual = crc32c::crc32c(&frame[..body_len]);
    if stored != actual {
        return Err(format!(
            "block checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"
        ));
    }
    decode(frame)
}

/// [`unseal`] for a frame whose checksum its source has already verified
/// over every byte (the block cache's verified tiers): the same decoding
/// and the same errors for a malformed frame, without a second pass of the
/// checksum over the bytes.
pub(crate) fn unseal_verified(frame: &bytes::Bytes) -> Result<bytes::Bytes, String> {
    check_len(frame)?;
    decode(frame)
}

fn check_len(frame: &bytes::Bytes) -> Result<(), String> {
    if frame.len() < FRAME_TRAILER_LEN {
        return Err(format!(
            "block frame of {} bytes is shorter than its trailer",
            frame.len()
        ));
    }
    Ok(())
}

/// The raw block of a frame at least [`FRAME_TRAILER_LEN`] long.
fn decode(frame: &bytes::Bytes) -> Result<bytes::Bytes, String> {
    let payload_len = frame.len() - FRAME_TRAILER_LEN;
    let kind = Compression::from_code(frame[payload_len])
        .ok_or_else(|| format!("unknown compression kind {}", frame[payload_len]))?;
    let payload = &frame[..payload_len];
    if kind == Compression::None {
        return Ok(frame.slice(..payload_len));
    }
    let mut pos = 0;
    let raw_len = get_len(payload, &mut pos, MAX_RAW_BLOCK_LEN)
        .ok_or("bad or oversized raw length in compressed block")?;
    let body = &payload[pos..];
    // LZ4 cannot expand a byte more than 255-fold; refuse to allocate for a
    // length no valid block could have.
    if kind == Compression::Lz4 && raw_len > body.len().saturating_mul(255).saturating_add(16) {
        return Err(format!(
            "lz4 block of {} bytes cannot hold {raw_len} raw bytes",
            body.len()
        ));
    }
    let raw = match kind {
        Compression::Lz4 => lz4_flex::block::decompress(body, raw_len)
            .map_err(|e| format!("lz4 block does not decompress: {e}"))?,
        Compression::Zstd => {
            // Stream into a vector that grows with the real output, so a frame
            // that merely *claims* a huge size cannot make us allocate it.
            use std::io::Read;
            let mut out = Vec::with_capacity(raw_len.min(body.len().saturating_mul(4) + 4096));
            zstd::stream::read::Decoder::with_buffer(body)
                .and_then(|d| d.take(raw_len as u64 + 1).read_to_end(&mut out))
                .map_err(|e| format!("zstd block does not decompress: {e}"))?;
            out
        }
        Compression::None => unreachable!("handled above"),
    };
    if raw.len() != raw_len {
        return Err(format!(
            "block decompressed to {} bytes, header says {raw_len}",
            raw.len()
        ));
    }
    Ok(bytes::Bytes::from(raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn every_kind_round_trips() {
        let compressible: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
        let random: Vec<u8> = (0..1000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for kind in [Compression::None, Compression::Lz4, Compression::Zstd] {
            for raw in [&compressible[..], &random[..], &[][..]] {
                let frame = Bytes::from(seal(raw, kind, 3));
                assert_eq!(unseal(&frame).unwrap(), raw, "{kind:?}");
            }
        }
        let lz = seal(&compressible, Compression::Lz4, 3);
        assert_eq!(lz[lz.len() - 5], Compression::Lz4.code());
        assert!(lz.len() < compressible.len() / 4);
    }

    #[test]
    fn any_flipped_bit_is_detected() {
        let raw: Vec<u8> = (0..300u32).map(|i| (i % 11) as u8).collect();
        for kind in [Compression::None, Compression::Lz4, Compression::Zstd] {
            let frame = seal(&raw, kind, 3);
            for i in 0..frame.len() {
                for bit in 0..8 {
                    let mut bad = frame.clone();
                    bad[i] ^= 1 << bit;
                    assert!(
                        unseal(&Bytes::from(bad)).is_err(),
                        "{kind:?} byte {i} bit {bit}"
                    );
                }
            }
        }
    }

    #[test]
    fn unchecksummed_garbage_is_an_error() {
        // A valid checksum over a lying length header must still be rejected.
        let mut body = Vec::new();
        put_varint(&mut body, 1 << 29);
        body.extend_from_slice(b"nonsense");
        body.push(Compression::Lz4.code());
        let crc = crc32c::crc32c(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        assert!(unseal(&Bytes::from(body)).is_err());
        assert!(unseal(&Bytes::from_static(b"abc")).is_err());

        // A real zstd frame whose header claims 1 GiB: an error, not a 1 GiB buffer.
        let mut body = Vec::new();
        put_varint(&mut body, 1 << 30);
        body.extend_from_slice(&zstd::bulk::compress(b"tiny", 3).unwrap());
        body.push(Compression::Zstd.code());
        let crc = crc32c::crc32c(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        let err = unseal(&Bytes::from(body)).unwrap_err();
        assert!(err.contains("decompressed to 4 bytes"), "{err}");
    }
}
