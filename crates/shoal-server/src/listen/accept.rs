//! The accept loop of one listener: admit under the connection cap, set the
//! socket options, hand each connection to a task of its own (on a serving
//! thread, when the listener has them); on stop, stop accepting (the
//! listening socket closes) and wait for the connections.

use super::connection;
use super::serving::ServingThreads;
use super::socket::{SharedTcp, serve_and_close};
use super::{ConnectionPolicy, Connections};
use crate::metrics::Listener;
use bytes::Bytes;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioExecutor;
use hyper_util::server::conn::auto::Builder;
use socket2::{SockRef, TcpKeepalive};
use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Pause after an accept error that is not about one connection (out of
/// descriptors, mostly), so the loop does not spin on it.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// What a listener may add to plain HTTP: serving threads, TLS, and a
/// second protocol on the same port.
pub(super) type Extras = (
    Option<Arc<ServingThreads>>,
    Option<Arc<crate::security::tls::TlsListeners>>,
    Option<Arc<dyn super::SecondProtocol>>,
);

/// Accepts on `listener` until `stop` turns true, then waits for every
/// connection to close.
pub(super) async fn run<S, B>(
    listener: TcpListener,
    on: Listener,
    service: S,
    builder: Arc<Builder<TokioExecutor>>,
    connections: Arc<Connections>,
    (serving, tls, second): Extras,
    stop: watch::Receiver<bool>,
) where
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut tasks = JoinSet::new();
    let mut stopping = stop.clone();
    loop {
        tokio::select! {
            biased;
            _ = super::stopped(&mut stopping) => break,
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                if let Err(e) = done {
                    tracing::error!(error = %e, listener = on.as_str(), "a connection task failed");
                }
            }
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    let Some(slot) = connections.admit(on, peer) else {
                        continue; // dropping `tcp` closes it
                    };
                    configure(&tcp, connections.policy());
                    let (service, builder, stop) = (service.clone(), builder.clone(), stop.clone());
                    let acceptor = tls.as_ref().and_then(|t| t.acceptor(on.tls_name()));
                    let how = (acceptor, second.clone());
                    let Some(serving) = &serving else {
                        tasks.spawn(connection::serve(tcp, on, service, builder, slot, stop, how));
                        continue;
                    };
                    hand_over(&mut tasks, serving, tcp, move |tcp| {
                        connection::serve(tcp, on, service, builder, slot, stop, how)
                    });
                }
                Err(e) => {
                    if !accept_failed(&e, on, &connections, &stop).await {
                        break;
                    }
                }
            }
        }
    }
    drop(listener);
    drain(tasks, on).await;
}

/// The accept loop of a listener that is not HTTP (Thrift, HBase's native
/// RPC): admit under the connection cap, set the socket options, run
/// `serve` on each connection in a task of its own (with its TLS acceptor,
/// when the listener has TLS) — on a serving thread when there are any, as
/// gRPC's connections are — call `tick` every second (scanner leases); on
/// stop, stop accepting and wait for the connections.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_raw<F, Fut>(
    listener: TcpListener,
    on: Listener,
    connections: Arc<Connections>,
    stop: watch::Receiver<bool>,
    tls: Option<Arc<crate::security::tls::TlsListeners>>,
    serving: Option<Arc<ServingThreads>>,
    tick: impl Fn(),
    serve: F,
) where
    F: Fn(SharedTcp, super::Slot, Option<tokio_rustls::TlsAcceptor>) -> Fut
        + Clone
        + Send
        + 'static,
    Fut: std::future::Future<Output = super::Slot> + Send + 'static,
{
    let mut tasks = JoinSet::new();
    let mut stopping = stop.clone();
    let mut every_second = tokio::time::interval(Duration::from_secs(1));
    every_second.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            _ = super::stopped(&mut stopping) => break,
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                if let Err(e) = done {
                    tracing::error!(error = %e, listener = on.as_str(), "a connection task failed");
                }
            }
            _ = every_second.tick() => tick(),
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    let Some(slot) = connections.admit(on, peer) else {
                        continue; // dropping `tcp` closes it
                    };
                    configure(&tcp, connections.policy());
                    let acceptor = tls.as_ref().and_then(|t| t.acceptor(on.tls_name()));
                    let serve = serve.clone();
                    let run = move |tcp| serve_and_close(tcp, move |io| serve(io, slot, acceptor));
                    let Some(serving) = &serving else {
                        tasks.spawn(run(tcp));
                        continue;
                    };
                    hand_over(&mut tasks, serving, tcp, run);
                }
                Err(e) => {
                    if !accept_failed(&e, on, &connections, &stop).await {
                        break;
                    }
                }
            }
        }
    }
    drop(listener);
    drain(tasks, on).await;
}

/// Runs `run` on a connection in a task on the next serving thread, the
/// socket moved to that thread's own reactor so that its readiness wakes
/// that thread and no other. If the socket cannot move, the connection is
/// dropped (its slot, which `run` holds, counts it closed).
fn hand_over<F, Fut>(tasks: &mut JoinSet<()>, serving: &ServingThreads, tcp: TcpStream, run: F)
where
    F: FnOnce(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let tcp = match tcp.into_std() {
        Ok(tcp) => tcp,
        Err(e) => {
            tracing::debug!(error = %e, "handing a connection over failed");
            return;
        }
    };
    tasks.spawn_on(
        async move {
            match TcpStream::from_std(tcp) {
                Ok(tcp) => run(tcp).await,
                Err(e) => tracing::debug!(error = %e, "taking a connection over failed"),
            }
        },
        serving.pick(),
    );
}

/// After a failed accept: nothing to do if it concerned one connection;
/// otherwise logged (throttled) and a pause. False if the server stopped
/// meanwhile.
async fn accept_failed(
    e: &io::Error,
    on: Listener,
    connections: &Connections,
    stop: &watch::Receiver<bool>,
) -> bool {
    if is_about_one_connection(e) {
        return true;
    }
    if let Some(n) = connections.accept_errors.hit() {
        tracing::warn!(error = %e, errors = n, listener = on.as_str(), "accept failed");
    }
    let mut stop = stop.clone();
    tokio::select! {
        _ = tokio::time::sleep(ACCEPT_BACKOFF) => true,
        _ = super::stopped(&mut stop) => false,
    }
}

/// Waits for every connection task to end.
async fn drain(mut tasks: JoinSet<()>, on: Listener) {
    while let Some(done) = tasks.join_next().await {
        if let Err(e) = done {
            tracing::error!(error = %e, listener = on.as_str(), "a connection task failed");
        }
    }
}

/// TCP_NODELAY (without it small responses wait for delayed ACKs, ~40 ms
/// per call) and TCP keepalive (finds peers that vanished).
pub(crate) fn configure(tcp: &TcpStream, policy: &ConnectionPolicy) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!(error = %e, "TCP_NODELAY on a connection failed");
    }
    // Probes start after `keepalive_interval` of silence and give up after
    // about `keepalive_timeout` more.
    let probe_every = (policy.keepalive_timeout / 3).max(Duration::from_secs(1));
    let keepalive = TcpKeepalive::new()
        .with_time(policy.keepalive_interval)
        .with_interval(probe_every)
        .with_retries(3);
    if let Err(e) = SockRef::from(tcp).set_tcp_keepalive(&keepalive) {
        tracing::debug!(error = %e, "TCP keepalive on a connection failed");
    }
}

/// Errors of `accept` that concern the one connection being accepted.
fn is_about_one_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}
