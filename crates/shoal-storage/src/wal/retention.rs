//! Which segments may be deleted: the per-segment high-water marks of every region, and
//! the flushed sequence number of every region.
//!
//! Invariant: a segment leaves the table (and may be deleted) only when, for every region
//! with an entry in it, that region's flushed seq is at least the segment's max seq for
//! it. The segment being written (`current`) is never a candidate. A region that was never
//! marked flushed pins every segment it appears in. Pure logic, no I/O.
//!
//! It also knows each live segment's record bytes: what a replay of this log would read,
//! and which regions to flush so that the oldest segments can go
//! ([`SegmentTable::regions_to_release`], `wal.max_unflushed`).

use std::collections::{BTreeMap, HashMap};

/// Max seq per region of one segment.
pub(crate) type RegionMaxes = HashMap<String, u64>;

#[derive(Debug, Default)]
pub(crate) struct SegmentTable {
    /// Closed segments, by number, with their record bytes.
    sealed: BTreeMap<u64, (RegionMaxes, u64)>,
    /// The segment being appended to (local backend only), with its record bytes.
    current: Option<(u64, RegionMaxes, u64)>,
    /// Flushed seq per region.
    flushed: HashMap<String, u64>,
    /// Record bytes of every live segment (sealed and current).
    live_bytes: u64,
}

/// A sealed segment taken out of the table: its number, per-region max seqs and bytes.
pub(crate) type Retired = (u64, (RegionMaxes, u64));

pub(crate) fn note(maxes: &mut RegionMaxes, region: &str, seq: u64) {
    match maxes.get_mut(region) {
        Some(m) => *m = (*m).max(seq),
        None => {
            maxes.insert(region.to_owned(), seq);
        }
    }
}

impl SegmentTable {
    /// Adds a closed segment holding `bytes` of records.
    pub fn add_sealed(&mut self, segment: u64, maxes: RegionMaxes, bytes: u64) {
        self.live_bytes += bytes;
        if let Some((_, old)) = self.sealed.insert(segment, (maxes, bytes)) {
            self.live_bytes -= old;
        }
    }

    /// Makes `segment` the one being written, sealing the previous current one.
    pub fn start_current(&mut self, segment: u64) {
        if let Some((old, maxes, bytes)) = self.current.replace((segment, RegionMaxes::new(), 0)) {
            self.sealed.insert(old, (maxes, bytes));
        }
    }

    /// Seals the current segment (at close).
    pub fn seal_current(&mut self) {
        if let Some((old, maxes, bytes)) = self.current.take() {
            self.sealed.insert(old, (maxes, bytes));
        }
    }

    /// Records an entry (or several of one region, `seq` the highest) of `bytes`
    /// record bytes written to the current segment.
    pub fn note_current(&mut self, region: &str, seq: u64, bytes: u64) {
        if let Some((_, maxes, size)) = &mut self.current {
            note(maxes, region, seq);
            *size += bytes;
            self.live_bytes += bytes;
        }
    }

    /// Record bytes of every live segment: what a replay of this log reads.
    pub fn live_bytes(&self) -> u64 {
        self.live_bytes
    }

    /// The regions to flush so that the log holds at most `max_bytes` again:
    /// empty while it does. Otherwise every region with an unflushed entry in
    /// the oldest sealed segments, taken oldest first until they hold the
    /// excess (HBase's `maxlogs`: flushing them lets those segments go). In
    /// the order found, each once. The current segment is never counted as
    /// freed (it cannot go before it is sealed).
    pub fn regions_to_release(&self, max_bytes: u64) -> Vec<String> {
        let mut excess = self.live_bytes.saturating_sub(max_bytes);
        let mut out: Vec<String> = Vec::new();
        for (maxes, bytes) in self.sealed.values() {
            if excess == 0 {
                break;
            }
            let mut pinning: Vec<&String> = maxes
                .iter()
                .filter(|(r, max)| self.flushed.get(*r).is_none_or(|f| f < *max))
                .map(|(r, _)| r)
                .collect();
            pinning.sort();
            for r in pinning {
                if !out.contains(r) {
                    out.push(r.clone());
                }
            }
            excess = excess.saturating_sub(*bytes);
        }
        out
    }

