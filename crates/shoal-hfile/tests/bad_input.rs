//! Damaged and foreign input, built from the HBase-written fixtures: every failure is an
//! error naming the file and a byte offset, never a panic and never wrong cells.

mod support;

use shoal_hfile::{ErrorKind, HCell, HFile, HFileError, ReadAt};
use std::io;
use support::{fixtures_dir, read};

fn fixture(name: &str) -> Vec<u8> {
    read(&fixtures_dir().join(name))
}

fn open_and_read<S: ReadAt>(source: S) -> Result<Vec<HCell>, HFileError> {
    let f = HFile::open(source, "damaged.hfile")?;
    f.cells().collect()
}

fn assert_names_offset(e: &HFileError) {
    let text = e.to_string();
    assert!(
        text.starts_with("damaged.hfile: at byte "),
        "error does not name file and offset: {text}"
    );
}

#[test]
fn foreign_bytes_are_not_an_hfile() {
    let text = b"hello, this is not an HFile at all\n".repeat(200);
    for bytes in [Vec::new(), vec![0; 3], vec![0; 10_000], text] {
        let e = open_and_read(bytes).expect_err("not an HFile");
        assert!(matches!(e.kind, ErrorKind::NotAnHFile(_)), "{e}");
        assert_names_offset(&e);
    }
}

#[test]
fn truncated_files_fail_with_an_offset() {
    let bytes = fixture("FAST_DIFF-SNAPPY.hfile");
    let step = bytes.len() / 150;
    for cut in (0..bytes.len())
        .step_by(step)
        .chain(bytes.len() - 5000..bytes.len())
    {
        let e = open_and_read(bytes[..cut].to_vec()).expect_err("truncated");
        assert_names_offset(&e);
    }
}

/// A source that knows the file's full length but whose bytes end early (an interrupted
/// copy): reads past `cut` fail.
struct CutShort {
    bytes: Vec<u8>,
    cut: usize,
}

impl ReadAt for CutShort {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let start = offset as usize;
        if start + len > self.cut {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "cut short"));
        }
        self.bytes.read_at(offset, len)
    }
}

#[test]
fn bytes_missing_inside_the_file_fail_as_truncated() {
    let bytes = fixture("PREFIX-GZ.hfile");
    let step = bytes.len() / 120;
    for cut in (0..bytes.len()).step_by(step) {
        let source = CutShort {
            bytes: bytes.clone(),
            cut,
        };
        let e = open_and_read(source).expect_err("cut short");
        assert!(matches!(e.kind, ErrorKind::Truncated(_)), "cut {cut}: {e}");
        assert_names_offset(&e);
        assert!(
            e.offset < bytes.len() as u64,
            "cut {cut}: error at {}",
            e.offset
        );
    }
}

/// Offset and header fields of the block at `offset`: (on-disk length, checksum type,
/// bytes per checksum, data size with header).
fn block_layout(bytes: &[u8], offset: usize) -> (usize, u8, usize, usize) {
    let be32 = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    (
        33 + be32(offset + 8) as usize,
        bytes[offset + 24],
        be32(offset + 25) as usize,
        be32(offset + 29) as usize,
    )
}

/// Rewrites the checksums of the block at `offset` after its bytes were changed.
fn fix_checksums(bytes: &mut [u8], offset: usize) {
    let (_, kind, per, data_len) = block_layout(bytes, offset);
    let sums: Vec<u8> = bytes[offset..offset + data_len]
        .chunks(per)
        .flat_map(|chunk| match kind {
            1 => crc32fast::hash(chunk).to_be_bytes(),
            _ => crc32c::crc32c(chunk).to_be_bytes(),
        })
        .collect();
    let at = offset + data_len;
    bytes[at..at + sums.len()].copy_from_slice(&sums);
}

/// Offsets of the data blocks of an uncompressed fixture.
fn data_blocks(bytes: &[u8]) -> Vec<u64> {
    let f = HFile::open(bytes.to_vec(), "x").expect("fixture opens");
    f.data_block_offsets()
        .expect("index")
        .into_iter()
        .map(|e| e.offset)
        .collect()
}

#[test]
fn a_flipped_byte_in_a_data_block_is_a_checksum_error() {
    for name in [
        "NONE-NONE.hfile",
        "FAST_DIFF-GZ.hfile",
        "NONE-NONE-crc32.hfile",
    ] {
        let bytes = fixture(name);
        for block in data_blocks(&bytes).into_iter().step_by(7) {
            let (len, ..) = block_layout(&bytes, block as usize);
            for at in [
                block as usize + 40,
                block as usize + len / 2,
                block as usize + len - 1,
            ] {
                let mut bad = bytes.clone();
                bad[at] ^= 0x04;
                let e = open_and_read(bad).expect_err("flipped byte");
                assert!(
                    matches!(e.kind, ErrorKind::ChecksumMismatch { .. }),
                    "{name}: {e}"
                );
                assert_eq!(e.offset, block, "{name}: {e}");
                assert!(
                    e.to_string()
                        .contains(&format!("in block at offset {block}"))
                );
            }
        }
    }
}

