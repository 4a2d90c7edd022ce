//! What an HFile holds, without reading its data: the trailer and the
//! load-on-open section (index root, file info) through a few ranged reads,
//! so a loader can check every input before it creates or loads anything,
//! send each file only to the regions its rows reach, and load the files
//! of a store in HBase's order (by `MAX_SEQ_ID_KEY`).

use std::io;
use std::ops::Range;

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
    let source = Ranged {
        bucket: bucket.clone(),
        path: path.to_owned(),
        size,
        runtime: Handle::current(),
    };
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

/// An object read with ranged GETs from a blocking thread.
struct Ranged {
    bucket: Bucket,
    path: String,
    size: u64,
    runtime: Handle,
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
        let got = self
            .runtime
            .block_on(
                self.bucket
                    .get_range(&self.path, Range { start: offset, end }),
            )
            .map_err(io::Error::other)?;
        if got.len() != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("asked for {len} bytes at {offset}, got {}", got.len()),
            ));
        }
        Ok(got.to_vec())
    }
}
