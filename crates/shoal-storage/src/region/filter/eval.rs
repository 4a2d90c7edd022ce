//! HBase's filter protocol, run cell by cell as HBase's region servers run it
//! (`Filter` in `hbase-client`, driven by `RegionScannerImpl` and the user
//! scan query matcher), so a filter answers exactly what it answers in HBase:
//!
//! - per row: `filter_row_key` before any cell is read (true skips the row),
//!   then `filter_cell` for each visible cell in key order (after deletes,
//!   time range, TTL and the family's max versions; the scan's own version
//!   limit counts only the cells the filter includes), `transform_cell` on
//!   each included cell, then `filter_row_cells` and `filter_row` on the
//!   gathered row, and `reset` before the next row;
//! - per region: `filter_all_remaining` ends the region's scan — a client
//!   goes on with the next region and a fresh filter, as HBase's does.
//!
//! [`FilterState`] is one scan's filter with its state; the AND / OR lists'
//! merging lives in `lists.rs`.

use super::lists::{AndList, OrList};
use super::{Comparator, CompareOp, Filter};
use crate::cell::Cell;
use bytes::Bytes;
use std::cmp::Ordering;

/// What a filter says about one cell (HBase's `Filter.ReturnCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Take the cell.
    Include,
    /// Take the cell; skip the rest of its column.
    IncludeAndNextCol,
    /// Take the cell; skip the rest of its row (in this family).
    IncludeAndSeekNextRow,
    /// Leave the cell; go on with the next.
    Skip,
    /// Leave the cell and the rest of its column.
    NextCol,
    /// Leave the cell and the rest of its row (in this family).
    NextRow,
    /// Leave the cell; go on at the filter's hint.
    SeekNextUsingHint,
}

impl Code {
    /// True for the three codes that take the cell.
    pub fn includes(self) -> bool {
        matches!(
            self,
            Code::Include | Code::IncludeAndNextCol | Code::IncludeAndSeekNextRow
        )
    }
}

/// A position within the current row a filter asks the scan to go on from:
/// the first cell of `family:qualifier` with a timestamp ≤ `ts`, or, with
/// `after_column`, the first cell past that column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// The family.
    pub family: Bytes,
    /// The qualifier.
    pub qualifier: Bytes,
    ts: i64,
    after_column: bool,
}

impl Hint {
    /// The first cell of the column.
    pub fn first_on_column(family: Bytes, qualifier: Bytes) -> Hint {
        Hint {
            family,
            qualifier,
            ts: i64::MAX,
            after_column: false,
        }
    }

    /// The first cell of the column at `ts` (HBase's
    /// `createFirstOnRowColTS`).
    pub fn on_column_at(family: Bytes, qualifier: Bytes, ts: i64) -> Hint {
        Hint {
            family,
            qualifier,
            ts,
            after_column: false,
        }
    }

    /// Past every cell of the column (HBase's `createLastOnRowCol`).
    pub fn past_column(family: Bytes, qualifier: Bytes) -> Hint {
        Hint {
            family,
            qualifier,
            ts: i64::MIN,
            after_column: true,
        }
    }

    /// The order of `cell` against the hint, in forward key order.
    pub fn cmp_cell(&self, cell: &Cell) -> Ordering {
        cell.family
            .cmp(&self.family)
            .then_with(|| cell.qualifier.cmp(&self.qualifier))
            .then_with(|| {
                if self.after_column {
                    Ordering::Less
                } else if cell.timestamp > self.ts {
                    // Newer versions sort first.
                    Ordering::Less
                } else {
                    // The hint sorts before every type at its timestamp.
                    Ordering::Greater
                }
            })
    }

    fn cmp_hint(&self, other: &Hint) -> Ordering {
        self.family
            .cmp(&other.family)
            .then_with(|| self.qualifier.cmp(&other.qualifier))
            .then_with(|| self.after_column.cmp(&other.after_column))
            .then_with(|| other.ts.cmp(&self.ts))
    }
}

/// Orders a cell against a hint as a list of that direction does (HBase's
/// `FilterListBase.compareCell`: reversed lists flip the comparator).
pub(super) fn cmp_cell_hint(cell: &Cell, hint: &Hint, reversed: bool) -> Ordering {
    let o = hint.cmp_cell(cell);
    if reversed { o.reverse() } else { o }
}

