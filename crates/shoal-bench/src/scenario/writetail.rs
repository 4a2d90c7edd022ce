//! `writetail`: sustained single-row puts at a fixed rate across many
//! memstore flushes. Latency counts from each put's intended start (no
//! coordinated omission); p50/p99/p99.9/p99.99 and max per window, flush
//! events marked. The rate defaults to 80 % of the sustained maximum measured
//! first (closed loop; the throughput of the probe's second half, when flushes
//! and compactions run, not the burst an empty table takes). The closed-loop
//! maximum is also measured with batched puts (100 rows per call). Each put
//! is one `Table::mutate`; the client combines concurrent ones into shared
//! calls (see `shoal-client`'s `combine`), as it does for every user. The run reports what the server did meanwhile: WAL
//! group commits and their latency, flushes, compactions, in-memory
//! compaction and writes held back by the memstore limits.

use super::figures::{FigureSource, Figures, quantile_us};
use super::{Embedded, ScenarioError, write_report};
use crate::scenario::svg::{Line, chart};
use hdrhistogram::Histogram;
use serde::Serialize;
use shoal_client::{Admin, RowMutation};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Settings of one run.
#[derive(Debug, Clone)]
pub struct WritetailOptions {
    /// Puts per second; `None` = 80 % of the sustained maximum (the probe's
    /// second half).
    pub rate: Option<f64>,
    /// How long the paced run lasts.
    pub duration: Duration,
    /// How long the maximum is measured.
    pub probe: Duration,
    /// Bytes per put.
    pub value_bytes: usize,
    /// Region flush size (small, for many flushes).
    pub flush_size: u64,
    /// Window of the per-window figures.
    pub window: Duration,
    /// Closed-loop writers of the maximum probe (the paced run is open loop).
    pub threads: usize,
    /// In-memory compaction of the table's family.
    pub in_memory_compaction: shoal_client::InMemoryCompaction,
    /// A server elsewhere to measure instead of an embedded one (so the load
    /// generator need not share its cores). `flush_size` is then the
    /// server's own.
    pub remote: Option<RemoteServer>,
}

/// A running server's addresses.
#[derive(Debug, Clone)]
pub struct RemoteServer {
    /// gRPC, `host:port`.
    pub grpc: String,
    /// HTTP (`/metrics`), `host:port`.
    pub http: String,
}

/// What the server did during the paced run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerSide {
    /// WAL group commits.
    pub wal_syncs: u64,
    /// Mean entries per group commit.
    pub wal_mean_batch: f64,
    /// Group-commit latency p99 and p99.9 (upper bound of the log2 bucket), µs.
    pub wal_sync_p99_us: u64,
    /// p99.9.
    pub wal_sync_p999_us: u64,
    /// Slowest group commit since the server started, µs.
    pub wal_sync_max_us: u64,
    /// Compactions completed.
    pub compactions: u64,
    /// Mean flush time, ms.
    pub flush_mean_ms: f64,
    /// Skiplist segments flattened.
    pub imc_flattens: u64,
    /// Flat segment merges.
    pub imc_merges: u64,
    /// Writes that waited for memstore memory.
    pub blocked_writes: u64,
    /// Put latency inside the server (request in to response out), p99 and
    /// p99.9 as the upper bound of their histogram bucket, µs.
    pub server_put_p99_us: u64,
    /// p99.9.
    pub server_put_p999_us: u64,
    /// Puts the server answered with an error (the client may have retried
    /// them).
    pub server_put_errors: u64,
}

