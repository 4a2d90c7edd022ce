//! The request budget (`super::budget`) as a tower layer in front of the
//! gRPC port's HTTP/2 services.
//!
//! Each request body is counted as its frames arrive, before a message is
//! decoded; the bytes stay counted until the call has answered (the decoded
//! request lives that long). A frame that would pass the budget fails the
//! request with RESOURCE_EXHAUSTED at once — the rest of its body is never
//! read, so 64 clients sending 60 MiB each cannot make the server hold 4 GiB.
//! The client may retry later.
//!
//! The layer also answers an oversized message (tonic's decoder refuses it
//! with OUT_OF_RANGE) with RESOURCE_EXHAUSTED, the code the API documents for
//! a request over a size limit; no Shoal call answers OUT_OF_RANGE otherwise.

use super::RequestBudget;
use bytes::Bytes;
use futures::future::BoxFuture;
use http_body::{Body as HttpBody, Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use tonic::body::Body;

/// What one call holds; gives its bytes back when the body and the answer
/// are both gone.
#[derive(Debug)]
struct CallBytes {
    budget: Arc<RequestBudget>,
    bytes: AtomicU64,
    refused: AtomicBool,
}

impl Drop for CallBytes {
    fn drop(&mut self) {
        self.budget.give(self.bytes.load(Ordering::Acquire));
    }
}

/// Puts the budget in front of a service.
#[derive(Debug, Clone)]
pub struct BudgetLayer {
    budget: Arc<RequestBudget>,
}

impl BudgetLayer {
    /// A layer over `budget`.
    pub fn new(budget: Arc<RequestBudget>) -> BudgetLayer {
        BudgetLayer { budget }
    }
}

impl<S> tower_layer::Layer<S> for BudgetLayer {
    type Service = BudgetService<S>;
    fn layer(&self, inner: S) -> BudgetService<S> {
        BudgetService {
            inner,
            budget: self.budget.clone(),
        }
    }
}

/// See [`BudgetLayer`].
#[derive(Debug, Clone)]
pub struct BudgetService<S> {
    inner: S,
    budget: Arc<RequestBudget>,
}

impl<S, B> tower_service::Service<http::Request<B>> for BudgetService<S>
where
    S: tower_service::Service<http::Request<Body>, Response = http::Response<Body>>,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<http::Response<Body>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let call = Arc::new(CallBytes {
            budget: self.budget.clone(),
            bytes: AtomicU64::new(0),
            refused: AtomicBool::new(false),
        });
        let counted = call.clone();
        let req = req.map(|inner| {
            Body::new(CountedBody {
                inner: Body::new(inner),
                call: counted,
            })
        });
        let answer = self.inner.call(req);
        let limit = self.budget.limit();
        Box::pin(async move {
            let response = answer.await?;
            if call.refused.load(Ordering::Acquire) {
                call.budget.record_refused();
                return Ok(tonic::Status::resource_exhausted(format!(
                    "the server holds {limit} bytes of requests already \
                     (limits.request_bytes_in_flight); retry later"
                ))
                .into_http());
            }
            Ok(out_of_range_is_resource_exhausted(response))
        })
    }
}

/// A trailers-only answer with OUT_OF_RANGE is tonic refusing a message over
/// the size limit: the API documents RESOURCE_EXHAUSTED for that.
fn out_of_range_is_resource_exhausted(mut response: http::Response<Body>) -> http::Response<Body> {
    const OUT_OF_RANGE: &[u8] = b"11";
    let headers = response.headers_mut();
    if headers
        .get("grpc-status")
        .is_some_and(|v| v.as_bytes() == OUT_OF_RANGE)
    {
        headers.insert(
            "grpc-status",
            http::HeaderValue::from_static("8"), // RESOURCE_EXHAUSTED
        );
    }
    response
}

/// A request body counted against the budget frame by frame.
struct CountedBody {
    inner: Body,
    call: Arc<CallBytes>,
}

/// The body error that stops a request over the budget.
#[derive(Debug, thiserror::Error)]
#[error("request bytes in flight are over limits.request_bytes_in_flight")]
struct OverBudget;

impl HttpBody for CountedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.call.refused.load(Ordering::Acquire) {
            return Poll::Ready(Some(Err(Box::new(OverBudget))));
        }
        let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
            other => return other.map_err(Into::into),
        };
        if let Some(data) = frame.data_ref() {
            let n = data.len() as u64;
            if !self.call.budget.try_take(n) {
                self.call.refused.store(true, Ordering::Release);
                return Poll::Ready(Some(Err(Box::new(OverBudget))));
            }
            self.call.bytes.fetch_add(n, Ordering::AcqRel);
        }
        Poll::Ready(Some(Ok(frame)))
    }

    // `is_end_stream` keeps its default (false). Delegating it to the inner
    // body made a streaming call's connection close under it during a
    // graceful stop (`tests/connections.rs` caught it); the default only
    // costs the decoder one more poll to see the end.

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_gives_back_its_bytes_when_dropped() {
        let b = RequestBudget::new(100, Arc::default());
        let call = CallBytes {
            budget: b.clone(),
            bytes: AtomicU64::new(0),
            refused: AtomicBool::new(false),
        };
        assert!(b.try_take(70));
        call.bytes.fetch_add(70, Ordering::AcqRel);
        drop(call);
        assert_eq!(b.held(), 0);
    }
}
