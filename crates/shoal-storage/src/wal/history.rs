//! The WAL's history for point-in-time restore (object backend, `WalOptions::history`):
//! flushed segment objects are kept for a time window instead of deleted, and a
//! checkpoint object `<prefix>/history.json` says where they are.
//!
//! ```json
//! {"format":1,"flushed_below":N,"deleted_below":L,"marks":[[n,ms],...]}
//! ```
//!
//! - `flushed_below`: every segment numbered below it is fully flushed; recovery
//!   reads only the segments from it on.
//! - `marks`: `(n, ms)` pairs taken under the stamp mutex (`stamp.rs`): every segment
//!   numbered below `n` has a time `<= ms`, every one from `n` on a time `>= ms`. One
//!   at each open, then at most one a minute.
//! - `deleted_below`: every segment numbered below it has been deleted.
//!
//! This file owns the checkpoint's format and its I/O, the owner's pure state
//! ([`HistoryState`]) and the owner's upkeep ([`maintain`]): the checkpoint is
//! written when `flushed_below` advanced, a mark was taken or history aged out, at
//! most once per 10 s (and at open and close); history older than the window is
//! deleted in batches from the same place, bounded per call, off the append path.
//!
//! Safety of deletion: a mark is dropped from the checkpoint *before* the segments
//! below it are deleted, and `deleted_below` advances only after they are; so a
//! reader that starts at a mark of the checkpoint it read never finds a hole.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::error::WalError;
use super::metrics::WalMetrics;
use super::object::segment_key;
use super::stamp::now_ms;
use super::writer::Shared;
use crate::object::{Bucket, ObjectError};

/// Name of the checkpoint object under a WAL prefix.
pub(crate) const CHECKPOINT_NAME: &str = "history.json";
/// The checkpoint format written and read.
pub(crate) const CHECKPOINT_FORMAT: u32 = 1;
/// Keys in one delete request.
const DELETE_BATCH: u64 = 1000;
/// Delete requests in one upkeep call (bounded work per call).
const DELETE_BATCHES_PER_CALL: usize = 10;

/// The checkpoint object's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Checkpoint {
    pub format: u32,
    pub flushed_below: u64,
    pub deleted_below: u64,
    pub marks: Vec<(u64, u64)>,
}

impl Checkpoint {
    /// Where to start reading to see every segment with a time after `from_ms`:
    /// the number of the newest mark at or before it.
    pub fn start_for(&self, from_ms: u64) -> Option<u64> {
        self.marks
            .iter()
            .filter(|(_, ms)| *ms <= from_ms)
            .max_by_key(|(n, ms)| (*ms, *n))
            .map(|(n, _)| *n)
    }

    /// The time of the oldest mark: history is readable from then on.
    pub fn oldest_mark_ms(&self) -> Option<u64> {
        self.marks.iter().map(|(_, ms)| *ms).min()
    }

    /// The time of the newest mark.
    pub fn newest_mark_ms(&self) -> Option<u64> {
        self.marks.iter().map(|(_, ms)| *ms).max()
    }
}

/// A window in milliseconds (saturating).
pub(crate) fn window_ms(window: std::time::Duration) -> u64 {
    u64::try_from(window.as_millis()).unwrap_or(u64::MAX)
}

/// Key of the checkpoint under `prefix`.
pub(crate) fn checkpoint_key(prefix: &str) -> String {
    if prefix.is_empty() {
        CHECKPOINT_NAME.to_owned()
    } else {
        format!("{prefix}/{CHECKPOINT_NAME}")
    }
}