/// One window's figures (µs).
#[derive(Debug, Clone, Serialize)]
pub struct Window {
    /// Seconds from the start to the window's end.
    pub end_s: f64,
    /// Puts measured.
    pub count: u64,
    /// p50.
    pub p50_us: u64,
    /// p99.
    pub p99_us: u64,
    /// p99.9.
    pub p999_us: u64,
    /// p99.99.
    pub p9999_us: u64,
    /// Max.
    pub max_us: u64,
    /// Flushes that ended in the window.
    pub flushes: u64,
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct WritetailReport {
    /// Closed-loop maximum over the whole probe (from an empty table), puts/s
    /// (0 for all three maxima when the probe was skipped: `--probe 0s`).
    pub max_puts_per_sec: f64,
    /// Closed-loop maximum over the probe's second half, with flushes and
    /// compactions running: the sustained maximum, puts/s.
    pub sustained_max_puts_per_sec: f64,
    /// Closed-loop maximum with batched puts (100 rows per call), rows/s.
    pub max_batched_puts_per_sec: f64,
    /// In-memory compaction of the family (NONE, BASIC, EAGER).
    pub in_memory_compaction: String,
    /// What the server did during the paced run.
    pub server: ServerSide,
    /// Paced rate, puts/s.
    pub rate: f64,
    /// Achieved rate, puts/s.
    pub achieved: f64,
    /// Put size, bytes.
    pub value_bytes: usize,
    /// Region flush size, bytes (`None`: a remote server's own).
    pub flush_size: Option<u64>,
    /// The server measured: `embedded`, or a remote gRPC address.
    pub target: String,
    /// Flushes during the paced run.
    pub flushes: u64,
    /// Overall p50/p99/p99.9/p99.99/max, µs.
    pub overall: Window,
    /// Per window.
    pub windows: Vec<Window>,
    /// Flush completion times, seconds from the start.
    pub flush_times_s: Vec<f64>,
    /// Failed puts.
    pub errors: u64,
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap_or_else(|_| std::process::abort())
}

fn figures(h: &Histogram<u64>, end_s: f64, flushes: u64) -> Window {
    Window {
        end_s,
        count: h.len(),
        p50_us: h.value_at_quantile(0.5),
        p99_us: h.value_at_quantile(0.99),
        p999_us: h.value_at_quantile(0.999),
        p9999_us: h.value_at_quantile(0.9999),
        max_us: h.max(),
        flushes,
    }
}

/// The closed-loop maximum over the probe and over its second half
/// (puts/s), then a flush and a wait for the compactions to finish.
async fn probe_max(
    source: &FigureSource,
    client: &shoal_client::Client,
    table: &shoal_client::Table,
    value: &Arc<Vec<u8>>,
    seq: &Arc<AtomicU64>,
    opts: &WritetailOptions,
) -> Result<(f64, f64), ScenarioError> {
    let probe_start = Instant::now();
    let probe_end = probe_start + opts.probe;
    let done = Arc::new(AtomicU64::new(0));
    let mut probes = Vec::new();
    for _ in 0..opts.threads.max(1) {
        let (t, v, seq, done) = (table.clone(), value.clone(), seq.clone(), done.clone());
        probes.push(tokio::spawn(async move {
            while Instant::now() < probe_end {
                let k = seq.fetch_add(1, Ordering::Relaxed);
                if t.mutate(RowMutation::new(format!("p{k:012}")).put("f", "v", &*v))
                    .await
                    .is_ok()
                {
                    done.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    tokio::time::sleep_until((probe_start + opts.probe / 2).into()).await;
    let at_half = done.load(Ordering::Relaxed);
    let half_time = probe_start.elapsed();
    for p in probes {
        let _ = p.await;
    }
    let total = done.load(Ordering::Relaxed);
    let probe_time = probe_start.elapsed();
    let max = total as f64 / probe_time.as_secs_f64();
    let sustained = (total - at_half) as f64 / (probe_time - half_time).as_secs_f64().max(1e-3);
    // Flush what the probe wrote and let its compactions finish before
    // pacing, so the paced run starts from a quiet server.
    client.admin().flush("writetail").await?;
    let quiet = Instant::now() + Duration::from_secs(60);
    let mut last = source.read().await?.compactions;
    loop {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let now = source.read().await?.compactions;
        if now == last || Instant::now() > quiet {
            break;
        }
        last = now;
    }
    Ok((max, sustained))
}

/// Runs the scenario and writes `writetail.{json,md,svg}` into `out`.
pub async fn run(opts: &WritetailOptions, out: &Path) -> Result<WritetailReport, ScenarioError> {
    let (server, client, source) = match &opts.remote {
        None => {
            let server = Embedded::start(|c| {
                c.regions.flush_size = shoal_server::config::ByteSize(opts.flush_size);
                // Segments of 1/16 of the flush size: several flattenings per flush.
                c.memstore.in_memory_flush_size =
                    shoal_server::config::ByteSize((opts.flush_size / 16).max(64 << 10));
            })
            .await?;
            let client = server.client().await?;
            let source = FigureSource::Embedded(server.host().clone());
            (Some(server), client, source)
        }
        Some(r) => {
            let client = shoal_client::Client::connect(&r.grpc).await?;
            let source = FigureSource::remote(&r.http);
            // Fail before anything is written if the metrics are unreachable.
            source.read().await?;
            (None, client, source)
        }
    };
    let mut family = Admin::family("f");
    family.in_memory_compaction = opts.in_memory_compaction as i32;
    client
        .admin()
        .create_table("writetail", vec![family], vec![])
        .await
        .map_err(|e| {
            ScenarioError::Server(format!(
                "creating the table `writetail`: {e} (the scenario needs a new, empty table; drop an old one first)"
            ))
        })?;
    let table = client.table("writetail");
    let value = Arc::new(vec![b'v'; opts.value_bytes]);
    let seq = Arc::new(AtomicU64::new(0));

    // 1. The closed-loop maximum: over the whole probe (a burst, from an
    // empty table) and over its second half, once flushes and compactions
    // run (the sustained maximum, which the default rate derives from).
    // A zero probe with a fixed rate skips it (for quick experiments).
    let probe = !(opts.probe.is_zero() && opts.rate.is_some());
    let (max, sustained) = if probe {
        probe_max(&source, &client, &table, &value, &seq, opts).await?
    } else {
        (0.0, 0.0)
    };
    let rate = opts.rate.unwrap_or(sustained * 0.8).max(1.0);
    if probe {
        eprintln!(
            "writetail: closed-loop maximum {max:.0} puts/s over the probe, {sustained:.0} puts/s sustained (its second half); running at {rate:.0} puts/s for {:?}",
            opts.duration
        );
    } else {
        eprintln!(
            "writetail: probe skipped; running at {rate:.0} puts/s for {:?}",
            opts.duration
        );
    }

    // 2. Paced puts, flushes watched.
    let before = source.read().await?;
    let start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let flush_times = {
        let (source, stop) = (source.clone(), stop.clone());
        let mut last = before.flushes;
        tokio::spawn(async move {
            let mut times = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(50)).await;
                // A reading that fails is skipped; the next one counts.
                let Ok(now) = source.flushes().await else {
                    continue;
                };
                for _ in last..now {
                    times.push(start.elapsed().as_secs_f64());
                }
                last = now;
            }
            times
        })
    };
    // Open loop: every put is its own task, started at its intended time,
    // so one slow put never delays the next (a fixed set of writers would
    // fall behind after any hiccup and stay behind). At most `MAX_IN_FLIGHT`
    // puts are outstanding; when the cap is hit the dispatcher waits, which
    // its later puts' latency (counted from their intended start) shows.
    const MAX_IN_FLIGHT: usize = 1_000;
    let interval = Duration::from_secs_f64(1.0 / rate);
    let windows = (opts.duration.as_secs_f64() / opts.window.as_secs_f64()).ceil() as usize;
    let end = start + opts.duration;
    let window = opts.window;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, u64, bool)>();
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_IN_FLIGHT));
    let collector = tokio::spawn(async move {
        let mut hs: Vec<Histogram<u64>> = (0..windows).map(|_| hist()).collect();
        let mut errors = 0u64;
        while let Some((w, us, ok)) = rx.recv().await {
            if let Some(h) = hs.get_mut(w.min(windows - 1)) {
                h.saturating_record(us.max(1));
            }
            errors += u64::from(!ok);
        }
        (hs, errors)
    });
    // The dispatcher is an OS thread of its own, not a task: a task's
    // `sleep_until` fires on the runtime's 1 ms timer wheel, and only when a
    // worker gets round to the timer, so under load puts would leave in
    // late bursts and the generator's own lateness would count as the
    // server's latency. The thread sleeps with the OS's precision and wakes
    // at most every `TICK`; each time it hands the puts that are due to the
    // runtime as one task, which spawns them there (one cross-thread wake
    // per tick instead of one per put, which cost a fifth of a core at 64k
    // puts/s). A put leaves at most a tick late, and its latency still
    // counts from its intended start.
    const TICK: Duration = Duration::from_micros(200);
    let handle = tokio::runtime::Handle::current();
    let parts = (table.clone(), value.clone(), seq.clone());
    let dispatcher = std::thread::Builder::new()
        .name("writetail-gen".into())
        .spawn(move || {
            let (table, value, seq) = parts;
            let mut intended = start;
            let mut due = Vec::new();
            // Hands the collected puts to the runtime as one task.
            let send = |due: &mut Vec<(u64, Instant, tokio::sync::OwnedSemaphorePermit)>| {
                if due.is_empty() {
                    return;
                }
                let (t, v, tx) = (table.clone(), value.clone(), tx.clone());
                let batch = std::mem::take(due);
                handle.spawn(async move {
                    for (k, at, permit) in batch {
                        let (t, v, tx) = (t.clone(), v.clone(), tx.clone());
                        tokio::spawn(async move {
                            let ok = t
                                .mutate(RowMutation::new(format!("w{k:012}")).put("f", "v", &*v))
                                .await
                                .is_ok();
                            let latency = Instant::now().saturating_duration_since(at);
                            let w = ((at - start).as_secs_f64() / window.as_secs_f64()) as usize;
                            let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
                            let _ = tx.send((w, us, ok));
                            drop(permit);
                        });
                    }
                });
            };
            while intended < end {
                let now = Instant::now();
                if intended > now {
                    std::thread::sleep((intended - now).max(TICK));
                }
                let now = Instant::now();
                while intended <= now && intended < end {
                    let permit = match slots.clone().try_acquire_owned() {
                        Ok(p) => p,
                        Err(_) => {
                            // Every slot is taken: send what was collected
                            // (it holds slots too) before waiting for one.
                            send(&mut due);
                            match handle.block_on(slots.clone().acquire_owned()) {
                                Ok(p) => p,
                                Err(_) => return,
                            }
                        }
                    };
                    due.push((seq.fetch_add(1, Ordering::Relaxed), intended, permit));
                    intended += interval;
                }
                send(&mut due);
            }
        })
        .map_err(|e| ScenarioError::Server(format!("starting the load generator thread: {e}")))?;
    let _ = tokio::task::spawn_blocking(move || dispatcher.join()).await;
    // Every put has finished once the collector's channel closes.
    let (merged, errors) = collector
        .await
        .unwrap_or_else(|_| ((0..windows).map(|_| hist()).collect(), 0));
    let elapsed = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    let flush_times_s = flush_times.await.unwrap_or_default();
    let after = source.read().await?;
    let flushes = after.flushes.saturating_sub(before.flushes);
    let server_side = server_side(&before, &after);
    // 3. The batched maximum, last: its gigabytes would burden the paced run
    // with their compactions.
    let max_batched = if probe {
        batched_max(&table, &value, &seq, opts).await
    } else {
        0.0
    };
    let mut all = hist();
    let win_s = opts.window.as_secs_f64();
    let windows: Vec<Window> = merged
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let _ = all.add(h);
            let (lo, hi) = (i as f64 * win_s, (i + 1) as f64 * win_s);
            let n = flush_times_s
                .iter()
                .filter(|t| **t >= lo && **t < hi)
                .count() as u64;
            figures(h, hi, n)
        })
        .collect();
    let report = WritetailReport {
        max_puts_per_sec: max,
        sustained_max_puts_per_sec: sustained,
        max_batched_puts_per_sec: max_batched,
        in_memory_compaction: opts
            .in_memory_compaction
            .as_str_name()
            .trim_start_matches("IN_MEMORY_COMPACTION_")
            .to_string(),
        server: server_side,
        rate,
        achieved: all.len() as f64 / elapsed.as_secs_f64(),
        value_bytes: opts.value_bytes,
        flush_size: opts.remote.is_none().then_some(opts.flush_size),
        target: opts
            .remote
            .as_ref()
            .map_or_else(|| "embedded".to_string(), |r| r.grpc.clone()),
        flushes,
        overall: figures(&all, elapsed.as_secs_f64(), flushes),
        windows,
        flush_times_s,
        errors,
    };
    if let Some(server) = server {
        server.stop().await;
    }

