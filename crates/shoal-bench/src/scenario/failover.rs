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
//!
//! With `unflushed_bytes` set ("full memstores"), the servers flush nothing
//! (flush and split sizes and the memstore limit far above what the run
//! writes) and the table is loaded with rows of `value_bytes` in scrambled
//! key order (every region fills at once) until the server to be killed
//! holds at least that many bytes in its memstores; then the run goes on as
//! above. Reported besides: how long after the kill etcd let the killed
//! server's lease lapse (its member key gone, polled every 10 ms), and from
//! the survivors' logs, each of its regions' open (entries replayed,
//! `open_ms`, when it opened): the figure that matters is the lease's lapse
//! to the last of them open.

use super::child::{ChildServer, status_json};
use super::errors::child_err;
use super::etcd::{EtcdChild, cpu_seconds, free_port};
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
    /// 0: the table holds `records` rows of 100 B. Otherwise the servers
    /// flush nothing and the table is loaded until the server to be killed
    /// holds at least this many bytes in its memstores.
    pub unflushed_bytes: u64,
    /// Value size of the rows loaded when `unflushed_bytes` is set.
    pub value_bytes: usize,
    /// More server settings, each `section.key = value` (a TOML value),
    /// e.g. `wal.max_unflushed = "64MiB"`.
    pub server_settings: Vec<String>,
}

/// One region of the killed server opened by a survivor (its log line).
#[derive(Debug, Clone, Serialize)]
pub struct ReplayedOpen {
    /// The region.
    pub region: String,
    /// The survivor that opened it.
    pub server: String,
    /// Entries of the dead server's WAL it replayed.
    pub replayed: u64,
    /// The open as the survivor timed it (WAL read, replay, logging again), ms.
    pub open_ms: u64,
    /// When it opened, s after the kill (from the log's timestamp).
    pub at_s: f64,
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
    /// Bytes in the killed server's memstores just before the kill.
    pub killed_memstore_bytes: Option<u64>,
    /// Bytes of the killed server's WAL run in the bucket at the kill (all
    /// unflushed when nothing flushed), and its objects.
    pub killed_wal_bytes: u64,
    /// Objects of that run.
    pub killed_wal_objects: u64,
    /// Kill → the killed server's lease lapsed in etcd (its member key
    /// gone), s.
    pub lease_lapsed_s: Option<f64>,
    /// Lease lapse → the last of the killed server's regions open on a
    /// survivor (its log line), s.
    pub lapse_to_last_open_s: Option<f64>,
    /// Lease lapse → every region open, as the master reports (records
    /// written after the survivors' opens), s.
    pub lapse_to_master_view_s: Option<f64>,
    /// CPU the two survivors used from the kill until every region was open
    /// in the master's view (user + system, s).
    pub survivors_cpu_s: Option<f64>,
    /// The killed server's regions as the survivors opened them.
    pub opens: Vec<ReplayedOpen>,
}

fn key(n: u64) -> String {
    format!("k{n:010}")
}

