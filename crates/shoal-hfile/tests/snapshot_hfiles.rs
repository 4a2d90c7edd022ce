//! The HFiles of a real HBase snapshot (`tests/fixtures/hbase-root`, written by region
//! servers with their default settings: FAST_DIFF+SNAPPY, PREFIX+GZ, plain): every one
//! reads without error, in order, with the trailer's cell count and its directory's
//! family, and together they hold exactly the cells HBase's raw scan of the cloned
//! snapshot returns (`imp_snap.expected`; sequence ids and tags are not in that dump).

mod support;

use shoal_hfile::HFile;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hbase-root")
}

/// HFiles (32 hex digits; reference files carry a `.parent` suffix) under `dir`.
fn hfiles(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        let name = support::name(&path);
        if path.is_dir() && !name.starts_with('.') && name != "recovered.edits" {
            hfiles(&path, out);
        } else if name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
            out.push(path);
        }
    }
}

/// A cell line without its sequence id and tags (the snapshot dump has neither).
fn without_seq_and_tags(line: &str) -> String {
    line.split('\t').take(6).collect::<Vec<_>>().join("\t")
}

#[test]
fn every_snapshot_hfile_reads_and_together_they_hold_the_scanned_cells() {
    let mut files = Vec::new();
    hfiles(&root().join("data"), &mut files);
    files.sort();
    assert!(files.len() >= 12, "found only {} HFiles", files.len());
    let mut got = Vec::new();
    for path in &files {
        let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{e}"));
        let f = HFile::open(file, &path.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
        let family = path.parent().map(support::name).unwrap_or_default();
        for cell in f.cells() {
            let cell = cell.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                cell.family.as_ref(),
                family.as_bytes(),
                "{}",
                path.display()
            );
            got.push(without_seq_and_tags(&support::cell_line(&cell)));
        }
    }
    let text = std::fs::read_to_string(root().join("imp_snap.expected")).expect("expected");
    let mut want: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(without_seq_and_tags)
        .collect();
    got.sort();
    got.dedup();
    want.sort();
    assert_eq!(
        got.len(),
        want.len(),
        "distinct cells in the HFiles vs the scan"
    );
    assert!(got == want, "cells differ from HBase's scan");
}
