//! An HBase HFile as cells for [`Region::ingest`](shoal_storage::region::Region::ingest):
//! read in place when it is a file on this machine, otherwise through
//! ranged GETs of 8 MiB windows (one window held, so memory stays bounded
//! whatever the file's size, and a range inside a large file fetches only
//! its part), block by block on a blocking thread, converted to Shoal cells and handed over in
//! bounded batches (at most [`QUEUED_BATCHES`] in flight).
//!
//! What is kept: row, family, qualifier, timestamp, type (Put and all four
//! delete markers) and value. What is not: HBase's MVCC numbers (the load
//! gives each file its own sequence number) and tags (Shoal has no cell
//! tags; they are counted in [`ReadStats`], and the caller says so).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use futures::StreamExt;
use shoal_hfile::{HCell, HFile, ReadAt};
use shoal_storage::cell::{Cell, CellType};
use shoal_storage::object::Bucket;
use shoal_storage::region::{IngestBatch, IngestFile};

use crate::error::ImportError;
use crate::peek::Ranged;

/// Cells per batch handed to the region.
const BATCH_CELLS: usize = 1024;
/// Value bytes per batch handed to the region.
const BATCH_BYTES: usize = 1 << 20;
/// Batches queued between the reading thread and the region's writer.
pub const QUEUED_BATCHES: usize = 4;

/// Which rows of a file to load: `start` inclusive, `end` exclusive, empty
/// = unbounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowRange {
    /// First row loaded (empty: from the start).
    pub start: Bytes,
    /// Row before which loading stops (empty: to the end).
    pub end: Bytes,
}

impl RowRange {
    /// True if `row` is in the range.
    pub fn contains(&self, row: &[u8]) -> bool {
        row >= &self.start[..] && (self.end.is_empty() || row < &self.end[..])
    }

    /// True if every row at or after `row` is past the range.
    fn is_past(&self, row: &[u8]) -> bool {
        !self.end.is_empty() && row >= &self.end[..]
    }
}

/// The rows an HFile spans: its first and last cell's (from its index and
/// file info, as HBase's `BulkLoadHFilesTool` groups files by them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSpan {
    /// The first cell's row.
    pub first: Bytes,
    /// The last cell's row.
    pub last: Bytes,
}

/// An HFile opened for a load.
pub struct OpenedHFile {
    /// Its cells in the range asked for.
    pub file: IngestFile,
    /// Its read's counters.
    pub stats: Arc<ReadStats>,
    /// The rows it spans (None: it holds no cells).
    pub span: Option<RowSpan>,
}

/// Counters of one file's read, filled while the region consumes it.
#[derive(Debug, Default)]
pub struct ReadStats {
    /// Cells read from the file (in range or not).
    pub cells_read: AtomicU64,
    /// Cells of the file that carried tags (dropped).
    pub cells_with_tags: AtomicU64,
    /// Bytes of the HFile fetched.
    pub bytes_fetched: Arc<AtomicU64>,
}

impl ReadStats {
    /// Cells read so far.
    pub fn cells_read(&self) -> u64 {
        self.cells_read.load(Ordering::Relaxed)
    }

    /// Tagged cells so far.
    pub fn cells_with_tags(&self) -> u64 {
        self.cells_with_tags.load(Ordering::Relaxed)
    }
}

