//! Retired local segment files kept for reuse: `<dir>/<n:020>.wal.free`.
//!
//! A segment whose entries are all flushed is retired. Up to [`FREE_FILES_KEPT`] of
//! them (format version 2, at least a segment long) are renamed to a free name
//! instead of deleted; the next segment to be prepared takes one, rewrites its
//! header and is ready, where a fresh one is written full of zeros first. That fill
//! doubled the log's disk writes, and while it ran (about 0.1–0.2 s per 64 MiB
//! segment) the group commits' `fdatasync`s waited behind its writes. A recycled file
//! costs one header write and sync: its blocks are already allocated and written, so
//! group commits overwrite them with no file-system metadata to journal. What is left
//! in it from its earlier life fails the new segment's record checksums (see
//! `record.rs`), and a seal marks where each segment's records end.
//!
//! Blocking code only, like `local.rs`. Retiring needs no sync: a free file whose
//! rename is lost in a crash is an old segment again, read at recovery and filtered
//! out as flushed. Taking one syncs the directory before anything in the file
//! changes, so a file's contents never change under a name it may return to.

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::path::Path;

use super::error::WalError;
use super::local::segment_name;
use super::record::{self, HEADER_LEN};

/// File-name suffix of a retired segment kept for reuse.
pub(crate) const FREE_SUFFIX: &str = ".wal.free";

/// How many retired segment files are kept for reuse at most (256 MiB of disk at
/// the default segment size). A writer needs one per roll, and segments retire in
/// bursts (a flush frees every segment it covers), so the pool holds enough for a
/// few rolls between flushes.
pub(crate) const FREE_FILES_KEPT: usize = 4;

/// File name of a free file that was segment `n`.
pub(crate) fn free_name(n: u64) -> String {
    format!("{n:020}{FREE_SUFFIX}")
}

/// Free files in `dir`, oldest segment first.
fn free_files(dir: &Path) -> Result<Vec<String>, WalError> {
    let listing =
        fs::read_dir(dir).map_err(|e| WalError::io(dir.display(), "list WAL directory", e))?;
    let mut names = Vec::new();
    for item in listing {
        let item = item.map_err(|e| WalError::io(dir.display(), "list WAL directory", e))?;
        if let Some(name) = item.file_name().to_str()
            && name.ends_with(FREE_SUFFIX)
        {
            names.push(name.to_owned());
        }
    }
    names.sort_unstable();
    Ok(names)
}

/// True if the file at `path` is at least `min_len` bytes and starts with a version-2
/// header: its leftovers then fail any other segment's checksums. (A version-1
/// segment's records carry no mask, so one segment number in 2^32 would accept them.)
fn reusable(path: &Path, min_len: u64) -> bool {
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.len() >= min_len) {
        return false;
    }
    let mut header = [0u8; HEADER_LEN];
    file.read_exact(&mut header).is_ok()
        && record::decode_header(&header).is_ok_and(|h| h.version >= 2)
}

/// Retires segments `numbers` of `dir`: keeps some as free files when `keep` says
/// how long one must be, deletes the rest. A missing file is not an error. Returns
/// how many were kept.
pub(crate) fn retire_segments(
    dir: &Path,
    numbers: &[u64],
    keep: Option<u64>,
) -> Result<usize, WalError> {
    let mut free = match keep {
        Some(_) => free_files(dir)?.len(),
        None => FREE_FILES_KEPT,
    };
    let mut kept = 0;
    for &n in numbers {
        let path = dir.join(segment_name(n));
        if free < FREE_FILES_KEPT
            && keep.is_some_and(|min_len| reusable(&path, min_len))
            && fs::rename(&path, dir.join(free_name(n))).is_ok()
        {
            free += 1;
            kept += 1;
            continue;
        }
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(WalError::io(path.display(), "delete flushed segment", e)),
        }
    }
    Ok(kept)
}

/// Takes the oldest reusable free file of `dir`, renamed to `to` and open for
/// writing; deletes free files that are not reusable (shorter than `min_len`, say,
/// after the segment size was lowered). `None` if there is none; a failure is
/// logged and also gives `None`: the caller then writes a fresh file.
pub(crate) fn take_free(dir: &Path, to: &Path, min_len: u64) -> Option<File> {
    let names = match free_files(dir) {
        Ok(names) => names,
        Err(e) => {
            tracing::warn!(error = %e, "WAL: could not list free segment files");
            return None;
        }
    };
    for name in names {
        let path = dir.join(&name);
        if !reusable(&path, min_len) {
            if let Err(e) = fs::remove_file(&path) {
                tracing::warn!(file = %path.display(), error = %e, "WAL: could not delete an unusable free segment file");
            }
            continue;
        }
        if let Err(e) = fs::rename(&path, to) {
            tracing::warn!(file = %path.display(), error = %e, "WAL: could not take a free segment file");
            continue;
        }
        // The renames that made this file free, and this one, must be durable before
        // its header is rewritten. Otherwise a crash could bring the file back under
        // its old segment name with another segment's header in it, which recovery
        // rightly calls corruption. (An overwrite's `fdatasync` does not commit the
        // file system's journal, where those renames wait.)
        if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
            tracing::warn!(dir = %dir.display(), error = %e, "WAL: could not sync the WAL directory; not reusing a free segment file");
            let _ = fs::remove_file(to);
            return None;
        }
        match OpenOptions::new().write(true).open(to) {
            Ok(file) => return Some(file),
            Err(e) => {
                tracing::warn!(file = %to.display(), error = %e, "WAL: could not open a free segment file");
                let _ = fs::remove_file(to);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(dir: &Path, n: u64, version2: bool, len: usize) {
        let version = if version2 { 2 } else { 1 };
        let mut data = record::encode_header_version(n, 7, version).to_vec();
        data.resize(len, 0xab);
        fs::write(dir.join(segment_name(n)), data).expect("write segment");
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn retiring_keeps_a_few_long_version_2_files_and_deletes_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        segment(d, 1, true, 100); // too short
        segment(d, 2, false, 4096); // version 1
        for n in 3..=7 {
            segment(d, n, true, 4096 + n as usize); // the fifth is one too many
        }
        let kept = retire_segments(d, &[1, 2, 3, 4, 5, 6, 7, 8], Some(4096)).expect("retire");
        assert_eq!(kept, FREE_FILES_KEPT);
        let free: Vec<String> = (3..=6).map(free_name).collect();
        assert_eq!(names(d), free);
        // Without recycling everything goes.
        segment(d, 9, true, 4096);
        assert_eq!(retire_segments(d, &[9], None).expect("retire"), 0);
        assert_eq!(names(d), free);
    }

    #[test]
    fn taking_a_free_file_renames_the_oldest_usable_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        segment(d, 3, true, 1000);
        segment(d, 4, true, 4096);
        retire_segments(d, &[3], Some(100)).expect("retire");
        retire_segments(d, &[4], Some(4096)).expect("retire");
        assert_eq!(names(d), vec![free_name(3), free_name(4)]);
        let to = d.join("spare");
        // The short one is deleted on the way, the next one taken.
        let file = take_free(d, &to, 4096).expect("a free file");
        assert_eq!(file.metadata().expect("meta").len(), 4096);
        assert_eq!(names(d), vec!["spare".to_owned()]);
        fs::remove_file(&to).expect("remove");
        assert!(take_free(d, &to, 4096).is_none());
    }
}
