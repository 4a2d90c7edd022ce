//! Shoal's gRPC API (`proto/shoal/v1/shoal.proto`): the protobuf messages and
//! the tonic client and server stubs of the `Data` and `Admin` services,
//! shared by the server, the Rust client, the shell and the benchmark.

#![allow(missing_docs, clippy::all)]

/// Version 1 of the API.
pub mod v1 {
    tonic::include_proto!("shoal.v1");
}
