//! An HBase snapshot as it lies in an HBase root directory (or an
//! `ExportSnapshot` target): `.hbase-snapshot/<name>/.snapshotinfo` (what
//! the snapshot is) and `data.manifest` (the table's schema and, per region,
//! its key range and store files), with every store file resolved to the
//! HFile it reads — through HFile links and split references — and located
//! in the live table directory or the archive.
//!
//! Only HBase's version-2 manifests are read (every HBase since 0.98 writes
//! them); a snapshot still in progress (`.hbase-snapshot/.tmp`) or of
//! version 1 is refused with the reason.

use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase::{SnapshotDataManifest, SnapshotDescription, snapshot_region_manifest};
use shoal_storage::object::Bucket;

use crate::error::ImportError;
use crate::names::{self, FileTarget, TableName};
use crate::schema::{FamilySettings, family_settings};

/// Largest manifest read (HBase's own limit is 64 MiB by default).
const MAX_MANIFEST_BYTES: u64 = 256 << 20;

/// A snapshot, read and resolved.
#[derive(Debug, Clone)]
pub struct HBaseSnapshot {
    /// The snapshot's name.
    pub name: String,
    /// The table it was taken of.
    pub table: TableName,
    /// When it was taken (ms since the epoch; 0 if not recorded).
    pub created_ms: i64,
    /// The table's families, with HBase's settings.
    pub families: Vec<FamilySettings>,
    /// The regions, in key order.
    pub regions: Vec<SnapshotRegion>,
}

/// One region of a snapshot.
#[derive(Debug, Clone)]
pub struct SnapshotRegion {
    /// HBase's encoded region name (its directory).
    pub encoded: String,
    /// First row (empty = start of table).
    pub start: Bytes,
    /// Row the region ends before (empty = end of table).
    pub end: Bytes,
    /// Store files per family, as the manifest lists them.
    pub files: Vec<SnapshotFile>,
}

/// One store file of a snapshot region, resolved.
#[derive(Debug, Clone)]
pub struct SnapshotFile {
    /// The family.
    pub family: String,
    /// The name the manifest gives (a plain HFile, a link or a reference).
    pub name: String,
    /// The HFile it reads.
    pub target: FileTarget,
    /// Where that HFile is, relative to the location's root.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// For a split reference: the half of the HFile it reads.
    pub half: Option<Half>,
}

/// The half of an HFile a split reference reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Half {
    /// The row the parent split at.
    pub split_row: Bytes,
    /// True: rows at or after `split_row`; false: rows before it.
    pub top: bool,
}

impl HBaseSnapshot {
    /// Reads snapshot `name` under the root of `bucket`, and finds every
    /// file it needs (an error names the first one missing).
    pub async fn read(bucket: &Bucket, name: &str) -> Result<HBaseSnapshot, ImportError> {
        let dir = format!(".hbase-snapshot/{name}");
        let info_path = format!("{dir}/.snapshotinfo");
        let info = match bucket.get(&info_path).await {
            Ok(b) => b,
            Err(e) if e.is_not_found() => {
                return Err(missing_snapshot(bucket, name).await);
            }
            Err(e) => return Err(ImportError::io(&info_path, e)),
        };
        let info = SnapshotDescription::decode(info)
            .map_err(|e| ImportError::corrupt(&info_path, e.to_string()))?;
        if info.version.unwrap_or(0) < 2 {
            return Err(ImportError::Unsupported(format!(
                "snapshot {name:?} has manifest version {}; only version 2 (HBase 0.98 and \
                 later) is read: take the snapshot again with a current HBase",
                info.version.unwrap_or(0)
            )));
        }
        let manifest_path = format!("{dir}/data.manifest");
        let size = bucket
            .head(&manifest_path)
            .await
            .map_err(|e| ImportError::io(&manifest_path, e))?
            .size;
        if size > MAX_MANIFEST_BYTES {
            return Err(ImportError::corrupt(
                &manifest_path,
                format!("{size} bytes, more than the {MAX_MANIFEST_BYTES} this reads"),
            ));
        }
        let data = bucket
            .get(&manifest_path)
            .await
            .map_err(|e| ImportError::io(&manifest_path, e))?;
        let manifest = SnapshotDataManifest::decode(data)
            .map_err(|e| ImportError::corrupt(&manifest_path, e.to_string()))?;
        let table = info
            .table
            .as_deref()
            .map(TableName::parse)
            .ok_or_else(|| ImportError::corrupt(&info_path, "names no table"))?;
        let families = manifest
            .table_schema
            .column_families
            .iter()
            .map(family_settings)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|reason| ImportError::corrupt(&manifest_path, reason))?;
        let mut regions = Vec::with_capacity(manifest.region_manifests.len());
        for rm in &manifest.region_manifests {
            let ri = &rm.region_info;
            // A split parent still listed (offline, split) holds nothing its
            // daughters do not read through references.
            if ri.offline == Some(true) && ri.split == Some(true) {
                continue;
            }
            if ri.replica_id.unwrap_or(0) != 0 {
                continue;
            }
            let start = ri.start_key.clone().unwrap_or_default();
            let encoded = names::encoded_region_name(&table, &start, ri.region_id, 0);
            let mut files = Vec::new();
            for ff in &rm.family_files {
                let family = String::from_utf8(ff.family_name.to_vec()).map_err(|_| {
                    ImportError::corrupt(&manifest_path, "a family name is not UTF-8")
                })?;
                for sf in &ff.store_files {
                    files.push(resolve(bucket, &table, &encoded, &family, sf).await?);
                }
            }
            regions.push(SnapshotRegion {
                encoded,
                start,
                end: ri.end_key.clone().unwrap_or_default(),
                files,
            });
        }
        regions.sort_by(|a, b| a.start.cmp(&b.start));
        check_coverage(&manifest_path, &regions)?;
        Ok(HBaseSnapshot {
            name: info.name,
            table,
            created_ms: info.creation_time.unwrap_or(0),
            families,
            regions,
        })
    }

    /// The rows where regions begin, but the first: the table's split keys.
    pub fn split_keys(&self) -> Vec<Bytes> {
        self.regions
            .iter()
            .skip(1)
            .map(|r| r.start.clone())
            .collect()
    }

    /// Bytes of HFile input (whole files, also where a reference reads half).
    pub fn input_bytes(&self) -> u64 {
        self.regions
            .iter()
            .flat_map(|r| r.files.iter().map(|f| f.size))
            .sum()
    }
}

