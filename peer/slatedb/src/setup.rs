//! The conditions both systems run under: where their files go, the emulated
//! object store's model, the cache budget and the write buffer.

use std::path::PathBuf;
use std::time::Duration;

use crate::emulate::Model;

/// Shared by both systems; every number here is given to each system the same way.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Root of this system's files (object-store directory, WAL, disk cache).
    pub dir: PathBuf,
    /// The emulated object store.
    pub model: Model,
    /// In-memory cache bytes for data blocks.
    pub memory_data_bytes: u64,
    /// In-memory cache bytes for index, filter and other metadata blocks.
    pub memory_meta_bytes: u64,
    /// On-disk cache bytes.
    pub disk_bytes: u64,
    /// Bytes of writes buffered in memory before they are written out as an SST.
    pub write_buffer_bytes: u64,
    /// Shoal's data block size; `None` keeps Shoal's default (64 KiB).
    pub shoal_block_bytes: Option<usize>,
    /// Of `memory_data_bytes`, what Shoal gives its row cache (the rest goes
    /// to its block pool).
    pub shoal_rows_bytes: u64,
    /// Shoal's L2 reads through the page cache (Shoal's default) instead of
    /// `O_DIRECT`.
    pub shoal_l2_page_cache: bool,
}

impl Setup {
    /// 64 MiB of memory (48 data + 16 meta), 1 GiB of disk, 64 MiB write buffer,
    /// and an object store with 30 ms ± 10 ms first-byte latency and 90 MB/s per
    /// request (Shoal's `Emulation::default()`).
    pub fn standard(dir: PathBuf) -> Setup {
        Setup {
            dir,
            model: Model {
                latency: Duration::from_millis(30),
                jitter: Duration::from_millis(10),
                bandwidth_bytes_per_sec: 90_000_000,
            },
            memory_data_bytes: 48 << 20,
            memory_meta_bytes: 16 << 20,
            disk_bytes: 1 << 30,
            write_buffer_bytes: 64 << 20,
            shoal_block_bytes: None,
            shoal_rows_bytes: 0,
            shoal_l2_page_cache: true,
        }
    }
}
