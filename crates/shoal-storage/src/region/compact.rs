//! Compaction: rewrite several files of a store as one.
//!
//! - **Minor**: a size-tiered pick of a few consecutive (by age) files with
//!   bounded fan-in. Keeps every delete marker and drops only puts that a
//!   marker among the inputs masks, so it never changes what a read sees.
//! - **Major**: all files of a store; keeps exactly what a read at read point ∞
//!   sees with the family's max versions and TTL (see `versions`): delete
//!   markers, masked, expired and excess versions are dropped, as in HBase.
//!
//! Both keep, untouched, every cell above the oldest read point in progress
//! (HBase's smallest read point): a scan that began before such a cell was
//! visible still finds the versions beneath it.
//!
//! A compaction reads snapshots of immutable files, so reads and writes go on;
//! its result becomes live through a manifest commit that replaces the inputs
//! with the output, and the inputs are deleted later by GC once no reader
//! holds them.

use super::config::CompactionPolicy;
use super::flush::store_file_entry;
use super::kept_deletes::KeptDeletesCompaction;
use super::merge::{MergeIter, Source};
use super::store::{LiveFile, Store};
use super::versions::{FamilyResolver, KeepDeleted, MinorCompactionFilter, ResolveSpec};
use super::{Region, RegionError};
use crate::sst::{FileId, SstError};
use std::sync::atomic::Ordering;

/// What one store's compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionReport {
    /// The family.
    pub family: String,
    /// Major or minor.
    pub major: bool,
    /// Input files.
    pub inputs: usize,
    /// Bytes read.
    pub input_bytes: u64,
    /// Bytes written (0 if nothing survived).
    pub output_bytes: u64,
    /// Cells read.
    pub cells_in: u64,
    /// Cells written.
    pub cells_out: u64,
}

/// Picks consecutive files (oldest first) for a minor compaction: the longest
/// run of `min_files..=max_files` files in which no file is larger than `ratio`
/// times the others' total, preferring the smaller total on ties.
pub fn select_minor(sizes: &[u64], policy: &CompactionPolicy) -> Option<std::ops::Range<usize>> {
    let mut best: Option<(usize, u64, std::ops::Range<usize>)> = None;
    let min = policy.min_files.max(2);
    for start in 0..sizes.len() {
        for len in min..=policy.max_files.max(min) {
            let end = start + len;
            if end > sizes.len() {
                break;
            }
            let run = &sizes[start..end];
            let total: u64 = run.iter().sum();
            let ok = run
                .iter()
                .all(|&s| s as f64 <= policy.ratio * (total - s) as f64);
            if !ok {
                continue;
            }
            let better = match &best {
                None => true,
                Some((blen, btotal, _)) => len > *blen || (len == *blen && total < *btotal),
            };
            if better {
                best = Some((len, total, start..end));
            }
        }
    }
    best.map(|(_, _, r)| r)
}

impl Region {
    /// Compacts every store that has work: all files for a major compaction,
    /// a size-tiered selection for a minor one.
    /// Runs on the background runtime, if the environment has one.
    pub async fn compact(&self, major: bool) -> Result<Vec<CompactionReport>, RegionError> {
        let region = self.clone();
        self.on_background(async move { region.compact_now(major).await })
            .await
    }

    async fn compact_now(&self, major: bool) -> Result<Vec<CompactionReport>, RegionError> {
        self.check_open()?;
        let _slot = self
            .inner
            .env
            .compaction_slots
            .acquire()
            .await
            .map_err(|_| RegionError::Closed {
                region: self.id().to_string(),
            })?;
        let _guard = self.inner.compaction_lock.lock().await;
        // The region may have closed while this waited for the lock.
        self.check_open()?;
        let mut reports = Vec::new();
        for store in self.inner.stores.values() {
            // Oldest first, as the policy wants.
            let mut files: Vec<LiveFile> = store.files().iter().cloned().collect();
            files.reverse();
            let inputs: Vec<LiveFile> = if major {
                files
            } else {
                let sizes: Vec<u64> = files.iter().map(|f| f.entry.size).collect();
                match select_minor(&sizes, &self.inner.config.compaction) {
                    Some(r) => files[r].to_vec(),
                    None => continue,
                }
            };
            if inputs.is_empty() {
                continue;
            }
            reports.push(self.compact_files(store, inputs, major).await?);
        }
        self.inner.stats.compactions.fetch_add(1, Ordering::Relaxed);
        Ok(reports)
    }

