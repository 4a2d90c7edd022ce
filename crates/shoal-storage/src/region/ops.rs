//! The requests a region serves and what it answers: HBase's client operations
//! as plain data.

use crate::cell::Cell;
use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet};

/// One change within a row mutation. A `None` timestamp means "now" (the
/// server clock when the mutation is applied); for [`RowOp::DeleteVersion`] it
/// means "the newest version", as in HBase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowOp {
    /// Writes a value.
    Put {
        /// Column family.
        family: Bytes,
        /// Column qualifier.
        qualifier: Bytes,
        /// Version timestamp.
        timestamp: Option<i64>,
        /// The value.
        value: Bytes,
    },
    /// Deletes one version of a column (the newest if no timestamp is given).
    DeleteVersion {
        /// Column family.
        family: Bytes,
        /// Column qualifier.
        qualifier: Bytes,
        /// Version to delete.
        timestamp: Option<i64>,
    },
    /// Deletes all versions of a column at or below the timestamp.
    DeleteColumn {
        /// Column family.
        family: Bytes,
        /// Column qualifier.
        qualifier: Bytes,
        /// Upper bound.
        timestamp: Option<i64>,
    },
    /// Deletes all columns of a family at or below the timestamp.
    DeleteFamily {
        /// Column family.
        family: Bytes,
        /// Upper bound.
        timestamp: Option<i64>,
    },
    /// Deletes all columns of a family at exactly the timestamp.
    DeleteFamilyVersion {
        /// Column family.
        family: Bytes,
        /// The version.
        timestamp: i64,
    },
    /// Deletes every family of the row at or below the timestamp.
    DeleteRow {
        /// Upper bound.
        timestamp: Option<i64>,
    },
}

/// Changes to one row, applied atomically: readers see all of them or none.
/// A Put, a Delete and HBase's RowMutations are all a `RowMutation`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowMutation {
    /// The row.
    pub row: Bytes,
    /// The changes, applied in order.
    pub ops: Vec<RowOp>,
}

impl RowMutation {
    /// A mutation of `row` with no changes yet.
    pub fn new(row: impl Into<Bytes>) -> RowMutation {
        RowMutation {
            row: row.into(),
            ops: Vec::new(),
        }
    }

    /// Adds a put of `family:qualifier` at the server's current time.
    pub fn put(
        mut self,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        value: impl Into<Bytes>,
    ) -> Self {
        self.ops.push(RowOp::Put {
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp: None,
            value: value.into(),
        });
        self
    }

    /// Adds a put at an explicit timestamp.
    pub fn put_at(
        mut self,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        timestamp: i64,
        value: impl Into<Bytes>,
    ) -> Self {
        self.ops.push(RowOp::Put {
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp: Some(timestamp),
            value: value.into(),
        });
        self
    }

    /// Adds an arbitrary change.
    pub fn op(mut self, op: RowOp) -> Self {
        self.ops.push(op);
        self
    }
}

/// Which columns a read returns: every family, or some families with all or
/// some of their qualifiers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns {
    /// Empty: all families. Otherwise family → `None` (all qualifiers) or the
    /// qualifiers wanted.
    pub families: BTreeMap<Bytes, Option<BTreeSet<Bytes>>>,
}

impl Columns {
    /// Every column of every family.
    pub fn all() -> Columns {
        Columns::default()
    }

    /// Adds a whole family.
    pub fn family(mut self, family: impl Into<Bytes>) -> Columns {
        self.families.insert(family.into(), None);
        self
    }

    /// Adds one column.
    pub fn column(mut self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>) -> Columns {
        let entry = self
            .families
            .entry(family.into())
            .or_insert_with(|| Some(BTreeSet::new()));
        if let Some(set) = entry {
            set.insert(qualifier.into());
        }
        self
    }