/// Reads `<prefix>/history.json`; `None` if there is none.
pub(crate) async fn read_checkpoint(
    bucket: &Bucket,
    prefix: &str,
) -> Result<Option<Checkpoint>, WalError> {
    let key = checkpoint_key(prefix);
    let data = match bucket.get(&key).await {
        Ok(data) => data,
        Err(ObjectError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(WalError::object(key, "read the WAL history checkpoint", e)),
    };
    decode_checkpoint(&key, &data).map(Some)
}

/// Parses a checkpoint; anything unreadable is [`WalError::Corrupt`].
fn decode_checkpoint(key: &str, data: &[u8]) -> Result<Checkpoint, WalError> {
    let cp: Checkpoint = serde_json::from_slice(data).map_err(|e| WalError::Corrupt {
        segment: key.to_owned(),
        offset: 0,
        reason: format!("not a WAL history checkpoint: {e}"),
    })?;
    if cp.format != CHECKPOINT_FORMAT {
        return Err(WalError::UnsupportedVersion {
            segment: key.to_owned(),
            found: cp.format,
            supported: CHECKPOINT_FORMAT,
        });
    }
    Ok(cp)
}

/// Writes (overwrites) `<prefix>/history.json`.
pub(crate) async fn write_checkpoint(
    bucket: &Bucket,
    prefix: &str,
    cp: &Checkpoint,
) -> Result<(), WalError> {
    let key = checkpoint_key(prefix);
    let json = serde_json::to_vec(cp).map_err(|e| WalError::Corrupt {
        segment: key.clone(),
        offset: 0,
        reason: format!("could not encode the WAL history checkpoint: {e}"),
    })?;
    bucket
        .put(&key, Bytes::from(json))
        .await
        .map_err(|e| WalError::object(key, "write the WAL history checkpoint", e))
}

/// Deletes the segment objects numbered in `range` (one request per 1,000; missing
/// ones are fine).
pub(crate) async fn delete_range(
    bucket: &Bucket,
    prefix: &str,
    range: Range<u64>,
) -> Result<(), WalError> {
    let keys: Vec<String> = range.clone().map(|n| segment_key(prefix, n)).collect();
    bucket.delete_many(keys).await.map_err(|e| {
        WalError::object(
            segment_key(prefix, range.start),
            "delete aged-out WAL history",
            e,
        )
    })
}

/// How often the upkeep happens (tests shorten it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timing {
    /// Least time between two marks.
    pub mark_every_ms: u64,
    /// Least time between two checkpoint writes (open and close excepted).
    pub checkpoint_every_ms: u64,
    /// Least time between two upkeep runs started by appends or flushes.
    pub check_every_ms: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            mark_every_ms: 60_000,
            checkpoint_every_ms: 10_000,
            check_every_ms: 1_000,
        }
    }
}

/// Objects and bytes kept only for the window (flushed, not yet deleted), as far as
/// this run knows them, countable by number range without a map entry per segment
/// for the whole window.
///
/// Segments at or above `compact_below` (the newest mark at or below
/// `flushed_below`) are counted one by one; those below it are summed per mark
/// interval. Deletions end at a mark or at `flushed_below` (see
/// [`HistoryState::age_out`]), so both forms are removed exactly.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// Per mark interval: the mark's number (0: before every mark) → (objects, bytes).
    buckets: BTreeMap<u64, (u64, u64)>,
    /// Segment number → bytes.
    exact: BTreeMap<u64, u64>,
    objects: u64,
    bytes: u64,
}

impl Kept {
    /// Segment `n`, of `bytes` bytes, is now kept only for the window.
    pub fn add(&mut self, n: u64, bytes: u64) {
        if self.exact.insert(n, bytes).is_none() {
            self.objects += 1;
            self.bytes += bytes;
        }
    }

    /// Sums the segments below `below` into their mark intervals.
    pub fn compact(&mut self, below: u64, marks: &[(u64, u64)]) {
        let rest = self.exact.split_off(&below);
        let done = std::mem::replace(&mut self.exact, rest);
        for (n, bytes) in done {
            // Marks are sorted by number: the interval's mark is the last one at or
            // below `n`.
            let i = marks.partition_point(|(m, _)| *m <= n);
            let key = i.checked_sub(1).map_or(0, |i| marks[i].0);
            let b = self.buckets.entry(key).or_default();
            b.0 += 1;
            b.1 += bytes;
        }
    }

