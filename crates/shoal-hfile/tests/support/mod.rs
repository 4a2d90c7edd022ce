//! Shared by the fixture tests: finding the HBase-written fixtures, rendering cells in
//! the fixtures' `.cells` line format, and reading `.meta` files.

#![allow(dead_code)]

use shoal_hfile::{HCell, HFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub mod sha256;

/// `tests/fixtures/hfiles`.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hfiles")
}

/// Every `.hfile` fixture, sorted by name. Fails if there are none: the fixtures are
/// part of the tests.
pub fn fixture_files() -> Vec<PathBuf> {
    let dir = fixtures_dir();
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hfile"))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no .hfile fixtures in {}", dir.display());
    out
}

pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

pub fn name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One cell as a line of a `.cells` file.
pub fn cell_line(c: &HCell) -> String {
    let value = if c.value.len() > 1024 {
        format!(
            "len={},sha256={}",
            c.value.len(),
            hex(&sha256::digest(&c.value))
        )
    } else {
        hex(&c.value)
    };
    let tags = if c.tags.is_empty() {
        "-".to_owned()
    } else {
        c.tags
            .iter()
            .map(|t| format!("{}:{}", t.kind, hex(&t.value)))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        hex(&c.row),
        hex(&c.family),
        hex(&c.qualifier),
        c.timestamp,
        c.kind.name(),
        value,
        tags,
        c.seq_id
    )
}

/// All cells of an open file, as `.cells` lines; panics on a read error.
pub fn cell_lines<S: shoal_hfile::ReadAt>(f: &HFile<S>) -> Vec<String> {
    f.cells()
        .map(|c| cell_line(&c.unwrap_or_else(|e| panic!("{e}"))))
        .collect()
}

/// All cells, or the first error.
pub fn all_cells<S: shoal_hfile::ReadAt>(
    f: &HFile<S>,
) -> Result<Vec<HCell>, shoal_hfile::HFileError> {
    f.cells().collect()
}

/// The `key = value` lines of a `.meta` file.
pub fn meta(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path.with_extension("meta"))
        .unwrap_or_else(|e| panic!("reading meta of {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// The expected cell lines of a fixture.
pub fn expected_lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path.with_extension("cells"))
        .unwrap_or_else(|e| panic!("reading cells of {}: {e}", path.display()));
    text.lines().map(str::to_owned).collect()
}
