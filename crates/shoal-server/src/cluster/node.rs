//! The cluster node: joins at start, then one loop of rounds until stop.
//! See the module comment of `crate::cluster`.

use super::cache_report::cache_report;
use super::peer_reads::PeerReads;
use super::regions::RegionsDriver;
use super::state::{ClusterState, Directory, Owner, ServerView};
use crate::config::ClusterSection;
use crate::host::{Host, StartError};
use shoal_cluster::assignment::RegionState;
use shoal_cluster::membership::{self, JoinError, MemberInfo, Membership};
use shoal_cluster::rounds::{master_round, server_round};
use shoal_cluster::{Etcd, LeaseState};
use shoal_storage::wal::{ForeignWal, Wal, WalOptions};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Time between rounds. Each round is a handful of small etcd requests;
/// at 100 ms a dead server's regions are reassigned, opened and visible to
/// clients a few hundred ms after its lease lapses.
const ROUND: Duration = Duration::from_millis(100);
/// Time between rounds while a region of the cluster is moving (opening,
/// closing, or in a warm handoff): each step of a move (warm, close, hand
/// over, open) is seen by the next round of the server that takes it, the
/// region answers nothing from its close to its open, and clients that
/// meet it moving learn its new owner from any server's directory.
const FAST_ROUND: Duration = Duration::from_millis(20);
/// Regions moved per master round for balance.
const BALANCE_MOVES: usize = 2;
/// Time between sweeps for WAL runs nobody needs.
const WAL_GC_EVERY: Duration = Duration::from_secs(30);
/// Longest a graceful stop waits for the master to move the regions away.
const DRAIN_DEADLINE: Duration = Duration::from_secs(30);

/// A server that joined the cluster but has not opened its host yet.
pub struct JoinedCluster {
    etcd: Etcd,
    section: ClusterSection,
    membership: Membership,
    /// This server's name, address and WAL run.
    pub state: Arc<ClusterState>,
    /// The WAL run the host writes to.
    pub wal_run: String,
    addr: String,
    hbase: String,
}

impl std::fmt::Debug for JoinedCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinedCluster")
            .field("name", &self.state.name)
            .field("wal_run", &self.wal_run)
            .finish()
    }
}

/// A fresh WAL run for server `name`: `wal/<name>/<ulid>`.
fn new_run(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!(
        "wal/{safe}/{}",
        ulid::Ulid::new().to_string().to_ascii_lowercase()
    )
}

fn catalog_key(prefix: &str) -> String {
    format!("{prefix}/catalog")
}

fn balancer_key(prefix: &str) -> String {
    format!("{prefix}/balancer")
}

