//! What a server call can fail with, and how each failure reads to a client
//! (a gRPC status code and a message a person can act on).

use crate::catalog::CatalogError;
use shoal_storage::region::RegionError;

/// Every failure of a data or admin call.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The table does not exist.
    #[error("table {} does not exist", shown(.0))]
    NoSuchTable(String),
    /// The table exists already.
    #[error("table {} already exists", shown(.0))]
    TableExists(String),
    /// The table is disabled.
    #[error("table {} is disabled; enable it first", shown(.0))]
    TableDisabled(String),
    /// The operation needs a disabled table.
    #[error("table {} is enabled; disable it first", shown(.0))]
    TableEnabled(String),
    /// The namespace does not exist.
    #[error("namespace {} does not exist", shown(.0))]
    NoSuchNamespace(String),
    /// A namespace of this name exists already.
    #[error("namespace {} already exists", shown(.0))]
    NamespaceExists(String),
    /// A built-in namespace (`default`, `hbase`) cannot be removed.
    #[error("Reserved namespace {} cannot be removed.", .0)]
    ReservedNamespace(String),
    /// The namespace still holds tables (only empty ones are removed).
    #[error("namespace {} holds {tables} table(s); only an empty namespace can be removed", shown(.namespace))]
    NamespaceNotEmpty {
        /// The namespace.
        namespace: String,
        /// How many tables it holds.
        tables: usize,
    },
    /// The snapshot does not exist.
    #[error("snapshot {} does not exist", shown(.0))]
    NoSuchSnapshot(String),
    /// A snapshot of this name exists already.
    #[error("snapshot {} already exists", shown(.0))]
    SnapshotExists(String),
    /// The family does not exist.
    #[error("table {} has no column family {}", shown(.table), shown(.family))]
    NoSuchFamily {
        /// Table.
        table: String,
        /// Family asked for.
        family: String,
    },
    /// A malformed request.
    #[error("{0}")]
    InvalidArgument(String),
    /// The region is moving (split, close); retry shortly.
    #[error("{0}; retry shortly")]
    Unavailable(String),
    /// The server is shutting down or over its limits.
    #[error("{0}")]
    Overloaded(String),
    /// The call cannot be answered this way (e.g. a row too large for one
    /// response); the message says what to do instead.
    #[error("{0}")]
    FailedPrecondition(String),
    /// Cluster mode: the region holding the row is served by another
    /// server (or by none right now); the client asks the owner instead.
    #[error("region {region} of table {} is not served here{}", shown(.table), .owner.as_ref().map(|o| format!("; its owner is {o}")).unwrap_or_default())]
    NotServing {
        /// Table.
        table: String,
        /// Region id.
        region: String,
        /// The owner's gRPC address, if known.
        owner: Option<String>,
        /// For a scan: the row it goes on from (every row before it, or
        /// after it for a reverse scan, was sent).
        resume_at: Option<bytes::Bytes>,
    },
    /// Cluster mode: table changes are made by the master.
    #[error("this server is not the cluster's master{}; table changes go to the master", .0.as_ref().map(|m| format!(" (the master is {m})")).unwrap_or_default())]
    NotMaster(Option<String>),
    /// Cluster mode: this server does not hold its lease now, so it cannot
    /// know whether its regions moved; it answers nothing until it rejoins.
    #[error("this server lost its cluster lease and is rejoining; {0}")]
    LeaseLost(&'static str),
    /// No valid token came with the call (auth is on).
    #[error("{0}")]
    Unauthenticated(String),
    /// The caller lacks a permission (HBase's AccessDeniedException).
    #[error("permission denied: user {} lacks {action} on {object}", shown(.user))]
    PermissionDenied {
        /// The user.
        user: String,
        /// The missing permission: READ, WRITE, CREATE or ADMIN.
        action: &'static str,
        /// What it was needed on, e.g. `table "t"`, `global`.
        object: String,
    },
    /// The catalog could not be read or written.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A region failed.
    #[error(transparent)]
    Region(#[from] RegionError),
}

impl ServiceError {
    /// True if retrying the call after a moment may succeed (the region was
    /// moving).
    pub fn is_retryable(&self) -> bool {
        match self {
            ServiceError::Unavailable(_) => true,
            ServiceError::Region(e) => matches!(
                e,
                RegionError::Closed { .. }
                    | RegionError::Fenced { .. }
                    | RegionError::RowOutOfRange { .. }
            ),
            _ => false,
        }
    }

    /// The gRPC status for this error.
    pub fn to_status(&self) -> tonic::Status {
        use tonic::Code;
        let code = match self {
            ServiceError::NoSuchTable(_)
            | ServiceError::NoSuchFamily { .. }
            | ServiceError::NoSuchSnapshot(_)
            | ServiceError::NoSuchNamespace(_) => Code::NotFound,
            ServiceError::TableExists(_)
            | ServiceError::SnapshotExists(_)
            | ServiceError::NamespaceExists(_) => Code::AlreadyExists,
            ServiceError::NamespaceNotEmpty { .. } | ServiceError::ReservedNamespace(_) => {
                Code::FailedPrecondition
            }
            ServiceError::TableDisabled(_) | ServiceError::TableEnabled(_) => {
                Code::FailedPrecondition
            }
            ServiceError::InvalidArgument(_) => Code::InvalidArgument,
            ServiceError::Unavailable(_) => Code::Unavailable,
            ServiceError::NotServing { .. } | ServiceError::NotMaster(_) => Code::Unavailable,
            // May have been applied: only calls safe to repeat are retried.
            ServiceError::LeaseLost(_) => Code::Aborted,
            ServiceError::Overloaded(_) => Code::ResourceExhausted,
            ServiceError::FailedPrecondition(_) => Code::FailedPrecondition,
            ServiceError::Unauthenticated(_) => Code::Unauthenticated,
            ServiceError::PermissionDenied { .. } => Code::PermissionDenied,
            ServiceError::Catalog(_) => Code::Internal,
            ServiceError::Region(e) => match e {
                RegionError::NoSuchFamily { .. } => Code::NotFound,
                RegionError::InvalidArgument { .. } | RegionError::Cell { .. } => {
                    Code::InvalidArgument
                }
                RegionError::RowOutOfRange { .. }
                | RegionError::Closed { .. }
                | RegionError::Fenced { .. } => Code::Unavailable,
                RegionError::Busy { .. } => Code::ResourceExhausted,
                RegionError::CompareNoOp { .. } | RegionError::IngestSource { .. } => {
                    Code::InvalidArgument
                }
                RegionError::Wal { .. }
                | RegionError::Manifest { .. }
                | RegionError::Sst { .. } => Code::Internal,
            },
        };
        let mut status = tonic::Status::new(code, bounded(self.to_string()));
        let hint = |status: &mut tonic::Status, key: &'static str, value: &str| {
            if let Ok(v) = value.parse() {
                status.metadata_mut().insert(key, v);
            }
        };
        match self {
            ServiceError::NotServing {
                region,
                owner,
                resume_at,
                ..
            } => {
                hint(&mut status, shoal_proto::NOT_SERVING_HEADER, region);
                if let Some(o) = owner {
                    hint(&mut status, shoal_proto::OWNER_HEADER, o);
                }
                if let Some(row) = resume_at {
                    let hex: String = row.iter().map(|b| format!("{b:02x}")).collect();
                    hint(&mut status, shoal_proto::SCAN_RESUME_HEADER, &hex);
                }
            }
            ServiceError::NotMaster(master) => {
                hint(&mut status, shoal_proto::NOT_MASTER_HEADER, "1");
                if let Some(m) = master {
                    hint(&mut status, shoal_proto::MASTER_HEADER, m);
                }
            }
            ServiceError::LeaseLost(_) => {
                hint(&mut status, shoal_proto::NOT_SERVING_HEADER, "*");
            }
            _ => {}
        }
        status
    }
}

/// Longest error message sent to a client, in bytes: messages travel in a
/// response header, and clients limit header sizes (8 KiB and less).
const MAX_MESSAGE_BYTES: usize = 1024;

pub use crate::text::shown;

/// `message` cut to [`MAX_MESSAGE_BYTES`] at a character boundary.
fn bounded(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_BYTES {
        let mut end = MAX_MESSAGE_BYTES - 3;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

impl From<ServiceError> for tonic::Status {
    fn from(e: ServiceError) -> tonic::Status {
        e.to_status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_and_messages_are_cut() {
        let long = "t".repeat(10_000);
        let e = ServiceError::NoSuchTable(long.clone());
        let msg = e.to_status().message().to_string();
        assert!(msg.len() < 200, "{} bytes: {msg}", msg.len());
        assert!(msg.contains("10000 bytes"), "{msg}");
        assert_eq!(shown("users"), "\"users\"");
        let e = ServiceError::InvalidArgument(format!("bad: {}", "é".repeat(5_000)));
        let msg = e.to_status().message().to_string();
        assert!(msg.len() <= MAX_MESSAGE_BYTES, "{}", msg.len());
        assert!(msg.ends_with('…'));
    }
}
