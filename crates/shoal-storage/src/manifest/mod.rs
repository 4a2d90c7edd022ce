//! The region manifest: which SST files are live, up to which WAL sequence they hold the
//! data, and which owner epoch wrote that state. The protocol is written down, with its
//! invariants and their proofs, in `docs/manifest.md`; this is the short version.
//!
//! A region's state lives in immutable, numbered objects `<region_dir>/manifest/<seq:020>`,
//! each a full snapshot ([`Manifest`]), committed with create-if-absent on the next number
//! and never renamed or overwritten. Nothing on the read or write path lists; an owner
//! lists once when it opens.
//!
//! # Invariants
//!
//! - The writer of slot `s+1` based it on slot `s`, so epochs along the slots never
//!   decrease, rise by exactly one at each open, and the manifests of one epoch are one
//!   contiguous run written by one owner instance ([`ManifestStore::open_owner`]).
//! - A stale owner's next commit targets a slot at or before the first manifest of the
//!   next epoch, finds it taken by a higher epoch, and fails with
//!   [`ManifestError::Fenced`] for good ([`ManifestWriter::commit`]).
//! - GC never deletes the newest manifest nor the first manifest of any epoch (the slot
//!   a zombie owner would target), and never deletes a file that a readable manifest
//!   references, that a reader has pinned ([`FilePins`]), or that is younger than the
//!   grace period ([`ManifestWriter::gc`]).
//! - Decoding bytes is total: garbage is [`ManifestError::Corrupt`], never a panic, and a
//!   corrupt newest manifest is reported, never skipped in favour of an older one.

mod codec;
mod error;
mod gc;
mod pins;
mod store;

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::sst::FileId;

pub use codec::FORMAT_VERSION;
pub use error::ManifestError;
pub use gc::{GcOptions, GcReport};
pub use pins::{FilePin, FilePins};
pub use store::{MAX_HINT_AGE, ManifestStore, ManifestWriter, manifest_path};

/// One committed state of a region: a full snapshot, stored in slot `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    /// This manifest's number (its slot).
    pub seq: u64,
    /// Owner epoch that wrote it.
    pub epoch: u64,
    /// Unique token (a ULID) of the owner instance that wrote it.
    pub writer: u128,
    /// WAL entries with seq <= this are in the files.
    pub flushed_seq: u64,
    /// Highest write seq in any file (keeps the seq counter continuous on reopen).
    pub max_seq: u64,
    /// Region key bounds; empty = unbounded.
    pub start_row: Bytes,
    /// Region key bounds; empty = unbounded.
    pub end_row: Bytes,
    /// Files per column family, oldest first.
    pub stores: BTreeMap<String, Vec<StoreFile>>,
    /// Keys of the bulk loads committed into this region, oldest first (at
    /// most [`MAX_LOAD_KEYS`]): a load retried after a crash with the same
    /// key finds itself here and is not applied twice. Written only when
    /// not empty (flag bit 0 of the format), so regions that never took a
    /// bulk load keep the original byte format.
    pub loads: Vec<String>,
}

/// How many bulk-load keys a manifest remembers; the oldest go first.
pub const MAX_LOAD_KEYS: usize = 4096;

impl Manifest {
    /// Records a committed bulk load's key, forgetting the oldest beyond
    /// [`MAX_LOAD_KEYS`].
    pub fn record_load(&mut self, key: String) {
        if !self.loads.contains(&key) {
            self.loads.push(key);
        }
        let excess = self.loads.len().saturating_sub(MAX_LOAD_KEYS);
        self.loads.drain(..excess);
    }

    /// True if a bulk load with this key was committed here.
    pub fn has_load(&self, key: &str) -> bool {
        self.loads.iter().any(|k| k == key)
    }
}

impl Manifest {
    /// Every file of every family.
    pub fn files(&self) -> impl Iterator<Item = &StoreFile> {
        self.stores.values().flatten()
    }
}

/// One live SST file of a store (column family).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreFile {
    /// The file's id; a ULID whose timestamp says when the file was started.
    pub id: FileId,
    /// Object path relative to the bucket.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Number of cells.
    pub cell_count: u64,
    /// Highest write seq of any cell in the file.
    pub max_seq: u64,
    /// Smallest cell timestamp.
    pub min_timestamp: i64,
    /// Largest cell timestamp.
    pub max_timestamp: i64,
    /// First row key.
    pub first_row: Bytes,
    /// Last row key.
    pub last_row: Bytes,
}
