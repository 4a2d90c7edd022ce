//! `HFile::cells_from_row`: starting at any row of an HBase-written file
//! (every encoding and codec, multi-level indexes) gives exactly the cells
//! a full read gives from that row on, after skipping earlier rows, and
//! reads fewer blocks than a full read when the row is far in.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use shoal_hfile::{HCell, HFile};
use std::path::PathBuf;

fn hfiles() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hfiles");
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hfile"))
        .collect();
    out.sort();
    assert!(out.len() >= 29, "the fixtures are there");
    out
}

#[test]
fn every_row_start_gives_the_rest_of_the_file() {
    for path in hfiles() {
        let file = HFile::open(std::fs::File::open(&path).unwrap(), "f").unwrap();
        let all: Vec<HCell> = file.cells().map(Result::unwrap).collect();
        let mut rows: Vec<&[u8]> = all.iter().map(|c| &c.row[..]).collect();
        rows.dedup();
        // Every 7th row, the first, the last, and rows between and past them.
        let mut starts: Vec<Vec<u8>> = rows.iter().step_by(7).map(|r| r.to_vec()).collect();
        starts.push(rows[rows.len() - 1].to_vec());
        starts.push(vec![0x00]);
        starts.push([rows[40], &[0x00][..]].concat());
        starts.push(vec![0xff; 8]);
        for start in starts {
            let want: Vec<&HCell> = all.iter().filter(|c| c.row[..] >= start[..]).collect();
            let got: Vec<HCell> = file
                .cells_from_row(&start)
                .unwrap()
                .map(Result::unwrap)
                .filter(|c| c.row[..] >= start[..])
                .collect();
            assert_eq!(
                got.iter().collect::<Vec<_>>(),
                want,
                "{path:?} from {start:?}"
            );
        }
        // Far in, fewer cells are decoded than in a full read.
        let late = rows[rows.len() * 3 / 4];
        let decoded = file.cells_from_row(late).unwrap().count();
        assert!(
            decoded < all.len() / 2,
            "{path:?}: {decoded} of {}",
            all.len()
        );
    }
}
