//! The regions this server hosts: startup (object store, WAL, cache, catalog,
//! region opens), routing a row to its region, and the live view of every
//! table. Admin operations live in `admin`, data operations in `data`,
//! splits and their cleanup in `split`, periodic work in `background`.
//!
//! Tables are copy-on-write: routing takes a read lock, clones an
//! `Arc<LiveTable>` and lets go; admin operations and splits build a new
//! `LiveTable` and swap it in. Admin operations are serialized by the
//! catalog lock.
//!
//! The host knows nothing of the cluster but its seam, defined here and
//! implemented by the cluster (`cluster/`): `ownership` (may this server
//! serve and acknowledge for its regions now?) and `cluster_role` (what the
//! host asks of the cluster it is a member of). What the cluster drives in turn is a
//! narrow host API: the slots (`slots`), the catalog kept in step
//! (`catalog_sync`), closed copies of regions moving away (`closed_copy`),
//! L2 frames for peers (`peer_frames`), and the environment a region opens
//! in (here: [`Host::region_config`], [`Host::region_env_for`]).

mod access;
mod admin;
mod background;
mod bulk_load;
mod catalog_sync;
mod closed_copy;
mod cluster_role;
mod data;
mod grants;
pub use access::Access;
pub use bulk_load::{BulkLoad, BulkLoadOutcome, LoadInput};
pub use grants::GrantSpec;
mod locate;
mod namespaces;
mod ownership;
mod peer_frames;
mod pitr_base;
mod pitr_restore;
mod slots;
mod snapshot_gc;
pub(crate) mod snapshot_pause;
mod snapshot_register;
mod snapshot_take;
mod snapshot_use;
mod split;

pub(crate) use cluster_role::ClusterRole;
pub use data::ScanStream;
pub(crate) use data::row_successor;
pub use locate::{NativeCluster, RegionLocation};
pub(crate) use ownership::{RegionOwnership, SingleNode};
pub use peer_frames::{MAX_PEER_BLOCKS, MAX_PEER_BYTES};
pub(crate) use snapshot_pause::CutPart as SnapshotCutPart;
pub use snapshot_take::SnapshotInfo;
pub use snapshot_use::SnapshotListing;

