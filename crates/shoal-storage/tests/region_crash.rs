//! Crash test of a whole region: kill -9 while several tasks write, increment, flush and
//! compact; after each kill every acknowledged write is present and no write is half
//! applied.
//!
//! The test binary re-executes itself ([`child::Child`]): the `#[ignore]`d
//! `region_crash_child` test, run only when `SHOAL_REGION_CRASH_DIR` is set, opens a
//! local-directory bucket, the WAL (local directory, or objects in the same bucket under
//! `wal/server-1`) and a region with a small flush size and compaction trigger, then runs
//!
//! - `WRITERS` writer tasks. Task `t`'s `i`-th write has the id `base + i·WRITERS + t`
//!   and goes to one of the task's own rows, chosen from the id; it puts, deletes or
//!   leaves alone each of `cf:a`, `cf:b` and `meta:c` (at least two columns, both
//!   families; chosen from the id), every put at timestamp = id with a value derived
//!   from (row, column, id), every delete a `DeleteColumn` at timestamp = id. After
//!   `mutate` returns `Ok` it prints `W t i`.
//! - `COUNTERS` counter tasks, each incrementing `cf:n` and `meta:n` of its row by 1 in
//!   one `increment` and printing `I k value`.
//! - a flusher, calling `flush()` every few milliseconds and now and then a minor or
//!   major compaction, printing `FLUSH` / `COMPACT` before and `S flushes compactions`
//!   (the region's counters) after. Background flushes and minor compactions also run.
//!
//! The parent reads those lines, SIGKILLs the child after a random number of
//! acknowledgements, or just after a flush or compaction started, or while it is still
//! opening (`OPENING`, `WAL-OPEN`, `READY`), drains the rest, reopens the WAL and the
//! region in-process and checks the region against an exact model. Since a task
//! issues a write only after the previous one was acknowledged, the writes of a task that
//! survived must be exactly its first `n` writes, `n` being the number acknowledged or
//! one more; so every writer row must equal the model of the previous cycles plus the
//! task's first `n` writes of this cycle — which is "every acknowledged write is present"
//! and "nothing is half applied" at once (a write's columns are all there or none). A
//! counter must hold the last acknowledged value or one more, equal in both families.
//! What the parent saw becomes the model for the next cycle (recovered state must be
//! stable), and the next child continues with higher ids. Scan, reverse scan and gets
//! must agree; the WAL and the region must always reopen, and the manifest must load.
//! Then the parent sometimes runs GC with no grace period (deleting what killed flushes
//! and compactions left behind, and old manifests), and closes cleanly or not (with or
//! without a flush, a major compaction, or closing the WAL). A last reopen checks the
//! final state once more.
//!
//! Both WAL backends run `SHOAL_CRASH_CYCLES` cycles each (default 25);
//! `SHOAL_CRASH_SEED` sets the seed.

use bytes::Bytes;
use rand::{Rng, SeedableRng};
use shoal_storage::manifest::{GcOptions, ManifestStore};
use shoal_storage::object::{Bucket, ObjectStoreConfig};
use shoal_storage::region::{
    CompactionPolicy, FamilyConfig, Get, Region, RegionConfig, RegionEnv, RowMutation, RowOp,
    RowResult, Scan,
};
use shoal_storage::wal::{Wal, WalOptions};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

mod support;

use support::child;

const CHILD_TEST: &str = "region_crash_child";
const ENV_DIR: &str = "SHOAL_REGION_CRASH_DIR";
const ENV_WAL: &str = "SHOAL_REGION_CRASH_WAL";
const ENV_BASE: &str = "SHOAL_REGION_CRASH_BASE";
/// Write ids of cycle `c` start at `(c + 1) * CYCLE_IDS`.
const CYCLE_IDS: u64 = 10_000_000;
const WRITERS: u64 = 4;
const ROWS_PER_WRITER: u64 = 12;
const COUNTERS: u64 = 2;
const OBJECT_WAL_PREFIX: &str = "wal/server-1";
const REGION_ID: &str = "crash-r1";
const REGION_DIR: &str = "data/t1/crash-r1";

