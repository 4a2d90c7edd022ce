//! The HTTP/2 handshake of a gRPC connection — the client's preface: 24
//! magic octets and a SETTINGS frame — read by the listener itself so that
//! it can be timed out: hyper's HTTP/2 server waits for the preface for
//! ever, and a graceful shutdown waits with it. The bytes read
//! are handed back to hyper through [`Rewind`], which replays them before
//! reading on from the socket.

use bytes::{Buf, Bytes, BytesMut};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// What every HTTP/2 client sends first (RFC 9113 §3.4).
pub(super) const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Length of an HTTP/2 frame header.
const FRAME_HEADER: usize = 9;
/// The SETTINGS frame type.
const SETTINGS: u8 = 0x4;
/// Largest SETTINGS payload waited for (the default maximum frame size).
const MAX_SETTINGS_PAYLOAD: usize = 16 << 10;

/// Reads the client connection preface: the 24 magic octets and the
/// SETTINGS frame that must follow them. Stops early, returning what it
/// has, once the bytes cannot be a preface (hyper then refuses the
/// connection with a protocol error). Returns every byte read, which may
/// run past the preface. A client that closes first is an error.
pub(super) async fn read_preface<T: AsyncRead + Unpin>(io: &mut T) -> io::Result<Bytes> {
    let mut buf = BytesMut::with_capacity(256);
    while buf.len() < PREFACE.len() && PREFACE.starts_with(&buf) {
        read_more(io, &mut buf).await?;
    }
    if !buf.starts_with(PREFACE) {
        return Ok(buf.freeze());
    }
    let header_end = PREFACE.len() + FRAME_HEADER;
    while buf.len() < header_end {
        read_more(io, &mut buf).await?;
    }
    let header = &buf[PREFACE.len()..header_end];
    let payload =
        usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
    if header[3] != SETTINGS || payload > MAX_SETTINGS_PAYLOAD {
        return Ok(buf.freeze());
    }
    while buf.len() < header_end + payload {
        read_more(io, &mut buf).await?;
    }
    Ok(buf.freeze())
}

async fn read_more<T: AsyncRead + Unpin>(io: &mut T, buf: &mut BytesMut) -> io::Result<()> {
    buf.reserve(256);
    if io.read_buf(buf).await? == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
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
    use std::time::Duration;
    use tokio::io::AsyncWriteExt;

    /// The magic, then an empty SETTINGS frame.
    fn client_preface() -> Vec<u8> {
        let mut p = PREFACE.to_vec();
        p.extend_from_slice(&[0, 0, 6, SETTINGS, 0, 0, 0, 0, 0]);
        p.extend_from_slice(&[0, 3, 0, 0, 0, 100]); // MAX_CONCURRENT_STREAMS = 100
        p
    }

    #[tokio::test]
    async fn the_preface_arrives_in_pieces_and_is_replayed_before_the_rest() {
        let (mut client, mut server) = tokio::io::duplex(64);
        let preface = client_preface();
        let sent = preface.clone();
        let writer = tokio::spawn(async move {
            for piece in sent.chunks(5) {
                client.write_all(piece).await.expect("write");
            }
            client.write_all(b"after").await.expect("write");
            client
        });
        let got = read_preface(&mut server).await.expect("preface");
        assert!(got.starts_with(&preface), "{got:?}");
        let _client = writer.await.expect("writer");
        let mut rewound = Rewind::new(got, server);
        let mut all = vec![0u8; preface.len() + 5];
        rewound.read_exact(&mut all).await.expect("read");
        assert_eq!(&all[..preface.len()], &preface[..]);
        assert_eq!(&all[preface.len()..], b"after");
    }

    /// The magic alone is not a finished handshake: the SETTINGS frame is
    /// part of the client's preface.
    #[tokio::test(start_paused = true)]
    async fn the_magic_without_settings_is_not_a_preface() {
        let (mut client, mut server) = tokio::io::duplex(64);
        let preface = client_preface();
        client.write_all(&preface[..30]).await.expect("write");
        let read = tokio::time::timeout(Duration::from_secs(60), read_preface(&mut server)).await;
        assert!(read.is_err(), "returned without the whole SETTINGS frame");
        drop(client);
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
        // A first frame that is not SETTINGS: handed to hyper at once.
        let (mut client, mut server) = tokio::io::duplex(64);
        let mut ping = PREFACE.to_vec();
        ping.extend_from_slice(&[0, 0, 8, 0x6, 0, 0, 0, 0, 0]);
        client.write_all(&ping).await.expect("write");
        let got = read_preface(&mut server).await.expect("bytes");
        assert_eq!(&got[..], &ping[..]);
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
