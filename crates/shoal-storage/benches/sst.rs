//! SST format v1 micro-benchmarks: block build and decode, frame decode per
//! compression kind, point lookups, within-block seeks and bloom probes.
//!
//! Run with `cargo bench -p shoal-storage --bench sst` (about two minutes; every
//! group uses 20 samples over 3 s). Block and frame throughput is over the
//! cells' logical bytes (encoded key + value, ~64 KiB per block), the same
//! figure for every compression kind, so the numbers compare directly; the raw
//! block is smaller (prefix compression) and its size is printed.
//!
//! The data is YCSB-like: rows `user` + 19 digits, family `cf`, qualifiers
//! `field0`..`field9`, 100-byte values of random printable characters.

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shoal_storage::cell::{Cell, KeyRef};
use shoal_storage::sst::block::{Block, BlockBuilder};
use shoal_storage::sst::{
    Compression, FileId, MemoryFetcher, SstFile, SstReader, SstWriter, SstWriterOptions,
};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

/// Target raw size of the blocks built and decoded (the writer's default).
const BLOCK_BYTES: usize = 64 * 1024;
/// Rows in the point-lookup file (10 cells each, about 150 MB raw).
const LOOKUP_ROWS: u64 = 100_000;
/// Columns per row, as in YCSB's default workload.
const FIELDS: usize = 10;
const VALUE_LEN: usize = 100;
/// Number of pre-generated probe keys each lookup bench cycles through.
const PROBES: usize = 4096;
const TIMESTAMP: i64 = 1_700_000_000_000;

/// SplitMix64: a deterministic, dependency-free generator, so every run
/// benchmarks the same bytes and the same probe sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Row key of row number `i`: `user` + 19 digits. Even numbers only, so the odd
/// ones give absent rows that still fall inside the file's key range.
fn row_key(i: u64) -> Vec<u8> {
    format!("user{:019}", i * 2).into_bytes()
}

fn absent_row_key(i: u64) -> Vec<u8> {
    format!("user{:019}", i * 2 + 1).into_bytes()
}

/// YCSB values are random printable characters: compressible, but not by much.
fn value(rng: &mut Rng) -> Bytes {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 !#$%&()*+,-./:;<=>?@[]^_{|}~";
    (0..VALUE_LEN)
        .map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize])
        .collect::<Vec<u8>>()
        .into()
}

/// The cells of rows `rows`, in key order.
fn cells(rows: std::ops::Range<u64>, rng: &mut Rng) -> impl Iterator<Item = Cell> + '_ {
    rows.flat_map(move |r| {
        let row = Bytes::from(row_key(r));
        (0..FIELDS)
            .map(|f| {
                Cell::put(
                    row.clone(),
                    "cf",
                    format!("field{f}"),
                    TIMESTAMP,
                    r * FIELDS as u64 + f as u64,
                    value(rng),
                )
            })
            .collect::<Vec<_>>()
    })
}

/// Encoded (key, value) entries of whole rows totalling about [`BLOCK_BYTES`]
/// (key + value bytes), and the number of rows they cover.
fn block_entries() -> (Vec<(Vec<u8>, Bytes)>, u64) {
    let mut rng = Rng(1);
    let mut out = Vec::new();
    let mut bytes = 0;
    let mut rows = 0;
    for r in 0.. {
        if bytes >= BLOCK_BYTES {
            break;
        }
        for c in cells(r..r + 1, &mut rng) {
            let key = c.key().encode().expect("valid key");
            bytes += key.len() + c.value.len();
            out.push((key, c.value));
        }
        rows = r + 1;
    }
    (out, rows)
}

/// Logical size of `entries`: encoded keys plus values.
fn cell_bytes(entries: &[(Vec<u8>, Bytes)]) -> u64 {
    entries
        .iter()
        .map(|(k, v)| (k.len() + v.len()) as u64)
        .sum()
}

fn build_block(entries: &[(Vec<u8>, Bytes)]) -> Vec<u8> {
    let mut b = BlockBuilder::new(SstWriterOptions::default().restart_interval);
    for (k, v) in entries {
        b.add(k, v);
    }
    b.finish()
}

/// Walks every entry of `block`, touching each key and value.
fn scan_block(block: &Block) -> usize {
    let mut it = block.iter();
    let mut n = 0;
    let mut more = it.seek_to_first().expect("valid block");
    while more {
        black_box(it.key());
        black_box(it.value());
        n += 1;
        more = it.advance().expect("valid block");
    }
    n
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime")
}

/// Writes `cells` into an in-memory SST and opens it over a [`MemoryFetcher`].
fn write_and_open(
    rt: &tokio::runtime::Runtime,
    cells: impl Iterator<Item = Cell>,
    options: SstWriterOptions,
) -> SstReader {
    rt.block_on(async {
        let mut out = Vec::new();
        let mut w =
            SstWriter::new(FileId(1), "bench.sst", "cf", options, &mut out).expect("writer");
        for c in cells {
            w.add(&c).await.expect("add");
        }
        w.finish().await.expect("finish");
        let fetcher = Arc::new(MemoryFetcher::new());
        fetcher.insert("bench.sst", out);
        let file = SstFile {
            id: FileId(1),
            path: "bench.sst".into(),
        };
        SstReader::open(fetcher, file).await.expect("open")
    })
}

