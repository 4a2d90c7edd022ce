//! `bucketcache`: the read experiment HBase-on-S3 operators run. A dataset
//! larger than L1 and smaller than L2 sits on an object store that behaves
//! like S3; YCSB workload C (zipfian reads) runs with L2 off, then on (from
//! cold), then after a clean restart with the persistent L2, then after a
//! restart whose L2 was wiped, then after a kill -9 with the persistent L2
//! and after a kill -9 whose L2 was wiped. Throughput, L2 hit ratio and
//! object-store GETs are sampled per window. The first four phases run an
//! in-process server; the kill -9 phases run `shoal serve` as a child
//! process (module `child`), since only a process can be killed.

use super::child::{self, ChildServer, Counters};
use super::errors::child_err;
use super::{Embedded, ScenarioError, write_report};
use crate::runner::{self, RunOptions};
use crate::scenario::svg::{Line, chart};
use crate::workload::{CoreWorkload, Properties};
use serde::Serialize;
use shoal_client::{Admin, Client};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Settings of one run.
#[derive(Debug, Clone)]
pub struct BucketcacheOptions {
    /// Records of 1,000 B.
    pub records: u64,
    /// L1 data budget (smaller than the dataset).
    pub l1_bytes: u64,
    /// Length of each phase.
    pub phase: Duration,
    /// Sampling window.
    pub window: Duration,
    /// Reader threads.
    pub threads: usize,
    /// Emulated first-byte latency.
    pub latency: Duration,
    /// The `shoal` binary the kill -9 phases start as `shoal serve`.
    pub shoal_bin: PathBuf,
}

/// One sampling window.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// Seconds since the phase started (for a kill -9 phase: since the new
    /// process was started, its start-up included) at the window's end.
    pub t_s: f64,
    /// Reads per second.
    pub ops_per_sec: f64,
    /// L2 hit ratio in the window (`None`: no L2 lookups).
    pub l2_hit_ratio: Option<f64>,
    /// Object-store GETs caused by cache misses, per minute.
    pub gets_per_min: f64,
}

/// One phase.
#[derive(Debug, Clone, Serialize)]
pub struct Phase {
    /// Name.
    pub name: String,
    /// Samples.
    pub samples: Vec<Sample>,
    /// Reads per second over the phase.
    pub ops_per_sec: f64,
    /// Read latency p50 / p99, µs.
    pub p50_us: u64,
    /// p99.
    pub p99_us: u64,
    /// Object-store GETs per 10,000 reads over the last third of the phase.
    pub gets_per_10k_reads_steady: f64,
    /// For a phase after a restart: the steady throughput before it.
    pub pre_restart_ops_per_sec: Option<f64>,
    /// For a phase after a kill -9: seconds from starting the new process
    /// until it listened (region opens and L2 recovery included).
    pub startup_s: Option<f64>,
}

/// The experiment's results.
#[derive(Debug, Clone, Serialize)]
pub struct BucketcacheReport {
    /// Records.
    pub records: u64,
    /// Dataset bytes (values).
    pub dataset_bytes: u64,
    /// L1 data budget.
    pub l1_bytes: u64,
    /// The phases in order.
    pub phases: Vec<Phase>,
    /// Steady throughput with L2 / without.
    pub speedup_with_l2: f64,
    /// Seconds until the L2 hit ratio first reached 95 % (cold L2).
    pub seconds_to_95pct_l2_hits: Option<f64>,
    /// Seconds after a clean restart until throughput reached 95 % of the
    /// steady throughput before it, with the persistent L2.
    pub recovery_s_persistent_l2: Option<f64>,
    /// The same with the L2 wiped before the restart.
    pub recovery_s_wiped_l2: Option<f64>,
    /// Seconds after a kill -9 (from starting the new process) until
    /// throughput reached 95 % of the steady throughput before the kill,
    /// with the persistent L2.
    pub recovery_s_kill9_persistent_l2: Option<f64>,
    /// The same with the L2 wiped after the kill.
    pub recovery_s_kill9_wiped_l2: Option<f64>,
}

