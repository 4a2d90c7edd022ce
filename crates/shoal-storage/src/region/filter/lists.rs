//! HBase's `FilterList`: MUST_PASS_ALL (`AndList`) and MUST_PASS_ONE
//! (`OrList`), with HBase's rules for merging their members' codes, hints
//! and transformations. Every member of an AND list sees the original cell
//! (transformations run afterwards, all of them, in order); an OR list asks
//! each member that is not done, remembers each member's last code so a
//! member that asked to skip a column (or row, or up to a hint) is not
//! asked again inside it, and transforms a cell only by the members that
//! included it.

use super::eval::{Code, Hint, Node, cmp_cell_hint, cmp_hints};
use crate::cell::Cell;
use std::cmp::Ordering;

/// MUST_PASS_ALL.
#[derive(Debug)]
pub(crate) struct AndList {
    members: Vec<Node>,
    reversed: bool,
    /// Members whose last code was a seek, for the list's hint.
    seeking: Vec<usize>,
}

/// MUST_PASS_ONE.
#[derive(Debug)]
pub(crate) struct OrList {
    members: Vec<Node>,
    reversed: bool,
    /// Per member: its code for the last cell it saw in this row, and that
    /// cell when the code skips more than the cell itself.
    prev: Vec<(Option<Code>, Option<Cell>)>,
    /// Per member: it included the current cell.
    included: Vec<bool>,
}

fn merge_and(rc: Code, local: Code) -> Code {
    use Code::*;
    if rc == SeekNextUsingHint {
        return SeekNextUsingHint;
    }
    match (local, rc) {
        (SeekNextUsingHint, _) => SeekNextUsingHint,
        (Include, rc) => rc,
        (IncludeAndNextCol, Include | IncludeAndNextCol) => IncludeAndNextCol,
        (IncludeAndNextCol, IncludeAndSeekNextRow) => IncludeAndSeekNextRow,
        (IncludeAndNextCol, Skip | NextCol) => NextCol,
        (IncludeAndNextCol, NextRow) => NextRow,
        (IncludeAndSeekNextRow, Include | IncludeAndNextCol | IncludeAndSeekNextRow) => {
            IncludeAndSeekNextRow
        }
        (IncludeAndSeekNextRow, Skip | NextCol | NextRow) => NextRow,
        (Skip, Include | Skip) => Skip,
        (Skip, IncludeAndNextCol | NextCol) => NextCol,
        (Skip, IncludeAndSeekNextRow | NextRow) => NextRow,
        (NextCol, Include | IncludeAndNextCol | Skip | NextCol) => NextCol,
        (NextCol, IncludeAndSeekNextRow | NextRow) => NextRow,
        (NextRow, _) => NextRow,
        // `rc` is never a seek here (returned above).
        (_, SeekNextUsingHint) => SeekNextUsingHint,
    }
}

fn merge_or(rc: Option<Code>, local: Code) -> Code {
    use Code::*;
    let Some(rc) = rc else {
        return local;
    };
    match (local, rc) {
        (Include, _) => Include,
        (IncludeAndNextCol, Include | Skip | SeekNextUsingHint) => Include,
        (IncludeAndNextCol, IncludeAndNextCol | IncludeAndSeekNextRow | NextCol | NextRow) => {
            IncludeAndNextCol
        }
        (IncludeAndSeekNextRow, Include | Skip | SeekNextUsingHint) => Include,
        (IncludeAndSeekNextRow, IncludeAndNextCol | NextCol) => IncludeAndNextCol,
        (IncludeAndSeekNextRow, IncludeAndSeekNextRow | NextRow) => IncludeAndSeekNextRow,
        (Skip, Include | IncludeAndNextCol | IncludeAndSeekNextRow) => Include,
        (Skip, Skip | NextCol | NextRow | SeekNextUsingHint) => Skip,
        (NextCol, Include) => Include,
        (NextCol, NextCol | NextRow) => NextCol,
        (NextCol, IncludeAndNextCol | IncludeAndSeekNextRow) => IncludeAndNextCol,
        (NextCol, Skip | SeekNextUsingHint) => Skip,
        (NextRow, Include) => Include,
        (NextRow, IncludeAndNextCol) => IncludeAndNextCol,
        (NextRow, IncludeAndSeekNextRow) => IncludeAndSeekNextRow,
        (NextRow, Skip | SeekNextUsingHint) => Skip,
        (NextRow, NextCol) => NextCol,
        (NextRow, NextRow) => NextRow,
        (SeekNextUsingHint, Include | IncludeAndNextCol | IncludeAndSeekNextRow) => Include,
        (SeekNextUsingHint, Skip | NextCol | NextRow) => Skip,
        (SeekNextUsingHint, SeekNextUsingHint) => SeekNextUsingHint,
    }
}

