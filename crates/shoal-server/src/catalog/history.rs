//! The catalog's history for the point-in-time window: which versions were
//! current between two instants, and pruning old versions by age.
//!
//! Every version is an immutable object stamped with its commit time
//! (`Catalog::committed_ms`). With the window on, commits keep old versions
//! ([`CatalogStore::keep_history`](super::CatalogStore::keep_history)) and
//! [`prune_history`] deletes those older than the history the window needs;
//! the newest [`KEEP_VERSIONS`] always stay.

use super::schema::Catalog;
use super::store::{CatalogError, KEEP_VERSIONS, PREFIX, parse_version};
use shoal_storage::object::{Bucket, ObjectInfo};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Listing times are whole seconds on some stores and clocks differ by a
/// little: versions listed as written this long before an instant are
/// still read, to find the one current at it by its own stamp.
const LISTING_SLACK_MS: i64 = 10_000;

fn ms_of(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Versions in the bucket, oldest first.
async fn listed_versions(bucket: &Bucket) -> Result<Vec<(u64, ObjectInfo)>, CatalogError> {
    let mut versions: Vec<(u64, ObjectInfo)> = bucket
        .list(PREFIX)
        .await?
        .into_iter()
        .filter_map(|o| parse_version(&o.path).map(|v| (v, o)))
        .collect();
    versions.sort_unstable_by_key(|(v, _)| *v);
    Ok(versions)
}

/// Every catalog version that was current at some instant of
/// `[from_ms, to_ms]`, oldest first. [`CatalogError::HistoryGone`] if the
/// version current at `from_ms` is no longer kept.
pub async fn catalogs_between(
    bucket: &Bucket,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<Catalog>, CatalogError> {
    let versions = listed_versions(bucket).await?;
    let first_candidate = versions
        .iter()
        .position(|(_, o)| ms_of(o.last_modified) >= from_ms - LISTING_SLACK_MS)
        .unwrap_or(versions.len());
    let start = first_candidate.saturating_sub(1);
    let mut read: Vec<(u64, Catalog)> = Vec::new();
    for (version, info) in &versions[start..] {
        let data = bucket.get(&info.path).await?;
        let mut catalog: Catalog =
            serde_json::from_slice(&data).map_err(|e| CatalogError::Corrupt {
                path: info.path.clone(),
                reason: e.to_string(),
            })?;
        if catalog.committed_ms == 0 {
            catalog.committed_ms = ms_of(info.last_modified);
        }
        if catalog.committed_ms > to_ms {
            break;
        }
        read.push((*version, catalog));
    }
    let current_at_from = read.iter().rposition(|(_, c)| c.committed_ms <= from_ms);
    let first_kept = versions.get(start).map(|(v, _)| *v);
    match current_at_from {
        Some(i) => Ok(read.into_iter().skip(i).map(|(_, c)| c).collect()),
        // Nothing kept was committed by `from_ms`: fine only if the first
        // version ever is still here (there was no catalog before it).
        None if first_kept.is_none_or(|v| v == 1) => Ok(read.into_iter().map(|(_, c)| c).collect()),
        None => Err(CatalogError::HistoryGone { from_ms }),
    }
}

/// Deletes catalog versions older than the newest [`KEEP_VERSIONS`] that
/// were written more than `keep` ago (all such, when `keep` is `None`).
/// Returns how many went.
pub async fn prune_history(
    bucket: &Bucket,
    keep: Option<Duration>,
    now: SystemTime,
) -> Result<usize, CatalogError> {
    let versions = listed_versions(bucket).await?;
    let Some(&(newest, _)) = versions.last() else {
        return Ok(0);
    };
    let cutoff = keep.and_then(|k| now.checked_sub(k));
    let old: Vec<String> = versions
        .into_iter()
        .filter(|(v, o)| *v + KEEP_VERSIONS <= newest && cutoff.is_none_or(|c| o.last_modified < c))
        .map(|(_, o)| o.path)
        .collect();
    let n = old.len();
    if n > 0 {
        bucket.delete_many(old).await?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CatalogStore;
    use crate::catalog::schema::{FamilySchema, TableRecord};

    fn table(name: &str) -> TableRecord {
        TableRecord {
            name: name.into(),
            id: name.into(),
            enabled: true,
            families: vec![FamilySchema::new("cf")],
            regions: vec![],
            split_parents: vec![],
            holds: vec![],
            reset_ms: 0,
        }
    }

    #[tokio::test]
    async fn versions_current_in_a_range_and_pruning_by_age() {
        let bucket = Bucket::memory();
        let mut store = CatalogStore::open(bucket.clone())
            .await
            .expect("open")
            .keep_history(true);
        let mut stamps = Vec::new();
        for i in 0..15 {
            let mut next = store.current().clone();
            next.tables.push(table(&format!("t{i:02}")));
            store.commit(next).await.expect("commit");
            stamps.push(store.current().committed_ms);
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        // All 15 are kept.
        let all = catalogs_between(&bucket, 0, i64::MAX).await.expect("all");
        assert_eq!(all.len(), 15);
        // Between the 5th commit and just before the 8th: versions 5, 6, 7.
        let some = catalogs_between(&bucket, stamps[4], stamps[7] - 1)
            .await
            .expect("some");
        let counts: Vec<usize> = some.iter().map(|c| c.tables.len()).collect();
        assert_eq!(counts, vec![5, 6, 7]);
        // Pruning with a long keep deletes nothing; with none, all but 10.
        let kept = prune_history(&bucket, Some(Duration::from_secs(3600)), SystemTime::now())
            .await
            .expect("prune");
        assert_eq!(kept, 0);
        let gone = prune_history(&bucket, None, SystemTime::now())
            .await
            .expect("prune");
        assert_eq!(gone, 5);
        let e = catalogs_between(&bucket, stamps[1], stamps[2])
            .await
            .expect_err("pruned");
        assert!(matches!(e, CatalogError::HistoryGone { .. }), "{e}");
        let late = catalogs_between(&bucket, stamps[12], i64::MAX)
            .await
            .expect("kept");
        assert_eq!(late.len(), 3);
    }
}