    /// The lowest sealed segment still live (object backend: the lowest that may
    /// hold an unflushed entry, among those written).
    pub fn first_sealed(&self) -> Option<u64> {
        self.sealed.keys().next().copied()
    }

    /// Segments that exist (sealed and current).
    pub fn live(&self) -> u64 {
        self.sealed.len() as u64 + u64::from(self.current.is_some())
    }

    /// Raises `region`'s flushed seq to `seq` and removes and returns every sealed
    /// segment now fully covered, oldest first.
    pub fn mark_flushed(&mut self, region: &str, seq: u64) -> Vec<Retired> {
        note(&mut self.flushed, region, seq);
        let flushed = &self.flushed;
        let covered: Vec<u64> = self
            .sealed
            .iter()
            .filter(|(_, (maxes, _))| {
                maxes
                    .iter()
                    .all(|(r, max)| flushed.get(r).is_some_and(|f| f >= max))
            })
            .map(|(&segment, _)| segment)
            .collect();
        let gone: Vec<Retired> = covered
            .into_iter()
            .filter_map(|s| self.sealed.remove(&s).map(|m| (s, m)))
            .collect();
        self.live_bytes -= gone.iter().map(|(_, (_, b))| b).sum::<u64>();
        gone
    }

    /// Puts back segments whose deletion failed, so a later call retries them.
    pub fn restore(&mut self, segments: Vec<Retired>) {
        for (segment, (maxes, bytes)) in segments {
            self.add_sealed(segment, maxes, bytes);
        }
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
        t.add_sealed(1, maxes(&[("a", 10), ("b", 5)]), 100);
        t.add_sealed(2, maxes(&[("a", 20)]), 100);
        t.add_sealed(3, maxes(&[]), 0);
        t.start_current(4);
        t.note_current("a", 30, 100);
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

    #[test]
    fn counts_live_bytes_and_names_the_regions_pinning_the_oldest() {
        let mut t = SegmentTable::default();
        t.add_sealed(1, maxes(&[("a", 10), ("b", 5)]), 100);
        t.add_sealed(2, maxes(&[("c", 3), ("a", 20)]), 200);
        t.add_sealed(3, maxes(&[("d", 1)]), 300);
        t.start_current(4);
        t.note_current("e", 7, 50);
        assert_eq!(t.live_bytes(), 650);
        assert!(t.regions_to_release(650).is_empty(), "within the bound");
        assert_eq!(
            t.regions_to_release(600),
            vec!["a", "b"],
            "segment 1 covers 50"
        );
        assert_eq!(
            t.regions_to_release(400),
            vec!["a", "b", "c"],
            "250 over: segments 1 and 2"
        );
        assert_eq!(
            t.regions_to_release(0),
            vec!["a", "b", "c", "d"],
            "the current segment cannot be freed by a flush"
        );
        // b flushed: it no longer pins segment 1 (a still does).
        assert!(t.mark_flushed("b", 5).is_empty());
        assert_eq!(t.regions_to_release(600), vec!["a"]);
        // a flushed: segment 1 goes; segment 2 waits for c.
        assert!(t.mark_flushed("a", 20).iter().map(|(s, _)| *s).eq([1]));
        assert_eq!(t.live_bytes(), 550);
        assert_eq!(t.regions_to_release(400), vec!["c"]);
        assert_eq!(t.regions_to_release(300), vec!["c", "d"]);
        let gone = t.mark_flushed("c", 3);
        assert_eq!(t.live_bytes(), 350);
        t.restore(gone);
        assert_eq!(t.live_bytes(), 550, "a failed delete counts again");
    }
}