/// Joins as `name` at `addr` with a new WAL run, waiting out a former
/// process of the same name whose lease has not lapsed yet (a restart).
async fn join_as(
    etcd: &Etcd,
    section: &ClusterSection,
    name: &str,
    addr: &str,
    hbase: &str,
) -> Result<(Membership, String), JoinError> {
    let deadline = Instant::now() + section.lease_ttl * 3 + Duration::from_secs(2);
    loop {
        let run = new_run(name);
        let joined = Membership::join_with_native(
            etcd,
            &section.prefix,
            name,
            addr,
            &run,
            section.lease_ttl,
            hbase,
        );
        match joined.await {
            Ok(m) => return Ok((m, run)),
            Err(JoinError::NameTaken(_)) if Instant::now() < deadline => {
                tracing::info!(
                    name,
                    "a server of this name is still in the cluster (a former process whose lease has not lapsed?); waiting"
                );
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Connects to etcd and joins the cluster as the server reachable at
/// `grpc_addr` (unless `advertise_addr` says otherwise), and at `hbase`
/// for HBase's Java client ("" when the native RPC is off).
pub async fn join(
    section: &ClusterSection,
    grpc_addr: std::net::SocketAddr,
    hbase: &str,
) -> Result<JoinedCluster, StartError> {
    let addr = if section.advertise_addr.is_empty() {
        grpc_addr.to_string()
    } else {
        section.advertise_addr.clone()
    };
    let name = if section.name.is_empty() {
        addr.clone()
    } else {
        section.name.clone()
    };
    let cluster_err = |what: String| StartError::Cluster(what);
    let etcd = Etcd::connect(&section.etcd, Duration::from_secs(5))
        .await
        .map_err(|e| {
            cluster_err(format!(
                "cannot reach etcd at {}: {e} (is etcd running, and is [cluster] etcd right?)",
                section.etcd.join(",")
            ))
        })?;
    let (membership, wal_run) =
        join_as(&etcd, section, &name, &addr, hbase)
            .await
            .map_err(|e| {
                cluster_err(format!(
                    "joining the cluster at {}: {e}",
                    section.etcd.join(",")
                ))
            })?;
    let state = Arc::new(ClusterState::new(name));
    let _ = state.etcd.set((etcd.clone(), section.prefix.clone()));
    watch_lease(&membership, &state);
    Ok(JoinedCluster {
        etcd,
        section: section.clone(),
        membership,
        state,
        wal_run,
        addr,
        hbase: hbase.to_owned(),
    })
}

/// Copies the lease's state into `state` as it changes (the request path
/// reads it on every call).
fn watch_lease(membership: &Membership, state: &Arc<ClusterState>) {
    let mut rx = membership.lease().watch();
    let state = state.clone();
    // This lease's generation: once it is lost (and the server rejoined
    // with another), this watcher's late changes are ignored.
    let generation = state.lease_generation();
    let apply = move |s: LeaseState, state: &ClusterState| match s {
        LeaseState::Held { until } => state.apply_lease(generation, Some(until.into_std())),
        LeaseState::Lost => state.apply_lease(generation, None),
    };
    apply(*rx.borrow(), &state);
    tokio::spawn(async move {
        while rx.changed().await.is_ok() {
            let s = *rx.borrow();
            apply(s, &state);
            if s == LeaseState::Lost {
                return;
            }
        }
        apply(LeaseState::Lost, &state);
    });
}

/// With `cluster.peer_reads` on and a block cache: the cache's peer tier
/// (blocks of a region that moved here are asked of its former owner before
/// the object store), wired into `host`'s cache before any region opens.
fn wire_peer_reads(host: &Host, state: &Arc<ClusterState>) -> Option<Arc<PeerReads>> {
    let cache = host.cache()?;
    if !host.config().cluster.as_ref().is_some_and(|c| c.peer_reads) {
        return None;
    }
    let reads = Arc::new(PeerReads::new(
        host.config().clone(),
        host.security().clone(),
        state.clone(),
    ));
    cache.set_peer_tier(Some(reads.clone()));
    state.set_peer_reads(&reads);
    Some(reads)
}

/// The running node.
pub struct ClusterNode {
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<Loop>,
    host: Host,
}

impl std::fmt::Debug for ClusterNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterNode").finish()
    }
}

struct Loop {
    host: Host,
    /// Opens and closes the regions the rounds assign here.
    regions: RegionsDriver,
    etcd: Etcd,
    section: ClusterSection,
    state: Arc<ClusterState>,
    addr: String,
    hbase: String,
    membership: Option<Membership>,
    run: String,
    was_master: bool,
    last_gc: Instant,
    last_error: Option<Instant>,
    /// When this server last published its cache report (`None`: never),
    /// and the time until the next: [`super::cache_report::REPORT_EVERY`],
    /// or 20 times what the last report took to make if longer (a server
    /// with millions of blocks spends at most 5 % of a core on them).
    last_report: Option<Instant>,
    report_every: Duration,
    /// A region was moving at the last round: the next comes after
    /// [`FAST_ROUND`].
    moving: bool,
    /// The cluster's cache facts as the master last read them, and when.
    facts: (shoal_cluster::cache_facts::CacheFacts, Option<Instant>),
}

impl ClusterNode {
    /// Starts the node's loop for `host`, which was opened on `joined`'s run
    /// (with `joined.state` as its seam), after wiring the peer reads into
    /// its block cache.
    pub fn start(joined: JoinedCluster, host: Host) -> ClusterNode {
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let peer_reads = wire_peer_reads(&host, &joined.state);
        let mut l = Loop {
            host: host.clone(),
            regions: RegionsDriver::new(host.clone(), joined.state.clone(), peer_reads),
            etcd: joined.etcd,
            section: joined.section,
            state: joined.state,
            addr: joined.addr,
            hbase: joined.hbase,
            membership: Some(joined.membership),
            run: joined.wal_run,
            was_master: false,
            last_gc: Instant::now(),
            last_error: None,
            last_report: None,
            moving: false,
            report_every: super::cache_report::REPORT_EVERY,
            facts: Default::default(),
        };
        let task = tokio::spawn(async move {
            loop {
                l.round().await;
                let pause = if l.moving { FAST_ROUND } else { ROUND };
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = stopped.changed() => break,
                }
            }
            l
        });
        ClusterNode { stop, task, host }
    }

    /// Graceful stop: says this server is draining, keeps running rounds
    /// (closing, flushed, each region the master moves away) until nothing
    /// is open here and the next owners have ended the reads of every copy
    /// closed here (`move_reads.rs`; else each would wait out its bound),
    /// or [`DRAIN_DEADLINE`] passes, then leaves the cluster.
    /// Regions still here are closed (flushed) by the host's shutdown; their
    /// next owner replays nothing past that flush.
    pub async fn drain_and_leave(self) {
        let started = Instant::now();
        let _ = self.stop.send(true);
        let Ok(mut l) = self.task.await else {
            return;
        };
        let drained = match l.membership.as_ref() {
            Some(m) if m.is_member() => m.drain().await,
            _ => return,
        };
        if let Err(e) = drained {
            tracing::warn!(error = %e, "could not say this server is draining; its regions will be replayed by their next owners");
        } else {
            tracing::info!("draining: the master moves this server's regions away");
            while started.elapsed() < DRAIN_DEADLINE && l.held() {
                l.round().await;
                if self.host.open_region_ids().is_empty() && self.host.closed_copies() == 0 {
                    break;
                }
                tokio::time::sleep(if l.moving { FAST_ROUND } else { ROUND }).await;
            }
            tracing::info!(
                left_open = self.host.open_region_ids().len(),
                elapsed_ms = started.elapsed().as_millis() as u64,
                "drained"
            );
        }
        if let Some(m) = l.membership.take()
            && let Err(e) = m.leave().await
        {
            tracing::warn!(error = %e, "leaving the cluster failed; the lease lapses by itself");
        }
    }
}

impl Loop {
    fn held(&self) -> bool {
        self.membership.as_ref().is_some_and(Membership::is_member)
    }

    /// Logs an etcd failure, at most one warning per 5 s.
    fn etcd_failed(&mut self, what: &str, e: &dyn std::fmt::Display) {
        if self
            .last_error
            .is_none_or(|t| t.elapsed() > Duration::from_secs(5))
        {
            tracing::warn!(error = %e, "{what} failed; retrying every round");
            self.last_error = Some(Instant::now());
        }
    }

    /// One round: lead (campaign, and take over as master), publish the
    /// cache report when due, the master's work or following the catalog,
    /// then this server's round over its assignments, and the directory
    /// clients are pointed with. A lost lease fences and rejoins instead.
    async fn round(&mut self) {
        if !self.held() {
            self.fence_and_rejoin().await;
            return;
        }
        let prefix = self.section.prefix.clone();
        let Some((master, is_master)) = self.lead().await else {
            return;
        };
        self.publish_cache_report_when_due(&prefix).await;
        if is_master {
            if let Err(e) = self.master_work(&prefix).await {
                self.etcd_failed("the master's round", &e);
            }
        } else if let Err(e) = self.follow_catalog(&prefix).await {
            self.etcd_failed("following the catalog", &e);
        }
        // The members first: this round's warm handoffs ask the regions'
        // owners for blocks by their addresses, which a server that just
        // joined knows only from here (its first round had none, and its
        // warm-ups went to the object store).
        let members = match membership::members(&self.etcd, &prefix).await {
            Ok(m) => m,
            Err(e) => {
                self.etcd_failed("reading the members", &e);
                return;
            }
        };
        let servers: Vec<ServerView> = members
            .iter()
            .map(|m| ServerView {
                name: m.name.clone(),
                addr: m.addr.clone(),
                hbase: m.hbase.clone(),
                regions: 0,
            })
            .collect();
        self.state.set_servers(servers.clone());
        let run = self.run.clone();
        let name = self.state.name.clone();
        let round = match server_round(&self.etcd, &prefix, &name, &run, &self.regions).await {
            Ok(r) => r,
            Err(e) => {
                self.etcd_failed("this server's round", &e);
                return;
            }
        };
        // Any move in the cluster: every server's directory (what clients
        // are pointed with when a region moves) follows it closely too.
        self.moving = round.records.values().any(|(a, _)| {
            a.to.is_some() || matches!(a.state, RegionState::Opening | RegionState::Closing)
        });
        self.state
            .set_directory(directory(&round, &members, servers, master));
    }

    /// Campaigns for master (one transaction: take the key if free, else
    /// read who holds it) and notes whether this server is master; a new
    /// master first reads the catalog, starting from what the object store
    /// and etcd hold. Returns who is master (`None` inside: nobody) and
    /// whether it is this server, or `None` if the round cannot go on.
    async fn lead(&mut self) -> Option<(Option<String>, bool)> {
        let membership = self.membership.as_ref()?;
        let master = match membership.campaign_for_master().await {
            Ok(m) => m,
            Err(e) => {
                self.etcd_failed("campaigning for master", &e);
                return None;
            }
        };
        let is_master = master.as_deref() == Some(membership.info().name.as_str());
        self.state.set_master(is_master);
        if is_master && !self.was_master {
            // A new master starts from what the object store and etcd hold.
            let mut catalog = self.host.lock_catalog().await;
            if let Err(e) = self.host.reload_catalog(&mut catalog).await {
                tracing::warn!(error = %e, "reading the catalog as the new master failed");
                return None;
            }
        }
        self.was_master = is_master;
        Some((master, is_master))
    }

    /// Publishes the cache report if the last is older than the interval
    /// (which grows to 20 times what making the report took).
    async fn publish_cache_report_when_due(&mut self, prefix: &str) {
        if self
            .last_report
            .is_none_or(|t| t.elapsed() >= self.report_every)
        {
            self.last_report = Some(Instant::now());
            match self.publish_cache_report(prefix).await {
                Ok(took) => {
                    self.report_every = super::cache_report::REPORT_EVERY.max(took * 20);
                }
                Err(e) => self.etcd_failed("publishing the cache report", &e),
            }
        }
    }

    /// Publishes what this server's cache holds per region (bound to its
    /// lease), computed off the async runtime. Returns how long making the
    /// report took.
    async fn publish_cache_report(
        &self,
        prefix: &str,
    ) -> Result<Duration, shoal_cluster::EtcdError> {
        let Some(lease) = self.membership.as_ref().map(|m| m.lease().id()) else {
            return Ok(Duration::ZERO);
        };
        let (host, state) = (self.host.clone(), self.state.clone());
        let started = Instant::now();
        let Ok(report) =
            tokio::task::spawn_blocking(move || cache_report(&host, &state.name, &state.departed))
                .await
        else {
            return Ok(Duration::ZERO);
        };
        let took = started.elapsed();
        shoal_cluster::cache_facts::publish(&self.etcd, prefix, &report, lease).await?;
        Ok(took)
    }

    /// Master: publish the catalog version, run the master's round, and
    /// now and then delete WAL runs nobody needs.
    async fn master_work(&mut self, prefix: &str) -> Result<(), shoal_cluster::EtcdError> {
        let state = self.state.clone();
        let _exclusive = state.master_work.lock().await;
        let (version, catalog) = {
            let c = self.host.lock_catalog().await;
            (c.version(), c.current().clone())
        };
        let key = catalog_key(prefix);
        let published = self
            .etcd
            .get(key.as_bytes())
            .await?
            .and_then(|kv| String::from_utf8_lossy(&kv.value).parse::<u64>().ok())
            .unwrap_or(0);
        if version > published {
            self.etcd
                .put(key.as_bytes(), version.to_string().as_bytes(), 0)
                .await?;
        }
        let mut required = Vec::new();
        let mut known = BTreeSet::new();
        for t in &catalog.tables {
            for r in &t.regions {
                known.insert(r.id.clone());
                if t.enabled {
                    required.push(r.id.clone());
                }
            }
        }
        let balancer_on = self
            .etcd
            .get(balancer_key(prefix).as_bytes())
            .await?
            .is_none_or(|kv| kv.value != b"off");
        self.state.balancer_on.store(balancer_on, Ordering::Relaxed);
        let moves = if balancer_on { BALANCE_MOVES } else { 0 };
        let policy = self.host.config().cluster.as_ref().map_or(
            shoal_cluster::rounds::Policy {
                max_moves: moves,
                ..Default::default()
            },
            |c| shoal_cluster::rounds::Policy {
                max_moves: moves,
                retain: c.retain,
                warm_moves: c.peer_reads && !c.handoff_warmup.is_zero(),
                cache_aware: c.cache_aware,
                max_moving: c.max_moving_regions,
            },
        );
        // The servers' cache facts change every few seconds: read them at
        // most once per report interval.
        if self
            .facts
            .1
            .is_none_or(|t| t.elapsed() >= super::cache_report::REPORT_EVERY / 2)
        {
            self.facts = (
                shoal_cluster::cache_facts::read_all(&self.etcd, prefix).await?,
                Some(Instant::now()),
            );
        }
        let round =
            master_round(&self.etcd, prefix, &required, &known, policy, &self.facts.0).await?;
        if round.assigned + round.moves + round.retired > 0 {
            tracing::info!(
                assigned = round.assigned,
                moves = round.moves,
                retired = round.retired,
                conflicts = round.conflicts,
                "master round"
            );
        }
        if self.last_gc.elapsed() >= WAL_GC_EVERY {
            self.last_gc = Instant::now();
            self.collect_wal_runs(prefix).await?;
        }
        Ok(())
    }

    /// Deletes WAL runs that no assignment record and no live member names:
    /// every region logged there was flushed or replayed and logged again.
    async fn collect_wal_runs(&self, prefix: &str) -> Result<(), shoal_cluster::EtcdError> {
        let records = shoal_cluster::assignment::read_all(&self.etcd, prefix).await?;
        let members = membership::members(&self.etcd, prefix).await?;
        let mut needed: HashSet<String> = members.into_iter().map(|m| m.wal).collect();
        for (a, _) in records.values() {
            needed.extend(a.replay.iter().cloned());
            needed.extend(a.owner_wal.iter().cloned());
        }
        let bucket = self.host.bucket();
        // Delimiter listings: never pages through the segments (with the
        // point-in-time window on, a day of them).
        let runs = match shoal_storage::wal::wal_prefixes(bucket, "wal").await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "listing WAL runs failed; retried later");
                return Ok(());
            }
        };
        let history = self.host.point_in_time().map(|p| p.history());
        for run in runs {
            if needed.contains(&run) {
                continue;
            }
            if let Some(window) = history {
                // Kept for the point-in-time window, then swept whole.
                retire_wal_run(bucket, &run, window).await;
                continue;
            }
            match ForeignWal::delete(bucket, &run).await {
                Ok(n) => {
                    tracing::info!(run = %run, objects = n, "WAL run no longer needed; deleted")
                }
                Err(e) => {
                    tracing::warn!(run = %run, error = %e, "deleting a WAL run failed; retried later")
                }
            }
        }
        Ok(())
    }

    /// Not master: read the catalog again when the master published a newer
    /// version, and the balancer's switch.
    async fn follow_catalog(&mut self, prefix: &str) -> Result<(), shoal_cluster::EtcdError> {
        // The balancer's switch, for this server's status answers.
        let balancer_on = self
            .etcd
            .get(balancer_key(prefix).as_bytes())
            .await?
            .is_none_or(|kv| kv.value != b"off");
        self.state.balancer_on.store(balancer_on, Ordering::Relaxed);
        let Some(kv) = self.etcd.get(catalog_key(prefix).as_bytes()).await? else {
            return Ok(());
        };
        let published = String::from_utf8_lossy(&kv.value)
            .parse::<u64>()
            .unwrap_or(0);
        let mut catalog = self.host.lock_catalog().await;
        if published > catalog.version()
            && let Err(e) = self.host.reload_catalog(&mut catalog).await
        {
            tracing::warn!(error = %e, "reading the catalog failed; retried next round");
        }
        Ok(())
    }

    /// The lease is gone: give every region up (no flush: another server
    /// may own them now), then join again with a new WAL run.
    async fn fence_and_rejoin(&mut self) {
        if let Some(old) = self.membership.take() {
            self.state.clear_lease();
            self.state.set_master(false);
            self.was_master = false;
            let n = self.host.abandon_all();
            self.state.lease_losses.fetch_add(1, Ordering::Relaxed);
            tracing::error!(
                regions = n,
                "lost the cluster lease: stopped answering and gave every region up; rejoining"
            );
            drop(old);
        }
        if self.host.is_stopping() {
            return;
        }
        let name = self.state.name.clone();
        let addr = self.addr.clone();
        let hbase = self.hbase.clone();
        let (membership, run) = match join_as(&self.etcd, &self.section, &name, &addr, &hbase).await
        {
            Ok(j) => j,
            Err(e) => {
                self.etcd_failed("rejoining the cluster", &e);
                return;
            }
        };
        let wal = match Wal::open(WalOptions::object(self.host.bucket().clone(), run.clone())).await
        {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!(error = %e, "opening a new WAL run failed; rejoining again");
                let _ = membership.leave().await;
                return;
            }
        };
        self.host.swap_wal(wal);
        watch_lease(&membership, &self.state);
        tracing::info!(run = %run, "rejoined the cluster");
        self.run = run;
        self.membership = Some(membership);
    }
}

