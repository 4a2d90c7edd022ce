//! Keeps every file a snapshot names away from garbage collection.
//!
//! Region GC deletes a file no manifest of its region needs unless the file
//! is pinned (`FilePins`). The holds pin, for as long as a snapshot is in
//! the catalog (deleted ones kept for a clone included), every file its
//! record names. They follow the catalog: [`SnapshotHolds::sync`] reads the
//! record of each snapshot not held yet and lets go of those gone. Until a
//! sync has read every record, the pins hold *everything* (no file is
//! deleted anywhere on this server), so a record that cannot be read never
//! lets a file it names go.

use super::record::SnapshotRecord;
use crate::catalog::Catalog;
use crate::error::ServiceError;
use shoal_storage::manifest::{FilePin, FilePins};
use shoal_storage::object::Bucket;
use shoal_storage::sst::FileId;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// The pins of every snapshot's files, by snapshot id.
#[derive(Debug)]
pub struct SnapshotHolds {
    pins: FilePins,
    held: Mutex<HashMap<String, Held>>,
}

/// One snapshot's pins: whether it is a base of the point-in-time window,
/// and each file's pin and size.
type Held = (bool, Vec<(FilePin, u64)>);

/// What the snapshots hold, for `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HoldSummary {
    /// Snapshots held (deleted ones a clone still reads included).
    pub snapshots: u64,
    /// Distinct files they hold.
    pub files: u64,
    /// Bytes of those files.
    pub bytes: u64,
    /// Of those, files no region open here reads: kept only for snapshots.
    pub only_files: u64,
    /// Bytes of those.
    pub only_bytes: u64,
    /// Of the files kept only for snapshots, those only the point-in-time
    /// window's bases hold: the window's cost in files.
    pub window_only_files: u64,
    /// Bytes of those.
    pub window_only_bytes: u64,
}

impl SnapshotHolds {
    /// Holds over `pins`: everything is held until the first
    /// [`SnapshotHolds::sync`].
    pub fn new(pins: FilePins) -> SnapshotHolds {
        pins.hold_everything(true);
        SnapshotHolds {
            pins,
            held: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Pins the files of `record` (a snapshot just written, before the
    /// catalog names it).
    pub fn hold(&self, record: &SnapshotRecord) {
        let pins: Vec<(FilePin, u64)> = record
            .files()
            .filter_map(|f| f.file_id().map(|id| (self.pins.pin(id), f.size)))
            .collect();
        let base = super::record::is_base_name(&record.name);
        self.lock().insert(record.id.clone(), (base, pins));
    }

    /// Lets go of snapshot `id`'s files.
    pub fn release(&self, id: &str) {
        self.lock().remove(id);
    }

    /// What is held, and how much of it only for snapshots: files no
    /// region in `live` (the files regions read now) reads.
    pub fn summary(&self, live: &HashSet<FileId>) -> HoldSummary {
        let held = self.lock();
        let mut seen: HashSet<FileId> = HashSet::new();
        let by_users: HashSet<FileId> = held
            .values()
            .filter(|(base, _)| !base)
            .flat_map(|(_, pins)| pins.iter().map(|(pin, _)| pin.id()))
            .collect();
        let mut s = HoldSummary {
            snapshots: held.len() as u64,
            ..HoldSummary::default()
        };
        for (pin, size) in held.values().flat_map(|(_, pins)| pins) {
            if !seen.insert(pin.id()) {
                continue;
            }
            s.files += 1;
            s.bytes += size;
            if !live.contains(&pin.id()) {
                s.only_files += 1;
                s.only_bytes += size;
                if !by_users.contains(&pin.id()) {
                    s.window_only_files += 1;
                    s.window_only_bytes += size;
                }
            }
        }
        s
    }

    /// Ids of the snapshots held now.
    pub fn held(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// Holds exactly the snapshots `catalog` lists: reads the records of
    /// those not held yet, lets go of the rest. On an unreadable record
    /// every file stays held (no GC deletes anything) until a later sync
    /// reads them all.
    pub async fn sync(&self, bucket: &Bucket, catalog: &Catalog) -> Result<(), ServiceError> {
        let held: Vec<String> = self.held();
        let wanted: HashMap<&str, &str> = catalog
            .snapshots
            .iter()
            .map(|s| (s.id.as_str(), s.name.as_str()))
            .collect();
        for id in &held {
            if !wanted.contains_key(id.as_str()) {
                self.release(id);
            }
        }
        let mut failed = None;
        for (id, name) in wanted {
            if self.lock().contains_key(id) {
                continue;
            }
            match SnapshotRecord::read(bucket, id, name).await {
                Ok(record) => self.hold(&record),
                Err(e) => failed = Some(e),
            }
        }
        match failed {
            Some(e) => {
                self.pins.hold_everything(true);
                tracing::warn!(error = %e, "a snapshot's record could not be read: no file is deleted on this server until it can");
                Err(e)
            }
            None => {
                self.pins.hold_everything(false);
                Ok(())
            }
        }
    }
}
