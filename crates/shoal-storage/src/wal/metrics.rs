//! WAL statistics: relaxed atomics bumped by the writer, read as a plain snapshot.
//!
//! Histograms are log2: bucket 0 counts the value 0, bucket `i ≥ 1` counts values in
//! `[2^(i-1), 2^i)`, and the last bucket also takes everything larger.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Buckets of [`WalMetricsSnapshot::batch_entries_histogram`] (the last one is ≥ 16,384).
pub const BATCH_HISTOGRAM_BUCKETS: usize = 16;
/// Buckets of [`WalMetricsSnapshot::sync_micros_histogram`] (the last one is ≥ 4.2 s).
pub const LATENCY_HISTOGRAM_BUCKETS: usize = 24;

/// A point-in-time copy of the WAL's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalMetricsSnapshot {
    /// Entries acknowledged durable.
    pub appends: u64,
    /// Appends answered with an error.
    pub failed_appends: u64,
    /// Record bytes made durable (prefixes included, segment headers excluded).
    pub bytes: u64,
    /// Group commits: one write + fdatasync (local) or one PUT (object) each.
    pub syncs: u64,
    /// Sum of entries over all group commits (`/ syncs` = mean batch size).
    pub batch_entries_sum: u64,
    /// Largest batch, in entries.
    pub batch_entries_max: u64,
    /// Batch sizes in entries, log2 buckets.
    pub batch_entries_histogram: [u64; BATCH_HISTOGRAM_BUCKETS],
    /// Sum of group-commit latencies (write + sync, or PUT), µs.
    pub sync_micros_sum: u64,
    /// Slowest group commit, µs.
    pub sync_micros_max: u64,
    /// Group-commit latencies in µs, log2 buckets.
    pub sync_micros_histogram: [u64; LATENCY_HISTOGRAM_BUCKETS],
    /// Segments that exist now (files, or objects for the object backend).
    pub segments_live: u64,
    /// Record bytes in those segments: what a replay of this log reads after a crash
    /// (its regions' next owners, in cluster mode).
    pub live_bytes: u64,
    /// Region flushes asked for because the log held more than its bound
    /// (`wal.max_unflushed`), so that its oldest segments could go.
    pub release_flushes: u64,
    /// Segments created since open.
    pub segments_created: u64,
    /// Segments deleted since open (by `mark_flushed`, or empty torn ones at open);
    /// a retired segment kept for reuse counts as deleted.
    pub segments_deleted: u64,
    /// Segments since open made from a retired segment's file (no zero fill).
    pub segments_recycled: u64,
    /// Torn tails cut at open (at most one per open).
    pub corrupt_tails_cut: u64,
    /// Entries read back at open.
    pub recovered_entries: u64,
    /// With `WalOptions::history`: segment objects kept only for the history
    /// window (fully flushed, not yet aged out). Counts the ones this run retired
    /// (of this run, or recovered at open); fully flushed segments of earlier runs,
    /// which recovery skips without reading, are not counted, though they are
    /// deleted by age like the others.
    pub history_objects: u64,
    /// Bytes of those objects (headers included).
    pub history_bytes: u64,
}

/// Log2 bucket of `v` among `n` buckets.
pub(crate) fn log2_bucket(v: u64, n: usize) -> usize {
    ((u64::BITS - v.leading_zeros()) as usize).min(n - 1)
}

#[derive(Debug, Default)]
pub(crate) struct WalMetrics {
    appends: AtomicU64,
    failed_appends: AtomicU64,
    bytes: AtomicU64,
    syncs: AtomicU64,
    batch_entries_sum: AtomicU64,
    batch_entries_max: AtomicU64,
    batch_entries_histogram: [AtomicU64; BATCH_HISTOGRAM_BUCKETS],
    sync_micros_sum: AtomicU64,
    sync_micros_max: AtomicU64,
    sync_micros_histogram: [AtomicU64; LATENCY_HISTOGRAM_BUCKETS],
    pub segments_live: AtomicU64,
    pub live_bytes: AtomicU64,
    pub release_flushes: AtomicU64,
    pub segments_created: AtomicU64,
    pub segments_deleted: AtomicU64,
    pub segments_recycled: AtomicU64,
    pub corrupt_tails_cut: AtomicU64,
    pub recovered_entries: AtomicU64,
    pub history_objects: AtomicU64,
    pub history_bytes: AtomicU64,
}

impl WalMetrics {
    /// One successful group commit of `entries` entries and `bytes` bytes.
    pub fn record_sync(&self, entries: u64, bytes: u64, micros: u64) {
        self.appends.fetch_add(entries, Relaxed);
        self.bytes.fetch_add(bytes, Relaxed);
        self.syncs.fetch_add(1, Relaxed);
        self.batch_entries_sum.fetch_add(entries, Relaxed);
        self.batch_entries_max.fetch_max(entries, Relaxed);
        self.batch_entries_histogram[log2_bucket(entries, BATCH_HISTOGRAM_BUCKETS)]
            .fetch_add(1, Relaxed);
        self.sync_micros_sum.fetch_add(micros, Relaxed);
        self.sync_micros_max.fetch_max(micros, Relaxed);
        self.sync_micros_histogram[log2_bucket(micros, LATENCY_HISTOGRAM_BUCKETS)]
            .fetch_add(1, Relaxed);
    }

    pub fn record_failures(&self, entries: u64) {
        self.failed_appends.fetch_add(entries, Relaxed);
    }

    pub fn snapshot(&self) -> WalMetricsSnapshot {
        WalMetricsSnapshot {
            appends: self.appends.load(Relaxed),
            failed_appends: self.failed_appends.load(Relaxed),
            bytes: self.bytes.load(Relaxed),
            syncs: self.syncs.load(Relaxed),
            batch_entries_sum: self.batch_entries_sum.load(Relaxed),
            batch_entries_max: self.batch_entries_max.load(Relaxed),
            batch_entries_histogram: std::array::from_fn(|i| {
                self.batch_entries_histogram[i].load(Relaxed)
            }),
            sync_micros_sum: self.sync_micros_sum.load(Relaxed),
            sync_micros_max: self.sync_micros_max.load(Relaxed),
            sync_micros_histogram: std::array::from_fn(|i| {
                self.sync_micros_histogram[i].load(Relaxed)
            }),
            segments_live: self.segments_live.load(Relaxed),
            live_bytes: self.live_bytes.load(Relaxed),
            release_flushes: self.release_flushes.load(Relaxed),
            segments_created: self.segments_created.load(Relaxed),
            segments_deleted: self.segments_deleted.load(Relaxed),
            segments_recycled: self.segments_recycled.load(Relaxed),
            corrupt_tails_cut: self.corrupt_tails_cut.load(Relaxed),
            recovered_entries: self.recovered_entries.load(Relaxed),
            history_objects: self.history_objects.load(Relaxed),
            history_bytes: self.history_bytes.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets() {
        assert_eq!(log2_bucket(0, 16), 0);
        assert_eq!(log2_bucket(1, 16), 1);
        assert_eq!(log2_bucket(2, 16), 2);
        assert_eq!(log2_bucket(3, 16), 2);
        assert_eq!(log2_bucket(4, 16), 3);
        assert_eq!(log2_bucket(u64::MAX, 16), 15);
    }
}
