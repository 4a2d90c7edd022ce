//! Loading a snapshot's regions: each region's files as one bulk load
//! (oldest first), `--parallel` regions at a time, going on past a region
//! end when the table's regions became narrower during the import.

use super::inputs::{by_age, hex};
use super::progress::Progress;
use anyhow::Context;
use shoal_client::Table;
use shoal_client::proto as pb;
use shoal_import::{HBaseSnapshot, HFileFacts, SnapshotRegion};
use std::collections::HashMap;

/// What loading one snapshot region did.
#[derive(Debug, Default, Clone)]
pub(super) struct RegionResult {
    pub(super) cells: u64,
    pub(super) duplicates: u64,
    pub(super) tagged: u64,
    pub(super) already: bool,
}

pub(super) async fn load_regions(
    table: &Table,
    snap: &HBaseSnapshot,
    facts: &HashMap<String, HFileFacts>,
    url: &str,
    parallel: usize,
    progress: &Progress,
) -> anyhow::Result<Vec<RegionResult>> {
    use futures::StreamExt;
    let results = futures::stream::iter(snap.regions.iter().map(|region| async move {
        let r = load_region(table, &snap.name, region, facts, url).await;
        progress.region_done(region.files.iter().map(|f| f.size).sum());
        r
    }))
    .buffered(parallel)
    .collect::<Vec<_>>()
    .await;
    results.into_iter().collect()
}

/// Sends one snapshot region's files; goes on past a region end when the
/// table's regions are narrower (a split during the import).
async fn load_region(
    table: &Table,
    snapshot: &str,
    region: &SnapshotRegion,
    facts: &HashMap<String, HFileFacts>,
    url: &str,
) -> anyhow::Result<RegionResult> {
    let mut result = RegionResult::default();
    if region.files.is_empty() {
        return Ok(result);
    }
    let mut files: Vec<pb::BulkLoadFile> = region
        .files
        .iter()
        .map(|f| pb::BulkLoadFile {
            family: f.family.clone(),
            location: url.to_string(),
            path: f.path.clone(),
        })
        .collect();
    by_age(&mut files, facts);
    let mut start = region.start.to_vec();
    loop {
        let key = format!(
            "hbase-snapshot:{snapshot}:{}:{}",
            region.encoded,
            hex(&start)
        );
        let answer = table
            .bulk_load(pb::BulkLoadRequest {
                table: String::new(),
                start_row: start.clone(),
                end_row: region.end.to_vec(),
                files: files.clone(),
                load_key: key,
            })
            .await
            .with_context(|| format!("loading region {}", region.encoded))?;
        result.cells += answer.cells;
        result.duplicates += answer.duplicates;
        result.tagged += answer.tagged_cells;
        result.already |= answer.already_loaded;
        let end = answer.region_end;
        if end.is_empty() || (!region.end.is_empty() && end[..] >= region.end[..]) {
            return Ok(result);
        }
        start = end;
    }
}
