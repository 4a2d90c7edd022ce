//! The object-store layer: every byte Shoal sends to or reads from S3, GCS, Azure Blob or
//! a local directory goes through a [`Bucket`].
//!
//! # Layering
//!
//! A request passes, from the caller down:
//!
//! ```text
//!   Bucket method      validates the key, maps it under the bucket prefix   (bucket.rs, path.rs)
//!   metrics            counts each attempt, its bytes, errors, latency      (metrics.rs)
//!   retries            classifies failures, retries transient ones with     (retry.rs)
//!                      capped exponential backoff and full jitter
//!   emulation          optional latency ± jitter and bandwidth per request  (emulate.rs)
//!   faults             optional injected failures, for tests                (faults.rs)
//!   backend            object_store client: S3 / GCS / Azure / local / mem  (backend.rs)
//! ```
//!
//! Streaming uploads of large objects go through [`Upload`] (upload.rs), which uses the
//! same attempt and retry machinery per part.
//!
//! # Invariants
//!
//! - `object_store`'s own retries are off; this layer is the only place that retries, so
//!   every attempt is visible in [`ObjectMetricsSnapshot`] and in the `warn` log.
//! - Only transient failures are retried (timeouts, connection errors, 5xx, 429, S3 503
//!   SlowDown). Not-found, already-exists, precondition, permission and configuration
//!   errors are final.
//! - Unconditional writes are only used for fresh, unique names, so retrying them is
//!   safe. A conditional create is never retried blindly: an "already exists" after an
//!   ambiguous attempt is resolved by reading the object back
//!   ([`Bucket::create_if_absent`]).
//! - Keys are validated relative paths ([`path`] rules) and round-trip exactly: what a
//!   caller writes is what `list` returns.
//! - No request can hang: remote clients have connect and request timeouts, and
//!   [`Bucket::open`]'s probe is bounded.

mod backend;
mod bucket;
mod config;
mod emulate;
mod error;
mod faults;
mod local_upload;
mod metrics;
pub mod path;
mod retry;
mod upload;

pub use bucket::{Bucket, ObjectInfo};
pub use config::{
    AzureConfig, BackendConfig, DEFAULT_PART_SIZE, Emulation, GcsConfig, LocalConfig,
    MAX_PART_SIZE, MIN_PART_SIZE, ObjectStoreConfig, RetryPolicy, S3Config, Secret,
};
pub use error::{BoxError, ObjectError};
pub use faults::{Fault, Faults, InjectedFault};
pub use metrics::{LATENCY_BUCKETS, LatencySnapshot, ObjectMetricsSnapshot, Op, OpSnapshot};
pub use upload::Upload;
