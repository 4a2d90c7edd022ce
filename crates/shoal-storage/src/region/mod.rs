//! A region: one key range of one table, durable on the object store, with
//! HBase's read and write semantics.
//!
//! Layout: `store` (one family: memstore + files), `mutate` (the write path:
//! row lock → sequence number → WAL → memstore → read point), `read` (gets and
//! scans: per-family merged streams, version resolution, row assembly),
//! `flush` (memstore → SST → manifest → WAL release), `compact` (minor and
//! major compactions), `versions` (the pure visibility rules), `mvcc`,
//! `row_locks`, `merge`, `ops` (request types), `config`, `error`.
//!
//! Durability: a write is acknowledged only after its WAL entry is durable. The
//! manifest records which files are live and up to which sequence the WAL is
//! covered by them; opening a region bumps the manifest epoch (fencing any
//! previous owner), opens the files and replays the WAL entries after that
//! sequence. A fenced region refuses every further operation.

mod batch;
mod capture;
mod cells_file;
mod compact;
pub mod config;
mod error;
pub mod filter;
mod flush;
mod ingest;
pub mod kept_deletes;
mod merge;
pub mod mutate;
mod mvcc;
pub mod nonces;
pub mod ops;
mod pressure;
mod read;
mod row_cache;
mod row_locks;
mod seed;
pub mod split;
mod store;
pub mod versions;

pub use crate::cache::{RowBundle, RowBundleError};
pub use capture::{RegionCapture, WritePause};
pub use cells_file::write_cells_file;
pub use compact::CompactionReport;
pub use config::{Clock, CompactionPolicy, FamilyConfig, ManualClock, RegionConfig, SystemClock};
pub use error::RegionError;
pub use flush::FlushReport;
pub use ingest::{IngestBatch, IngestFile, IngestReport};
pub use mutate::Changed;
pub use nonces::{Nonce, NonceOptions};
pub use ops::{
    CheckAndMutate, Columns, CompareOp, Condition, FamilyOptions, Get, RowChange, RowChanges,
    RowMutation, RowOp, RowResult, Scan, TimeRange,
};
pub use pressure::{FlushScheduler, SchedulerOptions};
pub use read::RegionScanner;
pub use row_cache::HandedRow;
pub use seed::{RegionSeed, seed_region};
pub use split::{SplitChild, parent_released, write_child_manifests};

use crate::cache::BlockCache;
use crate::cell::Cell;
use crate::manifest::{FilePins, GcOptions, GcReport, ManifestStore, ManifestWriter};
use crate::object::Bucket;
use crate::sst::{BlockFetcher, SstFile, SstReader};
use crate::wal::{Wal, WalEntry};
use bytes::Bytes;
use mvcc::Mvcc;
use row_locks::RowLocks;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use store::{LiveFile, Store};

/// What a region runs on: shared by every region of a server.
#[derive(Debug, Clone)]
pub struct RegionEnv {
    /// Where manifests and files live.
    pub bucket: Bucket,
    /// The server's write-ahead log.
    pub wal: Wal,
    /// Where SST blocks come from on a cache miss (normally the bucket).
    pub fetcher: Arc<dyn BlockFetcher>,
    /// The server's block cache; `None` reads every block from `fetcher`.
    pub cache: Option<BlockCache>,
    /// Where this region's blocks come from, counted by the cache (the
    /// server sets one per region it opens; `None`: not counted).
    pub block_sources: Option<Arc<crate::cache::BlockSources>>,
    /// Rate of prefetch-on-open, bytes per second per region (default 64 MiB/s).
    pub prefetch_bytes_per_sec: u64,
    /// Compaction output enters the cache as it is written when the
    /// compaction's inputs total at most this many bytes (HBase's
    /// cache-compacted-blocks-on-write threshold; default 256 MiB).
    pub cache_compaction_output_bytes: u64,
    /// Files in use by readers (GC skips them).
    pub pins: FilePins,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Bounds concurrent compactions across regions.
    pub compaction_slots: Arc<tokio::sync::Semaphore>,
    /// Bounds concurrent flushes across regions (default 2).
    pub flush_slots: Arc<tokio::sync::Semaphore>,
    /// The server-wide memstore budget (default: unlimited).
    pub memstore: crate::memstore::MemstoreBudget,
    /// Flushes regions under memory pressure and periodically.
    pub scheduler: FlushScheduler,
    /// Where flushes and compactions run (`None`: the caller's runtime).
    pub background: Option<crate::background::Background>,
}

