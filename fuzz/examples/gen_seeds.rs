//! Writes a seed corpus of valid inputs into `corpus/<target>/` so the fuzzers
//! start from real SSTs, blocks, footers and cells rather than from nothing.
//! Run from `fuzz/`: `cargo run --example gen_seeds`.

use shoal_storage::cell::{Cell, CellType, encode_cell};
use shoal_storage::sst::block::BlockBuilder;
use shoal_storage::sst::{BloomKind, Compression, FOOTER_LEN, FileId, SstWriter, SstWriterOptions};
use std::path::Path;

fn cells(rows: u32) -> Vec<Cell> {
    let mut out = Vec::new();
    for r in 0..rows {
        let row = format!("row{r:04}");
        if r % 7 == 3 {
            out.push(Cell::delete(
                row.clone(),
                "cf",
                "",
                9,
                CellType::DeleteFamily,
                u64::from(r),
            ));
        }
        for q in ["a", "b"] {
            out.push(Cell::put(
                row.clone(),
                "cf",
                q,
                5,
                u64::from(r),
                vec![b'a' + (r % 26) as u8; (r % 40) as usize],
            ));
        }
    }
    out
}

fn write(dir: &Path, name: &str, data: &[u8]) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join(name), data).expect("write seed");
}

fn main() {
    let root = Path::new("corpus");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");

    let mut footers = Vec::new();
    for (i, (compression, bloom, block_size, index_block_size, rows)) in [
        (Compression::None, BloomKind::Row, 256, 256, 40),
        (Compression::Lz4, BloomKind::RowCol, 512, 64 * 1024, 30),
        (Compression::Zstd, BloomKind::None, 1024, 256, 60),
        (Compression::Lz4, BloomKind::Row, 64 * 1024, 64 * 1024, 3),
    ]
    .into_iter()
    .enumerate()
    {
        let options = SstWriterOptions {
            compression,
            bloom,
            block_size,
            index_block_size,
            restart_interval: 4,
            ..SstWriterOptions::default()
        };
        let mut out = Vec::new();
        rt.block_on(async {
            let mut w =
                SstWriter::new(FileId(1), "seed.sst", "cf", options, &mut out).expect("writer");
            for c in cells(rows) {
                w.add(&c).await.expect("add");
            }
            w.finish().await.expect("finish");
        });
        write(&root.join("sst_open"), &format!("seed-{i}"), &out);
        let mut f = (out.len() as u64).to_le_bytes().to_vec();
        f.extend_from_slice(&out[out.len() - FOOTER_LEN..]);
        footers.push(f);
    }
    for (i, f) in footers.iter().enumerate() {
        write(&root.join("footer_decode"), &format!("seed-{i}"), f);
    }

    for (i, interval) in [1usize, 4, 16].into_iter().enumerate() {
        let mut b = BlockBuilder::new(interval);
        for c in cells(12) {
            b.add(&c.key().encode().expect("key"), &c.value);
        }
        let block = b.finish();
        let target = Cell::put("row0005", "cf", "b", 5, 5, "")
            .key()
            .encode()
            .expect("key");
        let mut input = vec![target.len() as u8];
        input.extend_from_slice(&target);
        input.extend_from_slice(&block);
        write(&root.join("block_decode"), &format!("seed-{i}"), &input);
        let mut input = vec![7u8];
        input.extend_from_slice(b"row0004");
        input.extend_from_slice(&block);
        write(&root.join("block_decode"), &format!("seed-row-{i}"), &input);
    }

    let mut stream = Vec::new();
    for c in cells(4) {
        encode_cell(&c, &mut stream).expect("encode");
    }
    write(&root.join("cell_decode"), "seed-stream", &stream);
    let key = Cell::put("row", "cf", "qual", -1, 3, "v")
        .key()
        .encode()
        .expect("key");
    write(&root.join("cell_decode"), "seed-key", &key);
    println!("seeds written under {}", root.display());
}
