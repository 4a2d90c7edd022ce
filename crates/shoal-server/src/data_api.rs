//! Shoal's unary Data calls as transport-neutral handlers: a `shoal.v1`
//! request and its caller in, the response message (or a
//! [`ServiceError`]) out, over the host API. Both transports of Shoal's own
//! API — gRPC (`grpc::data`) and the framed transport (`frames`) — call
//! these, so a call means the same on either; [`timed`] records each in the
//! request metrics.

use crate::error::ServiceError;
use crate::host::Host;
use crate::metrics::RequestOp;
use crate::proto_convert as convert;
use crate::security::Caller;
use bytes::Bytes;
use shoal_proto::v1 as pb;
use std::time::Instant;

/// Largest unary response: the 64 MiB message limit, less room for framing.
const MAX_RESPONSE_BYTES: usize = crate::config::limits::MAX_MESSAGE_BYTES - (64 << 10);

/// Runs `f`, records it as one `op` call (latency, success) and logs a
/// failure that is the server's own.
pub(crate) async fn timed<T>(
    host: &Host,
    op: RequestOp,
    f: impl std::future::Future<Output = Result<T, ServiceError>>,
) -> Result<T, ServiceError> {
    let start = Instant::now();
    let result = f.await;
    host.requests().record(op, start.elapsed(), result.is_ok());
    if let Err(e) = &result
        && matches!(e.to_status().code(), tonic::Code::Internal)
    {
        tracing::error!(op = op.as_str(), error = %e, "request failed");
    }
    result
}

/// `response` if it fits one message; otherwise FAILED_PRECONDITION starting
/// with [`shoal_proto::ROW_TOO_LARGE`], which tells a client to read the row
/// through a scan (that streams large rows in pieces).
fn fits_one_message<M: prost::Message>(response: M) -> Result<M, ServiceError> {
    let len = response.encoded_len();
    if len > MAX_RESPONSE_BYTES {
        return Err(ServiceError::FailedPrecondition(format!(
            "{}: {len} bytes, more than {MAX_RESPONSE_BYTES}; read it with a scan, which \
             streams large rows in pieces",
            shoal_proto::ROW_TOO_LARGE
        )));
    }
    Ok(response)
}

/// One row.
pub(crate) async fn get(
    host: &Host,
    caller: &Caller,
    r: pb::GetRequest,
) -> Result<pb::GetResponse, ServiceError> {
    let get = convert::get(r.get)?;
    let row = host.access(caller).get(&r.table, get).await?;
    fits_one_message(pb::GetResponse {
        row: Some(convert::row(row)),
    })
}

/// Several rows, in the order asked.
pub(crate) async fn multi_get(
    host: &Host,
    caller: &Caller,
    r: pb::MultiGetRequest,
) -> Result<pb::MultiGetResponse, ServiceError> {
    host.config().limits.check_batch(r.gets.len(), "gets")?;
    let gets = r
        .gets
        .into_iter()
        .map(|g| convert::get(Some(g)))
        .collect::<Result<Vec<_>, _>>()?;
    let rows = host.access(caller).multi_get(&r.table, gets).await?;
    fits_one_message(pb::MultiGetResponse {
        rows: rows.into_iter().map(convert::row).collect(),
    })
}

/// One row mutation, atomic.
pub(crate) async fn mutate(
    host: &Host,
    caller: &Caller,
    r: pb::MutateRequest,
) -> Result<pb::MutateResponse, ServiceError> {
    let m = convert::row_mutation(r.mutation)?;
    host.access(caller).mutate(&r.table, m).await?;
    Ok(pb::MutateResponse {})
}

