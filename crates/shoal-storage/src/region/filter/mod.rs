//! HBase's filters: what a scan or get asked for (`Filter`, this file),
//! and how they run (`eval.rs`, `lists.rs`): cell by cell inside the region
//! scan, with HBase's own protocol, so every front door — gRPC, Thrift,
//! HBase's native RPC — gets the answer HBase gives. `parse` reads HBase's
//! filter language (the Thrift gateway's and the shell's `FILTER =>`).
//!
//! As in HBase, a filter sees the visible versions of each column (up to
//! the family's max versions) before the scan's own version limit, which
//! counts only the cells it includes; and a filter that is done
//! (`PageFilter` after its rows, `WhileMatchFilter` after a rejection,
//! `PrefixFilter` past its prefix, `InclusiveStopFilter` past its row) ends
//! its region's scan: the scan goes on in the next region with a fresh
//! filter, as HBase's client does.

mod compare;
mod eval;
mod lists;
mod parse;
#[cfg(test)]
mod tests;

pub use compare::{Comparator, CompareOp, JavaRegexFlags, java_regex, java_text_regex};
pub use eval::{Code, FilterState, Hint, Skipping};
pub use parse::{FilterError, parse};

use bytes::Bytes;

/// A filter, as HBase names them.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// `PrefixFilter`: rows whose key starts with this; past them the scan
    /// stops.
    Prefix(Bytes),
    /// `KeyOnlyFilter`: values emptied, or with `value_length` replaced by
    /// their length as 4 big-endian bytes.
    KeyOnly {
        /// Return the value's length instead of nothing.
        value_length: bool,
    },
    /// `FirstKeyOnlyFilter`: only the row's first cell.
    FirstKeyOnly,
    /// `ColumnPrefixFilter`: cells whose qualifier starts with this.
    ColumnPrefix(Bytes),
    /// `MultipleColumnPrefixFilter`: cells whose qualifier starts with any.
    MultipleColumnPrefix(Vec<Bytes>),
    /// `ColumnCountGetFilter`: the cells of the row's first N columns.
    ColumnCountGet(usize),
    /// `PageFilter`: at most N rows from a region scan, then it stops
    /// (per region, as in HBase: a client limits the total).
    Page(u64),
    /// `InclusiveStopFilter`: rows up to and including this one (down to it,
    /// reversed), then the scan stops.
    InclusiveStop(Bytes),
    /// `RowFilter`: rows whose key compares.
    Row(CompareOp, Comparator),
    /// `FamilyFilter`: cells whose family compares.
    Family(CompareOp, Comparator),
    /// `QualifierFilter`: cells whose qualifier compares.
    Qualifier(CompareOp, Comparator),
    /// `ValueFilter`: cells whose value compares.
    Value(CompareOp, Comparator),
    /// `SingleColumnValueFilter` (and, with `exclude`,
    /// `SingleColumnValueExcludeFilter`): rows whose `family:qualifier`
    /// compares — its newest version, or any with `latest_version_only`
    /// off. A row without the column passes unless `filter_if_missing`.
    SingleColumnValue {
        /// The tested column's family.
        family: Bytes,
        /// The tested column's qualifier.
        qualifier: Bytes,
        /// The comparison.
        op: CompareOp,
        /// The operand.
        comparator: Comparator,
        /// Skip rows without the column.
        filter_if_missing: bool,
        /// Test only the newest version.
        latest_version_only: bool,
        /// Leave the tested column out of the answer.
        exclude: bool,
    },
    /// `TimestampsFilter`: cells with one of these timestamps.
    Timestamps {
        /// The timestamps.
        ts: Vec<i64>,
        /// HBase's `canHint`: seek to the next timestamp of the list instead
        /// of skipping the versions between (the versions skipped are then
        /// not counted against the family's limit, as in HBase).
        can_hint: bool,
    },
    /// `RandomRowFilter`: each row kept with this probability.
    RandomRow(f32),
    /// `ColumnRangeFilter`: cells whose qualifier is within the bounds.
    ColumnRange {
        /// Lower bound (None: none).
        min: Option<Bytes>,
        /// The lower bound itself is in.
        min_inclusive: bool,
        /// Upper bound (None: none).
        max: Option<Bytes>,
        /// The upper bound itself is in.
        max_inclusive: bool,
    },
    /// `WHILE` / `WhileMatchFilter`: rows as the inner filter gives them,
    /// until the first row it rejects or takes a cell from: there the scan
    /// stops.
    While(Box<Filter>),
    /// `SKIP` / `SkipFilter`: a row the inner filter would take any cell
    /// from is skipped whole.
    Skip(Box<Filter>),
    /// `AND` / `OR` (`FilterList` MUST_PASS_ALL / MUST_PASS_ONE): with
    /// `all`, each member filters what the one before kept; otherwise a row
    /// passes if any member passes it, with the cells any member kept.
    List {
        /// MUST_PASS_ALL (true) or MUST_PASS_ONE.
        all: bool,
        /// The members, in order.
        filters: Vec<Filter>,
    },
}

