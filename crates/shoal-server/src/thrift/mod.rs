//! HBase's Thrift1 gateway, served by `shoal serve` itself (`[thrift]`):
//! what happybase and HBase's other Thrift1 clients speak. It calls the same
//! host code as the gRPC services — never gRPC over loopback.
//!
//! - `wire`: the Thrift protocols (binary, compact) and transports
//!   (buffered, framed), decoded into a value tree.
//! - `handler`: the `Hbase` service's methods over [`crate::Host`], and
//!   HBase's exceptions.
//! - `convert`: Thrift structs to and from Shoal's types.
//! - `scanners`: server-side scanners with leases.
//! - `listener`: the port, its connections and their timeouts.
//!
//! `docs/thrift.md` says what is supported and how it differs from HBase.

mod convert;
mod handler;
mod listener;
mod scanners;
pub mod wire;

pub use handler::{Fault, FaultKind, Gateway};
pub use listener::serve_thrift;
pub use scanners::Scanners;
