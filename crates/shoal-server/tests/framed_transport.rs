//! The framed transport of the Data calls against a real in-process server:
//! the Rust client's gets and mutations over it (on the gRPC port, beside
//! HTTP/2), the wire's refusals (bad version, oversized or malformed frames,
//! unknown methods), tokens when auth is on, and reconnection after the
//! server closes an idle connection.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::{Bytes, BytesMut};
use prost::Message;
use shoal_client::{Admin, Client, ClientOptions, DataTransport, Get, RowMutation};
use shoal_proto::frames::{self, Method};
use shoal_proto::v1 as pb;
use shoal_server::RunningServer;
use shoal_server::metrics::{Listener, RequestOp};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;

fn framed() -> ClientOptions {
    ClientOptions {
        data_transport: DataTransport::Framed,
        ..ClientOptions::default()
    }
}

fn count(server: &RunningServer, op: RequestOp) -> u64 {
    server.host.status().requests.op(op).map_or(0, |f| f.count)
}

/// Reads one answer frame; bytes read past it stay in `buf` for the next.
async fn answer_buffered(tcp: &mut TcpStream, buf: &mut BytesMut) -> frames::Frame {
    loop {
        if let Some(f) = frames::take_frame(buf, 64 << 20).unwrap() {
            return f;
        }
        let n = tokio::time::timeout(Duration::from_secs(10), tcp.read_buf(buf))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "the server closed the connection before answering");
    }
}

/// Reads the one answer expected next (nothing may follow it unread).
async fn answer(tcp: &mut TcpStream) -> frames::Frame {
    let mut buf = BytesMut::new();
    let f = answer_buffered(tcp, &mut buf).await;
    assert!(buf.is_empty(), "more than one answer arrived");
    f
}

fn failure(f: &frames::Frame) -> tonic::Status {
    assert_eq!(f.kind, frames::FAILED, "expected a failed answer");
    frames::error_to_status(pb::FrameError::decode(f.body.clone()).unwrap())
}

/// True once the server has closed `tcp` (reads end).
async fn closed(tcp: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    matches!(
        tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut rest)).await,
        Ok(Ok(_)) | Ok(Err(_))
    )
}

