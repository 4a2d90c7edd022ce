//! The assignment state machine against a real etcd, with three in-process
//! servers whose hosts only record what they open: every region ends up
//! served once and the load even; a server that dies (its keep-alives stop)
//! has its regions reassigned after its lease expires, each with the dead
//! server's WAL run to replay; the master dies and another resumes from etcd.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use shoal_cluster::assignment::{MoveReads, RegionState, read_all};
use shoal_cluster::rounds::Policy;
use shoal_cluster::rounds::{RegionHost, RegionHostError, master_round, server_round};
use shoal_cluster::{Etcd, Membership};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use support::{EtcdServer, have_etcd};

const PREFIX: &str = "/shoal-rounds";
const TTL: Duration = Duration::from_secs(2);

/// A host that records its open regions and what it was told to replay.
#[derive(Default)]
struct FakeHost {
    open: Mutex<BTreeSet<String>>,
    replayed: Mutex<BTreeMap<String, Vec<String>>>,
    /// Per region opened: the server it was told served it before.
    last_owner: Mutex<BTreeMap<String, Option<String>>>,
    /// Warm handoffs asked of this host: (region, owner), once each.
    warmed: Mutex<BTreeSet<(String, String)>>,
    /// Never finish a warm-up.
    hold: std::sync::atomic::AtomicBool,
    /// Never finish the warm-up of these regions.
    hold_regions: Mutex<BTreeSet<String>>,
    /// Closes for a move keep answering reads (for 2 s at most).
    keep_reads: std::sync::atomic::AtomicBool,
    /// Regions closed here whose reads go on.
    reading: Mutex<BTreeSet<String>>,
    /// Per region opened: the former owner it was told still reads it.
    reads_at: Mutex<BTreeMap<String, Option<MoveReads>>>,
}

impl RegionHost for FakeHost {
    async fn open(
        &self,
        region: &str,
        _epoch: u64,
        replay: &[String],
        last_owner: Option<&str>,
        reads_at: Option<&MoveReads>,
    ) -> Result<(), RegionHostError> {
        self.open.lock().unwrap().insert(region.to_owned());
        self.reads_at
            .lock()
            .unwrap()
            .insert(region.to_owned(), reads_at.cloned());
        self.last_owner
            .lock()
            .unwrap()
            .insert(region.to_owned(), last_owner.map(str::to_owned));
        self.replayed
            .lock()
            .unwrap()
            .insert(region.to_owned(), replay.to_vec());
        Ok(())
    }

    async fn close(
        &self,
        region: &str,
        handoff: bool,
    ) -> Result<Option<Duration>, RegionHostError> {
        self.open.lock().unwrap().remove(region);
        if handoff && self.keep_reads.load(std::sync::atomic::Ordering::Relaxed) {
            self.reading.lock().unwrap().insert(region.to_owned());
            return Ok(Some(Duration::from_secs(2)));
        }
        Ok(None)
    }

    fn end_reads(&self, region: &str) {
        self.reading.lock().unwrap().remove(region);
    }

    fn open_regions(&self) -> Vec<String> {
        self.open.lock().unwrap().iter().cloned().collect()
    }

    fn warm_up(&self, region: &str, _epoch: u64, owner: &str) -> bool {
        if self.hold.load(std::sync::atomic::Ordering::Relaxed)
            || self.hold_regions.lock().unwrap().contains(region)
        {
            return false;
        }
        // Done on the second call: the owner serves for at least a round.
        !self
            .warmed
            .lock()
            .unwrap()
            .insert((region.to_owned(), owner.to_owned()))
    }
}

struct Server {
    member: Membership,
    host: FakeHost,
    wal: String,
}

async fn server(etcd: &Etcd, name: &str) -> Server {
    Server {
        member: Membership::join(
            etcd,
            PREFIX,
            name,
            &format!("{name}:7070"),
            &format!("wal/{name}/run1"),
            TTL,
        )
        .await
        .unwrap(),
        host: FakeHost::default(),
        wal: format!("wal/{name}/run1"),
    }
}

