//! The framed transport of the Data calls, client side (the wire:
//! `shoal_proto::frames`): one TCP connection per server (TLS when the
//! client has TLS settings), to its gRPC address, beside the gRPC channel
//! (which keeps scans, region maps and admin calls).
//!
//! Calls are numbered and multiplexed: a caller frames its request and
//! hands it to the connection's writer task, which writes whatever has
//! queued up in one write; a reader task matches answers to callers by call
//! id. Reading never waits on writing, so a server blocked writing answers
//! is always drained. A connection that fails fails every call in flight on
//! it (as a transport error, so the router's retry rules apply as for
//! gRPC) and is opened again by the next call.

use bytes::BytesMut;
use prost::Message;
use shoal_proto::frames::{self, Method};
use shoal_proto::v1 as pb;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

/// Largest answer a client reads (the server's message limit).
const MAX_FRAME: usize = 64 << 20;
/// Most bytes the writer gathers into one write.
const MAX_WRITE: usize = 1 << 20;

/// The failure of a framed connection that could not be made: no request
/// went out, so even a call that is not idempotent may be sent again.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NotConnected(String);

/// The failure of a framed connection during calls.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ConnectionLost(String);

type Reply = oneshot::Sender<Result<bytes::Bytes, tonic::Status>>;

/// One open connection.
struct Link {
    /// Framed calls to write.
    tx: mpsc::UnboundedSender<Vec<u8>>,
    /// Callers waiting, by call id; `None` once the connection has failed.
    pending: Arc<Mutex<Option<HashMap<u32, Reply>>>>,
    dead: Arc<AtomicBool>,
}

/// A server's framed connection, opened on first use and again after it
/// fails. Cheap to clone; clones share it.
#[derive(Clone)]
pub(crate) struct FramedConn {
    addr: String,
    token: Option<String>,
    connect_timeout: Duration,
    tls: Option<FramedTls>,
    link: Arc<tokio::sync::Mutex<Option<Arc<Link>>>>,
    next_id: Arc<AtomicU32>,
}

impl std::fmt::Debug for FramedConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FramedConn")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

fn lost(message: String) -> tonic::Status {
    let mut s = tonic::Status::unavailable(message.clone());
    s.set_source(Arc::new(ConnectionLost(message)));
    s
}

fn not_connected(message: String) -> tonic::Status {
    let mut s = tonic::Status::unavailable(message.clone());
    s.set_source(Arc::new(NotConnected(message)));
    s
}

/// How a framed connection sets up TLS: the client's settings and the name
/// the server's certificate must carry.
#[derive(Clone)]
pub(crate) struct FramedTls {
    connector: tokio_rustls::TlsConnector,
    name: rustls::pki_types::ServerName<'static>,
}

/// `addr` without a scheme or trailing slash: `host:port`.
fn host_port(addr: &str) -> &str {
    let a = addr
        .strip_prefix("http://")
        .or_else(|| addr.strip_prefix("https://"))
        .unwrap_or(addr);
    a.trim_end_matches('/')
}

impl FramedTls {
    /// TLS to `addr` with `tls`'s trust, identity and name.
    pub(crate) fn new(tls: &crate::ClientTls, addr: &str) -> Result<FramedTls, String> {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&tls.ca_pem) {
            let cert = cert.map_err(|e| format!("the CA certificates: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("a CA certificate: {e}"))?;
        }
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS versions: {e}"))?
            .with_root_certificates(roots);
        let config = match &tls.identity {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let chain = CertificateDer::pem_slice_iter(cert)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("the client certificate: {e}"))?;
                let key = PrivateKeyDer::from_pem_slice(key)
                    .map_err(|e| format!("the client key: {e}"))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("the client certificate and key: {e}"))?
            }
        };
        let host = match &tls.domain {
            Some(d) => d.clone(),
            None => {
                let hp = host_port(addr);
                let host = hp.rsplit_once(':').map_or(hp, |(h, _)| h);
                host.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_string()
            }
        };
        let name = ServerName::try_from(host.clone())
            .map_err(|e| format!("{host:?} cannot be a TLS server name: {e}"))?;
        Ok(FramedTls {
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            name,
        })
    }
}