use crate::catalog::{CatalogStore, RegionRecord, TableRecord};
use crate::config::{ServerConfig, WalBackendName};
use crate::error::ServiceError;
use crate::metrics::RequestMetrics;
use crate::metrics::status::{RegionView, StatusView, TableView, WritePathView};
use bytes::Bytes;
use shoal_storage::background::Background;
use shoal_storage::cache::{BlockCache, CacheConfig, DiskCache, DiskCacheConfig, L2};
use shoal_storage::memstore::{BudgetOptions, MemstoreBudget};
use shoal_storage::object::Bucket;
use shoal_storage::region::{
    FlushScheduler, Region, RegionConfig, RegionEnv, SchedulerOptions, WriteStats,
};
use shoal_storage::wal::{Wal, WalOptions};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The background runtime could not start.
    #[error("background runtime: {0}")]
    Background(std::io::Error),
    /// A directory could not be created.
    #[error("cannot create {path}: {source}")]
    Dir {
        /// The directory.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The object store could not be opened.
    #[error("object store: {0}")]
    Object(#[from] shoal_storage::object::ObjectError),
    /// The object store settings are not usable.
    #[error("config key `{key}`: {message}")]
    ObjectConfig {
        /// The dotted key.
        key: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The WAL could not be opened.
    #[error("write-ahead log: {0}")]
    Wal(#[from] shoal_storage::wal::WalError),
    /// The L2 cache could not be opened.
    #[error("L2 cache: {0}")]
    Cache(#[from] shoal_storage::cache::DiskCacheError),
    /// The catalog could not be read.
    #[error(transparent)]
    Catalog(#[from] crate::catalog::CatalogError),
    /// The token file, TLS files or audit log could not be used.
    #[error(transparent)]
    Security(#[from] crate::security::SecurityError),
    /// Cluster mode could not start (etcd unreachable, a name taken).
    #[error("cluster: {0}")]
    Cluster(String),
    /// A region could not be opened.
    #[error("opening region {region} of table {table}: {source}")]
    Region {
        /// Table.
        table: String,
        /// Region id.
        region: String,
        /// What failed.
        source: Box<shoal_storage::region::RegionError>,
    },
}

/// A region slot in a live table.
#[derive(Debug, Clone)]
pub(crate) enum Slot {
    /// Serving.
    Open(Region),
    /// Being split or closed: calls wait and retry.
    Moving,
    /// Cluster mode: being closed for a move, its reads still answered —
    /// from the region while its closing flush runs (`reads_until` is
    /// `None`), then from the flushed copy until the next owner ends them or
    /// `reads_until` passes (`cluster/move_reads.rs`). Writes wait, as for
    /// `Moving`.
    Closing {
        region: Region,
        reads_until: Option<std::time::Instant>,
    },
    /// Cluster mode: served by another server (or by none right now).
    Elsewhere,
}

/// True while a `Slot::Closing` with this `reads_until` answers reads.
pub(crate) fn closing_reads(reads_until: &Option<std::time::Instant>) -> bool {
    reads_until.is_none_or(|until| std::time::Instant::now() < until)
}

/// One table as this server serves it right now.
#[derive(Debug, Clone)]
pub(crate) struct LiveTable {
    pub(crate) record: TableRecord,
    /// By start row; empty when the table is disabled.
    pub(crate) regions: BTreeMap<Bytes, (RegionRecord, Slot)>,
}

impl LiveTable {
    /// The slot holding `row`.
    pub(crate) fn slot_for(&self, row: &[u8]) -> Option<&(RegionRecord, Slot)> {
        self.regions
            .range::<[u8], _>((std::ops::Bound::Unbounded, std::ops::Bound::Included(row)))
            .next_back()
            .map(|(_, s)| s)
    }

    /// Every open region, in key order.
    pub(crate) fn open_regions(&self) -> Vec<Region> {
        self.regions
            .values()
            .filter_map(|(_, s)| match s {
                Slot::Open(r) => Some(r.clone()),
                Slot::Moving | Slot::Closing { .. } | Slot::Elsewhere => None,
            })
            .collect()
    }
}

/// The server's regions and everything they run on. Cheap to clone.
#[derive(Clone)]
pub struct Host {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("location", &self.inner.env.bucket.location())
            .finish()
    }
}

pub(crate) struct Inner {
    pub(crate) config: ServerConfig,
    /// Tokens, permissions in force, audit log, TLS.
    pub(crate) security: Arc<crate::security::Security>,
    pub(crate) env: RegionEnv,
    pub(crate) disk_cache: Option<DiskCache>,
    pub(crate) catalog: tokio::sync::Mutex<CatalogStore>,
    pub(crate) tables: RwLock<BTreeMap<String, Arc<LiveTable>>>,
    pub(crate) requests: Arc<RequestMetrics>,
    pub(crate) started: Instant,
    pub(crate) splits: AtomicU64,
    /// Single node: the balancer's switch. There is nothing to balance;
    /// it is remembered (while the server runs) for the clients that turn
    /// it and ask it, as HBase's tools do.
    pub(crate) balancer_on: AtomicBool,
    /// Flushes and compactions of regions no longer open (split, closed).
    pub(crate) retired_counters: (AtomicU64, AtomicU64),
    /// Write-path counters of regions that closed.
    pub(crate) retired_write: std::sync::Mutex<WriteStats>,
    pub(crate) stopping: AtomicBool,
    /// The gRPC address clients reach this server at (set once listening).
    pub(crate) address: std::sync::OnceLock<String>,
    /// Whether this server may serve and acknowledge for its regions now
    /// (the seam: [`SingleNode`], or the cluster's lease).
    pub(crate) ownership: Arc<dyn RegionOwnership>,
    /// Cluster mode: this server as a member of the cluster (the seam's
    /// other half; `None` on a single server).
    pub(crate) cluster: Option<Arc<dyn ClusterRole>>,
    /// Children of a split this server is installing (cluster mode): counted
    /// as open here so its round neither reopens nor closes them meanwhile.
    pub(crate) installing: std::sync::Mutex<std::collections::HashSet<String>>,
    /// The WAL regions open now log to (in cluster mode a new run replaces
    /// it when the server rejoins after losing its lease).
    pub(crate) wal: RwLock<Wal>,
    /// Where each region's blocks came from on this server, kept across
    /// closes and reopens (a region moved away and back, a warm handoff
    /// before the open). One entry per region this server has touched.
    pub(crate) block_sources: std::sync::Mutex<
        std::collections::HashMap<String, Arc<shoal_storage::cache::BlockSources>>,
    >,
    /// Pins of every snapshot's files (`snapshots/holds.rs`).
    pub(crate) snapshot_holds: crate::snapshots::SnapshotHolds,
    /// One snapshot operation at a time on this server.
    pub(crate) snapshot_lock: tokio::sync::Mutex<()>,
    /// Cluster mode: pauses held here for a cut the master coordinates,
    /// by snapshot id (`snapshot_pause.rs`).
    pub(crate) snapshot_pauses:
        std::sync::Mutex<std::collections::HashMap<String, snapshot_pause::Paused>>,
    /// When abandoned snapshot objects were last swept.
    pub(crate) snapshot_sweep: std::sync::Mutex<Option<Instant>>,
    /// When old catalog versions were last pruned (`pitr_base.rs`).
    pub(crate) catalog_prune: std::sync::Mutex<Option<Instant>>,
}

impl Host {
    /// Opens everything under the configuration and every enabled table's
    /// regions. Returns once regions are open; the L2 cache recovers in the
    /// background (reads fall back to the object store meanwhile).
    pub async fn open(config: ServerConfig) -> Result<Host, StartError> {
        Host::open_as(config, None).await
    }

    /// Cluster mode: opens storage and the catalog but no region (regions
    /// open when assigned); the WAL is the run `wal_run` in the object store.
    /// `cluster` is this server as a member of the cluster: it answers for
    /// the ownership of the regions served here, and for the cluster.
    pub(crate) async fn open_cluster<C>(
        config: ServerConfig,
        cluster: Arc<C>,
        wal_run: &str,
    ) -> Result<Host, StartError>
    where
        C: RegionOwnership + ClusterRole + 'static,
    {
        let seam = ClusterSeam {
            ownership: cluster.clone(),
            role: cluster,
            wal_run: wal_run.to_owned(),
        };
        Host::open_as(config, Some(seam)).await
    }

    async fn open_as(
        config: ServerConfig,
        cluster: Option<ClusterSeam>,
    ) -> Result<Host, StartError> {
        create_dir(&config.server.data_dir)?;
        let security = Arc::new(crate::security::Security::load(&config.auth, &config.tls)?);
        let bucket = open_bucket(&config).await?;
        let wal = open_wal(
            &config,
            &bucket,
            cluster.as_ref().map(|c| c.wal_run.as_str()),
        )
        .await?;
        let env = region_env(&config, bucket.clone(), wal.clone())?;
        let (env, disk_cache) = open_cache(&config, env)?;
        let catalog = CatalogStore::open(bucket.clone())
            .await?
            .keep_history(config.snapshots.point_in_time().is_some());
        security.set_grants(catalog.current());
        let (ownership, cluster): (Arc<dyn RegionOwnership>, _) = match cluster {
            Some(seam) => (seam.ownership, Some(seam.role)),
            None => (Arc::new(SingleNode), None),
        };
        let snapshot_holds = crate::snapshots::SnapshotHolds::new(env.pins.clone());
        // Before any region opens (and may collect garbage): an unreadable
        // record keeps every file (the holds say why in the log).
        let _ = snapshot_holds.sync(&bucket, catalog.current()).await;
        let host = Host {
            inner: Arc::new(Inner {
                security,
                config,
                env,
                disk_cache,
                catalog: tokio::sync::Mutex::new(catalog),
                tables: RwLock::new(BTreeMap::new()),
                requests: Arc::default(),
                started: Instant::now(),
                splits: AtomicU64::new(0),
                balancer_on: AtomicBool::new(true),
                retired_counters: (AtomicU64::new(0), AtomicU64::new(0)),
                retired_write: std::sync::Mutex::new(WriteStats::default()),
                stopping: AtomicBool::new(false),
                address: std::sync::OnceLock::new(),
                ownership,
                cluster,
                installing: std::sync::Mutex::default(),
                wal: RwLock::new(wal),
                block_sources: std::sync::Mutex::default(),
                snapshot_holds,
                snapshot_lock: tokio::sync::Mutex::default(),
                snapshot_pauses: std::sync::Mutex::default(),
                snapshot_sweep: std::sync::Mutex::new(None),
                catalog_prune: std::sync::Mutex::new(None),
            }),
        };
        if host.inner.cluster.is_some() {
            host.install_catalog().await;
        } else {
            host.open_all().await?;
        }
        Ok(host)
    }

    /// Opens every enabled table's regions (bounded concurrency) and lets the
    /// WAL drop entries of regions the catalog no longer has.
    async fn open_all(&self) -> Result<(), StartError> {
        let catalog = self.inner.catalog.lock().await.current().clone();
        let started = Instant::now();
        let mut known = std::collections::HashSet::new();
        for table in &catalog.tables {
            for r in &table.regions {
                known.insert(r.id.clone());
            }
            if !table.enabled {
                self.install(LiveTable {
                    record: table.clone(),
                    regions: BTreeMap::new(),
                });
                continue;
            }
            let live = self
                .open_table_regions(table)
                .await
                .map_err(|(region, source)| StartError::Region {
                    table: table.name.clone(),
                    region,
                    source,
                })?;
            self.install(live);
        }
        // Entries of regions that no longer exist (dropped, truncated, split
        // parents) are dead: release them so their segments can go.
        for region in self.inner.env.wal.recovered_regions() {
            if !known.contains(&region) {
                self.release_wal(&region).await;
            }
        }
        let regions: usize = self.tables().iter().map(|t| t.regions.len()).sum();
        tracing::info!(
            tables = catalog.tables.len(),
            regions,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "regions opened"
        );
        if self.config().server.noop {
            tracing::warn!(
                "server.noop is on: gets answer empty rows and mutations are acknowledged \
                 without being applied (a measuring tool, never for data)"
            );
        }
        Ok(())
    }

    /// Opens a table's regions concurrently.
    pub(crate) async fn open_table_regions(
        &self,
        table: &TableRecord,
    ) -> Result<LiveTable, (String, Box<shoal_storage::region::RegionError>)> {
        use futures::StreamExt;
        let opens = futures::stream::iter(table.regions.iter().cloned().map(|record| {
            let host = self.clone();
            let table = table.clone();
            async move {
                let region = host
                    .open_region(&table, &record)
                    .await
                    .map_err(|e| (record.id.clone(), Box::new(e)))?;
                Ok::<_, (String, Box<shoal_storage::region::RegionError>)>((record, region))
            }
        }))
        .buffer_unordered(self.inner.config.regions.open_concurrency)
        .collect::<Vec<_>>()
        .await;
        let mut regions = BTreeMap::new();
        for r in opens {
            let (record, region) = r?;
            regions.insert(record.start_row.clone(), (record, Slot::Open(region)));
        }
        Ok(LiveTable {
            record: table.clone(),
            regions,
        })
    }

    /// Opens one region of `table` (in cluster mode, only while the lease
    /// held now lasts: see [`Host::ownership_from_now`]).
    pub(crate) async fn open_region(
        &self,
        table: &TableRecord,
        record: &RegionRecord,
    ) -> Result<Region, shoal_storage::region::RegionError> {
        Region::open_guarded(
            self.region_config(table, record),
            self.region_env_for(&record.id),
            Vec::new(),
            None,
            &self.ownership_from_now(),
        )
        .await
    }

    /// Region `id`'s block-source counters on this server (created on first use).
    pub(crate) fn block_sources(&self, id: &str) -> Arc<shoal_storage::cache::BlockSources> {
        self.inner
            .block_sources
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(id.to_string())
            .or_default()
            .clone()
    }

    /// How region `record` of `table` opens under this server's settings.
    pub(crate) fn region_config(&self, table: &TableRecord, record: &RegionRecord) -> RegionConfig {
        let mut config = RegionConfig::new(
            record.id.clone(),
            record.dir.clone(),
            table
                .families
                .iter()
                .map(|f| f.to_family_config())
                .collect(),
        );
        config.start_row = record.start_row.clone();
        config.end_row = record.end_row.clone();
        config.flush_size = self.inner.config.regions.flush_size.0 as usize;
        config.compaction_trigger_files = self.inner.config.regions.compaction_trigger_files;
        let m = &self.inner.config.memstore;
        config.blocking_multiplier = m.blocking_multiplier;
        config.in_memory_flush_size =
            m.effective_in_memory_flush_size(self.inner.config.regions.flush_size.0) as usize;
        config.pipeline_max_segments = m.pipeline_max_segments;
        config.nonces = shoal_storage::region::NonceOptions {
            window: self.inner.config.regions.nonce_window,
            max_entries: self.inner.config.regions.nonce_capacity,
        };
        config
    }

    /// The environment region `id` opens in now (with the current WAL run
    /// and the region's block-source counters).
    pub(crate) fn region_env_for(&self, id: &str) -> RegionEnv {
        let mut env = self.inner.env.clone();
        env.wal = self.current_wal();
        env.block_sources = Some(self.block_sources(id));
        env
    }

    /// Cluster mode, after rejoining: regions opened from now on log to
    /// `wal` (a new run); the former run is closed.
    pub(crate) fn swap_wal(&self, wal: Wal) {
        let old = std::mem::replace(
            &mut *self.inner.wal.write().unwrap_or_else(|e| e.into_inner()),
            wal,
        );
        tokio::spawn(async move {
            if let Err(e) = old.close().await {
                tracing::warn!(error = %e, "closing the former WAL run failed");
            }
        });
    }

    /// The WAL regions log to now.
    pub(crate) fn current_wal(&self) -> Wal {
        self.inner
            .wal
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Closes regions (flushing them), counting their work as retired.
    pub(crate) async fn close_regions(
        &self,
        regions: Vec<Region>,
    ) -> Result<(), shoal_storage::region::RegionError> {
        let results = futures::future::join_all(regions.iter().map(|r| r.close())).await;
        for (region, result) in regions.iter().zip(results) {
            match result {
                Ok(()) => {}
                Err(shoal_storage::region::RegionError::Closed { .. }) => {}
                Err(e) => return Err(e),
            }
            self.retire(region);
        }
        Ok(())
    }

    /// Keeps a closed region's flush and compaction counts in the totals.
    pub(crate) fn retire(&self, region: &Region) {
        let (f, c) = region.counters();
        let (flushes, compactions) = &self.inner.retired_counters;
        flushes.fetch_add(f, Ordering::Relaxed);
        compactions.fetch_add(c, Ordering::Relaxed);
        let w = region.write_stats();
        let mut r = self
            .inner
            .retired_write
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        r.flush_micros += w.flush_micros;
        r.flush_bytes += w.flush_bytes;
        r.imc_flattens += w.imc_flattens;
        r.imc_merges += w.imc_merges;
        r.imc_cells_dropped += w.imc_cells_dropped;
    }

    /// Tells the WAL a region is gone for good.
    pub(crate) async fn release_wal(&self, region: &str) {
        let wal = &self.current_wal();
        drop(wal.take_recovered(region, u64::MAX));
        if let Err(e) = wal.mark_flushed(region, u64::MAX).await {
            tracing::warn!(region, error = %e, "releasing a removed region's WAL entries failed; segments stay until a later flush");
        }
    }

    pub(crate) fn install(&self, table: LiveTable) {
        let mut tables = self.inner.tables.write().unwrap_or_else(|e| e.into_inner());
        tables.insert(table.record.name.clone(), Arc::new(table));
    }

    pub(crate) fn uninstall(&self, name: &str) {
        let mut tables = self.inner.tables.write().unwrap_or_else(|e| e.into_inner());
        tables.remove(name);
    }

    /// The live table `name` (`default:t` names `t`).
    pub(crate) fn table(&self, name: &str) -> Result<Arc<LiveTable>, ServiceError> {
        let tables = self.inner.tables.read().unwrap_or_else(|e| e.into_inner());
        tables
            .get(crate::catalog::names::canonical(name))
            .cloned()
            .ok_or_else(|| ServiceError::NoSuchTable(name.to_string()))
    }

    /// The catalog record of table `name` as served now.
    pub fn table_record(&self, name: &str) -> Option<crate::catalog::TableRecord> {
        self.table(name).ok().map(|t| t.record.clone())
    }

    /// Every live table.
    pub(crate) fn tables(&self) -> Vec<Arc<LiveTable>> {
        let tables = self.inner.tables.read().unwrap_or_else(|e| e.into_inner());
        tables.values().cloned().collect()
    }

    /// Tokens, permissions, audit log and TLS.
    pub fn security(&self) -> &Arc<crate::security::Security> {
        &self.inner.security
    }

    /// Request metrics.
    pub fn requests(&self) -> &Arc<RequestMetrics> {
        &self.inner.requests
    }

    /// The settings the server runs with.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// Where the data lives.
    pub fn data_location(&self) -> String {
        self.inner.env.bucket.location().to_string()
    }

    /// The block cache, if enabled.
    pub fn cache(&self) -> Option<&BlockCache> {
        self.inner.env.cache.as_ref()
    }

    /// The cache's L2 tier, if it has one.
    pub(crate) fn disk_cache(&self) -> Option<&DiskCache> {
        self.inner.disk_cache.as_ref()
    }

    /// The object store every region, manifest, catalog and WAL run is in.
    pub fn bucket(&self) -> &Bucket {
        &self.inner.env.bucket
    }

    /// Bytes per second a region's blocks are copied into the cache at
    /// (prefetch-on-open, and a warm handoff's copy).
    pub(crate) fn prefetch_rate(&self) -> u64 {
        self.inner.env.prefetch_bytes_per_sec
    }

    /// A snapshot of everything the server reports.
    pub fn status(&self) -> StatusView {
        let (tables, totals) = self.table_views();
        StatusView {
            cluster: self.inner.cluster.as_ref().map(|c| c.view()),
            version: env!("CARGO_PKG_VERSION"),
            uptime: self.inner.started.elapsed(),
            cpu: crate::process_cpu::process_cpu(),
            data_location: self.data_location(),
            tables,
            cache: self.cache().map(|c| c.metrics()),
            object_store: self.inner.env.bucket.metrics(),
            wal: self.current_wal().metrics(),
            requests: self.inner.requests.snapshot(),
            memstore_bytes: totals.memstore,
            flushes: totals.flushes,
            compactions: totals.compactions,
            splits: self.inner.splits.load(Ordering::Relaxed),
            write: self.write_path_view(&totals.write),
            snapshots: self.snapshot_summary(),
        }
    }

    /// What snapshots hold, and how much only for them (no region open
    /// here reads it).
    fn snapshot_summary(&self) -> crate::snapshots::HoldSummary {
        let live: std::collections::HashSet<shoal_storage::sst::FileId> = self
            .tables()
            .iter()
            .flat_map(|t| t.open_regions())
            .flat_map(|r| r.file_ids())
            .collect();
        self.inner.snapshot_holds.summary(&live)
    }

    /// Every table as served now, with the totals of its open regions and
    /// of the regions that closed (retired).
    fn table_views(&self) -> (Vec<TableView>, Totals) {
        let mut tables = Vec::new();
        let mut totals = Totals {
            memstore: 0,
            flushes: self.inner.retired_counters.0.load(Ordering::Relaxed),
            compactions: self.inner.retired_counters.1.load(Ordering::Relaxed),
            write: *self
                .inner
                .retired_write
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        };
        for t in self.tables() {
            let mut regions = Vec::new();
            for (record, slot) in t.regions.values() {
                let Slot::Open(region) = slot else {
                    continue;
                };
                regions.push(totals.add(record, region));
            }
            tables.push(TableView {
                name: t.record.name.clone(),
                enabled: t.record.enabled,
                families: t.record.families.iter().map(|f| f.name.clone()).collect(),
                regions,
            });
        }
        (tables, totals)
    }

    /// The write path's budget, backpressure and flushes, with `write`'s
    /// totals.
    fn write_path_view(&self, write: &WriteStats) -> WritePathView {
        let budget = &self.inner.env.memstore;
        let s = budget.stats();
        WritePathView {
            memstore_limit: budget.options().limit as u64,
            flush_watermark: budget.flush_watermark() as u64,
            flat_bytes: write.flat_bytes,
            blocked_writes: s.blocked_writes.load(Ordering::Relaxed),
            blocked_seconds: s.blocked_micros.load(Ordering::Relaxed) as f64 / 1e6,
            block_timeouts: s.block_timeouts.load(Ordering::Relaxed),
            pressure_flushes: s.pressure_flushes.load(Ordering::Relaxed),
            periodic_flushes: s.periodic_flushes.load(Ordering::Relaxed),
            flush_seconds: write.flush_micros as f64 / 1e6,
            flush_bytes: write.flush_bytes,
            imc_flattens: write.imc_flattens,
            imc_merges: write.imc_merges,
            imc_cells_dropped: write.imc_cells_dropped,
            stages: s.stages.snapshot(),
        }
    }

    /// Graceful stop: closes every region (flushing memstores), makes the L2
    /// cache's state durable, closes the WAL.
    pub async fn shutdown(&self) {
        self.inner.stopping.store(true, Ordering::SeqCst);
        let _catalog = self.inner.catalog.lock().await;
        let regions: Vec<Region> = self
            .tables()
            .iter()
            .flat_map(|t| t.open_regions())
            .collect();
        let started = Instant::now();
        if let Err(e) = self.close_regions(regions).await {
            tracing::error!(error = %e, "closing a region failed at shutdown; its WAL entries replay at the next start");
        }
        if let Some(l2) = &self.inner.disk_cache {
            l2.close();
        }
        if let Err(e) = self.current_wal().close().await {
            tracing::error!(error = %e, "closing the WAL failed");
        }
        tracing::info!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "regions closed, cache and WAL closed"
        );
    }

    /// True once shutdown began.
    pub(crate) fn is_stopping(&self) -> bool {
        self.inner.stopping.load(Ordering::SeqCst)
    }
}

/// What the status view sums over regions: open ones and retired ones.
struct Totals {
    memstore: u64,
    flushes: u64,
    compactions: u64,
    write: WriteStats,
}

impl Totals {
    /// Adds open region `region` (of `record`) and returns its view.
    fn add(&mut self, record: &RegionRecord, region: &Region) -> RegionView {
        let m = region.memstore_size() as u64;
        self.memstore += m;
        let (f, c) = region.counters();
        self.flushes += f;
        self.compactions += c;
        let w = region.write_stats();
        let write = &mut self.write;
        write.flush_micros += w.flush_micros;
        write.flush_bytes += w.flush_bytes;
        write.imc_flattens += w.imc_flattens;
        write.imc_merges += w.imc_merges;
        write.imc_cells_dropped += w.imc_cells_dropped;
        write.flat_bytes += w.flat_bytes;
        RegionView {
            id: record.id.clone(),
            start_row: record.start_row.clone(),
            end_row: record.end_row.clone(),
            size_bytes: region.size_bytes(),
            memstore_bytes: m,
            files: region.file_counts().values().sum::<usize>() as u32,
            cache_ratio: region.cached_fraction_recent(),
            block_sources: region.block_sources(),
            has_references: region.has_references(),
            prefetch: region.prefetch_progress().map(|p| {
                (
                    p.done_bytes.load(Ordering::Relaxed),
                    p.total_bytes.load(Ordering::Relaxed),
                )
            }),
        }
    }
}

/// The cluster side of the seam a host opens with (cluster mode), and the
/// WAL run its regions log to.
struct ClusterSeam {
    ownership: Arc<dyn RegionOwnership>,
    role: Arc<dyn ClusterRole>,
    wal_run: String,
}

/// Creates directory `p` (and its parents) if missing.
fn create_dir(p: &std::path::Path) -> Result<(), StartError> {
    std::fs::create_dir_all(p).map_err(|source| StartError::Dir {
        path: p.display().to_string(),
        source,
    })
}

/// The object store the configuration names (a local directory by default).
async fn open_bucket(config: &ServerConfig) -> Result<Bucket, StartError> {
    let objects = config.objects_dir();
    if config.object_store.url.is_empty() {
        create_dir(&objects)?;
    }
    let object_config = config
        .object_store
        .resolve(&objects)
        .map_err(|(key, message)| StartError::ObjectConfig { key, message })?;
    Ok(Bucket::open(&object_config).await?)
}

/// The WAL regions log to: local segment files, or the object store under
/// `run` (cluster mode: this server's run; `wal/server-1` otherwise).
async fn open_wal(
    config: &ServerConfig,
    bucket: &Bucket,
    run: Option<&str>,
) -> Result<Wal, StartError> {
    let wal_options = match config.wal.backend {
        WalBackendName::Local => {
            let wal_dir = config.wal_dir();
            create_dir(&wal_dir)?;
            WalOptions {
                commit_delay: config.wal.commit_delay,
                ..WalOptions::local(wal_dir)
            }
        }
        WalBackendName::Object => {
            let options = WalOptions::object(bucket.clone(), run.unwrap_or("wal/server-1"));
            match config.snapshots.point_in_time() {
                Some(pit) => options.with_history(pit.history()),
                None => options,
            }
        }
    };
    Ok(Wal::open(wal_options).await?)
}

/// The environment regions open in, without a cache: the bucket and WAL,
/// compaction and flush slots, the memstore budget, the flush scheduler
/// and the background runtime.
fn region_env(config: &ServerConfig, bucket: Bucket, wal: Wal) -> Result<RegionEnv, StartError> {
    let mut env = RegionEnv::new(bucket, wal);
    env.prefetch_bytes_per_sec = config.cache.prefetch_rate.0;
    env.cache_compaction_output_bytes = config.cache.cache_compaction_output_max.0;
    env.compaction_slots = Arc::new(tokio::sync::Semaphore::new(
        config.regions.compaction_concurrency,
    ));
    let m = &config.memstore;
    env.flush_slots = Arc::new(tokio::sync::Semaphore::new(m.flush_concurrency));
    let (memory, memory_source) = crate::memory::available_memory();
    tracing::info!(
        memory_bytes = memory,
        source = ?memory_source,
        memstore_limit_bytes = m.limit_bytes(),
        "memory budget"
    );
    env.memstore = MemstoreBudget::new(BudgetOptions {
        limit: m.limit_bytes() as usize,
        flush_fraction: m.flush_watermark,
        block_timeout: m.block_timeout,
    });
    env.scheduler = FlushScheduler::new(SchedulerOptions {
        flush_interval: (!m.flush_interval.is_zero()).then_some(m.flush_interval),
        jitter: m.flush_jitter,
        check_every: std::time::Duration::from_secs(1),
        max_wal_bytes: config.wal.max_unflushed_bytes(),
    });
    env.background = Some(
        Background::new(
            config.regions.background_threads,
            config.regions.background_nice,
        )
        .map_err(StartError::Background)?,
    );
    Ok(env)
}

/// `env` with the block cache the configuration asks for (none when
/// caching is off), and its L2 if it has one.
fn open_cache(
    config: &ServerConfig,
    env: RegionEnv,
) -> Result<(RegionEnv, Option<DiskCache>), StartError> {
    if !config.cache.enabled {
        return Ok((env, None));
    }
    let mut disk_cache = None;
    let l2: Option<Arc<dyn L2>> = if config.cache.l2_capacity.0 > 0 {
        let l2_dir = config.l2_dir();
        let cache = DiskCache::open(DiskCacheConfig {
            nice: config.regions.background_nice,
            page_cache_reads: config.cache.l2_page_cache,
            ..DiskCacheConfig::new(l2_dir, config.cache.l2_capacity.0)
        })?;
        disk_cache = Some(cache.clone());
        Some(Arc::new(cache))
    } else {
        None
    };
    let cache = BlockCache::new(
        CacheConfig {
            l1_data_bytes: config.cache.l1_data.0 as usize,
            l1_in_memory_bytes: config.cache.l1_in_memory.0 as usize,
            l1_meta_bytes: config.cache.l1_meta.0 as usize,
            l1_rows_bytes: config.cache.l1_rows.0 as usize,
            ..CacheConfig::default()
        },
        env.fetcher.clone(),
        l2,
    );
    Ok((env.with_cache(cache), disk_cache))
}