fn l2_capacity(o: &BucketcacheOptions, l2: bool) -> u64 {
    if l2 {
        (o.records * 1000 * 4).max(256 << 20)
    } else {
        0
    }
}

fn tune(c: &mut shoal_server::ServerConfig, o: &BucketcacheOptions, l2: bool) {
    c.object_store.emulate = Some(shoal_server::config::Emulation {
        latency: o.latency,
        jitter: o.latency / 3,
        bandwidth_bytes_per_sec: 90_000_000,
    });
    c.cache.l1_data = shoal_server::config::ByteSize(o.l1_bytes);
    c.cache.l2_capacity = shoal_server::config::ByteSize(l2_capacity(o, l2));
}

/// A TOML basic string holding `s`.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The child server's configuration: what [`tune`] sets in-process (with
/// L2 on), on `data_dir`, on free loopback ports.
fn child_config(data_dir: &Path, o: &BucketcacheOptions) -> Result<String, ScenarioError> {
    let dir = data_dir.to_str().ok_or_else(|| {
        ScenarioError::Server(format!("data dir {} is not UTF-8", data_dir.display()))
    })?;
    Ok(format!(
        "[thrift]\naddr = \"127.0.0.1:0\"\n\n[rest]\naddr = \"127.0.0.1:0\"\n\n[hbase_rpc]\naddr = \"127.0.0.1:0\"\n\n[server]\ngrpc_addr = \"127.0.0.1:0\"\nhttp_addr = \"127.0.0.1:0\"\ndata_dir = {}\n\n\
         [object_store.emulate]\nlatency = {}\njitter = {}\nbandwidth_bytes_per_sec = 90000000\n\n\
         [cache]\nl1_data = {}\nl2_capacity = {}\n",
        toml_string(dir),
        o.latency.as_millis(),
        (o.latency / 3).as_millis(),
        o.l1_bytes,
        l2_capacity(o, true),
    ))
}

fn workload(o: &BucketcacheOptions) -> Result<CoreWorkload, ScenarioError> {
    let mut p = Properties::default();
    p.parse(&format!(
        "table=bucketcache\ncolumnfamily=f\nrecordcount={}\noperationcount=1000000000\nfieldcount=1\nfieldlength=1000\nreadproportion=1\nupdateproportion=0\nrequestdistribution=zipfian\n",
        o.records
    ));
    CoreWorkload::from_properties(&p).map_err(|e| ScenarioError::Server(e.to_string()))
}

/// Where a phase reads the server's counters.
#[derive(Clone)]
enum Source {
    /// An in-process server.
    Host(shoal_server::Host),
    /// A child process's HTTP address (`/api/status`).
    Http(SocketAddr),
}

impl Source {
    async fn read(&self) -> Result<Counters, ScenarioError> {
        match self {
            Source::Host(h) => {
                let s = h.status();
                let (l2_hits, l2_misses, object_store_gets) = s
                    .cache
                    .map_or((0, 0, 0), |c| (c.l2_hits, c.l2_misses, c.object_store_gets));
                Ok(Counters {
                    requests: s.requests.total_requests(),
                    l2_hits,
                    l2_misses,
                    object_store_gets,
                })
            }
            Source::Http(addr) => child::counters(*addr).await.map_err(child_err),
        }
    }
}

