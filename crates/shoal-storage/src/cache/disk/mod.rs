//! L2: a persistent block cache on local disk.
//!
//! Blocks are appended to segment files (16 MiB by default) by one writer
//! thread; when the cache is full the oldest segment is reused (FIFO by
//! segment, like foyer's block engine, which we measured and chose not to use:
//! see the closing notes of the cache work). The index — key → (segment,
//! position, length) — lives in memory (about 70 bytes per entry) and is rebuilt
//! at startup from each segment's seal, so a restart reads a few kilobytes per
//! segment, not the data.
//!
//! Guarantees:
//! - **Inserts reach the disk when the writer drains them** (a `write` into
//!   the page cache, in batches), not on eviction: a killed process loses only
//!   what was still queued. An insert that finds the queue full is dropped and
//!   counted — never silently.
//! - **Startup never waits**: `open` reads 16 bytes per segment to pick where
//!   to write and returns; the index is rebuilt in the background while reads
//!   that find nothing yet fall through to the object store.
//! - **Never wrong data**: every entry carries its key and a crc32c over key and
//!   data, checked on every read; a torn, corrupted or overwritten entry is a
//!   miss.
//! - **Format versioned**: a directory with another `VERSION` is wiped, with a
//!   log line saying so.

mod format;
mod handles;

use super::L2;
use crate::sst::FileId;
use crate::writeback::WriteBehind;
use bytes::Bytes;
use format::{Key, Record};
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Settings of the disk cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskCacheConfig {
    /// The cache directory (created if missing; owned by the cache).
    pub dir: PathBuf,
    /// Disk budget in bytes (rounded down to whole segments, at least 2).
    pub capacity_bytes: u64,
    /// Segment size (default 16 MiB): the unit of eviction.
    pub segment_bytes: u64,
    /// Bytes of inserts that may wait for the writer (default 64 MiB); past
    /// that, inserts are dropped and counted.
    pub queue_bytes: u64,
    /// Nice value of the writer and recovery threads (default 0). They do
    /// background work: a server lowers them like its flushes and compactions.
    pub nice: i32,
    /// Most segment files open at once (default 64; at least 2): each open
    /// segment takes two descriptors, so the cache never needs more than
    /// this many, whatever its capacity. Other segments are opened on use.
    pub open_files: usize,
    /// Read through the page cache instead of with `O_DIRECT` (default
    /// true). A read first asks for the bytes only if the page cache has
    /// them (`preadv2` with `RWF_NOWAIT`) and then runs on the calling task
    /// with no thread hand-off; otherwise it goes the usual blocking way.
    /// Memory the OS has spare then serves hot L2 entries at memory speed,
    /// at the cost of a copy per read and page-cache eviction work in the
    /// kernel. Measured on a 3 GiB cache (`benches/cache.rs`): hits the page
    /// cache holds 5x faster, cold hits at 32 concurrent 1.5x the rate, a
    /// lone cold hit's p99 about 1.3x slower. `false` suits an L2 far larger
    /// than the memory the OS can spare, or memory that must stay predictable.
    pub page_cache_reads: bool,
}

impl DiskCacheConfig {
    /// Defaults for a cache of `capacity_bytes` in `dir`.
    pub fn new(dir: impl Into<PathBuf>, capacity_bytes: u64) -> DiskCacheConfig {
        DiskCacheConfig {
            dir: dir.into(),
            capacity_bytes,
            segment_bytes: 16 << 20,
            queue_bytes: 64 << 20,
            nice: 0,
            open_files: 64,
            page_cache_reads: true,
        }
    }
}

/// Why the disk cache could not open.
#[derive(Debug, thiserror::Error)]
pub enum DiskCacheError {
    /// The directory or a segment file could not be used.
    #[error("L2 cache directory {dir}: {source}")]
    Io {
        /// The cache directory.
        dir: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A setting out of range.
    #[error("L2 cache setting {name}: {reason}")]
    InvalidConfig {
        /// Setting.
        name: &'static str,
        /// Why.
        reason: String,
    },
}

#[derive(Debug, Clone, Copy)]
struct Loc {
    slot: u32,
    pos: u32,
    len: u32,
}

#[derive(Debug, Default)]
struct Slot {
    generation: u64,
    keys: Vec<Key>,
}

#[derive(Debug, Default)]
struct State {
    index: HashMap<Key, Loc>,
    slots: Vec<Slot>,
    /// Files removed since the last sweep: their entries read as misses and
    /// are dropped from the index in one pass every `REMOVED_SWEEP` files, so
    /// removing a file costs O(1) under the lock instead of a full index scan.
    removed: std::collections::HashSet<u128>,
}

/// Removed files collected before their index entries are swept out.
const REMOVED_SWEEP: usize = 256;

/// Counters of the disk cache.
#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    corrupt: AtomicU64,
    inserts: AtomicU64,
    dropped: AtomicU64,
    evicted: AtomicU64,
    queued_bytes: AtomicU64,
    written_bytes: AtomicU64,
    recovered_entries: AtomicU64,
    recovery_micros: AtomicU64,
    live_bytes: AtomicU64,
    page_cache_hits: AtomicU64,
}