/// A raw framed connection that has said hello.
async fn open(server: &RunningServer, token: Option<&str>) -> (TcpStream, frames::Frame) {
    let mut tcp = TcpStream::connect(server.grpc_addr).await.unwrap();
    let mut hello = Vec::new();
    frames::encode_hello(&mut hello, token);
    tcp.write_all(&hello).await.unwrap();
    let a = answer(&mut tcp).await;
    (tcp, a)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_reads_and_writes_over_frames_beside_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(support::config(dir.path()))
        .await
        .unwrap();
    let c = Client::connect_with(&server.grpc_addr.to_string(), framed())
        .await
        .unwrap();
    c.admin()
        .create_table("t", vec![Admin::family("f")], vec![b"m".to_vec()])
        .await
        .unwrap();
    let t = c.table("t");
    let grpc_conns = server.connections().accepted(Listener::Grpc);
    let (gets, mutates) = (
        count(&server, RequestOp::Get),
        count(&server, RequestOp::Mutate),
    );
    // Single puts, gets (a missing row too), a multi-get and multi-mutate
    // across both regions.
    for i in 0..50 {
        t.put(format!("r{i:02}"), "f", "q", format!("v{i}"))
            .await
            .unwrap();
    }
    for i in 0..50 {
        let v = t.get_value(format!("r{i:02}"), "f", "q").await.unwrap();
        assert_eq!(v, Some(format!("v{i}").into_bytes()));
    }
    assert_eq!(t.get_value("absent", "f", "q").await.unwrap(), None);
    let rows = t
        .get_many(vec![Get::new("r01"), Get::new("zz"), Get::new("r49")])
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].cells[0].value, Bytes::from("v1"));
    assert!(rows[1].cells.is_empty());
    assert_eq!(rows[2].cells[0].value, Bytes::from("v49"));
    let results = t
        .mutate_many(vec![
            RowMutation::new("a1").put("f", "q", "x"),
            RowMutation::new("z1").put("nope", "q", "x"),
            RowMutation::new("z2").put("f", "q", "y"),
        ])
        .await
        .unwrap();
    assert!(results[0].is_ok() && results[2].is_ok());
    let e = results[1].as_ref().unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert_eq!(
        t.get_value("z2", "f", "q").await.unwrap(),
        Some(b"y".to_vec())
    );
    // An error the server answers keeps its code and message.
    let e = c
        .table("missing")
        .get_value("r", "f", "q")
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e}");
    // The calls were served and counted as any others ...
    assert!(count(&server, RequestOp::Get) >= gets + 50);
    assert!(count(&server, RequestOp::Mutate) + count(&server, RequestOp::MultiMutate) > mutates);
    // ... over one more connection to the gRPC port: the framed one.
    assert_eq!(
        server.connections().accepted(Listener::Grpc),
        grpc_conns + 1
    );
    // Scans still work (over gRPC) on the same client.
    let all = t.scan_collect(shoal_client::Scan::new()).await.unwrap();
    assert_eq!(all.len(), 52);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_refuses_what_it_cannot_serve_and_stays_up() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(support::config(dir.path()))
        .await
        .unwrap();
    let c = Client::connect(&server.grpc_addr.to_string())
        .await
        .unwrap();
    c.admin()
        .create_table("t", vec![Admin::family("f")], vec![])
        .await
        .unwrap();

    // Another version: refused by name, then closed.
    let mut tcp = TcpStream::connect(server.grpc_addr).await.unwrap();
    let mut hello = Vec::new();
    frames::encode_hello(&mut hello, None);
    hello[4] = 9;
    tcp.write_all(&hello).await.unwrap();
    let s = failure(&answer(&mut tcp).await);
    assert_eq!(s.code(), tonic::Code::Unimplemented);
    assert!(s.message().contains("version 9"), "{}", s.message());
    assert!(closed(&mut tcp).await);

    // A hello, then: an unknown method and a malformed request are answered
    // and the connection goes on; a good call after them is answered.
    let (mut tcp, hello) = open(&server, None).await;
    assert_eq!((hello.id, hello.kind), (frames::HELLO_CALL, frames::OK));
    let mut out = Vec::new();
    frames::encode_frame(&mut out, 1, 77, &());
    out.extend_from_slice(&7u32.to_be_bytes());
    out.extend_from_slice(&2u32.to_be_bytes());
    out.extend_from_slice(&[Method::Get as u8, 0xff, 0xff]);
    let get = pb::GetRequest {
        table: "t".into(),
        get: Some(pb::GetSpec {
            row: Bytes::from_static(b"r"),
            ..Default::default()
        }),
    };
    frames::encode_frame(&mut out, 3, Method::Get as u8, &get);
    tcp.write_all(&out).await.unwrap();
    let mut seen = std::collections::HashMap::new();
    let mut buf = BytesMut::new();
    for _ in 0..3 {
        let f = answer_buffered(&mut tcp, &mut buf).await;
        seen.insert(f.id, f);
    }
    assert_eq!(failure(&seen[&1]).code(), tonic::Code::Unimplemented);
    let bad = failure(&seen[&2]);
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
    assert!(bad.message().contains("malformed"), "{}", bad.message());
    assert_eq!(seen[&3].kind, frames::OK);
    let row = pb::GetResponse::decode(seen[&3].body.clone()).unwrap();
    assert!(row.row.unwrap().cells.is_empty());

    // A frame over the 64 MiB limit: answered, then the connection closes
    // without the server reading (or holding) its body.
    let mut big = Vec::new();
    big.extend_from_slice(&(200u32 << 20).to_be_bytes());
    big.extend_from_slice(&4u32.to_be_bytes());
    big.push(Method::Mutate as u8);
    tcp.write_all(&big).await.unwrap();
    let s = failure(&answer(&mut tcp).await);
    assert_eq!(s.code(), tonic::Code::ResourceExhausted);
    assert!(closed(&mut tcp).await);

    // Not HTTP/2 and not framed: closed.
    let mut tcp = TcpStream::connect(server.grpc_addr).await.unwrap();
    tcp.write_all(b"SSH-2.0-x\r\n").await.unwrap();
    assert!(closed(&mut tcp).await);

    // The server still serves gRPC.
    c.table("t").put("r", "f", "q", "v").await.unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auth_on_the_hello_needs_a_valid_token() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    let token = shoal_server::security::tokens::generate();
    std::fs::write(
        &tokens,
        format!(
            "{}\n",
            shoal_server::security::tokens::line("admin", &token)
        ),
    )
    .unwrap();
    let mut config = support::config(&dir.path().join("data"));
    config.auth.enabled = true;
    config.auth.tokens = tokens;
    config.auth.superusers = vec!["admin".into()];
    let server = shoal_server::start(config).await.unwrap();

    let (mut tcp, a) = open(&server, None).await;
    assert_eq!(failure(&a).code(), tonic::Code::Unauthenticated);
    assert!(closed(&mut tcp).await);
    let (mut tcp, a) = open(&server, Some("not-the-token")).await;
    assert_eq!(failure(&a).code(), tonic::Code::Unauthenticated);
    assert!(closed(&mut tcp).await);

    // The client with the token: its framed calls act as admin.
    let c = Client::connect_with(
        &server.grpc_addr.to_string(),
        ClientOptions {
            token: Some(token.clone()),
            ..framed()
        },
    )
    .await
    .unwrap();
    c.admin()
        .create_table("t", vec![Admin::family("f")], vec![])
        .await
        .unwrap();
    c.table("t").put("r", "f", "q", "v").await.unwrap();
    assert_eq!(
        c.table("t").get_value("r", "f", "q").await.unwrap(),
        Some(b"v".to_vec())
    );
    // Without a token the client's first framed call fails as gRPC's would.
    let anon = Client::connect_with(&server.grpc_addr.to_string(), framed())
        .await
        .unwrap();
    let e = anon.table("t").get_value("r", "f", "q").await.unwrap_err();
    assert_eq!(e.code(), Some(tonic::Code::Unauthenticated), "{e}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_is_closed_and_the_client_opens_another() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = support::config(dir.path());
    config.server.idle_timeout = Duration::from_millis(300);
    let server = shoal_server::start(config).await.unwrap();
    let c = Client::connect_with(&server.grpc_addr.to_string(), framed())
        .await
        .unwrap();
    c.admin()
        .create_table("t", vec![Admin::family("f")], vec![])
        .await
        .unwrap();
    let t = c.table("t");
    t.put("r", "f", "q", "v1").await.unwrap();
    let opened = server.connections().accepted(Listener::Grpc);
    // Longer than the idle timeout: the server closes both connections.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    t.put("r", "f", "q", "v2").await.unwrap();
    assert_eq!(
        t.get_value("r", "f", "q").await.unwrap(),
        Some(b"v2".to_vec())
    );
    assert!(server.connections().accepted(Listener::Grpc) > opened);
    server.shutdown().await;
}
