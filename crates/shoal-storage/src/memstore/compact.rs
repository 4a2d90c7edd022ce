//! In-memory compaction: flattening a skiplist segment and merging several
//! immutable segments into one flat segment, optionally dropping cells no
//! reader can ever see again (the *eager* policy).
//!
//! What eager drops is only what is invisible forever, whatever else the
//! region holds (other segments, files, later writes), so reads answer the
//! same with in-memory compaction on or off:
//! - an older put of the same column and timestamp as a newer put (HBase
//!   hides it: only the highest sequence of a timestamp exists);
//! - a put masked by a delete marker in the merged cells (`DeleteFamily` /
//!   `DeleteColumn` at or after its timestamp, `DeleteFamilyVersion` /
//!   `Delete` at its timestamp). The marker is kept, and it travels with the
//!   put's replacement into the same file, so nothing it masks can resurface.
//!
//! The newer put or the marker must be visible to every reader: its sequence
//! is at most the region's smallest read point. Versions beyond the family's
//! maximum are *not* dropped here: a `Delete` of a newer version would make
//! them visible again.

use super::Segment;
use super::flat::FlatBuilder;
use crate::cell::{CellType, KeyRef};
use bytes::Bytes;
use std::sync::Arc;

/// The policy of a column family's in-memory compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InMemoryCompaction {
    /// Skiplist segments are flushed as they are.
    None,
    /// Full skiplist segments are flattened, and flat segments are merged
    /// when they pile up (default).
    #[default]
    Basic,
    /// As basic, and merges drop cells no reader can see.
    Eager,
}

impl InMemoryCompaction {
    /// The policy's name as in the schema (`NONE`, `BASIC`, `EAGER`).
    pub fn name(self) -> &'static str {
        match self {
            InMemoryCompaction::None => "NONE",
            InMemoryCompaction::Basic => "BASIC",
            InMemoryCompaction::Eager => "EAGER",
        }
    }

    /// Parses a policy name (case-insensitive).
    pub fn parse(s: &str) -> Option<InMemoryCompaction> {
        match s.to_ascii_uppercase().as_str() {
            "NONE" => Some(InMemoryCompaction::None),
            "BASIC" => Some(InMemoryCompaction::Basic),
            "EAGER" => Some(InMemoryCompaction::Eager),
            _ => None,
        }
    }
}

/// What a merge did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Cells read from the inputs.
    pub cells_in: usize,
    /// Cells in the output.
    pub cells_out: usize,
}

