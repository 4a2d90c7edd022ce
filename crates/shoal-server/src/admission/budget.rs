//! The server-wide budget of request bytes in flight
//! (`limits.request_bytes_in_flight`), shared by every door: a request's
//! bytes are held from when they arrive until its call has answered, and a
//! request whose bytes do not fit is refused (RESOURCE_EXHAUSTED), so the
//! bytes the server holds for requests stay under the limit however many
//! clients send at once. Held and refused bytes are reported in the request
//! metrics.
//!
//! The gRPC port counts a request's HTTP/2 body frame by frame as it
//! arrives (`super::layer`); the framed transport holds a call's bytes
//! whole (`RequestBudget::hold`).

use crate::metrics::RequestMetrics;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The budget shared by every connection.
#[derive(Debug)]
pub struct RequestBudget {
    limit: u64,
    held: AtomicU64,
    metrics: Arc<RequestMetrics>,
}

impl RequestBudget {
    /// A budget of `limit` bytes, reported in `metrics`.
    pub fn new(limit: u64, metrics: Arc<RequestMetrics>) -> Arc<RequestBudget> {
        Arc::new(RequestBudget {
            limit,
            held: AtomicU64::new(0),
            metrics,
        })
    }

    /// Takes `n` bytes if they fit.
    pub(super) fn try_take(&self, n: u64) -> bool {
        let mut held = self.held.load(Ordering::Relaxed);
        loop {
            let Some(next) = held.checked_add(n).filter(|&t| t <= self.limit) else {
                return false;
            };
            match self
                .held
                .compare_exchange_weak(held, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.metrics.set_bytes_in_flight(next);
                    return true;
                }
                Err(now) => held = now,
            }
        }
    }

    /// Gives back `n` bytes taken.
    pub(super) fn give(&self, n: u64) {
        let before = self.held.fetch_sub(n, Ordering::AcqRel);
        self.metrics.set_bytes_in_flight(before.saturating_sub(n));
    }

    /// Bytes held now.
    pub fn held(&self) -> u64 {
        self.held.load(Ordering::Acquire)
    }

    /// The limit, bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Holds `n` bytes until the returned guard drops, if they fit; a
    /// refusal is counted (the framed transport's calls, which arrive whole).
    pub(crate) fn hold(self: &Arc<Self>, n: u64) -> Option<HeldBytes> {
        if self.try_take(n) {
            Some(HeldBytes {
                budget: self.clone(),
                n,
            })
        } else {
            self.record_refused();
            None
        }
    }

    /// Counts a request refused for want of room.
    pub(super) fn record_refused(&self) {
        self.metrics.record_refused_bytes_in_flight();
    }
}

/// Bytes held against the budget until dropped.
#[derive(Debug)]
pub(crate) struct HeldBytes {
    budget: Arc<RequestBudget>,
    n: u64,
}

impl Drop for HeldBytes {
    fn drop(&mut self) {
        self.budget.give(self.n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_refuses_what_does_not_fit_and_takes_back_what_is_given() {
        let b = RequestBudget::new(100, Arc::default());
        assert!(b.try_take(60));
        assert!(!b.try_take(41));
        assert!(b.try_take(40));
        assert!(!b.try_take(1));
        b.give(60);
        assert_eq!(b.held(), 40);
        assert!(b.try_take(60));
        assert!(!b.try_take(u64::MAX), "no overflow");
    }
}
