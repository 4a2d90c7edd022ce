//! Segments in the object store: every group commit is one object
//! `<prefix>/<segment:020>.wal` (header + the batch's records), written once with
//! create-if-absent. Objects are never torn, so any bad byte is corruption.
//!
//! The header carries the object's own ULID (flag `FLAG_OBJECT_TIME`: its timestamp
//! is the object's time), which makes each object's bytes unique to its writer: that
//! is what lets [`Bucket::create_if_absent`] resolve an ambiguous retry by comparing
//! bytes.
//!
//! Recovery reads `<prefix>/history.json` first if there is one (`history.rs`) and
//! lists and reads only the segments from its `flushed_below` on.

use bytes::Bytes;
use futures::{Stream, StreamExt, TryStreamExt};

use super::WalEntry;
use super::error::WalError;
use super::history::{self, Checkpoint};
use super::local::{Recovered, parse_segment_name, segment_name};
use super::record::{self, HEADER_LEN, HeaderError, SegmentHeader};
use crate::object::{Bucket, ObjectInfo};

/// How many segment objects recovery reads at once. A run is one object
/// per group commit, so a server that took writes for a while leaves
/// hundreds of objects of a few hundred KiB, and reading them is bound by
/// each GET's first byte (~20–30 ms on S3), not by bandwidth: at 8 at once
/// the 543 objects (107 MiB) of a killed server in `shoal bench scenario
/// failover --unflushed-mib 100` took 1.9 s to read, most of its regions'
/// reopening (`docs/cluster.md`, "Failover with full memstores").
const RECOVERY_READ_CONCURRENCY: usize = 64;

/// Object key of segment `n` under `prefix`.
pub(crate) fn segment_key(prefix: &str, n: u64) -> String {
    if prefix.is_empty() {
        segment_name(n)
    } else {
        format!("{prefix}/{}", segment_name(n))
    }
}

/// What recovery found under a prefix.
#[derive(Debug, Default)]
pub(crate) struct ObjectRecovery {
    /// The segments read (from the checkpoint's `flushed_below` on).
    pub log: Recovered,
    /// `<prefix>/history.json`, if there is one.
    pub checkpoint: Option<Checkpoint>,
    /// The newest time among the segments read (those with one).
    pub newest_ms: Option<u64>,
}

/// Reads the segment objects under `prefix` that may hold unflushed entries, oldest
/// first: all of them, or with a history checkpoint those from its `flushed_below`
/// on (listed from there, so the history before it is not paged through). The next
/// number is above every segment that exists — the highest listed, or
/// `flushed_below - 1` if none is listed — and no lower than any mark's number.
pub(crate) async fn recover(bucket: &Bucket, prefix: &str) -> Result<ObjectRecovery, WalError> {
    let checkpoint = history::read_checkpoint(bucket, prefix).await?;
    let from = checkpoint.as_ref().map_or(0, |cp| cp.flushed_below);
    let numbers: Vec<u64> = list_segments(bucket, prefix, from)
        .await?
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    // Numbers a new run must stay above: segments that exist, those below
    // flushed_below, and every mark's (a mark's number may never have been written:
    // a new segment below it would break its "every segment below is older").
    let marked = checkpoint
        .as_ref()
        .and_then(|cp| cp.marks.iter().map(|(n, _)| *n).max());
    let max_segment = numbers
        .last()
        .copied()
        .max(from.checked_sub(1))
        .max(marked.and_then(|n| n.checked_sub(1)));
    let mut out = ObjectRecovery {
        log: Recovered {
            max_segment,
            ..Recovered::default()
        },
        checkpoint,
        newest_ms: None,
    };
    let mut reads = get_segments(bucket, prefix, numbers, RECOVERY_READ_CONCURRENCY);
    while let Some((n, key, data)) = reads.try_next().await? {
        let (header, entries) = decode_segment(n, &key, &data)?;
        out.newest_ms = out.newest_ms.max(header.time_ms());
        out.log.add(n, entries);
    }
    Ok(out)
}