    /// True if the column is among these.
    pub fn wants(&self, family: &[u8], qualifier: &[u8]) -> bool {
        if self.families.is_empty() {
            return true;
        }
        match self.families.get(family) {
            None => false,
            Some(None) => true,
            Some(Some(set)) => set.contains(qualifier),
        }
    }
}

/// A time range `[min, max)` in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    /// Inclusive lower bound.
    pub min: i64,
    /// Exclusive upper bound.
    pub max: i64,
}

impl TimeRange {
    /// All time.
    pub const ALL: TimeRange = TimeRange {
        min: i64::MIN,
        max: i64::MAX,
    };
}

impl Default for TimeRange {
    fn default() -> Self {
        TimeRange::ALL
    }
}

/// HBase's per-family read options: at most `limit` cells of each family of
/// a row after skipping its first `offset` (`setMaxResultsPerColumnFamily`,
/// `setRowOffsetPerColumnFamily`: counted over the cells the read would
/// answer, filter and versions applied), and time ranges that replace the
/// read's own for some families (`setColumnFamilyTimeRange`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FamilyOptions {
    /// Cells answered per family and row; `None`: all.
    pub limit: Option<u32>,
    /// Cells passed over per family and row before answering.
    pub offset: u32,
    /// Time ranges by family, replacing the read's time range there.
    pub time_ranges: BTreeMap<Bytes, TimeRange>,
}

impl FamilyOptions {
    /// True when no option is set (the read answers as without them).
    pub fn is_empty(&self) -> bool {
        self.limit.is_none() && self.offset == 0 && self.time_ranges.is_empty()
    }

    /// The time range a read of `family` uses.
    pub fn time_range(&self, family: &[u8], read: TimeRange) -> TimeRange {
        self.time_ranges.get(family).copied().unwrap_or(read)
    }
}

/// Reads one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Get {
    /// The row.
    pub row: Bytes,
    /// Columns to return.
    pub columns: Columns,
    /// Versions to consider.
    pub time_range: TimeRange,
    /// Versions per column to return (capped by the family's max versions).
    pub max_versions: u32,
    /// HBase's filter, run in the region as for a scan of the one row.
    pub filter: Option<std::sync::Arc<super::filter::Filter>>,
    /// Per-family limit, offset and time ranges.
    pub per_family: FamilyOptions,
}

impl Get {
    /// The newest version of every column of `row`.
    pub fn new(row: impl Into<Bytes>) -> Get {
        Get {
            row: row.into(),
            columns: Columns::all(),
            time_range: TimeRange::ALL,
            max_versions: 1,
            filter: None,
            per_family: FamilyOptions::default(),
        }
    }
}

/// Reads a range of rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// First row (inclusive); empty = start of the region.
    pub start_row: Bytes,
    /// Row to stop before (exclusive); empty = end of the region.
    pub stop_row: Bytes,
    /// Columns to return.
    pub columns: Columns,
    /// Versions to consider.
    pub time_range: TimeRange,
    /// Versions per column to return.
    pub max_versions: u32,
    /// Most rows to return; 0 = no limit.
    pub limit: usize,
    /// Most cells per returned chunk; 0 = whole rows. A row wider than this
    /// comes back as several consecutive [`RowResult`]s (HBase's scan batch).
    pub batch: usize,
    /// Rows in descending order.
    pub reverse: bool,
    /// Let the data blocks this scan reads enter the block cache (default
    /// true; HBase's `setCacheBlocks`). Families can also refuse scan fills.
    pub cache_blocks: bool,
    /// Per-family limit, offset and time ranges.
    pub per_family: FamilyOptions,
    /// HBase's raw scan: delete markers and the cells they mask are
    /// answered too (what flushes and compactions have not dropped yet).
    pub raw: bool,
}

impl Scan {
    /// Every row, newest version of each column.
    pub fn all() -> Scan {
        Scan {
            start_row: Bytes::new(),
            stop_row: Bytes::new(),
            columns: Columns::all(),
            time_range: TimeRange::ALL,
            max_versions: 1,
            limit: 0,
            batch: 0,
            reverse: false,
            cache_blocks: true,
            per_family: FamilyOptions::default(),
            raw: false,
        }
    }