impl FramedConn {
    /// A connection to `addr` (`host:port`, the server's gRPC address),
    /// opened by the first call.
    pub(crate) fn new(
        addr: &str,
        token: Option<String>,
        connect_timeout: Duration,
        tls: Option<FramedTls>,
    ) -> FramedConn {
        FramedConn {
            addr: host_port(addr).to_string(),
            token,
            connect_timeout,
            tls,
            link: Arc::new(tokio::sync::Mutex::new(None)),
            next_id: Arc::new(AtomicU32::new(1)),
        }
    }

    /// The open link, opening one if there is none or it failed.
    async fn link(&self) -> Result<Arc<Link>, tonic::Status> {
        let mut slot = self.link.lock().await;
        if let Some(l) = slot.as_ref()
            && !l.dead.load(Ordering::Acquire)
        {
            return Ok(l.clone());
        }
        let l = Arc::new(self.open().await?);
        *slot = Some(l.clone());
        Ok(l)
    }

    /// Connects, says hello and starts the reader and writer tasks.
    async fn open(&self) -> Result<Link, tonic::Status> {
        let addr = &self.addr;
        let connect = tokio::time::timeout(self.connect_timeout, TcpStream::connect(addr));
        let mut tcp = match connect.await {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => return Err(not_connected(format!("cannot connect to {addr}: {e}"))),
            Err(_) => {
                return Err(not_connected(format!(
                    "cannot connect to {addr}: no answer within {:?}",
                    self.connect_timeout
                )));
            }
        };
        let _ = tcp.set_nodelay(true);
        let Some(tls) = &self.tls else {
            let (reader, writer) = self.hello(&mut tcp).await.map(|()| tcp.into_split())?;
            return Ok(self.start(reader, writer));
        };
        let handshake = tls.connector.connect(tls.name.clone(), tcp);
        let mut stream = match tokio::time::timeout(self.connect_timeout, handshake).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Err(not_connected(format!("TLS with {addr} failed: {e}"))),
            Err(_) => {
                return Err(not_connected(format!(
                    "TLS with {addr}: no handshake within {:?}",
                    self.connect_timeout
                )));
            }
        };
        self.hello(&mut stream).await?;
        let (reader, writer) = tokio::io::split(stream);
        Ok(self.start(reader, writer))
    }

    /// Says hello on a connection just made; `Ok` once the server accepted.
    async fn hello<S: AsyncRead + AsyncWrite + Unpin>(
        &self,
        tcp: &mut S,
    ) -> Result<(), tonic::Status> {
        let addr = &self.addr;
        let mut hello = Vec::new();
        frames::encode_hello(&mut hello, self.token.as_deref());
        let answer = async {
            tcp.write_all(&hello).await?;
            let mut buf = BytesMut::with_capacity(256);
            loop {
                match frames::take_frame(&mut buf, frames::MAX_HELLO_BYTES) {
                    Ok(Some(f)) => return Ok(f),
                    Ok(None) => {}
                    Err(fault) => return Err(std::io::Error::other(fault)),
                }
                if tcp.read_buf(&mut buf).await? == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
            }
        };
        let answer = match tokio::time::timeout(self.connect_timeout, answer).await {
            Ok(Ok(f)) => f,
            Ok(Err(e)) => {
                return Err(not_connected(format!(
                    "{addr} did not answer the framed transport's hello ({e}); \
                     does it serve it (Shoal 0.1 with frames)?"
                )));
            }
            Err(_) => {
                return Err(not_connected(format!(
                    "{addr} did not answer the framed transport's hello within {:?}",
                    self.connect_timeout
                )));
            }
        };
        if answer.kind != frames::OK {
            // Refused (bad token, other version): the server's reason, as it
            // would answer a gRPC call.
            return Err(match pb::FrameError::decode(answer.body) {
                Ok(e) => frames::error_to_status(e),
                Err(e) => lost(format!("{addr} refused the hello unreadably: {e}")),
            });
        }
        Ok(())
    }

    /// Starts the reader and writer tasks of an open connection.
    fn start<R, W>(&self, reader: R, writer: W) -> Link
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let dead = Arc::new(AtomicBool::new(false));
        tokio::spawn(write_loop(writer, rx, dead.clone()));
        tokio::spawn(read_loop(
            reader,
            pending.clone(),
            dead.clone(),
            self.addr.clone(),
        ));
        Link { tx, pending, dead }
    }

    /// One call: `request` as `method`, its answer decoded as `R`.
    pub(crate) async fn call<Q: Message, R: Message + Default>(
        &self,
        method: Method,
        request: &Q,
    ) -> Result<R, tonic::Status> {
        let link = self.link().await?;
        let id = loop {
            // Zero is the hello's.
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            if id != frames::HELLO_CALL {
                break id;
            }
        };
        let mut bytes = Vec::with_capacity(frames::HEADER_BYTES + request.encoded_len());
        frames::encode_frame(&mut bytes, id, method as u8, request);
        let (reply, answer) = oneshot::channel();
        {
            let mut pending = link.pending.lock().unwrap_or_else(|p| p.into_inner());
            let Some(map) = pending.as_mut() else {
                return Err(lost(format!("connection to {} lost", self.addr)));
            };
            map.insert(id, reply);
        }
        if link.tx.send(bytes).is_err() {
            fail_all(
                &link.pending,
                &link.dead,
                &format!("connection to {} lost", self.addr),
            );
        }
        let body = match answer.await {
            Ok(r) => r?,
            Err(_) => return Err(lost(format!("connection to {} lost", self.addr))),
        };
        R::decode(body).map_err(|e| {
            tonic::Status::internal(format!(
                "malformed {} answer from {}: {e}",
                method.as_str(),
                self.addr
            ))
        })
    }
}

