//! `snapshot-export`: the throughput of `shoal snapshot export` against a
//! plain parallel copy of the same objects, in the same run, with the
//! source bucket's S3 latency and per-request bandwidth emulated.
//!
//! This file owns the experiment and the baseline:
//!
//! 1. Setup: a `shoal serve` child on a local directory bucket (L2 off), a
//!    table pre-split into `regions` regions loaded with incompressible
//!    values (the `snapshots` scenario's loader), flushed, the server left
//!    to go quiet, a snapshot taken, the server stopped (both sides read
//!    its bucket directly).
//! 2. Rounds, alternating which side goes first (copy, export, export,
//!    copy, …), each into a fresh local directory that is removed after the
//!    run, each after a `sync` (what the run before left in the page cache
//!    written back, not timed):
//!    - **export**: `shoal snapshot export` (this binary, a child process)
//!      with `--config` a copy of the server's configuration that adds
//!      `[object_store.emulate]`;
//!    - **copy**: `shoal bench plain-copy` (this binary, a hidden
//!      subcommand, a child process) with the same configuration: the same
//!      files of the snapshot, largest first, `parallel` at once, each one
//!      GET of the whole object and one PUT ([`plain_copy`]); no check, no
//!      progress.
//!
//!    Per run: objects, bytes, wall time from spawn to exit, MB/s, the
//!    child's CPU (read from its zombie) and peak RSS.
//! 3. Clean-up: the work directory is removed (also when a phase fails);
//!    the server's and the children's logs are kept beside the reports.

use super::ScenarioError;
use super::child::ChildServer;
use super::errors::{child_err, err, io};
use super::procs::{self, Running};
use super::snapshots::{FAMILY, Pool, config, dir_size, key, load, quiet_below};
use super::svg::{Line, chart};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use shoal_client::{Admin, Client};
use shoal_server::catalog::CatalogStore;
use shoal_server::snapshots::SnapshotRecord;
use shoal_storage::object::{Bucket, ObjectStoreConfig};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct SnapshotExportOptions {
    /// Value bytes to load (about; whole rows).
    pub bytes: u64,
    /// Regions the table is pre-split into.
    pub regions: usize,
    /// Objects copied at once, by both sides.
    pub parallel: usize,
    /// Rounds of one copy and one export each.
    pub rounds: usize,
    /// Emulated time to first byte of every source request.
    pub latency: Duration,
    /// Uniform jitter around it.
    pub jitter: Duration,
    /// Emulated bandwidth of one source request, bytes/s.
    pub bandwidth: u64,
    /// The `shoal` binary: the server, the export and the copy.
    pub shoal_bin: PathBuf,
    /// Where the work directory (server data, bucket, targets) is made and
    /// removed.
    pub work_parent: PathBuf,
}

/// The table and its snapshot.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Setup {
    /// Rows loaded.
    pub rows: u64,
    /// Value bytes loaded.
    pub value_bytes: u64,
    /// The load, seconds.
    pub load_seconds: f64,
    /// The flush, seconds.
    pub flush_seconds: f64,
    /// Files the snapshot holds (each once).
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Largest file, bytes.
    pub largest: u64,
    /// Smallest file, bytes.
    pub smallest: u64,
}

/// One export or copy.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunFigures {
    /// `export` or `copy`.
    pub what: String,
    /// Its round (from 1).
    pub round: usize,
    /// Objects written to the target (the export's `snapshot.json` and
    /// `export.json` not counted).
    pub objects: u64,
    /// Their bytes.
    pub bytes: u64,
    /// From spawn to exit, seconds.
    pub wall_s: f64,
    /// `bytes` / `wall_s`, MB (10^6 B) per second.
    pub mb_per_s: f64,
    /// The child's user + system CPU, seconds.
    pub cpu_s: f64,
    /// Its peak resident set (`VmHWM`), bytes.
    pub peak_rss: u64,
    /// Seconds `sync` took before it (the page cache written back).
    pub settle_s: f64,
}

