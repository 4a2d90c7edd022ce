//! [`ManifestStore`] (read the newest state; become the owner) and [`ManifestWriter`]
//! (the owner's handle: commit, GC). The protocol and its proofs are in
//! `docs/manifest.md` §2; the invariants this file keeps:
//!
//! - Every write is a create-if-absent of `current.seq + 1` (open: `newest.seq + 1`),
//!   never an overwrite, and its bytes carry `(writer, seq)`, unique per intended write.
//! - A writer's `current` is always a manifest it wrote itself, in the slot it names.
//! - Once a writer has seen a higher epoch it stays fenced; once a commit's outcome is
//!   unknown or the slots break the protocol it stays poisoned. Neither writes again.
//! - No listing on the commit path; `load_latest`/`open_owner` list once, GC lists once.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;

use super::Manifest;
use super::codec;
use super::error::ManifestError;
use super::gc::{self, GcOptions, GcReport, ListedManifest, ListedSst, ManifestSummary};
use super::pins::FilePins;
use crate::object::{Bucket, ObjectError};

/// How many slots `open_owner` tries before giving up to concurrent openers.
const MAX_OPEN_ATTEMPTS: u32 = 32;
/// Oldest manifest hint [`ManifestStore::open_owner_hinted`] trusts.
pub const MAX_HINT_AGE: std::time::Duration = std::time::Duration::from_secs(10);
/// How often `load_latest` restarts when the newest listed slot vanishes under it (a
/// concurrent GC after newer commits).
const MAX_LOAD_ATTEMPTS: u32 = 8;

/// The object key of manifest `seq` of the region at `region_dir`.
pub fn manifest_path(region_dir: &str, seq: u64) -> String {
    format!("{region_dir}/manifest/{seq:020}")
}

/// The manifests of one region, at `<region_dir>/manifest/<seq:020>`.
#[derive(Debug, Clone)]
pub struct ManifestStore {
    bucket: Bucket,
    region_dir: String,
}

impl ManifestStore {
    /// The manifest store of the region at `region_dir` (a key prefix in `bucket`,
    /// without trailing `/`).
    pub fn new(bucket: Bucket, region_dir: impl Into<String>) -> ManifestStore {
        let region_dir = region_dir.into().trim_end_matches('/').to_owned();
        ManifestStore { bucket, region_dir }
    }

    /// The region directory.
    pub fn region_dir(&self) -> &str {
        &self.region_dir
    }

    /// The bucket.
    pub fn bucket(&self) -> &Bucket {
        &self.bucket
    }

    fn manifest_dir(&self) -> String {
        format!("{}/manifest", self.region_dir)
    }

    /// The slot number of a listed manifest key, if it is one.
    fn slot_of(&self, path: &str) -> Option<u64> {
        let name = path
            .strip_prefix(self.region_dir.as_str())?
            .strip_prefix("/manifest/")?;
        if name.len() != 20 || !name.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        name.parse().ok()
    }

    /// Reads and decodes slot `seq`; `None` if it does not exist.
    async fn read_slot(&self, seq: u64) -> Result<Option<(Manifest, Bytes)>, ManifestError> {
        let path = manifest_path(&self.region_dir, seq);
        let bytes = match self.bucket.get(&path).await {
            Ok(bytes) => bytes,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => {
                return Err(ManifestError::object(
                    format!("reading manifest {path:?}"),
                    e,
                ));
            }
        };
        let manifest = decode(&path, &bytes, seq)?;
        Ok(Some((manifest, bytes)))
    }

