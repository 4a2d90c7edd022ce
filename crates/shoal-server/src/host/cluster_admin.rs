//! Table changes in cluster mode. The master makes them: it reloads the
//! catalog (a former master may have committed since), commits the change
//! with create-if-absent (two masters cannot both commit a version), and
//! serves nothing itself: the master's round assigns the new regions, or
//! closes those no longer needed, and the call waits (bounded) until the
//! cluster shows the result. Other servers answer NotMaster with the
//! master's address, and the client sends the call there.

use super::Host;
use crate::catalog::{CatalogStore, TableRecord};
use crate::error::ServiceError;
use std::time::{Duration, Instant};

/// Longest a table change waits for its regions to open or close.
const SETTLE_DEADLINE: Duration = Duration::from_secs(30);

impl Host {
    /// Cluster mode: Err(NotMaster) unless this server is master.
    pub(crate) fn require_master(&self) -> Result<(), ServiceError> {
        match &self.inner.cluster {
            Some(c) if !c.is_master() => Err(ServiceError::NotMaster(c.master_addr())),
            _ => Ok(()),
        }
    }

    /// Cluster mode: reads the newest catalog version (another master may
    /// have committed) and serves its tables.
    pub(crate) async fn reload_catalog(
        &self,
        catalog: &mut CatalogStore,
    ) -> Result<(), ServiceError> {
        let fresh = CatalogStore::open(self.inner.env.bucket.clone()).await?;
        if fresh.version() >= catalog.version() {
            *catalog = fresh;
        }
        self.install_tables(catalog.current());
        Ok(())
    }

    /// The catalog version served now.
    pub async fn catalog_version(&self) -> u64 {
        self.inner.catalog.lock().await.version()
    }

    /// Cluster mode: commits `change` to the newest catalog, as master.
    pub(crate) async fn commit_as_master(
        &self,
        change: impl FnOnce(&mut crate::catalog::Catalog) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.require_master()?;
        let mut catalog = self.inner.catalog.lock().await;
        self.reload_catalog(&mut catalog).await?;
        let mut next = catalog.current().clone();
        change(&mut next)?;
        if let Err(e) = catalog.commit(next).await {
            // A conflict: another master committed. Read it so the next
            // call starts from it.
            if let Ok(fresh) = CatalogStore::open(self.inner.env.bucket.clone()).await {
                *catalog = fresh;
            }
            return Err(e.into());
        }
        self.install_tables(catalog.current());
        Ok(())
    }

    /// Waits until every region of `table` is served (`open`) or none is
    /// (`!open`), as the cluster's records show; false on the deadline.
    pub(crate) async fn settle(&self, record: &TableRecord, open: bool) -> bool {
        let Some(state) = &self.inner.cluster else {
            return true;
        };
        let start = Instant::now();
        while start.elapsed() < SETTLE_DEADLINE {
            let d = state.directory();
            let done = record.regions.iter().all(|r| {
                let served = d.owners.get(&r.id).is_some_and(|o| o.open);
                served == open
            });
            if done {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tracing::warn!(table = %record.name, open, "regions did not settle in time; the cluster goes on with it");
        false
    }

    /// Refuses a table change cluster mode does not make yet.
    pub(crate) fn not_in_cluster_mode(&self, what: &str) -> Result<(), ServiceError> {
        if self.inner.cluster.is_some() {
            return Err(ServiceError::FailedPrecondition(format!(
                "{what} is not available in cluster mode yet (see docs/cluster.md)"
            )));
        }
        Ok(())
    }
}