/// The scenario's report.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotExportReport {
    /// `release` or `debug`.
    pub build: &'static str,
    /// Cores of the machine.
    pub cores: usize,
    /// Regions of the table.
    pub regions: usize,
    /// Objects at once.
    pub parallel: usize,
    /// Emulated first-byte latency, ms.
    pub latency_ms: f64,
    /// Its jitter, ms.
    pub jitter_ms: f64,
    /// Emulated per-request bandwidth, bytes/s.
    pub bandwidth: u64,
    /// The table and its snapshot.
    pub setup: Setup,
    /// Every run, in the order run.
    pub runs: Vec<RunFigures>,
    /// All exports' bytes over their wall time, MB/s.
    pub export_mb_per_s: f64,
    /// All copies' bytes over their wall time, MB/s.
    pub copy_mb_per_s: f64,
    /// `export_mb_per_s / copy_mb_per_s`.
    pub ratio: f64,
    /// The same per round.
    pub round_ratios: Vec<f64>,
    /// The machine's 1-minute load average when the rounds began and when
    /// they ended (other processes' work included).
    pub load_average: (f64, f64),
    /// The whole run, seconds.
    pub total_seconds: f64,
}

/// The baseline's result, printed by `shoal bench plain-copy` as JSON.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CopyDone {
    /// Objects copied.
    pub objects: u64,
    /// Their bytes.
    pub bytes: u64,
    /// From the first GET to the last PUT, seconds.
    pub seconds: f64,
}

/// One file of a snapshot: where it is and where a copy puts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    /// Its path in the server's bucket.
    pub src: String,
    /// Its path at the target (the export's layout).
    pub dst: String,
    /// Its size.
    pub size: u64,
}

const TABLE: &str = "exportsrc";
const SNAPSHOT: &str = "export0";
/// Rows per `mutate_many` call of the load, and calls in flight.
const LOAD_BATCH: usize = 12;
const LOAD_PARALLEL: usize = 4;
/// Values' size range (as `snapshots`).
const VALUE_MIN: usize = 64 << 10;
const VALUE_MAX: usize = 100 << 10;

/// The files of snapshot `name` in `bucket`, each once (a split parent's
/// file that two regions read is one object), largest first, with the
/// paths `shoal snapshot export` gives them.
pub async fn snapshot_files(
    bucket: &Bucket,
    name: &str,
) -> Result<Vec<SnapshotFile>, ScenarioError> {
    let catalog = CatalogStore::open(bucket.clone())
        .await
        .map_err(|e| err(format!("reading the catalog: {e}")))?;
    let entry = catalog
        .current()
        .snapshot(name)
        .cloned()
        .ok_or_else(|| err(format!("no snapshot {name:?} in {}", bucket.location())))?;
    let record = SnapshotRecord::read(bucket, &entry.id, name)
        .await
        .map_err(|e| err(format!("reading snapshot {name}: {e}")))?;
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    for region in &record.regions {
        for (family, fs) in &region.families {
            for f in fs.iter().filter(|f| seen.insert(f.id.clone())) {
                files.push(SnapshotFile {
                    src: f.path.clone(),
                    dst: format!("files/{}/{family}/{}.sst", region.id, f.id),
                    size: f.size,
                });
            }
        }
    }
    files.sort_by_key(|f| std::cmp::Reverse(f.size));
    Ok(files)
}

/// The baseline: every file of snapshot `name` from `source` to `target`,
/// largest first, `parallel` at once, each one GET of the whole object and
/// one PUT of it; nothing checked, nothing shown.
pub async fn plain_copy(
    source: &Bucket,
    target: &Bucket,
    name: &str,
    parallel: usize,
) -> Result<CopyDone, ScenarioError> {
    let files = snapshot_files(source, name).await?;
    copy_files(source, target, &files, parallel).await
}

/// `files` from `source` to `target`, in order, `parallel` at once, each
/// one GET and one PUT.
async fn copy_files(
    source: &Bucket,
    target: &Bucket,
    files: &[SnapshotFile],
    parallel: usize,
) -> Result<CopyDone, ScenarioError> {
    let start = Instant::now();
    let mut copies = futures::stream::iter(files)
        .map(|f| async move {
            let data = source
                .get(&f.src)
                .await
                .map_err(|e| err(format!("GET {}: {e}", f.src)))?;
            let n = data.len() as u64;
            target
                .put(&f.dst, data)
                .await
                .map_err(|e| err(format!("PUT {}: {e}", f.dst)))?;
            Ok::<_, ScenarioError>(n)
        })
        .buffer_unordered(parallel.max(1));
    let mut done = CopyDone::default();
    while let Some(n) = copies.next().await {
        done.bytes += n?;
        done.objects += 1;
    }
    done.seconds = start.elapsed().as_secs_f64();
    Ok(done)
}

/// The server's configuration, with L2 off (nothing here reads through it).
fn server_config(w: &Path) -> String {
    format!("{}\n[cache]\nl2_capacity = 0\n", config(w))
}

