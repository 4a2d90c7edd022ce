//! Memstore memory per cell, measured by counting the allocator: a skiplist
//! segment (what writers insert into) against the flat segment in-memory
//! compaction turns it into, and the time both take. Prints a table and
//! writes `target/memstore-bench.json`.
//!
//! `cargo bench -p shoal-storage --bench memstore`

#![allow(unsafe_code)] // the counting allocator below; its soundness is argued there
#![allow(clippy::unwrap_used)] // bench code: a failed unwrap is a failed bench

use shoal_storage::cell::Cell;
use shoal_storage::memstore::Segment;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

/// Bytes currently allocated through the global allocator.
static LIVE: AtomicIsize = AtomicIsize::new(0);

struct Counting;

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are ours; the only addition is an
// atomic counter update, which allocates nothing and cannot unwind.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged (see the impl's comment).
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

struct Case {
    name: &'static str,
    value: usize,
}

fn main() {
    let cells = 200_000usize;
    let mut rows = Vec::new();
    println!(
        "{:<28} {:>10} {:>14} {:>14} {:>12} {:>12}",
        "cells", "own B/cell", "skiplist +B", "flat +B", "insert ns", "flatten ns"
    );
    for case in [
        Case {
            name: "YCSB field (100 B value)",
            value: 100,
        },
        Case {
            name: "writetail put (1000 B value)",
            value: 1000,
        },
        Case {
            name: "counter (8 B value)",
            value: 8,
        },
    ] {
        // Cells built up front: their own allocations are not counted.
        let input: Vec<Cell> = (0..cells)
            .map(|i| {
                Cell::put(
                    format!("user{:019}", (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                    "f",
                    "field0",
                    1_700_000_000_000 + i as i64,
                    i as u64 + 1,
                    vec![b'x'; case.value],
                )
            })
            .collect();
        let own: usize = input
            .iter()
            .map(|c| c.row.len() + c.family.len() + c.qualifier.len() + c.value.len() + 8 + 1 + 8)
            .sum();
        let before = live();
        let t = Instant::now();
        let skip = Segment::new();
        for c in &input {
            skip.insert(c).unwrap();
        }
        let insert_ns = t.elapsed().as_nanos() as f64 / cells as f64;
        // The skiplist shares each value's buffer with `input` (a refcount),
        // so its live bytes exclude values: add them back as owned.
        let values: usize = input.iter().map(|c| c.value.len()).sum();
        let skip_bytes = (live() - before) as usize + values;
        let before_flat = live();
        let t = Instant::now();
        let flat = skip.flatten();
        let flatten_ns = t.elapsed().as_nanos() as f64 / cells as f64;
        let flat_bytes = (live() - before_flat) as usize;
        assert_eq!(flat.len(), cells);
        let per = |b: usize| (b as f64 - own as f64) / cells as f64;
        println!(
            "{:<28} {:>10.1} {:>14.1} {:>14.1} {:>12.0} {:>12.0}",
            case.name,
            own as f64 / cells as f64,
            per(skip_bytes),
            per(flat_bytes),
            insert_ns,
            flatten_ns
        );
        rows.push(format!(
            "{{\"case\":\"{}\",\"cells\":{cells},\"own_bytes_per_cell\":{:.1},\"skiplist_overhead_bytes_per_cell\":{:.1},\"flat_overhead_bytes_per_cell\":{:.1},\"insert_ns_per_cell\":{:.0},\"flatten_ns_per_cell\":{:.0}}}",
            case.name,
            own as f64 / cells as f64,
            per(skip_bytes),
            per(flat_bytes),
            insert_ns,
            flatten_ns
        ));
        drop(flat);
        drop(skip);
    }
    let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let path = std::path::Path::new(&dir).join("memstore-bench.json");
    if std::fs::write(&path, format!("[{}]\n", rows.join(",\n"))).is_ok() {
        println!("wrote {}", path.display());
    }
}
