//! Listening: the accept loops of the gRPC and HTTP ports and the life of
//! every connection on them. tonic's and axum's own servers wait forever on
//! a connection that never sends a request; here each connection has a
//! watchdog instead.
//!
//! The rules (all from `[server]`, see `docs/server.md`):
//! - **Handshake.** A gRPC connection must send the HTTP/2 preface, an HTTP
//!   connection its first request's headers, within `handshake_timeout`, or
//!   it is closed (`preface`, `connection`).
//! - **Idle.** A connection with no call in flight for `idle_timeout` is
//!   closed: GOAWAY first, then the socket once the client has had
//!   [`DRAIN_GRACE`] to let go. A call is in flight from its request until
//!   its response body is done or dropped, so a streaming scan however long
//!   keeps its connection (`activity`).
//! - **Dead peers.** HTTP/2 PINGs every `keepalive_interval`, unanswered
//!   after `keepalive_timeout` close the connection; TCP keepalive on every
//!   accepted socket finds peers that vanished mid-handshake or on HTTP/1.
//! - **Caps.** At most `max_streams_per_connection` calls at once per HTTP/2
//!   connection; at most `max_connections` open connections across both
//!   listeners (fitted to the open-files limit, `descriptors`): beyond it a
//!   new connection is accepted and closed at once, counted and logged.
//! - **Stop.** Nothing new is accepted; connections in handshake or with no
//!   call in flight close at once (GOAWAY, then [`DRAIN_GRACE`] at most);
//!   connections with calls in flight finish them, bounded by the caller's
//!   `shutdown_timeout`. A listener's task ends when its last connection has.
//!
//! - **Serving threads.** Accepted gRPC connections are handed round-robin
//!   to `serving_threads` single-threaded runtimes (`serving`), so a call is
//!   read, served and answered on one thread.
//! - **Pipelined calls.** The raw-protocol doors (the framed transport on
//!   the gRPC port, HBase's native RPC on its own) read, run and answer a
//!   connection's calls in one loop, `pipeline`; each brings only its codec
//!   and its handler.
//!
//! Kept from the servers this replaces: TCP_NODELAY on accepted sockets, the
//! 4 MiB stream / 16 MiB connection HTTP/2 windows on the gRPC port, HTTP/2
//! only on the gRPC port, HTTP/1 and HTTP/2 on the HTTP port.

mod accept;
mod activity;
mod connection;
mod descriptors;
pub(crate) mod handshake;
pub(crate) mod pipeline;
pub use descriptors::{MIN_OPEN_FILES, OpenFilesLimit, raise_open_files_limit};
mod preface;
mod serving;
mod socket;
pub(crate) use accept::run_raw;
pub use serving::ServingThreads;
pub(crate) use socket::SharedTcp;

use crate::config::ServerSection;
use crate::metrics::{CloseReason, ConnectionMetrics, Listener};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The I/O of an accepted connection (TLS or not), boxed so that a second
/// protocol's code is not generic over it.
pub(crate) trait ConnIo:
    tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send
{
}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> ConnIo for T {}

/// A protocol served on the gRPC port beside HTTP/2, told apart by the
/// first byte a connection sends (after TLS, when the port has it); the
/// framed transport of Shoal's Data calls is one (`crate::frames`).
pub(crate) trait SecondProtocol: Send + Sync + 'static {
    /// The first byte of its connections (never `P`, HTTP/2's).
    fn first_byte(&self) -> u8;
    /// Serves one connection, whose first bytes are still to be read from
    /// `io`; records why it closed in `slot` and hands it back once `io` is
    /// dropped (the listener releases it after closing the socket).
    fn serve(
        &self,
        io: Box<dyn ConnIo>,
        slot: Slot,
        stop: watch::Receiver<bool>,
    ) -> futures::future::BoxFuture<'static, Slot>;
}

/// HTTP/2 flow-control window of one gRPC stream, bytes.
const STREAM_WINDOW: u32 = 4 << 20;
/// HTTP/2 flow-control window of one gRPC connection, bytes.
const CONNECTION_WINDOW: u32 = 16 << 20;
/// How long a connection told to go (GOAWAY) with no call in flight may
/// take to let go before its socket is closed under it. The grace restarts
/// while bytes still move on the connection (a response's tail waiting
/// for the client's window), up to `idle_timeout` after it was told.
pub const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// At most one log line per this long about refused or failed accepts.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// The connection rules of both listeners.
#[derive(Debug, Clone)]
pub struct ConnectionPolicy {
    /// Time to the HTTP/2 preface (gRPC) or first request headers (HTTP).
    pub handshake_timeout: Duration,
    /// Time with no call in flight before a connection is closed.
    pub idle_timeout: Duration,
    /// HTTP/2 PING and TCP keepalive interval.
    pub keepalive_interval: Duration,
    /// Time a PING may go unanswered.
    pub keepalive_timeout: Duration,
    /// Concurrent calls per HTTP/2 connection.
    pub max_streams_per_connection: u32,
    /// Open connections across both listeners (already fitted to the
    /// open-files limit).
    pub max_connections: usize,
}

