//! Shoal's server: the catalog of tables, the regions it hosts (routing,
//! splits, background work), the gRPC API and the HTTP surface (metrics and
//! status page).
//!
//! Layout, from the top floor down (every module imports only modules
//! below it; `docs/server.md`, "How the crate is laid out"): `serve`
//! (start, listen, graceful shutdown); the front doors `hbase_rpc`
//! (HBase's native RPC, for the Java client), `thrift` (HBase's Thrift1
//! gateway, for happybase), `rest` (HBase's REST gateway), `grpc` (the `Data` and `Admin` services) and
//! `frames` (the framed transport), each calling the host through
//! `host::access`; `listen` (sockets, accept loops, caps, and the one
//! pipelined call loop the framed transport and the native RPC share);
//! `cluster` (cluster mode: the node's loop, opening and closing assigned
//! regions, the lease behind the host's seams); `admission` (the request
//! budget); `host` (routing, tables, the storage environment, and the
//! seams cluster mode plugs into); `security`, `metrics` (with the status
//! view) and `http` (what the server checks, counts and shows); and at the
//! ground `catalog` (durable table records), `config` (the TOML settings),
//! `error` and `text`.

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
pub mod rest;
pub mod security;
pub mod serve;
pub mod snapshots;
pub mod text;
pub mod thrift;
pub mod zk_registry;

pub use config::ServerConfig;
pub use error::ServiceError;
pub use host::Host;
pub use serve::{RunningServer, start};