/// A missing `.snapshotinfo`: says whether the snapshot is still being
/// taken, and which snapshots there are.
async fn missing_snapshot(bucket: &Bucket, name: &str) -> ImportError {
    let tmp = format!(".hbase-snapshot/.tmp/{name}/.snapshotinfo");
    if bucket.exists(&tmp).await.unwrap_or(false) {
        return ImportError::Unsupported(format!(
            "snapshot {name:?} is still being taken (it is under .hbase-snapshot/.tmp)"
        ));
    }
    let mut known: Vec<String> = bucket
        .list(".hbase-snapshot/")
        .await
        .unwrap_or_default()
        .into_iter()
        .filter_map(|o| {
            let rest = o.path.strip_prefix(".hbase-snapshot/")?;
            let (snap, file) = rest.split_once('/')?;
            (file == ".snapshotinfo" && snap != ".tmp").then(|| snap.to_owned())
        })
        .collect();
    known.sort();
    known.dedup();
    ImportError::NoSuchSnapshot {
        name: name.to_owned(),
        location: bucket.location().to_owned(),
        known,
    }
}

/// Resolves one store file of region `region` to the HFile it reads.
async fn resolve(
    bucket: &Bucket,
    table: &TableName,
    region: &str,
    family: &str,
    sf: &snapshot_region_manifest::StoreFile,
) -> Result<SnapshotFile, ImportError> {
    let (target, half) = match &sf.reference {
        Some(reference) => {
            let (referred, parent) = names::parse_reference(&sf.name).ok_or_else(|| {
                ImportError::Unsupported(format!(
                    "store file {:?} of region {region} is a reference with a name HBase \
                     does not write",
                    sf.name
                ))
            })?;
            let target = names::parse_link(referred).unwrap_or(FileTarget {
                table: table.clone(),
                region: parent.to_owned(),
                hfile: referred.to_owned(),
            });
            let split_row = split_row(&reference.splitkey).ok_or_else(|| {
                ImportError::Unsupported(format!(
                    "reference {:?} of region {region} has a malformed split key",
                    sf.name
                ))
            })?;
            // Range: TOP = 0, BOTTOM = 1.
            let top = reference.range == 0;
            (target, Some(Half { split_row, top }))
        }
        None => match names::parse_link(&sf.name) {
            Some(target) => (target, None),
            None if names::is_hfile_name(&sf.name) => (
                FileTarget {
                    table: table.clone(),
                    region: region.to_owned(),
                    hfile: sf.name.clone(),
                },
                None,
            ),
            None => {
                return Err(ImportError::Unsupported(format!(
                    "store file {:?} of region {region}: not an HFile, link or reference name",
                    sf.name
                )));
            }
        },
    };
    let candidates = names::candidates(&target, family);
    for path in &candidates {
        match bucket.head(path).await {
            Ok(info) => {
                return Ok(SnapshotFile {
                    family: family.to_owned(),
                    name: sf.name.clone(),
                    target,
                    path: path.clone(),
                    size: info.size,
                    half,
                });
            }
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(ImportError::io(path, e)),
        }
    }
    Err(ImportError::MissingFile {
        name: sf.name.clone(),
        region: region.to_owned(),
        family: family.to_owned(),
        tried: candidates,
    })
}

/// The row of a reference's split key (a KeyValue key: row length, row, …).
fn split_row(key: &[u8]) -> Option<Bytes> {
    let len = u16::from_be_bytes([*key.first()?, *key.get(1)?]) as usize;
    key.get(2..2 + len).map(Bytes::copy_from_slice)
}

/// The regions must tile the key space: first starts at "", each starts
/// where the previous ended, the last ends at "".
fn check_coverage(path: &str, regions: &[SnapshotRegion]) -> Result<(), ImportError> {
    let Some(first) = regions.first() else {
        return Err(ImportError::corrupt(path, "lists no region"));
    };
    if !first.start.is_empty() {
        return Err(ImportError::corrupt(path, "no region starts the table"));
    }
    for pair in regions.windows(2) {
        if pair[0].end != pair[1].start {
            return Err(ImportError::corrupt(
                path,
                format!(
                    "region {} ends at {:?} but the next starts at {:?} (a hole or an overlap)",
                    pair[0].encoded, pair[0].end, pair[1].start
                ),
            ));
        }
    }
    if regions.last().is_some_and(|r| !r.end.is_empty()) {
        return Err(ImportError::corrupt(path, "no region ends the table"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keys_are_rows_of_keyvalue_keys() {
        // KeyValueUtil.createFirstOnRow("row5").getKey()
        let mut key = vec![0, 4];
        key.extend_from_slice(b"row5");
        key.push(0);
        key.extend_from_slice(&i64::MAX.to_be_bytes());
        key.push(255);
        assert_eq!(split_row(&key), Some(Bytes::from_static(b"row5")));
        assert_eq!(split_row(&[0, 9, 1]), None);
        assert_eq!(split_row(&[]), None);
    }
}