    /// Newest committed manifest, read-only (no fencing). `None` if the region has none
    /// yet. A corrupt newest manifest is [`ManifestError::Corrupt`] naming the object —
    /// never a silent fall-back to an older one.
    ///
    /// Lists the manifest directory once, then reads forward from the highest slot until
    /// a slot is missing, so it also sees commits the listing missed.
    pub async fn load_latest(&self) -> Result<Option<Manifest>, ManifestError> {
        for _ in 0..MAX_LOAD_ATTEMPTS {
            let dir = self.manifest_dir();
            let listed = self.bucket.list(&dir).await.map_err(|e| {
                ManifestError::object(
                    format!("listing the manifests of region {:?}", self.region_dir),
                    e,
                )
            })?;
            let highest = listed.iter().filter_map(|o| self.slot_of(&o.path)).max();
            let mut newest = match highest {
                None => None,
                Some(seq) => match self.read_slot(seq).await? {
                    Some((m, _)) => Some(m),
                    // Deleted since the listing: only GC deletes, and never the newest,
                    // so newer slots exist now. List again.
                    None => continue,
                },
            };
            loop {
                let next = newest.as_ref().map_or(1, |m| m.seq + 1);
                match self.read_slot(next).await? {
                    Some((m, _)) => newest = Some(m),
                    None => break,
                }
            }
            return Ok(newest);
        }
        Err(ManifestError::Inconsistent {
            path: self.manifest_dir(),
            reason: format!(
                "the newest listed manifest kept disappearing ({MAX_LOAD_ATTEMPTS} listings); \
                 something other than GC is deleting manifests"
            ),
        })
    }

    /// Becomes the owner: reads the newest manifest (or starts from an empty one with the
    /// given bounds — the bounds are ignored if the region already has a manifest) and
    /// commits `seq + 1` with `epoch + 1` and a fresh writer token, which fences any
    /// previous owner. If another opener or committer takes the slot first, rebases on
    /// its manifest and tries the next slot, up to 32 times.
    pub async fn open_owner(
        &self,
        start_row: Bytes,
        end_row: Bytes,
    ) -> Result<ManifestWriter, ManifestError> {
        self.open_owner_hinted(start_row, end_row, None).await
    }

    /// As [`ManifestStore::open_owner`], starting from `hint`: the newest
    /// manifest as [`ManifestStore::load_latest`] read it, and when. A hint
    /// younger than [`MAX_HINT_AGE`] saves the listing and the reads (three
    /// object-store round trips): the fence goes straight to the slot after
    /// it, and if that slot is taken (a commit since), the open rebases on
    /// it as on any lost race. Sound because every slot above the hint was
    /// written after the hint was read, and GC deletes a superseded slot
    /// only once it has been superseded for its grace (the server always
    /// uses the default hour): within [`MAX_HINT_AGE`] no slot above
    /// the hint can be gone, so the first free slot after it is the true
    /// next one (I4 and I5 of `docs/manifest.md` hold). An older hint, or
    /// none, reads the newest manifest as `open_owner` does.
    pub async fn open_owner_hinted(
        &self,
        start_row: Bytes,
        end_row: Bytes,
        hint: Option<(Manifest, std::time::Instant)>,
    ) -> Result<ManifestWriter, ManifestError> {
        self.open_owner_guarded(start_row, end_row, hint, &|| true)
            .await
    }

