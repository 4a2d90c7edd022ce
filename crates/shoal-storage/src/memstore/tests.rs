//! Memstore behaviour: order, freezing under concurrent writes, accounting.

use super::*;
use crate::cell::{Cell, compare_cells};
use std::sync::Arc;

fn cell(row: u32, seq: u64) -> Cell {
    Cell::put(format!("r{row:05}"), "cf", "q", 10, seq, format!("v{seq}"))
}

#[test]
fn cells_come_back_in_cell_order() {
    let m = Memstore::new();
    let mut expect = Vec::new();
    for i in (0..200u32).rev() {
        let c = cell(i % 50, u64::from(i));
        m.insert(&c).unwrap();
        expect.push(c);
    }
    expect.sort_by(compare_cells);
    let seg = &m.segments()[0];
    assert_eq!(seg.cells(), expect);
    assert_eq!(seg.max_seq(), 199);
}

#[test]
fn duplicate_keys_are_not_double_counted() {
    let m = Memstore::new();
    m.insert(&cell(1, 1)).unwrap();
    let size = m.size();
    m.insert(&cell(1, 1)).unwrap();
    assert_eq!(m.size(), size);
    assert_eq!(m.segments()[0].len(), 1);
}

#[test]
fn freeze_swaps_and_flush_releases_bytes() {
    let m = Memstore::new();
    assert!(
        m.freeze_for_flush().is_empty(),
        "empty active segment is not frozen"
    );
    m.insert(&cell(1, 1)).unwrap();
    let frozen = m.freeze_for_flush();
    assert_eq!(frozen.len(), 1);
    m.insert(&cell(2, 2)).unwrap();
    assert_eq!(m.flushing().len(), 1);
    assert_eq!(m.segments().len(), 2);
    let before = m.size();
    let released = m.remove_flushed(&frozen);
    assert_eq!(released, frozen[0].size());
    assert_eq!(m.size(), before - released);
    assert!(m.flushing().is_empty());
    assert_eq!(m.segments()[0].cells(), vec![cell(2, 2)]);
}

#[test]
fn no_write_is_lost_across_concurrent_rotations_and_compactions() {
    let m = Arc::new(Memstore::new());
    let writers: Vec<_> = (0..4u32)
        .map(|t| {
            let m = m.clone();
            std::thread::spawn(move || {
                for i in 0..2000u32 {
                    m.insert(&cell(t * 10_000 + i, u64::from(i))).unwrap();
                }
            })
        })
        .collect();
    let mut rounds = 0;
    while writers.iter().any(|w| !w.is_finished()) {
        m.rotate();
        m.compact_pipeline(InMemoryCompaction::Basic, 2, || 0);
        rounds += 1;
        if rounds % 7 == 0 {
            m.freeze_for_flush();
        }
    }
    for w in writers {
        w.join().unwrap();
    }
    let total: usize = m.segments().iter().map(|s| s.len()).sum();
    assert_eq!(total, 8000);
    let accounted: usize = m.segments().iter().map(|s| s.size()).sum();
    assert_eq!(m.size(), accounted);
    let all: Vec<Cell> =
        merged_cells(&m.segments().into_iter().rev().collect::<Vec<_>>()).collect();
    assert_eq!(all.len(), 8000);
    assert!(all.windows(2).all(|w| compare_cells(&w[0], &w[1]).is_lt()));
}

#[test]
fn a_flat_segment_answers_like_its_skiplist() {
    let seg = Segment::new();
    for i in (0..300u32).rev() {
        seg.insert(&cell(i / 3, u64::from(i))).unwrap();
    }
    let flat = seg.flatten();
    assert!(flat.is_flat());
    assert_eq!(flat.cells(), seg.cells());
    assert_eq!(flat.max_seq(), seg.max_seq());
    assert!(
        flat.insert(&cell(1, 1)).is_err(),
        "flat segments are immutable"
    );
    let keys: Vec<MemKey> = seg
        .cells()
        .iter()
        .map(|c| MemKey::new(&c.key()).unwrap())
        .collect();
    // Probes: every key, and keys between and around them.
    let mut probes = keys.clone();
    for r in [0u32, 7, 50, 99, 100, 150] {
        probes.push(MemKey::new(&cell(r, 1_000).key()).unwrap());
        probes
            .push(MemKey::new(&Cell::put(format!("r{r:05}"), "cf", "q", 5, 0, "x").key()).unwrap());
    }
    for p in &probes {
        assert_eq!(flat.next_after(Some(p)), seg.next_after(Some(p)));
        assert_eq!(flat.prev_before(Some(p)), seg.prev_before(Some(p)));
        assert_eq!(flat.first_at_or_after(p), seg.first_at_or_after(p));
        assert_eq!(flat.last_at_or_before(p), seg.last_at_or_before(p));
    }
    assert_eq!(flat.next_after(None), seg.next_after(None));
    assert_eq!(flat.prev_before(None), seg.prev_before(None));
}

