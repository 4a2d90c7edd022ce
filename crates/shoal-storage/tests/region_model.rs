//! Model-based property test of the region engine.
//!
//! Random sequences of operations (puts, every delete kind, row mutations,
//! increment, append, check-and-mutate, gets, scans, flush, minor and major
//! compaction, clock advances, close + reopen, crash + reopen, GC) run against
//! a real [`Region`] and against a small in-memory model of HBase's classic
//! semantics written independently here (it does not use
//! `shoal_storage::region::versions`). Every read, and every return value of a
//! read-modify-write operation, is compared; after every structural operation
//! (flush, compaction, reopen, crash, GC) and at the end, the whole region is
//! compared with all versions.
//!
//! The model tracks which cells are in files and which in the memstore, because
//! a major compaction changes results exactly as in HBase: it rewrites the files
//! of a family to what a read of the files alone (all time, the family's max
//! versions, its TTL at the compaction's clock) returns, so markers disappear
//! and puts outside the compaction that they masked come back.
//!
//! Modelling choices (from `versions.rs`' rules, which are HBase's): puts
//! outside a read's time range are skipped before versions are counted, so the
//! family's `min_versions` exemption from the TTL applies to the newest
//! versions *within* the range; a marker older than the range is ignored (it
//! could only mask puts outside the range, so the model simply applies every
//! marker); a timestamp of `i64::MAX` is HBase's LATEST_TIMESTAMP and means
//! "now" (or "the newest version" for a version delete). Minor compactions only drop puts
//! masked by markers they keep, so the model treats them as no-ops.
//!
//! Three properties: write/read heavy; flush/compaction/restart heavy; and one
//! with background flushes and minor compactions (tiny flush size) and no major
//! compactions (the model cannot know what a background flush moved to files).
//! Every setup draws an in-memory compaction policy (none, basic, eager) with
//! a tiny active-segment threshold, so segments are rotated, flattened and
//! merged between most steps: the answers must be the same either way.
//! `SHOAL_MODEL_CASES` overrides the number of cases of each (default 256, 160
//! and 96), `SHOAL_MODEL_MAX_OPS` the longest op sequence (default 60, 60 and
//! 80). A failure prints the step, both answers, the model's cells and the
//! whole op sequence, shrunk to a minimal one.

use bytes::Bytes;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use shoal_storage::manifest::GcOptions;
use shoal_storage::memstore::InMemoryCompaction;
use shoal_storage::object::Bucket;
use shoal_storage::region::versions::Retention;
use shoal_storage::region::{
    CheckAndMutate, Columns, CompactionPolicy, CompareOp, FamilyConfig, Get, ManualClock, Region,
    RegionConfig, RegionEnv, RowMutation, RowOp, Scan, TimeRange,
};
use shoal_storage::sst::{BloomKind, SstWriterOptions};
use shoal_storage::wal::{Wal, WalOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

// ---------------------------------------------------------------------------
// Key space
// ---------------------------------------------------------------------------

/// Rows, in byte order (prefixes of each other so prefix scans are interesting).
const ROWS: [&str; 6] = ["r1", "r1a", "r1b", "r2", "r2a", "r3"];
/// Families, in byte order.
const FAMS: [&str; 2] = ["cf", "f2"];
/// Qualifiers, including the empty one (which shares its sort position with
/// the family-level delete markers).
const QUALS: [&str; 4] = ["", "a", "b", "c"];
/// Scan bounds: rows, and keys between and around them ("" = unbounded).
const BOUNDS: [&str; 10] = ["", "r0", "r1", "r1a", "r1b", "r15", "r2", "r2a", "r3", "r4"];
const PREFIXES: [&str; 7] = ["r", "r1", "r1a", "r1b", "r2", "r3", "s"];

const CF_MAX_VERSIONS: u32 = 3;

// ---------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------

/// A value: a short string, or an 8-byte big-endian counter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Val {
    S(&'static str),
    N(i64),
}

impl Val {
    fn bytes(self) -> Bytes {
        match self {
            Val::S(s) => Bytes::from_static(s.as_bytes()),
            Val::N(n) => Bytes::copy_from_slice(&n.to_be_bytes()),
        }
    }
}

impl fmt::Debug for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::S(s) => write!(f, "{s:?}"),
            Val::N(n) => write!(f, "#{n}"),
        }
    }
}

