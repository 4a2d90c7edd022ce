//! Garbage collection of a region's old manifests and unreferenced SST files: the
//! options, the report, and the plan — a pure function from one listing of the region
//! directory to the objects to delete. The I/O around it is in
//! [`ManifestWriter::gc`](super::ManifestWriter::gc); the rules and why they are safe are
//! in `docs/manifest.md` §3.
//!
//! Invariants of [`plan`]: it never schedules the newest manifest, the first (lowest
//! present) manifest of any epoch, or a manifest that is still readable; and never an
//! SST that a readable manifest references (by id or path), that is pinned, that is
//! younger than the grace period, or whose name is not a ULID.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::sst::FileId;

/// How GC decides what is old enough to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcOptions {
    /// How long a superseded manifest stays readable, and how old an unreferenced file
    /// must be before it is deleted (default 1 hour). Flushes and compactions must commit
    /// a file within this long of generating its [`FileId`].
    pub grace: Duration,
    /// The time GC judges ages against (normally `SystemTime::now()`).
    pub now: SystemTime,
}

impl GcOptions {
    /// The default grace period.
    pub const DEFAULT_GRACE: Duration = Duration::from_secs(3600);

    /// Options with the default grace period, judged at `now`.
    pub fn at(now: SystemTime) -> GcOptions {
        GcOptions {
            grace: GcOptions::DEFAULT_GRACE,
            now,
        }
    }
}

impl Default for GcOptions {
    fn default() -> GcOptions {
        GcOptions::at(SystemTime::now())
    }
}

/// What one GC run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Manifests deleted.
    pub manifests_deleted: usize,
    /// Manifests kept (the newest, readable ones, and epoch-first ones).
    pub manifests_retained: usize,
    /// Of the retained manifests, those kept only because they are the first of their
    /// epoch (the fence slots a zombie owner could target).
    pub epoch_fences_retained: usize,
    /// SST files deleted.
    pub ssts_deleted: usize,
    /// SST files kept because a readable manifest references them.
    pub ssts_referenced: usize,
    /// SST files kept (unreferenced) because a reader pinned them.
    pub ssts_pinned: usize,
    /// SST files kept (unreferenced, unpinned) because they are younger than the grace
    /// period, e.g. written by a flush that has not committed yet.
    pub ssts_young: usize,
    /// `*.sst` objects whose name is not `<ULID>.sst`; never deleted.
    pub ssts_unrecognized: usize,
}

/// One manifest as GC sees it.
#[derive(Debug, Clone)]
pub(crate) struct ListedManifest {
    pub(crate) seq: u64,
    pub(crate) path: String,
    pub(crate) last_modified: SystemTime,
    pub(crate) summary: Arc<ManifestSummary>,
}

/// The parts of a decoded manifest GC needs; immutable, so cached by the writer.
#[derive(Debug, Clone)]
pub(crate) struct ManifestSummary {
    pub(crate) epoch: u64,
    pub(crate) files: Vec<(FileId, String)>,
}

impl ManifestSummary {
    pub(crate) fn of(m: &super::Manifest) -> ManifestSummary {
        ManifestSummary {
            epoch: m.epoch,
            files: m.files().map(|f| (f.id, f.path.clone())).collect(),
        }
    }
}

/// One `*.sst` object found under the region dir.
#[derive(Debug, Clone)]
pub(crate) struct ListedSst {
    pub(crate) path: String,
    /// Parsed from the file stem; `None` if it is not a ULID.
    pub(crate) id: Option<FileId>,
}

impl ListedSst {
    pub(crate) fn new(path: String) -> ListedSst {
        let stem = path
            .rsplit('/')
            .next()
            .and_then(|name| name.strip_suffix(".sst"))
            .unwrap_or_default();
        let id = FileId::parse(stem);
        ListedSst { path, id }
    }
}

/// What to delete.
#[derive(Debug, Default)]
pub(crate) struct GcPlan {
    pub(crate) manifests: Vec<String>,
    pub(crate) manifest_seqs: Vec<u64>,
    pub(crate) ssts: Vec<String>,
    pub(crate) report: GcReport,
}

/// When the file with this id was started (the ULID's millisecond timestamp).
pub(crate) fn file_time(id: FileId) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis((id.0 >> 80) as u64)
}

/// True if `t + grace` is still after `now`.
fn within_grace(t: SystemTime, options: &GcOptions) -> bool {
    t.checked_add(options.grace)
        .is_none_or(|end| end > options.now)
}

