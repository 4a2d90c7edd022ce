//! Point-in-time restore: a snapshot of a table as it was at any
//! millisecond of the window, then a clone or a restore from it.
//!
//! The table as of instant `T` is: the newest base snapshot of it taken at
//! or before `T` (and after its data was last replaced), plus every write
//! the WAL's history holds for the table's regions after that base's cut
//! and with a segment time at or before `T`. A segment's time is stamped
//! just before its write, so a write acknowledged by `T` is in (its
//! segment was stamped before the acknowledgement) and a write that began
//! after `T` is out (it was stamped after it began); one in flight at `T`
//! may be either, as with any snapshot. Which regions were the table's
//! between the base and `T` (splits happen) is read from the catalog's
//! history; the schema is the one current at `T`.
//!
//! The replayed writes are routed by row to the base's regions and written
//! once as one file per region and family under the new snapshot's
//! directory (the only bytes it writes); every other file is the base's,
//! shared in place. The result is an ordinary snapshot: listed, cloned,
//! restored, exported and deleted like any other.

use super::Host;
use super::pitr_base::bases_by_table;
use super::snapshot_take::{SnapshotInfo, now_ms};
use crate::catalog::history::catalogs_between;
use crate::catalog::{CatalogError, SnapshotEntry, TableRecord};
use crate::error::ServiceError;
use crate::snapshots::record::{BASE_PREFIX, FileRecord, SnapshotRecord, files_dir, snapshot_dir};
use crate::snapshots::validate_snapshot_name;
use bytes::Bytes;
use shoal_storage::cell::Cell;
use shoal_storage::region::mutate::decode_payload;
use shoal_storage::region::write_cells_file;
use shoal_storage::wal::{TimedEntry, read_history, wal_prefixes};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Replayed files written at once.
const WRITE_CONCURRENCY: usize = 8;

/// Where every server's WAL lives in the bucket.
const WAL_ROOT: &str = "wal";

fn history_error(e: CatalogError) -> ServiceError {
    match e {
        CatalogError::HistoryGone { from_ms } => ServiceError::FailedPrecondition(format!(
            "the catalog's history no longer reaches back to {from_ms} ms: that instant is \
             outside the point-in-time window"
        )),
        other => other.into(),
    }
}

/// The replayed cells of one snapshot region, by family.
type RoutedCells = BTreeMap<usize, BTreeMap<String, Vec<Cell>>>;

impl Host {
    /// Takes snapshot `name` of `table` as it was at `at_ms` (ms since the
    /// epoch), which must be inside the point-in-time window.
    pub async fn snapshot_at(
        &self,
        table: &str,
        at_ms: i64,
        name: &str,
    ) -> Result<SnapshotInfo, ServiceError> {
        validate_snapshot_name(name)?;
        self.snapshot_at_named(table, at_ms, name).await
    }

    /// Clones `table` as it was at `at_ms` into new table `target`.
    pub async fn clone_at(
        &self,
        table: &str,
        at_ms: i64,
        target: &str,
    ) -> Result<TableRecord, ServiceError> {
        let target = &self.new_table_name(target).await?;
        if self.table(target).is_ok() {
            return Err(ServiceError::TableExists(target.to_string()));
        }
        let temp = temporary_name();
        self.snapshot_at_named(table, at_ms, &temp).await?;
        let cloned = self.clone_snapshot(&temp, target).await;
        self.drop_temporary(&temp).await;
        cloned
    }

    /// Restores `table` (disabled) to what it was at `at_ms`; it stays
    /// disabled, as after a restore from a snapshot.
    pub async fn restore_at(&self, table: &str, at_ms: i64) -> Result<TableRecord, ServiceError> {
        if self.table(table)?.record.enabled {
            return Err(ServiceError::TableEnabled(table.to_string()));
        }
        let temp = temporary_name();
        self.snapshot_at_named(table, at_ms, &temp).await?;
        let restored = self.restore_snapshot(&temp).await;
        self.drop_temporary(&temp).await;
        restored
    }

    /// A temporary snapshot's entry goes (its files stay while the clone or
    /// restored table reads them); one left by a crash is a base of no
    /// table, let go by the window's housekeeping.
    async fn drop_temporary(&self, name: &str) {
        if let Err(e) = self.delete_snapshot(name).await {
            tracing::warn!(snapshot = name, error = %e, "deleting a temporary point-in-time snapshot failed; housekeeping lets it go later");
        }
    }

