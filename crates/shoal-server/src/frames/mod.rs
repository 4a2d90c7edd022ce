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

use crate::grpc::budget::RequestBudget;
use crate::host::Host;
use crate::listen::handshake::{Wait, read_exact};
use crate::listen::{ConnIo, SecondProtocol, Slot};
use crate::metrics::CloseReason;
use crate::security::{Caller, Via};
use bytes::BytesMut;
use prost::Message;
use shoal_proto::frames::{self, FrameFault};
use shoal_proto::v1 as pb;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
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
    let caller = if !security.auth_enabled() {
        door.anyone.clone()
    } else {
        let header = (!hello.token.is_empty()).then(|| format!("Bearer {}", hello.token));
        match security.authenticate(header.as_deref().map(str::as_bytes), Via::Frames) {
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

/// Reads calls, runs them side by side and writes their answers, all on
/// this connection's task; returns why the connection ended.
async fn serve_calls(
    door: &FramesDoor,
    caller: &Caller,
    io: Box<dyn ConnIo>,
    stop: &mut watch::Receiver<bool>,
) -> CloseReason {
    use futures::FutureExt;
    use futures::stream::{FuturesUnordered, StreamExt};
    let max_frame = crate::config::limits::MAX_MESSAGE_BYTES;
    let (mut reader, mut writer) = tokio::io::split(io);
    let mut running = FuturesUnordered::new();
    let mut buf = BytesMut::with_capacity(16 << 10);
    let mut out: Vec<u8> = Vec::with_capacity(16 << 10);
    let reason = 'conn: loop {
        // Every whole call in the buffer starts, up to the limit.
        while running.len() < door.max_calls {
            match frames::take_frame(&mut buf, max_frame) {
                Ok(Some(frame)) => running.push(calls::run(door, caller, frame)),
                Ok(None) => break,
                Err(fault) => {
                    tracing::debug!(error = %fault, "unreadable framed call; connection closed");
                    let code = match fault {
                        FrameFault::TooLarge { .. } => tonic::Code::ResourceExhausted,
                        FrameFault::TooShort(_) => tonic::Code::InvalidArgument,
                    };
                    let status = tonic::Status::new(code, fault.to_string());
                    frames::encode_failure(
                        &mut out,
                        frames::HELLO_CALL,
                        &frames::status_to_error(&status),
                    );
                    break 'conn CloseReason::Client;
                }
            }
        }
        // With no call running, the connection has `idle` to send the next
        // (or the rest of one it started).
        let idle = running.is_empty();
        let wait = if idle {
            door.idle
        } else {
            Duration::from_secs(3600)
        };
        let room = running.len() < door.max_calls;
        if buf.capacity() - buf.len() < 4 << 10 {
            buf.reserve(16 << 10);
        }
        tokio::select! {
            r = tokio::time::timeout(wait, reader.read_buf(&mut buf)), if room => match r {
                Ok(Ok(0)) | Ok(Err(_)) => break CloseReason::Client,
                Ok(Ok(_)) => {}
                Err(_) if idle => break CloseReason::Idle,
                Err(_) => {}
            },
            Some(done) = running.next(), if !running.is_empty() => {
                done.frame(&mut out);
                // Others ready now go in the same write.
                while out.len() < 1 << 20 {
                    match running.next().now_or_never() {
                        Some(Some(more)) => more.frame(&mut out),
                        _ => break,
                    }
                }
                if writer.write_all(&out).await.is_err() {
                    out.clear();
                    break CloseReason::Client;
                }
                out.clear();
                if out.capacity() > 4 << 20 {
                    out = Vec::with_capacity(16 << 10);
                }
            }
            _ = crate::listen::stopped(stop) => break CloseReason::Shutdown,
        }
    };
    // Calls running finish and are answered.
    while let Some(done) = running.next().await {
        done.frame(&mut out);
    }
    if !out.is_empty() {
        let _ = writer.write_all(&out).await;
    }
    let _ = writer.shutdown().await;
    reason
}
