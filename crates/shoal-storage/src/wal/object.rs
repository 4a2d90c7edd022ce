//! Segments in the object store: every group commit is one object
//! `<prefix>/<segment:020>.wal` (header + the batch's records), written once with
//! create-if-absent. Objects are never torn, so any bad byte is corruption.
//!
//! The header carries this run's writer id (a ULID), which makes each object's bytes
//! unique to its writer: that is what lets [`Bucket::create_if_absent`] resolve an
//! ambiguous retry by comparing bytes.

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};

use super::error::WalError;
use super::local::{Recovered, parse_segment_name, segment_name};
use super::record::{self, HEADER_LEN, HeaderError};
use crate::object::Bucket;

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

/// Reads every segment object under `prefix`, oldest first.
pub(crate) async fn recover(bucket: &Bucket, prefix: &str) -> Result<Recovered, WalError> {
    let listing = bucket
        .list(prefix)
        .await
        .map_err(|e| WalError::object(prefix, "list WAL segments", e))?;
    let mut numbers: Vec<u64> = listing
        .iter()
        .filter_map(|info| {
            // Only direct children, `<prefix>/<n>.wal` (a segment name has no '/').
            let name = if prefix.is_empty() {
                info.path.as_str()
            } else {
                info.path.strip_prefix(prefix)?.strip_prefix('/')?
            };
            parse_segment_name(name)
        })
        .collect();
    numbers.sort_unstable();
    let mut out = Recovered {
        max_segment: numbers.last().copied(),
        ..Recovered::default()
    };
    let mut reads = futures::stream::iter(numbers.into_iter().map(|n| {
        let key = segment_key(prefix, n);
        async move {
            match bucket.get(&key).await {
                Ok(data) => Ok((n, key, data)),
                Err(e) => Err(WalError::object(key, "read WAL segment", e)),
            }
        }
    }))
    .buffered(RECOVERY_READ_CONCURRENCY);
    while let Some((n, key, data)) = reads.try_next().await? {
        out.add(n, decode_segment(n, &key, &data)?);
    }
    Ok(out)
}

/// Decodes a whole segment object; any damage is [`WalError::Corrupt`].
fn decode_segment(n: u64, key: &str, data: &Bytes) -> Result<Vec<super::WalEntry>, WalError> {
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
        None => Ok(scan.entries),
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
