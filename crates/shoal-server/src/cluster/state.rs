//! What the host knows of the cluster, shared between the cluster node
//! (which updates it every round) and the request path (which reads it,
//! through the host's seam: `seam.rs`): whether this server may serve now
//! (its lease, by its own clock), who serves each region, who is master,
//! and the cluster's counters.

pub use crate::metrics::status::{Failover, ServerView};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{RwLock, Weak};
use std::time::Instant;

/// Where a region is served, as of the last round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// Server name.
    pub name: String,
    /// Its gRPC address ("" if it is not a live member now).
    pub addr: String,
    /// Its native-RPC address ("" if none or not a live member).
    pub hbase: String,
    /// Assignment epoch.
    pub epoch: u64,
    /// True once the owner said it serves the region.
    pub open: bool,
}

/// The cluster as this server sees it.
#[derive(Debug, Default, Clone)]
pub struct Directory {
    /// Region id → owner.
    pub owners: HashMap<String, Owner>,
    /// Live servers.
    pub servers: Vec<ServerView>,
    /// The master's name and address, if any.
    pub master: Option<(String, String)>,
}

/// Shared cluster state.
#[derive(Debug)]
pub struct ClusterState {
    /// This server's name.
    pub name: String,
    started: Instant,
    /// Micros since `started` until which the lease is held (0: not held).
    lease_until_us: AtomicU64,
    /// When the lease was last renewed, micros since `started`.
    lease_renewed_us: AtomicU64,
    /// Bumped each time a lease is lost: work begun under one lease (a
    /// region's open, a write) checks it still runs under the same one.
    lease_generation: AtomicU64,
    /// Serializes changes of the lease (readers use the atomics alone).
    lease_changes: std::sync::Mutex<()>,
    is_master: AtomicBool,
    directory: RwLock<Directory>,
    /// Regions opened after their owner died (replaying its WAL).
    pub failovers: AtomicU64,
    /// Total ms those opens took.
    pub failover_ms: AtomicU64,
    /// Regions this server closed for a move or a drain.
    pub moves_out: AtomicU64,
    /// Total ms those closes took.
    pub move_ms: AtomicU64,
    /// Times this server lost its lease and gave its regions up.
    pub lease_losses: AtomicU64,
    /// Reads answered from regions closed here for a move, before their
    /// next owner opened them.
    pub move_reads: AtomicU64,
    /// Regions opened here whose former owner ended its reads when asked.
    pub move_reads_ended: AtomicU64,
    /// Regions opened here that waited out their former owner's bound on
    /// reads (it did not answer).
    pub move_reads_waited: AtomicU64,
    /// Rows taken into the row cache here from former owners' row caches
    /// when their regions moved here.
    pub handed_rows: AtomicU64,
    /// The balancer's switch as last read (master only).
    pub balancer_on: AtomicBool,
    recent: RwLock<Vec<Failover>>,
    /// etcd and the cluster's key prefix (for moves and the balancer).
    pub(crate) etcd: std::sync::OnceLock<(shoal_cluster::Etcd, String)>,
    /// Dead servers' WAL runs read recently: the regions of one dead server
    /// open together and each needs the same run (read once, kept a while).
    pub(crate) foreign_wals: tokio::sync::Mutex<
        HashMap<String, (Instant, std::sync::Arc<shoal_storage::wal::ForeignWal>)>,
    >,
    /// Held by the master's round and by a split's registration, so the
    /// round never sees a split half registered.
    pub(crate) master_work: tokio::sync::Mutex<()>,
    /// Warm handoffs to this server.
    pub(crate) handoffs: super::Handoffs,
    /// Regions given up here whose blocks the cache may still hold (for
    /// the cache report).
    pub(crate) departed: super::cache_report::Departed,
    /// Checks of the published catalog version asked for by reads
    /// (`Host::catch_up_catalog`): how many began, and (under the lock)
    /// how many ended and when one last failed.
    pub(crate) catalog_checks_begun: AtomicU64,
    pub(crate) catalog_checks: tokio::sync::Mutex<(u64, Option<Instant>)>,
    /// The cache's peer tier, once the node wired it (for its figures).
    /// Weak: the peer reads hold this state, and the cache holds them.
    peer_reads: std::sync::OnceLock<Weak<super::PeerReads>>,
}

