//! HBase's own Java client (`hbase-client` 2.6.1, unchanged, with
//! `RpcConnectionRegistry`) against a cluster of three `shoal serve` (one
//! bucket, object WAL, a real etcd), given ONE server's native-RPC address
//! as its only bootstrap server, as a new user would configure it:
//!
//! - table changes through a server that is not the master: `Admin`
//!   create/disable/delete (the registry names the master), then the same
//!   calls sent straight to that server's `MasterService` (it relays them
//!   to the master);
//! - a writer whose only bootstrap server is killed for good (kill -9):
//!   first a server that is not the master, then the master. The registry
//!   names every live server, so the client moves on to the others;
//!   writes are acknowledged again within 10 s of each kill, and every
//!   acknowledged write reads back.
//!
//! One etcd and one cluster serve every step (about a minute). The program
//! is `tests/hbase-client-java` (modes `admin-via`, `writer`, `verify`);
//! Maven gives its classpath offline, as in `hbase_client_e2e.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

#[path = "../../shoal-cluster/tests/support/mod.rs"]
mod etcd_support;
#[path = "support/java.rs"]
mod java;
mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::ServerProcess;

/// Writes must be acknowledged again within this long after a kill.
const RECOVERY_GOAL: Duration = Duration::from_secs(10);
const SPLITS: [&str; 5] = ["e", "i", "m", "q", "u"];

