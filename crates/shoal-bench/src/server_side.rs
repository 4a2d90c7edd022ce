//! The server's own view of a YCSB phase, beside the client's: its put
//! latency (Mutate and MultiMutate, from its request histograms), WAL group
//! commits, flushes, compactions and writes held back by the memstore limits,
//! over the whole phase and per window. Read from the server's `/metrics`
//! at the start, at every window boundary and at the end, so a tail the
//! client sees can be placed: inside the server's handling of the call, in
//! its WAL, or outside both (transport, scheduling, the client).
//!
//! Server latencies are the upper bounds of their histogram buckets (the
//! request histogram's bounds are 0.25, 0.5, 1, 2.5, 5, 10, 25 … ms; the
//! WAL's are powers of two), so they bound the quantile from above.

use crate::scenario::figures::{FigureSource, Figures, quantile_us};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Figures of one window (or of the whole phase).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ServerWindow {
    /// Offset of the window's start from the first reading, seconds.
    pub start_s: f64,
    /// Mutate and MultiMutate calls answered (a client that combines
    /// concurrent puts sends fewer calls than rows).
    pub put_calls: u64,
    /// Their p50, p99, p99.9 and p99.99 (bucket upper bounds), µs.
    pub put_p50_us: u64,
    /// p99.
    pub put_p99_us: u64,
    /// p99.9.
    pub put_p999_us: u64,
    /// p99.99.
    pub put_p9999_us: u64,
    /// WAL group commits.
    pub wal_syncs: u64,
    /// Their p99 and p99.9 (bucket upper bounds), µs.
    pub wal_sync_p99_us: u64,
    /// p99.9.
    pub wal_sync_p999_us: u64,
    /// Memstore flushes completed.
    pub flushes: u64,
    /// Compactions completed.
    pub compactions: u64,
    /// Writes that waited for memstore memory.
    pub blocked_writes: u64,
    /// p99.9 of each stage of the server's write path (bucket upper
    /// bounds, µs), by stage name: `gate`, `row_locks`, `wal`, `read_point`.
    pub stage_p999_us: std::collections::BTreeMap<String, u64>,
}

/// What the server reported over a phase.
#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    /// The whole phase.
    pub total: ServerWindow,
    /// Slowest group commit since the server started, µs.
    pub wal_sync_max_us: u64,
    /// Width of the windows, seconds.
    pub window_s: f64,
    /// Each window, in order.
    pub windows: Vec<ServerWindow>,
}

/// Reads the server's figures every window until [`Sampler::finish`].
pub struct Sampler {
    task: tokio::task::JoinHandle<Vec<(f64, Figures)>>,
    stop: Arc<tokio::sync::Notify>,
    source: FigureSource,
    started: Instant,
    window: Duration,
}

impl Sampler {
    /// Takes the first reading now (an unreachable server is an error here,
    /// before the phase starts), then one every `window` in the background.
    pub async fn start(source: FigureSource, window: Duration) -> Result<Sampler, String> {
        let first = source.read().await.map_err(|e| e.to_string())?;
        let started = Instant::now();
        let stop = Arc::new(tokio::sync::Notify::new());
        let (s, st) = (source.clone(), stop.clone());
        let window = window.max(Duration::from_millis(100));
        let task = tokio::spawn(async move {
            let mut readings = vec![(0.0, first)];
            let mut tick = tokio::time::interval_at((started + window).into(), window);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = st.notified() => return readings,
                }
                // A reading that fails is skipped: the next window spans it.
                if let Ok(f) = s.read().await {
                    readings.push((started.elapsed().as_secs_f64(), f));
                }
            }
        });
        Ok(Sampler {
            task,
            stop,
            source,
            started,
            window,
        })
    }

    /// Takes the last reading and reports the phase.
    pub async fn finish(self) -> Result<ServerReport, String> {
        self.stop.notify_one();
        let mut readings = self.task.await.map_err(|e| e.to_string())?;
        let last = self.source.read().await.map_err(|e| e.to_string())?;
        readings.push((self.started.elapsed().as_secs_f64(), last));
        Ok(report(&readings, self.window))
    }
}