impl ClusterState {
    /// A server named `name` that holds no lease yet.
    pub fn new(name: String) -> ClusterState {
        ClusterState {
            name,
            started: Instant::now(),
            lease_until_us: AtomicU64::new(0),
            lease_renewed_us: AtomicU64::new(0),
            lease_generation: AtomicU64::new(0),
            lease_changes: std::sync::Mutex::new(()),
            is_master: AtomicBool::new(false),
            directory: RwLock::default(),
            failovers: AtomicU64::new(0),
            failover_ms: AtomicU64::new(0),
            moves_out: AtomicU64::new(0),
            move_ms: AtomicU64::new(0),
            lease_losses: AtomicU64::new(0),
            move_reads: AtomicU64::new(0),
            move_reads_ended: AtomicU64::new(0),
            move_reads_waited: AtomicU64::new(0),
            handed_rows: AtomicU64::new(0),
            balancer_on: AtomicBool::new(true),
            recent: RwLock::default(),
            etcd: std::sync::OnceLock::new(),
            foreign_wals: tokio::sync::Mutex::default(),
            peer_reads: std::sync::OnceLock::new(),
            master_work: tokio::sync::Mutex::new(()),
            handoffs: super::Handoffs::default(),
            departed: super::cache_report::Departed::default(),
            catalog_checks_begun: AtomicU64::new(0),
            catalog_checks: tokio::sync::Mutex::new((0, None)),
        }
    }

    fn now_us(&self) -> u64 {
        self.started.elapsed().as_micros() as u64
    }

    /// True while the lease is held by this server's clock: only then may
    /// it acknowledge a write or answer a read.
    pub fn lease_held(&self) -> bool {
        self.now_us() < self.lease_until_us.load(Ordering::Acquire)
    }

    /// The lease is held until `until` (a renewal); the caller holds
    /// `lease_changes`.
    fn store_lease_until(&self, until: Instant) {
        let us = until
            .checked_duration_since(self.started)
            .map_or(0, |d| d.as_micros() as u64);
        self.lease_until_us.store(us, Ordering::Release);
        self.lease_renewed_us
            .store(self.now_us(), Ordering::Relaxed);
    }

    /// The lease is gone.
    pub fn clear_lease(&self) {
        let _change = self.lease_changes.lock().unwrap_or_else(|e| e.into_inner());
        self.drop_lease();
    }

