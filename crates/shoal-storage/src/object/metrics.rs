//! Per-operation request metrics for the object store.
//!
//! Every attempt a [`Bucket`](super::Bucket) sends to the store is recorded here, by
//! [`Op`]: one request, its latency, the payload bytes it moved and whether it failed. The
//! retry loop additionally counts each re-attempt. Recording is a handful of relaxed
//! atomic adds, so it is cheap enough for every request; a snapshot is plain data.
//!
//! Semantics (these become Prometheus metrics; keep them stable):
//!
//! - `requests`: attempts sent (what the provider bills), including attempts that failed
//!   and attempts that were retries. Faults injected by [`Faults`](super::Faults) count
//!   as attempts too, since they stand in for a request that failed.
//! - `errors`: attempts that failed. "Not found" and "already exists" are answers, not
//!   failures, and are not counted here.
//! - `retries`: attempts made because an earlier attempt failed transiently.
//! - `bytes`: payload bytes read (gets) or written (puts, multipart parts) by
//!   successful attempts.
//! - latency: per attempt, from send to last byte, including emulated latency; sum, max
//!   and a fixed log2 histogram in microseconds.
//!
//! `list` counts one request per listing attempt even when the store pages through
//! several responses, and `delete` counts one request per batch of up to 1,000 keys.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The kind of request sent to the object store. Used as the metrics label and in error
/// messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// Whole-object GET.
    Get,
    /// GET of a byte range (bounded or suffix).
    RangedGet,
    /// Unconditional PUT.
    Put,
    /// Create-if-absent PUT (`If-None-Match: *`, `create_new` on a local disk).
    ConditionalPut,
    /// Multipart upload requests: create, each part, complete and abort.
    Multipart,
    /// LIST (one count per listing, however many pages it took).
    List,
    /// DELETE, single or batched.
    Delete,
    /// HEAD (object metadata).
    Head,
}

impl Op {
    /// Number of operations; the length of [`Op::ALL`].
    pub const COUNT: usize = 8;

    /// Every operation, in a stable order.
    pub const ALL: [Op; Op::COUNT] = [
        Op::Get,
        Op::RangedGet,
        Op::Put,
        Op::ConditionalPut,
        Op::Multipart,
        Op::List,
        Op::Delete,
        Op::Head,
    ];

