//! HBase's filters, evaluated in the region scan on each complete row
//! (after columns, time range and versions have been applied), so every
//! front door — gRPC, Thrift, HBase's native RPC — gets the same answer.
//! `parse` reads HBase's filter language (the Thrift gateway's and the
//! shell's `FILTER =>`).
//!
//! Semantics at row granularity, documented per variant: cell filters keep
//! the cells they match (a row left empty is skipped), row filters keep or
//! skip the whole row, and some stop the scan (`PageFilter` after its
//! rows, `WHILE` at the first row its filter rejects, `InclusiveStopFilter`
//! past its row, `PrefixFilter` past its prefix). A scan's stop is final
//! for its region scanner; the host ends the whole scan on it.

mod compare;
mod parse;
#[cfg(test)]
mod tests;

pub use compare::{Comparator, CompareOp};
pub use parse::{FilterError, parse};

use crate::cell::Cell;
use bytes::Bytes;
use std::sync::Arc;

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
    Timestamps(Vec<i64>),
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

/// What a filter does with one row.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Answer these cells.
    Emit(Vec<Cell>),
    /// Skip the row; go on.
    Skip,
    /// Skip the row and end the scan.
    Stop,
}

/// One outcome inside the evaluation.
enum Outcome {
    Keep(Vec<Cell>),
    Drop,
    StopAll,
}

/// One scan's evaluation of a filter: rows emitted so far (for pages),
/// whether it stopped, and the scan's direction.
#[derive(Debug, Clone)]
pub struct FilterRun {
    filter: Arc<Filter>,
    reverse: bool,
    emitted: u64,
    stopped: bool,
}

impl FilterRun {
    /// A run of `filter` for a scan in that direction.
    pub fn new(filter: Arc<Filter>, reverse: bool) -> FilterRun {
        FilterRun {
            filter,
            reverse,
            emitted: 0,
            stopped: false,
        }
    }

    /// The filter.
    pub fn filter(&self) -> &Arc<Filter> {
        &self.filter
    }

    /// True once the run has stopped: nothing further can pass.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Decides on one complete row.
    pub fn apply(&mut self, row: &[u8], cells: Vec<Cell>) -> Decision {
        if self.stopped {
            return Decision::Stop;
        }
        let filter = self.filter.clone();
        match self.eval(&filter, row, cells) {
            Outcome::Keep(c) if !c.is_empty() => {
                self.emitted += 1;
                Decision::Emit(c)
            }
            Outcome::Keep(_) | Outcome::Drop => Decision::Skip,
            Outcome::StopAll => {
                self.stopped = true;
                Decision::Stop
            }
        }
    }

