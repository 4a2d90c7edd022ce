//! The shape every unary gRPC call shares, written once: find the caller
//! (the one `security::AuthLayer` put in the request, or with auth off
//! `anyone`), run the call's work on the host, timed and counted under its
//! operation, and answer its result or its error as a gRPC status. A
//! handler states only its operation and its work.

use crate::data_api;
use crate::error::ServiceError;
use crate::host::Host;
use crate::metrics::RequestOp;
use crate::security::{AuthFailure, Caller, PeerAddr, Security, Via};
use std::future::Future;
use std::time::Instant;
use tonic::{Request, Response, Status};

/// What a gRPC service serves its calls with: the host, and the caller
/// with auth off (cloned, never allocated per call).
#[derive(Debug, Clone)]
pub(super) struct Door {
    pub(super) host: Host,
    anyone: Caller,
}

impl Door {
    /// The door of a service over `host`.
    pub(super) fn new(host: Host) -> Door {
        Door {
            host,
            anyone: Caller::anyone(Via::Grpc),
        }
    }

    /// The caller of `req`.
    pub(super) fn caller<T>(&self, req: &Request<T>) -> Result<Caller, Status> {
        caller_of(req, self.host.security(), &self.anyone)
    }

    /// Serves a unary call: its caller first (a call without one is
    /// refused, uncounted), then `work` with the caller and the request,
    /// timed and counted under `op`.
    pub(super) async fn unary<Req, T, Fut>(
        &self,
        req: Request<Req>,
        op: RequestOp,
        work: impl FnOnce(Caller, Req) -> Fut,
    ) -> Result<Response<T>, Status>
    where
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let caller = self.caller(&req)?;
        let work = work(caller, req.into_inner());
        let result = match op {
            RequestOp::Admin => timed_admin(&self.host, work).await,
            op => data_api::timed(&self.host, op, work).await,
        };
        result.map(Response::new).map_err(|e| e.to_status())
    }
}

/// [`data_api::timed`] for the Admin service's calls, whose failures log
/// as "admin request failed".
async fn timed_admin<T>(
    host: &Host,
    work: impl Future<Output = Result<T, ServiceError>>,
) -> Result<T, ServiceError> {
    let start = Instant::now();
    let result = work.await;
    host.requests()
        .record(RequestOp::Admin, start.elapsed(), result.is_ok());
    if let Err(e) = &result
        && matches!(e.to_status().code(), tonic::Code::Internal)
    {
        tracing::error!(error = %e, "admin request failed");
    }
    result
}

/// The caller of a gRPC request: the one the layer found, or with auth off
/// `anyone` (kept by the service, so no call allocates one).
fn caller_of<T>(
    req: &tonic::Request<T>,
    security: &Security,
    anyone: &Caller,
) -> Result<Caller, tonic::Status> {
    match req.extensions().get::<Caller>() {
        Some(c) => Ok(c.clone()),
        // No allocation: the shared caller, told where this call is from.
        None if !security.auth_enabled() => Ok(anyone
            .clone()
            .with_peer(req.extensions().get::<PeerAddr>().map(|p| p.0))),
        None => Err(tonic::Status::unauthenticated(
            AuthFailure::Missing.message(),
        )),
    }
}
