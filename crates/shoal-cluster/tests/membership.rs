//! Membership and the master against a real etcd: three servers join and
//! are listed; a name is taken once; one leaves at once; one that stops
//! renewing (a dead process) drops out after its TTL; exactly one becomes
//! master, and when its lease goes another takes over.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use shoal_cluster::membership::{master, members};
use shoal_cluster::{Etcd, JoinError, Membership};
use std::time::{Duration, Instant};
use support::{EtcdServer, have_etcd};

const TTL: Duration = Duration::from_secs(2);
const PREFIX: &str = "/shoal-test";

async fn names(etcd: &Etcd) -> Vec<String> {
    members(etcd, PREFIX)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_join_leave_and_drop_out_and_one_master_at_a_time() {
    if !have_etcd() {
        return;
    }
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&[server.endpoint()], Duration::from_secs(2))
        .await
        .unwrap();
    let a = Membership::join(&etcd, PREFIX, "a", "127.0.0.1:7001", "wal/a/run1", TTL)
        .await
        .unwrap();
    let b = Membership::join(&etcd, PREFIX, "b", "127.0.0.1:7002", "wal/b/run1", TTL)
        .await
        .unwrap();
    let c = Membership::join(&etcd, PREFIX, "c", "127.0.0.1:7003", "wal/c/run1", TTL)
        .await
        .unwrap();
    assert_eq!(names(&etcd).await, ["a", "b", "c"]);
    assert!(a.is_member() && b.is_member() && c.is_member());
    match Membership::join(&etcd, PREFIX, "b", "127.0.0.1:9999", "wal/b/run1", TTL).await {
        Err(JoinError::NameTaken(n)) => assert_eq!(n, "b"),
        other => panic!("a second b joined: {other:?}"),
    }
    assert_eq!(
        members(&etcd, PREFIX).await.unwrap()[1].addr,
        "127.0.0.1:7002",
        "the refused join changed nothing"
    );

    // One master at a time.
    let won: Vec<bool> = vec![
        a.campaign().await.unwrap(),
        b.campaign().await.unwrap(),
        c.campaign().await.unwrap(),
    ];
    assert_eq!(won, [true, false, false]);
    assert_eq!(master(&etcd, PREFIX).await.unwrap().as_deref(), Some("a"));
    // A losing campaign names the master it lost to, in the same call.
    assert_eq!(c.campaign_for_master().await.unwrap().as_deref(), Some("a"));
    assert_eq!(a.campaign_for_master().await.unwrap().as_deref(), Some("a"));

    // c leaves at once; a dies (its keep-alives stop): it drops out within
    // its TTL, its master key with it, and b takes over.
    c.leave().await.unwrap();
    assert_eq!(names(&etcd).await, ["a", "b"]);
    drop(a);
    let start = Instant::now();
    while names(&etcd).await != ["b"] {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "a never dropped out"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(master(&etcd, PREFIX).await.unwrap().is_none());
    assert!(b.campaign().await.unwrap());
    assert_eq!(master(&etcd, PREFIX).await.unwrap().as_deref(), Some("b"));
    // A campaign by the master itself keeps it.
    assert!(b.campaign().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assignment_records_change_only_by_compare_and_swap() {
    use shoal_cluster::assignment::{Assignment, RegionState, read_all, write};
    if !have_etcd() {
        return;
    }
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&[server.endpoint()], Duration::from_secs(2))
        .await
        .unwrap();
    let mut a = Assignment {
        owner: Some("s1".into()),
        epoch: 1,
        state: RegionState::Opening,
        ..Assignment::new("r1")
    };
    assert!(write(&etcd, PREFIX, &a, 0).await.unwrap(), "created");
    assert!(
        !write(&etcd, PREFIX, &a, 0).await.unwrap(),
        "exists already"
    );
    let (read, rev) = read_all(&etcd, PREFIX).await.unwrap()["r1"].clone();
    assert_eq!(read, a);
    a.state = RegionState::Open;
    assert!(write(&etcd, PREFIX, &a, rev).await.unwrap());
    // A master acting on the old revision (a deposed master) loses.
    let stale = Assignment {
        owner: Some("s2".into()),
        epoch: 2,
        ..a.clone()
    };
    assert!(!write(&etcd, PREFIX, &stale, rev).await.unwrap());
    let (now, _) = read_all(&etcd, PREFIX).await.unwrap()["r1"].clone();
    assert_eq!(now.owner.as_deref(), Some("s1"));
    assert_eq!(now.state, RegionState::Open);
}