impl RegionEnv {
    /// The same environment reading through `cache`.
    pub fn with_cache(mut self, cache: BlockCache) -> RegionEnv {
        self.cache = Some(cache);
        self
    }

    /// The block source for a family's files: its cache view, or the raw source.
    pub(crate) fn family_fetcher(&self, family: &FamilyConfig) -> Arc<dyn BlockFetcher> {
        match &self.cache {
            Some(cache) => cache.family_counted(family.cache, self.block_sources.clone()),
            None => self.fetcher.clone(),
        }
    }

    /// An environment reading blocks straight from `bucket`, with the system clock.
    pub fn new(bucket: Bucket, wal: Wal) -> RegionEnv {
        RegionEnv {
            fetcher: Arc::new(crate::sst::BucketFetcher::new(bucket.clone())),
            cache: None,
            block_sources: None,
            prefetch_bytes_per_sec: 64 << 20,
            cache_compaction_output_bytes: 256 << 20,
            bucket,
            wal,
            pins: FilePins::new(),
            clock: Arc::new(SystemClock),
            compaction_slots: Arc::new(tokio::sync::Semaphore::new(2)),
            flush_slots: Arc::new(tokio::sync::Semaphore::new(2)),
            memstore: crate::memstore::MemstoreBudget::default(),
            scheduler: FlushScheduler::default(),
            background: None,
        }
    }
}

/// An open region. Cheap to clone; clones share everything.
#[derive(Debug, Clone)]
pub struct Region {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: RegionConfig,
    env: RegionEnv,
    stores: BTreeMap<Bytes, Store>,
    manifest: tokio::sync::Mutex<ManifestWriter>,
    mvcc: Mvcc,
    row_locks: RowLocks,
    /// Increment and append nonces applied lately (`nonces.rs`).
    nonces: nonces::Nonces,
    flush_lock: tokio::sync::Mutex<()>,
    compaction_lock: tokio::sync::Mutex<()>,
    flush_running: AtomicBool,
    compaction_running: AtomicBool,
    /// An in-memory compaction task is running.
    imc_running: AtomicBool,
    /// Wall-clock ms of the oldest unflushed edit (0: none).
    oldest_edit_ms: std::sync::atomic::AtomicI64,
    /// The least "now" a write stamps with: an increment or append stamps
    /// one past the version it read, which can run a little ahead of the
    /// clock in a burst; later server-stamped writes are not put behind it
    /// (see `mutate.rs`, `stamp_now`).
    stamp_floor: std::sync::atomic::AtomicI64,
    /// This region's random extra delay before a periodic flush, ms.
    flush_jitter_ms: i64,
    /// The last cached fraction computed, and when.
    cache_memo: std::sync::Mutex<Option<(std::time::Instant, Option<f64>)>>,
    cache_memo_refreshing: AtomicBool,
    fenced: AtomicBool,
    closed: AtomicBool,
    /// Set by `close` once no write is in flight: later writes are refused,
    /// reads go on until the final flush is done.
    closing: AtomicBool,
    /// Closed for a handoff (`close_keeping_reads`): no write, flush or
    /// compaction is taken any more, but reads go on from the flushed copy
    /// until `end_reads` (or `closed`) stops them.
    sealed: AtomicBool,
    /// Every write holds a read guard for its whole duration; `close` takes
    /// the write guard to wait for writes in flight.
    write_gate: Arc<tokio::sync::RwLock<()>>,
    stats: Stats,
    prefetch: std::sync::Mutex<Option<crate::cache::PrefetchHandle>>,
    /// This instance's rows in the row cache (`None`: not cached).
    rows: Option<row_cache::RegionRows>,
}

#[derive(Debug, Default)]
struct Stats {
    flushes: AtomicU64,
    compactions: AtomicU64,
    flush_micros: AtomicU64,
    flush_bytes: AtomicU64,
    imc_flattens: AtomicU64,
    imc_merges: AtomicU64,
    imc_cells_dropped: AtomicU64,
}

/// A region's write-path counters since it opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Flushes completed.
    pub flushes: u64,
    /// Time spent in flushes, µs.
    pub flush_micros: u64,
    /// Bytes of files written by flushes.
    pub flush_bytes: u64,
    /// Compactions completed.
    pub compactions: u64,
    /// Skiplist segments flattened by in-memory compaction.
    pub imc_flattens: u64,
    /// Merges of flat segments.
    pub imc_merges: u64,
    /// Cells dropped by eager in-memory compaction.
    pub imc_cells_dropped: u64,
    /// Bytes held by the memstores now.
    pub memstore_bytes: u64,
    /// Bytes of the memstores in flat segments now.
    pub flat_bytes: u64,
}

