//! The client's write combining against a real in-process server: concurrent
//! `Table::mutate` calls share MultiMutate RPCs, every row is applied and
//! answered on its own (a bad row fails alone), mutations of different tables
//! never share a call, and with combining off each call is its own Mutate.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use shoal_client::{Admin, Client, ClientOptions, RowMutation};
use shoal_server::RunningServer;
use shoal_server::metrics::RequestOp;
use std::path::Path;

mod support;

async fn start(dir: &Path) -> RunningServer {
    shoal_server::start(support::config(dir)).await.unwrap()
}

async fn client(server: &RunningServer, options: ClientOptions) -> Client {
    let c = Client::connect_with(&server.grpc_addr.to_string(), options)
        .await
        .unwrap();
    for t in ["a", "b"] {
        c.admin()
            .create_table(t, vec![Admin::family("f")], vec![])
            .await
            .unwrap();
    }
    c
}

/// (Mutate calls, MultiMutate calls) the server has answered.
fn calls(server: &RunningServer) -> (u64, u64) {
    let s = server.host.status();
    let n = |op| s.requests.op(op).map_or(0, |f| f.count);
    (n(RequestOp::Mutate), n(RequestOp::MultiMutate))
}

async fn value(c: &Client, table: &str, row: &str) -> Option<Vec<u8>> {
    c.table(table).get_value(row, "f", "q").await.unwrap()
}

#[tokio::test]
async fn concurrent_mutates_share_calls_and_each_row_gets_its_own_answer() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let options = ClientOptions {
        max_write_rpcs: 1,
        ..ClientOptions::default()
    };
    let c = client(&server, options).await;
    let (a, b) = (c.table("a"), c.table("b"));
    // All queued in one poll (current-thread runtime), so they wait for the
    // one write slot together: rows of table a, a bad family every tenth
    // row, and rows of table b in between.
    let mut calls_made = Vec::new();
    for i in 0..200 {
        let (t, family) = match i % 10 {
            0 => (&a, "nope"),
            5 => (&b, "f"),
            _ => (&a, "f"),
        };
        let m = RowMutation::new(format!("r{i:03}")).put(family, "q", format!("v{i}"));
        calls_made.push(t.mutate(m));
    }
    let results = futures::future::join_all(calls_made).await;
    for (i, r) in results.iter().enumerate() {
        if i % 10 == 0 {
            let e = r.as_ref().unwrap_err();
            assert!(e.to_string().contains("nope"), "row {i}: {e}");
        } else {
            r.as_ref().unwrap();
        }
    }
    for i in 0..200 {
        let row = format!("r{i:03}");
        let want = (i % 10 != 0).then(|| format!("v{i}").into_bytes());
        let (here, there) = if i % 10 == 5 { ("b", "a") } else { ("a", "b") };
        assert_eq!(value(&c, here, &row).await, want, "row {row} in {here}");
        assert_eq!(value(&c, there, &row).await, None, "row {row} in {there}");
    }
    let (single, multi) = calls(&server);
    assert!(multi >= 1, "no call was shared");
    assert!(
        single + multi < 100,
        "{single} Mutate and {multi} MultiMutate calls for 200 rows"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_mutation_over_the_batch_limit_goes_alone_and_lands() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let options = ClientOptions {
        max_write_rpcs: 1,
        max_combined_bytes: 4096,
        ..ClientOptions::default()
    };
    let c = client(&server, options).await;
    let t = c.table("a");
    let big = vec![b'x'; 10_000];
    let mut pending = Vec::new();
    for i in 0..20 {
        let v = if i % 2 == 0 {
            big.clone()
        } else {
            vec![b'y'; 10]
        };
        pending.push(t.mutate(RowMutation::new(format!("r{i:02}")).put("f", "q", v)));
    }
    for r in futures::future::join_all(pending).await {
        r.unwrap();
    }
    for i in 0..20 {
        let want = if i % 2 == 0 { big.len() } else { 10 };
        let got = value(&c, "a", &format!("r{i:02}")).await.unwrap();
        assert_eq!(got.len(), want);
    }
    server.shutdown().await;
}

#[tokio::test]
async fn with_combining_off_every_mutate_is_its_own_call() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let options = ClientOptions {
        combine_writes: false,
        ..ClientOptions::default()
    };
    let c = client(&server, options).await;
    let t = c.table("a");
    let pending: Vec<_> = (0..50)
        .map(|i| t.mutate(RowMutation::new(format!("r{i}")).put("f", "q", "v")))
        .collect();
    for r in futures::future::join_all(pending).await {
        r.unwrap();
    }
    assert_eq!(calls(&server), (50, 0));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_given_several_addresses_uses_the_first_that_answers() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(support::config(dir.path()))
        .await
        .unwrap();
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    // The listener above is dropped: its port refuses connections.
    let list = format!("{dead}, {}", server.grpc_addr);
    let client = Client::connect(&list).await.unwrap();
    client
        .admin()
        .create_table("t", vec![Admin::family("cf")], vec![])
        .await
        .unwrap();
    let err = Client::connect(&format!("{dead},{dead}"))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains(&format!("{dead},{dead}")),
        "the error names every address tried: {err}"
    );
    assert!(Client::connect(" , ").await.is_err());
    server.shutdown().await;
}
