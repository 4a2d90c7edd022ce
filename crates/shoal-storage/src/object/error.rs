//! [`ObjectError`]: the one error type of the object-store layer.
//!
//! Every variant that concerns a request names the operation ([`Op`]) and the object
//! (its key relative to the bucket prefix), and the message says what to do where there
//! is something to do. Errors from `object_store` are kept as the `source`, so the full
//! provider message stays reachable through [`std::error::Error::source`].

use super::metrics::Op;

/// A boxed, thread-safe error used as the `source` of [`ObjectError`] variants.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Errors of the object-store layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ObjectError {
    /// The object does not exist.
    #[error("{op} {path:?}: object not found")]
    NotFound { op: Op, path: String },

    /// A create-if-absent lost: another writer created the object first.
    #[error(
        "conditional_put {path:?}: object already exists (another writer created it first; \
         re-read the current state and retry under a new name or sequence number)"
    )]
    AlreadyExists { path: String },

    /// The object key is not acceptable.
    #[error("invalid object path {path:?}: {reason}")]
    InvalidPath { path: String, reason: String },

    /// A configuration value is wrong; `key` is its dotted name in the config.
    #[error("invalid object store config `{key}`: {message}")]
    InvalidConfig { key: String, message: String },

    /// A transient failure (timeout, connection error, 5xx, throttling) outlasted the
    /// retry policy. For a create-if-absent this means the outcome is unknown: the object
    /// may or may not have been written; re-read before deciding.
    #[error(
        "{op} {path:?}: transient failure persisted after {attempts} attempt(s); the object \
         store is unreachable, overloaded or throttling — retry later, or raise \
         `retry.max_attempts` / `retry.deadline`: {source}"
    )]
    Transient {
        op: Op,
        path: String,
        attempts: u32,
        #[source]
        source: BoxError,
    },

    /// The credentials are missing, invalid, or lack permission for the request.
    #[error(
        "{op} {path:?}: permission denied or invalid credentials; check the access key / \
         role and the bucket policy: {source}"
    )]
    Permission {
        op: Op,
        path: String,
        #[source]
        source: BoxError,
    },

    /// A ranged read reached past the end of the object: the file is shorter than its
    /// reader believes (truncated or wrongly indexed). `size` is the object's size when
    /// the store reported it.
    #[error(
        "{op} {path:?}: requested bytes {requested:?} reach past the end of the object \
         (size {}); the file is truncated or the offsets are wrong",
        size.map_or_else(|| "unknown".to_owned(), |s| s.to_string())
    )]
    RangeOutOfBounds {
        op: Op,
        path: String,
        requested: std::ops::Range<u64>,
        size: Option<u64>,
    },

    /// The configured bucket (or container) does not exist.
    #[error("bucket {bucket:?} does not exist; create it or fix the `bucket` setting")]
    BucketNotFound { bucket: String },

    /// The object store endpoint could not be reached at all.
    #[error(
        "object store endpoint {endpoint} is unreachable; check `endpoint`, the network, \
         and that the service is running: {source}"
    )]
    Unreachable {
        endpoint: String,
        #[source]
        source: BoxError,
    },

    /// Anything else: an unexpected response, a local I/O error, an unsupported request.
    #[error("{op} {path:?} failed: {source}")]
    Other {
        op: Op,
        path: String,
        #[source]
        source: BoxError,
    },
}

impl ObjectError {
    /// True for [`ObjectError::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, ObjectError::NotFound { .. })
    }

    /// True for [`ObjectError::AlreadyExists`].
    pub fn is_already_exists(&self) -> bool {
        matches!(self, ObjectError::AlreadyExists { .. })
    }

    pub(crate) fn invalid_config(key: impl Into<String>, message: impl Into<String>) -> Self {
        ObjectError::InvalidConfig {
            key: key.into(),
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_operation_and_object() {
        let e = ObjectError::Transient {
            op: Op::RangedGet,
            path: "data/ab/t/r/cf/x.sst".into(),
            attempts: 6,
            source: "connection reset".into(),
        };
        let msg = e.to_string();
        assert!(msg.contains("ranged_get"), "{msg}");
        assert!(msg.contains("data/ab/t/r/cf/x.sst"), "{msg}");
        assert!(msg.contains("6 attempt"), "{msg}");

        let e = ObjectError::NotFound {
            op: Op::Head,
            path: "a/b".into(),
        };
        assert_eq!(e.to_string(), "head \"a/b\": object not found");
        assert!(e.is_not_found());
    }
}