/// Opens the HFile at `path` in `bucket` as the cells of `family` within
/// `range`. The file is checked (trailer, load-on-open section) before this
/// returns; a bad block later fails the stream with the file's name and
/// offset.
pub async fn open_hfile(
    bucket: &Bucket,
    path: &str,
    family: Bytes,
    range: RowRange,
) -> Result<OpenedHFile, ImportError> {
    let stats = Arc::new(ReadStats::default());
    let name = format!("{}/{path}", bucket.location().trim_end_matches('/'));
    let source = match in_place(bucket, path) {
        Some(file) => Source::Local(file),
        None => {
            let size = bucket
                .head(path)
                .await
                .map_err(|e| ImportError::io(path, e))?
                .size;
            Source::Remote(Ranged::new(bucket, path, size, stats.bytes_fetched.clone()))
        }
    };
    let opened = {
        let name = name.clone();
        tokio::task::spawn_blocking(move || HFile::open(source, &name))
            .await
            .map_err(|e| ImportError::Unsupported(format!("reading an HFile: {e}")))??
    };
    if let Some(Ok(first)) = opened.first_key()
        && first.family != family
    {
        return Err(ImportError::Unsupported(format!(
            "{name} holds family {:?}, not {:?}",
            String::from_utf8_lossy(&first.family),
            String::from_utf8_lossy(&family)
        )));
    }
    let span = match (opened.first_key(), opened.last_key()) {
        (Some(first), Some(last)) => Some(RowSpan {
            first: first?.row,
            last: last?.row,
        }),
        _ => None,
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<IngestBatch>(QUEUED_BATCHES);
    let reader_stats = stats.clone();
    tokio::task::spawn_blocking(move || {
        read_cells(&opened, &range, &reader_stats, |batch| {
            tx.blocking_send(batch).is_ok()
        });
    });
    let cells = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|batch| (batch, rx))
    })
    .boxed();
    Ok(OpenedHFile {
        file: IngestFile { family, cells },
        stats,
        span,
    })
}

/// Where an HFile's bytes come from.
enum Source {
    /// A file on this machine, read in place.
    Local(std::fs::File),
    /// An object, read through a window of ranged GETs.
    Remote(Ranged),
}

impl ReadAt for Source {
    fn len(&self) -> u64 {
        match self {
            Source::Local(f) => ReadAt::len(f),
            Source::Remote(r) => r.len(),
        }
    }

    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        match self {
            Source::Local(f) => f.read_at(offset, len),
            Source::Remote(r) => r.read_at(offset, len),
        }
    }
}

/// Reads every cell of `hfile` in `range`, handing batches to `send` until
/// it refuses one (the consumer went away) or the range is passed.
fn read_cells(
    hfile: &HFile<Source>,
    range: &RowRange,
    stats: &ReadStats,
    mut send: impl FnMut(IngestBatch) -> bool,
) {
    let mut batch = Vec::with_capacity(BATCH_CELLS);
    let mut bytes = 0usize;
    // Straight to the block that may hold the range's first row.
    let cells = match hfile.cells_from_row(&range.start) {
        Ok(cells) => cells,
        Err(e) => {
            send(Err(e.to_string()));
            return;
        }
    };
    for cell in cells {
        let cell = match cell {
            Ok(c) => c,
            Err(e) => {
                send(Err(e.to_string()));
                return;
            }
        };
        stats.cells_read.fetch_add(1, Ordering::Relaxed);
        if range.is_past(&cell.row) {
            break;
        }
        if !range.contains(&cell.row) {
            continue;
        }
        if !cell.tags.is_empty() {
            stats.cells_with_tags.fetch_add(1, Ordering::Relaxed);
        }
        bytes += cell.value.len() + cell.row.len() + cell.qualifier.len();
        batch.push(to_cell(cell));
        if batch.len() >= BATCH_CELLS || bytes >= BATCH_BYTES {
            bytes = 0;
            if !send(Ok(std::mem::replace(
                &mut batch,
                Vec::with_capacity(BATCH_CELLS),
            ))) {
                return;
            }
        }
    }
    if !batch.is_empty() {
        send(Ok(batch));
    }
}

/// HBase's cell as Shoal's (sequence number 0: the load stamps its own).
pub fn to_cell(c: HCell) -> Cell {
    let kind = match c.kind.code() {
        8 => CellType::Delete,
        10 => CellType::DeleteFamilyVersion,
        12 => CellType::DeleteColumn,
        14 => CellType::DeleteFamily,
        _ => CellType::Put,
    };
    Cell {
        row: c.row,
        family: c.family,
        qualifier: c.qualifier,
        timestamp: c.timestamp,
        kind,
        seq: 0,
        value: c.value,
    }
}

/// The file itself, when `bucket` is a directory on this machine (a
/// `file://` location) and the object is a plain file in it.
fn in_place(bucket: &Bucket, path: &str) -> Option<std::fs::File> {
    let root = bucket.location().strip_prefix("file://")?;
    if path.split('/').any(|part| part == "..") {
        return None;
    }
    let full = Path::new(root).join(path);
    let file = std::fs::File::open(full).ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}
