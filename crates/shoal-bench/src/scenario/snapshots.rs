//! `snapshots`: what a snapshot and a clone of a large table cost, and what
//! taking snapshots every second does to the writers of that table, in one
//! run against a `shoal serve` child (local directory bucket under the work
//! directory; this process is the client).
//!
//! 1. Load: a table pre-split into `regions` regions, filled with rows of
//!    one cell of 64–100 KB of incompressible bytes (slices of one random
//!    pool, so every value can be recomputed), then flushed; the server is
//!    left to go quiet (no object-store request for two seconds).
//! 2. Snapshots of the idle, flushed table: the client's wall time of
//!    `Admin::snapshot`, the server's `pause_micros` and `written_bytes`,
//!    object-store requests (deltas of `/metrics`) and bytes written to the
//!    bucket (the PUT-like counters' bytes, and the bucket directory's size).
//! 3. A clone of the first one: the same figures, then a sample of rows
//!    (each region's first and last row and random ones) read from the
//!    clone and the source and checked equal to each other and to the
//!    values loaded — any difference fails the run. The clone is dropped.
//! 4. Writers: single-row puts of `put_bytes` at a fixed rate across every
//!    region (open loop, latency from each put's intended start, as
//!    `writetail`) for two windows of equal length, the table flushed and
//!    the server quiet and a short paced warm-up (not counted) before
//!    each: one without snapshots, one taking a
//!    snapshot every `snapshot_every` (deleted after the window, timed).
//!    Per window: p50/p99/p99.9/max, server and client CPU per put,
//!    object-store requests.
//! 5. Clean-up: snapshots deleted, table dropped, server stopped, the work
//!    directory removed (also when a phase fails); the server's log is
//!    kept beside the reports.
//!
//! "Quiet" is: no object-store request for two seconds and less than
//! 64 MiB of the machine's page cache dirty (the load leaves gigabytes of
//! it, which the WAL's fsyncs would wait behind).

use super::ScenarioError;
use super::child::ChildServer;
use super::errors::{child_err, err, io};
use super::import::{Requests, req_delta, requests};
use super::svg::{Line, chart};
use crate::cpu::{CpuPerOp, CpuReading};
use futures::StreamExt;
use hdrhistogram::Histogram;
use rand::RngCore;
use serde::Serialize;
use shoal_client::{Admin, Client, Get, RowMutation, Scan, Table};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct SnapshotsOptions {
    /// Value bytes to load (about; whole rows).
    pub bytes: u64,
    /// Regions the table is pre-split into.
    pub regions: usize,
    /// Smallest value, bytes.
    pub value_min: usize,
    /// Largest value, bytes.
    pub value_max: usize,
    /// Rows per `mutate_many` call of the load.
    pub load_batch: usize,
    /// Load calls in flight.
    pub load_parallel: usize,
    /// Snapshots taken of the idle table (the first is cloned).
    pub idle_snapshots: usize,
    /// Rows per region the clone is checked on (at least the first and the
    /// last).
    pub sample_per_region: usize,
    /// Puts per second of the writer windows.
    pub rate: f64,
    /// Bytes per put of the writer windows.
    pub put_bytes: usize,
    /// Length of each writer window.
    pub window: Duration,
    /// Paced puts before each window, not counted (connections, the
    /// memstore's first segments).
    pub warmup: Duration,
    /// How often a snapshot starts in the second window.
    pub snapshot_every: Duration,
    /// The `shoal` binary run as the server.
    pub shoal_bin: PathBuf,
    /// Where the work directory (server data, bucket) is made and removed.
    pub work_parent: PathBuf,
}

/// The load.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LoadFigures {
    /// Rows loaded.
    pub rows: u64,
    /// Value bytes loaded.
    pub value_bytes: u64,
    /// Puts until the last one was acknowledged, seconds.
    pub seconds: f64,
    /// Value MB (10^6 B) per second of that.
    pub mb_per_s: f64,
    /// The closing `Admin::flush`, seconds.
    pub flush_seconds: f64,
    /// Then waiting for the server to go quiet, seconds.
    pub quiet_seconds: f64,
    /// Server CPU over load and flush, seconds.
    pub server_cpu_s: f64,
    /// This process's CPU over them, seconds.
    pub client_cpu_s: f64,
    /// The bucket directory afterwards: bytes and files.
    pub bucket_bytes: u64,
    /// Files in it.
    pub bucket_files: u64,
    /// Object-store requests of load and flush.
    pub object_store: Requests,
}

/// One snapshot (or clone) call.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CallFigures {
    /// What was called.
    pub what: String,
    /// The client's wall time of the call, ms.
    pub wall_ms: f64,
    /// The server's `pause_micros` (snapshots only).
    pub pause_us: u64,
    /// The server's `written_bytes`: memstore cells at the cut (snapshots).
    pub written_bytes: u64,
    /// Regions of the snapshot or the clone.
    pub regions: u64,
    /// Files the snapshot holds (snapshots).
    pub files: u64,
    /// Bytes of those files (snapshots).
    pub bytes: u64,
    /// Object-store requests (count, bytes) by operation during the call.
    pub object_store: Requests,
    /// Bytes the PUT-like requests (put, conditional_put, multipart) wrote.
    pub put_bytes: u64,
    /// Change of the bucket directory's size over the call.
    pub bucket_delta_bytes: i64,
    /// Server CPU over the call, ms.
    pub server_cpu_ms: f64,
}

