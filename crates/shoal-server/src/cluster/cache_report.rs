//! This server's cache facts for the cluster: how many bytes of each region
//! it serves its L1 and L2 hold, and of each region it served before (a
//! region that moved away leaves its blocks in L2 until they are evicted),
//! with its L2's free space. The node publishes the report to etcd every
//! [`REPORT_EVERY`], bound to its lease; the master reads every server's
//! to place regions where their blocks are (`shoal_cluster::cache_facts`).

use crate::host::Host;
use shoal_cluster::cache_facts::{CacheReport, MAX_REPORTED_REGIONS, RegionCache};
use shoal_storage::sst::BlockAddr;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Time between two reports of a server.
pub const REPORT_EVERY: Duration = Duration::from_secs(5);

/// Regions given up here that are remembered (the oldest go first).
const MAX_DEPARTED: usize = 1_000;

/// A region given up here: its data blocks, and when it left.
type Left = (Arc<Vec<BlockAddr>>, Instant);

/// The regions this server gave up, with their blocks, while its cache may
/// still hold some of them.
#[derive(Debug, Default)]
pub struct Departed {
    regions: Mutex<HashMap<String, Left>>,
}

impl Departed {
    /// Remembers that region `id`, with these data blocks, left this server.
    pub fn remember(&self, id: &str, blocks: Vec<BlockAddr>) {
        let mut regions = self.regions.lock().unwrap_or_else(|e| e.into_inner());
        regions.insert(id.to_owned(), (Arc::new(blocks), Instant::now()));
        while regions.len() > MAX_DEPARTED {
            let Some(oldest) = regions
                .iter()
                .min_by_key(|(_, (_, at))| *at)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            regions.remove(&oldest);
        }
    }

    /// Region `id` is served here again (or gone for good).
    pub fn forget(&self, id: &str) {
        self.regions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    fn snapshot(&self) -> Vec<(String, Arc<Vec<BlockAddr>>)> {
        self.regions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, (b, _))| (k.clone(), b.clone()))
            .collect()
    }
}

/// `host`'s cache report as `name`. Walks every block of every region it
/// serves or remembers (a hash lookup per block per tier): call it off the
/// async runtime. Departed regions whose blocks are all gone from the cache
/// are forgotten.
pub(crate) fn cache_report(host: &Host, name: &str, departed: &Departed) -> CacheReport {
    let mut report = CacheReport {
        v: 1,
        server: name.to_owned(),
        at_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        ..CacheReport::default()
    };
    let Some(cache) = host.cache() else {
        return report;
    };
    if let Some(disk) = host.disk_cache() {
        let m = disk.metrics();
        report.l2_free = m.bytes_free;
        report.l2_capacity = m.bytes_used + m.bytes_free;
    }
    let open: Vec<_> = host
        .tables()
        .iter()
        .flat_map(|t| t.open_regions())
        .collect();
    for region in open.into_iter().take(MAX_REPORTED_REGIONS) {
        let f = cache.footprint(&region.data_blocks());
        report
            .regions
            .insert(region.id().to_owned(), entry(f, true));
    }
    let mut gone = Vec::new();
    for (id, blocks) in departed.snapshot() {
        if report.regions.contains_key(&id) {
            continue;
        }
        let f = cache.footprint(blocks.iter());
        if f.cached == 0 {
            gone.push(id);
            continue;
        }
        report.regions.insert(id, entry(f, false));
    }
    for id in gone {
        departed.forget(&id);
    }
    if report.regions.len() > MAX_REPORTED_REGIONS {
        // Keep the open ones, then the departed ones holding the most.
        let mut departed_ones: Vec<(String, u64)> = report
            .regions
            .iter()
            .filter(|(_, c)| !c.open)
            .map(|(k, c)| (k.clone(), c.cached))
            .collect();
        departed_ones.sort_by_key(|(_, cached)| std::cmp::Reverse(*cached));
        let room = MAX_REPORTED_REGIONS.saturating_sub(report.regions.len() - departed_ones.len());
        for (id, _) in departed_ones.into_iter().skip(room) {
            report.regions.remove(&id);
        }
    }
    report
}

/// A region's line in the report.
fn entry(f: shoal_storage::cache::Footprint, open: bool) -> RegionCache {
    RegionCache {
        size: f.total,
        l1: f.l1,
        l2: f.l2,
        cached: f.cached,
        open,
    }
}
