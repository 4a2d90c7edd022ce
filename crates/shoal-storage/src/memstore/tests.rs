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
    assert!(m.freeze().is_none(), "empty active segment is not frozen");
    m.insert(&cell(1, 1)).unwrap();
    let frozen = m.freeze().unwrap();
    m.insert(&cell(2, 2)).unwrap();
    assert_eq!(m.frozen().len(), 1);
    assert_eq!(m.segments().len(), 2);
    let before = m.size();
    m.remove_flushed(std::slice::from_ref(&frozen));
    assert_eq!(m.size(), before - frozen.size());
    assert!(m.frozen().is_empty());
    assert_eq!(m.segments()[0].cells(), vec![cell(2, 2)]);
}

#[test]
fn no_write_is_lost_across_concurrent_freezes() {
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
    let mut frozen = Vec::new();
    while writers.iter().any(|w| !w.is_finished()) {
        frozen.extend(m.freeze());
    }
    for w in writers {
        w.join().unwrap();
    }
    let total: usize = m.segments().iter().map(|s| s.len()).sum();
    assert_eq!(total, 8000);
    let accounted: usize = m.segments().iter().map(|s| s.size()).sum();
    assert_eq!(m.size(), accounted);
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
