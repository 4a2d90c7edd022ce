//! HBase's Thrift1 gateway, served by `shoal serve` itself (`[thrift]`):
//! what happybase and HBase's other Thrift1 clients speak. It calls the same
//! host code as the gRPC services — never gRPC over loopback.
//!
//! - `wire`: the Thrift protocols (binary, compact) and transports
//!   (buffered, framed), decoded into a value tree.
//! - `handler`: the gateway over [`crate::Host`]: each call routed to its
//!   group and counted.
//! - `calls`: the `Hbase` service's methods, a file per group of calls.
//! - `fault`: HBase's exceptions, and how a call's fault goes back.
//! - `convert`: Thrift structs to and from Shoal's types.
//! - `scanners`: server-side scanners with leases.
//! - `listener`: the port, its connections and their timeouts.
//!
//! `docs/thrift.md` says what is supported and how it differs from HBase.

mod calls;
mod convert;
mod fault;
mod handler;
mod listener;
mod scanners;
pub mod wire;

pub use fault::{Fault, FaultKind};
pub use handler::Gateway;
pub use listener::serve_thrift;
pub use scanners::Scanners;