/// The writer columns, in model order.
const COLUMNS: [(&str, &str); 3] = [("cf", "a"), ("cf", "b"), ("meta", "c")];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Skip,
    Put,
    Delete,
}

/// Newest write id per column of a writer row (`None`: absent).
type RowState = [Option<u64>; 3];

fn mix(mut x: u64) -> u64 {
    // splitmix64
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn write_id(base: u64, task: u64, i: u64) -> u64 {
    base + i * WRITERS + task
}

fn task_of(id: u64) -> u64 {
    id % CYCLE_IDS % WRITERS
}

fn writer_row(task: u64, j: u64) -> String {
    format!("w{task}-{j:02}")
}

/// The row write `id` goes to (one of its task's rows).
fn row_of(id: u64) -> String {
    writer_row(task_of(id), mix(id) % ROWS_PER_WRITER)
}

fn counter_row(k: u64) -> String {
    format!("ctr-{k}")
}

/// What write `id` does to each column: `meta:c` always, at least one of `cf:a`/`cf:b`.
fn ops_of(id: u64) -> [Op; 3] {
    let h = mix(id ^ 0x5EED_0F0F);
    let pick = |bits: u64| match bits & 7 {
        0 => Op::Skip,
        1 => Op::Delete,
        _ => Op::Put,
    };
    let mut a = pick(h >> 3);
    let b = pick(h >> 6);
    if a == Op::Skip && b == Op::Skip {
        a = Op::Put;
    }
    let c = if h & 7 == 0 { Op::Delete } else { Op::Put };
    [a, b, c]
}

/// The value write `id` puts in column `col` of `row`: self-describing, 0–300 bytes of
/// filler so flushes come often.
fn value(row: &str, col: usize, id: u64) -> Bytes {
    let (f, q) = COLUMNS[col];
    let mut v = format!("{row}/{f}:{q}/{id}/").into_bytes();
    let len = (mix(id ^ col as u64) % 300) as usize;
    v.extend((0..len).map(|k| (id as usize).wrapping_add(k * 7) as u8));
    Bytes::from(v)
}

fn mutation_of(id: u64) -> RowMutation {
    let row = row_of(id);
    let mut m = RowMutation::new(Bytes::from(row.clone()));
    for (col, op) in ops_of(id).into_iter().enumerate() {
        let (f, q) = COLUMNS[col];
        m = match op {
            Op::Skip => m,
            Op::Put => m.put_at(f, q, id as i64, value(&row, col, id)),
            Op::Delete => m.op(RowOp::DeleteColumn {
                family: Bytes::from_static(f.as_bytes()),
                qualifier: Bytes::from_static(q.as_bytes()),
                timestamp: Some(id as i64),
            }),
        };
    }
    m
}

fn apply(state: &mut RowState, id: u64) {
    for (col, op) in ops_of(id).into_iter().enumerate() {
        match op {
            Op::Skip => {}
            Op::Put => state[col] = Some(id),
            Op::Delete => state[col] = None,
        }
    }
}

fn region_config() -> RegionConfig {
    RegionConfig {
        flush_size: 256 << 10,
        compaction_trigger_files: 3,
        compaction: CompactionPolicy {
            min_files: 2,
            ..CompactionPolicy::default()
        },
        ..RegionConfig::new(
            REGION_ID,
            REGION_DIR,
            vec![
                FamilyConfig::new("cf").with_max_versions(3),
                FamilyConfig::new("meta"),
            ],
        )
    }
}

fn wal_options(dir: &Path, backend: &str, bucket: &Bucket) -> WalOptions {
    match backend {
        "local" => WalOptions {
            segment_bytes: 64 << 10,
            ..WalOptions::local(dir.join("wal"))
        },
        "object" => WalOptions::object(bucket.clone(), OBJECT_WAL_PREFIX),
        other => panic!("unknown WAL backend {other:?}"),
    }
}

async fn open_bucket(dir: &Path) -> Bucket {
    Bucket::open(&ObjectStoreConfig::local(dir.join("bucket")))
        .await
        .expect("open local-directory bucket")
}

fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_fmt(line).expect("stdout");
    out.write_all(b"\n").expect("stdout");
    out.flush().expect("stdout");
}

