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
    /// HBase fails the whole call, not one action of a batch (an internal
    /// RuntimeException escapes its per-action handling: NO_OP compared).
    pub whole_call: bool,
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
/// `org.apache.hadoop.hbase.NamespaceExistException`.
pub const NAMESPACE_EXISTS: &str = "org.apache.hadoop.hbase.NamespaceExistException";
/// `org.apache.hadoop.hbase.constraint.ConstraintException`: e.g. dropping
/// a namespace that holds tables.
pub const CONSTRAINT: &str = "org.apache.hadoop.hbase.constraint.ConstraintException";
/// `org.apache.hadoop.hbase.TableNotFoundException`.
pub const TABLE_NOT_FOUND: &str = "org.apache.hadoop.hbase.TableNotFoundException";
/// `org.apache.hadoop.hbase.snapshot.SnapshotDoesNotExistException`.
pub const NO_SNAPSHOT: &str = "org.apache.hadoop.hbase.snapshot.SnapshotDoesNotExistException";
/// `org.apache.hadoop.hbase.snapshot.SnapshotExistsException`.
pub const SNAPSHOT_EXISTS: &str = "org.apache.hadoop.hbase.snapshot.SnapshotExistsException";
/// `org.apache.hadoop.hbase.snapshot.SnapshotCreationException`: a
/// snapshot of a table that does not exist.
pub const SNAPSHOT_CREATION: &str = "org.apache.hadoop.hbase.snapshot.SnapshotCreationException";
/// `org.apache.hadoop.hbase.snapshot.UnknownSnapshotException`: what
/// `IsSnapshotDone` answers for a snapshot neither running nor taken.
pub const UNKNOWN_SNAPSHOT: &str = "org.apache.hadoop.hbase.snapshot.UnknownSnapshotException";
/// `org.apache.hadoop.hbase.ipc.ServerNotRunningYetException`: what a
/// backup master answers; the client asks the registry for the master
/// again and retries there.
pub const NOT_MASTER: &str = "org.apache.hadoop.hbase.ipc.ServerNotRunningYetException";

/// The exception classes Shoal answers with (a call relayed to the master
/// answers with one of these).
const CLASSES: &[&str] = &[
    DO_NOT_RETRY,
    NOT_SERVING,
    UNKNOWN_SCANNER,
    OUT_OF_ORDER,
    UNKNOWN_PROTOCOL,
    FATAL_CONNECTION,
    REQUEST_TOO_BIG,
    NO_NAMESPACE,
    NAMESPACE_EXISTS,
    CONSTRAINT,
    TABLE_NOT_FOUND,
    NOT_MASTER,
    NO_SNAPSHOT,
    SNAPSHOT_EXISTS,
    SNAPSHOT_CREATION,
    UNKNOWN_SNAPSHOT,
    "org.apache.hadoop.hbase.TableExistsException",
    "org.apache.hadoop.hbase.TableNotEnabledException",
    "org.apache.hadoop.hbase.TableNotDisabledException",
    "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException",
    "org.apache.hadoop.hbase.security.AccessDeniedException",
    "org.apache.hadoop.hbase.RegionTooBusyException",
    "org.apache.hadoop.hbase.CallQueueTooBigException",
    "org.apache.hadoop.hbase.InvalidFamilyOperationException",
    "java.io.IOException",
];

/// A failure as another server answered it (a relayed call).
pub fn from_exception(e: &ExceptionResponse) -> RpcError {
    let named = e.exception_class_name.as_deref().unwrap_or_default();
    let do_not_retry = e.do_not_retry.unwrap_or(false);
    let class = CLASSES
        .iter()
        .copied()
        .find(|c| *c == named)
        .unwrap_or(if do_not_retry {
            DO_NOT_RETRY
        } else {
            "java.io.IOException"
        });
    RpcError {
        class,
        message: e.stack_trace.clone().unwrap_or_default(),
        do_not_retry,
        whole_call: false,
    }
}

/// Names other servers by their native-RPC addresses.
pub type ServerNames = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

tokio::task_local! {
    /// The names of the server a native call runs on (cluster mode): the
    /// texts of its errors name servers as HBase's client reaches them,
    /// never by their gRPC addresses.
    static SERVER_NAMES: ServerNames;
}

/// Runs `call` with `names` naming the servers its errors mention.
pub async fn naming_servers<F: std::future::Future>(
    names: Option<ServerNames>,
    call: F,
) -> F::Output {
    match names {
        Some(n) => SERVER_NAMES.scope(n, call).await,
        None => call.await,
    }
}

/// The native-RPC address of the server at gRPC address `grpc`, if the
/// call runs where it is known.
fn native_name(grpc: &str) -> Option<String> {
    SERVER_NAMES.try_with(|n| n(grpc)).ok().flatten()
}

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
            whole_call: false,
        }
    }

    /// HBase's `NamespaceNotFoundException` for `ns`. Its text reads as
    /// HBase's stack trace does (`...NamespaceNotFoundException: <ns>` on
    /// the first line), which `hbase shell` parses the namespace out of.
    pub fn no_namespace(ns: &str) -> RpcError {
        RpcError::fatal(NO_NAMESPACE, format!("{NO_NAMESPACE}: {ns}"))
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
            whole_call: false,
        }
    }

    /// This server is not the master: the client asks the registry for
    /// the master and retries there.
    pub fn not_master(message: impl Into<String>) -> RpcError {
        RpcError {
            class: NOT_MASTER,
            message: message.into(),
            do_not_retry: false,
            whole_call: false,
        }
    }

    /// The wire form.
    pub fn to_exception(&self) -> ExceptionResponse {
        wire::exception(self.class, &self.message, self.do_not_retry)
    }
}

