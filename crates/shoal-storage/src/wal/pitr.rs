//! WAL history seen from outside its owner: the point-in-time-restore reader
//! ([`read_history`]), finding WAL prefixes ([`wal_prefixes`]), and the life of a
//! dead run's history — kept for the window when its server dies
//! ([`crate::wal::ForeignWal::retire`]), deleted whole once it has aged out
//! ([`sweep_history`]).
//!
//! Everything here reads the checkpoint format and segment times defined in
//! `history.rs` and `stamp.rs`; nothing here writes under a live WAL's prefix.

use std::time::Duration;

use bytes::Bytes;
use futures::TryStreamExt;

use super::error::WalError;
use super::history::{
    self, CHECKPOINT_NAME, Checkpoint, HistoryState, checkpoint_key, read_checkpoint,
};
use super::local::parse_segment_name;
use super::object::{decode_segment, direct_child, get_segments, list_segments, segment_key};
use super::record::{self, HEADER_LEN};
use crate::object::{Bucket, ObjectError, ObjectInfo};

/// Segment objects [`read_history`] reads at once.
const HISTORY_READ_CONCURRENCY: usize = 32;
/// [`read_history`] stops reading a prefix at the first segment this much past `to_ms`.
const READ_SLACK_MS: u64 = 30_000;
/// Keys in one delete request.
const DELETE_BATCH: u64 = 1000;

/// One entry of the WAL's history, with the time of the segment that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedEntry {
    /// The region that wrote it.
    pub region: String,
    /// The region's sequence number for the write.
    pub seq: u64,
    /// The time of its segment, ms since the Unix epoch: taken just before the
    /// segment's bytes were assembled, so after the entry was appended and before
    /// it was acknowledged.
    pub time_ms: u64,
    /// The encoded mutation batch.
    pub payload: Bytes,
}

/// Every entry under `prefixes` whose segment's time is in `(from_ms, to_ms]`,
/// sorted by (time, region, seq): what to replay on top of a state as of `from_ms`
/// to bring it to `to_ms`.
///
/// For each prefix the reading starts at the newest mark of its `history.json` at
/// or before `from_ms` (every segment below a mark is at most that old), or at its
/// first segment if it has no `history.json`; if it has one but no such mark and
/// has deleted history, the history needed may be gone: [`WalError::HistoryGone`].
/// Segments are read in number order, [`HISTORY_READ_CONCURRENCY`] at once. Within a
/// prefix (one run of one server, or the runs of one single-node server, whose
/// clock is assumed not to step back across a restart) numbers follow time — a
/// segment's number and time are taken together under one mutex, and the time never
/// goes backwards — so the
/// reading of a prefix stops at the first segment more than 30 s past `to_ms` (the
/// slack only spends reads; nothing past `to_ms` is returned). A segment without a
/// time (written by a build from before segment times) is
/// [`WalError::NoSegmentTime`].
pub async fn read_history(
    bucket: &Bucket,
    prefixes: &[String],
    from_ms: u64,
    to_ms: u64,
) -> Result<Vec<TimedEntry>, WalError> {
    let mut out = Vec::new();
    for prefix in prefixes {
        read_prefix(bucket, prefix.trim_matches('/'), from_ms, to_ms, &mut out).await?;
    }
    out.sort_by(|a, b| (a.time_ms, &a.region, a.seq).cmp(&(b.time_ms, &b.region, b.seq)));
    Ok(out)
}

/// The segment number to start reading `prefix` at for times after `from_ms`.
async fn start_of(bucket: &Bucket, prefix: &str, from_ms: u64) -> Result<u64, WalError> {
    let Some(cp) = read_checkpoint(bucket, prefix).await? else {
        return Ok(0);
    };
    match cp.start_for(from_ms) {
        Some(n) => Ok(n),
        None if cp.deleted_below > 0 => Err(WalError::HistoryGone {
            prefix: prefix.to_owned(),
            oldest_ms: cp.oldest_mark_ms(),
        }),
        None => Ok(0),
    }
}

