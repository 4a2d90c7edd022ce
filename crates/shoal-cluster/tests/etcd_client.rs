//! The etcd client and the kept lease against a real etcd on loopback:
//! key-value calls and compare-and-swap; a lease keeps its key while kept
//! alive and the key goes when it lapses; a process that cannot reach etcd
//! gives its lease up by its own clock within the TTL; a wrong or dead
//! endpoint is a clear error within the deadline.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use shoal_cluster::{Etcd, EtcdError, KeptLease, LeaseState};
use std::time::{Duration, Instant};
use support::{EtcdServer, have_etcd};

const DEADLINE: Duration = Duration::from_secs(2);

async fn wait_for(limit: Duration, what: &str, mut cond: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !cond().await {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_prefixes_and_compare_and_swap() {
    if !have_etcd() {
        return;
    }
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&[server.endpoint()], DEADLINE).await.unwrap();
    assert!(etcd.get(b"/t/a").await.unwrap().is_none());
    assert!(
        etcd.compare_and_swap(b"/t/a", 0, b"1", 0).await.unwrap(),
        "create"
    );
    assert!(
        !etcd.compare_and_swap(b"/t/a", 0, b"2", 0).await.unwrap(),
        "exists"
    );
    let kv = etcd.get(b"/t/a").await.unwrap().unwrap();
    assert_eq!(kv.value, b"1");
    assert!(
        etcd.compare_and_swap(b"/t/a", kv.mod_revision, b"3", 0)
            .await
            .unwrap()
    );
    assert!(
        !etcd
            .compare_and_swap(b"/t/a", kv.mod_revision, b"4", 0)
            .await
            .unwrap(),
        "a stale revision must not win"
    );
    etcd.put(b"/t/b", b"x", 0).await.unwrap();
    etcd.put(b"/u/c", b"y", 0).await.unwrap();
    let (kvs, revision) = etcd.get_prefix(b"/t/").await.unwrap();
    let keys: Vec<&[u8]> = kvs.iter().map(|k| &k.key[..]).collect();
    assert_eq!(keys, [&b"/t/a"[..], b"/t/b"]);
    assert!(revision > 0);
    assert!(etcd.delete(b"/t/b").await.unwrap());
    assert!(!etcd.delete(b"/t/b").await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_lease_holds_its_key_and_the_key_goes_when_it_lapses() {
    if !have_etcd() {
        return;
    }
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&[server.endpoint()], DEADLINE).await.unwrap();
    let lease = KeptLease::grant(&etcd, Duration::from_secs(2))
        .await
        .unwrap();
    etcd.put(b"/members/a", b"addr", lease.id()).await.unwrap();
    // Longer than the TTL: the keep-alives hold it.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(lease.is_held());
    assert!(etcd.get(b"/members/a").await.unwrap().is_some());
    // Keep-alives stop: etcd expires the lease and deletes the key.
    drop(lease);
    wait_for(Duration::from_secs(10), "the key to go", async || {
        etcd.get(b"/members/a").await.unwrap().is_none()
    })
    .await;
    // Revoking deletes at once.
    let lease = KeptLease::grant(&etcd, Duration::from_secs(30))
        .await
        .unwrap();
    etcd.put(b"/members/b", b"addr", lease.id()).await.unwrap();
    lease.revoke().await.unwrap();
    assert!(etcd.get(b"/members/b").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_cut_off_from_etcd_gives_its_lease_up_within_the_ttl_by_its_own_clock() {
    if !have_etcd() {
        return;
    }
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&[server.endpoint()], DEADLINE).await.unwrap();
    let lease = KeptLease::grant(&etcd, Duration::from_secs(2))
        .await
        .unwrap();
    etcd.put(b"/members/a", b"addr", lease.id()).await.unwrap();
    let mut states = lease.watch();
    server.pause(true);
    let paused = Instant::now();
    // By its own clock the process gives the lease up within the TTL.
    let lost = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if *states.borrow_and_update() == LeaseState::Lost {
                return;
            }
            states.changed().await.unwrap();
        }
    })
    .await;
    assert!(lost.is_ok(), "the lease was never given up");
    assert!(!lease.is_held());
    let after = paused.elapsed();
    assert!(after <= Duration::from_secs(3), "gave up after {after:?}");
    // etcd, back, expires the lease too (nobody renews it any more).
    server.pause(false);
    wait_for(
        Duration::from_secs(15),
        "etcd to expire the lease",
        async || etcd.get(b"/members/a").await.is_ok_and(|kv| kv.is_none()),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_or_wrong_endpoint_is_a_clear_error_within_the_deadline() {
    let dead = format!(
        "http://127.0.0.1:{}",
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    );
    let start = Instant::now();
    let e = Etcd::connect(std::slice::from_ref(&dead), DEADLINE)
        .await
        .unwrap_err();
    assert!(start.elapsed() < DEADLINE * 3, "{:?}", start.elapsed());
    assert!(matches!(e, EtcdError::Unreachable { .. }), "{e}");
    assert!(e.to_string().contains(&dead), "{e}");
    let e = Etcd::connect(&["not a url".into()], DEADLINE)
        .await
        .unwrap_err();
    assert!(matches!(e, EtcdError::BadEndpoint { .. }), "{e}");
}