impl ConnectionPolicy {
    /// The rules of `[server]`, with `max_connections` lowered to what the
    /// open-files limit allows (logged).
    pub fn from_config(s: &ServerSection) -> ConnectionPolicy {
        let limit = descriptors::open_files_limit();
        let max_connections = descriptors::fit_connections(s.max_connections, limit);
        match limit {
            Some(l) if max_connections < s.max_connections => tracing::warn!(
                configured = s.max_connections,
                effective = max_connections,
                open_files_limit = l,
                "server.max_connections lowered to fit the open-files limit \
                 (raise `ulimit -n` to allow more)"
            ),
            _ => tracing::info!(
                max_connections,
                open_files_limit = ?limit,
                "connection cap"
            ),
        }
        ConnectionPolicy {
            handshake_timeout: s.handshake_timeout,
            idle_timeout: s.idle_timeout,
            keepalive_interval: s.keepalive_interval,
            keepalive_timeout: s.keepalive_timeout,
            max_streams_per_connection: s.max_streams_per_connection,
            max_connections,
        }
    }
}

/// What both listeners share: the rules, the counters and the cap.
#[derive(Debug)]
pub struct Connections {
    policy: ConnectionPolicy,
    metrics: Arc<ConnectionMetrics>,
    /// Open connections across both listeners (the cap's count).
    open: AtomicUsize,
    refused: Throttled,
    accept_errors: Throttled,
}

impl Connections {
    /// Shared state for listeners following `policy`, counting into `metrics`.
    pub fn new(policy: ConnectionPolicy, metrics: Arc<ConnectionMetrics>) -> Arc<Connections> {
        metrics.set_max_connections(policy.max_connections);
        Arc::new(Connections {
            policy,
            metrics,
            open: AtomicUsize::new(0),
            refused: Throttled::default(),
            accept_errors: Throttled::default(),
        })
    }

    /// The rules.
    pub fn policy(&self) -> &ConnectionPolicy {
        &self.policy
    }

    /// Takes a place under the cap for a connection just accepted on `on`,
    /// or refuses it (counted and, now and then, logged).
    pub(crate) fn admit(self: &Arc<Self>, on: Listener, peer: SocketAddr) -> Option<Slot> {
        self.metrics.accepted(on);
        let max = self.policy.max_connections;
        let taken = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok();
        if taken {
            return Some(Slot {
                connections: self.clone(),
                on,
                peer,
                reason: CloseReason::Client,
            });
        }
        self.metrics.closed(on, CloseReason::Limit);
        if let Some(n) = self.refused.hit() {
            tracing::warn!(
                refused = n,
                last_peer = %peer,
                listener = on.as_str(),
                max_connections = max,
                "connections refused: server.max_connections are open"
            );
        }
        None
    }
}

/// A connection's place under the cap; gives it back, counting the close
/// under `reason`, when dropped.
pub(crate) struct Slot {
    connections: Arc<Connections>,
    on: Listener,
    /// The client's address, for the audit log.
    peer: SocketAddr,
    reason: CloseReason,
}

impl Slot {
    /// The client's address.
    pub(crate) fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Why the connection will be counted closed.
    pub(crate) fn set_reason(&mut self, reason: CloseReason) {
        self.reason = reason;
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.connections.open.fetch_sub(1, Ordering::AcqRel);
        self.connections.metrics.closed(self.on, self.reason);
    }
}

/// Counts events and says when to log them: at most once per [`LOG_EVERY`].
#[derive(Debug, Default)]
struct Throttled {
    pending: AtomicU64,
    last: Mutex<Option<Instant>>,
}

impl Throttled {
    /// Counts one event; returns how many to report when it is time to log.
    fn hit(&self) -> Option<u64> {
        self.pending.fetch_add(1, Ordering::Relaxed);
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < LOG_EVERY) {
            return None;
        }
        *last = Some(now);
        Some(self.pending.swap(0, Ordering::Relaxed))
    }
}

/// Serves gRPC (HTTP/2 only), and `second` beside it, on `listener` until `stop` turns true; the
/// task ends when its last connection has closed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve_grpc(
    listener: TcpListener,
    routes: tonic::service::Routes,
    budget: Arc<crate::admission::RequestBudget>,
    connections: Arc<Connections>,
    serving: Option<Arc<ServingThreads>>,
    stop: watch::Receiver<bool>,
    security: Arc<crate::security::Security>,
    second: Option<Arc<dyn SecondProtocol>>,
) -> JoinHandle<()> {
    let mut builder = Builder::new(TokioExecutor::new()).http2_only();
    http2_settings(&mut builder, &connections.policy);
    // HTTP/2's default windows (64 KiB per stream and per connection) make
    // a client that streams megabytes per second of writes wait for window
    // updates, one round trip per 64 KiB; gRPC-Go grows its windows to
    // 16 MiB for the same reason.
    builder
        .http2()
        .initial_stream_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW);
    let tls = security.tls().cloned();
    let authenticated =
        tower_layer::Layer::layer(&crate::security::AuthLayer::new(security), routes.prepare());
    let service = TowerToHyperService::new(tower_layer::Layer::layer(
        &crate::admission::BudgetLayer::new(budget),
        authenticated,
    ));
    tokio::spawn(accept::run(
        listener,
        Listener::Grpc,
        service,
        Arc::new(builder),
        connections,
        (serving, tls, second),
        stop,
    ))
}

