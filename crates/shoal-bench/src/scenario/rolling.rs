//! `rolling-restart`: what a cluster's reads see while its servers restart
//! one by one, while the balancer moves regions, and after a kill -9, with
//! cache-aware placement on, off, and with no L2 at all.
//!
//! For each setting a fresh cluster runs: etcd and three `shoal serve`
//! processes over one bucket (a local directory with S3's latency and
//! bandwidth emulated), a pre-split table loaded and flushed, and YCSB
//! workload C (reads only, zipfian keys) run closed-loop by tasks of this
//! process through the Rust client, with an L1 per server far smaller than
//! the data, so reads lean on L2. The timeline:
//!
//! 0. **warmup**: reads until the caches are warm (the row caches take
//!    about 20 s to fill at this rate); reported, never counted as steady.
//! 1. **steady**: the baseline throughput (median of its 1 s windows).
//! 2. **rolling**: each server in turn gets SIGTERM (it drains), comes back
//!    under the same name and data directory (its L2 persists), and the
//!    cluster settles before the next.
//! 3. **rebalance**: with the balancer off, every region of one server is
//!    moved by hand to another; then the balancer is turned on and spreads
//!    them again. The regions it moves are followed on their new server:
//!    how many of their blocks came from the object store.
//! 4. **kill**: a server (not the master) is killed with SIGKILL and started
//!    again a few seconds later.
//!
//! Every 1 s window records operations, errors, p99 latency, the cluster's
//! data-block reads by tier (L1, L2, a peer's L2, the object store, from
//! each server's per-region block sources) and its object-store GETs.
//!
//! Settings: `cache-aware` (the defaults: peer reads, warm handoffs,
//! retained assignment, cache-aware placement, reads through a move),
//! `plain` (all five off: the plain balancer, a moving region answers
//! nothing from its close to its open; L2 still persists across restarts),
//! `no-l2` (plain, and no L2: what a server without a persistent cache
//! gets).

use super::child::{ChildServer, status_json};
use super::errors::{child_err, io};
use super::etcd::{EtcdChild, cpu_seconds, free_port};
use super::svg::{Line, chart};
use super::timeline::{Tick, Timeline};
use super::{ScenarioError, write_report};
use crate::generators::ScrambledZipfian;
use serde::Serialize;
use shoal_client::{Admin, Client, ClientOptions, Get, RowMutation};
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The servers of each cluster.
const SERVERS: usize = 3;

/// A cluster setting compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Peer reads, warm handoffs, retained assignment, cache-aware placement.
    CacheAware,
    /// All of those off: the plain balancer (L2 persists across restarts).
    Plain,
    /// Plain, and no L2.
    NoL2,
}

impl Mode {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::CacheAware => "cache-aware",
            Mode::Plain => "plain",
            Mode::NoL2 => "no-l2",
        }
    }

    fn color(self) -> &'static str {
        match self {
            Mode::CacheAware => "#27ae60",
            Mode::Plain => "#2980b9",
            Mode::NoL2 => "#c0392b",
        }
    }
}

/// What the scenario runs.
#[derive(Debug, Clone)]
pub struct RollingOptions {
    /// Rows loaded.
    pub records: u64,
    /// Bytes per row value.
    pub value_bytes: usize,
    /// Regions of the table (pre-split evenly).
    pub regions: usize,
    /// Reader tasks: closed-loop, or paced when `rate` is set.
    pub threads: usize,
    /// Reads per second offered by all readers together, YCSB `-target`
    /// style (each task keeps its own schedule and catches up after a
    /// slow read); None: closed loop, as fast as the cluster answers.
    pub rate: Option<f64>,
    /// The servers' `cluster.max_moving_regions` (0: no limit).
    pub max_moving: usize,
    /// Each server's L1 data pool, e.g. "8MiB".
    pub l1_data: String,
    /// Each server's L2 (when the setting has one), e.g. "256MiB".
    pub l2_capacity: String,
    /// Reads before the steady phase, while the caches warm (not counted
    /// in steady state).
    pub warmup: Duration,
    /// The steady phase.
    pub steady: Duration,
    /// Time between one server settling after its restart and the next
    /// restart.
    pub gap: Duration,
    /// The rebalance phase (the balancer's moves are followed this long).
    pub rebalance: Duration,
    /// From the kill -9 to the end.
    pub after_kill: Duration,
    /// How long the killed server stays down.
    pub down: Duration,
    /// The cluster's `lease_ttl`.
    pub lease_ttl: Duration,
    /// Emulated object-store first-byte latency.
    pub latency: Duration,
    /// The settings compared, in order.
    pub modes: Vec<Mode>,
    /// The `shoal` binary run as `shoal serve`.
    pub shoal_bin: PathBuf,
}

/// One 1 s window.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Window {
    /// Seconds since the steady phase started (window start).
    pub t: u64,
    /// The phase it falls in.
    pub phase: &'static str,
    /// Reads answered.
    pub ops: u64,
    /// Reads that failed at the caller.
    pub errors: u64,
    /// 99th percentile latency, ms.
    pub p99_ms: f64,
    /// Data blocks reads found in L1, cluster-wide.
    pub reads_l1: u64,
    /// … in the serving server's L2.
    pub reads_l2: u64,
    /// … in a former owner's L2.
    pub reads_peer: u64,
    /// … only in the object store.
    pub reads_object_store: u64,
    /// Data blocks prefetches copied from a peer.
    pub prefetch_peer: u64,
    /// Data blocks prefetches copied from the object store.
    pub prefetch_object_store: u64,
    /// Object-store GETs (reads, prefetches and file tails), cluster-wide.
    pub object_store_gets: u64,
    /// Block reads not sent to the object store, of all block reads.
    pub hit_ratio: Option<f64>,
}