/// The same bucket with S3 emulated: what both sides are given.
fn source_config(w: &Path, o: &SnapshotExportOptions) -> String {
    format!(
        "{}\n[object_store.emulate]\nlatency = \"{}us\"\njitter = \"{}us\"\nbandwidth_bytes_per_sec = {}\n",
        config(w),
        o.latency.as_micros(),
        o.jitter.min(o.latency).as_micros(),
        o.bandwidth
    )
}

/// Runs the scenario; reports go to `out` as `snapshot-export.{json,md,svg}`.
pub async fn run(
    o: &SnapshotExportOptions,
    out: &Path,
) -> Result<SnapshotExportReport, ScenarioError> {
    if o.regions == 0 || o.rounds == 0 || o.parallel == 0 {
        return Err(err("regions, rounds and parallel must be positive"));
    }
    std::fs::create_dir_all(&o.work_parent).map_err(io(&o.work_parent))?;
    std::fs::create_dir_all(out).map_err(io(out))?;
    let work = tempfile::Builder::new()
        .prefix("shoal-bench-snapshot-export-")
        .tempdir_in(&o.work_parent)
        .map_err(io(&o.work_parent))?;
    let w = work.path().to_path_buf();
    let started = Instant::now();
    let result = async {
        let setup = prepare(o, &w).await?;
        let before = load_average();
        let runs = rounds(o, &w, &setup).await?;
        let mut r = report(o, setup, runs, started);
        r.load_average = (before, load_average());
        Ok::<_, ScenarioError>(r)
    }
    .await;
    for log in ["server.log", "export.log", "copy.log"] {
        let _ = std::fs::copy(w.join(log), out.join(format!("snapshot-export-{log}")));
    }
    let removed = work.close().map_err(io(&w));
    let report = result?;
    removed?;
    super::write_report(
        out,
        "snapshot-export",
        &report,
        &markdown(&report),
        &svg(&report),
    )?;
    Ok(report)
}

/// Step 1: the table, loaded and flushed, its snapshot, the server stopped.
async fn prepare(o: &SnapshotExportOptions, w: &Path) -> Result<Setup, ScenarioError> {
    std::fs::create_dir_all(w.join("bucket")).map_err(io(w))?;
    let cfg = w.join("server.toml");
    std::fs::write(&cfg, server_config(w)).map_err(io(&cfg))?;
    let server = ChildServer::start(&o.shoal_bin, &cfg, &w.join("server.log"))
        .await
        .map_err(child_err)?;
    eprintln!(
        "snapshot-export: shoal serve pid {}, work directory {}",
        server.pid().unwrap_or(0),
        w.display()
    );
    let loaded = load_and_snapshot(o, &server).await;
    let stopped = server
        .terminate(Duration::from_secs(60))
        .await
        .map_err(child_err);
    let mut setup = loaded?;
    stopped?;
    let bucket = open_dir(&w.join("bucket")).await?;
    let files = snapshot_files(&bucket, SNAPSHOT).await?;
    setup.files = files.len() as u64;
    setup.bytes = files.iter().map(|f| f.size).sum();
    setup.largest = files.first().map_or(0, |f| f.size);
    setup.smallest = files.last().map_or(0, |f| f.size);
    eprintln!(
        "snapshot-export: snapshot {SNAPSHOT}: {} files, {:.2} GB (largest {:.1} MB, smallest {:.1} MB)",
        setup.files,
        setup.bytes as f64 / 1e9,
        setup.largest as f64 / 1e6,
        setup.smallest as f64 / 1e6
    );
    Ok(setup)
}

/// A local directory as a bucket (no emulation).
async fn open_dir(dir: &Path) -> Result<Bucket, ScenarioError> {
    let url = format!("file://{}", dir.display());
    let config = ObjectStoreConfig::from_url(&url).map_err(err)?;
    Bucket::open(&config)
        .await
        .map_err(|e| err(format!("opening {url}: {e}")))
}

