//! Where a write's time goes on the server: one log2 histogram of µs per
//! stage that every put or delete (`Region::mutate`, `Region::mutate_batch`)
//! passes through, server-wide and lock-free.
//!
//! The stages, in order:
//! - `gate`: admission against the memstore limits, then the region's write
//!   gate (held shared by writes, exclusively by a flush's swap, a close or
//!   a split);
//! - `row_locks`: the row locks of the mutation (or of the batch's rows);
//! - `wal`: the WAL append, from queueing to the group commit's answer;
//! - `read_point`: waiting until every earlier write of the region is in
//!   the memstore (read-your-writes), after the write's own insert.
//!
//! Buckets are log2 over µs, as the WAL's: bucket 0 counts 0 µs, bucket
//! `i ≥ 1` counts `[2^(i-1), 2^i)` µs, the last also everything longer.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Buckets per stage (the last one is ≥ 4.2 s).
pub const STAGE_BUCKETS: usize = crate::wal::metrics::LATENCY_HISTOGRAM_BUCKETS;

/// A stage of the write path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Memstore admission and the region's write gate.
    Gate,
    /// The row locks.
    RowLocks,
    /// The WAL append and its group commit.
    Wal,
    /// The wait for the region's read point.
    ReadPoint,
}

impl Stage {
    /// Every stage, in the order a write passes them.
    pub const ALL: [Stage; 4] = [Stage::Gate, Stage::RowLocks, Stage::Wal, Stage::ReadPoint];

    /// The stage's label in metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Gate => "gate",
            Stage::RowLocks => "row_locks",
            Stage::Wal => "wal",
            Stage::ReadPoint => "read_point",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The histograms (shared by every region of a server).
#[derive(Debug, Default)]
pub struct WriteStages {
    buckets: [[AtomicU64; STAGE_BUCKETS]; 4],
    sum_micros: [AtomicU64; 4],
    max_micros: [AtomicU64; 4],
}

/// One stage's figures at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageSnapshot {
    pub stage: Stage,
    /// Writes per log2 µs bucket.
    pub histogram: [u64; STAGE_BUCKETS],
    /// Total time, µs.
    pub sum_micros: u64,
    /// Longest time since start, µs.
    pub max_micros: u64,
}

impl WriteStages {
    /// Counts `micros` for `stage`.
    pub fn record(&self, stage: Stage, micros: u64) {
        let i = stage.index();
        let b = crate::wal::metrics::log2_bucket(micros, STAGE_BUCKETS);
        self.buckets[i][b].fetch_add(1, Relaxed);
        self.sum_micros[i].fetch_add(micros, Relaxed);
        self.max_micros[i].fetch_max(micros, Relaxed);
    }

    /// Counts the time since `started` for `stage`, and returns now (the
    /// next stage's start).
    pub fn since(&self, stage: Stage, started: Instant) -> Instant {
        let now = Instant::now();
        let micros = u64::try_from((now - started).as_micros()).unwrap_or(u64::MAX);
        self.record(stage, micros);
        now
    }

    /// Every stage's figures, in [`Stage::ALL`] order.
    pub fn snapshot(&self) -> Vec<StageSnapshot> {
        Stage::ALL
            .iter()
            .map(|&stage| {
                let i = stage.index();
                StageSnapshot {
                    stage,
                    histogram: std::array::from_fn(|b| self.buckets[i][b].load(Relaxed)),
                    sum_micros: self.sum_micros[i].load(Relaxed),
                    max_micros: self.max_micros[i].load(Relaxed),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stage_counts_apart_in_log2_buckets() {
        let s = WriteStages::default();
        s.record(Stage::Wal, 0);
        s.record(Stage::Wal, 1_500);
        s.record(Stage::ReadPoint, 3);
        let snap = s.snapshot();
        assert_eq!(snap.len(), 4);
        let wal = &snap[2];
        assert_eq!(wal.stage, Stage::Wal);
        assert_eq!(wal.histogram[0], 1);
        assert_eq!(wal.histogram[11], 1, "1,500 µs is in [1024, 2048)");
        assert_eq!(wal.histogram.iter().sum::<u64>(), 2);
        assert_eq!((wal.sum_micros, wal.max_micros), (1_500, 1_500));
        assert_eq!(snap[3].histogram[2], 1, "3 µs is in [2, 4)");
        assert_eq!(snap[0].histogram.iter().sum::<u64>(), 0);
        assert_eq!(snap[1].histogram.iter().sum::<u64>(), 0);
    }
}
