//! Periodic work: split regions past the split size, compact split children
//! that still read their parent's files, delete released split parents,
//! keep snapshot holds and their garbage in order.

use super::Host;

/// How often objects of snapshots that never committed are looked for.
const SNAPSHOT_SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

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
        // entries are the master's to change; not built yet). Snapshots'
        // housekeeping is the master's.
        if self.inner.cluster.is_some() {
            if self.require_master().is_ok() {
                self.snapshot_housekeeping().await;
            }
            return;
        }
        if let Err(e) = self.clean_split_parents().await {
            tracing::warn!(error = %e, "cleaning split parents failed; retried later");
        }
        self.snapshot_housekeeping().await;
    }

    /// Snapshots: holds follow the catalog (an unreadable record held
    /// everything: try again), deleted snapshots no table reads any more
    /// are released, and once an hour abandoned snapshot objects are swept.
    async fn snapshot_housekeeping(&self) {
        if self.inner.env.pins.holds_everything() {
            let catalog = self.inner.catalog.lock().await.current().clone();
            let _ = self
                .inner
                .snapshot_holds
                .sync(&self.inner.env.bucket, &catalog)
                .await;
        }
        self.release_unheld_snapshots().await;
        self.pitr_housekeeping().await;
        let due = {
            let mut last = self
                .inner
                .snapshot_sweep
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let due = last.is_none_or(|t| t.elapsed() >= SNAPSHOT_SWEEP_EVERY);
            if due {
                *last = Some(std::time::Instant::now());
            }
            due
        };
        if due {
            self.sweep_abandoned_snapshots().await;
        }
    }
}
