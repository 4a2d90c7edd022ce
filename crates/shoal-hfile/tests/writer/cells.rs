//! The cells the writer tests write: the HBase fixtures' cells, and generated ones.

use crate::support::{all_cells, fixtures_dir};
use shoal_hfile::{CellKind, CellRef, HCell, HFile, HFileSummary, HFileWriter, HFileWriterOptions};

pub fn write_all(cells: &[HCell], options: HFileWriterOptions) -> (Vec<u8>, HFileSummary) {
    let mut out = Vec::new();
    let mut w = HFileWriter::new(&mut out, options).expect("writer");
    for c in cells {
        w.append(&CellRef::from_cell(c)).expect("append");
    }
    let s = w.finish().expect("finish");
    (out, s)
}

/// The fixtures' cells without their tags (the writer writes none).
pub fn fixture_cells() -> Vec<HCell> {
    let path = fixtures_dir().join("NONE-NONE.hfile");
    let f = HFile::open(crate::support::read(&path), "NONE-NONE.hfile").expect("fixture");
    let mut cells = all_cells(&f).expect("fixture cells");
    for c in &mut cells {
        c.tags.clear();
    }
    cells
}

/// `n` cells over rows of varied length, 3 qualifiers, 2 versions, every kind.
pub fn generated(n: usize) -> Vec<HCell> {
    let mut out = Vec::with_capacity(n);
    let mut i = 0u64;
    while out.len() < n {
        let row = format!("row-{:08}-{}", i, "x".repeat((i % 7) as usize));
        if i.is_multiple_of(11) {
            out.push(cell(&row, "", 2_000, CellKind::DeleteFamily, b"", 0));
            out.push(cell(&row, "", 1_500, CellKind::DeleteFamilyVersion, b"", 0));
        }
        for q in ["a", "bb", "ccc"] {
            if i.is_multiple_of(5) {
                out.push(cell(&row, q, 1_000, CellKind::DeleteColumn, b"", 3));
            }
            for ts in [900i64, 100] {
                if i.is_multiple_of(3) && ts == 100 {
                    out.push(cell(&row, q, ts, CellKind::Delete, b"", 0));
                }
                let value = format!("value {i} {q} {ts} {}", "v".repeat((i % 50) as usize));
                out.push(cell(&row, q, ts, CellKind::Put, value.as_bytes(), i % 4));
            }
        }
        i += 1;
    }
    out
}

pub fn cell(row: &str, q: &str, ts: i64, kind: CellKind, value: &[u8], seq_id: u64) -> HCell {
    HCell {
        row: row.as_bytes().to_vec().into(),
        family: b"f".to_vec().into(),
        qualifier: q.as_bytes().to_vec().into(),
        timestamp: ts,
        kind,
        value: value.to_vec().into(),
        tags: vec![],
        seq_id,
    }
}
