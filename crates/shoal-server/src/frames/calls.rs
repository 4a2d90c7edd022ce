//! One framed call: its bytes held against the request budget, its request
//! decoded, the shared Data handler (`crate::data_api`) run, and its answer
//! framed straight into the connection's write buffer.

use super::FramesDoor;
use crate::data_api;
use crate::error::ServiceError;
use crate::metrics::RequestOp;
use crate::security::Caller;
use prost::Message;
use shoal_proto::frames::{self, Frame, Method};
use shoal_proto::v1 as pb;
use std::future::Future;
use std::pin::Pin;

/// A call's answer, ready to frame.
pub(super) struct Answer {
    id: u32,
    result: Result<Response, tonic::Status>,
}

/// The response messages the transport carries.
enum Response {
    Get(pb::GetResponse),
    MultiGet(pb::MultiGetResponse),
    Mutate(pb::MutateResponse),
    MultiMutate(pb::MultiMutateResponse),
}

impl Answer {
    /// Appends this answer's frame to `out`.
    pub(super) fn frame(&self, out: &mut Vec<u8>) {
        match &self.result {
            Ok(r) => match r {
                Response::Get(m) => frames::encode_frame(out, self.id, frames::OK, m),
                Response::MultiGet(m) => frames::encode_frame(out, self.id, frames::OK, m),
                Response::Mutate(m) => frames::encode_frame(out, self.id, frames::OK, m),
                Response::MultiMutate(m) => frames::encode_frame(out, self.id, frames::OK, m),
            },
            Err(status) => {
                frames::encode_failure(out, self.id, &frames::status_to_error(status));
            }
        }
    }
}

/// A running call (boxed: the connection's set of running calls stays small).
pub(super) type Running<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;

/// Decodes a request, or answers INVALID_ARGUMENT.
fn decode<M: Message + Default>(frame: &Frame) -> Result<M, ServiceError> {
    M::decode(frame.body.clone())
        .map_err(|e| ServiceError::InvalidArgument(format!("malformed framed request: {e}")))
}

/// Runs one call of `caller`.
pub(super) fn run<'a>(door: &'a FramesDoor, caller: &'a Caller, frame: Frame) -> Running<'a> {
    Box::pin(async move {
        let id = frame.id;
        let Some(method) = Method::from_byte(frame.kind) else {
            return Answer {
                id,
                result: Err(tonic::Status::unimplemented(format!(
                    "framed method {} is not served (Get 1, MultiGet 2, Mutate 3, MultiMutate 4)",
                    frame.kind
                ))),
            };
        };
        // Held until answered; a call that does not fit is refused whole.
        let Some(_held) = door.budget.hold(frame.body.len() as u64) else {
            return Answer {
                id,
                result: Err(tonic::Status::resource_exhausted(format!(
                    "the server holds {} bytes of requests already \
                     (limits.request_bytes_in_flight); retry later",
                    door.budget.limit()
                ))),
            };
        };
        let host = &door.host;
        let result = match method {
            Method::Get => {
                let f = async { data_api::get(host, caller, decode(&frame)?).await };
                data_api::timed(host, RequestOp::Get, f)
                    .await
                    .map(Response::Get)
            }
            Method::MultiGet => {
                let f = async { data_api::multi_get(host, caller, decode(&frame)?).await };
                data_api::timed(host, RequestOp::MultiGet, f)
                    .await
                    .map(Response::MultiGet)
            }
            Method::Mutate => {
                let f = async { data_api::mutate(host, caller, decode(&frame)?).await };
                data_api::timed(host, RequestOp::Mutate, f)
                    .await
                    .map(Response::Mutate)
            }
            Method::MultiMutate => {
                let f = async { data_api::multi_mutate(host, caller, decode(&frame)?).await };
                data_api::timed(host, RequestOp::MultiMutate, f)
                    .await
                    .map(Response::MultiMutate)
            }
        };
        Answer {
            id,
            result: result.map_err(|e| e.to_status()),
        }
    })
}