/// Orders two hints in a list's direction.
pub(super) fn cmp_hints(a: &Hint, b: &Hint, reversed: bool) -> Ordering {
    let o = a.cmp_hint(b);
    if reversed { o.reverse() } else { o }
}

/// One scan's filter, with the state HBase's filter objects carry.
#[derive(Debug)]
pub struct FilterState {
    node: Node,
}

/// A filter and its state.
#[derive(Debug)]
pub(super) enum Node {
    Prefix {
        prefix: Bytes,
        reversed: bool,
        passed: bool,
        filter_row: bool,
    },
    KeyOnly {
        value_length: bool,
    },
    FirstKeyOnly {
        found: bool,
    },
    ColumnPrefix(Bytes),
    MultipleColumnPrefix {
        /// Sorted, distinct.
        prefixes: Vec<Bytes>,
        hint: Option<Bytes>,
    },
    ColumnCountGet {
        limit: usize,
        count: usize,
    },
    Page {
        size: u64,
        accepted: u64,
    },
    InclusiveStop {
        stop: Bytes,
        reversed: bool,
        done: bool,
    },
    Row {
        op: CompareOp,
        cmp: Comparator,
        filter_out: bool,
    },
    Family(CompareOp, Comparator),
    Qualifier(CompareOp, Comparator),
    Value(CompareOp, Comparator),
    SingleColumnValue {
        family: Bytes,
        qualifier: Bytes,
        op: CompareOp,
        cmp: Comparator,
        filter_if_missing: bool,
        latest_version_only: bool,
        exclude: bool,
        found: bool,
        matched: bool,
        /// NO_OP met its column: HBase fails the read there.
        no_op_met: bool,
    },
    Timestamps {
        /// Sorted.
        ts: Vec<i64>,
        can_hint: bool,
    },
    RandomRow {
        chance: f32,
        filter_out: bool,
    },
    ColumnRange {
        min: Option<Bytes>,
        min_inclusive: bool,
        max: Option<Bytes>,
        max_inclusive: bool,
    },
    While {
        inner: Box<Node>,
        all_remaining: bool,
    },
    Skip {
        inner: Box<Node>,
        filter_row: bool,
    },
    And(AndList),
    Or(OrList),
}

impl FilterState {
    /// A fresh state of `filter` for a scan in that direction (HBase sets a
    /// reversed scan's filter reversed; lists pass it on to their members,
    /// `WhileMatchFilter` and `SkipFilter` do not).
    pub fn new(filter: &Filter, reversed: bool) -> FilterState {
        FilterState {
            node: Node::build(filter, reversed),
        }
    }

    /// True once the filter met what HBase's fails on: a
    /// SingleColumnValueFilter with NO_OP reaching its column ("Unknown
    /// Compare op NO_OP"); the read must fail.
    pub fn failed(&self) -> bool {
        self.node.failed()
    }

    /// True once nothing further in this region can pass.
    pub fn all_remaining(&self) -> bool {
        self.node.all_remaining()
    }

    /// True if the filter needs `family` to decide on a row (HBase's
    /// `isFamilyEssential`; HBase loads the other families only for the
    /// rows the essential ones let through).
    pub fn is_family_essential(&self, family: &[u8]) -> bool {
        self.node.is_family_essential(family)
    }

    /// True to skip the row without reading it (HBase's `FilterWrapper`:
    /// also true once all remaining rows are filtered).
    pub fn filter_row_key(&mut self, row: &[u8]) -> bool {
        self.node.all_remaining() || self.node.filter_row_key(row)
    }

    /// The decision on one visible cell.
    pub fn filter_cell(&mut self, cell: &Cell) -> Code {
        self.node.filter_cell(cell)
    }

    /// Where to go on after [`Code::SeekNextUsingHint`] on `cell`.
    pub fn next_cell_hint(&self, cell: &Cell) -> Option<Hint> {
        self.node.next_cell_hint(cell)
    }

