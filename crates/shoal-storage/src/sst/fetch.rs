//! The seam between the SST reader and wherever bytes come from.
//!
//! The reader never talks to the object store directly: it asks a
//! [`BlockFetcher`] for a block by [`BlockAddr`] (file id, offset, length).
//! Files are immutable and uniquely named, so an address always denotes the same
//! bytes and a block cache can sit behind this trait with no invalidation. The
//! fetcher returns a block's frame exactly as stored; the reader verifies the
//! checksum and decompresses, so corruption anywhere below is caught.

use super::SstError;
use super::block::Block;
use bytes::Bytes;
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::fmt;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Identity of an SST file: a ULID, unique for all time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u128);

impl FileId {
    /// A new, unique id (a ULID: time-ordered, random low bits).
    pub fn generate() -> FileId {
        FileId(ulid::Ulid::new().0)
    }

    /// Parses the 26-character ULID form.
    pub fn parse(s: &str) -> Option<FileId> {
        ulid::Ulid::from_string(s).ok().map(|u| FileId(u.0))
    }
}

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&ulid::Ulid(self.0), f)
    }
}

/// An SST as the reader needs to know it: its id and its object path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SstFile {
    /// Unique id; the block cache keys on it.
    pub id: FileId,
    /// Object path (relative to the bucket).
    pub path: String,
}

/// Where one block lives: the cache key and the ranged GET in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockAddr {
    /// The file.
    pub file: FileId,
    /// Byte offset of the block's frame.
    pub offset: u64,
    /// Length of the frame.
    pub len: u64,
}

/// What a block holds, so a cache can give metadata priority over data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// Cells.
    Data,
    /// Cells read by a scan that asked not to fill the cache (a large scan
    /// should not evict the working set); served from the cache if present.
    DataNoFill,
    /// The tail: index, bloom and meta blocks, read together when a file opens.
    Tail,
}

/// Source of SST bytes.
pub trait BlockFetcher: Send + Sync + 'static {
    /// Reads exactly `addr.len` bytes at `addr.offset` of the file at `path`
    /// (one ranged GET on a miss).
    fn fetch<'a>(
        &'a self,
        path: &'a str,
        addr: BlockAddr,
        kind: BlockKind,
    ) -> BoxFuture<'a, Result<Bytes, SstError>>;

    /// [`BlockFetcher::fetch`], also saying whether the frame's checksum was
    /// verified over every byte on the way (a cache tier that checks what it
    /// returns): the reader then decodes it without a second pass. Sources
    /// that verify nothing keep this default.
    fn fetch_verified<'a>(
        &'a self,
        path: &'a str,
        addr: BlockAddr,
        kind: BlockKind,
    ) -> BoxFuture<'a, Result<(Bytes, bool), SstError>> {
        Box::pin(async move { Ok((self.fetch(path, addr, kind).await?, false)) })
    }

    /// Reads the last `len` bytes of the file (all of it if shorter) and returns
    /// them with the file's total size (one suffix GET).
    fn fetch_tail<'a>(
        &'a self,
        path: &'a str,
        file: FileId,
        len: u64,
    ) -> BoxFuture<'a, Result<(Bytes, u64), SstError>>;

    /// A decoded data block held in memory, if this source caches them. The
    /// reader asks before [`BlockFetcher::fetch`], so a hit skips the checksum
    /// and decompression as well as the I/O.
    fn cached_block(&self, addr: &BlockAddr) -> Option<Block> {
        let _ = addr;
        None
    }

    /// Offers a block the reader just fetched and decoded for caching.
    fn offer_block(&self, addr: BlockAddr, block: &Block) {
        let _ = (addr, block);
    }
}

/// Files held in memory: for tests, benchmarks and tools. Counts its requests.
#[derive(Debug, Default)]
pub struct MemoryFetcher {
    files: RwLock<HashMap<String, Bytes>>,
    fetches: AtomicU64,
}

impl MemoryFetcher {
    /// An empty fetcher.
    pub fn new() -> MemoryFetcher {
        MemoryFetcher::default()
    }

    /// Adds (or replaces) a file.
    pub fn insert(&self, path: impl Into<String>, bytes: impl Into<Bytes>) {
        let mut files = self.files.write().unwrap_or_else(|e| e.into_inner());
        files.insert(path.into(), bytes.into());
    }

    /// Requests served so far (ranged and tail reads).
    pub fn fetch_count(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    fn file(&self, path: &str) -> Result<Bytes, SstError> {
        let files = self.files.read().unwrap_or_else(|e| e.into_inner());
        files.get(path).cloned().ok_or_else(|| SstError::Object {
            file: path.to_string(),
            source: crate::object::ObjectError::NotFound {
                op: crate::object::Op::Get,
                path: path.to_string(),
            },
        })
    }
}

impl BlockFetcher for MemoryFetcher {
    fn fetch<'a>(
        &'a self,
        path: &'a str,
        addr: BlockAddr,
        _kind: BlockKind,
    ) -> BoxFuture<'a, Result<Bytes, SstError>> {
        Box::pin(async move {
            self.fetches.fetch_add(1, Ordering::Relaxed);
            let data = self.file(path)?;
            let end = addr.offset.saturating_add(addr.len);
            if end > data.len() as u64 {
                return Err(SstError::corruption(
                    path,
                    addr.offset,
                    format!(
                        "block of {} bytes runs past the end of a {}-byte file",
                        addr.len,
                        data.len()
                    ),
                ));
            }
            Ok(data.slice(addr.offset as usize..end as usize))
        })
    }

    fn fetch_tail<'a>(
        &'a self,
        path: &'a str,
        _file: FileId,
        len: u64,
    ) -> BoxFuture<'a, Result<(Bytes, u64), SstError>> {
        Box::pin(async move {
            self.fetches.fetch_add(1, Ordering::Relaxed);
            let data = self.file(path)?;
            let size = data.len() as u64;
            let start = size.saturating_sub(len) as usize;
            Ok((data.slice(start..), size))
        })
    }
}