impl Region {
    /// Opens (or creates) the region: takes ownership of its manifest (fencing
    /// any previous owner), opens its files, and replays its WAL entries.
    pub async fn open(config: RegionConfig, env: RegionEnv) -> Result<Region, RegionError> {
        Region::open_with_recovered(config, env, Vec::new()).await
    }

    /// Opens the region as [`Region::open`] does, and also replays `foreign`:
    /// this region's entries read from a dead server's WAL
    /// ([`crate::wal::ForeignWal`]). Those past the manifest's flushed
    /// sequence are logged again in this server's WAL before the region is
    /// returned, so once every region of the dead WAL has been reopened this
    /// way, that WAL can be deleted. Entries this server's own WAL holds too
    /// (same sequence number) are replayed once.
    pub async fn open_with_recovered(
        config: RegionConfig,
        env: RegionEnv,
        foreign: Vec<WalEntry>,
    ) -> Result<Region, RegionError> {
        Region::open_hinted(config, env, foreign, None).await
    }

    /// As [`Region::open_with_recovered`], fencing from `hint`: the region's
    /// newest manifest as read a moment ago, and when (see
    /// [`ManifestStore::open_owner_hinted`]: a new owner that read it while
    /// warming up saves three object-store round trips of its open).
    pub async fn open_hinted(
        config: RegionConfig,
        env: RegionEnv,
        foreign: Vec<WalEntry>,
        hint: Option<(crate::manifest::Manifest, std::time::Instant)>,
    ) -> Result<Region, RegionError> {
        Region::open_guarded(config, env, foreign, hint, &|| true).await
    }

    /// As [`Region::open_hinted`], for a server that may own the region only
    /// while `may_own` says so (cluster mode: the lease it held when the
    /// open began). It is asked before each fence attempt
    /// ([`ManifestStore::open_owner_guarded`]) and once more before the
    /// region is returned; a false answer fails the open with
    /// [`crate::manifest::ManifestError::OwnershipLost`] and the region is
    /// never served from here. A server paused in the middle of an open
    /// thus cannot fence, or serve beside, the owner the cluster chose
    /// meanwhile.
    ///
    /// The steps, in order: validate the configuration, `fence` the
    /// manifest, `open_stores`, `replay` the WAL entries into the
    /// memstores, `relog` a dead server's entries, start warming the cache
    /// (`start_prefetch`), ask `may_own` a last time, then `serve`.
    pub async fn open_guarded(
        config: RegionConfig,
        env: RegionEnv,
        foreign: Vec<WalEntry>,
        hint: Option<(crate::manifest::Manifest, std::time::Instant)>,
        may_own: &(dyn Fn() -> bool + Sync),
    ) -> Result<Region, RegionError> {
        validate_open(&config)?;
        // Where an open's time goes (logged with "region opened").
        let open_started = std::time::Instant::now();
        let writer = fence(&config, &env, hint, may_own).await?;
        let manifest = writer.current().clone();
        let fence_ms = open_started.elapsed().as_millis() as u64;
        let stores = open_stores(&config, &env, &manifest).await?;
        let files_ms = open_started.elapsed().as_millis() as u64 - fence_ms;
        let replayed = replay(&config, &env, &manifest, &stores, foreign)?;
        let replay_ms = open_started.elapsed().as_millis() as u64 - fence_ms - files_ms;
        relog(&config, &env, &replayed.relog).await?;
        let relog_ms = open_started.elapsed().as_millis() as u64 - fence_ms - files_ms - replay_ms;
        let prefetch = start_prefetch(&env, &stores);
        tracing::info!(
            region = %config.region_id,
            epoch = manifest.epoch,
            files = manifest.files().count(),
            replayed = replayed.entries,
            last_seq = replayed.last_seq,
            fence_ms,
            files_ms,
            replay_ms,
            relog_ms,
            "region opened"
        );
        let flush_jitter_ms = flush_jitter_ms(&env);
        let oldest_edit_ms = if replayed.entries > 0 {
            env.clock.now_ms().max(1)
        } else {
            0
        };
        // The last word before the region may serve: a server that lost the
        // right to own it meanwhile (its lease) drops it here.
        if !may_own() {
            if let Some(p) = &prefetch {
                p.cancel();
            }
            return Err(RegionError::Manifest {
                region: config.region_id.clone(),
                source: crate::manifest::ManifestError::OwnershipLost {
                    region_dir: config.region_dir.clone(),
                },
            });
        }
        let region = Region::serve(Opened {
            config,
            env,
            stores,
            writer,
            replayed,
            flush_jitter_ms,
            oldest_edit_ms,
            prefetch,
        });
        Ok(region)
    }