/// A region the balancer moved in the rebalance phase, on its new server.
#[derive(Debug, Clone, Serialize)]
pub struct BalancerMove {
    /// Region id.
    pub region: String,
    /// From.
    pub from: String,
    /// To.
    pub to: String,
    /// When its new server first served it, s.
    pub at_s: f64,
    /// Data blocks its new server read or prefetched for it from the move
    /// to the phase's end (a minute in a full run).
    pub blocks: u64,
    /// Of those, from the object store.
    pub object_store_blocks: u64,
    /// Of those, from the former owner's L2.
    pub peer_blocks: u64,
    /// Object-store GETs for them.
    pub object_store_gets: u64,
}

/// Something the scenario did, for the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// Seconds since the steady phase started.
    pub t: f64,
    /// What.
    pub what: String,
}

/// One setting's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ModeReport {
    /// The setting.
    pub mode: Mode,
    /// Median reads per second of the steady phase.
    pub steady_ops_per_s: f64,
    /// Read hit ratio of the steady phase (blocks not from the object store).
    pub steady_hit_ratio: Option<f64>,
    /// Lowest window of the steady phase, as a fraction of its own median:
    /// how far this machine's noise alone takes a window, with nothing
    /// moving (the floor under the rolling restart's figure).
    pub steady_min_ratio: Option<f64>,
    /// Windows of the steady phase under 90 % of its median.
    pub steady_windows_below_90pct: usize,
    /// Windows in the steady phase.
    pub steady_windows: usize,
    /// Lowest window of the rolling restart, as a fraction of steady.
    pub rolling_min_ratio: Option<f64>,
    /// Windows of the rolling restart under 90 % of steady.
    pub rolling_windows_below_90pct: usize,
    /// Windows in the rolling restart.
    pub rolling_windows: usize,
    /// Object-store GETs during the rolling restart.
    pub rolling_object_store_gets: u64,
    /// The balancer's moves in the rebalance phase.
    pub balancer_moves: Vec<BalancerMove>,
    /// Their blocks from the object store, of all their blocks, in their
    /// first minute on the new server (or the phase's end).
    pub balancer_moved_object_store_fraction: Option<f64>,
    /// Lowest window of the rebalance phase, as a fraction of steady.
    pub rebalance_min_ratio: Option<f64>,
    /// The killed server.
    pub killed: String,
    /// From the kill to the start of the first window with block reads
    /// from which on every window's read hit ratio is ≥ 95 %, s (`None`:
    /// never within the run). Includes the failover itself: until the lease
    /// of the killed server lapses its regions answer nothing.
    pub hit_ratio_95_after_kill_s: Option<f64>,
    /// Lowest window after the kill, as a fraction of steady.
    pub kill_min_ratio: Option<f64>,
    /// Reads answered in all.
    pub ops: u64,
    /// Reads failed at the caller in all.
    pub errors: u64,
    /// Server CPU (user + system, every process of the three servers) per
    /// read, µs.
    pub server_cpu_us_per_op: Option<f64>,
    /// What happened when.
    pub events: Vec<Event>,
    /// Per-second figures.
    pub windows: Vec<Window>,
    /// Per-100 ms figures: reads and each process's CPU.
    pub timeline: Vec<Tick>,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct RollingReport {
    /// Servers per cluster.
    pub servers: usize,
    /// Rows.
    pub records: u64,
    /// Bytes per value.
    pub value_bytes: usize,
    /// Table regions.
    pub regions: usize,
    /// Reader tasks.
    pub threads: usize,
    /// Reads per second offered (None: closed loop).
    pub rate: Option<f64>,
    /// L1 data pool per server.
    pub l1_data: String,
    /// L2 per server (settings with one).
    pub l2_capacity: String,
    /// Emulated first-byte latency, ms.
    pub latency_ms: u64,
    /// Seconds of warm-up before the steady phase (not counted).
    pub warmup_s: f64,
    /// One entry per setting.
    pub modes: Vec<ModeReport>,
}

fn key(n: u64) -> String {
    format!("user{n:010}")
}

/// One server of the cluster: its fixed addresses and files, and the
/// process while it runs.
struct Member {
    name: String,
    grpc: SocketAddr,
    http: SocketAddr,
    config: PathBuf,
    log: PathBuf,
    process: Option<ChildServer>,
    /// Bumped at each start: block-source counters restart from zero.
    instance: u64,
    /// CPU seconds of its former processes.
    cpu_done: f64,
}

impl Member {
    async fn start(&mut self, bin: &Path) -> Result<(), ScenarioError> {
        let s = ChildServer::start(bin, &self.config, &self.log)
            .await
            .map_err(child_err)?;
        self.process = Some(s);
        self.instance += 1;
        Ok(())
    }

    fn cpu_now(&self) -> f64 {
        self.cpu_done
            + self
                .process
                .as_ref()
                .and_then(|p| cpu_seconds(p.pid()))
                .unwrap_or(0.0)
    }

    async fn stop(&mut self) -> Result<(), ScenarioError> {
        if let Some(p) = self.process.take() {
            self.cpu_done += cpu_seconds(p.pid()).unwrap_or(0.0);
            p.terminate(Duration::from_secs(90))
                .await
                .map_err(child_err)?;
        }
        Ok(())
    }

    fn kill9(&mut self) -> Result<(), ScenarioError> {
        if let Some(p) = self.process.take() {
            self.cpu_done += cpu_seconds(p.pid()).unwrap_or(0.0);
            p.kill9().map_err(child_err)?;
        }
        Ok(())
    }
}