    let ms = |us: u64| us as f64 / 1000.0;
    let s = &report.server;
    let rate_text = if probe {
        format!(
            "{:.0}/s (80 % of the sustained closed-loop maximum {:.0}/s unless set; {:.0}/s over the whole probe from an empty table; batched puts, 100 rows per call: {:.0} rows/s)",
            report.rate,
            report.sustained_max_puts_per_sec,
            report.max_puts_per_sec,
            report.max_batched_puts_per_sec
        )
    } else {
        format!(
            "{:.0}/s (a fixed rate; the maxima were not measured: --probe 0s)",
            report.rate
        )
    };
    let mut md = format!(
        "# writetail\n\nSingle-row puts of {} B (one `Table::mutate` each; the client combines concurrent ones into shared calls) at {}, flush size {}, {} flushes, in-memory compaction {}, server {}.\n\nServer side during the paced run: {} WAL group commits of {:.1} entries on average, commit p99 ≤ {:.2} ms, p99.9 ≤ {:.2} ms, slowest {:.2} ms; mean flush {:.0} ms; {} compactions; {} segments flattened, {} merges; {} writes held by the memstore limits; put latency inside the server p99 ≤ {:.2} ms, p99.9 ≤ {:.2} ms; {} puts answered with an error.\n\n| | p50 | p99 | p99.9 | p99.99 | max |\n|---|---|---|---|---|---|\n| overall (ms) | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n\n| window end (s) | puts | p50 (ms) | p99 | p99.9 | p99.99 | max | flushes |\n|---|---|---|---|---|---|---|---|\n",
        report.value_bytes,
        rate_text,
        report
            .flush_size
            .map_or_else(|| "the server's own".to_string(), |b| b.to_string()),
        report.flushes,
        report.in_memory_compaction,
        report.target,
        s.wal_syncs,
        s.wal_mean_batch,
        ms(s.wal_sync_p99_us),
        ms(s.wal_sync_p999_us),
        ms(s.wal_sync_max_us),
        s.flush_mean_ms,
        s.compactions,
        s.imc_flattens,
        s.imc_merges,
        s.blocked_writes,
        ms(s.server_put_p99_us),
        ms(s.server_put_p999_us),
        s.server_put_errors,
        ms(report.overall.p50_us),
        ms(report.overall.p99_us),
        ms(report.overall.p999_us),
        ms(report.overall.p9999_us),
        ms(report.overall.max_us)
    );
    for w in &report.windows {
        md.push_str(&format!(
            "| {:.0} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} |\n",
            w.end_s,
            w.count,
            ms(w.p50_us),
            ms(w.p99_us),
            ms(w.p999_us),
            ms(w.p9999_us),
            ms(w.max_us),
            w.flushes
        ));
    }
    let line = |name: &str, color: &'static str, f: fn(&Window) -> u64| Line {
        name: name.to_string(),
        color,
        points: report
            .windows
            .iter()
            .map(|w| (w.end_s, f(w) as f64 / 1000.0))
            .collect(),
    };
    let svg = chart(
        &format!(
            "writetail: put latency per {:.0} s window at {:.0} puts/s",
            win_s, report.rate
        ),
        "seconds",
        "latency (ms)",
        &[
            line("p99", "#2563eb", |w| w.p99_us),
            line("p99.9", "#16a34a", |w| w.p999_us),
            line("p99.99", "#dc2626", |w| w.p9999_us),
            line("max", "#6b7280", |w| w.max_us),
        ],
        &report.flush_times_s,
    );
    write_report(out, "writetail", &report, &md, &svg)?;
    Ok(report)
}