/// Plain-data view of the disk cache's counters and gauges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskCacheMetrics {
    /// Reads that returned a verified entry.
    pub hits: u64,
    /// Reads that found nothing (or nothing sound).
    pub misses: u64,
    /// Entries that failed verification on read.
    pub corrupt: u64,
    /// Entries written.
    pub inserts: u64,
    /// Inserts dropped because the writer queue was full.
    pub dropped: u64,
    /// Entries evicted with their segment.
    pub evicted: u64,
    /// Entries in the index.
    pub entries: u64,
    /// Bytes of live segments on disk.
    pub bytes_used: u64,
    /// Disk budget left.
    pub bytes_free: u64,
    /// Estimated index memory in bytes.
    pub index_bytes: u64,
    /// Entries restored from disk at startup.
    pub recovered_entries: u64,
    /// Time the background recovery took (0 while it runs).
    pub recovery_micros: u64,
    /// True once recovery has finished.
    pub recovered: bool,
    /// Segments whose files are open now (two descriptors each).
    pub open_segments: u64,
    /// Times a segment's files were opened since start (misses of the set
    /// of open files).
    pub segment_opens: u64,
    /// Hits read from the page cache on the calling task
    /// (`page_cache_reads`), with no blocking-pool hand-off.
    pub page_cache_hits: u64,
}

struct Inner {
    dir: PathBuf,
    /// The writer thread, joined by `close` so a closed cache's last
    /// segment is sealed (its index written) before `close` returns.
    writer_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Segments (slots) in the cache.
    slot_count: usize,
    /// The segment files, a bounded set of them open at a time. Reads use
    /// each segment's `O_DIRECT` file (the page cache adds copies and
    /// eviction work to every 64 KiB read, which showed as a long latency
    /// tail), or the buffered one where the file system refuses direct I/O.
    handles: handles::Handles,
    /// L2 reads running now (decides inline vs blocking-pool reads).
    reads_in_flight: AtomicUsize,
    /// Reads go through the page cache, trying a non-blocking read first.
    page_cache_reads: bool,
    /// The kernel refused `RWF_NOWAIT` once: no more tries.
    nowait_refused: AtomicBool,
    segment_bytes: u64,
    queue_bytes: u64,
    state: Mutex<State>,
    counters: Counters,
    recovered: AtomicBool,
    tx: Mutex<Option<SyncSender<Insert>>>,
}

enum Insert {
    Block(Key, Bytes),
    Flush(std::sync::mpsc::Sender<()>),
}

/// The L2 disk cache. Cheap to clone; when the last clone is dropped the
/// writer finishes its queue, seals its segment and stops.
#[derive(Clone)]
pub struct DiskCache {
    inner: Arc<Inner>,
    _open: Arc<OpenGuard>,
}

/// Closes the writer's queue when the last handle goes away (the writer and
/// recovery threads hold `Inner`, not this, so they cannot keep it open).
struct OpenGuard(Arc<Inner>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

impl std::fmt::Debug for DiskCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskCache")
            .field("dir", &self.inner.dir)
            .finish()
    }
}

fn io_err(dir: &Path) -> impl Fn(std::io::Error) -> DiskCacheError + '_ {
    move |source| DiskCacheError::Io {
        dir: dir.display().to_string(),
        source,
    }
}

