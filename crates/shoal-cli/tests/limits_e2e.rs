//! Limits through the real binary: the budget of request bytes in flight
//! under 64 concurrent 60 MiB requests (the server's own peak memory is read
//! from /proc), and rows as large as the limits accept read back whole with
//! default settings by the client's Get and Scan.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use bytes::Bytes;
use http_body_util::BodyExt;
use shoal_client::{Admin, Client, Get, RowMutation, Scan};
use std::time::Duration;
use support::{ServerProcess, write_config};

/// 1 MiB of zeros, shared by every request body.
static ZEROS: [u8; 1 << 20] = [0; 1 << 20];

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited protobuf field header followed by `len` bytes to come.
fn field(tag: u8, len: u64, out: &mut Vec<u8>) {
    out.push(tag << 3 | 2);
    varint(len, out);
}

fn varint_len(v: u64) -> u64 {
    let mut n = 1;
    let mut v = v >> 7;
    while v > 0 {
        n += 1;
        v >>= 7;
    }
    n
}

/// The bytes of a gRPC-framed `MutateRequest` putting `value_len` zero bytes
/// into `t/row/cf:q`, up to the value itself (which is streamed after it, so
/// the test never holds 64 × 60 MiB).
fn mutate_prefix(value_len: u64) -> Vec<u8> {
    let put_len = (2 + 2) + (2 + 1) + 1 + varint_len(value_len) + value_len; // cf, q, value
    let mutation_len = 1 + varint_len(put_len) + put_len;
    let row_mutation_len = 2 + 3 + 1 + varint_len(mutation_len) + mutation_len; // row "row"
    let request_len = 3 + 1 + varint_len(row_mutation_len) + row_mutation_len; // table "t"
    let mut out = vec![0u8];
    out.extend_from_slice(&(request_len as u32).to_be_bytes());
    field(1, 1, &mut out); // MutateRequest.table
    out.push(b't');
    field(2, row_mutation_len, &mut out); // MutateRequest.mutation
    field(1, 3, &mut out); // RowMutation.row
    out.extend_from_slice(b"row");
    field(2, mutation_len, &mut out); // RowMutation.mutations
    field(1, put_len, &mut out); // Mutation.put
    field(1, 2, &mut out); // Put.family
    out.extend_from_slice(b"cf");
    field(2, 1, &mut out); // Put.qualifier
    out.push(b'q');
    field(4, value_len, &mut out); // Put.value
    out
}

/// A streamed request body.
type Body = http_body_util::StreamBody<
    futures::stream::BoxStream<'static, Result<hyper::body::Frame<Bytes>, std::io::Error>>,
>;

