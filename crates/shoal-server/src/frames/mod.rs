//! The framed transport of Shoal's Data calls, server side (the wire:
//! `shoal_proto::frames`). It shares the gRPC port: the listener hands over
//! a connection whose first byte is the framing's (`listen::SecondProtocol`),
//! after TLS when the port has it.
//!
//! A connection opens with a hello (its token, checked as gRPC's bearer
//! token is), then sends calls. Its calls are read, run side by side and
//! answered on this connection's one task — no task per call, no hand-off to
//! a writer — and answers ready together go out in one write, as the native
//! RPC's connections do. The rules:
//! - the hello must arrive within `server.handshake_timeout`;
//! - at most `server.max_streams_per_connection` calls run at once (the rest
//!   wait in the socket);
//! - a frame over the 64 MiB message limit, or one that cannot be read,
//!   closes the connection after an answer saying why;
//! - each call holds its bytes against `limits.request_bytes_in_flight`
//!   until answered, and is answered RESOURCE_EXHAUSTED if they do not fit;
//! - a connection with no call running and none arriving for
//!   `server.idle_timeout` is closed;
//! - on stop, reading stops, calls running finish and are answered.

mod calls;

use crate::admission::RequestBudget;
use crate::host::Host;
use crate::listen::handshake::{Wait, read_exact};
use crate::listen::pipeline::{self, Codec, Pipelining, Taken};
use crate::listen::{ConnIo, SecondProtocol, Slot};
use crate::metrics::CloseReason;
use crate::security::{Caller, Via};
use bytes::BytesMut;
use prost::Message;
use shoal_proto::frames::{self, FrameFault};
use shoal_proto::v1 as pb;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;

/// The framed transport's side of the gRPC port.
#[derive(Debug, Clone)]
pub struct FramesDoor {
    host: Host,
    budget: Arc<RequestBudget>,
    /// The caller with auth off (cloned, never allocated per call).
    anyone: Caller,
    max_calls: usize,
    handshake: Duration,
    idle: Duration,
}

impl FramesDoor {
    /// The door over `host`, its calls counted in `budget`; connection
    /// rules from the host's `[server]` section.
    pub fn new(host: Host, budget: Arc<RequestBudget>) -> FramesDoor {
        let server = &host.config().server;
        FramesDoor {
            max_calls: (server.max_streams_per_connection as usize).max(1),
            handshake: server.handshake_timeout,
            idle: server.idle_timeout,
            anyone: Caller::anyone(Via::Frames),
            budget,
            host,
        }
    }
}

impl SecondProtocol for FramesDoor {
    fn first_byte(&self) -> u8 {
        frames::MAGIC[0]
    }

    fn serve(
        &self,
        io: Box<dyn ConnIo>,
        slot: Slot,
        stop: watch::Receiver<bool>,
    ) -> futures::future::BoxFuture<'static, Slot> {
        Box::pin(connection(self.clone(), io, slot, stop))
    }
}

/// A failure answer that belongs to no call, then the connection closes.
async fn refuse(io: &mut (impl AsyncWrite + Unpin), code: tonic::Code, message: String) {
    let mut out = Vec::new();
    let status = tonic::Status::new(code, message);
    frames::encode_failure(
        &mut out,
        frames::HELLO_CALL,
        &frames::status_to_error(&status),
    );
    let _ = io.write_all(&out).await;
    let _ = io.shutdown().await;
}

