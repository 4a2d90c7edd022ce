//! Client request counters and latency histograms, per operation. Lock-free:
//! every record is a few relaxed atomic adds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The gRPC calls, as metric labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestOp {
    /// Data.Get.
    Get,
    /// Data.MultiGet.
    MultiGet,
    /// Data.Mutate.
    Mutate,
    /// Data.MultiMutate.
    MultiMutate,
    /// Data.Increment.
    Increment,
    /// Data.Append.
    Append,
    /// Data.CheckAndMutate.
    CheckAndMutate,
    /// Data.Scan (the whole stream).
    Scan,
    /// Any Admin call.
    Admin,
}

impl RequestOp {
    /// Every operation, in label order.
    pub const ALL: [RequestOp; 9] = [
        RequestOp::Get,
        RequestOp::MultiGet,
        RequestOp::Mutate,
        RequestOp::MultiMutate,
        RequestOp::Increment,
        RequestOp::Append,
        RequestOp::CheckAndMutate,
        RequestOp::Scan,
        RequestOp::Admin,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestOp::Get => "get",
            RequestOp::MultiGet => "multi_get",
            RequestOp::Mutate => "mutate",
            RequestOp::MultiMutate => "multi_mutate",
            RequestOp::Increment => "increment",
            RequestOp::Append => "append",
            RequestOp::CheckAndMutate => "check_and_mutate",
            RequestOp::Scan => "scan",
            RequestOp::Admin => "admin",
        }
    }

    /// True for calls that write.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            RequestOp::Mutate
                | RequestOp::MultiMutate
                | RequestOp::Increment
                | RequestOp::Append
                | RequestOp::CheckAndMutate
        )
    }
}

/// Upper bounds of the latency buckets, in microseconds (the last bucket,
/// +Inf, is implicit).
pub const LATENCY_BOUNDS_US: [u64; 20] = [
    50,
    100,
    250,
    500,
    1_000,
    2_500,
    5_000,
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    30_000_000,
    60_000_000,
    300_000_000,
];

#[derive(Debug, Default)]
struct OpCounters {
    count: AtomicU64,
    errors: AtomicU64,
    sum_us: AtomicU64,
    buckets: [AtomicU64; LATENCY_BOUNDS_US.len() + 1],
}

/// Counters for every operation.
#[derive(Debug, Default)]
pub struct RequestMetrics {
    ops: [OpCounters; RequestOp::ALL.len()],
    scan_rows: AtomicU64,
    scans_open: AtomicU64,
    scans_lease_expired: AtomicU64,
    scans_cancelled: AtomicU64,
    bytes_in_flight: AtomicU64,
    refused_bytes_in_flight: AtomicU64,
}

/// One operation's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpFigures {
    /// Calls completed.
    pub count: u64,
    /// Calls that answered an error.
    pub errors: u64,
    /// Sum of latencies, µs.
    pub sum_us: u64,
    /// Per-bucket counts (not cumulative), aligned with
    /// [`LATENCY_BOUNDS_US`] plus a final +Inf bucket.
    pub buckets: Vec<u64>,
}

/// A copy of the request counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestMetricsSnapshot {
    /// Per operation, in [`RequestOp::ALL`] order.
    pub ops: Vec<(RequestOp, OpFigures)>,
    /// Rows (or row chunks) returned by scans.
    pub scan_rows: u64,
    /// Scans streaming now (each holds a read point and its files).
    pub scans_open: u64,
    /// Scans closed because their client took no message within the lease.
    pub scans_lease_expired: u64,
    /// Scans stopped because their client went away.
    pub scans_cancelled: u64,
    /// Bytes of request messages held now.
    pub bytes_in_flight: u64,
    /// Requests refused because `limits.request_bytes_in_flight` was reached.
    pub refused_bytes_in_flight: u64,
}

impl RequestMetricsSnapshot {
    /// Calls of every kind.
    pub fn total_requests(&self) -> u64 {
        self.ops.iter().map(|(_, f)| f.count).sum()
    }

