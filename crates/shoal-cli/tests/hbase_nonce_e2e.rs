//! HBase's nonces through the stock Java client (`hbase-client` 2.6.1): a
//! proxy between the client and `shoal serve` (which advertises the
//! proxy's address, so every call goes through it) forwards each Increment
//! and Append — HBase's client marks each with a nonce — but cuts the
//! connection before its answer reaches the client. The client retries
//! with the same nonce; the server must answer the retry without applying
//! it again. The program (`tests/hbase-client-java/.../HBaseNonceIT.java`)
//! checks every counter and value after each call: Table.increment,
//! incrementColumnValue, append, batch (Multi) and checkAndMutate with an
//! Increment and an Append. It also checks that Increment and Append answer
//! the stored cells' timestamps (on rows the proxy leaves alone).
//!
//! Skipped outside CI without Java 17 and Maven, as `hbase_client_e2e.rs`.

#![allow(clippy::unwrap_used)] // test code

#[path = "support/java.rs"]
mod java;
mod support;

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use support::ServerProcess;

/// `n` distinct free loopback ports below 32768 (bound, then released).
fn free_low_ports(n: usize) -> Vec<u16> {
    let start = (std::process::id() % 12_000) as u16;
    let held: Vec<TcpListener> = (0..12_000u16)
        .map(|i| 20_000 + (start + i) % 12_000)
        .filter_map(|p| TcpListener::bind(("127.0.0.1", p)).ok())
        .take(n)
        .collect();
    assert_eq!(held.len(), n, "free ports below 32768");
    held.iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

// ---- a minimal protobuf reader: just what the proxy needs.

/// One field of a protobuf message: its number and, for varints and
/// length-delimited fields, its value.
enum Field<'a> {
    Varint(u32, u64),
    Bytes(u32, &'a [u8]),
}

fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The fields of a message (stops at anything malformed).
fn fields(buf: &[u8]) -> Vec<Field<'_>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let Some(key) = varint(buf, &mut pos) else {
            break;
        };
        let number = (key >> 3) as u32;
        match key & 7 {
            0 => match varint(buf, &mut pos) {
                Some(v) => out.push(Field::Varint(number, v)),
                None => break,
            },
            1 => pos += 8,
            2 => {
                let Some(len) = varint(buf, &mut pos) else {
                    break;
                };
                let end = pos + len as usize;
                let Some(bytes) = buf.get(pos..end) else {
                    break;
                };
                out.push(Field::Bytes(number, bytes));
                pos = end;
            }
            5 => pos += 4,
            _ => break,
        }
    }
    out
}

fn bytes_fields(buf: &[u8], number: u32) -> impl Iterator<Item = &[u8]> {
    fields(buf).into_iter().filter_map(move |f| match f {
        Field::Bytes(n, b) if n == number => Some(b),
        _ => None,
    })
}

fn varint_field(buf: &[u8], number: u32) -> Option<u64> {
    fields(buf).into_iter().find_map(|f| match f {
        Field::Varint(n, v) if n == number => Some(v),
        _ => None,
    })
}

/// A delimited message at the front of `buf`, and the rest.
fn delimited(buf: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut pos = 0;
    let len = varint(buf, &mut pos)? as usize;
    let msg = buf.get(pos..pos + len)?;
    Some((msg, &buf[pos + len..]))
}

/// The nonces of the marked mutations (MutationProto.nonce, field 9) in a
/// `Mutate` or `Multi` call's parameter, except those of rows named
/// "direct-…".
fn nonces(method: &str, param: &[u8]) -> Vec<u64> {
    let mutations: Vec<&[u8]> = match method {
        // MutateRequest.mutation = 2.
        "Mutate" => bytes_fields(param, 2).collect(),
        // MultiRequest.regionAction = 1 → RegionAction.action = 3 →
        // Action.mutation = 2.
        "Multi" => bytes_fields(param, 1)
            .flat_map(|ra| bytes_fields(ra, 3).collect::<Vec<_>>())
            .flat_map(|a| bytes_fields(a, 2).collect::<Vec<_>>())
            .collect(),
        _ => Vec::new(),
    };
    mutations
        .into_iter()
        .filter(|m| !bytes_fields(m, 1).any(|row| row.starts_with(b"direct-")))
        .filter_map(|m| varint_field(m, 9))
        .filter(|&n| n != 0)
        .collect()
}

// ---- the proxy

/// Forwards connections to `upstream`; the first time it sees a call
/// carrying a nonce it has not seen, it forwards the call and cuts the
/// connection when the call's answer comes back, dropping the answer.
struct Proxy {
    /// Answers dropped.
    dropped: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    fn start(listen: SocketAddr, upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind(listen).expect("bind the proxy");
        listener.set_nonblocking(true).unwrap();
        let dropped = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(HashSet::<u64>::new()));
        let (d, s) = (dropped.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let Ok(server) = TcpStream::connect(upstream) else {
                            continue;
                        };
                        let (d, seen) = (d.clone(), seen.clone());
                        std::thread::spawn(move || connection(client, server, seen, d));
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
                }
            }
        });
        Proxy { dropped, stop }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn read_frame(from: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    from.read_exact(&mut len).ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    from.read_exact(&mut body).ok()?;
    let mut frame = len.to_vec();
    frame.extend_from_slice(&body);
    Some(frame)
}