/// The hello: magic, version, token. Returns the caller, or `None` once the
/// connection has been refused (and `slot` says why).
async fn hello(
    door: &FramesDoor,
    io: &mut Box<dyn ConnIo>,
    slot: &mut Slot,
    stop: &mut watch::Receiver<bool>,
) -> Option<Caller> {
    let mut head = [0u8; 9];
    let waited = |slot: &mut Slot, w: Wait| match w {
        Wait::Done => true,
        Wait::Closed => false,
        Wait::Timeout => {
            slot.set_reason(CloseReason::Handshake);
            false
        }
        Wait::Stopping => {
            slot.set_reason(CloseReason::Shutdown);
            false
        }
    };
    let w = read_exact(io, &mut head, door.handshake, stop).await;
    if !waited(slot, w) {
        return None;
    }
    if &head[..4] != frames::MAGIC {
        tracing::debug!("connection on the gRPC port is neither HTTP/2 nor framed; closed");
        return None;
    }
    if head[4] != frames::VERSION {
        let why = format!(
            "framed transport version {} is not served; this server speaks version {}",
            head[4],
            frames::VERSION
        );
        refuse(io, tonic::Code::Unimplemented, why).await;
        return None;
    }
    let len = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) as usize;
    if len > frames::MAX_HELLO_BYTES {
        let why = format!("a hello of {len} bytes is over {}", frames::MAX_HELLO_BYTES);
        refuse(io, tonic::Code::InvalidArgument, why).await;
        return None;
    }
    let mut body = vec![0u8; len];
    let w = read_exact(io, &mut body, door.handshake, stop).await;
    if !waited(slot, w) {
        return None;
    }
    let hello = match pb::FrameHello::decode(body.as_slice()) {
        Ok(h) => h,
        Err(e) => {
            refuse(
                io,
                tonic::Code::InvalidArgument,
                format!("malformed hello: {e}"),
            )
            .await;
            return None;
        }
    };
    let security = door.host.security();
    let peer = Some(slot.peer());
    let caller = if !security.auth_enabled() {
        door.anyone.clone().with_peer(peer)
    } else {
        let header = (!hello.token.is_empty()).then(|| format!("Bearer {}", hello.token));
        match security.authenticate_from(header.as_deref().map(str::as_bytes), Via::Frames, peer) {
            Ok(c) => c,
            Err(failure) => {
                refuse(
                    io,
                    tonic::Code::Unauthenticated,
                    failure.message().to_string(),
                )
                .await;
                return None;
            }
        }
    };
    let mut ok = Vec::new();
    frames::encode_frame(&mut ok, frames::HELLO_CALL, frames::OK, &());
    if io.write_all(&ok).await.is_err() {
        return None;
    }
    Some(caller)
}

/// Serves one framed connection; returns its slot once `io` is dropped.
async fn connection(
    door: FramesDoor,
    mut io: Box<dyn ConnIo>,
    mut slot: Slot,
    mut stop: watch::Receiver<bool>,
) -> Slot {
    let Some(caller) = hello(&door, &mut io, &mut slot, &mut stop).await else {
        return slot;
    };
    let reason = serve_calls(&door, &caller, io, &mut stop).await;
    slot.set_reason(reason);
    slot
}

/// How framed calls and answers look on the wire.
struct FrameCodec;

impl Codec for FrameCodec {
    type Request = frames::Frame;
    type Answer = calls::Answer;

    fn take(&self, buf: &mut BytesMut, out: &mut Vec<u8>) -> Taken<frames::Frame> {
        match frames::take_frame(buf, crate::config::limits::MAX_MESSAGE_BYTES) {
            Ok(Some(frame)) => Taken::Request(frame),
            Ok(None) => Taken::More,
            Err(fault) => {
                tracing::debug!(error = %fault, "unreadable framed call; connection closed");
                let code = match fault {
                    FrameFault::TooLarge { .. } => tonic::Code::ResourceExhausted,
                    FrameFault::TooShort(_) => tonic::Code::InvalidArgument,
                };
                let status = tonic::Status::new(code, fault.to_string());
                frames::encode_failure(out, frames::HELLO_CALL, &frames::status_to_error(&status));
                Taken::Unreadable
            }
        }
    }

    fn put(&self, answer: calls::Answer, out: &mut Vec<u8>) {
        answer.frame(out);
    }
}

/// Reads calls, runs them side by side and writes their answers, all on
/// this connection's task (`listen::pipeline`); returns why the connection
/// ended.
async fn serve_calls(
    door: &FramesDoor,
    caller: &Caller,
    io: Box<dyn ConnIo>,
    stop: &mut watch::Receiver<bool>,
) -> CloseReason {
    let limits = Pipelining {
        max_calls: door.max_calls,
        idle: door.idle,
    };
    let run = |frame| calls::run(door, caller, frame);
    pipeline::serve(io, &FrameCodec, run, limits, stop).await
}
