//! `shoal bench scenario pitr`: what the point-in-time window costs and
//! how long an instant takes to bring back.
//!
//! Two servers in child processes, one after the other, each on a fresh
//! local-directory bucket with the WAL in the bucket: the first with the
//! window off, the second with it on (a base snapshot every
//! `base_every`). Each takes the same paced single-row puts for the same
//! time (open loop, latency from each put's intended start). Reported for
//! both: the writers' latency, server CPU per put, object-store requests;
//! for the window: the bytes and objects it holds (`/metrics`:
//! `shoal_wal_history_*`, `shoal_pitr_window_*`), the bucket's size, and
//! those bytes per hour at this write rate. Then two clones as of
//! instants of the run (the middle, and just before its end): how long
//! each took and what it wrote.

use super::ScenarioError;
use super::child::{ChildServer, http_get_text};
use super::errors::{child_err, err, io};
use super::import::{Requests, req_delta, requests};
use crate::cpu::{CpuPerOp, CpuReading};
use hdrhistogram::Histogram;
use rand::RngCore;
use serde::Serialize;
use shoal_client::{Admin, Client, RowMutation, Table};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TABLE: &str = "pitr";

/// What to run.
#[derive(Debug, Clone)]
pub struct PitrOptions {
    /// Puts per second.
    pub rate: f64,
    /// Value bytes per put.
    pub put_bytes: usize,
    /// How long the writers run against each server.
    pub window: Duration,
    /// Regions the table is pre-split into.
    pub regions: usize,
    /// The window's base interval.
    pub base_every: Duration,
    /// The `shoal` binary the servers run.
    pub shoal_bin: PathBuf,
    /// Where the work directories go.
    pub work_parent: PathBuf,
}

/// One server's writer window.
#[derive(Debug, Clone, Serialize)]
pub struct Writers {
    pub puts: u64,
    pub errors: u64,
    pub achieved_per_s: f64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    pub cpu: CpuPerOp,
    pub object_store: Requests,
}

/// One clone as of an instant.
#[derive(Debug, Clone, Serialize)]
pub struct CloneAt {
    /// How far back from the end of the writers (s).
    pub seconds_back: f64,
    pub wall_ms: f64,
    pub rows: u64,
}

/// The scenario's report.
#[derive(Debug, Clone, Serialize)]
pub struct PitrReport {
    pub rate: f64,
    pub put_bytes: usize,
    pub seconds: f64,
    pub base_every_s: f64,
    pub off: Writers,
    pub on: Writers,
    /// Bytes of values the writers sent (each run).
    pub value_bytes: u64,
    pub bucket_bytes_off: u64,
    pub bucket_bytes_on: u64,
    pub wal_history_objects: u64,
    pub wal_history_bytes: u64,
    pub window_files: u64,
    pub window_bytes: u64,
    /// The window-on bucket's bytes beyond the window-off one's (both
    /// after a clean stop), per hour of writers at this rate.
    pub held_bytes_per_hour: f64,
    pub clones: Vec<CloneAt>,
}

