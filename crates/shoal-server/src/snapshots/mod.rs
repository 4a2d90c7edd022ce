//! Snapshots (`docs/snapshots.md`): named, immutable records of a table's
//! schema, regions and exact files at one consistent cut. `record` is the
//! record's form in the bucket; `holds` keeps the files every snapshot
//! names from garbage collection. The operations on them are the host's
//! (`host/snapshot_take.rs`, `host/snapshot_use.rs`).

pub mod holds;
pub mod record;

pub use holds::{HoldSummary, SnapshotHolds};
pub use record::{FileRecord, SnapshotRecord, SnapshotRegion, validate_snapshot_name};