/// The child: writes until killed. Runs only when the parent sets the env vars.
#[test]
#[ignore = "run by the region_crash_* tests as a child process"]
fn region_crash_child() {
    let (Ok(dir), Ok(backend), Ok(base)) = (
        std::env::var(ENV_DIR),
        std::env::var(ENV_WAL),
        std::env::var(ENV_BASE),
    ) else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let base: u64 = base.parse().expect("base id");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        say(format_args!("OPENING"));
        let bucket = open_bucket(&dir).await;
        let wal = Wal::open(wal_options(&dir, &backend, &bucket))
            .await
            .expect("child: open WAL");
        say(format_args!("WAL-OPEN"));
        let region = Region::open(region_config(), RegionEnv::new(bucket, wal.clone()))
            .await
            .expect("child: open region");
        say(format_args!("READY"));
        let mut tasks = Vec::new();
        for t in 0..WRITERS {
            let region = region.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0.. {
                    let id = write_id(base, t, i);
                    region
                        .mutate(mutation_of(id))
                        .await
                        .unwrap_or_else(|e| panic!("child: write {id}: {e}"));
                    say(format_args!("W {t} {i}"));
                }
            }));
        }
        for k in 0..COUNTERS {
            let region = region.clone();
            tasks.push(tokio::spawn(async move {
                let row = Bytes::from(counter_row(k));
                let columns = [
                    (Bytes::from_static(b"cf"), Bytes::from_static(b"n"), 1),
                    (Bytes::from_static(b"meta"), Bytes::from_static(b"n"), 1),
                ];
                loop {
                    let v = region
                        .increment(row.clone(), &columns)
                        .await
                        .unwrap_or_else(|e| panic!("child: increment {k}: {e}"));
                    assert_eq!(v[0], v[1], "child: counter {k} differs between families");
                    say(format_args!("I {k} {}", v[0]));
                }
            }));
        }
        {
            let region = region.clone();
            tasks.push(tokio::spawn(async move {
                let mut rng = rand::rngs::StdRng::seed_from_u64(base);
                loop {
                    tokio::time::sleep(Duration::from_millis(rng.random_range(2..30))).await;
                    say(format_args!("FLUSH"));
                    region.flush().await.expect("child: flush");
                    let major = match rng.random_range(0..10) {
                        0 => Some(true),
                        1 | 2 => Some(false),
                        _ => None,
                    };
                    if major.is_some() {
                        say(format_args!("COMPACT"));
                    }
                    match major {
                        Some(true) => {
                            region.compact(true).await.expect("child: major compaction");
                        }
                        Some(false) => {
                            region
                                .compact(false)
                                .await
                                .expect("child: minor compaction");
                        }
                        None => {}
                    }
                    let (flushes, compactions) = region.counters();
                    say(format_args!("S {flushes} {compactions}"));
                }
            }));
        }
        for t in tasks {
            t.await.expect("child task");
        }
    });
}

/// A line the child printed, without the test harness's `test <name> ... ` that precedes
/// the first one.
fn own_line(line: String) -> String {
    match line.strip_prefix(&format!("test {CHILD_TEST} ... ")) {
        Some(rest) => rest.to_owned(),
        None => line,
    }
}

/// What one cycle's child acknowledged.
#[derive(Debug, Default)]
struct Acks {
    /// Per writer task: how many writes were acknowledged (they are `0..n`).
    writes: Vec<u64>,
    /// Per counter: the values acknowledged, in order.
    counters: Vec<Vec<i64>>,
    ready: bool,
    /// The flusher's last `S` line.
    flushes: u64,
    compactions: u64,
}

