//! The `Data` service: reads and writes of rows.

use super::convert;
use crate::error::ServiceError;
use crate::host::Host;
use crate::metrics::RequestOp;
use crate::security::{Caller, Via};
use bytes::Bytes;
use shoal_proto::v1 as pb;
use std::pin::Pin;
use std::time::Instant;
use tonic::{Request, Response, Status};

/// Largest unary response: the 64 MiB message limit, less room for framing.
const MAX_RESPONSE_BYTES: usize = crate::request_limits::MAX_MESSAGE_BYTES - (64 << 10);
/// Rows per streamed scan message unless the request says otherwise.
const DEFAULT_ROWS_PER_MESSAGE: usize = 100;

/// Serves `shoal.v1.Data` from a [`Host`].
#[derive(Debug, Clone)]
pub struct DataService {
    host: Host,
    /// The caller with auth off (cloned, never allocated per call).
    anyone: Caller,
}

impl DataService {
    /// A service over `host`.
    pub fn new(host: Host) -> DataService {
        DataService {
            host,
            anyone: Caller::anyone(Via::Grpc),
        }
    }

    fn caller<T>(&self, req: &Request<T>) -> Result<Caller, Status> {
        super::auth::caller_of(req, self.host.security(), &self.anyone)
    }

    async fn timed<T>(
        &self,
        op: RequestOp,
        f: impl std::future::Future<Output = Result<T, ServiceError>>,
    ) -> Result<Response<T>, Status> {
        let start = Instant::now();
        let result = f.await;
        self.host
            .requests()
            .record(op, start.elapsed(), result.is_ok());
        match result {
            Ok(v) => Ok(Response::new(v)),
            Err(e) => {
                if matches!(e.to_status().code(), tonic::Code::Internal) {
                    tracing::error!(op = op.as_str(), error = %e, "request failed");
                }
                Err(e.to_status())
            }
        }
    }
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

type ScanBody = Pin<Box<super::scan::ScanBody>>;

#[tonic::async_trait]
impl pb::data_server::Data for DataService {
    async fn get(&self, req: Request<pb::GetRequest>) -> Result<Response<pb::GetResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = req.into_inner();
        self.timed(RequestOp::Get, async {
            let get = convert::get(r.get)?;
            let row = self.host.access(&caller).get(&r.table, get).await?;
            fits_one_message(pb::GetResponse {
                row: Some(convert::row(row)),
            })
        })
        .await
    }

    async fn multi_get(
        &self,
        req: Request<pb::MultiGetRequest>,
    ) -> Result<Response<pb::MultiGetResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = req.into_inner();
        self.timed(RequestOp::MultiGet, async {
            self.host
                .config()
                .limits
                .check_batch(r.gets.len(), "gets")?;
            let gets = r
                .gets
                .into_iter()
                .map(|g| convert::get(Some(g)))
                .collect::<Result<Vec<_>, _>>()?;
            let rows = self.host.access(&caller).multi_get(&r.table, gets).await?;
            fits_one_message(pb::MultiGetResponse {
                rows: rows.into_iter().map(convert::row).collect(),
            })
        })
        .await
    }

    async fn mutate(
        &self,
        req: Request<pb::MutateRequest>,
    ) -> Result<Response<pb::MutateResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = req.into_inner();
        self.timed(RequestOp::Mutate, async {
            let m = convert::row_mutation(r.mutation)?;
            self.host.access(&caller).mutate(&r.table, m).await?;
            Ok(pb::MutateResponse {})
        })
        .await
    }

    async fn multi_mutate(
        &self,
        req: Request<pb::MultiMutateRequest>,
    ) -> Result<Response<pb::MultiMutateResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = req.into_inner();
        self.timed(RequestOp::MultiMutate, async {
            self.host
                .config()
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
            let mut applied = self
                .host
                .access(&caller)
                .mutate_many(&r.table, valid)
                .await?
                .into_iter();
            let results = undecodable.into_iter().map(|bad| match bad {
                Some(e) => Err(e),
                None => applied.next().unwrap_or_else(|| {
                    Err(ServiceError::Unavailable("mutation was not applied".into()))
                }),
            });
            Ok(pb::MultiMutateResponse {
                results: results
                    .into_iter()
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
        })
        .await
    }

    async fn increment(
        &self,
        req: Request<pb::IncrementRequest>,
    ) -> Result<Response<pb::IncrementResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = req.into_inner();
        self.timed(RequestOp::Increment, async {
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
            let values = self
                .host
                .access(&caller)
                .increment(&r.table, Bytes::from(r.row.clone()), cols)
                .await?;
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
        })
        .await
    }

    async fn append(
        &self,
        req: Request<pb::AppendRequest>,
    ) -> Result<Response<pb::AppendResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = req.into_inner();
        self.timed(RequestOp::Append, async {
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
            let values = self
                .host
                .access(&caller)
                .append(&r.table, Bytes::from(r.row.clone()), cols)
                .await?;
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
        })
        .await
    }

    async fn check_and_mutate(
        &self,
        req: Request<pb::CheckAndMutateRequest>,
    ) -> Result<Response<pb::CheckAndMutateResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = req.into_inner();
        self.timed(RequestOp::CheckAndMutate, async {
            let table = r.table.clone();
            let check = convert::check_and_mutate(r)?;
            let processed = self
                .host
                .access(&caller)
                .check_and_mutate(&table, check)
                .await?;
            Ok(pb::CheckAndMutateResponse { processed })
        })
        .await
    }

    async fn region_map(
        &self,
        req: Request<pb::RegionMapRequest>,
    ) -> Result<Response<pb::RegionMapResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = req.into_inner();
        let regions = self
            .host
            .access(&caller)
            .region_map(&r.table)
            .map_err(|e| e.to_status())?;
        Ok(Response::new(pb::RegionMapResponse {
            regions: regions
                .into_iter()
                .map(|l| pb::RegionLocation {
                    start_row: l.start_row.to_vec(),
                    end_row: l.end_row.to_vec(),
                    region_id: l.region_id,
                    server: l.server,
                    epoch: l.epoch,
                })
                .collect(),
            answered_by: self.host.address().to_owned(),
        }))
    }

    type ScanStream = ScanBody;

    async fn scan(
        &self,
        req: Request<pb::ScanRequest>,
    ) -> Result<Response<Self::ScanStream>, Status> {
        let start = Instant::now();
        let caller = self.caller(&req)?;
        let r = req.into_inner();
        let opened = convert::scan(&r).and_then(|scan| {
            let filter = convert::filter(&r.filter)?;
            self.host
                .access(&caller)
                .scan_filtered(&r.table, scan, filter)
        });
        let stream = match opened {
            Ok(s) => s,
            Err(e) => {
                self.host
                    .requests()
                    .record(RequestOp::Scan, start.elapsed(), false);
                return Err(e.to_status());
            }
        };
        let per_message = match r.rows_per_message {
            0 => DEFAULT_ROWS_PER_MESSAGE,
            n => n as usize,
        };
        Ok(Response::new(Box::pin(super::scan::serve(
            self.host.clone(),
            stream,
            per_message,
        ))))
    }
}
