//! The `Data` service over gRPC: each unary call takes its caller, then runs
//! the transport-neutral handler in [`crate::data_api`] (shared with the
//! framed transport), through the shape written once in `super::door`;
//! scans stream from here.

use super::door::Door;
use crate::data_api;
use crate::host::Host;
use crate::metrics::RequestOp;
use crate::proto_convert as convert;
use shoal_proto::v1 as pb;
use std::pin::Pin;
use std::time::Instant;
use tonic::{Request, Response, Status};

/// Rows per streamed scan message unless the request says otherwise.
const DEFAULT_ROWS_PER_MESSAGE: usize = 100;

/// Serves `shoal.v1.Data` from a [`Host`].
#[derive(Debug, Clone)]
pub struct DataService {
    door: Door,
}

impl DataService {
    /// A service over `host`.
    pub fn new(host: Host) -> DataService {
        DataService {
            door: Door::new(host),
        }
    }
}

type ScanBody = Pin<Box<super::scan::ScanBody>>;

#[tonic::async_trait]
impl pb::data_server::Data for DataService {
    async fn get(&self, req: Request<pb::GetRequest>) -> Result<Response<pb::GetResponse>, Status> {
        let h = &self.door.host;
        self.door
            .unary(req, RequestOp::Get, async move |caller, r| {
                data_api::get(h, &caller, r).await
            })
            .await
    }

    async fn multi_get(
        &self,
        req: Request<pb::MultiGetRequest>,
    ) -> Result<Response<pb::MultiGetResponse>, Status> {
        let h = &self.door.host;
        self.door
            .unary(req, RequestOp::MultiGet, async move |caller, r| {
                data_api::multi_get(h, &caller, r).await
            })
            .await
    }

    async fn mutate(
        &self,
        req: Request<pb::MutateRequest>,
    ) -> Result<Response<pb::MutateResponse>, Status> {
        let h = &self.door.host;
        self.door
            .unary(req, RequestOp::Mutate, async move |caller, r| {
                data_api::mutate(h, &caller, r).await
            })
            .await
    }

    async fn multi_mutate(
        &self,
        req: Request<pb::MultiMutateRequest>,
    ) -> Result<Response<pb::MultiMutateResponse>, Status> {
        let h = &self.door.host;
        self.door
            .unary(req, RequestOp::MultiMutate, async move |caller, r| {
                data_api::multi_mutate(h, &caller, r).await
            })
            .await
    }

    async fn increment(
        &self,
        req: Request<pb::IncrementRequest>,
    ) -> Result<Response<pb::IncrementResponse>, Status> {
        let h = &self.door.host;
        self.door
            .unary(req, RequestOp::Increment, async move |caller, r| {
                data_api::increment(h, &caller, r).await
            })
            .await
    }

    async fn append(
        &self,
        req: Request<pb::AppendRequest>,
    ) -> Result<Response<pb::AppendResponse>, Status> {
        let h = &self.door.host;
        self.door
            .unary(req, RequestOp::Append, async move |caller, r| {
                data_api::append(h, &caller, r).await
            })
            .await
    }

    async fn check_and_mutate(
        &self,
        req: Request<pb::CheckAndMutateRequest>,
    ) -> Result<Response<pb::CheckAndMutateResponse>, Status> {
        let h = &self.door.host;
        self.door
            .unary(req, RequestOp::CheckAndMutate, async move |caller, r| {
                data_api::check_and_mutate(h, &caller, r).await
            })
            .await
    }

    async fn region_map(
        &self,
        req: Request<pb::RegionMapRequest>,
    ) -> Result<Response<pb::RegionMapResponse>, Status> {
        let caller = self.door.caller(&req)?;
        let r = req.into_inner();
        let regions = self
            .door
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
            answered_by: self.door.host.address().to_owned(),
        }))
    }

    async fn bulk_load(
        &self,
        req: Request<pb::BulkLoadRequest>,
    ) -> Result<Response<pb::BulkLoadResponse>, Status> {
        let h = &self.door.host;
        self.door
            .unary(req, RequestOp::Admin, async move |caller, r| {
                let table = r.table.clone();
                let done = h.access(&caller).bulk_load(&table, bulk_load(r)).await?;
                Ok(pb::BulkLoadResponse {
                    region_end: done.region_end.to_vec(),
                    already_loaded: done.report.already_loaded,
                    files: done.report.files as u64,
                    cells: done.report.cells,
                    bytes: done.report.bytes,
                    cells_read: done.cells_read,
                    tagged_cells: done.tagged_cells,
                    duplicates: done.report.duplicates,
                })
            })
            .await
    }

    type ScanStream = ScanBody;

    async fn scan(
        &self,
        req: Request<pb::ScanRequest>,
    ) -> Result<Response<Self::ScanStream>, Status> {
        let start = Instant::now();
        let caller = self.door.caller(&req)?;
        let r = req.into_inner();
        let opened = convert::scan(&r).and_then(|scan| {
            let filter = convert::filter(&r.filter)?;
            self.door
                .host
                .access(&caller)
                .scan_filtered(&r.table, scan, filter)
        });
        let stream = match opened {
            Ok(s) => s,
            Err(e) => {
                self.door
                    .host
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
            self.door.host.clone(),
            stream,
            per_message,
        ))))
    }
}

/// A bulk-load request as the host takes it.
fn bulk_load(r: pb::BulkLoadRequest) -> crate::host::BulkLoad {
    crate::host::BulkLoad {
        range: shoal_import::RowRange {
            start: r.start_row.into(),
            end: r.end_row.into(),
        },
        files: r
            .files
            .into_iter()
            .map(|f| crate::host::LoadInput {
                family: f.family.into_bytes().into(),
                location: f.location,
                path: f.path,
            })
            .collect(),
        load_key: (!r.load_key.is_empty()).then_some(r.load_key),
        whole_files: false,
    }
}
