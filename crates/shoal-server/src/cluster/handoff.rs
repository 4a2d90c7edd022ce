//! Warm handoff: before a region moves here by the master's decision
//! (balance, a drain, a server's return), this server copies the region's
//! blocks into its L2 from the owner's L2 while the owner still serves it,
//! then lets the owner close it (see `shoal_cluster::rounds`). So the
//! region's first reads here hit the local cache, not the object store.
//!
//! Bounded: by `cluster.handoff_warmup` in time (the owner closes when it
//! passes, warm or not) and by `cache.prefetch_rate` in bytes per second.
//! Only what the owner's L2 holds is copied from it; blocks it lacks are
//! read from the object store, as any prefetch does.

use super::regions::RegionsDriver;
use shoal_storage::cache::FamilyCachePolicy;
use shoal_storage::manifest::{Manifest, ManifestStore};
use shoal_storage::sst::{SstFile, SstReader};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One handoff: when it started, and whether it finished.
type Handoff = (Instant, Arc<AtomicBool>);

/// Handoffs under way or done, by (region, epoch).
#[derive(Debug, Default)]
pub struct Handoffs {
    tasks: std::sync::Mutex<HashMap<(String, u64), Handoff>>,
    /// Per region warmed here: its newest manifest as the warm-up read it,
    /// and when: the open fences from it (`Region::open_hinted`).
    hints: std::sync::Mutex<HashMap<String, (Manifest, Instant)>>,
}

impl Handoffs {
    /// The manifest hint for region `id`, if one was read recently enough
    /// to be used (taken: a hint serves one open).
    pub(crate) fn take_hint(&self, id: &str) -> Option<(Manifest, Instant)> {
        let mut hints = self.hints.lock().unwrap_or_else(|e| e.into_inner());
        hints.retain(|_, (_, at)| at.elapsed() < shoal_storage::manifest::MAX_HINT_AGE);
        hints.remove(id)
    }
}

/// Handoffs are forgotten this long after they started.
const FORGET_AFTER: Duration = Duration::from_secs(600);

impl RegionsDriver {
    /// Starts (on the first call) or checks the warm-up of region `id` at
    /// `epoch`, served by `owner`; true once it finished or gave up.
    pub(crate) fn warm_up(&self, id: &str, epoch: u64, owner: &str) -> bool {
        let state = &self.state;
        let bound = self
            .host
            .config()
            .cluster
            .as_ref()
            .map_or(Duration::ZERO, |c| c.handoff_warmup);
        if bound.is_zero() || self.peer_reads.is_none() {
            return true;
        }
        let mut tasks = state
            .handoffs
            .tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        tasks.retain(|_, (at, _)| at.elapsed() < FORGET_AFTER);
        if let Some((_, done)) = tasks.get(&(id.to_owned(), epoch)) {
            return done.load(Ordering::Acquire);
        }
        let done = Arc::new(AtomicBool::new(false));
        tasks.insert((id.to_owned(), epoch), (Instant::now(), done.clone()));
        drop(tasks);
        let (driver, id, owner) = (self.clone(), id.to_owned(), owner.to_owned());
        tokio::spawn(async move {
            let started = Instant::now();
            match tokio::time::timeout(bound, driver.copy_from_owner(&id, &owner)).await {
                Ok(Ok((files, peer, fetched))) => tracing::info!(
                    region = %id, %owner, files, peer_blocks = peer, object_store_blocks = fetched,
                    ms = started.elapsed().as_millis() as u64, "warm handoff: region copied before the move"
                ),
                Ok(Err(reason)) => {
                    tracing::warn!(region = %id, %owner, %reason, "warm handoff failed; the region moves cold")
                }
                Err(_) => {
                    tracing::info!(region = %id, %owner, bound = ?bound, "warm handoff hit its bound; the rest arrives after the move")
                }
            }
            done.store(true, Ordering::Release);
        });
        false
    }

    /// Copies region `id`'s blocks into L2, from `owner`'s L2 first.
    /// Returns (files, blocks from the peer, blocks from the object store).
    async fn copy_from_owner(&self, id: &str, owner: &str) -> Result<(usize, u64, u64), String> {
        let host = &self.host;
        let (Some(cache), Some(reads)) = (host.cache(), &self.peer_reads) else {
            return Ok((0, 0, 0));
        };
        let Some((table, record)) = host.find_region(id) else {
            return Err(format!("region {id} is in no table this server knows"));
        };
        let dir = host.region_config(&table, &record).region_dir;
        reads.hint(&dir, owner);
        let manifest = ManifestStore::new(host.bucket().clone(), dir.clone())
            .load_latest()
            .await
            .map_err(|e| format!("reading the manifest of {dir}: {e}"))?
            .ok_or_else(|| format!("region {id} has no manifest yet"))?;
        self.state
            .handoffs
            .hints
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_owned(), (manifest.clone(), Instant::now()));
        let fetcher = cache.family(FamilyCachePolicy::default());
        let mut files = Vec::new();
        for f in manifest.files() {
            let reader = SstReader::open(
                fetcher.clone(),
                SstFile {
                    id: f.id,
                    path: f.path.clone(),
                },
            )
            .await
            .map_err(|e| format!("opening {}: {e}", f.path))?;
            files.push(shoal_storage::cache::PrefetchFile {
                path: f.path.clone(),
                blocks: (0..reader.data_block_count())
                    .filter_map(|i| reader.block_addr(i))
                    .collect(),
                l1: None,
            });
        }
        let count = files.len();
        let handle =
            cache.prefetch_counted(files, host.prefetch_rate(), Some(host.block_sources(id)));
        let progress = handle.progress();
        handle.wait().await;
        Ok((
            count,
            progress.peer_blocks.load(Ordering::Relaxed),
            progress.fetched_blocks.load(Ordering::Relaxed),
        ))
    }
}
