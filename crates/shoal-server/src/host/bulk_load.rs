//! Bulk load on the host: HBase HFiles named by location and path are read
//! (in place on this machine, else through 8 MiB ranged GETs; block by
//! block, bounded memory) and committed into the region holding the request's first row,
//! clipped to that region's range and to the request's, in one manifest
//! commit per region ([`shoal_storage::region::Region::ingest`]). The
//! answer says where the region ends, so a caller whose files span regions
//! (or whose region split meanwhile) goes on from there — as HBase's
//! `BulkLoadHFilesTool` re-splits its queue when regions change.
//!
//! With `whole_files` (HBase's native RPC), a file reaching outside the
//! region loads nothing (the outcome says so) instead of being clipped.
//!
//! The server reads any location its process can: bulk load is an admin
//! operation (CREATE or ADMIN on the table, as HBase's AccessController
//! asks), and the inputs are checked as HFiles before anything is written.

use super::Host;
use crate::error::ServiceError;
use bytes::Bytes;
use shoal_import::{ReadStats, RowRange, open_hfile};
use shoal_storage::object::{Bucket, ObjectStoreConfig};
use shoal_storage::region::{IngestFile, IngestReport, Region, RegionError};
use std::collections::HashMap;
use std::sync::Arc;

/// One input HFile.
#[derive(Debug, Clone)]
pub struct LoadInput {
    /// Its column family.
    pub family: Bytes,
    /// The store holding it, as a URL (`file:///dir`, `s3://bucket/prefix`).
    pub location: String,
    /// Its path under `location`.
    pub path: String,
}

/// A bulk load of some rows of a table.
#[derive(Debug, Clone)]
pub struct BulkLoad {
    /// The rows: the region holding `range.start` takes its part.
    pub range: RowRange,
    /// The inputs, oldest first.
    pub files: Vec<LoadInput>,
    /// Makes a retry a no-op (see [`Region::ingest`]).
    pub load_key: Option<String>,
    /// HBase's rule: every input must lie wholly inside the region (a
    /// caller that grouped its files by region learns its grouping is
    /// stale). If one does not, nothing is loaded and the outcome's
    /// `refused` says which. Otherwise inputs are clipped to the region.
    pub whole_files: bool,
}

/// What one region took.
#[derive(Debug, Clone, Default)]
pub struct BulkLoadOutcome {
    /// Where that region ends (empty: the end of the table).
    pub region_end: Bytes,
    /// The region's report.
    pub report: IngestReport,
    /// Cells read from the inputs.
    pub cells_read: u64,
    /// Cells that carried tags (dropped).
    pub tagged_cells: u64,
    /// With `whole_files`: why nothing was loaded (an input reaches
    /// outside the region).
    pub refused: Option<String>,
}

impl Host {
    /// Loads `load` into the region of `table` holding its first row.
    pub async fn bulk_load(
        &self,
        table: &str,
        load: BulkLoad,
    ) -> Result<BulkLoadOutcome, ServiceError> {
        if load.files.is_empty() {
            return Err(ServiceError::InvalidArgument(
                "a bulk load needs at least one file".into(),
            ));
        }
        self.config()
            .limits
            .check_batch(load.files.len(), "bulk-load files")?;
        let mut stores: HashMap<String, Bucket> = HashMap::new();
        for f in &load.files {
            if !stores.contains_key(&f.location) {
                stores.insert(f.location.clone(), open_location(&f.location).await?);
            }
        }
        let first_row = if load.range.start.is_empty() {
            // The table's first region: any row sorts at or after "".
            Bytes::from_static(b"\0")
        } else {
            load.range.start.clone()
        };
        let stores = Arc::new(stores);
        let load = Arc::new(load);
        self.with_region(table, &first_row, false, |region| {
            let (stores, load) = (stores.clone(), load.clone());
            async move { load_into(region, &stores, &load).await }
        })
        .await
    }
}

/// Opens the inputs clipped to `region` and commits them there.
async fn load_into(
    region: Region,
    stores: &HashMap<String, Bucket>,
    load: &BulkLoad,
) -> Result<BulkLoadOutcome, RegionError> {
    let config = region.config();
    let range = if load.whole_files {
        // Every input is checked to lie in the region: nothing to clip.
        RowRange {
            start: config.start_row.clone(),
            end: config.end_row.clone(),
        }
    } else {
        RowRange {
            start: std::cmp::max(load.range.start.clone(), config.start_row.clone()),
            end: match (load.range.end.is_empty(), config.end_row.is_empty()) {
                (true, _) => config.end_row.clone(),
                (false, true) => load.range.end.clone(),
                (false, false) => std::cmp::min(load.range.end.clone(), config.end_row.clone()),
            },
        }
    };
    let source_err = |e: shoal_import::ImportError| RegionError::IngestSource {
        region: region.id().to_string(),
        reason: e.to_string(),
    };
    let mut files: Vec<IngestFile> = Vec::with_capacity(load.files.len());
    let mut stats: Vec<Arc<ReadStats>> = Vec::with_capacity(load.files.len());
    let region_range = RowRange {
        start: config.start_row.clone(),
        end: config.end_row.clone(),
    };
    for input in &load.files {
        let Some(bucket) = stores.get(&input.location) else {
            continue;
        };
        let opened = open_hfile(bucket, &input.path, input.family.clone(), range.clone())
            .await
            .map_err(source_err)?;
        if load.whole_files
            && let Some(span) = &opened.span
            && !(region_range.contains(&span.first) && region_range.contains(&span.last))
        {
            // Dropping the opened files stops their readers.
            return Ok(BulkLoadOutcome {
                region_end: config.end_row.clone(),
                refused: Some(format!(
                    "{}/{} spans rows {:?} to {:?}, not all in region {} (rows {:?} to {:?}, empty: open)",
                    input.location.trim_end_matches('/'),
                    input.path,
                    span.first,
                    span.last,
                    region.id(),
                    config.start_row,
                    config.end_row,
                )),
                ..Default::default()
            });
        }
        files.push(opened.file);
        stats.push(opened.stats);
    }
    let report = region.ingest(load.load_key.clone(), files).await?;
    Ok(BulkLoadOutcome {
        region_end: config.end_row.clone(),
        report,
        cells_read: stats.iter().map(|s| s.cells_read()).sum(),
        tagged_cells: stats.iter().map(|s| s.cells_with_tags()).sum(),
        refused: None,
    })
}

/// The store at `url`.
async fn open_location(url: &str) -> Result<Bucket, ServiceError> {
    let bad = |e: shoal_storage::object::ObjectError| {
        ServiceError::InvalidArgument(format!("bulk load location {url:?}: {e}"))
    };
    let config = ObjectStoreConfig::from_url(url).map_err(bad)?;
    Bucket::open(&config).await.map_err(bad)
}
