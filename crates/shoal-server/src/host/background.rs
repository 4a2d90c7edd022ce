//! Periodic work: split regions past the split size, compact split children
//! that still read their parent's files, delete released split parents.

use super::Host;

impl Host {
    /// Runs the periodic checks until the server stops.
    pub fn spawn_background(&self) -> tokio::task::JoinHandle<()> {
        let host = self.clone();
        tokio::spawn(async move {
            let interval = host.inner.config.regions.split_check_interval;
            loop {
                tokio::time::sleep(interval).await;
                if host.is_stopping() {
                    return;
                }
                host.check_regions().await;
            }
        })
    }

    /// One pass of the periodic checks.
    pub async fn check_regions(&self) {
        let split_size = self.inner.config.regions.split_size.0;
        for table in self.tables() {
            if !table.record.enabled {
                continue;
            }
            for (record, slot) in table.regions.values() {
                let super::Slot::Open(region) = slot else {
                    continue;
                };
                if region.has_references() {
                    // The compaction started after the split failed or has
                    // not run yet: (re)start it.
                    region.compact_references_in_background();
                    continue;
                }
                if region.size_bytes() >= split_size {
                    match self
                        .split_region(&table.record.name, &record.id, None)
                        .await
                    {
                        Ok(_) => {}
                        Err(e) => {
                            tracing::info!(table = %table.record.name, region = %record.id, error = %e, "automatic split skipped")
                        }
                    }
                }
            }
        }
        // Cluster mode: split parents' files stay (the catalog's janitor
        // entries are the master's to change; not built yet).
        if self.inner.cluster.is_some() {
            return;
        }
        if let Err(e) = self.clean_split_parents().await {
            tracing::warn!(error = %e, "cleaning split parents failed; retried later");
        }
    }
}
