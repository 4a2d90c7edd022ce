//! The last hour of the server's key rates, for the status page's charts: a
//! ring buffer of points, each the rates over the interval since the
//! previous sample. Time comes from the view's uptime, so samples of
//! synthetic views are as good as live ones.

use crate::metrics::status::StatusView;
use shoal_storage::object::Op;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Points kept: one hour at the default 10 s interval.
pub const HISTORY_POINTS: usize = 360;

/// One sample: rates over the interval that ended at `uptime_s`.
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
    /// Object-store GETs per second (whole and ranged: blocks, file tails,
    /// manifests).
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
            .filter(|(op, _)| matches!(op, Op::Get | Op::RangedGet))
            .map(|(_, s)| s.requests)
            .sum(),
        ..Totals::default()
    };
    if let Some(c) = &v.cache {
        for p in [&c.data, &c.in_memory, &c.meta, &c.rows] {
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
    /// Adds a sample taken from `view`: rates against the previous sample,
    /// at `view.uptime`. The first sample only sets the baseline; a sample
    /// not later than the previous one is ignored.
    pub fn sample(&self, view: &StatusView) {
        let now_s = view.uptime.as_secs_f64();
        let t = totals(view);
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (points, last) = &mut *g;
        if let Some((then, prev)) = *last {
            if now_s <= then {
                return;
            }
            let dt = now_s - then;
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

    /// The newest sample.
    pub fn latest(&self) -> Option<Point> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.0.back().cloned()
    }
}

/// Samples `view()` into `history` now and then every `every` (10 s for an
/// hour of [`HISTORY_POINTS`]) until the task is aborted. Needs a Tokio
/// runtime.
pub fn spawn_sampler(
    history: Arc<History>,
    view: Arc<dyn Fn() -> StatusView + Send + Sync>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            history.sample(&view());
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{RequestMetrics, RequestOp};
    use shoal_storage::cache::{CacheMetricsSnapshot, DiskCacheMetrics};

    /// A view at `secs` of uptime with the given totals.
    fn view(secs: u64, requests: u64, l1: (u64, u64), l2: (u64, u64), gets: u64) -> StatusView {
        let m = RequestMetrics::default();
        for _ in 0..requests {
            m.record(RequestOp::Get, Duration::from_micros(100), true);
        }
        let mut v = crate::metrics::test_support::view(true);
        v.uptime = Duration::from_secs(secs);
        v.requests = m.snapshot();
        let mut c = CacheMetricsSnapshot::default();
        (c.data.hits, c.data.misses) = (l1.0 / 2, l1.1);
        c.meta.hits = l1.0 - l1.0 / 2;
        (c.l2_hits, c.l2_misses) = l2;
        c.l2 = Some(DiskCacheMetrics::default());
        v.cache = Some(c);
        v.object_store.get.requests = gets / 2;
        v.object_store.ranged_get.requests = gets - gets / 2;
        v.object_store.put.requests = 1000 * secs;
        v.memstore_bytes = secs;
        v
    }

    #[test]
    fn rates_are_deltas_over_the_interval() {
        let h = History::default();
        h.sample(&view(100, 50, (10, 10), (0, 0), 4));
        assert!(h.points().is_empty(), "the first sample is the baseline");
        h.sample(&view(110, 150, (40, 20), (0, 0), 24));
        h.sample(&view(110, 900, (40, 20), (0, 0), 24)); // same time: ignored
        h.sample(&view(130, 150, (40, 20), (3, 1), 24));
        let p = h.points();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].uptime_s, 110.0);
        assert_eq!(p[0].ops_per_sec, 10.0);
        assert_eq!(p[0].l1_hit_ratio, Some(0.75));
        assert_eq!(p[0].l2_hit_ratio, None, "no L2 lookups in the interval");
        assert_eq!(p[0].object_gets_per_sec, 2.0, "puts are not gets");
        assert_eq!(p[0].memstore_bytes, 110);
        assert_eq!(p[1].ops_per_sec, 0.0);
        assert_eq!(p[1].l1_hit_ratio, None);
        assert_eq!(p[1].l2_hit_ratio, Some(0.75));
        assert_eq!(h.latest(), Some(p[1].clone()));
    }

    #[test]
    fn keeps_the_last_hour_and_works_without_a_cache() {
        let h = History::default();
        for i in 0..=400u64 {
            let mut v = view(i * 10, 0, (0, 0), (0, 0), i);
            v.cache = None;
            h.sample(&v);
        }
        let p = h.points();
        assert_eq!(p.len(), HISTORY_POINTS);
        assert_eq!(p[0].uptime_s, 410.0);
        assert_eq!(p.last().unwrap().uptime_s, 4000.0);
        assert!(
            p.iter()
                .all(|p| p.l1_hit_ratio.is_none() && p.object_gets_per_sec == 0.1)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_sampler_samples_on_its_interval() {
        let h = Arc::new(History::default());
        let n = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let n2 = n.clone();
        let task = spawn_sampler(
            h.clone(),
            Arc::new(move || {
                let i = n2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                view(i * 10, i * 100, (0, 0), (0, 0), 0)
            }),
            Duration::from_secs(10),
        );
        tokio::time::sleep(Duration::from_secs(35)).await;
        task.abort();
        let p = h.points();
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p.iter().all(|p| p.ops_per_sec == 10.0));
    }
}
