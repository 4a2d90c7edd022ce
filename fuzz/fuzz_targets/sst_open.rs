//! Arbitrary bytes as a whole SST in a `MemoryFetcher`: `SstReader::open`, a full
//! scan, a point lookup and bloom probes. Must never panic.
//!
//! Every block and the footer carry a crc32c, so mutated files almost always
//! fail the checksum. To get past it, each input is also tried with its
//! checksums recomputed: the footer's, then the tail blocks' (index, bloom,
//! meta) that the footer points at, then, if the file opens, every data block's.
//! That drives mutated bytes into the index, meta and bloom decoders, the
//! decompressors and the block iterator.

#![no_main]

use libfuzzer_sys::fuzz_target;
use shoal_storage::cell::KeyRef;
use shoal_storage::sst::{
    BlockFetcher, FOOTER_LEN, FileId, Footer, MemoryFetcher, ScanRange, SstFile, SstReader,
};
use std::sync::Arc;

const PATH: &str = "fuzz.sst";
/// Enough cells for any input the fuzzer makes (each cell takes bytes).
const MAX_CELLS: usize = 1 << 20;

fn file() -> SstFile {
    SstFile {
        id: FileId(1),
        path: PATH.into(),
    }
}

async fn open(bytes: &[u8], open_read_size: u64) -> Option<SstReader> {
    let fetcher = Arc::new(MemoryFetcher::new());
    fetcher.insert(PATH, bytes.to_vec());
    let fetcher: Arc<dyn BlockFetcher> = fetcher;
    SstReader::open_with(fetcher, file(), open_read_size)
        .await
        .ok()
}

async fn exercise(reader: &SstReader) {
    let mut it = reader.iter(ScanRange::all());
    let mut n = 0;
    while let Ok(Some(_)) = it.next().await {
        n += 1;
        assert!(n <= MAX_CELLS);
    }
    let meta = reader.meta();
    let first_row = meta.first_key.row.clone();
    let _ = reader
        .first_at_or_after(KeyRef::first_of_row(&first_row))
        .await;
    let _ = reader.first_at_or_after(KeyRef::first_of_row(b"m")).await;
    let _ = reader.may_contain_row(&first_row);
    let _ = reader.may_contain_row(b"m");
    let _ = reader.may_contain_column(&first_row, b"q");
    let mut it = reader.iter(ScanRange::rows(first_row, "n"));
    let mut n = 0;
    while let Ok(Some(_)) = it.next().await {
        n += 1;
        assert!(n <= MAX_CELLS);
    }
    for i in 0..reader.data_block_count() {
        let _ = reader.read_block(i).await;
    }
}

/// Rewrites the crc32c trailer of the frame at `offset..offset + len`.
fn fix_frame(file: &mut [u8], offset: u64, len: u64) {
    let (Ok(start), Ok(len)) = (usize::try_from(offset), usize::try_from(len)) else {
        return;
    };
    let Some(end) = start.checked_add(len) else {
        return;
    };
    if len < 5 || end > file.len() {
        return;
    }
    let crc = crc32c::crc32c(&file[start..end - 4]);
    file[end - 4..end].copy_from_slice(&crc.to_le_bytes());
}

/// Fixes the footer's checksum and those of the tail blocks it points at.
fn fix_tail(file: &mut [u8]) {
    let n = file.len();
    if n < FOOTER_LEN {
        return;
    }
    let at = n - FOOTER_LEN;
    let crc = crc32c::crc32c(&file[at..at + 72]);
    file[at + 72..at + 76].copy_from_slice(&crc.to_le_bytes());
    if let Ok(footer) = Footer::decode(&file[at..], n as u64) {
        for h in [Some(footer.index), footer.bloom, Some(footer.meta)]
            .into_iter()
            .flatten()
        {
            fix_frame(file, h.offset, h.len);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        // As is, with the default open read and with the smallest one (which
        // forces the second, ranged read of the tail).
        if let Some(reader) = open(data, shoal_storage::sst::DEFAULT_OPEN_READ_SIZE).await {
            exercise(&reader).await;
        }
        if let Some(reader) = open(data, FOOTER_LEN as u64).await {
            exercise(&reader).await;
        }

        // With checksums recomputed.
        let mut fixed = data.to_vec();
        fix_tail(&mut fixed);
        let Some(reader) = open(&fixed, FOOTER_LEN as u64).await else {
            return;
        };
        for i in 0..reader.data_block_count() {
            if let Some(a) = reader.block_addr(i) {
                fix_frame(&mut fixed, a.offset, a.len);
            }
        }
        if let Some(reader) = open(&fixed, shoal_storage::sst::DEFAULT_OPEN_READ_SIZE).await {
            exercise(&reader).await;
        }
    });
});
