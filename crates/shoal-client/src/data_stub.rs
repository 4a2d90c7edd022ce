//! One server's Data calls, over the transport the client was set to use:
//! gets and mutations go over the framed transport when it is on
//! ([`crate::DataTransport::Framed`]); everything else (and everything with
//! it off) over the gRPC channel. The methods mirror tonic's generated
//! client, so callers read the same either way.

use crate::Transport;
use crate::frames::FramedConn;
use shoal_proto::frames::Method;
use shoal_proto::v1 as pb;
use shoal_proto::v1::data_client::DataClient;
use tonic::{Response, Status, Streaming};

/// A server's Data stub. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct DataStub {
    grpc: DataClient<Transport>,
    framed: Option<FramedConn>,
}

impl DataStub {
    /// Calls over `grpc`, and over `framed` for what it carries.
    pub(crate) fn new(grpc: DataClient<Transport>, framed: Option<FramedConn>) -> DataStub {
        DataStub { grpc, framed }
    }

    pub(crate) async fn get(
        &mut self,
        r: pb::GetRequest,
    ) -> Result<Response<pb::GetResponse>, Status> {
        match &self.framed {
            Some(f) => f.call(Method::Get, &r).await.map(Response::new),
            None => self.grpc.get(r).await,
        }
    }

    pub(crate) async fn multi_get(
        &mut self,
        r: pb::MultiGetRequest,
    ) -> Result<Response<pb::MultiGetResponse>, Status> {
        match &self.framed {
            Some(f) => f.call(Method::MultiGet, &r).await.map(Response::new),
            None => self.grpc.multi_get(r).await,
        }
    }

    pub(crate) async fn mutate(
        &mut self,
        r: pb::MutateRequest,
    ) -> Result<Response<pb::MutateResponse>, Status> {
        match &self.framed {
            Some(f) => f.call(Method::Mutate, &r).await.map(Response::new),
            None => self.grpc.mutate(r).await,
        }
    }

    pub(crate) async fn multi_mutate(
        &mut self,
        r: pb::MultiMutateRequest,
    ) -> Result<Response<pb::MultiMutateResponse>, Status> {
        match &self.framed {
            Some(f) => f.call(Method::MultiMutate, &r).await.map(Response::new),
            None => self.grpc.multi_mutate(r).await,
        }
    }

    pub(crate) async fn increment(
        &mut self,
        r: pb::IncrementRequest,
    ) -> Result<Response<pb::IncrementResponse>, Status> {
        self.grpc.increment(r).await
    }

    pub(crate) async fn bulk_load(
        &mut self,
        r: pb::BulkLoadRequest,
    ) -> Result<Response<pb::BulkLoadResponse>, Status> {
        self.grpc.bulk_load(r).await
    }

    pub(crate) async fn append(
        &mut self,
        r: pb::AppendRequest,
    ) -> Result<Response<pb::AppendResponse>, Status> {
        self.grpc.append(r).await
    }

    pub(crate) async fn check_and_mutate(
        &mut self,
        r: pb::CheckAndMutateRequest,
    ) -> Result<Response<pb::CheckAndMutateResponse>, Status> {
        self.grpc.check_and_mutate(r).await
    }

    pub(crate) async fn region_map(
        &mut self,
        r: pb::RegionMapRequest,
    ) -> Result<Response<pb::RegionMapResponse>, Status> {
        self.grpc.region_map(r).await
    }

    pub(crate) async fn scan(
        &mut self,
        r: pb::ScanRequest,
    ) -> Result<Response<Streaming<pb::ScanResponse>>, Status> {
        self.grpc.scan(r).await
    }
}
