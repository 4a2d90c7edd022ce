//! The life of one accepted connection: its handshake (timed), then hyper
//! serving it under a watchdog that closes it when it has had no call in
//! flight for too long, or when the server stops.
//!
//! Closing is graceful first: `graceful_shutdown` (HTTP/2: GOAWAY; HTTP/1:
//! no keep-alive, and an idle connection closes). Calls in flight finish.
//! Once no call is in flight, a connection that has not let go after
//! [`DRAIN_GRACE`] is dropped: its socket closes under it. A client that
//! never answers the GOAWAY's PING therefore cannot hold a stop. The grace
//! restarts while bytes still move (`socket::Moved`): hyper counts a call over
//! once it has taken the body's last frame, and HTTP/2 may still be sending
//! the body's tail as the client's window opens. That restart ends
//! `idle_timeout` after the connection was told to go.

use super::activity::{Activity, Tracked};
use super::preface::{Rewind, read_preface};
use super::socket::{Moved, serve_and_close};
use super::{ConnectionPolicy, DRAIN_GRACE, SecondProtocol, Slot};
use crate::metrics::{CloseReason, Listener};
use bytes::Bytes;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;
use tokio::net::TcpStream;
use tokio::sync::watch;

/// Serves `tcp` with `service` until it closes; the close is counted in
/// `slot` when this returns, after a lingering close of the socket
/// (`socket`).
pub(super) async fn serve<S, B>(
    tcp: TcpStream,
    on: Listener,
    service: S,
    builder: Arc<Builder<TokioExecutor>>,
    mut slot: Slot,
    mut stop: watch::Receiver<bool>,
    (tls, second): (
        Option<tokio_rustls::TlsAcceptor>,
        Option<Arc<dyn SecondProtocol>>,
    ),
) where
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    serve_and_close(tcp, |io| async move {
        let moved = io.moved();
        let Some(acceptor) = tls else {
            return serve_io((io, moved), on, service, builder, slot, stop, second).await;
        };
        let policy = slot.connections.policy().clone();
        match super::tls_handshake(&acceptor, io, policy.handshake_timeout, &mut stop).await {
            Ok(io) => serve_io((io, moved), on, service, builder, slot, stop, second).await,
            Err(reason) => {
                slot.reason = reason;
                slot
            }
        }
    })
    .await;
}

