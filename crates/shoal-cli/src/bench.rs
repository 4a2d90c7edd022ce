//! `shoal bench ycsb`: YCSB's load and run phases against a server (or an
//! embedded one on a temp dir), with YCSB's text report and a JSON file.

use anyhow::Context;
use shoal_bench::cpu::{CpuPerOp, CpuReading};
use shoal_bench::scenario::snapshot_export::SnapshotExportOptions;
use shoal_bench::{CoreWorkload, Properties, RunOptions};
use shoal_client::{Admin, Client};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `shoal bench …`
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(Debug, clap::Subcommand)]
enum BenchCommand {
    /// YCSB core workloads (A–F): `shoal bench ycsb load|run|both -P workloads/workloada`.
    Ycsb(YcsbArgs),
    /// Scripted experiments on an embedded server (JSON, markdown and SVG reports).
    Scenario(ScenarioArgs),
    /// The snapshot-export scenario's baseline: a snapshot's files copied
    /// out of the server's bucket, each one GET and one PUT, no check.
    #[command(hide = true)]
    PlainCopy(PlainCopyArgs),
}

/// Arguments of `shoal bench plain-copy` (hidden).
#[derive(Debug, clap::Args)]
struct PlainCopyArgs {
    /// The snapshot whose files are copied.
    name: String,
    /// A directory or store URL, as `shoal snapshot export --to`.
    #[arg(long)]
    to: String,
    #[command(flatten)]
    server: crate::snapshot_cmd::ServerBucketArgs,
    /// Objects copied at once.
    #[arg(long, default_value_t = 8)]
    parallel: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ScenarioName {
    /// Sustained single-row puts at a fixed rate across many flushes: the latency tail.
    Writetail,
    /// Prefetch-on-open refilling an empty L2 from an emulated S3, vs its bandwidth.
    Warmup,
    /// Workload C on an emulated S3 with L2 off, on, and across restarts.
    Bucketcache,
    /// Three servers and etcd as child processes; kill -9 one under YCSB A.
    Failover,
    /// Server and client CPU per cached get, put and 100-row scan (server in a child process).
    Callcost,
    /// Three servers and etcd per setting (cache-aware, plain, no L2): YCSB C
    /// through a rolling restart, a forced rebalance and a kill -9.
    RollingRestart,
    /// HBase HFiles (FAST_DIFF + SNAPPY) into Shoal with `shoal import`, vs
    /// scanning them from a real HBase with hbase-client and writing them
    /// through Shoal's native RPC (needs Java 17 and Maven).
    Import,
    /// Snapshot and clone of a large pre-split table (10 GiB, 128 regions
    /// by default): time, pause, object-store requests, bytes written, the
    /// clone checked against the source; then writers' latency with and
    /// without a snapshot every second (server in a child process).
    Snapshots,
    /// The point-in-time window: writers with it off and on (servers in
    /// child processes), the bytes it holds per hour at that rate, and
    /// clones as of instants of the run.
    Pitr,
    /// `shoal snapshot export` of a large table's snapshot against a plain
    /// parallel copy of the same objects, in one run, the source's S3
    /// latency emulated (each side a child process).
    SnapshotExport,
}

/// Arguments of `shoal bench scenario`.
#[derive(Debug, clap::Args)]
pub struct ScenarioArgs {
    /// Which experiment.
    name: ScenarioName,
    /// A short smoke run (what CI runs).
    #[arg(long)]
    quick: bool,
    /// How long the measured part runs (default 10 min; --quick 15 s;
    /// snapshots: each writer window, default 60 s, --quick 5 s).
    #[arg(long, value_parser = humantime::parse_duration)]
    duration: Option<Duration>,
    /// Fixed rate, operations per second (writetail default: 80 % of the
    /// measured maximum; rolling-restart default: closed loop; snapshots:
    /// the writers' puts, default 3000).
    #[arg(long)]
    rate: Option<f64>,
    /// Directory for the reports.
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
    /// writetail: in-memory compaction of the table's family.
    #[arg(long, default_value = "basic", value_parser = ["none", "basic", "eager"])]
    in_memory_compaction: String,
    /// writetail: how long the closed-loop maximum is measured (default 60 s;
    /// --quick 3 s). With --rate set, 0s skips the probe and the batched
    /// maximum.
    #[arg(long, value_parser = humantime::parse_duration)]
    probe: Option<Duration>,
    /// writetail: length of the per-window figures (default 10 s; --quick 5 s).
    #[arg(long, value_parser = humantime::parse_duration)]
    window: Option<Duration>,
    /// writetail: measure a running server at this gRPC address instead of
    /// an embedded one, so the load generator can run on other cores or
    /// another machine (needs --http).
    #[arg(long, requires = "http")]
    server: Option<String>,
    /// writetail: that server's HTTP address, for its /metrics.
    #[arg(long, requires = "server")]
    http: Option<String>,
    /// rolling-restart: the settings to compare, in order (default: all
    /// three; one alone is a quicker run, e.g. while working on moves).
    #[arg(long, value_delimiter = ',')]
    modes: Vec<RollingMode>,
    /// rolling-restart: the servers' `cluster.max_moving_regions` in the
    /// cache-aware setting (0: no limit).
    #[arg(long, default_value_t = 0)]
    max_moving: usize,
    /// failover: full memstores — the servers flush nothing and the table
    /// is loaded until the server to be killed holds this many MiB in its
    /// memstores (0: the plain run).
    #[arg(long, default_value_t = 0)]
    unflushed_mib: u64,
    /// failover: value size of the rows loaded with --unflushed-mib.
    #[arg(long, default_value_t = 1000)]
    value_bytes: usize,
    /// failover: emulated object-store first-byte latency (0s: the plain
    /// local directory). snapshot-export: the source's (default 25ms).
    #[arg(long, value_parser = humantime::parse_duration)]
    latency: Option<Duration>,
    /// failover: a server setting, `section.key=value` with a TOML value
    /// (repeatable), e.g. `--set 'wal.max_unflushed="64MiB"'`.
    #[arg(long = "set")]
    settings: Vec<String>,
    /// snapshot-export: the source's emulated bandwidth per request, bytes
    /// per second (default 90MB).
    #[arg(long)]
    bandwidth: Option<shoal_server::config::ByteSize>,
    /// snapshot-export: rounds of one copy and one export, the side that
    /// goes first alternating (default 2; --quick 1).
    #[arg(long)]
    rounds: Option<usize>,
    /// import: HFile bytes on disk to generate (default 1GiB; --quick 8MiB).
    /// snapshots: value bytes loaded (default 10GiB; --quick 256MiB).
    /// snapshot-export: value bytes loaded (default 2GiB; --quick 32MiB).
    #[arg(long)]
    size: Option<shoal_server::config::ByteSize>,
    /// import: regions of the table (one HFile each; default 16, --quick 4).
    /// snapshots: regions the table is pre-split into (default 128, --quick 16).
    /// snapshot-export: the same (default 16, --quick 4).
    #[arg(long)]
    regions: Option<usize>,
    /// import: rows per region the hbase-client baseline copies (0: all;
    /// default all). Only rates are compared, so a subset is fair.
    #[arg(long, default_value_t = 0)]
    baseline_rows_per_region: u64,
    /// import: regions `shoal import` loads at once (default 2).
    /// snapshot-export: objects copied at once by both sides (default 8).
    #[arg(long)]
    parallel: Option<usize>,
    /// import, snapshots, snapshot-export: where the work directory (HFiles, HBase, Shoal
    /// data, the bucket) is made and removed afterwards.
    #[arg(long, default_value = "/tmp")]
    work_dir: PathBuf,
}

/// A setting of the rolling-restart scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RollingMode {
    /// Peer reads, warm handoffs, retained assignment, cache-aware placement.
    CacheAware,
    /// All of those off (the L2 persists across restarts).
    Plain,
    /// Plain, and no L2.
    NoL2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Phase {
    Load,
    Run,
    Both,
}

/// Arguments of `shoal bench ycsb`.
#[derive(Debug, clap::Args)]
pub struct YcsbArgs {
    /// load, run, or both (load then run).
    phase: Phase,
    /// YCSB property file(s), e.g. workloads/workloada.
    #[arg(short = 'P')]
    property_files: Vec<String>,
    /// Extra properties, key=value (override the files).
    #[arg(short = 'p')]
    properties: Vec<String>,
    /// Concurrent client threads.
    #[arg(long, default_value_t = 8)]
    threads: usize,
    /// Target throughput, ops/s (latency then counts from intended start times).
    #[arg(long)]
    target: Option<f64>,
    /// Run-phase warm-up excluded from the results, e.g. 10s.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "0s")]
    warmup: Duration,
    /// Stop the run phase after this long even if operations remain.
    #[arg(long, value_parser = humantime::parse_duration)]
    duration: Option<Duration>,
    /// Server gRPC address, or several comma-separated (the first that
    /// answers is used).
    #[arg(long, env = "SHOAL_ADDR", default_value = "127.0.0.1:7070")]
    addr: String,
    /// Start a server in this process on a temporary directory instead.
    #[arg(long)]
    embedded: bool,
    /// Write the figures (and the server's cache and object-store counters) as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Width of the per-window latency series (by intended start): the
    /// JSON's `windows`, and the slowest windows in the text report.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "1s")]
    window: Duration,
    /// The server's HTTP address (`host:port`): its own put latency, WAL
    /// commits, flushes and compactions over each phase and per window
    /// (from `/metrics`) are reported beside the client's figures.
    #[arg(long, conflicts_with = "embedded")]
    http: Option<String>,
    /// How gets and mutations travel: `framed` (the client's default: the
    /// same port without HTTP/2) or `grpc`. Scans always use gRPC.
    #[arg(long, default_value = "framed", value_parser = ["framed", "grpc"])]
    transport: String,
    /// Write calls the client keeps in flight before it combines further
    /// puts into shared calls (`ClientOptions::max_write_rpcs`; default:
    /// the client's, 8).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    write_rpcs: Option<u16>,
    #[command(flatten)]
    credentials: crate::credentials::Credentials,
}

/// Runs `shoal bench`.
pub async fn run(args: BenchArgs) -> anyhow::Result<()> {
    match args.command {
        BenchCommand::Ycsb(a) => ycsb(a).await,
        BenchCommand::Scenario(a) => scenario(a).await,
        BenchCommand::PlainCopy(a) => plain_copy(a).await,
    }
}

/// `shoal bench plain-copy`: prints what it copied as one JSON line.
async fn plain_copy(a: PlainCopyArgs) -> anyhow::Result<()> {
    let (source, _) = a.server.open().await?;
    let url = crate::snapshot_cmd::store_url(&a.to)?;
    let (target, _) = crate::snapshot_cmd::open_url(&url).await?;
    let done =
        shoal_bench::scenario::snapshot_export::plain_copy(&source, &target, &a.name, a.parallel)
            .await?;
    println!("{}", serde_json::to_string(&done)?);
    Ok(())
}

fn snapshot_export_options(a: &ScenarioArgs) -> anyhow::Result<SnapshotExportOptions> {
    let latency = a.latency.unwrap_or(Duration::from_millis(25));
    Ok(SnapshotExportOptions {
        bytes: a
            .size
            .map_or(if a.quick { 32 << 20 } else { 2 << 30 }, |s| s.0),
        regions: a.regions.unwrap_or(if a.quick { 4 } else { 16 }).max(1),
        parallel: a.parallel.unwrap_or(8).max(1),
        rounds: a.rounds.unwrap_or(if a.quick { 1 } else { 2 }).max(1),
        latency,
        jitter: latency / 3,
        bandwidth: a.bandwidth.map_or(90_000_000, |b| b.0),
        // The server, the export and the copy are this very binary.
        shoal_bin: std::env::current_exe().context("locating the shoal binary")?,
        work_parent: a.work_dir.clone(),
    })
}

async fn scenario(a: ScenarioArgs) -> anyhow::Result<()> {
    if a.server.is_some() && a.name != ScenarioName::Writetail {
        anyhow::bail!(
            "--server: only writetail can measure a running server; the others start their own"
        );
    }
    match a.name {
        ScenarioName::Writetail => {
            if a.probe.is_some_and(|p| p.is_zero()) && a.rate.is_none() && !a.quick {
                anyhow::bail!(
                    "--probe 0s skips the maximum the default rate is derived from: give --rate too"
                );
            }
            let opts = shoal_bench::scenario::writetail::WritetailOptions {
                // The quick run only proves the scenario works: a modest
                // fixed rate, so a loaded CI machine keeps up.
                rate: a.rate.or(a.quick.then_some(2000.0)),
                duration: a
                    .duration
                    .unwrap_or(Duration::from_secs(if a.quick { 15 } else { 600 })),
                probe: a
                    .probe
                    .unwrap_or(Duration::from_secs(if a.quick { 3 } else { 60 })),
                value_bytes: 1000,
                flush_size: if a.quick { 1 << 20 } else { 32 << 20 },
                window: a
                    .window
                    .unwrap_or(Duration::from_secs(if a.quick { 5 } else { 10 })),
                threads: 128,
                in_memory_compaction: match a.in_memory_compaction.as_str() {
                    "none" => shoal_client::InMemoryCompaction::None,
                    "eager" => shoal_client::InMemoryCompaction::Eager,
                    _ => shoal_client::InMemoryCompaction::Basic,
                },
                remote: a.server.clone().zip(a.http.clone()).map(|(grpc, http)| {
                    shoal_bench::scenario::writetail::RemoteServer { grpc, http }
                }),
            };
            let r = shoal_bench::scenario::writetail::run(&opts, &a.out).await?;
            let maxima = if r.max_puts_per_sec > 0.0 {
                format!(
                    "max {:.0}/s, sustained {:.0}/s",
                    r.max_puts_per_sec, r.sustained_max_puts_per_sec
                )
            } else {
                "maxima not measured".to_string()
            };
            println!(
                "writetail: {:.0} puts/s ({maxima}), {} flushes; p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, p99.99 {:.2} ms, max {:.2} ms; reports in {}",
                r.achieved,
                r.flushes,
                r.overall.p50_us as f64 / 1e3,
                r.overall.p99_us as f64 / 1e3,
                r.overall.p999_us as f64 / 1e3,
                r.overall.p9999_us as f64 / 1e3,
                r.overall.max_us as f64 / 1e3,
                a.out.display()
            );
        }
        ScenarioName::Bucketcache => {
            let opts = shoal_bench::scenario::bucketcache::BucketcacheOptions {
                records: if a.quick { 20_000 } else { 400_000 },
                l1_bytes: if a.quick { 4 << 20 } else { 64 << 20 },
                phase: a
                    .duration
                    .unwrap_or(Duration::from_secs(if a.quick { 8 } else { 120 })),
                window: Duration::from_secs(if a.quick { 1 } else { 5 }),
                threads: 16,
                latency: Duration::from_millis(30),
                // The kill -9 phases run this very binary as `shoal serve`.
                shoal_bin: std::env::current_exe().context("locating the shoal binary")?,
            };
            let r = shoal_bench::scenario::bucketcache::run(&opts, &a.out).await?;
            println!(
                "bucketcache: speed-up with L2 {:.1}x; 95% L2 hits after {:?} s; recovery after a clean restart: persistent L2 {:?} s, wiped L2 {:?} s; after kill -9: persistent L2 {:?} s, wiped L2 {:?} s; reports in {}",
                r.speedup_with_l2,
                r.seconds_to_95pct_l2_hits,
                r.recovery_s_persistent_l2,
                r.recovery_s_wiped_l2,
                r.recovery_s_kill9_persistent_l2,
                r.recovery_s_kill9_wiped_l2,
                a.out.display()
            );
        }
        ScenarioName::Failover => {
            let run = a
                .duration
                .unwrap_or(Duration::from_secs(if a.quick { 12 } else { 60 }));
            let opts = shoal_bench::scenario::failover::FailoverOptions {
                records: if a.quick { 5_000 } else { 100_000 },
                regions: if a.quick { 6 } else { 12 },
                rate: a.rate.unwrap_or(if a.quick { 300.0 } else { 1_000.0 }),
                threads: 16,
                before: run / 3,
                after: run - run / 3,
                lease_ttl: Duration::from_secs(3),
                latency: a.latency.unwrap_or(Duration::from_millis(20)),
                // The servers run this very binary as `shoal serve`.
                shoal_bin: std::env::current_exe().context("locating the shoal binary")?,
                unflushed_bytes: a.unflushed_mib << 20,
                value_bytes: a.value_bytes,
                server_settings: a.settings.clone(),
            };
            let r = shoal_bench::scenario::failover::run(&opts, &a.out).await?;
            if a.unflushed_mib > 0 {
                let s =
                    |v: Option<f64>| v.map_or_else(|| "never".to_string(), |s| format!("{s:.2} s"));
                println!(
                    "failover with full memstores: killed server held {} MiB in its memstores, {} MiB of WAL in {} objects; lease lapsed {} after the kill; last region open {} after the lapse (master's view {}); {} regions replayed {} entries, slowest open_ms {}; survivors' CPU {}",
                    r.killed_memstore_bytes.map_or(0, |b| b >> 20),
                    r.killed_wal_bytes >> 20,
                    r.killed_wal_objects,
                    s(r.lease_lapsed_s),
                    s(r.lapse_to_last_open_s),
                    s(r.lapse_to_master_view_s),
                    r.opens.len(),
                    r.opens.iter().map(|x| x.replayed).sum::<u64>(),
                    r.opens.iter().map(|x| x.open_ms).max().unwrap_or(0),
                    r.survivors_cpu_s
                        .map_or_else(|| "not measured".into(), |c| format!("{c:.2} s")),
                );
            }
            let s = |v: Option<f64>| v.map_or_else(|| "never".to_string(), |s| format!("{s:.2} s"));
            println!(
                "failover: every region serving again {} after kill -9 (client's view), {} (master's view); HBase's default detection alone: {:.0} s; {} ops, {} failed, {} over 100 ms late; acknowledged updates lost: {} of {}; server CPU per op {}; reports in {}",
                s(r.recovery_client_s),
                s(r.recovery_master_s),
                r.hbase_default_detection_s,
                r.ops,
                r.ops_failed,
                r.ops_slower_than_100ms,
                r.acked_updates_lost,
                r.acked_updates,
                r.server_cpu_us_per_op
                    .map_or_else(|| "not measured".into(), |us| format!("{us:.0} µs")),
                a.out.display()
            );
        }
        ScenarioName::RollingRestart => {
            use shoal_bench::scenario::rolling::{Mode, RollingOptions, run};
            let secs = Duration::from_secs;
            let opts = RollingOptions {
                records: if a.quick { 6_000 } else { 100_000 },
                value_bytes: 1000,
                regions: if a.quick { 6 } else { 12 },
                threads: 16,
                rate: a.rate,
                max_moving: a.max_moving,
                l1_data: if a.quick { "2MiB" } else { "8MiB" }.into(),
                l2_capacity: "256MiB".into(),
                warmup: secs(if a.quick { 0 } else { 25 }),
                steady: a.duration.unwrap_or(secs(if a.quick { 3 } else { 20 })),
                gap: secs(if a.quick { 2 } else { 10 }),
                rebalance: secs(if a.quick { 6 } else { 60 }),
                after_kill: secs(if a.quick { 6 } else { 30 }),
                down: secs(if a.quick { 1 } else { 5 }),
                lease_ttl: secs(3),
                latency: Duration::from_millis(20),
                modes: if a.modes.is_empty() {
                    vec![Mode::CacheAware, Mode::Plain, Mode::NoL2]
                } else {
                    a.modes
                        .iter()
                        .map(|m| match m {
                            RollingMode::CacheAware => Mode::CacheAware,
                            RollingMode::Plain => Mode::Plain,
                            RollingMode::NoL2 => Mode::NoL2,
                        })
                        .collect()
                },
                // The servers run this very binary as `shoal serve`.
                shoal_bin: std::env::current_exe().context("locating the shoal binary")?,
            };
            let r = run(&opts, &a.out).await?;
            for m in &r.modes {
                let pct =
                    |v: Option<f64>| v.map_or_else(|| "–".into(), |v| format!("{:.0}%", v * 100.0));
                println!(
                    "rolling-restart {}: steady {:.0} reads/s (hit ratio {}); rolling restart lowest window {} of steady ({} of {} windows under 90%); balancer moved {} regions, {} of their blocks from the object store; hit ratio >= 95% for good {} after kill -9; {} reads, {} failed",
                    m.mode.name(),
                    m.steady_ops_per_s,
                    pct(m.steady_hit_ratio),
                    pct(m.rolling_min_ratio),
                    m.rolling_windows_below_90pct,
                    m.rolling_windows,
                    m.balancer_moves.len(),
                    pct(m.balancer_moved_object_store_fraction),
                    m.hit_ratio_95_after_kill_s
                        .map_or_else(|| "not within the run".into(), |s| format!("{s:.0} s")),
                    m.ops,
                    m.errors,
                );
            }
            println!("reports in {}", a.out.display());
        }
        ScenarioName::Import => {
            let opts = shoal_bench::scenario::import::ImportOptions {
                bytes: a
                    .size
                    .map_or(if a.quick { 8 << 20 } else { 1 << 30 }, |s| s.0),
                regions: a.regions.unwrap_or(if a.quick { 4 } else { 16 }).max(1),
                baseline_rows_per_region: a.baseline_rows_per_region,
                parallel: a.parallel.unwrap_or(2).max(1),
                shoal_bin: std::env::current_exe().context("locating the shoal binary")?,
                java_project: java_project()?,
                work_parent: a.work_dir.clone(),
            };
            let r = shoal_bench::scenario::import::run(&opts, &a.out).await?;
            println!(
                "import: {:.1} MB of HFiles ({} cells): shoal import {:.1} MB/s, {:.2} MB per CPU s; \
                 hbase-client copy {:.2} MB/s, {:.3} MB per CPU s; {:.1}x per core, {:.1}x wall; \
                 reports in {}",
                r.input.disk_bytes as f64 / 1e6,
                r.input.cells,
                r.import.mb_per_s,
                r.import.mb_per_cpu_s,
                r.baseline.mb_per_s,
                r.baseline.mb_per_cpu_s,
                r.ratio_per_core,
                r.ratio_wall,
                a.out.display()
            );
        }
        ScenarioName::Snapshots => {
            let opts = shoal_bench::scenario::snapshots::SnapshotsOptions {
                bytes: a
                    .size
                    .map_or(if a.quick { 256 << 20 } else { 10 << 30 }, |s| s.0),
                regions: a.regions.unwrap_or(if a.quick { 16 } else { 128 }).max(1),
                value_min: 64 << 10,
                value_max: 100 << 10,
                load_batch: 12,
                load_parallel: 4,
                idle_snapshots: 3,
                sample_per_region: 4,
                rate: a.rate.unwrap_or(3000.0),
                put_bytes: 1000,
                window: a
                    .duration
                    .unwrap_or(Duration::from_secs(if a.quick { 5 } else { 60 })),
                warmup: Duration::from_secs(if a.quick { 1 } else { 5 }),
                snapshot_every: Duration::from_secs(1),
                // The server runs this very binary as `shoal serve`.
                shoal_bin: std::env::current_exe().context("locating the shoal binary")?,
                work_parent: a.work_dir.clone(),
            };
            let r = shoal_bench::scenario::snapshots::run(&opts, &a.out).await?;
            println!("{}", shoal_bench::scenario::snapshots::markdown(&r, &opts));
            println!("snapshots: reports in {}", a.out.display());
        }
        ScenarioName::Pitr => {
            let opts = shoal_bench::scenario::pitr::PitrOptions {
                rate: a.rate.unwrap_or(2000.0),
                put_bytes: 1000,
                window: a
                    .duration
                    .unwrap_or(Duration::from_secs(if a.quick { 5 } else { 120 })),
                regions: a.regions.unwrap_or(if a.quick { 4 } else { 16 }).max(1),
                base_every: Duration::from_secs(if a.quick { 2 } else { 30 }),
                shoal_bin: std::env::current_exe().context("locating the shoal binary")?,
                work_parent: a.work_dir.clone(),
            };
            let r = shoal_bench::scenario::pitr::run(&opts, &a.out).await?;
            println!("{}", shoal_bench::scenario::pitr::markdown(&r));
            println!("pitr: reports in {}", a.out.display());
        }
        ScenarioName::SnapshotExport => {
            let opts = snapshot_export_options(&a)?;
            let r = shoal_bench::scenario::snapshot_export::run(&opts, &a.out).await?;
            println!("{}", shoal_bench::scenario::snapshot_export::markdown(&r));
            println!("snapshot-export: reports in {}", a.out.display());
        }
        ScenarioName::Callcost => {
            let opts = shoal_bench::scenario::callcost::CallcostOptions {
                records: if a.quick { 2_000 } else { 100_000 },
                gets: if a.quick { 2_000 } else { 200_000 },
                puts: if a.quick { 1_000 } else { 100_000 },
                scans: if a.quick { 100 } else { 5_000 },
                threads: 8,
                // The server runs this very binary as `shoal serve`.
                shoal_bin: std::env::current_exe().context("locating the shoal binary")?,
            };
            let r = shoal_bench::scenario::callcost::run(&opts, &a.out).await?;
            for c in &r.calls {
                println!(
                    "callcost: {}: {:.0} calls/s, p50 {} µs, p99 {} µs; CPU per call: {}",
                    c.call,
                    c.calls_per_sec,
                    c.p50_us,
                    c.p99_us,
                    c.cpu.describe()
                );
            }
            println!(
                "callcost: {} build; server idle CPU {:.2} ms/s; reports in {}",
                r.build,
                r.server_idle_cpu_ms_per_s,
                a.out.display()
            );
        }
        ScenarioName::Warmup => {
            let opts = shoal_bench::scenario::warmup::WarmupOptions {
                dataset_bytes: if a.quick { 8 << 20 } else { 512 << 20 },
                latency: Duration::from_millis(30),
                bandwidth: 90_000_000,
                timeout: a
                    .duration
                    .unwrap_or(Duration::from_secs(if a.quick { 60 } else { 900 })),
            };
            let r = shoal_bench::scenario::warmup::run(&opts, &a.out).await?;
            println!(
                "warmup: {:.1} of {:.1} MiB in {:.1} s = {:.1} MB/s ({:.1} % of one request's {:.0} MB/s), {} GETs; reports in {}",
                r.warmed_bytes as f64 / 1048576.0,
                r.prefetch_bytes as f64 / 1048576.0,
                r.seconds,
                r.bytes_per_sec / 1e6,
                r.fraction_of_request_bandwidth * 100.0,
                r.bandwidth as f64 / 1e6,
                r.gets,
                a.out.display()
            );
        }
    }
    Ok(())
}

async fn ycsb(a: YcsbArgs) -> anyhow::Result<()> {
    let mut props = Properties::default();
    for f in &a.property_files {
        props.load_file(f)?;
    }
    for kv in &a.properties {
        props.set(kv)?;
    }
    let workload = Arc::new(CoreWorkload::from_properties(&props)?);
    let _embedded_dir;
    let mut _embedded = None;
    let addr = if a.embedded {
        let dir = tempfile::tempdir().context("temp dir for the embedded server")?;
        let mut config = shoal_server::ServerConfig::default();
        config.server.data_dir = dir.path().to_path_buf();
        config.server.grpc_addr = "127.0.0.1:0".parse()?;
        config.server.http_addr = "127.0.0.1:0".parse()?;
        config.thrift.enabled = false;
        config.rest.enabled = false;
        config.hbase_rpc.enabled = false;
        let server = shoal_server::start(config).await?;
        let addr = server.grpc_addr.to_string();
        _embedded = Some(server);
        _embedded_dir = Some(dir);
        addr
    } else {
        _embedded_dir = None;
        a.addr.clone()
    };
    let mut options = a
        .credentials
        .apply(shoal_client::ClientOptions::default())?;
    options.data_transport = match a.transport.as_str() {
        "grpc" => shoal_client::DataTransport::Grpc,
        _ => shoal_client::DataTransport::Framed,
    };
    if let Some(n) = a.write_rpcs {
        options.max_write_rpcs = usize::from(n);
    }
    let client = Client::connect_with(&addr, options).await?;
    let admin = client.admin();
    if !admin.exists(&workload.table).await? {
        if a.phase == Phase::Run {
            anyhow::bail!(
                "table {} does not exist on {addr}: run the load phase first",
                workload.table
            );
        }
        admin
            .create_table(
                &workload.table,
                vec![Admin::family(&workload.family)],
                vec![],
            )
            .await?;
    }
    let table = client.table(&workload.table);
    let opts = RunOptions {
        threads: a.threads,
        target: a.target,
        warmup: Duration::ZERO,
        max_duration: None,
        status_every: Duration::from_secs(10),
        window: a.window,
    };
    if a.window.is_zero() {
        anyhow::bail!("--window must be longer than zero");
    }
    let before = admin.status().await?;
    // An embedded server shares this process: its CPU cannot be told apart.
    let server_admin = (!a.embedded).then_some(&admin);
    let mut json = serde_json::Map::new();
    json.insert("workload".into(), serde_json::to_value(&props.0)?);
    json.insert("threads".into(), a.threads.into());
    json.insert("target".into(), serde_json::to_value(a.target)?);
    if matches!(a.phase, Phase::Load | Phase::Both) {
        eprintln!(
            "Loading {} records into {} with {} threads",
            workload.insert_count, workload.table, a.threads
        );
        let sampler = start_server_sampler(&a).await?;
        let cpu0 = CpuReading::take(server_admin).await;
        let r = shoal_bench::runner::load(&table, &workload, &opts).await?;
        let cpu = cpu0.per_op(&CpuReading::take(server_admin).await, r.completed);
        let server_side = finish_server_sampler(sampler).await?;
        println!("{}", r.measurements.report_text(r.runtime));
        println!("[CPU], per operation, {}", cpu.describe());
        print_slowest_windows(&r, a.window);
        let mut phase = phase_json(&r, &cpu, a.window);
        add_server_side(&mut phase, server_side)?;
        json.insert("load".into(), phase);
    }
    if matches!(a.phase, Phase::Run | Phase::Both) {
        let opts = RunOptions {
            warmup: a.warmup,
            max_duration: a.duration.map(|d| d + a.warmup),
            ..opts
        };
        eprintln!(
            "Running {} operations ({} distribution) with {} threads{}",
            workload.operation_count,
            workload.request_distribution,
            a.threads,
            a.target
                .map(|t| format!(", target {t} ops/s (latency from intended start)"))
                .unwrap_or_default()
        );
        let sampler = start_server_sampler(&a).await?;
        let cpu0 = CpuReading::take(server_admin).await;
        let r = shoal_bench::runner::run(&table, &workload, &opts).await?;
        let cpu = cpu0.per_op(&CpuReading::take(server_admin).await, r.completed);
        let server_side = finish_server_sampler(sampler).await?;
        println!("{}", r.measurements.report_text(r.runtime));
        println!("[CPU], per operation, {}", cpu.describe());
        print_slowest_windows(&r, a.window);
        let mut phase = phase_json(&r, &cpu, a.window);
        add_server_side(&mut phase, server_side)?;
        json.insert("run".into(), phase);
    }
    let after = admin.status().await?;
    json.insert(
        "server".into(),
        serde_json::json!({
            "l1_hit_ratio_since_start": after.l1_hit_ratio,
            "l2_hit_ratio_since_start": after.l2_hit_ratio,
            "object_store_gets_during_bench": after.object_store_gets.saturating_sub(before.object_store_gets),
            "requests_during_bench": after.requests.saturating_sub(before.requests),
            "store_bytes": after.store_bytes,
            "regions": after.regions,
        }),
    );
    if let Some(path) = &a.json {
        std::fs::write(
            path,
            serde_json::to_string_pretty(&serde_json::Value::Object(json))?,
        )
        .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("figures written to {}", path.display());
    }
    if let Some(server) = _embedded {
        server.shutdown().await;
    }
    Ok(())
}

/// With `--http`, starts reading the server's figures every window.
async fn start_server_sampler(
    a: &YcsbArgs,
) -> anyhow::Result<Option<shoal_bench::server_side::Sampler>> {
    let Some(http) = &a.http else { return Ok(None) };
    let source = shoal_bench::scenario::figures::FigureSource::remote(http);
    shoal_bench::server_side::Sampler::start(source, a.window)
        .await
        .map(Some)
        .map_err(|e| anyhow::anyhow!("--http {http}: {e}"))
}

/// Ends the reading and prints the server's side of the phase.
async fn finish_server_sampler(
    sampler: Option<shoal_bench::server_side::Sampler>,
) -> anyhow::Result<Option<shoal_bench::server_side::ServerReport>> {
    let Some(s) = sampler else { return Ok(None) };
    let r = s
        .finish()
        .await
        .map_err(|e| anyhow::anyhow!("reading the server's metrics: {e}"))?;
    Ok(Some(r))
}

fn add_server_side(
    phase: &mut serde_json::Value,
    report: Option<shoal_bench::server_side::ServerReport>,
) -> anyhow::Result<()> {
    if let Some(r) = report {
        println!("[SERVER], {}", r.describe());
        if let Some(m) = phase.as_object_mut() {
            m.insert("server_side".into(), serde_json::to_value(r)?);
        }
    }
    Ok(())
}

/// The three windows with the slowest operation, in time order: where the
/// tail of the phase came from.
fn print_slowest_windows(r: &shoal_bench::PhaseReport, width: Duration) {
    let mut w = r.measurements.windows(width);
    w.sort_by_key(|w| std::cmp::Reverse(w.max_us));
    w.truncate(3);
    w.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    for w in w.iter().filter(|w| w.operations > 0) {
        println!(
            "[WINDOW], {:.1} s +{}, operations {}, p50 {} µs, p99 {} µs, p99.9 {} µs, max {} µs",
            w.start_s,
            humantime::format_duration(width),
            w.operations,
            w.p50_us,
            w.p99_us,
            w.p999_us,
            w.max_us
        );
    }
}

fn phase_json(r: &shoal_bench::PhaseReport, cpu: &CpuPerOp, window: Duration) -> serde_json::Value {
    let ms = r.runtime.as_millis().max(1) as f64;
    serde_json::json!({
        "runtime_ms": ms,
        "throughput_ops_per_sec": r.measurements.total() as f64 * 1000.0 / ms,
        "operations": r.measurements.reports(),
        // Paced runs: each operation's service time, from its actual issue
        // (the latencies above count from its intended start); empty else.
        "service_operations": r.measurements.service_reports(),
        // Microseconds of CPU per operation over the whole phase (warm-up
        // included), server (null when embedded) and this client process.
        "server_cpu_us_per_op": cpu.server_us,
        "server_cpu_system_us_per_op": cpu.server_system_us,
        "client_cpu_us_per_op": cpu.client_us,
        "client_cpu_system_us_per_op": cpu.client_system_us,
        // Every operation's latency by the window its intended start fell in.
        "window_s": window.as_secs_f64(),
        "windows": r.measurements.windows(window),
    })
}

/// `tests/hbase-hfile-gen`, looked for from the current directory upwards
/// (the scenario runs from a checkout).
fn java_project() -> anyhow::Result<PathBuf> {
    let mut dir = std::env::current_dir().context("current directory")?;
    loop {
        let p = dir.join("tests/hbase-hfile-gen");
        if p.join("pom.xml").is_file() {
            return Ok(p);
        }
        if !dir.pop() {
            anyhow::bail!(
                "tests/hbase-hfile-gen not found above the current directory: run the import \
                 scenario from a Shoal checkout"
            );
        }
    }
}
