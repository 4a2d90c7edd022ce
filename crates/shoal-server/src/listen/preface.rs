//! The HTTP/2 handshake of a gRPC connection, read by the listener itself so
//! that it can be timed out: hyper's HTTP/2 server waits for the client
//! preface forever, and a graceful shutdown waits with it. The bytes read
//! are handed back to hyper through [`Rewind`], which replays them before
//! reading on from the socket.

use bytes::{Buf, Bytes, BytesMut};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// What every HTTP/2 client sends first (RFC 9113 §3.4).
pub(super) const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Reads until the whole preface has arrived, or until the bytes so far
/// cannot be one (hyper then refuses the connection with a protocol error).
/// Returns the bytes read. A client that closes first is an error.
pub(super) async fn read_preface<T: AsyncRead + Unpin>(io: &mut T) -> io::Result<Bytes> {
    let mut buf = BytesMut::with_capacity(PREFACE.len());
    while buf.len() < PREFACE.len() && PREFACE.starts_with(&buf) {
        if io.read_buf(&mut buf).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
    Ok(buf.freeze())
}

/// An I/O object that first replays `prefix`, then reads from `inner`.
#[derive(Debug)]
pub(super) struct Rewind<T> {
    prefix: Bytes,
    inner: T,
}

impl<T> Rewind<T> {
    /// Replays `prefix` before `inner`.
    pub(super) fn new(prefix: Bytes, inner: T) -> Rewind<T> {
        Rewind { prefix, inner }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.prefix.is_empty() {
            let n = self.prefix.len().min(buf.remaining());
            buf.put_slice(&self.prefix[..n]);
            self.prefix.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Rewind<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
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
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn the_preface_arrives_in_pieces_and_is_replayed_before_the_rest() {
        let (mut client, mut server) = tokio::io::duplex(64);
        let writer = tokio::spawn(async move {
            client.write_all(&PREFACE[..5]).await.expect("write");
            client.write_all(&PREFACE[5..]).await.expect("write");
            client.write_all(b"after").await.expect("write");
            client
        });
        let got = read_preface(&mut server).await.expect("preface");
        assert!(got.starts_with(PREFACE), "{got:?}");
        let _client = writer.await.expect("writer");
        let mut rewound = Rewind::new(got, server);
        let mut all = vec![0u8; PREFACE.len() + 5];
        rewound.read_exact(&mut all).await.expect("read");
        assert_eq!(&all[..24], PREFACE);
        assert_eq!(&all[24..], b"after");
    }

    #[tokio::test]
    async fn bytes_that_cannot_be_a_preface_stop_the_read_early() {
        let (mut client, mut server) = tokio::io::duplex(64);
        client
            .write_all(b"GET / HTTP/1.1\r\n")
            .await
            .expect("write");
        let got = read_preface(&mut server).await.expect("bytes");
        assert!(got.starts_with(b"GET"), "{got:?}");
    }

    #[tokio::test]
    async fn a_client_that_closes_mid_preface_is_an_error() {
        let (mut client, mut server) = tokio::io::duplex(64);
        client.write_all(&PREFACE[..10]).await.expect("write");
        drop(client);
        let e = read_preface(&mut server).await.expect_err("eof");
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