fn config(
    root: &Path,
    etcd: &str,
    name: &str,
    o: &FailoverOptions,
) -> Result<String, ScenarioError> {
    let p = |p: PathBuf| {
        format!(
            "\"{}\"",
            p.display()
                .to_string()
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
        )
    };
    let addr = || free_port().map(|port| format!("\"127.0.0.1:{port}\""));
    let mut sections: Vec<(String, Vec<String>)> = vec![
        ("thrift".into(), vec![format!("addr = {}", addr()?)]),
        ("rest".into(), vec![format!("addr = {}", addr()?)]),
        ("hbase_rpc".into(), vec![format!("addr = {}", addr()?)]),
        (
            "server".into(),
            vec![
                format!("grpc_addr = {}", addr()?),
                format!("http_addr = {}", addr()?),
                format!("data_dir = {}", p(root.join(format!("{name}-data")))),
            ],
        ),
        (
            "object_store".into(),
            vec![format!(
                "url = \"file://{}\"",
                root.join("bucket").display()
            )],
        ),
        (
            "object_store.emulate".into(),
            vec![
                format!("latency = {}", o.latency.as_millis()),
                format!("jitter = {}", (o.latency / 3).as_millis()),
                "bandwidth_bytes_per_sec = 90000000".into(),
            ],
        ),
        ("wal".into(), vec!["backend = \"object\"".into()]),
        (
            "cache".into(),
            vec![
                "l1_data = \"64MiB\"".into(),
                "l2_capacity = \"256MiB\"".into(),
            ],
        ),
        (
            "cluster".into(),
            vec![
                format!("etcd = [\"{etcd}\"]"),
                format!("name = \"{name}\""),
                format!("lease_ttl = \"{}s\"", o.lease_ttl.as_secs().max(1)),
            ],
        ),
    ];
    // Latency 0: the plain local directory.
    if o.latency.is_zero() {
        sections.retain(|(s, _)| s != "object_store.emulate");
    }
    let mut set =
        |section: &str, line: String| match sections.iter_mut().find(|(s, _)| s == section) {
            Some((_, lines)) => lines.push(line),
            None => sections.push((section.to_owned(), vec![line])),
        };
    if o.unflushed_bytes > 0 {
        // Nothing flushes during the run: every byte written stays in the
        // memstores and the WAL.
        set("regions", "flush_size = \"4GiB\"".into());
        set("regions", "split_size = \"256GiB\"".into());
        set("memstore", "global_limit = \"8GiB\"".into());
    }
    for setting in &o.server_settings {
        let (key, value) = setting.split_once('=').ok_or_else(|| {
            ScenarioError::Server(format!(
                "server setting {setting:?}: want section.key = value"
            ))
        })?;
        let (section, key) = key.trim().rsplit_once('.').ok_or_else(|| {
            ScenarioError::Server(format!(
                "server setting {setting:?}: want section.key = value"
            ))
        })?;
        set(section, format!("{} = {}", key.trim(), value.trim()));
    }
    Ok(sections
        .into_iter()
        .map(|(section, lines)| format!("[{section}]\n{}\n", lines.join("\n")))
        .collect::<Vec<_>>()
        .join("\n"))
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
        std::fs::write(&cfg_path, config(root.path(), &etcd.endpoint, &name, o)?).map_err(
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
    let full = o.unflushed_bytes > 0;
    // Full memstores: the key space is what three servers' worth of the
    // target takes, so that the rows loaded are mostly distinct.
    let records = if full {
        (o.unflushed_bytes * 3 / o.value_bytes.max(1) as u64).max(o.regions as u64)
    } else {
        o.records
    };
    let splits: Vec<Vec<u8>> = (1..o.regions as u64)
        .map(|i| key(records * i / o.regions as u64).into_bytes())
        .collect();
    let admin = client.admin();
    admin
        .create_table("usertable", vec![Admin::family("cf")], splits.clone())
        .await?;
    let table = client.table("usertable");
    // The master, to spare it.
    let status = admin.status().await?;
    let master = status.master.clone();
    let victim = servers.iter().position(|(n, _)| *n != master).unwrap_or(0);
    let killed = servers[victim].0.clone();
    let victim_http = servers[victim].1.as_ref().map(|s| s.http);
    // Load.
    if full {
        load_until_full(&table, o, records, victim_http).await?;
    } else {
        let load_tasks: Vec<_> = (0..o.threads as u64)
            .map(|t| {
                let table = table.clone();
                let threads = o.threads as u64;
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
    }

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
    let zipf = Arc::new(ScrambledZipfian::new(0, records - 1));
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
    // What the killed server holds unflushed, just before the kill.
    let killed_memstore_bytes = match victim_http {
        Some(http) => status_json(http)
            .await
            .ok()
            .and_then(|v| v["memstore_bytes"].as_u64()),
        None => None,
    };
    let (killed_wal_bytes, killed_wal_objects) =
        dir_size(&root.path().join("bucket").join("wal").join(&killed));
    let etcd_client =
        shoal_cluster::Etcd::connect(std::slice::from_ref(&etcd.endpoint), Duration::from_secs(5))
            .await
            .map_err(|e| ScenarioError::Server(format!("connecting to etcd: {e}")))?;
    let kill_at = started.elapsed().as_secs_f64();
    let victim_cpu = cpu_seconds(servers[victim].1.as_ref().and_then(ChildServer::pid));
    let survivors_cpu_start: Option<f64> = servers
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != victim)
        .map(|(_, (_, s))| cpu_seconds(s.as_ref().and_then(ChildServer::pid)))
        .sum();
    let killed_wall = std::time::SystemTime::now();
    let killed_at = Instant::now();
    if let Some(s) = servers[victim].1.take() {
        s.kill9().map_err(child_err)?;
    }
    // When etcd lets the lease lapse: the member key goes with it.
    let lease_watch = {
        let name = killed.clone();
        tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_secs(120);
            while Instant::now() < deadline {
                if let Ok(members) =
                    shoal_cluster::membership::members(&etcd_client, "/shoal").await
                    && !members.iter().any(|m| m.name == name)
                {
                    return Some(killed_at.elapsed().as_secs_f64());
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            None
        })
    };
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
    let survivors_cpu_s = servers
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != victim)
        .map(|(_, (_, s))| cpu_seconds(s.as_ref().and_then(ChildServer::pid)))
        .sum::<Option<f64>>()
        .zip(survivors_cpu_start)
        .map(|(end, start)| end - start);
    let recovery_client = client_view
        .await
        .map_err(|e| ScenarioError::Server(format!("probe task: {e}")))?;
    let lease_lapsed_s = lease_watch
        .await
        .map_err(|e| ScenarioError::Server(format!("lease watch: {e}")))?;
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
    for (_, s) in servers.iter_mut() {
        if let Some(s) = s.take() {
            let _ = s.terminate(Duration::from_secs(60)).await;
        }
    }
    drop(etcd);
    // The survivors' opens of the killed server's regions, from their logs.
    let killed_epoch = killed_wall
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut opens: Vec<ReplayedOpen> = servers
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != victim)
        .flat_map(|(_, (name, _))| {
            let log = std::fs::read_to_string(root.path().join(format!("{name}.log")))
                .unwrap_or_default();
            replayed_opens(&log, name, killed_epoch)
        })
        .collect();
    opens.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    // The servers' logs go with the report (the temporary directory does not
    // outlive the run).
    for (name, _) in &servers {
        let _ = std::fs::create_dir_all(out);
        let _ = std::fs::copy(
            root.path().join(format!("{name}.log")),
            out.join(format!("failover-{name}.log")),
        );
    }
    let last_open = opens.last().map(|x| x.at_s);
    let report = FailoverReport {
        servers: 3,
        regions: o.regions,
        records,
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
        killed_memstore_bytes,
        killed_wal_bytes,
        killed_wal_objects,
        lease_lapsed_s,
        lapse_to_last_open_s: last_open.zip(lease_lapsed_s).map(|(a, b)| a - b),
        lapse_to_master_view_s: recovery_master.zip(lease_lapsed_s).map(|(a, b)| a - b),
        survivors_cpu_s,
        opens,
    };
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

/// Loads rows of `o.value_bytes` over `records` keys in scrambled order
/// (every region fills at once) until the server at `victim_http` holds
/// `o.unflushed_bytes` in its memstores, or (when a WAL bound flushes
/// regions meanwhile) six times that was written over the three servers.
async fn load_until_full(
    table: &shoal_client::Table,
    o: &FailoverOptions,
    records: u64,
    victim_http: Option<std::net::SocketAddr>,
) -> Result<(), ScenarioError> {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let Some(http) = victim_http else {
        return Err(ScenarioError::Server("no server to fill".into()));
    };
    // A stride coprime with `records` visits every key once per pass.
    let mut stride = (records as f64 * 0.618_033_988_7) as u64 | 1;
    while gcd(stride, records) != 1 {
        stride += 2;
    }
    const BATCH: u64 = 200;
    let next = Arc::new(AtomicU64::new(0));
    let full = Arc::new(AtomicBool::new(false));
    let value = bytes_of(o.value_bytes);
    let tasks: Vec<_> = (0..o.threads)
        .map(|_| {
            let (table, next, full, value) =
                (table.clone(), next.clone(), full.clone(), value.clone());
            tokio::spawn(async move {
                while !full.load(Ordering::Relaxed) {
                    let first = next.fetch_add(BATCH, Ordering::Relaxed);
                    let rows = (first..first + BATCH)
                        .map(|n| {
                            shoal_client::RowMutation::new(key(n.wrapping_mul(stride) % records))
                                .put("cf", "field0", &*value)
                        })
                        .collect();
                    for r in table.mutate_many(rows).await? {
                        r?;
                    }
                }
                Ok::<_, shoal_client::ClientError>(())
            })
        })
        .collect();
    let started = Instant::now();
    let mut last_report = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let held = status_json(http)
            .await
            .ok()
            .and_then(|v| v["memstore_bytes"].as_u64())
            .unwrap_or(0);
        if last_report.elapsed() > Duration::from_secs(10) {
            last_report = Instant::now();
            tracing::info!(
                held_mib = held >> 20,
                rows = next.load(Ordering::Relaxed),
                elapsed_s = started.elapsed().as_secs(),
                "loading until the server to kill holds its target unflushed"
            );
        }
        // A bound on the WAL (`wal.max_unflushed`) below the target flushes
        // regions as the load goes: then the servers have seen twice their
        // share of the target, and the killed one holds what the bound lets it.
        let written = next.load(Ordering::Relaxed) * o.value_bytes as u64;
        if held >= o.unflushed_bytes
            || written >= 6 * o.unflushed_bytes
            || tasks.iter().all(|t| t.is_finished())
        {
            break;
        }
    }
    full.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await
            .map_err(|e| ScenarioError::Server(format!("load task: {e}")))??;
    }
    Ok(())
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// `n` bytes that do not compress to nothing (the memstore and WAL keep
/// them as they are anyway).
fn bytes_of(n: usize) -> Arc<[u8]> {
    (0..n).map(|i| b'a' + (i * 7 % 26) as u8).collect()
}

