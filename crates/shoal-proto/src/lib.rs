//! Shoal's gRPC API (`proto/shoal/v1/shoal.proto`): the protobuf messages and
//! the tonic client and server stubs of the `Data` and `Admin` services,
//! shared by the server, the Rust client, the shell and the benchmark.

#![allow(missing_docs, clippy::all)]

/// Version 1 of the API.
pub mod v1 {
    tonic::include_proto!("shoal.v1");
}

/// Start of the FAILED_PRECONDITION message a server answers a Get or
/// MultiGet with when the row(s) would not fit one response message. The
/// Rust client then reads the row through a scan, which streams it in
/// pieces; other clients can do the same.
pub const ROW_TOO_LARGE: &str = "row too large for one response";