/// Fails every caller waiting on a connection, and every later one.
fn fail_all(pending: &Mutex<Option<HashMap<u32, Reply>>>, dead: &AtomicBool, why: &str) {
    dead.store(true, Ordering::Release);
    let waiting = pending.lock().unwrap_or_else(|p| p.into_inner()).take();
    for (_, reply) in waiting.into_iter().flatten() {
        let _ = reply.send(Err(lost(why.to_string())));
    }
}

/// Writes queued calls, as many as have queued up in one write.
async fn write_loop(
    mut writer: impl AsyncWrite + Unpin,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    dead: Arc<AtomicBool>,
) {
    let mut out: Vec<u8> = Vec::with_capacity(16 << 10);
    while let Some(first) = rx.recv().await {
        if dead.load(Ordering::Acquire) {
            break;
        }
        let mut write: &[u8] = &first;
        if let Ok(next) = rx.try_recv() {
            out.extend_from_slice(&first);
            out.extend_from_slice(&next);
            while out.len() < MAX_WRITE {
                match rx.try_recv() {
                    Ok(more) => out.extend_from_slice(&more),
                    Err(_) => break,
                }
            }
            write = &out;
        }
        if writer.write_all(write).await.is_err() {
            // The reader sees the connection fail and fails the callers.
            break;
        }
        out.clear();
        if out.capacity() > 4 << 20 {
            out = Vec::with_capacity(16 << 10);
        }
    }
    let _ = writer.shutdown().await;
}

/// Reads answers and hands each to its caller, until the connection ends.
async fn read_loop(
    mut reader: impl AsyncRead + Unpin,
    pending: Arc<Mutex<Option<HashMap<u32, Reply>>>>,
    dead: Arc<AtomicBool>,
    addr: String,
) {
    let mut buf = BytesMut::with_capacity(64 << 10);
    let why = loop {
        loop {
            let frame = match frames::take_frame(&mut buf, MAX_FRAME) {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(fault) => {
                    tracing::debug!(addr, error = %fault, "unreadable framed answer; connection closed");
                    fail_all(&pending, &dead, &format!("connection to {addr}: {fault}"));
                    return;
                }
            };
            let result = match frame.kind {
                frames::OK => Ok(frame.body),
                _ => Err(match pb::FrameError::decode(frame.body) {
                    Ok(e) => frames::error_to_status(e),
                    Err(e) => {
                        tonic::Status::internal(format!("unreadable error answer from {addr}: {e}"))
                    }
                }),
            };
            if frame.id == frames::HELLO_CALL {
                // The server closes the connection after such an answer.
                let why = match &result {
                    Err(s) => format!("{addr} closed the connection: {}", s.message()),
                    Ok(_) => format!("{addr} sent an answer to no call"),
                };
                fail_all(&pending, &dead, &why);
                return;
            }
            let reply = pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_mut()
                .and_then(|m| m.remove(&frame.id));
            if let Some(reply) = reply {
                let _ = reply.send(result);
            }
        }
        if buf.capacity() - buf.len() < 8 << 10 {
            buf.reserve(64 << 10);
        }
        match reader.read_buf(&mut buf).await {
            Ok(0) => break format!("{addr} closed the connection"),
            Ok(_) => {}
            Err(e) => break format!("connection to {addr} failed: {e}"),
        }
    };
    fail_all(&pending, &dead, &why);
}