/// Closed-loop batched puts (100 rows per call) for the probe's duration (at
/// most 20 s); rows per second.
async fn batched_max(
    table: &shoal_client::Table,
    value: &Arc<Vec<u8>>,
    seq: &Arc<AtomicU64>,
    opts: &WritetailOptions,
) -> f64 {
    // At most 20 s: its rows cost disk, not information.
    let length = opts.probe.min(Duration::from_secs(20));
    let end = Instant::now() + length;
    let writers = (opts.threads / 8).max(1);
    let mut tasks = Vec::new();
    for _ in 0..writers {
        let (t, v, seq) = (table.clone(), value.clone(), seq.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < end {
                let batch: Vec<RowMutation> = (0..100)
                    .map(|_| {
                        let k = seq.fetch_add(1, Ordering::Relaxed);
                        RowMutation::new(format!("b{k:012}")).put("f", "v", &*v)
                    })
                    .collect();
                if let Ok(results) = t.mutate_many(batch).await {
                    n += results.iter().filter(|r| r.is_ok()).count() as u64;
                }
            }
            n
        }));
    }
    let mut rows = 0;
    for t in tasks {
        rows += t.await.unwrap_or(0);
    }
    rows as f64 / length.as_secs_f64()
}

fn server_side(before: &Figures, after: &Figures) -> ServerSide {
    let syncs = after.wal_syncs.saturating_sub(before.wal_syncs);
    let flushes = after.flushes.saturating_sub(before.flushes);
    ServerSide {
        wal_syncs: syncs,
        wal_mean_batch: if syncs > 0 {
            (after.wal_batch_entries_sum - before.wal_batch_entries_sum) / syncs as f64
        } else {
            0.0
        },
        wal_sync_p99_us: quantile_us(&before.wal_sync_seconds, &after.wal_sync_seconds, 0.99),
        wal_sync_p999_us: quantile_us(&before.wal_sync_seconds, &after.wal_sync_seconds, 0.999),
        wal_sync_max_us: (after.wal_sync_max_seconds * 1e6).round() as u64,
        compactions: after.compactions.saturating_sub(before.compactions),
        flush_mean_ms: if flushes > 0 {
            (after.flush_seconds - before.flush_seconds) * 1e3 / flushes as f64
        } else {
            0.0
        },
        imc_flattens: after.imc_flattens.saturating_sub(before.imc_flattens),
        imc_merges: after.imc_merges.saturating_sub(before.imc_merges),
        blocked_writes: after.blocked_writes.saturating_sub(before.blocked_writes),
        // Single puts arrive as Mutate calls, or combined by the client into
        // MultiMutate calls: both count (per call).
        server_put_p99_us: quantile_us(&before.put_seconds, &after.put_seconds, 0.99),
        server_put_p999_us: quantile_us(&before.put_seconds, &after.put_seconds, 0.999),
        server_put_errors: after.put_errors.saturating_sub(before.put_errors),
    }
}
