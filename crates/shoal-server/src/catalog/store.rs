//! The catalog's durable form: numbered JSON objects
//! `catalog/<20-digit version>.json`, each written once with create-if-absent
//! (the discipline of region manifests). The highest version is current.
//! A commit that finds its version taken means another server wrote the
//! catalog: this server stops changing it. Old versions are deleted, keeping
//! the last [`KEEP_VERSIONS`].

use super::schema::Catalog;
use shoal_storage::object::{Bucket, ObjectError};

/// Catalog versions kept after a commit.
pub const KEEP_VERSIONS: u64 = 10;

pub(crate) const PREFIX: &str = "catalog/";

/// Why the catalog could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The object store failed.
    #[error("catalog: {0}")]
    Object(#[from] ObjectError),
    /// A catalog object is not valid JSON of the expected shape.
    #[error("catalog object {path} is unreadable: {reason}")]
    Corrupt {
        /// The object.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The version current at an instant was pruned (older than the
    /// point-in-time window keeps).
    #[error("the catalog's history no longer reaches back to {from_ms} ms since the epoch")]
    HistoryGone {
        /// The instant.
        from_ms: i64,
    },
    /// Another writer committed the same version.
    #[error(
        "catalog version {version} was written by another server; this server stops changing the catalog"
    )]
    Conflict {
        /// The version.
        version: u64,
    },
}

/// The current catalog and the version it was read at.
#[derive(Debug)]
pub struct CatalogStore {
    bucket: Bucket,
    version: u64,
    current: Catalog,
    poisoned: bool,
    keep_history: bool,
}

pub(crate) fn path(version: u64) -> String {
    format!("{PREFIX}{version:020}.json")
}

pub(crate) fn parse_version(path: &str) -> Option<u64> {
    path.strip_prefix(PREFIX)?
        .strip_suffix(".json")
        .filter(|s| s.len() == 20)?
        .parse()
        .ok()
}

impl CatalogStore {
    /// Loads the newest catalog (an empty one if none exists yet).
    pub async fn open(bucket: Bucket) -> Result<CatalogStore, CatalogError> {
        let mut versions: Vec<u64> = bucket
            .list(PREFIX)
            .await?
            .iter()
            .filter_map(|o| parse_version(&o.path))
            .collect();
        versions.sort_unstable();
        let Some(&version) = versions.last() else {
            return Ok(CatalogStore {
                bucket,
                version: 0,
                current: Catalog::default(),
                poisoned: false,
                keep_history: false,
            });
        };
        let p = path(version);
        let data = bucket.get(&p).await?;
        let current: Catalog =
            serde_json::from_slice(&data).map_err(|e| CatalogError::Corrupt {
                path: p.clone(),
                reason: e.to_string(),
            })?;
        Ok(CatalogStore {
            bucket,
            version,
            current,
            poisoned: false,
            keep_history: false,
        })
    }

    /// Keeps old versions when committing (the point-in-time window reads
    /// them; `catalog/history.rs` prunes them by age) instead of deleting
    /// the one [`KEEP_VERSIONS`] back.
    pub fn keep_history(mut self, on: bool) -> CatalogStore {
        self.keep_history = on;
        self
    }

    /// The current catalog.
    pub fn current(&self) -> &Catalog {
        &self.current
    }

    /// Its version (0 = nothing committed yet).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Writes `next` as the next version and makes it current.
    pub async fn commit(&mut self, mut next: Catalog) -> Result<(), CatalogError> {
        let version = self.version + 1;
        next.committed_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        if self.poisoned {
            return Err(CatalogError::Conflict { version });
        }
        let p = path(version);
        let data = bytes::Bytes::from(serde_json::to_vec_pretty(&next).map_err(|e| {
            CatalogError::Corrupt {
                path: p.clone(),
                reason: e.to_string(),
            }
        })?);
        match self.bucket.create_if_absent(&p, data.clone()).await {
            Ok(()) => {}
            Err(e) if e.is_already_exists() => {
                // Our own earlier attempt may have landed (an ambiguous
                // timeout the bucket already resolved is not this case):
                // identical bytes mean it is ours.
                let existing = self.bucket.get(&p).await?;
                if existing != data {
                    self.poisoned = true;
                    return Err(CatalogError::Conflict { version });
                }
            }
            Err(e) => return Err(e.into()),
        }
        self.version = version;
        self.current = next;
        if version > KEEP_VERSIONS && !self.keep_history {
            let old = path(version - KEEP_VERSIONS);
            if let Err(e) = self.bucket.delete(&old).await
                && !e.is_not_found()
            {
                tracing::warn!(path = %old, error = %e, "deleting an old catalog version failed; it stays");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::schema::{FamilySchema, TableRecord};

    fn table(name: &str) -> TableRecord {
        TableRecord {
            name: name.into(),
            id: "id".into(),
            enabled: true,
            families: vec![FamilySchema::new("cf")],
            regions: vec![],
            split_parents: vec![],
            holds: vec![],
            reset_ms: 0,
        }
    }

    #[tokio::test]
    async fn commits_survive_reopen_and_old_versions_go() {
        let bucket = Bucket::memory();
        let mut store = CatalogStore::open(bucket.clone()).await.unwrap();
        assert_eq!(store.version(), 0);
        for i in 0..15 {
            let mut next = store.current().clone();
            next.tables.push(table(&format!("t{i}")));
            store.commit(next).await.unwrap();
        }
        let reopened = CatalogStore::open(bucket.clone()).await.unwrap();
        assert_eq!(reopened.version(), 15);
        assert_eq!(reopened.current().tables.len(), 15);
        let kept = bucket.list(PREFIX).await.unwrap().len() as u64;
        assert_eq!(kept, KEEP_VERSIONS);
    }

    #[tokio::test]
    async fn a_second_writer_is_refused() {
        let bucket = Bucket::memory();
        let mut a = CatalogStore::open(bucket.clone()).await.unwrap();
        let mut b = CatalogStore::open(bucket.clone()).await.unwrap();
        let mut next = a.current().clone();
        next.tables.push(table("a"));
        a.commit(next).await.unwrap();
        let mut next = b.current().clone();
        next.tables.push(table("b"));
        assert!(matches!(
            b.commit(next.clone()).await,
            Err(CatalogError::Conflict { version: 1 })
        ));
        assert!(b.commit(next).await.is_err(), "stays refused");
    }

    #[tokio::test]
    async fn corrupt_catalog_is_an_error() {
        let bucket = Bucket::memory();
        bucket
            .put(&path(1), bytes::Bytes::from_static(b"{not json"))
            .await
            .unwrap();
        let err = CatalogStore::open(bucket).await.unwrap_err();
        assert!(err.to_string().contains("unreadable"), "{err}");
    }
}
