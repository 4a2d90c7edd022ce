//! The block cache: what sits between SST readers and the object store.
//!
//! Tiers, as a read meets them:
//!
//! 1. **L1, in memory.** Three pools with separate budgets so that one kind of
//!    traffic cannot evict another: *meta* (file tails: index, bloom and meta
//!    blocks, read when a file opens), *in-memory* (decoded data blocks of
//!    families flagged in-memory) and *data* (other decoded data blocks). Data
//!    blocks are held decoded, so a hit skips checksum and decompression.
//! 2. **L2, on local disk** (an [`L2`] implementation, optional): block frames
//!    exactly as stored in the SST, persistent across restarts. Every frame's
//!    crc32c is verified when read from L2; a bad frame is a miss.
//! 3. **A peer's L2** (cluster mode, a [`PeerTier`], optional): the server
//!    that served a region before it moved here may still hold its blocks;
//!    its frames are verified like L2's (see `peer.rs`).
//! 4. **The object store**: one ranged GET per missing block, shared by every
//!    concurrent miss of the same block (single-flight).
//!
//! Keys are (file id, offset): files are immutable and their ids (ULIDs) are
//! never reused, so an entry can never be stale. Deleting a file's blocks after
//! a compaction only frees space early.
//!
//! A [`BlockCache`] is shared by a whole server; each column family reads
//! through a [`FamilyCache`] view carrying the family's policy (cache data on
//! read, in-memory priority).

mod disk;
mod fill_l1;
mod flight;
mod footprint;
mod l1;
mod metrics;
mod peer;
mod prefetch;
pub(crate) mod row_bundle;
mod rows;
pub(crate) use rows::{CachedRow, row_hash};
mod sources;

pub use disk::{DiskCache, DiskCacheConfig, DiskCacheError, DiskCacheMetrics};
pub use footprint::Footprint;
pub use metrics::{CacheMetricsSnapshot, PoolSnapshot};
pub use peer::{PeerAnswer, PeerAsk, PeerSnapshot, PeerTier};
pub use prefetch::{PrefetchFile, PrefetchHandle, PrefetchProgress};
pub use row_bundle::{HandedRow, RowBundle, RowBundleError};
use sources::Source;
pub use sources::{BlockSources, BlockSourcesSnapshot};

use crate::sst::{Block, BlockAddr, BlockFetcher, BlockKind, FileId, SstError};
use bytes::Bytes;
use flight::Flights;
use futures::FutureExt;
use futures::future::BoxFuture;
use l1::{Pool, Weighted};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Offset used in the key of a file's tail (no block starts there).
const TAIL_OFFSET: u64 = u64::MAX;

/// Budgets of the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfig {
    /// L1 bytes for decoded data blocks (default 256 MiB).
    pub l1_data_bytes: usize,
    /// L1 bytes for decoded data blocks of in-memory families (default 64 MiB).
    pub l1_in_memory_bytes: usize,
    /// L1 bytes for file tails: index, bloom and meta (default 64 MiB).
    pub l1_meta_bytes: usize,
    /// L1 bytes for whole rows served to point gets (default 64 MiB; 0
    /// turns the row cache off). See `rows.rs` and `docs/cache.md`.
    pub l1_rows_bytes: usize,
    /// Lock shards per pool (default 16).
    pub shards: usize,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            l1_data_bytes: 256 << 20,
            l1_in_memory_bytes: 64 << 20,
            l1_meta_bytes: 64 << 20,
            l1_rows_bytes: 64 << 20,
            shards: 16,
        }
    }
}

/// How one column family uses the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FamilyCachePolicy {
    /// Keep data blocks read from L2 or the object store (default true). When
    /// false, only file tails are cached for the family.
    pub cache_data_on_read: bool,
    /// Use the in-memory pool, whose budget other families cannot use up.
    pub in_memory: bool,
    /// Copy the family's files into L2 in the background when its region
    /// opens (default true; only blocks L2 lacks are fetched).
    pub prefetch_on_open: bool,
    /// Let scans fill the cache with the data blocks they read (default true).
    /// When false, scans still use cached blocks but do not add to the cache,
    /// so a large scan cannot evict the working set of gets.
    pub cache_scans: bool,
}