/// Runs workload C for `length` through `client`, sampling `source` every
/// window; sample times count from `origin`.
async fn phase(
    name: &str,
    client: &Client,
    source: Source,
    o: &BucketcacheOptions,
    origin: Instant,
    length: Duration,
) -> Result<Phase, ScenarioError> {
    let table = client.table("bucketcache");
    let w = Arc::new(workload(o)?);
    let stop = Arc::new(tokio::sync::Notify::new());
    let sampler = {
        let (stop, window) = (stop.clone(), o.window);
        tokio::spawn(async move {
            let mut prev = (Instant::now(), source.read().await?);
            let mut samples = Vec::new();
            loop {
                // A window cut short by the end of the run is dropped.
                tokio::select! {
                    _ = tokio::time::sleep(window) => {}
                    _ = stop.notified() => break,
                }
                let now = (Instant::now(), source.read().await?);
                let dt = (now.0 - prev.0).as_secs_f64().max(1e-3);
                let (a, b) = (&now.1, &prev.1);
                let hits = a.l2_hits.saturating_sub(b.l2_hits);
                let lookups = hits + a.l2_misses.saturating_sub(b.l2_misses);
                samples.push(Sample {
                    t_s: (now.0 - origin).as_secs_f64(),
                    ops_per_sec: a.requests.saturating_sub(b.requests) as f64 / dt,
                    l2_hit_ratio: (lookups > 0).then(|| hits as f64 / lookups as f64),
                    gets_per_min: a.object_store_gets.saturating_sub(b.object_store_gets) as f64
                        * 60.0
                        / dt,
                });
                prev = now;
            }
            Ok::<_, ScenarioError>(samples)
        })
    };
    let opts = RunOptions {
        threads: o.threads,
        max_duration: Some(length),
        status_every: Duration::from_secs(3600),
        ..RunOptions::default()
    };
    let r = runner::run(&table, &w, &opts).await;
    // Stop the sampler before looking at the run's result.
    stop.notify_one();
    let samples = sampler
        .await
        .map_err(|e| ScenarioError::Server(format!("sampler task: {e}")))??;
    let r = r.map_err(|e| ScenarioError::Server(e.to_string()))?;
    let read = r.measurements.reports().get("READ").cloned();
    let tail = &samples[samples.len() * 2 / 3..];
    let (ops, gets): (f64, f64) = tail.iter().fold((0.0, 0.0), |(a, b), s| {
        (a + s.ops_per_sec, b + s.gets_per_min / 60.0)
    });
    Ok(Phase {
        name: name.into(),
        ops_per_sec: r.measurements.total() as f64 / r.runtime.as_secs_f64().max(1e-3),
        p50_us: read.as_ref().map_or(0, |r| r.p50_us),
        p99_us: read.as_ref().map_or(0, |r| r.p99_us),
        gets_per_10k_reads_steady: if ops > 0.0 {
            gets / ops * 10_000.0
        } else {
            0.0
        },
        samples,
        pre_restart_ops_per_sec: None,
        startup_s: None,
    })
}

/// An in-process phase on a server started on `dir`.
async fn embedded_phase(
    name: &str,
    dir: &Path,
    o: &BucketcacheOptions,
    l2: bool,
) -> Result<Phase, ScenarioError> {
    let s = Embedded::start_in(dir, |c| tune(c, o, l2)).await?;
    let client = s.client().await?;
    let p = phase(
        name,
        &client,
        Source::Host(s.host().clone()),
        o,
        Instant::now(),
        o.phase,
    )
    .await;
    drop(client);
    s.stop().await;
    p
}

/// A kill -9 phase: a child server on `dir` reads until steady and is
/// killed with SIGKILL; the L2 directory is wiped if `wipe_l2`; a new child
/// starts on the same directory and is measured from the moment it is
/// started, then stopped with SIGTERM.
async fn kill9_phase(
    name: &str,
    dir: &Path,
    config: &Path,
    wipe_l2: Option<&Path>,
    o: &BucketcacheOptions,
) -> Result<Phase, ScenarioError> {
    let log = dir.join("shoal-serve.stderr.log");
    let warm = (o.phase / 2).max(o.window * 3);
    let before = ChildServer::start(&o.shoal_bin, config, &log)
        .await
        .map_err(child_err)?;
    let client = Client::connect(&before.grpc.to_string()).await?;
    let pre = phase(
        &format!("{name}: before the kill"),
        &client,
        Source::Http(before.http),
        o,
        Instant::now(),
        warm,
    )
    .await?;
    drop(client);
    before.kill9().map_err(child_err)?;
    if let Some(l2) = wipe_l2 {
        remove_dir(l2)?;
    }
    let origin = Instant::now();
    let after = ChildServer::start(&o.shoal_bin, config, &log)
        .await
        .map_err(child_err)?;
    let startup = origin.elapsed();
    let client = Client::connect(&after.grpc.to_string()).await?;
    let mut p = phase(name, &client, Source::Http(after.http), o, origin, o.phase).await?;
    drop(client);
    after
        .terminate(Duration::from_secs(120))
        .await
        .map_err(child_err)?;
    p.pre_restart_ops_per_sec = Some(steady(&pre));
    p.startup_s = Some(startup.as_secs_f64());
    Ok(p)
}

