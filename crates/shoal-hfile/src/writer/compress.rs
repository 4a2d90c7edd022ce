//! Block payload compression as HBase's codecs write it: GZ is one gzip stream (as
//! `ReusableStreamGzipCodec`); SNAPPY is Hadoop's `BlockCompressorStream` framing, here
//! one frame per 64 KiB piece: `[u32 BE piece length][u32 BE compressed length][raw
//! snappy block]`. Both are what [`crate::compression`] (and HBase) read back.

use crate::compression::Compression;
use std::io::Write;

/// Uncompressed bytes per snappy frame: well under the 256 KiB buffers of HBase's and
/// Hadoop's snappy decompressors.
const SNAPPY_PIECE: usize = 64 * 1024;

/// Codecs the writer can write.
pub(crate) fn can_write(codec: Compression) -> bool {
    matches!(
        codec,
        Compression::None | Compression::Gz | Compression::Snappy
    )
}

/// `data` compressed with `codec` (one of [`can_write`]).
pub(crate) fn compress(codec: Compression, data: &[u8]) -> std::io::Result<Vec<u8>> {
    match codec {
        Compression::Gz => {
            let mut e = flate2::write::GzEncoder::new(
                Vec::with_capacity(data.len() / 2 + 64),
                flate2::Compression::default(),
            );
            e.write_all(data)?;
            e.finish()
        }
        Compression::Snappy => {
            let mut out = Vec::with_capacity(data.len() / 2 + 64);
            let mut encoder = snap::raw::Encoder::new();
            for piece in data.chunks(SNAPPY_PIECE) {
                let z = encoder
                    .compress_vec(piece)
                    .map_err(|e| std::io::Error::other(format!("snappy: {e}")))?;
                out.extend_from_slice(&(piece.len() as u32).to_be_bytes());
                out.extend_from_slice(&(z.len() as u32).to_be_bytes());
                out.extend_from_slice(&z);
            }
            Ok(out)
        }
        _ => Ok(data.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_decompresses_what_is_written() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        for codec in [Compression::None, Compression::Gz, Compression::Snappy] {
            for len in [0, 1, 1000, SNAPPY_PIECE, SNAPPY_PIECE + 1, data.len()] {
                let z = compress(codec, &data[..len]).expect("compress");
                let back = codec.decompress(&z, len).expect("decompress");
                assert_eq!(back, &data[..len], "{codec:?} {len}");
            }
        }
    }
}
