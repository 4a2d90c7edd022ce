//! Region assignments: one record per region at `<prefix>/assign/<region>`
//! (JSON, versioned), changed only by compare-and-swap on its revision, and
//! the master's plan — which regions to place where, pure and testable.
//!
//! ```text
//!            master assigns (epoch + 1)          owner opened it
//! offline ─────────────────────────────▶ opening ───────────────▶ open
//!    ▲                                      │                      │
//!    │  owner's lease expired (its WAL      │ open failed          │ master moves it /
//!    │  run noted for replay)               ▼                      │ owner drains
//!    └──────────────────────────────────── offline ◀── closing ◀───┘
//! ```
//!
//! The epoch only grows: a server opens a region with the record's epoch and
//! the region's manifest is fenced with a higher one than any former owner
//! used, so a paused former owner can never commit again.

use crate::cache_facts::CacheFacts;
use crate::etcd::{Etcd, EtcdError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a region is in its life on the servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RegionState {
    /// Nobody serves it.
    Offline,
    /// `owner` is opening it.
    Opening,
    /// `owner` serves it.
    Open,
    /// `owner` is flushing and closing it (a move or a drain).
    Closing,
}

/// One region's assignment record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignment {
    /// Format version (1).
    pub v: u32,
    /// The region id.
    pub region: String,
    /// The server serving (or opening, or closing) it.
    pub owner: Option<String>,
    /// Grows with every assignment.
    pub epoch: u64,
    /// See [`RegionState`].
    pub state: RegionState,
    /// WAL runs of dead former owners that may hold entries of this region
    /// not yet flushed: the next owner replays them.
    #[serde(default)]
    pub replay: Vec<String>,
    /// The WAL run the owner writes this region's edits to (set when it
    /// opens the region): replayed by the next owner if this one dies.
    #[serde(default)]
    pub owner_wal: Option<String>,
    /// For a move: the server to take the region once its owner has closed it.
    #[serde(default)]
    pub to: Option<String>,
    /// The server that served the region before its current (or next)
    /// owner: its L2 may still hold the region's blocks, so the new owner
    /// reads from it before the object store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_owner: Option<String>,
    /// When `last_owner` left involuntarily (it died, or it drained for a
    /// restart), in ms since the Unix epoch by the master's clock: if it
    /// returns within the retain bound, the region goes back to it (its L2
    /// still holds the region's blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_at_ms: Option<u64>,
    /// A former owner that still answers reads of the region from its
    /// closed, flushed copy (it closed the region for a move and reads on
    /// through the gap until the next owner opens): the next owner ends
    /// those reads before it takes a write, or waits out their bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_at: Option<MoveReads>,
}

/// Reads of a moved region still answered by its former owner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveReads {
    /// The former owner's cluster name.
    pub server: String,
    /// It answers them at most this long after its close ended, by its own
    /// clock (which was before this record was written).
    pub bound_ms: u64,
}

impl Assignment {
    /// The server to remember as the last one that served the region when
    /// its owner changes now: the current owner, else the one remembered.
    pub fn owner_or_last(&self) -> Option<String> {
        self.owner.clone().or_else(|| self.last_owner.clone())
    }
}

impl Assignment {
    /// A region nobody has served yet.
    pub fn new(region: &str) -> Assignment {
        Assignment {
            v: 1,
            region: region.to_owned(),
            owner: None,
            epoch: 0,
            state: RegionState::Offline,
            replay: Vec::new(),
            owner_wal: None,
            to: None,
            last_owner: None,
            left_at_ms: None,
            reads_at: None,
        }
    }
}

fn assign_prefix(prefix: &str) -> String {
    format!("{prefix}/assign/")
}

/// The record of `region` with its modification revision, if any.
pub async fn read(
    etcd: &Etcd,
    prefix: &str,
    region: &str,
) -> Result<Option<(Assignment, i64)>, EtcdError> {
    let key = format!("{}{region}", assign_prefix(prefix));
    Ok(etcd.get(key.as_bytes()).await?.and_then(|kv| {
        serde_json::from_slice::<Assignment>(&kv.value)
            .ok()
            .map(|a| (a, kv.mod_revision))
    }))
}