impl AndList {
    pub(super) fn new(members: Vec<Node>, reversed: bool) -> AndList {
        AndList {
            members,
            reversed,
            seeking: Vec::new(),
        }
    }

    pub(super) fn all_remaining(&self) -> bool {
        self.members.iter().any(Node::all_remaining)
    }

    pub(super) fn failed(&self) -> bool {
        self.members.iter().any(Node::failed)
    }

    pub(super) fn is_family_essential(&self, family: &[u8]) -> bool {
        self.members.is_empty() || self.members.iter().any(|m| m.is_family_essential(family))
    }

    pub(super) fn filter_row_key(&mut self, row: &[u8]) -> bool {
        if self.members.is_empty() {
            return false;
        }
        let mut any_filtered = false;
        let mut any_hinting_passed = false;
        for m in &mut self.members {
            if m.all_remaining() {
                return true;
            } else if m.filter_row_key(row) {
                any_filtered = true;
            } else if m.is_hinting() {
                any_hinting_passed = true;
            }
        }
        any_filtered && !any_hinting_passed
    }

    pub(super) fn filter_cell(&mut self, c: &Cell) -> Code {
        if self.members.is_empty() {
            return Code::Include;
        }
        let mut rc = Code::Include;
        self.seeking.clear();
        let n = self.members.len();
        let mut i = 0;
        while i < n {
            let m = &mut self.members[i];
            if m.all_remaining() {
                rc = Code::NextRow;
                break;
            }
            let local = m.filter_cell(c);
            if local == Code::SeekNextUsingHint {
                self.seeking.push(i);
            }
            rc = merge_and(rc, local);
            if !rc.includes() {
                break;
            }
            i += 1;
        }
        // Members after the one that decided still give their hints.
        for j in (i + 1)..n {
            let m = &mut self.members[j];
            if m.is_hinting() && m.filter_cell(c) == Code::SeekNextUsingHint {
                self.seeking.push(j);
            }
        }
        if self.seeking.is_empty() {
            rc
        } else {
            Code::SeekNextUsingHint
        }
    }

    pub(super) fn next_cell_hint(&self, c: &Cell) -> Option<Hint> {
        let mut max: Option<Hint> = None;
        for &i in &self.seeking {
            let m = &self.members[i];
            if m.all_remaining() {
                continue;
            }
            let Some(h) = m.next_cell_hint(c) else {
                continue;
            };
            if max
                .as_ref()
                .is_none_or(|cur| cmp_hints(cur, &h, self.reversed) == Ordering::Less)
            {
                max = Some(h);
            }
        }
        max
    }

    pub(super) fn transform_cell(&self, c: Cell) -> Cell {
        self.members.iter().fold(c, |c, m| m.transform_cell(c))
    }

    pub(super) fn has_filter_row(&self) -> bool {
        self.members.iter().any(Node::has_filter_row)
    }

    pub(super) fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        for m in &mut self.members {
            m.filter_row_cells(cells);
        }
    }

    pub(super) fn filter_row(&mut self) -> bool {
        self.members.iter_mut().any(Node::filter_row)
    }

    pub(super) fn reset(&mut self) {
        for m in &mut self.members {
            m.reset();
        }
        self.seeking.clear();
    }
}