fn config(
    root: &Path,
    etcd: &str,
    m: (&str, SocketAddr, SocketAddr),
    o: &RollingOptions,
    mode: Mode,
) -> String {
    let p = |p: PathBuf| {
        p.display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    };
    let (name, grpc, http) = m;
    let l2 = if mode == Mode::NoL2 {
        "0"
    } else {
        o.l2_capacity.as_str()
    };
    let cluster_extra = match mode {
        Mode::CacheAware => format!("max_moving_regions = {}\n", o.max_moving),
        Mode::Plain | Mode::NoL2 => {
            "peer_reads = false\nretain = \"0s\"\nhandoff_warmup = \"0s\"\ncache_aware = false\n\
             move_reads = \"0s\"\n"
                .to_string()
        }
    };
    format!(
        "[thrift]\naddr = \"127.0.0.1:0\"\n\n[rest]\naddr = \"127.0.0.1:0\"\n\n[hbase_rpc]\naddr = \"127.0.0.1:0\"\n\n\
         [server]\ngrpc_addr = \"{grpc}\"\nhttp_addr = \"{http}\"\ndata_dir = \"{}\"\n\n\
         [object_store]\nurl = \"file://{}\"\n\n\
         [object_store.emulate]\nlatency = {}\njitter = {}\nbandwidth_bytes_per_sec = 90000000\n\n\
         [wal]\nbackend = \"object\"\n\n\
         [cache]\nl1_data = \"{}\"\nl2_capacity = \"{l2}\"\n\n\
         [cluster]\netcd = [\"{etcd}\"]\nname = \"{name}\"\nlease_ttl = \"{}s\"\n{cluster_extra}",
        p(root.join(format!("{name}-data"))),
        p(root.join("bucket")),
        o.latency.as_millis(),
        (o.latency / 3).as_millis(),
        o.l1_data,
        o.lease_ttl.as_secs().max(1),
    )
}

/// Reads by window, from the reader tasks.
#[derive(Default)]
struct Latencies {
    windows: Vec<(Vec<f64>, u64)>,
}

impl Latencies {
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

/// A region's block sources as last seen on one server process.
#[derive(Debug, Clone, Copy, Default)]
struct Sources {
    l1: u64,
    l2: u64,
    peer: u64,
    store: u64,
    pf_peer: u64,
    pf_store: u64,
    gets: u64,
}

impl Sources {
    fn of(v: &serde_json::Value) -> Sources {
        let n = |k: &str| v[k].as_u64().unwrap_or(0);
        Sources {
            l1: n("l1"),
            l2: n("l2"),
            peer: n("peer"),
            store: n("object_store"),
            pf_peer: n("prefetch_peer"),
            pf_store: n("prefetch_object_store"),
            gets: n("object_store_gets"),
        }
    }

    /// `self - before`, each counter (a counter that went down restarted).
    fn since(&self, before: &Sources) -> Sources {
        let d = |a: u64, b: u64| if a >= b { a - b } else { a };
        Sources {
            l1: d(self.l1, before.l1),
            l2: d(self.l2, before.l2),
            peer: d(self.peer, before.peer),
            store: d(self.store, before.store),
            pf_peer: d(self.pf_peer, before.pf_peer),
            pf_store: d(self.pf_store, before.pf_store),
            gets: d(self.gets, before.gets),
        }
    }

