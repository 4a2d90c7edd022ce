//! The Thrift port: accept under the server's connection cap, recognise
//! each connection's protocol and transport from its first bytes, then
//! answer its calls one after another (Thrift1 clients wait for each
//! reply). A connection that sends nothing for `server.handshake_timeout`
//! at first, or for `server.idle_timeout` between calls, is closed; bytes
//! that are not Thrift, or a message over `thrift.max_message_bytes`, close
//! it after a TApplicationException where one can still be framed. On stop,
//! idle connections close at once and a call in progress finishes.

use super::fault::{FaultKind, result_struct};
use super::handler::Gateway;
use super::wire::{self, AppExceptionKind, Limits, Message, MessageType, Protocol, Transport};
use crate::listen::{Connections, SharedTcp, Slot};
use crate::metrics::{CloseReason, Listener};
use bytes::{Bytes, BytesMut};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A pause in a large message's bytes after which it is decoded again.
const RETRY_PAUSE: Duration = Duration::from_millis(5);

/// Serves the gateway on `listener` until `stop` turns true; also expires
/// idle scanners.
pub fn serve_thrift(
    listener: TcpListener,
    gateway: Arc<Gateway>,
    connections: Arc<Connections>,
    limits: Limits,
    stop: watch::Receiver<bool>,
    tls: Option<Arc<crate::security::tls::TlsListeners>>,
    serving: Option<Arc<crate::listen::ServingThreads>>,
) -> JoinHandle<()> {
    let policy = connections.policy().clone();
    let timeouts = (policy.handshake_timeout, policy.idle_timeout);
    let sweeper = gateway.clone();
    tokio::spawn(crate::listen::run_raw(
        listener,
        Listener::Thrift,
        connections,
        stop.clone(),
        tls,
        serving,
        move || {
            sweeper.scanners().sweep();
        },
        move |tcp, slot, acceptor| {
            connection(
                tcp,
                gateway.clone(),
                slot,
                limits,
                timeouts,
                stop.clone(),
                acceptor,
            )
        },
    ))
}

/// How reading the next message ended.
enum Read {
    Message(Message),
    Closed,
    Idle,
    Stopping,
    Bad(wire::CodecError),
}

