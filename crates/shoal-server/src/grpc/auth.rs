//! Who makes a gRPC call: a tower layer in front of the services reads the
//! `authorization: Bearer TOKEN` header, answers UNAUTHENTICATED without a
//! valid token (auth on), and hands the [`Caller`] to the service in the
//! request's extensions. The services pass it to the host API
//! (`host::access`), where permissions are checked.

use crate::security::{Caller, Security, Via};
use futures::future::{Either, Ready, ready};
use std::sync::Arc;
use std::task::{Context, Poll};
use tonic::body::Body;

/// Puts a [`Caller`] in every request, or refuses it.
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
        let header = req
            .headers()
            .get(http::header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        match self.security.authenticate(header, Via::Grpc) {
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

/// The caller of a gRPC request: the one the layer found, or with auth off
/// `anyone` (kept by the service, so no call allocates one).
pub(crate) fn caller_of<T>(
    req: &tonic::Request<T>,
    security: &Security,
    anyone: &Caller,
) -> Result<Caller, tonic::Status> {
    match req.extensions().get::<Caller>() {
        Some(c) => Ok(c.clone()),
        None if !security.auth_enabled() => Ok(anyone.clone()),
        None => Err(tonic::Status::unauthenticated(
            crate::security::AuthFailure::Missing.message(),
        )),
    }
}
