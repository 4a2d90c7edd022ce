//! What a split needs from a region: its size, whether it still reads its
//! parent's files (references), a split point, and the child manifests.
//!
//! A split never copies data. The parent is closed (flushed), then each child
//! gets a manifest of its own that lists the parent's files with the child's
//! key bounds; every read and compaction of a child is clamped to its range,
//! so the sibling's rows in a shared file are invisible to it. A child's first
//! major compaction rewrites the shared files into its own directory; once
//! neither child references them, the parent's directory can be deleted
//! (`parent_released`). A region that still has references does not split
//! again (as in HBase): its size counts its parents' whole files.

use super::{Region, RegionError};
use crate::cell::KeyRef;
use crate::manifest::{Manifest, ManifestStore, StoreFile};
use crate::object::Bucket;
use crate::sst::ScanRange;
use bytes::Bytes;
use std::ops::Bound;
use std::sync::atomic::Ordering;

/// One child of a split: its identity and range.
#[derive(Debug, Clone)]
pub struct SplitChild {
    /// The child's region id.
    pub region_id: String,
    /// The child's object prefix.
    pub region_dir: String,
    /// First row (inclusive); empty = unbounded.
    pub start_row: Bytes,
    /// Row the child ends before; empty = unbounded.
    pub end_row: Bytes,
}

impl Region {
    /// Bytes of the region's live files plus its memstores.
    pub fn size_bytes(&self) -> u64 {
        let files: u64 = self
            .inner
            .stores
            .values()
            .flat_map(|s| s.files().iter().map(|f| f.entry.size).collect::<Vec<_>>())
            .sum();
        files + self.memstore_size() as u64
    }

    /// [`Region::cached_fraction`] as of at most about two seconds ago, for
    /// status pages and metrics that poll: the exact figure walks every
    /// block, so a stale one is refreshed on the background runtime while the
    /// previous value is returned (the first call computes it in place).
    pub fn cached_fraction_recent(&self) -> Option<f64> {
        const FRESH: std::time::Duration = std::time::Duration::from_secs(2);
        let mut memo = self
            .inner
            .cache_memo
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        match *memo {
            Some((at, v)) if at.elapsed() < FRESH => v,
            Some((_, v)) => {
                if !self
                    .inner
                    .cache_memo_refreshing
                    .swap(true, Ordering::SeqCst)
                {
                    let region = self.clone();
                    crate::background::spawn(self.inner.env.background.as_ref(), async move {
                        let fresh = region.cached_fraction();
                        *region
                            .inner
                            .cache_memo
                            .lock()
                            .unwrap_or_else(|e| e.into_inner()) =
                            Some((std::time::Instant::now(), fresh));
                        region
                            .inner
                            .cache_memo_refreshing
                            .store(false, Ordering::SeqCst);
                    });
                }
                v
            }
            None => {
                let v = self.cached_fraction();
                *memo = Some((std::time::Instant::now(), v));
                v
            }
        }
    }

    /// Fraction of the region's data blocks (by bytes) held in the block
    /// cache; `None` without a cache or without files. Walks every block.
    pub fn cached_fraction(&self) -> Option<f64> {
        let f = self.cache_footprint()?;
        (f.total > 0).then(|| f.cached as f64 / f.total as f64)
    }

    /// The addresses of the region's data blocks, in every live file (a
    /// split child's shared parent files whole: their blocks are cached
    /// whole). What a server keeps of a region it gave up, to report where
    /// its blocks still are.
    pub fn data_blocks(&self) -> Vec<crate::sst::BlockAddr> {
        let mut out = Vec::new();
        for store in self.inner.stores.values() {
            for f in store.files().iter() {
                out.extend((0..f.reader.data_block_count()).filter_map(|i| f.reader.block_addr(i)));
            }
        }
        out
    }

    /// Where the region's data blocks are cached now (`None` without a
    /// cache).
    pub fn cache_footprint(&self) -> Option<crate::cache::Footprint> {
        let cache = self.inner.env.cache.as_ref()?;
        Some(cache.footprint(&self.data_blocks()))
    }