fn config(root: &Path, window: Option<Duration>) -> String {
    let p = |p: PathBuf| {
        p.display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    };
    let snapshots = window.map_or(String::new(), |every| {
        format!(
            "\n[snapshots]\npoint_in_time_window = \"24h\"\npoint_in_time_base_every = \"{}s\"\n",
            every.as_secs().max(1)
        )
    });
    format!(
        "[thrift]\naddr = \"127.0.0.1:0\"\n\n[rest]\naddr = \"127.0.0.1:0\"\n\n[hbase_rpc]\naddr = \"127.0.0.1:0\"\n\n\
         [server]\ngrpc_addr = \"127.0.0.1:0\"\nhttp_addr = \"127.0.0.1:0\"\ndata_dir = \"{}\"\n\n\
         [object_store]\nurl = \"file://{}\"\n\n[wal]\nbackend = \"object\"\n\n\
         [regions]\nsplit_check_interval = \"1s\"\n{snapshots}",
        p(root.join("data")),
        p(root.join("bucket")),
    )
}

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// A gauge's value on the server's `/metrics` (0 if absent).
async fn gauge(http: SocketAddr, name: &str) -> Result<u64, ScenarioError> {
    let page = http_get_text(http, "/metrics").await.map_err(child_err)?;
    Ok(page
        .lines()
        .find_map(|l| {
            l.strip_prefix(name)?
                .strip_prefix(' ')?
                .trim()
                .parse::<f64>()
                .ok()
        })
        .unwrap_or(0.0) as u64)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Runs the scenario; reports go to `out` as `pitr.{json,md,svg}`.
pub async fn run(o: &PitrOptions, out: &Path) -> Result<PitrReport, ScenarioError> {
    if o.rate <= 0.0 || o.regions == 0 || o.put_bytes == 0 {
        return Err(err("rate, regions and put bytes must be positive"));
    }
    std::fs::create_dir_all(&o.work_parent).map_err(io(&o.work_parent))?;
    let (off, bucket_off, _) = one_server(o, None).await?;
    let (on, bucket_on, window) = one_server(o, Some(o.base_every)).await?;
    let window = window.ok_or_else(|| err("the window run measured nothing"))?;
    // After a clean stop every write is flushed, so what the window-on
    // bucket holds beyond the window-off one is what only the window keeps
    // (WAL history, files only the bases keep, catalog versions).
    let held = bucket_on.saturating_sub(bucket_off) as f64;
    let report = PitrReport {
        rate: o.rate,
        put_bytes: o.put_bytes,
        seconds: o.window.as_secs_f64(),
        base_every_s: o.base_every.as_secs_f64(),
        value_bytes: on.puts * o.put_bytes as u64,
        off,
        on,
        bucket_bytes_off: bucket_off,
        bucket_bytes_on: bucket_on,
        wal_history_objects: window.wal_history_objects,
        wal_history_bytes: window.wal_history_bytes,
        window_files: window.window_files,
        window_bytes: window.window_bytes,
        held_bytes_per_hour: held / o.window.as_secs_f64().max(1e-9) * 3600.0,
        clones: window.clones,
    };
    let md = markdown(&report);
    super::write_report(
        out,
        "pitr",
        &report,
        &md,
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
    )?;
    Ok(report)
}

/// What the window held at the end of its run, and its clones.
struct WindowHeld {
    wal_history_objects: u64,
    wal_history_bytes: u64,
    window_files: u64,
    window_bytes: u64,
    clones: Vec<CloneAt>,
}

/// One server (window off or on): the writers, then, with the window on,
/// what it holds and two clones as of instants of the run.
async fn one_server(
    o: &PitrOptions,
    window: Option<Duration>,
) -> Result<(Writers, u64, Option<WindowHeld>), ScenarioError> {
    let work = tempfile::Builder::new()
        .prefix("shoal-bench-pitr-")
        .tempdir_in(&o.work_parent)
        .map_err(io(&o.work_parent))?;
    let w = work.path().to_path_buf();
    std::fs::create_dir_all(w.join("bucket")).map_err(io(&w))?;
    let cfg = w.join("server.toml");
    std::fs::write(&cfg, config(&w, window)).map_err(io(&cfg))?;
    let server = ChildServer::start(&o.shoal_bin, &cfg, &w.join("server.log"))
        .await
        .map_err(child_err)?;
    let result = async {
        let client = Client::connect(&server.grpc.to_string()).await?;
        let splits: Vec<Vec<u8>> = (1..o.regions)
            .map(|i| format!("k{:04}", i * 10_000 / o.regions).into_bytes())
            .collect();
        client
            .admin()
            .create_table(TABLE, vec![Admin::family("cf")], splits)
            .await?;
        if window.is_some() {
            // The first base comes from the server's own checks.
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
        let start_ms = now_ms();
        let writers = writers(&client, server.http, o).await?;
        let end_ms = now_ms();
        let held = match window {
            None => None,
            Some(_) => Some(held(&client, server.http, start_ms, end_ms).await?),
        };
        Ok::<_, ScenarioError>((writers, held))
    }
    .await;
    let stopped = server
        .terminate(Duration::from_secs(60))
        .await
        .map_err(child_err);
    let bucket = dir_bytes(&w.join("bucket"));
    let removed = work.close().map_err(io(&w));
    let (writers, held) = result?;
    stopped?;
    removed?;
    Ok((writers, bucket, held))
}

async fn held(
    client: &Client,
    http: SocketAddr,
    start_ms: i64,
    end_ms: i64,
) -> Result<WindowHeld, ScenarioError> {
    let mut clones = Vec::new();
    for (n, at) in [(start_ms + end_ms) / 2, end_ms - 1]
        .into_iter()
        .enumerate()
    {
        let target = format!("clone{n}");
        let t = Instant::now();
        client.admin().clone_at(TABLE, at, &target).await?;
        let wall_ms = t.elapsed().as_secs_f64() * 1e3;
        let rows = client
            .table(&target)
            .scan_collect(shoal_client::Scan::new())
            .await?
            .len() as u64;
        clones.push(CloneAt {
            seconds_back: (end_ms - at) as f64 / 1e3,
            wall_ms,
            rows,
        });
    }
    Ok(WindowHeld {
        wal_history_objects: gauge(http, "shoal_wal_history_objects").await?,
        wal_history_bytes: gauge(http, "shoal_wal_history_bytes").await?,
        window_files: gauge(http, "shoal_pitr_window_files").await?,
        window_bytes: gauge(http, "shoal_pitr_window_bytes").await?,
        clones,
    })
}

fn hist() -> Histogram<u64> {
    // 1 µs to 10 min at 3 significant figures: bounds that are always valid.
    Histogram::new_with_bounds(1, 600_000_000, 3)
        .unwrap_or_else(|_| Histogram::new(3).expect("3 significant figures are valid"))
}

/// Paced single-row puts for `o.window`, open loop: each put is a task
/// started at its intended time (at most 1,000 in flight), its latency
/// counted from that time.
async fn writers(
    client: &Client,
    http: SocketAddr,
    o: &PitrOptions,
) -> Result<Writers, ScenarioError> {
    let table: Table = client.table(TABLE);
    let admin = client.admin();
    let r0 = requests(http).await?;
    let c0 = CpuReading::take(Some(&admin)).await;
    let interval = Duration::from_secs_f64(1.0 / o.rate);
    let slots = Arc::new(tokio::sync::Semaphore::new(1_000));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, bool)>();
    // Incompressible values, as most users' are: each put a slice of one
    // random pool at its own offset.
    let mut pool = vec![0u8; (1 << 20) + o.put_bytes];
    rand::rng().fill_bytes(&mut pool);
    let start = Instant::now();
    let end = start + o.window;
    let mut intended = start;
    let mut k = 0u64;
    let mut ticker = tokio::time::interval(Duration::from_millis(1));
    while intended < end {
        ticker.tick().await;
        while intended <= Instant::now() && intended < end {
            let permit = slots
                .clone()
                .acquire_owned()
                .await
                .map_err(|e| err(format!("writer slots: {e}")))?;
            let (t, tx, at) = (table.clone(), tx.clone(), intended);
            let row = format!("k{:04}-{k:010}", (k * 7919) % 10_000);
            let at_byte = ((k * 7_919) % (1 << 20)) as usize;
            let m = RowMutation::new(row).put("cf", "q", &pool[at_byte..at_byte + o.put_bytes]);
            tokio::spawn(async move {
                let ok = t.mutate(m).await.is_ok();
                let us = u64::try_from(at.elapsed().as_micros()).unwrap_or(u64::MAX);
                let _ = tx.send((us, ok));
                drop(permit);
            });
            k += 1;
            intended += interval;
        }
    }
    drop(tx);
    let mut h = hist();
    let mut errors = 0;
    while let Some((us, ok)) = rx.recv().await {
        h.saturating_record(us.max(1));
        errors += u64::from(!ok);
    }
    let elapsed = start.elapsed().as_secs_f64();
    let c1 = CpuReading::take(Some(&admin)).await;
    let r1 = requests(http).await?;
    Ok(Writers {
        puts: h.len(),
        errors,
        achieved_per_s: h.len() as f64 / elapsed.max(1e-9),
        p50_us: h.value_at_quantile(0.5),
        p99_us: h.value_at_quantile(0.99),
        p999_us: h.value_at_quantile(0.999),
        max_us: h.max(),
        cpu: c0.per_op(&c1, h.len()),
        object_store: req_delta(&r0, &r1),
    })
}

fn mb(b: f64) -> String {
    format!("{:.1} MB", b / 1e6)
}

/// The report as markdown.
pub fn markdown(r: &PitrReport) -> String {
    let mut s = format!(
        "# pitr\n\n{} puts/s of {} B values for {:.0} s per server, WAL in a local-directory bucket; the window's base every {:.0} s.\n\n\
         | writers | puts | errors | achieved/s | p50 | p99 | p99.9 | max | server CPU/put |\n|---|---|---|---|---|---|---|---|---|\n",
        r.rate, r.put_bytes, r.seconds, r.base_every_s
    );
    for (name, w) in [("window off", &r.off), ("window on", &r.on)] {
        s += &format!(
            "| {name} | {} | {} | {:.0} | {} µs | {} µs | {} µs | {} µs | {:.0} µs |\n",
            w.puts,
            w.errors,
            w.achieved_per_s,
            w.p50_us,
            w.p99_us,
            w.p999_us,
            w.max_us,
            w.cpu.server_us.unwrap_or(0.0)
        );
    }
    s += &format!(
        "\n| held for the window | value |\n|---|---|\n| values written | {} |\n| bucket, window off | {} |\n| bucket, window on | {} |\n| WAL history at the end (gauge) | {} objects, {} |\n| files only the bases keep at the end (gauge) | {}, {} |\n| window-on bucket beyond window-off, per hour at this rate | {} |\n",
        mb(r.value_bytes as f64),
        mb(r.bucket_bytes_off as f64),
        mb(r.bucket_bytes_on as f64),
        r.wal_history_objects,
        mb(r.wal_history_bytes as f64),
        r.window_files,
        mb(r.window_bytes as f64),
        mb(r.held_bytes_per_hour),
    );
    s += "\n| clone as of | took | rows |\n|---|---|---|\n";
    for c in &r.clones {
        s += &format!(
            "| {:.1} s before the end | {:.0} ms | {} |\n",
            c.seconds_back, c.wall_ms, c.rows
        );
    }
    s
}