/// The report of a series of readings (at least one).
pub fn report(readings: &[(f64, Figures)], window: Duration) -> ServerReport {
    let between = |start_s: f64, a: &Figures, b: &Figures| ServerWindow {
        start_s,
        put_calls: count(&b.put_seconds).saturating_sub(count(&a.put_seconds)),
        put_p50_us: quantile_us(&a.put_seconds, &b.put_seconds, 0.5),
        put_p99_us: quantile_us(&a.put_seconds, &b.put_seconds, 0.99),
        put_p999_us: quantile_us(&a.put_seconds, &b.put_seconds, 0.999),
        put_p9999_us: quantile_us(&a.put_seconds, &b.put_seconds, 0.9999),
        wal_syncs: b.wal_syncs.saturating_sub(a.wal_syncs),
        wal_sync_p99_us: quantile_us(&a.wal_sync_seconds, &b.wal_sync_seconds, 0.99),
        wal_sync_p999_us: quantile_us(&a.wal_sync_seconds, &b.wal_sync_seconds, 0.999),
        flushes: b.flushes.saturating_sub(a.flushes),
        compactions: b.compactions.saturating_sub(a.compactions),
        blocked_writes: b.blocked_writes.saturating_sub(a.blocked_writes),
        stage_p999_us: b
            .write_stage_seconds
            .iter()
            .map(|(stage, after)| {
                let before = a
                    .write_stage_seconds
                    .get(stage)
                    .cloned()
                    .unwrap_or_default();
                (stage.clone(), quantile_us(&before, after, 0.999))
            })
            .collect(),
    };
    let windows = readings
        .windows(2)
        .map(|w| between(w[0].0, &w[0].1, &w[1].1))
        .collect();
    let (first, last) = match (readings.first(), readings.last()) {
        (Some(f), Some(l)) => (&f.1, &l.1),
        _ => {
            let empty = Figures::default();
            return ServerReport {
                total: between(0.0, &empty, &empty),
                wal_sync_max_us: 0,
                window_s: window.as_secs_f64(),
                windows: Vec::new(),
            };
        }
    };
    ServerReport {
        total: between(0.0, first, last),
        wal_sync_max_us: (last.wal_sync_max_seconds * 1e6).round() as u64,
        window_s: window.as_secs_f64(),
        windows,
    }
}

/// Observations in a cumulative histogram (its last bucket).
fn count(b: &[(f64, u64)]) -> u64 {
    b.last().map_or(0, |&(_, c)| c)
}

impl ServerReport {
    /// One line for the text report.
    pub fn describe(&self) -> String {
        let t = &self.total;
        // In the order a write passes them.
        let stages: Vec<String> = ["gate", "row_locks", "wal", "read_point"]
            .iter()
            .filter_map(|s| t.stage_p999_us.get(*s).map(|us| format!("{s} {us}")))
            .collect();
        let stages = if stages.is_empty() {
            String::new()
        } else {
            format!("; write stages p99.9 ≤ {} µs", stages.join(", "))
        };
        format!(
            "put calls {} p50/p99/p99.9/p99.99 ≤ {}/{}/{}/{} µs; WAL group commits {} p99/p99.9 ≤ {}/{} µs (slowest since start {} µs); flushes {}, compactions {}, writes held back {}{stages}",
            t.put_calls,
            t.put_p50_us,
            t.put_p99_us,
            t.put_p999_us,
            t.put_p9999_us,
            t.wal_syncs,
            t.wal_sync_p99_us,
            t.wal_sync_p999_us,
            self.wal_sync_max_us,
            t.flushes,
            t.compactions,
            t.blocked_writes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(puts_fast: u64, puts_slow: u64, syncs: u64, flushes: u64) -> Figures {
        Figures {
            put_seconds: vec![
                (0.001, puts_fast),
                (0.025, puts_fast + puts_slow),
                (f64::INFINITY, puts_fast + puts_slow),
            ],
            wal_syncs: syncs,
            wal_sync_seconds: vec![(0.000511, syncs), (f64::INFINITY, syncs)],
            flushes,
            ..Figures::default()
        }
    }

    #[test]
    fn windows_are_differences_of_consecutive_readings() {
        let readings = vec![
            (0.0, figures(100, 0, 50, 0)),
            (1.0, figures(1_100, 0, 550, 0)),
            (2.0, figures(2_000, 100, 1_000, 1)),
        ];
        let r = report(&readings, Duration::from_secs(1));
        assert_eq!(r.windows.len(), 2);
        assert_eq!(r.windows[0].put_calls, 1_000);
        assert_eq!(r.windows[0].put_p999_us, 1_000);
        assert_eq!(r.windows[1].start_s, 1.0);
        assert_eq!(r.windows[1].put_calls, 1_000);
        assert_eq!(r.windows[1].put_p99_us, 25_000, "the slow second shows");
        assert_eq!(r.windows[1].flushes, 1);
        assert_eq!(r.total.put_calls, 2_000);
        assert_eq!(r.total.wal_syncs, 950);
        assert_eq!(r.total.put_p50_us, 1_000);
        assert!(r.describe().contains("put calls 2000"), "{}", r.describe());
    }

    #[test]
    fn one_reading_is_an_empty_phase() {
        let r = report(&[(0.0, figures(5, 0, 1, 0))], Duration::from_secs(1));
        assert!(r.windows.is_empty());
        assert_eq!(r.total.put_calls, 0);
        assert_eq!(r.total.put_p999_us, 0);
    }
}