/// The segment objects directly under `prefix` numbered `from` or above, sorted by
/// number, with their listing. Lists from the key of segment `from - 1` on.
pub(crate) async fn list_segments(
    bucket: &Bucket,
    prefix: &str,
    from: u64,
) -> Result<Vec<(u64, ObjectInfo)>, WalError> {
    let listing = match from.checked_sub(1) {
        Some(before) => {
            bucket
                .list_after(prefix, &segment_key(prefix, before))
                .await
        }
        None => bucket.list(prefix).await,
    }
    .map_err(|e| WalError::object(prefix, "list WAL segments", e))?;
    let mut segments: Vec<(u64, ObjectInfo)> = listing
        .into_iter()
        .filter_map(|info| {
            let n = parse_segment_name(direct_child(prefix, &info.path)?)?;
            (n >= from).then_some((n, info))
        })
        .collect();
    segments.sort_unstable_by_key(|(n, _)| *n);
    Ok(segments)
}

/// The name of `path` if it lies directly under `prefix` (no further `/`).
pub(crate) fn direct_child<'a>(prefix: &str, path: &'a str) -> Option<&'a str> {
    let name = if prefix.is_empty() {
        path
    } else {
        path.strip_prefix(prefix)?.strip_prefix('/')?
    };
    (!name.contains('/')).then_some(name)
}

/// GETs segments `numbers` under `prefix`, `concurrency` at once, yielding them in
/// the order given.
pub(crate) fn get_segments<'a>(
    bucket: &'a Bucket,
    prefix: &'a str,
    numbers: Vec<u64>,
    concurrency: usize,
) -> impl Stream<Item = Result<(u64, String, Bytes), WalError>> + 'a {
    futures::stream::iter(numbers.into_iter().map(move |n| {
        let key = segment_key(prefix, n);
        async move {
            match bucket.get(&key).await {
                Ok(data) => Ok((n, key, data)),
                Err(e) => Err(WalError::object(key, "read WAL segment", e)),
            }
        }
    }))
    .buffered(concurrency)
}

/// Decodes a whole segment object; any damage is [`WalError::Corrupt`].
pub(crate) fn decode_segment(
    n: u64,
    key: &str,
    data: &Bytes,
) -> Result<(SegmentHeader, Vec<WalEntry>), WalError> {
    let corrupt = |offset: usize, reason: String| WalError::Corrupt {
        segment: key.to_owned(),
        offset: offset as u64,
        reason,
    };
    let header = match record::decode_header(data) {
        Ok(h) if h.segment == n => h,
        Ok(h) => {
            return Err(corrupt(
                0,
                format!(
                    "header says segment {} but the object name says {n}",
                    h.segment
                ),
            ));
        }
        Err(HeaderError::UnsupportedVersion(found)) => {
            return Err(WalError::UnsupportedVersion {
                segment: key.to_owned(),
                found,
                supported: record::FORMAT_VERSION,
            });
        }
        Err(e) => return Err(corrupt(0, e.to_string())),
    };
    // An object is written whole, by one PUT: every byte of it is records.
    let scan = record::scan_records(data, &header, HEADER_LEN);
    match scan.bad {
        Some(bad) => Err(corrupt(bad.offset, bad.reason)),
        None if scan.valid_len != data.len() => Err(corrupt(
            scan.valid_len,
            "bytes after a seal (an object holds records only)".into(),
        )),
        None => Ok((header, scan.entries)),
    }
}

/// Writes one segment object. `AlreadyExists` means another writer uses the prefix.
pub(crate) async fn put_segment(
    bucket: &Bucket,
    prefix: &str,
    n: u64,
    data: Bytes,
) -> Result<(), WalError> {
    let key = segment_key(prefix, n);
    match bucket.create_if_absent(&key, data).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_already_exists() => Err(WalError::ConcurrentWriter {
            segment: key,
            prefix: prefix.to_owned(),
        }),
        Err(e) => Err(WalError::object(key, "put WAL segment", e)),
    }
}

/// Deletes segment objects (batched); missing ones are not errors.
pub(crate) async fn remove_segments(
    bucket: &Bucket,
    prefix: &str,
    numbers: &[u64],
) -> Result<(), WalError> {
    let keys: Vec<String> = numbers.iter().map(|&n| segment_key(prefix, n)).collect();
    let label = keys.first().cloned().unwrap_or_default();
    bucket
        .delete_many(keys)
        .await
        .map_err(|e| WalError::object(label, "delete flushed WAL segments", e))
}
