//! Failures as HBase's Java client reads them: each answer names an HBase
//! exception class, which decides whether the client retries, looks the
//! region up again (`NotServingRegionException`), or gives up
//! (`DoNotRetryIOException` and its subclasses).

use super::wire;
use crate::error::ServiceError;
use shoal_proto::hbase::ExceptionResponse;
use shoal_storage::region::RegionError;

/// A failed call: the Java class, the message, and whether to retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    /// HBase's exception class name.
    pub class: &'static str,
    /// What went wrong.
    pub message: String,
    /// The client must not retry.
    pub do_not_retry: bool,
}

/// `org.apache.hadoop.hbase.DoNotRetryIOException`.
pub const DO_NOT_RETRY: &str = "org.apache.hadoop.hbase.DoNotRetryIOException";
/// `org.apache.hadoop.hbase.NotServingRegionException`.
pub const NOT_SERVING: &str = "org.apache.hadoop.hbase.NotServingRegionException";
/// `org.apache.hadoop.hbase.UnknownScannerException`.
pub const UNKNOWN_SCANNER: &str = "org.apache.hadoop.hbase.UnknownScannerException";
/// `org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException`.
pub const OUT_OF_ORDER: &str = "org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException";
/// `org.apache.hadoop.hbase.exceptions.UnknownProtocolException`.
pub const UNKNOWN_PROTOCOL: &str = "org.apache.hadoop.hbase.exceptions.UnknownProtocolException";
/// `org.apache.hadoop.hbase.ipc.FatalConnectionException`.
pub const FATAL_CONNECTION: &str = "org.apache.hadoop.hbase.ipc.FatalConnectionException";
/// `org.apache.hadoop.hbase.exceptions.RequestTooBigException`.
pub const REQUEST_TOO_BIG: &str = "org.apache.hadoop.hbase.exceptions.RequestTooBigException";
/// `org.apache.hadoop.hbase.NamespaceNotFoundException`.
pub const NO_NAMESPACE: &str = "org.apache.hadoop.hbase.NamespaceNotFoundException";
/// `org.apache.hadoop.hbase.TableNotFoundException`.
pub const TABLE_NOT_FOUND: &str = "org.apache.hadoop.hbase.TableNotFoundException";

/// Decodes a call's request message; a malformed one is bad input.
pub fn request<M: prost::Message + Default>(
    method: &str,
    param: bytes::Bytes,
) -> Result<M, RpcError> {
    M::decode(param).map_err(|e| RpcError::invalid(format!("{method}: malformed request: {e}")))
}

impl RpcError {
    /// A permanent failure of this class.
    pub fn fatal(class: &'static str, message: impl Into<String>) -> RpcError {
        RpcError {
            class,
            message: message.into(),
            do_not_retry: true,
        }
    }

    /// A `DoNotRetryIOException`: bad input, an unsupported feature.
    pub fn invalid(message: impl Into<String>) -> RpcError {
        RpcError::fatal(DO_NOT_RETRY, message)
    }

    /// The region named is not here (split, moved, dropped): the client
    /// looks it up in `hbase:meta` again.
    pub fn not_serving(message: impl Into<String>) -> RpcError {
        RpcError {
            class: NOT_SERVING,
            message: message.into(),
            do_not_retry: false,
        }
    }

    /// The wire form.
    pub fn to_exception(&self) -> ExceptionResponse {
        wire::exception(self.class, &self.message, self.do_not_retry)
    }
}

impl From<ServiceError> for RpcError {
    fn from(e: ServiceError) -> RpcError {
        let message = e.to_string();
        let (class, do_not_retry) = match &e {
            ServiceError::NoSuchTable(_) => (TABLE_NOT_FOUND, true),
            ServiceError::TableExists(_) => ("org.apache.hadoop.hbase.TableExistsException", true),
            ServiceError::TableDisabled(_) => {
                ("org.apache.hadoop.hbase.TableNotEnabledException", true)
            }
            ServiceError::TableEnabled(_) => {
                ("org.apache.hadoop.hbase.TableNotDisabledException", true)
            }
            ServiceError::NoSuchFamily { .. } => (
                "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException",
                true,
            ),
            ServiceError::InvalidArgument(_) | ServiceError::FailedPrecondition(_) => {
                (DO_NOT_RETRY, true)
            }
            ServiceError::PermissionDenied { .. } | ServiceError::Unauthenticated(_) => (
                "org.apache.hadoop.hbase.security.AccessDeniedException",
                true,
            ),
            // The region moved or is moving: look it up again.
            ServiceError::NotServing { .. } | ServiceError::Unavailable(_) => (NOT_SERVING, false),
            ServiceError::LeaseLost(_) => ("org.apache.hadoop.hbase.RegionTooBusyException", false),
            ServiceError::NotMaster(_) => (
                "org.apache.hadoop.hbase.ipc.ServerNotRunningYetException",
                false,
            ),
            ServiceError::Overloaded(_) => {
                ("org.apache.hadoop.hbase.CallQueueTooBigException", false)
            }
            ServiceError::Catalog(_) => ("java.io.IOException", false),
            ServiceError::Region(r) => match r {
                RegionError::NoSuchFamily { .. } => (
                    "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException",
                    true,
                ),
                RegionError::InvalidArgument { .. } | RegionError::Cell { .. } => {
                    (DO_NOT_RETRY, true)
                }
                RegionError::RowOutOfRange { .. }
                | RegionError::Closed { .. }
                | RegionError::Fenced { .. } => (NOT_SERVING, false),
                RegionError::Busy { .. } => {
                    ("org.apache.hadoop.hbase.RegionTooBusyException", false)
                }
                RegionError::Wal { .. }
                | RegionError::Manifest { .. }
                | RegionError::Sst { .. } => ("java.io.IOException", false),
            },
        };
        RpcError {
            class,
            message,
            do_not_retry,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_decide_retries() {
        let e = RpcError::from(ServiceError::NoSuchTable("t".into()));
        assert_eq!((e.class, e.do_not_retry), (TABLE_NOT_FOUND, true));
        let e = RpcError::from(ServiceError::Unavailable("moving".into()));
        assert_eq!((e.class, e.do_not_retry), (NOT_SERVING, false));
        let x = RpcError::invalid("bad").to_exception();
        assert_eq!(x.exception_class_name.as_deref(), Some(DO_NOT_RETRY));
        assert_eq!(x.do_not_retry, Some(true));
    }
}
