//! A snapshot's record in the bucket, `snapshots/<id>/snapshot.json`: the
//! table's schema and, per region, its key range, the read point of the cut
//! and the exact files that hold the region's data at that point (files of
//! the region, shared in place, plus the memstore cells at or below the
//! point, written once under `snapshots/<id>/files/`). Written once with
//! create-if-absent and never changed; the catalog entry that names it is
//! what makes the snapshot exist.

use crate::catalog::TableRecord;
use crate::catalog::schema::hex_bytes;
use crate::error::ServiceError;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use shoal_storage::manifest::StoreFile;
use shoal_storage::object::Bucket;
use shoal_storage::sst::FileId;
use std::collections::BTreeMap;

/// The record's format version.
pub const FORMAT: u32 = 1;

/// Everything a snapshot is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotRecord {
    /// Format version ([`FORMAT`]).
    pub format: u32,
    /// The snapshot's name.
    pub name: String,
    /// Its unique id (ULID).
    pub id: String,
    /// When it was taken (ms since the epoch).
    pub created_ms: i64,
    /// The table as it was (name, id, families, regions).
    pub table: TableRecord,
    /// Per region, in key order: what the snapshot holds of it.
    pub regions: Vec<SnapshotRegion>,
    /// How long writes to the table were held back for the cut (µs; 0 for
    /// a disabled table, whose regions were read from their manifests).
    pub pause_micros: u64,
}

/// One region of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotRegion {
    /// The region's id in the table it was taken of.
    pub id: String,
    /// First row (inclusive), hex; empty = unbounded.
    #[serde(with = "hex_bytes")]
    pub start_row: Bytes,
    /// End row (exclusive), hex; empty = unbounded.
    #[serde(with = "hex_bytes")]
    pub end_row: Bytes,
    /// Every write the region acknowledged before the cut is at or below
    /// this sequence number, and every cell of `families` is too.
    pub read_point: u64,
    /// Files by family, oldest first.
    pub families: BTreeMap<String, Vec<FileRecord>>,
}

/// One file a snapshot holds (a manifest's file entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRecord {
    /// The file's id (ULID).
    pub id: String,
    /// Object path in the bucket.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Cells.
    pub cells: u64,
    /// Highest sequence number of a cell in it.
    pub max_seq: u64,
    /// Smallest cell timestamp.
    pub min_timestamp: i64,
    /// Largest cell timestamp.
    pub max_timestamp: i64,
    /// First row, hex.
    #[serde(with = "hex_bytes")]
    pub first_row: Bytes,
    /// Last row, hex.
    #[serde(with = "hex_bytes")]
    pub last_row: Bytes,
}

impl FileRecord {
    /// The record of manifest entry `f`.
    pub fn of(f: &StoreFile) -> FileRecord {
        FileRecord {
            id: f.id.to_string(),
            path: f.path.clone(),
            size: f.size,
            cells: f.cell_count,
            max_seq: f.max_seq,
            min_timestamp: f.min_timestamp,
            max_timestamp: f.max_timestamp,
            first_row: f.first_row.clone(),
            last_row: f.last_row.clone(),
        }
    }

    /// The file's id; `None` if the record's is not one.
    pub fn file_id(&self) -> Option<FileId> {
        FileId::parse(&self.id)
    }

    /// The manifest entry for it.
    pub fn to_store_file(&self) -> Result<StoreFile, String> {
        Ok(StoreFile {
            id: self
                .file_id()
                .ok_or_else(|| format!("file id {:?} is not a ULID", self.id))?,
            path: self.path.clone(),
            size: self.size,
            cell_count: self.cells,
            max_seq: self.max_seq,
            min_timestamp: self.min_timestamp,
            max_timestamp: self.max_timestamp,
            first_row: self.first_row.clone(),
            last_row: self.last_row.clone(),
        })
    }
}

/// A manifest's files by family as a snapshot records them.
pub fn families_of(stores: &BTreeMap<String, Vec<StoreFile>>) -> BTreeMap<String, Vec<FileRecord>> {
    stores
        .iter()
        .map(|(f, files)| (f.clone(), files.iter().map(FileRecord::of).collect()))
        .collect()
}

/// The object prefix of snapshot `id`'s objects.
pub fn snapshot_dir(id: &str) -> String {
    format!("snapshots/{id}")
}

/// Where snapshot `id`'s record is.
pub fn record_path(id: &str) -> String {
    format!("{}/snapshot.json", snapshot_dir(id))
}

/// Where the memstore files of region `region_id` in snapshot `id` go.
pub fn files_dir(id: &str, region_id: &str) -> String {
    format!("{}/files/{region_id}", snapshot_dir(id))
}

/// The directory of the region that wrote file `path`
/// (`<dir>/<family>/<file>.sst`).
pub fn dir_of_file(path: &str) -> Option<&str> {
    let (rest, _) = path.rsplit_once('/')?;
    let (dir, _) = rest.rsplit_once('/')?;
    Some(dir)
}

