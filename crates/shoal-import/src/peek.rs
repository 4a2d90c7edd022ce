//! What an HFile holds, without reading its data: the trailer and the
//! load-on-open section (index root, file info) through a few ranged reads,
//! so a loader can check every input before it creates or loads anything,
//! send each file only to the regions its rows reach, and load the files
//! of a store in HBase's order (by `MAX_SEQ_ID_KEY`).

use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use shoal_hfile::{HFile, ReadAt};
use shoal_storage::object::Bucket;
use tokio::runtime::Handle;

use crate::error::ImportError;

/// An HFile's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HFileFacts {
    /// Its family (from its first key); empty for a file without cells.
    pub family: Bytes,
    /// First row; empty for a file without cells.
    pub first_row: Bytes,
    /// Last row; empty for a file without cells.
    pub last_row: Bytes,
    /// Cells, as the trailer counts them.
    pub entries: u64,
    /// HBase's `MAX_SEQ_ID_KEY` (the newest write in it), if recorded.
    pub max_seq_id: Option<u64>,
    /// Size in bytes.
    pub size: u64,
}

impl HFileFacts {
    /// True if some row of the file lies in `[start, end)` (end empty:
    /// unbounded).
    pub fn overlaps(&self, start: &[u8], end: &[u8]) -> bool {
        self.entries > 0
            && self.last_row[..] >= *start
            && (end.is_empty() || self.first_row[..] < *end)
    }
}

/// Reads the facts of the HFile at `path` (an error names the file and
/// what is wrong with it).
pub async fn peek(bucket: &Bucket, path: &str) -> Result<HFileFacts, ImportError> {
    let size = bucket
        .head(path)
        .await
        .map_err(|e| ImportError::io(path, e))?
        .size;
    let name = format!("{}/{path}", bucket.location().trim_end_matches('/'));
    let source = Ranged::new(bucket, path, size, Arc::default());
    tokio::task::spawn_blocking(move || facts(HFile::open(source, &name)?, size))
        .await
        .map_err(|e| ImportError::Unsupported(format!("reading {path}: {e}")))?
}

fn facts<S: ReadAt>(file: HFile<S>, size: u64) -> Result<HFileFacts, ImportError> {
    let entries = file.trailer().entry_count;
    let first = file.first_key().transpose()?;
    let last = file.last_key().transpose()?;
    let max_seq_id = file
        .file_info()
        .get(b"MAX_SEQ_ID_KEY")
        .and_then(|v| <[u8; 8]>::try_from(&v[..]).ok())
        .map(u64::from_be_bytes);
    Ok(HFileFacts {
        family: first.as_ref().map(|k| k.family.clone()).unwrap_or_default(),
        first_row: first.map(|k| k.row).unwrap_or_default(),
        last_row: last.map(|k| k.row).unwrap_or_default(),
        entries,
        max_seq_id,
        size,
    })
}

/// An object read with ranged GETs from a blocking thread, through a
/// window: a read outside the window fetches the next [`WINDOW`] bytes (or
/// what is asked, if more) in one GET, so reading a file block by block
/// costs one request per window, and a read of part of a file fetches only
/// that part. At most one window is held.
pub(crate) struct Ranged {
    bucket: Bucket,
    path: String,
    size: u64,
    runtime: Handle,
    window: Mutex<(u64, Bytes)>,
    fetched: Arc<AtomicU64>,
}

/// Bytes per GET of a [`Ranged`] read.
pub(crate) const WINDOW: u64 = 8 << 20;

impl Ranged {
    /// `path` in `bucket`, of `size` bytes; `fetched` counts bytes got.
    pub(crate) fn new(bucket: &Bucket, path: &str, size: u64, fetched: Arc<AtomicU64>) -> Ranged {
        Ranged {
            bucket: bucket.clone(),
            path: path.to_owned(),
            size,
            runtime: Handle::current(),
            window: Mutex::new((0, Bytes::new())),
            fetched,
        }
    }

    fn get(&self, start: u64, end: u64) -> io::Result<Bytes> {
        let got = self
            .runtime
            .block_on(self.bucket.get_range(&self.path, Range { start, end }))
            .map_err(io::Error::other)?;
        self.fetched.fetch_add(got.len() as u64, Ordering::Relaxed);
        if got.len() as u64 != end - start {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "asked for {} bytes at {start}, got {}",
                    end - start,
                    got.len()
                ),
            ));
        }
        Ok(got)
    }
}

impl ReadAt for Ranged {
    fn len(&self) -> u64 {
        self.size
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let end = offset
            .checked_add(len as u64)
            .filter(|&e| e <= self.size)
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end"))?;
        let mut window = self.window.lock().unwrap_or_else(|e| e.into_inner());
        let (at, data) = &*window;
        if offset >= *at && end <= at + data.len() as u64 {
            let from = (offset - at) as usize;
            return Ok(data[from..from + len].to_vec());
        }
        let fetch_end = end.max(offset.saturating_add(WINDOW)).min(self.size);
        let data = self.get(offset, fetch_end)?;
        let out = data[..len].to_vec();
        *window = (offset, data);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ranged_reads_fetch_windows_and_answer_from_them() {
        let bucket = Bucket::memory();
        let size: u64 = 20 << 20;
        let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        bucket
            .put("f", Bytes::from(data.clone()))
            .await
            .expect("put");
        let fetched = Arc::new(AtomicU64::new(0));
        let r = Ranged::new(&bucket, "f", size, fetched.clone());
        let checks = tokio::task::spawn_blocking(move || {
            let at = |o: u64, n: usize| r.read_at(o, n).expect("read");
            let mut seen = Vec::new();
            for (o, n) in [
                (0u64, 100usize),
                (1 << 20, 5000),
                (9 << 20, 64),
                (size - 10, 10),
            ] {
                seen.push((o, at(o, n), fetched.load(Ordering::Relaxed)));
            }
            let past = r.read_at(size - 5, 10).is_err();
            (seen, past)
        })
        .await
        .expect("join");
        let (seen, past_end_fails) = checks;
        for (o, got, _) in &seen {
            let o = *o as usize;
            assert_eq!(&got[..], &data[o..o + got.len()]);
        }
        let counts: Vec<u64> = seen.iter().map(|s| s.2).collect();
        // One window, a hit in it, a second window; the last bytes lie past
        // the second (9 + 8 MiB), so a third GET, clipped to the end.
        assert_eq!(counts[0], WINDOW);
        assert_eq!(counts[1], WINDOW);
        assert_eq!(counts[2], 2 * WINDOW);
        assert_eq!(counts[3], 2 * WINDOW + 10);
        assert!(past_end_fails);
    }
}