/// One change of a row mutation (`None` timestamps: "now", or for
/// DeleteVersion "the newest version").
#[derive(Clone, Debug)]
enum Change {
    Put(&'static str, &'static str, Option<i64>, Val),
    DeleteVersion(&'static str, &'static str, Option<i64>),
    DeleteColumn(&'static str, &'static str, Option<i64>),
    DeleteFamily(&'static str, Option<i64>),
    DeleteFamilyVersion(&'static str, i64),
    DeleteRow(Option<i64>),
}

/// Columns of a read: empty = everything; else family → all or some qualifiers.
type Cols = Vec<(&'static str, Option<Vec<&'static str>>)>;

#[derive(Clone, Debug)]
enum RowRange {
    Bounds(&'static str, &'static str),
    Prefix(&'static str),
}

#[derive(Clone, Debug)]
struct ScanSpec {
    range: RowRange,
    reverse: bool,
    limit: usize,
    batch: usize,
    columns: Cols,
    time: Option<(i64, i64)>,
    max_versions: u32,
}

#[derive(Clone, Debug)]
enum Op {
    Mutate(&'static str, Vec<Change>),
    Increment(&'static str, Vec<(&'static str, &'static str, i64)>),
    Append(&'static str, Vec<(&'static str, &'static str, Val)>),
    CheckAndMutate {
        row: &'static str,
        family: &'static str,
        qualifier: &'static str,
        op: CompareOp,
        value: Val,
        changes: Vec<Change>,
    },
    Get {
        row: &'static str,
        columns: Cols,
        time: Option<(i64, i64)>,
        max_versions: u32,
    },
    Scan(ScanSpec),
    Flush,
    MinorCompact,
    MajorCompact,
    Advance(i64),
    Reopen,
    Crash,
    Gc,
}

/// Per-case configuration of the region.
#[derive(Clone, Debug)]
struct Setup {
    /// The clock's start; explicit timestamps are drawn around it (4 makes
    /// some of them negative).
    base: i64,
    cf_max_versions: u32,
    f2_max_versions: u32,
    f2_min_versions: u32,
    f2_ttl_ms: Option<i64>,
    wal_on_object_store: bool,
    /// 256-byte blocks with restarts every 2 entries: multi-block files.
    small_blocks: bool,
    bloom: BloomKind,
    minor_min_files: usize,
    minor_ratio: f64,
    /// Tiny flush size and a low compaction trigger: flushes and minor
    /// compactions run in the background, interleaved with the test's steps.
    background: bool,
    /// In-memory compaction of both families, the active segment's size
    /// threshold (tiny: most writes rotate it) and the pipeline's length
    /// before a merge. Answers must not depend on them.
    imc: (InMemoryCompaction, usize, usize),
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

fn setup_strategy(background: bool) -> impl Strategy<Value = Setup> {
    (
        prop::sample::select(vec![1000i64, 1000, 4]),
        1u32..=2,
        0u32..=2,
        prop_oneof![1 => Just(None), 1 => (3i64..=12).prop_map(Some)],
        any::<bool>(),
        any::<bool>(),
        prop::sample::select(vec![BloomKind::Row, BloomKind::RowCol, BloomKind::None]),
        2usize..=3,
        prop::sample::select(vec![1.2f64, 100.0]),
        (
            prop::sample::select(vec![
                InMemoryCompaction::None,
                InMemoryCompaction::Basic,
                InMemoryCompaction::Eager,
            ]),
            prop::sample::select(vec![1usize, 300]),
            1usize..=3,
        ),
    )
        .prop_map(
            move |(base, maxv, minv, ttl, wal_obj, small, bloom, min_files, ratio, imc)| Setup {
                imc,
                base,
                // A background flush drops versions (as HBase's does) at a
                // moment the model cannot know: with this many versions and
                // no min versions, what it drops no read could see anyway.
                cf_max_versions: if background { 1000 } else { CF_MAX_VERSIONS },
                f2_max_versions: if background { 1000 } else { maxv },
                f2_min_versions: if background { 0 } else { minv.min(maxv) },
                f2_ttl_ms: ttl,
                wal_on_object_store: wal_obj,
                small_blocks: small,
                bloom,
                minor_min_files: min_files,
                minor_ratio: ratio,
                background,
            },
        )
}

fn row() -> impl Strategy<Value = &'static str> + Clone {
    prop::sample::select(ROWS.to_vec())
}
fn fam() -> impl Strategy<Value = &'static str> + Clone {
    prop::sample::select(FAMS.to_vec())
}
fn qual() -> impl Strategy<Value = &'static str> + Clone {
    prop::sample::select(QUALS.to_vec())
}
fn val() -> impl Strategy<Value = Val> + Clone {
    prop_oneof![
        3 => prop::sample::select(vec!["", "a", "b", "ab", "ba", "zz"]).prop_map(Val::S),
        2 => (-2i64..=3).prop_map(Val::N),
    ]
}
fn ts(base: i64) -> impl Strategy<Value = i64> + Clone {
    (base - 5)..=(base + 15)
}
fn opt_ts(base: i64) -> impl Strategy<Value = Option<i64>> + Clone {
    prop_oneof![
        20 => Just(None),
        30 => ts(base).prop_map(Some),
        1 => prop::sample::select(vec![i64::MIN, -1, 0, i64::MAX - 1, i64::MAX]).prop_map(Some),
    ]
}
fn columns() -> impl Strategy<Value = Cols> + Clone {
    let family_cols = (
        fam(),
        prop::option::of(prop::sample::subsequence(QUALS.to_vec(), 1..=2)),
    );
    prop_oneof![
        2 => Just(Vec::new()),
        1 => prop::collection::vec(family_cols, 1..=2),
    ]
}
fn time_range(base: i64) -> impl Strategy<Value = Option<(i64, i64)>> + Clone {
    prop_oneof![
        2 => Just(None),
        1 => ((base - 6)..=(base + 20), 1i64..=12).prop_map(|(min, w)| Some((min, min + w))),
    ]
}
fn max_versions() -> impl Strategy<Value = u32> + Clone {
    prop::sample::select(vec![1u32, 1, 2, 3, 5, u32::MAX])
}

fn change(base: i64) -> impl Strategy<Value = Change> + Clone {
    prop_oneof![
        10 => (fam(), qual(), opt_ts(base), val()).prop_map(|(f, q, t, v)| Change::Put(f, q, t, v)),
        3 => (fam(), qual(), opt_ts(base)).prop_map(|(f, q, t)| Change::DeleteVersion(f, q, t)),
        2 => (fam(), qual(), opt_ts(base)).prop_map(|(f, q, t)| Change::DeleteColumn(f, q, t)),
        1 => (fam(), opt_ts(base)).prop_map(|(f, t)| Change::DeleteFamily(f, t)),
        1 => (fam(), ts(base)).prop_map(|(f, t)| Change::DeleteFamilyVersion(f, t)),
        1 => opt_ts(base).prop_map(Change::DeleteRow),
    ]
}

fn all_columns() -> Vec<(&'static str, &'static str)> {
    FAMS.iter()
        .flat_map(|f| QUALS.iter().map(move |q| (*f, *q)))
        .collect()
}

/// Relative weights of the operation kinds.
#[derive(Clone, Copy)]
struct Weights {
    mutate: u32,
    rmw: u32,
    read: u32,
    flush: u32,
    compact: u32,
    advance: u32,
    major: u32,
    reopen: u32,
    crash: u32,
    gc: u32,
}

fn op(base: i64, w: Weights) -> impl Strategy<Value = Op> {
    let changes = prop::collection::vec(change(base), 1..=3);
    // (An operation with weight zero is left out.)
    let options: Vec<(u32, BoxedStrategy<Op>)> = vec![
        (w.mutate, (row(), changes.clone()).prop_map(|(r, c)| Op::Mutate(r, c)).boxed()),
        (w.rmw, (
            row(),
            prop::sample::subsequence(all_columns(), 1..=3),
            prop::collection::vec(-3i64..=5, 3),
        )
            .prop_map(|(r, cols, deltas)| Op::Increment(
                r,
                cols.into_iter().zip(deltas).map(|((f, q), d)| (f, q, d)).collect(),
            )).boxed()),
        (w.rmw, (
            row(),
            prop::sample::subsequence(all_columns(), 1..=2),
            prop::collection::vec(val(), 2),
        )
            .prop_map(|(r, cols, vals)| Op::Append(
                r,
                cols.into_iter().zip(vals).map(|((f, q), v)| (f, q, v)).collect(),
            )).boxed()),
        (w.rmw * 2, (
            row(),
            fam(),
            qual(),
            prop::sample::select(vec![
                CompareOp::Equal,
                CompareOp::NotEqual,
                CompareOp::Less,
                CompareOp::LessOrEqual,
                CompareOp::Greater,
                CompareOp::GreaterOrEqual,
                CompareOp::Exists,
                CompareOp::Missing,
            ]),
            val(),
            changes,
        )
            .prop_map(|(row, family, qualifier, op, value, changes)| Op::CheckAndMutate {
                row,
                family,
                qualifier,
                op,
                value,
                changes,
            }).boxed()),
        // The plain get (whole row, newest versions) that row caches serve,
        // also as HBase clients send it: from some time to the end of time.
        (w.read, (row(), prop_oneof![
            2 => Just(None),
            1 => prop::sample::select(vec![0i64, base - 3, base, base + 5])
                .prop_map(|min| Some((min, i64::MAX))),
        ]).prop_map(|(row, time)| Op::Get {
            row,
            columns: Vec::new(),
            time,
            max_versions: 1,
        }).boxed()),
        (w.read, (row(), columns(), prop_oneof![
            3 => time_range(base),
            1 => prop::sample::select(vec![0i64, base, base + 5]).prop_map(|min| Some((min, i64::MAX))),
        ], max_versions()).prop_map(
            |(row, columns, time, max_versions)| Op::Get {
                row,
                columns,
                time,
                max_versions,
            }
        ).boxed()),
        (w.read, (
            prop_oneof![
                3 => (prop::sample::select(BOUNDS.to_vec()), prop::sample::select(BOUNDS.to_vec()))
                    .prop_map(|(a, b)| RowRange::Bounds(a, b)),
                1 => prop::sample::select(PREFIXES.to_vec()).prop_map(RowRange::Prefix),
            ],
            any::<bool>(),
            prop_oneof![2 => Just(0usize), 1 => 1usize..=3],
            prop_oneof![2 => Just(0usize), 1 => 1usize..=3],
            columns(),
            time_range(base),
            max_versions(),
        )
            .prop_map(|(range, reverse, limit, batch, columns, time, max_versions)| {
                Op::Scan(ScanSpec {
                    range,
                    reverse,
                    limit,
                    batch,
                    columns,
                    time,
                    max_versions,
                })
            }).boxed()),
        (w.flush, Just(Op::Flush).boxed()),
        (w.compact, Just(Op::MinorCompact).boxed()),
        (w.major, Just(Op::MajorCompact).boxed()),
        (w.advance, prop_oneof![4 => 1i64..=3, 1 => 5i64..=15].prop_map(Op::Advance).boxed()),
        (w.reopen, Just(Op::Reopen).boxed()),
        (w.crash, Just(Op::Crash).boxed()),
        (w.gc, Just(Op::Gc).boxed()),
    ];
    proptest::strategy::Union::new_weighted(options.into_iter().filter(|(w, _)| *w > 0).collect())
}

fn case(w: Weights, max_ops: usize, background: bool) -> impl Strategy<Value = (Setup, Vec<Op>)> {
    setup_strategy(background).prop_flat_map(move |s| {
        let base = s.base;
        (Just(s), prop::collection::vec(op(base, w), 1..=max_ops))
    })
}

// ---------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Put,
    Delete,
    DeleteColumn,
    DeleteFamily,
    DeleteFamilyVersion,
}

#[derive(Clone, Debug)]
struct MCell {
    row: &'static str,
    family: &'static str,
    /// "" for family markers.
    qualifier: &'static str,
    ts: i64,
    kind: Kind,
    value: Bytes,
    /// Write order: one number per acknowledged mutation (later = newer).
    order: u64,
}

#[derive(Clone, Debug)]
struct FamSpec {
    name: &'static str,
    max_versions: u32,
    min_versions: u32,
    ttl_ms: Option<i64>,
}

/// A visible cell, as both sides report it.
#[derive(Clone, PartialEq, Eq)]
struct VCell {
    row: String,
    family: String,
    qualifier: String,
    ts: i64,
    value: Bytes,
}

impl fmt::Debug for VCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v: String = if self.value.len() == 8 && !self.value.iter().all(u8::is_ascii_graphic) {
            format!(
                "#{}",
                i64::from_be_bytes(self.value[..].try_into().expect("8 bytes"))
            )
        } else {
            format!("{:?}", String::from_utf8_lossy(&self.value))
        };
        write!(
            f,
            "{}/{}:{}@{}={}",
            self.row, self.family, self.qualifier, self.ts, v
        )
    }
}

fn vcell(c: &MCell) -> VCell {
    VCell {
        row: c.row.to_string(),
        family: c.family.to_string(),
        qualifier: c.qualifier.to_string(),
        ts: c.ts,
        value: c.value.clone(),
    }
}

/// What a read asks for, model side.
struct ReadSpec<'a> {
    columns: &'a Cols,
    min_ts: i64,
    max_ts: i64,
    max_versions: u32,
}

