//! Cluster mode end to end: three `shoal serve` processes over one bucket
//! (a shared local directory), coordinated by a real etcd on loopback, used
//! through the Rust client given all three addresses. Each test owns its
//! etcd and servers; they run one at a time (a 2-core machine).
//!
//! - a pre-split table spreads over the three; a server killed with -9
//!   during writes: its regions serve again elsewhere and every
//!   acknowledged write reads back;
//! - a server paused (SIGSTOP) past its lease: its regions move; resumed,
//!   it acknowledges nothing for them, and nothing acknowledged is lost;
//! - the master killed: another server becomes master and tables can
//!   still be created and served;
//! - every server restarted in turn (SIGTERM, regions handed over): no
//!   error reaches the caller, no write is lost;
//! - etcd paused for less than the lease: nothing moves; stopped for
//!   longer: the servers fence themselves, and serve again when it is back;
//! - a region moved by hand, there and back, under a writer and readers:
//!   its reads are answered through each move, and none is stale;
//! - an HBase snapshot imported into the cluster: its regions spread over
//!   the servers, each loaded where it is served, every cell read back;
//! - a snapshot under writers on every server: one cut across the servers
//!   (every write acknowledged before it began is in its clone), restore,
//!   and a server killed just before a snapshot: it fails with nothing
//!   registered or succeeds whole;
//! - a wrong etcd address at start: one clear error, not a hang.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// test code
// The serializing lock is held for a whole test on purpose; each test has
// its own runtime, so no other task waits on it.
#![allow(clippy::await_holding_lock)]

#[path = "../../shoal-cluster/tests/support/mod.rs"]
mod etcd_support;
#[path = "support/hbase_fixtures.rs"]
mod fixtures;
mod support;

use etcd_support::{EtcdServer, have_etcd};
use shoal_client::{Admin, Client, ClientOptions, Get};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::ServerProcess;

/// One test at a time: each starts an etcd and three servers.
static SERIAL: Mutex<()> = Mutex::new(());

const LEASE: &str = "2s";
const SPLITS: [&str; 5] = ["b", "d", "f", "h", "j"];

struct Cluster {
    etcd: EtcdServer,
    root: tempfile::TempDir,
    servers: Vec<Option<ServerProcess>>,
    regions: String,
    /// Extra keys for each server's `[cluster]` table.
    cluster_keys: String,
}

/// `regions`: extra keys for write_config's `[regions]` table;
/// `cluster_keys`: extra keys for `[cluster]`.
fn config(root: &Path, etcd: &str, name: &str, regions: &str, cluster_keys: &str) -> PathBuf {
    let dir = root.join(format!("{name}-config"));
    std::fs::create_dir_all(&dir).unwrap();
    support::write_config(
        &dir,
        &format!(
            "{regions}[object_store]\nurl = \"file://{}\"\n[wal]\nbackend = \"object\"\n\
             [cluster]\netcd = [\"{etcd}\"]\nname = \"{name}\"\nlease_ttl = \"{LEASE}\"\n\
             {cluster_keys}",
            root.join("bucket").display()
        ),
    )
}

impl Cluster {
    fn start(n: usize) -> Cluster {
        Cluster::start_with(n, "")
    }

    fn start_with(n: usize, regions: &str) -> Cluster {
        Cluster::start_with_keys(n, regions, "")
    }

    fn start_with_keys(n: usize, regions: &str, cluster_keys: &str) -> Cluster {
        let etcd = EtcdServer::start();
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("bucket")).unwrap();
        let mut c = Cluster {
            etcd,
            root,
            servers: Vec::new(),
            regions: regions.to_owned(),
            cluster_keys: cluster_keys.to_owned(),
        };
        for i in 0..n {
            let s = c.spawn(i);
            c.servers.push(Some(s));
        }
        c
    }

    fn name(i: usize) -> String {
        format!("s{}", i + 1)
    }

    fn spawn(&self, i: usize) -> ServerProcess {
        let name = Cluster::name(i);
        let cfg = config(
            self.root.path(),
            &self.etcd.endpoint(),
            &name,
            &self.regions,
            &self.cluster_keys,
        );
        let data = self.root.path().join(format!("{name}-data"));
        ServerProcess::start(&data, Some(&cfg))
    }

    fn server(&self, i: usize) -> &ServerProcess {
        self.servers[i].as_ref().expect("running")
    }

    fn addrs(&self) -> String {
        self.servers
            .iter()
            .flatten()
            .map(|s| s.grpc.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    fn stderr(&self) -> String {
        self.servers
            .iter()
            .flatten()
            .map(|s| s.stderr())
            .collect::<Vec<_>>()
            .join("\n----\n")
    }

    fn signal(&self, i: usize, sig: &str) {
        let pid = self.server(i).pid().unwrap();
        let ok = std::process::Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig}");
    }
}

async fn client(addrs: &str) -> Client {
    Client::connect_with(
        addrs,
        ClientOptions {
            retry_deadline: Duration::from_secs(40),
            ..ClientOptions::default()
        },
    )
    .await
    .unwrap()
}

/// Regions per server name as the answering server sees the cluster, and
/// the master's name.
async fn layout(admin: &Admin) -> Option<(BTreeMap<String, Vec<String>>, String)> {
    let s = admin.status().await.ok()?;
    Some((
        s.servers
            .into_iter()
            .map(|x| (x.name, x.region_ids))
            .collect(),
        s.master,
    ))
}