    /// Forgets every segment below `hi` (deleted).
    pub fn remove_below(&mut self, hi: u64) {
        let keep = self.buckets.split_off(&hi);
        for (objects, bytes) in std::mem::replace(&mut self.buckets, keep).into_values() {
            self.objects -= objects;
            self.bytes -= bytes;
        }
        let keep = self.exact.split_off(&hi);
        for bytes in std::mem::replace(&mut self.exact, keep).into_values() {
            self.objects -= 1;
            self.bytes -= bytes;
        }
    }

    /// (objects, bytes).
    pub fn totals(&self) -> (u64, u64) {
        (self.objects, self.bytes)
    }
}

/// The history owner's state: pure logic, no I/O; every time is a parameter.
#[derive(Debug)]
pub(crate) struct HistoryState {
    window_ms: u64,
    timing: Timing,
    /// Lowest segment that may still hold an unflushed entry.
    flushed_below: u64,
    /// Every segment below it is deleted.
    deleted_below: u64,
    /// Segments below it are to be deleted (their marks are dropped).
    delete_target: u64,
    /// Sorted by number (and time).
    marks: Vec<(u64, u64)>,
    kept: Kept,
    /// What the bucket's checkpoint says, once written or read.
    written: Option<Checkpoint>,
    written_at_ms: Option<u64>,
    next_check_ms: u64,
}

impl HistoryState {
    /// State for a WAL opened with history over `window_ms`, from the checkpoint
    /// found (if any). Without one, history starts now: `deleted_below` is the
    /// lowest segment that exists (`first_segment`), at least 1, so a reader asking
    /// for earlier times learns that it is gone.
    pub fn new(window_ms: u64, found: Option<Checkpoint>, first_segment: u64) -> HistoryState {
        let (flushed_below, deleted_below, marks) = match &found {
            Some(cp) => (cp.flushed_below, cp.deleted_below, cp.marks.clone()),
            None => (first_segment, first_segment.max(1), Vec::new()),
        };
        HistoryState {
            window_ms,
            timing: Timing::default(),
            flushed_below,
            deleted_below,
            delete_target: deleted_below,
            marks,
            kept: Kept::default(),
            written: found,
            written_at_ms: None,
            next_check_ms: 0,
        }
    }

    /// Changes the timing (tests).
    #[cfg(test)]
    pub fn set_timing(&mut self, timing: Timing) {
        self.timing = timing;
        self.next_check_ms = 0;
    }

    /// True at most once per `check_every_ms`: time for an upkeep run.
    pub fn due(&mut self, now_ms: u64) -> bool {
        if now_ms < self.next_check_ms {
            return false;
        }
        self.next_check_ms = now_ms.saturating_add(self.timing.check_every_ms);
        true
    }

    /// True if the last mark is at least `mark_every_ms` old (or there is none).
    pub fn mark_due(&self, now_ms: u64) -> bool {
        self.marks
            .last()
            .is_none_or(|(_, ms)| now_ms >= ms.saturating_add(self.timing.mark_every_ms))
    }

    /// Adds a mark taken under the stamp mutex.
    pub fn add_mark(&mut self, mark: (u64, u64)) {
        self.marks.push(mark);
    }

    /// Segment `n` (`bytes` bytes) is fully flushed: kept only for the window now.
    pub fn retire(&mut self, n: u64, bytes: u64) {
        self.kept.add(n, bytes);
    }