    /// Rows in `[start, stop)`.
    pub fn range(start: impl Into<Bytes>, stop: impl Into<Bytes>) -> Scan {
        Scan {
            start_row: start.into(),
            stop_row: stop.into(),
            ..Scan::all()
        }
    }

    /// Rows starting with `prefix`.
    pub fn prefix(prefix: impl Into<Bytes>) -> Scan {
        let prefix: Bytes = prefix.into();
        let stop = prefix_successor(&prefix);
        Scan {
            start_row: prefix,
            stop_row: stop,
            ..Scan::all()
        }
    }
}

/// The smallest row greater than every row starting with `prefix` (empty if
/// none exists, i.e. the prefix is all 0xff).
pub fn prefix_successor(prefix: &[u8]) -> Bytes {
    let mut out = prefix.to_vec();
    while let Some(last) = out.pop() {
        if last < 0xff {
            out.push(last + 1);
            return Bytes::from(out);
        }
    }
    Bytes::new()
}

/// Cells of one row (or one chunk of a wide row), in cell order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowResult {
    /// The row.
    pub row: Bytes,
    /// Its visible cells: family ↑, qualifier ↑, timestamp ↓.
    pub cells: Vec<Cell>,
}

impl RowResult {
    /// The newest value of `family:qualifier`, if returned.
    pub fn value(&self, family: &[u8], qualifier: &[u8]) -> Option<&Bytes> {
        self.cells
            .iter()
            .find(|c| &c.family[..] == family && &c.qualifier[..] == qualifier)
            .map(|c| &c.value)
    }
}

/// How CheckAndMutate compares the column's current value (its newest
/// version) with the given one, with HBase's rules. The check reads
/// "current OP given": `Less` passes when the current value sorts before the
/// given value (bytewise). HBase reads it the other way round ("given OP
/// current"); clients porting HBase code swap Less and Greater.
///
/// As in HBase: with an empty given value the check asks about emptiness —
/// a missing column passes every operator but `NotEqual`, and a present one
/// passes `NotEqual` when its value is non-empty and the others when it is
/// empty; with a non-empty given value a missing column fails every
/// operator, `NotEqual` included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// current == given.
    Equal,
    /// current != given (a missing column fails unless given is empty).
    NotEqual,
    /// current < given.
    Less,
    /// current ≤ given.
    LessOrEqual,
    /// current > given.
    Greater,
    /// current ≥ given.
    GreaterOrEqual,
    /// The column holds a non-empty value (HBase's NOT_EQUAL to nothing;
    /// the given value is ignored).
    Exists,
    /// The column is missing or empty (HBase's `ifNotExists`, EQUAL to
    /// nothing; the given value is ignored).
    Missing,
    /// HBase's NO_OP: with an empty given value, as EQUAL; with a
    /// non-empty one it fails on a missing column and cannot compare an
    /// existing one (the check is refused: `Region::check_and_mutate`).
    NoOp,
}

impl CompareOp {
    /// Applies the comparison to the column's current value.
    pub fn passes(self, current: Option<&[u8]>, given: &[u8]) -> bool {
        let (op, given) = match self {
            CompareOp::Exists => (CompareOp::NotEqual, &[][..]),
            CompareOp::Missing => (CompareOp::Equal, &[][..]),
            CompareOp::NoOp if given.is_empty() => (CompareOp::Equal, given),
            op => (op, given),
        };
        match (current, given.is_empty()) {
            (None, true) => op != CompareOp::NotEqual,
            (Some(c), true) => c.is_empty() == (op != CompareOp::NotEqual),
            (None, false) => false,
            (Some(c), false) => match op {
                CompareOp::Equal => c == given,
                CompareOp::NotEqual => c != given,
                CompareOp::Less => c < given,
                CompareOp::LessOrEqual => c <= given,
                CompareOp::Greater => c > given,
                CompareOp::GreaterOrEqual => c >= given,
                CompareOp::Exists | CompareOp::Missing | CompareOp::NoOp => false,
            },
        }
    }
}