    async fn snapshot_at_named(
        &self,
        table: &str,
        at_ms: i64,
        name: &str,
    ) -> Result<SnapshotInfo, ServiceError> {
        let pit = self.point_in_time().ok_or_else(|| {
            ServiceError::FailedPrecondition(
                "point-in-time restore is off: set [snapshots] point_in_time_window (and \
                 wal.backend = \"object\") in the server's config"
                    .into(),
            )
        })?;
        self.require_master()?;
        let now = now_ms();
        let window_start = now - pit.window.as_millis() as i64;
        if at_ms > now {
            return Err(ServiceError::InvalidArgument(format!(
                "{} is in the future (now is {})",
                show_ms(at_ms),
                show_ms(now)
            )));
        }
        if at_ms < window_start {
            return Err(ServiceError::InvalidArgument(format!(
                "{} is outside the point-in-time window ({} of history: from {} to now)",
                show_ms(at_ms),
                humantime::format_duration(pit.window),
                show_ms(window_start)
            )));
        }
        let _one = self.inner.snapshot_lock.lock().await;
        let bucket = self.inner.env.bucket.clone();
        let at_t = catalogs_between(&bucket, at_ms, at_ms)
            .await
            .map_err(history_error)?;
        let table_at = at_t
            .last()
            .and_then(|c| c.table(table))
            .cloned()
            .ok_or_else(|| {
                ServiceError::InvalidArgument(format!(
                    "table {} did not exist at {}",
                    crate::error::shown(table),
                    show_ms(at_ms)
                ))
            })?;
        let base = self.base_for(&table_at, at_ms).await?;
        let base_record = SnapshotRecord::read(&bucket, &base.id, &base.name).await?;
        let members = table_regions_between(&bucket, &table_at, base.created_ms, at_ms).await?;
        let entries = self
            .replayed_entries(&base_record, &members, base.created_ms, at_ms)
            .await?;
        let id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        let result = self
            .write_snapshot_at(name, &id, at_ms, &table_at, base_record, entries)
            .await;
        if result.is_err() {
            self.delete_dir(&snapshot_dir(&id)).await;
        }
        result
    }

    /// The newest base of `table` (as it was at `at_ms`) taken at or before
    /// `at_ms` and not before its data was last replaced.
    async fn base_for(
        &self,
        table: &TableRecord,
        at_ms: i64,
    ) -> Result<SnapshotEntry, ServiceError> {
        let catalog = self.inner.catalog.lock().await.current().clone();
        let bases = bases_by_table(&catalog);
        bases
            .get(&table.id)
            .into_iter()
            .flatten()
            .rfind(|b| b.created_ms <= at_ms && b.created_ms >= table.reset_ms)
            .cloned()
            .ok_or_else(|| {
                let first = bases
                    .get(&table.id)
                    .and_then(|b| b.iter().find(|b| b.created_ms >= table.reset_ms))
                    .map(|b| format!("; its first is from {}", show_ms(b.created_ms)))
                    .unwrap_or_default();
                ServiceError::FailedPrecondition(format!(
                    "no point-in-time base of table {} was taken at or before {}{first} (bases \
                     are taken every {} once the window is on, and after a truncate or a \
                     restore)",
                    crate::error::shown(&table.name),
                    show_ms(at_ms),
                    self.point_in_time()
                        .map(|p| humantime::format_duration(p.base_every).to_string())
                        .unwrap_or_default()
                ))
            })
    }

    /// The WAL history entries to replay on top of `base`: those of the
    /// table's regions (`members`), stamped in `(base, at_ms]`, not already
    /// in the base (above its region's read point), each once.
    async fn replayed_entries(
        &self,
        base: &SnapshotRecord,
        members: &HashSet<String>,
        from_ms: i64,
        at_ms: i64,
    ) -> Result<Vec<TimedEntry>, ServiceError> {
        let bucket = &self.inner.env.bucket;
        let prefixes = wal_prefixes(bucket, WAL_ROOT)
            .await
            .map_err(|e| ServiceError::Unavailable(format!("listing the WAL's history: {e}")))?;
        // The reader takes segments stamped in `(from, to]`: one stamped in
        // the base's own millisecond may hold a write above its read point.
        let from = (from_ms - 1).max(0) as u64;
        let entries = read_history(bucket, &prefixes, from, at_ms as u64)
            .await
            .map_err(|e| {
                ServiceError::FailedPrecondition(format!("reading the WAL's history: {e}"))
            })?;
        let read_points: HashMap<&str, u64> = base
            .regions
            .iter()
            .map(|r| (r.id.as_str(), r.read_point))
            .collect();
        let mut seen: HashSet<(String, u64)> = HashSet::new();
        Ok(entries
            .into_iter()
            .filter(|e| e.time_ms <= at_ms as u64 && members.contains(&e.region))
            .filter(|e| {
                read_points
                    .get(e.region.as_str())
                    .is_none_or(|rp| e.seq > *rp)
            })
            .filter(|e| seen.insert((e.region.clone(), e.seq)))
            .collect())
    }