    /// The lowest segment that may hold an unflushed entry is now `fb` (never lowered).
    pub fn note_flushed_below(&mut self, fb: u64) {
        self.flushed_below = self.flushed_below.max(fb);
        let compact_below = self
            .marks
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| *n <= self.flushed_below)
            .max();
        if let Some(below) = compact_below {
            self.kept.compact(below, &self.marks);
        }
    }

    /// Plans deletion by age: with `(n, t)` the newest mark older than the window,
    /// segments below `min(n, flushed_below)` go; marks older than it are dropped
    /// (it stays: a reader of the window's start begins there). True if anything
    /// changed.
    pub fn age_out(&mut self, now_ms: u64) -> bool {
        let cutoff = now_ms.saturating_sub(self.window_ms);
        let Some(k) = self.marks.iter().rposition(|(_, ms)| *ms < cutoff) else {
            return false;
        };
        let hi = self.marks[k].0.min(self.flushed_below);
        if hi <= self.delete_target {
            return false;
        }
        self.delete_target = hi;
        self.marks.drain(..k);
        self.kept.remove_below(hi);
        true
    }

    /// The checkpoint as the state stands.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            format: CHECKPOINT_FORMAT,
            flushed_below: self.flushed_below,
            deleted_below: self.deleted_below,
            marks: self.marks.clone(),
        }
    }

    /// The checkpoint to write now, if any: at most once per `checkpoint_every_ms`
    /// unless `force`, and only if it says something new (unless `force`). Plans
    /// deletion by age first.
    pub fn plan_checkpoint(&mut self, now_ms: u64, force: bool) -> Option<Checkpoint> {
        let throttled = self
            .written_at_ms
            .is_some_and(|t| now_ms < t.saturating_add(self.timing.checkpoint_every_ms));
        if throttled && !force {
            return None;
        }
        self.age_out(now_ms);
        let cp = self.checkpoint();
        if !force && self.written.as_ref() == Some(&cp) {
            return None;
        }
        Some(cp)
    }

    /// `cp` is in the bucket since `now_ms`.
    pub fn written(&mut self, cp: Checkpoint, now_ms: u64) {
        self.written = Some(cp);
        self.written_at_ms = Some(now_ms);
    }

    /// The next segments to delete, at most `max`: below the target, and below
    /// every mark of the checkpoint in the bucket (so no reader starts among them).
    pub fn next_deletion(&self, max: u64) -> Option<Range<u64>> {
        let written = self.written.as_ref()?;
        let safe = written
            .marks
            .iter()
            .map(|(n, _)| *n)
            .min()
            .unwrap_or(written.flushed_below)
            .min(written.flushed_below);
        let end = self
            .delete_target
            .min(safe)
            .min(self.deleted_below.saturating_add(max));
        (end > self.deleted_below).then_some(self.deleted_below..end)
    }

    /// The segments below `upto` are deleted.
    pub fn deleted(&mut self, upto: u64) {
        self.deleted_below = self.deleted_below.max(upto);
    }

    /// (objects, bytes) kept only for the window.
    pub fn kept(&self) -> (u64, u64) {
        self.kept.totals()
    }
}

/// The owner's history: its state and where its checkpoint lives.
#[derive(Debug)]
pub(crate) struct History {
    bucket: Bucket,
    prefix: String,
    state: Mutex<HistoryState>,
    /// One upkeep run at a time.
    io: tokio::sync::Mutex<()>,
}

impl History {
    pub fn new(bucket: Bucket, prefix: String, state: HistoryState) -> History {
        History {
            bucket,
            prefix,
            state: Mutex::new(state),
            io: tokio::sync::Mutex::new(()),
        }
    }

    pub fn state(&self) -> MutexGuard<'_, HistoryState> {
        // Consistent after every statement: a panic elsewhere leaves nothing half-done.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Retired segments `(number, record bytes)` are kept for the window.
    pub fn retire(&self, segments: impl IntoIterator<Item = (u64, u64)>, metrics: &WalMetrics) {
        let mut state = self.state();
        for (n, bytes) in segments {
            state.retire(n, bytes + super::record::HEADER_LEN as u64);
        }
        publish(&state, metrics);
    }
}

fn publish(state: &HistoryState, metrics: &WalMetrics) {
    use std::sync::atomic::Ordering::Relaxed;
    let (objects, bytes) = state.kept();
    metrics.history_objects.store(objects, Relaxed);
    metrics.history_bytes.store(bytes, Relaxed);
}

/// After an append's commit or a `mark_flushed`: starts an upkeep run in the
/// background if one is due. Never waits.
pub(crate) fn poke(shared: &Arc<Shared>) {
    let Some(history) = &shared.history else {
        return;
    };
    if !history.state().due(now_ms()) {
        return;
    }
    let shared = shared.clone();
    tokio::spawn(async move {
        if let Err(e) = maintain(&shared, false).await {
            tracing::warn!(error = %e, "WAL history upkeep failed; it is retried");
        }
    });
}

