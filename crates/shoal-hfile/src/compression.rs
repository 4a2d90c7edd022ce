//! Decompression of block payloads with the codec the trailer names.
//!
//! GZ is a gzip stream. SNAPPY, LZ4 and ZSTD as HBase's and Hadoop's codecs write them
//! are framed by Hadoop's `BlockCompressorStream`: repeated
//! `[u32 BE uncompressed length of this chunk]` followed by one or more
//! `[u32 BE compressed length][compressed bytes]` until that many bytes came out; each
//! compressed piece is a raw snappy block, a raw LZ4 block, or a zstd frame. Hadoop's own
//! `ZStandardCodec` writes a plain zstd stream instead, recognised by the zstd magic.
//! Output is limited to the block's declared uncompressed size and never allocated
//! beyond what the input could produce.

use std::io::Read;

/// The codecs of HBase's `Compression.Algorithm`, in ordinal order (the trailer stores
/// the ordinal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Lzo,
    Gz,
    None,
    Snappy,
    Lz4,
    Bzip2,
    Zstd,
    Lzma,
    Brotli,
}

const ORDER: [Compression; 9] = [
    Compression::Lzo,
    Compression::Gz,
    Compression::None,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Bzip2,
    Compression::Zstd,
    Compression::Lzma,
    Compression::Brotli,
];

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// A snappy copy element of 2 bytes makes at most 11 bytes; of 3 bytes, at most 64.
const SNAPPY_MAX_RATIO: usize = 32;
/// LZ4 cannot expand a byte into more than 255.
const LZ4_MAX_RATIO: usize = 255;

/// Why a payload did not decompress.
#[derive(Debug)]
pub(crate) enum DecompressError {
    Unsupported(&'static str),
    Failed(&'static str, String),
}

impl Compression {
    pub fn from_ordinal(ordinal: u32) -> Option<Compression> {
        ORDER.get(usize::try_from(ordinal).ok()?).copied()
    }

    pub fn ordinal(self) -> u32 {
        ORDER.iter().position(|c| *c == self).unwrap_or(2) as u32
    }

    /// HBase's lower-case name of the codec (`"gz"`, `"snappy"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Compression::Lzo => "lzo",
            Compression::Gz => "gz",
            Compression::None => "none",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
            Compression::Lzma => "lzma",
            Compression::Brotli => "brotli",
        }
    }

    /// True if this reader can decompress the codec.
    pub fn is_supported(self) -> bool {
        matches!(
            self,
            Compression::None
                | Compression::Gz
                | Compression::Snappy
                | Compression::Lz4
                | Compression::Zstd
        )
    }

    /// Decompresses `input` into exactly `expected` bytes.
    pub(crate) fn decompress(
        self,
        input: &[u8],
        expected: usize,
    ) -> Result<Vec<u8>, DecompressError> {
        let name = self.name();
        let out = match self {
            Compression::None => input.to_vec(),
            Compression::Gz => {
                gunzip(input, expected).map_err(|e| DecompressError::Failed(name, e))?
            }
            Compression::Snappy | Compression::Lz4 => {
                unblock(input, expected, self).map_err(|e| DecompressError::Failed(name, e))?
            }
            Compression::Zstd if input.starts_with(&ZSTD_MAGIC) => {
                zstd_stream(input, expected).map_err(|e| DecompressError::Failed(name, e))?
            }
            Compression::Zstd => {
                unblock(input, expected, self).map_err(|e| DecompressError::Failed(name, e))?
            }
            Compression::Lzo | Compression::Bzip2 | Compression::Lzma | Compression::Brotli => {
                return Err(DecompressError::Unsupported(name));
            }
        };
        if out.len() != expected {
            return Err(DecompressError::Failed(
                name,
                format!("{} bytes came out, the header says {expected}", out.len()),
            ));
        }
        Ok(out)
    }
}

