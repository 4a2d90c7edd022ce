//! The read-only ZooKeeper registry in cluster mode: every server answers
//! for the whole cluster, as the native RPC's registry does — the same
//! master, every live server under `rs`, the others under
//! `backup-masters`, the same cluster id — read with a raw ZooKeeper
//! client from two `shoal serve` sharing one etcd and one object store.
//! Without etcd outside CI the test is skipped with a note.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

#[path = "../../shoal-cluster/tests/support/mod.rs"]
mod etcd_support;
mod support;
#[path = "support/zk.rs"]
mod zk;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use support::ServerProcess;
use zk::{Zk, cluster_id, protobuf, server_address};

/// What one server's registry says: master, live servers, backups, meta.
#[derive(Debug, PartialEq, Eq)]
struct View {
    master: Option<String>,
    live: BTreeSet<String>,
    backups: BTreeSet<String>,
    meta: String,
    cluster_id: String,
}

/// A znode child `host,port,startcode` as `host:port`.
fn address(child: &str) -> String {
    let mut parts = child.split(',');
    format!("{}:{}", parts.next().unwrap(), parts.next().unwrap())
}

fn view(server: &ServerProcess) -> View {
    let mut zk = Zk::open(server.zk.expect("the registry's listening line"));
    let has_master = zk.children("/hbase").iter().any(|c| c == "master");
    let master = has_master.then(|| server_address(protobuf(&zk.data("/hbase/master"))));
    View {
        master,
        live: zk
            .children("/hbase/rs")
            .iter()
            .map(|c| address(c))
            .collect(),
        backups: zk
            .children("/hbase/backup-masters")
            .iter()
            .map(|c| address(c))
            .collect(),
        meta: server_address(protobuf(&zk.data("/hbase/meta-region-server"))),
        cluster_id: cluster_id(&mut zk),
    }
}

#[test]
fn every_server_answers_for_the_whole_cluster() {
    if !etcd_support::have_etcd() {
        return;
    }
    let etcd = etcd_support::EtcdServer::start();
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("bucket")).unwrap();
    let servers: Vec<ServerProcess> = (1..=2)
        .map(|i| {
            let dir = root.path().join(format!("s{i}-config"));
            std::fs::create_dir_all(&dir).unwrap();
            let cfg = support::write_config(
                &dir,
                &format!(
                    "[object_store]\nurl = \"file://{}\"\n[wal]\nbackend = \"object\"\n\
                     [cluster]\netcd = [\"{}\"]\nname = \"s{i}\"\nlease_ttl = \"2s\"\n\
                     [zk_registry]\nenabled = true\naddr = \"127.0.0.1:0\"\n",
                    root.path().join("bucket").display(),
                    etcd.endpoint()
                ),
            );
            ServerProcess::start(&root.path().join(format!("s{i}-data")), Some(&cfg))
        })
        .collect();
    let natives: BTreeSet<String> = servers
        .iter()
        .map(|s| s.hbase.unwrap().to_string())
        .collect();
    // Until both servers have seen each other and a master.
    let deadline = Instant::now() + Duration::from_secs(60);
    let views = loop {
        let views: Vec<View> = servers.iter().map(view).collect();
        let settled = views
            .iter()
            .all(|v| v.master.is_some() && v.live == natives && v.backups.len() == 1);
        if settled && views[0].master == views[1].master {
            break views;
        }
        assert!(
            Instant::now() < deadline,
            "the registries did not agree on the cluster in time: {views:?}\n{}",
            servers
                .iter()
                .map(|s| s.stderr())
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let master = views[0].master.clone().unwrap();
    assert!(natives.contains(&master), "{master} is a live server");
    for (v, s) in views.iter().zip(&servers) {
        let mut others = natives.clone();
        others.remove(&master);
        assert_eq!(
            v.backups, others,
            "backup masters: the live servers but the master"
        );
        assert_eq!(
            v.cluster_id, views[0].cluster_id,
            "one object store, one cluster id"
        );
        // meta: read at the server answering (which holds its lease).
        assert_eq!(v.meta, s.hbase.unwrap().to_string());
    }
}
