//! Calls in flight on one connection, as the connection's watchdog needs to
//! see them. [`Tracked`] wraps the connection's service: a call is in
//! flight from the moment hyper hands over its request until its response
//! body has been sent to the end or dropped (a reset stream, a client gone)
//! — so a streaming scan is in flight for as long as it streams.
//!
//! Invariant: `idle_since` is written before the count drops to zero, so a
//! watchdog that reads a zero count reads the time the last call ended (or
//! the connection started).

use crate::security::PeerAddr;
use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// The calls of one connection.
#[derive(Debug)]
pub(super) struct Activity {
    started: Instant,
    in_flight: AtomicUsize,
    calls: AtomicU64,
    /// When the count last dropped to zero, µs after `started`.
    idle_since_us: AtomicU64,
    /// Woken each time the count drops to zero.
    went_idle: Notify,
}

impl Activity {
    /// A connection with no call yet, idle from now.
    pub(super) fn new() -> Arc<Activity> {
        Arc::new(Activity {
            started: Instant::now(),
            in_flight: AtomicUsize::new(0),
            calls: AtomicU64::new(0),
            idle_since_us: AtomicU64::new(0),
            went_idle: Notify::new(),
        })
    }

    /// When the connection last had no call in flight, or `None` while one is.
    pub(super) fn idle_since(&self) -> Option<Instant> {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let us = self.idle_since_us.load(Ordering::SeqCst);
        Some(self.started + Duration::from_micros(us))
    }

    /// True until the first call arrives.
    pub(super) fn awaiting_first_call(&self) -> bool {
        self.calls.load(Ordering::SeqCst) == 0
    }

    /// Resolves the next time the last call in flight ends (at once if one
    /// ended since the previous wait).
    pub(super) async fn went_idle(&self) {
        self.went_idle.notified().await;
    }

    fn begin(self: &Arc<Self>) -> CallGuard {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        CallGuard(self.clone())
    }
}

/// One call in flight; ends it when dropped.
#[derive(Debug)]
struct CallGuard(Arc<Activity>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        let a = &self.0;
        let us = u64::try_from(a.started.elapsed().as_micros()).unwrap_or(u64::MAX);
        a.idle_since_us.fetch_max(us, Ordering::SeqCst);
        if a.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            // notify_one keeps a permit if the watchdog is not waiting yet.
            a.went_idle.notify_one();
        }
    }
}

/// A connection's service, counting its calls into an [`Activity`] and
/// telling each request its client's address ([`PeerAddr`]).
#[derive(Debug, Clone)]
pub(super) struct Tracked<S> {
    inner: S,
    activity: Arc<Activity>,
    peer: PeerAddr,
}

impl<S> Tracked<S> {
    pub(super) fn new(inner: S, activity: Arc<Activity>, peer: std::net::SocketAddr) -> Tracked<S> {
        Tracked {
            inner,
            activity,
            peer: PeerAddr(peer),
        }
    }
}

impl<S, B> hyper::service::Service<Request<Incoming>> for Tracked<S>
where
    S: hyper::service::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<TrackedBody<B>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        request.extensions_mut().insert(self.peer);
        let guard = self.activity.begin();
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| TrackedBody {
                body,
                _guard: guard,
            }))
        })
    }
}

/// A response body that keeps its call in flight until it is dropped.
#[derive(Debug)]
pub(super) struct TrackedBody<B> {
    body: B,
    _guard: CallGuard,
}

impl<B: Body<Data = Bytes> + Unpin> Body for TrackedBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_flight_until_the_last_guard_drops() {
        let a = Activity::new();
        assert!(a.awaiting_first_call());
        let idle_at_start = a.idle_since().expect("idle at start");
        let first = a.begin();
        let second = a.begin();
        assert!(!a.awaiting_first_call());
        assert_eq!(a.idle_since(), None);
        drop(first);
        assert_eq!(a.idle_since(), None, "one call still in flight");
        drop(second);
        let idle = a.idle_since().expect("idle again");
        assert!(idle >= idle_at_start);
    }

    #[tokio::test]
    async fn going_idle_wakes_a_waiter_even_one_that_comes_late() {
        let a = Activity::new();
        drop(a.begin());
        // The permit was kept: this resolves although nobody waited above.
        tokio::time::timeout(Duration::from_secs(5), a.went_idle())
            .await
            .expect("woken");
    }
}
