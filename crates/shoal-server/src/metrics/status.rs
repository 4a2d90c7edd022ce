//! A point-in-time view of the whole server — tables, regions, cache, object
//! store, WAL, requests — as plain data. The gRPC `Status` call, `/metrics`
//! and the status page all render from it.

use crate::metrics::RequestMetricsSnapshot;
use bytes::Bytes;
use shoal_storage::cache::CacheMetricsSnapshot;
use shoal_storage::object::ObjectMetricsSnapshot;
use shoal_storage::wal::WalMetricsSnapshot;
use std::time::Duration;

/// Everything the server reports about itself.
#[derive(Debug, Clone)]
pub struct StatusView {
    /// Shoal's version.
    pub version: &'static str,
    /// Time since the server started.
    pub uptime: Duration,
    /// CPU time the server process has used.
    pub cpu: crate::process_cpu::ProcessCpu,
    /// Where the data lives (object store location).
    pub data_location: String,
    /// Tables, by name.
    pub tables: Vec<TableView>,
    /// The block cache (absent when caching is off).
    pub cache: Option<CacheMetricsSnapshot>,
    /// Object-store requests by operation.
    pub object_store: ObjectMetricsSnapshot,
    /// The write-ahead log.
    pub wal: WalMetricsSnapshot,
    /// Client requests by operation.
    pub requests: RequestMetricsSnapshot,
    /// Bytes in all memstores.
    pub memstore_bytes: u64,
    /// Flushes completed since start (all regions, including closed ones).
    pub flushes: u64,
    /// Compactions completed since start.
    pub compactions: u64,
    /// Splits completed since start.
    pub splits: u64,
    /// Memstore limits, backpressure, flushes and in-memory compaction.
    pub write: WritePathView,
    /// Cluster mode: the cluster as this server sees it.
    pub cluster: Option<ClusterView>,
    /// What snapshots hold.
    pub snapshots: crate::snapshots::HoldSummary,
}

/// The cluster as one server sees it (its last round).
#[derive(Debug, Clone, Default)]
pub struct ClusterView {
    /// This server's name.
    pub name: String,
    /// True if this server is master.
    pub is_master: bool,
    /// The master's name and address.
    pub master: Option<(String, String)>,
    /// Live servers with their region counts.
    pub servers: Vec<ServerView>,
    /// True while this server holds its lease.
    pub lease_held: bool,
    /// Seconds since the lease was last renewed.
    pub lease_age_s: Option<f64>,
    /// Regions opened here after their owner died, and the ms they took.
    pub failovers: (u64, u64),
    /// Regions closed here for a move or drain, and the ms they took.
    pub moves_out: (u64, u64),
    /// Times this server lost its lease.
    pub lease_losses: u64,
    /// Reads through a move: reads answered here by regions closed for a
    /// move; regions opened here whose former owner ended its reads when
    /// asked; and those that waited out its bound instead.
    pub move_reads: (u64, u64, u64),
    /// Rows taken into the row cache here from former owners (moves).
    pub handed_rows: u64,
    /// The balancer's switch (as the master last read it).
    pub balancer_on: bool,
    /// The last failovers here.
    pub recent: Vec<Failover>,
    /// Peer reads (blocks of moved regions asked of their former owner).
    pub peer_calls: PeerCallStats,
}

/// One live server of the cluster (cluster mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerView {
    /// Name.
    pub name: String,
    /// gRPC address.
    pub addr: String,
    /// Native-RPC address ("" if it serves none).
    pub hbase: String,
    /// Regions it serves.
    pub regions: usize,
}

/// A region this server opened after its former owner died (cluster mode).
#[derive(Debug, Clone)]
pub struct Failover {
    /// The region.
    pub region: String,
    /// The dead owner's WAL runs it replayed.
    pub replayed_runs: usize,
    /// How long the open took, in ms.
    pub open_ms: u64,
    /// When, as seconds since this server started.
    pub at_s: u64,
}

/// Peer reads, the asking side: blocks of moved regions asked of their
/// former owner (cluster mode), for `/metrics`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PeerCallStats {
    /// `PeerBlocks` calls made.
    pub calls: u64,
    /// Calls that failed or missed their deadline.
    pub failures: u64,
    /// Total time of the calls, in microseconds.
    pub micros: u64,
    /// Regions whose former owner is asked now.
    pub hinted_regions: u64,
}

/// The write path: memstore limits, backpressure, flushes and in-memory
/// compaction (counters since start, including closed regions).
#[derive(Debug, Clone, Default)]
pub struct WritePathView {
    /// Total memstore bytes at which writes wait.
    pub memstore_limit: u64,
    /// Above this the largest regions flush.
    pub flush_watermark: u64,
    /// Bytes of the memstores in flat (in-memory compacted) segments.
    pub flat_bytes: u64,
    /// Writes that waited for memory.
    pub blocked_writes: u64,
    /// Total time writes waited for memory, seconds.
    pub blocked_seconds: f64,
    /// Writes that failed after waiting the block timeout.
    pub block_timeouts: u64,
    /// Flushes started by global memory pressure.
    pub pressure_flushes: u64,
    /// Flushes started because a memstore was old.
    pub periodic_flushes: u64,
    /// Time spent flushing, seconds.
    pub flush_seconds: f64,
    /// Bytes of files written by flushes.
    pub flush_bytes: u64,
    /// Skiplist segments flattened.
    pub imc_flattens: u64,
    /// Merges of flat segments.
    pub imc_merges: u64,
    /// Cells dropped by eager in-memory compaction.
    pub imc_cells_dropped: u64,
    /// Time per stage of the write path (`shoal_storage::write_stages`).
    pub stages: Vec<shoal_storage::write_stages::StageSnapshot>,
}

/// One table.
#[derive(Debug, Clone)]
pub struct TableView {
    /// Name.
    pub name: String,
    /// False when disabled.
    pub enabled: bool,
    /// Column family names.
    pub families: Vec<String>,
    /// Its regions in key order (empty when disabled).
    pub regions: Vec<RegionView>,
}

/// One open region.
#[derive(Debug, Clone)]
pub struct RegionView {
    /// Region id.
    pub id: String,
    /// First row (inclusive); empty = unbounded.
    pub start_row: Bytes,
    /// End row (exclusive); empty = unbounded.
    pub end_row: Bytes,
    /// Bytes of files plus memstore.
    pub size_bytes: u64,
    /// Bytes in the memstore.
    pub memstore_bytes: u64,
    /// Live files (all families).
    pub files: u32,
    /// Fraction of the region's data blocks held in the block cache (L1 or
    /// L2), when known.
    pub cache_ratio: Option<f64>,
    /// Where its data blocks came from on this server (reads and
    /// prefetches, since this server first opened or warmed it).
    pub block_sources: Option<shoal_storage::cache::BlockSourcesSnapshot>,
    /// Still reads its split parent's files.
    pub has_references: bool,
    /// Prefetch-on-open progress: (bytes done, bytes total).
    pub prefetch: Option<(u64, u64)>,
}
