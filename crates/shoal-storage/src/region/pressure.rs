//! Write pressure: admission of writes against the memstore limits, the
//! in-memory compaction trigger, and the flush scheduler that flushes the
//! largest regions under global pressure, old memstores periodically, and
//! the regions holding a WAL's oldest entries once it holds more than its
//! bound (so a replay after a crash reads and replays at most about that).
//!
//! Limits a write waits on (bounded by the budget's block timeout, then it
//! fails with [`RegionError::Busy`]):
//! - the server-wide budget is at its limit;
//! - the region's memstores hold `flush_size × blocking_multiplier` bytes
//!   (its flushes are not keeping up).
//!
//! A write that waits holds no lock: admission happens before the write
//! gate and the row lock, so flushes, closes and splits proceed.

use super::{Inner, Region, RegionError};
use crate::memstore::{InMemoryCompaction, MemstoreBudget};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Settings of the [`FlushScheduler`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchedulerOptions {
    /// A region whose oldest unflushed edit is this old is flushed (HBase's
    /// optional cache flush interval; default 1 hour, `None` disables).
    pub flush_interval: Option<Duration>,
    /// Each region waits a random extra up to this fraction of the interval,
    /// so regions opened together do not flush together (default 0.2).
    pub jitter: f64,
    /// How often the scheduler looks when nothing wakes it (default 1 s).
    pub check_every: Duration,
    /// A WAL whose live segments hold more than this many record bytes has
    /// the regions with unflushed entries in its oldest segments flushed, so
    /// those segments can go (HBase's `hbase.regionserver.maxlogs`, by
    /// bytes): what a crash leaves to replay stays about this size. `None`:
    /// no bound (default [`crate::wal::DEFAULT_MAX_UNFLUSHED`]).
    pub max_wal_bytes: Option<u64>,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        SchedulerOptions {
            flush_interval: Some(Duration::from_secs(3600)),
            jitter: 0.2,
            check_every: Duration::from_secs(1),
            max_wal_bytes: Some(crate::wal::DEFAULT_MAX_UNFLUSHED),
        }
    }
}

/// Counts a round when it is over (whichever way it returns).
struct CountRound<'a>(&'a std::sync::atomic::AtomicU64);

impl Drop for CountRound<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Picks regions to flush: the largest under global memory pressure, and
/// those whose oldest edit passed the flush interval. One per server.
#[derive(Debug, Clone, Default)]
pub struct FlushScheduler {
    inner: Arc<SchedulerInner>,
}

#[derive(Debug, Default)]
struct SchedulerInner {
    options: SchedulerOptions,
    regions: Mutex<Vec<Weak<Inner>>>,
    started: AtomicBool,
    /// Rounds done (each a look at every region).
    rounds: std::sync::atomic::AtomicU64,
}

impl FlushScheduler {
    /// A scheduler with these settings.
    pub fn new(options: SchedulerOptions) -> FlushScheduler {
        FlushScheduler {
            inner: Arc::new(SchedulerInner {
                options,
                ..SchedulerInner::default()
            }),
        }
    }

    /// The settings.
    pub fn options(&self) -> &SchedulerOptions {
        &self.inner.options
    }

    /// Rounds done so far: each looked at every region once (tests wait on
    /// it to know the scheduler has had its chance to act).
    pub fn rounds(&self) -> u64 {
        self.inner.rounds.load(Ordering::SeqCst)
    }

    /// Adds an open region; starts the scheduler's task on first use.
    pub(crate) fn register(&self, region: &Region) {
        {
            let mut regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
            regions.retain(|r| r.strong_count() > 0);
            regions.push(Arc::downgrade(&region.inner));
        }
        if self.inner.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(&self.inner);
        let budget = region.inner.env.memstore.downgrade();
        let check = self.inner.options.check_every;
        crate::background::spawn(region.inner.env.background.as_ref(), async move {
            loop {
                let Some(b) = budget.upgrade() else { return };
                b.pressure(check).await;
                let Some(sched) = weak.upgrade() else { return };
                FlushScheduler { inner: sched }.round(&b);
            }
        });
    }