impl SnapshotRecord {
    /// Every file the snapshot holds.
    pub fn files(&self) -> impl Iterator<Item = &FileRecord> {
        self.regions
            .iter()
            .flat_map(|r| r.families.values().flatten())
    }

    /// Bytes of every file it holds.
    pub fn bytes(&self) -> u64 {
        self.files().map(|f| f.size).sum()
    }

    /// Region `i`'s files as manifest entries, by family.
    pub fn region_stores(
        &self,
        i: usize,
    ) -> Result<BTreeMap<String, Vec<StoreFile>>, ServiceError> {
        let region = &self.regions[i];
        let mut out = BTreeMap::new();
        for (family, files) in &region.families {
            let entries = files
                .iter()
                .map(FileRecord::to_store_file)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|reason| self.corrupt(reason))?;
            out.insert(family.clone(), entries);
        }
        Ok(out)
    }

    fn corrupt(&self, reason: String) -> ServiceError {
        ServiceError::FailedPrecondition(format!(
            "snapshot {:?}: its record {} is damaged: {reason}",
            self.name,
            record_path(&self.id)
        ))
    }

    /// Writes the record (once: an existing one is an error).
    pub async fn write(&self, bucket: &Bucket) -> Result<(), ServiceError> {
        let data = serde_json::to_vec_pretty(self)
            .map_err(|e| ServiceError::InvalidArgument(format!("encoding a snapshot: {e}")))?;
        bucket
            .create_if_absent(&record_path(&self.id), Bytes::from(data))
            .await
            .map_err(|e| {
                ServiceError::Unavailable(format!("writing snapshot {:?}: {e}", self.name))
            })
    }

    /// Reads snapshot `id`'s record (`name` for messages), checked.
    pub async fn read(
        bucket: &Bucket,
        id: &str,
        name: &str,
    ) -> Result<SnapshotRecord, ServiceError> {
        let path = record_path(id);
        let data = bucket.get(&path).await.map_err(|e| {
            if e.is_not_found() {
                ServiceError::FailedPrecondition(format!(
                    "snapshot {name:?}: its record {path} is missing from the bucket"
                ))
            } else {
                ServiceError::Unavailable(format!("reading snapshot {name:?}: {e}"))
            }
        })?;
        let record: SnapshotRecord = serde_json::from_slice(&data).map_err(|e| {
            ServiceError::FailedPrecondition(format!(
                "snapshot {name:?}: its record {path} is damaged: {e}"
            ))
        })?;
        if record.format != FORMAT {
            return Err(ServiceError::FailedPrecondition(format!(
                "snapshot {name:?}: record format {} is not one this server reads ({FORMAT}); written by a newer Shoal?",
                record.format
            )));
        }
        if record.id != id {
            return Err(record.corrupt(format!("it names id {}", record.id)));
        }
        for f in record.files() {
            if f.file_id().is_none() {
                return Err(record.corrupt(format!("file id {:?} is not a ULID", f.id)));
            }
        }
        Ok(record)
    }
}

/// Names of the point-in-time window's base snapshots start with this
/// (`@` is refused in a user's name, so none can collide with one).
pub const BASE_PREFIX: &str = "@pitr.";

/// True for a base snapshot's name.
pub fn is_base_name(name: &str) -> bool {
    name.starts_with(BASE_PREFIX)
}

/// The name of the base of table `table_id` taken at `created_ms`.
pub fn base_name(table_id: &str, created_ms: i64) -> String {
    format!("{BASE_PREFIX}{table_id}.{created_ms}")
}

/// The table id and time a base's name carries.
pub fn parse_base_name(name: &str) -> Option<(&str, i64)> {
    let rest = name.strip_prefix(BASE_PREFIX)?;
    let (table_id, ms) = rest.rsplit_once('.')?;
    Some((table_id, ms.parse().ok()?))
}

/// HBase's rule for snapshot names (`TableName.isLegalTableQualifierName`):
/// letters, digits, `_`, `-` and `.`, not starting with `.` or `-`, at most
/// 255 bytes.
pub fn validate_snapshot_name(name: &str) -> Result<(), ServiceError> {
    let bad = |why: String| {
        Err(ServiceError::InvalidArgument(format!(
            "snapshot name {}: {why}",
            crate::error::shown(name)
        )))
    };
    if name.is_empty() {
        return bad("must not be empty".into());
    }
    if name.len() > 255 {
        return bad("is longer than 255 bytes".into());
    }
    if name.starts_with('.') || name.starts_with('-') {
        return bad("must not start with '.' or '-'".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return bad(format!(
            "{c:?} is not allowed (letters, digits, '_', '-' and '.' are)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_hbase_and_a_file_knows_its_region_dir() {
        assert!(validate_snapshot_name("snap_1.a-b").is_ok());
        for bad in ["", ".x", "-x", "a b", "a/b", "a:b"] {
            assert!(validate_snapshot_name(bad).is_err(), "{bad}");
        }
        assert_eq!(
            dir_of_file("data/0a/t1/r1/cf/01.sst"),
            Some("data/0a/t1/r1")
        );
        assert_eq!(dir_of_file("x.sst"), None);
    }
}
