//! Local segment files: `<dir>/<segment:020>.wal`. Blocking code only; callers run it on
//! the WAL writer's own thread or a blocking thread (`spawn_blocking`), never on a tokio
//! worker.
//!
//! Durability protocol: a new segment is created with `create_new`, its header written
//! and `fdatasync`ed, then the directory is `fsync`ed, before any record goes in. Each
//! group commit is one `write_all` and one `fdatasync`. So after a crash every segment
//! but the last one written to ends on a record boundary, and that one has at most a
//! torn tail (the batch in flight), which recovery cuts and truncates away — physically,
//! so that the invariant still holds once a newer segment exists. Segments after it can
//! only be prepared ones that were never written to (see below).
//!
//! Preallocation: the next segment is prepared ahead of time as a *spare*
//! (`<n:020>.wal.spare`: header, then zeros up to the segment size, synced), then
//! linked into place as `<n:020>.wal` (never replacing a file) and the directory synced,
//! all on a background thread: a roll then only switches files. A rename and directory
//! sync at the roll, inside the commit path, can force a file-system journal commit
//! while puts wait (with online discard, `-o discard`, that commit also trims every
//! block freed since the last one). The writetail runs showed no difference within
//! their run-to-run spread; the commit path simply has no metadata work left. An
//! unused prepared segment is an empty segment (a header and zeros) and recovery reads
//! it as one. Group commits then overwrite
//! blocks that are already allocated and written, so the file's size and extents do
//! not change and `fdatasync` has no metadata to journal: on ext4 an appending
//! `fdatasync` waits for a journal commit shared with every other file-system change
//! (SST uploads, L2 writes, deletions), an overwriting one does not. Zeros after the
//! last record are therefore a clean end of a segment, not a torn tail; spares left
//! by a crash hold no entries and are deleted at recovery.
//!
//! Recycling (`recycle.rs`): a spare is made from a retired segment's file when one
//! is free, with only its header rewritten; its old records fail the new segment's
//! checksums. A segment the writer leaves ends in a seal (synced before the next one
//! is written to), so what follows the seal is known to be leftovers, not damage.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use bytes::Bytes;

use super::WalEntry;
use super::error::WalError;
use super::record::{self, HEADER_LEN, HeaderError};
use super::recycle;
use super::retention::{self, RegionMaxes};

/// File name of segment `n`.
pub(crate) fn segment_name(n: u64) -> String {
    format!("{n:020}.wal")
}

/// Parses a segment file or object name; `None` for anything else.
pub(crate) fn parse_segment_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".wal")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// What recovery found in the existing segments.
#[derive(Debug, Default)]
pub(crate) struct Recovered {
    /// Entries in log order, grouped by region.
    pub entries: HashMap<String, Vec<WalEntry>>,
    pub entry_count: u64,
    /// Segments that remain, with their per-region max seq and record bytes.
    pub segments: Vec<(u64, RegionMaxes, u64)>,
    /// Highest segment number seen (including removed torn ones).
    pub max_segment: Option<u64>,
    pub tails_cut: u64,
    pub segments_removed: u64,
}

impl Recovered {
    pub(crate) fn add(&mut self, segment: u64, entries: Vec<WalEntry>) {
        let mut maxes = RegionMaxes::new();
        let mut bytes = 0u64;
        for e in entries {
            retention::note(&mut maxes, &e.region, e.seq);
            bytes +=
                (record::RECORD_PREFIX_LEN + record::body_len(&e.region, e.payload.len())) as u64;
            self.entry_count += 1;
            self.entries.entry(e.region.clone()).or_default().push(e);
        }
        self.segments.push((segment, maxes, bytes));
    }
}

fn sync_dir(dir: &Path) -> Result<(), WalError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| WalError::io(dir.display(), "fsync WAL directory", e))
}