    /// Stable snake_case name, used as the metrics label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::RangedGet => "ranged_get",
            Op::Put => "put",
            Op::ConditionalPut => "conditional_put",
            Op::Multipart => "multipart",
            Op::List => "list",
            Op::Delete => "delete",
            Op::Head => "head",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Number of latency histogram buckets.
///
/// Bucket 0 holds latencies of at most 1 µs; bucket `i` (1 ≤ i < 27) holds latencies in
/// `(2^(i-1), 2^i]` µs; the last bucket holds everything above 2^26 µs (~67 s).
pub const LATENCY_BUCKETS: usize = 28;

/// Bucket index for a latency in microseconds.
fn bucket_for(micros: u64) -> usize {
    if micros <= 1 {
        return 0;
    }
    // ceil(log2(micros)) for micros >= 2.
    let bucket = (64 - (micros - 1).leading_zeros()) as usize;
    bucket.min(LATENCY_BUCKETS - 1)
}

/// Live counters for one operation.
#[derive(Debug, Default)]
struct OpCounters {
    requests: AtomicU64,
    errors: AtomicU64,
    retries: AtomicU64,
    bytes: AtomicU64,
    latency_sum_us: AtomicU64,
    latency_max_us: AtomicU64,
    latency_buckets: [AtomicU64; LATENCY_BUCKETS],
}

impl OpCounters {
    fn snapshot(&self) -> OpSnapshot {
        let mut buckets = [0u64; LATENCY_BUCKETS];
        for (out, bucket) in buckets.iter_mut().zip(&self.latency_buckets) {
            *out = bucket.load(Ordering::Relaxed);
        }
        OpSnapshot {
            requests: self.requests.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            latency: LatencySnapshot {
                sum_us: self.latency_sum_us.load(Ordering::Relaxed),
                max_us: self.latency_max_us.load(Ordering::Relaxed),
                buckets,
            },
        }
    }
}

/// The live metrics of one bucket (shared by its clones).
#[derive(Debug, Default)]
pub(crate) struct ObjectMetrics {
    ops: [OpCounters; Op::COUNT],
}

/// What one attempt did, for [`ObjectMetrics::record`].
pub(crate) struct AttemptRecord {
    pub op: Op,
    pub latency: Duration,
    pub bytes: u64,
    pub failed: bool,
}

impl ObjectMetrics {
    pub(crate) fn record(&self, record: AttemptRecord) {
        let counters = &self.ops[record.op.index()];
        counters.requests.fetch_add(1, Ordering::Relaxed);
        if record.failed {
            counters.errors.fetch_add(1, Ordering::Relaxed);
        }
        if record.bytes > 0 {
            counters.bytes.fetch_add(record.bytes, Ordering::Relaxed);
        }
        let micros = u64::try_from(record.latency.as_micros()).unwrap_or(u64::MAX);
        counters.latency_sum_us.fetch_add(micros, Ordering::Relaxed);
        counters.latency_max_us.fetch_max(micros, Ordering::Relaxed);
        counters.latency_buckets[bucket_for(micros)].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_retry(&self, op: Op) {
        self.ops[op.index()].retries.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> ObjectMetricsSnapshot {
        let s = |op: Op| self.ops[op.index()].snapshot();
        ObjectMetricsSnapshot {
            get: s(Op::Get),
            ranged_get: s(Op::RangedGet),
            put: s(Op::Put),
            conditional_put: s(Op::ConditionalPut),
            multipart: s(Op::Multipart),
            list: s(Op::List),
            delete: s(Op::Delete),
            head: s(Op::Head),
        }
    }
}

/// A point-in-time copy of a bucket's metrics, one [`OpSnapshot`] per [`Op`].
///
/// Counters are monotonic; take two snapshots and subtract (see [`OpSnapshot::since`])
/// to measure an interval.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectMetricsSnapshot {
    pub get: OpSnapshot,
    pub ranged_get: OpSnapshot,
    pub put: OpSnapshot,
    pub conditional_put: OpSnapshot,
    pub multipart: OpSnapshot,
    pub list: OpSnapshot,
    pub delete: OpSnapshot,
    pub head: OpSnapshot,
}

impl ObjectMetricsSnapshot {
    /// The snapshot of one operation.
    pub fn op(&self, op: Op) -> &OpSnapshot {
        match op {
            Op::Get => &self.get,
            Op::RangedGet => &self.ranged_get,
            Op::Put => &self.put,
            Op::ConditionalPut => &self.conditional_put,
            Op::Multipart => &self.multipart,
            Op::List => &self.list,
            Op::Delete => &self.delete,
            Op::Head => &self.head,
        }
    }

    /// Every operation with its snapshot, in [`Op::ALL`] order (for exporters).
    pub fn iter(&self) -> impl Iterator<Item = (Op, &OpSnapshot)> {
        Op::ALL.into_iter().map(move |op| (op, self.op(op)))
    }

    /// Total requests over all operations.
    pub fn total_requests(&self) -> u64 {
        self.iter().map(|(_, s)| s.requests).sum()
    }
}

/// Counters of one operation. See the module documentation for exact semantics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpSnapshot {
    /// Attempts sent, including failed ones and retries.
    pub requests: u64,
    /// Attempts that failed (not counting "not found" / "already exists" answers).
    pub errors: u64,
    /// Attempts made because an earlier one failed transiently.
    pub retries: u64,
    /// Payload bytes read or written by successful attempts.
    pub bytes: u64,
    /// Per-attempt latency.
    pub latency: LatencySnapshot,
}

impl OpSnapshot {
    /// The difference `self - earlier` (counters; `max_us` is kept from `self`).
    pub fn since(&self, earlier: &OpSnapshot) -> OpSnapshot {
        let mut buckets = [0u64; LATENCY_BUCKETS];
        for (i, out) in buckets.iter_mut().enumerate() {
            *out = self.latency.buckets[i].saturating_sub(earlier.latency.buckets[i]);
        }
        OpSnapshot {
            requests: self.requests.saturating_sub(earlier.requests),
            errors: self.errors.saturating_sub(earlier.errors),
            retries: self.retries.saturating_sub(earlier.retries),
            bytes: self.bytes.saturating_sub(earlier.bytes),
            latency: LatencySnapshot {
                sum_us: self.latency.sum_us.saturating_sub(earlier.latency.sum_us),
                max_us: self.latency.max_us,
                buckets,
            },
        }
    }
}

/// Latency of the attempts of one operation, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LatencySnapshot {
    /// Sum of all attempt latencies.
    pub sum_us: u64,
    /// Largest attempt latency seen.
    pub max_us: u64,
    /// Log2 histogram; see [`LATENCY_BUCKETS`] for the bucket bounds.
    pub buckets: [u64; LATENCY_BUCKETS],
}

