//! The server-wide memstore budget: every memstore's bytes add up here, and
//! writers wait while the total is over the limit.
//!
//! Two watermarks, as in HBase: above the *flush* watermark (a fraction of
//! the limit, default 95 %) the flush scheduler flushes the largest regions;
//! at the *limit* writes wait — bounded by a deadline, after which they fail
//! with a clear error — instead of the server running out of memory. Each
//! release of memory (a flush committed, a segment flattened) wakes the
//! waiting writers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Limits of a [`MemstoreBudget`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetOptions {
    /// Total memstore bytes at which writes wait.
    pub limit: usize,
    /// Fraction of `limit` above which the largest regions are flushed.
    pub flush_fraction: f64,
    /// Longest a write waits for memory before failing.
    pub block_timeout: Duration,
}

impl Default for BudgetOptions {
    fn default() -> Self {
        BudgetOptions {
            limit: usize::MAX,
            flush_fraction: 0.95,
            block_timeout: Duration::from_secs(30),
        }
    }
}

/// Counters of the budget (monotonic).
#[derive(Debug, Default)]
pub struct BudgetStats {
    /// Writes that had to wait for memory (global limit or region's
    /// blocking size).
    pub blocked_writes: AtomicU64,
    /// Total time writes waited, µs.
    pub blocked_micros: AtomicU64,
    /// Writes that gave up after the block timeout.
    pub block_timeouts: AtomicU64,
    /// Flushes started because the total passed the flush watermark.
    pub pressure_flushes: AtomicU64,
    /// Flushes started because a region's oldest edit was old.
    pub periodic_flushes: AtomicU64,
    /// Where writes spend their time (every region of the server).
    pub stages: crate::write_stages::WriteStages,
}

/// Server-wide memstore accounting (cheap to clone; clones share).
#[derive(Debug, Clone)]
pub struct MemstoreBudget {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: BudgetOptions,
    used: AtomicUsize,
    released: Notify,
    pressure: Notify,
    stats: BudgetStats,
}

impl Default for MemstoreBudget {
    fn default() -> Self {
        MemstoreBudget::new(BudgetOptions::default())
    }
}

impl MemstoreBudget {
    /// A budget with these limits.
    pub fn new(options: BudgetOptions) -> MemstoreBudget {
        MemstoreBudget {
            inner: Arc::new(Inner {
                options,
                used: AtomicUsize::new(0),
                released: Notify::new(),
                pressure: Notify::new(),
                stats: BudgetStats::default(),
            }),
        }
    }

    /// The limits.
    pub fn options(&self) -> &BudgetOptions {
        &self.inner.options
    }

    /// Bytes held by all memstores.
    pub fn used(&self) -> usize {
        self.inner.used.load(Ordering::Relaxed)
    }

    /// The flush watermark in bytes.
    pub fn flush_watermark(&self) -> usize {
        let o = &self.inner.options;
        if o.limit == usize::MAX {
            return usize::MAX;
        }
        (o.limit as f64 * o.flush_fraction.clamp(0.0, 1.0)) as usize
    }

    /// Counters.
    pub fn stats(&self) -> &BudgetStats {
        &self.inner.stats
    }

    /// Accounts `n` more bytes; wakes the flush scheduler when the total
    /// crosses the flush watermark.
    pub fn add(&self, n: usize) {
        if n == 0 {
            return;
        }
        let now = self.inner.used.fetch_add(n, Ordering::Relaxed) + n;
        if now >= self.flush_watermark() {
            self.inner.pressure.notify_one();
        }
    }

    /// Releases `n` bytes and wakes waiting writers.
    pub fn sub(&self, n: usize) {
        if n == 0 {
            return;
        }
        let mut cur = self.inner.used.load(Ordering::Relaxed);
        loop {
            let next = cur.saturating_sub(n);
            match self.inner.used.compare_exchange_weak(
                cur,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
        self.inner.released.notify_waiters();
    }

    /// Applies a signed change.
    pub fn apply(&self, delta: isize) {
        if delta >= 0 {
            self.add(delta as usize);
        } else {
            self.sub(delta.unsigned_abs());
        }
    }

    /// True while writes must wait.
    pub fn over_limit(&self) -> bool {
        self.used() >= self.inner.options.limit
    }

    /// True while the scheduler should flush.
    pub fn over_flush_watermark(&self) -> bool {
        self.used() >= self.flush_watermark()
    }

    /// Waits until `still_blocked` turns false, waking on every release of
    /// memory (and every `poll` at the latest), or until `deadline`.
    /// Returns false on timeout.
    pub async fn wait_until(
        &self,
        deadline: Instant,
        poll: Duration,
        mut still_blocked: impl FnMut() -> bool,
    ) -> bool {
        loop {
            let released = self.inner.released.notified();
            if !still_blocked() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            self.inner.pressure.notify_one();
            let _ = tokio::time::timeout((deadline - now).min(poll), released).await;
        }
    }

    /// Wakes on pressure (the flush watermark crossed, a writer blocked) or
    /// after `timeout`.
    pub async fn pressure(&self, timeout: Duration) {
        let _ = tokio::time::timeout(timeout, self.inner.pressure.notified()).await;
    }

    /// Wakes the flush scheduler.
    pub fn signal_pressure(&self) {
        self.inner.pressure.notify_one();
    }

    /// A weak handle (for tasks that must not keep the budget alive).
    pub fn downgrade(&self) -> WeakBudget {
        WeakBudget(Arc::downgrade(&self.inner))
    }
}

/// A weak [`MemstoreBudget`].
#[derive(Debug, Clone)]
pub struct WeakBudget(std::sync::Weak<Inner>);

impl WeakBudget {
    /// The budget, if it still exists.
    pub fn upgrade(&self) -> Option<MemstoreBudget> {
        self.0.upgrade().map(|inner| MemstoreBudget { inner })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writers_wait_for_a_release_and_time_out_without_one() {
        let b = MemstoreBudget::new(BudgetOptions {
            limit: 100,
            ..BudgetOptions::default()
        });
        b.add(150);
        assert!(b.over_limit());
        let deadline = Instant::now() + Duration::from_millis(50);
        assert!(
            !b.wait_until(deadline, Duration::from_millis(10), || b.over_limit())
                .await
        );
        let b2 = b.clone();
        let releaser = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            b2.sub(100);
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        assert!(
            b.wait_until(deadline, Duration::from_secs(5), || b.over_limit())
                .await
        );
        releaser.await.unwrap();
        assert_eq!(b.used(), 50);
        b.sub(80);
        assert_eq!(b.used(), 0, "never below zero");
    }

    #[test]
    fn watermark_is_a_fraction_of_the_limit() {
        let b = MemstoreBudget::new(BudgetOptions {
            limit: 1000,
            flush_fraction: 0.9,
            ..BudgetOptions::default()
        });
        assert_eq!(b.flush_watermark(), 900);
        assert_eq!(MemstoreBudget::default().flush_watermark(), usize::MAX);
    }
}