    /// The included cell as answered (`KeyOnlyFilter` empties values).
    pub fn transform_cell(&self, cell: Cell) -> Cell {
        self.node.transform_cell(cell)
    }

    /// True if the filter decides on whole rows (then a row is gathered
    /// before it is answered).
    pub fn has_filter_row(&self) -> bool {
        self.node.has_filter_row()
    }

    /// The row-level decision on the gathered cells (HBase's
    /// `RegionScannerImpl` with its `FilterWrapper`): true drops the row.
    /// `cells` may be edited (`SingleColumnValueExcludeFilter`).
    pub fn filter_gathered_row(&mut self, cells: &mut Vec<Cell>) -> bool {
        if cells.is_empty() {
            return true;
        }
        if self.node.has_filter_row() {
            self.node.filter_row_cells(cells);
            if cells.is_empty() {
                // HBase's FilterWrapper does not ask filterRow then: the row
                // goes on, and families read after the decision (the
                // joined heap) may still answer for it.
                return false;
            }
            if self.node.filter_row() {
                cells.clear();
                return true;
            }
            return false;
        }
        self.node.filter_row()
    }

    /// Forgets the row's state before the next row.
    pub fn reset(&mut self) {
        self.node.reset()
    }

    /// Runs the protocol over one row whose cells are already the visible
    /// versions (a virtual table such as `hbase:meta`): the cells to answer,
    /// or None when the row is filtered out. `stop` reports that the
    /// filter ended the scan.
    pub fn apply_to_row(
        &mut self,
        row: &[u8],
        cells: Vec<Cell>,
        stop: &mut bool,
    ) -> Option<Vec<Cell>> {
        if self.filter_row_key(row) {
            *stop = self.all_remaining();
            self.reset();
            return None;
        }
        let mut out = Vec::with_capacity(cells.len());
        let mut skip = Skipping::default();
        for cell in cells {
            if self.all_remaining() {
                break;
            }
            if skip.skips(&cell) {
                continue;
            }
            let code = self.filter_cell(&cell);
            if code.includes() {
                out.push(self.transform_cell(cell.clone()));
            }
            skip.after(code, &cell, self, false);
        }
        let dropped = self.filter_gathered_row(&mut out);
        self.reset();
        *stop = self.all_remaining();
        if dropped { None } else { Some(out) }
    }
}

/// What a filter's code makes a store skip, within one row and family.
#[derive(Debug, Default)]
pub struct Skipping {
    column: Option<(Bytes, Bytes)>,
    family_rest: Option<Bytes>,
    hint: Option<Hint>,
}

impl Skipping {
    /// True if `cell` is passed over unseen (the store sought past it).
    pub fn skips(&mut self, cell: &Cell) -> bool {
        if self.family_rest.as_ref().is_some_and(|f| *f == cell.family) {
            return true;
        }
        self.family_rest = None;
        if let Some(h) = &self.hint {
            if h.cmp_cell(cell) == Ordering::Less {
                return true;
            }
            self.hint = None;
        }
        if self
            .column
            .as_ref()
            .is_some_and(|(f, q)| *f == cell.family && *q == cell.qualifier)
        {
            return true;
        }
        self.column = None;
        false
    }

    /// Skips the rest of `cell`'s column.
    pub fn rest_of_column(&mut self, cell: &Cell) {
        self.column = Some((cell.family.clone(), cell.qualifier.clone()));
    }

    /// Skips the rest of `cell`'s row in its family.
    pub fn rest_of_row(&mut self, cell: &Cell) {
        self.family_rest = Some(cell.family.clone());
    }

    /// Applies what `code` on `cell` makes the store skip. A hint is
    /// followed only forward (a reversed HBase scan steps over it cell by
    /// cell, as a skip).
    pub fn after(&mut self, code: Code, cell: &Cell, filter: &FilterState, reversed: bool) {
        match code {
            Code::Include | Code::Skip => {}
            Code::IncludeAndNextCol | Code::NextCol => self.rest_of_column(cell),
            Code::IncludeAndSeekNextRow | Code::NextRow => self.rest_of_row(cell),
            Code::SeekNextUsingHint => {
                // Only a hint ahead of the cell moves the scan (the cell
                // sorts before it).
                if let Some(h) = filter.next_cell_hint(cell)
                    && !reversed
                    && h.cmp_cell(cell) == Ordering::Less
                {
                    self.hint = Some(h);
                }
            }
        }
    }
}

