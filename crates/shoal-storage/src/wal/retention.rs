//! Which segments may be deleted: the per-segment high-water marks of every region, and
//! the flushed sequence number of every region.
//!
//! Invariant: a segment leaves the table (and may be deleted) only when, for every region
//! with an entry in it, that region's flushed seq is at least the segment's max seq for
//! it. The segment being written (`current`) is never a candidate. A region that was never
//! marked flushed pins every segment it appears in. Pure logic, no I/O.

use std::collections::{BTreeMap, HashMap};

/// Max seq per region of one segment.
pub(crate) type RegionMaxes = HashMap<String, u64>;

#[derive(Debug, Default)]
pub(crate) struct SegmentTable {
    /// Closed segments, by number.
    sealed: BTreeMap<u64, RegionMaxes>,
    /// The segment being appended to (local backend only).
    current: Option<(u64, RegionMaxes)>,
    /// Flushed seq per region.
    flushed: HashMap<String, u64>,
}

pub(crate) fn note(maxes: &mut RegionMaxes, region: &str, seq: u64) {
    match maxes.get_mut(region) {
        Some(m) => *m = (*m).max(seq),
        None => {
            maxes.insert(region.to_owned(), seq);
        }
    }
}

impl SegmentTable {
    pub fn add_sealed(&mut self, segment: u64, maxes: RegionMaxes) {
        self.sealed.insert(segment, maxes);
    }

    /// Makes `segment` the one being written, sealing the previous current one.
    pub fn start_current(&mut self, segment: u64) {
        if let Some((old, maxes)) = self.current.replace((segment, RegionMaxes::new())) {
            self.sealed.insert(old, maxes);
        }
    }

    /// Seals the current segment (at close).
    pub fn seal_current(&mut self) {
        if let Some((old, maxes)) = self.current.take() {
            self.sealed.insert(old, maxes);
        }
    }

    /// Records an entry written to the current segment.
    pub fn note_current(&mut self, region: &str, seq: u64) {
        if let Some((_, maxes)) = &mut self.current {
            note(maxes, region, seq);
        }
    }

    /// Segments that exist (sealed and current).
    pub fn live(&self) -> u64 {
        self.sealed.len() as u64 + u64::from(self.current.is_some())
    }

    /// Raises `region`'s flushed seq to `seq` and removes and returns every sealed
    /// segment now fully covered, oldest first.
    pub fn mark_flushed(&mut self, region: &str, seq: u64) -> Vec<(u64, RegionMaxes)> {
        note(&mut self.flushed, region, seq);
        let flushed = &self.flushed;
        let covered: Vec<u64> = self
            .sealed
            .iter()
            .filter(|(_, maxes)| {
                maxes
                    .iter()
                    .all(|(r, max)| flushed.get(r).is_some_and(|f| f >= max))
            })
            .map(|(&segment, _)| segment)
            .collect();
        covered
            .into_iter()
            .filter_map(|s| self.sealed.remove(&s).map(|m| (s, m)))
            .collect()
    }

    /// Puts back segments whose deletion failed, so a later call retries them.
    pub fn restore(&mut self, segments: Vec<(u64, RegionMaxes)>) {
        self.sealed.extend(segments);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maxes(pairs: &[(&str, u64)]) -> RegionMaxes {
        pairs.iter().map(|(r, s)| (r.to_string(), *s)).collect()
    }

    #[test]
    fn deletes_only_fully_covered_sealed_segments() {
        let mut t = SegmentTable::default();
        t.add_sealed(1, maxes(&[("a", 10), ("b", 5)]));
        t.add_sealed(2, maxes(&[("a", 20)]));
        t.add_sealed(3, maxes(&[]));
        t.start_current(4);
        t.note_current("a", 30);
        assert_eq!(t.live(), 4);
        let gone: Vec<u64> = t
            .mark_flushed("a", 20)
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(gone, vec![2, 3], "1 is pinned by b; 4 is current");
        assert!(
            t.mark_flushed("a", 100).is_empty(),
            "current is never deleted"
        );
        let gone: Vec<u64> = t.mark_flushed("b", 5).into_iter().map(|(s, _)| s).collect();
        assert_eq!(gone, vec![1]);
        t.start_current(5);
        let gone: Vec<u64> = t
            .mark_flushed("a", 25)
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(gone, vec![4], "a lower mark never lowers the flushed seq");
        assert_eq!(t.live(), 1);
    }
}