impl Acks {
    fn parse(lines: &[String], context: &str) -> Acks {
        let mut acks = Acks {
            writes: vec![0; WRITERS as usize],
            counters: vec![Vec::new(); COUNTERS as usize],
            ..Acks::default()
        };
        for line in lines {
            let parts: Vec<&str> = line.split(' ').collect();
            let num = |k: usize| -> u64 {
                parts
                    .get(k)
                    .and_then(|p| p.parse().ok())
                    .unwrap_or_else(|| panic!("{context}: bad child line {line:?}"))
            };
            match parts[0] {
                "OPENING" | "WAL-OPEN" | "FLUSH" | "COMPACT" => {}
                "READY" => acks.ready = true,
                "W" => {
                    let (t, i) = (num(1) as usize, num(2));
                    assert_eq!(
                        acks.writes[t], i,
                        "{context}: writer {t} acknowledged write {i} out of order"
                    );
                    acks.writes[t] = i + 1;
                }
                "I" => {
                    let k = num(1) as usize;
                    let v: i64 = parts[2].parse().expect("counter value");
                    acks.counters[k].push(v);
                }
                "S" => {
                    acks.flushes = num(1);
                    acks.compactions = num(2);
                }
                // Anything else (the test harness's own output) is not ours.
                _ => {}
            }
        }
        acks
    }
}

/// What every cycle so far has left in the region, as seen after the last recovery.
#[derive(Debug, Default)]
struct Model {
    rows: BTreeMap<String, RowState>,
    counters: Vec<i64>,
}

/// The writer columns of `row` as a [`RowState`]; panics on a value that no write put
/// there, a delete marker, or an unknown column.
fn observed_row(row: &RowResult, context: &str) -> RowState {
    let name = String::from_utf8_lossy(&row.row).into_owned();
    let mut state: RowState = [None; 3];
    for c in &row.cells {
        let col = COLUMNS
            .iter()
            .position(|(f, q)| c.family == f.as_bytes() && c.qualifier == q.as_bytes())
            .unwrap_or_else(|| panic!("{context}: unexpected cell {c:?} in row {name}"));
        assert!(
            !c.kind.is_delete(),
            "{context}: a read returned a non-put cell {c:?}"
        );
        let id = u64::try_from(c.timestamp).expect("timestamp is a write id");
        assert_eq!(
            c.value,
            value(&name, col, id),
            "{context}: row {name} column {col} at ts {id} holds a value no write put there"
        );
        assert_eq!(
            row_of(id),
            name,
            "{context}: write {id} does not go to row {name}"
        );
        assert!(
            state[col].is_none(),
            "{context}: row {name} column {col} returned twice"
        );
        state[col] = Some(id);
    }
    state
}

fn counter_value(row: &RowResult, context: &str) -> i64 {
    let name = String::from_utf8_lossy(&row.row).into_owned();
    let read = |family: &[u8]| -> i64 {
        let v = row
            .value(family, b"n")
            .unwrap_or_else(|| panic!("{context}: counter {name} lacks a family: {row:?}"));
        i64::from_be_bytes(v[..].try_into().expect("8-byte counter"))
    };
    assert_eq!(
        row.cells.len(),
        2,
        "{context}: counter {name} has unexpected cells: {row:?}"
    );
    let (a, b) = (read(b"cf"), read(b"meta"));
    assert_eq!(
        a, b,
        "{context}: counter {name} half applied: cf:n = {a}, meta:n = {b}"
    );
    a
}

async fn scan_all(region: &Region, reverse: bool) -> Vec<RowResult> {
    let mut scanner = region
        .scanner(Scan {
            reverse,
            ..Scan::all()
        })
        .expect("scanner");
    let mut out = Vec::new();
    while let Some(r) = scanner.next().await.expect("scan") {
        out.push(r);
    }
    if reverse {
        out.reverse();
    }
    out
}

