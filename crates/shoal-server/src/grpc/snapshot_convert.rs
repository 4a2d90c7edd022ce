//! Snapshots as `shoal.v1.SnapshotDescription`s.

use crate::host::{SnapshotInfo, SnapshotListing};
use crate::snapshots::SnapshotRecord;
use shoal_proto::v1 as pb;

/// A snapshot just taken.
pub(super) fn taken(info: &SnapshotInfo) -> pb::SnapshotDescription {
    pb::SnapshotDescription {
        name: info.name.clone(),
        table: info.table.clone(),
        created_ms: info.created_ms,
        regions: info.regions as u64,
        files: info.files as u64,
        bytes: info.bytes,
        written_bytes: info.written_bytes,
        pause_micros: info.pause_micros,
    }
}

/// A snapshot as listed (no record read).
pub(super) fn listed(s: &SnapshotListing) -> pb::SnapshotDescription {
    pb::SnapshotDescription {
        name: s.name.clone(),
        table: s.table.clone(),
        created_ms: s.created_ms,
        ..pb::SnapshotDescription::default()
    }
}

/// A snapshot's record.
pub(super) fn described(r: &SnapshotRecord) -> pb::SnapshotDescription {
    pb::SnapshotDescription {
        name: r.name.clone(),
        table: r.table.name.clone(),
        created_ms: r.created_ms,
        regions: r.regions.len() as u64,
        files: r.files().count() as u64,
        bytes: r.bytes(),
        written_bytes: 0,
        pause_micros: r.pause_micros,
    }
}
