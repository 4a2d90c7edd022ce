//! `bucketcache`: the read experiment HBase-on-S3 operators run. A dataset
//! larger than L1 and smaller than L2 sits on an object store that behaves
//! like S3; YCSB workload C (zipfian reads) runs with L2 off, then on (from
//! cold), then after a clean restart with the persistent L2, then after a
//! restart whose L2 was wiped. Throughput, L2 hit ratio and object-store
//! GETs are sampled per window.
//!
//! Not covered here: a kill -9 restart (an in-process server cannot be
//! killed; the binary's kill -9 recovery is tested end to end elsewhere).

use super::{Embedded, ScenarioError, write_report};
use crate::runner::{self, RunOptions};
use crate::scenario::svg::{Line, chart};
use crate::workload::{CoreWorkload, Properties};
use serde::Serialize;
use shoal_client::Admin;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
}

/// One sampling window.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// Seconds since the phase started.
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
}

fn tune(c: &mut shoal_server::ServerConfig, o: &BucketcacheOptions, l2: bool) {
    c.object_store.emulate = Some(shoal_server::config::Emulation {
        latency: o.latency,
        jitter: o.latency / 3,
        bandwidth_bytes_per_sec: 90_000_000,
    });
    c.cache.l1_data = shoal_server::config::ByteSize(o.l1_bytes);
    c.cache.l2_capacity = shoal_server::config::ByteSize(if l2 {
        (o.records * 1000 * 4).max(256 << 20)
    } else {
        0
    });
}

fn workload(o: &BucketcacheOptions) -> Result<CoreWorkload, ScenarioError> {
    let mut p = Properties::default();
    p.parse(&format!(
        "table=bucketcache\ncolumnfamily=f\nrecordcount={}\noperationcount=1000000000\nfieldcount=1\nfieldlength=1000\nreadproportion=1\nupdateproportion=0\nrequestdistribution=zipfian\n",
        o.records
    ));
    CoreWorkload::from_properties(&p).map_err(|e| ScenarioError::Server(e.to_string()))
}

async fn phase(
    name: &str,
    server: &Embedded,
    o: &BucketcacheOptions,
) -> Result<Phase, ScenarioError> {
    let client = server.client().await?;
    let table = client.table("bucketcache");
    let w = Arc::new(workload(o)?);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (host, stop, window) = (server.host().clone(), stop.clone(), o.window);
        tokio::spawn(async move {
            let start = Instant::now();
            let snap = |h: &shoal_server::Host| {
                let s = h.status();
                let (hits, misses, gets) = s
                    .cache
                    .map_or((0, 0, 0), |c| (c.l2_hits, c.l2_misses, c.object_store_gets));
                (s.requests.total_requests(), hits, misses, gets)
            };
            let mut prev = snap(&host);
            let mut samples = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(window).await;
                let now = snap(&host);
                let dt = window.as_secs_f64();
                let lookups = (now.1 - prev.1) + (now.2 - prev.2);
                samples.push(Sample {
                    t_s: start.elapsed().as_secs_f64(),
                    ops_per_sec: (now.0 - prev.0) as f64 / dt,
                    l2_hit_ratio: (lookups > 0).then(|| (now.1 - prev.1) as f64 / lookups as f64),
                    gets_per_min: (now.3 - prev.3) as f64 * 60.0 / dt,
                });
                prev = now;
            }
            samples
        })
    };
    let opts = RunOptions {
        threads: o.threads,
        max_duration: Some(o.phase),
        status_every: Duration::from_secs(3600),
        ..RunOptions::default()
    };
    let r = runner::run(&table, &w, &opts)
        .await
        .map_err(|e| ScenarioError::Server(e.to_string()))?;
    stop.store(true, Ordering::Relaxed);
    let samples = sampler.await.unwrap_or_default();
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
    })
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
    let wipe = || {
        let _ = std::fs::remove_dir_all(&l2_dir);
    };
    let mut phases = Vec::new();
    eprintln!("bucketcache: L2 off");
    let s = Embedded::start_in(dir.path(), |c| tune(c, o, false)).await?;
    phases.push(phase("L2 off", &s, o).await?);
    s.stop().await;
    eprintln!("bucketcache: L2 on, cold");
    wipe();
    let s = Embedded::start_in(dir.path(), |c| tune(c, o, true)).await?;
    phases.push(phase("L2 on (cold start)", &s, o).await?);
    s.stop().await;
    eprintln!("bucketcache: clean restart, persistent L2");
    let s = Embedded::start_in(dir.path(), |c| tune(c, o, true)).await?;
    phases.push(phase("restart, persistent L2", &s, o).await?);
    s.stop().await;
    eprintln!("bucketcache: restart, L2 wiped");
    wipe();
    let s = Embedded::start_in(dir.path(), |c| tune(c, o, true)).await?;
    phases.push(phase("restart, L2 wiped", &s, o).await?);
    s.stop().await;

    let before = steady(&phases[1]);
    let report = BucketcacheReport {
        records: o.records,
        dataset_bytes: o.records * 1000,
        l1_bytes: o.l1_bytes,
        speedup_with_l2: before / steady(&phases[0]).max(1e-9),
        seconds_to_95pct_l2_hits: first_time(&phases[1], |s| {
            s.l2_hit_ratio.is_some_and(|r| r >= 0.95)
        }),
        recovery_s_persistent_l2: first_time(&phases[2], |s| s.ops_per_sec >= 0.95 * before),
        recovery_s_wiped_l2: first_time(&phases[3], |s| s.ops_per_sec >= 0.95 * before),
        phases,
    };
    let opt = |v: Option<f64>| v.map_or("not reached".into(), |s| format!("{s:.1} s"));
    let mut md = format!(
        "# bucketcache\n\n{} records of 1,000 B ({:.0} MiB) on an emulated S3 ({:.0} ms first byte), L1 {:.0} MiB, workload C (zipfian reads), {} threads.\n\n| figure | value |\n|---|---|\n| speed-up with L2 (steady) | {:.1}× |\n| time to 95 % L2 hits from cold | {} |\n| recovery to 95 % of throughput, clean restart, persistent L2 | {} |\n| recovery to 95 % of throughput, restart with L2 wiped | {} |\n\n| phase | reads/s | p50 (ms) | p99 (ms) | GETs per 10k reads (steady) |\n|---|---|---|---|---|\n",
        o.records,
        (o.records * 1000) as f64 / 1048576.0,
        o.latency.as_secs_f64() * 1e3,
        o.l1_bytes as f64 / 1048576.0,
        o.threads,
        report.speedup_with_l2,
        opt(report.seconds_to_95pct_l2_hits),
        opt(report.recovery_s_persistent_l2),
        opt(report.recovery_s_wiped_l2)
    );
    for p in &report.phases {
        md.push_str(&format!(
            "| {} | {:.0} | {:.2} | {:.2} | {:.1} |\n",
            p.name,
            p.ops_per_sec,
            p.p50_us as f64 / 1e3,
            p.p99_us as f64 / 1e3,
            p.gets_per_10k_reads_steady
        ));
    }
    let colors = ["#6b7280", "#2563eb", "#16a34a", "#dc2626"];
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
        "seconds into the phase",
        "reads/s",
        &lines,
        &[],
    );
    write_report(out, "bucketcache", &report, &md, &svg)?;
    Ok(report)
}