    /// As [`ManifestStore::open_owner_hinted`], asking `may_own` before each
    /// fence attempt: once it answers false (cluster mode: the server's lease
    /// lapsed since the open began) no fence is written and the open fails
    /// with [`ManifestError::OwnershipLost`]. Why that suffices against a
    /// paused opener: a fence attempt targets the slot after a manifest read
    /// *before* the check; a newer owner fences only after the cluster saw
    /// this server's lease expire, which is after `may_own` turned false, so
    /// its fence takes a slot at or below the one this attempt targets and at
    /// most one of the two wins it. The loser of that slot, if it is this
    /// opener, asks `may_own` again before rebasing, and stops.
    pub async fn open_owner_guarded(
        &self,
        start_row: Bytes,
        end_row: Bytes,
        hint: Option<(Manifest, std::time::Instant)>,
        may_own: &(dyn Fn() -> bool + Sync),
    ) -> Result<ManifestWriter, ManifestError> {
        let mut base = match hint {
            Some((m, at)) if at.elapsed() < MAX_HINT_AGE => Some(m),
            _ => self.load_latest().await?,
        };
        let writer = ulid::Ulid::new().0;
        for _ in 0..MAX_OPEN_ATTEMPTS {
            if !may_own() {
                return Err(ManifestError::OwnershipLost {
                    region_dir: self.region_dir.clone(),
                });
            }
            let next = match &base {
                Some(m) => Manifest {
                    seq: m.seq + 1,
                    epoch: m.epoch + 1,
                    writer,
                    ..m.clone()
                },
                None => Manifest {
                    seq: 1,
                    epoch: 1,
                    writer,
                    start_row: start_row.clone(),
                    end_row: end_row.clone(),
                    ..Manifest::default()
                },
            };
            let path = manifest_path(&self.region_dir, next.seq);
            let data = codec::encode(&next);
            match self.bucket.create_if_absent(&path, data.clone()).await {
                Ok(()) => return Ok(self.owned(next)),
                Err(e) if e.is_already_exists() => {
                    base = match self.read_slot(next.seq).await? {
                        Some((m, _)) => Some(m),
                        // Taken, then deleted by GC after newer commits: start over.
                        None => self.load_latest().await?,
                    };
                }
                Err(e @ ObjectError::Transient { .. }) => {
                    // The fence may have landed. Ours → we are the owner; a foreign one →
                    // rebase on it like any lost race; unreadable → the outcome is
                    // unknown, which is harmless (a landed fence holds no new data and
                    // nobody owns its token): the caller retries the open.
                    match self.bucket.get(&path).await {
                        Ok(bytes) if bytes == data => return Ok(self.owned(next)),
                        Ok(bytes) => base = Some(decode(&path, &bytes, next.seq)?),
                        Err(_) => {
                            return Err(ManifestError::object(
                                format!(
                                    "opening region {:?}: writing fence manifest {path:?} \
                                     failed (it may have fenced the previous owner); retry \
                                     open_owner",
                                    self.region_dir
                                ),
                                e,
                            ));
                        }
                    }
                }
                Err(e) => {
                    return Err(ManifestError::object(
                        format!(
                            "opening region {:?}: writing fence manifest {path:?}",
                            self.region_dir
                        ),
                        e,
                    ));
                }
            }
        }
        Err(ManifestError::OpenContended {
            region_dir: self.region_dir.clone(),
            attempts: MAX_OPEN_ATTEMPTS,
        })
    }

    fn owned(&self, current: Manifest) -> ManifestWriter {
        tracing::info!(
            region_dir = %self.region_dir,
            seq = current.seq,
            epoch = current.epoch,
            "region manifest opened as owner"
        );
        let mut cache = HashMap::new();
        cache.insert(current.seq, Arc::new(ManifestSummary::of(&current)));
        ManifestWriter {
            store: self.clone(),
            current,
            state: Mutex::new(WriterState::Live),
            cache: Mutex::new(cache),
        }
    }
}