fn remove_dir(d: &Path) -> Result<(), ScenarioError> {
    match std::fs::remove_dir_all(d) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(ScenarioError::Io {
            path: d.display().to_string(),
            source: e,
        }),
        _ => Ok(()),
    }
}

fn steady(p: &Phase) -> f64 {
    let tail = &p.samples[p.samples.len() * 2 / 3..];
    if tail.is_empty() {
        return p.ops_per_sec;
    }
    tail.iter().map(|s| s.ops_per_sec).sum::<f64>() / tail.len() as f64
}

fn first_time(p: &Phase, pred: impl Fn(&Sample) -> bool) -> Option<f64> {
    p.samples.iter().find(|s| pred(s)).map(|s| s.t_s)
}

/// Seconds until a window reached 95 % of the throughput before the restart.
fn recovery(p: &Phase) -> Option<f64> {
    let before = p.pre_restart_ops_per_sec?;
    first_time(p, |s| s.ops_per_sec >= 0.95 * before)
}

/// Runs the experiment and writes `bucketcache.{json,md,svg}` into `out`.
pub async fn run(o: &BucketcacheOptions, out: &Path) -> Result<BucketcacheReport, ScenarioError> {
    let dir = tempfile::tempdir().map_err(|e| ScenarioError::Server(e.to_string()))?;
    let l2_dir = dir.path().join("cache");
    // Load, then flush and compact so every read goes to files.
    let server = Embedded::start_in(dir.path(), |c| tune(c, o, true)).await?;
    {
        let client = server.client().await?;
        client
            .admin()
            .create_table("bucketcache", vec![Admin::family("f")], vec![])
            .await?;
        let w = Arc::new(workload(o)?);
        let table = client.table("bucketcache");
        let opts = RunOptions {
            threads: 16,
            status_every: Duration::from_secs(3600),
            ..RunOptions::default()
        };
        runner::load(&table, &w, &opts)
            .await
            .map_err(|e| ScenarioError::Server(e.to_string()))?;
        client.admin().flush("bucketcache").await?;
        client.admin().compact("bucketcache", true).await?;
    }
    server.stop().await;
    let mut phases = Vec::new();
    eprintln!("bucketcache: L2 off");
    phases.push(embedded_phase("L2 off", dir.path(), o, false).await?);
    eprintln!("bucketcache: L2 on, cold");
    remove_dir(&l2_dir)?;
    phases.push(embedded_phase("L2 on (cold start)", dir.path(), o, true).await?);
    eprintln!("bucketcache: clean restart, persistent L2");
    let mut p = embedded_phase("restart, persistent L2", dir.path(), o, true).await?;
    p.pre_restart_ops_per_sec = Some(steady(&phases[1]));
    phases.push(p);
    eprintln!("bucketcache: restart, L2 wiped");
    remove_dir(&l2_dir)?;
    let mut p = embedded_phase("restart, L2 wiped", dir.path(), o, true).await?;
    p.pre_restart_ops_per_sec = Some(steady(&phases[2]));
    phases.push(p);

    let config = dir.path().join("shoal.toml");
    std::fs::write(&config, child_config(dir.path(), o)?).map_err(|source| ScenarioError::Io {
        path: config.display().to_string(),
        source,
    })?;
    eprintln!("bucketcache: kill -9, persistent L2 (shoal serve child processes)");
    phases.push(kill9_phase("kill -9, persistent L2", dir.path(), &config, None, o).await?);
    eprintln!("bucketcache: kill -9, L2 wiped");
    phases.push(kill9_phase("kill -9, L2 wiped", dir.path(), &config, Some(&l2_dir), o).await?);

    let report = BucketcacheReport {
        records: o.records,
        dataset_bytes: o.records * 1000,
        l1_bytes: o.l1_bytes,
        speedup_with_l2: steady(&phases[1]) / steady(&phases[0]).max(1e-9),
        seconds_to_95pct_l2_hits: first_time(&phases[1], |s| {
            s.l2_hit_ratio.is_some_and(|r| r >= 0.95)
        }),
        recovery_s_persistent_l2: recovery(&phases[2]),
        recovery_s_wiped_l2: recovery(&phases[3]),
        recovery_s_kill9_persistent_l2: recovery(&phases[4]),
        recovery_s_kill9_wiped_l2: recovery(&phases[5]),
        phases,
    };
    let md = markdown(o, &report);
    let colors = [
        "#6b7280", "#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c",
    ];
    let lines: Vec<Line> = report
        .phases
        .iter()
        .zip(colors)
        .map(|(p, color)| Line {
            name: p.name.clone(),
            color,
            points: p.samples.iter().map(|s| (s.t_s, s.ops_per_sec)).collect(),
        })
        .collect();
    let svg = chart(
        "bucketcache: reads per second in each phase",
        "seconds into the phase (kill -9: since the new process started)",
        "reads/s",
        &lines,
        &[],
    );
    write_report(out, "bucketcache", &report, &md, &svg)?;
    Ok(report)
}

