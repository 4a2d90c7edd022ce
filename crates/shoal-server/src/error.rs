//! What a server call can fail with, and how each failure reads to a client
//! (a gRPC status code and a message a person can act on).

use crate::catalog::CatalogError;
use shoal_storage::region::RegionError;

/// Every failure of a data or admin call.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The table does not exist.
    #[error("table {0:?} does not exist")]
    NoSuchTable(String),
    /// The table exists already.
    #[error("table {0:?} already exists")]
    TableExists(String),
    /// The table is disabled.
    #[error("table {0:?} is disabled; enable it first")]
    TableDisabled(String),
    /// The operation needs a disabled table.
    #[error("table {0:?} is enabled; disable it first")]
    TableEnabled(String),
    /// The family does not exist.
    #[error("table {table:?} has no column family {family:?}")]
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
            ServiceError::NoSuchTable(_) | ServiceError::NoSuchFamily { .. } => Code::NotFound,
            ServiceError::TableExists(_) => Code::AlreadyExists,
            ServiceError::TableDisabled(_) | ServiceError::TableEnabled(_) => {
                Code::FailedPrecondition
            }
            ServiceError::InvalidArgument(_) => Code::InvalidArgument,
            ServiceError::Unavailable(_) => Code::Unavailable,
            ServiceError::Overloaded(_) => Code::ResourceExhausted,
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
                RegionError::Wal { .. }
                | RegionError::Manifest { .. }
                | RegionError::Sst { .. } => Code::Internal,
            },
        };
        tonic::Status::new(code, self.to_string())
    }
}

impl From<ServiceError> for tonic::Status {
    fn from(e: ServiceError) -> tonic::Status {
        e.to_status()
    }
}
