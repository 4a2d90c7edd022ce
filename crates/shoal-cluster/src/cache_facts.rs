//! Cache facts: what each server's block cache holds, per region. Every
//! server publishes a report at `<prefix>/cache/<name>` (JSON, versioned,
//! bound to its lease, so a dead server's report goes with it) every few
//! seconds: for each region it serves, and each region it served before
//! whose blocks its L2 still holds, the region's data bytes and how many of
//! them its L1 and L2 keep; and its L2's free space. The master reads them
//! to place regions where their blocks already are ([`CacheFacts`]).

use crate::etcd::{Etcd, EtcdError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// At most this many regions in one report (the open ones first, then the
/// departed ones holding the most bytes): a report stays far under etcd's
/// request size limit (1.5 MiB by default).
pub const MAX_REPORTED_REGIONS: usize = 5_000;

/// One region in a server's report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RegionCache {
    /// Bytes of the region's data blocks (as of when the server last knew
    /// its files).
    pub size: u64,
    /// Of those, bytes in the server's L1.
    pub l1: u64,
    /// Of those, bytes in the server's L2.
    pub l2: u64,
    /// Of those, bytes in either tier.
    pub cached: u64,
    /// True if the server serves the region now; false for one it served
    /// before (its blocks stay in L2 until evicted).
    pub open: bool,
}

/// What one server's cache holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheReport {
    /// Format version (1).
    pub v: u32,
    /// The server.
    pub server: String,
    /// When it was made, ms since the Unix epoch (the server's clock).
    pub at_ms: u64,
    /// Bytes its L2 may still fill (0 without an L2).
    pub l2_free: u64,
    /// Its L2's budget (0 without an L2).
    pub l2_capacity: u64,
    /// Per region id.
    pub regions: BTreeMap<String, RegionCache>,
}

fn cache_prefix(prefix: &str) -> String {
    format!("{prefix}/cache/")
}

/// Publishes `report` under the cluster `prefix`, bound to `lease`.
pub async fn publish(
    etcd: &Etcd,
    prefix: &str,
    report: &CacheReport,
    lease: i64,
) -> Result<(), EtcdError> {
    let key = format!("{}{}", cache_prefix(prefix), report.server);
    let value = serde_json::to_vec(report).unwrap_or_default();
    etcd.put(key.as_bytes(), &value, lease).await.map(|_| ())
}

/// Every server's latest report under `prefix` (unreadable ones are
/// skipped with a warning).
pub async fn read_all(etcd: &Etcd, prefix: &str) -> Result<CacheFacts, EtcdError> {
    let (kvs, _) = etcd.get_prefix(cache_prefix(prefix).as_bytes()).await?;
    let mut reports = Vec::with_capacity(kvs.len());
    for kv in kvs {
        match serde_json::from_slice::<CacheReport>(&kv.value) {
            Ok(r) => reports.push(r),
            Err(e) => tracing::warn!(
                key = %String::from_utf8_lossy(&kv.key),
                error = %e,
                "unreadable cache report; skipped"
            ),
        }
    }
    Ok(CacheFacts::from_reports(reports))
}

/// The cluster's cache facts: per server, per region, what it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheFacts {
    reports: BTreeMap<String, CacheReport>,
}

impl CacheFacts {
    /// Facts made of these reports (one per server; a later one of the same
    /// server replaces an earlier).
    pub fn from_reports(reports: impl IntoIterator<Item = CacheReport>) -> CacheFacts {
        CacheFacts {
            reports: reports.into_iter().map(|r| (r.server.clone(), r)).collect(),
        }
    }

    /// True if no server reported.
    pub fn is_empty(&self) -> bool {
        self.reports.is_empty()
    }

    /// `server`'s report, if any.
    pub fn report(&self, server: &str) -> Option<&CacheReport> {
        self.reports.get(server)
    }

    /// Every report, by server.
    pub fn reports(&self) -> impl Iterator<Item = &CacheReport> {
        self.reports.values()
    }

    /// Bytes of `region`'s blocks that `server` holds in L1 or L2 (0 if it
    /// did not report the region).
    pub fn cached(&self, server: &str, region: &str) -> u64 {
        self.reports
            .get(server)
            .and_then(|r| r.regions.get(region))
            .map_or(0, |c| c.cached)
    }

    /// Bytes of `region`'s blocks: the largest figure any server reported
    /// (the owner's is current; a former owner's may be older). `None` if
    /// no server reported it.
    pub fn size(&self, region: &str) -> Option<u64> {
        self.reports
            .values()
            .filter_map(|r| r.regions.get(region).map(|c| c.size))
            .max()
    }

    /// The server among `candidates` holding the most bytes of `region`
    /// (ties: the first in name order), with those bytes; `None` if none of
    /// them holds any.
    pub fn best_holder<'a>(&self, region: &str, candidates: &[&'a str]) -> Option<(&'a str, u64)> {
        let mut best: Option<(&'a str, u64)> = None;
        for c in candidates {
            let bytes = self.cached(c, region);
            if bytes > 0 && best.is_none_or(|(_, b)| bytes > b) {
                best = Some((c, bytes));
            }
        }
        best
    }

    /// Bytes a move of `region` to `to` would have to fetch: its size less
    /// what `to` already holds. `None` if its size is unknown.
    pub fn move_cost(&self, region: &str, to: &str) -> Option<u64> {
        self.size(region)
            .map(|size| size.saturating_sub(self.cached(to, region)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(server: &str, regions: &[(&str, u64, u64, bool)]) -> CacheReport {
        CacheReport {
            v: 1,
            server: server.to_owned(),
            at_ms: 1,
            l2_free: 100,
            l2_capacity: 1000,
            regions: regions
                .iter()
                .map(|(r, size, cached, open)| {
                    (
                        (*r).to_owned(),
                        RegionCache {
                            size: *size,
                            l1: 0,
                            l2: *cached,
                            cached: *cached,
                            open: *open,
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn facts_answer_who_holds_what_and_what_a_move_costs() {
        let facts = CacheFacts::from_reports([
            report("a", &[("r1", 1000, 1000, true), ("r2", 500, 100, false)]),
            report("b", &[("r2", 600, 600, true)]),
        ]);
        assert_eq!(facts.cached("a", "r1"), 1000);
        assert_eq!(facts.cached("b", "r1"), 0);
        assert_eq!(facts.cached("c", "r1"), 0);
        assert_eq!(facts.size("r2"), Some(600));
        assert_eq!(facts.size("r3"), None);
        assert_eq!(facts.move_cost("r2", "a"), Some(500));
        assert_eq!(facts.move_cost("r1", "b"), Some(1000));
        assert_eq!(facts.move_cost("r1", "a"), Some(0));
        assert_eq!(facts.best_holder("r2", &["a", "b"]), Some(("b", 600)));
        assert_eq!(facts.best_holder("r2", &["a"]), Some(("a", 100)));
        assert_eq!(facts.best_holder("r1", &["b", "c"]), None);
    }

    #[test]
    fn a_report_round_trips_through_json_and_old_fields_default() {
        let r = report("a", &[("r1", 10, 5, true)]);
        let json = serde_json::to_vec(&r).unwrap();
        assert_eq!(serde_json::from_slice::<CacheReport>(&json).unwrap(), r);
        let partial: RegionCache = serde_json::from_str(r#"{"size":7}"#).unwrap();
        assert_eq!((partial.size, partial.cached, partial.open), (7, 0, false));
    }
}