    fn live(&self) -> Vec<Region> {
        let mut regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        regions.retain(|r| r.strong_count() > 0);
        regions
            .iter()
            .filter_map(|w| w.upgrade())
            .map(|inner| Region { inner })
            .filter(|r| r.check_open().is_ok())
            .collect()
    }

    /// One look at every region.
    fn round(&self, budget: &MemstoreBudget) {
        let _counted = CountRound(&self.inner.rounds);
        let regions = self.live();
        if budget.over_flush_watermark() {
            let mut excess = budget.used() as i64 - budget.flush_watermark() as i64;
            let mut by_size: Vec<(usize, &Region)> = regions
                .iter()
                .map(|r| (r.memstore_size(), r))
                .filter(|(s, _)| *s > 0)
                .collect();
            by_size.sort_by_key(|e| std::cmp::Reverse(e.0));
            for (size, r) in by_size {
                if excess <= 0 {
                    break;
                }
                if r.inner.flush_running.load(Ordering::SeqCst) {
                    // Its flush will release memory already.
                    excess -= size as i64;
                    continue;
                }
                if r.request_flush() {
                    budget
                        .stats()
                        .pressure_flushes
                        .fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(region = %r.id(), size, "flush under memory pressure");
                    excess -= size as i64;
                }
            }
        }
        if let Some(max) = self.inner.options.max_wal_bytes {
            release_wal(&regions, max);
        }
        if let Some(interval) = self.inner.options.flush_interval {
            let now = regions.first().map_or(0, |r| r.inner.env.clock.now_ms());
            for r in &regions {
                let oldest = r.inner.oldest_edit_ms.load(Ordering::Relaxed);
                if oldest == 0 {
                    continue;
                }
                let due = interval.as_millis() as i64 + r.inner.flush_jitter_ms;
                if now - oldest >= due && r.request_flush() {
                    budget
                        .stats()
                        .periodic_flushes
                        .fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(region = %r.id(), age_ms = now - oldest, "periodic flush");
                }
            }
        }
    }
}

/// Flushes the regions holding the oldest entries of every WAL that holds
/// more than `max` bytes (each log the regions write to: one per server,
/// two for a moment after a cluster server rejoined with a new run). A
/// region already flushing is left to its flush; one with nothing in its
/// memstores has nothing a flush would write.
fn release_wal(regions: &[Region], max: u64) {
    let mut logs: Vec<&crate::wal::Wal> = Vec::new();
    for r in regions {
        let wal = &r.inner.env.wal;
        if !logs.iter().any(|l| l.same_log(wal)) {
            logs.push(wal);
        }
    }
    for wal in logs {
        let names = wal.regions_to_release(max);
        if names.is_empty() {
            continue;
        }
        let mut started = 0u64;
        for name in &names {
            let Some(r) = regions
                .iter()
                .find(|r| r.id() == name.as_str() && r.inner.env.wal.same_log(wal))
            else {
                continue;
            };
            if r.memstore_size() > 0 && r.request_flush() {
                started += 1;
                tracing::debug!(region = %r.id(), "flush to let the WAL's oldest segments go");
            }
        }
        if started > 0 {
            wal.note_release_flushes(started);
            tracing::info!(
                wal_bytes = wal.live_bytes(),
                max_unflushed = max,
                regions = started,
                "the WAL holds more than wal.max_unflushed: flushing the regions holding its oldest entries"
            );
        }
    }
}

impl Region {
    /// The region's memstores hold so much that writes must wait.
    fn over_blocking_size(&self) -> bool {
        let c = &self.inner.config;
        self.memstore_size() >= c.flush_size.saturating_mul(c.blocking_multiplier.max(1))
    }

