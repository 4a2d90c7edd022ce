//! Running a workload against a table: the load phase (inserts of every
//! record) and the run phase (the operation mix), closed-loop with N
//! threads or paced to a target rate. With a target, latency counts from
//! each operation's intended start (no coordinated omission). Operations
//! that start during the warm-up are not recorded.

use crate::measure::Measurements;
use crate::workload::{CoreWorkload, Op};
use shoal_client::{Get, RowMutation, Scan, Table};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a phase runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Concurrent clients.
    pub threads: usize,
    /// Total operations per second across threads; `None` = as fast as possible.
    pub target: Option<f64>,
    /// Operations starting before this are not recorded.
    pub warmup: Duration,
    /// Stop after this long even if operations remain.
    pub max_duration: Option<Duration>,
    /// Print a status line this often (and a progress line on a terminal).
    pub status_every: Duration,
    /// Width of the per-window latency series (by each operation's intended
    /// start, from the end of the warm-up).
    pub window: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: 1,
            target: None,
            warmup: Duration::ZERO,
            max_duration: None,
            status_every: Duration::from_secs(10),
            window: Duration::from_secs(1),
        }
    }
}

/// What a phase measured.
#[derive(Debug, Clone)]
pub struct PhaseReport {
    /// Latencies per operation.
    pub measurements: Measurements,
    /// Wall time of the measured part (after the warm-up).
    pub runtime: Duration,
    /// Operations completed, warm-up included (what CPU per operation over
    /// the whole phase divides by).
    pub completed: u64,
}

/// Why a phase stopped early.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Too many operations failed.
    #[error("{0} operations failed in a row; last error: {1}")]
    Failing(u64, String),
    /// The insert acknowledgement window overflowed.
    #[error("{0}")]
    Ack(String),
}

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Load,
    Run,
}

/// Inserts every record of the workload.
pub async fn load(
    table: &Table,
    w: &Arc<CoreWorkload>,
    opts: &RunOptions,
) -> Result<PhaseReport, RunError> {
    drive(table, w, opts, Phase::Load, w.insert_count).await
}

/// Runs the operation mix for `operationcount` operations (or the maximum
/// duration).
pub async fn run(
    table: &Table,
    w: &Arc<CoreWorkload>,
    opts: &RunOptions,
) -> Result<PhaseReport, RunError> {
    drive(table, w, opts, Phase::Run, w.operation_count).await
}