    /// No lease, and a new generation; the caller holds `lease_changes`.
    fn drop_lease(&self) {
        self.lease_until_us.store(0, Ordering::Release);
        self.lease_generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The generation of the lease now: a watcher of one lease passes it to
    /// [`ClusterState::apply_lease`] so that it never touches a later one.
    pub fn lease_generation(&self) -> u64 {
        self.lease_generation.load(Ordering::SeqCst)
    }

    /// A change of the lease of `generation`: a renewal (`Some(until)`) or
    /// its loss (`None`). Ignored once that lease was replaced: a former
    /// lease's watcher that ends after the server rejoined must not clear
    /// or extend the new lease.
    pub fn apply_lease(&self, generation: u64, until: Option<Instant>) {
        let _change = self.lease_changes.lock().unwrap_or_else(|e| e.into_inner());
        if self.lease_generation.load(Ordering::SeqCst) != generation {
            return;
        }
        match until {
            Some(until) => self.store_lease_until(until),
            None => self.drop_lease(),
        }
    }

    /// The lease held now, as a token for [`ClusterState::holds`]; `None`
    /// if no lease is held.
    pub fn lease_token(&self) -> Option<u64> {
        let generation = self.lease_generation.load(Ordering::SeqCst);
        self.lease_held().then_some(generation)
    }

    /// True while the lease `token` named is still held: not lapsed by this
    /// server's clock, and not replaced by a newer lease after a loss (a
    /// server that rejoined holds a lease again, but not that one).
    pub fn holds(&self, token: u64) -> bool {
        self.lease_held() && self.lease_generation.load(Ordering::SeqCst) == token
    }

    /// Seconds since the last renewal (None: never held).
    pub fn lease_age_s(&self) -> Option<f64> {
        let r = self.lease_renewed_us.load(Ordering::Relaxed);
        (r > 0).then(|| (self.now_us().saturating_sub(r)) as f64 / 1e6)
    }

    /// True if this server is master now.
    pub fn is_master(&self) -> bool {
        self.is_master.load(Ordering::Acquire)
    }

    /// Sets whether this server is master.
    pub fn set_master(&self, on: bool) {
        self.is_master.store(on, Ordering::Release);
    }

    /// A copy of the directory.
    pub fn directory(&self) -> Directory {
        self.directory
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The owner of `region` as last seen.
    pub fn owner(&self, region: &str) -> Option<Owner> {
        self.directory
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .owners
            .get(region)
            .cloned()
    }

    /// The gRPC address of live server `name`, if known (without copying
    /// the directory).
    pub fn server_addr(&self, name: &str) -> Option<String> {
        self.directory
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .servers
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.addr.clone())
    }

    /// The master's address, if known.
    pub fn master_addr(&self) -> Option<String> {
        self.directory
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .master
            .as_ref()
            .map(|(_, a)| a.clone())
    }

    /// Replaces the live servers of the directory, keeping the rest (a
    /// round learns the members before it acts).
    pub fn set_servers(&self, servers: Vec<ServerView>) {
        let mut d = self.directory.write().unwrap_or_else(|e| e.into_inner());
        // Region counts as of the last full directory.
        let counts: HashMap<String, usize> = d
            .servers
            .iter()
            .map(|s| (s.name.clone(), s.regions))
            .collect();
        d.servers = servers
            .into_iter()
            .map(|mut s| {
                s.regions = counts.get(&s.name).copied().unwrap_or(0);
                s
            })
            .collect();
    }

    /// Replaces the directory (every round).
    pub fn set_directory(&self, d: Directory) {
        *self.directory.write().unwrap_or_else(|e| e.into_inner()) = d;
    }

    /// Notes a region opened after its owner died.
    pub fn record_failover(&self, region: &str, replayed_runs: usize, open_ms: u64) {
        self.failovers.fetch_add(1, Ordering::Relaxed);
        self.failover_ms.fetch_add(open_ms, Ordering::Relaxed);
        let mut recent = self.recent.write().unwrap_or_else(|e| e.into_inner());
        if recent.len() >= 20 {
            recent.remove(0);
        }
        recent.push(Failover {
            region: region.to_owned(),
            replayed_runs,
            open_ms,
            at_s: self.started.elapsed().as_secs(),
        });
    }

    /// Remembers the cache's peer tier, whose figures the status view shows.
    pub(crate) fn set_peer_reads(&self, reads: &std::sync::Arc<super::PeerReads>) {
        let _ = self.peer_reads.set(std::sync::Arc::downgrade(reads));
    }

    /// The peer reads' figures (zero while there are none).
    pub(crate) fn peer_call_stats(&self) -> super::PeerCallStats {
        self.peer_reads
            .get()
            .and_then(Weak::upgrade)
            .map(|p| p.stats())
            .unwrap_or_default()
    }

    /// The last failovers here, oldest first.
    pub fn recent_failovers(&self) -> Vec<Failover> {
        self.recent
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_lease_token_does_not_survive_a_loss_even_if_a_new_lease_is_held() {
        let s = ClusterState::new("s1".into());
        assert_eq!(s.lease_token(), None, "no lease yet");
        s.apply_lease(
            s.lease_generation(),
            Some(Instant::now() + Duration::from_secs(60)),
        );
        let token = s.lease_token().expect("held");
        assert!(s.holds(token));
        // Renewals keep the token.
        s.apply_lease(
            s.lease_generation(),
            Some(Instant::now() + Duration::from_secs(90)),
        );
        assert!(s.holds(token));
        // Lost, then a new lease after rejoining: held again, but not the
        // lease the token names.
        s.clear_lease();
        assert!(!s.holds(token));
        s.apply_lease(
            s.lease_generation(),
            Some(Instant::now() + Duration::from_secs(60)),
        );
        assert!(s.lease_held());
        assert!(!s.holds(token));
        assert!(s.lease_token().is_some_and(|t| t != token));
        // The former lease's watcher, ending late, touches nothing.
        let now = s.lease_token().expect("held");
        s.apply_lease(token, None);
        s.apply_lease(token, Some(Instant::now() + Duration::from_secs(600)));
        assert!(s.holds(now));
        // The current lease's own watcher does.
        s.apply_lease(s.lease_generation(), None);
        assert!(!s.holds(now) && !s.lease_held());
        // A lease that lapsed by the clock is not held either.
        s.apply_lease(s.lease_generation(), Some(Instant::now()));
        let lapsed = s.lease_token();
        assert_eq!(lapsed, None);
    }
}