impl ReadSpec<'_> {
    fn wants_family(&self, family: &str) -> bool {
        self.columns.is_empty() || self.columns.iter().any(|(f, _)| *f == family)
    }

    /// Same merging rule as building `Columns` (a later entry for a family
    /// replaces an earlier one).
    fn wants(&self, family: &str, qualifier: &str) -> bool {
        if self.columns.is_empty() {
            return true;
        }
        match self.columns.iter().rev().find(|(f, _)| *f == family) {
            None => false,
            Some((_, None)) => true,
            Some((_, Some(qs))) => qs.contains(&qualifier),
        }
    }
}

struct Model {
    fams: Vec<FamSpec>,
    files: Vec<MCell>,
    mem: Vec<MCell>,
    now: i64,
    /// The region's stamp floor (`Region::stamp_now`).
    floor: i64,
    next_order: u64,
}

/// HBase's check: an empty operand asks about emptiness; a non-empty one
/// fails on a missing column whatever the operator.
fn compare_passes(op: CompareOp, current: Option<&[u8]>, given: &[u8]) -> bool {
    use CompareOp::*;
    let (op, given): (CompareOp, &[u8]) = match op {
        Exists => (NotEqual, b""),
        Missing => (Equal, b""),
        NoOp if given.is_empty() => (Equal, given),
        op => (op, given),
    };
    match (current, given.is_empty()) {
        (None, true) => op != NotEqual,
        (Some(c), true) => c.is_empty() == (op != NotEqual),
        (None, false) => false,
        (Some(c), false) => match op {
            NotEqual => c != given,
            Equal => c == given,
            Less => c < given,
            LessOrEqual => c <= given,
            Greater => c > given,
            GreaterOrEqual => c >= given,
            Exists | Missing | NoOp => false,
        },
    }
}

