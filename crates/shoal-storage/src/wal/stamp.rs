//! Segment-object numbers and times ([`Stamper`]): each object's number and its
//! own ULID (whose timestamp is the object's time) are taken together under one
//! small mutex, and so are the history's marks.
//!
//! Invariant: times never go backwards in number order. A stamp's time is the
//! wall clock, raised to the last time handed out if the clock stepped back; a
//! mark `(n, t)` is the next number and such a time. So every object numbered
//! below `n` has a time `<= t`, and every object numbered `n` or above has a time
//! `>= t`: a reader of the history can start at a mark.
//!
//! The stamper also knows which numbers are taken but not yet written or given up
//! (`in_flight`): what the history's `flushed_below` must not pass.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard};

/// Milliseconds since the Unix epoch by the wall clock (0 before it).
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[derive(Debug, Default)]
struct StampState {
    /// The number of the next segment object.
    next: u64,
    /// The latest time handed out (stamp or mark).
    last_ms: u64,
    /// Numbers taken whose object is not yet known written or failed.
    in_flight: BTreeSet<u64>,
}

/// Numbers and times of segment objects (object backend).
#[derive(Debug, Default)]
pub(crate) struct Stamper {
    state: Mutex<StampState>,
}

/// A number taken by [`Stamper::stamp_object`]: in flight until dropped.
/// Dropped once its object is known to the retention table, or failed (also when
/// the future writing it is cancelled).
pub(crate) struct InFlight<'a> {
    stamper: &'a Stamper,
    /// The segment number.
    pub number: u64,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.stamper.done(self.number);
    }
}

impl Stamper {
    fn lock(&self) -> MutexGuard<'_, StampState> {
        // Every statement leaves the state consistent; a panic elsewhere cannot
        // leave it half-changed.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts numbering at `next`, with times no earlier than `floor_ms` (the
    /// newest time the previous run is known to have used).
    pub fn start(&self, next: u64, floor_ms: u64) {
        let mut s = self.lock();
        s.next = next;
        s.last_ms = s.last_ms.max(floor_ms);
    }

    /// A time for now, never before one already handed out.
    fn tick(s: &mut StampState) -> u64 {
        s.last_ms = s.last_ms.max(now_ms());
        s.last_ms
    }

    /// The next segment number and a fresh ULID carrying its time, taken
    /// together; the number is in flight until [`Stamper::done`].
    pub fn stamp(&self) -> (u64, u128) {
        let mut s = self.lock();
        let ms = Self::tick(&mut s);
        let number = s.next;
        s.next += 1;
        s.in_flight.insert(number);
        let random = ulid::Ulid::new().random();
        (number, ulid::Ulid::from_parts(ms, random).0)
    }

    /// [`Stamper::stamp`], with a guard that ends the number's flight.
    pub fn stamp_object(&self) -> (InFlight<'_>, u128) {
        let (number, ulid) = self.stamp();
        (
            InFlight {
                stamper: self,
                number,
            },
            ulid,
        )
    }

    /// The number's object is written (and in the retention table) or failed.
    pub fn done(&self, number: u64) {
        self.lock().in_flight.remove(&number);
    }

    /// A history mark: the next number and a time, taken together.
    pub fn mark(&self) -> (u64, u64) {
        let mut s = self.lock();
        let ms = Self::tick(&mut s);
        (s.next, ms)
    }

    /// The lowest number that may still be written: the lowest in flight, else
    /// the next.
    pub fn lowest_unwritten(&self) -> u64 {
        let s = self.lock();
        s.in_flight.first().copied().unwrap_or(s.next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_and_marks_are_ordered_and_in_flight_numbers_hold_the_floor() {
        let s = Stamper::default();
        let future = now_ms() + 60_000;
        s.start(5, future);
        let (a, ua) = s.stamp();
        let (b, ub) = s.stamp();
        assert_eq!((a, b), (5, 6));
        let (ta, tb) = (ulid::Ulid(ua).timestamp_ms(), ulid::Ulid(ub).timestamp_ms());
        assert!(
            ta >= future && tb >= ta,
            "a clock behind the floor is raised"
        );
        assert_ne!(ua, ub);
        assert_eq!(s.lowest_unwritten(), 5);
        let (n, t) = s.mark();
        assert_eq!(n, 7);
        assert!(t >= tb);
        s.done(5);
        assert_eq!(s.lowest_unwritten(), 6);
        {
            let (guard, _) = s.stamp_object();
            assert_eq!(guard.number, 7);
            s.done(6);
            assert_eq!(s.lowest_unwritten(), 7);
        }
        assert_eq!(s.lowest_unwritten(), 8, "a dropped guard ends the flight");
    }
}
