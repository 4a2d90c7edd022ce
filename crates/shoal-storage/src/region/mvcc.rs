//! Multi-version concurrency control: write sequence numbers and the read point.
//!
//! Every mutation takes the next sequence number when it begins; all its cells
//! carry it. The *read point* is the highest sequence `s` such that every
//! mutation numbered ≤ `s` has been applied to the memstore (or abandoned).
//! Reads see exactly the cells with `seq ≤ read point` as of their start, so a
//! reader never sees half of a row mutation, and a writer returns to its client
//! only once the read point has reached its own sequence (read-your-writes).
//!
//! Writers waiting for the read point are kept by sequence number and woken
//! only once it reaches theirs. (A broadcast on every advance woke every
//! waiting writer each time: with hundreds of writes in flight, as under a
//! group commit, that was hundreds of useless wake-ups per advance.)

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Sequence numbers and the read point of one region.
#[derive(Debug)]
pub struct Mvcc {
    state: Mutex<State>,
    /// Written only under `state`'s lock; read without it.
    read_point: AtomicU64,
    /// Read points of the reads in progress (point → how many), so eager
    /// in-memory compaction knows what every reader can still see.
    readers: Arc<Mutex<BTreeMap<u64, usize>>>,
}

/// A read in progress at a read point; dropping it ends the read.
#[derive(Debug)]
pub struct ReadGuard {
    readers: Arc<Mutex<BTreeMap<u64, usize>>>,
    point: u64,
}

impl ReadGuard {
    /// The read's read point.
    pub fn point(&self) -> u64 {
        self.point
    }
}

impl Drop for ReadGuard {
    fn drop(&mut self) {
        let mut r = self.readers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = r.get_mut(&self.point) {
            *n -= 1;
            if *n == 0 {
                r.remove(&self.point);
            }
        }
    }
}

#[derive(Debug)]
struct State {
    next: u64,
    pending: BTreeSet<u64>,
    /// Writers waiting for the read point, by the sequence they wait for.
    waiters: BTreeMap<u64, Vec<oneshot::Sender<()>>>,
}

impl Mvcc {
    /// Starts after `last_seq`, the highest sequence already durable.
    pub fn new(last_seq: u64) -> Mvcc {
        Mvcc {
            state: Mutex::new(State {
                next: last_seq + 1,
                pending: BTreeSet::new(),
                waiters: BTreeMap::new(),
            }),
            read_point: AtomicU64::new(last_seq),
            readers: Arc::default(),
        }
    }

    /// Assigns the next sequence number to a starting mutation.
    pub fn begin(&self) -> u64 {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let seq = s.next;
        s.next += 1;
        s.pending.insert(seq);
        seq
    }

    /// Marks a mutation applied (or abandoned) and advances the read point past
    /// every completed prefix, waking the writers it reaches.
    pub fn complete(&self, seq: u64) {
        let ready = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            s.pending.remove(&seq);
            let point = match s.pending.first() {
                Some(&oldest) => oldest - 1,
                None => s.next - 1,
            };
            if point <= self.read_point.load(Ordering::Acquire) {
                return;
            }
            self.read_point.store(point, Ordering::Release);
            // Everything at or below `point` is ready; the rest keeps waiting.
            let rest = s.waiters.split_off(&(point + 1));
            std::mem::replace(&mut s.waiters, rest)
        };
        // Woken outside the lock.
        for tx in ready.into_values().flatten() {
            let _ = tx.send(());
        }
    }

    /// The current read point.
    pub fn read_point(&self) -> u64 {
        self.read_point.load(Ordering::Acquire)
    }

    /// Starts a read at the current read point. The point is taken and
    /// registered under one lock, so [`Mvcc::smallest_read_point`] never
    /// misses a read that has its point but is not registered yet.
    pub fn reader(&self) -> ReadGuard {
        let mut r = self.readers.lock().unwrap_or_else(|e| e.into_inner());
        let point = self.read_point();
        *r.entry(point).or_default() += 1;
        ReadGuard {
            readers: self.readers.clone(),
            point,
        }
    }

    /// The lowest read point of any read in progress or to come: every
    /// cell numbered at most this is visible to all of them.
    pub fn smallest_read_point(&self) -> u64 {
        let r = self.readers.lock().unwrap_or_else(|e| e.into_inner());
        let current = self.read_point();
        r.keys().next().map_or(current, |&m| m.min(current))
    }

    /// The highest sequence number handed out so far.
    #[cfg(test)]
    pub fn last_assigned(&self) -> u64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).next - 1
    }

    /// Waits until the read point reaches `seq`.
    pub async fn wait_visible(&self, seq: u64) {
        let rx = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            // Checked under the lock `complete` advances it under, so the
            // wake-up cannot slip between the check and the registration.
            if self.read_point.load(Ordering::Acquire) >= seq {
                return;
            }
            let (tx, rx) = oneshot::channel();
            s.waiters.entry(seq).or_default().push(tx);
            rx
        };
        // The sender is dropped only after sending (or with the Mvcc, and
        // then nobody is left to wait for).
        let _ = rx.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_point_waits_for_the_oldest_pending_write() {
        let m = Mvcc::new(10);
        assert_eq!(m.read_point(), 10);
        let a = m.begin();
        let b = m.begin();
        assert_eq!((a, b), (11, 12));
        m.complete(b);
        assert_eq!(m.read_point(), 10, "11 is still pending");
        m.complete(a);
        assert_eq!(m.read_point(), 12);
        assert_eq!(m.last_assigned(), 12);
    }

    #[test]
    fn the_smallest_read_point_waits_for_the_oldest_reader() {
        let m = Mvcc::new(10);
        let old = m.reader();
        let s = m.begin();
        m.complete(s);
        assert_eq!(m.read_point(), 11);
        assert_eq!(m.smallest_read_point(), 10);
        let new = m.reader();
        assert_eq!(new.point(), 11);
        drop(old);
        assert_eq!(m.smallest_read_point(), 11);
        drop(new);
        assert_eq!(m.smallest_read_point(), 11);
    }

    #[tokio::test]
    async fn wait_visible_returns_once_complete() {
        let m = std::sync::Arc::new(Mvcc::new(0));
        let s = m.begin();
        let m2 = m.clone();
        let waiter = tokio::spawn(async move { m2.wait_visible(s).await });
        m.complete(s);
        waiter.await.unwrap();
        assert_eq!(m.read_point(), 1);
    }

    #[tokio::test]
    async fn a_writer_is_woken_only_once_its_own_sequence_is_visible() {
        let m = Mvcc::new(0);
        let (a, b, c) = (m.begin(), m.begin(), m.begin());
        let mut wait_b = Box::pin(m.wait_visible(b));
        let mut wait_c = Box::pin(m.wait_visible(c));
        assert!(futures::poll!(&mut wait_b).is_pending());
        assert!(futures::poll!(&mut wait_c).is_pending());
        m.complete(b);
        assert!(
            futures::poll!(&mut wait_b).is_pending(),
            "a is still pending, so b is not visible"
        );
        m.complete(a);
        assert!(futures::poll!(&mut wait_b).is_ready());
        assert!(
            futures::poll!(&mut wait_c).is_pending(),
            "c is still pending"
        );
        m.complete(c);
        assert!(futures::poll!(&mut wait_c).is_ready());
        // Waiting for what is already visible returns at once.
        assert!(futures::poll!(Box::pin(m.wait_visible(a))).is_ready());
        assert!(m.state.lock().unwrap().waiters.is_empty());
    }
}