/// Waits until `regions` regions are served by exactly `servers` servers
/// (each region once); returns the layout and the master.
async fn settled(
    admin: &Admin,
    regions: usize,
    servers: usize,
    limit: Duration,
) -> (BTreeMap<String, Vec<String>>, String) {
    let start = Instant::now();
    loop {
        if let Some((l, master)) = layout(admin).await {
            let total: usize = l.values().map(Vec::len).sum();
            let busy = l.values().filter(|r| !r.is_empty()).count();
            if total == regions && busy == servers && l.len() == servers && !master.is_empty() {
                return (l, master);
            }
        }
        assert!(
            start.elapsed() < limit,
            "not settled in {limit:?}: {:?}",
            layout(admin).await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn create_table(c: &Client) {
    c.admin()
        .create_table(
            "t",
            vec![Admin::family("cf")],
            SPLITS.iter().map(|k| k.as_bytes().to_vec()).collect(),
        )
        .await
        .unwrap();
}

/// Writers on every region until `stop`; returns the acknowledged rows and
/// the number of errors that reached the caller.
struct Writers {
    acked: Arc<Mutex<Vec<(String, String)>>>,
    errors: Arc<AtomicU64>,
    first_error: Arc<Mutex<Option<String>>>,
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

fn start_writers(c: &Client, n: usize) -> Writers {
    let w = Writers {
        acked: Arc::default(),
        errors: Arc::default(),
        first_error: Arc::default(),
        stop: Arc::default(),
        tasks: Vec::new(),
    };
    let mut tasks = Vec::new();
    for t in 0..n {
        let table = c.table("t");
        let (acked, errors, first, stop) = (
            w.acked.clone(),
            w.errors.clone(),
            w.first_error.clone(),
            w.stop.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let letter = (b'a' + (i % 11) as u8) as char;
                let row = format!("{letter}-{t}-{i:07}");
                let value = format!("v{i}");
                match table.put(&row, "cf", "q", &value).await {
                    Ok(()) => acked.lock().unwrap().push((row, value)),
                    Err(e) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                        first.lock().unwrap().get_or_insert(e.to_string());
                    }
                }
                i += 1;
            }
        }));
    }
    Writers { tasks, ..w }
}

impl Writers {
    async fn finish(self) -> (Vec<(String, String)>, u64, Option<String>) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.tasks {
            t.await.unwrap();
        }
        let acked = std::mem::take(&mut *self.acked.lock().unwrap());
        let first = self.first_error.lock().unwrap().clone();
        (acked, self.errors.load(Ordering::Relaxed), first)
    }
}

/// Objects under `dir` of a local bucket, recursively (0 if it is gone).
/// A PUT cut by kill -9 leaves its staging file (`name#n`), which is not
/// an object: not counted.
fn files_under(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                files_under(&p)
            } else {
                usize::from(!e.file_name().to_string_lossy().contains('#'))
            }
        })
        .sum()
}

/// Every acknowledged row reads back with its value; on failure the
/// servers' logs are printed (what a flaky run needs to be understood).
async fn check_acked(c: &Client, acked: &[(String, String)], cluster: &Cluster) {
    check_rows(c, "t", acked, cluster).await;
}