/// Every assignment record with its modification revision, by region.
pub async fn read_all(
    etcd: &Etcd,
    prefix: &str,
) -> Result<BTreeMap<String, (Assignment, i64)>, EtcdError> {
    let (kvs, _) = etcd.get_prefix(assign_prefix(prefix).as_bytes()).await?;
    let mut out = BTreeMap::new();
    for kv in kvs {
        match serde_json::from_slice::<Assignment>(&kv.value) {
            Ok(a) => {
                out.insert(a.region.clone(), (a, kv.mod_revision));
            }
            Err(e) => {
                tracing::warn!(key = %String::from_utf8_lossy(&kv.key), error = %e, "unreadable assignment record; skipped");
            }
        }
    }
    Ok(out)
}

/// Writes `next` if the record is still at `mod_revision` (0: absent).
/// False if someone changed it first.
pub async fn write(
    etcd: &Etcd,
    prefix: &str,
    next: &Assignment,
    mod_revision: i64,
) -> Result<bool, EtcdError> {
    let key = format!("{}{}", assign_prefix(prefix), next.region);
    let value = serde_json::to_vec(next).unwrap_or_default();
    etcd.compare_and_swap(key.as_bytes(), mod_revision, &value, 0)
        .await
}

/// Deletes the record of `region` if it is still at `mod_revision`.
pub async fn delete(
    etcd: &Etcd,
    prefix: &str,
    region: &str,
    mod_revision: i64,
) -> Result<bool, EtcdError> {
    let key = format!("{}{region}", assign_prefix(prefix));
    etcd.compare_and_delete(key.as_bytes(), mod_revision).await
}

/// Asks for `region` to move to server `to` (a manual move): its owner
/// closes it (flushing), then the master gives it to `to`. Err with the
/// reason if the region is not serving now or the record changed.
pub async fn request_move(
    etcd: &Etcd,
    prefix: &str,
    region: &str,
    to: &str,
) -> Result<Result<(), String>, EtcdError> {
    request_close(etcd, prefix, region, to, None).await
}

/// Asks for `region` (served by `owner`) to be reopened where it is: its
/// owner flushes and closes it, then the master gives it back to the same
/// server, which opens it with the catalog as it is then (a schema change).
/// Err with the reason if it is not serving by `owner` now.
pub async fn request_reopen(
    etcd: &Etcd,
    prefix: &str,
    region: &str,
    owner: &str,
) -> Result<Result<(), String>, EtcdError> {
    request_close(etcd, prefix, region, owner, Some(owner)).await
}

/// Marks a serving `region` closing, to be given to `to` once closed
/// (`owner`: only if that server serves it). Already at `to` and no owner
/// required: nothing to do.
async fn request_close(
    etcd: &Etcd,
    prefix: &str,
    region: &str,
    to: &str,
    owner: Option<&str>,
) -> Result<Result<(), String>, EtcdError> {
    let Some((a, revision)) = read(etcd, prefix, region).await? else {
        return Ok(Err(format!("region {region} has no assignment")));
    };
    if a.state != RegionState::Open || owner.is_some_and(|o| a.owner.as_deref() != Some(o)) {
        return Ok(Err(format!(
            "region {region} is {:?} by {:?}, not serving{}: try again when it is open",
            a.state,
            a.owner,
            owner.map(|o| format!(" by {o}")).unwrap_or_default()
        )));
    }
    if owner.is_none() && a.owner.as_deref() == Some(to) {
        return Ok(Ok(()));
    }
    let next = Assignment {
        state: RegionState::Closing,
        to: Some(to.to_owned()),
        // Moved by hand: it stays where it is sent.
        left_at_ms: None,
        ..a
    };
    if write(etcd, prefix, &next, revision).await? {
        Ok(Ok(()))
    } else {
        Ok(Err(format!("region {region} changed meanwhile; try again")))
    }
}

