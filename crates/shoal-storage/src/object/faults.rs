//! [`Faults`]: fault injection for tests (test tooling; not for production configs).
//!
//! A `Faults` handle is attached to a bucket with
//! [`Bucket::with_faults`](super::Bucket::with_faults); clones of the handle share one set
//! of queues, so a test keeps a clone and arms faults while the code under test runs.
//! Each queued fault fires on exactly one attempt of its [`Op`], in order, and then is
//! gone. Injected failures look to the retry layer exactly like the real failures they
//! stand in for (they are classified the same way), and are counted in the metrics as
//! failed attempts.
//!
//! Cost when unused: a bucket without faults holds `None` and skips the check; a bucket
//! with an empty handle does one relaxed atomic load per attempt.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::metrics::Op;
use super::retry::{Failure, FailureKind};

/// One injected failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `500 InternalError` before the request reaches the store (nothing applied; but
    /// like a real 5xx, the client cannot know that).
    ServerError,
    /// `503 SlowDown` before the request reaches the store (throttling; nothing applied).
    SlowDown,
    /// The connection is refused: the request never left (nothing applied).
    ConnectionRefused,
    /// The request times out before reaching the store (nothing applied; ambiguous to
    /// the client).
    Timeout,
    /// The request reaches the store and is applied, then the client sees a timeout: the
    /// ambiguous outcome of a write. On a read, the data is read and discarded.
    TimeoutAfterApply,
}

impl Fault {
    /// True if the request is sent to the store before the fault fires.
    pub(crate) fn applies_request(self) -> bool {
        matches!(self, Fault::TimeoutAfterApply)
    }

    pub(crate) fn into_failure(self, op: Op) -> Failure {
        let kind = match self {
            Fault::ServerError => FailureKind::ServerError,
            Fault::SlowDown => FailureKind::Throttled,
            Fault::ConnectionRefused => FailureKind::Connect,
            Fault::Timeout | Fault::TimeoutAfterApply => FailureKind::Timeout,
        };
        Failure::new(kind, InjectedFault { fault: self, op })
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fault::ServerError => "500 InternalError",
            Fault::SlowDown => "503 SlowDown: please reduce your request rate",
            Fault::ConnectionRefused => "connection refused",
            Fault::Timeout => "request timed out",
            Fault::TimeoutAfterApply => "request timed out (after the store applied it)",
        })
    }
}

/// The error carried by an injected failure.
#[derive(Debug, thiserror::Error)]
#[error("injected fault on {op}: {fault} (test fault injection, see object::Faults)")]
pub struct InjectedFault {
    pub fault: Fault,
    pub op: Op,
}

/// A shareable set of per-operation fault queues. See the module documentation.
#[derive(Clone, Default)]
pub struct Faults {
    inner: Arc<FaultsInner>,
}

#[derive(Default)]
struct FaultsInner {
    /// Faults queued over all ops; lets `take` skip the lock when nothing is armed.
    pending: AtomicUsize,
    queues: [Mutex<VecDeque<Fault>>; Op::COUNT],
    fired: [AtomicU64; Op::COUNT],
}

impl fmt::Debug for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Faults")
            .field("pending", &self.inner.pending.load(Ordering::Relaxed))
            .finish()
    }
}

impl Faults {
    /// An empty handle.
    pub fn new() -> Faults {
        Faults::default()
    }

    fn queue(&self, op: Op) -> MutexGuard<'_, VecDeque<Fault>> {
        // A panic while holding this lock cannot leave the queue inconsistent.
        self.inner.queues[op.index()]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues `fault` for the next `times` attempts of `op` (after any already queued).
    pub fn inject(&self, op: Op, fault: Fault, times: usize) {
        let mut queue = self.queue(op);
        queue.extend(std::iter::repeat_n(fault, times));
        self.inner.pending.fetch_add(times, Ordering::Relaxed);
    }

    /// The next `times` attempts of `op` fail with a transient `500 InternalError`.
    pub fn fail_next(&self, op: Op, times: usize) {
        self.inject(op, Fault::ServerError, times);
    }

    /// The next `times` attempts of `op` are throttled (`503 SlowDown`).
    pub fn throttle_next(&self, op: Op, times: usize) {
        self.inject(op, Fault::SlowDown, times);
    }

    /// The next `times` attempts of `op` time out before reaching the store.
    pub fn timeout_next(&self, op: Op, times: usize) {
        self.inject(op, Fault::Timeout, times);
    }

    /// The next `times` attempts of `op` are applied by the store and then reported to
    /// the client as timeouts (the ambiguous write).
    pub fn timeout_after_apply_next(&self, op: Op, times: usize) {
        self.inject(op, Fault::TimeoutAfterApply, times);
    }

    /// Faults still queued for `op`.
    pub fn pending(&self, op: Op) -> usize {
        self.queue(op).len()
    }

    /// Faults of `op` that have fired so far.
    pub fn fired(&self, op: Op) -> u64 {
        self.inner.fired[op.index()].load(Ordering::Relaxed)
    }

    /// Drops every queued fault.
    pub fn clear(&self) {
        for op in Op::ALL {
            let mut queue = self.queue(op);
            self.inner.pending.fetch_sub(queue.len(), Ordering::Relaxed);
            queue.clear();
        }
    }

    /// Takes the next fault for an attempt of `op`, if one is queued.
    pub(crate) fn take(&self, op: Op) -> Option<Fault> {
        if self.inner.pending.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let fault = self.queue(op).pop_front()?;
        self.inner.pending.fetch_sub(1, Ordering::Relaxed);
        self.inner.fired[op.index()].fetch_add(1, Ordering::Relaxed);
        Some(fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_fire_in_order_per_op() {
        let faults = Faults::new();
        assert_eq!(faults.take(Op::Get), None);
        faults.fail_next(Op::Get, 2);
        faults.throttle_next(Op::Get, 1);
        faults.timeout_after_apply_next(Op::Put, 1);
        let shared = faults.clone();
        assert_eq!(shared.pending(Op::Get), 3);
        assert_eq!(shared.take(Op::Head), None);
        assert_eq!(shared.take(Op::Get), Some(Fault::ServerError));
        assert_eq!(shared.take(Op::Get), Some(Fault::ServerError));
        assert_eq!(shared.take(Op::Get), Some(Fault::SlowDown));
        assert_eq!(shared.take(Op::Get), None);
        assert_eq!(faults.fired(Op::Get), 3);
        faults.clear();
        assert_eq!(faults.take(Op::Put), None);
        assert_eq!(faults.pending(Op::Put), 0);
    }

    #[test]
    fn injected_failures_classify_like_real_ones() {
        let f = Fault::SlowDown.into_failure(Op::Put);
        assert_eq!(f.kind, FailureKind::Throttled);
        assert!(f.kind.is_transient() && !f.kind.may_have_applied());
        let f = Fault::TimeoutAfterApply.into_failure(Op::ConditionalPut);
        assert!(f.kind.may_have_applied());
        assert!(f.source.to_string().contains("conditional_put"));
        assert!(
            !Fault::ConnectionRefused
                .into_failure(Op::Get)
                .kind
                .may_have_applied()
        );
    }
}