/// Bytes and files under `dir`, recursively (0 if missing).
fn dir_size(dir: &Path) -> (u64, u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    let (mut bytes, mut files) = (0, 0);
    for e in entries.flatten() {
        match e.metadata() {
            Ok(m) if m.is_dir() => {
                let (b, f) = dir_size(&e.path());
                bytes += b;
                files += f;
            }
            Ok(m) => {
                bytes += m.len();
                files += 1;
            }
            Err(_) => {}
        }
    }
    (bytes, files)
}

/// The "region opened as its owner" lines of `log` that replayed a WAL run
/// (`replay_runs` ≥ 1), timed from `after` (seconds since the epoch).
fn replayed_opens(log: &str, server: &str, after: f64) -> Vec<ReplayedOpen> {
    let mut out = Vec::new();
    for line in log.lines() {
        let line = strip_ansi(line);
        if !line.contains("region opened as its owner") {
            continue;
        }
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{name}=")))
                .map(|v| v.trim_matches('"').to_owned())
        };
        if field("replay_runs")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            == 0
        {
            continue;
        }
        let Some(at) = line.split_whitespace().next().and_then(rfc3339_seconds) else {
            continue;
        };
        if at < after {
            continue;
        }
        out.push(ReplayedOpen {
            region: field("region").unwrap_or_default(),
            server: server.to_owned(),
            replayed: field("replayed").and_then(|v| v.parse().ok()).unwrap_or(0),
            open_ms: field("open_ms").and_then(|v| v.parse().ok()).unwrap_or(0),
            at_s: at - after,
        });
    }
    out
}

