//! Connections on the server's two ports: idle and half-open connections
//! are closed within their timeouts while calls go on; a call in flight (a
//! streaming scan) keeps its connection however long it lasts; beyond
//! `max_connections` new connections are closed at once while existing ones
//! are served; stop closes idle connections at once and lets calls in
//! flight finish.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use shoal_proto::v1 as pb;
use shoal_proto::v1::admin_client::AdminClient;
use shoal_proto::v1::data_client::DataClient;
use shoal_server::metrics::{CloseReason, Listener};
use shoal_server::{RunningServer, ServerConfig};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::transport::Channel;

fn config(dir: &Path, handshake: Duration, idle: Duration) -> ServerConfig {
    let mut c = support::config(dir);
    c.server.handshake_timeout = handshake;
    c.server.idle_timeout = idle;
    c
}

async fn channel(server: &RunningServer) -> Channel {
    let url = format!("http://{}", server.grpc_addr);
    Channel::from_shared(url).unwrap().connect().await.unwrap()
}

async fn create_table(channel: &Channel, name: &str) {
    AdminClient::new(channel.clone())
        .create_table(pb::CreateTableRequest {
            name: name.into(),
            families: vec![pb::FamilySchema {
                name: "cf".into(),
                ..Default::default()
            }],
            split_keys: vec![],
        })
        .await
        .unwrap();
}

async fn put(channel: &Channel, table: &str, row: &str, value: Vec<u8>) {
    DataClient::new(channel.clone())
        .mutate(pb::MutateRequest {
            table: table.into(),
            mutation: Some(pb::RowMutation {
                row: row.as_bytes().to_vec().into(),
                mutations: vec![pb::Mutation {
                    kind: Some(pb::mutation::Kind::Put(pb::Put {
                        family: b"cf".to_vec().into(),
                        qualifier: b"q".to_vec().into(),
                        timestamp: None,
                        value: value.into(),
                    })),
                }],
            }),
        })
        .await
        .unwrap();
}

async fn get(channel: &Channel, table: &str, row: &str) -> Result<bool, tonic::Status> {
    let r = DataClient::new(channel.clone())
        .get(pb::GetRequest {
            table: table.into(),
            get: Some(pb::GetSpec {
                row: row.as_bytes().to_vec().into(),
                ..Default::default()
            }),
        })
        .await?;
    Ok(r.into_inner().row.is_some())
}

/// GET `path` over a fresh HTTP/1.1 connection: the status code, or `None`
/// when the server closed the connection without answering.
async fn http_get(addr: SocketAddr, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).await.is_err() {
        return None;
    }
    let mut raw = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut raw)).await;
    let text = String::from_utf8_lossy(&raw);
    match read {
        Ok(Ok(_)) => text.split_whitespace().nth(1).and_then(|c| c.parse().ok()),
        _ => None,
    }
}

/// Waits for the server to close `s` (end of stream or reset); returns when.
async fn closed_by_server(mut s: TcpStream) -> Instant {
    let mut buf = [0u8; 64];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return Instant::now(),
            Ok(_) => {} // e.g. the HTTP/2 server's SETTINGS: not a close
        }
    }
}

