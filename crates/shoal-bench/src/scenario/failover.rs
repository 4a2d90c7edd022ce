//! `failover`: how long a cluster is without a region after one of its
//! servers dies, and whether anything acknowledged is lost.
//!
//! etcd and three `shoal serve` processes in cluster mode run as child
//! processes over one bucket (a local directory with S3's latency emulated,
//! as `bucketcache` does). A pre-split table is loaded, then YCSB workload
//! A (50 % reads, 50 % updates, zipfian keys) runs at a fixed rate through
//! the Rust client, which knows all three addresses. After a while one
//! server (not the master) is killed with SIGKILL. Reported: the time from
//! the kill until every region serves again as a client sees it (a round
//! of reads of one row per region, started after the kill, all answered)
//! and as the master sees it (every region open on the two survivors, from
//! the Status call), operations that failed at the caller, operations
//! finished over 100 ms after their scheduled start, p99 per 1 s window, and
//! acknowledged updates lost (each update writes its task's column with a
//! growing number; every column must read back at least its last
//! acknowledged number).

use super::child::{ChildError, ChildServer};
use super::etcd::{EtcdChild, cpu_seconds};
use super::svg::{Line, chart};
use super::{ScenarioError, write_report};
use crate::generators::ScrambledZipfian;
use serde::Serialize;
use shoal_client::{Admin, Client, ClientOptions, Get};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// HBase's default ZooKeeper session timeout: how long a dead
/// RegionServer goes unnoticed there (`zookeeper.session.timeout`).
const HBASE_DETECTION_S: f64 = 90.0;

/// What the scenario runs.
#[derive(Debug, Clone)]
pub struct FailoverOptions {
    /// Rows loaded before the run.
    pub records: u64,
    /// Regions of the table (pre-split evenly).
    pub regions: usize,
    /// Operations per second, all tasks together.
    pub rate: f64,
    /// Tasks issuing operations.
    pub threads: usize,
    /// Run time before the kill.
    pub before: Duration,
    /// Run time after the kill.
    pub after: Duration,
    /// The cluster's `lease_ttl`.
    pub lease_ttl: Duration,
    /// Emulated object-store first-byte latency.
    pub latency: Duration,
    /// The `shoal` binary run as `shoal serve`.
    pub shoal_bin: PathBuf,
}