/// One step the master takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Give an unserved region to `to`.
    Assign {
        /// The region.
        region: String,
        /// The server.
        to: String,
    },
    /// Take a region from a live owner to `to`: the owner closes it
    /// (flushing), then `to` opens it.
    Move {
        /// The region.
        region: String,
        /// Its owner now.
        from: String,
        /// The server to take it.
        to: String,
        /// Why it moves.
        why: MoveWhy,
    },
}

/// Why the master moves a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveWhy {
    /// Load: from the busiest server to the least busy.
    Balance,
    /// Its owner drains (stops gracefully): it may come back for it.
    Drain,
    /// Back to the server that served it before it died or drained, which
    /// returned within the retain bound: its L2 holds the region's blocks.
    Home,
}

/// How the plan follows caches: retained assignment (which needs the time)
/// and cache-aware placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Now, in ms since the Unix epoch (the master's clock).
    pub now_ms: u64,
    /// How long a server that died or drained gets its regions back when it
    /// returns (0: never).
    pub bound_ms: u64,
    /// Place unserved regions and pick balance moves where a region's
    /// blocks are cached (its last owner). Off: the plain balancer (least
    /// loaded first, the busiest server's newest region moved).
    pub cache_aware: bool,
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            now_ms: 0,
            bound_ms: 0,
            cache_aware: true,
        }
    }
}

impl Placement {
    /// True if `a`'s former owner left within the bound.
    fn home_of<'a>(&self, a: &'a Assignment) -> Option<&'a str> {
        let left = a.left_at_ms?;
        (self.bound_ms > 0 && self.now_ms < left.saturating_add(self.bound_ms))
            .then_some(a.last_owner.as_deref())
            .flatten()
    }
}