/// `line` without ANSI escape sequences (the log's colours).
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ … final byte in @..~
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) && c != '[' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Seconds since the epoch of a UTC timestamp such as
/// `2025-01-31T12:34:56.789012Z` (the log's), or `None`.
fn rfc3339_seconds(s: &str) -> Option<f64> {
    let s = s.strip_suffix('Z')?;
    let (date, time) = s.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|x| x.parse::<i64>());
    let (y, m, day) = (d.next()?.ok()?, d.next()?.ok()?, d.next()?.ok()?);
    let mut t = time.splitn(3, ':');
    let (h, min) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
    );
    let sec = t.next()?.parse::<f64>().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3_600 + min * 60) as f64 + sec)
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
         | server CPU per operation (3 servers, user + system) | {} |\n",
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
    if o.unflushed_bytes > 0 || r.lease_lapsed_s.is_some() {
        let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
        md.push_str(&format!(
            "\n| replay | value |\n|---|---|\n\
             | loaded | {} |\n\
             | killed server's memstores at the kill | {} |\n\
             | killed server's WAL run at the kill | {} in {} objects |\n\
             | kill → lease lapsed (member key gone from etcd) | {} |\n\
             | lease lapsed → last region open (survivors' logs) | {} |\n\
             | lease lapsed → every region open (master's view) | {} |\n\
             | survivors' CPU, kill → every region open | {} |\n\
             | server settings | {} |\n\n\
             | region | opened by | entries replayed | open_ms | open at (s after kill) |\n|---|---|---|---|---|\n",
            if o.unflushed_bytes > 0 {
                format!(
                    "rows of {} B over {} keys in scrambled order, nothing flushed",
                    o.value_bytes, r.records
                )
            } else {
                format!("{} rows of 100 B", r.records)
            },
            r.killed_memstore_bytes.map_or_else(|| "unknown".into(), mib),
            mib(r.killed_wal_bytes),
            r.killed_wal_objects,
            secs(r.lease_lapsed_s),
            secs(r.lapse_to_last_open_s),
            secs(r.lapse_to_master_view_s),
            r.survivors_cpu_s.map_or_else(|| "not measured".into(), |c| format!("{c:.2} s")),
            if o.server_settings.is_empty() { "defaults".into() } else { o.server_settings.join(", ") },
        ));
        for x in &r.opens {
            md.push_str(&format!(
                "| {} | {} | {} | {} | {:.2} |\n",
                x.region, x.server, x.replayed, x.open_ms, x.at_s
            ));
        }
    }
    md.push_str("\n| second | ops | errors | p99 ms | max ms |\n|---|---|---|---|---|\n");
    for w in &r.windows {
        md.push_str(&format!(
            "| {} | {} | {} | {:.1} | {:.1} |\n",
            w.t, w.ops, w.errors, w.p99_ms, w.max_ms
        ));
    }
    md
}
