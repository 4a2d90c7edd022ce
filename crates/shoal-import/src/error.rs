//! What importing HBase's files can fail with: each error names the object
//! or file and what is wrong with it.

use shoal_storage::object::ObjectError;

/// An import or bulk-load input problem.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// No snapshot of that name at the location.
    #[error(
        "no snapshot {name:?} at {location} (snapshots there: {})",
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    )]
    NoSuchSnapshot {
        /// The name asked for.
        name: String,
        /// The location searched.
        location: String,
        /// Snapshots that are there.
        known: Vec<String>,
    },
    /// A store file the manifest names is in none of the places HBase keeps it.
    #[error(
        "store file {name:?} of region {region} family {family:?} is missing (looked at {})",
        tried.join(", ")
    )]
    MissingFile {
        /// The name in the manifest.
        name: String,
        /// The region (encoded name).
        region: String,
        /// The family.
        family: String,
        /// The paths tried.
        tried: Vec<String>,
    },
    /// Bytes that are not what they claim to be.
    #[error("{path}: corrupt: {reason}")]
    Corrupt {
        /// The object.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Something this reader does not handle (said why).
    #[error("{0}")]
    Unsupported(String),
    /// An HFile could not be read.
    #[error(transparent)]
    HFile(#[from] shoal_hfile::HFileError),
    /// The location could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The object.
        path: String,
        /// The store's error.
        #[source]
        source: ObjectError,
    },
    /// A local file (a downloaded HFile) could not be read or written.
    #[error("{path}: {source}")]
    Local {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl ImportError {
    pub(crate) fn io(path: &str, source: ObjectError) -> ImportError {
        ImportError::Io {
            path: path.to_owned(),
            source,
        }
    }

    pub(crate) fn corrupt(path: &str, reason: impl Into<String>) -> ImportError {
        ImportError::Corrupt {
            path: path.to_owned(),
            reason: reason.into(),
        }
    }
}