/// [`read_history`] for one prefix, appending to `out`.
async fn read_prefix(
    bucket: &Bucket,
    prefix: &str,
    from_ms: u64,
    to_ms: u64,
    out: &mut Vec<TimedEntry>,
) -> Result<(), WalError> {
    let start = start_of(bucket, prefix, from_ms).await?;
    let numbers: Vec<u64> = list_segments(bucket, prefix, start)
        .await?
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let stop_after = to_ms.saturating_add(READ_SLACK_MS);
    let mut reads = get_segments(bucket, prefix, numbers, HISTORY_READ_CONCURRENCY);
    while let Some((n, key, data)) = reads.try_next().await? {
        let (header, entries) = decode_segment(n, &key, &data)?;
        let time_ms = header
            .time_ms()
            .ok_or(WalError::NoSegmentTime { segment: key })?;
        if time_ms > stop_after {
            break;
        }
        if time_ms > from_ms && time_ms <= to_ms {
            out.extend(entries.into_iter().map(|e| TimedEntry {
                region: e.region,
                seq: e.seq,
                time_ms,
                payload: e.payload,
            }));
        }
    }
    Ok(())
}

/// Every prefix under `root` (e.g. `wal`) that directly holds segment objects or a
/// `history.json`, sorted: `wal/server-1` on a single node, `wal/<server>/<run>` in a
/// cluster. Looks up to two levels down with delimiter listings, and decides whether
/// a directory holds a WAL from the first key one listing page returns, so the
/// segments themselves are never paged through. (The layouts never mix segments and
/// subdirectories in one directory; on a local-file-system bucket, where listings
/// are unordered, a directory that did could be misjudged.) Includes live WALs:
/// callers that delete must tell live runs from dead ones.
pub async fn wal_prefixes(bucket: &Bucket, root: &str) -> Result<Vec<String>, WalError> {
    let root = root.trim_matches('/');
    let mut out = Vec::new();
    for dir in list_dirs(bucket, root).await? {
        if holds_wal(bucket, &dir).await? {
            out.push(dir);
            continue;
        }
        for sub in list_dirs(bucket, &dir).await? {
            if holds_wal(bucket, &sub).await? {
                out.push(sub);
            }
        }
    }
    out.sort();
    Ok(out)
}

async fn list_dirs(bucket: &Bucket, prefix: &str) -> Result<Vec<String>, WalError> {
    bucket
        .list_dirs(prefix)
        .await
        .map_err(|e| WalError::object(prefix, "list WAL prefixes", e))
}

/// True if the first key listed under `dir` is a segment or checkpoint directly in it.
async fn holds_wal(bucket: &Bucket, dir: &str) -> Result<bool, WalError> {
    let first = bucket
        .list_first(dir)
        .await
        .map_err(|e| WalError::object(dir, "list WAL prefixes", e))?;
    Ok(first.is_some_and(|info| {
        direct_child(dir, &info.path)
            .is_some_and(|name| name == CHECKPOINT_NAME || parse_segment_name(name).is_some())
    }))
}

/// What [`sweep_history`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Prefixes whose every object was deleted (aged out).
    pub prefixes_deleted: Vec<String>,
    /// Objects deleted, `history.json` included.
    pub objects_deleted: u64,
    /// Their bytes.
    pub bytes_deleted: u64,
    /// Prefixes older than the window left in place because they hold segments
    /// not known to be flushed (no `history.json`, or segments at or above its
    /// `flushed_below`): a live WAL, or a dead run not yet retired.
    pub skipped_unflushed: Vec<String>,
}