async fn drive(
    table: &Table,
    w: &Arc<CoreWorkload>,
    opts: &RunOptions,
    phase: Phase,
    total: u64,
) -> Result<PhaseReport, RunError> {
    let threads = opts.threads.max(1);
    if opts.target.is_some_and(|r| r > 0.0) {
        prime(table, threads).await;
    }
    let start = Instant::now();
    let measured_from = start + opts.warmup;
    let issued = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let recorders: Vec<Arc<Mutex<Measurements>>> = (0..threads).map(|_| Arc::default()).collect();
    let status = spawn_status(
        recorders.clone(),
        done.clone(),
        stop.clone(),
        total,
        opts.status_every,
    );
    let mut tasks = Vec::new();
    for (t, rec) in recorders.iter().enumerate() {
        let (table, w, issued, done, stop, rec) = (
            table.clone(),
            w.clone(),
            issued.clone(),
            done.clone(),
            stop.clone(),
            rec.clone(),
        );
        let interval = opts
            .target
            .filter(|r| *r > 0.0)
            .map(|r| Duration::from_secs_f64(threads as f64 / r));
        let deadline = opts.max_duration.map(|d| start + d);
        let window = opts.window.max(Duration::from_millis(1));
        tasks.push(tokio::spawn(async move {
            let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(rand::random());
            let mut failures = 0u64;
            // Threads start staggered across one interval.
            let mut intended =
                start + interval.map_or(Duration::ZERO, |i| i.mul_f64(t as f64 / threads as f64));
            loop {
                if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(());
                }
                if issued.fetch_add(1, Ordering::Relaxed) >= total {
                    return Ok(());
                }
                let op_start = match interval {
                    Some(i) => {
                        let now = Instant::now();
                        if intended > now {
                            tokio::time::sleep_until(intended.into()).await;
                        }
                        let s = intended;
                        intended += i;
                        s
                    }
                    None => Instant::now(),
                };
                // When paced, the operation's actual issue (its service time
                // is counted from here, its latency from `op_start`).
                let issued_at = interval.map(|_| Instant::now());
                let result = match phase {
                    Phase::Load => {
                        let k = w.load_sequence.fetch_add(1, Ordering::Relaxed);
                        insert(&table, &w, k, &mut rng)
                            .await
                            .map(|()| vec![(Op::Insert, Instant::now())])
                    }
                    Phase::Run => one_op(&table, &w, &mut rng, op_start).await,
                };
                let end = Instant::now();
                match result {
                    Ok(ops) => {
                        failures = 0;
                        if op_start >= measured_from {
                            let w = window_of(op_start - measured_from, window);
                            let mut r = rec.lock().unwrap_or_else(|e| e.into_inner());
                            for (op, op_end) in ops {
                                let from = if op == Op::Update && phase == Phase::Run {
                                    op_start.min(op_end)
                                } else {
                                    op_start
                                };
                                r.record_in_window(
                                    op,
                                    op_end.saturating_duration_since(from),
                                    true,
                                    w,
                                );
                                if let Some(at) = issued_at {
                                    r.record_service(op, op_end.saturating_duration_since(at));
                                }
                            }
                        }
                    }
                    Err((op, e)) => {
                        failures += 1;
                        if op_start >= measured_from {
                            let w = window_of(op_start - measured_from, window);
                            rec.lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .record_in_window(
                                    op,
                                    end.saturating_duration_since(op_start),
                                    false,
                                    w,
                                );
                        }
                        if failures >= 1000 {
                            stop.store(true, Ordering::Relaxed);
                            return Err(RunError::Failing(failures, e));
                        }
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let mut first_err = None;
    for t in tasks {
        match t.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => first_err = first_err.or(Some(e)),
            Err(e) => first_err = first_err.or(Some(RunError::Failing(1, e.to_string()))),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = status.await;
    if let Some(e) = first_err {
        return Err(e);
    }
    let mut measurements = Measurements::default();
    for r in &recorders {
        measurements.merge(&r.lock().unwrap_or_else(|e| e.into_inner()));
    }
    Ok(PhaseReport {
        completed: done.load(Ordering::Relaxed),
        measurements,
        runtime: Instant::now().saturating_duration_since(measured_from),
    })
}

/// A row no workload key can be: YCSB keys start with a letter.
const PRIME_ROW: &[u8] = b"\0shoal-bench-prime";

/// Before a paced phase: one read per generator thread, all at once, of a row no
/// workload uses, so that the client's lazy setup (its connection's first frames,
/// the runtime's threads) is paid before the clock starts. Without it the first
/// 100 ms of a paced run carried p99 latencies of 14 ms against a no-op server,
/// counted from each operation's intended start. It reads nothing the workload
/// reads, and writes nothing, so the server's own first writes are still measured.
/// A failure here is left for the phase itself to report.
async fn prime(table: &Table, threads: usize) {
    let reads = (0..threads).map(|_| table.get(Get::new(PRIME_ROW)));
    for r in futures::future::join_all(reads).await {
        if let Err(e) = r {
            tracing::debug!(error = %e, "priming read failed");
        }
    }
}

/// The index of the window of width `width` that `offset` falls in.
fn window_of(offset: Duration, width: Duration) -> usize {
    usize::try_from(offset.as_nanos() / width.as_nanos().max(1)).unwrap_or(usize::MAX)
}

type OpResult = Result<Vec<(Op, Instant)>, (Op, String)>;

async fn insert(
    table: &Table,
    w: &CoreWorkload,
    keynum: u64,
    rng: &mut impl rand::Rng,
) -> Result<(), (Op, String)> {
    let mut m = RowMutation::new(w.key(keynum));
    for f in 0..w.field_count {
        m = m.put(&w.family, w.field(f), w.value(rng));
    }
    table
        .mutate(m)
        .await
        .map_err(|e| (Op::Insert, e.to_string()))
}

async fn update(
    table: &Table,
    w: &CoreWorkload,
    keynum: u64,
    rng: &mut impl rand::Rng,
) -> Result<(), (Op, String)> {
    let mut m = RowMutation::new(w.key(keynum));
    if w.write_all_fields {
        for f in 0..w.field_count {
            m = m.put(&w.family, w.field(f), w.value(rng));
        }
    } else {
        let f = w.random_field(rng);
        m = m.put(&w.family, w.field(f), w.value(rng));
    }
    table
        .mutate(m)
        .await
        .map_err(|e| (Op::Update, e.to_string()))
}

async fn read(
    table: &Table,
    w: &CoreWorkload,
    keynum: u64,
    rng: &mut impl rand::Rng,
) -> Result<(), (Op, String)> {
    let get = if w.read_all_fields {
        Get::new(w.key(keynum)).family(&w.family)
    } else {
        Get::new(w.key(keynum)).column(&w.family, w.field(w.random_field(rng)))
    };
    table
        .get(get)
        .await
        .map(|_| ())
        .map_err(|e| (Op::Read, e.to_string()))
}

async fn one_op(
    table: &Table,
    w: &CoreWorkload,
    rng: &mut impl rand::Rng,
    _start: Instant,
) -> OpResult {
    let op = w.next_op(rng);
    match op {
        Op::Read => {
            let k = w.next_keynum(rng);
            read(table, w, k, rng).await?;
            Ok(vec![(Op::Read, Instant::now())])
        }
        Op::Update => {
            let k = w.next_keynum(rng);
            update(table, w, k, rng).await?;
            Ok(vec![(Op::Update, Instant::now())])
        }
        Op::Insert => {
            let k = w.insert_sequence.next_value();
            insert(table, w, k, rng).await?;
            w.insert_sequence
                .acknowledge(k)
                .map_err(|e| (Op::Insert, e))?;
            Ok(vec![(Op::Insert, Instant::now())])
        }
        Op::Scan => {
            let k = w.next_keynum(rng);
            let len = w.scan_len(rng);
            let scan = Scan::new().start(w.key(k)).limit(len).family(&w.family);
            table
                .scan_collect(scan)
                .await
                .map_err(|e| (Op::Scan, e.to_string()))?;
            Ok(vec![(Op::Scan, Instant::now())])
        }
        Op::ReadModifyWrite => {
            let k = w.next_keynum(rng);
            read(table, w, k, rng)
                .await
                .map_err(|(_, e)| (Op::ReadModifyWrite, e))?;
            update(table, w, k, rng)
                .await
                .map_err(|(_, e)| (Op::ReadModifyWrite, e))?;
            Ok(vec![(Op::ReadModifyWrite, Instant::now())])
        }
    }
}

/// Prints YCSB's status line every `every` (stderr), and a progress line
/// once a second when stderr is a terminal.
fn spawn_status(
    recorders: Vec<Arc<Mutex<Measurements>>>,
    done: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    total: u64,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let start = Instant::now();
        let tty = std::io::stderr().is_terminal();
        let mut last_status = start;
        let mut last_done = 0u64;
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let now = Instant::now();
            let d = done.load(Ordering::Relaxed);
            if tty {
                let pct = if total > 0 {
                    d as f64 * 100.0 / total as f64
                } else {
                    0.0
                };
                eprint!(
                    "\r{d}/{total} operations ({pct:.1}%), {:.0} s   ",
                    start.elapsed().as_secs_f64()
                );
            }
            if now.duration_since(last_status) >= every {
                let mut m = Measurements::default();
                for r in &recorders {
                    m.merge_totals(&r.lock().unwrap_or_else(|e| e.into_inner()));
                }
                let rate = (d - last_done) as f64 / now.duration_since(last_status).as_secs_f64();
                if tty {
                    eprintln!();
                }
                eprintln!(
                    "{} sec: {d} operations; {rate:.1} current ops/sec; {}",
                    start.elapsed().as_secs(),
                    m.status_line()
                );
                last_status = now;
                last_done = d;
            }
        }
        if tty {
            eprintln!();
        }
    })
}