/// One 1 s window.
#[derive(Debug, Clone, Serialize)]
pub struct Window {
    /// Seconds since the run started (window start).
    pub t: u64,
    /// Operations finished in it.
    pub ops: u64,
    /// Failed at the caller.
    pub errors: u64,
    /// 99th percentile latency, ms (from the intended start: no
    /// coordinated omission).
    pub p99_ms: f64,
    /// Slowest, ms.
    pub max_ms: f64,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct FailoverReport {
    /// Servers at the start.
    pub servers: usize,
    /// Table regions.
    pub regions: usize,
    /// Rows loaded.
    pub records: u64,
    /// Target operations per second.
    pub rate: f64,
    /// The lease TTL, s.
    pub lease_ttl_s: f64,
    /// The killed server.
    pub killed: String,
    /// When it was killed, s after the run started.
    pub kill_at_s: f64,
    /// Kill → a round of reads of every region, started after the kill, all
    /// answered (s).
    pub recovery_client_s: Option<f64>,
    /// Kill → every region open on the survivors, as the master reports (s).
    pub recovery_master_s: Option<f64>,
    /// HBase's default detection time alone, s.
    pub hbase_default_detection_s: f64,
    /// Operations finished.
    pub ops: u64,
    /// Operations that failed at the caller (after the client's retries).
    pub ops_failed: u64,
    /// Operations finished more than 100 ms after their scheduled start
    /// (during the stall, and the backlog behind it at a fixed rate).
    pub ops_slower_than_100ms: u64,
    /// Updates acknowledged.
    pub acked_updates: u64,
    /// Acknowledged updates not found afterwards.
    pub acked_updates_lost: u64,
    /// CPU the three servers used during the run (user + system, from
    /// /proc; the killed one up to its kill), per operation, µs. The load
    /// generator runs in this process, not counted.
    pub server_cpu_us_per_op: Option<f64>,
    /// Per-second figures.
    pub windows: Vec<Window>,
}

fn child_err(e: ChildError) -> ScenarioError {
    ScenarioError::Server(e.to_string())
}

fn key(n: u64) -> String {
    format!("k{n:010}")
}

fn config(root: &Path, etcd: &str, name: &str, o: &FailoverOptions) -> String {
    let p = |p: PathBuf| {
        p.display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    };
    format!(
        "[thrift]\naddr = \"127.0.0.1:0\"\n\n[hbase_rpc]\naddr = \"127.0.0.1:0\"\n\n[server]\ngrpc_addr = \"127.0.0.1:0\"\nhttp_addr = \"127.0.0.1:0\"\ndata_dir = \"{}\"\n\n\
         [object_store]\nurl = \"file://{}\"\n\n\
         [object_store.emulate]\nlatency = {}\njitter = {}\nbandwidth_bytes_per_sec = 90000000\n\n\
         [wal]\nbackend = \"object\"\n\n\
         [cache]\nl1_data = \"64MiB\"\nl2_capacity = \"256MiB\"\n\n\
         [cluster]\netcd = [\"{etcd}\"]\nname = \"{name}\"\nlease_ttl = \"{}s\"\n",
        p(root.join(format!("{name}-data"))),
        p(root.join("bucket")),
        o.latency.as_millis(),
        (o.latency / 3).as_millis(),
        o.lease_ttl.as_secs().max(1),
    )
}

/// Latencies and errors by window, shared by the tasks.
#[derive(Default)]
struct Record {
    windows: Vec<(Vec<f64>, u64)>,
}

impl Record {
    fn add(&mut self, t: f64, ms: Option<f64>) {
        let i = t.max(0.0) as usize;
        if self.windows.len() <= i {
            self.windows.resize_with(i + 1, Default::default);
        }
        match ms {
            Some(ms) => self.windows[i].0.push(ms),
            None => self.windows[i].1 += 1,
        }
    }
}

/// Runs the scenario; reports go to `out` as `failover.{json,md,svg}`.
pub async fn run(o: &FailoverOptions, out: &Path) -> Result<FailoverReport, ScenarioError> {
    let root = tempfile::tempdir().map_err(|e| ScenarioError::Server(e.to_string()))?;
    std::fs::create_dir_all(root.path().join("bucket")).map_err(|source| ScenarioError::Io {
        path: root.path().display().to_string(),
        source,
    })?;
    let etcd = EtcdChild::start(root.path()).await?;
    let mut servers: Vec<(String, Option<ChildServer>)> = Vec::new();
    for i in 1..=3 {
        let name = format!("s{i}");
        let cfg_path = root.path().join(format!("{name}.toml"));
        std::fs::write(&cfg_path, config(root.path(), &etcd.endpoint, &name, o)).map_err(
            |source| ScenarioError::Io {
                path: cfg_path.display().to_string(),
                source,
            },
        )?;
        let log = root.path().join(format!("{name}.log"));
        let s = ChildServer::start(&o.shoal_bin, &cfg_path, &log)
            .await
            .map_err(child_err)?;
        servers.push((name, Some(s)));
    }
    let addrs: Vec<String> = servers
        .iter()
        .filter_map(|(_, s)| s.as_ref().map(|s| s.grpc.to_string()))
        .collect();
    let client = Client::connect_with(
        &addrs.join(","),
        ClientOptions {
            retry_deadline: Duration::from_secs(60),
            ..ClientOptions::default()
        },
    )
    .await?;
    let splits: Vec<Vec<u8>> = (1..o.regions as u64)
        .map(|i| key(o.records * i / o.regions as u64).into_bytes())
        .collect();
    let admin = client.admin();
    admin
        .create_table("usertable", vec![Admin::family("cf")], splits.clone())
        .await?;
    let table = client.table("usertable");
    // Load.
    let load_tasks: Vec<_> = (0..o.threads as u64)
        .map(|t| {
            let table = table.clone();
            let (records, threads) = (o.records, o.threads as u64);
            tokio::spawn(async move {
                let mut n = t;
                while n < records {
                    table.put(key(n), "cf", "field0", vec![b'x'; 100]).await?;
                    n += threads;
                }
                Ok::<_, shoal_client::ClientError>(())
            })
        })
        .collect();
    for t in load_tasks {
        t.await
            .map_err(|e| ScenarioError::Server(format!("load task: {e}")))??;
    }
    // The master, to spare it.
    let status = admin.status().await?;
    let master = status.master.clone();
    let victim = servers.iter().position(|(n, _)| *n != master).unwrap_or(0);
    let killed = servers[victim].0.clone();

    // Run workload A at a fixed rate.
    let cpu_start: Vec<Option<f64>> = servers
        .iter()
        .map(|(_, s)| cpu_seconds(s.as_ref().and_then(ChildServer::pid)))
        .collect();
    let started = Instant::now();
    let record = Arc::new(Mutex::new(Record::default()));
    let acked: Arc<Mutex<HashMap<(u64, usize), u64>>> = Arc::default();
    let stop_at = o.before + o.after;
    let per_task = o.rate / o.threads as f64;
    let zipf = Arc::new(ScrambledZipfian::new(0, o.records - 1));
    let tasks: Vec<_> = (0..o.threads)
        .map(|t| {
            let (table, record, acked, zipf) =
                (table.clone(), record.clone(), acked.clone(), zipf.clone());
            tokio::spawn(async move {
                use rand::SeedableRng;
                let mut rng = rand::rngs::StdRng::seed_from_u64(t as u64 + 1);
                let interval = Duration::from_secs_f64(1.0 / per_task.max(0.001));
                let mut next = started + interval.mul_f64(t as f64 / 16.0);
                let mut seq = 0u64;
                while next.duration_since(started) < stop_at {
                    tokio::time::sleep_until(next.into()).await;
                    let k = zipf.next(&mut rng);
                    let read = rand::Rng::random_bool(&mut rng, 0.5);
                    let ok = if read {
                        table.get(Get::new(key(k))).await.map(|_| ())
                    } else {
                        seq += 1;
                        let r = table
                            .put(key(k), "cf", format!("t{t}"), seq.to_string())
                            .await;
                        if r.is_ok() {
                            acked
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .insert((k, t), seq);
                        }
                        r
                    };
                    let done = Instant::now();
                    let ms = done.duration_since(next).as_secs_f64() * 1e3;
                    record.lock().unwrap_or_else(|e| e.into_inner()).add(
                        next.duration_since(started).as_secs_f64(),
                        ok.is_ok().then_some(ms),
                    );
                    next += interval;
                }
            })
        })
        .collect();

    tokio::time::sleep_until((started + o.before).into()).await;
    let kill_at = started.elapsed().as_secs_f64();
    let victim_cpu = cpu_seconds(servers[victim].1.as_ref().and_then(ChildServer::pid));
    let killed_at = Instant::now();
    if let Some(s) = servers[victim].1.take() {
        s.kill9().map_err(child_err)?;
    }
    let survivors: Vec<String> = servers
        .iter()
        .filter_map(|(_, s)| s.as_ref().map(|s| s.grpc.to_string()))
        .collect();
    // The watcher retries every 100 ms at most: it measures when regions
    // answer again, not the workload client's backoff policy.
    let watcher = Client::connect_with(
        &survivors.join(","),
        ClientOptions {
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(100),
            retry_deadline: Duration::from_secs(60),
            ..ClientOptions::default()
        },
    )
    .await?;
    // The client's view: rounds of one read per region.
    let probe_rows: Vec<String> = std::iter::once(key(0))
        .chain(
            splits
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned()),
        )
        .collect();
    let client_view = {
        let table = watcher.table("usertable");
        let rows = probe_rows.clone();
        tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_secs(120);
            while Instant::now() < deadline {
                let round =
                    futures::future::join_all(rows.iter().map(|r| table.get(Get::new(r.clone()))))
                        .await;
                if round.iter().all(Result::is_ok) {
                    return Some(killed_at.elapsed().as_secs_f64());
                }
            }
            None
        })
    };
    // The master's view.
    let mut recovery_master = None;
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if let Ok(s) = watcher.admin().status().await {
            let open: u32 = s.servers.iter().map(|x| x.regions).sum();
            if s.servers.len() == 2 && open as usize == o.regions {
                recovery_master = Some(killed_at.elapsed().as_secs_f64());
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let recovery_client = client_view
        .await
        .map_err(|e| ScenarioError::Server(format!("probe task: {e}")))?;
    for t in tasks {
        t.await
            .map_err(|e| ScenarioError::Server(format!("workload task: {e}")))?;
    }
    let mut server_cpu = Some(0.0);
    for (i, (_, s)) in servers.iter().enumerate() {
        let end = if i == victim {
            victim_cpu
        } else {
            cpu_seconds(s.as_ref().and_then(ChildServer::pid))
        };
        server_cpu = match (server_cpu, end, cpu_start[i]) {
            (Some(total), Some(e), Some(b)) => Some(total + (e - b)),
            _ => None,
        };
    }
    // Every acknowledged update is there.
    let acked = std::mem::take(&mut *acked.lock().unwrap_or_else(|e| e.into_inner()));
    let mut lost = 0u64;
    let checked = watcher.table("usertable");
    let entries: Vec<((u64, usize), u64)> = acked.into_iter().collect();
    for chunk in entries.chunks(200) {
        let rows = checked
            .get_many(
                chunk
                    .iter()
                    .map(|((k, t), _)| Get::new(key(*k)).column("cf", format!("t{t}")))
                    .collect(),
            )
            .await?;
        for ((_, want), row) in chunk.iter().zip(rows) {
            let got = row
                .cells
                .first()
                .and_then(|c| String::from_utf8_lossy(&c.value).parse::<u64>().ok());
            if got.is_none_or(|g| g < *want) {
                lost += 1;
            }
        }
    }
    let acked_updates = entries.len() as u64;
    let rec = std::mem::take(&mut *record.lock().unwrap_or_else(|e| e.into_inner()));
    let mut windows = Vec::new();
    let (mut ops, mut failed, mut slow) = (0, 0, 0);
    for (i, (mut lat, errors)) in rec.windows.into_iter().enumerate() {
        lat.sort_by(f64::total_cmp);
        let p99 = lat
            .get(((lat.len() as f64 * 0.99).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0);
        ops += lat.len() as u64 + errors;
        failed += errors;
        slow += lat.iter().filter(|&&m| m > 100.0).count() as u64;
        windows.push(Window {
            t: i as u64,
            ops: lat.len() as u64 + errors,
            errors,
            p99_ms: p99,
            max_ms: lat.last().copied().unwrap_or(0.0),
        });
    }
    let report = FailoverReport {
        servers: 3,
        regions: o.regions,
        records: o.records,
        rate: o.rate,
        lease_ttl_s: o.lease_ttl.as_secs_f64(),
        killed,
        kill_at_s: kill_at,
        recovery_client_s: recovery_client,
        recovery_master_s: recovery_master,
        hbase_default_detection_s: HBASE_DETECTION_S,
        ops,
        ops_failed: failed,
        ops_slower_than_100ms: slow,
        acked_updates,
        acked_updates_lost: lost,
        server_cpu_us_per_op: server_cpu.filter(|_| ops > 0).map(|c| c * 1e6 / ops as f64),
        windows,
    };
    for (_, s) in servers.iter_mut() {
        if let Some(s) = s.take() {
            let _ = s.terminate(Duration::from_secs(60)).await;
        }
    }
    drop(etcd);
    let svg = chart(
        "failover: p99 latency per second (kill -9 at the marker)",
        "seconds",
        "ms",
        &[Line {
            name: "p99".into(),
            color: "#c0392b",
            points: report
                .windows
                .iter()
                .map(|w| (w.t as f64, w.p99_ms))
                .collect(),
        }],
        &[report.kill_at_s],
    );
    write_report(out, "failover", &report, &markdown(o, &report), &svg)?;
    Ok(report)
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "not within 120 s".into(), |s| format!("{s:.2} s"))
}

fn markdown(o: &FailoverOptions, r: &FailoverReport) -> String {
    let mut md = format!(
        "# failover\n\n3 `shoal serve` processes and etcd on one machine, one bucket (S3 latency emulated: {} ms first byte), \
         lease_ttl {:.0} s, a table of {} regions and {} rows, YCSB A at {:.0} ops/s from {} tasks. \
         Server {} (not the master) killed with SIGKILL at {:.1} s.\n\n\
         | figure | value |\n|---|---|\n\
         | every region serving again, client's view | {} |\n\
         | every region serving again, master's view | {} |\n\
         | HBase: default time to *notice* a dead RegionServer | {:.0} s (then WAL split and replay) |\n\
         | operations | {} |\n| failed at the caller | {} |\n| slower than 100 ms from their scheduled start (the stall and the backlog behind it) | {} |\n\
         | acknowledged updates | {} |\n| acknowledged updates lost | {} |\n\
         | server CPU per operation (3 servers, user + system) | {} |\n\n\
         | second | ops | errors | p99 ms | max ms |\n|---|---|---|---|---|\n",
        o.latency.as_millis(),
        r.lease_ttl_s,
        r.regions,
        r.records,
        r.rate,
        o.threads,
        r.killed,
        r.kill_at_s,
        secs(r.recovery_client_s),
        secs(r.recovery_master_s),
        r.hbase_default_detection_s,
        r.ops,
        r.ops_failed,
        r.ops_slower_than_100ms,
        r.acked_updates,
        r.acked_updates_lost,
        r.server_cpu_us_per_op
            .map_or_else(|| "not measured".into(), |us| format!("{us:.0} µs")),
    );
    for w in &r.windows {
        md.push_str(&format!(
            "| {} | {} | {} | {:.1} | {:.1} |\n",
            w.t, w.ops, w.errors, w.p99_ms, w.max_ms
        ));
    }
    md
}