/// The clone's check.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyFigures {
    /// Rows read from both tables and compared.
    pub rows: u64,
    /// Value bytes compared.
    pub bytes: u64,
    /// Per-region scans (first rows) compared.
    pub scans: u64,
    /// Seconds.
    pub seconds: f64,
    /// Object-store requests meanwhile (reads, and the clone's prefetch).
    pub object_store: Requests,
}

/// One second of a writer window.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Second {
    /// Puts whose intended start fell in it.
    pub puts: u64,
    /// p99, µs.
    pub p99_us: u64,
    /// Max, µs.
    pub max_us: u64,
}

/// A snapshot taken during the second writer window.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LoadedSnapshot {
    /// Seconds from the window's start to the call.
    pub start_s: f64,
    /// Client's wall time, ms.
    pub wall_ms: f64,
    /// The server's `pause_micros`.
    pub pause_us: u64,
    /// The server's `written_bytes`.
    pub written_bytes: u64,
}

/// One writer window.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WindowFigures {
    /// `no snapshots` or `snapshot every N s`.
    pub name: String,
    /// Its length, seconds.
    pub seconds: f64,
    /// Paced rate, puts/s.
    pub rate: f64,
    /// Puts made.
    pub puts: u64,
    /// Puts that failed.
    pub errors: u64,
    /// Puts per second achieved.
    pub achieved: f64,
    /// Latency from the intended start, µs.
    pub p50_us: u64,
    /// p99.
    pub p99_us: u64,
    /// p99.9.
    pub p999_us: u64,
    /// Max.
    pub max_us: u64,
    /// Server and client CPU per put (the snapshots' work included).
    pub cpu: CpuPerOp,
    /// Object-store requests over the window.
    pub object_store: Requests,
    /// Per second.
    pub per_second: Vec<Second>,
    /// Snapshots taken in it.
    pub snapshots: Vec<LoadedSnapshot>,
    /// Snapshot calls that failed (the first error beside).
    pub snapshot_errors: u64,
    /// The first snapshot error.
    pub snapshot_error: Option<String>,
    /// Deleting its snapshots afterwards, ms each.
    pub delete_ms: Vec<f64>,
    /// The page cache's dirty and writeback bytes when it began.
    pub dirty_bytes_at_start: u64,
}

/// The scenario's report.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotsReport {
    /// `release` or `debug` (the server is this binary).
    pub build: &'static str,
    /// Cores of the machine.
    pub cores: usize,
    /// Regions of the table.
    pub regions: usize,
    /// Values' size range, bytes.
    pub value_min: usize,
    /// Largest.
    pub value_max: usize,
    /// The load.
    pub load: LoadFigures,
    /// Snapshots of the idle, flushed table.
    pub snapshots: Vec<CallFigures>,
    /// Cloning the first.
    pub clone: CallFigures,
    /// Checking the clone against the source.
    pub verify: VerifyFigures,
    /// Dropping the clone (disable + drop), ms.
    pub clone_drop_ms: f64,
    /// Deleting the idle snapshots, ms each.
    pub idle_delete_ms: Vec<f64>,
    /// Without snapshots, then with one every `snapshot_every`.
    pub windows: Vec<WindowFigures>,
    /// The whole run, seconds.
    pub total_seconds: f64,
}

const TABLE: &str = "snapsrc";
const CLONE: &str = "snapclone";
pub(super) const FAMILY: &str = "f";
const QUALIFIER: &str = "v";
/// The random pool values are cut from.
const POOL_BYTES: usize = 32 << 20;
/// How long the server may take to go quiet.
const QUIET_MAX: Duration = Duration::from_secs(180);
/// Dirty page-cache bytes below which the disk counts as quiet.
const DIRTY_QUIET: u64 = 64 << 20;

pub(super) fn key(i: u64) -> String {
    format!("row{i:010}")
}

/// SplitMix64: a value's place in the pool, from its row number.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Incompressible bytes every value is a slice of.
pub(super) struct Pool {
    bytes: Vec<u8>,
    min: usize,
    max: usize,
}

impl Pool {
    pub(super) fn new(min: usize, max: usize) -> Pool {
        let mut bytes = vec![0u8; POOL_BYTES.max(max * 2)];
        rand::rng().fill_bytes(&mut bytes);
        Pool { bytes, min, max }
    }

    /// Row `i`'s value.
    fn value(&self, i: u64) -> &[u8] {
        let h = mix(i);
        let len = self.min + (h >> 40) as usize % (self.max - self.min + 1);
        let off = (h as usize) % (self.bytes.len() - len);
        &self.bytes[off..off + len]
    }

    /// `len` bytes for put number `k` of the writer windows.
    fn put_value(&self, k: u64, len: usize) -> &[u8] {
        let off = (mix(k ^ 0x5555_0000_0000) as usize) % (self.bytes.len() - len);
        &self.bytes[off..off + len]
    }

    pub(super) fn mean(&self) -> u64 {
        ((self.min + self.max) / 2) as u64
    }
}

/// Bytes and files under `dir`.
pub(super) fn dir_size(dir: &Path) -> (u64, u64) {
    let (mut bytes, mut files) = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) => {
                    bytes += m.len();
                    files += 1;
                }
                Err(_) => {}
            }
        }
    }
    (bytes, files)
}

fn put_bytes(r: &Requests) -> u64 {
    ["put", "conditional_put", "multipart"]
        .iter()
        .filter_map(|op| r.get(*op).map(|(_, b)| *b))
        .sum()
}

fn server_cpu_s(a: &CpuReading, b: &CpuReading) -> f64 {
    a.per_op(b, 1).server_us.unwrap_or(0.0) / 1e6
}