/// The test of a conditional change: a column's newest value (within a
/// time range) against a given one, or (HBase's `ifMatches(Filter)`)
/// whether the row read through a filter answers any cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// Family of the checked column.
    pub family: Bytes,
    /// Qualifier of the checked column.
    pub qualifier: Bytes,
    /// The comparison.
    pub op: CompareOp,
    /// The value compared against.
    pub value: Bytes,
    /// The versions the check reads (HBase's `Condition.time_range`).
    pub time_range: TimeRange,
    /// Instead of the column: the whole row read through this filter (in
    /// `time_range`) passes when it answers a cell.
    pub filter: Option<std::sync::Arc<super::filter::Filter>>,
}

/// A conditional row mutation.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckAndMutate {
    /// Family of the checked column.
    pub family: Bytes,
    /// Qualifier of the checked column.
    pub qualifier: Bytes,
    /// The comparison.
    pub op: CompareOp,
    /// The value compared against.
    pub value: Bytes,
    /// The versions the check reads.
    pub time_range: TimeRange,
    /// A filter condition instead of the column (see [`Condition`]).
    pub filter: Option<std::sync::Arc<super::filter::Filter>>,
    /// Applied if the check passes; its row is the checked row.
    pub mutation: RowMutation,
}

/// One change of an atomic row mutation that may hold counters (HBase's
/// RowMutations, which since 2.4 may carry Increments and Appends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowChange {
    /// A put or delete.
    Op(RowOp),
    /// Adds to 8-byte counters: (family, qualifier, delta).
    Increment(Vec<(Bytes, Bytes, i64)>),
    /// Appends to values: (family, qualifier, suffix).
    Append(Vec<(Bytes, Bytes, Bytes)>),
}

/// Changes to one row applied together, counters among them: every
/// increment and append reads the row as it was before the changes (as in
/// HBase's atomic batch), and all are written as one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowChanges {
    /// The row.
    pub row: Bytes,
    /// The changes, in order.
    pub changes: Vec<RowChange>,
}

impl RowChanges {
    /// True if an increment or append is among the changes.
    pub fn has_counters(&self) -> bool {
        self.changes.iter().any(|c| !matches!(c, RowChange::Op(_)))
    }
}

impl CheckAndMutate {
    /// The check alone.
    pub fn condition(&self) -> Condition {
        Condition {
            family: self.family.clone(),
            qualifier: self.qualifier.clone(),
            op: self.op,
            value: self.value.clone(),
            time_range: self.time_range,
            filter: self.filter.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_successor_handles_ff() {
        assert_eq!(&prefix_successor(b"ab")[..], b"ac");
        assert_eq!(&prefix_successor(b"a\xff")[..], b"b");
        assert!(prefix_successor(b"\xff\xff").is_empty());
    }

    #[test]
    fn compare_ops() {
        assert!(CompareOp::Less.passes(Some(b"a"), b"b"));
        assert!(!CompareOp::Less.passes(None, b"b"));
        // HBase: a non-empty operand fails on a missing column, whatever
        // the operator.
        assert!(!CompareOp::NotEqual.passes(None, b"b"));
        assert!(CompareOp::NotEqual.passes(Some(b"a"), b"b"));
        // An empty operand asks about emptiness.
        assert!(CompareOp::Missing.passes(None, b""));
        assert!(CompareOp::Missing.passes(Some(b""), b""));
        assert!(!CompareOp::Missing.passes(Some(b"x"), b""));
        assert!(!CompareOp::Exists.passes(Some(b""), b"x"));
        assert!(CompareOp::Exists.passes(Some(b"v"), b"x"));
        assert!(CompareOp::Greater.passes(None, b""));
        assert!(!CompareOp::NotEqual.passes(None, b""));
    }
}
