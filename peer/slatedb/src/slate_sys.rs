//! SlateDB under test: a `slatedb::Db` on a local directory behind the emulating
//! `ObjectStore` wrapper, with the same cache budget as Shoal: its in-memory
//! `SplitCache` (Foyer block cache + Foyer meta cache) and its on-disk object-store
//! cache (`object_store_cache_options`), which also keeps the SSTs it writes.
//!
//! A YCSB record is one key whose value is the serialized fields (see `record`).
//! An update reads the record, replaces the field and writes it back, as YCSB's
//! RocksDB binding does. With `durable`, a write waits for `await_durable`: its WAL
//! object is on the object store; without, it returns once in the memtable.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use slatedb::Db;
use slatedb::config::{FlushOptions, FlushType, ObjectStoreCacheOptions, Settings};
use slatedb::db_cache::SplitCache;
use slatedb::db_cache::foyer::{FoyerCache, FoyerCacheOptions};

use crate::emulate::{EmulatedStore, Requests};
use crate::record;
use crate::setup::Setup;
use crate::system::System;

/// An open SlateDB.
pub struct Slate {
    db: Db,
    store: EmulatedStore,
    durable: AtomicBool,
}

impl Slate {
    /// Opens a fresh database under `setup.dir`; `durable` makes writes await durability.
    pub async fn open(setup: &Setup, durable: bool) -> anyhow::Result<Slate> {
        let objects = setup.dir.join("objects");
        std::fs::create_dir_all(&objects)
            .with_context(|| format!("creating {}", objects.display()))?;
        let local = LocalFileSystem::new_with_prefix(&objects)
            .context("opening the local object store")?
            .with_fsync(true);
        let store = EmulatedStore::new(Arc::new(local), setup.model);
        let foyer = |bytes: u64| {
            Arc::new(FoyerCache::new_with_opts(FoyerCacheOptions {
                max_capacity: bytes,
                ..FoyerCacheOptions::default()
            })) as Arc<dyn slatedb::db_cache::DbCache>
        };
        let cache = SplitCache::new()
            .with_block_cache(Some(foyer(setup.memory_data_bytes)))
            .with_meta_cache(Some(foyer(setup.memory_meta_bytes)))
            .build();
        let write_buffer = usize::try_from(setup.write_buffer_bytes)?;
        let settings = Settings {
            l0_sst_size_bytes: write_buffer,
            object_store_cache_options: ObjectStoreCacheOptions {
                root_folder: Some(setup.dir.join("disk-cache")),
                max_cache_size_bytes: Some(usize::try_from(setup.disk_bytes)?),
                cache_on_flush: true,
                cache_on_compaction: true,
                ..ObjectStoreCacheOptions::default()
            },
            ..Settings::default()
        };
        let db = Db::builder("ycsb", Arc::new(store.clone()) as Arc<dyn ObjectStore>)
            .with_settings(settings)
            .with_db_cache(Arc::new(cache), 0)
            .build()
            .await
            .context("opening SlateDB")?;
        Ok(Slate {
            db,
            store,
            durable: AtomicBool::new(durable),
        })
    }

    /// Makes later writes await durability, or not.
    pub fn set_durable(&self, durable: bool) {
        self.durable.store(durable, Ordering::Relaxed);
    }

    /// Closes the database (flushes what it holds).
    pub async fn close(self) -> anyhow::Result<()> {
        self.db.close().await.context("closing SlateDB")
    }

    async fn put(&self, key: String, value: Vec<u8>) -> anyhow::Result<()> {
        let handle = self.db.put(key, value).await?;
        if self.durable.load(Ordering::Relaxed) {
            handle.await_durable().await?;
        }
        Ok(())
    }
}

impl System for Slate {
    async fn insert(&self, key: String, fields: Vec<Vec<u8>>) -> anyhow::Result<()> {
        let value = record::encode(&fields)?;
        self.put(key, value).await
    }

    async fn read(&self, key: String) -> anyhow::Result<usize> {
        match self.db.get(key).await? {
            Some(value) => Ok(record::decode(&value)?.len()),
            None => Ok(0),
        }
    }

    async fn update(&self, key: String, field: usize, value: Vec<u8>) -> anyhow::Result<()> {
        let Some(current) = self.db.get(&key).await? else {
            bail!("update of missing record {key}");
        };
        let mut fields = record::decode(&current)?;
        let Some(slot) = fields.get_mut(field) else {
            bail!("record {key} has no field {field}");
        };
        *slot = value;
        self.put(key, record::encode(&fields)?).await
    }

    async fn settle(&self) -> anyhow::Result<String> {
        self.db
            .flush_with_options(FlushOptions {
                flush_type: FlushType::MemTable,
            })
            .await
            .context("memtable flush")?;
        // SlateDB compacts in the background by its own schedule (size-tiered, at
        // least 4 sources); give it a bounded chance to drain L0.
        for _ in 0..20 {
            if self.db.manifest().l0().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let m = self.db.manifest();
        Ok(format!(
            "memtable flush (+ up to 20 s for the compactor): {} L0 SST(s), {} sorted run(s)",
            m.l0().len(),
            m.compacted().len()
        ))
    }

    fn state(&self) -> String {
        let m = self.db.manifest();
        format!(
            "{} L0 SST(s), {} sorted run(s)",
            m.l0().len(),
            m.compacted().len()
        )
    }

    fn requests(&self) -> Requests {
        self.store.requests()
    }
}