fn matches(op: CompareOp, cmp: &Comparator, part: &[u8]) -> bool {
    cmp.matches(op, part)
}

impl Node {
    fn build(f: &Filter, reversed: bool) -> Node {
        match f {
            Filter::Prefix(p) => Node::Prefix {
                prefix: p.clone(),
                reversed,
                passed: false,
                filter_row: true,
            },
            Filter::KeyOnly { value_length } => Node::KeyOnly {
                value_length: *value_length,
            },
            Filter::FirstKeyOnly => Node::FirstKeyOnly { found: false },
            Filter::ColumnPrefix(p) => Node::ColumnPrefix(p.clone()),
            Filter::MultipleColumnPrefix(ps) => {
                let mut prefixes = ps.clone();
                prefixes.sort();
                prefixes.dedup();
                Node::MultipleColumnPrefix {
                    prefixes,
                    hint: None,
                }
            }
            Filter::ColumnCountGet(n) => Node::ColumnCountGet {
                limit: *n,
                count: 0,
            },
            Filter::Page(n) => Node::Page {
                size: *n,
                accepted: 0,
            },
            Filter::InclusiveStop(k) => Node::InclusiveStop {
                stop: k.clone(),
                reversed,
                done: false,
            },
            Filter::Row(op, c) => Node::Row {
                op: *op,
                cmp: c.clone(),
                filter_out: false,
            },
            Filter::Family(op, c) => Node::Family(*op, c.clone()),
            Filter::Qualifier(op, c) => Node::Qualifier(*op, c.clone()),
            Filter::Value(op, c) => Node::Value(*op, c.clone()),
            Filter::SingleColumnValue {
                family,
                qualifier,
                op,
                comparator,
                filter_if_missing,
                latest_version_only,
                exclude,
            } => Node::SingleColumnValue {
                family: family.clone(),
                qualifier: qualifier.clone(),
                op: *op,
                cmp: comparator.clone(),
                filter_if_missing: *filter_if_missing,
                latest_version_only: *latest_version_only,
                exclude: *exclude,
                no_op_met: false,
                found: false,
                matched: false,
            },
            Filter::Timestamps { ts, can_hint } => {
                let mut ts = ts.clone();
                ts.sort_unstable();
                ts.dedup();
                Node::Timestamps {
                    ts,
                    can_hint: *can_hint,
                }
            }
            Filter::RandomRow(p) => Node::RandomRow {
                chance: *p,
                filter_out: false,
            },
            Filter::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => Node::ColumnRange {
                min: min.clone(),
                min_inclusive: *min_inclusive,
                max: max.clone(),
                max_inclusive: *max_inclusive,
            },
            // HBase's WhileMatchFilter and SkipFilter do not pass the scan's
            // direction on to the filter they wrap.
            Filter::While(inner) => Node::While {
                inner: Box::new(Node::build(inner, false)),
                all_remaining: false,
            },
            Filter::Skip(inner) => Node::Skip {
                inner: Box::new(Node::build(inner, false)),
                filter_row: false,
            },
            Filter::List { all, filters } => {
                let members: Vec<Node> = filters.iter().map(|f| Node::build(f, reversed)).collect();
                if *all {
                    Node::And(AndList::new(members, reversed))
                } else {
                    Node::Or(OrList::new(members, reversed))
                }
            }
        }
    }

    /// HBase's `HintingFilter`s: an AND list asks them for hints even after
    /// another member rejected the cell.
    pub(super) fn is_hinting(&self) -> bool {
        matches!(
            self,
            Node::ColumnPrefix(_)
                | Node::MultipleColumnPrefix { .. }
                | Node::ColumnRange { .. }
                | Node::Timestamps { .. }
        )
    }

    pub(super) fn is_family_essential(&self, name: &[u8]) -> bool {
        match self {
            Node::SingleColumnValue {
                family,
                filter_if_missing,
                ..
            } => !*filter_if_missing || family[..] == *name,
            Node::While { inner, .. } | Node::Skip { inner, .. } => inner.is_family_essential(name),
            Node::And(l) => l.is_family_essential(name),
            Node::Or(l) => l.is_family_essential(name),
            _ => true,
        }
    }