fn decode(path: &str, bytes: &[u8], seq: u64) -> Result<Manifest, ManifestError> {
    codec::decode(bytes, seq).map_err(|reason| ManifestError::Corrupt {
        path: path.to_owned(),
        reason,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriterState {
    Live,
    Fenced { their_epoch: u64 },
    Poisoned,
}

/// The owner's handle on a region's manifests. Obtained from
/// [`ManifestStore::open_owner`]. `commit` takes `&mut self` and `gc` takes `&self`:
/// callers serialize them (GC is safe against commits made by this writer in between,
/// see `docs/manifest.md` §3).
#[derive(Debug)]
pub struct ManifestWriter {
    store: ManifestStore,
    current: Manifest,
    state: Mutex<WriterState>,
    /// Decoded summaries of manifests by slot (they are immutable), for GC.
    cache: Mutex<HashMap<u64, Arc<ManifestSummary>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain data behind the locks: a panic elsewhere cannot leave it half-updated.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ManifestWriter {
    /// The newest manifest this writer committed (or opened with).
    pub fn current(&self) -> &Manifest {
        &self.current
    }

    /// The region directory.
    pub fn region_dir(&self) -> &str {
        &self.store.region_dir
    }

    /// True once this writer has been fenced by a newer owner.
    pub fn is_fenced(&self) -> bool {
        matches!(*lock(&self.state), WriterState::Fenced { .. })
    }

    fn check_usable(&self) -> Result<(), ManifestError> {
        match *lock(&self.state) {
            WriterState::Live => Ok(()),
            WriterState::Fenced { their_epoch } => Err(self.fenced_error(their_epoch)),
            WriterState::Poisoned => Err(ManifestError::Poisoned {
                region_dir: self.store.region_dir.clone(),
            }),
        }
    }

    fn fenced_error(&self, their_epoch: u64) -> ManifestError {
        ManifestError::Fenced {
            region_dir: self.store.region_dir.clone(),
            our_epoch: self.current.epoch,
            their_epoch,
        }
    }

    fn fence(&self, their_epoch: u64) -> ManifestError {
        tracing::warn!(
            region_dir = %self.store.region_dir,
            our_epoch = self.current.epoch,
            their_epoch,
            "region manifest writer fenced by a newer owner"
        );
        *lock(&self.state) = WriterState::Fenced { their_epoch };
        self.fenced_error(their_epoch)
    }

    fn poison(&self, error: ManifestError) -> ManifestError {
        tracing::error!(region_dir = %self.store.region_dir, error = %error, "region manifest writer poisoned");
        *lock(&self.state) = WriterState::Poisoned;
        error
    }

    /// Commits `current` + `edit` as `seq + 1`. The edit may not change `seq`, `epoch`
    /// or `writer` (they are set here), lower `flushed_seq` or `max_seq`, or list a file
    /// id twice ([`ManifestError::InvalidEdit`]; nothing is written).
    ///
    /// If the slot is taken by a higher epoch this writer is fenced:
    /// [`ManifestError::Fenced`] now and on every later call — the region must stop
    /// serving. Never overwrites. If the outcome stays unknown after the object store's
    /// retries, [`ManifestError::CommitUnknown`]: the writer is poisoned and the region
    /// must be reopened.
    pub async fn commit(
        &mut self,
        edit: impl FnOnce(&mut Manifest),
    ) -> Result<&Manifest, ManifestError> {
        self.check_usable()?;
        let mut next = self.current.clone();
        edit(&mut next);
        next.seq = self.current.seq + 1;
        next.epoch = self.current.epoch;
        next.writer = self.current.writer;
        self.validate(&next)?;
        let path = manifest_path(&self.store.region_dir, next.seq);
        let data = codec::encode(&next);
        match self
            .store
            .bucket
            .create_if_absent(&path, data.clone())
            .await
        {
            Ok(()) => {}
            Err(e) if e.is_already_exists() => {
                return Err(self.conflict(&path, next.seq, None).await);
            }
            Err(e @ ObjectError::Transient { .. }) => match self.store.bucket.get(&path).await {
                Ok(bytes) if bytes == data => {}
                Ok(bytes) => return Err(self.conflict(&path, next.seq, Some(bytes)).await),
                Err(_) => {
                    return Err(self.poison(ManifestError::CommitUnknown { path, source: e }));
                }
            },
            Err(e) => {
                return Err(ManifestError::object(
                    format!("committing manifest {path:?} (nothing was written; retry)"),
                    e,
                ));
            }
        }
        lock(&self.cache).insert(next.seq, Arc::new(ManifestSummary::of(&next)));
        self.current = next;
        Ok(&self.current)
    }

    fn validate(&self, next: &Manifest) -> Result<(), ManifestError> {
        let invalid = |reason: String| ManifestError::InvalidEdit {
            region_dir: self.store.region_dir.clone(),
            reason,
        };
        if next.flushed_seq < self.current.flushed_seq {
            return Err(invalid(format!(
                "flushed_seq would go back from {} to {}",
                self.current.flushed_seq, next.flushed_seq
            )));
        }
        if next.max_seq < self.current.max_seq {
            return Err(invalid(format!(
                "max_seq would go back from {} to {}",
                self.current.max_seq, next.max_seq
            )));
        }
        let mut ids = HashSet::new();
        for (family, files) in &next.stores {
            if family.is_empty() {
                return Err(invalid("empty family name".into()));
            }
            for f in files {
                if !ids.insert(f.id) {
                    return Err(invalid(format!("file {} is listed twice", f.id)));
                }
            }
        }
        Ok(())
    }

    /// Our slot `seq` is taken: find out by whom. Always an error.
    async fn conflict(&self, path: &str, seq: u64, bytes: Option<Bytes>) -> ManifestError {
        let theirs = match bytes {
            Some(bytes) => decode(path, &bytes, seq).map(Some),
            None => self.store.read_slot(seq).await.map(|s| s.map(|(m, _)| m)),
        };
        match theirs {
            Ok(Some(m)) if m.epoch > self.current.epoch => self.fence(m.epoch),
            Ok(Some(m)) => self.poison(ManifestError::Inconsistent {
                path: path.to_owned(),
                reason: format!(
                    "the slot after our seq {} holds epoch {} by writer {}, but only we \
                     (epoch {}, writer {}) may write it",
                    self.current.seq,
                    m.epoch,
                    ulid::Ulid(m.writer),
                    self.current.epoch,
                    ulid::Ulid(self.current.writer)
                ),
            }),
            Ok(None) => self.poison(ManifestError::Inconsistent {
                path: path.to_owned(),
                reason: "the slot was taken but is gone: GC deleted a slot that follows a \
                         live owner's manifest"
                    .into(),
            }),
            Err(e @ ManifestError::Corrupt { .. }) => self.poison(e),
            // Could not read it (transient): nothing was written by us; the next commit
            // will meet the same slot and decide.
            Err(e) => e,
        }
    }

    /// Garbage collection: lists the region dir once, deletes old manifests (never the
    /// newest, the first of any epoch, or one still readable) and unreferenced SST files
    /// (never referenced by a readable manifest, pinned, or younger than
    /// `options.grace`), in batches. Stops with [`ManifestError::Fenced`] before deleting
    /// anything if a newer owner exists. See `docs/manifest.md` §3.
    pub async fn gc(
        &self,
        options: &GcOptions,
        pinned: &FilePins,
    ) -> Result<GcReport, ManifestError> {
        self.check_usable()?;
        let store = &self.store;
        let dir = &store.region_dir;
        let listed = store
            .bucket
            .list(dir)
            .await
            .map_err(|e| ManifestError::object(format!("GC: listing region {dir:?}"), e))?;
        let mut manifests = Vec::new();
        let mut ssts = Vec::new();
        for object in listed {
            if let Some(seq) = store.slot_of(&object.path) {
                let cached = lock(&self.cache).get(&seq).cloned();
                let summary = match cached {
                    Some(s) => s,
                    None => match store.read_slot(seq).await? {
                        Some((m, _)) => {
                            let s = Arc::new(ManifestSummary::of(&m));
                            lock(&self.cache).insert(seq, s.clone());
                            s
                        }
                        // Deleted since the listing (another GC): not retained anyway.
                        None => continue,
                    },
                };
                if summary.epoch > self.current.epoch {
                    return Err(self.fence(summary.epoch));
                }
                manifests.push(ListedManifest {
                    seq,
                    path: object.path,
                    last_modified: object.last_modified,
                    summary,
                });
            } else if object.path.ends_with(".sst") {
                ssts.push(ListedSst::new(object.path));
            }
        }
        let plan = gc::plan(&manifests, &ssts, options, |id| pinned.is_pinned(id));
        if !plan.manifests.is_empty() {
            store
                .bucket
                .delete_many(plan.manifests)
                .await
                .map_err(|e| {
                    ManifestError::object(
                        format!("GC: deleting old manifests of region {dir:?}"),
                        e,
                    )
                })?;
            let mut cache = lock(&self.cache);
            for seq in &plan.manifest_seqs {
                cache.remove(seq);
            }
        }
        if !plan.ssts.is_empty() {
            store.bucket.delete_many(plan.ssts).await.map_err(|e| {
                ManifestError::object(
                    format!("GC: deleting unreferenced SSTs of region {dir:?}"),
                    e,
                )
            })?;
        }
        tracing::debug!(region_dir = %dir, report = ?plan.report, "region GC done");
        Ok(plan.report)
    }
}
