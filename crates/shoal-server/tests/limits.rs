//! The `[limits]` of one request, in-process through the raw gRPC stubs: each
//! limit accepts a request at it and refuses one past it (naming the key),
//! with the server up and the data intact; a 100,000-cell mutation; scans
//! whose client stops reading (lease) or goes away while the scan skips rows
//! that match nothing (cancellation); rows larger than a scan message.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use shoal_proto::v1 as pb;
use shoal_server::ServerConfig;
use shoal_server::config::ByteSize;
use std::path::Path;
use std::time::{Duration, Instant};

mod support;

fn config(dir: &Path) -> ServerConfig {
    let mut c = support::config(dir);
    c.regions.split_check_interval = Duration::from_secs(3600);
    c
}

use support::{Clients, clients, family};

fn put(q: impl Into<Vec<u8>>, v: impl Into<Vec<u8>>) -> pb::Mutation {
    pb::Mutation {
        kind: Some(pb::mutation::Kind::Put(pb::Put {
            family: b"cf".to_vec().into(),
            qualifier: q.into().into(),
            timestamp: None,
            value: v.into().into(),
        })),
    }
}

fn row_mutation(row: &str, mutations: Vec<pb::Mutation>) -> pb::RowMutation {
    pb::RowMutation {
        row: row.as_bytes().to_vec().into(),
        mutations,
    }
}

async fn create(c: &mut Clients, name: &str) {
    c.admin
        .create_table(pb::CreateTableRequest {
            name: name.into(),
            families: vec![family("cf")],
            split_keys: vec![],
        })
        .await
        .unwrap();
}

async fn mutate(c: &mut Clients, m: pb::RowMutation) -> Result<(), tonic::Status> {
    c.data
        .mutate(pb::MutateRequest {
            table: "t".into(),
            mutation: Some(m),
        })
        .await
        .map(|_| ())
}