impl OrList {
    pub(super) fn new(members: Vec<Node>, reversed: bool) -> OrList {
        let n = members.len();
        OrList {
            members,
            reversed,
            prev: vec![(None, None); n],
            included: vec![false; n],
        }
    }

    pub(super) fn all_remaining(&self) -> bool {
        !self.members.is_empty() && self.members.iter().all(Node::all_remaining)
    }

    pub(super) fn failed(&self) -> bool {
        self.members.iter().any(Node::failed)
    }

    pub(super) fn is_family_essential(&self, family: &[u8]) -> bool {
        self.members.is_empty() || self.members.iter().any(|m| m.is_family_essential(family))
    }

    pub(super) fn filter_row_key(&mut self, row: &[u8]) -> bool {
        if self.members.is_empty() {
            return false;
        }
        let mut filtered = true;
        for m in &mut self.members {
            if !m.all_remaining() && !m.filter_row_key(row) {
                filtered = false;
            }
        }
        filtered
    }

    /// A member's code for `c` known from its last one without asking it:
    /// still inside the column, row or hinted range it asked to skip.
    fn code_from_prev(&self, i: usize, c: &Cell) -> Option<Code> {
        let (Some(code), Some(prev)) = &self.prev[i] else {
            return None;
        };
        match code {
            Code::Include | Code::Skip => None,
            Code::SeekNextUsingHint => {
                let hint = self.members[i].next_cell_hint(prev)?;
                (cmp_cell_hint(c, &hint, self.reversed) == Ordering::Less)
                    .then_some(Code::SeekNextUsingHint)
            }
            Code::NextCol | Code::IncludeAndNextCol => {
                (prev.family == c.family && prev.qualifier == c.qualifier).then_some(Code::NextCol)
            }
            Code::NextRow | Code::IncludeAndSeekNextRow => {
                (prev.family == c.family).then_some(Code::NextRow)
            }
        }
    }

    pub(super) fn filter_cell(&mut self, c: &Cell) -> Code {
        if self.members.is_empty() {
            return Code::Include;
        }
        let mut rc: Option<Code> = None;
        for i in 0..self.members.len() {
            self.included[i] = false;
            if self.members[i].all_remaining() {
                continue;
            }
            let local = match self.code_from_prev(i, c) {
                Some(code) => code,
                None => self.members[i].filter_cell(c),
            };
            let keep = !matches!(local, Code::Include | Code::Skip);
            self.prev[i] = (Some(local), keep.then(|| c.clone()));
            rc = Some(merge_or(rc, local));
            if local.includes() {
                self.included[i] = true;
            }
        }
        rc.unwrap_or(Code::Skip)
    }

    pub(super) fn next_cell_hint(&self, c: &Cell) -> Option<Hint> {
        let mut min: Option<Hint> = None;
        for m in &self.members {
            if m.all_remaining() {
                continue;
            }
            let h = m.next_cell_hint(c)?;
            if min
                .as_ref()
                .is_none_or(|cur| cmp_hints(cur, &h, self.reversed) == Ordering::Greater)
            {
                min = Some(h);
            }
        }
        min
    }

    pub(super) fn transform_cell(&self, c: Cell) -> Cell {
        self.members
            .iter()
            .zip(&self.included)
            .filter(|(_, inc)| **inc)
            .fold(c, |c, (m, _)| m.transform_cell(c))
    }

    pub(super) fn has_filter_row(&self) -> bool {
        self.members.iter().any(Node::has_filter_row)
    }

    pub(super) fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        for m in &mut self.members {
            m.filter_row_cells(cells);
        }
    }

    pub(super) fn filter_row(&mut self) -> bool {
        if self.members.is_empty() {
            return false;
        }
        self.members.iter_mut().all(Node::filter_row)
    }

    pub(super) fn reset(&mut self) {
        for m in &mut self.members {
            m.reset();
        }
        for p in &mut self.prev {
            *p = (None, None);
        }
        self.included.fill(false);
    }
}