/// The lowest segment that may still hold an unflushed entry: the lowest in
/// flight, in the retention table, or the next to be numbered.
fn flushed_below_now(shared: &Shared) -> u64 {
    // In-flight numbers first: one that completes is in the table before it
    // leaves the in-flight set, so reading the table second cannot miss it.
    let unwritten = shared.stamper.lowest_unwritten();
    let live = shared.table().first_sealed();
    live.map_or(unwritten, |n| n.min(unwritten))
}

/// One upkeep run: a mark if due, the checkpoint if due (always with `force`:
/// open and close), then up to ten batches of deletion by age. With `force` it
/// waits for a run in progress; otherwise it gives way to it.
pub(crate) async fn maintain(shared: &Shared, force: bool) -> Result<(), WalError> {
    let Some(history) = &shared.history else {
        return Ok(());
    };
    let _one_at_a_time = if force {
        history.io.lock().await
    } else {
        match history.io.try_lock() {
            Ok(guard) => guard,
            Err(_) => return Ok(()),
        }
    };
    let now = now_ms();
    if history.state().mark_due(now) {
        let mark = shared.stamper.mark();
        history.state().add_mark(mark);
    }
    let fb = flushed_below_now(shared);
    let planned = {
        let mut state = history.state();
        state.note_flushed_below(fb);
        let cp = state.plan_checkpoint(now, force);
        publish(&state, &shared.metrics);
        cp
    };
    if let Some(cp) = planned {
        write_checkpoint(&history.bucket, &history.prefix, &cp).await?;
        tracing::debug!(prefix = %history.prefix, flushed_below = cp.flushed_below, deleted_below = cp.deleted_below, marks = cp.marks.len(), "WAL history checkpoint written");
        history.state().written(cp, now);
    }
    delete_aged(history).await
}