    /// True once the filter met what HBase's fails on (a
    /// SingleColumnValueFilter with NO_OP reaching its column).
    pub(super) fn failed(&self) -> bool {
        match self {
            Node::SingleColumnValue { no_op_met, .. } => *no_op_met,
            Node::While { inner, .. } | Node::Skip { inner, .. } => inner.failed(),
            Node::And(l) => l.failed(),
            Node::Or(l) => l.failed(),
            _ => false,
        }
    }

    pub(super) fn all_remaining(&self) -> bool {
        match self {
            Node::Prefix { passed, .. } => *passed,
            Node::ColumnCountGet { limit, count } => count > limit,
            Node::Page { size, accepted } => accepted >= size,
            Node::InclusiveStop { done, .. } => *done,
            Node::While {
                inner,
                all_remaining,
            } => *all_remaining || inner.all_remaining(),
            Node::And(l) => l.all_remaining(),
            Node::Or(l) => l.all_remaining(),
            _ => false,
        }
    }

    pub(super) fn filter_row_key(&mut self, row: &[u8]) -> bool {
        match self {
            Node::Prefix {
                prefix,
                reversed,
                passed,
                filter_row,
            } => {
                if *passed {
                    return true;
                }
                if row.len() < prefix.len() {
                    return true;
                }
                let cmp = row[..prefix.len()].cmp(&prefix[..]);
                if (!*reversed && cmp == Ordering::Greater) || (*reversed && cmp == Ordering::Less)
                {
                    *passed = true;
                }
                *filter_row = cmp != Ordering::Equal;
                *filter_row
            }
            Node::ColumnCountGet { .. } | Node::Page { .. } => self.all_remaining(),
            Node::InclusiveStop {
                stop,
                reversed,
                done,
            } => {
                if *done {
                    return true;
                }
                let cmp = row.cmp(&stop[..]);
                *done = if *reversed {
                    cmp == Ordering::Less
                } else {
                    cmp == Ordering::Greater
                };
                *done
            }
            Node::Row {
                op,
                cmp,
                filter_out,
            } => {
                if !matches(*op, cmp, row) {
                    *filter_out = true;
                }
                *filter_out
            }
            Node::RandomRow { chance, filter_out } => {
                *filter_out = if *chance < 0.0 {
                    true
                } else if *chance > 1.0 {
                    false
                } else {
                    rand::random::<f32>() >= *chance
                };
                *filter_out
            }
            Node::While {
                inner,
                all_remaining,
            } => {
                if *all_remaining || inner.all_remaining() {
                    return true;
                }
                let v = inner.filter_row_key(row);
                *all_remaining |= v;
                v
            }
            Node::And(l) => l.filter_row_key(row),
            Node::Or(l) => l.filter_row_key(row),
            // SingleColumnValueFilter keeps FilterBase's answer; the rest
            // answer false outright.
            _ => self.all_remaining(),
        }
    }

