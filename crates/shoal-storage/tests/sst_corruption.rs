//! Damaged SST files: every flipped byte, every truncation and garbage footers
//! give a corruption error (or, where a byte does not matter, the right data) —
//! never wrong data and never a panic.

use bytes::Bytes;
use shoal_storage::cell::{Cell, CellType, KeyRef};
use shoal_storage::sst::{
    BloomKind, Compression, FOOTER_LEN, FileId, MemoryFetcher, ScanRange, SstError, SstFile,
    SstReader, SstWriter, SstWriterOptions,
};
use std::sync::Arc;

/// Everything read back from a file: full scan, point lookups, bloom answers.
type ReadBack = (Vec<Cell>, Vec<Option<Cell>>, Vec<bool>);

fn cells() -> Vec<Cell> {
    let mut out = Vec::new();
    for i in 0..60u32 {
        let row = format!("row{i:04}");
        out.push(Cell::put(
            row.clone(),
            "cf",
            "a",
            10,
            u64::from(i),
            format!("value-{i}-{}", "x".repeat((i % 7) as usize * 9)),
        ));
        if i % 5 == 0 {
            out.push(Cell::delete(
                row.clone(),
                "cf",
                "b",
                9,
                CellType::DeleteColumn,
                u64::from(i),
            ));
        }
        out.push(Cell::put(
            row,
            "cf",
            "b",
            8,
            u64::from(i),
            vec![i as u8; 20],
        ));
    }
    out
}

async fn write(compression: Compression, bloom: BloomKind) -> Vec<u8> {
    let options = SstWriterOptions {
        block_size: 512,
        index_block_size: 256,
        restart_interval: 4,
        compression,
        bloom,
        ..SstWriterOptions::default()
    };
    let mut out = Vec::new();
    let mut w = SstWriter::new(FileId(1), "c.sst", "cf", options, &mut out).expect("writer");
    for c in cells() {
        w.add(&c).await.expect("add");
    }
    let summary = w.finish().await.expect("finish");
    assert_eq!(
        summary.index_levels, 2,
        "the test file must exercise a two-level index"
    );
    out
}

/// Opens and reads everything a reader can be asked for; Ok only if all of it worked.
async fn read_all(bytes: Vec<u8>) -> Result<ReadBack, SstError> {
    let fetcher = Arc::new(MemoryFetcher::new());
    fetcher.insert("c.sst", Bytes::from(bytes));
    let file = SstFile {
        id: FileId(1),
        path: "c.sst".into(),
    };
    // A small first read makes the open take the two-request path too.
    let reader = SstReader::open_with(fetcher, file, 200).await?;
    let mut scan = Vec::new();
    let mut it = reader.iter(ScanRange::all());
    while let Some(c) = it.next().await? {
        scan.push(c);
    }
    let mut points = Vec::new();
    let mut blooms = Vec::new();
    for i in [0u32, 17, 33, 59, 60] {
        let row = format!("row{i:04}");
        points.push(
            reader
                .first_at_or_after(KeyRef::first_of_row(row.as_bytes()))
                .await?,
        );
        blooms.push(reader.may_contain_row(row.as_bytes()));
    }
    Ok((scan, points, blooms))
}

fn assert_detected(result: Result<ReadBack, SstError>, expected: &ReadBack, what: &str) {
    match result {
        Ok((scan, points, blooms)) => {
            assert_eq!(&scan, &expected.0, "{what}: wrong scan data");
            assert_eq!(&points, &expected.1, "{what}: wrong point lookups");
            // A damaged bloom may only turn a "no" into a "maybe", never the reverse;
            // but a bloom byte flip is caught by its checksum, so expect equality.
            assert_eq!(&blooms, &expected.2, "{what}: bloom answers changed");
        }
        Err(e) => assert!(
            e.is_corruption() || matches!(e, SstError::UnsupportedVersion { .. }),
            "{what}: unexpected error kind: {e}"
        ),
    }
}

#[tokio::test]
async fn every_flipped_byte_is_detected() {
    for (compression, bloom) in [
        (Compression::None, BloomKind::Row),
        (Compression::Lz4, BloomKind::RowCol),
        (Compression::Zstd, BloomKind::Row),
    ] {
        let good = write(compression, bloom).await;
        let expected = read_all(good.clone()).await.expect("intact file reads");
        assert_eq!(expected.0, cells());
        let mut errors = 0;
        for i in 0..good.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= mask;
                let result = read_all(bad).await;
                if result.is_err() {
                    errors += 1;
                }
                assert_detected(
                    result,
                    &expected,
                    &format!("{compression:?} byte {i} ^ {mask:#x}"),
                );
            }
        }
        // The format has no padding: every byte is covered by a checksum.
        assert_eq!(
            errors,
            good.len() * 3,
            "{compression:?}: some flips went unnoticed"
        );
    }
}

#[tokio::test]
async fn every_truncation_is_detected() {
    let good = write(Compression::Lz4, BloomKind::Row).await;
    let expected = read_all(good.clone()).await.expect("intact");
    for len in 0..good.len() {
        let result = read_all(good[..len].to_vec()).await;
        assert!(result.is_err(), "truncated to {len} bytes but read fine");
        assert_detected(result, &expected, &format!("truncated to {len}"));
    }
}

#[tokio::test]
async fn garbage_and_foreign_files_are_rejected() {
    let good = write(Compression::None, BloomKind::Row).await;
    let expected = read_all(good.clone()).await.expect("intact");
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..500 {
        // Random footer bytes, keeping the magic half of the time.
        let mut bad = good.clone();
        let at = bad.len() - FOOTER_LEN;
        for b in &mut bad[at..] {
            *b = next() as u8;
        }
        if round % 2 == 0 {
            let m = bad.len() - 12;
            bad[m..m + 8].copy_from_slice(b"SHOALSST");
        }
        assert_detected(
            read_all(bad).await,
            &expected,
            &format!("garbage footer {round}"),
        );
        // Random whole files.
        let len = (next() % 400) as usize;
        let junk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        assert!(read_all(junk).await.is_err());
    }
    let err = read_all(
        b"PAR1 not an sst at all, just some bytes that are long enough to hold a footer........"
            .to_vec(),
    )
    .await
    .expect_err("foreign file");
    assert!(matches!(err, SstError::NotAnSst { .. }), "{err}");
    assert!(
        err.to_string().contains("c.sst"),
        "error names the file: {err}"
    );
}