/// Every row of `rows` reads back from `table` with its value.
async fn check_rows(c: &Client, table: &str, acked: &[(String, String)], cluster: &Cluster) {
    let table = c.table(table);
    for chunk in acked.chunks(200) {
        let rows = table
            .get_many(chunk.iter().map(|(r, _)| Get::new(r)).collect())
            .await
            .unwrap();
        for ((row, value), got) in chunk.iter().zip(rows) {
            let v = got.cells.first().map(|c| c.value.clone());
            assert_eq!(
                v.as_deref(),
                Some(value.as_bytes()),
                "acknowledged write of {row} lost or wrong\n{}",
                cluster.stderr()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_s_regions_serve_again_and_no_acknowledged_write_is_lost() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut cluster = Cluster::start(3);
    let c = client(&cluster.addrs()).await;
    create_table(&c).await;
    let admin = c.admin();
    let (layout0, master) = settled(&admin, 6, 3, Duration::from_secs(30)).await;
    assert!(
        layout0.values().all(|r| r.len() == 2),
        "a pre-split table spreads evenly: {layout0:?}"
    );
    // The client works through any address.
    for s in cluster.servers.iter().flatten() {
        let one = client(&s.grpc.to_string()).await;
        one.table("t").put("a-any", "cf", "q", "x").await.unwrap();
        assert_eq!(
            one.table("t")
                .get_value("a-any", "cf", "q")
                .await
                .unwrap()
                .as_deref(),
            Some(&b"x"[..])
        );
    }
    let writers = start_writers(&c, 4);
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Kill a server that is not the master.
    let victim = (0..3).find(|&i| Cluster::name(i) != master).unwrap();
    let killed_at = Instant::now();
    cluster.servers[victim].take().unwrap().kill9();
    let survivor = client(&cluster.addrs()).await;
    settled(&survivor.admin(), 6, 2, Duration::from_secs(30)).await;
    let recovery = killed_at.elapsed();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (acked, errors, first) = writers.finish().await;
    eprintln!(
        "{} acknowledged writes, {errors} errors, every region serving again {recovery:?} after kill -9",
        acked.len()
    );
    assert_eq!(errors, 0, "first error: {first:?}\n{}", cluster.stderr());
    assert!(acked.len() > 100, "writes went on: {}", acked.len());
    check_acked(&survivor, &acked, &cluster).await;
    // A scan over the whole table crosses both servers.
    let n = survivor
        .table("t")
        .count(shoal_client::Scan::new())
        .await
        .unwrap();
    assert_eq!(n, acked.len() as u64 + 1, "every row once (plus a-any)");
    // Every documented cluster metric is exported; the survivors opened the
    // dead server's regions as failovers.
    let doc = include_str!("../../../docs/metrics.md");
    let mut failovers = 0.0;
    for s in cluster.servers.iter().flatten() {
        let (code, body) = s.http_get("/metrics");
        assert_eq!(code, 200);
        for n in doc
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .filter(|n| n.starts_with("shoal_cluster_"))
        {
            assert!(body.contains(&format!("# TYPE {n} ")), "{n} not exported");
        }
        failovers += body
            .lines()
            .find_map(|l| l.strip_prefix("shoal_cluster_failovers_total "))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0);
    }
    assert_eq!(failovers, 2.0, "the dead server's two regions failed over");
    // The dead server's WAL run is deleted once every region logged there
    // was replayed and logged again (the master sweeps every 30 s)...
    let dead = cluster
        .root
        .path()
        .join("bucket/wal")
        .join(Cluster::name(victim));
    let start = Instant::now();
    while files_under(&dead) > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the dead server's WAL run is still there\n{}",
            cluster.stderr()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        cluster
            .stderr()
            .contains("WAL run no longer needed; deleted")
    );
    // ...and the live servers' runs were left alone: writes go on, and
    // everything acknowledged still reads back.
    let after = survivor.table("t");
    for i in 0..50 {
        after
            .put(format!("z-after-{i}"), "cf", "q", "x")
            .await
            .unwrap();
    }
    check_acked(&survivor, &acked, &cluster).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_server_acknowledges_nothing_for_regions_it_lost() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Nothing comes back to the paused server by retained assignment...
    let cluster = Cluster::start_with_keys(3, "", "retain = \"0s\"\n");
    let c = client(&cluster.addrs()).await;
    create_table(&c).await;
    let admin = c.admin();
    let (layout0, master) = settled(&admin, 6, 3, Duration::from_secs(30)).await;
    // ... nor by balancing: its former regions must stay elsewhere for the
    // check below.
    admin.balance_switch(false).await.unwrap();
    let victim = (0..3).find(|&i| Cluster::name(i) != master).unwrap();
    let lost = layout0[&Cluster::name(victim)].clone();
    let writers = start_writers(&c, 4);
    tokio::time::sleep(Duration::from_secs(1)).await;
    cluster.signal(victim, "-STOP");
    // Its lease lapses and its regions move.
    let others: Vec<String> = (0..3)
        .filter(|&i| i != victim)
        .map(|i| cluster.server(i).grpc.to_string())
        .collect();
    let survivor = client(&others.join(",")).await;
    settled(&survivor.admin(), 6, 2, Duration::from_secs(30)).await;
    cluster.signal(victim, "-CONT");
    // Straight to the resumed server, no routing: rows of every region it
    // lost. Not one write may be acknowledged.
    let url = cluster.server(victim).url();
    let mut raw = shoal_client::proto::data_client::DataClient::connect(url)
        .await
        .unwrap();
    let mut refused = 0;
    let until = Instant::now() + Duration::from_secs(4);
    let mut i = 0;
    while Instant::now() < until {
        for key in ["a", "b", "d", "f", "h", "j"] {
            i += 1;
            let row = format!("{key}-fenced-{i}");
            let req = shoal_client::proto::MutateRequest {
                table: "t".into(),
                mutation: Some(
                    shoal_client::RowMutation::new(&row)
                        .put("cf", "q", "x")
                        .into_proto(),
                ),
            };
            match raw.mutate(req).await {
                Ok(_) => {
                    // Only a region it serves again may take it: none here,
                    // the balancer is off.
                    panic!("the resumed server acknowledged {row} (lost regions {lost:?})");
                }
                Err(_) => refused += 1,
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(refused > 0);
    let (acked, errors, first) = writers.finish().await;
    assert_eq!(errors, 0, "first error: {first:?}\n{}", cluster.stderr());
    check_acked(&survivor, &acked, &cluster).await;
    let (_, _, stderr) = (0, 0, cluster.server(victim).stderr());
    assert!(
        stderr.contains("lost the cluster lease"),
        "the paused server says it lost its lease:\n{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_master_killed_another_takes_over() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut cluster = Cluster::start(3);
    let c = client(&cluster.addrs()).await;
    create_table(&c).await;
    let (layout0, master) = settled(&c.admin(), 6, 3, Duration::from_secs(30)).await;
    // The shell's cluster commands, through a server that is not master.
    let other = (0..3).find(|&i| Cluster::name(i) != master).unwrap();
    let addr = cluster.server(other).grpc;
    // A server's cluster view is as of its last round: within a few rounds
    // it shows every region where the layout says.
    let all_ids: Vec<&String> = layout0.values().flatten().collect();
    let deadline = Instant::now() + Duration::from_secs(15);
    let out = loop {
        let (code, out, err) = support::shell(addr, &["-e", "status 'detailed'"], "");
        assert_eq!(code, 0, "{err}");
        let complete = out.contains("3 live server(s)")
            && out.contains(&format!("{master} at"))
            && all_ids.iter().all(|id| out.contains(id.as_str()));
        if complete || Instant::now() > deadline {
            break out;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert!(out.contains("3 live server(s)"), "{out}");
    assert!(out.contains(&format!("{master} at")), "{out}");
    for id in &all_ids {
        assert!(out.contains(id.as_str()), "{id} in {out}");
    }
    let first = |out: &str| out.lines().next().unwrap_or_default().trim().to_string();
    let (code, out, err) = support::shell(addr, &["-e", "balance_switch false"], "");
    assert_eq!((code, first(&out)), (0, "true".into()), "{err}");
    // Every server sees the switch within a round.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (code, out, err) = support::shell(addr, &["-e", "balancer"], "");
    assert_eq!((code, first(&out)), (0, "false".into()), "{err}");
    // Move one region of `other` to the master, by name.
    let region = layout0[&Cluster::name(other)][0].clone();
    let (code, out, err) =
        support::shell(addr, &["-e", &format!("move '{region}', '{master}'")], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("moved to {master}")), "{out}");
    let (l, _) = layout(&c.admin()).await.unwrap();
    assert!(l[&master].contains(&region), "{l:?}");
    let (code, _, err) = support::shell(addr, &["-e", "move 'no-such-region'"], "");
    assert_ne!(code, 0);
    assert!(err.contains("no region"), "{err}");
    let m = (0..3).find(|&i| Cluster::name(i) == master).unwrap();
    cluster.servers[m].take().unwrap().kill9();
    let survivor = client(&cluster.addrs()).await;
    let (_, new_master) = settled(&survivor.admin(), 6, 2, Duration::from_secs(30)).await;
    assert_ne!(new_master, master);
    // Assignment goes on: a new table is created and served.
    survivor
        .admin()
        .create_table("t2", vec![Admin::family("cf")], vec![b"m".to_vec()])
        .await
        .unwrap();
    settled(&survivor.admin(), 8, 2, Duration::from_secs(30)).await;
    survivor.table("t2").put("z", "cf", "q", "1").await.unwrap();
    assert!(
        survivor
            .table("t2")
            .get_value("z", "cf", "q")
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_under_load_loses_nothing_and_shows_no_error() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut cluster = Cluster::start(3);
    let c = client(&cluster.addrs()).await;
    create_table(&c).await;
    settled(&c.admin(), 6, 3, Duration::from_secs(30)).await;
    let writers = start_writers(&c, 4);
    for i in 0..3 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let status = cluster.servers[i].take().unwrap().terminate();
        assert!(status.success(), "server {i} stopped cleanly");
        let stderr_before = cluster.stderr();
        let s = cluster.spawn(i);
        cluster.servers[i] = Some(s);
        // The restarted server's address is new: give the client all.
        let fresh = client(&cluster.addrs()).await;
        settled(&fresh.admin(), 6, 3, Duration::from_secs(40)).await;
        drop(stderr_before);
    }
    let (acked, errors, first) = writers.finish().await;
    assert_eq!(errors, 0, "first error: {first:?}\n{}", cluster.stderr());
    let fresh = client(&cluster.addrs()).await;
    check_acked(&fresh, &acked, &cluster).await;
    // Graceful stops hand regions over flushed: nobody replayed a WAL run.
    let logs = cluster.stderr();
    assert!(
        !logs.contains("entries of a dead server's WAL logged again"),
        "a graceful stop needed a replay:\n{logs}"
    );
    // A draining server stays until its regions' new owners ended the reads
    // of its closed copies: none of them waited out the bound (the last
    // restart's new owners are still running, with their logs).
    assert!(
        !logs.contains("waited out the former owner's reads"),
        "a new owner waited out a drained server's reads:\n{logs}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_outages_shorter_than_the_lease_move_nothing_longer_ones_fence_then_recover() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut cluster = Cluster::start(3);
    let c = client(&cluster.addrs()).await;
    create_table(&c).await;
    let (before, _) = settled(&c.admin(), 6, 3, Duration::from_secs(30)).await;
    c.table("t").put("a1", "cf", "q", "before").await.unwrap();
    // Shorter than the 2 s lease.
    cluster.etcd.pause(true);
    tokio::time::sleep(Duration::from_millis(900)).await;
    cluster.etcd.pause(false);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (after, _) = settled(&c.admin(), 6, 3, Duration::from_secs(10)).await;
    assert_eq!(before, after, "no region moved");
    for s in cluster.servers.iter().flatten() {
        assert!(
            !s.stderr().contains("lost the cluster lease"),
            "{}",
            s.stderr()
        );
    }
    // Longer than the lease: every server fences itself.
    cluster.etcd.stop();
    tokio::time::sleep(Duration::from_secs(5)).await;
    for s in cluster.servers.iter().flatten() {
        assert!(
            s.stderr().contains("lost the cluster lease"),
            "{}",
            s.stderr()
        );
    }
    cluster.etcd.restart();
    settled(&c.admin(), 6, 3, Duration::from_secs(40)).await;
    assert_eq!(
        c.table("t")
            .get_value("a1", "cf", "q")
            .await
            .unwrap()
            .as_deref(),
        Some(&b"before"[..])
    );
    c.table("t").put("a2", "cf", "q", "after").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_region_that_grows_splits_on_its_owner_and_the_master_registers_the_children() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut cluster = Cluster::start_with(3, "split_size = \"2MiB\"\n");
    let c = client(&cluster.addrs()).await;
    c.admin()
        .create_table("t", vec![Admin::family("cf")], vec![])
        .await
        .unwrap();
    // create_table returns once its region serves.
    // About 6 MiB into the single region: flushes, then a split (or two).
    let table = c.table("t");
    // Values that do not compress (an LCG's bytes).
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rows = Vec::new();
    for i in 0..600 {
        let value: Vec<u8> = (0..10_000)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (x >> 56) as u8
            })
            .collect();
        let row = format!("r{:05}", (i * 7919) % 100_000);
        table.put(&row, "cf", "q", &value).await.unwrap();
        rows.push(row);
    }
    let start = Instant::now();
    let layout_after = loop {
        let (l, _) = layout(&c.admin()).await.unwrap();
        let total: usize = l.values().map(Vec::len).sum();
        if total >= 2 {
            break l;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no split: {l:?}
{}",
            cluster.stderr()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        cluster.stderr().contains("split registered"),
        "{}",
        cluster.stderr()
    );
    // Every row reads back, through the children.
    let check = |c: Client, rows: Vec<String>| async move {
        let got = c
            .table("t")
            .get_many(rows.iter().map(Get::new).collect())
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(
            rows.iter()
                .zip(got)
                .filter(|(_, r)| r.cells.len() != 1)
                .map(|(row, _)| row.clone())
                .collect::<Vec<_>>(),
        )
    };
    let lost = check(c.clone(), rows.clone())
        .await
        .unwrap_or_else(|e| panic!("after the split: {e}\n{}", cluster.stderr()));
    assert!(
        lost.is_empty(),
        "after the split, lost {lost:?}\n{}",
        cluster.stderr()
    );
    // A child's owner dies: the child is reopened elsewhere, rows intact.
    let owner = layout_after
        .iter()
        .find(|(_, r)| !r.is_empty())
        .map(|(n, _)| n.clone())
        .unwrap();
    let i = (0..3).find(|&i| Cluster::name(i) == owner).unwrap();
    let killed = cluster.servers[i].take().unwrap();
    let killed_log = killed.stderr();
    killed.kill9();
    // On a failure: the layouts, and every server's log, the killed one's too.
    let logs = |cluster: &Cluster| {
        format!(
            "layout after the split: {layout_after:?}\n{}\n---- killed {owner}:\n{killed_log}",
            cluster.stderr()
        )
    };
    let survivor = client(&cluster.addrs()).await;
    let start = Instant::now();
    loop {
        let (l, _) = layout(&survivor.admin()).await.unwrap_or_default();
        let total: usize = l.values().map(Vec::len).sum();
        if l.len() == 2 && total >= layout_after.values().map(Vec::len).sum::<usize>() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{l:?}\n{}",
            logs(&cluster)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let lost = check(survivor, rows)
        .await
        .unwrap_or_else(|e| panic!("after the failover: {e}\n{}", logs(&cluster)));
    assert!(
        lost.is_empty(),
        "after the failover, lost {lost:?}\n{}",
        logs(&cluster)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_is_one_cut_across_the_servers_and_a_dead_server_fails_it_cleanly() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut cluster = Cluster::start(3);
    let c = client(&cluster.addrs()).await;
    create_table(&c).await;
    let (layout_now, master) = settled(&c.admin(), 6, 3, Duration::from_secs(30)).await;
    let writers = start_writers(&c, 4);
    tokio::time::sleep(Duration::from_millis(800)).await;
    let before: Vec<(String, String)> = writers.acked.lock().unwrap().clone();
    let s = c.admin().snapshot("t", "s1").await;
    let (acked, _, _) = writers.finish().await;
    let s = s.unwrap_or_else(|e| panic!("snapshot: {e}\n{}", cluster.stderr()));
    assert_eq!(s.regions, 6);
    c.admin().clone_snapshot("s1", "c1").await.unwrap();
    // Every write acknowledged before the snapshot began is in the clone.
    check_rows(&c, "c1", &before, &cluster).await;
    assert!(
        before.len() > 50,
        "{} writes before the snapshot",
        before.len()
    );
    // Restore the source: it reads what the clone reads.
    let count = |t: &'static str| {
        let c = c.clone();
        async move { c.table(t).count(shoal_client::Scan::new()).await.unwrap() }
    };
    let clone_rows = count("c1").await;
    assert!(clone_rows as usize >= before.len() && clone_rows as usize <= acked.len() + 4);
    c.admin().disable("t").await.unwrap();
    c.admin().restore_snapshot("s1").await.unwrap();
    c.admin().enable("t").await.unwrap();
    assert_eq!(count("t").await, clone_rows);
    // A server that is not master dies: a snapshot now either fails with
    // nothing registered, or succeeds whole.
    let victim = layout_now
        .keys()
        .position(|n| *n != master)
        .map(|i| {
            (0..3)
                .find(|&j| Cluster::name(j) == *layout_now.keys().nth(i).unwrap())
                .unwrap()
        })
        .unwrap();
    cluster.servers[victim].take().unwrap().kill9();
    let survivor = client(&cluster.addrs()).await;
    match survivor.admin().snapshot("t", "s2").await {
        Ok(s2) => {
            assert_eq!(s2.regions, 6);
            survivor.admin().clone_snapshot("s2", "c2").await.unwrap();
            assert_eq!(
                survivor
                    .table("c2")
                    .count(shoal_client::Scan::new())
                    .await
                    .unwrap(),
                clone_rows
            );
        }
        Err(_) => {
            let names: Vec<String> = survivor
                .admin()
                .list_snapshots()
                .await
                .unwrap()
                .into_iter()
                .map(|s| s.name)
                .collect();
            assert_eq!(names, vec!["s1".to_string()]);
            // Once the regions serve again, a snapshot succeeds.
            settled(&survivor.admin(), 12, 2, Duration::from_secs(40)).await;
            let s3 = survivor.admin().snapshot("t", "s3").await.unwrap();
            assert_eq!(s3.regions, 6);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_is_altered_across_the_cluster() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cluster = Cluster::start(3);
    let c = client(&cluster.addrs()).await;
    create_table(&c).await;
    settled(&c.admin(), 6, 3, Duration::from_secs(30)).await;
    let t = c.table("t");
    for k in ["a1", "c1", "e1", "g1", "i1", "k1"] {
        t.put(k, "cf", "q", "before").await.unwrap();
    }
    // A family added: every region, wherever it is, takes writes to it.
    let mut cf2 = Admin::family("cf2");
    cf2.max_versions = Some(3);
    c.admin().alter("t", vec![cf2], vec![]).await.unwrap();
    for k in ["a1", "c1", "e1", "g1", "i1", "k1"] {
        t.put(k, "cf2", "q", "new").await.unwrap();
        assert_eq!(
            t.get_value(k, "cf", "q").await.unwrap().as_deref(),
            Some(&b"before"[..]),
            "{k} kept its data through the reopen"
        );
        assert_eq!(
            t.get_value(k, "cf2", "q").await.unwrap().as_deref(),
            Some(&b"new"[..])
        );
    }
    let d = c.admin().describe("t").await.unwrap();
    assert!(
        d.families
            .iter()
            .any(|f| f.name == "cf2" && f.max_versions == Some(3))
    );
    // Each region was flushed, closed and opened again where it was.
    let logs = cluster.stderr();
    assert_eq!(
        logs.matches("region closed for a move").count(),
        6,
        "{logs}"
    );
    settled(&c.admin(), 6, 3, Duration::from_secs(30)).await;
    // Truncate: new, empty regions with the same boundaries, served.
    c.admin().disable("t").await.unwrap();
    c.admin().truncate("t").await.unwrap();
    let (after, _) = settled(&c.admin(), 6, 3, Duration::from_secs(30)).await;
    let ids: Vec<&String> = after.values().flatten().collect();
    assert!(
        ids.iter().all(|id| !logs.contains(id.as_str())),
        "new regions"
    );
    for k in ["a1", "c1", "e1", "g1", "i1", "k1"] {
        assert!(t.get(Get::new(k)).await.unwrap().cells.is_empty(), "{k}");
        t.put(k, "cf2", "q", "again").await.unwrap();
    }
    assert_eq!(t.count(shoal_client::Scan::new()).await.unwrap(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_hbase_snapshot_imports_into_the_cluster() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cluster = Cluster::start(3);
    let addrs = cluster.addrs();
    let c = client(&addrs).await;
    let joined = Instant::now();
    while !matches!(layout(&c.admin()).await, Some((l, m)) if l.len() == 3 && !m.is_empty()) {
        assert!(
            joined.elapsed() < Duration::from_secs(30),
            "servers did not join"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let root = fixtures::fixtures().join("hbase-root");
    let out = std::process::Command::new(support::shoal_bin())
        .args([
            "import",
            "hbase-snapshot",
            root.to_str().unwrap(),
            "imp_snap",
        ])
        .args(["--addr", &addrs])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{}", cluster.stderr());
    assert!(text.contains("2207 cells loaded"), "{text}");
    let (layout, _) = settled(&c.admin(), 5, 3, Duration::from_secs(30)).await;
    assert_eq!(layout.len(), 3, "the snapshot's regions spread: {layout:?}");
    let (expected, starts) = fixtures::expected_visible(fixtures::now_ms());
    assert_eq!(fixtures::region_starts(&addrs, "imp").await, starts);
    assert_eq!(fixtures::shoal_cells(&addrs, "imp").await, expected);
}

/// `[cluster]` keys of the peer-read tests.
const PEER_DEADLINE: &str = "peer_read_timeout = \"2s\"\n";

/// SST files under `dir`, recursively.
fn sst_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        sst_files(&p)
                    } else {
                        usize::from(p.extension().is_some_and(|x| x == "sst"))
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

/// A counter from a server's `/metrics` (0 if absent).
/// Region `id`'s block sources from `server`'s `/api/status`.
fn region_sources(server: &ServerProcess, id: &str) -> serde_json::Value {
    let (code, body) = server.http_get("/api/status");
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("region {id} not in {v}"))["block_sources"]
        .clone()
}

fn metric(server: &ServerProcess, name: &str) -> f64 {
    let (code, body) = server.http_get("/metrics");
    assert_eq!(code, 200);
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_region_reads_its_blocks_from_the_former_owner_not_the_object_store() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // A generous deadline: this test checks where blocks come from, on a
    // loaded 2-core machine (the deadline itself is a unit test's).
    let cluster = Cluster::start_with_keys(2, "", PEER_DEADLINE);
    let c = client(&cluster.addrs()).await;
    let admin = c.admin();
    let until = |cond: fn(&BTreeMap<String, Vec<String>>, &str) -> bool| {
        let admin = admin.clone();
        async move {
            let start = Instant::now();
            loop {
                if let Some((l, master)) = layout(&admin).await
                    && cond(&l, &master)
                {
                    return l;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "{:?}",
                    layout(&admin).await
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    until(|l, master| l.len() == 2 && !master.is_empty()).await;
    admin.balance_switch(false).await.unwrap();
    admin
        .create_table("p", vec![Admin::family("cf")], Vec::new())
        .await
        .unwrap();
    // One region of 3,000 rows of 1 KB, flushed: its file is in the
    // owner's L2 (cache on write).
    let t = c.table("p");
    let value = vec![b'x'; 1000];
    for chunk in 0..6 {
        let rows = (0..500)
            .map(|i| {
                shoal_client::RowMutation::new(format!("row{:05}", chunk * 500 + i))
                    .put("cf", "q", &value)
            })
            .collect();
        for r in t.mutate_many(rows).await.unwrap() {
            r.unwrap();
        }
    }
    admin.flush("p").await.unwrap();
    let l = until(|l, _| l.values().map(Vec::len).sum::<usize>() == 1).await;
    let (owner, regions) = l.iter().find(|(_, r)| !r.is_empty()).unwrap();
    let region = regions[0].clone();
    let from = (0..2).find(|&i| &Cluster::name(i) == owner).unwrap();
    let to = 1 - from;
    let gets_before = metric(cluster.server(to), "shoal_cache_object_store_gets_total");
    move_and_wait(&admin, &cluster, &region, to).await;
    // Every row reads back right on the new owner.
    let rows = t.scan_collect(shoal_client::Scan::new()).await.unwrap();
    assert_eq!(rows.len(), 3000);
    assert!(rows.iter().all(|r| r.cells[0].value == value));
    let new_owner = cluster.server(to);
    let old_owner = cluster.server(from);
    let peer_hits = metric(new_owner, "shoal_cache_peer_hits_total");
    let gets = metric(new_owner, "shoal_cache_object_store_gets_total") - gets_before;
    // 3 MB in 64 KiB blocks: about 50 data blocks, all from the peer (the
    // region's reads and its prefetch); the object store served only each
    // file's tail (index and bloom).
    let files = sst_files(&cluster.root.path().join("bucket"));
    eprintln!(
        "moved region: {peer_hits} blocks from the peer, {gets} object-store GETs, {files} files"
    );
    assert!(peer_hits >= 40.0, "peer hits {peer_hits}");
    assert!(
        gets <= files as f64,
        "object-store GETs {gets} on the new owner, {files} files"
    );
    assert!(metric(old_owner, "shoal_cache_peer_served_blocks_total") >= peer_hits);
    assert_eq!(metric(new_owner, "shoal_cache_peer_corrupt_total"), 0.0);
    assert!(metric(new_owner, "shoal_cluster_peer_calls_total") >= 1.0);
    assert_eq!(metric(new_owner, "shoal_cluster_peer_hinted_regions"), 1.0);
    // The region's own figures say the same: its blocks came from the peer.
    let s = region_sources(new_owner, &region);
    let n = |k: &str| s[k].as_u64().unwrap();
    assert!(n("peer") + n("prefetch_peer") >= 40, "{s}");
    assert_eq!(n("object_store") + n("prefetch_object_store"), 0, "{s}");

    // The cluster's cache facts say where the region's blocks are: its new
    // owner serves it from its cache, and its former owner's L2 still holds
    // them (what the master places regions by).
    let etcd = shoal_cluster::Etcd::connect(&[cluster.etcd.endpoint()], Duration::from_secs(5))
        .await
        .unwrap();
    let start = Instant::now();
    loop {
        let facts = shoal_cluster::cache_facts::read_all(&etcd, "/shoal")
            .await
            .unwrap();
        let of = |i: usize| {
            facts
                .report(&Cluster::name(i))
                .and_then(|r| r.regions.get(&region).copied())
        };
        if let (Some(now), Some(before)) = (of(to), of(from))
            && now.open
            && !before.open
            && now.cached >= now.size / 2
            && before.cached >= before.size / 2
            && now.size > 0
        {
            eprintln!("cache facts: new owner {now:?}, former owner {before:?}");
            assert!(before.l2 > 0, "{before:?}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "cache facts never showed the move: {:?}",
            facts.reports().collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_balancer_warms_a_region_on_its_new_server_before_moving_it() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut cluster = Cluster::start_with_keys(1, "", PEER_DEADLINE);
    let c = client(&cluster.addrs()).await;
    // Two regions of 1,000 rows of 1 KB on the one server, flushed: their
    // files are in its L2.
    c.admin()
        .create_table("w", vec![Admin::family("cf")], vec![b"m".to_vec()])
        .await
        .unwrap();
    let t = c.table("w");
    let value = vec![b'y'; 1000];
    for half in ["a", "n"] {
        let rows = (0..1000)
            .map(|i| shoal_client::RowMutation::new(format!("{half}{i:05}")).put("cf", "q", &value))
            .collect();
        for r in t.mutate_many(rows).await.unwrap() {
            r.unwrap();
        }
    }
    c.admin().flush("w").await.unwrap();
    // A second server joins: the balancer gives it one region, warmed first.
    cluster.servers.push(Some(cluster.spawn(1)));
    let c = client(&cluster.addrs()).await;
    settled(&c.admin(), 2, 2, Duration::from_secs(30)).await;
    let logs = cluster.server(1).stderr();
    assert!(
        logs.contains("warm handoff: region copied before the move"),
        "{logs}"
    );
    let rows = t.scan_collect(shoal_client::Scan::new()).await.unwrap();
    assert_eq!(rows.len(), 2000);
    assert!(rows.iter().all(|r| r.cells[0].value == value));
    let new = cluster.server(1);
    let peer_hits = metric(new, "shoal_cache_peer_hits_total");
    let gets = metric(new, "shoal_cache_object_store_gets_total");
    let files = sst_files(&cluster.root.path().join("bucket"));
    eprintln!(
        "warm handoff: {peer_hits} blocks from the peer, {gets} object-store GETs, {files} files"
    );
    // About 16 data blocks of 64 KiB: all from the old owner's L2; the
    // object store served file tails only.
    assert!(
        peer_hits >= 12.0,
        "peer hits {peer_hits}\n{}",
        cluster.stderr()
    );
    assert!(
        gets <= files as f64,
        "object-store GETs {gets}, {files} files"
    );
    // The moved region's own figures: its warm-up came from the peer.
    let (code, body) = new.http_get("/api/status");
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let moved = v["regions"][0]["id"].as_str().unwrap().to_string();
    let s = region_sources(new, &moved);
    let n = |k: &str| s[k].as_u64().unwrap();
    assert!(n("prefetch_peer") >= 12, "{s}");
    assert_eq!(n("object_store") + n("prefetch_object_store"), 0, "{s}");
}

/// Moves region `region` to server `to` by hand and waits until the
/// cluster's layout shows it there.
async fn move_and_wait(admin: &Admin, cluster: &Cluster, region: &str, to: usize) {
    admin.move_region(region, &Cluster::name(to)).await.unwrap();
    let start = Instant::now();
    loop {
        if let Some((l, _)) = layout(admin).await
            && l.get(&Cluster::name(to))
                .is_some_and(|r| r.iter().any(|x| x == region))
        {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the move never finished:\n{}",
            cluster.stderr()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moving_region_answers_reads_through_the_move_and_none_is_stale() {
    if !have_etcd() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cluster = Cluster::start(2);
    let c = client(&cluster.addrs()).await;
    let admin = c.admin();
    let start = Instant::now();
    while !layout(&admin)
        .await
        .is_some_and(|(l, master)| l.len() == 2 && !master.is_empty())
    {
        assert!(start.elapsed() < Duration::from_secs(30), "no cluster");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    admin.balance_switch(false).await.unwrap();
    admin
        .create_table("m", vec![Admin::family("cf")], Vec::new())
        .await
        .unwrap();
    let start = Instant::now();
    let l = loop {
        if let Some((l, _)) = layout(&admin).await
            && l.values().map(Vec::len).sum::<usize>() == 1
        {
            break l;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "never served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (owner, regions) = l.iter().find(|(_, r)| !r.is_empty()).unwrap();
    let region = regions[0].clone();
    let from = (0..2).find(|&i| &Cluster::name(i) == owner).unwrap();
    c.table("m").put("k", "cf", "q", "00000000").await.unwrap();
    // Rows read whole before the moves (what the row cache keeps): their
    // entries go with the region.
    let t = c.table("m");
    for i in 0..50 {
        t.put(format!("r{i:02}"), "cf", "q", "v").await.unwrap();
    }
    for i in 0..50 {
        t.get(shoal_client::Get::new(format!("r{i:02}")))
            .await
            .unwrap();
    }
    // One writer counts up in row k, each put through a new client sent to
    // the server the region is moving to (so a write lands on the new owner
    // as soon as it is open); readers, each with its own client (so its own
    // region map, which only a failed call refreshes), check every read
    // against the highest value acknowledged before the read began. A read
    // answered from a former owner's old copy after the new owner
    // acknowledged a write would go below it.
    let acked = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let dest = Arc::new(Mutex::new(cluster.server(from).grpc.to_string()));
    let writer = {
        let (acked, stop, dest) = (acked.clone(), stop.clone(), dest.clone());
        tokio::spawn(async move {
            let mut v = 0u64;
            while !stop.load(Ordering::Relaxed) {
                v += 1;
                let addr = dest.lock().unwrap().clone();
                let table = client(&addr).await.table("m");
                table.put("k", "cf", "q", format!("{v:08}")).await.unwrap();
                acked.store(v, Ordering::SeqCst);
            }
            v
        })
    };
    let mut readers = Vec::new();
    for _ in 0..2 {
        let table = client(&cluster.addrs()).await.table("m");
        let (acked, stop) = (acked.clone(), stop.clone());
        readers.push(tokio::spawn(async move {
            let (mut reads, mut stale) = (0u64, Vec::new());
            while !stop.load(Ordering::Relaxed) {
                let floor = acked.load(Ordering::SeqCst);
                let got = table.get_value("k", "cf", "q").await.unwrap().unwrap();
                let got: u64 = std::str::from_utf8(&got).unwrap().parse().unwrap();
                if got < floor {
                    stale.push((floor, got));
                }
                reads += 1;
            }
            (reads, stale)
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    *dest.lock().unwrap() = cluster.server(1 - from).grpc.to_string();
    move_and_wait(&admin, &cluster, &region, 1 - from).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    *dest.lock().unwrap() = cluster.server(from).grpc.to_string();
    move_and_wait(&admin, &cluster, &region, from).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    let writes = writer.await.unwrap();
    let mut reads = 0;
    for r in readers {
        let (n, stale) = r.await.unwrap();
        assert!(stale.is_empty(), "stale reads (floor, read): {stale:?}");
        reads += n;
    }
    let m = |i: usize, name: &str| metric(cluster.server(i), name);
    let through = m(0, "shoal_cluster_move_reads_total") + m(1, "shoal_cluster_move_reads_total");
    let ended =
        m(0, "shoal_cluster_move_reads_ended_total") + m(1, "shoal_cluster_move_reads_ended_total");
    let waited = m(0, "shoal_cluster_move_reads_waited_total")
        + m(1, "shoal_cluster_move_reads_waited_total");
    eprintln!(
        "{writes} writes, {reads} reads, {through} answered by a region in motion; \
         reads ended when asked {ended}, bounds waited out {waited}"
    );
    // Both moves kept answering reads and ended them by asking.
    assert!(through >= 2.0, "reads through the moves: {through}");
    // Each new owner took the former owner's cached rows (but for rows
    // sharing a write stripe with k, which the writer kept writing).
    let handed = |i: usize| m(i, "shoal_cluster_handed_rows_total");
    assert!(
        handed(1 - from) >= 40.0 && handed(from) >= 40.0,
        "rows handed over: {} then {}\n{}",
        handed(1 - from),
        handed(from),
        cluster
            .stderr()
            .lines()
            .filter(|l| l.contains("handed") || l.contains("moved away ended"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!((ended, waited), (2.0, 0.0), "{}", cluster.stderr());
    let logs = cluster.stderr();
    assert!(logs.contains("reads_on=true"), "{logs}");
}

#[test]
fn an_unreachable_etcd_is_a_clear_error_at_start() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let root = tempfile::tempdir().unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cfg = config(
        root.path(),
        &format!("http://127.0.0.1:{port}"),
        "s1",
        "",
        "",
    );
    let started = Instant::now();
    let out = std::process::Command::new(support::shoal_bin())
        .arg("serve")
        .arg("--data-dir")
        .arg(root.path().join("data"))
        .args([
            "--grpc-addr",
            "127.0.0.1:0",
            "--http-addr",
            "127.0.0.1:0",
            "--thrift-addr",
            "127.0.0.1:0",
            "--rest-addr",
            "127.0.0.1:0",
            "--hbase-rpc-addr",
            "127.0.0.1:0",
        ])
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot reach etcd") && stderr.contains(&port.to_string()),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(30), "no hang");
    // A local WAL in cluster mode is refused with the reason.
    let bad = root.path().join("bad.toml");
    std::fs::write(
        &bad,
        format!("[cluster]\netcd = [\"http://127.0.0.1:{port}\"]\n"),
    )
    .unwrap();
    let out = std::process::Command::new(support::shoal_bin())
        .arg("serve")
        .arg("--data-dir")
        .arg(root.path().join("data2"))
        .arg("--config")
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("wal.backend") && stderr.contains("cluster mode"),
        "{stderr}"
    );
}