    /// Serve, the last step of an open: the region built from what the
    /// steps before produced, registered with the flush scheduler.
    fn serve(opened: Opened) -> Region {
        let Opened {
            config,
            env,
            stores,
            writer,
            replayed,
            flush_jitter_ms,
            oldest_edit_ms,
            prefetch,
        } = opened;
        let region = Region {
            inner: Arc::new(Inner {
                mvcc: Mvcc::new(replayed.last_seq),
                rows: row_cache::RegionRows::new(env.cache.as_ref(), &config.families),
                config,
                env,
                stores,
                manifest: tokio::sync::Mutex::new(writer),
                row_locks: RowLocks::default(),
                nonces: replayed.nonces,
                flush_lock: tokio::sync::Mutex::new(()),
                compaction_lock: tokio::sync::Mutex::new(()),
                flush_running: AtomicBool::new(false),
                compaction_running: AtomicBool::new(false),
                imc_running: AtomicBool::new(false),
                oldest_edit_ms: std::sync::atomic::AtomicI64::new(oldest_edit_ms),
                stamp_floor: std::sync::atomic::AtomicI64::new(0),
                flush_jitter_ms,
                cache_memo: std::sync::Mutex::new(None),
                cache_memo_refreshing: AtomicBool::new(false),
                fenced: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                closing: AtomicBool::new(false),
                sealed: AtomicBool::new(false),
                write_gate: Arc::new(tokio::sync::RwLock::new(())),
                stats: Stats::default(),
                prefetch: std::sync::Mutex::new(prefetch),
            }),
        };
        region.inner.env.scheduler.register(&region);
        region
    }

