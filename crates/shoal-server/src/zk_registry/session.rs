//! One connection: frames (a 4-byte big-endian length, then the record),
//! the session's opening, then requests answered in order until the client
//! closes the session, goes silent for its session timeout, sends a frame
//! that cannot be one (a length of zero, negative, or over the limit), or
//! the server stops.
//!
//! Sessions hold no state here: a client resuming a session (after a
//! reconnect, or at another Shoal server) is given it back, never told it
//! expired, since there is nothing it could have lost.

use super::ZkRegistry;
use super::messages::{ConnectRequest, ConnectResponse, op};
use super::requests;
use crate::listen::handshake::{Wait, read_exact};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;

/// The largest request frame, bytes (ZooKeeper's own `jute.maxbuffer`
/// default is just under 1 MiB; the reads here are a few dozen bytes).
pub const MAX_REQUEST_BYTES: usize = 1 << 20;
/// The largest `ConnectRequest` frame, bytes (a real one is under 64).
pub const MAX_CONNECT_BYTES: usize = 4096;

/// Why a frame could not be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The peer closed, or the read failed.
    #[error("connection closed")]
    Closed,
    /// Nothing came within the wait.
    #[error("silent for {0:?}")]
    Timeout(Duration),
    /// The server is stopping.
    #[error("server stopping")]
    Stopping,
    /// The length is zero, negative or over the limit.
    #[error("frame length {length} outside 1..={max}")]
    BadLength {
        /// The length read (as ZooKeeper's signed int).
        length: i64,
        /// The limit.
        max: usize,
    },
}

/// The length of a frame whose first 4 bytes are `head`, if it is one.
pub fn frame_length(head: [u8; 4], max: usize) -> Result<usize, FrameError> {
    let length = i32::from_be_bytes(head);
    match usize::try_from(length) {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(FrameError::BadLength {
            length: i64::from(length),
            max,
        }),
    }
}

/// Reads one frame within `wait`.
async fn read_frame(
    io: &mut (impl AsyncRead + Unpin),
    max: usize,
    wait: Duration,
    stop: &mut watch::Receiver<bool>,
) -> Result<Vec<u8>, FrameError> {
    let waited = |w: Wait| match w {
        Wait::Done => Ok(()),
        Wait::Closed => Err(FrameError::Closed),
        Wait::Timeout => Err(FrameError::Timeout(wait)),
        Wait::Stopping => Err(FrameError::Stopping),
    };
    let mut head = [0u8; 4];
    waited(read_exact(io, &mut head, wait, stop).await)?;
    let mut body = vec![0u8; frame_length(head, max)?];
    waited(read_exact(io, &mut body, wait, stop).await)?;
    Ok(body)
}

/// Writes `record` as one frame, within `wait`.
async fn write_frame(
    io: &mut (impl AsyncWrite + Unpin),
    record: &[u8],
    wait: Duration,
) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(4 + record.len());
    out.extend_from_slice(
        &u32::try_from(record.len())
            .unwrap_or(u32::MAX)
            .to_be_bytes(),
    );
    out.extend_from_slice(record);
    match tokio::time::timeout(wait, io.write_all(&out)).await {
        Ok(r) => r,
        Err(_) => Err(std::io::ErrorKind::TimedOut.into()),
    }
}

/// Serves one connection from `peer` until it ends.
pub async fn serve(
    mut io: impl AsyncRead + AsyncWrite + Unpin,
    peer: SocketAddr,
    registry: &ZkRegistry,
    handshake: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let connect = match read_frame(&mut io, MAX_CONNECT_BYTES, handshake, &mut stop).await {
        Ok(f) => f,
        Err(e) => {
            tracing::debug!(%peer, error = %e, "ZooKeeper registry: no session opened");
            return;
        }
    };
    let request = match ConnectRequest::read(&connect) {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(%peer, error = %e, "ZooKeeper registry: bad ConnectRequest");
            return;
        }
    };
    let timeout = registry.negotiate(request.timeout_ms);
    let response = ConnectResponse {
        timeout_ms: i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX),
        session_id: registry.session_for(request.session_id),
        password: registry.password(),
        with_read_only: request.read_only.is_some(),
    };
    if write_frame(&mut io, &response.write(), timeout)
        .await
        .is_err()
    {
        return;
    }
    tracing::debug!(
        %peer,
        session = format_args!("{:#x}", response.session_id),
        ?timeout,
        "ZooKeeper registry: session opened"
    );
    loop {
        let frame = match read_frame(&mut io, MAX_REQUEST_BYTES, timeout, &mut stop).await {
            Ok(f) => f,
            Err(FrameError::Closed | FrameError::Stopping) => return,
            Err(e) => {
                tracing::debug!(%peer, error = %e, "ZooKeeper registry: connection closed");
                return;
            }
        };
        let answer = requests::answer(&frame, || registry.tree());
        if answer.op != op::PING {
            tracing::trace!(%peer, op = op::name(answer.op), "ZooKeeper registry request");
        }
        let Some(reply) = answer.reply else {
            tracing::debug!(%peer, "ZooKeeper registry: frame without a request header");
            return;
        };
        if write_frame(&mut io, &reply, timeout).await.is_err() || answer.close {
            let _ = io.shutdown().await;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_lengths_are_bounded() {
        assert_eq!(frame_length(45u32.to_be_bytes(), 4096), Ok(45));
        for bad in [0u32, 4097, 0x8000_0000, u32::MAX] {
            assert!(matches!(
                frame_length(bad.to_be_bytes(), 4096),
                Err(FrameError::BadLength { .. })
            ));
        }
        // "GET " as a length: refused, not allocated.
        assert!(frame_length(*b"GET ", MAX_REQUEST_BYTES).is_err());
    }
}
