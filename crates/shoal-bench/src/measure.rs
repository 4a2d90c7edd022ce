//! Latency measurements per operation (HdrHistogram, µs, 3 significant
//! digits) and the reports: YCSB's text format plus p99.9/p99.99, and JSON.

use crate::workload::Op;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// One operation's recorder.
#[derive(Debug, Clone)]
pub struct OpStats {
    hist: Histogram<u64>,
    ok: u64,
    errors: u64,
}

impl OpStats {
    fn new() -> OpStats {
        OpStats {
            // 1 µs .. 1 hour, 3 significant digits: cannot fail.
            hist: Histogram::new_with_bounds(1, 3_600_000_000, 3)
                .unwrap_or_else(|_| Histogram::new(3).unwrap_or_else(|_| unreachable_hist())),
            ok: 0,
            errors: 0,
        }
    }
}

/// A window's histogram: 2 significant digits (1 %), a tenth of the size
/// of the per-operation ones, as a run keeps one per window.
fn window_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 2).unwrap_or_else(|_| unreachable_hist())
}

fn unreachable_hist() -> Histogram<u64> {
    // `Histogram::new(3)` only fails for sigfig > 5.
    Histogram::new_with_max(1 << 40, 2).unwrap_or_else(|_| std::process::abort())
}

/// Per-thread (or merged) measurements.
#[derive(Debug, Clone, Default)]
pub struct Measurements {
    ops: BTreeMap<Op, OpStats>,
    /// Paced runs only: each operation's service time, from when it was
    /// actually issued (YCSB's plain figure beside its intended-start one):
    /// the part of a latency the system spent, without the wait of an
    /// operation whose start was held back by its thread's previous one.
    service: BTreeMap<Op, OpStats>,
    /// Every operation's latency by the window its (intended) start fell
    /// in, all operations together: where in the run the tail happened.
    windows: Vec<Option<Histogram<u64>>>,
}

/// The figures of one window of the run (all operations).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WindowReport {
    /// Offset of the window's start from the phase's start, seconds.
    pub start_s: f64,
    /// Operations that started in it.
    pub operations: u64,
    /// Percentiles, µs.
    pub p50_us: u64,
    /// 99th.
    pub p99_us: u64,
    /// 99.9th.
    pub p999_us: u64,
    /// Maximum, µs.
    pub max_us: u64,
}

/// Longest run a window series covers (windows past it are not kept).
const MAX_WINDOWS: usize = 100_000;

/// The figures of one operation.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OpReport {
    /// Operations measured.
    pub operations: u64,
    /// Mean latency, µs.
    pub average_us: f64,
    /// Minimum, µs.
    pub min_us: u64,
    /// Maximum, µs.
    pub max_us: u64,
    /// Percentiles, µs.
    pub p50_us: u64,
    /// 90th.
    pub p90_us: u64,
    /// 95th.
    pub p95_us: u64,
    /// 99th.
    pub p99_us: u64,
    /// 99.9th.
    pub p999_us: u64,
    /// 99.99th.
    pub p9999_us: u64,
    /// Successful operations.
    pub ok: u64,
    /// Failed operations.
    pub errors: u64,
}

