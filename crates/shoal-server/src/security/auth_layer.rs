//! Who makes a call on the gRPC port's HTTP/2: a tower layer in front of
//! the services reads the `authorization: Bearer TOKEN` header, answers
//! UNAUTHENTICATED without a valid token (auth on), and hands the
//! [`Caller`](super::Caller) to the service in the request's extensions.
//! The services pass it to the host API (`host::access`), where
//! permissions are checked.
//! (The framed transport on the same port checks the same token in its
//! hello, `crate::frames`.)

use super::{Security, Via};
use futures::future::{Either, Ready, ready};
use std::sync::Arc;
use std::task::{Context, Poll};
use tonic::body::Body;

/// Puts a [`Caller`](super::Caller) in every request, or refuses it.
#[derive(Debug, Clone)]
pub struct AuthLayer {
    security: Arc<Security>,
}

impl AuthLayer {
    /// A layer authenticating with `security`.
    pub fn new(security: Arc<Security>) -> AuthLayer {
        AuthLayer { security }
    }
}

impl<S> tower_layer::Layer<S> for AuthLayer {
    type Service = AuthService<S>;
    fn layer(&self, inner: S) -> AuthService<S> {
        AuthService {
            inner,
            security: self.security.clone(),
        }
    }
}

/// See [`AuthLayer`].
#[derive(Debug, Clone)]
pub struct AuthService<S> {
    inner: S,
    security: Arc<Security>,
}

impl<S> tower_service::Service<http::Request<Body>> for AuthService<S>
where
    S: tower_service::Service<http::Request<Body>, Response = http::Response<Body>>,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = Either<S::Future, Ready<Result<http::Response<Body>, S::Error>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<Body>) -> Self::Future {
        if !self.security.auth_enabled() {
            return Either::Left(self.inner.call(req));
        }
        let peer = req.extensions().get::<super::PeerAddr>().map(|p| p.0);
        let header = req
            .headers()
            .get(http::header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        match self.security.authenticate_from(header, Via::Grpc, peer) {
            Ok(caller) => {
                req.extensions_mut().insert(caller);
                Either::Left(self.inner.call(req))
            }
            Err(failure) => Either::Right(ready(Ok(tonic::Status::unauthenticated(
                failure.message(),
            )
            .into_http()))),
        }
    }
}