/// Creates, loads and flushes the table, waits for the server to go
/// quiet, takes the snapshot.
async fn load_and_snapshot(
    o: &SnapshotExportOptions,
    server: &ChildServer,
) -> Result<Setup, ScenarioError> {
    let client = Client::connect(&server.grpc.to_string()).await?;
    let admin = client.admin();
    let pool = Arc::new(Pool::new(VALUE_MIN, VALUE_MAX));
    let rows = (o.bytes / pool.mean()).max(o.regions as u64 * 2);
    let splits: Vec<Vec<u8>> = (1..o.regions)
        .map(|k| key(rows * k as u64 / o.regions as u64).into_bytes())
        .collect();
    admin
        .create_table(TABLE, vec![Admin::family(FAMILY)], splits)
        .await
        .map_err(|e| err(format!("creating table {TABLE}: {e}")))?;
    eprintln!(
        "snapshot-export: loading {rows} rows into {} regions",
        o.regions
    );
    let t0 = Instant::now();
    let table = client.table(TABLE);
    let value_bytes = load(&table, &pool, rows, LOAD_BATCH, LOAD_PARALLEL).await?;
    let load_seconds = t0.elapsed().as_secs_f64();
    let f0 = Instant::now();
    admin.flush(TABLE).await?;
    let flush_seconds = f0.elapsed().as_secs_f64();
    quiet_below(server.http, u64::MAX).await?;
    admin.snapshot(TABLE, SNAPSHOT).await?;
    Ok(Setup {
        rows,
        value_bytes,
        load_seconds,
        flush_seconds,
        ..Setup::default()
    })
}

/// Step 2: `rounds` rounds of one copy and one export, the first side
/// alternating.
async fn rounds(
    o: &SnapshotExportOptions,
    w: &Path,
    setup: &Setup,
) -> Result<Vec<RunFigures>, ScenarioError> {
    let cfg = w.join("source.toml");
    std::fs::write(&cfg, source_config(w, o)).map_err(io(&cfg))?;
    let mut runs = Vec::new();
    for round in 1..=o.rounds {
        let order = if round % 2 == 1 {
            ["copy", "export"]
        } else {
            ["export", "copy"]
        };
        for what in order {
            let r = one_run(o, w, &cfg, what, round, setup).await?;
            eprintln!(
                "snapshot-export: round {round} {what}: {} objects, {:.2} GB in {:.2} s = {:.0} MB/s; CPU {:.2} s; peak RSS {:.0} MB",
                r.objects,
                r.bytes as f64 / 1e9,
                r.wall_s,
                r.mb_per_s,
                r.cpu_s,
                r.peak_rss as f64 / 1e6
            );
            runs.push(r);
        }
    }
    Ok(runs)
}

/// `sync`: what the run before (or the load) left in the page cache is
/// written to the disk before the next run starts; the seconds it took.
/// (Not a wait for the machine's dirty pages to fall under a bound: other
/// processes' writes may keep them up.)
async fn settle() -> Result<f64, ScenarioError> {
    let start = Instant::now();
    let status = tokio::task::spawn_blocking(|| Command::new("sync").status())
        .await
        .map_err(err)?
        .map_err(|e| err(format!("running sync: {e}")))?;
    if !status.success() {
        return Err(err(format!("sync exited with {status}")));
    }
    Ok(start.elapsed().as_secs_f64())
}

/// One export or copy into a fresh `w/target`, removed afterwards.
async fn one_run(
    o: &SnapshotExportOptions,
    w: &Path,
    cfg: &Path,
    what: &str,
    round: usize,
    setup: &Setup,
) -> Result<RunFigures, ScenarioError> {
    let target = w.join("target");
    let settle_s = settle().await?;
    let mut cmd = Command::new(&o.shoal_bin);
    if what == "export" {
        cmd.args(["snapshot", "export", SNAPSHOT]);
    } else {
        cmd.args(["bench", "plain-copy", SNAPSHOT]);
    }
    cmd.arg("--to")
        .arg(&target)
        .arg("--config")
        .arg(cfg)
        .arg("--parallel")
        .arg(o.parallel.to_string());
    let log = w.join(format!("{what}.log"));
    let mut child = procs::spawn(cmd, &log).map_err(io(&log))?;
    let peak_rss = follow_peak_rss(&child).await;
    let done = child.finish().await.map_err(io(&log))?;
    if !done.status.success() {
        return Err(err(format!(
            "{what} exited with {}; its log: {}",
            done.status,
            log.display()
        )));
    }
    let (objects, bytes) = if what == "export" {
        exported(&target).await?
    } else {
        copied(&target, &done.stdout)?
    };
    if (objects, bytes) != (setup.files, setup.bytes) {
        return Err(err(format!(
            "{what} wrote {objects} objects of {bytes} bytes; the snapshot holds {} of {}",
            setup.files, setup.bytes
        )));
    }
    std::fs::remove_dir_all(&target).map_err(io(&target))?;
    let wall_s = done.wall.as_secs_f64();
    Ok(RunFigures {
        what: what.into(),
        round,
        objects,
        bytes,
        wall_s,
        mb_per_s: bytes as f64 / 1e6 / wall_s.max(1e-9),
        cpu_s: done.cpu.unwrap_or(0.0),
        peak_rss,
        settle_s,
    })
}

