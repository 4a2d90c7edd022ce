//! Seeding a new region from files that already exist: a clone of a
//! snapshot, or a table restored to one. The region's first manifest lists
//! the files where they are (no byte is copied); the region reads them as
//! its own, and its own flushes and compactions write new files under its
//! own directory (copy on write). Files outside its directory are never
//! deleted by its GC, which only lists its own directory.

use crate::manifest::{ManifestError, ManifestStore, StoreFile};
use crate::object::Bucket;
use bytes::Bytes;
use std::collections::BTreeMap;

/// What a seeded region starts from.
#[derive(Debug, Clone)]
pub struct RegionSeed {
    /// The new region's directory (`<dir>/manifest/…`).
    pub region_dir: String,
    /// First row (inclusive; empty = unbounded).
    pub start_row: Bytes,
    /// End row (exclusive; empty = unbounded).
    pub end_row: Bytes,
    /// Files by family, oldest first.
    pub stores: BTreeMap<String, Vec<StoreFile>>,
    /// Every cell of the files is at or below this sequence number; the
    /// region numbers its own writes above it.
    pub seq: u64,
}

/// Writes `seed`'s first manifest, unless the region already has one (a
/// clone or restore resumed after a crash): true if written here.
pub async fn seed_region(bucket: &Bucket, seed: &RegionSeed) -> Result<bool, ManifestError> {
    let store = ManifestStore::new(bucket.clone(), seed.region_dir.clone());
    if store.load_latest().await?.is_some() {
        return Ok(false);
    }
    let mut writer = store
        .open_owner(seed.start_row.clone(), seed.end_row.clone())
        .await?;
    let stores = seed.stores.clone();
    let seq = seed
        .stores
        .values()
        .flatten()
        .map(|f| f.max_seq)
        .fold(seed.seq, u64::max);
    writer
        .commit(move |m| {
            m.stores = stores;
            m.flushed_seq = seq;
            m.max_seq = seq;
        })
        .await?;
    Ok(true)
}