    pub(super) fn filter_cell(&mut self, c: &Cell) -> Code {
        match self {
            Node::Prefix { filter_row, .. } => {
                if *filter_row {
                    Code::NextRow
                } else {
                    Code::Include
                }
            }
            Node::KeyOnly { .. } | Node::Page { .. } => Code::Include,
            Node::FirstKeyOnly { found } => {
                if *found {
                    return Code::NextRow;
                }
                *found = true;
                Code::Include
            }
            Node::ColumnPrefix(prefix) => column_prefix(&c.qualifier, prefix),
            Node::MultipleColumnPrefix { prefixes, hint } => {
                if prefixes.is_empty() {
                    return Code::Include;
                }
                let q = &c.qualifier[..];
                // Prefixes ≤ the qualifier.
                let le = prefixes.partition_point(|p| &p[..] <= q);
                if le == 0 {
                    *hint = Some(prefixes[0].clone());
                    return Code::SeekNextUsingHint;
                }
                let largest = &prefixes[le - 1];
                if q.starts_with(largest) {
                    Code::Include
                } else if le == prefixes.len() {
                    Code::NextRow
                } else {
                    *hint = Some(prefixes[le].clone());
                    Code::SeekNextUsingHint
                }
            }
            Node::ColumnCountGet { limit, count } => {
                *count += 1;
                if *count > *limit {
                    Code::NextCol
                } else {
                    Code::IncludeAndNextCol
                }
            }
            Node::InclusiveStop { done, .. } => {
                if *done {
                    Code::NextRow
                } else {
                    Code::Include
                }
            }
            Node::Row { filter_out, .. } | Node::RandomRow { filter_out, .. } => {
                if *filter_out {
                    Code::NextRow
                } else {
                    Code::Include
                }
            }
            Node::Family(op, cmp) => {
                if !c.family.is_empty() && !matches(*op, cmp, &c.family) {
                    Code::NextRow
                } else {
                    Code::Include
                }
            }
            Node::Qualifier(op, cmp) => pass_or_skip(matches(*op, cmp, &c.qualifier)),
            Node::Value(op, cmp) => pass_or_skip(matches(*op, cmp, &c.value)),
            Node::SingleColumnValue {
                family,
                qualifier,
                op,
                cmp,
                latest_version_only,
                found,
                matched,
                no_op_met,
                ..
            } => {
                if *matched {
                    return Code::Include;
                }
                if *latest_version_only && *found {
                    return Code::NextRow;
                }
                if c.family != *family || c.qualifier != *qualifier {
                    return Code::Include;
                }
                *found = true;
                if *op == CompareOp::NoOp {
                    *no_op_met = true;
                    return Code::NextRow;
                }
                if !matches(*op, cmp, &c.value) {
                    return if *latest_version_only {
                        Code::NextRow
                    } else {
                        Code::Include
                    };
                }
                *matched = true;
                Code::Include
            }
            Node::Timestamps { ts, can_hint } => {
                if ts.binary_search(&c.timestamp).is_ok() {
                    Code::Include
                } else if ts.first().is_none_or(|min| c.timestamp < *min) {
                    Code::NextCol
                } else if *can_hint {
                    Code::SeekNextUsingHint
                } else {
                    Code::Skip
                }
            }
            Node::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => {
                let q = &c.qualifier[..];
                let cmp_min = min.as_ref().map_or(Ordering::Greater, |m| q.cmp(&m[..]));
                if cmp_min == Ordering::Less {
                    return Code::SeekNextUsingHint;
                }
                if !*min_inclusive && cmp_min == Ordering::Equal {
                    return Code::NextCol;
                }
                let Some(max) = max else {
                    return Code::Include;
                };
                let cmp_max = q.cmp(&max[..]);
                if (*max_inclusive && cmp_max != Ordering::Greater)
                    || (!*max_inclusive && cmp_max == Ordering::Less)
                {
                    Code::Include
                } else {
                    Code::NextRow
                }
            }
            Node::While {
                inner,
                all_remaining,
            } => {
                let code = inner.filter_cell(c);
                *all_remaining |= code != Code::Include;
                code
            }
            Node::Skip { inner, filter_row } => {
                let code = inner.filter_cell(c);
                *filter_row |= code != Code::Include;
                code
            }
            Node::And(l) => l.filter_cell(c),
            Node::Or(l) => l.filter_cell(c),
        }
    }

    pub(super) fn next_cell_hint(&self, c: &Cell) -> Option<Hint> {
        match self {
            Node::ColumnPrefix(p) => Some(Hint::first_on_column(c.family.clone(), p.clone())),
            Node::MultipleColumnPrefix { hint, .. } => hint
                .as_ref()
                .map(|h| Hint::first_on_column(c.family.clone(), h.clone())),
            Node::ColumnRange { min, .. } => Some(Hint::first_on_column(
                c.family.clone(),
                min.clone().unwrap_or_default(),
            )),
            // The next listed timestamp below the cell's, in its column
            // (past the column when none is).
            Node::Timestamps { ts, can_hint: true } => {
                let below = ts.partition_point(|t| *t < c.timestamp);
                Some(match below.checked_sub(1) {
                    Some(i) => Hint::on_column_at(c.family.clone(), c.qualifier.clone(), ts[i]),
                    None => Hint::past_column(c.family.clone(), c.qualifier.clone()),
                })
            }
            Node::And(l) => l.next_cell_hint(c),
            Node::Or(l) => l.next_cell_hint(c),
            // A TimestampsFilter without `canHint` (the client's default)
            // does not hint; WhileMatchFilter and SkipFilter do not pass
            // their filter's hint on.
            _ => None,
        }
    }

