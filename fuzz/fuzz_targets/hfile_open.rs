//! Arbitrary bytes as a whole HBase HFile: `HFile::open`, every cell, the multi-level
//! index walk, the first and last keys. Must never panic or allocate without bound.
//!
//! Every block carries HBase checksums, so mutated files mostly fail them. To get past
//! them, each input is also tried with the checksums of every block recomputed (walking
//! the blocks from offset 0 while their headers parse), which drives mutated bytes into
//! the decompressors, the index and file info parsers and the cell decoders.

#![no_main]

use libfuzzer_sys::fuzz_target;
use shoal_hfile::HFile;

/// Enough cells for any input the fuzzer makes (each cell takes bytes).
const MAX_CELLS: usize = 1 << 20;
const HEADER_LEN: usize = 33;

fn exercise(bytes: &[u8]) {
    let Ok(file) = HFile::open(bytes, "fuzz.hfile") else {
        return;
    };
    let mut n = 0;
    for cell in file.cells() {
        if cell.is_err() {
            break;
        }
        n += 1;
        assert!(n <= MAX_CELLS);
    }
    let _ = file.data_block_offsets();
    let _ = file.data_block_count();
    let _ = file.first_key();
    let _ = file.last_key();
}

fn be32(bytes: &[u8], at: usize) -> Option<usize> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

/// Recomputes the checksums of the block at `offset`; returns the next block's offset.
fn fix_block(file: &mut [u8], offset: usize) -> Option<usize> {
    let on_disk = be32(file, offset + 8)?;
    let kind = *file.get(offset + 24)?;
    let per = be32(file, offset + 25)?;
    let data_len = be32(file, offset + 29)?;
    let end = offset.checked_add(HEADER_LEN)?.checked_add(on_disk)?;
    if end > file.len() || per == 0 || data_len < HEADER_LEN || offset + data_len > end {
        return None;
    }
    let sums: Vec<u8> = file[offset..offset + data_len]
        .chunks(per)
        .flat_map(|c| match kind {
            1 => crc32fast::hash(c).to_be_bytes(),
            _ => crc32c::crc32c(c).to_be_bytes(),
        })
        .collect();
    let at = offset + data_len;
    if kind != 0 && at + sums.len() <= end {
        file[at..at + sums.len()].copy_from_slice(&sums);
    }
    Some(end)
}

fuzz_target!(|data: &[u8]| {
    exercise(data);
    let mut fixed = data.to_vec();
    let mut offset = 0;
    while let Some(next) = fix_block(&mut fixed, offset) {
        offset = next;
    }
    if fixed != data {
        exercise(&fixed);
    }
});