impl Measurements {
    /// Records one operation's latency.
    pub fn record(&mut self, op: Op, latency: Duration, ok: bool) {
        let s = self.ops.entry(op).or_insert_with(OpStats::new);
        let us = u64::try_from(latency.as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        s.hist.saturating_record(us);
        if ok {
            s.ok += 1;
        } else {
            s.errors += 1;
        }
    }

    /// Records one operation's service time (from its actual issue).
    pub fn record_service(&mut self, op: Op, latency: Duration) {
        let s = self.service.entry(op).or_insert_with(OpStats::new);
        let us = u64::try_from(latency.as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        s.hist.saturating_record(us);
        s.ok += 1;
    }

    /// Records one operation's latency, also in window `window` of the
    /// per-window series.
    pub fn record_in_window(&mut self, op: Op, latency: Duration, ok: bool, window: usize) {
        self.record(op, latency, ok);
        if window >= MAX_WINDOWS {
            return;
        }
        if self.windows.len() <= window {
            self.windows.resize(window + 1, None);
        }
        let h = self.windows[window].get_or_insert_with(window_histogram);
        let us = u64::try_from(latency.as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        h.saturating_record(us);
    }

    /// Adds another recorder's measurements.
    pub fn merge(&mut self, other: &Measurements) {
        self.merge_totals(other);
        if self.windows.len() < other.windows.len() {
            self.windows.resize(other.windows.len(), None);
        }
        for (mine, theirs) in self.windows.iter_mut().zip(&other.windows) {
            if let Some(t) = theirs {
                match mine {
                    Some(m) => {
                        let _ = m.add(t);
                    }
                    None => *mine = Some(t.clone()),
                }
            }
        }
    }

    /// Adds another recorder's per-operation figures, not its windows (what
    /// a status line needs, cheaply, while the recorder's thread waits).
    pub fn merge_totals(&mut self, other: &Measurements) {
        for (mine, theirs) in [
            (&mut self.ops, &other.ops),
            (&mut self.service, &other.service),
        ] {
            for (op, s) in theirs {
                let m = mine.entry(*op).or_insert_with(OpStats::new);
                let _ = m.hist.add(&s.hist);
                m.ok += s.ok;
                m.errors += s.errors;
            }
        }
    }

    /// The per-window series (windows of `width`), empty windows included.
    pub fn windows(&self, width: Duration) -> Vec<WindowReport> {
        self.windows
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let start_s = width.as_secs_f64() * i as f64;
                match h {
                    Some(h) => WindowReport {
                        start_s,
                        operations: h.len(),
                        p50_us: h.value_at_quantile(0.50),
                        p99_us: h.value_at_quantile(0.99),
                        p999_us: h.value_at_quantile(0.999),
                        max_us: h.max(),
                    },
                    None => WindowReport {
                        start_s,
                        operations: 0,
                        p50_us: 0,
                        p99_us: 0,
                        p999_us: 0,
                        max_us: 0,
                    },
                }
            })
            .collect()
    }

    /// Operations recorded.
    pub fn total(&self) -> u64 {
        self.ops.values().map(|s| s.ok + s.errors).sum()
    }

    /// Per-operation figures.
    pub fn reports(&self) -> BTreeMap<&'static str, OpReport> {
        reports_of(&self.ops)
    }

