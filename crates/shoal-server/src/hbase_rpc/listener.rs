//! The native RPC port: accept under the server's connection cap, read
//! each connection's preamble and header, then serve its calls side by
//! side — the Java client multiplexes every thread's calls over one
//! connection per server and service, so a connection answers in
//! completion order, by call id, with answers ready together written at
//! once. Up to `hbase_rpc.max_calls_per_connection` calls run at once; a
//! connection idle (no call in progress, none arriving) for
//! `server.idle_timeout` is closed, as is one that sends a malformed
//! frame or a call over `hbase_rpc.max_message_bytes`. On stop, reading
//! stops, calls in progress finish and their answers are written.

use super::errors::{self, RpcError};
use super::wire::{self, Preamble};
use super::{NativeRpc, Service};
use crate::listen::handshake::{Wait, read_exact};
use crate::listen::pipeline::{self, Codec, Pipelining, Taken};
use crate::listen::{Connections, SharedTcp, Slot};
use crate::metrics::{CloseReason, Listener};
use bytes::BytesMut;
use prost::Message;
use shoal_proto::hbase::ConnectionHeader;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The codec whose cell blocks are served.
const KEY_VALUE_CODEC: &str = "org.apache.hadoop.hbase.codec.KeyValueCodec";

/// Per-connection settings.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Largest call, bytes.
    pub max_message_bytes: usize,
    /// Calls in progress at once.
    pub max_calls: usize,
    /// First bytes must arrive within this.
    pub handshake: Duration,
    /// Closed after this long with nothing to do.
    pub idle: Duration,
}

/// Serves the native RPC on `listener` until `stop` turns true; also
/// expires idle scanners.
pub fn serve_hbase_rpc(
    listener: TcpListener,
    rpc: Arc<NativeRpc>,
    connections: Arc<Connections>,
    limits: ConnectionLimits,
    stop: watch::Receiver<bool>,
    tls: Option<Arc<crate::security::tls::TlsListeners>>,
    serving: Option<Arc<crate::listen::ServingThreads>>,
) -> JoinHandle<()> {
    let sweeper = rpc.clone();
    tokio::spawn(crate::listen::run_raw(
        listener,
        Listener::HbaseRpc,
        connections,
        stop.clone(),
        tls,
        serving,
        move || sweeper.scanners().sweep(),
        move |tcp, slot, acceptor| {
            connection(tcp, rpc.clone(), slot, limits, stop.clone(), acceptor)
        },
    ))
}

/// One connection's life: its TLS handshake first when the listener has
/// TLS. Hands the slot back once the connection is done with the socket.
async fn connection(
    tcp: SharedTcp,
    rpc: Arc<NativeRpc>,
    mut slot: Slot,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> Slot {
    let Some(acceptor) = tls else {
        serve(tcp, rpc, &mut slot, limits, stop).await;
        return slot;
    };
    match crate::listen::tls_handshake(&acceptor, tcp, limits.handshake, &mut stop).await {
        Ok(io) => serve(io, rpc, &mut slot, limits, stop).await,
        Err(reason) => slot.set_reason(reason),
    }
    slot
}

/// Writes one answer that belongs to no call, then the connection closes.
async fn answer_and_close(io: &mut (impl AsyncWrite + Unpin), message: Result<&[u8], RpcError>) {
    let mut out = Vec::new();
    match &message {
        Ok(m) => wire::encode_answer(&mut out, wire::NO_CALL, Ok((m, &[]))),
        Err(e) => wire::encode_answer(&mut out, wire::NO_CALL, Err(&e.to_exception())),
    }
    let _ = io.write_all(&out).await;
    let _ = io.shutdown().await;
}

/// Serves a connection whose transport (TLS or not) is set up.
async fn serve<IO: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    mut io: IO,
    rpc: Arc<NativeRpc>,
    slot: &mut Slot,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
) {
    let mut six = [0u8; 6];
    match read_exact(&mut io, &mut six, limits.handshake, &mut stop).await {
        Wait::Done => {}
        Wait::Closed => return,
        Wait::Timeout => return slot.set_reason(CloseReason::Handshake),
        Wait::Stopping => return slot.set_reason(CloseReason::Shutdown),
    }
    match wire::preamble(&six) {
        Preamble::Rpc => {}
        Preamble::Registry => {
            let answer = shoal_proto::hbase::GetConnectionRegistryResponse {
                cluster_id: rpc.cluster_id().to_string(),
            }
            .encode_to_vec();
            return answer_and_close(&mut io, Ok(&answer)).await;
        }
        Preamble::Refused(why) => {
            tracing::debug!(reason = %why, "native RPC preamble refused");
            return answer_and_close(&mut io, Err(RpcError::fatal(errors::FATAL_CONNECTION, why)))
                .await;
        }
    }
    // The connection header: 4-byte length, then the protobuf.
    let mut len = [0u8; 4];
    match read_exact(&mut io, &mut len, limits.handshake, &mut stop).await {
        Wait::Done => {}
        Wait::Closed => return,
        Wait::Timeout => return slot.set_reason(CloseReason::Handshake),
        Wait::Stopping => return slot.set_reason(CloseReason::Shutdown),
    }
    let len = u32::from_be_bytes(len) as usize;
    if len > 64 << 10 {
        let e = RpcError::fatal(
            errors::FATAL_CONNECTION,
            format!("a connection header of {len} bytes is over 64 KiB"),
        );
        return answer_and_close(&mut io, Err(e)).await;
    }
    let mut header = vec![0u8; len];
    match read_exact(&mut io, &mut header, limits.handshake, &mut stop).await {
        Wait::Done => {}
        Wait::Closed => return,
        Wait::Timeout => return slot.set_reason(CloseReason::Handshake),
        Wait::Stopping => return slot.set_reason(CloseReason::Shutdown),
    }
    let (service, cell_blocks, relayed) = match accept_header(&header) {
        Ok(v) => v,
        Err(e) => {
            tracing::debug!(error = %e.message, "native RPC connection header refused");
            return answer_and_close(&mut io, Err(e)).await;
        }
    };
    let kind = Kind {
        service,
        cell_blocks,
        relayed,
    };
    calls(io, rpc, slot, limits, stop, kind).await;
}

