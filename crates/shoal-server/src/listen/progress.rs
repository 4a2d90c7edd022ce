//! Whether a connection still moves bytes: [`Progress`] wraps its socket
//! and counts each read or write that moved at least one byte, so that the
//! watchdog can tell a draining connection that is still delivering (a
//! response body hyper queued past the client's flow-control window, the
//! client's WINDOW_UPDATEs coming in) from one that is stuck.
//!
//! A call counts as over once hyper has taken its body's last frame, but
//! HTTP/2 may still hold some of that body waiting for the client's window.
//! Closing the socket then cuts the response short, so the grace given to a
//! draining connection restarts each time bytes moved.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The count of reads and writes of one connection that moved bytes.
#[derive(Debug, Clone, Default)]
pub(super) struct Moved(Arc<AtomicU64>);

impl Moved {
    /// The count so far; only its changes mean anything.
    pub(super) fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn bump(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A socket whose reads and writes are counted into a [`Moved`].
#[derive(Debug)]
pub(super) struct Progress<T> {
    inner: T,
    moved: Moved,
}

impl<T> Progress<T> {
    pub(super) fn new(inner: T, moved: Moved) -> Progress<T> {
        Progress { inner, moved }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Progress<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.moved.bump();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Progress<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.moved.bump();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.moved.bump();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn counts_reads_and_writes_that_moved_bytes() {
        let (a, mut b) = tokio::io::duplex(64);
        let moved = Moved::default();
        let mut a = Progress::new(a, moved.clone());
        assert_eq!(moved.count(), 0);
        a.write_all(b"ping").await.unwrap();
        assert_eq!(moved.count(), 1);
        let mut got = [0u8; 4];
        b.read_exact(&mut got).await.unwrap();
        b.write_all(b"pong").await.unwrap();
        a.read_exact(&mut got).await.unwrap();
        assert_eq!(moved.count(), 2);
        drop(b);
        // End of stream moves nothing.
        assert_eq!(a.read(&mut got).await.unwrap(), 0);
        assert_eq!(moved.count(), 2);
    }
}
