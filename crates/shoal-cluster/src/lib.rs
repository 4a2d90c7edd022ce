//! Shoal's cluster coordination over etcd.
//!
//! Layout: `proto` (the subset of etcd's v3 API Shoal uses, compiled with
//! protox: no `protoc`), `etcd` (a client with a deadline on every call and
//! clear errors), `lease` (a lease kept alive, with the server's own,
//! conservative view of whether it still holds it), `membership` (servers
//! as lease-bound keys, and the master taken by a create-if-absent
//! transaction), `assignment` (one record per region, changed by
//! compare-and-swap, and the master's pure placement plan), `rounds` (the
//! master's round and each server's round that move regions through the
//! assignment states, behind a `RegionHost` trait the host implements),
//! `cache_facts` (what each server's cache holds per region, published by
//! every server and read by the master to place regions by it). See
//! `docs/cluster.md`.
//!
//! Why our own etcd client: the well-kept `etcd-client` crate compiles etcd's
//! protos with `protoc` at build time (its build script fails without it),
//! and Shoal builds without `protoc`; the handful of calls Shoal needs are a
//! small, stable part of etcd's API.

pub mod assignment;
pub mod cache_facts;
pub mod etcd;
pub mod lease;
pub mod membership;
pub mod rounds;

/// etcd's v3 API messages and client stubs (the subset in `proto/etcd/rpc.proto`).
#[allow(missing_docs, clippy::all)]
pub mod proto {
    tonic::include_proto!("etcdserverpb");
}

pub use etcd::{Etcd, EtcdError};
pub use lease::{KeptLease, LeaseState};
pub use membership::{JoinError, MemberInfo, Membership};