async fn get_cells(c: &mut Clients, row: &str) -> usize {
    let r = c
        .data
        .get(pb::GetRequest {
            table: "t".into(),
            get: Some(pb::GetSpec {
                row: row.as_bytes().to_vec().into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    r.row.map_or(0, |r| r.cells.len())
}

/// `result` is an INVALID_ARGUMENT whose message names `key`.
fn refused<T: std::fmt::Debug>(result: Result<T, tonic::Status>, key: &str) {
    let status = result.expect_err(key);
    assert_eq!(
        status.code(),
        tonic::Code::InvalidArgument,
        "{key}: {status:?}"
    );
    assert!(
        status.message().contains(key),
        "{key}: {}",
        status.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_limit_accepts_a_request_at_it_and_refuses_one_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.limits.max_cells_per_mutation = 10;
    cfg.limits.max_columns_per_increment = 5;
    cfg.limits.max_rows_per_batch = 4;
    cfg.limits.max_families_per_table = 3;
    cfg.limits.max_split_keys = 3;
    cfg.limits.max_qualifier_bytes = ByteSize(16);
    cfg.limits.max_value_bytes = ByteSize(1024);
    let server = shoal_server::start(cfg).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t").await;

    // Cells per mutation.
    let cells = |n: usize| (0..n).map(|i| put(format!("q{i}"), "v")).collect();
    mutate(&mut c, row_mutation("cells", cells(10)))
        .await
        .unwrap();
    refused(
        mutate(&mut c, row_mutation("cells2", cells(11))).await,
        "limits.max_cells_per_mutation",
    );
    // Qualifier and value sizes.
    mutate(
        &mut c,
        row_mutation("sizes", vec![put(vec![b'q'; 16], vec![b'v'; 1024])]),
    )
    .await
    .unwrap();
    refused(
        mutate(
            &mut c,
            row_mutation("sizes2", vec![put(vec![b'q'; 17], "v")]),
        )
        .await,
        "limits.max_qualifier_bytes",
    );
    refused(
        mutate(
            &mut c,
            row_mutation("sizes2", vec![put("q", vec![b'v'; 1025])]),
        )
        .await,
        "limits.max_value_bytes",
    );
    // Columns per increment and append.
    let incr = |n: usize| pb::IncrementRequest {
        table: "t".into(),
        row: b"counters".to_vec(),
        columns: (0..n)
            .map(|i| pb::ColumnIncrement {
                family: b"cf".to_vec(),
                qualifier: format!("c{i}").into_bytes(),
                amount: 1,
            })
            .collect(),
    };
    c.data.increment(incr(5)).await.unwrap();
    refused(
        c.data.increment(incr(6)).await,
        "limits.max_columns_per_increment",
    );
    let append = |n: usize| pb::AppendRequest {
        table: "t".into(),
        row: b"appends".to_vec(),
        columns: (0..n)
            .map(|i| pb::ColumnAppend {
                family: b"cf".to_vec(),
                qualifier: format!("a{i}").into_bytes(),
                value: b"x".to_vec(),
            })
            .collect(),
    };
    c.data.append(append(5)).await.unwrap();
    refused(
        c.data.append(append(6)).await,
        "limits.max_columns_per_increment",
    );
    // Rows per batch.
    let batch = |n: usize| pb::MultiMutateRequest {
        table: "t".into(),
        mutations: (0..n)
            .map(|i| row_mutation(&format!("b{i}"), vec![put("q", "v")]))
            .collect(),
    };
    c.data.multi_mutate(batch(4)).await.unwrap();
    refused(
        c.data.multi_mutate(batch(5)).await,
        "limits.max_rows_per_batch",
    );
    let gets = |n: usize| pb::MultiGetRequest {
        table: "t".into(),
        gets: (0..n)
            .map(|i| pb::GetSpec {
                row: format!("b{i}").into_bytes().into(),
                ..Default::default()
            })
            .collect(),
    };
    assert_eq!(
        c.data
            .multi_get(gets(4))
            .await
            .unwrap()
            .into_inner()
            .rows
            .len(),
        4
    );
    refused(c.data.multi_get(gets(5)).await, "limits.max_rows_per_batch");
    // Families per table and split keys.
    let table = |name: &str, families: usize, splits: usize| pb::CreateTableRequest {
        name: name.into(),
        families: (0..families).map(|i| family(&format!("f{i}"))).collect(),
        split_keys: (0..splits).map(|i| format!("k{i}").into_bytes()).collect(),
    };
    c.admin.create_table(table("wide", 3, 3)).await.unwrap();
    refused(
        c.admin.create_table(table("wider", 4, 0)).await,
        "limits.max_families_per_table",
    );
    refused(
        c.admin.create_table(table("split", 1, 4)).await,
        "limits.max_split_keys",
    );
    let long_split = pb::CreateTableRequest {
        split_keys: vec![vec![b'k'; 40_000]],
        ..table("longsplit", 1, 0)
    };
    let status = c.admin.create_table(long_split).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");

    // The server is up and what was accepted is intact.
    assert_eq!(get_cells(&mut c, "cells").await, 10);
    assert_eq!(get_cells(&mut c, "sizes").await, 1);
    assert_eq!(get_cells(&mut c, "cells2").await, 0);
    assert_eq!(get_cells(&mut c, "counters").await, 5);
    assert_eq!(get_cells(&mut c, "appends").await, 5);
    assert_eq!(get_cells(&mut c, "b3").await, 1);
    assert_eq!(
        get_cells(&mut c, "b4").await,
        0,
        "a refused batch wrote nothing"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutation_of_a_hundred_thousand_cells_is_accepted_and_one_more_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t").await;
    let cells = |n: usize| (0..n).map(|i| put(format!("{i:06}"), "v")).collect();
    mutate(&mut c, row_mutation("wide", cells(100_000)))
        .await
        .unwrap();
    assert_eq!(get_cells(&mut c, "wide").await, 100_000);
    refused(
        mutate(&mut c, row_mutation("wider", cells(100_001))).await,
        "limits.max_cells_per_mutation",
    );
    server.shutdown().await;
}

/// Waits until `done` holds, for at most `limit`.
async fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn fill(c: &mut Clients, rows: usize, value: usize) {
    for start in (0..rows).step_by(1_000) {
        let req = pb::MultiMutateRequest {
            table: "t".into(),
            mutations: (start..(start + 1_000).min(rows))
                .map(|i| row_mutation(&format!("r{i:07}"), vec![put("q", vec![b'v'; value])]))
                .collect(),
        };
        let resp = c.data.multi_mutate(req).await.unwrap().into_inner();
        assert!(resp.results.iter().all(|r| r.code == 0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_whose_client_stops_reading_is_closed_by_its_lease() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.limits.scan_lease = Duration::from_millis(500);
    cfg.limits.scan_message_bytes = ByteSize(16 << 10);
    let server = shoal_server::start(cfg).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t").await;
    // 32 MiB: more than the HTTP/2 windows can buffer, so the scan must wait
    // for its client.
    fill(&mut c, 4_000, 8 << 10).await;
    let mut stream = c
        .data
        .scan(pb::ScanRequest {
            table: "t".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let first = stream.message().await.unwrap().unwrap();
    assert!(!first.rows.is_empty());
    let requests = server.host.requests().clone();
    assert_eq!(requests.snapshot().scans_open, 1);
    // The client holds the stream and reads no more.
    wait_for(
        Duration::from_secs(10),
        "the lease to close the scan",
        || requests.snapshot().scans_open == 0,
    )
    .await;
    assert_eq!(requests.snapshot().scans_lease_expired, 1);
    // Reading again: what was queued, then ABORTED — never a silent end.
    let mut rows = first.rows.len();
    let end = loop {
        match stream.message().await {
            Ok(Some(m)) => rows += m.rows.len(),
            Ok(None) => panic!("the stream ended as if complete after {rows} rows"),
            Err(status) => break status,
        }
    };
    assert_eq!(end.code(), tonic::Code::Aborted, "{end:?}");
    assert!(end.message().contains("limits.scan_lease"), "{end:?}");
    assert!(rows < 4_000, "{rows}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_skipping_rows_that_match_nothing_stops_when_its_client_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    // Everything stays in the memstore: the scan skips in memory, never
    // waiting on I/O, the case that used to ignore cancellation.
    cfg.regions.flush_size = ByteSize(1 << 30);
    let server = shoal_server::start(cfg).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t").await;
    fill(&mut c, 200_000, 8).await;
    let requests = server.host.requests().clone();
    let stream = c
        .data
        .scan(pb::ScanRequest {
            table: "t".into(),
            // A time range no cell is in: every row is skipped.
            time_range: Some(pb::TimeRange { min: 1, max: 2 }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    drop(stream);
    wait_for(Duration::from_secs(30), "the scan to stop", || {
        requests.snapshot().scans_open == 0
    })
    .await;
    assert_eq!(
        requests.snapshot().scans_cancelled,
        1,
        "the scan ran to its end instead of stopping"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_larger_than_a_scan_message_arrive_in_pieces_that_join_to_the_whole_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.limits.scan_message_bytes = ByteSize(64 << 10);
    let server = shoal_server::start(cfg).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t").await;
    let cells = |n: usize| {
        (0..n)
            .map(|i| put(format!("{i:04}"), vec![b'v'; 4096]))
            .collect()
    };
    mutate(&mut c, row_mutation("a", cells(1))).await.unwrap();
    mutate(&mut c, row_mutation("b", cells(200))).await.unwrap();
    mutate(&mut c, row_mutation("c", cells(3))).await.unwrap();
    let mut stream = c
        .data
        .scan(pb::ScanRequest {
            table: "t".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut joined: Vec<(Vec<u8>, usize)> = Vec::new();
    let mut open = false;
    let mut messages = 0;
    while let Some(m) = stream.message().await.unwrap() {
        messages += 1;
        let bytes: usize = m
            .rows
            .iter()
            .flat_map(|r| &r.cells)
            .map(|c| c.value.len())
            .sum();
        assert!(bytes <= 64 << 10, "a message of {bytes} bytes of values");
        for r in m.rows {
            if open {
                let last = joined.last_mut().unwrap();
                assert_eq!(last.0, r.row);
                last.1 += r.cells.len();
            } else {
                joined.push((r.row.to_vec(), r.cells.len()));
            }
            open = r.partial;
        }
    }
    assert!(!open, "the stream ended inside a row");
    assert!(messages > 10, "{messages} messages");
    assert_eq!(
        joined,
        [(b"a".to_vec(), 1), (b"b".to_vec(), 200), (b"c".to_vec(), 3)]
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_in_errors_are_cut_and_truncate_needs_a_disabled_table() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t").await;
    let long = "x".repeat(10_000);
    let status = c
        .data
        .get(pb::GetRequest {
            table: long.clone(),
            get: Some(pb::GetSpec {
                row: b"r".to_vec().into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound);
    assert!(status.message().len() < 256, "{}", status.message().len());
    let status = c
        .admin
        .create_table(pb::CreateTableRequest {
            name: long,
            families: vec![family("cf")],
            split_keys: vec![],
        })
        .await
        .unwrap_err();
    assert!(status.message().len() < 256, "{}", status.message().len());

    mutate(&mut c, row_mutation("r", vec![put("q", "v")]))
        .await
        .unwrap();
    let table = || pb::TableRequest { name: "t".into() };
    let status = c.admin.truncate_table(table()).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert_eq!(
        get_cells(&mut c, "r").await,
        1,
        "an enabled table was emptied"
    );
    c.admin.disable_table(table()).await.unwrap();
    c.admin.truncate_table(table()).await.unwrap();
    assert_eq!(
        get_cells(&mut c, "r").await,
        0,
        "truncated, and enabled again"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_64_mib_is_resource_exhausted_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t").await;
    let big = row_mutation("big", vec![put("q", vec![b'v'; 65 << 20])]);
    let status = mutate(&mut c, big).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert_eq!(get_cells(&mut c, "big").await, 0);
    assert_eq!(server.host.requests().snapshot().bytes_in_flight, 0);
    server.shutdown().await;
}