/// Checks the recovered region against the model plus this cycle's acknowledgements and
/// returns the new model.
async fn verify(
    region: &Region,
    model: &Model,
    base: Option<u64>,
    acks: &Acks,
    context: &str,
) -> Model {
    let rows = scan_all(region, false).await;
    let reversed = scan_all(region, true).await;
    assert_eq!(
        rows, reversed,
        "{context}: forward and reverse scans differ"
    );
    let mut next = Model {
        rows: BTreeMap::new(),
        counters: model.counters.clone(),
    };
    let mut observed: BTreeMap<String, RowState> = BTreeMap::new();
    for r in &rows {
        let name = String::from_utf8_lossy(&r.row).into_owned();
        let got = region.get(&Get::new(r.row.clone())).await.expect("get");
        assert_eq!(
            got.cells, r.cells,
            "{context}: get and scan of {name} differ"
        );
        if let Some(k) = name.strip_prefix("ctr-") {
            let k: usize = k.parse().expect("counter row");
            let v = counter_value(r, context);
            let prev = model.counters[k];
            let last = acks.counters[k].last().copied().unwrap_or(prev);
            for (n, &a) in acks.counters[k].iter().enumerate() {
                assert_eq!(
                    a,
                    prev + 1 + n as i64,
                    "{context}: counter {k}: the child's increments did not continue from {prev}: {:?}",
                    acks.counters[k]
                );
            }
            assert!(
                v == last || v == last + 1,
                "{context}: counter {k} recovered as {v}; last acknowledged {last} (before this cycle {prev})"
            );
            next.counters[k] = v;
        } else {
            assert!(
                observed
                    .insert(name.clone(), observed_row(r, context))
                    .is_none(),
                "{context}: row {name} returned twice"
            );
        }
    }
    for k in 0..COUNTERS as usize {
        let present = rows
            .iter()
            .any(|r| &r.row[..] == counter_row(k as u64).as_bytes());
        if !present {
            assert!(
                model.counters[k] == 0 && acks.counters[k].is_empty(),
                "{context}: counter {k} lost (was {}, acknowledged {:?})",
                model.counters[k],
                acks.counters[k].last()
            );
        }
    }

    for t in 0..WRITERS {
        let acked = acks.writes[t as usize];
        let task_rows: Vec<String> = (0..ROWS_PER_WRITER).map(|j| writer_row(t, j)).collect();
        // Candidates: the acknowledged writes, or one more (in flight, or acknowledged
        // but not yet printed, at the kill).
        let mut matched = None;
        let candidates: Vec<u64> = match base {
            Some(_) => vec![acked, acked + 1],
            None => vec![0],
        };
        let mut last_expected = BTreeMap::new();
        for n in candidates {
            let mut expected: BTreeMap<String, RowState> = task_rows
                .iter()
                .filter_map(|r| model.rows.get(r).map(|s| (r.clone(), *s)))
                .collect();
            if let Some(base) = base {
                for i in 0..n {
                    let id = write_id(base, t, i);
                    apply(expected.entry(row_of(id)).or_insert([None; 3]), id);
                }
            }
            expected.retain(|_, s| s.iter().any(Option::is_some));
            let got: BTreeMap<String, RowState> = task_rows
                .iter()
                .filter_map(|r| observed.get(r).map(|s| (r.clone(), *s)))
                .collect();
            if got == expected {
                matched = Some(got);
                break;
            }
            last_expected = expected;
        }
        let Some(got) = matched else {
            let got: BTreeMap<&String, &RowState> = task_rows
                .iter()
                .filter_map(|r| observed.get_key_value(r))
                .collect();
            let mut diff = String::new();
            for r in &task_rows {
                let (g, e) = (observed.get(r), last_expected.get(r));
                if g != e {
                    diff.push_str(&format!("\n  {r}: recovered {g:?}, expected {e:?}"));
                }
            }
            panic!(
                "{context}: writer {t} (acknowledged {acked} writes this cycle, ids from {base:?}) \
                 recovered a state that is not the model plus a prefix of its writes \
                 (row state = newest write id of cf:a, cf:b, meta:c; diff against the \
                 acknowledged + 1 expectation):{diff}\nrecovered: {got:?}"
            );
        };
        next.rows.extend(got);
    }
    let unknown: Vec<&String> = observed
        .keys()
        .filter(|r| !next.rows.contains_key(*r))
        .collect();
    assert!(unknown.is_empty(), "{context}: unexpected rows {unknown:?}");
    next
}