/// One round everywhere: whoever is master plans, every server acts.
async fn round(etcd: &Etcd, servers: &[&Server], regions: &[String]) {
    round_retaining(etcd, servers, regions, Duration::ZERO).await
}

async fn round_retaining(etcd: &Etcd, servers: &[&Server], regions: &[String], retain: Duration) {
    round_with(
        etcd,
        servers,
        regions,
        Policy {
            max_moves: 2,
            retain,
            warm_moves: false,
            cache_aware: true,
            max_moving: 0,
        },
    )
    .await
}

async fn round_with(etcd: &Etcd, servers: &[&Server], regions: &[String], policy: Policy) {
    for s in servers {
        if s.member.campaign().await.unwrap() {
            let facts = shoal_cluster::cache_facts::read_all(etcd, PREFIX)
                .await
                .unwrap();
            master_round(
                etcd,
                PREFIX,
                regions,
                &regions.iter().cloned().collect(),
                policy,
                &facts,
            )
            .await
            .unwrap();
        }
    }
    for s in servers {
        server_round(etcd, PREFIX, &s.member.info().name, &s.wal, &s.host)
            .await
            .unwrap();
    }
}

/// Rounds until every region is open on exactly one of `servers`.
async fn settle(etcd: &Etcd, servers: &[&Server], regions: &[String], limit: Duration) {
    let start = Instant::now();
    loop {
        round(etcd, servers, regions).await;
        let records = read_all(etcd, PREFIX).await.unwrap();
        let all_open = regions.iter().all(|r| {
            records
                .get(r)
                .is_some_and(|(a, _)| a.state == RegionState::Open)
        });
        let total: usize = servers
            .iter()
            .map(|s| s.host.open.lock().unwrap().len())
            .sum();
        if all_open && total == regions.len() {
            return;
        }
        assert!(start.elapsed() < limit, "not settled: {records:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A fresh etcd and a client of it (keep the server alive with the client).
async fn etcd() -> (EtcdServer, Etcd) {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&[server.endpoint()], Duration::from_secs(2))
        .await
        .unwrap();
    (server, etcd)
}

fn loads(servers: &[&Server]) -> Vec<usize> {
    servers
        .iter()
        .map(|s| s.host.open.lock().unwrap().len())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regions_are_served_once_and_move_when_a_server_or_the_master_dies() {
    if !have_etcd() {
        return;
    }
    let (_etcd_server, etcd) = etcd().await;
    let regions: Vec<String> = (0..9).map(|i| format!("r{i}")).collect();
    let a = server(&etcd, "a").await;
    let b = server(&etcd, "b").await;
    let c = server(&etcd, "c").await;
    settle(&etcd, &[&a, &b, &c], &regions, Duration::from_secs(20)).await;
    assert_eq!(loads(&[&a, &b, &c]), [3, 3, 3]);
    let c_regions: Vec<String> = c.host.open_regions();
    let b_first: Vec<String> = b.host.open_regions();

    // c dies: its lease lapses, its regions go to a and b, each told to
    // replay c's WAL run.
    drop(c.member);
    settle(&etcd, &[&a, &b], &regions, Duration::from_secs(20)).await;
    let mut l = loads(&[&a, &b]);
    l.sort();
    assert_eq!(l, [4, 5]);
    for r in &c_regions {
        let told = [&a, &b]
            .iter()
            .find_map(|s| s.host.replayed.lock().unwrap().get(r).cloned())
            .unwrap();
        assert_eq!(told, ["wal/c/run1"], "{r}");
        // ... and told c served it: c's L2 may come back with c.
        let last = [&a, &b]
            .iter()
            .find_map(|s| s.host.last_owner.lock().unwrap().get(r).cloned())
            .unwrap();
        assert_eq!(last.as_deref(), Some("c"), "{r}");
    }
    // A region first opened names no former owner.
    for r in &b_first {
        assert_eq!(b.host.last_owner.lock().unwrap().get(r), Some(&None), "{r}");
    }

    // A graceful move: b's region goes to a, which is told b served it,
    // and that b still answers its reads (b closed it keeping them on).
    b.host
        .keep_reads
        .store(true, std::sync::atomic::Ordering::Relaxed);
    let moving = b_first[0].clone();
    shoal_cluster::assignment::request_move(&etcd, PREFIX, &moving, "a")
        .await
        .unwrap()
        .unwrap();
    let start = Instant::now();
    while !a.host.open.lock().unwrap().contains(&moving) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the move never finished"
        );
        round(&etcd, &[&a, &b], &regions).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        a.host.last_owner.lock().unwrap().get(&moving),
        Some(&Some("b".to_owned()))
    );
    assert!(b.host.reading.lock().unwrap().contains(&moving));
    assert_eq!(
        a.host.reads_at.lock().unwrap().get(&moving),
        Some(&Some(MoveReads {
            server: "b".into(),
            bound_ms: 2_000
        }))
    );
    // Once open, the record no longer names them (the open ended them).
    let (record, _) = read_all(&etcd, PREFIX).await.unwrap()[&moving].clone();
    assert_eq!((record.state, record.reads_at), (RegionState::Open, None));
    settle(&etcd, &[&a, &b], &regions, Duration::from_secs(20)).await;

    // The master (a) dies: b becomes master and takes a's regions.
    assert_eq!(
        shoal_cluster::membership::master(&etcd, PREFIX)
            .await
            .unwrap()
            .as_deref(),
        Some("a")
    );
    drop(a.member);
    settle(&etcd, &[&b], &regions, Duration::from_secs(20)).await;
    assert_eq!(loads(&[&b]), [9]);
    assert_eq!(
        shoal_cluster::membership::master(&etcd, PREFIX)
            .await
            .unwrap()
            .as_deref(),
        Some("b")
    );
    // Epochs only grew: a region that moved carries a higher epoch than its
    // first assignment; those b served from the start never moved (but the
    // one moved to a and back).
    let records = read_all(&etcd, PREFIX).await.unwrap();
    for (region, (r, _)) in &records {
        let expected_moved = !b_first.contains(region) || *region == moving;
        assert_eq!(r.epoch >= 2, expected_moved, "{region}: epoch {}", r.epoch);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_back_within_the_retain_bound_gets_its_regions_back() {
    if !have_etcd() {
        return;
    }
    let (_etcd_server, etcd) = etcd().await;
    let regions: Vec<String> = (0..6).map(|i| format!("r{i}")).collect();
    let a = server(&etcd, "a").await;
    let b = server(&etcd, "b").await;
    settle(&etcd, &[&a, &b], &regions, Duration::from_secs(20)).await;
    let b_regions = b.host.open_regions();
    assert_eq!(b_regions.len(), 3);
    // b dies: a serves everything meanwhile.
    drop(b.member);
    settle(&etcd, &[&a], &regions, Duration::from_secs(20)).await;
    assert_eq!(loads(&[&a]), [6]);
    // b comes back (same name, new lease) within the bound: its own three
    // regions go back to it, each told that a served it meanwhile.
    let b = server(&etcd, "b").await;
    let start = Instant::now();
    loop {
        round_retaining(&etcd, &[&a, &b], &regions, Duration::from_secs(30)).await;
        let mut back = b.host.open_regions();
        back.sort();
        if back == b_regions && a.host.open_regions().len() == 3 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "b has {back:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for r in &b_regions {
        assert_eq!(
            b.host.last_owner.lock().unwrap().get(r),
            Some(&Some("a".to_owned())),
            "{r}"
        );
    }
    // Home for good: more rounds move nothing.
    for _ in 0..5 {
        round_retaining(&etcd, &[&a, &b], &regions, Duration::from_secs(30)).await;
    }
    let mut back = b.host.open_regions();
    back.sort();
    assert_eq!(back, b_regions);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_move_keeps_the_owner_serving_until_the_target_is_warm() {
    if !have_etcd() {
        return;
    }
    let (_etcd_server, etcd) = etcd().await;
    let regions: Vec<String> = (0..4).map(|i| format!("r{i}")).collect();
    let a = server(&etcd, "a").await;
    settle(&etcd, &[&a], &regions, Duration::from_secs(20)).await;
    let warm = Policy {
        max_moves: 2,
        retain: Duration::ZERO,
        warm_moves: true,
        cache_aware: true,
        max_moving: 0,
    };
    // b joins: the balancer moves two regions to it, each warmed first.
    let b = server(&etcd, "b").await;
    // Round 1: the master asks for two warm handoffs; b starts warming
    // (not done yet): a still serves all four.
    round_with(&etcd, &[&a, &b], &regions, warm).await;
    assert_eq!(loads(&[&a, &b]), [4, 0]);
    let records = read_all(&etcd, PREFIX).await.unwrap();
    let warming: Vec<&String> = records
        .iter()
        .filter(|(_, (r, _))| r.state == RegionState::Open && r.to.as_deref() == Some("b"))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(warming.len(), 2, "{records:?}");
    // A second balancing round plans no more moves meanwhile.
    let start = Instant::now();
    loop {
        round_with(&etcd, &[&a, &b], &regions, warm).await;
        if loads(&[&a, &b]) == [2, 2] {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            loads(&[&a, &b])
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Exactly the two warmed regions moved, each warmed from a, and each
    // opened on b naming a as the server that served it.
    let warmed = b.host.warmed.lock().unwrap().clone();
    assert_eq!(warmed.len(), 2, "{warmed:?}");
    for (region, owner) in &warmed {
        assert_eq!(owner, "a");
        assert!(b.host.open.lock().unwrap().contains(region));
        assert_eq!(
            b.host.last_owner.lock().unwrap().get(region),
            Some(&Some("a".to_owned()))
        );
    }
    // A target that dies mid-handoff: the region stays with its owner.
    let c = server(&etcd, "c").await;
    round_with(&etcd, &[&a, &b, &c], &regions, warm).await;
    let records = read_all(&etcd, PREFIX).await.unwrap();
    assert!(
        records.values().any(|(r, _)| r.to.as_deref() == Some("c")),
        "{records:?}"
    );
    drop(c.member);
    let start = Instant::now();
    loop {
        round_with(&etcd, &[&a, &b], &regions, warm).await;
        let records = read_all(&etcd, PREFIX).await.unwrap();
        if records
            .values()
            .all(|(r, _)| r.to.is_none() && r.state == RegionState::Open)
        {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{records:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(loads(&[&a, &b]), [2, 2]);

    // An owner that dies mid-handoff: its region is served again by
    // failover, without waiting for the target (which never gets warm).
    let d = server(&etcd, "d").await;
    d.host
        .hold
        .store(true, std::sync::atomic::Ordering::Relaxed);
    round_with(&etcd, &[&a, &b, &d], &regions, warm).await;
    let records = read_all(&etcd, PREFIX).await.unwrap();
    let (moving, owner) = records
        .iter()
        .find_map(|(k, (r, _))| {
            (r.to.as_deref() == Some("d")).then(|| (k.clone(), r.owner.clone().unwrap()))
        })
        .expect("a handoff to d");
    let survivor = if owner == "a" {
        drop(a.member);
        b
    } else {
        drop(b.member);
        a
    };
    let start = Instant::now();
    loop {
        round_with(&etcd, &[&survivor, &d], &regions, warm).await;
        let records = read_all(&etcd, PREFIX).await.unwrap();
        let served = records.get(&moving).is_some_and(|(r, _)| {
            r.state == RegionState::Open && r.owner.as_deref() != Some(owner.as_str())
        });
        if served && loads(&[&survivor, &d]).iter().sum::<usize>() == regions.len() {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{records:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// a serving four regions, b joined, and one master round that planned
/// two warm handoffs from a to b.
async fn two_warm_handoffs_to_b(etcd: &Etcd) -> (Server, Server) {
    let regions: Vec<String> = (0..4).map(|i| format!("r{i}")).collect();
    let a = server(etcd, "a").await;
    settle(etcd, &[&a], &regions, Duration::from_secs(20)).await;
    let b = server(etcd, "b").await;
    let warm = Policy {
        max_moves: 2,
        retain: Duration::ZERO,
        warm_moves: true,
        cache_aware: true,
        max_moving: 0,
    };
    round_with(etcd, &[&a, &b], &regions, warm).await;
    (a, b)
}

/// One round of each server's own, no master round.
async fn servers_only(etcd: &Etcd, servers: &[&Server]) {
    for s in servers {
        server_round(etcd, PREFIX, &s.member.info().name, &s.wal, &s.host)
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_hands_a_moved_region_straight_to_its_target() {
    if !have_etcd() {
        return;
    }
    let (_etcd_server, etcd) = etcd().await;
    // One master round plans two warm handoffs to b; from then on only
    // the two servers' own rounds run: no master round.
    let (a, b) = two_warm_handoffs_to_b(&etcd).await;
    let epochs: std::collections::BTreeMap<String, u64> = read_all(&etcd, PREFIX)
        .await
        .unwrap()
        .into_iter()
        .map(|(k, (r, _))| (k, r.epoch))
        .collect();
    // b warms (done on its second look), asks a to close; a closes and
    // hands each region to b; b opens them.
    for _ in 0..4 {
        servers_only(&etcd, &[&a, &b]).await;
    }
    assert_eq!(loads(&[&a, &b]), [2, 2]);
    let records = read_all(&etcd, PREFIX).await.unwrap();
    let b_run = b.wal.clone();
    let moved: Vec<_> = records
        .iter()
        .filter(|(_, (r, _))| r.owner.as_deref() == Some("b"))
        .collect();
    assert_eq!(moved.len(), 2, "{records:?}");
    for (region, (r, _)) in moved {
        assert_eq!(r.state, RegionState::Open, "{r:?}");
        assert_eq!(r.epoch, epochs[region] + 1, "a new epoch fences a");
        assert_eq!(r.owner_wal.as_deref(), Some(b_run.as_str()));
        assert_eq!(r.last_owner.as_deref(), Some("a"));
        assert!(r.to.is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_closes_its_handed_over_regions_together_once_the_last_is_warm() {
    if !have_etcd() {
        return;
    }
    let (_etcd_server, etcd) = etcd().await;
    // The master hands two regions to b; one of them stays cold for now.
    let (a, b) = two_warm_handoffs_to_b(&etcd).await;
    let records = read_all(&etcd, PREFIX).await.unwrap();
    let handed: Vec<String> = records
        .iter()
        .filter(|(_, (r, _))| r.to.as_deref() == Some("b"))
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(handed.len(), 2, "{records:?}");
    b.host
        .hold_regions
        .lock()
        .unwrap()
        .insert(handed[1].clone());
    // The warm one asks a to close it; a keeps serving it while the other
    // still warms, so their two gaps will be one.
    for _ in 0..4 {
        servers_only(&etcd, &[&a, &b]).await;
    }
    let records = read_all(&etcd, PREFIX).await.unwrap();
    assert_eq!(
        records[&handed[0]].0.state,
        RegionState::Closing,
        "{records:?}"
    );
    assert_eq!(
        records[&handed[1]].0.state,
        RegionState::Open,
        "{records:?}"
    );
    assert_eq!(loads(&[&a, &b]), [4, 0], "a serves all four meanwhile");
    // The second is warm: both close in the same round of a.
    b.host.hold_regions.lock().unwrap().clear();
    let mut seen = Vec::new();
    for _ in 0..4 {
        servers_only(&etcd, &[&a, &b]).await;
        let open_on_a = a.host.open.lock().unwrap().clone();
        seen.push(handed.iter().filter(|r| open_on_a.contains(*r)).count());
    }
    assert!(
        !seen.contains(&1),
        "the two closed one round apart: {seen:?}"
    );
    assert_eq!(loads(&[&a, &b]), [2, 2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_region_whose_owner_died_while_closing_it_for_a_move_is_placed_again() {
    if !have_etcd() {
        return;
    }
    let (_etcd_server, etcd) = etcd().await;
    // a was closing r0 for a move to b, and died: only b is a member.
    let b = server(&etcd, "b").await;
    let regions = vec!["r0".to_owned()];
    let closing = shoal_cluster::assignment::Assignment {
        owner: Some("a".into()),
        epoch: 4,
        state: RegionState::Closing,
        owner_wal: Some("wal/a/run1".into()),
        to: Some("b".into()),
        ..shoal_cluster::assignment::Assignment::new("r0")
    };
    assert!(
        shoal_cluster::assignment::write(&etcd, PREFIX, &closing, 0)
            .await
            .unwrap()
    );
    // It is placed (on b, the only server) with a's WAL run to replay, and
    // opens there; before the fix it stayed closing, counted on b, forever.
    for _ in 0..3 {
        round(&etcd, &[&b], &regions).await;
    }
    let (rec, _) = read_all(&etcd, PREFIX).await.unwrap()["r0"].clone();
    assert_eq!(rec.owner.as_deref(), Some("b"), "{rec:?}");
    assert_eq!(rec.state, RegionState::Open, "{rec:?}");
    assert!(rec.epoch > 4, "a new epoch fences a: {rec:?}");
    assert_eq!(
        b.host.replayed.lock().unwrap()["r0"],
        vec!["wal/a/run1".to_owned()],
        "a's WAL run is replayed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_on_a_new_wal_run_claims_its_regions_before_opening_them() {
    if !have_etcd() {
        return;
    }
    let (_etcd_server, etcd) = etcd().await;
    let regions: Vec<String> = (0..2).map(|i| format!("r{i}")).collect();
    let a = server(&etcd, "a").await;
    settle(&etcd, &[&a], &regions, Duration::from_secs(20)).await;
    let before = read_all(&etcd, PREFIX).await.unwrap();
    // a lost its lease and rejoined: nothing open, a new WAL run, and the
    // records still name it with the old run.
    let rejoined = FakeHost::default();
    let run2 = "wal/a/run2";
    let round = || server_round(&etcd, PREFIX, "a", run2, &rejoined);
    // First round: each record is claimed for run2 (a master that read a
    // as dead and writes from the old revision now loses), nothing opens.
    round().await.unwrap();
    assert!(rejoined.open.lock().unwrap().is_empty());
    let claimed = read_all(&etcd, PREFIX).await.unwrap();
    for r in &regions {
        let (rec, rev) = &claimed[r];
        assert_eq!(rec.state, RegionState::Opening, "{rec:?}");
        assert_eq!(rec.owner_wal.as_deref(), Some(run2));
        assert_eq!(
            rec.replay,
            std::slice::from_ref(&a.wal),
            "the old run is replayed"
        );
        assert!(*rev > before[r].1);
        // The stale master's write.
        let stale = shoal_cluster::assignment::Assignment {
            owner: Some("b".into()),
            ..before[r].0.clone()
        };
        assert!(
            !shoal_cluster::assignment::write(&etcd, PREFIX, &stale, before[r].1)
                .await
                .unwrap()
        );
    }
    // Next round: opened with the old run replayed, owned under run2.
    round().await.unwrap();
    assert_eq!(rejoined.open.lock().unwrap().len(), 2);
    let opened = read_all(&etcd, PREFIX).await.unwrap();
    for r in &regions {
        assert_eq!(
            rejoined.replayed.lock().unwrap()[r],
            std::slice::from_ref(&a.wal)
        );
        let rec = &opened[r].0;
        assert_eq!(rec.state, RegionState::Open);
        assert_eq!(rec.owner_wal.as_deref(), Some(run2));
        assert!(rec.replay.is_empty());
    }
}

/// A cache report of `server` holding all of `regions` (1 MiB each).
fn holding(server: &str, regions: &[&str]) -> shoal_cluster::cache_facts::CacheReport {
    use shoal_cluster::cache_facts::{CacheReport, RegionCache};
    CacheReport {
        v: 1,
        server: server.to_owned(),
        at_ms: 1,
        l2_free: 1 << 30,
        l2_capacity: 1 << 30,
        regions: regions
            .iter()
            .map(|r| {
                let c = RegionCache {
                    size: 1 << 20,
                    l2: 1 << 20,
                    cached: 1 << 20,
                    ..RegionCache::default()
                };
                ((*r).to_owned(), c)
            })
            .collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_balancer_moves_what_the_target_caches_and_a_dead_servers_report_goes() {
    use shoal_cluster::cache_facts::{publish, read_all as read_facts};
    if !have_etcd() {
        return;
    }
    let (_etcd_server, etcd) = etcd().await;
    let regions: Vec<String> = (0..4).map(|i| format!("r{i}")).collect();
    let a = server(&etcd, "a").await;
    settle(&etcd, &[&a], &regions, Duration::from_secs(20)).await;
    // a serves all four and caches them; b joins, and its L2 (say, kept
    // from an earlier life) holds r1 and r2.
    publish(
        &etcd,
        PREFIX,
        &holding("a", &["r0", "r1", "r2", "r3"]),
        a.member.lease().id(),
    )
    .await
    .unwrap();
    let b = server(&etcd, "b").await;
    publish(
        &etcd,
        PREFIX,
        &holding("b", &["r1", "r2"]),
        b.member.lease().id(),
    )
    .await
    .unwrap();
    let facts = read_facts(&etcd, PREFIX).await.unwrap();
    assert_eq!(facts.reports().count(), 2);
    assert_eq!(facts.cached("b", "r2"), 1 << 20);
    settle(&etcd, &[&a, &b], &regions, Duration::from_secs(20)).await;
    let mut moved = b.host.open_regions();
    moved.sort();
    assert_eq!(
        moved,
        ["r1", "r2"],
        "the balancer moved what b does not cache"
    );
    // b dies: its report goes with its lease.
    drop(b.member);
    let start = Instant::now();
    while read_facts(&etcd, PREFIX)
        .await
        .unwrap()
        .report("b")
        .is_some()
    {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "b's report stayed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        read_facts(&etcd, PREFIX)
            .await
            .unwrap()
            .report("a")
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_balancer_waits_while_a_region_is_in_transition() {
    if !have_etcd() {
        return;
    }
    let (_etcd_server, etcd) = etcd().await;
    let regions: Vec<String> = (0..4).map(|i| format!("r{i}")).collect();
    let a = server(&etcd, "a").await;
    settle(&etcd, &[&a], &regions, Duration::from_secs(20)).await;
    // r0's record says it is being opened (a transition under way): the
    // master only runs its own round, so nothing finishes it meanwhile.
    let (mut r0, rev) = read_all(&etcd, PREFIX).await.unwrap()["r0"].clone();
    r0.state = RegionState::Opening;
    assert!(
        shoal_cluster::assignment::write(&etcd, PREFIX, &r0, rev)
            .await
            .unwrap()
    );
    let b = server(&etcd, "b").await;
    let master_only = |etcd: Etcd| async move {
        let facts = shoal_cluster::cache_facts::read_all(&etcd, PREFIX)
            .await
            .unwrap();
        master_round(
            &etcd,
            PREFIX,
            &(0..4).map(|i| format!("r{i}")).collect::<Vec<_>>(),
            &(0..4).map(|i| format!("r{i}")).collect(),
            Policy {
                max_moves: 2,
                ..Policy::default()
            },
            &facts,
        )
        .await
        .unwrap()
    };
    assert!(a.member.campaign().await.unwrap());
    for _ in 0..3 {
        let round = master_only(etcd.clone()).await;
        assert_eq!(round.moves, 0, "a balance move during a transition");
    }
    // The transition ends: the balancer moves two regions to b.
    let (mut r0, rev) = read_all(&etcd, PREFIX).await.unwrap()["r0"].clone();
    r0.state = RegionState::Open;
    assert!(
        shoal_cluster::assignment::write(&etcd, PREFIX, &r0, rev)
            .await
            .unwrap()
    );
    assert_eq!(master_only(etcd.clone()).await.moves, 2);
    drop(b);
}