pub(super) fn config(root: &Path) -> String {
    let p = |p: PathBuf| {
        p.display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    };
    format!(
        "[thrift]\naddr = \"127.0.0.1:0\"\n\n[rest]\naddr = \"127.0.0.1:0\"\n\n[hbase_rpc]\naddr = \"127.0.0.1:0\"\n\n\
         [server]\ngrpc_addr = \"127.0.0.1:0\"\nhttp_addr = \"127.0.0.1:0\"\ndata_dir = \"{}\"\n\n\
         [object_store]\nurl = \"file://{}\"\n",
        p(root.join("data")),
        p(root.join("bucket")),
    )
}

/// The machine's dirty and under-writeback page-cache bytes
/// (`/proc/meminfo`; 0 where it cannot be read).
fn dirty_bytes() -> u64 {
    let Ok(text) = std::fs::read_to_string("/proc/meminfo") else {
        return 0;
    };
    text.lines()
        .filter(|l| l.starts_with("Dirty:") || l.starts_with("Writeback:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum::<u64>()
        * 1024
}

/// Waits until the server has made no object-store request for two
/// one-second readings in a row (flushes and compactions done) and the
/// page cache holds less than [`DIRTY_QUIET`] waiting for the disk (the
/// WAL's fsyncs would queue behind it); the seconds waited.
pub(super) async fn quiet(http: SocketAddr) -> Result<f64, ScenarioError> {
    quiet_below(http, DIRTY_QUIET).await
}

/// [`quiet`] with another bound on the page cache's dirty bytes
/// (`u64::MAX`: the server's requests only).
pub(super) async fn quiet_below(http: SocketAddr, dirty: u64) -> Result<f64, ScenarioError> {
    let start = Instant::now();
    let total = |r: &Requests| r.values().map(|(n, _)| n).sum::<u64>();
    let mut last = total(&requests(http).await?);
    let mut still = 0;
    while (still < 2 || dirty_bytes() > dirty) && start.elapsed() < QUIET_MAX {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = total(&requests(http).await?);
        still = if now == last { still + 1 } else { 0 };
        last = now;
    }
    Ok(start.elapsed().as_secs_f64())
}

/// Runs the scenario; reports go to `out` as `snapshots.{json,md,svg}`.
pub async fn run(o: &SnapshotsOptions, out: &Path) -> Result<SnapshotsReport, ScenarioError> {
    if o.value_min == 0 || o.value_max < o.value_min || o.regions == 0 {
        return Err(err("value sizes and regions must be positive"));
    }
    std::fs::create_dir_all(&o.work_parent).map_err(io(&o.work_parent))?;
    let work = tempfile::Builder::new()
        .prefix("shoal-bench-snapshots-")
        .tempdir_in(&o.work_parent)
        .map_err(io(&o.work_parent))?;
    let w = work.path().to_path_buf();
    let result = async {
        std::fs::create_dir_all(w.join("bucket")).map_err(io(&w))?;
        let cfg = w.join("server.toml");
        std::fs::write(&cfg, config(&w)).map_err(io(&cfg))?;
        let server = ChildServer::start(&o.shoal_bin, &cfg, &w.join("server.log"))
            .await
            .map_err(child_err)?;
        eprintln!(
            "snapshots: shoal serve pid {} (gRPC {}, HTTP {}), work directory {}",
            server.pid().unwrap_or(0),
            server.grpc,
            server.http,
            w.display()
        );
        let r = phases(o, &server, &w).await;
        let stopped = server
            .terminate(Duration::from_secs(60))
            .await
            .map_err(child_err);
        let report = r?;
        stopped?;
        Ok::<_, ScenarioError>(report)
    }
    .await;
    // The server's log is kept beside the reports (its "snapshot taken" and
    // "snapshot cloned" lines time each step); the bucket and the server's
    // data go whatever happened.
    if std::fs::create_dir_all(out).is_ok() {
        let _ = std::fs::copy(w.join("server.log"), out.join("snapshots-server.log"));
    }
    let removed = work.close().map_err(io(&w));
    let report = result?;
    removed?;
    let md = markdown(&report, o);
    let svg = svg(&report);
    super::write_report(out, "snapshots", &report, &md, &svg)?;
    Ok(report)
}

async fn phases(
    o: &SnapshotsOptions,
    server: &ChildServer,
    w: &Path,
) -> Result<SnapshotsReport, ScenarioError> {
    let started = Instant::now();
    let http = server.http;
    let bucket = w.join("bucket");
    let client = Client::connect(&server.grpc.to_string()).await?;
    let admin = client.admin();
    let pool = Arc::new(Pool::new(o.value_min, o.value_max));
    let rows = (o.bytes / pool.mean()).max(o.regions as u64 * 2);
    let first_of = |k: usize| rows * k as u64 / o.regions as u64;
    let splits: Vec<Vec<u8>> = (1..o.regions)
        .map(|k| key(first_of(k)).into_bytes())
        .collect();
    admin
        .create_table(TABLE, vec![Admin::family(FAMILY)], splits)
        .await
        .map_err(|e| err(format!("creating table {TABLE}: {e}")))?;
    let table = client.table(TABLE);

    // 1. Load and flush.
    eprintln!(
        "snapshots: loading {rows} rows of {}–{} KB into {} regions",
        o.value_min >> 10,
        o.value_max >> 10,
        o.regions
    );
    let r0 = requests(http).await?;
    let c0 = CpuReading::take(Some(&admin)).await;
    let t0 = Instant::now();
    let value_bytes = load(&table, &pool, rows, o.load_batch, o.load_parallel).await?;
    let load_s = t0.elapsed().as_secs_f64();
    let f0 = Instant::now();
    admin.flush(TABLE).await?;
    let flush_s = f0.elapsed().as_secs_f64();
    let c1 = CpuReading::take(Some(&admin)).await;
    let r1 = requests(http).await?;
    let quiet_s = quiet(http).await?;
    let (bucket_bytes, bucket_files) = dir_size(&bucket);
    let load_figures = LoadFigures {
        rows,
        value_bytes,
        seconds: load_s,
        mb_per_s: value_bytes as f64 / 1e6 / load_s.max(1e-9),
        flush_seconds: flush_s,
        quiet_seconds: quiet_s,
        server_cpu_s: server_cpu_s(&c0, &c1),
        client_cpu_s: c0.per_op(&c1, 1).client_us / 1e6,
        bucket_bytes,
        bucket_files,
        object_store: req_delta(&r0, &r1),
    };
    eprintln!(
        "snapshots: loaded {:.2} GB in {load_s:.1} s ({:.0} MB/s), flush {flush_s:.1} s, quiet after {quiet_s:.0} s; bucket {:.2} GB in {bucket_files} files",
        value_bytes as f64 / 1e9,
        load_figures.mb_per_s,
        bucket_bytes as f64 / 1e9
    );

    // 2. Snapshots of the idle, flushed table.
    let mut idle = Vec::new();
    for i in 0..o.idle_snapshots.max(1) {
        let name = format!("idle{i}");
        let (f, _) = measured(&admin, http, &bucket, &name, async {
            admin.snapshot(TABLE, &name).await
        })
        .await?;
        let f = f.snapshot();
        eprintln!(
            "snapshots: snapshot {name}: {:.1} ms, pause {} µs, {} bytes written, {} files of {:.2} GB held; object store: {}",
            f.wall_ms,
            f.pause_us,
            f.written_bytes,
            f.files,
            f.bytes as f64 / 1e9,
            ops(&f.object_store)
        );
        idle.push(f);
        if i == 0 {
            quiet(http).await?;
        }
    }

    // 3. Clone the first, check it, drop it.
    let (clone, described) = measured(&admin, http, &bucket, "clone", async {
        admin.clone_snapshot("idle0", CLONE).await
    })
    .await?;
    let mut clone = clone.figures;
    clone.regions = described.regions.len() as u64;
    eprintln!(
        "snapshots: clone: {:.1} ms, {} regions; object store: {}",
        clone.wall_ms,
        clone.regions,
        ops(&clone.object_store)
    );
    if clone.regions != o.regions as u64 {
        return Err(err(format!(
            "the clone has {} regions, the source {}",
            clone.regions, o.regions
        )));
    }
    let verify = verify_clone(&client, http, &pool, rows, o).await?;
    eprintln!(
        "snapshots: clone checked: {} rows ({:.1} MB) and {} scans equal to the source and to the values loaded, {:.1} s",
        verify.rows,
        verify.bytes as f64 / 1e6,
        verify.scans,
        verify.seconds
    );
    let d0 = Instant::now();
    admin.disable(CLONE).await?;
    admin.drop_table(CLONE).await?;
    let clone_drop_ms = d0.elapsed().as_secs_f64() * 1e3;
    let mut idle_delete_ms = Vec::new();
    for f in idle.iter().skip(1) {
        let d = Instant::now();
        admin.delete_snapshot(&f.what).await?;
        idle_delete_ms.push(d.elapsed().as_secs_f64() * 1e3);
    }

    // 4. Writers without and with snapshots.
    let seq = Arc::new(AtomicU64::new(0));
    let mut windows = Vec::new();
    for with in [false, true] {
        admin.flush(TABLE).await?;
        quiet(http).await?;
        let name = if with {
            format!("snapshot every {:.0} s", o.snapshot_every.as_secs_f64())
        } else {
            "no snapshots".to_string()
        };
        eprintln!(
            "snapshots: writers at {:.0} puts/s for {:?}: {name}",
            o.rate, o.window
        );
        if !o.warmup.is_zero() {
            let warm = SnapshotsOptions {
                window: o.warmup,
                ..o.clone()
            };
            let table = client.table(TABLE);
            paced_puts(&table, &pool, rows, &seq, &warm, Instant::now()).await?;
        }
        let win = window(&client, http, &pool, rows, &seq, o, with, name).await?;
        eprintln!(
            "snapshots: {}: {} puts ({} failed), p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms; {}; {} snapshots",
            win.name,
            win.puts,
            win.errors,
            win.p50_us as f64 / 1e3,
            win.p99_us as f64 / 1e3,
            win.p999_us as f64 / 1e3,
            win.max_us as f64 / 1e3,
            win.cpu.describe(),
            win.snapshots.len()
        );
        windows.push(win);
    }

    // 5. Clean-up.
    admin.delete_snapshot("idle0").await?;
    admin.disable(TABLE).await?;
    admin.drop_table(TABLE).await?;
    let left = admin.list_snapshots().await?;
    if !left.is_empty() {
        return Err(err(format!(
            "{} snapshots left after the clean-up",
            left.len()
        )));
    }
    Ok(SnapshotsReport {
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        regions: o.regions,
        value_min: o.value_min,
        value_max: o.value_max,
        load: load_figures,
        snapshots: idle,
        clone,
        verify,
        clone_drop_ms,
        idle_delete_ms,
        windows,
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

/// Loads rows `0..rows` in key order (region after region), `batch` rows
/// per call, `parallel` calls in flight; the value bytes loaded.
pub(super) async fn load(
    table: &Table,
    pool: &Arc<Pool>,
    rows: u64,
    batch: usize,
    parallel: usize,
) -> Result<u64, ScenarioError> {
    let batch = batch.max(1) as u64;
    let batches = rows.div_ceil(batch);
    let done = Arc::new(AtomicU64::new(0));
    let tenth = (batches / 10).max(1);
    let start = Instant::now();
    let calls = futures::stream::iter(0..batches)
        .map(|b| {
            let (table, pool, done) = (table.clone(), pool.clone(), done.clone());
            async move {
                let range = b * batch..((b + 1) * batch).min(rows);
                let mut bytes = 0u64;
                let mutations: Vec<RowMutation> = range
                    .clone()
                    .map(|i| {
                        let v = pool.value(i);
                        bytes += v.len() as u64;
                        RowMutation::new(key(i)).put(FAMILY, QUALIFIER, v)
                    })
                    .collect();
                let results = table.mutate_many(mutations).await?;
                for (i, r) in range.zip(results) {
                    r.map_err(|e| err(format!("loading row {}: {e}", key(i))))?;
                }
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if n % tenth == 0 {
                    eprintln!(
                        "snapshots: load {:.0} % after {:.0} s",
                        n as f64 * 100.0 / batches as f64,
                        start.elapsed().as_secs_f64()
                    );
                }
                Ok::<_, ScenarioError>(bytes)
            }
        })
        .buffer_unordered(parallel.max(1));
    let mut calls = std::pin::pin!(calls);
    let mut total = 0;
    while let Some(r) = calls.next().await {
        total += r?;
    }
    Ok(total)
}

/// A call measured: wall time, server CPU, object-store requests, bucket.
struct Measured {
    figures: CallFigures,
    snap: Option<shoal_client::proto::SnapshotDescription>,
}

impl Measured {
    fn snapshot(mut self) -> CallFigures {
        if let Some(s) = self.snap.take() {
            self.figures.pause_us = s.pause_micros;
            self.figures.written_bytes = s.written_bytes;
            self.figures.regions = s.regions;
            self.figures.files = s.files;
            self.figures.bytes = s.bytes;
        }
        self.figures
    }
}

/// What a call returned that the figures read.
trait Described {
    fn description(&self) -> Option<shoal_client::proto::SnapshotDescription>;
}

impl Described for shoal_client::proto::SnapshotDescription {
    fn description(&self) -> Option<shoal_client::proto::SnapshotDescription> {
        Some(self.clone())
    }
}

impl Described for shoal_client::proto::TableDescription {
    fn description(&self) -> Option<shoal_client::proto::SnapshotDescription> {
        None
    }
}

async fn measured<T: Described>(
    admin: &Admin,
    http: SocketAddr,
    bucket: &Path,
    what: &str,
    call: impl std::future::Future<Output = Result<T, shoal_client::ClientError>>,
) -> Result<(Measured, T), ScenarioError> {
    let r0 = requests(http).await?;
    let (b0, _) = dir_size(bucket);
    let c0 = CpuReading::take(Some(admin)).await;
    let t0 = Instant::now();
    let out = call.await?;
    let wall = t0.elapsed();
    let c1 = CpuReading::take(Some(admin)).await;
    let r1 = requests(http).await?;
    let (b1, _) = dir_size(bucket);
    let object_store = req_delta(&r0, &r1);
    let figures = CallFigures {
        what: what.to_string(),
        wall_ms: wall.as_secs_f64() * 1e3,
        put_bytes: put_bytes(&object_store),
        object_store,
        bucket_delta_bytes: b1 as i64 - b0 as i64,
        server_cpu_ms: server_cpu_s(&c0, &c1) * 1e3,
        ..CallFigures::default()
    };
    let snap = out.description();
    Ok((Measured { figures, snap }, out))
}

/// Reads a sample of rows from the clone and the source: equal to each
/// other and to the values loaded, or an error.
async fn verify_clone(
    client: &Client,
    http: SocketAddr,
    pool: &Arc<Pool>,
    rows: u64,
    o: &SnapshotsOptions,
) -> Result<VerifyFigures, ScenarioError> {
    let r0 = requests(http).await?;
    let t0 = Instant::now();
    let (source, clone) = (client.table(TABLE), client.table(CLONE));
    let regions = o.regions as u64;
    let mut sample = Vec::new();
    for k in 0..regions {
        let (first, end) = (rows * k / regions, rows * (k + 1) / regions);
        sample.push(first);
        sample.push(end - 1);
        for _ in 2..o.sample_per_region {
            sample.push(rand::random_range(first..end));
        }
    }
    sample.sort_unstable();
    sample.dedup();
    let checks = futures::stream::iter(sample.iter().copied())
        .map(|i| {
            let (source, clone, pool) = (source.clone(), clone.clone(), pool.clone());
            async move {
                let row = key(i);
                let a = source.get(Get::new(&row)).await?;
                let b = clone.get(Get::new(&row)).await?;
                let want = pool.value(i);
                if a.cells != b.cells {
                    return Err(err(format!(
                        "row {row}: the clone's cells differ from the source's ({} cells vs {})",
                        b.cells.len(),
                        a.cells.len()
                    )));
                }
                match b.cells.as_slice() {
                    [c] if &c.family[..] == FAMILY.as_bytes()
                        && &c.qualifier[..] == QUALIFIER.as_bytes()
                        && &c.value[..] == want => {}
                    cells => {
                        return Err(err(format!(
                            "row {row}: the clone does not hold the value loaded ({} cells, first value {} bytes, loaded {} bytes)",
                            cells.len(),
                            cells.first().map_or(0, |c| c.value.len()),
                            want.len()
                        )));
                    }
                }
                Ok::<_, ScenarioError>(want.len() as u64)
            }
        })
        .buffer_unordered(8);
    let mut checks = std::pin::pin!(checks);
    let (mut n, mut bytes) = (0u64, 0u64);
    while let Some(r) = checks.next().await {
        bytes += r?;
        n += 1;
    }
    // Each region's first rows by scan: the same keys in both, the first
    // one the region's first row (nothing missing, nothing extra).
    let mut scans = 0u64;
    for k in 0..regions {
        let first = rows * k / regions;
        let scan = || Scan::new().start(key(first)).limit(3).rows_per_message(3);
        let a = source.scan_collect(scan()).await?;
        let b = clone.scan_collect(scan()).await?;
        let keys =
            |r: &[shoal_client::proto::Row]| r.iter().map(|r| r.row.to_vec()).collect::<Vec<_>>();
        let want: Vec<Vec<u8>> = (first..(first + 3).min(rows))
            .map(|i| key(i).into_bytes())
            .collect();
        if keys(&a) != keys(&b) || keys(&b) != want {
            return Err(err(format!(
                "scan from {}: the clone's rows differ from the source's or from the rows loaded",
                key(first)
            )));
        }
        scans += 1;
    }
    let r1 = requests(http).await?;
    Ok(VerifyFigures {
        rows: n,
        bytes,
        scans,
        seconds: t0.elapsed().as_secs_f64(),
        object_store: req_delta(&r0, &r1),
    })
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap_or_else(|_| std::process::abort())
}

/// One writer window: paced puts (and, `with`, a snapshot every
/// `snapshot_every`, deleted afterwards).
#[allow(clippy::too_many_arguments)]
async fn window(
    client: &Client,
    http: SocketAddr,
    pool: &Arc<Pool>,
    rows: u64,
    seq: &Arc<AtomicU64>,
    o: &SnapshotsOptions,
    with: bool,
    name: String,
) -> Result<WindowFigures, ScenarioError> {
    let admin = client.admin();
    let table = client.table(TABLE);
    let dirty = dirty_bytes();
    let r0 = requests(http).await?;
    let c0 = CpuReading::take(Some(&admin)).await;
    let start = Instant::now();
    let end = start + o.window;
    let snapshots = with.then(|| {
        let (admin, every) = (admin.clone(), o.snapshot_every);
        tokio::spawn(async move {
            let mut taken: Vec<(String, LoadedSnapshot)> = Vec::new();
            let mut failed: Vec<String> = Vec::new();
            let mut next = start;
            let mut n = 0u64;
            while next < end {
                tokio::time::sleep_until(next.into()).await;
                let name = format!("load{n}");
                n += 1;
                let t = Instant::now();
                match admin.snapshot(TABLE, &name).await {
                    Ok(s) => taken.push((
                        name,
                        LoadedSnapshot {
                            start_s: (t - start).as_secs_f64(),
                            wall_ms: t.elapsed().as_secs_f64() * 1e3,
                            pause_us: s.pause_micros,
                            written_bytes: s.written_bytes,
                        },
                    )),
                    Err(e) => failed.push(format!("{name}: {e}")),
                }
                // A snapshot longer than the period: the next starts now.
                next = (next + every).max(Instant::now());
            }
            (taken, failed)
        })
    });
    let paced = paced_puts(&table, pool, rows, seq, o, start).await?;
    let elapsed = start.elapsed();
    let (taken, failed) = match snapshots {
        Some(h) => h
            .await
            .map_err(|e| err(format!("the snapshot task: {e}")))?,
        None => (Vec::new(), Vec::new()),
    };
    let c1 = CpuReading::take(Some(&admin)).await;
    let r1 = requests(http).await?;
    let mut delete_ms = Vec::new();
    for (name, _) in &taken {
        let d = Instant::now();
        admin.delete_snapshot(name).await?;
        delete_ms.push(d.elapsed().as_secs_f64() * 1e3);
    }
    let mut all = hist();
    for h in &paced.per_second {
        let _ = all.add(h);
    }
    Ok(WindowFigures {
        name,
        seconds: o.window.as_secs_f64(),
        rate: o.rate,
        puts: all.len(),
        errors: paced.errors,
        achieved: all.len() as f64 / elapsed.as_secs_f64().max(1e-9),
        p50_us: all.value_at_quantile(0.5),
        p99_us: all.value_at_quantile(0.99),
        p999_us: all.value_at_quantile(0.999),
        max_us: all.max(),
        cpu: c0.per_op(&c1, all.len()),
        object_store: req_delta(&r0, &r1),
        per_second: paced
            .per_second
            .iter()
            .map(|h| Second {
                puts: h.len(),
                p99_us: h.value_at_quantile(0.99),
                max_us: h.max(),
            })
            .collect(),
        snapshot_errors: failed.len() as u64,
        snapshot_error: failed.into_iter().next(),
        snapshots: taken.into_iter().map(|(_, s)| s).collect(),
        delete_ms,
        dirty_bytes_at_start: dirty,
    })
}

/// Latencies of a paced run, by second of intended start.
struct Paced {
    per_second: Vec<Histogram<u64>>,
    errors: u64,
}

/// Single-row puts at `o.rate` from `start` for `o.window`, open loop (as
/// `writetail`): an OS thread hands the puts that are due to the runtime
/// every 200 µs, each put is a task of its own, latency counts from its
/// intended start; at most 1,000 in flight.
async fn paced_puts(
    table: &Table,
    pool: &Arc<Pool>,
    rows: u64,
    seq: &Arc<AtomicU64>,
    o: &SnapshotsOptions,
    start: Instant,
) -> Result<Paced, ScenarioError> {
    const MAX_IN_FLIGHT: usize = 1_000;
    const TICK: Duration = Duration::from_micros(200);
    let interval = Duration::from_secs_f64(1.0 / o.rate.max(1.0));
    let seconds = o.window.as_secs_f64().ceil().max(1.0) as usize;
    let end = start + o.window;
    let put_bytes = o.put_bytes.clamp(1, pool.bytes.len() / 2);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, u64, bool)>();
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_IN_FLIGHT));
    let collector = tokio::spawn(async move {
        let mut hs: Vec<Histogram<u64>> = (0..seconds).map(|_| hist()).collect();
        let mut errors = 0u64;
        while let Some((s, us, ok)) = rx.recv().await {
            if let Some(h) = hs.get_mut(s.min(seconds - 1)) {
                h.saturating_record(us.max(1));
            }
            errors += u64::from(!ok);
        }
        (hs, errors)
    });
    let handle = tokio::runtime::Handle::current();
    let parts = (table.clone(), pool.clone(), seq.clone());
    let dispatcher = std::thread::Builder::new()
        .name("snapshots-gen".into())
        .spawn(move || {
            let (table, pool, seq) = parts;
            let mut intended = start;
            let mut due = Vec::new();
            let send = |due: &mut Vec<(u64, Instant, tokio::sync::OwnedSemaphorePermit)>| {
                if due.is_empty() {
                    return;
                }
                let (t, pool, tx) = (table.clone(), pool.clone(), tx.clone());
                let batch = std::mem::take(due);
                handle.spawn(async move {
                    for (k, at, permit) in batch {
                        let (t, pool, tx) = (t.clone(), pool.clone(), tx.clone());
                        tokio::spawn(async move {
                            // A new row beside a loaded one: every region.
                            let row = format!("{}w{k:09}", key(mix(k) % rows));
                            let m = RowMutation::new(row).put(
                                FAMILY,
                                QUALIFIER,
                                pool.put_value(k, put_bytes),
                            );
                            let ok = t.mutate(m).await.is_ok();
                            let latency = Instant::now().saturating_duration_since(at);
                            let s = (at - start).as_secs() as usize;
                            let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
                            let _ = tx.send((s, us, ok));
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
        .map_err(|e| err(format!("starting the load generator thread: {e}")))?;
    let _ = tokio::task::spawn_blocking(move || dispatcher.join()).await;
    let (per_second, errors) = collector
        .await
        .map_err(|e| err(format!("the latency collector: {e}")))?;
    Ok(Paced { per_second, errors })
}

fn ops(r: &Requests) -> String {
    if r.is_empty() {
        return "none".into();
    }
    r.iter()
        .map(|(op, (n, b))| {
            if *b > 0 {
                format!("{op} {n} ({})", size(*b))
            } else {
                format!("{op} {n}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn size(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} KB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

fn signed(b: i64) -> String {
    if b < 0 {
        format!("−{}", size(b.unsigned_abs()))
    } else {
        format!("+{}", size(b as u64))
    }
}

fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[((s.len() - 1) as f64 * q).round() as usize]
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "**missed**" }
}

/// The markdown report (also printed at the end of the run).
pub fn markdown(r: &SnapshotsReport, o: &SnapshotsOptions) -> String {
    let l = &r.load;
    let ms = |us: u64| us as f64 / 1e3;
    let mut s = format!(
        "## snapshots: snapshot and clone of a {} table in {} regions, writers with and without snapshots\n\n\
         {} build, {} cores; `shoal serve` child on a local directory bucket, this process the client. \
         {} rows of one cell of {}–{} KB of random bytes ({}), loaded in {:.1} s ({:.0} MB/s; \
         server {:.0} CPU s, client {:.0} CPU s), flushed in {:.1} s, quiet {:.0} s later; bucket {} in {} files. \
         Whole run {:.0} s.\n\n\
         | call | wall ms | pause µs | memstore bytes written | files held (bytes) | object-store requests | bytes PUT | bucket Δ | server CPU ms |\n\
         |---|---:|---:|---:|---|---|---:|---:|---:|\n",
        size(l.value_bytes),
        r.regions,
        r.build,
        r.cores,
        l.rows,
        r.value_min >> 10,
        r.value_max >> 10,
        size(l.value_bytes),
        l.seconds,
        l.mb_per_s,
        l.server_cpu_s,
        l.client_cpu_s,
        l.flush_seconds,
        l.quiet_seconds,
        size(l.bucket_bytes),
        l.bucket_files,
        r.total_seconds,
    );
    let row = |f: &CallFigures, name: &str, snap: bool| {
        format!(
            "| {name} | {:.1} | {} | {} | {} | {} | {} | {} | {:.1} |\n",
            f.wall_ms,
            if snap {
                f.pause_us.to_string()
            } else {
                "–".into()
            },
            if snap {
                size(f.written_bytes)
            } else {
                "–".into()
            },
            if snap {
                format!("{} ({})", f.files, size(f.bytes))
            } else {
                "–".into()
            },
            ops(&f.object_store),
            size(f.put_bytes),
            signed(f.bucket_delta_bytes),
            f.server_cpu_ms
        )
    };
    for f in &r.snapshots {
        s += &row(f, &format!("snapshot `{}` (idle, flushed)", f.what), true);
    }
    s += &row(
        &r.clone,
        &format!("clone of `idle0` ({} regions)", r.clone.regions),
        false,
    );
    let first = r.snapshots.first();
    let snap_ok = first.is_some_and(|f| f.wall_ms <= 1000.0);
    let zero = r.snapshots.iter().all(|f| f.written_bytes == 0);
    s += &format!(
        "\nGoals: snapshot ≤ 1 s: {} ({:.1} ms); 0 data bytes written: {} ({} memstore bytes; the bytes PUT are the snapshot's record and the catalog); clone ≤ 1 s: {} ({:.1} ms).\n\n\
         Clone checked: {} rows ({}) read from the clone and the source, equal to each other and to the values loaded, and each region's first 3 rows by scan ({} scans), in {:.1} s; object store meanwhile (the clone's prefetch-on-open included): {}. \
         Dropping the clone {:.0} ms; deleting an idle snapshot {} ms.\n\n",
        verdict(snap_ok),
        first.map_or(0.0, |f| f.wall_ms),
        verdict(zero),
        r.snapshots.iter().map(|f| f.written_bytes).sum::<u64>(),
        verdict(r.clone.wall_ms <= 1000.0),
        r.clone.wall_ms,
        r.verify.rows,
        size(r.verify.bytes),
        r.verify.scans,
        r.verify.seconds,
        ops(&r.verify.object_store),
        r.clone_drop_ms,
        r.idle_delete_ms
            .iter()
            .map(|d| format!("{d:.0}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    s += &format!(
        "Writers: single-row puts of {} B at {:.0}/s, open loop, keys across all {} regions, latency from the intended start; two windows of {:.0} s, the table flushed, the server quiet and {:.0} s of the same puts (not counted) before each.\n\n\
         | window | puts | failed | achieved/s | p50 ms | p99 ms | p99.9 ms | max ms | server CPU µs/put | client CPU µs/put | object-store requests | dirty pages at start |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n",
        o.put_bytes,
        o.rate,
        r.regions,
        o.window.as_secs_f64(),
        o.warmup.as_secs_f64()
    );
    for w in &r.windows {
        s += &format!(
            "| {} | {} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} | {:.0} | {} | {} |\n",
            w.name,
            w.puts,
            w.errors,
            w.achieved,
            ms(w.p50_us),
            ms(w.p99_us),
            ms(w.p999_us),
            ms(w.max_us),
            w.cpu.server_us.unwrap_or(0.0),
            w.cpu.client_us,
            ops(&w.object_store),
            size(w.dirty_bytes_at_start)
        );
    }
    for w in r
        .windows
        .iter()
        .filter(|w| !w.snapshots.is_empty() || w.snapshot_errors > 0)
    {
        let walls: Vec<f64> = w.snapshots.iter().map(|x| x.wall_ms).collect();
        let pauses: Vec<f64> = w.snapshots.iter().map(|x| x.pause_us as f64).collect();
        let written: Vec<f64> = w.snapshots.iter().map(|x| x.written_bytes as f64).collect();
        s += &format!(
            "\nSnapshots under the writers ({}): {} taken, {} failed{}; wall p50 {:.0} ms, max {:.0} ms; pause p50 {:.0} µs, max {:.0} µs; memstore bytes written p50 {}, max {}, total {}; deleting them afterwards p50 {:.0} ms, max {:.0} ms.\n",
            w.name,
            w.snapshots.len(),
            w.snapshot_errors,
            w.snapshot_error
                .as_ref()
                .map_or_else(String::new, |e| format!(" (first: {e})")),
            quantile(&walls, 0.5),
            quantile(&walls, 1.0),
            quantile(&pauses, 0.5),
            quantile(&pauses, 1.0),
            size(quantile(&written, 0.5) as u64),
            size(quantile(&written, 1.0) as u64),
            size(written.iter().sum::<f64>() as u64),
            quantile(&w.delete_ms, 0.5),
            quantile(&w.delete_ms, 1.0),
        );
    }
    s
}

fn svg(r: &SnapshotsReport) -> String {
    let colors = ["#2563eb", "#dc2626", "#16a34a", "#6b7280"];
    let lines: Vec<Line> = r
        .windows
        .iter()
        .zip(colors)
        .map(|(w, color)| Line {
            name: format!("{}: p99", w.name),
            color,
            points: w
                .per_second
                .iter()
                .enumerate()
                .map(|(i, s)| ((i + 1) as f64, s.p99_us as f64 / 1e3))
                .collect(),
        })
        .collect();
    let events: Vec<f64> = r
        .windows
        .iter()
        .flat_map(|w| w.snapshots.iter().map(|s| s.start_s))
        .collect();
    chart(
        "snapshots: put p99 per second, without and with a snapshot every second (marks: snapshot starts)",
        "seconds into the window",
        "latency (ms)",
        &lines,
        &events,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_stable_and_in_range() {
        let pool = Pool::new(64 << 10, 100 << 10);
        for i in [0u64, 1, 17, 1 << 40] {
            let v = pool.value(i);
            assert!((64 << 10..=100 << 10).contains(&v.len()));
            assert_eq!(v, pool.value(i));
        }
        assert_ne!(pool.value(1), pool.value(2));
        assert_eq!(pool.put_value(3, 1000).len(), 1000);
    }

    #[test]
    fn dir_size_counts_nested_files() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("a/b")).unwrap();
        std::fs::write(d.path().join("a/b/x"), [0u8; 10]).unwrap();
        std::fs::write(d.path().join("y"), [0u8; 5]).unwrap();
        assert_eq!(dir_size(d.path()), (15, 2));
    }
}
