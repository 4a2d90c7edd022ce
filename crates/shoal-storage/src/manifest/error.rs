//! [`ManifestError`]: the one error type of the manifest subsystem. Every variant names
//! the region directory or the manifest object, and says what the caller should do.

use crate::object::ObjectError;

/// Errors of the manifest subsystem.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// A manifest object could not be decoded. The newest manifest is never skipped in
    /// favour of an older one: the region cannot open until an operator looks.
    #[error(
        "manifest {path:?} is corrupt: {reason}; the region cannot be opened from it — \
         inspect the object (do not delete it: it may be the newest state or a fence)"
    )]
    Corrupt { path: String, reason: String },

    /// Another owner with a higher epoch has taken the region over. This writer stays
    /// fenced: the region must stop serving here.
    #[error(
        "region {region_dir:?}: this owner (epoch {our_epoch}) was fenced by a newer owner \
         (epoch {their_epoch}); stop serving the region here and drop this writer"
    )]
    Fenced {
        region_dir: String,
        our_epoch: u64,
        their_epoch: u64,
    },

    /// A commit may or may not have been written (the object store kept failing after an
    /// attempt that may have been applied). The writer is poisoned.
    #[error(
        "manifest {path:?}: the commit's outcome is unknown (the object store failed after \
         the write may have been applied); this writer is unusable — reopen the region with \
         open_owner, which reads the true newest state: {source}"
    )]
    CommitUnknown {
        path: String,
        #[source]
        source: ObjectError,
    },

    /// An earlier commit's outcome was unknown, or the manifests were inconsistent; this
    /// writer refuses to commit again.
    #[error(
        "region {region_dir:?}: this manifest writer was poisoned by an earlier unknown or \
         inconsistent commit; reopen the region with open_owner"
    )]
    Poisoned { region_dir: String },

    /// The manifests break the protocol (e.g. a slot after ours written by another owner
    /// of our own or a lower epoch). The writer is poisoned.
    #[error(
        "manifest {path:?} breaks the manifest protocol: {reason}; another process may be \
         writing this region without fencing — stop serving it and investigate"
    )]
    Inconsistent { path: String, reason: String },

    /// A commit's edit was refused; nothing was written and the writer is unchanged.
    #[error("region {region_dir:?}: invalid manifest edit: {reason}")]
    InvalidEdit { region_dir: String, reason: String },

    /// The caller lost the right to own the region while opening it (cluster mode:
    /// its lease lapsed, and the region may belong to another server now), so no
    /// fence was attempted after that: a server cut off from the cluster must never
    /// fence the owner the cluster gave the region to.
    #[error(
        "region {region_dir:?}: this server lost the right to own the region (its cluster \
         lease lapsed) while opening it; it is not opened here"
    )]
    OwnershipLost { region_dir: String },

    /// `open_owner` lost the race for the next slot too many times in a row.
    #[error(
        "region {region_dir:?}: gave up opening after {attempts} attempts, each lost to a \
         concurrent opener or committer; another server is opening this region — check \
         region assignment, then retry"
    )]
    OpenContended { region_dir: String, attempts: u32 },

    /// An object-store request failed; `context` says what was being done.
    #[error("{context}: {source}")]
    Object {
        context: String,
        #[source]
        source: ObjectError,
    },
}

impl ManifestError {
    pub(crate) fn object(context: impl Into<String>, source: ObjectError) -> ManifestError {
        ManifestError::Object {
            context: context.into(),
            source,
        }
    }

    /// True for [`ManifestError::Fenced`].
    pub fn is_fenced(&self) -> bool {
        matches!(self, ManifestError::Fenced { .. })
    }
}
