//! The catalog this server serves, kept in step with the one in the object
//! store when several servers share it (cluster mode): read the newest
//! version (another master may have committed since) and serve its tables;
//! commit a change as master with create-if-absent (two masters cannot both
//! commit a version), serve it, and have the cluster publish its version.
//! Who is master and where the version is published is the cluster's
//! business, asked through the seam (`cluster_role.rs`).

use super::Host;
use crate::catalog::{Catalog, CatalogStore};
use crate::error::ServiceError;

impl Host {
    /// The newest catalog from the bucket, keeping old versions when the
    /// point-in-time window needs them.
    pub(crate) async fn open_catalog_store(&self) -> Result<CatalogStore, ServiceError> {
        Ok(CatalogStore::open(self.inner.env.bucket.clone())
            .await?
            .keep_history(self.inner.config.snapshots.point_in_time().is_some()))
    }

    /// The catalog store, locked: admin operations and catalog reloads are
    /// serialized by this lock.
    pub(crate) async fn lock_catalog(&self) -> tokio::sync::MutexGuard<'_, CatalogStore> {
        self.inner.catalog.lock().await
    }

    /// The catalog version served now.
    pub async fn catalog_version(&self) -> u64 {
        self.inner.catalog.lock().await.version()
    }

    /// Cluster mode: reads the newest catalog version (another master may
    /// have committed) and serves its tables.
    pub(crate) async fn reload_catalog(
        &self,
        catalog: &mut CatalogStore,
    ) -> Result<(), ServiceError> {
        let fresh = self.open_catalog_store().await?;
        if fresh.version() >= catalog.version() {
            *catalog = fresh;
        }
        self.install_tables(catalog.current());
        let _ = self
            .inner
            .snapshot_holds
            .sync(&self.inner.env.bucket, catalog.current())
            .await;
        Ok(())
    }

    /// Cluster mode: commits `change` to the newest catalog, as master.
    pub(crate) async fn commit_as_master(
        &self,
        change: impl FnOnce(&mut Catalog) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.require_master()?;
        let mut catalog = self.inner.catalog.lock().await;
        self.reload_catalog(&mut catalog).await?;
        let mut next = catalog.current().clone();
        change(&mut next)?;
        if let Err(e) = catalog.commit(next).await {
            // A conflict: another master committed. Read it so the next
            // call starts from it.
            if let Ok(fresh) = self.open_catalog_store().await {
                *catalog = fresh;
            }
            return Err(e.into());
        }
        self.install_tables(catalog.current());
        let version = catalog.version();
        drop(catalog);
        // Published at once (not at the next round), so a server told to
        // reopen a region afterwards reads this catalog first.
        if let Some(c) = &self.inner.cluster {
            c.publish_catalog(version).await;
        }
        Ok(())
    }

    /// Commits `change` to the catalog — under the catalog lock on a single
    /// server, as master in cluster mode — and returns the catalog
    /// committed. `change` refusing (Err) commits nothing.
    pub(crate) async fn change_catalog(
        &self,
        change: impl FnOnce(&mut Catalog) -> Result<(), ServiceError>,
    ) -> Result<Catalog, ServiceError> {
        if self.inner.cluster.is_some() {
            self.commit_as_master(change).await?;
            return Ok(self.inner.catalog.lock().await.current().clone());
        }
        let mut catalog = self.inner.catalog.lock().await;
        let mut next = catalog.current().clone();
        change(&mut next)?;
        catalog.commit(next).await?;
        Ok(catalog.current().clone())
    }
}
