//! Reading a raw protocol's opening bytes (the native RPC's preamble and
//! header, the framed transport's hello) within the handshake timeout, and
//! giving up when the server stops.

use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

/// How waiting for bytes ended.
pub(crate) enum Wait {
    /// They arrived.
    Done,
    /// The peer closed (or the read failed) first.
    Closed,
    /// They did not arrive in time.
    Timeout,
    /// The server is stopping.
    Stopping,
}

/// Reads exactly `buf.len()` bytes within `wait`.
pub(crate) async fn read_exact(
    io: &mut (impl AsyncRead + Unpin),
    buf: &mut [u8],
    wait: Duration,
    stop: &mut watch::Receiver<bool>,
) -> Wait {
    if *stop.borrow() {
        return Wait::Stopping;
    }
    tokio::select! {
        r = tokio::time::timeout(wait, io.read_exact(buf)) => match r {
            Ok(Ok(_)) => Wait::Done,
            Ok(Err(_)) => Wait::Closed,
            Err(_) => Wait::Timeout,
        },
        _ = super::stopped(stop) => Wait::Stopping,
    }
}