impl LatencySnapshot {
    /// Inclusive upper bound of bucket `i` in microseconds, or `None` for the last
    /// (unbounded) bucket.
    pub fn bucket_upper_bound_us(i: usize) -> Option<u64> {
        (i + 1 < LATENCY_BUCKETS).then(|| 1u64 << i)
    }

    /// Number of recorded attempts.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// Upper bound of the bucket holding quantile `q` (0.0..=1.0), in microseconds: an
    /// estimate that is at most 2x the true value. `None` if nothing was recorded.
    pub fn quantile_upper_bound_us(&self, q: f64) -> Option<u64> {
        let count = self.count();
        if count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(Self::bucket_upper_bound_us(i).unwrap_or(self.max_us));
            }
        }
        Some(self.max_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names_are_stable() {
        let names: Vec<_> = Op::ALL.iter().map(|op| op.as_str()).collect();
        assert_eq!(
            names,
            [
                "get",
                "ranged_get",
                "put",
                "conditional_put",
                "multipart",
                "list",
                "delete",
                "head"
            ]
        );
        for (i, op) in Op::ALL.iter().enumerate() {
            assert_eq!(op.index(), i);
        }
    }

    #[test]
    fn buckets_are_log2_microseconds() {
        assert_eq!(bucket_for(0), 0);
        assert_eq!(bucket_for(1), 0);
        assert_eq!(bucket_for(2), 1);
        assert_eq!(bucket_for(3), 2);
        assert_eq!(bucket_for(4), 2);
        assert_eq!(bucket_for(5), 3);
        assert_eq!(bucket_for(1024), 10);
        assert_eq!(bucket_for(1025), 11);
        assert_eq!(bucket_for(u64::MAX), LATENCY_BUCKETS - 1);
        for micros in [1u64, 2, 3, 100, 1000, 30_000, 1 << 26] {
            let b = bucket_for(micros);
            let upper = LatencySnapshot::bucket_upper_bound_us(b).unwrap_or(u64::MAX);
            assert!(micros <= upper, "{micros} in bucket {b} with bound {upper}");
        }
    }

    #[test]
    fn record_and_snapshot() {
        let m = ObjectMetrics::default();
        m.record(AttemptRecord {
            op: Op::Get,
            latency: Duration::from_millis(30),
            bytes: 100,
            failed: false,
        });
        m.record(AttemptRecord {
            op: Op::Get,
            latency: Duration::from_millis(10),
            bytes: 0,
            failed: true,
        });
        m.record_retry(Op::Get);
        let s = m.snapshot();
        assert_eq!(s.get.requests, 2);
        assert_eq!(s.get.errors, 1);
        assert_eq!(s.get.retries, 1);
        assert_eq!(s.get.bytes, 100);
        assert_eq!(s.get.latency.sum_us, 40_000);
        assert_eq!(s.get.latency.max_us, 30_000);
        assert_eq!(s.get.latency.count(), 2);
        assert_eq!(s.get.latency.quantile_upper_bound_us(1.0), Some(32_768));
        assert_eq!(s.put, OpSnapshot::default());
        assert_eq!(s.total_requests(), 2);
        let d = s.get.since(&OpSnapshot::default());
        assert_eq!(d.requests, 2);
    }
}