impl DiskCache {
    /// Opens (or creates) the cache. Returns at once; the index is rebuilt in
    /// the background (see [`DiskCacheMetrics::recovered`]).
    pub fn open(config: DiskCacheConfig) -> Result<DiskCache, DiskCacheError> {
        let dir = config.dir.clone();
        let err = io_err(&dir);
        if config.segment_bytes < (1 << 20) || config.segment_bytes > (1 << 31) {
            return Err(DiskCacheError::InvalidConfig {
                name: "segment_bytes",
                reason: format!("{} is outside 1 MiB..=2 GiB", config.segment_bytes),
            });
        }
        let slots = (config.capacity_bytes / config.segment_bytes) as usize;
        if slots < 2 {
            return Err(DiskCacheError::InvalidConfig {
                name: "capacity_bytes",
                reason: format!(
                    "{} holds fewer than 2 segments of {} bytes",
                    config.capacity_bytes, config.segment_bytes
                ),
            });
        }
        std::fs::create_dir_all(&dir).map_err(&err)?;
        let dir = dir.clone();
        let version_path = dir.join("VERSION");
        match std::fs::read_to_string(&version_path) {
            Ok(v) if v == format::VERSION_LINE => {}
            Ok(other) => {
                tracing::warn!(dir = %dir.display(), found = %other.trim(), expected = %format::VERSION_LINE.trim(),
                    "L2 cache directory has another format version; wiping it");
                wipe(&dir).map_err(&err)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                wipe(&dir).map_err(&err)?;
            }
            Err(e) => return Err(err(e)),
        }
        std::fs::write(&version_path, format::VERSION_LINE).map_err(&err)?;

        // Read every slot's generation (16 bytes each), one file open at a
        // time.
        let mut generations = Vec::with_capacity(slots);
        for i in 0..slots {
            let f = handles::open_slot(&dir, i).map_err(&err)?;
            let mut h = [0u8; format::HEADER_LEN as usize];
            let generation = match f.read_exact_at(&mut h, 0) {
                Ok(()) => format::parse_header(&h).unwrap_or(0),
                Err(_) => 0,
            };
            generations.push(generation);
        }
        // Slots beyond the budget (a smaller capacity than last time) are removed.
        let mut extra = slots;
        while dir.join(format!("slot-{extra:05}")).exists() {
            let _ = std::fs::remove_file(dir.join(format!("slot-{extra:05}")));
            extra += 1;
        }
        let next_generation = generations.iter().copied().max().unwrap_or(0) + 1;
        let state = State {
            index: HashMap::new(),
            slots: generations
                .iter()
                .map(|&g| Slot {
                    generation: g,
                    keys: Vec::new(),
                })
                .collect(),
            removed: Default::default(),
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(4096);
        let inner = Arc::new(Inner {
            dir: dir.clone(),
            slot_count: slots,
            handles: handles::Handles::new(
                dir.clone(),
                config.open_files.max(2) / 2,
                !config.page_cache_reads,
            ),
            reads_in_flight: AtomicUsize::new(0),
            page_cache_reads: config.page_cache_reads,
            nowait_refused: AtomicBool::new(false),
            segment_bytes: config.segment_bytes,
            queue_bytes: config.queue_bytes,
            state: Mutex::new(state),
            counters: Counters::default(),
            recovered: AtomicBool::new(false),
            tx: Mutex::new(Some(tx)),
            writer_thread: Mutex::new(None),
        });
        let err = io_err(&dir);
        let writer = Writer::new(inner.clone(), next_generation - 1);
        let nice = config.nice;
        let writer_thread = std::thread::Builder::new()
            .name("shoal-l2-writer".into())
            .spawn(move || {
                crate::background::lower_priority(nice);
                writer.run(rx)
            })
            .map_err(&err)?;
        *inner
            .writer_thread
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(writer_thread);
        let recovering = inner.clone();
        std::thread::Builder::new()
            .name("shoal-l2-recovery".into())
            .spawn(move || {
                crate::background::lower_priority(nice);
                recover(&recovering)
            })
            .map_err(&err)?;
        Ok(DiskCache {
            _open: Arc::new(OpenGuard(inner.clone())),
            inner,
        })
    }

    /// Counters and gauges.
    pub fn metrics(&self) -> DiskCacheMetrics {
        let c = &self.inner.counters;
        let state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        let entries = state.index.len() as u64;
        // Buckets actually allocated (40-byte entry + control byte each), plus
        // each key again in its segment's eviction list.
        let index_bytes = state.index.capacity() as u64 * 41 + entries * 24;
        drop(state);
        let used = c.live_bytes.load(Ordering::Relaxed);
        let capacity = self.inner.segment_bytes * self.inner.slot_count as u64;
        DiskCacheMetrics {
            hits: c.hits.load(Ordering::Relaxed),
            misses: c.misses.load(Ordering::Relaxed),
            corrupt: c.corrupt.load(Ordering::Relaxed),
            inserts: c.inserts.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            evicted: c.evicted.load(Ordering::Relaxed),
            entries,
            bytes_used: used,
            bytes_free: capacity.saturating_sub(used),
            index_bytes,
            recovered_entries: c.recovered_entries.load(Ordering::Relaxed),
            recovery_micros: c.recovery_micros.load(Ordering::Relaxed),
            recovered: self.inner.recovered.load(Ordering::Acquire),
            open_segments: self.inner.handles.open_count() as u64,
            segment_opens: self.inner.handles.opened(),
            page_cache_hits: c.page_cache_hits.load(Ordering::Relaxed),
        }
    }

    /// Waits until everything inserted so far is written (tests, shutdown).
    pub fn flush(&self) {
        let (done, wait) = std::sync::mpsc::channel();
        let tx = self
            .inner
            .tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(tx) = tx
            && tx.send(Insert::Flush(done)).is_ok()
        {
            let _ = wait.recv();
        }
    }

    /// Waits (up to `timeout`) for the background recovery; true if it finished.
    pub fn wait_recovered(&self, timeout: Duration) -> bool {
        let start = Instant::now();
        while !self.inner.recovered.load(Ordering::Acquire) {
            if start.elapsed() > timeout {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        true
    }

    /// Writes what is queued, seals the current segment and stops the writer,
    /// returning once the seal is written (a cache opened on the directory
    /// next finds the segment's index). Later inserts are dropped (and
    /// counted); reads keep working.
    pub fn close(&self) {
        self.flush();
        self.inner
            .tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let writer = self
            .inner
            .writer_thread
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(writer) = writer
            && writer.join().is_err()
        {
            tracing::warn!(dir = %self.inner.dir.display(), "the L2 writer thread panicked");
        }
    }

    /// Where `key`'s entry is, counting a miss if it is not cached.
    fn locate(&self, key: Key) -> Option<Loc> {
        let loc = {
            let state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.removed.contains(&key.file()) {
                None
            } else {
                state.index.get(&key).copied()
            }
        };
        if loc.is_none() {
            self.inner.counters.misses.fetch_add(1, Ordering::Relaxed);
        }
        loc
    }

    fn read(&self, key: Key) -> Option<Bytes> {
        let loc = self.locate(key)?;
        let len = format::ENTRY_HEADER_LEN + loc.len as usize;
        let read =
            self.inner
                .handles
                .get(loc.slot as usize)
                .and_then(|files| match &files.direct {
                    Some(direct) => read_direct(direct, u64::from(loc.pos), len),
                    None => {
                        let mut buf = vec![0u8; len];
                        files
                            .file
                            .read_exact_at(&mut buf, u64::from(loc.pos))
                            .map(|()| Bytes::from(buf))
                    }
                });
        self.verified(key, loc, read)
    }

    /// The entry, if the page cache holds all of it: `None` when the read
    /// would block (or the kernel cannot say), so the caller reads the usual
    /// way; `Some(answer)` otherwise, a miss included.
    fn read_if_cached(&self, key: Key) -> Option<Option<Bytes>> {
        if self.inner.nowait_refused.load(Ordering::Relaxed) {
            return None;
        }
        let Some(loc) = self.locate(key) else {
            return Some(None);
        };
        let len = format::ENTRY_HEADER_LEN + loc.len as usize;
        let files = self.inner.handles.get(loc.slot as usize).ok()?;
        match read_nowait(&files.file, u64::from(loc.pos), len) {
            Ok(Some(buf)) => {
                let answer = self.verified(key, loc, Ok(buf));
                if answer.is_some() {
                    self.inner
                        .counters
                        .page_cache_hits
                        .fetch_add(1, Ordering::Relaxed);
                }
                Some(answer)
            }
            Ok(None) => None,
            Err(e) => {
                if e.raw_os_error() == Some(libc::EOPNOTSUPP)
                    || e.raw_os_error() == Some(libc::ENOSYS)
                {
                    self.inner.nowait_refused.store(true, Ordering::Relaxed);
                    tracing::debug!(error = %e, "no RWF_NOWAIT for L2 reads; every read takes the blocking path");
                }
                None
            }
        }
    }

    /// Checks a read entry and counts it; a bad one leaves the index.
    fn verified(&self, key: Key, loc: Loc, read: std::io::Result<Bytes>) -> Option<Bytes> {
        let c = &self.inner.counters;
        let sound = read
            .ok()
            .and_then(|buf| format::verify_entry(&buf, key).map(|range| buf.slice(range)));
        match sound {
            Some(data) => {
                c.hits.fetch_add(1, Ordering::Relaxed);
                Some(data)
            }
            None => {
                c.corrupt.fetch_add(1, Ordering::Relaxed);
                c.misses.fetch_add(1, Ordering::Relaxed);
                let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
                if state
                    .index
                    .get(&key)
                    .is_some_and(|l| l.slot == loc.slot && l.pos == loc.pos)
                    && let Some(l) = state.index.remove(&key)
                {
                    c.live_bytes.fetch_sub(entry_bytes(&l), Ordering::Relaxed);
                }
                None
            }
        }
    }
}

/// Direct I/O needs offsets, lengths and buffers aligned to the device's
/// logical block; 4 KiB covers every common device.
const DIRECT_ALIGN: usize = 4096;

/// Opens `path` for direct reads; `None` if the file system refuses.
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
    {
        Ok(f) => Some(f),
        Err(e) => {
            tracing::debug!(path = %path.display(), error = %e, "no direct I/O for L2 reads; using the page cache");
            None
        }
    }
}

/// Reads `len` bytes at `pos` with direct I/O: reads the enclosing aligned
/// range into an aligned buffer and returns the wanted bytes (no copy). A
/// read that ends at the end of the file returns short; it only needs to
/// cover the wanted range. Dirty page-cache pages of the range (an entry the
/// writer appended moments ago) are written back by the kernel before a
/// direct read, so the bytes are current.
fn read_direct(file: &File, pos: u64, len: usize) -> std::io::Result<Bytes> {
    let start = pos - pos % DIRECT_ALIGN as u64;
    let skip = (pos - start) as usize;
    let span = (skip + len).div_ceil(DIRECT_ALIGN) * DIRECT_ALIGN;
    // Not zeroed: the kernel fills what we keep (zeroing 64 KiB per read
    // was 4 % of a read-heavy profile).
    let mut raw: Vec<u8> = Vec::with_capacity(span + DIRECT_ALIGN);
    let lead = raw.as_ptr().align_offset(DIRECT_ALIGN);
    if lead > DIRECT_ALIGN {
        return Err(std::io::Error::other("cannot align a read buffer"));
    }
    let mut got = 0;
    while got < skip + len {
        let n = pread_uninit(
            file,
            &mut raw.spare_capacity_mut()[lead + got..lead + span],
            start + got as u64,
        )?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        got += n;
        // A short read that is not at an aligned boundary means the end of
        // the file: the next aligned read would fail with EINVAL.
        if got % DIRECT_ALIGN != 0 && got < skip + len {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
    }
    let end = lead + skip + len;
    // SAFETY: `end <= lead + got <= lead + span <= capacity`, and every byte
    // below `end` that we read is initialized: `[lead, lead + got)` by the
    // kernel (`pread_uninit` returned `got` bytes in total, contiguously from
    // `lead`). The bytes below `lead` are not: they are never read, because
    // the returned slice starts at `lead + skip`, but `set_len` would claim
    // them, so they are zeroed first (at most one alignment unit).
    #[allow(unsafe_code)]
    unsafe {
        std::ptr::write_bytes(raw.as_mut_ptr(), 0, lead);
        raw.set_len(end);
    }
    Ok(Bytes::from(raw).slice(lead + skip..end))
}

/// `pread` into possibly uninitialized memory; returns the bytes read, all of
/// which are then initialized.
fn pread_uninit(
    file: &File,
    buf: &mut [std::mem::MaybeUninit<u8>],
    pos: u64,
) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    let offset = libc::off_t::try_from(pos).map_err(std::io::Error::other)?;
    loop {
        // SAFETY: `buf` is a valid writable region of `buf.len()` bytes that
        // outlives the call; the kernel writes at most that many bytes and
        // never reads them, so their being uninitialized is fine. The fd is
        // borrowed from `file` for the call.
        #[allow(unsafe_code)]
        let n =
            unsafe { libc::pread(file.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), offset) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Reads `len` bytes at `pos` only if the page cache holds them all:
/// `Ok(None)` when it does not (the read would wait for the device).
fn read_nowait(file: &File, pos: u64, len: usize) -> std::io::Result<Option<Bytes>> {
    use std::os::fd::AsRawFd;
    let Ok(offset) = libc::off_t::try_from(pos) else {
        return Ok(None);
    };
    let mut buf: Vec<u8> = Vec::with_capacity(len);
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    // SAFETY: `iov` describes `buf`'s allocation of `len` (its capacity)
    // writable bytes, which outlives the call; the kernel writes at most
    // `len` bytes there and reads nothing else. `fd` is a valid descriptor
    // borrowed from `file` for the duration of the call.
    #[allow(unsafe_code)]
    let n = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, offset, libc::RWF_NOWAIT) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) => Ok(None),
            _ => Err(e),
        };
    }
    let n = n as usize;
    if n < len {
        // Part of it is not cached (or the file ends early): read the usual way.
        return Ok(None);
    }
    // SAFETY: the kernel initialized the first `n` bytes, and `n == len`
    // (it never writes more than the iovec's length), within the capacity.
    #[allow(unsafe_code)]
    unsafe {
        buf.set_len(n)
    };
    Ok(Some(Bytes::from(buf)))
}