    /// Runs `fut` on the background runtime (if the environment has one)
    /// and waits for it.
    pub(crate) async fn on_background<T: Send + 'static>(
        &self,
        fut: impl std::future::Future<Output = Result<T, RegionError>> + Send + 'static,
    ) -> Result<T, RegionError> {
        let Some(bg) = &self.inner.env.background else {
            return fut.await;
        };
        bg.spawn(fut).await.map_err(|e| {
            tracing::error!(region = %self.id(), error = %e, "background task did not finish");
            RegionError::Closed {
                region: self.id().to_string(),
            }
        })?
    }

    /// Write-path counters and the memstores' current size.
    pub fn write_stats(&self) -> WriteStats {
        let s = &self.inner.stats;
        let flat_bytes = self
            .inner
            .stores
            .values()
            .flat_map(|st| st.memstore.segments())
            .filter(|seg| seg.is_flat())
            .map(|seg| seg.size() as u64)
            .sum();
        WriteStats {
            flushes: s.flushes.load(Ordering::Relaxed),
            flush_micros: s.flush_micros.load(Ordering::Relaxed),
            flush_bytes: s.flush_bytes.load(Ordering::Relaxed),
            compactions: s.compactions.load(Ordering::Relaxed),
            imc_flattens: s.imc_flattens.load(Ordering::Relaxed),
            imc_merges: s.imc_merges.load(Ordering::Relaxed),
            imc_cells_dropped: s.imc_cells_dropped.load(Ordering::Relaxed),
            memstore_bytes: self.memstore_size() as u64,
            flat_bytes,
        }
    }

    /// Where the region's blocks came from on this server, if counted.
    pub fn block_sources(&self) -> Option<crate::cache::BlockSourcesSnapshot> {
        self.inner.env.block_sources.as_ref().map(|s| s.snapshot())
    }

    /// Progress of the prefetch started when the region opened, if any.
    pub fn prefetch_progress(&self) -> Option<Arc<crate::cache::PrefetchProgress>> {
        let guard = self
            .inner
            .prefetch
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        guard.as_ref().map(|h| h.progress())
    }

    /// The region's settings.
    pub fn config(&self) -> &RegionConfig {
        &self.inner.config
    }

    /// The region id.
    pub fn id(&self) -> &str {
        &self.inner.config.region_id
    }

    /// Bytes held by all memstores.
    pub fn memstore_size(&self) -> usize {
        self.inner.stores.values().map(|s| s.memstore.size()).sum()
    }

    /// This region's row-cache entries, for its next owner (a copy closed
    /// for a move, before its reads end): up to about `max_bytes` of
    /// bundle, recently read ones first. Each is the row as of the
    /// region's final state.
    pub fn handed_rows(&self, max_bytes: usize) -> RowBundle {
        match &self.inner.rows {
            Some(rows) => rows.hand_over(max_bytes),
            None => RowBundle::default(),
        }
    }

    /// Takes rows its former owner handed over (`handed_rows` there) into
    /// the row cache, as the rows as of `read_point`: the read point this
    /// region opened at, taken before it could accept a write. A row that
    /// took a write since, lies outside the region or names a family it
    /// does not have is left out; a bundle that fails its checksum or
    /// layout checks keeps nothing. Returns how many were kept.
    pub fn take_handed_rows(
        &self,
        handed: &RowBundle,
        read_point: u64,
    ) -> Result<usize, RowBundleError> {
        let Some(rows) = &self.inner.rows else {
            return Ok(0);
        };
        let config = &self.inner.config;
        rows.take_over(handed, read_point, |entry| {
            let row = entry.row();
            !row.is_empty()
                && config.contains_row(row)
                && entry.families_and_types().all(|(family, kind)| {
                    !kind.is_delete() && config.families.iter().any(|f| f.name == family)
                })
        })
    }

    /// The current read point (highest sequence visible to new reads).
    pub fn read_point(&self) -> u64 {
        self.inner.mvcc.read_point()
    }

    /// Number of live files per family.
    pub fn file_counts(&self) -> BTreeMap<Bytes, usize> {
        self.inner
            .stores
            .iter()
            .map(|(k, s)| (k.clone(), s.files().len()))
            .collect()
    }

    /// Flushes and compactions completed since open.
    pub fn counters(&self) -> (u64, u64) {
        (
            self.inner.stats.flushes.load(Ordering::Relaxed),
            self.inner.stats.compactions.load(Ordering::Relaxed),
        )
    }

    /// True once another owner has fenced this instance.
    pub fn is_fenced(&self) -> bool {
        self.inner.fenced.load(Ordering::SeqCst)
    }

    /// Refuses unless the region takes writes, flushes and compactions.
    pub(crate) fn check_open(&self) -> Result<(), RegionError> {
        self.check_readable()?;
        if self.inner.sealed.load(Ordering::SeqCst) {
            return Err(RegionError::Closed {
                region: self.id().to_string(),
            });
        }
        Ok(())
    }

    /// Refuses unless the region serves reads (open, or closed for a
    /// handoff whose reads have not ended).
    pub(crate) fn check_readable(&self) -> Result<(), RegionError> {
        if self.inner.fenced.load(Ordering::SeqCst) {
            return Err(RegionError::Fenced {
                region: self.id().to_string(),
            });
        }
        if self.inner.closed.load(Ordering::SeqCst) {
            return Err(RegionError::Closed {
                region: self.id().to_string(),
            });
        }
        Ok(())
    }

    pub(crate) fn store(&self, family: &[u8]) -> Result<&Store, RegionError> {
        self.inner
            .stores
            .get(family)
            .ok_or_else(|| RegionError::NoSuchFamily {
                region: self.id().to_string(),
                family: String::from_utf8_lossy(family).into_owned(),
            })
    }

    pub(crate) fn manifest_error(&self, source: crate::manifest::ManifestError) -> RegionError {
        if source.is_fenced() {
            self.inner.fenced.store(true, Ordering::SeqCst);
            tracing::error!(region = %self.id(), "region fenced by a newer owner; it stops serving");
            return RegionError::Fenced {
                region: self.id().to_string(),
            };
        }
        RegionError::Manifest {
            region: self.id().to_string(),
            source,
        }
    }

    pub(crate) fn sst_error(&self, source: crate::sst::SstError) -> RegionError {
        RegionError::Sst {
            region: self.id().to_string(),
            source,
        }
    }

    /// Deletes files and manifests no longer needed (see `docs/manifest.md`).
    pub async fn collect_garbage(&self, options: &GcOptions) -> Result<GcReport, RegionError> {
        let writer = self.inner.manifest.lock().await;
        writer
            .gc(options, &self.inner.env.pins)
            .await
            .map_err(|e| self.manifest_error(e))
    }

    /// Admits one write: waits while `close` drains writes, refuses once the
    /// region is closing. Hold the guard until the write is acknowledged.
    pub(crate) async fn write_gate(
        &self,
    ) -> Result<tokio::sync::RwLockReadGuard<'_, ()>, RegionError> {
        self.check_open()?;
        self.admit().await?;
        let guard = self.inner.write_gate.read().await;
        if self.inner.closing.load(Ordering::SeqCst) {
            return Err(RegionError::Closed {
                region: self.id().to_string(),
            });
        }
        self.check_open()?;
        Ok(guard)
    }

    /// Stops taking writes, waits for the writes in flight, flushes the
    /// memstores and stops serving. Every acknowledged write is in a file
    /// when it returns, so the next open (or a split's children) replays
    /// nothing. Reads are served until the flush is done. If the flush fails
    /// the region takes writes again and the error is returned.
    pub async fn close(&self) -> Result<(), RegionError> {
        self.close_inner(false).await
    }

    /// Closes for a handoff to another server: as [`Region::close`] (writes
    /// stop, the memstores are flushed, nothing is left to replay), but
    /// reads go on from the flushed copy, which holds every acknowledged
    /// write, until [`Region::end_reads`]. No write, flush or compaction is
    /// taken afterwards. The caller ends the reads before the next owner
    /// acknowledges its first write (see `docs/cluster.md`, "reads through
    /// a move").
    pub async fn close_keeping_reads(&self) -> Result<(), RegionError> {
        self.close_inner(true).await
    }

    /// Stops the reads a [`Region::close_keeping_reads`] kept going (a
    /// no-op on a closed region).
    pub fn end_reads(&self) {
        self.inner.sealed.store(true, Ordering::SeqCst);
        self.inner.closed.store(true, Ordering::SeqCst);
        if let Some(rows) = &self.inner.rows {
            rows.forget();
        }
    }

    /// True while the region is closed for a handoff and still reads.
    pub fn reads_only(&self) -> bool {
        self.inner.sealed.load(Ordering::SeqCst) && self.check_readable().is_ok()
    }

    async fn close_inner(&self, keep_reads: bool) -> Result<(), RegionError> {
        self.check_open()?;
        {
            let _drained = self.inner.write_gate.write().await;
            if self.inner.closing.swap(true, Ordering::SeqCst) {
                return Err(RegionError::Closed {
                    region: self.id().to_string(),
                });
            }
        }
        if let Some(p) = self
            .inner
            .prefetch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            p.cancel();
        }
        // A compaction running now would commit a manifest after ours (a
        // split's children must see the final file set): wait for it, and
        // hold the lock so none starts before `closed` is set.
        let _compaction = self.inner.compaction_lock.lock().await;
        if let Err(e) = self.flush().await {
            self.inner.closing.store(false, Ordering::SeqCst);
            return Err(e);
        }
        self.inner.sealed.store(true, Ordering::SeqCst);
        if !keep_reads {
            self.end_reads();
        }
        Ok(())
    }

    /// Stops serving at once, without flushing: the server lost the right
    /// to own the region (a cluster lease lapsed), so another server may
    /// own it now and nothing more may be written or committed from here.
    /// Its unflushed edits stay in the WAL, which the next owner replays.
    /// Calls after this fail with `Closed`; a flush or compaction that
    /// already passed its checks may still try to commit its manifest,
    /// which the new owner's higher epoch refuses.
    pub fn abandon(&self) {
        self.inner.closing.store(true, Ordering::SeqCst);
        self.inner.sealed.store(true, Ordering::SeqCst);
        self.inner.closed.store(true, Ordering::SeqCst);
        if let Some(rows) = &self.inner.rows {
            rows.forget();
        }
        if let Some(p) = self
            .inner
            .prefetch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            p.cancel();
        }
    }

    /// Every visible cell of the region at the current read point, for tests
    /// and tools (unbounded memory: small regions only).
    pub async fn dump(&self) -> Result<Vec<Cell>, RegionError> {
        let scan = Scan {
            max_versions: u32::MAX,
            ..Scan::all()
        };
        let mut scanner = self.scanner(scan)?;
        let mut out = Vec::new();
        while let Some(row) = scanner.next().await? {
            out.extend(row.cells);
        }
        Ok(out)
    }
}