#[test]
fn flat_overhead_is_at_most_24_bytes_per_cell() {
    let seg = Segment::new();
    let mut own = 0usize;
    for i in 0..1000u32 {
        let c = Cell::put(
            format!("user{i:019}"),
            "f",
            "field0",
            1_700_000_000_000,
            u64::from(i),
            vec![b'x'; 100],
        );
        own += c.row.len() + c.family.len() + c.qualifier.len() + c.value.len() + 8 + 1 + 8;
        seg.insert(&c).unwrap();
    }
    let flat = seg.flatten();
    let overhead = (flat.size() - own) as f64 / 1000.0;
    assert!(overhead <= 24.0, "{overhead} bytes per cell");
}

#[test]
fn pipeline_merges_when_it_piles_up_and_flush_takes_everything() {
    let m = Memstore::new();
    for round in 0..5u64 {
        for i in 0..10u32 {
            m.insert(&cell(i, round * 100 + u64::from(i))).unwrap();
        }
        m.rotate();
        let r = m.compact_pipeline(InMemoryCompaction::Basic, 3, || 0);
        assert_eq!(r.flattened, 1);
    }
    // 5 rotations with a limit of 3: merged along the way.
    assert!(m.pipeline().len() <= 3, "{}", m.pipeline().len());
    assert!(m.pipeline().iter().all(|s| s.is_flat()));
    let accounted: usize = m.segments().iter().map(|s| s.size()).sum();
    assert_eq!(m.size(), accounted);
    m.insert(&cell(99, 999)).unwrap();
    let taken = m.freeze_for_flush();
    let cells: Vec<Cell> = merged_cells(&taken).collect();
    assert_eq!(cells.len(), 51);
    assert!(m.pipeline().is_empty());
    m.remove_flushed(&taken);
    assert_eq!(m.size(), 0);
}

#[test]
fn a_merge_loses_its_race_with_a_flush() {
    let m = Memstore::new();
    m.insert(&cell(1, 1)).unwrap();
    m.rotate();
    let pipeline = m.pipeline();
    let taken = m.freeze_for_flush();
    assert_eq!(taken.len(), 1);
    // The flattening of a segment a flush took is discarded.
    assert!(
        m.replace_in_pipeline(&pipeline, pipeline[0].flatten())
            .is_none()
    );
    assert_eq!(m.segments().iter().map(|s| s.len()).sum::<usize>(), 1);
}

fn put(q: &str, ts: i64, seq: u64) -> Cell {
    Cell::put("r", "cf", q.to_string(), ts, seq, format!("{q}@{ts}#{seq}"))
}

fn marker(q: &str, ts: i64, kind: crate::cell::CellType, seq: u64) -> Cell {
    Cell::delete("r", "cf", q.to_string(), ts, kind, seq)
}

fn seg_of(cells: &[Cell]) -> Arc<Segment> {
    let s = Segment::new();
    for c in cells {
        s.insert(c).unwrap();
    }
    Arc::new(s.flatten())
}