    async fn compact_files(
        &self,
        store: &Store,
        inputs: Vec<LiveFile>,
        major: bool,
    ) -> Result<CompactionReport, RegionError> {
        let family = String::from_utf8_lossy(store.name()).into_owned();
        let mut report = CompactionReport {
            family: family.clone(),
            major,
            inputs: inputs.len(),
            input_bytes: inputs.iter().map(|f| f.entry.size).sum(),
            output_bytes: 0,
            cells_in: 0,
            cells_out: 0,
        };
        let sources = inputs
            .iter()
            .rev()
            .map(|f| Source::sst(&f.reader, self.key_range(), false, false))
            .collect();
        let mut merge = MergeIter::new(sources, false);
        let cache_output = report.input_bytes <= self.inner.env.cache_compaction_output_bytes;
        let (id, path, mut writer) = self.new_file_writer(store, cache_output).await?;
        let now = self.inner.env.clock.now_ms();
        let mut policy = CompactionKeep::new(store.config.retention, now, major);
        let keep_above = self.inner.mvcc.smallest_read_point();
        let mut row: Option<bytes::Bytes> = None;
        let result = async {
            while let Some(cell) = merge.next().await? {
                report.cells_in += 1;
                if row.as_deref() != Some(&cell.row[..]) {
                    row = Some(cell.row.clone());
                    policy.reset();
                }
                // A cell some read in progress cannot see yet is kept and
                // takes no part (its marker masks nothing for that read),
                // as HBase's compactions keep what is above their smallest
                // read point; a later compaction settles it.
                let keep = cell.seq > keep_above || policy.keep(&cell);
                if keep {
                    writer.add(&cell).await?;
                    report.cells_out += 1;
                }
            }
            Ok::<_, SstError>(())
        }
        .await;
        if let Err(e) = result {
            if let Err(abort) = writer.abort().await {
                tracing::warn!(path = %path, error = %abort, "aborting a failed compaction upload");
            }
            return Err(self.sst_error(e));
        }
        let output = if report.cells_out == 0 {
            writer.abort().await.map_err(|e| self.sst_error(e))?;
            None
        } else {
            let summary = writer.finish().await.map_err(|e| self.sst_error(e))?;
            report.output_bytes = summary.size;
            Some(store_file_entry(id, path, &summary))
        };

        let input_ids: Vec<FileId> = inputs.iter().map(|f| f.entry.id).collect();
        {
            let mut manifest = self.inner.manifest.lock().await;
            let ids = input_ids.clone();
            let out = output.clone();
            let fam = family.clone();
            manifest
                .commit(move |m| {
                    let files = m.stores.entry(fam).or_default();
                    // The output takes the place of the newest input.
                    let newest = files.iter().rposition(|f| ids.contains(&f.id));
                    let at = newest.map_or(files.len(), |p| {
                        files[..p].iter().filter(|f| !ids.contains(&f.id)).count()
                    });
                    files.retain(|f| !ids.contains(&f.id));
                    if let Some(o) = out {
                        files.insert(at.min(files.len()), o);
                    }
                })
                .await
                .map_err(|e| self.manifest_error(e))?;
        }
        let live = match output {
            Some(entry) => Some(self.open_new_file(store, entry).await?),
            None => None,
        };
        store.swap_files(&input_ids, live);
        if let Some(rows) = &self.inner.rows {
            rows.files_rewritten();
        }
        if let Some(cache) = &self.inner.env.cache {
            // A split child's inputs may be its parent's files, which the
            // sibling still reads: their blocks stay cached.
            for f in &inputs {
                if !self.is_reference(&f.entry) {
                    cache.evict_file(f.entry.id);
                }
            }
        }
        tracing::debug!(region = %self.id(), family = %family, major, inputs = report.inputs, cells_in = report.cells_in, cells_out = report.cells_out, "compacted");
        Ok(report)
    }

    /// Starts a background minor compaction when a store has many files.
    pub(crate) fn maybe_schedule_compaction(&self) {
        let trigger = self.inner.config.compaction_trigger_files;
        if !self
            .inner
            .stores
            .values()
            .any(|s| s.files().len() >= trigger)
        {
            return;
        }
        if self.inner.compaction_running.swap(true, Ordering::SeqCst) {
            return;
        }
        let region = self.clone();
        crate::background::spawn(self.inner.env.background.as_ref(), async move {
            match region.compact_now(false).await {
                Ok(reports) if !reports.is_empty() => {
                    // Inputs of the compaction become garbage once the grace period
                    // (and every reader) has passed; sweep what is already eligible.
                    let options = crate::manifest::GcOptions::default();
                    if let Err(e) = region.collect_garbage(&options).await {
                        tracing::warn!(region = %region.id(), error = %e, "garbage collection failed");
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(region = %region.id(), error = %e, "background compaction failed")
                }
            }
            region
                .inner
                .compaction_running
                .store(false, Ordering::SeqCst);
        });
    }
}

/// What a compaction keeps of each (row, family): a major one what a read
/// at read point ∞ sees (with `KEEP_DELETED_CELLS`, HBase's retaining
/// rules: `kept_deletes.rs`), a minor one every marker and every put no
/// masking marker covers.
enum CompactionKeep {
    Major(FamilyResolver),
    MajorKeepingDeletes(KeptDeletesCompaction),
    Minor(MinorCompactionFilter),
}

impl CompactionKeep {
    fn new(retention: super::versions::Retention, now_ms: i64, major: bool) -> CompactionKeep {
        if !major {
            CompactionKeep::Minor(MinorCompactionFilter::new(retention, now_ms))
        } else if retention.keep_deleted == KeepDeleted::False {
            CompactionKeep::Major(FamilyResolver::new(ResolveSpec::major_compaction(
                retention, now_ms,
            )))
        } else {
            CompactionKeep::MajorKeepingDeletes(KeptDeletesCompaction::new(retention, now_ms))
        }
    }

    fn reset(&mut self) {
        match self {
            CompactionKeep::Major(r) => r.reset(),
            CompactionKeep::MajorKeepingDeletes(k) => k.reset(),
            CompactionKeep::Minor(m) => m.reset(),
        }
    }

    fn keep(&mut self, cell: &crate::cell::Cell) -> bool {
        match self {
            CompactionKeep::Major(r) => r.accept(cell),
            CompactionKeep::MajorKeepingDeletes(k) => k.keep(cell),
            CompactionKeep::Minor(m) => m.keep(cell),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minor_selection_prefers_long_runs_of_similar_files() {
        let p = CompactionPolicy::default();
        assert_eq!(select_minor(&[10, 10], &p), None);
        assert_eq!(select_minor(&[10, 10, 10], &p), Some(0..3));
        // A huge old file is left alone.
        assert_eq!(select_minor(&[1000, 10, 10, 10, 10], &p), Some(1..5));
        // Fan-in is bounded.
        let many = vec![10u64; 25];
        assert_eq!(select_minor(&many, &p).map(|r| r.len()), Some(10));
    }
}