/// What a connection's header said about its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Kind {
    service: Service,
    cell_blocks: bool,
    /// Relayed by another server (a table change sent to the master).
    relayed: bool,
}

/// Checks a connection header: the service, the codec, and whether
/// another server relays the calls.
fn accept_header(bytes: &[u8]) -> Result<(Service, bool, bool), RpcError> {
    let header = ConnectionHeader::decode(bytes).map_err(|e| {
        RpcError::fatal(
            errors::FATAL_CONNECTION,
            format!("malformed connection header: {e}"),
        )
    })?;
    let relayed = super::relay::is_relayed(&header);
    let name = header.service_name.unwrap_or_default();
    let service = Service::named(&name).ok_or_else(|| {
        RpcError::fatal(
            errors::FATAL_CONNECTION,
            format!("Unknown service name {name:?}: Shoal serves ClientService, MasterService, ClientMetaService and AdminService"),
        )
    })?;
    let cell_blocks = match header.cell_block_codec_class.as_deref() {
        None | Some("") => false,
        Some(KEY_VALUE_CODEC) => true,
        Some(other) => {
            return Err(RpcError::fatal(
                errors::FATAL_CONNECTION,
                format!(
                    "cell block codec {other} is not served: set hbase.client.rpc.codec to {KEY_VALUE_CODEC} (the default) or to an empty string"
                ),
            ));
        }
    };
    if let Some(c) = header.cell_block_compressor_class.filter(|c| !c.is_empty()) {
        return Err(RpcError::fatal(
            errors::FATAL_CONNECTION,
            format!("cell block compressor {c} is not served: unset hbase.client.rpc.compressor"),
        ));
    }
    Ok((service, cell_blocks, relayed))
}

/// One call's answer, ready to frame.
struct Answered {
    id: u32,
    answer: Result<(Vec<u8>, Vec<u8>), RpcError>,
}

/// Runs one call.
async fn answer(rpc: Arc<NativeRpc>, kind: Kind, call: wire::Call) -> Answered {
    let id = call.id();
    let method = call.header.method_name.unwrap_or_default();
    let service = kind.service;
    let answer = rpc
        .call(
            service,
            &method,
            call.param,
            call.cells,
            kind.cell_blocks,
            kind.relayed,
        )
        .await;
    match &answer {
        Ok((m, cells)) => tracing::trace!(
            ?service,
            method,
            id,
            bytes = m.len(),
            cells = cells.len(),
            "native RPC call answered"
        ),
        Err(e) => tracing::debug!(
            ?service,
            method,
            id,
            class = e.class,
            error = %e.message,
            "native RPC call failed"
        ),
    }
    Answered { id, answer }
}

