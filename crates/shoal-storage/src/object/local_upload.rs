//! Multipart uploads on the local-disk backend: a staging file beside the
//! destination (`<dest>#<n>`, the name `object_store`'s local store uses and
//! skips when listing), parts written at explicit offsets with write-behind
//! (see [`crate::writeback`]), then fsync, rename and a directory fsync on
//! completion, so a completed object is durable like an S3 PUT.
//!
//! `object_store`'s own local multipart upload keeps the whole object in dirty
//! pages and syncs it at the end: a 100 MB compaction output then reaches the
//! disk in one burst that the WAL's fsyncs wait behind. Parts here have fixed
//! offsets, so writing one twice is harmless and a failed part is retried like
//! any idempotent request.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use object_store::PutPayload;

use crate::writeback::{CHUNK, WriteBehind};

/// One staging file being written.
#[derive(Debug)]
pub(super) struct LocalStaging {
    file: File,
    staging: PathBuf,
    dest: PathBuf,
    /// Write-behind state (parts are written one at a time).
    behind: Mutex<WriteBehind>,
}

impl LocalStaging {
    /// Creates a new staging file for `dest` (and its parent directories).
    /// Blocking.
    pub(super) fn create(dest: PathBuf) -> std::io::Result<LocalStaging> {
        let mut n = 1u64;
        loop {
            let mut name = dest.as_os_str().to_owned();
            name.push(format!("#{n}"));
            let staging = PathBuf::from(name);
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&staging)
            {
                Ok(file) => {
                    return Ok(LocalStaging {
                        file,
                        staging,
                        dest,
                        behind: Mutex::new(WriteBehind::new()),
                    });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => n += 1,
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    let parent = dest.parent().ok_or(e)?;
                    std::fs::create_dir_all(parent)?;
                    sync_dir(parent)?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes `payload` at `offset`, in write-behind chunks. Blocking.
    pub(super) fn write_part(&self, offset: u64, payload: &PutPayload) -> std::io::Result<()> {
        let mut behind = self.behind.lock().unwrap_or_else(|e| e.into_inner());
        let mut at = offset;
        for piece in payload.iter() {
            for chunk in piece.chunks(CHUNK) {
                self.file.write_all_at(chunk, at)?;
                behind.written(&self.file, at, chunk.len() as u64);
                at += chunk.len() as u64;
            }
        }
        Ok(())
    }

    /// Makes the object visible and durable: file fsync, rename over the
    /// destination, directory fsync. Blocking.
    pub(super) fn complete(&self, len: u64) -> std::io::Result<()> {
        self.file.sync_all()?;
        match std::fs::rename(&self.staging, &self.dest) {
            Ok(()) => {}
            // A retry after an attempt that renamed it and then failed.
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if std::fs::metadata(&self.dest).map(|m| m.len()).ok() != Some(len) {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
        if let Some(parent) = self.dest.parent() {
            sync_dir(parent)?;
        }
        Ok(())
    }

    /// Deletes the staging file. Blocking.
    pub(super) fn abort(&self) -> std::io::Result<()> {
        match std::fs::remove_file(&self.staging) {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}