/// What an open's steps produced, from which the region is served.
struct Opened {
    config: RegionConfig,
    env: RegionEnv,
    stores: BTreeMap<Bytes, Store>,
    writer: ManifestWriter,
    replayed: Replayed,
    flush_jitter_ms: i64,
    oldest_edit_ms: i64,
    prefetch: Option<crate::cache::PrefetchHandle>,
}

/// What replaying a region's WAL entries left.
struct Replayed {
    /// The highest sequence number the region holds.
    last_seq: u64,
    /// Entries replayed into the memstores.
    entries: usize,
    /// Nonces of the increments and appends replayed (a retry is refused).
    nonces: nonces::Nonces,
    /// A dead server's entries to log again in this server's WAL.
    relog: Vec<WalEntry>,
}

/// Refuses a region configuration no region can open with: no family, a
/// bad family name or file setting, or `max_versions` of 0.
fn validate_open(config: &RegionConfig) -> Result<(), RegionError> {
    let invalid = |reason: String| RegionError::InvalidArgument {
        region: config.region_id.clone(),
        reason,
    };
    if config.families.is_empty() {
        return Err(invalid("a region needs at least one column family".into()));
    }
    for f in &config.families {
        config::validate_family_name(&f.name).map_err(|r| {
            invalid(format!(
                "family name {:?} {r}",
                String::from_utf8_lossy(&f.name)
            ))
        })?;
        f.sst.validate().map_err(|e| invalid(e.to_string()))?;
        if f.retention.max_versions == 0 {
            return Err(invalid("max_versions must be at least 1".into()));
        }
    }
    Ok(())
}

