//! The last hour of the server's key rates, sampled every few seconds, for
//! the status page's charts.

use crate::status::StatusView;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Points kept: one hour at the default 10 s interval.
pub const HISTORY_POINTS: usize = 360;

/// One sample: rates over the interval that ended at `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Seconds since the server started.
    pub uptime_s: f64,
    /// Requests per second.
    pub ops_per_sec: f64,
    /// L1 hit ratio over the interval (`None`: no lookups).
    pub l1_hit_ratio: Option<f64>,
    /// L2 hit ratio over the interval (`None`: no lookups).
    pub l2_hit_ratio: Option<f64>,
    /// Object-store GETs per second (all GETs: blocks, file tails, manifests).
    pub object_gets_per_sec: f64,
    /// Memstore bytes at the sample.
    pub memstore_bytes: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Totals {
    requests: u64,
    l1_hits: u64,
    l1_lookups: u64,
    l2_hits: u64,
    l2_lookups: u64,
    gets: u64,
}

fn totals(v: &StatusView) -> Totals {
    let mut t = Totals {
        requests: v.requests.total_requests(),
        gets: v
            .object_store
            .iter()
            .filter(|(op, _)| op.as_str().starts_with("get"))
            .map(|(_, s)| s.requests)
            .sum(),
        ..Totals::default()
    };
    if let Some(c) = &v.cache {
        for p in [&c.data, &c.in_memory, &c.meta] {
            t.l1_hits += p.hits;
            t.l1_lookups += p.hits + p.misses;
        }
        t.l2_hits = c.l2_hits;
        t.l2_lookups = c.l2_hits + c.l2_misses;
    }
    t
}

/// The points, and the totals (with their time) the next rates start from.
type State = (VecDeque<Point>, Option<(f64, Totals)>);

/// A ring buffer of samples.
#[derive(Debug, Default)]
pub struct History {
    inner: Mutex<State>,
}

impl History {
    /// Adds a sample taken from `view` (rates against the previous sample).
    pub fn sample(&self, view: &StatusView) {
        let now_s = view.uptime.as_secs_f64();
        let t = totals(view);
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (points, last) = &mut *g;
        if let Some((then, prev)) = *last {
            let dt = (now_s - then).max(1e-3);
            let ratio = |h: u64, ph: u64, l: u64, pl: u64| {
                let lookups = l.saturating_sub(pl);
                (lookups > 0).then(|| h.saturating_sub(ph) as f64 / lookups as f64)
            };
            points.push_back(Point {
                uptime_s: now_s,
                ops_per_sec: t.requests.saturating_sub(prev.requests) as f64 / dt,
                l1_hit_ratio: ratio(t.l1_hits, prev.l1_hits, t.l1_lookups, prev.l1_lookups),
                l2_hit_ratio: ratio(t.l2_hits, prev.l2_hits, t.l2_lookups, prev.l2_lookups),
                object_gets_per_sec: t.gets.saturating_sub(prev.gets) as f64 / dt,
                memstore_bytes: view.memstore_bytes,
            });
            while points.len() > HISTORY_POINTS {
                points.pop_front();
            }
        }
        *last = Some((now_s, t));
    }

    /// The samples, oldest first.
    pub fn points(&self) -> Vec<Point> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.0.iter().cloned().collect()
    }
}

/// Samples `view()` into `history` every `every` until the task is aborted.
pub fn spawn_sampler(
    history: Arc<History>,
    view: Arc<dyn Fn() -> StatusView + Send + Sync>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let start = Instant::now();
        history.sample(&view());
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            tick.tick().await;
            history.sample(&view());
            tracing::trace!(elapsed = ?start.elapsed(), "status sampled");
        }
    })
}
