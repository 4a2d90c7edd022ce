//! The load and run phases, the same for every system: N concurrent tasks in a
//! closed loop, keys, values and the operation mix from shoal-bench's exact YCSB
//! `CoreWorkload`, latencies in shoal-bench's HdrHistogram `Measurements`.
//! Operations that start during the warm-up are not recorded, and neither are
//! the object-store requests sent then.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context;
use rand::SeedableRng;
use rand::rngs::StdRng;
use shoal_bench::{CoreWorkload, Measurements, Op};

use crate::emulate::Requests;
use crate::system::System;

/// What one phase measured.
#[derive(Debug, Clone)]
pub struct Phase {
    /// Latencies per operation.
    pub measurements: Measurements,
    /// Length of the measured window.
    pub elapsed: Duration,
    /// Object-store requests sent during the measured window.
    pub requests: Requests,
    /// The first error, if any operation failed.
    pub first_error: Option<String>,
}

impl Phase {
    /// Recorded operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.measurements.total() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// One task's share of a phase.
struct TaskResult {
    measurements: Measurements,
    first_error: Option<String>,
}

/// Inserts every record of `w` with `threads` tasks.
pub async fn load<S: System>(
    sys: &Arc<S>,
    w: &Arc<CoreWorkload>,
    threads: usize,
) -> anyhow::Result<Phase> {
    let before = sys.requests();
    let started = Instant::now();
    let end = w.insert_start + w.insert_count;
    let mut tasks = Vec::with_capacity(threads);
    for _ in 0..threads {
        let (sys, w) = (sys.clone(), w.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::from_os_rng();
            let mut out = TaskResult::new();
            loop {
                let keynum = w.load_sequence.fetch_add(1, Ordering::Relaxed);
                if keynum >= end {
                    return out;
                }
                let fields = (0..w.field_count).map(|_| w.value(&mut rng)).collect();
                let t0 = Instant::now();
                let result = sys.insert(w.key(keynum), fields).await;
                out.record(Op::Insert, t0, result);
            }
        }));
    }
    let result = join(tasks).await?;
    Ok(Phase {
        measurements: result.measurements,
        elapsed: started.elapsed(),
        requests: sys.requests().since(&before),
        first_error: result.first_error,
    })
}

/// Runs `w`'s operation mix with `threads` tasks for `warmup + duration`, or
/// until `max_ops` operations (warm-up included) have started, whichever
/// comes first: a cap makes two systems leave the same history behind.
pub async fn run<S: System>(
    sys: &Arc<S>,
    w: &Arc<CoreWorkload>,
    threads: usize,
    warmup: Duration,
    duration: Duration,
    max_ops: Option<u64>,
) -> anyhow::Result<Phase> {
    let from = Instant::now() + warmup;
    let to = from + duration;
    let started = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let done = Arc::new(tokio::sync::Notify::new());
    let mut tasks = Vec::with_capacity(threads);
    for _ in 0..threads {
        let (sys, w) = (sys.clone(), w.clone());
        let (started, done) = (started.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::from_os_rng();
            let mut out = TaskResult::new();
            loop {
                let t0 = Instant::now();
                let n = started.fetch_add(1, Ordering::Relaxed);
                if t0 >= to || max_ops.is_some_and(|m| n >= m) {
                    done.notify_one();
                    return out;
                }
                let op = w.next_op(&mut rng);
                let key = w.key(w.next_keynum(&mut rng));
                let result = match op {
                    Op::Update => {
                        let field = w.random_field(&mut rng);
                        sys.update(key, field, w.value(&mut rng)).await
                    }
                    Op::Read => match sys.read(key).await {
                        Ok(n) if n == w.field_count => Ok(()),
                        Ok(n) => Err(anyhow::anyhow!("read {n} of {} fields", w.field_count)),
                        Err(e) => Err(e),
                    },
                    other => Err(anyhow::anyhow!(
                        "{} is not in workloads A or C",
                        other.name()
                    )),
                };
                if t0 >= from {
                    out.record(op, t0, result);
                }
            }
        }));
    }
    tokio::time::sleep_until(from.into()).await;
    let before = sys.requests();
    // The end: the duration, or the first task that saw the cap.
    tokio::select! {
        _ = tokio::time::sleep_until(to.into()) => {}
        _ = done.notified() => {}
    }
    let ended = Instant::now().min(to).max(from);
    let requests = sys.requests().since(&before);
    let result = join(tasks).await?;
    Ok(Phase {
        measurements: result.measurements,
        elapsed: ended - from,
        requests,
        first_error: result.first_error,
    })
}

impl TaskResult {
    fn new() -> TaskResult {
        TaskResult {
            measurements: Measurements::default(),
            first_error: None,
        }
    }

    fn record(&mut self, op: Op, t0: Instant, result: anyhow::Result<()>) {
        self.measurements.record(op, t0.elapsed(), result.is_ok());
        if let Err(e) = result
            && self.first_error.is_none()
        {
            self.first_error = Some(format!("{}: {e:#}", op.name()));
        }
    }
}

async fn join(tasks: Vec<tokio::task::JoinHandle<TaskResult>>) -> anyhow::Result<TaskResult> {
    let mut all = TaskResult::new();
    for task in tasks {
        let r = task.await.context("a benchmark task panicked")?;
        all.measurements.merge(&r.measurements);
        if all.first_error.is_none() {
            all.first_error = r.first_error;
        }
    }
    Ok(all)
}