fn block_benches(c: &mut Criterion) {
    let (entries, rows) = block_entries();
    let raw = build_block(&entries);
    let block = Block::new(Bytes::from(raw.clone())).expect("valid block");
    eprintln!(
        "block: {} entries ({rows} rows), {} cell bytes, {} raw block bytes",
        entries.len(),
        cell_bytes(&entries),
        raw.len()
    );

    let mut g = c.benchmark_group("block");
    g.throughput(Throughput::Bytes(cell_bytes(&entries)));
    g.bench_function("build_64k", |b| {
        b.iter(|| black_box(build_block(black_box(&entries))))
    });
    let raw = Bytes::from(raw);
    g.bench_function("decode_iter_64k", |b| {
        b.iter(|| {
            let block = Block::new(black_box(raw.clone())).expect("valid block");
            black_box(scan_block(&block))
        })
    });
    g.finish();

    // Seeks to the first cell of a random row of the block: a binary search over
    // the restart points, then a scan of at most one restart interval.
    let mut rng = Rng(2);
    let targets: Vec<Vec<u8>> = (0..PROBES).map(|_| row_key(rng.below(rows))).collect();
    let mut g = c.benchmark_group("block_seek");
    let mut it = block.iter();
    let mut i = 0;
    g.bench_function("random_row", |b| {
        b.iter(|| {
            i = (i + 1) % PROBES;
            let found = it
                .seek(&KeyRef::first_of_row(&targets[i]))
                .expect("valid block");
            black_box(found && !it.key().is_empty())
        })
    });
    g.finish();
}

/// One ~64 KiB block per compression kind, read through a frame with
/// `SstReader::read_block` (fetch from memory, crc32c, decompress, `Block::new`),
/// then iterated in full.
fn frame_benches(c: &mut Criterion) {
    let rt = runtime();
    let (entries, rows) = block_entries();
    let mut g = c.benchmark_group("frame");
    for kind in [Compression::None, Compression::Lz4, Compression::Zstd] {
        let options = SstWriterOptions {
            // Larger than the data, so the file holds exactly one data block.
            block_size: 4 * BLOCK_BYTES,
            compression: kind,
            ..SstWriterOptions::default()
        };
        let reader = write_and_open(&rt, cells(0..rows, &mut Rng(1)), options);
        let meta = reader.meta();
        assert_eq!(meta.data_block_count, 1);
        eprintln!(
            "frame/{}: {} raw bytes stored in {} ({:.2}x)",
            kind.as_str(),
            meta.raw_data_bytes,
            meta.stored_data_bytes,
            meta.raw_data_bytes as f64 / meta.stored_data_bytes as f64
        );
        g.throughput(Throughput::Bytes(cell_bytes(&entries)));
        g.bench_function(format!("read_block_iter_{}", kind.as_str()), |b| {
            b.iter(|| {
                let block = rt.block_on(reader.read_block(0)).expect("read block");
                black_box(scan_block(&block))
            })
        });
    }
    g.finish();
}

/// Point lookups and bloom probes on a ~100k-row file (64 KiB blocks, lz4).
fn sst_benches(c: &mut Criterion) {
    let rt = runtime();
    let started = std::time::Instant::now();
    let reader = write_and_open(
        &rt,
        cells(0..LOOKUP_ROWS, &mut Rng(3)),
        SstWriterOptions::default(),
    );
    let meta = reader.meta();
    eprintln!(
        "lookup file: {} cells, {} blocks, {} raw / {} stored data bytes, {} index levels, {} bytes total; written and opened in {:.1?}",
        meta.cell_count,
        meta.data_block_count,
        meta.raw_data_bytes,
        meta.stored_data_bytes,
        reader.index_levels(),
        reader.size(),
        started.elapsed()
    );
    let mut rng = Rng(4);
    let present: Vec<Vec<u8>> = (0..PROBES)
        .map(|_| row_key(rng.below(LOOKUP_ROWS)))
        .collect();
    let absent: Vec<Vec<u8>> = (0..PROBES)
        .map(|_| absent_row_key(rng.below(LOOKUP_ROWS)))
        .collect();

    let mut g = c.benchmark_group("sst");
    // There is no block cache yet: every lookup goes to the fetcher for the
    // whole 64 KiB block, verifies its crc32c, decompresses it (lz4), decodes it,
    // then seeks inside it. So this is the cost of a cache miss minus the I/O,
    // not of a hot lookup.
    let mut i = 0;
    g.bench_function("point_lookup_lz4_100k_rows", |b| {
        b.iter(|| {
            i = (i + 1) % PROBES;
            let cell = rt
                .block_on(reader.first_at_or_after(KeyRef::first_of_row(&present[i])))
                .expect("lookup")
                .expect("row exists");
            black_box(cell)
        })
    });
    let mut i = 0;
    g.bench_function("bloom_probe_present", |b| {
        b.iter(|| {
            i = (i + 1) % PROBES;
            black_box(reader.may_contain_row(black_box(&present[i])))
        })
    });
    let mut i = 0;
    g.bench_function("bloom_probe_absent", |b| {
        b.iter(|| {
            i = (i + 1) % PROBES;
            black_box(reader.may_contain_row(black_box(&absent[i])))
        })
    });
    g.finish();
    let fp = absent.iter().filter(|r| reader.may_contain_row(r)).count();
    eprintln!("bloom: {fp} false positives in {PROBES} absent probes");
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = block_benches, frame_benches, sst_benches
}
criterion_main!(benches);