/// Reads at most `limit` bytes (and one more, to detect overlong output) from a reader.
fn read_limited(reader: impl Read, limit: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

fn gunzip(input: &[u8], expected: usize) -> Result<Vec<u8>, String> {
    read_limited(flate2::read::MultiGzDecoder::new(input), expected)
}

fn zstd_stream(input: &[u8], expected: usize) -> Result<Vec<u8>, String> {
    let decoder = zstd::stream::read::Decoder::new(input).map_err(|e| e.to_string())?;
    read_limited(decoder, expected)
}

/// Undoes Hadoop's `BlockCompressorStream` framing until `expected` bytes came out.
fn unblock(input: &[u8], expected: usize, codec: Compression) -> Result<Vec<u8>, String> {
    let mut c = crate::cursor::Cursor::new(input);
    let mut out = Vec::new();
    while out.len() < expected {
        let chunk_len = c.u32("uncompressed chunk length")? as usize;
        if chunk_len == 0 || chunk_len > expected - out.len() {
            return Err(format!(
                "chunk of {chunk_len} bytes with {} still expected",
                expected - out.len()
            ));
        }
        let chunk_end = out.len() + chunk_len;
        while out.len() < chunk_end {
            let piece_len = c.u32("compressed piece length")? as usize;
            let piece = c.take(piece_len, "compressed piece")?;
            decompress_piece(piece, chunk_end - out.len(), codec, &mut out)?;
        }
        if out.len() > chunk_end {
            return Err("chunk decompressed to more than its stated length".into());
        }
    }
    Ok(out)
}

/// Decompresses one compressed piece, appending at most `room` bytes to `out`.
fn decompress_piece(
    piece: &[u8],
    room: usize,
    codec: Compression,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let start = out.len();
    match codec {
        Compression::Snappy => {
            let n = snap::raw::decompress_len(piece).map_err(|e| e.to_string())?;
            if n > room
                || n > piece
                    .len()
                    .saturating_mul(SNAPPY_MAX_RATIO)
                    .saturating_add(32)
            {
                return Err(format!("snappy piece of {n} bytes overruns its chunk"));
            }
            out.resize(start + n, 0);
            snap::raw::Decoder::new()
                .decompress(piece, &mut out[start..])
                .map_err(|e| e.to_string())?;
        }
        Compression::Lz4 => {
            let bound = room.min(piece.len().saturating_mul(LZ4_MAX_RATIO).saturating_add(16));
            out.resize(start + bound, 0);
            let n = lz4_flex::block::decompress_into(piece, &mut out[start..])
                .map_err(|e| e.to_string())?;
            out.truncate(start + n);
        }
        _ => {
            let decoder = zstd::stream::read::Decoder::new(piece).map_err(|e| e.to_string())?;
            let got = read_limited(decoder, room)?;
            out.extend_from_slice(&got);
        }
    }
    if out.len() == start {
        return Err("compressed piece produced no bytes".into());
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod framing {
    //! Hadoop `BlockCompressorStream` framing for hand-built test data.
    use super::Compression;
    use std::io::Write;

    /// Compresses `data` as the HBase codec for `codec` frames it, in chunks of at most
    /// `chunk` bytes each split into two compressed pieces when long enough.
    pub fn compress(codec: Compression, data: &[u8], chunk: usize) -> Vec<u8> {
        match codec {
            Compression::None => data.to_vec(),
            Compression::Gz => {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).expect("gzip");
                e.finish().expect("gzip")
            }
            _ => {
                let mut out = Vec::new();
                for c in data.chunks(chunk.max(1)) {
                    out.extend_from_slice(&(c.len() as u32).to_be_bytes());
                    let (a, b) = c.split_at(c.len() / 2);
                    for piece in [a, b].into_iter().filter(|p| !p.is_empty()) {
                        let z = piece_bytes(codec, piece);
                        out.extend_from_slice(&(z.len() as u32).to_be_bytes());
                        out.extend_from_slice(&z);
                    }
                }
                out
            }
        }
    }

    fn piece_bytes(codec: Compression, piece: &[u8]) -> Vec<u8> {
        match codec {
            Compression::Snappy => snap::raw::Encoder::new()
                .compress_vec(piece)
                .expect("snappy"),
            Compression::Lz4 => lz4_flex::block::compress(piece),
            _ => zstd::bulk::compress(piece, 3).expect("zstd"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        (0..5000u32).flat_map(|i| (i % 97).to_be_bytes()).collect()
    }

    #[test]
    fn every_supported_codec_round_trips() {
        let data = sample();
        for codec in [
            Compression::None,
            Compression::Gz,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            for chunk in [7, 4096, 1 << 20] {
                let z = framing::compress(codec, &data, chunk);
                let out = codec.decompress(&z, data.len()).expect("decompress");
                assert_eq!(out, data, "{codec:?} chunk {chunk}");
            }
        }
    }

    #[test]
    fn raw_zstd_stream_is_detected() {
        let data = sample();
        let z = zstd::stream::encode_all(data.as_slice(), 3).expect("zstd");
        assert_eq!(
            Compression::Zstd.decompress(&z, data.len()).expect("zstd"),
            data
        );
    }

    #[test]
    fn wrong_sizes_and_garbage_fail() {
        let data = sample();
        for codec in [
            Compression::Gz,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let z = framing::compress(codec, &data, 4096);
            assert!(
                codec.decompress(&z, data.len() + 1).is_err(),
                "{codec:?} longer"
            );
            assert!(
                codec.decompress(&z, data.len() - 1).is_err(),
                "{codec:?} shorter"
            );
            assert!(codec.decompress(&z[..z.len() / 2], data.len()).is_err());
            assert!(codec.decompress(&[0xff; 64], data.len()).is_err());
        }
    }

    #[test]
    fn unsupported_codecs_say_so() {
        for codec in [
            Compression::Lzo,
            Compression::Bzip2,
            Compression::Lzma,
            Compression::Brotli,
        ] {
            assert!(matches!(
                codec.decompress(b"x", 1),
                Err(DecompressError::Unsupported(_))
            ));
        }
    }
}