fn markdown(o: &BucketcacheOptions, r: &BucketcacheReport) -> String {
    let opt = |v: Option<f64>| v.map_or("not reached".into(), |s| format!("{s:.1} s"));
    let mut md = format!(
        "# bucketcache\n\n{} records of 1,000 B ({:.0} MiB) on an emulated S3 ({:.0} ms first byte), L1 {:.0} MiB, workload C (zipfian reads), {} threads, {:.0} s phases, {:.0} s windows.\n\n\
         | figure | value |\n|---|---|\n\
         | speed-up with L2 (steady) | {:.1}× |\n\
         | time to 95 % L2 hits from cold | {} |\n\
         | recovery to 95 % of pre-restart throughput, clean restart, persistent L2 | {} |\n\
         | recovery to 95 % of pre-restart throughput, clean restart, L2 wiped | {} |\n\
         | recovery to 95 % of pre-restart throughput, kill -9, persistent L2 | {} |\n\
         | recovery to 95 % of pre-restart throughput, kill -9, L2 wiped | {} |\n\n\
         | phase | reads/s | p50 (ms) | p99 (ms) | GETs per 10k reads (steady) | pre-restart reads/s | start-up | recovery to 95 % |\n\
         |---|---|---|---|---|---|---|---|\n",
        o.records,
        (o.records * 1000) as f64 / 1048576.0,
        o.latency.as_secs_f64() * 1e3,
        o.l1_bytes as f64 / 1048576.0,
        o.threads,
        o.phase.as_secs_f64(),
        o.window.as_secs_f64(),
        r.speedup_with_l2,
        opt(r.seconds_to_95pct_l2_hits),
        opt(r.recovery_s_persistent_l2),
        opt(r.recovery_s_wiped_l2),
        opt(r.recovery_s_kill9_persistent_l2),
        opt(r.recovery_s_kill9_wiped_l2),
    );
    for p in &r.phases {
        md.push_str(&format!(
            "| {} | {:.0} | {:.2} | {:.2} | {:.1} | {} | {} | {} |\n",
            p.name,
            p.ops_per_sec,
            p.p50_us as f64 / 1e3,
            p.p99_us as f64 / 1e3,
            p.gets_per_10k_reads_steady,
            p.pre_restart_ops_per_sec
                .map_or("—".into(), |v| format!("{v:.0}")),
            p.startup_s.map_or("—".into(), |v| format!("{v:.2} s")),
            if p.pre_restart_ops_per_sec.is_some() {
                opt(recovery(p))
            } else {
                "—".into()
            },
        ));
    }
    md.push_str(
        "\nRecovery times are window ends: the smallest value a window can report is its length. \
         Clean-restart phases count from the restarted in-process server's first request; \
         kill -9 phases (a `shoal serve` child process killed with SIGKILL, restarted on the same \
         data directory) count from starting the new process, its start-up included. \
         Pre-restart throughput is the steady (last third) throughput of the run before the restart.\n",
    );
    md
}