/// Fence, the first step of an open: takes ownership of the region's
/// manifest with the next epoch (from `hint` if recent enough), asking
/// `may_own` before each attempt, so any previous owner's next commit
/// fails. Families the region no longer has (deleted by an alter) leave
/// the manifest, so GC can delete their files after its grace.
async fn fence(
    config: &RegionConfig,
    env: &RegionEnv,
    hint: Option<(crate::manifest::Manifest, std::time::Instant)>,
    may_own: &(dyn Fn() -> bool + Sync),
) -> Result<ManifestWriter, RegionError> {
    let region = &config.region_id;
    let manifest_err = |source| RegionError::Manifest {
        region: region.clone(),
        source,
    };
    let mut writer = ManifestStore::new(env.bucket.clone(), config.region_dir.clone())
        .open_owner_guarded(
            config.start_row.clone(),
            config.end_row.clone(),
            hint,
            may_own,
        )
        .await
        .map_err(manifest_err)?;
    let configured: std::collections::HashSet<String> = config
        .families
        .iter()
        .map(|f| String::from_utf8_lossy(&f.name).into_owned())
        .collect();
    if writer
        .current()
        .stores
        .keys()
        .any(|f| !configured.contains(f))
    {
        let keep = configured.clone();
        writer
            .commit(move |m| m.stores.retain(|f, _| keep.contains(f)))
            .await
            .map_err(manifest_err)?;
        tracing::info!(region = %region, "files of deleted column families dropped from the manifest");
    }
    Ok(writer)
}

/// Opens every family's files as `manifest` lists them (newest first), each
/// pinned against GC while the region holds it.
async fn open_stores(
    config: &RegionConfig,
    env: &RegionEnv,
    manifest: &crate::manifest::Manifest,
) -> Result<BTreeMap<Bytes, Store>, RegionError> {
    let mut stores = BTreeMap::new();
    for family in &config.families {
        let name = String::from_utf8_lossy(&family.name).into_owned();
        let entries = manifest.stores.get(&name).cloned().unwrap_or_default();
        let opens = entries.into_iter().rev().map(|entry| {
            let fetcher = env.family_fetcher(family);
            let pins = env.pins.clone();
            async move {
                let pin = Arc::new(pins.pin(entry.id));
                let file = SstFile {
                    id: entry.id,
                    path: entry.path.clone(),
                };
                let reader = SstReader::open(fetcher, file).await?;
                Ok::<_, crate::sst::SstError>(LiveFile {
                    reader,
                    entry,
                    _pin: pin,
                })
            }
        });
        let files = futures::future::try_join_all(opens)
            .await
            .map_err(|source| RegionError::Sst {
                region: config.region_id.clone(),
                source,
            })?;
        stores.insert(
            family.name.clone(),
            Store::new(family.clone(), files, env.memstore.clone()),
        );
    }
    Ok(stores)
}