impl Default for FamilyCachePolicy {
    fn default() -> Self {
        FamilyCachePolicy {
            cache_data_on_read: true,
            in_memory: false,
            prefetch_on_open: true,
            cache_scans: true,
        }
    }
}

/// A persistent second tier holding block frames.
pub trait L2: Send + Sync + 'static {
    /// The frame stored for `key`, if any. Implementations return `None` for
    /// anything they cannot vouch for; the cache also verifies the frame.
    fn get(&self, file: FileId, offset: u64) -> BoxFuture<'_, Option<Bytes>>;
    /// Stores a frame. Must not block the caller for long: an implementation
    /// that has to shed load drops the insert and counts it.
    fn insert(&self, file: FileId, offset: u64, frame: Bytes);
    /// Forgets every entry of `file`.
    fn remove_file(&self, file: FileId);
    /// True if [`L2::get`] checks every byte it returns against a checksum
    /// taken when the entry was inserted. The cache inserts only sound
    /// frames, so it then skips its own pass over a hit's bytes (one
    /// checksum pass per hit instead of three). Default: `false`.
    fn verifies_payload(&self) -> bool {
        false
    }
    /// True if an entry for the key is (probably) present; used to skip work,
    /// never trusted for data.
    fn contains(&self, file: FileId, offset: u64) -> bool;
    /// The tier's own counters and gauges.
    fn metrics(&self) -> DiskCacheMetrics {
        DiskCacheMetrics::default()
    }
}

#[derive(Clone)]
struct Tail {
    bytes: Bytes,
    size: u64,
}

impl Weighted for Tail {
    fn weight(&self) -> usize {
        self.bytes.len()
    }
}

impl Weighted for Block {
    fn weight(&self) -> usize {
        self.len()
    }
}

type Key = (FileId, u64);

struct Inner {
    source: Arc<dyn BlockFetcher>,
    l2: Option<Arc<dyn L2>>,
    data: Pool<Key, Block>,
    in_memory: Pool<Key, Block>,
    meta: Pool<Key, Tail>,
    rows: rows::RowPool,
    /// A missing block's frame, and whether a peer supplied it.
    block_flights: Flights<Key, (Bytes, bool), SstError>,
    tail_flights: Flights<Key, (Bytes, u64), SstError>,
    l2_hits: AtomicU64,
    l2_misses: AtomicU64,
    l2_corrupt: AtomicU64,
    source_gets: AtomicU64,
    source_bytes: AtomicU64,
    shared_misses: AtomicU64,
    prefetch_total: AtomicU64,
    prefetch_done: AtomicU64,
    peers: std::sync::RwLock<Option<Arc<dyn PeerTier>>>,
    peer: peer::PeerCounters,
}

/// The server-wide block cache.
#[derive(Clone)]
pub struct BlockCache {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("metrics", &self.metrics())
            .finish()
    }
}

impl BlockCache {
    /// A cache in front of `source` (normally a [`crate::sst::BucketFetcher`]).
    pub fn new(
        config: CacheConfig,
        source: Arc<dyn BlockFetcher>,
        l2: Option<Arc<dyn L2>>,
    ) -> BlockCache {
        BlockCache {
            inner: Arc::new(Inner {
                source,
                l2,
                data: Pool::new(config.l1_data_bytes, config.shards),
                in_memory: Pool::new(config.l1_in_memory_bytes, config.shards),
                meta: Pool::new(config.l1_meta_bytes, config.shards),
                rows: rows::RowPool::new(config.l1_rows_bytes, config.shards),
                block_flights: Flights::default(),
                tail_flights: Flights::default(),
                l2_hits: AtomicU64::new(0),
                l2_misses: AtomicU64::new(0),
                l2_corrupt: AtomicU64::new(0),
                source_gets: AtomicU64::new(0),
                source_bytes: AtomicU64::new(0),
                shared_misses: AtomicU64::new(0),
                prefetch_total: AtomicU64::new(0),
                prefetch_done: AtomicU64::new(0),
                peers: std::sync::RwLock::new(None),
                peer: peer::PeerCounters::default(),
            }),
        }
    }

