//! The socket of an accepted connection, as the listener keeps it:
//! [`SharedTcp`], a handle shared between whoever serves the connection and
//! the listener, which counts the reads and writes that moved bytes
//! ([`Moved`]), and closes with a *lingering close*, as nginx and Apache do.
//!
//! Why linger: closing a TCP socket whose receive queue still holds bytes (a
//! client's last WINDOW_UPDATE or PING, say) makes Linux send a RST instead
//! of a FIN, and a RST makes the client's kernel throw away whatever the
//! client had received but not read yet: the tail of its last response. So
//! once a connection is done, [`lingering_close`] shuts the write side (FIN
//! after all sent data), reads and discards until the client closes too,
//! for at most [`LINGER`], and only then closes.
//!
//! Why count: the watchdog of a draining connection must tell one that
//! still delivers (a response body hyper queued past the client's
//! flow-control window, the client's WINDOW_UPDATEs coming in) from one
//! that is stuck (`connection`).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The longest a finished connection waits for its client to close.
pub(super) const LINGER: Duration = Duration::from_millis(500);

/// The count of a connection's reads and writes that moved bytes.
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

/// A connection's socket, shared between whoever serves it and the
/// listener's lingering close.
#[derive(Debug, Clone)]
pub(crate) struct SharedTcp {
    tcp: Arc<TcpStream>,
    moved: Moved,
}

impl SharedTcp {
    pub(crate) fn new(tcp: TcpStream) -> SharedTcp {
        SharedTcp {
            tcp: Arc::new(tcp),
            moved: Moved::default(),
        }
    }

    /// Its count of reads and writes that moved bytes.
    pub(super) fn moved(&self) -> Moved {
        self.moved.clone()
    }

    /// Counts a read or write that moved `n` bytes (none if 0).
    fn note(&self, n: usize) {
        if n > 0 {
            self.moved.bump();
        }
    }
}

impl AsyncRead for SharedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            ready!(self.tcp.poll_read_ready(cx))?;
            // `try_read_buf` clears the readiness on WouldBlock.
            match self.tcp.try_read_buf(buf) {
                Ok(n) => {
                    self.note(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl SharedTcp {
    /// Writes with `write` once the socket is writable, counting the move.
    fn poll_write_with(
        &self,
        cx: &mut Context<'_>,
        write: impl Fn(&TcpStream) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.tcp.poll_write_ready(cx))?;
            // `try_write*` clears the readiness on WouldBlock.
            match write(&self.tcp) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                written => {
                    if let Ok(n) = written {
                        self.note(n);
                    }
                    return Poll::Ready(written);
                }
            }
        }
    }
}

impl AsyncWrite for SharedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_with(cx, |tcp| tcp.try_write(buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_with(cx, |tcp| tcp.try_write_vectored(bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(())) // a TCP socket buffers nothing of its own
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(shut_write(&self.tcp))
    }
}

/// Sends the FIN, after whatever was written.
fn shut_write(tcp: &TcpStream) -> io::Result<()> {
    match socket2::SockRef::from(tcp).shutdown(std::net::Shutdown::Write) {
        // Already shut, or the peer is gone: nothing left to send.
        Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
        done => done,
    }
}

/// Serves a connection with `serve`, which hands back the connection's slot
/// once it has dropped its handles of the socket; then closes the socket
/// with a lingering close, and only then releases the slot, so the
/// connection counts under `max_connections` until its descriptor is gone.
pub(crate) async fn serve_and_close<F, Fut>(tcp: TcpStream, serve: F)
where
    F: FnOnce(SharedTcp) -> Fut,
    Fut: std::future::Future<Output = super::Slot>,
{
    let tcp = SharedTcp::new(tcp);
    let slot = serve(tcp.clone()).await;
    lingering_close(tcp).await;
    drop(slot);
}

/// Closes `tcp` once the client has read all it was sent: shuts the write
/// side, then reads and discards until the client closes (or fails), for
/// at most [`LINGER`]. Closes at once if another handle is still alive
/// (nothing to linger for: the socket stays open through it).
pub(super) async fn lingering_close(tcp: SharedTcp) {
    let Some(tcp) = Arc::into_inner(tcp.tcp) else {
        return;
    };
    if shut_write(&tcp).is_err() {
        return;
    }
    let drain = async {
        let mut sink = [0u8; 4096];
        loop {
            if tcp.readable().await.is_err() {
                return;
            }
            match tcp.try_read(&mut sink) {
                Ok(0) => return, // the client closed
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    async fn pair() -> (SharedTcp, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap());
        let (client, accepted) = tokio::join!(client, listener.accept());
        (SharedTcp::new(accepted.unwrap().0), client.unwrap())
    }

    #[tokio::test]
    async fn serves_reads_and_writes_and_counts_those_that_moved_bytes() {
        let (mut server, mut client) = pair().await;
        let moved = server.moved();
        assert_eq!(moved.count(), 0);
        client.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        server.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
        let after_read = moved.count();
        assert!(after_read >= 1);
        let bufs = [io::IoSlice::new(b"po"), io::IoSlice::new(b"ng")];
        let n = server.write_vectored(&bufs).await.unwrap();
        server.write_all(&b"pong"[n..]).await.unwrap();
        assert!(moved.count() > after_read);
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"pong");
        // The end of the stream moves nothing.
        drop(client);
        let before_end = moved.count();
        assert_eq!(server.read(&mut got).await.unwrap(), 0);
        assert_eq!(moved.count(), before_end);
    }

    /// The client sent bytes the server never read, and reads the server's
    /// answer only after the server is done with the connection.
    async fn answered_with_unread_bytes() -> (SharedTcp, TcpStream, Vec<u8>) {
        let (mut server, mut client) = pair().await;
        let answer = vec![7u8; 64 << 10];
        server.write_all(&answer).await.unwrap();
        client.write_all(b"unread by the server").await.unwrap();
        // Let the server's kernel queue the client's bytes.
        tokio::time::sleep(Duration::from_millis(50)).await;
        (server, client, answer)
    }

    #[tokio::test]
    async fn a_plain_close_resets_and_the_client_loses_its_unread_answer() {
        let (server, mut client, answer) = answered_with_unread_bytes().await;
        drop(server);
        let mut got = Vec::new();
        let read = client.read_to_end(&mut got).await;
        assert!(read.is_err() || got != answer, "the premise of this module");
    }

    #[tokio::test]
    async fn after_a_lingering_close_the_client_reads_all_it_was_sent() {
        let (server, mut client, answer) = answered_with_unread_bytes().await;
        lingering_close(server).await;
        let mut got = Vec::new();
        client
            .read_to_end(&mut got)
            .await
            .expect("read to a clean end, not a reset");
        assert_eq!(got, answer);
    }

    #[tokio::test]
    async fn a_client_that_never_closes_is_waited_for_at_most_the_linger() {
        let (server, _client) = pair().await;
        let started = std::time::Instant::now();
        lingering_close(server).await;
        assert!(started.elapsed() < LINGER * 10);
    }
}