/// For each of `prefixes` (dead runs, retired with [`crate::wal::ForeignWal::retire`])
/// whose newest segment time and newest mark are both older than `window` before
/// `now_ms`: deletes every object under it, `history.json` last. A prefix still
/// within the window is left alone; so is one holding a segment not known to be
/// flushed ([`SweepReport::skipped_unflushed`]), whatever its age, as a safeguard
/// against a live WAL passed by mistake.
pub async fn sweep_history(
    bucket: &Bucket,
    prefixes: &[String],
    window: Duration,
    now_ms: u64,
) -> Result<SweepReport, WalError> {
    let cutoff = now_ms.saturating_sub(history::window_ms(window));
    let mut report = SweepReport::default();
    for prefix in prefixes {
        let prefix = prefix.trim_matches('/');
        let age = judge(bucket, prefix).await?;
        if age.newest_ms.is_none_or(|t| t >= cutoff) {
            continue;
        }
        if age.unflushed {
            tracing::warn!(
                prefix,
                "WAL history sweep: aged out but holds segments not known to be flushed; left in place"
            );
            report.skipped_unflushed.push(prefix.to_owned());
            continue;
        }
        let (objects, bytes) = delete_prefix(bucket, prefix).await?;
        tracing::info!(
            prefix,
            objects,
            bytes,
            "WAL history sweep: dead run aged out, deleted"
        );
        report.prefixes_deleted.push(prefix.to_owned());
        report.objects_deleted += objects;
        report.bytes_deleted += bytes;
    }
    Ok(report)
}

/// How old a prefix's history is, and whether it holds unflushed segments.
struct Age {
    /// The newest of its newest mark and its newest segment's time.
    newest_ms: Option<u64>,
    unflushed: bool,
}

async fn judge(bucket: &Bucket, prefix: &str) -> Result<Age, WalError> {
    let cp = read_checkpoint(bucket, prefix).await?;
    let from = cp.as_ref().map_or(0, |c| c.flushed_below);
    let above = list_segments(bucket, prefix, from).await?;
    // The newest segment: the last listed, else the one just below flushed_below.
    let newest = match (above.last(), &cp) {
        (Some((n, info)), _) => Some((*n, Some(info.clone()))),
        (None, Some(c)) if c.flushed_below > c.deleted_below.max(1) => {
            Some((c.flushed_below - 1, None))
        }
        _ => None,
    };
    let segment_ms = match newest {
        Some((n, info)) => segment_time(bucket, prefix, n, info).await?,
        None => None,
    };
    Ok(Age {
        newest_ms: segment_ms.max(cp.as_ref().and_then(Checkpoint::newest_mark_ms)),
        // Without a checkpoint every segment is listed, and none is known flushed.
        unflushed: !above.is_empty(),
    })
}