/// Serves a connection whose transport (TLS or not) is set up, `moved`
/// counting its socket's reads and writes; returns its slot once `tcp` is
/// dropped.
async fn serve_io<IO, S, B>(
    (mut tcp, moved): (IO, Moved),
    on: Listener,
    service: S,
    builder: Arc<Builder<TokioExecutor>>,
    mut slot: Slot,
    mut stop: watch::Receiver<bool>,
    second: Option<Arc<dyn SecondProtocol>>,
) -> Slot
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let policy = slot.connections.policy().clone();
    // gRPC: the HTTP/2 preface, timed here (hyper would wait for ever). The
    // HTTP port's first request is timed by the watchdog below, as hyper
    // may first read a few bytes to tell HTTP/1 from HTTP/2.
    let prefix = match on {
        Listener::Http | Listener::Thrift | Listener::HbaseRpc | Listener::Rest => Bytes::new(),
        Listener::Grpc => {
            let handshake = tokio::time::timeout(policy.handshake_timeout, read_preface(&mut tcp));
            tokio::select! {
                read = handshake => match read {
                    Ok(Ok(prefix)) => prefix,
                    Ok(Err(e)) => {
                        tracing::debug!(error = %e, "gRPC connection closed during its handshake");
                        return slot; // slot.reason is Client
                    }
                    Err(_) => {
                        slot.reason = CloseReason::Handshake;
                        return slot;
                    }
                },
                _ = super::stopped(&mut stop) => {
                    slot.reason = CloseReason::Shutdown;
                    return slot;
                }
            }
        }
    };
    // Not HTTP/2 but the port's second protocol (its first byte tells).
    if let Some(second) = second
        && prefix.first() == Some(&second.first_byte())
    {
        return second
            .serve(Box::new(Rewind::new(prefix, tcp)), slot, stop)
            .await;
    }
    let activity = Activity::new();
    let io = TokioIo::new(Rewind::new(prefix, tcp));
    let tracked = Tracked::new(service, activity.clone(), slot.peer());
    let conn = builder.serve_connection(io, tracked);
    let mut conn = std::pin::pin!(conn);
    // Set once the connection has been told to go.
    let mut draining: Option<Drain> = None;
    loop {
        let deadline = deadline(&activity, &policy, on, draining.as_ref());
        if let Some(d) = deadline
            && d <= Instant::now()
        {
            match draining {
                None => {
                    let why = if matches!(on, Listener::Http | Listener::Rest)
                        && activity.awaiting_first_call()
                    {
                        CloseReason::Handshake
                    } else {
                        CloseReason::Idle
                    };
                    conn.as_mut().graceful_shutdown();
                    draining = Some(Drain::new(why, &moved));
                    continue;
                }
                Some(ref mut drain) => {
                    let now = Instant::now();
                    let count = moved.count();
                    if count != drain.moved && now < drain.told + policy.idle_timeout {
                        // Still delivering: a new grace from now.
                        drain.grace_from = now;
                        drain.moved = count;
                        continue;
                    }
                    slot.reason = drain.why;
                    return slot; // dropping `conn` drops its handle of the socket
                }
            }
        }
        tokio::select! {
            result = conn.as_mut() => {
                slot.reason = match &draining {
                    Some(drain) => drain.why,
                    None => classify(result, on, &activity),
                };
                return slot;
            }
            // An error (the server dropped without stopping) also stops.
            _ = super::stopped(&mut stop), if draining.is_none() => {
                conn.as_mut().graceful_shutdown();
                draining = Some(Drain::new(CloseReason::Shutdown, &moved));
            }
            _ = activity.went_idle() => {}
            _ = sleep_until(deadline) => {}
        }
    }
}

/// A connection told to go (GOAWAY), on its way out.
#[derive(Debug)]
struct Drain {
    /// Why it was told.
    why: CloseReason,
    /// When it was told.
    told: Instant,
    /// When its current grace began: when it was told, or when bytes last
    /// moved since.
    grace_from: Instant,
    /// The socket's count of moves when that grace began.
    moved: u64,
}

impl Drain {
    /// Told now, for `why`.
    fn new(why: CloseReason, moved: &Moved) -> Drain {
        let now = Instant::now();
        Drain {
            why,
            told: now,
            grace_from: now,
            moved: moved.count(),
        }
    }
}

/// When the watchdog acts next, or `None` while a call is in flight.
fn deadline(
    activity: &Activity,
    policy: &ConnectionPolicy,
    on: Listener,
    draining: Option<&Drain>,
) -> Option<Instant> {
    let idle_since = activity.idle_since()?;
    Some(match draining {
        None if matches!(on, Listener::Http | Listener::Rest) && activity.awaiting_first_call() => {
            idle_since + policy.handshake_timeout
        }
        None => idle_since + policy.idle_timeout,
        Some(drain) => idle_since.max(drain.grace_from) + DRAIN_GRACE,
    })
}

/// Sleeps until `deadline`, or for ever.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}

/// Why a connection that ended by itself ended.
fn classify(
    result: Result<(), Box<dyn std::error::Error + Send + Sync>>,
    on: Listener,
    activity: &Activity,
) -> CloseReason {
    let Err(e) = result else {
        return CloseReason::Client;
    };
    let timed_out = e
        .downcast_ref::<hyper::Error>()
        .is_some_and(hyper::Error::is_timeout);
    if !timed_out {
        tracing::debug!(error = %e, listener = on.as_str(), "connection ended with an error");
        return CloseReason::Client;
    }
    // hyper's timers: HTTP/1's header read timeout, HTTP/2's keep-alive.
    match on {
        Listener::Http | Listener::Rest if activity.awaiting_first_call() => CloseReason::Handshake,
        Listener::Http | Listener::Thrift | Listener::HbaseRpc | Listener::Rest => {
            CloseReason::Idle
        }
        Listener::Grpc => CloseReason::Keepalive,
    }
}
