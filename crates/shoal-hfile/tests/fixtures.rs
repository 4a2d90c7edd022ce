//! Every HFile fixture written by real HBase 2.6.1 (`tests/fixtures/hfiles`): its cells
//! must equal the `.cells` file line for line, and the trailer, file info, first block
//! header, encoding, compression and blooms must match the `.meta` file.

mod support;

use shoal_hfile::{BlockType, HFile};
use std::collections::BTreeMap;
use std::path::Path;
use support::{cell_lines, expected_lines, fixture_files, hex, meta, name};

#[test]
fn every_fixture_reads_back_exactly_as_hbase_wrote_it() {
    let mut failures = Vec::new();
    for path in fixture_files() {
        if let Err(e) = check_fixture(&path) {
            failures.push(format!("{}: {e}", name(&path)));
        } else {
            eprintln!("ok {}", name(&path));
        }
    }
    assert!(
        failures.is_empty(),
        "failing fixtures:\n{}",
        failures.join("\n")
    );
}

fn check_fixture(path: &Path) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let f = HFile::open(file, &name(path)).map_err(|e| e.to_string())?;
    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cell_lines(&f)))
        .map_err(|_| "reading cells failed".to_owned())?;
    let want = expected_lines(path);
    if got.len() != want.len() {
        return Err(format!("{} cells, expected {}", got.len(), want.len()));
    }
    if let Some(i) = (0..got.len()).find(|i| got[*i] != want[*i]) {
        return Err(format!("cell {i}:\n  got  {}\n  want {}", got[i], want[i]));
    }
    check_meta(&f, &meta(path))?;
    check_keys(&f)?;
    check_index(&f)
}

fn check_meta(f: &HFile<std::fs::File>, m: &BTreeMap<String, String>) -> Result<(), String> {
    let t = f.trailer();
    let pairs = [
        (
            "trailer.version",
            format!("{}.{}", t.major_version, t.minor_version),
        ),
        ("trailer.size", t.size().to_string()),
        ("trailer.file_info_offset", t.file_info_offset.to_string()),
        (
            "trailer.load_on_open_data_offset",
            t.load_on_open_offset.to_string(),
        ),
        (
            "trailer.uncompressed_data_index_size",
            t.uncompressed_data_index_size.to_string(),
        ),
        (
            "trailer.total_uncompressed_bytes",
            t.total_uncompressed_bytes.to_string(),
        ),
        ("trailer.data_index_count", t.data_index_count.to_string()),
        ("trailer.meta_index_count", t.meta_index_count.to_string()),
        ("trailer.entry_count", t.entry_count.to_string()),
        (
            "trailer.num_data_index_levels",
            t.num_data_index_levels.to_string(),
        ),
        (
            "trailer.first_data_block_offset",
            t.first_data_block_offset.to_string(),
        ),
        (
            "trailer.last_data_block_offset",
            t.last_data_block_offset.to_string(),
        ),
        (
            "trailer.comparator_class_name",
            t.comparator_class_name.clone(),
        ),
        (
            "trailer.compression_codec",
            format!(
                "{} {}",
                t.compression.ordinal(),
                t.compression.name().to_uppercase()
            ),
        ),
        ("trailer.has_encryption_key", t.encrypted.to_string()),
        ("reader.data_block_encoding", f.encoding().name().to_owned()),
        ("fileinfo.count", f.file_info().entries().len().to_string()),
        (
            "fixture.general_bloom_meta_present",
            f.has_general_bloom().to_string(),
        ),
        (
            "fixture.delete_family_bloom_meta_present",
            f.has_delete_family_bloom().to_string(),
        ),
    ];
    for (key, got) in pairs {
        expect(m, key, &got)?;
    }
    for (k, v) in f.file_info().entries() {
        expect(m, &format!("fileinfo.{}", hex(k)), &hex(v))?;
    }
    check_first_block(f, m)
}

fn check_first_block(f: &HFile<std::fs::File>, m: &BTreeMap<String, String>) -> Result<(), String> {
    let h = f
        .block_header(f.trailer().first_data_block_offset)
        .map_err(|e| e.to_string())?;
    let pairs = [
        (
            "first_block.magic",
            String::from_utf8_lossy(h.block_type.magic()).into_owned(),
        ),
        (
            "first_block.on_disk_size_without_header",
            h.on_disk_size_without_header.to_string(),
        ),
        (
            "first_block.uncompressed_size_without_header",
            h.uncompressed_size_without_header.to_string(),
        ),
        (
            "first_block.prev_block_offset",
            h.prev_block_offset.to_string(),
        ),
        (
            "first_block.checksum_type",
            format!("{} {:?}", h.checksum_type.code(), h.checksum_type).to_uppercase(),
        ),
        (
            "first_block.bytes_per_checksum",
            h.bytes_per_checksum.to_string(),
        ),
        (
            "first_block.on_disk_data_size_with_header",
            h.on_disk_data_size_with_header.to_string(),
        ),
    ];
    for (key, got) in pairs {
        expect(m, key, &got)?;
    }
    Ok(())
}

fn expect(m: &BTreeMap<String, String>, key: &str, got: &str) -> Result<(), String> {
    match m.get(key) {
        Some(want) if want == got => Ok(()),
        Some(want) => Err(format!("{key}: got {got:?}, .meta says {want:?}")),
        None => Err(format!("{key} missing from .meta (got {got:?})")),
    }
}

/// The first and last keys agree with the first and last cells.
fn check_keys(f: &HFile<std::fs::File>) -> Result<(), String> {
    let cells = support::all_cells(f).map_err(|e| e.to_string())?;
    let (Some(first), Some(last)) = (cells.first(), cells.last()) else {
        return Err("no cells".into());
    };
    let fk = f
        .first_key()
        .ok_or("no first key")?
        .map_err(|e| e.to_string())?;
    let lk = f
        .last_key()
        .ok_or("no last key")?
        .map_err(|e| e.to_string())?;
    if (fk.row.as_ref(), fk.qualifier.as_ref(), fk.timestamp)
        != (
            first.row.as_ref(),
            first.qualifier.as_ref(),
            first.timestamp,
        )
    {
        return Err(format!("first key {fk:?} is not the first cell's"));
    }
    if (lk.row.as_ref(), lk.qualifier.as_ref(), lk.timestamp)
        != (last.row.as_ref(), last.qualifier.as_ref(), last.timestamp)
    {
        return Err(format!("last key {lk:?} is not the last cell's"));
    }
    Ok(())
}

/// The multi-level index lists exactly the data blocks, from the first to the last.
fn check_index(f: &HFile<std::fs::File>) -> Result<(), String> {
    let entries = f.data_block_offsets().map_err(|e| e.to_string())?;
    let t = f.trailer();
    if entries.first().map(|e| e.offset) != Some(t.first_data_block_offset)
        || entries.last().map(|e| e.offset) != Some(t.last_data_block_offset)
    {
        return Err("index does not span first to last data block".into());
    }
    for e in &entries {
        let h = f.block_header(e.offset).map_err(|e| e.to_string())?;
        if !h.block_type.is_data() || h.block_type == BlockType::Trailer {
            return Err(format!(
                "index entry at {} is a {:?} block",
                e.offset, h.block_type
            ));
        }
    }
    let scanned = f.data_block_count().map_err(|e| e.to_string())?;
    if scanned != entries.len() {
        return Err(format!(
            "index lists {} data blocks, a scan finds {scanned}",
            entries.len()
        ));
    }
    Ok(())
}