/// Replay: what the WALs hold beyond the manifest's flushed sequence — this
/// server's, and any dead server's entries handed in as `foreign` — goes
/// into the memstores of `stores`, in sequence order. Entries this server's
/// own WAL holds too (same sequence number) are replayed once; the foreign
/// ones left are to be logged again ([`Replayed::relog`]).
fn replay(
    config: &RegionConfig,
    env: &RegionEnv,
    manifest: &crate::manifest::Manifest,
    stores: &BTreeMap<Bytes, Store>,
    foreign: Vec<WalEntry>,
) -> Result<Replayed, RegionError> {
    let region = &config.region_id;
    let mut recovered = env
        .wal
        .take_recovered(&config.region_id, manifest.flushed_seq);
    let own: std::collections::HashSet<u64> = recovered.iter().map(|e| e.seq).collect();
    let relog: Vec<WalEntry> = foreign
        .into_iter()
        .filter(|e| e.seq > manifest.flushed_seq && !own.contains(&e.seq))
        .collect();
    if !relog.is_empty() {
        recovered.extend(relog.iter().cloned());
        recovered.sort_by_key(|e| e.seq);
    }
    let mut last_seq = manifest.max_seq.max(manifest.flushed_seq);
    let mut replayed = 0usize;
    let nonces = nonces::Nonces::new(config.nonces);
    let replayed_at = env.clock.now_ms();
    for entry in recovered {
        let (marked, cells) =
            mutate::decode_entry(&entry.payload).map_err(|source| RegionError::Cell {
                region: region.clone(),
                source,
            })?;
        // A retry of a replayed increment or append is still refused.
        if let Some((nonce, written_ms)) = marked {
            nonces.record_replayed(nonce, written_ms, replayed_at);
        }
        for cell in cells {
            let Some(store) = stores.get(&cell.family) else {
                tracing::warn!(region = %region, family = ?cell.family, "WAL entry for a family the region no longer has; skipped");
                continue;
            };
            store
                .memstore
                .insert(&cell)
                .map_err(|source| RegionError::Cell {
                    region: region.clone(),
                    source,
                })?;
        }
        last_seq = last_seq.max(entry.seq);
        replayed += 1;
    }
    Ok(Replayed {
        last_seq,
        entries: replayed,
        nonces,
        relog,
    })
}

/// Relog: a dead server's entries replayed here (`relog`) are appended to
/// this server's WAL before the region serves, so once every region of the
/// dead WAL has been reopened this way, nothing needs that WAL.
async fn relog(
    config: &RegionConfig,
    env: &RegionEnv,
    relog: &[WalEntry],
) -> Result<(), RegionError> {
    if relog.is_empty() {
        return Ok(());
    }
    let entries: Vec<(u64, bytes::Bytes)> =
        relog.iter().map(|e| (e.seq, e.payload.clone())).collect();
    env.wal
        .append_bulk(&config.region_id, &entries)
        .await
        .map_err(|source| RegionError::Wal {
            region: config.region_id.clone(),
            source,
        })?;
    tracing::info!(region = %config.region_id, entries = relog.len(), "entries of a dead server's WAL logged again");
    Ok(())
}

/// Warm: L2 fills with the region's files in the background (the families
/// that prefetch on open), then L1 from L2 while it has room, so the first
/// reads after a restart find decoded blocks. None without a cache.
fn start_prefetch(
    env: &RegionEnv,
    stores: &BTreeMap<Bytes, Store>,
) -> Option<crate::cache::PrefetchHandle> {
    env.cache.as_ref().map(|cache| {
        let files = stores
            .values()
            .filter(|s| s.config.cache.prefetch_on_open)
            .flat_map(|s| {
                let policy = s.config.cache;
                s.files()
                    .iter()
                    .map(move |f| crate::cache::PrefetchFile {
                        path: f.entry.path.clone(),
                        blocks: (0..f.reader.data_block_count())
                            .filter_map(|i| f.reader.block_addr(i))
                            .collect(),
                        l1: Some(policy),
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        cache.prefetch_counted(files, env.prefetch_bytes_per_sec, env.block_sources.clone())
    })
}

/// This region's random extra delay before a periodic flush, within the
/// scheduler's jitter of its interval, so regions never flush all at once.
fn flush_jitter_ms(env: &RegionEnv) -> i64 {
    let interval_ms = env
        .scheduler
        .options()
        .flush_interval
        .map_or(0, |d| d.as_millis() as i64);
    let jitter_span = (interval_ms as f64 * env.scheduler.options().jitter.clamp(0.0, 1.0)) as i64;
    if jitter_span > 0 {
        rand::random_range(0..jitter_span)
    } else {
        0
    }
}
