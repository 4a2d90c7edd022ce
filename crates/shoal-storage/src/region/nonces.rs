//! HBase's nonces: a client marks each Increment and Append with a nonce
//! (and its connection's nonce group), and sends the same mark again when
//! it retries an operation whose answer it lost. A region remembers the
//! marks of the increments and appends it applied, so a retry of one is
//! answered with the columns' current cells instead of being applied twice
//! (HBase's `ServerNonceManager`).
//!
//! A mark is remembered for `NonceOptions::window` after the operation
//! (default 30 minutes, HBase's `hbase.server.hashNonce.gracePeriod`), and
//! at most `NonceOptions::max_entries` marks per region (default 100,000):
//! when full, the oldest mark is forgotten first. So a region forgets a mark
//! after the window or after that many newer nonced operations, whichever
//! comes first. Each mark costs about 60 bytes (under 100 with the tables'
//! growth slack), so the default bounds a region's table to about 10 MiB.
//!
//! The mark is also written in the operation's WAL entry, and replaying the
//! entry when the region opens (after a crash, on another server) remembers
//! it again, as HBase's `reportOperationFromWal` does: a retry that reaches
//! the region's next owner is still refused. A flushed entry is not
//! replayed, so, as in HBase, a region moved or flushed and reopened
//! forgets the marks of what was flushed; a split's children take their
//! parent's marks over ([`super::Region::adopt_nonces`]).

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

/// A client's mark on one increment or append: HBase's nonce group (one
/// per client connection) and nonce (one per operation, the same in its
/// retries).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Nonce {
    /// The nonce group (HBase's client id; 0 when none was sent).
    pub group: u64,
    /// The nonce, never 0.
    pub nonce: u64,
}

impl Nonce {
    /// A mark, or None for HBase's NO_NONCE (a nonce of 0: not marked).
    pub fn new(group: u64, nonce: u64) -> Option<Nonce> {
        (nonce != 0).then_some(Nonce { group, nonce })
    }
}

/// How long and how many marks a region remembers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonceOptions {
    /// A mark is forgotten this long after its operation (default 30
    /// minutes, as HBase's `hbase.server.hashNonce.gracePeriod`; it
    /// should exceed the client's operation timeout, 20 minutes by
    /// default). Zero: no marks are kept.
    pub window: Duration,
    /// At most this many marks per region (default 100,000): the oldest
    /// is forgotten first. Zero: no marks are kept.
    pub max_entries: usize,
}

impl Default for NonceOptions {
    fn default() -> Self {
        NonceOptions {
            window: Duration::from_secs(30 * 60),
            max_entries: 100_000,
        }
    }
}

/// A region's remembered marks.
#[derive(Debug)]
pub(crate) struct Nonces {
    options: NonceOptions,
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    seen: HashSet<Nonce>,
    /// The marks in the order they were remembered, with when (ms): the
    /// oldest leaves first, by age or by count.
    order: VecDeque<(Nonce, i64)>,
}

impl Table {
    fn forget_before(&mut self, cutoff: i64) {
        while let Some(&(n, at)) = self.order.front() {
            if at >= cutoff {
                break;
            }
            self.order.pop_front();
            self.seen.remove(&n);
        }
        // Give memory back after a burst: the tables keep their peak
        // capacity otherwise.
        let len = self.order.len();
        if self.order.capacity() > 1024 && len < self.order.capacity() / 4 {
            self.order.shrink_to(len * 2);
            self.seen.shrink_to(len * 2);
        }
    }
}

impl Nonces {
    pub(crate) fn new(options: NonceOptions) -> Nonces {
        Nonces {
            options,
            table: Mutex::new(Table::default()),
        }
    }

    fn window_ms(&self) -> i64 {
        i64::try_from(self.options.window.as_millis()).unwrap_or(i64::MAX)
    }

