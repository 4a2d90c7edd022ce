//! `[wal]`: where the write-ahead log's segments go, the group commit's
//! delay, and the bound on what a crash leaves to replay.

use super::units::ByteSize;
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// Where WAL segments go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WalBackendName {
    /// fsync'd files in `wal.dir` (default).
    #[default]
    Local,
    /// Objects in the object store (survives losing the machine).
    Object,
}

/// `[wal]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WalSection {
    /// `local` (default) or `object`.
    pub backend: WalBackendName,
    /// Local segment directory; empty = `<data_dir>/wal`.
    pub dir: PathBuf,
    /// Local backend: how long a group commit waits for more appends, only
    /// while they arrive fast enough that two or more are expected in that
    /// time (default 0 = never; see `docs/config.md`).
    #[serde(with = "crate::config::units::humantime_serde_compat")]
    pub commit_delay: Duration,
    /// Once the WAL's live segments hold more than this, the regions holding
    /// its oldest entries are flushed so they can go: what a crash leaves to
    /// replay stays about this size (default 256MiB; 0 = no bound).
    pub max_unflushed: ByteSize,
}

impl Default for WalSection {
    fn default() -> Self {
        WalSection {
            backend: WalBackendName::default(),
            dir: PathBuf::new(),
            commit_delay: Duration::ZERO,
            max_unflushed: ByteSize(shoal_storage::wal::DEFAULT_MAX_UNFLUSHED),
        }
    }
}

impl WalSection {
    /// The flush scheduler's bound on the WAL (`None`: no bound).
    pub fn max_unflushed_bytes(&self) -> Option<u64> {
        (self.max_unflushed.0 > 0).then_some(self.max_unflushed.0)
    }

    /// Checks every value; `Err((key, message))` names the offending key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.commit_delay > Duration::from_millis(10) {
            return Err((
                "wal.commit_delay",
                format!(
                    "must be at most 10ms (it adds up to that to every put), got {:?}",
                    self.commit_delay
                ),
            ));
        }
        if self.max_unflushed.0 != 0 && self.max_unflushed.0 < (1 << 20) {
            return Err((
                "wal.max_unflushed",
                format!(
                    "must be 0 (no bound) or at least 1MiB, got {}",
                    self.max_unflushed
                ),
            ));
        }
        Ok(())
    }
}