/// When the parent kills the child.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    /// Once it printed the marker line this many times.
    Line(&'static str, usize),
    /// Once it acknowledged this many writes and increments.
    Acks(usize),
}

struct Opened {
    wal: Wal,
    region: Region,
}

async fn reopen(dir: &Path, backend: &str, context: &str) -> (Opened, u64) {
    let bucket = open_bucket(dir).await;
    // The manifest must load (read-only) before the region fences it.
    ManifestStore::new(bucket.clone(), REGION_DIR)
        .load_latest()
        .await
        .unwrap_or_else(|e| panic!("{context}: manifest does not load: {e}"));
    let wal = Wal::open(wal_options(dir, backend, &bucket))
        .await
        .unwrap_or_else(|e| panic!("{context}: WAL does not reopen: {e}"));
    let tails_cut = wal.metrics().corrupt_tails_cut;
    let region = Region::open(region_config(), RegionEnv::new(bucket, wal.clone()))
        .await
        .unwrap_or_else(|e| panic!("{context}: region does not reopen: {e}"));
    (Opened { wal, region }, tails_cut)
}

fn crash_cycles(backend: &str) {
    let cycles: u64 = std::env::var("SHOAL_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25);
    let seed: u64 = std::env::var("SHOAL_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(rand::random);
    println!("region crash test ({backend} WAL): {cycles} cycles, SHOAL_CRASH_SEED={seed}");
    let started = Instant::now();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().to_path_buf();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");

    let mut model = Model {
        counters: vec![0; COUNTERS as usize],
        ..Model::default()
    };
    let (mut total_writes, mut total_increments) = (0u64, 0u64);
    let (mut flushes, mut compactions, mut tails_cut, mut killed_opening) = (0, 0, 0, 0);
    let (mut gc_ssts, mut gc_manifests) = (0, 0);
    for cycle in 0..cycles {
        let context = format!("{backend} WAL, cycle {cycle} (SHOAL_CRASH_SEED={seed})");
        let base = (cycle + 1) * CYCLE_IDS;
        let kill_at = match rng.random_range(0..16) {
            // While opening: before the WAL recovers, while the region fences and
            // replays, or just before the writers start.
            0 => KillAt::Line(["OPENING", "WAL-OPEN", "READY"][rng.random_range(0..3)], 1),
            // Just after a flush or compaction started.
            1 | 2 => KillAt::Line(
                ["FLUSH", "COMPACT"][rng.random_range(0..2)],
                rng.random_range(1..=4),
            ),
            _ => KillAt::Acks(rng.random_range(1..=400)),
        };
        let mut child = child::Child::spawn(
            CHILD_TEST,
            &[
                (ENV_DIR, dir.display().to_string()),
                (ENV_WAL, backend.to_owned()),
                (ENV_BASE, base.to_string()),
            ],
        );
        let mut lines = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut acks = 0;
        loop {
            let done = match kill_at {
                KillAt::Line(marker, n) => lines.iter().filter(|l| *l == marker).count() >= n,
                KillAt::Acks(n) => acks >= n,
            };
            if done {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{context}: the child acknowledged only {acks} writes in 60 s"
            );
            match child.next_line(deadline) {
                child::Next::Line(l) => {
                    let l = own_line(l);
                    acks += usize::from(l.starts_with("W ") || l.starts_with("I "));
                    lines.push(l);
                }
                other => panic!("{context}: child stopped early ({other:?}) after {acks} acks"),
            }
        }
        child.kill();
        let (rest, status) = child.drain(Instant::now() + Duration::from_secs(30));
        assert!(
            !status.success(),
            "{context}: the child should have been killed"
        );
        lines.extend(rest.into_iter().map(own_line));
        let acked = Acks::parse(&lines, &context);
        killed_opening += u64::from(!acked.ready);
        flushes += acked.flushes;
        compactions += acked.compactions;
        total_writes += acked.writes.iter().sum::<u64>();
        total_increments += acked.counters.iter().map(|c| c.len() as u64).sum::<u64>();

        let close_mode = rng.random_range(0..5);
        let gc = rng.random_ratio(1, 3);
        runtime.block_on(async {
            let (opened, cut) = reopen(&dir, backend, &context).await;
            tails_cut += cut;
            model = verify(&opened.region, &model, Some(base), &acked, &context).await;
            if gc {
                // Nobody else writes now, so no grace is needed: deletes the leftovers of
                // killed flushes and compactions and every old manifest. The next reopen
                // must not miss any of them.
                let report = opened
                    .region
                    .collect_garbage(&GcOptions {
                        grace: Duration::ZERO,
                        now: std::time::SystemTime::now(),
                    })
                    .await
                    .unwrap_or_else(|e| panic!("{context}: GC: {e}"));
                gc_ssts += report.ssts_deleted;
                gc_manifests += report.manifests_deleted;
            }
            match close_mode {
                // Clean: flush and close, then close the WAL.
                0 => {
                    opened.region.close().await.expect("close region");
                    opened.wal.close().await.expect("close WAL");
                }
                // A major compaction, then a clean close.
                1 => {
                    opened.region.compact(true).await.expect("major compaction");
                    opened.region.close().await.expect("close region");
                    opened.wal.close().await.expect("close WAL");
                }
                // Flushed but never closed.
                2 => {
                    opened.region.flush().await.expect("flush");
                    drop(opened);
                }
                // Not flushed; the WAL closed.
                3 => {
                    drop(opened.region);
                    opened.wal.close().await.expect("close WAL");
                }
                // Just dropped.
                _ => drop(opened),
            }
        });
    }

    // A last reopen: everything seen so far is still there, exactly.
    runtime.block_on(async {
        let context = format!("{backend} WAL, final reopen (SHOAL_CRASH_SEED={seed})");
        let (opened, cut) = reopen(&dir, backend, &context).await;
        tails_cut += cut;
        let none = Acks {
            writes: vec![0; WRITERS as usize],
            counters: vec![Vec::new(); COUNTERS as usize],
            ..Acks::default()
        };
        let again = verify(&opened.region, &model, None, &none, &context).await;
        assert_eq!(again.rows, model.rows, "{context}: state changed");
        assert_eq!(
            again.counters, model.counters,
            "{context}: counters changed"
        );
        opened.region.close().await.expect("close region");
        opened.wal.close().await.expect("close WAL");
    });
    println!(
        "region crash test ({backend} WAL): {cycles} cycles in {:.1?}: {total_writes} writes and \
         {total_increments} increments acknowledged and recovered; {} rows, counters {:?}; \
         children flushed {flushes} and compacted {compactions} times; {killed_opening} killed \
         while opening; {tails_cut} torn WAL tails cut; GC deleted {gc_ssts} SSTs and \
         {gc_manifests} manifests",
        started.elapsed(),
        model.rows.len(),
        model.counters,
    );
    assert!(total_writes > 0, "no acknowledged writes at all");
}

#[test]
fn region_crash_local_wal() {
    crash_cycles("local");
}

#[test]
fn region_crash_object_wal() {
    crash_cycles("object");
}
