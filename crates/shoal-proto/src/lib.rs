//! Shoal's gRPC API (`proto/shoal/v1/shoal.proto`): the protobuf messages and
//! the tonic client and server stubs of the `Data` and `Admin` services,
//! shared by the server, the Rust client, the shell and the benchmark.

#![allow(missing_docs, clippy::all)]

/// Version 1 of the API.
pub mod v1 {
    tonic::include_proto!("shoal.v1");
}

pub mod frames;

/// HBase 2.x's RPC messages (package `hbase.pb`), for the native-RPC front
/// door: vendored from `hbase-protocol-shaded` 2.6.1 (`proto/hbase/`, Apache
/// License 2.0, headers kept); `ShoalMaster.proto` holds the subset of
/// `Master.proto` that Shoal serves, `ShoalAdmin.proto` that of `Admin.proto`;
/// `ClusterStatus.proto` (and its `ClusterId.proto`) whole. Its enum
/// `Option` (the parts of a cluster status a client asks for) is
/// `hbase::Option`: name it by its path, not through a glob import.
pub mod hbase {
    tonic::include_proto!("hbase.pb");
}

/// HBase's REST gateway's protobuf messages (package
/// `org.apache.hadoop.hbase.rest.protobuf.generated`): vendored from
/// hbase-rest 2.6.1 (`proto/hbase_rest/`, Apache License 2.0, headers kept),
/// the bodies of its `application/x-protobuf` representation.
pub mod hbase_rest {
    tonic::include_proto!("org.apache.hadoop.hbase.rest.protobuf.generated");
}

/// Start of the FAILED_PRECONDITION message a server answers a Get or
/// MultiGet with when the row(s) would not fit one response message. The
/// Rust client then reads the row through a scan, which streams it in
/// pieces; other clients can do the same.
pub const ROW_TOO_LARGE: &str = "row too large for one response";

/// Response metadata key on an UNAVAILABLE status meaning "the region of
/// this row is not served by this server": its value is the region id (`*`:
/// this server serves nothing right now). The client refreshes its region
/// map and sends the call to the owner.
pub const NOT_SERVING_HEADER: &str = "shoal-not-serving";

/// Response metadata key on a scan's not-serving answer: the row (hex) the
/// scan goes on from at the next region's server — forward scans start
/// there, reverse scans stop there (exclusive).
pub const SCAN_RESUME_HEADER: &str = "shoal-scan-resume";

/// Response metadata key with the owner's gRPC address, when the server
/// that is not serving a region knows who does.
pub const OWNER_HEADER: &str = "shoal-owner";

/// Response metadata key on an UNAVAILABLE status meaning "table changes go
/// to the master, and this server is not it".
pub const NOT_MASTER_HEADER: &str = "shoal-not-master";

/// Response metadata key with the master's gRPC address, when known.
pub const MASTER_HEADER: &str = "shoal-master";

/// Text in the message of a not-serving answer (per-row statuses of a
/// MultiMutate carry no metadata, so the client also recognizes the text).
pub const NOT_SERVING_TEXT: &str = "is not served here";

/// Text in the message of a server that lost its cluster lease.
pub const LEASE_LOST_TEXT: &str = "lost its cluster lease";

/// Text in the message of a server that is not the master.
pub const NOT_MASTER_TEXT: &str = "is not the cluster's master";
