//! SST write → read → seek against a sorted in-memory model.

use super::*;
use crate::cell::{Cell, CellType, KeyRef};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

fn arb_cells() -> impl Strategy<Value = Vec<Cell>> {
    prop::collection::vec(
        (
            0u32..400,
            prop::sample::select(vec!["a", "b", "qual", ""]),
            0i64..5,
            prop::sample::select(vec![
                CellType::Put,
                CellType::Put,
                CellType::Delete,
                CellType::DeleteFamily,
            ]),
            0u64..4,
            0usize..300,
        ),
        1..600,
    )
    .prop_map(|specs| {
        let mut model = BTreeMap::new();
        for (row, q, ts, kind, seq, vlen) in specs {
            let value = if kind == CellType::Put {
                vec![b'x' ^ (row as u8); vlen]
            } else {
                Vec::new()
            };
            let c = Cell {
                row: format!("row{row:05}").into(),
                family: "cf".into(),
                qualifier: q.into(),
                timestamp: ts,
                kind,
                seq,
                value: value.into(),
            };
            model.insert(c.key().to_owned_key(), c);
        }
        model.into_values().collect()
    })
}

pub(crate) async fn write_sst(cells: &[Cell], options: SstWriterOptions) -> (Vec<u8>, SstSummary) {
    let mut out = Vec::new();
    let mut w = SstWriter::new(FileId(7), "t.sst", "cf", options, &mut out).unwrap();
    for c in cells {
        w.add(c).await.unwrap();
    }
    let summary = w.finish().await.unwrap();
    (out, summary)
}

pub(crate) async fn open(bytes: Vec<u8>) -> (Arc<MemoryFetcher>, Result<SstReader, SstError>) {
    let fetcher = Arc::new(MemoryFetcher::new());
    fetcher.insert("t.sst", bytes);
    let file = SstFile {
        id: FileId(7),
        path: "t.sst".into(),
    };
    let r = SstReader::open(fetcher.clone(), file).await;
    (fetcher, r)
}

async fn collect(mut it: SstIter) -> Vec<Cell> {
    let mut out = Vec::new();
    while let Some(c) = it.next().await.unwrap() {
        out.push(c);
    }
    out
}