/// Serves an HTTP router (HTTP/1, and HTTP/2 for clients that speak it) on
/// `listener` as listener `on` (the status page's port, or the REST
/// gateway's) until `stop` turns true.
pub fn serve_http(
    listener: TcpListener,
    on: Listener,
    router: axum::Router,
    connections: Arc<Connections>,
    stop: watch::Receiver<bool>,
    tls: Option<Arc<crate::security::tls::TlsListeners>>,
) -> JoinHandle<()> {
    let mut builder = Builder::new(TokioExecutor::new());
    http2_settings(&mut builder, &connections.policy);
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(connections.policy.handshake_timeout);
    let service = TowerToHyperService::new(router);
    tokio::spawn(accept::run(
        listener,
        on,
        service,
        Arc::new(builder),
        connections,
        (None, tls, None),
        stop,
    ))
}

fn http2_settings(builder: &mut Builder<TokioExecutor>, p: &ConnectionPolicy) {
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(p.max_streams_per_connection)
        .keep_alive_interval(p.keepalive_interval)
        .keep_alive_timeout(p.keepalive_timeout);
}

/// The TLS handshake of a connection just accepted, bounded by `timeout`
/// and given up when the server stops; on failure, why it closed.
pub(crate) async fn tls_handshake<IO>(
    acceptor: &tokio_rustls::TlsAcceptor,
    tcp: IO,
    timeout: Duration,
    stop: &mut watch::Receiver<bool>,
) -> Result<tokio_rustls::server::TlsStream<IO>, CloseReason>
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let handshake = tokio::time::timeout(timeout, acceptor.accept(tcp));
    tokio::select! {
        done = handshake => match done {
            Ok(Ok(io)) => Ok(io),
            Ok(Err(e)) => {
                // A plain-text client, a wrong CA, a client certificate
                // missing or not trusted: the peer hears a TLS alert.
                tracing::debug!(error = %e, "TLS handshake failed");
                Err(CloseReason::Tls)
            }
            Err(_) => Err(CloseReason::Handshake),
        },
        _ = stopped(stop) => Err(CloseReason::Shutdown),
    }
}

/// Resolves once `stop` is true (or its sender is gone: nothing can stop
/// the server any more, so it is stopping).
pub(crate) async fn stopped(stop: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is dropped here, never held across an
    // await by the callers' `select!`s.
    let _ = stop.wait_for(|s| *s).await;
}

/// Logs a warning when `addr` is reachable beyond this machine and the
/// listener lacks TLS or the server lacks authentication.
pub fn warn_if_exposed(addr: SocketAddr, what: &str, tls: bool, auth: bool) {
    if is_loopback(addr) {
        return;
    }
    match (tls, auth) {
        (true, true) => {}
        (false, true) => tracing::warn!(
            "{what} listens on {addr}, beyond loopback, without TLS: tokens and data cross \
             the network in the clear (set [tls] cert and key)"
        ),
        (_, false) => tracing::warn!(
            "{what} listens on {addr}, beyond loopback, with auth off: anyone who can reach \
             this port can read and change every table (see docs/security.md)"
        ),
    }
}

/// True for 127.0.0.0/8, ::1 and their IPv4-mapped forms.
fn is_loopback(addr: SocketAddr) -> bool {
    addr.ip().to_canonical().is_loopback()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_127_slash_8_and_ipv6_one() {
        for a in [
            "127.0.0.1:1",
            "127.1.2.3:1",
            "[::1]:1",
            "[::ffff:127.0.0.1]:1",
        ] {
            assert!(is_loopback(a.parse().expect("addr")), "{a}");
        }
        for a in ["0.0.0.0:1", "10.0.0.1:1", "[::]:1", "[2001:db8::1]:1"] {
            assert!(!is_loopback(a.parse().expect("addr")), "{a}");
        }
    }

    #[test]
    fn throttled_logs_the_first_then_counts_until_the_next() {
        let t = Throttled::default();
        assert_eq!(t.hit(), Some(1));
        assert_eq!(t.hit(), None);
        assert_eq!(t.hit(), None);
        // Pretend the last log was long ago: the next hit reports all three.
        *t.last.lock().expect("lock") = Instant::now().checked_sub(LOG_EVERY * 2);
        assert_eq!(t.hit(), Some(3));
    }
}