fn frame(out: &mut Vec<u8>, a: Answered) {
    match a.answer {
        Ok((message, block)) => wire::encode_answer(out, a.id, Ok((&message, &block))),
        Err(e) => wire::encode_answer(out, a.id, Err(&e.to_exception())),
    }
}

/// How native RPC calls and answers look on the wire.
struct NativeCodec {
    /// Largest call, bytes.
    max_message_bytes: usize,
}

impl Codec for NativeCodec {
    type Request = wire::Call;
    type Answer = Answered;

    fn take(&self, buf: &mut BytesMut, out: &mut Vec<u8>) -> Taken<wire::Call> {
        let Some(len) = wire::frame_length(buf) else {
            return Taken::More;
        };
        let len = len as usize;
        if len > self.max_message_bytes {
            tracing::debug!(
                len,
                "native RPC call over the size limit; connection closed"
            );
            let e = RpcError::fatal(
                errors::REQUEST_TOO_BIG,
                format!(
                    "a call of {len} bytes is over hbase_rpc.max_message_bytes ({})",
                    self.max_message_bytes
                ),
            );
            wire::encode_answer(out, wire::NO_CALL, Err(&e.to_exception()));
            return Taken::Unreadable;
        }
        if buf.len() < 4 + len {
            buf.reserve(4 + len - buf.len());
            return Taken::More;
        }
        let _ = buf.split_to(4);
        let body = buf.split_to(len).freeze();
        match wire::decode_call(body) {
            Ok(call) => Taken::Request(call),
            Err(e) => {
                // Closed without an answer: the call's id is unknown.
                tracing::debug!(error = %e, "malformed native RPC call; connection closed");
                Taken::Unreadable
            }
        }
    }

    fn put(&self, answer: Answered, out: &mut Vec<u8>) {
        frame(out, answer);
    }
}

/// Reads calls, runs them side by side and writes their answers, all on
/// this connection's one task (`listen::pipeline`), the Java client's
/// calls answered in completion order by call id.
async fn calls<IO: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    io: IO,
    rpc: Arc<NativeRpc>,
    slot: &mut Slot,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
    kind: Kind,
) {
    let codec = NativeCodec {
        max_message_bytes: limits.max_message_bytes,
    };
    let pipelining = Pipelining {
        max_calls: limits.max_calls,
        idle: limits.idle,
    };
    let run = |call| answer(rpc.clone(), kind, call);
    let reason = pipeline::serve(io, &codec, run, pipelining, &mut stop).await;
    slot.set_reason(reason);
}

/// Bytes a test sends: a preamble and a header for `service`.
#[cfg(test)]
pub(crate) fn hello(service: &str, codec: Option<&str>) -> bytes::Bytes {
    let mut out = b"HBas\x00\x50".to_vec();
    let header = ConnectionHeader {
        service_name: Some(service.into()),
        cell_block_codec_class: codec.map(Into::into),
        ..Default::default()
    }
    .encode_to_vec();
    out.extend_from_slice(&(header.len() as u32).to_be_bytes());
    out.extend_from_slice(&header);
    bytes::Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        let h = hello("ClientService", Some(KEY_VALUE_CODEC));
        assert_eq!(
            accept_header(&h[10..]).unwrap(),
            (Service::Client, true, false)
        );
        let h = hello("MasterService", None);
        assert_eq!(
            accept_header(&h[10..]).unwrap(),
            (Service::Master, false, false)
        );
        // A server relaying a table change to the master says so.
        let relayed = ConnectionHeader {
            service_name: Some("MasterService".into()),
            attribute: vec![shoal_proto::hbase::NameBytesPair {
                name: super::super::relay::RELAYED.into(),
                value: Some(bytes::Bytes::from_static(b"1")),
            }],
            ..Default::default()
        }
        .encode_to_vec();
        assert_eq!(
            accept_header(&relayed).unwrap(),
            (Service::Master, false, true)
        );
        let h = hello("AccessControlService", None);
        assert!(
            accept_header(&h[10..])
                .unwrap_err()
                .message
                .contains("Unknown service")
        );
        let h = hello(
            "ClientService",
            Some("org.apache.hadoop.hbase.codec.CellCodec"),
        );
        assert!(accept_header(&h[10..]).is_err());
        assert!(accept_header(&[0xff, 0xff, 0xff]).is_err());
    }
}