/// The time of segment `n`: from its header if it has one, else when the store
/// says it was written. `None` if it does not exist.
async fn segment_time(
    bucket: &Bucket,
    prefix: &str,
    n: u64,
    info: Option<ObjectInfo>,
) -> Result<Option<u64>, WalError> {
    let key = segment_key(prefix, n);
    let head = match bucket.get_range(&key, 0..HEADER_LEN as u64).await {
        Ok(head) => head,
        Err(ObjectError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(WalError::object(key, "read a WAL segment header", e)),
    };
    if let Some(t) = record::decode_header(&head).ok().and_then(|h| h.time_ms()) {
        return Ok(Some(t));
    }
    let info = match info {
        Some(info) => info,
        None => match bucket.head(&key).await {
            Ok(info) => info,
            Err(ObjectError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(WalError::object(key, "read a WAL segment's metadata", e)),
        },
    };
    Ok(Some(system_ms(info.last_modified)))
}

fn system_ms(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Deletes every object under `prefix`, its checkpoint last (so an interrupted
/// sweep leaves a prefix that still says what it holds). Returns (objects, bytes).
async fn delete_prefix(bucket: &Bucket, prefix: &str) -> Result<(u64, u64), WalError> {
    let listing = bucket
        .list(prefix)
        .await
        .map_err(|e| WalError::object(prefix, "list an aged-out WAL prefix", e))?;
    let checkpoint = checkpoint_key(prefix);
    let objects = listing.len() as u64;
    let bytes = listing.iter().map(|i| i.size).sum();
    let (last, rest): (Vec<ObjectInfo>, Vec<ObjectInfo>) =
        listing.into_iter().partition(|i| i.path == checkpoint);
    for batch in [rest, last] {
        let keys: Vec<String> = batch.into_iter().map(|i| i.path).collect();
        if !keys.is_empty() {
            bucket
                .delete_many(keys)
                .await
                .map_err(|e| WalError::object(prefix, "delete an aged-out WAL prefix", e))?;
        }
    }
    Ok((objects, bytes))
}

/// [`crate::wal::ForeignWal::retire`] at `now_ms`: marks every segment of a dead
/// run flushed and keeps them for `window` from now; deletes what of its earlier
/// history is already older than the window.
pub(crate) async fn retire(
    bucket: &Bucket,
    prefix: &str,
    window: Duration,
    now_ms: u64,
) -> Result<(), WalError> {
    let prefix = prefix.trim_matches('/');
    let found = read_checkpoint(bucket, prefix).await?;
    let from = found.as_ref().map_or(0, |c| c.flushed_below);
    let listed = list_segments(bucket, prefix, from).await?;
    if found.is_none() && listed.is_empty() {
        return Ok(()); // Nothing was ever written: no history to keep.
    }
    let (end, time) = retirement_mark(bucket, prefix, found.as_ref(), &listed, now_ms).await?;
    let first = listed.first().map_or(end, |(n, _)| *n);
    let mut state = HistoryState::new(history::window_ms(window), found, first);
    state.note_flushed_below(end);
    state.add_mark((end, time));
    write_planned(bucket, prefix, &mut state, now_ms).await?;
    if delete_planned(bucket, prefix, &mut state).await? {
        write_planned(bucket, prefix, &mut state, now_ms).await?;
    }
    tracing::info!(
        prefix,
        flushed_below = end,
        "dead WAL run retired: its history is kept for the window"
    );
    Ok(())
}

/// The mark that retires a dead run: a number above every segment listed (from
/// `flushed_below` on) and every earlier mark, and a time no earlier than now, its
/// newest segment's or any earlier mark's.
async fn retirement_mark(
    bucket: &Bucket,
    prefix: &str,
    found: Option<&Checkpoint>,
    listed: &[(u64, ObjectInfo)],
    now_ms: u64,
) -> Result<(u64, u64), WalError> {
    let segment_ms = match listed.last() {
        Some((n, info)) => segment_time(bucket, prefix, *n, Some(info.clone())).await?,
        None => None,
    };
    let above_listed = listed.last().map_or(0, |(n, _)| n + 1);
    let above_marks = found
        .and_then(|c| c.marks.iter().map(|(n, _)| *n).max())
        .unwrap_or(0);
    let flushed_below = found.map_or(0, |c| c.flushed_below);
    let end = above_listed.max(above_marks).max(flushed_below);
    let time = segment_ms
        .max(found.and_then(Checkpoint::newest_mark_ms))
        .map_or(now_ms, |t| t.max(now_ms));
    Ok((end, time))
}

/// Deletes every batch `state` plans; true if there was any.
async fn delete_planned(
    bucket: &Bucket,
    prefix: &str,
    state: &mut HistoryState,
) -> Result<bool, WalError> {
    let mut deleted_any = false;
    while let Some(range) = state.next_deletion(DELETE_BATCH) {
        history::delete_range(bucket, prefix, range.clone()).await?;
        state.deleted(range.end);
        deleted_any = true;
    }
    Ok(deleted_any)
}

/// Writes the checkpoint `state` plans (forced).
async fn write_planned(
    bucket: &Bucket,
    prefix: &str,
    state: &mut HistoryState,
    now_ms: u64,
) -> Result<(), WalError> {
    if let Some(cp) = state.plan_checkpoint(now_ms, true) {
        history::write_checkpoint(bucket, prefix, &cp).await?;
        state.written(cp, now_ms);
    }
    Ok(())
}

// Compile-time check: the futures of the public API are Send (callers spawn them).
#[allow(dead_code)]
fn assert_send_futures(bucket: &Bucket) {
    fn send<T: Send>(_: T) {}
    send(read_history(bucket, &[], 0, 0));
    send(wal_prefixes(bucket, "wal"));
    send(sweep_history(bucket, &[], Duration::ZERO, 0));
    send(retire(bucket, "wal/x", Duration::ZERO, 0));
}
