//! The pipelined call loop of the raw-protocol doors (the framed transport,
//! `crate::frames`, and HBase's native RPC, `crate::hbase_rpc`): one
//! connection's calls are read, run side by side and answered on the
//! connection's one task — no task per call and no hand-off to a writer, so
//! a call is read, served and answered without a cross-thread wake-up.
//!
//! A door brings its [`Codec`] (how one request is cut off the bytes read,
//! how one answer is written) and a handler (a request to the future of its
//! answer); admission, such as the request budget, is the handler's. The
//! loop keeps these rules for every door:
//! - every whole request in the read buffer starts, up to
//!   [`Pipelining::max_calls`] running at once; the rest wait in the socket
//!   (nothing more is read while the limit is reached);
//! - answers go out in completion order, and answers ready together go out
//!   in one write (up to about 1 MiB);
//! - a request that cannot be read closes the connection, after the answer
//!   the codec wrote for it (if any) and those of the calls still running;
//! - with no call running, the connection has [`Pipelining::idle`] to send
//!   the next request (or the rest of one it started), or it is closed;
//! - on stop, reading stops, calls running finish and are answered.

use crate::metrics::CloseReason;
use bytes::BytesMut;
use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use std::future::Future;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;

/// The read and write buffers' starting size, bytes.
const BUFFER: usize = 16 << 10;
/// The read buffer grows by [`BUFFER`] when less than this is free.
const READ_ROOM: usize = 4 << 10;
/// Answers ready together are written at once up to about this, bytes.
const WRITE_BATCH: usize = 1 << 20;
/// A write buffer grown past this is given back after its write.
const WRITE_KEEP: usize = 4 << 20;
/// How long a read waits while calls run (in effect: forever; the calls'
/// answers and the stop signal end the wait).
const BUSY_WAIT: Duration = Duration::from_secs(3600);

/// How a door's requests and answers look on the wire.
pub(crate) trait Codec {
    /// One request, whole.
    type Request;
    /// One call's answer, ready to write.
    type Answer;
    /// Cuts the next whole request off the front of `buf`. When the request
    /// cannot be read, writes to `out` what the client should hear (if
    /// anything) and says [`Taken::Unreadable`]: the connection closes.
    fn take(&self, buf: &mut BytesMut, out: &mut Vec<u8>) -> Taken<Self::Request>;
    /// Appends `answer`'s frame to `out`.
    fn put(&self, answer: Self::Answer, out: &mut Vec<u8>);
}

/// What [`Codec::take`] found at the front of the read buffer.
pub(crate) enum Taken<R> {
    /// A whole request, now off the buffer.
    Request(R),
    /// Not a whole request yet: more bytes are needed.
    More,
    /// A request that cannot be read; the connection closes.
    Unreadable,
}

/// One connection's limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pipelining {
    /// Calls running at once.
    pub max_calls: usize,
    /// With no call running, the time allowed for the next request.
    pub idle: Duration,
}

/// Serves `io`'s calls with `run` until the client leaves, sends what
/// cannot be read, idles, or `stop` turns true; returns why the connection
/// ended, once its last answer has been written and the socket shut down.
pub(crate) async fn serve<IO, C, F, Fut>(
    io: IO,
    codec: &C,
    mut run: F,
    limits: Pipelining,
    stop: &mut watch::Receiver<bool>,
) -> CloseReason
where
    IO: AsyncRead + AsyncWrite,
    C: Codec,
    F: FnMut(C::Request) -> Fut,
    Fut: Future<Output = C::Answer>,
{
    let (mut reader, mut writer) = tokio::io::split(io);
    let mut running = FuturesUnordered::new();
    let mut buf = BytesMut::with_capacity(BUFFER);
    let mut out: Vec<u8> = Vec::with_capacity(BUFFER);
    let reason = loop {
        if !start(codec, &mut run, &mut buf, &mut out, &mut running, limits) {
            break CloseReason::Client;
        }
        let idle = running.is_empty();
        let wait = if idle { limits.idle } else { BUSY_WAIT };
        let room = running.len() < limits.max_calls;
        if buf.capacity() - buf.len() < READ_ROOM {
            buf.reserve(BUFFER);
        }
        tokio::select! {
            r = tokio::time::timeout(wait, reader.read_buf(&mut buf)), if room => match r {
                Ok(Ok(0)) | Ok(Err(_)) => break CloseReason::Client,
                Ok(Ok(_)) => {}
                Err(_) if idle => break CloseReason::Idle,
                Err(_) => {}
            },
            Some(done) = running.next(), if !running.is_empty() => {
                if !answer(codec, done, &mut running, &mut out, &mut writer).await {
                    break CloseReason::Client;
                }
            }
            _ = super::stopped(stop) => break CloseReason::Shutdown,
        }
    };
    // Calls running finish and are answered (after any answer the codec
    // wrote for what it could not read).
    while let Some(done) = running.next().await {
        codec.put(done, &mut out);
    }
    if !out.is_empty() {
        let _ = writer.write_all(&out).await;
    }
    let _ = writer.shutdown().await;
    reason
}

/// Starts every whole request in `buf`, up to the limit; false when one
/// cannot be read (the connection closes).
fn start<C, F, Fut>(
    codec: &C,
    run: &mut F,
    buf: &mut BytesMut,
    out: &mut Vec<u8>,
    running: &mut FuturesUnordered<Fut>,
    limits: Pipelining,
) -> bool
where
    C: Codec,
    F: FnMut(C::Request) -> Fut,
    Fut: Future<Output = C::Answer>,
{
    while running.len() < limits.max_calls {
        match codec.take(buf, out) {
            Taken::Request(request) => running.push(run(request)),
            Taken::More => break,
            Taken::Unreadable => return false,
        }
    }
    true
}

/// Writes `done`'s answer with those of the other calls ready now, in one
/// write; false when the write failed (the client is gone).
async fn answer<C, Fut, W>(
    codec: &C,
    done: C::Answer,
    running: &mut FuturesUnordered<Fut>,
    out: &mut Vec<u8>,
    writer: &mut W,
) -> bool
where
    C: Codec,
    Fut: Future<Output = C::Answer>,
    W: AsyncWrite + Unpin,
{
    codec.put(done, out);
    while out.len() < WRITE_BATCH {
        match running.next().now_or_never() {
            Some(Some(more)) => codec.put(more, out),
            _ => break,
        }
    }
    let written = writer.write_all(out).await.is_ok();
    out.clear();
    if written && out.capacity() > WRITE_KEEP {
        *out = Vec::with_capacity(BUFFER);
    }
    written
}