impl From<ServiceError> for RpcError {
    fn from(e: ServiceError) -> RpcError {
        // A server is named by its native-RPC address (the one HBase's
        // client can use), or not at all.
        let message = match &e {
            ServiceError::NotServing {
                table,
                region,
                owner,
                ..
            } => format!(
                "region {region} of table {} is not served here{}",
                crate::error::shown(table),
                owner
                    .as_deref()
                    .and_then(native_name)
                    .map(|o| format!("; its owner is {o}"))
                    .unwrap_or_default()
            ),
            ServiceError::NotMaster(master) => format!(
                "this server is not the cluster's master{}; table changes go to the master",
                master
                    .as_deref()
                    .and_then(native_name)
                    .map(|m| format!(" (the master is {m})"))
                    .unwrap_or_default()
            ),
            // HBase's messages, which `hbase shell` reads the name out of.
            ServiceError::NoSuchNamespace(ns) => return RpcError::no_namespace(ns),
            ServiceError::NamespaceExists(ns) => {
                return RpcError::fatal(
                    NAMESPACE_EXISTS,
                    format!("{NAMESPACE_EXISTS}: Namespace {ns} already exists"),
                );
            }
            ServiceError::ReservedNamespace(_) => {
                return RpcError::fatal(CONSTRAINT, format!("{CONSTRAINT}: {e}"));
            }
            ServiceError::NamespaceNotEmpty { namespace, tables } => {
                return RpcError::fatal(
                    CONSTRAINT,
                    format!(
                        "{CONSTRAINT}: Only empty namespaces can be removed. Namespace {namespace} has {tables} tables"
                    ),
                );
            }
            other => other.to_string(),
        };
        let (class, do_not_retry) = match &e {
            ServiceError::NoSuchTable(_) => (TABLE_NOT_FOUND, true),
            ServiceError::TableExists(_) => ("org.apache.hadoop.hbase.TableExistsException", true),
            ServiceError::NoSuchSnapshot(_) => (NO_SNAPSHOT, true),
            ServiceError::NoSuchNamespace(_) => (NO_NAMESPACE, true),
            ServiceError::NamespaceExists(_) => (NAMESPACE_EXISTS, true),
            ServiceError::NamespaceNotEmpty { .. } | ServiceError::ReservedNamespace(_) => {
                (CONSTRAINT, true)
            }
            ServiceError::SnapshotExists(_) => (SNAPSHOT_EXISTS, true),
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
            ServiceError::NotMaster(_) => (NOT_MASTER, false),
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
                // HBase's RuntimeException, as its client sees it.
                RegionError::CompareNoOp { .. } => ("java.io.IOException", true),
                // A bad input file: retrying reads the same bytes.
                RegionError::IngestSource { .. } => ("java.io.IOException", true),
                RegionError::Busy { .. } => {
                    ("org.apache.hadoop.hbase.RegionTooBusyException", false)
                }
                RegionError::Wal { .. }
                | RegionError::Manifest { .. }
                | RegionError::Sst { .. } => ("java.io.IOException", false),
            },
        };
        let whole_call = matches!(e, ServiceError::Region(RegionError::CompareNoOp { .. }));
        RpcError {
            class,
            message,
            do_not_retry,
            whole_call,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hbase shell` finds the namespace with
    /// `/.*NamespaceNotFoundException: (?<namespace>[^\n]+).*/` in the
    /// message; HBase's first stack-trace line reads so.
    #[test]
    fn a_missing_namespace_reads_as_hbase_says_it() {
        let e = RpcError::no_namespace("ns1");
        assert_eq!((e.class, e.do_not_retry), (NO_NAMESPACE, true));
        let first = e.message.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            "org.apache.hadoop.hbase.NamespaceNotFoundException: ns1"
        );
    }

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

    #[tokio::test]
    async fn servers_are_named_by_their_native_addresses_or_not_at_all() {
        let not_serving = || ServiceError::NotServing {
            table: "t".into(),
            region: "r1".into(),
            owner: Some("127.0.0.1:7070".into()),
            resume_at: None,
        };
        let names: ServerNames = std::sync::Arc::new(|grpc: &str| {
            (grpc == "127.0.0.1:7070").then(|| "127.0.0.1:16020".to_string())
        });
        let e = naming_servers(Some(names.clone()), async { RpcError::from(not_serving()) }).await;
        assert_eq!(e.class, NOT_SERVING);
        assert!(
            e.message.contains("its owner is 127.0.0.1:16020"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("7070"), "{}", e.message);
        let e = naming_servers(Some(names), async {
            RpcError::from(ServiceError::NotMaster(Some("127.0.0.1:7070".into())))
        })
        .await;
        assert_eq!((e.class, e.do_not_retry), (NOT_MASTER, false));
        assert!(
            e.message.contains("the master is 127.0.0.1:16020"),
            "{}",
            e.message
        );
        // Where no native address is known, no address is named.
        let e = RpcError::from(not_serving());
        assert!(!e.message.contains("127.0.0.1"), "{}", e.message);
        // An exception relayed from the master keeps its class.
        let relayed = from_exception(&wire::exception(
            "org.apache.hadoop.hbase.TableExistsException",
            "table \"t\" already exists",
            true,
        ));
        assert_eq!(
            (relayed.class, relayed.do_not_retry),
            ("org.apache.hadoop.hbase.TableExistsException", true)
        );
        let odd = from_exception(&wire::exception("x.Y", "?", false));
        assert_eq!(
            (odd.class, odd.do_not_retry),
            ("java.io.IOException", false)
        );
    }
}