#[test]
fn an_unknown_encoding_id_is_refused() {
    let mut bytes = fixture("FAST_DIFF-NONE.hfile");
    let block = data_blocks(&bytes)[3] as usize;
    bytes[block + 33..block + 35].copy_from_slice(&6u16.to_be_bytes()); // PREFIX_TREE, gone
    fix_checksums(&mut bytes, block);
    let e = open_and_read(bytes).expect_err("unknown encoding");
    assert!(matches!(e.kind, ErrorKind::UnknownEncodingId(6)), "{e}");
    assert_eq!(e.offset, block as u64);
}

#[test]
fn a_cell_overrunning_its_block_is_refused() {
    let mut bytes = fixture("NONE-NONE.hfile");
    let block = data_blocks(&bytes)[2] as usize;
    // The first cell's value length, made larger than the block.
    bytes[block + 37..block + 41].copy_from_slice(&100_000u32.to_be_bytes());
    fix_checksums(&mut bytes, block);
    let e = open_and_read(bytes).expect_err("overrun");
    assert!(matches!(e.kind, ErrorKind::CellOverrunsBlock(_)), "{e}");
    assert_eq!(e.offset, block as u64);
}

#[test]
fn cells_out_of_order_are_refused() {
    let mut bytes = fixture("NONE-NONE.hfile");
    let block = data_blocks(&bytes)[5] as usize;
    // The first row byte of the block's first cell, made smaller than any row before.
    let at = block + 33 + 8 + 2;
    bytes[at] = 0;
    bytes[at + 1..at + 4].copy_from_slice(&[0, 0, 0]);
    fix_checksums(&mut bytes, block);
    let e = open_and_read(bytes).expect_err("out of order");
    assert!(matches!(e.kind, ErrorKind::OutOfOrder(_)), "{e}");
}

/// Position of the trailer's compression codec value (field 12) in a v3 fixture whose
/// codec is NONE (ordinal 2).
fn codec_position(bytes: &[u8]) -> usize {
    let trailer = bytes.len() - 4096;
    let name = b"KeyValue$KVComparator";
    let at = bytes[trailer..]
        .windows(name.len())
        .position(|w| w == name)
        .expect("comparator name in trailer")
        + trailer
        + name.len();
    assert_eq!(
        &bytes[at..at + 2],
        &[0x60, 2],
        "field 12 follows the comparator"
    );
    at + 1
}

#[test]
fn unsupported_compressions_are_refused_by_name() {
    let bytes = fixture("NONE-NONE.hfile");
    let at = codec_position(&bytes);
    for (ordinal, name) in [(0u8, "lzo"), (5, "bzip2"), (7, "lzma"), (8, "brotli")] {
        let mut bad = bytes.clone();
        bad[at] = ordinal;
        let e = open_and_read(bad).expect_err("unsupported");
        assert!(
            matches!(e.kind, ErrorKind::UnsupportedCompression(n) if n == name),
            "{e}"
        );
        assert!(e.to_string().contains("unsupported compression"), "{e}");
    }
    let mut bad = bytes.clone();
    bad[at] = 9;
    let e = open_and_read(bad).expect_err("unknown codec");
    assert!(matches!(e.kind, ErrorKind::UnknownCompression(9)), "{e}");
}

#[test]
fn a_wrong_codec_fails_to_decompress() {
    let mut bytes = fixture("NONE-NONE.hfile");
    let at = codec_position(&bytes);
    bytes[at] = 3; // SNAPPY, but the blocks are plain
    let e = open_and_read(bytes).expect_err("wrong codec");
    assert!(matches!(e.kind, ErrorKind::Decompression { .. }), "{e}");
}

/// xorshift64*, enough to pick bytes to damage reproducibly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn random_damage_never_panics_nor_changes_cells() {
    // HFILE_DAMAGE_ROUNDS and HFILE_DAMAGE_SEED run it longer or differently.
    let rounds: usize = std::env::var("HFILE_DAMAGE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let seed: u64 = std::env::var("HFILE_DAMAGE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1234_abcd_0001);
    let mut rng = Rng(seed | 1);
    for name in [
        "NONE-NONE.hfile",
        "FAST_DIFF-GZ.hfile",
        "ROW_INDEX_V1-SNAPPY.hfile",
        "DIFF-LZ4.hfile",
        "PREFIX-ZSTD.hfile",
        "v2-FAST_DIFF-SNAPPY.hfile",
    ] {
        let bytes = fixture(name);
        let good = open_and_read(bytes.clone()).expect("fixture reads");
        for round in 0..rounds {
            let mut bad = bytes.clone();
            // Mostly near the end (trailer and load-on-open), else anywhere.
            let span = if round % 2 == 0 {
                6000.min(bad.len())
            } else {
                bad.len()
            };
            let mut flipped = Vec::new();
            for _ in 0..1 + rng.below(3) {
                let at = bad.len() - 1 - rng.below(span);
                bad[at] ^= 1 << rng.below(8);
                flipped.push(at);
            }
            match open_and_read(bad) {
                Ok(cells) => assert!(
                    cells == good,
                    "{name} round {round}: different cells after flipping bytes {flipped:?} (file of {})",
                    bytes.len()
                ),
                Err(e) => assert_names_offset(&e),
            }
        }
    }
}
