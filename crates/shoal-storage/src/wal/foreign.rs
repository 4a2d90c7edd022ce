//! Another server's WAL, read after that server died: the failover half of
//! the object-store backend.
//!
//! In cluster mode every server writes its WAL under a prefix of its own in
//! the object store (`wal/<server>/<run>`). When a server's lease expires, the
//! new owners of its regions read its segments here — read-only, never
//! writing under its prefix — take the entries of the regions they open (past
//! each region's flushed sequence), replay them and log them again in their
//! own WAL ([`crate::region::Region::open_with_recovered`]). Once every
//! region the dead WAL holds entries for has been reopened that way, the
//! coordinator deletes the prefix ([`ForeignWal::delete`]) — or, with WAL history
//! on, retires it ([`ForeignWal::retire`]): its segments stay for the history
//! window, and [`crate::wal::sweep_history`] deletes the prefix once they aged out.
//!
//! A paused former owner cannot add to what was read: it stops acknowledging
//! writes when its lease lapses by its own clock, before the cluster sees the
//! lease expire and reads its WAL.

use std::collections::HashMap;
use std::time::Duration;

use super::error::WalError;
use super::{WalEntry, object, pitr, stamp};
use crate::object::Bucket;

/// The entries of a dead server's WAL, grouped by region.
#[derive(Debug, Default)]
pub struct ForeignWal {
    prefix: String,
    entries: HashMap<String, Vec<WalEntry>>,
    segments: Vec<u64>,
}

impl ForeignWal {
    /// Reads every segment object under `prefix` that may hold an unflushed entry:
    /// all of them, or with a history checkpoint (`<prefix>/history.json`) those from
    /// its `flushed_below` on. Any damaged object is [`WalError::Corrupt`] (objects are
    /// written whole: damage is not a torn tail). An empty or missing prefix is an
    /// empty WAL.
    pub async fn read(bucket: &Bucket, prefix: &str) -> Result<ForeignWal, WalError> {
        let recovered = object::recover(bucket, prefix).await?.log;
        let segments = recovered.segments.iter().map(|(n, _, _)| *n).collect();
        let mut entries = recovered.entries;
        for list in entries.values_mut() {
            list.sort_by_key(|e| e.seq);
        }
        Ok(ForeignWal {
            prefix: prefix.to_owned(),
            entries,
            segments,
        })
    }

    /// The prefix it was read from.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Regions with entries, in no particular order.
    pub fn regions(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    /// Segment objects read.
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// Entries of `region` with seq > `after_seq`, by seq.
    pub fn entries(&self, region: &str, after_seq: u64) -> Vec<WalEntry> {
        self.entries
            .get(region)
            .map(|list| list.iter().filter(|e| e.seq > after_seq).cloned().collect())
            .unwrap_or_default()
    }

    /// Deletes every segment object under the prefix (listed afresh, so
    /// objects written after [`ForeignWal::read`] go too). Call only once
    /// every region with entries has been reopened elsewhere and has logged
    /// them again. With WAL history on, call [`ForeignWal::retire`] instead.
    pub async fn delete(bucket: &Bucket, prefix: &str) -> Result<usize, WalError> {
        let listing = bucket
            .list(prefix)
            .await
            .map_err(|e| WalError::object(prefix, "list WAL segments", e))?;
        let keys: Vec<String> = listing.into_iter().map(|info| info.path).collect();
        let n = keys.len();
        if n > 0 {
            bucket
                .delete_many(keys)
                .await
                .map_err(|e| WalError::object(prefix, "delete a dead server's WAL", e))?;
        }
        Ok(n)
    }

    /// With WAL history on, instead of [`ForeignWal::delete`]: keeps a dead run's
    /// segments for `window` from now. Writes its `history.json` with
    /// `flushed_below` = its highest segment + 1 (all of them are flushed once
    /// every region was reopened elsewhere; so a later [`ForeignWal::read`] reads
    /// nothing) and a mark (that number, now), and deletes what of its earlier
    /// history is already older than the window. [`crate::wal::sweep_history`]
    /// deletes the whole prefix once its newest mark is older than the window.
    /// Call it when `delete` would be called; a prefix with no segment and no
    /// history is left as it is.
    pub async fn retire(bucket: &Bucket, prefix: &str, window: Duration) -> Result<(), WalError> {
        pitr::retire(bucket, prefix, window, stamp::now_ms()).await
    }
}