impl Filter {
    /// HBase's `hasFilterRow`: the filter decides on whole rows (it drops
    /// a row after seeing its cells, or counts rows), so HBase refuses it
    /// in a scan that returns rows in chunks (`Scan.setBatch`).
    pub fn has_filter_row(&self) -> bool {
        match self {
            Filter::SingleColumnValue { .. }
            | Filter::Page(_)
            | Filter::While(_)
            | Filter::Skip(_)
            | Filter::RandomRow(_) => true,
            Filter::List { filters, .. } => filters.iter().any(Filter::has_filter_row),
            _ => false,
        }
    }

    /// The filter in HBase's filter language.
    pub fn describe(&self) -> String {
        let q = |b: &[u8]| format!("'{}'", String::from_utf8_lossy(b).replace('\'', "''"));
        match self {
            Filter::Prefix(p) => format!("PrefixFilter({})", q(p)),
            Filter::KeyOnly { value_length } => {
                if *value_length {
                    "KeyOnlyFilter(true)".into()
                } else {
                    "KeyOnlyFilter()".into()
                }
            }
            Filter::FirstKeyOnly => "FirstKeyOnlyFilter()".into(),
            Filter::ColumnPrefix(p) => format!("ColumnPrefixFilter({})", q(p)),
            Filter::MultipleColumnPrefix(ps) => format!(
                "MultipleColumnPrefixFilter({})",
                ps.iter().map(|p| q(p)).collect::<Vec<_>>().join(", ")
            ),
            Filter::ColumnCountGet(n) => format!("ColumnCountGetFilter({n})"),
            Filter::Page(n) => format!("PageFilter({n})"),
            Filter::InclusiveStop(k) => format!("InclusiveStopFilter({})", q(k)),
            Filter::Row(op, c) => {
                format!("RowFilter({}, {})", op.symbol(), q(c.describe().as_bytes()))
            }
            Filter::Family(op, c) => {
                format!(
                    "FamilyFilter({}, {})",
                    op.symbol(),
                    q(c.describe().as_bytes())
                )
            }
            Filter::Qualifier(op, c) => {
                format!(
                    "QualifierFilter({}, {})",
                    op.symbol(),
                    q(c.describe().as_bytes())
                )
            }
            Filter::Value(op, c) => {
                format!(
                    "ValueFilter({}, {})",
                    op.symbol(),
                    q(c.describe().as_bytes())
                )
            }
            Filter::SingleColumnValue {
                family,
                qualifier,
                op,
                comparator,
                filter_if_missing,
                latest_version_only,
                exclude,
            } => format!(
                "{}({}, {}, {}, {}, {filter_if_missing}, {latest_version_only})",
                if *exclude {
                    "SingleColumnValueExcludeFilter"
                } else {
                    "SingleColumnValueFilter"
                },
                q(family),
                q(qualifier),
                op.symbol(),
                q(comparator.describe().as_bytes())
            ),
            Filter::Timestamps { ts, .. } => format!(
                "TimestampsFilter({})",
                ts.iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Filter::RandomRow(p) => format!("RandomRowFilter({p})"),
            Filter::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => format!(
                "ColumnRangeFilter({}, {min_inclusive}, {}, {max_inclusive})",
                q(min.as_deref().unwrap_or_default()),
                q(max.as_deref().unwrap_or_default())
            ),
            Filter::While(f) => format!("WHILE {}", f.describe_operand()),
            Filter::Skip(f) => format!("SKIP {}", f.describe_operand()),
            Filter::List { all, filters } => filters
                .iter()
                .map(|f| match f {
                    Filter::List { .. } => format!("({})", f.describe()),
                    other => other.describe(),
                })
                .collect::<Vec<_>>()
                .join(if *all { " AND " } else { " OR " }),
        }
    }

    fn describe_operand(&self) -> String {
        match self {
            Filter::List { .. } => format!("({})", self.describe()),
            other => other.describe(),
        }
    }
}