    /// Waits until the memstore limits admit a write (see the module doc).
    pub(crate) async fn admit(&self) -> Result<(), RegionError> {
        let budget = &self.inner.env.memstore;
        if !budget.over_limit() && !self.over_blocking_size() {
            return Ok(());
        }
        let start = Instant::now();
        budget
            .stats()
            .blocked_writes
            .fetch_add(1, Ordering::Relaxed);
        let deadline = start + budget.options().block_timeout;
        let admitted = budget
            .wait_until(deadline, Duration::from_millis(50), || {
                if self.check_open().is_err() {
                    return false;
                }
                let region_full = self.over_blocking_size();
                if region_full {
                    self.request_flush();
                }
                region_full || budget.over_limit()
            })
            .await;
        budget
            .stats()
            .blocked_micros
            .fetch_add(start.elapsed().as_micros() as u64, Ordering::Relaxed);
        self.check_open()?;
        if admitted {
            return Ok(());
        }
        budget
            .stats()
            .block_timeouts
            .fetch_add(1, Ordering::Relaxed);
        let reason = if self.over_blocking_size() {
            format!(
                "its memstores hold {} bytes, the blocking size is {} (flush size × blocking multiplier); flushes are not keeping up",
                self.memstore_size(),
                self.inner
                    .config
                    .flush_size
                    .saturating_mul(self.inner.config.blocking_multiplier)
            )
        } else {
            format!(
                "the server's memstores hold {} of {} bytes; flushes are not keeping up",
                budget.used(),
                budget.options().limit
            )
        };
        Err(RegionError::Busy {
            region: self.id().to_string(),
            reason: format!("{reason}; waited {:.1} s", start.elapsed().as_secs_f64()),
        })
    }

    /// Notes that the memstores hold an unflushed edit made at `now_ms`.
    pub(crate) fn note_edit(&self, now_ms: i64) {
        let _ = self.inner.oldest_edit_ms.compare_exchange(
            0,
            now_ms.max(1),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// Starts a background flush unless one is running. Returns true if it
    /// started one.
    pub fn request_flush(&self) -> bool {
        if self.check_open().is_err() || self.inner.flush_running.swap(true, Ordering::SeqCst) {
            return false;
        }
        let region = self.clone();
        crate::background::spawn(self.inner.env.background.as_ref(), async move {
            if let Err(e) = region.flush_now().await {
                tracing::error!(region = %region.id(), error = %e, "background flush failed");
            }
            region.inner.flush_running.store(false, Ordering::SeqCst);
        });
        true
    }

    /// Rotates full active segments into the in-memory pipeline and starts
    /// an in-memory compaction if none is running.
    pub(crate) fn maybe_compact_in_memory(&self) {
        let threshold = self.inner.config.in_memory_flush_size;
        let mut rotated = false;
        for store in self.inner.stores.values() {
            if store.config.in_memory_compaction != InMemoryCompaction::None
                && store.memstore.active_size() >= threshold
                && store.memstore.rotate_if_at_least(threshold)
            {
                rotated = true;
            }
        }
        if !rotated || self.inner.imc_running.swap(true, Ordering::SeqCst) {
            return;
        }
        let region = self.clone();
        crate::background::spawn(self.inner.env.background.as_ref(), async move {
            loop {
                region.compact_in_memory();
                region.inner.imc_running.store(false, Ordering::SeqCst);
                // A rotation may have happened after the pass looked.
                let more = region.inner.stores.values().any(|s| {
                    s.memstore.pipeline().iter().any(|seg| !seg.is_flat())
                        && s.config.in_memory_compaction != InMemoryCompaction::None
                });
                if !more || region.inner.imc_running.swap(true, Ordering::SeqCst) {
                    return;
                }
            }
        });
    }

    /// One in-memory compaction pass over every store (synchronous; runs on
    /// the background runtime).
    pub fn compact_in_memory(&self) {
        let max = self.inner.config.pipeline_max_segments;
        for store in self.inner.stores.values() {
            let r =
                store
                    .memstore
                    .compact_pipeline(store.config.pipeline_compaction(), max, || {
                        self.inner.mvcc.smallest_read_point()
                    });
            let s = &self.inner.stats;
            s.imc_flattens
                .fetch_add(r.flattened as u64, Ordering::Relaxed);
            s.imc_merges.fetch_add(r.merges as u64, Ordering::Relaxed);
            s.imc_cells_dropped
                .fetch_add(r.cells_dropped as u64, Ordering::Relaxed);
        }
    }
}