fn connection(
    mut client: TcpStream,
    mut server: TcpStream,
    seen: Arc<Mutex<HashSet<u64>>>,
    dropped: Arc<AtomicUsize>,
) {
    let mut preamble = [0u8; 6];
    if client.read_exact(&mut preamble).is_err() || server.write_all(&preamble).is_err() {
        return;
    }
    // The call id whose answer is to be dropped.
    let doomed: Arc<Mutex<Option<u32>>> = Arc::new(Mutex::new(None));
    let framed = &preamble[..4] == b"HBas";
    {
        // Answers: whole frames (4-byte length, then a delimited
        // ResponseHeader whose call_id is field 1).
        let (mut from, mut to) = (server.try_clone().unwrap(), client.try_clone().unwrap());
        let doomed = doomed.clone();
        std::thread::spawn(move || {
            if !framed {
                let _ = std::io::copy(&mut from, &mut to);
                let _ = to.shutdown(Shutdown::Both);
                return;
            }
            while let Some(frame) = read_frame(&mut from) {
                let call = delimited(&frame[4..])
                    .and_then(|(h, _)| varint_field(h, 1))
                    .map(|c| c as u32);
                let doom = *doomed.lock().unwrap();
                if doom.is_some() && call == doom {
                    // The call was applied; its answer is lost.
                    dropped.fetch_add(1, Ordering::SeqCst);
                    let _ = to.shutdown(Shutdown::Both);
                    let _ = from.shutdown(Shutdown::Both);
                    return;
                }
                if to.write_all(&frame).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Both);
        });
    }
    if !framed {
        let _ = std::io::copy(&mut client, &mut server);
        let _ = server.shutdown(Shutdown::Write);
        return;
    }
    // The connection header, then calls: 4-byte length, a delimited
    // RequestHeader (call_id = 1, method_name = 3), a delimited parameter,
    // then the cell block.
    let Some(header) = read_frame(&mut client) else {
        return;
    };
    if server.write_all(&header).is_err() {
        return;
    }
    while let Some(frame) = read_frame(&mut client) {
        if let Some((h, rest)) = delimited(&frame[4..]) {
            let method = bytes_fields(h, 3)
                .next()
                .map(|m| String::from_utf8_lossy(m).into_owned())
                .unwrap_or_default();
            let marked = delimited(rest)
                .map(|(param, _)| nonces(&method, param))
                .unwrap_or_default();
            let fresh = {
                let mut seen = seen.lock().unwrap();
                // Remember every nonce of the call, fresh or not.
                marked.iter().filter(|n| seen.insert(**n)).count() > 0
            };
            if fresh && let Some(call) = varint_field(h, 1) {
                *doomed.lock().unwrap() = Some(call as u32);
            }
        }
        if server.write_all(&frame).is_err() {
            break;
        }
    }
    let _ = server.shutdown(Shutdown::Both);
}

#[test]
fn a_retried_increment_or_append_is_applied_once() {
    let dir = tempfile::tempdir().unwrap();
    let Some(cp) = java::compile(
        dir.path(),
        &[java::project().join("src/main/java/shoal/it/HBaseNonceIT.java")],
    ) else {
        return;
    };
    let ports = free_low_ports(2);
    let proxy_addr = SocketAddr::from(([127, 0, 0, 1], ports[0]));
    let hbase_addr = SocketAddr::from(([127, 0, 0, 1], ports[1]));
    let config = support::write_config(
        dir.path(),
        &format!("[hbase_rpc]\nadvertise_addr = \"{proxy_addr}\"\n"),
    );
    let server =
        ServerProcess::start_with_hbase_addr(&dir.path().join("data"), Some(&config), hbase_addr);
    let upstream = server.hbase.expect("the native RPC port");
    let proxy = Proxy::start(proxy_addr, upstream);

    let out = Command::new("java")
        .arg("-cp")
        .arg(&cp)
        .arg("shoal.it.HBaseNonceIT")
        .arg(proxy_addr.to_string())
        .arg("it_nonces")
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("done nonces"),
        "HBaseNonceIT failed (answers dropped: {}):\nstdout:\n{stdout}\nstderr:\n{}\nserver stderr (tail):\n{}",
        proxy.dropped.load(Ordering::SeqCst),
        java::tail(&String::from_utf8_lossy(&out.stderr), 60),
        java::tail(&server.stderr(), 40),
    );
    for check in [
        "ok increment",
        "ok incrementColumnValue",
        "ok append",
        "ok batch",
        "ok checkAndMutate",
        "ok stored timestamps",
    ] {
        assert!(stdout.contains(check), "missing {check:?}:\n{stdout}");
    }
    // Every nonced call's answer was lost once, so each was retried:
    // increment ×2, incrementColumnValue, append, one batch, two
    // checkAndMutates.
    let dropped = proxy.dropped.load(Ordering::SeqCst);
    eprintln!("answers dropped and retried: {dropped}");
    assert!(dropped >= 7, "only {dropped} answers were dropped");
}