    /// Per-operation service times (paced runs; empty otherwise).
    pub fn service_reports(&self) -> BTreeMap<&'static str, OpReport> {
        reports_of(&self.service)
    }

    /// YCSB's `TextMeasurementsExporter` output (plus 99.9th and 99.99th).
    pub fn report_text(&self, runtime: Duration) -> String {
        let ms = runtime.as_millis().max(1);
        let mut out = format!(
            "[OVERALL], RunTime(ms), {ms}\n[OVERALL], Throughput(ops/sec), {}\n",
            self.total() as f64 * 1000.0 / ms as f64
        );
        for (name, r) in self.reports() {
            out.push_str(&format!(
                "[{name}], Operations, {}\n[{name}], AverageLatency(us), {}\n[{name}], MinLatency(us), {}\n[{name}], MaxLatency(us), {}\n[{name}], 50thPercentileLatency(us), {}\n[{name}], 95thPercentileLatency(us), {}\n[{name}], 99thPercentileLatency(us), {}\n[{name}], 99.9thPercentileLatency(us), {}\n[{name}], 99.99thPercentileLatency(us), {}\n[{name}], Return=OK, {}\n",
                r.operations, r.average_us, r.min_us, r.max_us, r.p50_us, r.p95_us, r.p99_us, r.p999_us, r.p9999_us, r.ok
            ));
            if r.errors > 0 {
                out.push_str(&format!("[{name}], Return=ERROR, {}\n", r.errors));
            }
        }
        for (name, r) in self.service_reports() {
            out.push_str(&format!(
                "[SERVICE-{name}], 50thPercentileLatency(us), {}\n[SERVICE-{name}], 99thPercentileLatency(us), {}\n[SERVICE-{name}], 99.9thPercentileLatency(us), {}\n[SERVICE-{name}], 99.99thPercentileLatency(us), {}\n[SERVICE-{name}], MaxLatency(us), {}\n",
                r.p50_us, r.p99_us, r.p999_us, r.p9999_us, r.max_us
            ));
        }
        out
    }

    /// One status line: `[READ: Count=…, Avg=…, 99=…]` per operation.
    pub fn status_line(&self) -> String {
        self.reports()
            .iter()
            .map(|(name, r)| {
                format!(
                    "[{name}: Count={}, Max={}, Min={}, Avg={:.2}, 90={}, 99={}, 99.9={}, 99.99={}]",
                    r.operations,
                    r.max_us,
                    r.min_us,
                    r.average_us,
                    r.p90_us,
                    r.p99_us,
                    r.p999_us,
                    r.p9999_us
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn reports_of(ops: &BTreeMap<Op, OpStats>) -> BTreeMap<&'static str, OpReport> {
    ops.iter()
        .map(|(op, s)| {
            let h = &s.hist;
            (
                op.name(),
                OpReport {
                    operations: h.len(),
                    average_us: h.mean(),
                    min_us: h.min(),
                    max_us: h.max(),
                    p50_us: h.value_at_quantile(0.50),
                    p90_us: h.value_at_quantile(0.90),
                    p95_us: h.value_at_quantile(0.95),
                    p99_us: h.value_at_quantile(0.99),
                    p999_us: h.value_at_quantile(0.999),
                    p9999_us: h.value_at_quantile(0.9999),
                    ok: s.ok,
                    errors: s.errors,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_report_has_ycsb_lines() {
        let mut m = Measurements::default();
        for i in 1..=1000u64 {
            m.record(Op::Read, Duration::from_micros(i), true);
        }
        m.record(Op::Update, Duration::from_micros(50), false);
        let text = m.report_text(Duration::from_secs(2));
        assert!(text.contains("[OVERALL], RunTime(ms), 2000\n"));
        assert!(text.contains("[OVERALL], Throughput(ops/sec), 500.5\n"));
        assert!(text.contains("[READ], Operations, 1000\n"));
        assert!(
            text.contains("[READ], 99thPercentileLatency(us), 990\n"),
            "{text}"
        );
        assert!(text.contains("[READ], Return=OK, 1000\n"));
        assert!(text.contains("[UPDATE], Return=ERROR, 1\n"));
        assert!(!text.contains("SERVICE"), "no service times unless paced");
        let mut merged = Measurements::default();
        merged.merge(&m);
        merged.merge(&m);
        assert_eq!(merged.total(), 2002);
        // Service times (paced runs) are their own lines, merged like the rest.
        let mut paced = Measurements::default();
        paced.record(Op::Insert, Duration::from_millis(30), true);
        paced.record_service(Op::Insert, Duration::from_millis(2));
        let mut both = Measurements::default();
        both.merge_totals(&paced);
        both.merge_totals(&paced);
        assert_eq!(both.service_reports()["INSERT"].operations, 2);
        assert_eq!(both.total(), 2, "service times are not more operations");
        let text = both.report_text(Duration::from_secs(1));
        assert!(
            text.contains("[INSERT], 99.9thPercentileLatency(us), 30015\n"),
            "{text}"
        );
        assert!(
            text.contains("[SERVICE-INSERT], 99.9thPercentileLatency(us), 2000\n"),
            "{text}"
        );
    }

    #[test]
    fn windows_place_each_operation_by_its_start() {
        let mut a = Measurements::default();
        let mut b = Measurements::default();
        for i in 0..100u64 {
            a.record_in_window(Op::Insert, Duration::from_micros(100 + i), true, 0);
        }
        b.record_in_window(Op::Insert, Duration::from_millis(250), true, 2);
        b.record_in_window(Op::Read, Duration::from_micros(10), true, 0);
        let mut m = Measurements::default();
        m.merge(&a);
        m.merge(&b);
        let w = m.windows(Duration::from_millis(500));
        assert_eq!(w.len(), 3);
        assert_eq!(w[0].operations, 101);
        assert_eq!(w[0].max_us, 199);
        assert_eq!(w[1].operations, 0, "an empty window is kept, in place");
        assert_eq!(w[2].start_s, 1.0);
        assert_eq!(w[2].operations, 1);
        assert!(w[2].max_us >= 249_000, "{:?}", w[2]);
        assert_eq!(m.total(), 102, "window records count once");
        a.record_in_window(Op::Insert, Duration::from_micros(1), true, MAX_WINDOWS);
        assert_eq!(
            a.windows(Duration::from_secs(1)).len(),
            1,
            "past the bound: not kept"
        );
    }
}