    /// The row cache, when it has a budget.
    pub(crate) fn rows(&self) -> Option<&rows::RowPool> {
        Some(&self.inner.rows).filter(|r| r.enabled())
    }

    /// A view for one column family.
    pub fn family(&self, policy: FamilyCachePolicy) -> Arc<FamilyCache> {
        self.family_counted(policy, None)
    }

    /// A view for one column family of a region whose block sources are
    /// counted in `sources`.
    pub fn family_counted(
        &self,
        policy: FamilyCachePolicy,
        sources: Option<Arc<BlockSources>>,
    ) -> Arc<FamilyCache> {
        Arc::new(FamilyCache {
            cache: self.clone(),
            policy,
            sources,
        })
    }

    fn pool(&self, policy: &FamilyCachePolicy) -> &Pool<Key, Block> {
        if policy.in_memory {
            &self.inner.in_memory
        } else {
            &self.inner.data
        }
    }

    /// Cache-on-write: a block just written to a new file enters the cache
    /// (decoded in L1, framed in L2) so the first reads of a flush's output
    /// never go to the object store.
    pub fn insert_written(
        &self,
        policy: FamilyCachePolicy,
        addr: BlockAddr,
        raw: &Bytes,
        frame: &Bytes,
    ) {
        if let Ok(block) = Block::new(raw.clone()) {
            self.pool(&policy).insert((addr.file, addr.offset), block);
        }
        if let Some(l2) = &self.inner.l2 {
            l2.insert(addr.file, addr.offset, frame.clone());
        }
    }

    /// Drops every cached block of `file` (its file was deleted by compaction).
    pub fn evict_file(&self, file: FileId) {
        let inner = &self.inner;
        inner.data.remove_where(|k| k.0 == file);
        inner.in_memory.remove_where(|k| k.0 == file);
        inner.meta.remove_where(|k| k.0 == file);
        if let Some(l2) = &inner.l2 {
            l2.remove_file(file);
        }
    }

    /// Counters and gauges of every tier.
    pub fn metrics(&self) -> CacheMetricsSnapshot {
        let i = &self.inner;
        CacheMetricsSnapshot {
            data: PoolSnapshot::of(&i.data),
            in_memory: PoolSnapshot::of(&i.in_memory),
            meta: PoolSnapshot::of(&i.meta),
            rows: PoolSnapshot::of(i.rows.pool()),
            l2_hits: i.l2_hits.load(Ordering::Relaxed),
            l2_misses: i.l2_misses.load(Ordering::Relaxed),
            l2_corrupt: i.l2_corrupt.load(Ordering::Relaxed),
            object_store_gets: i.source_gets.load(Ordering::Relaxed),
            object_store_bytes: i.source_bytes.load(Ordering::Relaxed),
            shared_misses: i.shared_misses.load(Ordering::Relaxed),
            prefetch_bytes_total: i.prefetch_total.load(Ordering::Relaxed),
            prefetch_bytes_done: i.prefetch_done.load(Ordering::Relaxed),
            peer: i.peer.snapshot(),
            l2: i.l2.as_ref().map(|l2| l2.metrics()),
        }
    }

