//! Shoal under test: one storage-engine `Region` (no server, no RPC) on a local
//! directory behind Shoal's own object-store emulation, with a local WAL and the
//! block cache Shoal's server builds (L1 in memory, L2 on disk).
//!
//! A YCSB record is one row with one cell per field (`family:field0..9`). An update
//! is a put of one cell; a read is a get of the whole row. A write is acknowledged
//! after its WAL group commit is fsync'd on the local disk.

use std::sync::Arc;

use anyhow::{Context, bail};
use shoal_storage::cache::{BlockCache, CacheConfig, DiskCache, DiskCacheConfig, L2};
use shoal_storage::object::{Bucket, Emulation, ObjectStoreConfig};
use shoal_storage::region::{FamilyConfig, Get, Region, RegionConfig, RegionEnv, RowMutation};
use shoal_storage::wal::{Wal, WalOptions};

use crate::emulate::Requests;
use crate::setup::Setup;
use crate::system::System;

const FAMILY: &str = "family";

/// An open region and what it runs on.
pub struct Shoal {
    region: Region,
    wal: Wal,
    bucket: Bucket,
    cache: Option<BlockCache>,
    fields: Vec<String>,
}

impl Shoal {
    /// Opens a fresh region under `setup.dir` for records of `field_count` fields.
    pub async fn open(setup: &Setup, field_count: usize) -> anyhow::Result<Shoal> {
        let mut object_config = ObjectStoreConfig::local(setup.dir.join("objects"));
        object_config.emulate = Some(Emulation {
            latency: setup.model.latency,
            jitter: setup.model.jitter,
            bandwidth_bytes_per_sec: setup.model.bandwidth_bytes_per_sec,
        });
        let bucket = Bucket::open(&object_config)
            .await
            .context("opening Shoal's bucket")?;
        let wal = Wal::open(WalOptions::local(setup.dir.join("wal")))
            .await
            .context("opening Shoal's WAL")?;
        let env = RegionEnv::new(bucket.clone(), wal.clone());
        let l2 = DiskCache::open(DiskCacheConfig {
            page_cache_reads: setup.shoal_l2_page_cache,
            ..DiskCacheConfig::new(setup.dir.join("l2"), setup.disk_bytes)
        })
        .context("opening Shoal's L2 cache")?;
        let cache = BlockCache::new(
            CacheConfig {
                l1_data_bytes: usize::try_from(setup.memory_data_bytes - setup.shoal_rows_bytes)?,
                l1_rows_bytes: usize::try_from(setup.shoal_rows_bytes)?,
                l1_in_memory_bytes: 0,
                l1_meta_bytes: usize::try_from(setup.memory_meta_bytes)?,
                ..CacheConfig::default()
            },
            env.fetcher.clone(),
            Some(Arc::new(l2) as Arc<dyn L2>),
        );
        let env = env.with_cache(cache.clone());
        let mut config = RegionConfig::new(
            "usertable-1",
            "data/usertable/1",
            vec![{
                let mut family = FamilyConfig::new(FAMILY);
                if let Some(bytes) = setup.shoal_block_bytes {
                    family.sst.block_size = bytes;
                }
                family
            }],
        );
        config.flush_size = usize::try_from(setup.write_buffer_bytes)?;
        let region = Region::open(config, env)
            .await
            .context("opening Shoal's region")?;
        Ok(Shoal {
            region,
            wal,
            bucket,
            cache: Some(cache),
            fields: (0..field_count).map(|i| format!("field{i}")).collect(),
        })
    }

    /// Closes the region (final flush) and the WAL.
    pub async fn close(self) -> anyhow::Result<()> {
        self.region.close().await.context("closing the region")?;
        self.wal.close().await.context("closing the WAL")?;
        Ok(())
    }

    fn field(&self, i: usize) -> anyhow::Result<&str> {
        match self.fields.get(i) {
            Some(f) => Ok(f),
            None => bail!("no field {i}"),
        }
    }
}

impl System for Shoal {
    async fn insert(&self, key: String, fields: Vec<Vec<u8>>) -> anyhow::Result<()> {
        let mut m = RowMutation::new(key);
        for (i, value) in fields.into_iter().enumerate() {
            m = m.put(FAMILY, self.field(i)?.to_owned(), value);
        }
        self.region.mutate(m).await?;
        Ok(())
    }

    async fn read(&self, key: String) -> anyhow::Result<usize> {
        let row = self.region.get(&Get::new(key)).await?;
        Ok(row.cells.len())
    }

    async fn update(&self, key: String, field: usize, value: Vec<u8>) -> anyhow::Result<()> {
        let m = RowMutation::new(key).put(FAMILY, self.field(field)?.to_owned(), value);
        self.region.mutate(m).await?;
        Ok(())
    }

    async fn settle(&self) -> anyhow::Result<String> {
        self.region.flush().await.context("flush")?;
        self.region
            .compact(true)
            .await
            .context("major compaction")?;
        let files: usize = self.region.file_counts().values().sum();
        Ok(format!(
            "flush + major compaction: {files} SST(s), {} MB",
            self.region.size_bytes() / 1_000_000
        ))
    }

    fn state(&self) -> String {
        let files: usize = self.region.file_counts().values().sum();
        let mut state = format!(
            "memstore {:.1} MB, {files} SST(s)",
            self.region.memstore_size() as f64 / 1e6
        );
        if let Some(cache) = &self.cache {
            let m = cache.metrics();
            state.push_str(&format!(
                ", L1 rows hits/misses {}/{}, L1 data hits/misses {}/{}, L1 meta hits/misses {}/{}, L2 hits/misses {}/{}, cache-miss GETs {}",
                m.rows.hits,
                m.rows.misses,
                m.data.hits,
                m.data.misses,
                m.meta.hits,
                m.meta.misses,
                m.l2_hits,
                m.l2_misses,
                m.object_store_gets
            ));
        }
        state
    }

    fn requests(&self) -> Requests {
        let m = self.bucket.metrics();
        Requests {
            gets: m.get.requests + m.ranged_get.requests,
            puts: m.put.requests + m.conditional_put.requests + m.multipart.requests,
            other: m.list.requests + m.delete.requests + m.head.requests,
            get_bytes: m.get.bytes + m.ranged_get.bytes,
            put_bytes: m.put.bytes + m.conditional_put.bytes + m.multipart.bytes,
        }
    }
}