/// Tells the kernel reads of `file` are random, so a 64 KiB entry read does not
/// drag in readahead it will not use (extra I/O that lengthens the latency tail).
/// Advisory only: failure changes nothing but speed.
fn advise_random(file: &File) {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `posix_fadvise` only reads its integer arguments; `fd` is a valid
    // open descriptor borrowed from `file`, which outlives the call, and offset 0
    // with length 0 means "the whole file". No memory is passed or retained.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_RANDOM) };
    if rc != 0 {
        tracing::debug!(
            error = rc,
            "posix_fadvise(RANDOM) on an L2 segment failed; continuing"
        );
    }
}

fn entry_bytes(loc: &Loc) -> u64 {
    u64::from(loc.len) + format::ENTRY_HEADER_LEN as u64
}

fn wipe(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("slot-") || name == "VERSION" {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

impl L2 for DiskCache {
    fn get(&self, file: FileId, offset: u64) -> BoxFuture<'_, Option<Bytes>> {
        let this = DiskCache {
            inner: self.inner.clone(),
            _open: self._open.clone(),
        };
        Box::pin(async move {
            let key = Key::new(file.0, offset);
            if this.inner.page_cache_reads
                && let Some(answer) = this.read_if_cached(key)
            {
                return answer;
            }
            // A lone read runs on this worker (`block_in_place` hands the
            // worker's other tasks to another thread): no cross-thread
            // wake-up before and after it, which on a small VM costs more
            // than the read's own tail (QD1 p50 151 -> 86 us). Concurrent
            // reads go to the blocking pool, where they overlap on the device.
            let in_flight = this.inner.reads_in_flight.fetch_add(1, Ordering::Relaxed);
            let multi = tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
            let this2 = this.clone();
            let out = if multi && in_flight == 0 {
                tokio::task::block_in_place(|| this2.read(key))
            } else {
                tokio::task::spawn_blocking(move || this2.read(key))
                    .await
                    .ok()
                    .flatten()
            };
            this.inner.reads_in_flight.fetch_sub(1, Ordering::Relaxed);
            out
        })
    }

    /// Every entry's crc32c covers its key, length and every byte of its
    /// data, and [`DiskCache::get`] returns nothing that fails it.
    fn verifies_payload(&self) -> bool {
        true
    }

    fn insert(&self, file: FileId, offset: u64, frame: Bytes) {
        let c = &self.inner.counters;
        let size = frame.len() as u64;
        if c.queued_bytes.fetch_add(size, Ordering::Relaxed) + size > self.inner.queue_bytes {
            c.queued_bytes.fetch_sub(size, Ordering::Relaxed);
            c.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let tx = self
            .inner
            .tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let sent = match tx {
            Some(tx) => tx.try_send(Insert::Block(Key::new(file.0, offset), frame)),
            None => Err(TrySendError::Disconnected(Insert::Block(
                Key::new(file.0, offset),
                Bytes::new(),
            ))),
        };
        if sent.is_err() {
            c.queued_bytes.fetch_sub(size, Ordering::Relaxed);
            c.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn remove_file(&self, file: FileId) {
        let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        state.removed.insert(file.0);
        if state.removed.len() < REMOVED_SWEEP {
            return;
        }
        let removed = std::mem::take(&mut state.removed);
        let live = &self.inner.counters.live_bytes;
        state.index.retain(|k, l| {
            let keep = !removed.contains(&k.file());
            if !keep {
                live.fetch_sub(entry_bytes(l), Ordering::Relaxed);
            }
            keep
        });
    }

    fn contains(&self, file: FileId, offset: u64) -> bool {
        let state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        !state.removed.contains(&file.0) && state.index.contains_key(&Key::new(file.0, offset))
    }

    fn metrics(&self) -> DiskCacheMetrics {
        DiskCache::metrics(self)
    }
}

/// The writer thread: appends queued entries to the current segment.
struct Writer {
    inner: Arc<Inner>,
    /// The segment being written; `None` until the first insert, so opening a
    /// full cache does not throw a segment away before anything needs room.
    slot: Option<usize>,
    /// The files of `slot`, held while it is written.
    files: Option<Arc<handles::SlotFiles>>,
    pos: u64,
    generation: u64,
    records: Vec<Record>,
    buf: Vec<u8>,
    pending: Vec<Record>,
    /// Write-behind of the current segment: its dirty pages go to the disk as
    /// they are written, not in bursts that stall the WAL's fsyncs.
    behind: WriteBehind,
}

impl Writer {
    fn new(inner: Arc<Inner>, last_generation: u64) -> Writer {
        Writer {
            inner,
            slot: None,
            files: None,
            pos: 0,
            generation: last_generation,
            records: Vec::new(),
            buf: Vec::with_capacity(1 << 20),
            pending: Vec::new(),
            behind: WriteBehind::new(),
        }
    }

    /// Claims the oldest (or an empty) segment other than the current one.
    fn claim_next(&mut self) -> std::io::Result<usize> {
        let next = {
            let state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
            (0..state.slots.len())
                .filter(|&i| Some(i) != self.slot)
                .min_by_key(|&i| state.slots[i].generation)
                .unwrap_or(0)
        };
        self.begin_segment(next, self.generation + 1)?;
        Ok(next)
    }

    /// Claims `slot` for writing: forgets its old entries, truncates it, writes
    /// the header.
    fn begin_segment(&mut self, slot: usize, generation: u64) -> std::io::Result<()> {
        {
            let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
            let old = std::mem::take(&mut state.slots[slot].keys);
            let mut evicted = 0;
            for k in old {
                if state.index.get(&k).is_some_and(|l| l.slot as usize == slot)
                    && let Some(l) = state.index.remove(&k)
                {
                    self.inner
                        .counters
                        .live_bytes
                        .fetch_sub(entry_bytes(&l), Ordering::Relaxed);
                    evicted += 1;
                }
            }
            state.slots[slot].generation = generation;
            self.inner
                .counters
                .evicted
                .fetch_add(evicted, Ordering::Relaxed);
        }
        let files = self.inner.handles.get(slot)?;
        files.file.set_len(0)?;
        files
            .file
            .write_all_at(&format::segment_header(generation), 0)?;
        self.files = Some(files);
        self.slot = Some(slot);
        self.generation = generation;
        self.pos = format::HEADER_LEN;
        self.behind = WriteBehind::new();
        self.records.clear();
        Ok(())
    }

    fn run(mut self, rx: Receiver<Insert>) {
        while let Ok(first) = rx.recv() {
            let mut waiters = Vec::new();
            let mut next = Some(first);
            while let Some(item) = next {
                match item {
                    Insert::Block(key, data) => {
                        if let Err(e) = self.append(key, &data) {
                            tracing::error!(dir = %self.inner.dir.display(), error = %e, "L2 cache write failed; entry dropped");
                            self.inner.counters.dropped.fetch_add(1, Ordering::Relaxed);
                        }
                        self.inner
                            .counters
                            .queued_bytes
                            .fetch_sub(data.len() as u64, Ordering::Relaxed);
                    }
                    Insert::Flush(done) => waiters.push(done),
                }
                next = if self.buf.len() >= (1 << 20) {
                    None
                } else {
                    rx.try_recv().ok()
                };
            }
            if let Err(e) = self.write_buffer() {
                tracing::error!(dir = %self.inner.dir.display(), error = %e, "L2 cache write failed");
            }
            for w in waiters {
                let _ = w.send(());
            }
        }
        // The queue closed (close() or every handle dropped): seal what we have.
        if self.slot.is_none() {
            return;
        }
        if let Err(e) = self.write_buffer().and_then(|()| self.seal()) {
            tracing::warn!(dir = %self.inner.dir.display(), error = %e, "sealing the L2 segment at shutdown failed");
        }
    }

    fn append(&mut self, key: Key, data: &[u8]) -> std::io::Result<()> {
        let entry_len = (format::ENTRY_HEADER_LEN + data.len()) as u64;
        let seal_room = ((self.records.len() + self.pending.len() + 1) * format::INDEX_ENTRY_LEN
            + format::SEAL_TRAILER_LEN) as u64;
        if entry_len
            + format::INDEX_ENTRY_LEN as u64
            + format::SEAL_TRAILER_LEN as u64
            + format::HEADER_LEN
            > self.inner.segment_bytes
        {
            // Larger than a segment: not cacheable here.
            self.inner.counters.dropped.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        if self.slot.is_none() {
            self.claim_next()?;
        }
        let end = self.pos + self.buf.len() as u64 + entry_len + seal_room;
        if end > self.inner.segment_bytes {
            self.write_buffer()?;
            self.seal()?;
            self.claim_next()?;
        }
        let pos = self.pos + self.buf.len() as u64;
        format::encode_entry(&mut self.buf, key, data);
        self.pending.push(Record {
            key,
            pos: pos as u32,
            len: data.len() as u32,
        });
        Ok(())
    }

    /// Writes the buffered entries, then publishes them in the index.
    fn write_buffer(&mut self) -> std::io::Result<()> {
        let (Some(slot), Some(files)) = (self.slot, self.files.clone()) else {
            return Ok(());
        };
        if self.buf.is_empty() {
            return Ok(());
        }
        if let Err(e) = files.file.write_all_at(&self.buf, self.pos) {
            // The batch is lost: count it as dropped, never as written.
            let lost = self.pending.len() as u64;
            self.inner
                .counters
                .dropped
                .fetch_add(lost, Ordering::Relaxed);
            self.pending.clear();
            self.buf.clear();
            return Err(e);
        }
        self.behind
            .written(&files.file, self.pos, self.buf.len() as u64);
        self.pos += self.buf.len() as u64;
        self.inner
            .counters
            .written_bytes
            .fetch_add(self.buf.len() as u64, Ordering::Relaxed);
        self.buf.clear();
        let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        for r in self.pending.drain(..) {
            let loc = Loc {
                slot: slot as u32,
                pos: r.pos,
                len: r.len,
            };
            self.inner
                .counters
                .live_bytes
                .fetch_add(entry_bytes(&loc), Ordering::Relaxed);
            if let Some(old) = state.index.insert(r.key, loc) {
                self.inner
                    .counters
                    .live_bytes
                    .fetch_sub(entry_bytes(&old), Ordering::Relaxed);
            }
            state.slots[slot].keys.push(r.key);
            self.records.push(r);
            self.inner.counters.inserts.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Appends the segment's index. No fsync: the cache is rebuildable, every
    /// entry and seal is checksummed, and a process crash keeps what reached
    /// the page cache; an fsync per segment measured at ~8 ms and halved the
    /// writer's throughput.
    fn seal(&mut self) -> std::io::Result<()> {
        let Some(files) = &self.files else {
            return Ok(());
        };
        let seal = format::encode_seal(&self.records);
        files.file.write_all_at(&seal, self.pos)?;
        self.pos += seal.len() as u64;
        Ok(())
    }
}

/// Rebuilds the index from every slot (a slot the writer claims meanwhile is
/// skipped: its generation no longer matches).
fn recover(inner: &Arc<Inner>) {
    let start = Instant::now();
    let mut order: Vec<(u64, usize)> = {
        let state = inner.state.lock().unwrap_or_else(|e| e.into_inner());
        state
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.generation > 0)
            .map(|(i, s)| (s.generation, i))
            .collect()
    };
    // Newest first, so the newest copy of a key wins and recent blocks are usable soonest.
    order.sort_by(|a, b| b.cmp(a));
    let mut recovered = 0u64;
    for (generation, slot) in order {
        // Each segment is read once: opened here, not kept in the set.
        let records = match handles::open_slot(&inner.dir, slot) {
            Ok(file) => read_segment(&file),
            Err(e) => {
                tracing::warn!(dir = %inner.dir.display(), slot, error = %e, "L2 segment could not be opened; its entries are not recovered");
                Vec::new()
            }
        };
        let mut state = inner.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.slots[slot].generation != generation {
            continue; // The writer took this slot over meanwhile.
        }
        for r in records {
            if state.index.contains_key(&r.key) {
                continue;
            }
            let loc = Loc {
                slot: slot as u32,
                pos: r.pos,
                len: r.len,
            };
            inner
                .counters
                .live_bytes
                .fetch_add(entry_bytes(&loc), Ordering::Relaxed);
            state.index.insert(r.key, loc);
            state.slots[slot].keys.push(r.key);
            recovered += 1;
        }
    }
    inner
        .counters
        .recovered_entries
        .store(recovered, Ordering::Relaxed);
    inner
        .counters
        .recovery_micros
        .store(start.elapsed().as_micros().max(1) as u64, Ordering::Relaxed);
    inner.recovered.store(true, Ordering::Release);
    tracing::info!(dir = %inner.dir.display(), entries = recovered, millis = start.elapsed().as_millis() as u64, "L2 cache recovered");
}

/// The records of one segment: from its seal, or by scanning if unsealed.
fn read_segment(file: &File) -> Vec<Record> {
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return Vec::new();
    };
    if len >= format::HEADER_LEN + format::SEAL_TRAILER_LEN as u64 {
        let mut t = [0u8; format::SEAL_TRAILER_LEN];
        let trailer_at = len - format::SEAL_TRAILER_LEN as u64;
        if file.read_exact_at(&mut t, trailer_at).is_ok()
            && let Some((index_len, crc)) = format::parse_seal_trailer(&t)
            && let Some(at) = trailer_at.checked_sub(u64::from(index_len))
            && at >= format::HEADER_LEN
        {
            let mut index = vec![0u8; index_len as usize];
            if file.read_exact_at(&mut index, at).is_ok()
                && let Some(records) = format::parse_seal_index(&index, crc)
            {
                return records;
            }
        }
    }
    // Unsealed: scan entries until the first one that does not verify.
    let mut records = Vec::new();
    let mut pos = format::HEADER_LEN;
    let mut header = [0u8; format::ENTRY_HEADER_LEN];
    while pos + format::ENTRY_HEADER_LEN as u64 <= len {
        if file.read_exact_at(&mut header, pos).is_err() {
            break;
        }
        let Some((key, data_len, _)) = format::parse_entry_header(&header) else {
            break;
        };
        let total = format::ENTRY_HEADER_LEN as u64 + u64::from(data_len);
        if pos + total > len {
            break;
        }
        let mut entry = vec![0u8; total as usize];
        if file.read_exact_at(&mut entry, pos).is_err()
            || format::verify_entry(&entry, key).is_none()
        {
            break;
        }
        records.push(Record {
            key,
            pos: pos as u32,
            len: data_len,
        });
        pos += total;
    }
    records
}

#[cfg(test)]
mod tests;