    /// True if the region still reads files that live under another region
    /// of its own table (its split parent's): it compacts them into files
    /// of its own so the parent's can go. Files of another table (a clone
    /// reads its snapshot's where they are) are not references: they are
    /// the clone's to read until its own compactions replace them.
    pub fn has_references(&self) -> bool {
        let dir = self.inner.config.region_dir.as_str();
        self.inner.stores.values().any(|s| {
            s.files()
                .iter()
                .any(|f| self.is_reference(&f.entry) && same_table(dir, &f.entry.path))
        })
    }

    pub(crate) fn is_reference(&self, entry: &StoreFile) -> bool {
        let dir = self.inner.config.region_dir.trim_end_matches('/');
        !entry
            .path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
    }

    /// Starts a background major compaction if the region still reads its
    /// split parent's files and no compaction of its own is running. Returns
    /// true if one was started.
    pub fn compact_references_in_background(&self) -> bool {
        if !self.has_references()
            || self
                .inner
                .compaction_running
                .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return false;
        }
        let region = self.clone();
        crate::background::spawn(self.inner.env.background.as_ref(), async move {
            match region.compact(true).await {
                Ok(_) => {
                    let options = crate::manifest::GcOptions::default();
                    if let Err(e) = region.collect_garbage(&options).await {
                        tracing::warn!(region = %region.id(), error = %e, "garbage collection failed");
                    }
                }
                Err(e) => {
                    tracing::warn!(region = %region.id(), error = %e, "compaction of a split child failed; it is retried later")
                }
            }
            region
                .inner
                .compaction_running
                .store(false, std::sync::atomic::Ordering::SeqCst);
        });
        true
    }

    /// The region's current manifest (after a close: its final one).
    pub async fn current_manifest(&self) -> Manifest {
        self.inner.manifest.lock().await.current().clone()
    }

    /// The region's key range as a cell range.
    pub(crate) fn key_range(&self) -> ScanRange {
        let cfg = &self.inner.config;
        ScanRange {
            start: if cfg.start_row.is_empty() {
                Bound::Unbounded
            } else {
                Bound::Included(crate::cell::CellKey::first_of_row(cfg.start_row.clone()))
            },
            end: if cfg.end_row.is_empty() {
                Bound::Unbounded
            } else {
                Bound::Excluded(crate::cell::CellKey::first_of_row(cfg.end_row.clone()))
            },
        }
    }

    /// A row near the middle of the region's data, strictly inside its range:
    /// the middle row of the middle data block of its largest file (blocks
    /// further out are tried when a reference file's middle lies outside the
    /// range). `None` if no file has a row to split at.
    pub async fn split_point(&self) -> Result<Option<Bytes>, RegionError> {
        let largest = self
            .inner
            .stores
            .values()
            .flat_map(|s| s.files().iter().cloned().collect::<Vec<_>>())
            .max_by_key(|f| f.entry.size);
        let Some(file) = largest else {
            return Ok(None);
        };
        let blocks = file.reader.data_block_count();
        let cfg = &self.inner.config;
        let mid = blocks / 2;
        let order = (0..blocks).flat_map(|d| {
            let up = mid + d;
            let down = mid.checked_sub(d).filter(|_| d > 0);
            [Some(up).filter(|&u| u < blocks), down]
        });
        for i in order.flatten() {
            let block = file
                .reader
                .read_block_with(i, false)
                .await
                .map_err(|e| self.sst_error(e))?;
            let corrupt = |e: crate::sst::block::BlockError| {
                self.sst_error(crate::sst::SstError::corruption(
                    &file.entry.path,
                    file.reader.block_addr(i).map_or(0, |a| a.offset),
                    e.0,
                ))
            };
            let mut rows: Vec<Bytes> = Vec::new();
            let mut iter = block.iter();
            let mut valid = iter.seek_to_first().map_err(corrupt)?;
            while valid {
                let key = KeyRef::decode(iter.key()).map_err(|source| RegionError::Cell {
                    region: self.id().to_string(),
                    source,
                })?;
                if rows.last().is_none_or(|r| &r[..] != key.row) {
                    rows.push(Bytes::copy_from_slice(key.row));
                }
                valid = iter.advance().map_err(corrupt)?;
            }
            let inside: Vec<Bytes> = rows
                .into_iter()
                .filter(|r| *r > cfg.start_row && cfg.contains_row(r))
                .collect();
            if !inside.is_empty() {
                return Ok(Some(inside[inside.len() / 2].clone()));
            }
        }
        Ok(None)
    }
}