    async fn block_frame(
        &self,
        path: &str,
        addr: BlockAddr,
        kind: BlockKind,
        fill_l2: bool,
        sources: Option<&BlockSources>,
    ) -> Result<(Bytes, bool), SstError> {
        let inner = &self.inner;
        if let Some(l2) = &inner.l2 {
            match l2.get(addr.file, addr.offset).await {
                Some(frame) if l2_frame_is_sound(l2.as_ref(), &frame, addr.len) => {
                    inner.l2_hits.fetch_add(1, Ordering::Relaxed);
                    if let Some(s) = sources {
                        s.count(Source::L2);
                    }
                    return Ok((frame, true));
                }
                Some(_) => {
                    inner.l2_corrupt.fetch_add(1, Ordering::Relaxed);
                    inner.l2_misses.fetch_add(1, Ordering::Relaxed);
                }
                None => {
                    inner.l2_misses.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let cache = self.clone();
        let owned_path = path.to_string();
        let (result, led) = inner
            .block_flights
            .run((addr.file, addr.offset), move || {
                async move { cache.fetch_missing(&owned_path, addr, kind).await }.boxed()
            })
            .await;
        if !led {
            inner.shared_misses.fetch_add(1, Ordering::Relaxed);
        }
        let (frame, from_peer) = result.map_err(|e| shared_error(path, e))?;
        if let Some(s) = sources {
            // A shared miss is counted where its leader's fetch went (the
            // GET itself is the leader's).
            s.count(match (from_peer, led) {
                (true, _) => Source::Peer,
                (false, led) => Source::Store { gets: led as u64 },
            });
        }
        // Only a sound frame enters L2: a block the object store returned
        // damaged fails its read and is fetched again next time. A peer's
        // frames were verified on arrival.
        let mut verified = from_peer;
        if led
            && fill_l2
            && let Some(l2) = &inner.l2
        {
            verified = verified || frame_is_sound(&frame, addr.len);
            if verified {
                l2.insert(addr.file, addr.offset, frame.clone());
            }
        }
        Ok((frame, verified))
    }

    /// A block missing from L1 and L2: from a peer's L2 when one holds it
    /// (verified; `true`), else from the object store (counted as a GET).
    async fn fetch_missing(
        &self,
        path: &str,
        addr: BlockAddr,
        kind: BlockKind,
    ) -> Result<(Bytes, bool), SstError> {
        if let Some(mut frames) = self
            .peer_frames(path, std::slice::from_ref(&addr), PeerAsk::Read)
            .await
            && let Some(Some(frame)) = frames.pop()
        {
            return Ok((frame, true));
        }
        let frame = self.inner.source.fetch(path, addr, kind).await?;
        self.inner.source_gets.fetch_add(1, Ordering::Relaxed);
        self.inner
            .source_bytes
            .fetch_add(frame.len() as u64, Ordering::Relaxed);
        Ok((frame, false))
    }

    async fn tail(&self, path: &str, file: FileId, len: u64) -> Result<(Bytes, u64), SstError> {
        let inner = &self.inner;
        let key = (file, TAIL_OFFSET);
        if let Some(t) = inner.meta.get(&key)
            && (t.bytes.len() as u64 >= len || t.bytes.len() as u64 == t.size)
        {
            let keep = (t.bytes.len() as u64).min(len) as usize;
            return Ok((t.bytes.slice(t.bytes.len() - keep..), t.size));
        }
        if let Some(l2) = &inner.l2
            && let Some(stored) = l2.get(file, TAIL_OFFSET).await
            && let Some((bytes, size)) = decode_tail(&stored)
            && (bytes.len() as u64 >= len || bytes.len() as u64 == size)
        {
            inner.l2_hits.fetch_add(1, Ordering::Relaxed);
            inner.meta.insert(
                key,
                Tail {
                    bytes: bytes.clone(),
                    size,
                },
            );
            let keep = (bytes.len() as u64).min(len) as usize;
            return Ok((bytes.slice(bytes.len() - keep..), size));
        }
        let source = inner.source.clone();
        let owned_path = path.to_string();
        let (result, led) = inner
            .tail_flights
            .run(key, move || {
                async move { source.fetch_tail(&owned_path, file, len).await }.boxed()
            })
            .await;
        let (bytes, size) = result.map_err(|e| shared_error(path, e))?;
        if led {
            inner.source_gets.fetch_add(1, Ordering::Relaxed);
            inner
                .source_bytes
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            inner.meta.insert(
                key,
                Tail {
                    bytes: bytes.clone(),
                    size,
                },
            );
            if let Some(l2) = &inner.l2 {
                l2.insert(file, TAIL_OFFSET, encode_tail(&bytes, size));
            }
        }
        Ok((bytes, size))
    }
}

/// A tail stored in L2: the bytes, then the file size (u64 LE), then a crc32c
/// of both (u32 LE).
fn encode_tail(bytes: &Bytes, size: u64) -> Bytes {
    let mut out = Vec::with_capacity(bytes.len() + 12);
    out.extend_from_slice(bytes);
    out.extend_from_slice(&size.to_le_bytes());
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Bytes::from(out)
}

fn decode_tail(stored: &Bytes) -> Option<(Bytes, u64)> {
    let n = stored.len().checked_sub(12)?;
    let body = &stored[..n + 8];
    let crc = u32::from_le_bytes(stored[n + 8..].try_into().ok()?);
    if crc32c::crc32c(body) != crc {
        return None;
    }
    let size = u64::from_le_bytes(stored[n..n + 8].try_into().ok()?);
    Some((stored.slice(..n), size))
}

/// True if `frame`, an L2 hit, has the expected length and is a sound frame:
/// checked here unless the tier already checked every byte of it.
fn l2_frame_is_sound(l2: &dyn L2, frame: &Bytes, len: u64) -> bool {
    if l2.verifies_payload() {
        frame.len() as u64 == len && frame.len() >= crate::sst::FRAME_TRAILER_LEN
    } else {
        frame_is_sound(frame, len)
    }
}

/// True if `frame` has the expected length and its block checksum holds (the
/// SST frame trailer: kind byte, then crc32c of payload and kind).
fn frame_is_sound(frame: &Bytes, len: u64) -> bool {
    if frame.len() as u64 != len || frame.len() < crate::sst::FRAME_TRAILER_LEN {
        return false;
    }
    let body = frame.len() - 4;
    let stored = u32::from_le_bytes([
        frame[body],
        frame[body + 1],
        frame[body + 2],
        frame[body + 3],
    ]);
    crc32c::crc32c(&frame[..body]) == stored
}

fn shared_error(path: &str, e: Arc<SstError>) -> SstError {
    match Arc::try_unwrap(e) {
        Ok(e) => e,
        Err(shared) => SstError::Shared {
            file: path.to_string(),
            source: shared,
        },
    }
}

/// One family's view of the cache: a [`BlockFetcher`] for its SST readers.
pub struct FamilyCache {
    cache: BlockCache,
    policy: FamilyCachePolicy,
    sources: Option<Arc<BlockSources>>,
}

impl FamilyCache {
    /// The shared cache.
    pub fn cache(&self) -> &BlockCache {
        &self.cache
    }

    /// The family's policy.
    pub fn policy(&self) -> FamilyCachePolicy {
        self.policy
    }
}

impl BlockFetcher for FamilyCache {
    fn fetch<'a>(
        &'a self,
        path: &'a str,
        addr: BlockAddr,
        kind: BlockKind,
    ) -> BoxFuture<'a, Result<Bytes, SstError>> {
        Box::pin(async move { Ok(self.fetch_verified(path, addr, kind).await?.0) })
    }

    fn fetch_verified<'a>(
        &'a self,
        path: &'a str,
        addr: BlockAddr,
        kind: BlockKind,
    ) -> BoxFuture<'a, Result<(Bytes, bool), SstError>> {
        let fill = match kind {
            BlockKind::Tail => true,
            BlockKind::Data => self.policy.cache_data_on_read,
            BlockKind::DataNoFill => false,
        };
        Box::pin(
            self.cache
                .block_frame(path, addr, kind, fill, self.sources.as_deref()),
        )
    }

    fn fetch_tail<'a>(
        &'a self,
        path: &'a str,
        file: FileId,
        len: u64,
    ) -> BoxFuture<'a, Result<(Bytes, u64), SstError>> {
        Box::pin(self.cache.tail(path, file, len))
    }

    fn cached_block(&self, addr: &BlockAddr) -> Option<Block> {
        let block = self.cache.pool(&self.policy).get(&(addr.file, addr.offset));
        if block.is_some()
            && let Some(s) = &self.sources
        {
            s.count(Source::L1);
        }
        block
    }

    fn offer_block(&self, addr: BlockAddr, block: &Block) {
        if self.policy.cache_data_on_read {
            self.cache
                .pool(&self.policy)
                .insert((addr.file, addr.offset), block.clone());
        }
    }
}

#[cfg(test)]
mod tests;