impl Model {
    fn new(setup: &Setup) -> Model {
        Model {
            fams: vec![
                FamSpec {
                    name: "cf",
                    max_versions: setup.cf_max_versions,
                    min_versions: 0,
                    ttl_ms: None,
                },
                FamSpec {
                    name: "f2",
                    max_versions: setup.f2_max_versions,
                    min_versions: setup.f2_min_versions,
                    ttl_ms: setup.f2_ttl_ms,
                },
            ],
            files: Vec::new(),
            mem: Vec::new(),
            now: setup.base,
            floor: 0,
            next_order: 1,
        }
    }

    fn fam(&self, name: &str) -> &FamSpec {
        self.fams.iter().find(|f| f.name == name).expect("family")
    }

    /// The visible puts of one (row, family) among `cells` (which may hold
    /// other rows and families), qualifier ascending, timestamp descending.
    fn resolve<'a>(
        &self,
        cells: impl Iterator<Item = &'a MCell> + Clone,
        row: &str,
        fam: &FamSpec,
        min_ts: i64,
        max_ts: i64,
        max_versions: u32,
    ) -> Vec<MCell> {
        let mine: Vec<&MCell> = cells
            .filter(|c| c.row == row && c.family == fam.name)
            .collect();
        let family_delete = mine
            .iter()
            .filter(|c| c.kind == Kind::DeleteFamily)
            .map(|c| c.ts)
            .max();
        let family_version_deletes: BTreeSet<i64> = mine
            .iter()
            .filter(|c| c.kind == Kind::DeleteFamilyVersion)
            .map(|c| c.ts)
            .collect();
        let qualifiers: BTreeSet<&str> = mine
            .iter()
            .filter(|c| c.kind == Kind::Put)
            .map(|c| c.qualifier)
            .collect();
        let cap = max_versions.min(fam.max_versions).max(1) as usize;
        let mut out = Vec::new();
        for q in qualifiers {
            let column_delete = mine
                .iter()
                .filter(|c| c.kind == Kind::DeleteColumn && c.qualifier == q)
                .map(|c| c.ts)
                .max();
            let version_deletes: BTreeSet<i64> = mine
                .iter()
                .filter(|c| c.kind == Kind::Delete && c.qualifier == q)
                .map(|c| c.ts)
                .collect();
            let masked = |ts: i64| {
                family_delete.is_some_and(|d| ts <= d)
                    || column_delete.is_some_and(|d| ts <= d)
                    || family_version_deletes.contains(&ts)
                    || version_deletes.contains(&ts)
            };
            // The newest write of each timestamp.
            let mut by_ts: BTreeMap<i64, &MCell> = BTreeMap::new();
            for c in mine
                .iter()
                .filter(|c| c.kind == Kind::Put && c.qualifier == q)
            {
                let e = by_ts.entry(c.ts).or_insert(c);
                if c.order > e.order {
                    *e = c;
                }
            }
            let candidates = by_ts
                .values()
                .rev()
                .filter(|c| !masked(c.ts))
                .filter(|c| c.ts >= min_ts && c.ts < max_ts)
                .take(cap);
            for (i, c) in candidates.enumerate() {
                let expired = fam
                    .ttl_ms
                    .is_some_and(|ttl| c.ts < self.now.saturating_sub(ttl));
                if (i as u32) < fam.min_versions || !expired {
                    out.push((*c).clone());
                }
            }
        }
        out
    }

    fn all_cells(&self) -> impl Iterator<Item = &MCell> + Clone {
        self.files.iter().chain(self.mem.iter())
    }

    fn read_row(&self, row: &'static str, spec: &ReadSpec<'_>) -> Vec<VCell> {
        let mut out = Vec::new();
        for fam in &self.fams {
            if !spec.wants_family(fam.name) {
                continue;
            }
            for c in self.resolve(
                self.all_cells(),
                row,
                fam,
                spec.min_ts,
                spec.max_ts,
                spec.max_versions,
            ) {
                if spec.wants(c.family, c.qualifier) {
                    out.push(vcell(&c));
                }
            }
        }
        out
    }

    /// The newest visible version of a column.
    fn newest(&self, row: &'static str, family: &str, qualifier: &str) -> Option<MCell> {
        let fam = self.fam(family);
        self.resolve(self.all_cells(), row, fam, i64::MIN, i64::MAX, 1)
            .into_iter()
            .find(|c| c.qualifier == qualifier)
    }

    /// "Now" for a server-stamped write (the region's `stamp_now`).
    fn stamp_now(&self) -> i64 {
        self.now.max(self.floor)
    }

    /// An increment or append stamped `ts`: a little ahead of the clock
    /// lifts the floor (the region's `lift_stamp_floor`).
    fn lift(&mut self, ts: i64) {
        if ts > self.now && ts - self.now <= 1_000 {
            self.floor = self.floor.max(ts);
        }
    }

    fn mutate(&mut self, row: &'static str, changes: &[Change]) {
        let now = self.stamp_now();
        // "Delete the newest version" resolves against the state before the
        // mutation.
        let mut cells: Vec<MCell> = Vec::new();
        let order = self.next_order;
        self.next_order += 1;
        let cell = |family, qualifier, ts, kind, value: Bytes| MCell {
            row,
            family,
            qualifier,
            ts,
            kind,
            value,
            order,
        };
        // i64::MAX is LATEST_TIMESTAMP: the same as no timestamp.
        let latest = |t: Option<i64>| t.filter(|&t| t != i64::MAX);
        for ch in changes {
            match *ch {
                Change::Put(f, q, t, v) => {
                    let t = latest(t);
                    cells.push(cell(f, q, t.unwrap_or(now), Kind::Put, v.bytes()))
                }
                Change::DeleteVersion(f, q, t) => {
                    let t =
                        latest(t).unwrap_or_else(|| self.newest(row, f, q).map_or(now, |c| c.ts));
                    cells.push(cell(f, q, t, Kind::Delete, Bytes::new()))
                }
                Change::DeleteColumn(f, q, t) => cells.push(cell(
                    f,
                    q,
                    latest(t).unwrap_or(now),
                    Kind::DeleteColumn,
                    Bytes::new(),
                )),
                Change::DeleteFamily(f, t) => cells.push(cell(
                    f,
                    "",
                    latest(t).unwrap_or(now),
                    Kind::DeleteFamily,
                    Bytes::new(),
                )),
                Change::DeleteFamilyVersion(f, t) => {
                    let t = latest(Some(t)).unwrap_or(now);
                    cells.push(cell(f, "", t, Kind::DeleteFamilyVersion, Bytes::new()))
                }
                Change::DeleteRow(t) => {
                    for f in FAMS {
                        cells.push(cell(
                            f,
                            "",
                            latest(t).unwrap_or(now),
                            Kind::DeleteFamily,
                            Bytes::new(),
                        ));
                    }
                }
            }
        }
        // Same column, timestamp and kind twice in one mutation: the later wins.
        let mut unique: Vec<MCell> = Vec::new();
        for c in cells {
            match unique.iter_mut().find(|u| {
                u.family == c.family
                    && u.qualifier == c.qualifier
                    && u.ts == c.ts
                    && u.kind == c.kind
            }) {
                Some(u) => *u = c,
                None => unique.push(c),
            }
        }
        self.mem.extend(unique);
    }

    fn increment(
        &mut self,
        row: &'static str,
        cols: &[(&'static str, &'static str, i64)],
    ) -> Result<Vec<i64>, String> {
        let mut puts = Vec::new();
        let mut out = Vec::new();
        let now = self.stamp_now();
        for &(f, q, delta) in cols {
            let (old, ts) = match self.newest(row, f, q) {
                None => (0, now),
                Some(c) => {
                    let bytes: [u8; 8] = c.value[..]
                        .try_into()
                        .map_err(|_| format!("{f}:{q} holds {} bytes", c.value.len()))?;
                    (
                        i64::from_be_bytes(bytes),
                        now.max(c.ts.saturating_add(1)).min(i64::MAX - 1),
                    )
                }
            };
            self.lift(ts);
            let new = old.checked_add(delta).ok_or("overflow")?;
            out.push(new);
            puts.push(Change::Put(f, q, Some(ts), Val::N(new)));
        }
        self.mutate(row, &puts);
        Ok(out)
    }

    fn append(
        &mut self,
        row: &'static str,
        cols: &[(&'static str, &'static str, Val)],
    ) -> Vec<Bytes> {
        let mut out = Vec::new();
        let mut values = Vec::new();
        let now = self.stamp_now();
        for &(f, q, suffix) in cols {
            let (mut value, ts) = match self.newest(row, f, q) {
                None => (Vec::new(), now),
                Some(c) => (
                    c.value.to_vec(),
                    now.max(c.ts.saturating_add(1)).min(i64::MAX - 1),
                ),
            };
            self.lift(ts);
            value.extend_from_slice(&suffix.bytes());
            let value = Bytes::from(value);
            out.push(value.clone());
            values.push((f, q, ts, value));
        }
        // Values are not `Val`s; write the cells directly.
        let order = self.next_order;
        self.next_order += 1;
        for (f, q, ts, value) in values {
            self.mem.push(MCell {
                row,
                family: f,
                qualifier: q,
                ts,
                kind: Kind::Put,
                value,
                order,
            });
        }
        out
    }

    fn check_and_mutate(
        &mut self,
        row: &'static str,
        family: &str,
        qualifier: &str,
        op: CompareOp,
        value: Val,
        changes: &[Change],
    ) -> bool {
        let current = self.newest(row, family, qualifier);
        if !compare_passes(op, current.as_ref().map(|c| &c.value[..]), &value.bytes()) {
            return false;
        }
        // Unstamped puts no earlier than the checked version (HBase).
        let floor = current.map_or(i64::MIN, |c| c.ts);
        let changes: Vec<Change> = if floor > self.stamp_now() {
            changes
                .iter()
                .map(|ch| match ch {
                    Change::Put(f, q, t, v) if t.is_none_or(|t| t == i64::MAX) => {
                        Change::Put(f, q, Some(floor), *v)
                    }
                    other => other.clone(),
                })
                .collect()
        } else {
            changes.to_vec()
        };
        self.mutate(row, &changes);
        true
    }

    /// The model's cells after the failing step, for failure messages.
    fn describe(&self) -> String {
        let list = |cells: &[MCell]| {
            cells
                .iter()
                .map(|c| match c.kind {
                    Kind::Put => format!("    #{} {:?}", c.order, vcell(c)),
                    k => format!(
                        "    #{} {}/{}:{}@{} {k:?}",
                        c.order, c.row, c.family, c.qualifier, c.ts
                    ),
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        format!(
            "model at now={}: files\n{}\n  memstore\n{}\n",
            self.now,
            list(&self.files),
            list(&self.mem)
        )
    }

    fn flush(&mut self) {
        let mem = std::mem::take(&mut self.mem);
        let kept = self.flush_filter(mem);
        self.files.extend(kept);
    }

    /// What a flush keeps of the memstore, as HBase's flush (and the
    /// region's `FlushFilter`): every marker; no put a marker in the
    /// memstore masks; per column the newest max-versions puts (a second
    /// put at one timestamp kept, uncounted), and of those none expired
    /// beyond the min-versions newest.
    fn flush_filter(&self, mem: Vec<MCell>) -> Vec<MCell> {
        let masked = |c: &MCell| {
            mem.iter().any(|m| {
                m.row == c.row
                    && m.family == c.family
                    && match m.kind {
                        Kind::DeleteFamily => c.ts <= m.ts,
                        Kind::DeleteFamilyVersion => c.ts == m.ts,
                        Kind::DeleteColumn => m.qualifier == c.qualifier && c.ts <= m.ts,
                        Kind::Delete => m.qualifier == c.qualifier && c.ts == m.ts,
                        Kind::Put => false,
                    }
            })
        };
        let mut puts: Vec<&MCell> = mem
            .iter()
            .filter(|c| matches!(c.kind, Kind::Put) && !masked(c))
            .collect();
        puts.sort_by(|a, b| {
            (a.row, a.family, a.qualifier)
                .cmp(&(b.row, b.family, b.qualifier))
                .then(b.ts.cmp(&a.ts))
                .then(b.order.cmp(&a.order))
        });
        let mut kept: Vec<MCell> = mem
            .iter()
            .filter(|c| !matches!(c.kind, Kind::Put))
            .cloned()
            .collect();
        let mut column: Option<(&str, &str, &str)> = None;
        let mut last_ts: Option<i64> = None;
        let mut count = 0u32;
        for c in puts {
            if column != Some((c.row, c.family, c.qualifier)) {
                column = Some((c.row, c.family, c.qualifier));
                last_ts = None;
                count = 0;
            }
            if last_ts == Some(c.ts) {
                kept.push(c.clone());
                continue;
            }
            last_ts = Some(c.ts);
            count += 1;
            let fam = self.fam(c.family);
            if count > fam.max_versions.max(1) {
                continue;
            }
            let expired = fam
                .ttl_ms
                .is_some_and(|ttl| c.ts < self.now.saturating_sub(ttl));
            if !expired || count <= fam.min_versions {
                kept.push(c.clone());
            }
        }
        kept
    }

    /// Rewrites the files of each family to what a read of the files alone
    /// returns (all time, family max versions, TTL now).
    fn major_compact(&mut self) {
        let mut kept = Vec::new();
        for fam in &self.fams {
            for row in ROWS {
                kept.extend(self.resolve(
                    self.files.iter(),
                    row,
                    fam,
                    i64::MIN,
                    i64::MAX,
                    fam.max_versions,
                ));
            }
        }
        self.files = kept;
    }

    fn scan(&self, s: &ScanSpec) -> Vec<(String, Vec<VCell>)> {
        let (min_ts, max_ts) = s.time.unwrap_or((i64::MIN, i64::MAX));
        let spec = ReadSpec {
            columns: &s.columns,
            min_ts,
            max_ts,
            max_versions: s.max_versions,
        };
        let mut rows: Vec<&'static str> = ROWS
            .iter()
            .copied()
            .filter(|r| match &s.range {
                RowRange::Bounds(start, stop) => {
                    (start.is_empty() || *r >= *start) && (stop.is_empty() || *r < *stop)
                }
                RowRange::Prefix(p) => r.starts_with(p),
            })
            .collect();
        if s.reverse {
            rows.reverse();
        }
        let mut out = Vec::new();
        let mut count = 0;
        for r in rows {
            if s.limit > 0 && count >= s.limit {
                break;
            }
            let cells = self.read_row(r, &spec);
            if cells.is_empty() {
                continue;
            }
            count += 1;
            if s.batch == 0 || cells.len() <= s.batch {
                out.push((r.to_string(), cells));
            } else {
                for chunk in cells.chunks(s.batch) {
                    out.push((r.to_string(), chunk.to_vec()));
                }
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------
// The engine side
// ---------------------------------------------------------------------------

struct Engine {
    setup: Setup,
    dir: tempfile::TempDir,
    bucket: Bucket,
    clock: ManualClock,
    region: Option<Region>,
    wal: Option<Wal>,
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn to_columns(cols: &Cols) -> Columns {
    let mut c = Columns::all();
    for (f, qs) in cols {
        c.families.insert(
            b(f),
            qs.as_ref().map(|qs| qs.iter().map(|q| b(q)).collect()),
        );
    }
    c
}

fn to_time(t: Option<(i64, i64)>) -> TimeRange {
    t.map_or(TimeRange::ALL, |(min, max)| TimeRange { min, max })
}

fn to_row_op(c: &Change) -> RowOp {
    match *c {
        Change::Put(f, q, t, v) => RowOp::Put {
            family: b(f),
            qualifier: b(q),
            timestamp: t,
            value: v.bytes(),
        },
        Change::DeleteVersion(f, q, t) => RowOp::DeleteVersion {
            family: b(f),
            qualifier: b(q),
            timestamp: t,
        },
        Change::DeleteColumn(f, q, t) => RowOp::DeleteColumn {
            family: b(f),
            qualifier: b(q),
            timestamp: t,
        },
        Change::DeleteFamily(f, t) => RowOp::DeleteFamily {
            family: b(f),
            timestamp: t,
        },
        Change::DeleteFamilyVersion(f, t) => RowOp::DeleteFamilyVersion {
            family: b(f),
            timestamp: t,
        },
        Change::DeleteRow(t) => RowOp::DeleteRow { timestamp: t },
    }
}

fn to_mutation(row: &str, changes: &[Change]) -> RowMutation {
    RowMutation {
        row: b(row),
        ops: changes.iter().map(to_row_op).collect(),
    }
}

fn engine_cells(cells: &[shoal_storage::cell::Cell]) -> Result<Vec<VCell>, String> {
    cells
        .iter()
        .map(|c| {
            if c.kind != shoal_storage::cell::CellType::Put {
                return Err(format!("a read returned a {:?} cell: {c:?}", c.kind));
            }
            Ok(VCell {
                row: String::from_utf8_lossy(&c.row).into_owned(),
                family: String::from_utf8_lossy(&c.family).into_owned(),
                qualifier: String::from_utf8_lossy(&c.qualifier).into_owned(),
                ts: c.timestamp,
                value: c.value.clone(),
            })
        })
        .collect()
}

impl Engine {
    fn new(setup: &Setup) -> Engine {
        Engine {
            setup: setup.clone(),
            dir: tempfile::tempdir().expect("tempdir"),
            bucket: Bucket::memory(),
            clock: ManualClock::new(setup.base),
            region: None,
            wal: None,
        }
    }

    fn config(&self) -> RegionConfig {
        let s = &self.setup;
        let sst = SstWriterOptions {
            bloom: s.bloom,
            ..if s.small_blocks {
                SstWriterOptions {
                    block_size: 256,
                    restart_interval: 2,
                    index_block_size: 256,
                    ..SstWriterOptions::default()
                }
            } else {
                SstWriterOptions::default()
            }
        };
        let cf = FamilyConfig {
            sst: sst.clone(),
            in_memory_compaction: s.imc.0,
            ..FamilyConfig::new("cf").with_max_versions(s.cf_max_versions)
        };
        let f2 = FamilyConfig {
            retention: Retention {
                keep_deleted: Default::default(),
                max_versions: s.f2_max_versions,
                min_versions: s.f2_min_versions,
                ttl_ms: s.f2_ttl_ms,
            },
            sst,
            in_memory_compaction: s.imc.0,
            ..FamilyConfig::new("f2")
        };
        let mut config = RegionConfig::new("model-r1", "data/3f/t1/model-r1", vec![cf, f2]);
        config.in_memory_flush_size = s.imc.1;
        config.pipeline_max_segments = s.imc.2;
        if s.background {
            config.flush_size = 600;
            config.compaction_trigger_files = 3;
        } else {
            // Flushes and compactions only when the test asks (deterministic
            // runs, and the model knows which cells are in files).
            config.compaction_trigger_files = usize::MAX;
        }
        config.compaction = CompactionPolicy {
            min_files: self.setup.minor_min_files,
            max_files: 10,
            ratio: self.setup.minor_ratio,
        };
        config
    }

    async fn open(&mut self) -> Result<(), String> {
        let options = if self.setup.wal_on_object_store {
            WalOptions::object(self.bucket.clone(), "wal/s1")
        } else {
            WalOptions::local(self.dir.path().join("wal"))
        };
        let wal = Wal::open(options)
            .await
            .map_err(|e| format!("open WAL: {e}"))?;
        let mut env = RegionEnv::new(self.bucket.clone(), wal.clone());
        // A block cache with a small row cache, as a server reads: whole-row
        // gets fill it, later gets and every write must agree with the model.
        let cache = shoal_storage::cache::BlockCache::new(
            shoal_storage::cache::CacheConfig {
                l1_data_bytes: 256 << 10,
                l1_rows_bytes: 16 << 10,
                shards: 2,
                ..Default::default()
            },
            env.fetcher.clone(),
            None,
        );
        env = env.with_cache(cache);
        env.clock = Arc::new(self.clock.clone());
        let region = Region::open(self.config(), env)
            .await
            .map_err(|e| format!("open region: {e}"))?;
        self.region = Some(region);
        self.wal = Some(wal);
        Ok(())
    }

    fn region(&self) -> &Region {
        self.region.as_ref().expect("open")
    }

    async fn scan(&self, scan: Scan) -> Result<Vec<(String, Vec<VCell>)>, String> {
        let mut scanner = self
            .region()
            .scanner(scan)
            .map_err(|e| format!("scanner: {e}"))?;
        let mut out = Vec::new();
        while let Some(r) = scanner.next().await.map_err(|e| format!("scan: {e}"))? {
            let cells = engine_cells(&r.cells)?;
            if let Some(c) = cells.iter().find(|c| c.row.as_bytes() != &r.row[..]) {
                return Err(format!(
                    "row {:?} returned a cell of another row: {c:?}",
                    r.row
                ));
            }
            out.push((String::from_utf8_lossy(&r.row).into_owned(), cells));
        }
        Ok(out)
    }
}

fn to_scan(s: &ScanSpec) -> Scan {
    let base = match s.range {
        RowRange::Bounds(start, stop) => Scan::range(b(start), b(stop)),
        RowRange::Prefix(p) => Scan::prefix(b(p)),
    };
    Scan {
        columns: to_columns(&s.columns),
        time_range: to_time(s.time),
        max_versions: s.max_versions,
        limit: s.limit,
        batch: s.batch,
        reverse: s.reverse,
        ..base
    }
}

fn full_scan() -> ScanSpec {
    ScanSpec {
        range: RowRange::Bounds("", ""),
        reverse: false,
        limit: 0,
        batch: 0,
        columns: Vec::new(),
        time: None,
        max_versions: u32::MAX,
    }
}

fn mismatch<T: fmt::Debug>(what: &str, model: &T, engine: &T) -> String {
    format!("{what}: model and engine disagree\n  model:  {model:?}\n  engine: {engine:?}")
}

fn check_eq<T: fmt::Debug + PartialEq>(what: &str, model: T, engine: T) -> Result<(), String> {
    if model == engine {
        Ok(())
    } else {
        Err(mismatch(what, &model, &engine))
    }
}

/// Runs one step on both sides; `Err` describes a disagreement or a failure.
async fn step(engine: &mut Engine, model: &mut Model, op: &Op) -> Result<(), String> {
    let mut full_check = false;
    match op {
        Op::Mutate(row, changes) => {
            engine
                .region()
                .mutate(to_mutation(row, changes))
                .await
                .map_err(|e| format!("mutate failed: {e}"))?;
            model.mutate(row, changes);
        }
        Op::Increment(row, cols) => {
            let columns: Vec<(Bytes, Bytes, i64)> =
                cols.iter().map(|(f, q, d)| (b(f), b(q), *d)).collect();
            let got = engine.region().increment(b(row), &columns).await;
            let want = model.increment(row, cols);
            match (&want, &got) {
                (Ok(w), Ok(g)) => check_eq("increment result", w, g)?,
                (Err(_), Err(_)) => {}
                _ => {
                    return Err(format!(
                        "increment: model {want:?}, engine {:?}",
                        got.map_err(|e| e.to_string())
                    ));
                }
            }
        }
        Op::Append(row, cols) => {
            let columns: Vec<(Bytes, Bytes, Bytes)> = cols
                .iter()
                .map(|(f, q, v)| (b(f), b(q), v.bytes()))
                .collect();
            let got = engine
                .region()
                .append(b(row), &columns)
                .await
                .map_err(|e| format!("append failed: {e}"))?;
            let want = model.append(row, cols);
            check_eq("append result", want, got)?;
        }
        Op::CheckAndMutate {
            row,
            family,
            qualifier,
            op,
            value,
            changes,
        } => {
            let got = engine
                .region()
                .check_and_mutate(CheckAndMutate {
                    time_range: Default::default(),
                    filter: None,
                    family: b(family),
                    qualifier: b(qualifier),
                    op: *op,
                    value: value.bytes(),
                    mutation: to_mutation(row, changes),
                })
                .await
                .map_err(|e| format!("check_and_mutate failed: {e}"))?;
            let want = model.check_and_mutate(row, family, qualifier, *op, *value, changes);
            check_eq("check_and_mutate result", want, got)?;
        }
        Op::Get {
            row,
            columns,
            time,
            max_versions,
        } => {
            let get = Get {
                per_family: Default::default(),
                row: b(row),
                columns: to_columns(columns),
                time_range: to_time(*time),
                max_versions: *max_versions,
                filter: None,
            };
            let got = engine
                .region()
                .get(&get)
                .await
                .map_err(|e| format!("get failed: {e}"))?;
            let got = engine_cells(&got.cells)?;
            let (min_ts, max_ts) = time.unwrap_or((i64::MIN, i64::MAX));
            let want = model.read_row(
                row,
                &ReadSpec {
                    columns,
                    min_ts,
                    max_ts,
                    max_versions: *max_versions,
                },
            );
            check_eq("get", want, got)?;
        }
        Op::Scan(s) => {
            let got = engine.scan(to_scan(s)).await?;
            check_eq("scan", model.scan(s), got)?;
        }
        Op::Flush => {
            engine
                .region()
                .flush()
                .await
                .map_err(|e| format!("flush failed: {e}"))?;
            model.flush();
            full_check = true;
        }
        Op::MinorCompact => {
            engine
                .region()
                .compact(false)
                .await
                .map_err(|e| format!("minor compaction failed: {e}"))?;
            full_check = true;
        }
        Op::MajorCompact => {
            engine
                .region()
                .compact(true)
                .await
                .map_err(|e| format!("major compaction failed: {e}"))?;
            model.major_compact();
            full_check = true;
        }
        Op::Advance(ms) => {
            engine.clock.advance(*ms);
            model.now += ms;
        }
        Op::Reopen => {
            let region = engine.region.take().expect("open");
            region
                .close()
                .await
                .map_err(|e| format!("close failed: {e}"))?;
            drop(region);
            let wal = engine.wal.take().expect("open");
            wal.close()
                .await
                .map_err(|e| format!("WAL close failed: {e}"))?;
            drop(wal);
            engine.open().await?;
            model.flush();
            // The stamp floor lives in the open region only.
            model.floor = 0;
            full_check = true;
        }
        Op::Crash => {
            drop(engine.region.take());
            drop(engine.wal.take());
            engine.open().await?;
            model.floor = 0;
            full_check = true;
        }
        Op::Gc => {
            engine
                .region()
                .collect_garbage(&GcOptions {
                    grace: Duration::ZERO,
                    now: SystemTime::now() + Duration::from_secs(86_400),
                })
                .await
                .map_err(|e| format!("GC failed: {e}"))?;
            full_check = true;
        }
    }
    if full_check {
        let s = full_scan();
        let got = engine.scan(to_scan(&s)).await?;
        check_eq(
            "full scan (all versions) after the step",
            model.scan(&s),
            got,
        )?;
    }
    Ok(())
}

async fn run(setup: &Setup, ops: &[Op]) -> Result<(), String> {
    let mut engine = Engine::new(setup);
    let mut model = Model::new(setup);
    engine.open().await?;
    let listing = || {
        ops.iter()
            .enumerate()
            .map(|(i, op)| format!("  {i:3}: {op:?}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (i, op) in ops.iter().enumerate() {
        if let Err(e) = step(&mut engine, &mut model, op).await {
            return Err(format!(
                "step {i} ({op:?}) with {setup:?}:\n{e}\n{}ops:\n{}",
                model.describe(),
                listing()
            ));
        }
    }
    let s = full_scan();
    let got = engine.scan(to_scan(&s)).await?;
    if let Err(e) = check_eq("final full scan", model.scan(&s), got) {
        return Err(format!(
            "end with {setup:?}:\n{e}\n{}ops:\n{}",
            model.describe(),
            listing()
        ));
    }
    Ok(())
}

fn run_case(setup: &Setup, ops: &[Op]) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(run(setup, ops)).map_err(TestCaseError::fail)
}

fn cases(default: u32) -> u32 {
    std::env::var("SHOAL_MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Longest op sequence: `default`, or `SHOAL_MODEL_MAX_OPS` for long manual runs.
fn max_ops(default: usize) -> usize {
    std::env::var("SHOAL_MODEL_MAX_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config(default_cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default_cases),
        // No regression files in the source tree; failures print the case.
        failure_persistence: None,
        // A case takes milliseconds: shrink all the way to a short sequence.
        max_shrink_iters: 20_000,
        ..ProptestConfig::default()
    }
}

/// Mostly writes and reads, with occasional flushes and compactions.
const DATA_HEAVY: Weights = Weights {
    mutate: 12,
    rmw: 2,
    read: 5,
    flush: 2,
    compact: 1,
    advance: 2,
    major: 1,
    reopen: 1,
    crash: 1,
    gc: 1,
};

/// Fewer ops per structural step: flushes, compactions (markers dropped while
/// masked puts sit in the memstore), clock moves past TTLs, reopen and crash.
const STRUCTURE_HEAVY: Weights = Weights {
    mutate: 8,
    rmw: 2,
    read: 4,
    flush: 4,
    compact: 3,
    advance: 4,
    major: 3,
    reopen: 1,
    crash: 1,
    gc: 1,
};

/// Background flushes and minor compactions (a tiny flush size, a low
/// compaction trigger) interleaved with writes and reads. The model cannot know
/// which cells a background flush moved to files, so this profile has no major
/// compactions; nor crashes or zero-grace GCs, which a background task still
/// holding the old region would turn into two live owners of one WAL directory
/// or a GC of a compaction's uncommitted output (neither can happen for real).
const BACKGROUND: Weights = Weights {
    mutate: 12,
    rmw: 2,
    read: 5,
    flush: 1,
    compact: 1,
    advance: 2,
    major: 0,
    reopen: 1,
    crash: 0,
    gc: 0,
};

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn region_matches_model((setup, ops) in case(DATA_HEAVY, max_ops(60), false)) {
        run_case(&setup, &ops)?;
    }
}

proptest! {
    #![proptest_config(config(160))]

    #[test]
    fn region_matches_model_across_flushes_and_compactions(
        (setup, ops) in case(STRUCTURE_HEAVY, max_ops(60), false)
    ) {
        run_case(&setup, &ops)?;
    }
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn region_matches_model_with_background_flushes_and_compactions(
        (setup, ops) in case(BACKGROUND, max_ops(80), true)
    ) {
        run_case(&setup, &ops)?;
    }
}