/// Samples the child's `VmHWM` until it exits; the last value read.
async fn follow_peak_rss(child: &Running) -> u64 {
    let mut peak = 0;
    while !child.exited() {
        if let Some(v) = child.pid().and_then(vm_hwm) {
            peak = peak.max(v);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    peak
}

/// A process's peak resident set from `/proc/PID/status`, bytes.
fn vm_hwm(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The files an export lists in its `export.json` (its record left out),
/// checked present at the target with those sizes: (objects, bytes).
async fn exported(target: &Path) -> Result<(u64, u64), ScenarioError> {
    let bucket = open_dir(target).await?;
    let data = bucket
        .get("export.json")
        .await
        .map_err(|e| err(format!("the export's export.json: {e}")))?;
    let manifest: serde_json::Value = serde_json::from_slice(&data).map_err(err)?;
    let objects = manifest["objects"]
        .as_array()
        .ok_or_else(|| err("export.json lists no objects"))?;
    let (mut n, mut bytes) = (0, 0);
    for obj in objects {
        let path = obj["path"].as_str().unwrap_or_default();
        let size = obj["size"].as_u64().unwrap_or(0);
        let on_disk = std::fs::metadata(target.join(path)).map_or(u64::MAX, |m| m.len());
        if on_disk != size {
            return Err(err(format!(
                "export: {path} is {on_disk} bytes, export.json says {size}"
            )));
        }
        if path.starts_with("files/") {
            n += 1;
            bytes += size;
        }
    }
    Ok((n, bytes))
}

/// The copy's report line, checked against the target directory.
fn copied(target: &Path, stdout: &[String]) -> Result<(u64, u64), ScenarioError> {
    let done: CopyDone = stdout
        .iter()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| err("the copy printed no report"))?;
    let on_disk = dir_size(target);
    if on_disk != (done.bytes, done.objects) {
        return Err(err(format!(
            "the copy reports {} objects of {} bytes, the target holds {} of {}",
            done.objects, done.bytes, on_disk.1, on_disk.0
        )));
    }
    Ok((done.objects, done.bytes))
}

/// The machine's 1-minute load average (`/proc/loadavg`; 0 if unreadable).
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// Aggregates (bytes over wall time per side, the ratio per round).
fn report(
    o: &SnapshotExportOptions,
    setup: Setup,
    runs: Vec<RunFigures>,
    started: Instant,
) -> SnapshotExportReport {
    let rate = |what: &str, round: Option<usize>| {
        let (bytes, secs) = runs
            .iter()
            .filter(|r| r.what == what && round.is_none_or(|n| r.round == n))
            .fold((0u64, 0f64), |(b, s), r| (b + r.bytes, s + r.wall_s));
        bytes as f64 / 1e6 / secs.max(1e-9)
    };
    let export_mb_per_s = rate("export", None);
    let copy_mb_per_s = rate("copy", None);
    let round_ratios = (1..=o.rounds)
        .map(|n| rate("export", Some(n)) / rate("copy", Some(n)).max(1e-9))
        .collect();
    SnapshotExportReport {
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        regions: o.regions,
        parallel: o.parallel,
        latency_ms: o.latency.as_secs_f64() * 1e3,
        jitter_ms: o.jitter.min(o.latency).as_secs_f64() * 1e3,
        bandwidth: o.bandwidth,
        setup,
        runs,
        export_mb_per_s,
        copy_mb_per_s,
        ratio: export_mb_per_s / copy_mb_per_s.max(1e-9),
        round_ratios,
        load_average: (0.0, 0.0),
        total_seconds: started.elapsed().as_secs_f64(),
    }
}

/// The markdown report (also printed at the end of the run).
pub fn markdown(r: &SnapshotExportReport) -> String {
    let s = &r.setup;
    let mut md = format!(
        "## snapshot-export: `shoal snapshot export` vs a plain parallel copy of the same objects\n\n\
         {} build, {} cores. Snapshot of a table of {:.2} GB of values in {} regions (loaded in {:.1} s, flushed in {:.1} s): \
         {} files, {:.2} GB (largest {:.1} MB, smallest {:.1} MB). Source: the server's local directory bucket with S3 emulated \
         ({:.0} ms ± {:.0} ms to first byte, {:.0} MB/s per request); target: a new local directory each run; \
         {} objects at once on both sides, each side a process of its own. Export: `shoal snapshot export` (ranged GETs, \
         streamed upload, CRC32C read back from the target). Copy: `shoal bench plain-copy` (one GET and one PUT per \
         object, no check). Load average {:.1} when the rounds began, {:.1} when they ended. Whole run {:.0} s.\n\n\
         | round | what | objects | GB | wall s | MB/s | CPU s | peak RSS MB | `sync` before, s |\n\
         |---:|---|---:|---:|---:|---:|---:|---:|---:|\n",
        r.build,
        r.cores,
        s.value_bytes as f64 / 1e9,
        r.regions,
        s.load_seconds,
        s.flush_seconds,
        s.files,
        s.bytes as f64 / 1e9,
        s.largest as f64 / 1e6,
        s.smallest as f64 / 1e6,
        r.latency_ms,
        r.jitter_ms,
        r.bandwidth as f64 / 1e6,
        r.parallel,
        r.load_average.0,
        r.load_average.1,
        r.total_seconds,
    );
    for x in &r.runs {
        md += &format!(
            "| {} | {} | {} | {:.2} | {:.2} | {:.0} | {:.2} | {:.0} | {:.1} |\n",
            x.round,
            x.what,
            x.objects,
            x.bytes as f64 / 1e9,
            x.wall_s,
            x.mb_per_s,
            x.cpu_s,
            x.peak_rss as f64 / 1e6,
            x.settle_s
        );
    }
    md += &format!(
        "\nExport {:.0} MB/s, copy {:.0} MB/s (all runs' bytes over their wall time): export/copy **{:.0} %** \
         (goal ≥ 80 %: {}); per round {}.\n",
        r.export_mb_per_s,
        r.copy_mb_per_s,
        r.ratio * 100.0,
        if r.ratio >= 0.8 { "met" } else { "**missed**" },
        r.round_ratios
            .iter()
            .map(|x| format!("{:.0} %", x * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    );
    md
}

fn svg(r: &SnapshotExportReport) -> String {
    let points = |what: &str| {
        r.runs
            .iter()
            .enumerate()
            .filter(|(_, x)| x.what == what)
            .map(|(i, x)| ((i + 1) as f64, x.mb_per_s))
            .collect()
    };
    chart(
        "snapshot-export: MB/s of each run, in the order run",
        "run",
        "MB/s",
        &[
            Line {
                name: "shoal snapshot export".into(),
                color: "#2563eb",
                points: points("export"),
            },
            Line {
                name: "plain parallel copy".into(),
                color: "#6b7280",
                points: points("copy"),
            },
        ],
        &[],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[tokio::test]
    async fn the_plain_copy_copies_every_file_once() {
        let (src, dst) = (Bucket::memory(), Bucket::memory());
        for (path, n) in [("data/a.sst", 10usize), ("data/b.sst", 3)] {
            src.put(path, Bytes::from(vec![7u8; n])).await.unwrap();
        }
        let files = vec![
            SnapshotFile {
                src: "data/a.sst".into(),
                dst: "files/r/f/a.sst".into(),
                size: 10,
            },
            SnapshotFile {
                src: "data/b.sst".into(),
                dst: "files/r/f/b.sst".into(),
                size: 3,
            },
        ];
        let done = copy_files(&src, &dst, &files, 2).await.unwrap();
        assert_eq!((done.objects, done.bytes), (2, 13));
        assert_eq!(dst.get("files/r/f/a.sst").await.unwrap().len(), 10);
    }

    #[test]
    fn the_source_config_emulates_s3() {
        let o = SnapshotExportOptions {
            bytes: 1,
            regions: 1,
            parallel: 1,
            rounds: 1,
            latency: Duration::from_millis(25),
            jitter: Duration::from_micros(8_333),
            bandwidth: 90_000_000,
            shoal_bin: PathBuf::new(),
            work_parent: PathBuf::new(),
        };
        let text = source_config(Path::new("/w"), &o);
        let c = shoal_server::ServerConfig::from_toml(&text).unwrap();
        let e = c.object_store.emulate.unwrap();
        assert_eq!(e.latency, Duration::from_millis(25));
        assert_eq!(e.jitter, Duration::from_micros(8_333));
        assert_eq!(e.bandwidth_bytes_per_sec, 90_000_000);
    }
}