/// Merges immutable segments (oldest first) into one flat segment. Identical
/// keys keep one copy; with `eager = Some(smallest_read_point)` cells no
/// reader can see are dropped (see the module doc). Returns `None` if the
/// output would not fit one flat segment.
pub fn merge(segments: &[Arc<Segment>], eager: Option<u64>) -> Option<(Segment, MergeStats)> {
    // Materialize each input's entries once; inputs are small (a few MiB each).
    let mut inputs: Vec<Vec<(Vec<u8>, Bytes)>> = Vec::with_capacity(segments.len());
    let (mut total_cells, mut total_bytes, mut max_seq) = (0usize, 0usize, 0u64);
    // Newest first, so the first input holding a key is the newest copy.
    for s in segments.iter().rev() {
        let mut v = Vec::with_capacity(s.len());
        let _ = s.for_each(|k, val| {
            total_bytes += FlatBuilder::entry_len(k, val);
            v.push((k.to_vec(), val.clone()));
            Ok::<_, ()>(())
        });
        total_cells += v.len();
        max_seq = max_seq.max(s.max_seq());
        inputs.push(v);
    }
    if total_bytes > super::flat::MAX_FLAT_BYTES {
        return None;
    }
    let mut builder = FlatBuilder::with_capacity(total_cells, total_bytes);
    let mut filter = eager.map(EagerFilter::new);
    let mut pos = vec![0usize; inputs.len()];
    let mut stats = MergeStats {
        cells_in: total_cells,
        cells_out: 0,
    };
    loop {
        // Smallest head across inputs (k is small: a linear scan beats a heap).
        let mut best: Option<(usize, KeyRef<'_>)> = None;
        for (i, input) in inputs.iter().enumerate() {
            let Some((k, _)) = input.get(pos[i]) else {
                continue;
            };
            let Ok(key) = KeyRef::decode(k) else {
                pos[i] += 1;
                continue;
            };
            if best.as_ref().is_none_or(|(_, b)| key < *b) {
                best = Some((i, key));
            }
        }
        let Some((i, key)) = best else { break };
        let (k, v) = &inputs[i][pos[i]];
        // Skip identical keys in older inputs.
        for (j, input) in inputs.iter().enumerate() {
            if j == i {
                continue;
            }
            while input
                .get(pos[j])
                .is_some_and(|(kj, _)| KeyRef::decode(kj).is_ok_and(|x| x == key))
            {
                pos[j] += 1;
            }
        }
        let keep = filter.as_mut().is_none_or(|f| f.keep(&key));
        if keep {
            if !builder.push(k, v) {
                return None;
            }
            stats.cells_out += 1;
        }
        pos[i] += 1;
    }
    Some((Segment::from_flat(builder.finish(), max_seq), stats))
}

/// The eager policy's streaming decision over cells in order.
#[derive(Debug)]
struct EagerFilter {
    visible_to_all: u64,
    row_family: Option<(Vec<u8>, Vec<u8>)>,
    family_delete_ts: Option<i64>,
    family_version_deletes: Vec<i64>,
    column: Option<Vec<u8>>,
    column_delete_ts: Option<i64>,
    column_version_deletes: Vec<i64>,
    /// Timestamp of the previous put of the column visible to every reader.
    last_visible_put_ts: Option<i64>,
}

impl EagerFilter {
    fn new(visible_to_all: u64) -> EagerFilter {
        EagerFilter {
            visible_to_all,
            row_family: None,
            family_delete_ts: None,
            family_version_deletes: Vec::new(),
            column: None,
            column_delete_ts: None,
            column_version_deletes: Vec::new(),
            last_visible_put_ts: None,
        }
    }

    fn keep(&mut self, k: &KeyRef<'_>) -> bool {
        let same_family = self
            .row_family
            .as_ref()
            .is_some_and(|(r, f)| r == k.row && f == k.family);
        if !same_family {
            self.row_family = Some((k.row.to_vec(), k.family.to_vec()));
            self.family_delete_ts = None;
            self.family_version_deletes.clear();
            self.column = None;
        }
        if self.column.as_deref() != Some(k.qualifier) {
            self.column = Some(k.qualifier.to_vec());
            self.column_delete_ts = None;
            self.column_version_deletes.clear();
            self.last_visible_put_ts = None;
        }
        let ts = k.timestamp;
        let visible = k.seq <= self.visible_to_all;
        let max = |cur: Option<i64>| Some(cur.map_or(ts, |t| t.max(ts)));
        match k.kind {
            CellType::DeleteFamily if visible => self.family_delete_ts = max(self.family_delete_ts),
            CellType::DeleteFamilyVersion if visible => self.family_version_deletes.push(ts),
            CellType::DeleteColumn if visible => self.column_delete_ts = max(self.column_delete_ts),
            CellType::Delete if visible => self.column_version_deletes.push(ts),
            CellType::Put => {
                let masked = self.family_delete_ts.is_some_and(|t| ts <= t)
                    || self.column_delete_ts.is_some_and(|t| ts <= t)
                    || self.family_version_deletes.contains(&ts)
                    || self.column_version_deletes.contains(&ts)
                    || self.last_visible_put_ts == Some(ts);
                if masked {
                    return false;
                }
                if visible {
                    self.last_visible_put_ts = Some(ts);
                }
            }
            _ => {}
        }
        true
    }
}