    fn eval(&self, f: &Filter, row: &[u8], cells: Vec<Cell>) -> Outcome {
        let keep_cells = |cells: Vec<Cell>, pred: &dyn Fn(&Cell) -> bool| {
            let kept: Vec<Cell> = cells.into_iter().filter(|c| pred(c)).collect();
            if kept.is_empty() {
                Outcome::Drop
            } else {
                Outcome::Keep(kept)
            }
        };
        let row_if = |pass: bool, cells: Vec<Cell>| {
            if pass {
                Outcome::Keep(cells)
            } else {
                Outcome::Drop
            }
        };
        match f {
            Filter::Prefix(p) => {
                if row.starts_with(p) {
                    Outcome::Keep(cells)
                } else if (!self.reverse && row > &p[..]) || (self.reverse && row < &p[..]) {
                    // Every later row sorts past the prefix too.
                    Outcome::StopAll
                } else {
                    Outcome::Drop
                }
            }
            Filter::KeyOnly { value_length } => Outcome::Keep(
                cells
                    .into_iter()
                    .map(|mut c| {
                        c.value = if *value_length {
                            Bytes::copy_from_slice(&(c.value.len() as u32).to_be_bytes())
                        } else {
                            Bytes::new()
                        };
                        c
                    })
                    .collect(),
            ),
            Filter::FirstKeyOnly => Outcome::Keep(cells.into_iter().take(1).collect()),
            Filter::ColumnPrefix(p) => keep_cells(cells, &|c| c.qualifier.starts_with(p)),
            Filter::MultipleColumnPrefix(ps) => {
                keep_cells(cells, &|c| ps.iter().any(|p| c.qualifier.starts_with(p)))
            }
            Filter::ColumnCountGet(n) => {
                let mut columns = 0usize;
                let mut last: Option<(Bytes, Bytes)> = None;
                let mut kept = Vec::new();
                for c in cells {
                    let same = last
                        .as_ref()
                        .is_some_and(|(f, q)| *f == c.family && *q == c.qualifier);
                    if !same {
                        columns += 1;
                        last = Some((c.family.clone(), c.qualifier.clone()));
                    }
                    if columns > *n {
                        break;
                    }
                    kept.push(c);
                }
                Outcome::Keep(kept)
            }
            Filter::Page(n) => {
                if self.emitted >= *n {
                    Outcome::StopAll
                } else {
                    Outcome::Keep(cells)
                }
            }
            Filter::InclusiveStop(k) => {
                let past = if self.reverse {
                    row < &k[..]
                } else {
                    row > &k[..]
                };
                if past {
                    Outcome::StopAll
                } else {
                    Outcome::Keep(cells)
                }
            }
            Filter::Row(op, cmp) => row_if(cmp.matches(*op, row), cells),
            Filter::Family(op, cmp) => keep_cells(cells, &|c| cmp.matches(*op, &c.family)),
            Filter::Qualifier(op, cmp) => keep_cells(cells, &|c| cmp.matches(*op, &c.qualifier)),
            Filter::Value(op, cmp) => keep_cells(cells, &|c| cmp.matches(*op, &c.value)),
            Filter::SingleColumnValue {
                family,
                qualifier,
                op,
                comparator,
                filter_if_missing,
                latest_version_only,
                exclude,
            } => {
                let is_tested = |c: &Cell| c.family == *family && c.qualifier == *qualifier;
                let mut tested = cells.iter().filter(|c| is_tested(c)).peekable();
                let pass = if tested.peek().is_none() {
                    !filter_if_missing
                } else if *latest_version_only {
                    tested
                        .next()
                        .is_some_and(|c| comparator.matches(*op, &c.value))
                } else {
                    tested.any(|c| comparator.matches(*op, &c.value))
                };
                if !pass {
                    Outcome::Drop
                } else if *exclude {
                    Outcome::Keep(cells.into_iter().filter(|c| !is_tested(c)).collect())
                } else {
                    Outcome::Keep(cells)
                }
            }
            Filter::Timestamps(ts) => keep_cells(cells, &|c| ts.contains(&c.timestamp)),
            Filter::RandomRow(p) => row_if(rand::random::<f32>() < *p, cells),
            Filter::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => keep_cells(cells, &|c| {
                let q = &c.qualifier[..];
                let above = min.as_ref().is_none_or(|m| {
                    if *min_inclusive {
                        q >= &m[..]
                    } else {
                        q > &m[..]
                    }
                });
                let below = max.as_ref().is_none_or(|m| {
                    if *max_inclusive {
                        q <= &m[..]
                    } else {
                        q < &m[..]
                    }
                });
                above && below
            }),
            Filter::While(inner) => {
                let before = cells.len();
                match self.eval(inner, row, cells) {
                    Outcome::Keep(c) if c.len() == before => Outcome::Keep(c),
                    _ => Outcome::StopAll,
                }
            }
            Filter::Skip(inner) => {
                let before = cells.len();
                match self.eval(inner, row, cells) {
                    Outcome::Keep(c) if c.len() == before => Outcome::Keep(c),
                    Outcome::StopAll => Outcome::StopAll,
                    _ => Outcome::Drop,
                }
            }
            Filter::List { all: true, filters } => {
                let mut cells = cells;
                for f in filters {
                    match self.eval(f, row, cells) {
                        Outcome::Keep(c) if !c.is_empty() => cells = c,
                        Outcome::Keep(_) | Outcome::Drop => return Outcome::Drop,
                        Outcome::StopAll => return Outcome::StopAll,
                    }
                }
                Outcome::Keep(cells)
            }
            Filter::List {
                all: false,
                filters,
            } => {
                if filters.is_empty() {
                    return Outcome::Keep(cells);
                }
                let mut union: Vec<Cell> = Vec::new();
                let mut stops = 0;
                for f in filters {
                    match self.eval(f, row, cells.clone()) {
                        Outcome::Keep(c) => {
                            for cell in c {
                                let seen = union.iter().any(|u| {
                                    u.family == cell.family
                                        && u.qualifier == cell.qualifier
                                        && u.timestamp == cell.timestamp
                                });
                                if !seen {
                                    union.push(cell);
                                }
                            }
                        }
                        Outcome::Drop => {}
                        Outcome::StopAll => stops += 1,
                    }
                }
                if stops == filters.len() {
                    return Outcome::StopAll;
                }
                if union.is_empty() {
                    return Outcome::Drop;
                }
                union.sort_by(|a, b| {
                    (&a.family, &a.qualifier)
                        .cmp(&(&b.family, &b.qualifier))
                        .then(b.timestamp.cmp(&a.timestamp))
                });
                Outcome::Keep(union)
            }
        }
    }
}

impl Filter {
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
            Filter::Timestamps(ts) => format!(
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