fn options(
    compression: Compression,
    block_size: usize,
    index_block_size: usize,
    bloom: BloomKind,
) -> SstWriterOptions {
    SstWriterOptions {
        block_size,
        compression,
        index_block_size,
        bloom,
        restart_interval: 4,
        ..SstWriterOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn write_read_seek_matches_model(
        cells in arb_cells(),
        compression in prop::sample::select(vec![Compression::None, Compression::Lz4, Compression::Zstd]),
        block_size in prop::sample::select(vec![256usize, 1024, 64 * 1024]),
        index_block_size in prop::sample::select(vec![256usize, 64 * 1024]),
        probes in prop::collection::vec((0u32..420, 0u32..420), 1..8),
    ) {
        block_on(async {
            let opts = options(compression, block_size, index_block_size, BloomKind::Row);
            let (bytes, summary) = write_sst(&cells, opts).await;
            prop_assert_eq!(summary.size, bytes.len() as u64);
            prop_assert_eq!(summary.meta.cell_count, cells.len() as u64);
            let (_, reader) = open(bytes).await;
            let reader = reader.unwrap();
            prop_assert_eq!(reader.meta(), &summary.meta);
            prop_assert_eq!(collect(reader.iter(ScanRange::all())).await, cells.clone());

            for (a, b) in probes {
                let (lo, hi) = (a.min(b), a.max(b));
                let (start, stop) = (format!("row{lo:05}"), format!("row{hi:05}"));
                let expect: Vec<Cell> = cells
                    .iter()
                    .filter(|c| c.row >= start.as_bytes() && c.row < stop.as_bytes())
                    .cloned()
                    .collect();
                let got = collect(reader.iter(ScanRange::rows(start.clone(), stop.clone()))).await;
                prop_assert_eq!(&got, &expect);
                let mut rev = reader.rev_iter(ScanRange::rows(start.clone(), stop));
                let mut backwards = Vec::new();
                while let Some(c) = rev.next().await.unwrap() {
                    backwards.push(c);
                }
                backwards.reverse();
                prop_assert_eq!(backwards, expect);

                // Point lookup: first cell at or after the row's first key.
                let first = reader.first_at_or_after(KeyRef::first_of_row(start.as_bytes())).await.unwrap();
                let expect_first = cells.iter().find(|c| c.row >= start.as_bytes()).cloned();
                prop_assert_eq!(first, expect_first);

                // Bloom: never a false negative.
                for c in cells.iter().filter(|c| c.row == start.as_bytes()) {
                    prop_assert!(reader.may_contain_row(&c.row));
                }
            }

            // Inclusive and exclusive bounds on exact cell keys.
            let mid = &cells[cells.len() / 2];
            let k = mid.key().to_owned_key();
            let range = ScanRange { start: Bound::Excluded(k.clone()), end: Bound::Included(cells[cells.len() - 1].key().to_owned_key()) };
            let got = collect(reader.iter(range)).await;
            prop_assert_eq!(got, cells[cells.len() / 2 + 1..].to_vec());
            let range = ScanRange { start: Bound::Unbounded, end: Bound::Included(k.clone()) };
            prop_assert_eq!(collect(reader.iter(range.clone())).await, cells[..=cells.len() / 2].to_vec());
            let mut rev = reader.rev_iter(range);
            let mut backwards = Vec::new();
            while let Some(c) = rev.next().await.unwrap() {
                backwards.push(c);
            }
            backwards.reverse();
            prop_assert_eq!(backwards, cells[..=cells.len() / 2].to_vec());
            let range = ScanRange { start: Bound::Excluded(k), end: Bound::Unbounded };
            let mut rev = reader.rev_iter(range);
            let mut backwards = Vec::new();
            while let Some(c) = rev.next().await.unwrap() {
                backwards.push(c);
            }
            backwards.reverse();
            prop_assert_eq!(backwards, cells[cells.len() / 2 + 1..].to_vec());
            Ok(())
        })?;
    }
}

fn many_rows(n: u32) -> Vec<Cell> {
    (0..n)
        .map(|i| {
            Cell::put(
                format!("user{i:08}"),
                "cf",
                "field0",
                1_700_000_000_000,
                u64::from(i),
                vec![b'v'; 100],
            )
        })
        .collect()
}

#[test]
fn open_costs_at_most_two_reads_and_a_block_costs_one() {
    block_on(async {
        // Small file: the whole tail comes with the first read.
        let (bytes, _) = write_sst(&many_rows(500), SstWriterOptions::default()).await;
        let (fetcher, reader) = open(bytes).await;
        let reader = reader.unwrap();
        assert_eq!(fetcher.fetch_count(), 1);
        reader.read_block(0).await.unwrap();
        assert_eq!(fetcher.fetch_count(), 2);

        // Large file with a two-level index bigger than the first read.
        let opts = SstWriterOptions {
            block_size: 1024,
            index_block_size: 4096,
            ..SstWriterOptions::default()
        };
        let (bytes, summary) = write_sst(&many_rows(100_000), opts).await;
        assert_eq!(summary.index_levels, 2);
        let (fetcher, reader) = open(bytes).await;
        let reader = reader.unwrap();
        assert_eq!(fetcher.fetch_count(), 2);
        let before = fetcher.fetch_count();
        let row = format!("user{:08}", 77_777);
        let c = reader
            .first_at_or_after(KeyRef::first_of_row(row.as_bytes()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(c.row, row.as_bytes());
        assert_eq!(fetcher.fetch_count(), before + 1);
    });
}

#[test]
fn bloom_filters_absent_rows() {
    block_on(async {
        let (bytes, _) = write_sst(&many_rows(10_000), SstWriterOptions::default()).await;
        let reader = open(bytes).await.1.unwrap();
        let fp = (0..10_000)
            .filter(|i| reader.may_contain_row(format!("user{i:08}x").as_bytes()))
            .count();
        assert!(fp < 300, "{fp} false positives in 10000");
        for i in (0..10_000).step_by(97) {
            assert!(reader.may_contain_row(format!("user{i:08}").as_bytes()));
        }

        let opts = SstWriterOptions {
            bloom: BloomKind::RowCol,
            ..SstWriterOptions::default()
        };
        let (bytes, _) = write_sst(&many_rows(1000), opts).await;
        let reader = open(bytes).await.1.unwrap();
        assert!(reader.may_contain_column(b"user00000005", b"field0"));
        let fp = (0..1000)
            .filter(|i| reader.may_contain_column(format!("user{i:08}").as_bytes(), b"field1"))
            .count();
        assert!(fp < 50, "{fp}");

        let opts = SstWriterOptions {
            bloom: BloomKind::None,
            ..SstWriterOptions::default()
        };
        let (bytes, _) = write_sst(&many_rows(10), opts).await;
        let reader = open(bytes).await.1.unwrap();
        assert!(reader.may_contain_row(b"user00000003"));
        assert!(!reader.may_contain_row(b"zzz"), "outside the key range");
    });
}

#[test]
fn writer_rejects_bad_input() {
    block_on(async {
        let mut sink = Vec::new();
        let mut w = SstWriter::new(
            FileId(1),
            "x.sst",
            "cf",
            SstWriterOptions::default(),
            &mut sink,
        )
        .unwrap();
        w.add(&Cell::put("b", "cf", "q", 1, 1, "v")).await.unwrap();
        let err = w
            .add(&Cell::put("a", "cf", "q", 1, 1, "v"))
            .await
            .unwrap_err();
        assert!(matches!(err, SstError::OutOfOrder { .. }), "{err}");
        let err = w
            .add(&Cell::put("b", "cf", "q", 1, 1, "v"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, SstError::OutOfOrder { .. }),
            "duplicate key: {err}"
        );
        let err = w
            .add(&Cell::put("c", "other", "q", 1, 1, "v"))
            .await
            .unwrap_err();
        assert!(matches!(err, SstError::WrongFamily { .. }), "{err}");
        let err = w
            .add(&Cell::put("", "cf", "q", 1, 1, "v"))
            .await
            .unwrap_err();
        assert!(matches!(err, SstError::Cell { .. }), "{err}");

        let w = SstWriter::new(
            FileId(1),
            "e.sst",
            "cf",
            SstWriterOptions::default(),
            Vec::new(),
        )
        .unwrap();
        assert!(matches!(w.finish().await, Err(SstError::Empty { .. })));

        let bad = SstWriterOptions {
            block_size: 1,
            ..SstWriterOptions::default()
        };
        assert!(matches!(
            SstWriter::new(FileId(1), "o.sst", "cf", bad, Vec::new()),
            Err(SstError::InvalidOption {
                name: "block_size",
                ..
            })
        ));
    });
}

#[test]
fn meta_records_ranges_and_counts() {
    block_on(async {
        let cells = vec![
            Cell::put("a", "cf", "q", 5, 3, "v"),
            Cell::delete("b", "cf", "", 9, CellType::DeleteFamily, 8),
            Cell::put("c", "cf", "q", -2, 1, "v"),
        ];
        let (bytes, summary) = write_sst(&cells, SstWriterOptions::default()).await;
        let m = &summary.meta;
        assert_eq!((m.min_timestamp, m.max_timestamp, m.max_seq), (-2, 9, 8));
        assert_eq!(
            (m.cell_count, m.delete_count, m.data_block_count),
            (3, 1, 1)
        );
        assert_eq!(m.first_key, cells[0].key().to_owned_key());
        assert_eq!(m.last_key, cells[2].key().to_owned_key());
        assert_eq!(&m.family[..], b"cf");
        let reader = open(bytes).await.1.unwrap();
        assert_eq!(reader.meta(), m);
    });
}

#[test]
fn a_cell_larger_than_a_block_gets_its_own_block() {
    block_on(async {
        let cells = vec![
            Cell::put("a", "cf", "q", 1, 1, vec![1u8; 10]),
            Cell::put("b", "cf", "q", 1, 1, vec![2u8; 300_000]),
            Cell::put("c", "cf", "q", 1, 1, vec![3u8; 10]),
        ];
        let opts = SstWriterOptions {
            block_size: 4096,
            ..SstWriterOptions::default()
        };
        let (bytes, _) = write_sst(&cells, opts).await;
        let reader = open(bytes).await.1.unwrap();
        assert_eq!(collect(reader.iter(ScanRange::all())).await, cells);
    });
}

#[test]
fn block_observer_sees_every_data_block_as_stored() {
    block_on(async {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut out = Vec::new();
        let opts = SstWriterOptions {
            block_size: 1024,
            ..SstWriterOptions::default()
        };
        let mut w = SstWriter::new(FileId(7), "t.sst", "cf", opts, &mut out).unwrap();
        let sink = seen.clone();
        w.set_block_observer(Box::new(move |addr, raw, frame| {
            sink.lock()
                .unwrap()
                .push((addr, raw.clone(), frame.clone()));
        }));
        for c in many_rows(500) {
            w.add(&c).await.unwrap();
        }
        w.finish().await.unwrap();
        let reader = open(out.clone()).await.1.unwrap();
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), reader.data_block_count());
        for (i, (addr, raw, frame)) in seen.iter().enumerate() {
            assert_eq!(Some(*addr), reader.block_addr(i));
            let start = addr.offset as usize;
            assert_eq!(&out[start..start + addr.len as usize], &frame[..]);
            let block = reader.read_block(i).await.unwrap();
            assert_eq!(block.len(), raw.len());
        }
    });
}