/// One connection's life: its TLS handshake first when the listener has
/// TLS. Hands the slot back once the connection is done with the socket.
async fn connection(
    tcp: SharedTcp,
    gateway: Arc<Gateway>,
    mut slot: Slot,
    limits: Limits,
    (handshake, idle): (Duration, Duration),
    mut stop: watch::Receiver<bool>,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> Slot {
    let Some(acceptor) = tls else {
        serve(tcp, gateway, &mut slot, limits, (handshake, idle), stop).await;
        return slot;
    };
    match crate::listen::tls_handshake(&acceptor, tcp, handshake, &mut stop).await {
        Ok(io) => serve(io, gateway, &mut slot, limits, (handshake, idle), stop).await,
        Err(reason) => slot.set_reason(reason),
    }
    slot
}

/// Serves a connection whose transport (TLS or not) is set up.
async fn serve<IO: AsyncRead + AsyncWrite + Unpin>(
    mut tcp: IO,
    gateway: Arc<Gateway>,
    slot: &mut Slot,
    limits: Limits,
    (handshake, idle): (Duration, Duration),
    mut stop: watch::Receiver<bool>,
) {
    let mut buf = BytesMut::with_capacity(8 << 10);
    let Some((proto, transport)) = detect(&mut tcp, &mut buf, slot, handshake, &mut stop).await
    else {
        return;
    };
    let mut out = Vec::with_capacity(8 << 10);
    loop {
        let msg = match next_message(
            &mut tcp, &mut buf, proto, transport, &limits, idle, &mut stop,
        )
        .await
        {
            Read::Message(m) => m,
            Read::Closed => return,
            Read::Idle => {
                slot.set_reason(CloseReason::Idle);
                return;
            }
            Read::Stopping => {
                slot.set_reason(CloseReason::Shutdown);
                return;
            }
            Read::Bad(e) => {
                tracing::debug!(error = %e, "bad Thrift input; connection closed");
                let reply = Message {
                    name: String::new(),
                    kind: MessageType::Exception,
                    seqid: 0,
                    body: wire::application_exception(
                        &e.to_string(),
                        AppExceptionKind::ProtocolError,
                    ),
                };
                out.clear();
                wire::encode(&reply, proto, transport, &mut out);
                let _ = tcp.write_all(&out).await;
                return;
            }
        };
        let Some(reply) = answer(&gateway, Some(slot.peer()), msg).await else {
            continue;
        };
        out.clear();
        wire::encode(&reply, proto, transport, &mut out);
        if let Err(e) = tcp.write_all(&out).await {
            tracing::debug!(error = %e, "writing a Thrift reply failed");
            return;
        }
        // A large answer's buffer is not kept for the connection's life.
        if out.capacity() > 1 << 20 {
            out = Vec::with_capacity(8 << 10);
        }
    }
}

/// The reply to one message: the call's answer or exception (None for a
/// oneway call), or an exception for a message that is not a call.
async fn answer(
    gateway: &Gateway,
    peer: Option<std::net::SocketAddr>,
    msg: Message,
) -> Option<Message> {
    Some(match msg.kind {
        MessageType::Call | MessageType::Oneway => {
            let outcome = gateway.call(peer, &msg.name, &msg.body).await;
            if msg.kind == MessageType::Oneway {
                return None;
            }
            match outcome {
                Err(f) if f.kind == FaultKind::UnknownMethod => Message {
                    name: msg.name,
                    kind: MessageType::Exception,
                    seqid: msg.seqid,
                    body: wire::application_exception(&f.message, AppExceptionKind::UnknownMethod),
                },
                outcome => {
                    let body = result_struct(&msg.name, outcome);
                    Message {
                        name: msg.name,
                        kind: MessageType::Reply,
                        seqid: msg.seqid,
                        body,
                    }
                }
            }
        }
        MessageType::Reply | MessageType::Exception => Message {
            name: msg.name,
            kind: MessageType::Exception,
            seqid: msg.seqid,
            body: wire::application_exception(
                "a server takes calls, not replies",
                AppExceptionKind::InvalidMessageType,
            ),
        },
    })
}

/// The connection's protocol and transport, from its first bytes; None
/// (the reason set on `slot` where there is one) if they never come or are
/// not Thrift.
async fn detect(
    tcp: &mut (impl AsyncRead + Unpin),
    buf: &mut BytesMut,
    slot: &mut Slot,
    handshake: Duration,
    stop: &mut watch::Receiver<bool>,
) -> Option<(Protocol, Transport)> {
    loop {
        match wire::detect(buf) {
            Some(Ok(pt)) => return Some(pt),
            Some(Err(e)) => {
                tracing::debug!(error = %e, "not a Thrift connection; closed");
                return None;
            }
            None => {}
        }
        match fill(tcp, buf, handshake, stop).await {
            Fill::Data => {}
            Fill::Closed => return None,
            Fill::Timeout => {
                slot.set_reason(CloseReason::Handshake);
                return None;
            }
            Fill::Stopping => {
                slot.set_reason(CloseReason::Shutdown);
                return None;
            }
        }
    }
}

async fn next_message(
    tcp: &mut (impl AsyncRead + Unpin),
    buf: &mut BytesMut,
    proto: Protocol,
    transport: Transport,
    limits: &Limits,
    idle: Duration,
    stop: &mut watch::Receiver<bool>,
) -> Read {
    // A buffered message's end is only found by decoding it from its start.
    // Past 64 KiB, an incomplete message is decoded again only once it has
    // grown by half, or when no byte came for a moment (then it may be
    // whole): a client trickling a huge message cannot make the server
    // re-read it once per packet.
    let mut retry_at = 0usize;
    // Length at the last decode attempt, and whether to decode now anyway.
    let (mut decoded_len, mut force) = (0usize, false);
    loop {
        if !buf.is_empty() && (buf.len() >= retry_at || force) {
            force = false;
            let view: Bytes = buf.split().freeze();
            match wire::decode(&view, proto, transport, limits) {
                Ok(Some((msg, used))) => {
                    // The rest (a pipelined next call) stays for later.
                    buf.extend_from_slice(&view[used..]);
                    return Read::Message(msg);
                }
                Ok(None) => {
                    // Unique again once `view` goes: no copy.
                    *buf = BytesMut::from(view);
                    decoded_len = buf.len();
                    retry_at = if buf.len() > 64 << 10 {
                        buf.len() + buf.len() / 2
                    } else {
                        0
                    };
                }
                Err(e) => return Read::Bad(e),
            }
        }
        // Bytes not decoded yet: decode them after a short pause in arrivals.
        let pending = buf.len() > decoded_len;
        let wait = if pending { RETRY_PAUSE } else { idle };
        match fill(tcp, buf, wait, stop).await {
            Fill::Data => {}
            Fill::Closed => return Read::Closed,
            Fill::Timeout if pending => force = true,
            Fill::Timeout => return Read::Idle,
            Fill::Stopping => return Read::Stopping,
        }
    }
}

enum Fill {
    Data,
    Closed,
    Timeout,
    Stopping,
}

/// Reads more bytes into `buf`, waiting at most `wait`.
async fn fill(
    tcp: &mut (impl AsyncRead + Unpin),
    buf: &mut BytesMut,
    wait: Duration,
    stop: &mut watch::Receiver<bool>,
) -> Fill {
    if *stop.borrow() {
        return Fill::Stopping;
    }
    buf.reserve(8 << 10);
    tokio::select! {
        read = tokio::time::timeout(wait, tcp.read_buf(buf)) => match read {
            Ok(Ok(0)) | Ok(Err(_)) => Fill::Closed,
            Ok(Ok(_)) => Fill::Data,
            Err(_) => Fill::Timeout,
        },
        _ = crate::listen::stopped(stop) => Fill::Stopping,
    }
}
