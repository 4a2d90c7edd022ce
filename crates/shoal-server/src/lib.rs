//! Shoal's server: the catalog of tables, the regions it hosts (routing,
//! splits, background work), the gRPC API and the HTTP surface (metrics and
//! status page).
//!
//! Layout: `config` (the TOML settings), `catalog` (durable table records),
//! `host` (open regions, routing, admin operations, splits), `grpc` (the
//! `Data` and `Admin` services over `host`), `metrics` + `http` + `status`
//! (what the server reports), `listen` (accept loops, connection timeouts
//! and caps), `serve` (start, listen, graceful shutdown), `thrift` (HBase's Thrift1
//! gateway over `host`, for happybase), `hbase_rpc` (HBase's native RPC over
//! `host`, for the Java client), `security` (tokens, permissions,
//! audit, TLS; checked in `host::access`).

pub mod admission;
pub mod catalog;
pub mod cluster;
pub mod config;
pub(crate) mod data_api;
pub mod error;
pub mod frames;
pub mod grpc;
pub mod hbase_rpc;
pub mod host;
pub mod http;
pub mod listen;
pub mod memory;
pub mod metrics;
pub mod process_cpu;
pub mod proto_convert;
pub mod security;
pub mod serve;
pub mod text;
pub mod thrift;

pub use config::ServerConfig;
pub use error::ServiceError;
pub use host::Host;
pub use serve::{RunningServer, start};