/// The directory clients are pointed with, from this server's `round`:
/// each region's owner (by the `members`' addresses; open once it says it
/// serves and is a live member), the live `servers` with the regions each
/// serves, and `master` as the campaign at the start of the round found it.
fn directory(
    round: &shoal_cluster::rounds::ServerRound,
    members: &[MemberInfo],
    servers: Vec<ServerView>,
    master: Option<String>,
) -> Directory {
    let mut d = Directory {
        servers,
        ..Directory::default()
    };
    for (region, (a, _)) in &round.records {
        let Some(owner) = a.owner.clone() else {
            continue;
        };
        let (addr, hbase) = members
            .iter()
            .find(|m| m.name == owner)
            .map(|m| (m.addr.clone(), m.hbase.clone()))
            .unwrap_or_default();
        let open = a.state == RegionState::Open && !addr.is_empty();
        if open && let Some(s) = d.servers.iter_mut().find(|s| s.name == owner) {
            s.regions += 1;
        }
        d.owners.insert(
            region.clone(),
            Owner {
                name: owner,
                addr,
                hbase,
                epoch: a.epoch,
                open,
            },
        );
    }
    d.master = master.map(|name| {
        let addr = members
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.addr.clone())
            .unwrap_or_default();
        (name, addr)
    });
    d
}

/// With the point-in-time window on, a dead run's WAL is kept for the
/// window (its `history.json` says it is all flushed), and deleted whole
/// once it has aged out.
async fn retire_wal_run(
    bucket: &shoal_storage::object::Bucket,
    run: &str,
    window: std::time::Duration,
) {
    if let Err(e) = ForeignWal::retire(bucket, run, window).await {
        tracing::warn!(run = %run, error = %e, "retiring a WAL run failed; retried later");
        return;
    }
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    match shoal_storage::wal::sweep_history(bucket, &[run.to_string()], window, now_ms).await {
        Ok(r) if !r.prefixes_deleted.is_empty() => {
            tracing::info!(run = %run, objects = r.objects_deleted, "WAL run past the point-in-time window; deleted")
        }
        Ok(_) => {}
        Err(e) => {
            tracing::warn!(run = %run, error = %e, "sweeping a WAL run failed; retried later")
        }
    }
}
