//! The closing check of an import: every region read back (all versions),
//! printed beside what its load committed.

use super::load::RegionResult;
use super::progress::truncate;
use shoal_client::Table;
use shoal_import::HBaseSnapshot;

/// Reads every row back (all versions) and prints what was loaded.
pub(super) async fn verify(
    table: &Table,
    snap: &HBaseSnapshot,
    results: &[RegionResult],
) -> anyhow::Result<()> {
    use futures::TryStreamExt;
    let max_versions = snap
        .families
        .iter()
        .map(|f| f.max_versions)
        .max()
        .unwrap_or(1);
    eprintln!(
        "{:<34} {:>12} {:>12} {:>10}",
        "region (start row)", "cells loaded", "cells read", "rows read"
    );
    let (mut loaded, mut visible) = (0u64, 0u64);
    for (region, r) in snap.regions.iter().zip(results) {
        let mut scan = shoal_client::Scan::new().versions(max_versions);
        if !region.start.is_empty() {
            scan = scan.start(&region.start);
        }
        if !region.end.is_empty() {
            scan = scan.stop(&region.end);
        }
        let rows: Vec<shoal_client::proto::Row> = table.scan(scan).try_collect().await?;
        let cells: u64 = rows.iter().map(|r| r.cells.len() as u64).sum();
        let shown = if r.already {
            "(earlier)".to_string()
        } else {
            r.cells.to_string()
        };
        eprintln!(
            "{:<34} {:>12} {:>12} {:>10}",
            truncate(&String::from_utf8_lossy(&region.start), 34),
            shown,
            cells,
            rows.len()
        );
        loaded += r.cells;
        visible += cells;
    }
    let tagged: u64 = results.iter().map(|r| r.tagged).sum();
    eprintln!(
        "{loaded} cells loaded (delete markers and versions included); {visible} cells visible \
         to reads (deletes, TTLs and version limits applied)"
    );
    if tagged > 0 {
        eprintln!("note: {tagged} cells carried HBase tags, which Shoal does not keep");
    }
    Ok(())
}