    /// Figures of one operation.
    pub fn op(&self, op: RequestOp) -> Option<&OpFigures> {
        self.ops.iter().find(|(o, _)| *o == op).map(|(_, f)| f)
    }
}

impl RequestMetrics {
    /// Records one completed call.
    pub fn record(&self, op: RequestOp, elapsed: Duration, ok: bool) {
        let c = &self.ops[op as usize];
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        c.count.fetch_add(1, Ordering::Relaxed);
        if !ok {
            c.errors.fetch_add(1, Ordering::Relaxed);
        }
        c.sum_us.fetch_add(us, Ordering::Relaxed);
        let i = LATENCY_BOUNDS_US.partition_point(|&b| b < us);
        c.buckets[i].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts rows a scan returned.
    pub fn record_scan_rows(&self, n: u64) {
        self.scan_rows.fetch_add(n, Ordering::Relaxed);
    }

    /// Counts a scan as open until the guard drops.
    pub fn scan_opened(self: &std::sync::Arc<Self>) -> OpenScan {
        self.scans_open.fetch_add(1, Ordering::Relaxed);
        OpenScan(self.clone())
    }

    /// Counts a scan closed by its lease.
    pub fn record_scan_lease_expired(&self) {
        self.scans_lease_expired.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a scan stopped because its client went away.
    pub fn record_scan_cancelled(&self) {
        self.scans_cancelled.fetch_add(1, Ordering::Relaxed);
    }

    /// Request bytes now held (set by the request budget).
    pub fn set_bytes_in_flight(&self, bytes: u64) {
        self.bytes_in_flight.store(bytes, Ordering::Relaxed);
    }

    /// Counts a request refused by the request-bytes budget.
    pub fn record_refused_bytes_in_flight(&self) {
        self.refused_bytes_in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// A copy of the counters.
    pub fn snapshot(&self) -> RequestMetricsSnapshot {
        RequestMetricsSnapshot {
            ops: RequestOp::ALL
                .iter()
                .map(|&op| {
                    let c = &self.ops[op as usize];
                    (
                        op,
                        OpFigures {
                            count: c.count.load(Ordering::Relaxed),
                            errors: c.errors.load(Ordering::Relaxed),
                            sum_us: c.sum_us.load(Ordering::Relaxed),
                            buckets: c
                                .buckets
                                .iter()
                                .map(|b| b.load(Ordering::Relaxed))
                                .collect(),
                        },
                    )
                })
                .collect(),
            scan_rows: self.scan_rows.load(Ordering::Relaxed),
            scans_open: self.scans_open.load(Ordering::Relaxed),
            scans_lease_expired: self.scans_lease_expired.load(Ordering::Relaxed),
            scans_cancelled: self.scans_cancelled.load(Ordering::Relaxed),
            bytes_in_flight: self.bytes_in_flight.load(Ordering::Relaxed),
            refused_bytes_in_flight: self.refused_bytes_in_flight.load(Ordering::Relaxed),
        }
    }
}

/// A scan counted in `scans_open` while this lives.
#[derive(Debug)]
pub struct OpenScan(std::sync::Arc<RequestMetrics>);

impl Drop for OpenScan {
    fn drop(&mut self) {
        self.0.scans_open.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_land_in_their_buckets() {
        let m = RequestMetrics::default();
        m.record(RequestOp::Get, Duration::from_micros(40), true);
        m.record(RequestOp::Get, Duration::from_micros(50), true);
        m.record(RequestOp::Get, Duration::from_micros(51), false);
        m.record(RequestOp::Scan, Duration::from_secs(1000), true);
        let s = m.snapshot();
        let g = s.op(RequestOp::Get).unwrap();
        assert_eq!((g.count, g.errors, g.sum_us), (3, 1, 141));
        assert_eq!(&g.buckets[..2], &[2, 1]);
        assert_eq!(*s.op(RequestOp::Scan).unwrap().buckets.last().unwrap(), 1);
        assert_eq!(s.total_requests(), 4);
    }
}