/// Sends one streamed Mutate over `sender`; returns the grpc-status code.
async fn streamed_mutate(
    mut sender: hyper::client::conn::http2::SendRequest<Body>,
    authority: String,
    value_len: u64,
) -> Option<i32> {
    let prefix = Bytes::from(mutate_prefix(value_len));
    let chunks = (value_len as usize).div_ceil(ZEROS.len());
    let body = futures::stream::iter(
        std::iter::once(prefix)
            .chain((0..chunks).map(move |i| {
                let n = ZEROS.len().min(value_len as usize - i * ZEROS.len());
                Bytes::from_static(&ZEROS[..n])
            }))
            .map(|b| Ok(hyper::body::Frame::data(b))),
    );
    let req = http::Request::post(format!("http://{authority}/shoal.v1.Data/Mutate"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(http_body_util::StreamBody::new(futures::StreamExt::boxed(
            body,
        )))
        .unwrap();
    sender.ready().await.ok()?;
    let resp = sender.send_request(req).await.ok()?;
    let code = |h: &http::HeaderMap| {
        h.get("grpc-status")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<i32>().ok())
    };
    if let Some(c) = code(resp.headers()) {
        return Some(c);
    }
    let collected = resp.into_body().collect().await.ok()?;
    collected.trailers().and_then(code)
}

/// The peak resident memory of `pid`, bytes (VmHWM).
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_concurrent_60_mib_requests_meet_a_256_mib_budget() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "[limits]\nrequest_bytes_in_flight = \"256MiB\"\n",
    );
    let server = ServerProcess::start(&dir.path().join("data"), Some(&config));
    let client = Client::connect(&server.url()).await.unwrap();
    client
        .admin()
        .create_table("t", vec![Admin::family("cf")], vec![])
        .await
        .unwrap();
    let pid = server.pid().unwrap();
    let before = peak_rss(pid);

    // 8 connections, 8 requests each, all at once.
    let mut calls = Vec::new();
    for _ in 0..8 {
        let tcp = tokio::net::TcpStream::connect(server.grpc).await.unwrap();
        let (sender, conn) =
            hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                .handshake(hyper_util::rt::TokioIo::new(tcp))
                .await
                .unwrap();
        tokio::spawn(conn);
        for _ in 0..8 {
            let authority = server.grpc.to_string();
            calls.push(tokio::spawn(streamed_mutate(
                sender.clone(),
                authority,
                60 << 20,
            )));
        }
    }
    let mut codes = Vec::new();
    for c in calls {
        codes.push(c.await.unwrap());
    }
    let exhausted = codes.iter().filter(|c| **c == Some(8)).count();
    // A request that got in whole is decoded and then refused by the value
    // limit (60 MiB > limits.max_value_bytes): INVALID_ARGUMENT.
    let invalid = codes.iter().filter(|c| **c == Some(3)).count();
    assert!(exhausted > 0, "no RESOURCE_EXHAUSTED among {codes:?}");
    assert_eq!(
        exhausted + invalid,
        64,
        "every request is answered RESOURCE_EXHAUSTED or INVALID_ARGUMENT: {codes:?}"
    );
    let peak = peak_rss(pid);
    eprintln!(
        "64 x 60 MiB: {exhausted} RESOURCE_EXHAUSTED, {invalid} INVALID_ARGUMENT; server peak RSS \
         {} MiB (before: {} MiB)",
        peak >> 20,
        before >> 20
    );
    // Unbounded, the server would hold 64 x 60 MiB = 3.75 GiB of requests
    // (and a decoded copy of each).
    assert!(peak < 1536 << 20, "server peak RSS {} MiB", peak >> 20);

    // The server is up and answers.
    let table = client.table("t");
    table
        .mutate(RowMutation::new("ok").put("cf", "q", "v"))
        .await
        .unwrap();
    assert_eq!(
        table.get_value("ok", "cf", "q").await.unwrap().as_deref(),
        Some(&b"v"[..])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_largest_accepted_rows_read_back_whole_with_default_settings() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "");
    let server = ServerProcess::start(&dir.path().join("data"), Some(&config));
    let client = Client::connect(&server.url()).await.unwrap();
    client
        .admin()
        .create_table("t", vec![Admin::family("a"), Admin::family("b")], vec![])
        .await
        .unwrap();
    let table = client.table("t");
    let max = 32 << 20; // limits.max_value_bytes
    let value = |byte: u8, n: usize| vec![byte; n];
    // A 1 MiB row followed by a 64 MiB one (two accepted 32 MiB puts to two
    // families: together larger than one 64 MiB message), then a small row.
    table
        .mutate(RowMutation::new("r1").put("a", "q", value(1, 1 << 20)))
        .await
        .unwrap();
    table
        .mutate(RowMutation::new("r2").put("a", "q", value(2, max)))
        .await
        .unwrap();
    table
        .mutate(RowMutation::new("r2").put("b", "q", value(3, max)))
        .await
        .unwrap();
    table
        .mutate(RowMutation::new("r3").put("a", "q", "small"))
        .await
        .unwrap();
    let err = table
        .mutate(RowMutation::new("r4").put("a", "q", value(4, max + 1)))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("limits.max_value_bytes"), "{err}");

    let check_r2 = |row: &shoal_client::proto::Row| {
        assert_eq!(row.cells.len(), 2);
        assert!(row.cells[0].value.len() == max && row.cells[0].value.iter().all(|&b| b == 2));
        assert!(row.cells[1].value.len() == max && row.cells[1].value.iter().all(|&b| b == 3));
    };
    // Get: too large for one response, read through a scan by the client.
    let row = table.get(Get::new("r2")).await.unwrap();
    check_r2(&row);
    // Scan with default settings: every row, whole, in order.
    let mut scanner = table.scanner(Scan::new());
    let mut rows = Vec::new();
    while let Some(r) = tokio::time::timeout(Duration::from_secs(120), scanner.next())
        .await
        .unwrap()
        .unwrap()
    {
        rows.push(r);
    }
    let keys: Vec<&[u8]> = rows.iter().map(|r| &r.row[..]).collect();
    assert_eq!(keys, [&b"r1"[..], b"r2", b"r3"]);
    assert_eq!(rows[0].cells[0].value.len(), 1 << 20);
    check_r2(&rows[1]);
    assert_eq!(rows[2].cells[0].value, &b"small"[..]);
}
