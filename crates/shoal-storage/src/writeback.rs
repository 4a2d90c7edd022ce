//! Write-behind for large sequential writes (SST files on the local disk, L2
//! cache segments): the kernel's writeback of each range starts as soon as the
//! range is written, and the writer waits for the range before it. Dirty pages
//! never pile up into hundreds of megabytes that one final fsync (or the
//! kernel's periodic writeback, every 5 s for pages older than 30 s) pushes to
//! the disk at once; such a burst fills the device queue and every WAL
//! `fdatasync` waits behind it. This is RocksDB's `bytes_per_sync`.
//!
//! Only a hint: errors are ignored here (the file's own fsync, or the cache's
//! checksums, report what matters). On other systems than Linux it does
//! nothing.

use std::fs::File;

/// Bytes written between two writeback calls (RocksDB's default
/// `bytes_per_sync` is 1 MiB too): small enough that the device queue never
/// holds much more than 2 MiB of ours ahead of a WAL write.
pub const CHUNK: usize = 1 << 20;

/// Follows one file's sequential writes.
#[derive(Debug, Default)]
pub struct WriteBehind {
    /// The range whose writeback was started last and not yet waited for.
    pending: Option<(u64, u64)>,
}

impl WriteBehind {
    /// A tracker with nothing pending.
    pub fn new() -> WriteBehind {
        WriteBehind::default()
    }

    /// Call after `[offset, offset + len)` of `file` was written: starts its
    /// writeback and waits until the previously written range is on the
    /// device. Blocks; call it from a blocking thread.
    pub fn written(&mut self, file: &File, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        start(file, offset, len);
        if let Some((o, l)) = self.pending.replace((offset, len)) {
            wait(file, o, l);
        }
    }
}

#[cfg(target_os = "linux")]
fn sync_range(file: &File, offset: u64, len: u64, flags: libc::c_uint) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: `sync_file_range` reads no memory of ours; it only takes a file
    // descriptor, which is open for the duration of the call because `file`
    // is borrowed, and plain integers. A failure is an error code, not UB.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::sync_file_range(file.as_raw_fd(), offset, len, flags) };
    if rc != 0 {
        tracing::trace!(error = %std::io::Error::last_os_error(), "sync_file_range");
    }
}

#[cfg(target_os = "linux")]
fn start(file: &File, offset: u64, len: u64) {
    sync_range(file, offset, len, libc::SYNC_FILE_RANGE_WRITE);
}

#[cfg(target_os = "linux")]
fn wait(file: &File, offset: u64, len: u64) {
    sync_range(
        file,
        offset,
        len,
        libc::SYNC_FILE_RANGE_WAIT_BEFORE
            | libc::SYNC_FILE_RANGE_WRITE
            | libc::SYNC_FILE_RANGE_WAIT_AFTER,
    );
}

#[cfg(not(target_os = "linux"))]
fn start(_file: &File, _offset: u64, _len: u64) {}

#[cfg(not(target_os = "linux"))]
fn wait(_file: &File, _offset: u64, _len: u64) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::FileExt;

    #[test]
    fn written_ranges_keep_their_bytes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        let file = File::create(&path).expect("create");
        let mut wb = WriteBehind::new();
        let chunk = vec![7u8; CHUNK];
        for i in 0..4u64 {
            file.write_all_at(&chunk, i * CHUNK as u64).expect("write");
            wb.written(&file, i * CHUNK as u64, CHUNK as u64);
        }
        wb.written(&file, 0, 0);
        let mut back = Vec::new();
        File::open(&path)
            .expect("open")
            .read_to_end(&mut back)
            .expect("read");
        assert_eq!(back.len(), 4 * CHUNK);
        assert!(back.iter().all(|b| *b == 7));
    }
}