#[test]
fn eager_drops_only_what_no_reader_can_see() {
    use crate::cell::CellType;
    let older = seg_of(&[
        put("a", 10, 1),
        put("b", 10, 2),
        put("c", 5, 3),
        put("d", 7, 4),
    ]);
    let newer = seg_of(&[
        put("a", 10, 5),                           // hides a@10#1
        put("b", 10, 9),                           // seq 9 > smallest read point 6: keeps b@10#2
        marker("c", 6, CellType::DeleteColumn, 6), // masks c@5
        marker("d", 7, CellType::Delete, 8),       // invisible to a reader at 6: d@7 stays
        put("e", 1, 6),
    ]);
    let (basic, stats) = merge(&[older.clone(), newer.clone()], None).unwrap();
    assert_eq!(stats.cells_out, 9);
    assert_eq!(basic.len(), 9);
    let (eager, stats) = merge(&[older, newer], Some(6)).unwrap();
    let kept: Vec<String> = eager
        .cells()
        .iter()
        .map(|c| {
            format!(
                "{}@{}#{}",
                String::from_utf8_lossy(&c.qualifier),
                c.timestamp,
                c.seq
            )
        })
        .collect();
    assert_eq!(
        kept,
        vec![
            "a@10#5", "b@10#9", "b@10#2", "c@6#6", "d@7#8", "d@7#4", "e@1#6"
        ]
    );
    assert_eq!(stats.cells_in - stats.cells_out, 2);
}

#[test]
fn next_after_walks_in_order() {
    let seg = Segment::new();
    for i in [5u32, 1, 3] {
        seg.insert(&cell(i, 1)).unwrap();
    }
    let mut rows = Vec::new();
    let mut last = None;
    while let Some((k, _)) = seg.next_after(last.as_ref()) {
        rows.push(k.key().unwrap().row.to_vec());
        last = Some(k);
    }
    assert_eq!(
        rows,
        vec![b"r00001".to_vec(), b"r00003".to_vec(), b"r00005".to_vec()]
    );
}

#[test]
fn the_budget_follows_every_memstore_change() {
    let budget = MemstoreBudget::default();
    let a = Memstore::with_budget(budget.clone());
    let b = Memstore::with_budget(budget.clone());
    for i in 0..100u32 {
        a.insert(&cell(i, u64::from(i))).unwrap();
        b.insert(&cell(i, u64::from(i))).unwrap();
    }
    assert_eq!(budget.used(), a.size() + b.size());
    a.rotate();
    a.compact_pipeline(InMemoryCompaction::Basic, 4, || 0);
    assert!(a.size() < b.size(), "flattening frees memory");
    assert_eq!(budget.used(), a.size() + b.size());
    let taken = a.freeze_for_flush();
    a.remove_flushed(&taken);
    assert_eq!(budget.used(), b.size());
    drop(b);
    assert_eq!(budget.used(), 0, "a dropped memstore releases its bytes");
}

mod key_words {
    use super::*;
    use crate::cell::{KeyRef, compare_encoded};
    use proptest::prelude::*;

    /// Rows made to tie and nearly tie in their first 16 bytes: zero bytes,
    /// 0xff, rows that are prefixes of one another, rows longer than the
    /// words.
    fn row() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', 0xff]), 0..24)
    }

    fn key() -> impl Strategy<Value = Vec<u8>> {
        (
            row(),
            prop::sample::select(vec!["", "q", "q\0"]),
            0i64..3,
            0u64..3,
        )
            .prop_map(|(row, qualifier, ts, seq)| {
                Cell::put(row, "cf", qualifier, ts, seq, "v")
                    .key()
                    .encode()
                    .expect("a valid key")
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// A key's row words never change the order of cell keys.
        #[test]
        fn mem_keys_order_as_their_encodings(a in key(), b in key()) {
            let (ka, kb) = (MemKey::from_encoded(&a), MemKey::from_encoded(&b));
            prop_assert_eq!(ka.cmp(&kb), compare_encoded(&a, &b));
            prop_assert_eq!(kb.cmp(&ka), compare_encoded(&b, &a));
        }

        /// Bytes that are no key sort after every key, with or without words.
        #[test]
        fn corrupt_keys_sort_after_valid_ones(a in key(), junk in prop::collection::vec(any::<u8>(), 0..6)) {
            prop_assume!(KeyRef::decode(&junk).is_err());
            let (ka, kj) = (MemKey::from_encoded(&a), MemKey::from_encoded(&junk));
            prop_assert_eq!(ka.cmp(&kj), std::cmp::Ordering::Less);
            prop_assert_eq!(kj.cmp(&ka), std::cmp::Ordering::Greater);
        }
    }
}