/// Reads every segment in `dir` (created if missing), oldest first; cuts the torn tail of
/// the last one. Errors on corruption anywhere else.
pub(crate) fn recover(dir: &Path) -> Result<Recovered, WalError> {
    fs::create_dir_all(dir).map_err(|e| WalError::io(dir.display(), "create WAL directory", e))?;
    let mut numbers = Vec::new();
    let listing =
        fs::read_dir(dir).map_err(|e| WalError::io(dir.display(), "list WAL directory", e))?;
    for item in listing {
        let item = item.map_err(|e| WalError::io(dir.display(), "list WAL directory", e))?;
        let name = item.file_name();
        let name = name.to_str().unwrap_or_default();
        if let Some(n) = parse_segment_name(name) {
            numbers.push(n);
        } else if name.ends_with(recycle::FREE_SUFFIX) {
            // A retired segment kept for reuse: leftovers only, never read.
        } else if name.ends_with(SPARE_SUFFIX) {
            // A segment prepared ahead of time and never put in place: no entries.
            let path = item.path();
            fs::remove_file(&path)
                .map_err(|e| WalError::io(path.display(), "remove spare segment", e))?;
        }
    }
    numbers.sort_unstable();
    let mut out = Recovered {
        max_segment: numbers.last().copied(),
        ..Recovered::default()
    };
    for (i, &n) in numbers.iter().enumerate() {
        let last = i + 1 == numbers.len();
        let path = dir.join(segment_name(n));
        let shown = path.display().to_string();
        let data =
            Bytes::from(fs::read(&path).map_err(|e| WalError::io(&shown, "read segment", e))?);
        let header = match record::decode_header(&data) {
            Ok(h) if h.segment == n => h,
            Ok(h) => {
                return Err(WalError::Corrupt {
                    segment: shown,
                    offset: 0,
                    reason: format!(
                        "header says segment {} but the file name says {n}",
                        h.segment
                    ),
                });
            }
            Err(HeaderError::UnsupportedVersion(found)) => {
                return Err(WalError::UnsupportedVersion {
                    segment: shown,
                    found,
                    supported: record::FORMAT_VERSION,
                });
            }
            // A crash while creating the newest segment: its header is synced before any
            // record is written, so a file no longer than a header holds no entries.
            Err(e) if last && data.len() <= HEADER_LEN => {
                tracing::warn!(
                    segment = %shown,
                    len = data.len(),
                    reason = %e,
                    "WAL: removing a segment torn while it was being created (it holds no entries)"
                );
                fs::remove_file(&path)
                    .map_err(|e| WalError::io(&shown, "remove torn segment", e))?;
                sync_dir(dir)?;
                out.tails_cut += 1;
                out.segments_removed += 1;
                continue;
            }
            Err(e) => {
                return Err(WalError::Corrupt {
                    segment: shown,
                    offset: 0,
                    reason: e.to_string(),
                });
            }
        };
        let mut scan = record::scan_records(&data, &header, HEADER_LEN);
        // Zeros after the last record: the preallocated rest of the segment. (After a
        // seal the scan has stopped, with no bad record: the rest is leftovers.)
        if scan.bad.is_some() && data[scan.valid_len..].iter().all(|&b| b == 0) {
            scan.bad = None;
        }
        if let Some(bad) = scan.bad {
            // A segment prepared ahead of time may already be in place after the
            // one the crash tore: if no later segment holds a record, the writer
            // never rolled past this one, and its bad tail is the write in flight.
            if !last && !later_segments_hold_no_records(dir, &numbers[i + 1..])? {
                return Err(WalError::Corrupt {
                    segment: shown,
                    offset: bad.offset as u64,
                    reason: bad.reason,
                });
            }
            tracing::warn!(
                segment = %shown,
                offset = bad.offset,
                dropped_bytes = data.len() - scan.valid_len,
                reason = %bad.reason,
                "WAL: cutting the torn tail of the last segment (a write in flight at a crash)"
            );
            // Truncate for real: once a newer segment exists this one is no longer the
            // last, and only the last may end in a bad record.
            let file = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| WalError::io(&shown, "open segment to cut its torn tail", e))?;
            file.set_len(scan.valid_len as u64)
                .and_then(|()| file.sync_all())
                .map_err(|e| WalError::io(&shown, "truncate torn tail", e))?;
            out.tails_cut += 1;
        }
        out.add(n, scan.entries);
    }
    Ok(out)
}