fn java(cp: &str, bootstrap: &str, args: &[&str]) -> Command {
    let mut c = Command::new("java");
    c.args(["-Xmx256m", "-cp", cp, "shoal.it.HBaseClientIT", bootstrap])
        .args(args);
    c
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

struct Cluster {
    etcd: etcd_support::EtcdServer,
    root: tempfile::TempDir,
    servers: Vec<Option<ServerProcess>>,
    rt: tokio::runtime::Runtime,
}

impl Cluster {
    fn name(i: usize) -> String {
        format!("s{}", i + 1)
    }

    fn spawn(&self, i: usize) -> ServerProcess {
        let name = Cluster::name(i);
        let dir = self.root.path().join(format!("{name}-config"));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = support::write_config(
            &dir,
            &format!(
                "[object_store]\nurl = \"file://{}\"\n[wal]\nbackend = \"object\"\n\
                 [cluster]\netcd = [\"{}\"]\nname = \"{name}\"\nlease_ttl = \"2s\"\n",
                self.root.path().join("bucket").display(),
                self.etcd.endpoint()
            ),
        );
        ServerProcess::start(&self.root.path().join(format!("{name}-data")), Some(&cfg))
    }

    fn live(&self) -> impl Iterator<Item = (usize, &ServerProcess)> {
        self.servers
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
    }

    fn hbase(&self, i: usize) -> String {
        self.servers[i]
            .as_ref()
            .expect("running")
            .hbase
            .expect("the native RPC port")
            .to_string()
    }

    fn stderr(&self) -> String {
        self.live()
            .map(|(i, s)| format!("== {}\n{}", Cluster::name(i), java::tail(&s.stderr(), 25)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn client(&self) -> shoal_client::Client {
        let addrs = self
            .live()
            .map(|(_, s)| s.grpc.to_string())
            .collect::<Vec<_>>()
            .join(",");
        self.rt
            .block_on(shoal_client::Client::connect(&addrs))
            .unwrap()
    }

    /// Creates `table` (family `cf`, six regions).
    fn create_table(&self, table: &str) {
        let client = self.client();
        self.rt
            .block_on(client.admin().create_table(
                table,
                vec![shoal_client::Admin::family("cf")],
                SPLITS.iter().map(|k| k.as_bytes().to_vec()).collect(),
            ))
            .unwrap();
    }

    /// The master's index and, per live server, the regions of `table` it
    /// serves, once every region of the table is served and every live
    /// server serves at least one.
    fn settled(&self, table: &str) -> (usize, Vec<(usize, usize)>) {
        let client = self.client();
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            let layout = self.rt.block_on(async {
                let admin = client.admin();
                let ids: Vec<String> = admin
                    .describe(table)
                    .await
                    .ok()?
                    .regions
                    .into_iter()
                    .map(|r| r.id)
                    .collect();
                let status = admin.status().await.ok()?;
                let master = (0..3).find(|&i| Cluster::name(i) == status.master)?;
                let per: Vec<(usize, usize)> = status
                    .servers
                    .iter()
                    .filter_map(|s| {
                        let i = (0..3).find(|&i| Cluster::name(i) == s.name)?;
                        Some((i, s.region_ids.iter().filter(|r| ids.contains(r)).count()))
                    })
                    .collect();
                Some((master, per, ids.len()))
            });
            if let Some((master, per, regions)) = layout {
                let live = self.live().count();
                let served: usize = per.iter().map(|(_, n)| n).sum();
                if per.len() == live && served == regions && per.iter().all(|(_, n)| *n > 0) {
                    return (master, per);
                }
            }
            assert!(
                Instant::now() < deadline,
                "table {table} not spread over the live servers in time\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// One acknowledged batch: rows acknowledged in all, when it began and
/// ended (ms since the epoch).
#[derive(Debug, Clone, Copy)]
struct Ack {
    rows: u64,
    start: u64,
    end: u64,
}

struct Writer {
    child: Child,
    acks: Receiver<Ack>,
    /// How many servers the client's registry asks (its last report; -1:
    /// it cannot tell).
    endpoints: std::sync::Arc<std::sync::atomic::AtomicI64>,
    stderr: PathBuf,
}

impl Writer {
    fn start(cp: &str, bootstrap: &str, table: &str, work: &Path) -> Writer {
        let stderr = work.join(format!("{table}.writer.stderr"));
        let mut child = java(cp, bootstrap, &["writer", table])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("start the writer");
        let (tx, acks) = channel();
        let endpoints = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(0));
        let known = endpoints.clone();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Some(n) = line.strip_prefix("endpoints ") {
                    let n = n.trim().parse().unwrap_or(-1);
                    known.store(n, std::sync::atomic::Ordering::SeqCst);
                }
                let f: Vec<u64> = line
                    .strip_prefix("acked ")
                    .map(|rest| rest.split(' ').filter_map(|x| x.parse().ok()).collect())
                    .unwrap_or_default();
                if let [rows, start, end] = f[..] {
                    let _ = tx.send(Ack { rows, start, end });
                }
            }
        });
        Writer {
            child,
            acks,
            endpoints,
            stderr,
        }
    }

    /// The next acknowledgement, or a panic naming `what`.
    fn next(&self, what: &str, cluster: &Cluster) -> Ack {
        match self.acks.recv_timeout(Duration::from_secs(40)) {
            Ok(a) => a,
            Err(_) => panic!(
                "the writer acknowledged nothing for 40 s {what} (its registry asked {} servers)\n\
                 writer stderr:\n{}\nservers:\n{}",
                self.endpoints.load(std::sync::atomic::Ordering::SeqCst),
                java::tail(
                    &std::fs::read_to_string(&self.stderr).unwrap_or_default(),
                    40
                ),
                cluster.stderr()
            ),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a kill cost the writer.
struct Recovery {
    /// From the kill to the end of the first batch begun after it.
    again: Duration,
    /// The longest time without an acknowledgement around the kill.
    longest_gap: Duration,
    /// Rows acknowledged in all when the writer was stopped.
    acked: u64,
    /// How many servers the client's registry asked at the kill.
    endpoints: i64,
}

/// Starts a writer on `table` whose only bootstrap server is `victim`,
/// kills `victim` (kill -9) once the client has refreshed its registry
/// endpoints, and measures how long writes stall.
fn kill_under_writes(cp: &str, cluster: &mut Cluster, victim: usize, table: &str) -> Recovery {
    let work = cluster.root.path().to_path_buf();
    let writer = Writer::start(cp, &cluster.hbase(victim), table, &work);
    let first = writer.next("at the start", cluster);
    // The client refreshes its endpoints from the registry (1 s after it
    // connects, then every 3 s): it should know every live server before
    // its only bootstrap server dies (it is killed after 10 s regardless,
    // and a client that knows only that server then stalls for good).
    // Writes go on for 2 s at least.
    let live = cluster.live().count() as i64;
    let mut last = first;
    loop {
        let known = writer.endpoints.load(std::sync::atomic::Ordering::SeqCst);
        let running = last.end - first.end;
        if (running >= 2_000 && (known == live || known == -1)) || running >= 10_000 {
            break;
        }
        last = writer.next("before the kill", cluster);
    }
    let (_, per) = cluster.settled(table);
    assert!(
        per.iter().any(|(i, n)| *i == victim && *n > 0),
        "the victim serves no region of {table}: {per:?}"
    );
    let endpoints = writer.endpoints.load(std::sync::atomic::Ordering::SeqCst);
    let killed = now_ms();
    cluster.servers[victim].take().unwrap().kill9();
    let mut longest_gap = 0;
    let mut again = None;
    let mut after = 0;
    while again.is_none() || after < 20 {
        let a = writer.next("after the kill", cluster);
        longest_gap = longest_gap.max(a.end.saturating_sub(last.end));
        if a.start >= killed && again.is_none() {
            again = Some(a.end - killed);
        }
        if again.is_some() {
            after += 1;
        }
        last = a;
    }
    drop(writer);
    Recovery {
        again: Duration::from_millis(again.unwrap()),
        longest_gap: Duration::from_millis(longest_gap),
        acked: last.rows,
        endpoints,
    }
}

/// Every row the writer acknowledged reads back (through the live
/// servers).
fn verify(cp: &str, cluster: &Cluster, table: &str, acked: u64) {
    let bootstrap = cluster
        .live()
        .map(|(i, _)| cluster.hbase(i))
        .collect::<Vec<_>>()
        .join(",");
    let out = java(cp, &bootstrap, &["verify", table, &acked.to_string()])
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ok every acknowledged write survived"),
        "verify {table} failed:\n{stdout}\n{}\nservers:\n{}",
        java::tail(&String::from_utf8_lossy(&out.stderr), 40),
        cluster.stderr()
    );
}

#[test]
fn the_java_client_given_one_server_survives_its_loss_and_changes_tables_through_a_follower() {
    if !etcd_support::have_etcd() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let Some(cp) = java::compile(
        work.path(),
        &[java::project().join("src/main/java/shoal/it/HBaseClientIT.java")],
    ) else {
        return;
    };
    let started = Instant::now();
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("bucket")).unwrap();
    let mut cluster = Cluster {
        etcd: etcd_support::EtcdServer::start(),
        root,
        servers: Vec::new(),
        rt: tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap(),
    };
    for i in 0..3 {
        let s = cluster.spawn(i);
        cluster.servers.push(Some(s));
    }

    // Table changes through a server that is not the master.
    cluster.create_table("it_kill_follower");
    let (master, _) = cluster.settled("it_kill_follower");
    let follower = (0..3).find(|&i| i != master).unwrap();
    let out = java(
        &cp,
        &cluster.hbase(follower),
        &["admin-via", "it_admin_via"],
    )
    .output()
    .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && stdout.contains("ok admin through a follower: create/disable/delete")
            && stdout.contains("ok table changes sent straight to a follower's MasterService"),
        "table changes through a follower failed:\n{stdout}\n{}\nservers:\n{}",
        java::tail(&String::from_utf8_lossy(&out.stderr), 60),
        cluster.stderr()
    );

    // The writer's only bootstrap server, not the master, killed for good.
    let r = kill_under_writes(&cp, &mut cluster, follower, "it_kill_follower");
    eprintln!(
        "a server that is not the master killed: writes acknowledged again {:.2} s after the \
         kill (longest gap between acknowledgements {:.2} s; the client's registry asked {} \
         servers)",
        r.again.as_secs_f64(),
        r.longest_gap.as_secs_f64(),
        r.endpoints
    );
    assert!(
        r.again < RECOVERY_GOAL,
        "writes acknowledged again only {:?} after the kill",
        r.again
    );
    verify(&cp, &cluster, "it_kill_follower", r.acked);

    // The writer's only bootstrap server, the master, killed for good.
    cluster.create_table("it_kill_master");
    let (master, _) = cluster.settled("it_kill_master");
    let r = kill_under_writes(&cp, &mut cluster, master, "it_kill_master");
    eprintln!(
        "the master killed: writes acknowledged again {:.2} s after the kill (longest gap \
         between acknowledgements {:.2} s; the client's registry asked {} servers)",
        r.again.as_secs_f64(),
        r.longest_gap.as_secs_f64(),
        r.endpoints
    );
    assert!(
        r.again < RECOVERY_GOAL,
        "writes acknowledged again only {:?} after the kill of the master",
        r.again
    );
    verify(&cp, &cluster, "it_kill_master", r.acked);
    eprintln!("done in {:.1} s", started.elapsed().as_secs_f64());
}