    fn enabled(&self) -> bool {
        self.options.max_entries > 0 && !self.options.window.is_zero()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True if `nonce` marks an operation applied within the window.
    pub(crate) fn seen(&self, nonce: Nonce, now_ms: i64) -> bool {
        if !self.enabled() {
            return false;
        }
        let mut t = self.lock();
        t.forget_before(now_ms.saturating_sub(self.window_ms()));
        t.seen.contains(&nonce)
    }

    /// Remembers `nonce` as applied at `at_ms`.
    pub(crate) fn record(&self, nonce: Nonce, at_ms: i64) {
        if !self.enabled() {
            return;
        }
        let mut t = self.lock();
        t.forget_before(at_ms.saturating_sub(self.window_ms()));
        if !t.seen.insert(nonce) {
            return;
        }
        t.order.push_back((nonce, at_ms));
        while t.order.len() > self.options.max_entries {
            if let Some((old, _)) = t.order.pop_front() {
                t.seen.remove(&old);
            }
        }
    }

    /// Remembers a mark read from a replayed WAL entry written at
    /// `written_ms`, as HBase does: unless the entry is older than 1.5
    /// windows (slack for clocks that differ between servers), the mark
    /// is remembered as of now, for a whole window.
    pub(crate) fn record_replayed(&self, nonce: Nonce, written_ms: i64, now_ms: i64) {
        let slack = self.window_ms().saturating_add(self.window_ms() / 2);
        if now_ms > written_ms.saturating_add(slack) {
            return;
        }
        self.record(nonce, now_ms);
    }

    /// The marks remembered, oldest first, with when.
    pub(crate) fn entries(&self) -> Vec<(Nonce, i64)> {
        self.lock().order.iter().copied().collect()
    }

    /// How many marks are remembered.
    pub(crate) fn len(&self) -> usize {
        self.lock().order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: u64) -> Nonce {
        Nonce::new(7, i).unwrap()
    }

    #[test]
    fn zero_is_no_nonce() {
        assert_eq!(Nonce::new(1, 0), None);
        assert_eq!(Nonce::new(0, 5), Some(Nonce { group: 0, nonce: 5 }));
    }

    #[test]
    fn a_mark_is_seen_within_the_window_and_forgotten_after() {
        let t = Nonces::new(NonceOptions {
            window: Duration::from_secs(60),
            max_entries: 10,
        });
        assert!(!t.seen(n(1), 1_000));
        t.record(n(1), 1_000);
        assert!(t.seen(n(1), 1_000));
        assert!(t.seen(n(1), 60_999));
        assert!(!t.seen(Nonce::new(8, 1).unwrap(), 2_000), "another group");
        assert!(!t.seen(n(1), 61_001));
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn the_oldest_mark_leaves_first_when_full() {
        let t = Nonces::new(NonceOptions {
            window: Duration::from_secs(60),
            max_entries: 3,
        });
        for i in 1..=4 {
            t.record(n(i), 1_000 + i as i64);
        }
        assert_eq!(t.len(), 3);
        assert!(!t.seen(n(1), 2_000));
        for i in 2..=4 {
            assert!(t.seen(n(i), 2_000));
        }
        // Recording a mark twice keeps one entry.
        t.record(n(4), 2_000);
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn replayed_marks_older_than_one_and_a_half_windows_are_skipped() {
        let t = Nonces::new(NonceOptions {
            window: Duration::from_secs(100),
            max_entries: 10,
        });
        t.record_replayed(n(1), 0, 150_001);
        t.record_replayed(n(2), 0, 149_000);
        assert!(!t.seen(n(1), 150_001));
        // Remembered as of the replay, for a whole window.
        assert!(t.seen(n(2), 249_000));
        assert!(!t.seen(n(2), 249_001));
    }

    #[test]
    fn disabled_keeps_nothing() {
        for options in [
            NonceOptions {
                window: Duration::ZERO,
                max_entries: 10,
            },
            NonceOptions {
                window: Duration::from_secs(1),
                max_entries: 0,
            },
        ] {
            let t = Nonces::new(options);
            t.record(n(1), 0);
            assert!(!t.seen(n(1), 0));
        }
    }

    #[test]
    fn memory_is_given_back_after_a_burst() {
        let t = Nonces::new(NonceOptions {
            window: Duration::from_secs(1),
            max_entries: 1_000_000,
        });
        for i in 1..=100_000 {
            t.record(n(i), 0);
        }
        t.record(n(0xffff_ffff), 10_000);
        let table = t.lock();
        assert_eq!(table.order.len(), 1);
        assert!(table.order.capacity() < 1024, "{}", table.order.capacity());
    }
}