/// True if every one of segments `numbers` holds no record: a header (or less)
/// followed only by zeros, as a prepared segment is before its first write, or (a
/// recycled file, version 2) by leftovers that fail their checksums from the first
/// byte on. A seal counts as a record: the writer only seals a segment it leaves.
fn later_segments_hold_no_records(dir: &Path, numbers: &[u64]) -> Result<bool, WalError> {
    for &n in numbers {
        let path = dir.join(segment_name(n));
        let data = Bytes::from(
            fs::read(&path).map_err(|e| WalError::io(path.display(), "read segment", e))?,
        );
        let holds = match record::decode_header(&data) {
            Ok(h) if h.version >= 2 => {
                let scan = record::scan_records(&data, &h, HEADER_LEN);
                !scan.entries.is_empty() || scan.sealed
            }
            _ => data.len() > HEADER_LEN && data[HEADER_LEN..].iter().any(|&b| b != 0),
        };
        if holds {
            return Ok(false);
        }
    }
    Ok(true)
}

/// File-name suffix of a segment prepared ahead of time.
pub(crate) const SPARE_SUFFIX: &str = ".wal.spare";

/// Zeros written (and synced) at a time when a spare is filled fresh.
const FILL_CHUNK: usize = 256 << 10;
/// Pause between two chunks of a fresh fill.
const FILL_PAUSE: std::time::Duration = std::time::Duration::from_millis(1);

/// Where segment `number` is prepared before it is put in place.
fn spare_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!(
        "{}{}",
        segment_name(number).trim_end_matches(".wal"),
        SPARE_SUFFIX
    ))
}

/// A segment prepared ahead of time: durable, already in place under its segment
/// name, not yet written to. Either a fresh file (header, then zeros) or a recycled
/// one (header, then what its earlier life left, which fails this segment's
/// checksums).
#[derive(Debug)]
pub(crate) struct SpareSegment {
    number: u64,
    path: PathBuf,
    file: File,
    recycled: bool,
}

