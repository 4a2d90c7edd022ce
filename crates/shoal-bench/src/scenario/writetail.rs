//! `writetail`: sustained single-row puts at a fixed rate across many
//! memstore flushes. Latency counts from each put's intended start (no
//! coordinated omission); p50/p99/p99.9/p99.99 and max per window, flush
//! events marked. The rate defaults to 80 % of the maximum measured first
//! (closed loop).

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
    /// Puts per second; `None` = 80 % of the measured maximum.
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
    /// Concurrent writers.
    pub threads: usize,
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
    /// Closed-loop maximum, puts/s.
    pub max_puts_per_sec: f64,
    /// Paced rate, puts/s.
    pub rate: f64,
    /// Achieved rate, puts/s.
    pub achieved: f64,
    /// Put size, bytes.
    pub value_bytes: usize,
    /// Region flush size, bytes.
    pub flush_size: u64,
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

/// Runs the scenario and writes `writetail.{json,md,svg}` into `out`.
pub async fn run(opts: &WritetailOptions, out: &Path) -> Result<WritetailReport, ScenarioError> {
    let server = Embedded::start(|c| {
        c.regions.flush_size = shoal_server::config::ByteSize(opts.flush_size);
    })
    .await?;
    let client = server.client().await?;
    client
        .admin()
        .create_table("writetail", vec![Admin::family("f")], vec![])
        .await?;
    let table = client.table("writetail");
    let value = Arc::new(vec![b'v'; opts.value_bytes]);
    let seq = Arc::new(AtomicU64::new(0));

    // 1. The closed-loop maximum.
    let probe_end = Instant::now() + opts.probe;
    let mut probes = Vec::new();
    for _ in 0..opts.threads.max(1) {
        let (t, v, seq) = (table.clone(), value.clone(), seq.clone());
        probes.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < probe_end {
                let k = seq.fetch_add(1, Ordering::Relaxed);
                if t.mutate(RowMutation::new(format!("p{k:012}")).put("f", "v", &*v))
                    .await
                    .is_ok()
                {
                    n += 1;
                }
            }
            n
        }));
    }
    let mut done = 0;
    for p in probes {
        done += p.await.unwrap_or(0);
    }
    let max = done as f64 / opts.probe.as_secs_f64();
    let rate = opts.rate.unwrap_or(max * 0.8).max(1.0);
    eprintln!(
        "writetail: closed-loop maximum {max:.0} puts/s; running at {rate:.0} puts/s for {:?}",
        opts.duration
    );

    // 2. Paced puts, flushes watched.
    let flushes_before = server.host().status().flushes;
    let start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let flush_times = {
        let (host, stop) = (server.host().clone(), stop.clone());
        tokio::spawn(async move {
            let mut times = Vec::new();
            let mut last = host.status().flushes;
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let now = host.status().flushes;
                for _ in last..now {
                    times.push(start.elapsed().as_secs_f64());
                }
                last = now;
            }
            times
        })
    };
    let threads = opts.threads.max(1);
    let interval = Duration::from_secs_f64(threads as f64 / rate);
    let windows = (opts.duration.as_secs_f64() / opts.window.as_secs_f64()).ceil() as usize;
    let end = start + opts.duration;
    let mut tasks = Vec::new();
    for i in 0..threads {
        let (t, v, seq) = (table.clone(), value.clone(), seq.clone());
        let window = opts.window;
        tasks.push(tokio::spawn(async move {
            let mut hs: Vec<Histogram<u64>> = (0..windows).map(|_| hist()).collect();
            let mut errors = 0u64;
            let mut intended = start + interval.mul_f64(i as f64 / threads as f64);
            while intended < end {
                if intended > Instant::now() {
                    tokio::time::sleep_until(intended.into()).await;
                }
                let k = seq.fetch_add(1, Ordering::Relaxed);
                let ok = t
                    .mutate(RowMutation::new(format!("w{k:012}")).put("f", "v", &*v))
                    .await
                    .is_ok();
                let latency = Instant::now().saturating_duration_since(intended);
                let w = ((intended - start).as_secs_f64() / window.as_secs_f64()) as usize;
                if let Some(h) = hs.get_mut(w.min(windows - 1)) {
                    h.saturating_record(
                        u64::try_from(latency.as_micros())
                            .unwrap_or(u64::MAX)
                            .max(1),
                    );
                }
                errors += u64::from(!ok);
                intended += interval;
            }
            (hs, errors)
        }));
    }
    let mut merged: Vec<Histogram<u64>> = (0..windows).map(|_| hist()).collect();
    let mut errors = 0;
    for t in tasks {
        if let Ok((hs, e)) = t.await {
            for (m, h) in merged.iter_mut().zip(hs) {
                let _ = m.add(&h);
            }
            errors += e;
        }
    }
    let elapsed = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    let flush_times_s = flush_times.await.unwrap_or_default();
    let flushes = server.host().status().flushes - flushes_before;
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
        rate,
        achieved: all.len() as f64 / elapsed.as_secs_f64(),
        value_bytes: opts.value_bytes,
        flush_size: opts.flush_size,
        flushes,
        overall: figures(&all, elapsed.as_secs_f64(), flushes),
        windows,
        flush_times_s,
        errors,
    };
    server.stop().await;

    let ms = |us: u64| us as f64 / 1000.0;
    let mut md = format!(
        "# writetail\n\nSingle-row puts of {} B at {:.0}/s (80 % of the closed-loop maximum {:.0}/s unless set), flush size {}, {} flushes.\n\n| | p50 | p99 | p99.9 | p99.99 | max |\n|---|---|---|---|---|---|\n| overall (ms) | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n\n| window end (s) | puts | p50 (ms) | p99 | p99.9 | p99.99 | max | flushes |\n|---|---|---|---|---|---|---|---|\n",
        report.value_bytes,
        report.rate,
        report.max_puts_per_sec,
        report.flush_size,
        report.flushes,
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