    /// Writes the replayed cells as files of the new snapshot `id`, and
    /// commits it: the base's regions and files, the schema at `at_ms`.
    async fn write_snapshot_at(
        &self,
        name: &str,
        id: &str,
        at_ms: i64,
        table_at: &TableRecord,
        base: SnapshotRecord,
        entries: Vec<TimedEntry>,
    ) -> Result<SnapshotInfo, ServiceError> {
        let replayed = entries.len();
        let routed = route_cells(&base, entries)?;
        let families: HashMap<String, shoal_storage::region::FamilyConfig> = table_at
            .families
            .iter()
            .map(|f| (f.name.clone(), f.to_family_config()))
            .collect();
        let written = self.write_routed(id, &base, &families, routed).await?;
        let mut record = base;
        record.format = crate::snapshots::record::FORMAT;
        record.name = name.to_string();
        record.id = id.to_string();
        record.created_ms = at_ms;
        record.pause_micros = 0;
        record.table.name = table_at.name.clone();
        record.table.families = table_at.families.clone();
        record.table.holds.clear();
        let mut written_bytes = 0;
        for region in &mut record.regions {
            region.families.retain(|f, _| families.contains_key(f));
        }
        for (index, family, file) in written {
            written_bytes += file.size;
            let region = &mut record.regions[index];
            region.read_point = region.read_point.max(file.max_seq);
            region.families.entry(family).or_default().push(file);
        }
        self.commit_snapshot(&record).await?;
        let info = SnapshotInfo {
            name: name.to_string(),
            table: table_at.name.clone(),
            created_ms: at_ms,
            regions: record.regions.len(),
            files: record.files().count(),
            bytes: record.bytes(),
            written_bytes,
            pause_micros: 0,
        };
        tracing::info!(
            snapshot = name,
            table = %table_at.name,
            at_ms,
            replayed_entries = replayed,
            written_bytes,
            "point-in-time snapshot taken"
        );
        Ok(info)
    }

    /// One file per region and family of `routed`, under the snapshot's
    /// directory; returns (region index, family, file).
    async fn write_routed(
        &self,
        id: &str,
        base: &SnapshotRecord,
        families: &HashMap<String, shoal_storage::region::FamilyConfig>,
        routed: RoutedCells,
    ) -> Result<Vec<(usize, String, FileRecord)>, ServiceError> {
        use futures::{StreamExt, TryStreamExt};
        let mut writes = Vec::new();
        for (index, by_family) in routed {
            let dir = files_dir(id, &base.regions[index].id);
            for (family, cells) in by_family {
                let Some(config) = families.get(&family).cloned() else {
                    continue; // A family dropped before the instant.
                };
                let bucket = self.inner.env.bucket.clone();
                let dir = dir.clone();
                writes.push(async move {
                    let file = write_cells_file(&bucket, &dir, &config, cells)
                        .await
                        .map_err(|e| {
                            ServiceError::Unavailable(format!("writing replayed writes: {e}"))
                        })?;
                    Ok::<_, ServiceError>(file.map(|f| (index, family, FileRecord::of(&f))))
                });
            }
        }
        let files: Vec<Option<(usize, String, FileRecord)>> = futures::stream::iter(writes)
            .buffer_unordered(WRITE_CONCURRENCY)
            .try_collect()
            .await?;
        Ok(files.into_iter().flatten().collect())
    }
}

/// Every region id `table` had at some instant of `[from_ms, to_ms]`
/// (live and split parents), from the catalog's history.
async fn table_regions_between(
    bucket: &shoal_storage::object::Bucket,
    table: &TableRecord,
    from_ms: i64,
    to_ms: i64,
) -> Result<HashSet<String>, ServiceError> {
    let versions = catalogs_between(bucket, from_ms, to_ms)
        .await
        .map_err(history_error)?;
    let mut out = HashSet::new();
    for catalog in &versions {
        for t in catalog.tables.iter().filter(|t| t.id == table.id) {
            out.extend(t.regions.iter().map(|r| r.id.clone()));
            out.extend(t.split_parents.iter().map(|p| p.region.id.clone()));
        }
    }
    Ok(out)
}

/// Decodes `entries` and puts each cell in the base region its row falls
/// in, by family.
fn route_cells(
    base: &SnapshotRecord,
    entries: Vec<TimedEntry>,
) -> Result<RoutedCells, ServiceError> {
    let starts: Vec<&Bytes> = base.regions.iter().map(|r| &r.start_row).collect();
    let mut routed = RoutedCells::new();
    for entry in entries {
        let cells = decode_payload(&entry.payload).map_err(|e| {
            ServiceError::FailedPrecondition(format!(
                "a WAL entry of region {} (seq {}) does not decode: {e}",
                entry.region, entry.seq
            ))
        })?;
        for cell in cells {
            // The last region starting at or before the row (the first
            // starts at the empty row).
            let index = starts
                .partition_point(|s| s.as_ref() <= cell.row.as_ref())
                .saturating_sub(1);
            let family = String::from_utf8_lossy(&cell.family).into_owned();
            routed
                .entry(index)
                .or_default()
                .entry(family)
                .or_default()
                .push(cell);
        }
    }
    Ok(routed)
}

/// A hidden name for a snapshot that lives only while a clone or restore
/// from an instant is made (a base of no table: housekeeping lets go of
/// one a crash left).
fn temporary_name() -> String {
    format!(
        "{BASE_PREFIX}tmp-{}.0",
        ulid::Ulid::new().to_string().to_ascii_lowercase()
    )
}

/// An instant as UTC text with its milliseconds.
fn show_ms(ms: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
    format!("{} ({ms} ms)", humantime::format_rfc3339_millis(t))
}