impl SpareSegment {
    /// Prepares segment `number` in `dir`, `size` bytes long at least: from a free
    /// file if there is one (`recycle.rs`), else written fresh.
    ///
    /// A fresh one is its header, then zeros up to `size`, synced. The zeros go out
    /// 256 KiB at a time, each chunk synced before the next and followed by a 1 ms
    /// pause, so the device queue never holds more than a chunk ahead of a group
    /// commit's `fdatasync` and the commits get the device between chunks. (With the
    /// fill beside it, `bench/fsync-probe.py` measured a probe sync's p99 at 7.6–10 ms
    /// in 1 MiB chunks, 0.37 ms in 256 KiB chunks with the pause.) A 64 MiB segment
    /// then takes about half a second; it has half a segment's time.
    pub fn create(
        dir: &Path,
        number: u64,
        writer: u128,
        size: u64,
    ) -> Result<SpareSegment, WalError> {
        if let Some(spare) = SpareSegment::recycle(dir, number, writer, size)? {
            return Ok(spare);
        }
        let path = spare_path(dir, number);
        let shown = path.display().to_string();
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| WalError::io(&shown, "create spare segment", e))?;
        let zeros = vec![0u8; FILL_CHUNK];
        let mut written = HEADER_LEN as u64;
        let result = file
            .write_all(&record::encode_header(number, writer))
            .and_then(|()| {
                file.sync_data()?;
                while written < size {
                    let n = (size - written).min(zeros.len() as u64) as usize;
                    file.write_all(&zeros[..n])?;
                    file.sync_data()?;
                    written += n as u64;
                    if written < size {
                        std::thread::sleep(FILL_PAUSE);
                    }
                }
                file.sync_all()
            });
        if let Err(e) = result {
            let _ = fs::remove_file(&path);
            return Err(WalError::io(&shown, "preallocate spare segment", e));
        }
        SpareSegment::put_in_place(dir, number, path, file, false)
    }

    /// Prepares segment `number` from a free file, if `dir` has one at least `size`
    /// bytes long: its header rewritten and synced, nothing else touched.
    pub fn recycle(
        dir: &Path,
        number: u64,
        writer: u128,
        size: u64,
    ) -> Result<Option<SpareSegment>, WalError> {
        let path = spare_path(dir, number);
        let Some(file) = recycle::take_free(dir, &path, size) else {
            return Ok(None);
        };
        use std::os::unix::fs::FileExt;
        let result = file
            .write_all_at(&record::encode_header(number, writer), 0)
            .and_then(|()| file.sync_data());
        if let Err(e) = result {
            let _ = fs::remove_file(&path);
            return Err(WalError::io(
                path.display(),
                "rewrite a recycled segment's header",
                e,
            ));
        }
        SpareSegment::put_in_place(dir, number, path, file, true).map(Some)
    }

    /// Links the prepared file at `path` into place as segment `number` without
    /// replacing anything (a hard link fails if the name exists), then removes the
    /// spare name and syncs the directory.
    fn put_in_place(
        dir: &Path,
        number: u64,
        path: PathBuf,
        file: File,
        recycled: bool,
    ) -> Result<SpareSegment, WalError> {
        let shown = path.display().to_string();
        let final_path = dir.join(segment_name(number));
        if let Err(e) = fs::hard_link(&path, &final_path) {
            let _ = fs::remove_file(&path);
            return Err(WalError::io(
                final_path.display(),
                "put spare segment in place",
                e,
            ));
        }
        if let Err(e) = fs::remove_file(&path)
            .map_err(|e| WalError::io(&shown, "remove spare name", e))
            .and_then(|()| sync_dir(dir))
        {
            // Not in place after all: the writer creates the segment itself.
            let _ = fs::remove_file(&final_path);
            let _ = fs::remove_file(&path);
            return Err(e);
        }
        Ok(SpareSegment {
            number,
            path: final_path,
            file,
            recycled,
        })
    }

    /// True if it was made from a retired segment's file rather than written fresh.
    pub fn recycled(&self) -> bool {
        self.recycled
    }

    /// The segment number it was prepared for.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Makes it the current segment: it is already in place and durable, so
    /// this touches no metadata.
    pub fn install(self) -> Result<SegmentFile, WalError> {
        let path = self.path;
        let shown = path.display().to_string();
        let mut file = self.file;
        file.seek(SeekFrom::Start(HEADER_LEN as u64))
            .map_err(|e| WalError::io(&shown, "seek", e))?;
        Ok(SegmentFile {
            number: self.number,
            path,
            file,
            len: HEADER_LEN as u64,
            sealed: false,
        })
    }

    /// Deletes it (unused; it holds no entries). Only if the name still
    /// refers to this very file.
    pub fn discard(self) {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ours), Ok(named)) = (self.file.metadata(), fs::metadata(&self.path))
            && ours.ino() == named.ino()
            && ours.dev() == named.dev()
        {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// A segment file open for appends.
#[derive(Debug)]
pub(crate) struct SegmentFile {
    pub number: u64,
    pub path: PathBuf,
    file: File,
    /// Bytes of header and records (a preallocated file is longer: zeros).
    pub len: u64,
    /// Its seal is written: nothing more goes in.
    sealed: bool,
}

impl SegmentFile {
    /// Creates segment `number` in `dir` with its header, durable before returning.
    pub fn create(dir: &Path, number: u64, writer: u128) -> Result<SegmentFile, WalError> {
        let path = dir.join(segment_name(number));
        let shown = path.display().to_string();
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| WalError::io(&shown, "create segment", e))?;
        file.write_all(&record::encode_header(number, writer))
            .and_then(|()| file.sync_all())
            .map_err(|e| WalError::io(&shown, "write segment header", e))?;
        sync_dir(dir)?;
        Ok(SegmentFile {
            number,
            path,
            file,
            len: HEADER_LEN as u64,
            sealed: false,
        })
    }

    /// Appends `batch` (whole records, encoded with no mask) and makes it durable:
    /// masks the records' checksums for this segment in place, then one
    /// `write_all`, one `fdatasync`.
    pub fn append(&mut self, batch: &mut [u8]) -> Result<(), WalError> {
        if self.sealed {
            return Err(WalError::io(
                self.path.display(),
                "write",
                std::io::Error::other("the segment is sealed"),
            ));
        }
        record::mask_records(batch, record::record_mask(self.number));
        self.file
            .write_all(batch)
            .map_err(|e| WalError::io(self.path.display(), "write", e))?;
        self.file
            .sync_data()
            .map_err(|e| WalError::io(self.path.display(), "fdatasync", e))?;
        self.len += batch.len() as u64;
        Ok(())
    }

    /// Writes its seal just past its last record and makes it durable: whatever
    /// follows in the file is then known to be leftovers, not damage. The writer
    /// seals a segment before it writes to the next one, and at close.
    pub fn seal(&mut self) -> Result<(), WalError> {
        if self.sealed {
            return Ok(());
        }
        let seal = record::encode_seal(self.number, self.len);
        self.file
            .write_all(&seal)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| WalError::io(self.path.display(), "seal segment", e))?;
        self.len += seal.len() as u64;
        self.sealed = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prepared_segment_is_in_place_empty_and_never_replaces_a_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spare = SpareSegment::create(dir.path(), 5, 7, 4096).expect("prepare");
        let path = dir.path().join(segment_name(5));
        assert_eq!(std::fs::metadata(&path).expect("in place").len(), 4096);
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec![segment_name(5)], "no spare name left");
        // Unused, it recovers as an empty segment.
        let recovered = recover(dir.path()).expect("recover");
        assert_eq!(recovered.entry_count, 0);
        assert_eq!(recovered.max_segment, Some(5));
        // Preparing the same number again fails and leaves the file alone.
        std::fs::write(&path, b"not a spare").expect("overwrite");
        assert!(SpareSegment::create(dir.path(), 5, 7, 4096).is_err());
        assert_eq!(std::fs::read(&path).expect("read"), b"not a spare");
        // Discarding the first one no longer touches that name: it is another file.
        std::fs::remove_file(&path).expect("remove");
        std::fs::write(&path, b"someone else").expect("write");
        spare.discard();
        assert!(path.exists());
        // Installed, it is written from just after the header.
        std::fs::remove_file(&path).expect("remove");
        let spare = SpareSegment::create(dir.path(), 6, 7, 4096).expect("prepare");
        let segment = spare.install().expect("install");
        assert_eq!(segment.len, HEADER_LEN as u64);
        assert_eq!(segment.number, 6);
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(segment_name(42), "00000000000000000042.wal");
        assert_eq!(parse_segment_name(&segment_name(42)), Some(42));
        assert_eq!(parse_segment_name(&segment_name(u64::MAX)), Some(u64::MAX));
        assert_eq!(parse_segment_name("42.wal"), None);
        assert_eq!(parse_segment_name("0000000000000000004x.wal"), None);
        assert_eq!(parse_segment_name("00000000000000000042.wal.tmp"), None);
        assert_eq!(parse_segment_name("99999999999999999999.wal"), None);
    }
}
