//! The real `shoal` binary stops promptly on SIGTERM although clients hold
//! connections open with nothing in flight — connections still in their
//! handshake on both ports, an HTTP/2 client between calls, an HTTP/1
//! keep-alive connection — rather than waiting out `shutdown_timeout` (30 s
//! by default) for them.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use shoal_client::{Admin, Client};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use support::{ServerProcess, write_config};

#[test]
fn sigterm_with_idle_connections_open_exits_within_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), "");
    let server = ServerProcess::start(&data, Some(&config));
    // A live runtime: the client answers the server's GOAWAY like a real one.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();

    // An HTTP/2 client that made calls and now waits.
    let client = rt.block_on(async {
        let client = Client::connect(&server.url()).await.unwrap();
        client
            .admin()
            .create_table("t", vec![Admin::family("cf")], vec![])
            .await
            .unwrap();
        client.table("t").put("r", "cf", "q", "v").await.unwrap();
        client
    });
    // Connections that never send a byte, on both ports.
    let mut idle: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(server.grpc).unwrap())
        .collect();
    idle.extend((0..20).map(|_| TcpStream::connect(server.http).unwrap()));
    // An HTTP/1.1 keep-alive connection after one request.
    let mut keep_alive = TcpStream::connect(server.http).unwrap();
    write!(
        keep_alive,
        "GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.http
    )
    .unwrap();
    let mut head = [0u8; 12];
    keep_alive.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    // Every connection has reached the server before the signal (the count
    // includes the connection asking); the accept loop may lag the clients.
    let deadline = Instant::now() + Duration::from_secs(30);
    let open = loop {
        let (code, metrics) = server.http_get("/metrics");
        assert_eq!(code, 200);
        let open = open_connections(&metrics);
        if open > 222 {
            break open;
        }
        assert!(Instant::now() < deadline, "only {open} connections open");
        std::thread::sleep(Duration::from_millis(50));
    };

    let signalled = Instant::now();
    let status = server.terminate();
    let took = signalled.elapsed();
    eprintln!("SIGTERM with {open} connections open: exited in {took:?}");
    assert!(status.success(), "{status:?}");
    assert!(
        took < Duration::from_secs(5),
        "exit took {took:?} (shutdown_timeout is 30 s)"
    );
    drop((client, idle, keep_alive));
}

/// The sum of `shoal_connections_open` samples.
fn open_connections(metrics: &str) -> u64 {
    metrics
        .lines()
        .filter(|l| l.starts_with("shoal_connections_open{"))
        .filter_map(|l| l.rsplit_once(' '))
        .filter_map(|(_, v)| v.parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}