/// Deletes up to [`DELETE_BATCHES_PER_CALL`] batches of aged-out segments.
async fn delete_aged(history: &History) -> Result<(), WalError> {
    for _ in 0..DELETE_BATCHES_PER_CALL {
        let Some(range) = history.state().next_deletion(DELETE_BATCH) else {
            return Ok(());
        };
        delete_range(&history.bucket, &history.prefix, range.clone()).await?;
        tracing::debug!(prefix = %history.prefix, from = range.start, below = range.end, "WAL history aged out");
        history.state().deleted(range.end);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_with_marks(marks: &[(u64, u64)]) -> HistoryState {
        let mut s = HistoryState::new(100, None, 1);
        for m in marks {
            s.add_mark(*m);
        }
        s
    }

    #[test]
    fn checkpoint_json_is_the_documented_shape_and_start_picks_the_newest_mark_before() {
        let cp = Checkpoint {
            format: 1,
            flushed_below: 12,
            deleted_below: 3,
            marks: vec![(3, 1000), (8, 2000), (12, 3000)],
        };
        let json = serde_json::to_string(&cp).expect("json");
        assert_eq!(
            json,
            r#"{"format":1,"flushed_below":12,"deleted_below":3,"marks":[[3,1000],[8,2000],[12,3000]]}"#
        );
        assert_eq!(decode_checkpoint("k", json.as_bytes()).expect("decode"), cp);
        assert_eq!(cp.start_for(999), None);
        assert_eq!(cp.start_for(1000), Some(3));
        assert_eq!(cp.start_for(2999), Some(8));
        assert_eq!(cp.start_for(u64::MAX), Some(12));
        assert!(decode_checkpoint("k", b"{}").is_err_and(|e| e.is_corrupt()));
        let future = json.replace(r#""format":1"#, r#""format":2"#);
        assert!(matches!(
            decode_checkpoint("k", future.as_bytes()),
            Err(WalError::UnsupportedVersion { found: 2, .. })
        ));
    }

    #[test]
    fn age_out_keeps_the_newest_old_mark_and_never_passes_flushed_below() {
        let mut s = state_with_marks(&[(1, 0), (10, 1000), (20, 2000), (30, 3000)]);
        s.note_flushed_below(25);
        // Window 100 ms: at 2050, marks at 0 and 1000 are older; the newest of
        // them (10) bounds the deletion.
        assert!(s.age_out(2050));
        assert_eq!(s.delete_target, 10);
        assert_eq!(s.marks, vec![(10, 1000), (20, 2000), (30, 3000)]);
        assert!(!s.age_out(2050), "nothing new");
        // Later every mark is old, but segment 25 is not flushed: stop there.
        assert!(s.age_out(10_000));
        assert_eq!(s.delete_target, 25);
        assert_eq!(s.marks, vec![(30, 3000)]);
        assert!(!s.age_out(20_000), "held by flushed_below");
        s.note_flushed_below(40);
        assert!(s.age_out(20_000));
        assert_eq!(s.delete_target, 30);
    }

    #[test]
    fn deletion_waits_for_a_checkpoint_without_the_dropped_marks() {
        let mut s = state_with_marks(&[(1, 0), (10, 1000), (20, 5000)]);
        s.note_flushed_below(15);
        let first = s.plan_checkpoint(1000, true).expect("first write");
        s.written(first, 1000);
        assert_eq!(s.next_deletion(1000), None, "nothing aged out yet");
        assert!(s.plan_checkpoint(1500, false).is_none(), "throttled");
        // At 20,000 (window 100) every mark is old: the newest (20) is kept, the
        // others dropped, and deletion stops at flushed_below (15).
        let cp = s.plan_checkpoint(20_000, false).expect("due");
        assert_eq!((cp.deleted_below, cp.marks.clone()), (1, vec![(20, 5000)]));
        assert_eq!(s.next_deletion(1000), None, "the bucket still has mark 1");
        s.written(cp, 20_000);
        assert_eq!(s.next_deletion(4), Some(1..5));
        s.deleted(5);
        assert_eq!(s.next_deletion(1000), Some(5..15));
        s.deleted(15);
        assert_eq!(s.next_deletion(1000), None);
        let cp = s
            .plan_checkpoint(40_000, false)
            .expect("deleted_below advanced");
        assert_eq!(cp.deleted_below, 15);
    }

    /// Kept counts match a plain per-segment model through retirements, marks,
    /// compactions and deletions.
    #[test]
    fn kept_counts_are_exact() {
        let mut s = HistoryState::new(50, None, 1);
        let mut model: BTreeMap<u64, u64> = BTreeMap::new();
        let mut now = 0u64;
        let mut next = 1u64;
        let mut unflushed: Vec<u64> = Vec::new();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for step in 0..3000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            now += 7;
            // A new segment, unflushed.
            unflushed.push(next);
            next += 1;
            // Some unflushed ones retire, out of order; the oldest too, often
            // enough for flushed_below to move.
            if !x.is_multiple_of(3) && !unflushed.is_empty() {
                let i = (x as usize / 3) % unflushed.len();
                let n = unflushed.swap_remove(i);
                s.retire(n, n * 10);
                model.insert(n, n * 10);
            }
            if x.is_multiple_of(2)
                && let Some(i) = (0..unflushed.len()).min_by_key(|&i| unflushed[i])
            {
                let n = unflushed.swap_remove(i);
                s.retire(n, n * 10);
                model.insert(n, n * 10);
            }
            if step % 11 == 0 {
                s.add_mark((next, now));
            }
            let fb = unflushed.iter().copied().min().unwrap_or(next);
            s.note_flushed_below(fb);
            if s.age_out(now) {
                model = model.split_off(&s.delete_target);
            }
            let objects = model.len() as u64;
            let bytes: u64 = model.values().sum();
            assert_eq!(s.kept(), (objects, bytes), "step {step}");
            assert!(
                s.delete_target <= fb,
                "deletion passed an unflushed segment"
            );
        }
        assert!(
            s.delete_target > 1000,
            "history aged out: {}",
            s.delete_target
        );
    }
}