/// Writes the manifests of a split's two children: each lists the parent's
/// files that overlap its range, and starts at the parent's sequence numbers.
/// `parent` is the parent's final manifest (after its closing flush).
/// Idempotent: a child whose manifest already exists (a retried split) is
/// left as it is.
pub async fn write_child_manifests(
    bucket: &Bucket,
    parent: &Manifest,
    children: &[SplitChild],
) -> Result<(), crate::manifest::ManifestError> {
    for child in children {
        let store = ManifestStore::new(bucket.clone(), child.region_dir.clone());
        if store.load_latest().await?.is_some() {
            continue;
        }
        let mut writer = store
            .open_owner(child.start_row.clone(), child.end_row.clone())
            .await?;
        let overlaps = |f: &StoreFile| {
            (child.end_row.is_empty() || f.first_row < child.end_row)
                && f.last_row >= child.start_row
        };
        let stores: std::collections::BTreeMap<String, Vec<StoreFile>> = parent
            .stores
            .iter()
            .map(|(family, files)| {
                (
                    family.clone(),
                    files.iter().filter(|f| overlaps(f)).cloned().collect(),
                )
            })
            .collect();
        let (flushed, max) = (parent.flushed_seq, parent.max_seq);
        // A bulk load resumed after the split finds its key in each child.
        let loads = parent.loads.clone();
        writer
            .commit(move |m| {
                m.stores = stores;
                m.loads = loads;
                m.flushed_seq = flushed;
                m.max_seq = max;
            })
            .await?;
    }
    Ok(())
}

/// True when no current manifest of `children` lists a file under
/// `parent_dir`: the parent's files may then be deleted.
pub async fn parent_released(
    bucket: &Bucket,
    parent_dir: &str,
    children_dirs: &[String],
) -> Result<bool, crate::manifest::ManifestError> {
    let prefix = format!("{}/", parent_dir.trim_end_matches('/'));
    for dir in children_dirs {
        let store = ManifestStore::new(bucket.clone(), dir.clone());
        if let Some(m) = store.load_latest().await?
            && m.files().any(|f| f.path.starts_with(&prefix))
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// True if file `path` (`<table>/<region>/<family>/<file>` at its end) lies
/// under the same table directory as `region_dir` (`<table>/<region>` at
/// its end): a split reference, not a file shared from another table.
pub(crate) fn same_table(region_dir: &str, path: &str) -> bool {
    let table_of_region = region_dir.trim_end_matches('/').rsplit('/').nth(1);
    let table_of_file = path.rsplit('/').nth(3);
    match (table_of_region, table_of_file) {
        (Some(a), Some(b)) => {
            a == b && region_dir.matches('/').count() == path.matches('/').count() - 2
        }
        _ => false,
    }
}

#[cfg(test)]
mod same_table_tests {
    use super::same_table;

    #[test]
    fn a_parent_file_is_a_reference_and_a_snapshot_file_is_not() {
        let dir = "data/13/tbl1/child";
        assert!(same_table(dir, "data/b5/tbl1/parent/cf/01.sst"));
        assert!(!same_table(dir, "data/b5/tbl2/other/cf/01.sst"));
        assert!(!same_table(dir, "snapshots/s1/files/r1/cf/01.sst"));
        assert!(same_table("t1/r7", "t1/r6/cf/x.sst"));
        assert!(!same_table("t1/r7", "cf/x.sst"));
    }
}