/// Several row mutations, each atomic on its own, each answered on its own.
pub(crate) async fn multi_mutate(
    host: &Host,
    caller: &Caller,
    r: pb::MultiMutateRequest,
) -> Result<pb::MultiMutateResponse, ServiceError> {
    host.config()
        .limits
        .check_batch(r.mutations.len(), "mutations")?;
    // Rows that do not decode are answered alone; the rest go through
    // the regions' mini-batch path together.
    let mut valid = Vec::with_capacity(r.mutations.len());
    let undecodable: Vec<Option<ServiceError>> = r
        .mutations
        .into_iter()
        .map(|m| match convert::row_mutation(Some(m)) {
            Ok(m) => {
                valid.push(m);
                None
            }
            Err(e) => Some(e),
        })
        .collect();
    let mut applied = host
        .access(caller)
        .mutate_many(&r.table, valid)
        .await?
        .into_iter();
    let results = undecodable.into_iter().map(|bad| match bad {
        Some(e) => Err(e),
        None => applied
            .next()
            .unwrap_or_else(|| Err(ServiceError::Unavailable("mutation was not applied".into()))),
    });
    Ok(pb::MultiMutateResponse {
        results: results
            .map(|r| match r {
                Ok(()) => pb::MutationStatus {
                    code: 0,
                    message: String::new(),
                },
                Err(e) => {
                    let s = e.to_status();
                    pb::MutationStatus {
                        code: s.code() as i32,
                        message: s.message().to_string(),
                    }
                }
            })
            .collect(),
    })
}

/// Adds to counters; answers their new values.
pub(crate) async fn increment(
    host: &Host,
    caller: &Caller,
    r: pb::IncrementRequest,
) -> Result<pb::IncrementResponse, ServiceError> {
    let cols: Vec<(Bytes, Bytes, i64)> = r
        .columns
        .iter()
        .map(|c| {
            (
                Bytes::from(c.family.clone()),
                Bytes::from(c.qualifier.clone()),
                c.amount,
            )
        })
        .collect();
    let values = host
        .access(caller)
        .increment(&r.table, Bytes::from(r.row.clone()), cols, None)
        .await?
        .values;
    Ok(pb::IncrementResponse {
        row: Some(pb::Row {
            row: r.row.clone().into(),
            cells: r
                .columns
                .into_iter()
                .zip(values)
                .map(|(c, v)| pb::Cell {
                    family: c.family.into(),
                    qualifier: c.qualifier.into(),
                    timestamp: 0,
                    value: Bytes::copy_from_slice(&v.to_be_bytes()),
                })
                .collect(),
            partial: false,
        }),
    })
}

/// Appends to values; answers the new values.
pub(crate) async fn append(
    host: &Host,
    caller: &Caller,
    r: pb::AppendRequest,
) -> Result<pb::AppendResponse, ServiceError> {
    let cols: Vec<(Bytes, Bytes, Bytes)> = r
        .columns
        .iter()
        .map(|c| {
            (
                Bytes::from(c.family.clone()),
                Bytes::from(c.qualifier.clone()),
                Bytes::from(c.value.clone()),
            )
        })
        .collect();
    let values = host
        .access(caller)
        .append(&r.table, Bytes::from(r.row.clone()), cols, None)
        .await?
        .values;
    Ok(pb::AppendResponse {
        row: Some(pb::Row {
            row: r.row.clone().into(),
            cells: r
                .columns
                .into_iter()
                .zip(values)
                .map(|(c, v)| pb::Cell {
                    family: c.family.into(),
                    qualifier: c.qualifier.into(),
                    timestamp: 0,
                    value: v,
                })
                .collect(),
            partial: false,
        }),
    })
}

/// A mutation applied only if a check holds.
pub(crate) async fn check_and_mutate(
    host: &Host,
    caller: &Caller,
    r: pb::CheckAndMutateRequest,
) -> Result<pb::CheckAndMutateResponse, ServiceError> {
    let table = r.table.clone();
    let check = convert::check_and_mutate(r)?;
    let processed = host.access(caller).check_and_mutate(&table, check).await?;
    Ok(pb::CheckAndMutateResponse { processed })
}