/// Raw TCP connections that send `first` (perhaps nothing) and then
/// nothing more, each watched until the server closes it: (when it was
/// opened, when it was closed).
async fn idle_connections(
    addr: SocketAddr,
    n: usize,
    first: &'static [u8],
) -> Vec<tokio::task::JoinHandle<(Instant, Instant)>> {
    let mut watchers = Vec::with_capacity(n);
    for _ in 0..n {
        let opened = Instant::now();
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(first).await.unwrap();
        watchers.push(tokio::spawn(
            async move { (opened, closed_by_server(s).await) },
        ));
    }
    watchers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_connections_are_closed_within_the_handshake_timeout_while_calls_go_on() {
    support::raise_open_files_limit(4096);
    let handshake = Duration::from_secs(3);
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path(), handshake, Duration::from_secs(60)))
        .await
        .unwrap();
    let before = channel(&server).await;
    create_table(&before, "t").await;
    put(&before, "t", "r", b"v".to_vec()).await;

    // Silent connections, and a few that start a handshake and stall: half
    // the HTTP/2 magic, the magic without its SETTINGS frame, a request
    // line without the end of the headers.
    let (grpc, http) = (server.grpc_addr, server.http_addr);
    let mut watchers = idle_connections(grpc, 1000, b"").await;
    watchers.extend(idle_connections(grpc, 5, b"PRI * HTTP/2.0\r\n").await);
    watchers.extend(idle_connections(grpc, 5, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await);
    watchers.extend(idle_connections(http, 100, b"").await);
    watchers.extend(idle_connections(http, 10, b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await);
    let all_open = || {
        let c = server.connections();
        c.open(Listener::Grpc) > 1010 && c.open(Listener::Http) >= 110
    };
    support::wait_until(handshake, "the idle connections to be accepted", all_open).await;

    // Calls on an existing connection, on a new one, and health checks all
    // answer while the idle connections are open.
    assert!(get(&before, "t", "r").await.unwrap());
    let after = channel(&server).await;
    assert!(get(&after, "t", "r").await.unwrap());
    assert_eq!(http_get(server.http_addr, "/healthz").await, Some(200));
    assert!(
        all_open(),
        "the idle connections closed before the calls were made: {:?}",
        server.connections()
    );

    // Every idle connection is closed: not before the handshake timeout, and
    // well within it plus a margin for a loaded machine.
    let margin = Duration::from_secs(10);
    for w in watchers {
        let (opened, closed) = tokio::time::timeout(handshake + margin, w)
            .await
            .expect("an idle connection was not closed in time")
            .unwrap();
        let lived = closed - opened;
        assert!(lived >= handshake.mul_f64(0.9), "closed after {lived:?}");
        assert!(lived <= handshake + margin, "closed after {lived:?}");
    }
    // The server counts a close just after the socket closes (a watcher
    // can see the close first): wait briefly for the counters.
    support::wait_until(
        Duration::from_secs(5),
        "every idle connection counted as closed by the handshake timeout",
        || {
            let c = server.connections();
            c.closed(Listener::Grpc, CloseReason::Handshake) >= 1010
                && c.closed(Listener::Http, CloseReason::Handshake) >= 110
        },
    )
    .await;
    // The calls' connections are still there and still answer.
    assert!(get(&before, "t", "r").await.unwrap());
    assert_eq!(http_get(server.http_addr, "/healthz").await, Some(200));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_past_its_handshake_with_no_call_closes_after_the_idle_timeout() {
    let (handshake, idle) = (Duration::from_millis(500), Duration::from_secs(2));
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path(), handshake, idle))
        .await
        .unwrap();

    // A raw HTTP/2 client: handshake done, no request ever.
    let tcp = TcpStream::connect(server.grpc_addr).await.unwrap();
    let started = Instant::now();
    let (_send, conn) = h2::client::handshake(tcp).await.unwrap();
    let ended = tokio::time::timeout(idle + Duration::from_secs(10), conn).await;
    let lived = started.elapsed();
    assert!(ended.is_ok(), "the idle HTTP/2 connection was not closed");
    assert!(
        lived >= idle.mul_f64(0.9),
        "closed after {lived:?}, before the idle timeout ({idle:?})"
    );
    // The client may see the close before the server has counted it.
    support::wait_until(Duration::from_secs(10), "the close to be counted", || {
        server
            .connections()
            .closed(Listener::Grpc, CloseReason::Idle)
            == 1
    })
    .await;
    let c = server.connections();
    assert_eq!(c.closed(Listener::Grpc, CloseReason::Handshake), 0, "{c:?}");

    // A client whose connection was closed for idleness reconnects on its
    // next call.
    let client = shoal_client::Client::connect(&format!("http://{}", server.grpc_addr))
        .await
        .unwrap();
    client
        .admin()
        .create_table("t", vec![shoal_client::Admin::family("cf")], vec![])
        .await
        .unwrap();
    support::wait_until(idle * 5, "the client's connection to idle out", || {
        server
            .connections()
            .closed(Listener::Grpc, CloseReason::Idle)
            == 2
    })
    .await;
    client.table("t").put("r", "cf", "q", "v").await.unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_stops_answering_pings_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let long = Duration::from_secs(120);
    let mut c = config(dir.path(), long, long);
    c.server.keepalive_interval = Duration::from_millis(200);
    c.server.keepalive_timeout = Duration::from_millis(300);
    let server = shoal_server::start(c).await.unwrap();
    // A client that completes its preface (magic and an empty SETTINGS
    // frame), then falls silent as a dead peer would: it reads nothing and
    // acknowledges no PING.
    let mut dead = TcpStream::connect(server.grpc_addr).await.unwrap();
    dead.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .await
        .unwrap();
    // A live client on the same settings keeps its connection.
    let live = channel(&server).await;
    create_table(&live, "t").await;
    support::wait_until(
        Duration::from_secs(20),
        "the dead peer to be dropped",
        || {
            server
                .connections()
                .closed(Listener::Grpc, CloseReason::Keepalive)
                == 1
        },
    )
    .await;
    // Several PING rounds later the live client is still on its connection.
    tokio::time::sleep(Duration::from_secs(1)).await;
    put(&live, "t", "r", b"v".to_vec()).await;
    let c = server.connections();
    assert_eq!(c.closed(Listener::Grpc, CloseReason::Keepalive), 1, "{c:?}");
    assert_eq!(c.open(Listener::Grpc), 1, "{c:?}");
    drop(dead);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_beyond_max_streams_per_connection_wait_for_a_free_stream() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), Duration::from_secs(10), Duration::from_secs(60));
    c.server.max_streams_per_connection = 2;
    let server = shoal_server::start(c).await.unwrap();
    let channel = channel(&server).await;
    write_big_rows(&channel, 40).await;
    // Two scans in flight, their client paused: both streams are taken.
    let scan = || async {
        let mut stream = DataClient::new(channel.clone())
            .scan(pb::ScanRequest {
                table: "big".into(),
                rows_per_message: 1,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        stream.message().await.unwrap().unwrap();
        stream
    };
    let mut first = scan().await;
    let second = scan().await;
    // A third call on the same connection waits...
    let third = tokio::spawn({
        let channel = channel.clone();
        async move { get(&channel, "big", "r0001").await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!third.is_finished(), "a third call ran beside two streams");
    // ...until a stream is free.
    while first.message().await.unwrap().is_some() {}
    let found = tokio::time::timeout(Duration::from_secs(30), third)
        .await
        .expect("the third call did not run once a stream was free")
        .unwrap()
        .unwrap();
    assert!(found);
    assert_eq!(server.connections().accepted(Listener::Grpc), 1);
    drop(second); // a paused scan would hold the stop for shutdown_timeout
    server.shutdown().await;
}

/// Rows of 128 KiB: a scan of them is far more than the client's HTTP/2
/// windows, so the server is still sending while the client pauses.
async fn write_big_rows(channel: &Channel, rows: usize) {
    create_table(channel, "big").await;
    for i in 0..rows {
        put(channel, "big", &format!("r{i:04}"), vec![b'x'; 128 << 10]).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_scan_longer_than_the_idle_timeout_is_not_cut() {
    let idle = Duration::from_secs(1);
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path(), Duration::from_secs(5), idle))
        .await
        .unwrap();
    let channel = channel(&server).await;
    write_big_rows(&channel, 100).await;

    let mut stream = DataClient::new(channel.clone())
        .scan(pb::ScanRequest {
            table: "big".into(),
            rows_per_message: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut rows = stream.message().await.unwrap().unwrap().rows.len();
    // The client stops reading for three idle timeouts: the call is in
    // flight all along, so its connection is not idle.
    tokio::time::sleep(idle * 3).await;
    while let Some(msg) = stream.message().await.unwrap() {
        rows += msg.rows.len();
    }
    assert_eq!(rows, 100);
    let c = server.connections();
    assert_eq!(c.closed(Listener::Grpc, CloseReason::Idle), 0, "{c:?}");
    // Once the scan is over the connection is idle, and closes.
    support::wait_until(
        idle * 10,
        "the connection to idle out after the scan",
        || {
            server
                .connections()
                .closed(Listener::Grpc, CloseReason::Idle)
                == 1
        },
    )
    .await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_max_connections_new_connections_are_closed_and_existing_ones_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let long = Duration::from_secs(120);
    let mut c = config(dir.path(), long, long);
    c.server.max_connections = 20;
    let server = shoal_server::start(c).await.unwrap();
    assert_eq!(server.connections().max_connections, 20);
    let open = || {
        let c = server.connections();
        c.open(Listener::Grpc) + c.open(Listener::Http)
    };
    let existing = channel(&server).await;
    create_table(&existing, "t").await;
    let mut idle = Vec::new();
    for _ in 0..19 {
        idle.push(TcpStream::connect(server.grpc_addr).await.unwrap());
    }
    support::wait_until(Duration::from_secs(10), "20 open connections", || {
        open() == 20
    })
    .await;

    // One more on each port: accepted and closed at once.
    let over = TcpStream::connect(server.grpc_addr).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), closed_by_server(over))
        .await
        .expect("a connection over the cap was not closed");
    assert_eq!(http_get(server.http_addr, "/healthz").await, None);
    let c = server.connections();
    assert_eq!(c.closed(Listener::Grpc, CloseReason::Limit), 1, "{c:?}");
    assert_eq!(c.closed(Listener::Http, CloseReason::Limit), 1, "{c:?}");
    assert_eq!(open(), 20);

    // The existing connection is served.
    put(&existing, "t", "r", b"v".to_vec()).await;
    assert!(get(&existing, "t", "r").await.unwrap());

    // Room again once some close.
    idle.truncate(14);
    support::wait_until(Duration::from_secs(10), "15 open connections", || {
        open() == 15
    })
    .await;
    let fresh = channel(&server).await;
    assert!(get(&fresh, "t", "r").await.unwrap());
    assert_eq!(http_get(server.http_addr, "/healthz").await, Some(200));
    drop(idle);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_closes_idle_connections_at_once_and_lets_calls_in_flight_finish() {
    let dir = tempfile::tempdir().unwrap();
    let long = Duration::from_secs(120);
    let server = shoal_server::start(config(dir.path(), long, long))
        .await
        .unwrap();
    let (grpc, http) = (server.grpc_addr, server.http_addr);
    let channel = channel(&server).await;
    write_big_rows(&channel, 100).await;

    // Idle connections of every kind: in handshake on both ports, past the
    // HTTP/2 handshake, and HTTP/1 keep-alive after a request.
    let mut watchers = idle_connections(grpc, 50, b"").await;
    watchers.extend(idle_connections(http, 5, b"").await);
    let tcp = TcpStream::connect(grpc).await.unwrap();
    let (_send, h2_conn) = h2::client::handshake(tcp).await.unwrap();
    let h2_idle = tokio::spawn(async move {
        let _ = h2_conn.await;
        Instant::now()
    });
    let mut keep_alive = TcpStream::connect(http).await.unwrap();
    let req = format!("GET /healthz HTTP/1.1\r\nHost: {http}\r\n\r\n");
    keep_alive.write_all(req.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    keep_alive.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let keep_alive = tokio::spawn(closed_by_server(keep_alive));

    // A scan in flight, its client paused.
    let mut stream = DataClient::new(channel.clone())
        .scan(pb::ScanRequest {
            table: "big".into(),
            rows_per_message: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut rows = stream.message().await.unwrap().unwrap().rows.len();

    let stop = Instant::now();
    let shutdown = tokio::spawn(server.shutdown());
    let within = Duration::from_secs(5);
    for w in watchers {
        let (_, closed) = tokio::time::timeout(within, w)
            .await
            .expect("an idle connection outlived the stop")
            .unwrap();
        assert!(closed - stop < within);
    }
    let closed = tokio::time::timeout(within, h2_idle)
        .await
        .unwrap()
        .unwrap();
    assert!(closed - stop < within);
    let closed = tokio::time::timeout(within, keep_alive)
        .await
        .unwrap()
        .unwrap();
    assert!(closed - stop < within);
    let idle_closed = stop.elapsed();

    // The scan is still being served, however long its client pauses (past
    // the grace given to connections with nothing in flight): it finishes,
    // then so does the stop.
    tokio::time::sleep(shoal_server::listen::DRAIN_GRACE * 3).await;
    assert!(!shutdown.is_finished(), "stopped before the scan finished");
    while let Some(msg) = stream.message().await.unwrap() {
        rows += msg.rows.len();
    }
    assert_eq!(rows, 100);
    tokio::time::timeout(within, shutdown)
        .await
        .expect("the stop did not end after the last call")
        .unwrap();
    eprintln!(
        "idle connections closed {idle_closed:?} after stop; stopped {:?} after stop",
        stop.elapsed()
    );
}