/// Plans one GC run. `manifests` are every manifest present, in any order.
pub(crate) fn plan(
    manifests: &[ListedManifest],
    ssts: &[ListedSst],
    options: &GcOptions,
    is_pinned: impl Fn(FileId) -> bool,
) -> GcPlan {
    let mut sorted: Vec<&ListedManifest> = manifests.iter().collect();
    sorted.sort_by_key(|m| m.seq);
    let mut out = GcPlan::default();
    let mut seen_epochs = HashSet::new();
    let mut referenced_ids = HashSet::new();
    let mut referenced_paths = HashSet::new();
    for (i, m) in sorted.iter().enumerate() {
        let first_of_epoch = seen_epochs.insert(m.summary.epoch);
        // Superseded when the next present slot was written (conservative if slots in
        // between are gone: they were written earlier still).
        let readable = match sorted.get(i + 1) {
            None => true,
            Some(next) => within_grace(next.last_modified, options),
        };
        if readable {
            for (id, path) in &m.summary.files {
                referenced_ids.insert(*id);
                referenced_paths.insert(path.as_str());
            }
        }
        if readable || first_of_epoch {
            out.report.manifests_retained += 1;
            if !readable {
                out.report.epoch_fences_retained += 1;
            }
        } else {
            out.manifests.push(m.path.clone());
            out.manifest_seqs.push(m.seq);
            out.report.manifests_deleted += 1;
        }
    }
    for sst in ssts {
        let Some(id) = sst.id else {
            out.report.ssts_unrecognized += 1;
            continue;
        };
        if referenced_ids.contains(&id) || referenced_paths.contains(sst.path.as_str()) {
            out.report.ssts_referenced += 1;
        } else if is_pinned(id) {
            out.report.ssts_pinned += 1;
        } else if within_grace(file_time(id), options) {
            out.report.ssts_young += 1;
        } else {
            out.ssts.push(sst.path.clone());
            out.report.ssts_deleted += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_700_000_000_000;

    fn at(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms)
    }

    fn id(ms: u64, low: u128) -> FileId {
        FileId((u128::from(ms) << 80) | low)
    }

    fn m(seq: u64, epoch: u64, written_ms: u64, files: &[FileId]) -> ListedManifest {
        ListedManifest {
            seq,
            path: format!("r/manifest/{seq:020}"),
            last_modified: at(written_ms),
            summary: Arc::new(ManifestSummary {
                epoch,
                files: files
                    .iter()
                    .map(|f| (*f, format!("r/cf/{f}.sst")))
                    .collect(),
            }),
        }
    }

    #[test]
    fn keeps_newest_epoch_firsts_and_readable() {
        let (a, b, c) = (id(T0, 1), id(T0, 2), id(T0, 3));
        let manifests = vec![
            m(1, 1, T0, &[]),
            m(2, 1, T0 + 10, &[a]),
            m(3, 2, T0 + 20, &[a]), // fence of epoch 2
            m(4, 2, T0 + 30, &[a, b]),
            m(5, 2, T0 + 40, &[c]),
            m(6, 3, T0 + 50_000, &[c]), // fence of epoch 3, newest
        ];
        let ssts: Vec<ListedSst> = [a, b, c]
            .iter()
            .map(|f| ListedSst::new(format!("r/cf/{f}.sst")))
            .chain([ListedSst::new("r/cf/not-a-ulid.sst".into())])
            .collect();
        // Grace 10 s at T0+55 s: slot 5 (superseded at T0+50 s) is readable, so c and its
        // files stay; 2 and 4 go; 1, 3, 6 are epoch-first.
        let options = GcOptions {
            grace: Duration::from_secs(10),
            now: at(T0 + 55_000),
        };
        let p = plan(&manifests, &ssts, &options, |_| false);
        assert_eq!(p.manifest_seqs, vec![2, 4]);
        assert_eq!(
            p.ssts,
            vec![format!("r/cf/{a}.sst"), format!("r/cf/{b}.sst")]
        );
        assert_eq!(p.report.epoch_fences_retained, 2);
        assert_eq!(p.report.manifests_retained, 4);
        assert_eq!(p.report.ssts_referenced, 1);
        assert_eq!(p.report.ssts_unrecognized, 1);

        // Pinned b survives; with a long grace, everything is readable and young.
        let p = plan(&manifests, &ssts, &options, |f| f == b);
        assert_eq!(p.ssts, vec![format!("r/cf/{a}.sst")]);
        assert_eq!(p.report.ssts_pinned, 1);
        let long = GcOptions {
            grace: Duration::from_secs(3600),
            now: at(T0 + 55_000),
        };
        let p = plan(&manifests, &ssts, &long, |_| false);
        assert!(p.manifests.is_empty() && p.ssts.is_empty());
    }

    #[test]
    fn young_unreferenced_files_stay() {
        let newest = m(1, 1, T0, &[]);
        let young = id(T0 + 1000, 9);
        let old = id(T0 - 1000, 9);
        let ssts = vec![
            ListedSst::new(format!("r/cf/{young}.sst")),
            ListedSst::new(format!("r/cf/{old}.sst")),
        ];
        let options = GcOptions {
            grace: Duration::from_millis(1500),
            now: at(T0 + 1000),
        };
        let p = plan(&[newest], &ssts, &options, |_| false);
        assert_eq!(p.ssts, vec![format!("r/cf/{old}.sst")]);
        assert_eq!(p.report.ssts_young, 1);
    }
}