/// The master's plan for one round, deterministic for the same input:
///
/// 1. **Home**: a region whose former owner died or drained less than
///    `retain.bound_ms` ago, and is live again, moves back to it (its L2
///    holds the region's blocks; the region was served elsewhere meanwhile).
/// 2. Every region that must be served and has no live owner is assigned to
///    the live server whose cache holds the most of its blocks (`facts`;
///    without facts, the server that served it last) when that server is at
///    most one region busier than the least-loaded, else to the
///    least-loaded live server.
/// 3. At most `max_moves` regions move from the most to the least loaded
///    server while they differ by more than one: of the busiest server's
///    regions, the one whose move costs least — the fewest bytes the target
///    does not already cache (`facts`: a region whose blocks the target
///    holds costs nothing; one cached only where it is costs its size) —
///    then one the target served last, then the most recently placed.
pub fn plan(
    regions: &[String],
    live: &[String],
    assignments: &BTreeMap<String, (Assignment, i64)>,
    max_moves: usize,
    retain: Placement,
    facts: &CacheFacts,
) -> Vec<Step> {
    let mut steps = Vec::new();
    if live.is_empty() {
        return steps;
    }
    let mut load: BTreeMap<&str, Vec<&str>> =
        live.iter().map(|s| (s.as_str(), Vec::new())).collect();
    let mut unserved = Vec::new();
    for region in regions {
        let owner = assignments.get(region).and_then(|(a, _)| {
            a.owner
                .as_deref()
                .filter(|_| a.state != RegionState::Offline)
        });
        match owner.filter(|o| load.contains_key(o)) {
            Some(o) => {
                if let Some(list) = load.get_mut(o) {
                    list.push(region);
                }
            }
            None => unserved.push(region.as_str()),
        }
    }
    fn least<'a>(load: &BTreeMap<&'a str, Vec<&'a str>>) -> Option<&'a str> {
        load.iter()
            .min_by_key(|(name, list)| (list.len(), **name))
            .map(|(name, _)| *name)
    }
    let record = |region: &str| assignments.get(region).map(|(a, _)| a);
    // 1. Home: served elsewhere while their server was away.
    let served: Vec<(&str, &str)> = load
        .iter()
        .flat_map(|(owner, list)| list.iter().map(move |r| (*owner, *r)))
        .collect();
    for (owner, region) in served {
        let Some(home) = record(region)
            .and_then(|a| retain.home_of(a))
            .filter(|h| *h != owner)
            .and_then(|h| load.get_key_value(h).map(|(k, _)| *k))
        else {
            continue;
        };
        steps.push(Step::Move {
            region: region.to_owned(),
            from: owner.to_owned(),
            to: home.to_owned(),
            why: MoveWhy::Home,
        });
        if let Some(list) = load.get_mut(owner) {
            list.retain(|r| *r != region);
        }
        if let Some(list) = load.get_mut(home) {
            list.push(region);
        }
    }
    // 2. Unserved: where their blocks are cached, unless that server is busy.
    let servers: Vec<&str> = load.keys().copied().collect();
    for region in unserved {
        let cached_at = if retain.cache_aware {
            facts
                .best_holder(region, &servers)
                .map(|(s, _)| s)
                .or_else(|| {
                    record(region)
                        .and_then(|a| a.last_owner.as_deref())
                        .and_then(|l| load.get_key_value(l).map(|(k, _)| *k))
                })
        } else {
            None
        };
        let least_load = least(&load).map_or(0, |l| load[l].len());
        let to = match cached_at {
            Some(l) if load[l].len() <= least_load + 1 => Some(l),
            _ => least(&load),
        };
        if let Some(to) = to {
            steps.push(Step::Assign {
                region: region.to_owned(),
                to: to.to_owned(),
            });
            if let Some(list) = load.get_mut(to) {
                list.push(region);
            }
        }
    }
    for _ in 0..max_moves {
        let (Some(to), Some(from)) = (
            least(&load),
            load.iter()
                .max_by_key(|(name, list)| (list.len(), std::cmp::Reverse(**name)))
                .map(|(name, _)| *name),
        ) else {
            break;
        };
        let (high, low) = (load[from].len(), load[to].len());
        if high <= low + 1 {
            break;
        }
        // The busiest server's region whose move costs least: the fewest
        // bytes the target does not cache already (its L2 may hold a
        // region it served before: moving that costs almost nothing),
        // then one the target served last, then the most recently placed.
        let Some(list) = load.get_mut(from) else {
            break;
        };
        let cached = list
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let served_last = record(r).and_then(|a| a.last_owner.as_deref()) == Some(to);
                let cost = facts.move_cost(r, to).unwrap_or(u64::MAX);
                (cost, !served_last, std::cmp::Reverse(i))
            })
            .min()
            .filter(|(cost, not_last, _)| *cost < u64::MAX || !*not_last)
            .map(|(_, _, std::cmp::Reverse(i))| i)
            .filter(|_| retain.cache_aware);
        let region = match cached {
            Some(i) => list.remove(i),
            None => match list.pop() {
                Some(r) => r,
                None => break,
            },
        };
        steps.push(Step::Move {
            region: region.to_owned(),
            from: from.to_owned(),
            to: to.to_owned(),
            why: MoveWhy::Balance,
        });
        if let Some(list) = load.get_mut(to) {
            list.push(region);
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan with no server's cache report.
    fn plan_no_facts(
        regions: &[String],
        live: &[String],
        assignments: &BTreeMap<String, (Assignment, i64)>,
        max_moves: usize,
        retain: Placement,
    ) -> Vec<Step> {
        plan(
            regions,
            live,
            assignments,
            max_moves,
            retain,
            &CacheFacts::default(),
        )
    }

    fn owned(region: &str, owner: &str) -> (String, (Assignment, i64)) {
        (
            region.to_owned(),
            (
                Assignment {
                    owner: Some(owner.to_owned()),
                    epoch: 1,
                    state: RegionState::Open,
                    ..Assignment::new(region)
                },
                7,
            ),
        )
    }

    fn names(n: usize, p: &str) -> Vec<String> {
        (0..n).map(|i| format!("{p}{i}")).collect()
    }

    fn count(steps: &[Step], server: &str) -> usize {
        steps
            .iter()
            .filter(|s| matches!(s, Step::Assign { to, .. } if to == server))
            .count()
    }

    #[test]
    fn unserved_regions_spread_evenly() {
        let regions = names(10, "r");
        let live = names(3, "s");
        let steps = plan_no_facts(&regions, &live, &BTreeMap::new(), 5, Placement::default());
        assert_eq!(steps.len(), 10);
        let per: Vec<usize> = live.iter().map(|s| count(&steps, s)).collect();
        assert_eq!(per, [4, 3, 3]);
    }

    #[test]
    fn a_dead_owners_regions_go_to_the_live_ones_and_nothing_else_moves() {
        let regions = names(6, "r");
        let assignments: BTreeMap<_, _> = [
            owned("r0", "a"),
            owned("r1", "a"),
            owned("r2", "b"),
            owned("r3", "b"),
            owned("r4", "dead"),
            owned("r5", "dead"),
        ]
        .into_iter()
        .collect();
        let live = vec!["a".to_string(), "b".to_string()];
        let steps = plan_no_facts(&regions, &live, &assignments, 0, Placement::default());
        assert_eq!(steps.len(), 2);
        assert!(
            steps.iter().all(
                |s| matches!(s, Step::Assign { region, .. } if region == "r4" || region == "r5")
            )
        );
        assert_eq!((count(&steps, "a"), count(&steps, "b")), (1, 1));
    }

    #[test]
    fn balance_moves_at_most_the_bound_and_converges_without_ping_pong() {
        let regions = names(9, "r");
        let mut assignments: BTreeMap<_, _> = regions.iter().map(|r| owned(r, "a")).collect();
        let live = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let mut rounds = 0;
        loop {
            let steps = plan_no_facts(&regions, &live, &assignments, 2, Placement::default());
            assert!(steps.len() <= 2);
            if steps.is_empty() {
                break;
            }
            for s in steps {
                if let Step::Move { region, to, .. } = s {
                    assignments.insert(region.clone(), owned(&region, &to).1);
                }
            }
            rounds += 1;
            assert!(rounds < 10, "no convergence");
        }
        let per = |s: &str| {
            assignments
                .values()
                .filter(|(a, _)| a.owner.as_deref() == Some(s))
                .count()
        };
        assert_eq!((per("a"), per("b"), per("c")), (3, 3, 3));
        // Balanced: another round plans nothing.
        assert!(plan_no_facts(&regions, &live, &assignments, 2, Placement::default()).is_empty());
    }

    /// `region` served by `owner` after `home` left at `left_ms`.
    fn away(region: &str, owner: &str, home: &str, left_ms: u64) -> (String, (Assignment, i64)) {
        let (r, (mut a, rev)) = owned(region, owner);
        a.last_owner = Some(home.to_owned());
        a.left_at_ms = Some(left_ms);
        (r, (a, rev))
    }

    #[test]
    fn a_server_back_within_the_bound_gets_its_regions_back_and_not_after() {
        let regions = names(4, "r");
        let assignments: BTreeMap<_, _> = [
            away("r0", "a", "c", 1_000),
            away("r1", "b", "c", 1_000),
            owned("r2", "a"),
            owned("r3", "b"),
        ]
        .into_iter()
        .collect();
        let live = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let within = Placement {
            now_ms: 20_000,
            bound_ms: 30_000,
            ..Placement::default()
        };
        let steps = plan_no_facts(&regions, &live, &assignments, 2, within);
        let home: Vec<&Step> = steps
            .iter()
            .filter(|s| {
                matches!(
                    s,
                    Step::Move {
                        why: MoveWhy::Home,
                        ..
                    }
                )
            })
            .collect();
        assert_eq!(home.len(), 2, "{steps:?}");
        assert!(
            home.iter()
                .all(|s| matches!(s, Step::Move { to, region, .. } if to == "c" && (region == "r0" || region == "r1")))
        );
        // Back home, the load is even: the balancer moves nothing more.
        assert_eq!(steps.len(), 2, "{steps:?}");
        // After the bound: nothing goes home; the balancer evens the load.
        let late = Placement {
            now_ms: 40_000,
            bound_ms: 30_000,
            ..Placement::default()
        };
        let steps = plan_no_facts(&regions, &live, &assignments, 2, late);
        assert!(
            !steps.iter().any(|s| matches!(
                s,
                Step::Move {
                    why: MoveWhy::Home,
                    ..
                }
            )),
            "{steps:?}"
        );
        // A bound of zero: never.
        let off = Placement {
            now_ms: 2_000,
            bound_ms: 0,
            ..Placement::default()
        };
        assert!(
            !plan_no_facts(&regions, &live, &assignments, 0, off)
                .iter()
                .any(|s| matches!(
                    s,
                    Step::Move {
                        why: MoveWhy::Home,
                        ..
                    }
                ))
        );
        // Not back (not live): nothing moves home.
        let live2 = vec!["a".to_string(), "b".to_string()];
        assert!(plan_no_facts(&regions, &live2, &assignments, 0, within).is_empty());
    }

    #[test]
    fn an_unserved_region_goes_where_its_blocks_are_cached_unless_that_server_is_busy() {
        let regions = names(5, "r");
        let mut offline = Assignment::new("r0");
        offline.last_owner = Some("b".into());
        let mut assignments: BTreeMap<_, _> =
            [("r0".to_string(), (offline.clone(), 3)), owned("r1", "b")]
                .into_iter()
                .collect();
        let live = vec!["a".to_string(), "b".to_string()];
        // b holds one region, a none: b is within one of the least loaded.
        let steps = plan_no_facts(&regions[..2], &live, &assignments, 0, Placement::default());
        assert_eq!(
            steps,
            [Step::Assign {
                region: "r0".into(),
                to: "b".into()
            }]
        );
        // b busier by two: the least loaded server takes it.
        assignments.extend([owned("r2", "b")]);
        let steps = plan_no_facts(&regions[..3], &live, &assignments, 0, Placement::default());
        assert_eq!(
            steps,
            [Step::Assign {
                region: "r0".into(),
                to: "a".into()
            }]
        );
        // The plain balancer ignores where blocks are cached.
        let plain = Placement {
            cache_aware: false,
            ..Placement::default()
        };
        let steps = plan_no_facts(&regions[..2], &live, &assignments, 0, plain);
        assert_eq!(
            steps,
            [Step::Assign {
                region: "r0".into(),
                to: "a".into()
            }]
        );
    }

    #[test]
    fn the_balancer_prefers_a_region_whose_blocks_the_target_holds() {
        let regions = names(4, "r");
        let mut assignments: BTreeMap<_, _> = regions.iter().map(|r| owned(r, "a")).collect();
        // r1 came to a from b: b's L2 still holds it.
        if let Some((a, _)) = assignments.get_mut("r1") {
            a.last_owner = Some("b".into());
        }
        let live = vec!["a".to_string(), "b".to_string()];
        let steps = plan_no_facts(&regions, &live, &assignments, 1, Placement::default());
        assert!(
            matches!(&steps[..], [Step::Move { region, to, why: MoveWhy::Balance, .. }] if region == "r1" && to == "b"),
            "{steps:?}"
        );
        // The plain balancer moves the newest region instead.
        let plain = Placement {
            cache_aware: false,
            ..Placement::default()
        };
        let steps = plan_no_facts(&regions, &live, &assignments, 1, plain);
        assert!(
            matches!(&steps[..], [Step::Move { region, why: MoveWhy::Balance, .. }] if region == "r3"),
            "{steps:?}"
        );
    }

    /// (region, size, cached bytes).
    type Held<'a> = &'a [(&'a str, u64, u64)];

    fn facts(held: &[(&str, Held<'_>)]) -> CacheFacts {
        use crate::cache_facts::{CacheReport, RegionCache};
        CacheFacts::from_reports(held.iter().map(|(server, regions)| {
            CacheReport {
                v: 1,
                server: (*server).to_owned(),
                regions: regions
                    .iter()
                    .map(|(r, size, cached)| {
                        (
                            (*r).to_owned(),
                            RegionCache {
                                size: *size,
                                l2: *cached,
                                cached: *cached,
                                ..RegionCache::default()
                            },
                        )
                    })
                    .collect(),
                ..CacheReport::default()
            }
        }))
    }

    #[test]
    fn the_balancer_moves_the_region_whose_move_costs_least() {
        let regions = names(4, "r");
        let assignments: BTreeMap<_, _> = regions.iter().map(|r| owned(r, "a")).collect();
        let live = vec!["a".to_string(), "b".to_string()];
        // a caches all four (r0 is small); b still holds most of r2's blocks
        // and some of r1's.
        let held = facts(&[
            (
                "a",
                &[
                    ("r0", 100, 100),
                    ("r1", 1000, 1000),
                    ("r2", 1000, 1000),
                    ("r3", 1000, 1000),
                ],
            ),
            ("b", &[("r1", 1000, 300), ("r2", 1000, 900)]),
        ]);
        let steps = plan(
            &regions,
            &live,
            &assignments,
            2,
            Placement::default(),
            &held,
        );
        let moved: Vec<&str> = steps
            .iter()
            .map(|s| match s {
                Step::Move { region, to, .. } => {
                    assert_eq!(to, "b");
                    region.as_str()
                }
                Step::Assign { .. } => panic!("{steps:?}"),
            })
            .collect();
        // r2 costs 100 bytes, r0 100 (ties: the most recently placed, r2
        // first), r1 700, r3 1000.
        assert_eq!(moved, ["r2", "r0"], "{steps:?}");
        // The plain balancer ignores the facts: the newest regions move.
        let plain = Placement {
            cache_aware: false,
            ..Placement::default()
        };
        let steps = plan(&regions, &live, &assignments, 2, plain, &held);
        assert!(
            matches!(&steps[..], [Step::Move { region: a, .. }, Step::Move { region: b, .. }] if a == "r3" && b == "r2"),
            "{steps:?}"
        );
    }

    #[test]
    fn an_unserved_region_goes_to_the_server_caching_most_of_it() {
        let regions = names(3, "r");
        // r0 is unserved; its last owner (c) is gone, but b reported most
        // of its blocks (it served it earlier) and a some.
        let mut offline = Assignment::new("r0");
        offline.epoch = 4;
        offline.last_owner = Some("c".into());
        let assignments: BTreeMap<_, _> = [
            ("r0".to_string(), (offline, 3)),
            owned("r1", "a"),
            owned("r2", "b"),
        ]
        .into_iter()
        .collect();
        let live = vec!["a".to_string(), "b".to_string()];
        let held = facts(&[("a", &[("r0", 1000, 200)]), ("b", &[("r0", 1000, 800)])]);
        let steps = plan(
            &regions,
            &live,
            &assignments,
            0,
            Placement::default(),
            &held,
        );
        assert_eq!(
            steps,
            [Step::Assign {
                region: "r0".into(),
                to: "b".into()
            }]
        );
        // A dead server's report does not count (only live candidates).
        let held = facts(&[("c", &[("r0", 1000, 1000)]), ("a", &[("r0", 1000, 10)])]);
        let steps = plan(
            &regions,
            &live,
            &assignments,
            0,
            Placement::default(),
            &held,
        );
        assert_eq!(
            steps,
            [Step::Assign {
                region: "r0".into(),
                to: "a".into()
            }]
        );
    }

    #[test]
    fn no_live_server_plans_nothing() {
        assert!(
            plan_no_facts(
                &names(3, "r"),
                &[],
                &BTreeMap::new(),
                3,
                Placement::default()
            )
            .is_empty()
        );
    }
}