    pub(super) fn transform_cell(&self, mut c: Cell) -> Cell {
        match self {
            Node::KeyOnly { value_length } => {
                c.value = if *value_length {
                    Bytes::copy_from_slice(&(c.value.len() as u32).to_be_bytes())
                } else {
                    Bytes::new()
                };
                c
            }
            Node::While { inner, .. } | Node::Skip { inner, .. } => inner.transform_cell(c),
            Node::And(l) => l.transform_cell(c),
            Node::Or(l) => l.transform_cell(c),
            _ => c,
        }
    }

    pub(super) fn has_filter_row(&self) -> bool {
        match self {
            Node::Page { .. }
            | Node::SingleColumnValue { .. }
            | Node::RandomRow { .. }
            | Node::While { .. }
            | Node::Skip { .. } => true,
            Node::And(l) => l.has_filter_row(),
            Node::Or(l) => l.has_filter_row(),
            _ => false,
        }
    }

    pub(super) fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        match self {
            Node::SingleColumnValue {
                family,
                qualifier,
                exclude: true,
                ..
            } => cells.retain(|c| c.family != *family || c.qualifier != *qualifier),
            Node::And(l) => l.filter_row_cells(cells),
            Node::Or(l) => l.filter_row_cells(cells),
            _ => {}
        }
    }

    pub(super) fn filter_row(&mut self) -> bool {
        match self {
            Node::Prefix { filter_row, .. } => *filter_row,
            Node::Page { size, accepted } => {
                *accepted += 1;
                *accepted > *size
            }
            Node::Row { filter_out, .. } | Node::RandomRow { filter_out, .. } => *filter_out,
            Node::SingleColumnValue {
                filter_if_missing,
                found,
                matched,
                ..
            } => {
                if *found {
                    !*matched
                } else {
                    *filter_if_missing
                }
            }
            Node::While {
                inner,
                all_remaining,
            } => {
                let v = inner.filter_row();
                *all_remaining |= v;
                v
            }
            Node::Skip { filter_row, .. } => *filter_row,
            Node::And(l) => l.filter_row(),
            Node::Or(l) => l.filter_row(),
            _ => false,
        }
    }

    pub(super) fn reset(&mut self) {
        match self {
            Node::Prefix { filter_row, .. } => *filter_row = true,
            Node::FirstKeyOnly { found } => *found = false,
            Node::ColumnCountGet { count, .. } => *count = 0,
            Node::Row { filter_out, .. } | Node::RandomRow { filter_out, .. } => {
                *filter_out = false
            }
            Node::SingleColumnValue { found, matched, .. } => {
                *found = false;
                *matched = false;
            }
            Node::While { inner, .. } => inner.reset(),
            Node::Skip { inner, filter_row } => {
                inner.reset();
                *filter_row = false;
            }
            Node::And(l) => l.reset(),
            Node::Or(l) => l.reset(),
            _ => {}
        }
    }
}

fn pass_or_skip(pass: bool) -> Code {
    if pass { Code::Include } else { Code::Skip }
}

/// `ColumnPrefixFilter` on one qualifier: before the prefix, seek to it;
/// past it, the rest of the row (in this family) cannot match.
fn column_prefix(q: &[u8], prefix: &[u8]) -> Code {
    if q.len() < prefix.len() {
        if q <= &prefix[..q.len()] {
            Code::SeekNextUsingHint
        } else {
            Code::NextRow
        }
    } else {
        match q[..prefix.len()].cmp(prefix) {
            Ordering::Less => Code::SeekNextUsingHint,
            Ordering::Greater => Code::NextRow,
            Ordering::Equal => Code::Include,
        }
    }
}