    fn add(&mut self, o: &Sources) {
        self.l1 += o.l1;
        self.l2 += o.l2;
        self.peer += o.peer;
        self.store += o.store;
        self.pf_peer += o.pf_peer;
        self.pf_store += o.pf_store;
        self.gets += o.gets;
    }
}

/// What the sampler gathers each second.
#[derive(Default)]
struct Samples {
    /// Per window: summed block-source deltas, and object-store GETs.
    windows: Vec<(Sources, u64)>,
    /// (server, instance, region) → last seen counters.
    last: HashMap<(String, u64, String), Sources>,
    /// (server, instance) → last seen object-store GETs.
    last_gets: HashMap<(String, u64), u64>,
    /// region → (server, instance) serving it, as last sampled.
    layout: BTreeMap<String, (String, u64)>,
}

impl Samples {
    fn window(&mut self, i: usize) -> &mut (Sources, u64) {
        if self.windows.len() <= i {
            self.windows.resize_with(i + 1, Default::default);
        }
        &mut self.windows[i]
    }
}

/// Samples every live server's `/api/status` once.
async fn sample(members: &[(String, u64, SocketAddr)], samples: &Mutex<Samples>, started: Instant) {
    let polled =
        futures::future::join_all(members.iter().map(|(_, _, http)| status_json(*http))).await;
    // A sample taken just after second i+1 covers the window [i, i+1).
    let i = (started.elapsed().as_secs_f64().max(0.0) as usize).saturating_sub(1);
    let mut s = samples.lock().unwrap_or_else(|e| e.into_inner());
    let mut layout = BTreeMap::new();
    for ((name, instance, _), v) in members.iter().zip(polled) {
        let Ok(v) = v else { continue };
        let gets = v["cache"]["object_store_gets"].as_u64().unwrap_or(0);
        let before = s
            .last_gets
            .insert((name.clone(), *instance), gets)
            .unwrap_or(0);
        s.window(i).1 += gets.saturating_sub(before);
        for r in v["regions"].as_array().into_iter().flatten() {
            let Some(id) = r["id"].as_str() else { continue };
            let now = Sources::of(&r["block_sources"]);
            let k = (name.clone(), *instance, id.to_string());
            let before = s.last.insert(k, now).unwrap_or_default();
            let d = now.since(&before);
            s.window(i).0.add(&d);
            layout.insert(id.to_string(), (name.clone(), *instance));
        }
    }
    s.layout = layout;
}

/// Which server serves each region (from the master's Status).
async fn layout(admin: &Admin) -> Option<BTreeMap<String, String>> {
    let s = admin.status().await.ok()?;
    Some(
        s.servers
            .iter()
            .flat_map(|srv| srv.region_ids.iter().map(|r| (r.clone(), srv.name.clone())))
            .collect(),
    )
}

/// Waits until `servers` serve every one of `regions` regions.
async fn settle(admin: &Admin, servers: usize, regions: usize, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(s) = admin.status().await {
            let open: u32 = s.servers.iter().map(|x| x.regions).sum();
            if s.servers.len() == servers && open as usize == regions {
                return true;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// Runs the scenario; reports go to `out` as `rolling-restart.{json,md,svg}`.
pub async fn run(o: &RollingOptions, out: &Path) -> Result<RollingReport, ScenarioError> {
    let mut modes = Vec::new();
    for &mode in &o.modes {
        tracing::info!(mode = mode.name(), "rolling-restart: starting a cluster");
        modes.push(run_mode(o, mode, out).await?);
    }
    let report = RollingReport {
        servers: SERVERS,
        records: o.records,
        value_bytes: o.value_bytes,
        regions: o.regions,
        threads: o.threads,
        rate: o.rate,
        l1_data: o.l1_data.clone(),
        l2_capacity: o.l2_capacity.clone(),
        latency_ms: o.latency.as_millis() as u64,
        warmup_s: o.warmup.as_secs_f64(),
        modes,
    };
    let lines: Vec<Line> = report
        .modes
        .iter()
        .map(|m| Line {
            name: format!("{} (% of its steady state)", m.mode.name()),
            color: m.mode.color(),
            points: m
                .windows
                .iter()
                .map(|w| {
                    (
                        w.t as f64,
                        w.ops as f64 * 100.0 / m.steady_ops_per_s.max(1.0),
                    )
                })
                .collect(),
        })
        .collect();
    let markers: Vec<f64> = report
        .modes
        .first()
        .map(|m| m.events.iter().map(|e| e.t).collect())
        .unwrap_or_default();
    let svg = chart(
        "rolling-restart: reads per second, % of steady state (markers: the first setting's events)",
        "seconds",
        "% of steady",
        &lines,
        &markers,
    );
    write_report(out, "rolling-restart", &report, &markdown(&report), &svg)?;
    Ok(report)
}

async fn run_mode(o: &RollingOptions, mode: Mode, out: &Path) -> Result<ModeReport, ScenarioError> {
    let root = tempfile::tempdir().map_err(|e| ScenarioError::Server(e.to_string()))?;
    let bucket = root.path().join("bucket");
    std::fs::create_dir_all(&bucket).map_err(io(&bucket))?;
    let etcd = EtcdChild::start(root.path()).await?;
    let mut members = Vec::new();
    for i in 1..=SERVERS {
        let name = format!("s{i}");
        let grpc = SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let http = SocketAddr::from(([127, 0, 0, 1], free_port()?));
        let cfg = root.path().join(format!("{name}.toml"));
        std::fs::write(
            &cfg,
            config(root.path(), &etcd.endpoint, (&name, grpc, http), o, mode),
        )
        .map_err(io(&cfg))?;
        let mut m = Member {
            log: root.path().join(format!("{name}.log")),
            name,
            grpc,
            http,
            config: cfg,
            process: None,
            instance: 0,
            cpu_done: 0.0,
        };
        m.start(&o.shoal_bin).await?;
        members.push(m);
    }
    let result = drive(o, mode, &mut members).await;
    for m in members.iter_mut() {
        let _ = m.stop().await;
    }
    drop(etcd);
    // The servers' logs go beside the report (moves, handoffs, timings).
    std::fs::create_dir_all(out).map_err(io(out))?;
    for m in members.iter() {
        let to = out.join(format!("rolling-restart-{}-{}.log", mode.name(), m.name));
        std::fs::copy(&m.log, &to).map_err(io(&to))?;
    }
    result
}

/// Everything between the cluster starting and stopping.
async fn drive(
    o: &RollingOptions,
    mode: Mode,
    members: &mut [Member],
) -> Result<ModeReport, ScenarioError> {
    let addrs: Vec<String> = members.iter().map(|m| m.grpc.to_string()).collect();
    let client = Client::connect_with(
        &addrs.join(","),
        ClientOptions {
            retry_deadline: Duration::from_secs(60),
            ..ClientOptions::default()
        },
    )
    .await?;
    let admin = client.admin();
    let splits: Vec<Vec<u8>> = (1..o.regions as u64)
        .map(|i| key(o.records * i / o.regions as u64).into_bytes())
        .collect();
    admin
        .create_table("usertable", vec![Admin::family("cf")], splits)
        .await?;
    if !settle(&admin, SERVERS, o.regions, Duration::from_secs(60)).await {
        return Err(ScenarioError::Server(
            "the table's regions did not all open within 60 s".into(),
        ));
    }
    let table = client.table("usertable");
    // Load in batches, then flush: every block is in a file (and, where
    // there is one, in its writer's L2).
    let value = vec![b'v'; o.value_bytes];
    let mut n = 0u64;
    while n < o.records {
        let end = (n + 500).min(o.records);
        let rows = (n..end)
            .map(|k| RowMutation::new(key(k)).put("cf", "field0", value.clone()))
            .collect();
        for r in table.mutate_many(rows).await? {
            r?;
        }
        n = end;
    }
    // A flush reaches the regions of the server it is sent to: send it to
    // each.
    for m in members.iter() {
        Client::connect(&m.grpc.to_string())
            .await?
            .admin()
            .flush("usertable")
            .await?;
    }

    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let lat = Arc::new(Mutex::new(Latencies::default()));
    let zipf = Arc::new(ScrambledZipfian::new(0, o.records - 1));
    let timeline = Arc::new(Timeline::default());
    let (pace, threads) = (o.rate.filter(|r| *r > 0.0), o.threads);
    let readers: Vec<_> = (0..o.threads)
        .map(|t| {
            let (table, lat, zipf, stop) = (table.clone(), lat.clone(), zipf.clone(), stop.clone());
            let timeline = timeline.clone();
            let every = pace.map(|r| Duration::from_secs_f64(threads as f64 / r));
            tokio::spawn(async move {
                use rand::SeedableRng;
                let mut rng = rand::rngs::StdRng::seed_from_u64(t as u64 + 7);
                let mut due = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    if let Some(every) = every {
                        // Sleep only when ahead by a timer tick: behind, the
                        // task catches up read by read.
                        due += every;
                        if due > Instant::now() + Duration::from_millis(1) {
                            tokio::time::sleep_until(due.into()).await;
                        }
                    }
                    let k = zipf.next(&mut rng);
                    let at = Instant::now();
                    let r = table.get(Get::new(key(k))).await;
                    let ms = at.elapsed().as_secs_f64() * 1e3;
                    timeline.count(r.is_ok());
                    lat.lock().unwrap_or_else(|e| e.into_inner()).add(
                        at.duration_since(started).as_secs_f64(),
                        r.is_ok().then_some(ms),
                    );
                }
            })
        })
        .collect();
    let samples = Arc::new(Mutex::new(Samples::default()));
    let live: Arc<Mutex<Vec<(String, u64, SocketAddr)>>> = Arc::new(Mutex::new(
        members
            .iter()
            .map(|m| (m.name.clone(), m.instance, m.http))
            .collect(),
    ));
    let sampler = {
        let (samples, live, stop) = (samples.clone(), live.clone(), stop.clone());
        tokio::spawn(async move {
            let mut next = started + Duration::from_secs(1);
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep_until(next.into()).await;
                next += Duration::from_secs(1);
                let members = live.lock().unwrap_or_else(|e| e.into_inner()).clone();
                sample(&members, &samples, started).await;
            }
        })
    };
    let set_live = |members: &[Member]| {
        timeline.set_pids(
            members
                .iter()
                .map(|m| (m.name.clone(), m.process.as_ref().and_then(|p| p.pid())))
                .collect(),
        );
        *live.lock().unwrap_or_else(|e| e.into_inner()) = members
            .iter()
            .filter(|m| m.process.is_some())
            .map(|m| (m.name.clone(), m.instance, m.http))
            .collect();
    };
    set_live(members);
    // After the pids are known: its first reading is every server's base.
    let ticker = timeline.spawn_sampler(started, stop.clone());
    let cpu_start: f64 = members.iter().map(Member::cpu_now).sum();
    let mut events = Vec::new();
    let now = || started.elapsed().as_secs_f64();
    let mut phases: Vec<(&'static str, f64)> = vec![("warmup", 0.0)];

    // 0. Warm-up: caches fill; not steady state.
    tokio::time::sleep(o.warmup).await;

    // 1. Steady.
    phases.push(("steady", now()));
    tokio::time::sleep(o.steady).await;

    // 2. Rolling restart.
    phases.push(("rolling", now()));
    for i in 0..members.len() {
        events.push(Event {
            t: now(),
            what: format!("SIGTERM {}", members[i].name),
        });
        members[i].stop().await?;
        set_live(members);
        events.push(Event {
            t: now(),
            what: format!("{} exited (drained)", members[i].name),
        });
        members[i].start(&o.shoal_bin).await?;
        set_live(members);
        events.push(Event {
            t: now(),
            what: format!("{} serving again", members[i].name),
        });
        let settled = settle(&admin, SERVERS, o.regions, Duration::from_secs(60)).await;
        events.push(Event {
            t: now(),
            what: if settled {
                "every region open on three servers".into()
            } else {
                "not settled within 60 s".into()
            },
        });
        tokio::time::sleep(o.gap).await;
    }

    // 3. Forced rebalance: one server's regions moved by hand to another,
    // then the balancer spreads them again.
    phases.push(("rebalance", now()));
    admin.balance_switch(false).await?;
    let before = layout(&admin).await.unwrap_or_default();
    let (from, to) = (members[0].name.clone(), members[1].name.clone());
    let mut moved = 0;
    for (region, owner) in &before {
        if *owner == from {
            admin.move_region(region, &to).await?;
            moved += 1;
        }
    }
    events.push(Event {
        t: now(),
        what: format!("{moved} regions of {from} moved by hand to {to} (balancer off)"),
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Some(l) = layout(&admin).await
            && l.len() == o.regions
            && !l.values().any(|s| *s == from)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let placed = layout(&admin).await.unwrap_or_default();
    // Counters a region left on a server it was on before: subtracted.
    let baseline = samples
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .last
        .clone();
    admin.balance_switch(true).await?;
    let balancer_on = now();
    events.push(Event {
        t: balancer_on,
        what: "balancer on".into(),
    });
    // Follow the balancer's moves: (region → (from, to, first seen at)).
    let mut followed: BTreeMap<String, (String, String, f64)> = BTreeMap::new();
    let phase_end = Instant::now() + o.rebalance;
    while Instant::now() < phase_end {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let Some(l) = layout(&admin).await else {
            continue;
        };
        for (region, owner) in &l {
            if let Some(was) = placed.get(region)
                && was != owner
                && !followed.contains_key(region)
            {
                followed.insert(region.clone(), (was.clone(), owner.clone(), now()));
            }
        }
    }
    // Each moved region's blocks on its new server, in its first minute
    // (the phase ends sooner in a short run).
    let balancer_moves: Vec<BalancerMove> = {
        let s = samples.lock().unwrap_or_else(|e| e.into_inner());
        followed
            .iter()
            .map(|(region, (from, to, at))| {
                let got = s
                    .last
                    .iter()
                    .filter(|((server, _, r), _)| server == to && r == region)
                    .fold(Sources::default(), |mut acc, (k, v)| {
                        acc.add(&v.since(&baseline.get(k).copied().unwrap_or_default()));
                        acc
                    });
                BalancerMove {
                    region: region.clone(),
                    from: from.clone(),
                    to: to.clone(),
                    at_s: *at,
                    blocks: got.l1 + got.l2 + got.peer + got.store + got.pf_peer + got.pf_store,
                    object_store_blocks: got.store + got.pf_store,
                    peer_blocks: got.peer + got.pf_peer,
                    object_store_gets: got.gets,
                }
            })
            .collect()
    };

    // 4. kill -9 a server that is not the master, start it again later.
    phases.push(("kill", now()));
    let master = admin.status().await.map(|s| s.master).unwrap_or_default();
    let victim = members.iter().position(|m| m.name != master).unwrap_or(0);
    let killed = members[victim].name.clone();
    let kill_at = now();
    events.push(Event {
        t: kill_at,
        what: format!("kill -9 {killed}"),
    });
    members[victim].kill9()?;
    set_live(members);
    tokio::time::sleep(o.down).await;
    members[victim].start(&o.shoal_bin).await?;
    set_live(members);
    events.push(Event {
        t: now(),
        what: format!("{killed} started again"),
    });
    let end = started + Duration::from_secs_f64(kill_at) + o.after_kill;
    tokio::time::sleep_until(end.into()).await;
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.await
            .map_err(|e| ScenarioError::Server(format!("reader task: {e}")))?;
    }
    let _ = sampler.await;
    let _ = ticker.await;
    let cpu: f64 = members.iter().map(Member::cpu_now).sum::<f64>() - cpu_start;

    // Windows.
    let lat = std::mem::take(&mut *lat.lock().unwrap_or_else(|e| e.into_inner()));
    let samples = std::mem::take(&mut *samples.lock().unwrap_or_else(|e| e.into_inner()));
    let last = (started.elapsed().as_secs_f64() as usize).min(lat.windows.len());
    // A window belongs to the last phase begun before its end: the window
    // in which a phase's first action fell (a SIGTERM a few µs after a
    // window boundary) counts in that phase, not in the one before.
    let phase_of = |t: f64| {
        phases
            .iter()
            .rev()
            .find(|(_, at)| t + 1.0 > *at)
            .map_or("warmup", |(p, _)| *p)
    };
    let mut windows = Vec::new();
    let (mut ops, mut errors) = (0u64, 0u64);
    for i in 0..last {
        let (mut l, errs) = lat.windows.get(i).cloned().unwrap_or_default();
        l.sort_by(f64::total_cmp);
        let p99 = l
            .get(((l.len() as f64 * 0.99).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0);
        let (src, gets) = samples.windows.get(i).copied().unwrap_or_default();
        let reads = src.l1 + src.l2 + src.peer + src.store;
        ops += l.len() as u64;
        errors += errs;
        windows.push(Window {
            t: i as u64,
            phase: phase_of(i as f64),
            ops: l.len() as u64,
            errors: errs,
            p99_ms: p99,
            reads_l1: src.l1,
            reads_l2: src.l2,
            reads_peer: src.peer,
            reads_object_store: src.store,
            prefetch_peer: src.pf_peer,
            prefetch_object_store: src.pf_store,
            object_store_gets: gets,
            hit_ratio: (reads > 0).then(|| (reads - src.store) as f64 / reads as f64),
        });
    }
    let mut report = summarize(SummaryInput {
        mode,
        windows,
        events,
        killed,
        kill_at,
        balancer_moves,
        ops,
        errors,
        cpu,
    });
    report.timeline = timeline.take();
    Ok(report)
}

struct SummaryInput {
    mode: Mode,
    windows: Vec<Window>,
    events: Vec<Event>,
    killed: String,
    kill_at: f64,
    balancer_moves: Vec<BalancerMove>,
    ops: u64,
    errors: u64,
    cpu: f64,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// The goals' figures from the windows. The first and last window of the
/// run (partly empty) are left out of minimums.
fn summarize(i: SummaryInput) -> ModeReport {
    let SummaryInput {
        mode,
        windows,
        events,
        killed,
        kill_at,
        balancer_moves,
        ops,
        errors,
        cpu,
    } = i;
    let full = |w: &&Window| w.t > 0 && (w.t as usize) + 1 < windows.len();
    let in_phase = |p: &'static str| {
        windows
            .iter()
            .filter(full)
            .filter(move |w| w.phase == p)
            .collect::<Vec<&Window>>()
    };
    let steady = in_phase("steady");
    let steady_ops = median(steady.iter().map(|w| w.ops as f64).collect()).unwrap_or(0.0);
    let ratio = |ws: &[&Window]| {
        ws.iter()
            .map(|w| w.ops as f64 / steady_ops.max(1.0))
            .min_by(f64::total_cmp)
    };
    let below_90 = |ws: &[&Window]| {
        ws.iter()
            .filter(|w| (w.ops as f64) < 0.9 * steady_ops)
            .count()
    };
    let hits = |ws: &[&Window]| {
        let (reads, store) = ws.iter().fold((0u64, 0u64), |(r, s), w| {
            (
                r + w.reads_l1 + w.reads_l2 + w.reads_peer + w.reads_object_store,
                s + w.reads_object_store,
            )
        });
        (reads > 0).then(|| (reads - store) as f64 / reads as f64)
    };
    let rolling = in_phase("rolling");
    let rebalance = in_phase("rebalance");
    let kill = in_phase("kill");
    // From the kill: the first window from which every later window's hit
    // ratio is at least 95 %.
    let after: Vec<&Window> = windows
        .iter()
        .filter(|w| w.t as f64 + 1.0 > kill_at)
        .collect();
    let mut back = None;
    for (k, w) in after.iter().enumerate() {
        // A window with no block reads (every reader waiting on the dead
        // server's regions) is not "back".
        if w.hit_ratio.is_some()
            && after[k..]
                .iter()
                .all(|x| x.hit_ratio.is_none_or(|h| h >= 0.95))
        {
            back = Some((w.t as f64 - kill_at).max(0.0));
            break;
        }
    }
    let (blocks, store) = balancer_moves.iter().fold((0u64, 0u64), |(b, s), m| {
        (b + m.blocks, s + m.object_store_blocks)
    });
    ModeReport {
        mode,
        steady_ops_per_s: steady_ops,
        steady_hit_ratio: hits(&steady),
        steady_min_ratio: ratio(&steady),
        steady_windows_below_90pct: below_90(&steady),
        steady_windows: steady.len(),
        rolling_min_ratio: ratio(&rolling),
        rolling_windows_below_90pct: below_90(&rolling),
        rolling_windows: rolling.len(),
        rolling_object_store_gets: rolling.iter().map(|w| w.object_store_gets).sum(),
        balancer_moved_object_store_fraction: (blocks > 0).then(|| store as f64 / blocks as f64),
        balancer_moves,
        rebalance_min_ratio: ratio(&rebalance),
        killed,
        hit_ratio_95_after_kill_s: back,
        kill_min_ratio: ratio(&kill),
        ops,
        errors,
        server_cpu_us_per_op: (ops > 0 && cpu > 0.0).then(|| cpu * 1e6 / ops as f64),
        events,
        windows,
        timeline: Vec::new(),
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{:.0} %", v * 100.0))
}

fn markdown(r: &RollingReport) -> String {
    let mut md = format!(
        "# rolling-restart\n\n{} `shoal serve` processes and etcd per setting, one bucket (S3 emulated: {} ms first byte, 90 MB/s), \
         a table of {} regions holding {} rows of {} B, L1 data {} and L2 {} per server. YCSB C (zipfian reads) from {} tasks, {}. \
         Phases: warm-up ({:.0} s, not counted); steady; a rolling restart (SIGTERM, drain, start again, settle, next); a forced rebalance (one server's regions moved by hand to another with the balancer off, then the balancer on); kill -9 of a server that is not the master, started again later.\n\n\
         | figure | {} |\n|---|{}\n",
        r.servers,
        r.latency_ms,
        r.regions,
        r.records,
        r.value_bytes,
        r.l1_data,
        r.l2_capacity,
        r.threads,
        r.rate.map_or_else(
            || "closed-loop (as fast as the cluster answers)".to_string(),
            |r| format!("paced at {r:.0} reads/s in all (each task catches up after a slow read)")
        ),
        r.warmup_s,
        r.modes
            .iter()
            .map(|m| m.mode.name())
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(r.modes.len()),
    );
    let row = |label: &str, f: &dyn Fn(&ModeReport) -> String| {
        format!(
            "| {label} | {} |\n",
            r.modes.iter().map(f).collect::<Vec<_>>().join(" | ")
        )
    };
    md += &row("steady reads/s (median window)", &|m| {
        format!("{:.0}", m.steady_ops_per_s)
    });
    md += &row(
        "steady read hit ratio (blocks not from the object store)",
        &|m| pct(m.steady_hit_ratio),
    );
    md += &row(
        "steady: lowest window, % of its median (the machine's noise, nothing moving)",
        &|m| pct(m.steady_min_ratio),
    );
    md += &row("steady: windows under 90 % of its median", &|m| {
        format!("{} of {}", m.steady_windows_below_90pct, m.steady_windows)
    });
    md += &row(
        "rolling restart: lowest window, % of steady (goal ≥ 90 %)",
        &|m| pct(m.rolling_min_ratio),
    );
    md += &row("rolling restart: windows under 90 % of steady", &|m| {
        format!("{} of {}", m.rolling_windows_below_90pct, m.rolling_windows)
    });
    md += &row("rolling restart: object-store GETs", &|m| {
        m.rolling_object_store_gets.to_string()
    });
    md += &row("rebalance: regions the balancer moved", &|m| {
        m.balancer_moves.len().to_string()
    });
    md += &row(
        "rebalance: their blocks from the object store on the new server (goal ≤ 5 %)",
        &|m| pct(m.balancer_moved_object_store_fraction),
    );
    md += &row("rebalance: lowest window, % of steady", &|m| {
        pct(m.rebalance_min_ratio)
    });
    md += &row(
        "kill -9: read hit ratio ≥ 95 % for good after (goal ≤ 10 s)",
        &|m| {
            m.hit_ratio_95_after_kill_s
                .map_or_else(|| "not within the run".into(), |s| format!("{s:.0} s"))
        },
    );
    md += &row("kill -9: lowest window, % of steady", &|m| {
        pct(m.kill_min_ratio)
    });
    md += &row("reads answered / failed", &|m| {
        format!("{} / {}", m.ops, m.errors)
    });
    md += &row("server CPU per read (3 servers)", &|m| {
        m.server_cpu_us_per_op
            .map_or_else(|| "–".into(), |us| format!("{us:.0} µs"))
    });
    for m in &r.modes {
        md += &format!("\n## {}\n\n", m.mode.name());
        for e in &m.events {
            md += &format!("- {:.1} s: {}\n", e.t, e.what);
        }
        for e in m.events.iter().filter(|e| e.what.starts_with("SIGTERM")) {
            let table = super::timeline::markdown(&m.timeline, e.t - 0.5, e.t + 2.5);
            if !table.is_empty() {
                md += &format!(
                    "\n{} at 100 ms (CPU as a share of one core):\n\n{table}",
                    e.what
                );
            }
        }
        if !m.balancer_moves.is_empty() {
            md += "\n| balancer move | from → to | blocks | from the object store | from the peer | GETs |\n|---|---|---|---|---|---|\n";
            for b in &m.balancer_moves {
                md += &format!(
                    "| `{}` | {} → {} | {} | {} | {} | {} |\n",
                    b.region,
                    b.from,
                    b.to,
                    b.blocks,
                    b.object_store_blocks,
                    b.peer_blocks,
                    b.object_store_gets
                );
            }
        }
        md += "\n| s | phase | reads | errors | p99 ms | L1 | L2 | peer | object store | prefetched peer / store | GETs | hit ratio |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
        for w in &m.windows {
            md += &format!(
                "| {} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} / {} | {} | {} |\n",
                w.t,
                w.phase,
                w.ops,
                w.errors,
                w.p99_ms,
                w.reads_l1,
                w.reads_l2,
                w.reads_peer,
                w.reads_object_store,
                w.prefetch_peer,
                w.prefetch_object_store,
                w.object_store_gets,
                pct(w.hit_ratio)
            );
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(t: u64, phase: &'static str, ops: u64, hit: Option<f64>) -> Window {
        let reads = 100;
        let store = hit.map_or(0, |h| (reads as f64 * (1.0 - h)).round() as u64);
        Window {
            t,
            phase,
            ops,
            reads_l2: if hit.is_some() { reads - store } else { 0 },
            reads_object_store: store,
            hit_ratio: hit,
            ..Window::default()
        }
    }

    #[test]
    fn the_goals_are_read_off_the_windows() {
        let windows = vec![
            w(0, "steady", 10, Some(1.0)),
            w(1, "steady", 100, Some(1.0)),
            w(2, "steady", 100, Some(1.0)),
            w(3, "steady", 85, Some(1.0)),
            w(4, "steady", 100, Some(1.0)),
            w(5, "rolling", 95, Some(1.0)),
            w(6, "rolling", 80, Some(0.9)),
            w(7, "rebalance", 100, Some(1.0)),
            w(8, "kill", 0, None),
            w(9, "kill", 50, Some(0.5)),
            w(10, "kill", 90, Some(0.97)),
            w(11, "kill", 100, Some(0.99)),
            w(12, "kill", 3, None),
        ];
        let r = summarize(SummaryInput {
            mode: Mode::CacheAware,
            windows,
            events: Vec::new(),
            killed: "s2".into(),
            kill_at: 8.2,
            balancer_moves: vec![BalancerMove {
                region: "r".into(),
                from: "a".into(),
                to: "b".into(),
                at_s: 5.0,
                blocks: 200,
                object_store_blocks: 4,
                peer_blocks: 150,
                object_store_gets: 2,
            }],
            ops: 913,
            errors: 0,
            cpu: 0.0913,
        });
        // The partial first and last windows are left out.
        assert_eq!(r.steady_ops_per_s, 100.0);
        assert_eq!(r.steady_min_ratio, Some(0.85));
        assert_eq!((r.steady_windows_below_90pct, r.steady_windows), (1, 4));
        assert_eq!(r.rolling_min_ratio, Some(0.8));
        assert_eq!((r.rolling_windows_below_90pct, r.rolling_windows), (1, 2));
        assert_eq!(r.balancer_moved_object_store_fraction, Some(0.02));
        assert_eq!(r.kill_min_ratio, Some(0.0));
        // Window 10 starts 1.8 s after the kill; from it on, every window
        // is at least 95 % (window 8, with no reads, does not count).
        let back = r.hit_ratio_95_after_kill_s.unwrap();
        assert!((back - 1.8).abs() < 1e-9, "{back}");
        assert_eq!(r.server_cpu_us_per_op, Some(100.0));
        assert_eq!(r.steady_hit_ratio, Some(1.0));
    }

    #[test]
    fn source_deltas_survive_a_restart() {
        let before = Sources {
            l1: 10,
            l2: 5,
            gets: 3,
            ..Sources::default()
        };
        let now = Sources {
            l1: 12,
            l2: 2,
            gets: 4,
            ..Sources::default()
        };
        let d = now.since(&before);
        assert_eq!((d.l1, d.l2, d.gets), (2, 2, 1));
    }

    #[test]
    fn plain_settings_turn_every_cache_feature_off() {
        let o = RollingOptions {
            records: 10,
            value_bytes: 10,
            regions: 2,
            threads: 1,
            rate: None,
            max_moving: 0,
            l1_data: "4MiB".into(),
            l2_capacity: "128MiB".into(),
            warmup: Duration::ZERO,
            steady: Duration::ZERO,
            gap: Duration::ZERO,
            rebalance: Duration::ZERO,
            after_kill: Duration::ZERO,
            down: Duration::ZERO,
            lease_ttl: Duration::from_secs(3),
            latency: Duration::from_millis(20),
            modes: vec![],
            shoal_bin: PathBuf::from("shoal"),
        };
        let (a, b) = (
            SocketAddr::from(([127, 0, 0, 1], 1)),
            SocketAddr::from(([127, 0, 0, 1], 2)),
        );
        let c = |mode| {
            config(
                Path::new("/r"),
                "http://127.0.0.1:2379",
                ("s1", a, b),
                &o,
                mode,
            )
        };
        let aware = c(Mode::CacheAware);
        assert!(!aware.contains("peer_reads") && aware.contains("l2_capacity = \"128MiB\""));
        let plain = c(Mode::Plain);
        for k in [
            "peer_reads = false",
            "retain = \"0s\"",
            "handoff_warmup = \"0s\"",
            "cache_aware = false",
            "move_reads = \"0s\"",
        ] {
            assert!(plain.contains(k), "{plain}");
        }
        assert!(c(Mode::NoL2).contains("l2_capacity = \"0\""));
        for text in [aware, plain, c(Mode::NoL2)] {
            let parsed = shoal_server::ServerConfig::from_toml(&text);
            assert!(parsed.is_ok(), "{text}: {parsed:?}");
        }
    }
}
