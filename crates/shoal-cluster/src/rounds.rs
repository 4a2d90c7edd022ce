//! The assignment state machine in motion: the master's round (read the
//! live members and the records, plan, write the steps) and every server's
//! round (open what it was given, close what it must give up, and say so in
//! the record). Both only read etcd and write by compare-and-swap, so either
//! can stop at any point and a new master or a restarted server resumes from
//! what etcd holds: no state lives only in memory.

use crate::assignment::{self, Assignment, MoveReads, RegionState, Step};
use crate::cache_facts::CacheFacts;
use crate::etcd::{Etcd, EtcdError};
use crate::membership;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;

/// Why a host could not open or close a region (the round logs it, counts
/// it as failed, and the record says so).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegionHostError {
    /// The region is in motion here (being split or closed), or its table
    /// changed while it opened: a later round tries again.
    #[error("region {region} is busy here: {reason}")]
    Busy {
        /// The region.
        region: String,
        /// What it is busy with.
        reason: String,
    },
    /// No enabled table of the catalog holds the region.
    #[error("region {region} is unknown here: {reason}")]
    Unknown {
        /// The region.
        region: String,
        /// Why.
        reason: String,
    },
    /// The region is not open here (a close of a region this server does
    /// not serve).
    #[error("region {region} is not open here")]
    NotOpen {
        /// The region.
        region: String,
    },
    /// This server may no longer hold the region (fenced by a newer owner,
    /// or its lease lost meanwhile): given up here for good.
    #[error("region {region}: {reason}; given up here")]
    GivenUp {
        /// The region.
        region: String,
        /// What happened.
        reason: String,
    },
    /// Reading or writing the region's data failed (its WAL runs, manifest,
    /// files, the catalog, the object store, a former owner's reads).
    #[error("region {region}: {reason}")]
    Failed {
        /// The region.
        region: String,
        /// The failure.
        reason: String,
    },
}

/// What a server does with regions: the host implements it.
pub trait RegionHost {
    /// Opens `region` as its owner at `epoch`, first replaying its entries
    /// from the dead servers' WAL runs in `replay`. Err: why it could not.
    /// `last_owner` served it before (its L2 may hold the region's blocks).
    /// `reads_at`: a former owner still answering reads of it; the open
    /// ends them (or waits out their bound) before the region takes a
    /// write.
    fn open(
        &self,
        region: &str,
        epoch: u64,
        replay: &[String],
        last_owner: Option<&str>,
        reads_at: Option<&MoveReads>,
    ) -> impl Future<Output = Result<(), RegionHostError>> + Send;

    /// Flushes and closes `region` (it is moving away). `handoff`: the
    /// record names the next owner, so the host may go on answering reads
    /// from the flushed copy until that owner ends them (see
    /// [`RegionHost::end_reads`]): `Ok(Some(bound))` then, the longest it
    /// answers them from now. Err: why it could not.
    fn close(
        &self,
        region: &str,
        handoff: bool,
    ) -> impl Future<Output = Result<Option<std::time::Duration>, RegionHostError>> + Send;

    /// Stops answering the reads of `region` that a handoff close kept on
    /// (nothing if there are none).
    fn end_reads(&self, region: &str);

    /// The regions open here now.
    fn open_regions(&self) -> Vec<String>;

    /// A warm handoff: `region` (served by `owner`, at `epoch`) will move
    /// here; copy its blocks from the owner while it still serves. Starts
    /// the work on the first call and never blocks; true once it is done
    /// (or gave up at its bound): the owner may close the region then.
    fn warm_up(&self, region: &str, epoch: u64, owner: &str) -> bool;
}

/// How the master places regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policy {
    /// Most regions moved for balance per round (0: the balancer is off).
    pub max_moves: usize,
    /// A server that died or drained gets its regions back if it returns
    /// within this long (zero: never; see [`assignment::plan`]).
    pub retain: std::time::Duration,
    /// Moves the master makes (balance, drain, home) are warm handoffs: the
    /// owner keeps serving while the target copies the region's blocks from
    /// its L2, and closes it only once the target says it is warm.
    pub warm_moves: bool,
    /// Placement follows caches: unserved regions go to the server that
    /// served them last, balance moves prefer a region the target served
    /// last, and a draining server's regions go back to a server that
    /// served them before (off: the plain balancer).
    pub cache_aware: bool,
    /// Most regions in motion at once (warm handoff, closing, opening) for
    /// moves the master decides: drains first, then moves home, then
    /// balance (0: no limit). Each move costs both servers CPU at once
    /// (blocks, cached rows, opening); paced, a drain's moves follow one
    /// another instead of landing together on servers that serve reads, as
    /// HBase's region mover moves one region at a time. Unserved regions
    /// are placed regardless.
    pub max_moving: usize,
}

/// What a master round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MasterRound {
    /// Regions given to a server (including those of dead servers).
    pub assigned: usize,
    /// Regions told to move (their owners will close them).
    pub moves: usize,
    /// Regions told to close because their table no longer needs them
    /// served (disabled or dropped).
    pub retired: usize,
    /// Writes lost to a concurrent change (retried next round).
    pub conflicts: usize,
}

/// The assignment records as a round reads them: region → (record, etcd
/// revision).
type Records = BTreeMap<String, (Assignment, i64)>;

/// One round of the master. `regions`: every region that must be served
/// (enabled tables); `known`: every region the catalog still has (a
/// disabled table's too), whose unflushed edits must stay findable.
/// `policy`: balance, retained assignment, warm moves; `facts`: what each
/// server's cache holds (placement follows it when `policy.cache_aware`).
///
/// In order: retire the records of regions no longer served, send a closed
/// region that was moving to its target, count warm handoffs on their
/// targets (dropping those whose target left), plan placements and
/// balance, move draining servers' regions, pace the moves, write every
/// step.
pub async fn master_round(
    etcd: &Etcd,
    prefix: &str,
    regions: &[String],
    known: &std::collections::BTreeSet<String>,
    policy: Policy,
    facts: &CacheFacts,
) -> Result<MasterRound, EtcdError> {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let members = membership::members(etcd, prefix).await?;
    let live: Vec<String> = members.iter().map(|m| m.name.clone()).collect();
    let runs: HashMap<&str, &str> = members
        .iter()
        .map(|m| (m.name.as_str(), m.wal.as_str()))
        .collect();
    let records = assignment::read_all(etcd, prefix).await?;
    let mut round = MasterRound::default();
    let required: HashSet<&str> = regions.iter().map(String::as_str).collect();
    retire_unneeded(etcd, prefix, &records, &required, &live, known, &mut round).await?;
    let (mut steps, mut planned) = finish_moves(&records, &required, &live);
    // A draining server (stopping gracefully) keeps what it serves until it
    // has closed it: its regions move, none is given to it. A region of a
    // live server is never given to another before its owner closed it
    // (its writes are acknowledged until then).
    let draining = membership::draining(etcd, prefix).await?;
    let moving = Moving {
        live: &live,
        draining: &draining,
    };
    count_handoffs(etcd, prefix, &records, moving, &mut planned, &mut round).await?;
    let targets: Vec<String> = live
        .iter()
        .filter(|n| !draining.contains(n))
        .cloned()
        .collect();
    let (drained, placeable) = split_drained(regions, &planned, &draining);
    // As HBase's balancer, none while regions are in transition: a move
    // planned from counts that a transition is about to change is a move
    // the next round would undo. Moves home and placements still happen.
    let in_transition = regions.iter().any(|r| {
        records
            .get(r)
            .is_none_or(|(a, _)| a.state != RegionState::Open || a.to.is_some())
    });
    steps.extend(assignment::plan(
        &placeable,
        &targets,
        &planned,
        if in_transition { 0 } else { policy.max_moves },
        assignment::Placement {
            now_ms,
            bound_ms: policy.retain.as_millis() as u64,
            cache_aware: policy.cache_aware,
        },
        facts,
    ));
    steps.extend(drain_moves(drained, &targets, &planned, facts, policy));
    if policy.max_moving > 0 {
        pace_moves(&mut steps, &records, &required, policy.max_moving);
    }
    let writer = StepWriter {
        records: &records,
        runs: &runs,
        warm_moves: policy.warm_moves,
        now_ms,
    };
    for step in steps {
        writer.write(etcd, prefix, step, &mut round).await?;
    }
    Ok(round)
}

/// Regions no longer to be served (not in `required`): close them where
/// they are served, keep the dead owners' WAL runs of the others for
/// replay, and forget those the catalog dropped (not in `known`) or with
/// nothing to replay.
async fn retire_unneeded(
    etcd: &Etcd,
    prefix: &str,
    records: &Records,
    required: &HashSet<&str>,
    live: &[String],
    known: &std::collections::BTreeSet<String>,
    round: &mut MasterRound,
) -> Result<(), EtcdError> {
    for (region, (a, revision)) in records {
        if required.contains(region.as_str()) {
            continue;
        }
        let owner_live = a.owner.as_ref().is_some_and(|o| live.contains(o));
        let next = match a.state {
            RegionState::Open if owner_live => Some(Assignment {
                state: RegionState::Closing,
                to: None,
                ..a.clone()
            }),
            RegionState::Open | RegionState::Opening | RegionState::Closing if !owner_live => {
                let mut replay = a.replay.clone();
                if let Some(wal) = &a.owner_wal
                    && !replay.contains(wal)
                {
                    replay.push(wal.clone());
                }
                Some(Assignment {
                    state: RegionState::Offline,
                    owner: None,
                    owner_wal: None,
                    to: None,
                    replay,
                    last_owner: a.owner_or_last(),
                    ..a.clone()
                })
            }
            RegionState::Offline if !known.contains(region) || a.replay.is_empty() => {
                if assignment::delete(etcd, prefix, region, *revision).await? {
                    round.retired += 1;
                } else {
                    round.conflicts += 1;
                }
                None
            }
            _ => None,
        };
        if let Some(next) = next {
            if assignment::write(etcd, prefix, &next, *revision).await? {
                round.retired += 1;
            } else {
                round.conflicts += 1;
            }
        }
    }
    Ok(())
}

/// The required regions' records as the round plans from them, and the
/// first steps: a closed region that was moving goes to the server it was
/// moving to (if that server is live), and counts there.
fn finish_moves(
    records: &Records,
    required: &HashSet<&str>,
    live: &[String],
) -> (Vec<Step>, Records) {
    let mut steps = Vec::new();
    let mut planned: Records = records
        .iter()
        .filter(|(r, _)| required.contains(r.as_str()))
        .map(|(r, v)| (r.clone(), v.clone()))
        .collect();
    for (region, (a, _)) in records {
        if a.state == RegionState::Offline
            && required.contains(region.as_str())
            && let Some(to) = a.to.as_ref().filter(|t| live.contains(t))
        {
            steps.push(Step::Assign {
                region: region.clone(),
                to: to.clone(),
            });
            let mut placed = a.clone();
            placed.owner = Some(to.clone());
            placed.state = RegionState::Opening;
            planned.insert(region.clone(), (placed, 0));
        }
    }
    (steps, planned)
}

/// The live members, and those of them draining.
#[derive(Clone, Copy)]
struct Moving<'a> {
    live: &'a [String],
    draining: &'a [String],
}

impl Moving<'_> {
    /// True if `to` may take a region now: live and not draining.
    fn can_take(&self, to: &String) -> bool {
        self.live.contains(to) && !self.draining.contains(to)
    }
}

/// Warm handoffs under way, and regions their owner is closing for a
/// target: the region counts on its target in `planned`. A handoff whose
/// target is gone (dead or draining) is dropped and the region stays where
/// it is; one whose owner died is placed as any region of a dead server
/// (the assignment drops the handoff).
async fn count_handoffs(
    etcd: &Etcd,
    prefix: &str,
    records: &Records,
    members: Moving<'_>,
    planned: &mut Records,
    round: &mut MasterRound,
) -> Result<(), EtcdError> {
    for (region, (a, revision)) in records {
        // Its owner is closing it for the target: it counts there too. (Not if
        // the owner died while closing it: nobody will finish the close, so
        // the region is placed as any region of a dead server, its WAL run
        // replayed. Counting it on the target left it closing, unserved.)
        if a.state == RegionState::Closing
            && a.owner.as_ref().is_some_and(|o| members.live.contains(o))
            && let Some(to) = a.to.as_ref()
            && members.can_take(to)
        {
            if let Some((placed, _)) = planned.get_mut(region) {
                placed.owner = Some(to.clone());
            }
            continue;
        }
        let Some(to) = a.to.as_ref().filter(|_| a.state == RegionState::Open) else {
            continue;
        };
        if !a.owner.as_ref().is_some_and(|o| members.live.contains(o)) {
            continue;
        }
        if members.can_take(to) {
            if let Some((placed, _)) = planned.get_mut(region) {
                placed.owner = Some(to.clone());
            }
        } else {
            let next = Assignment {
                to: None,
                ..a.clone()
            };
            if assignment::write(etcd, prefix, &next, *revision).await? {
                tracing::info!(region = %region, target = %to, "warm handoff dropped: its target left");
            } else {
                round.conflicts += 1;
            }
        }
    }
    Ok(())
}

/// `regions` split in two: those a draining server serves (with their
/// planned record), which move away, and the rest, which the plan places.
fn split_drained(
    regions: &[String],
    planned: &Records,
    draining: &[String],
) -> (Vec<(String, Assignment)>, Vec<String>) {
    let mut drained = Vec::new();
    let mut placeable = Vec::new();
    for region in regions {
        match planned.get(region) {
            Some((a, _))
                if a.state != RegionState::Offline
                    && a.owner.as_ref().is_some_and(|o| draining.contains(o)) =>
            {
                drained.push((region.clone(), a.clone()));
            }
            _ => placeable.push(region.clone()),
        }
    }
    (drained, placeable)
}

/// Moves of the draining servers' serving regions to `targets`, each to
/// the least loaded (counting `planned`), or with `policy.cache_aware` to
/// the server whose cache holds the most of it (else the one that served
/// it before) if that one is not busier by two.
fn drain_moves(
    drained: Vec<(String, Assignment)>,
    targets: &[String],
    planned: &Records,
    facts: &CacheFacts,
    policy: Policy,
) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut load: BTreeMap<&str, usize> = targets.iter().map(|t| (t.as_str(), 0)).collect();
    for (a, _) in planned.values() {
        if let Some(n) = a.owner.as_deref().and_then(|o| load.get_mut(o)) {
            *n += 1;
        }
    }
    for (region, a) in drained {
        if a.state != RegionState::Open {
            continue;
        }
        let Some((least, least_n)) = load
            .iter()
            .min_by_key(|(name, n)| (**n, **name))
            .map(|(name, n)| ((*name).to_owned(), *n))
        else {
            break;
        };
        // The server whose cache holds the most of it (else the one that
        // served it before this one: its L2 may still hold the blocks), if
        // it is not busier by two.
        let servers: Vec<&str> = load.keys().copied().collect();
        let cached_at = facts
            .best_holder(&region, &servers)
            .map(|(s, _)| s)
            .or(a.last_owner.as_deref())
            .filter(|_| policy.cache_aware)
            .filter(|l| load.get(l).is_some_and(|n| *n <= least_n + 1));
        let to = cached_at.map_or(least, str::to_owned);
        if let Some(n) = load.get_mut(to.as_str()) {
            *n += 1;
        }
        steps.push(Step::Move {
            region,
            from: a.owner.clone().unwrap_or_default(),
            to,
            why: assignment::MoveWhy::Drain,
        });
    }
    steps
}

/// Writes a master round's steps as records, each a compare-and-swap on
/// the revision the round read.
struct StepWriter<'a> {
    records: &'a Records,
    /// Each live member's WAL run.
    runs: &'a HashMap<&'a str, &'a str>,
    warm_moves: bool,
    now_ms: u64,
}

impl StepWriter<'_> {
    /// Writes `step` (nothing for a move of a region not serving, or
    /// already in a warm handoff), counting it in `round`.
    async fn write(
        &self,
        etcd: &Etcd,
        prefix: &str,
        step: Step,
        round: &mut MasterRound,
    ) -> Result<(), EtcdError> {
        let (region, next) = match &step {
            Step::Assign { region, to } => (region, self.assigned(region, to)),
            Step::Move {
                region, to, why, ..
            } => match self.moved(region, to, *why) {
                Some(next) => (region, next),
                None => return Ok(()),
            },
        };
        let revision = self.records.get(region).map_or(0, |(_, rev)| *rev);
        if assignment::write(etcd, prefix, &next, revision).await? {
            match step {
                Step::Assign { .. } => round.assigned += 1,
                Step::Move { .. } => round.moves += 1,
            }
            tracing::info!(region = %next.region, owner = ?next.owner, epoch = next.epoch, state = ?next.state, "assignment");
        } else {
            round.conflicts += 1;
        }
        Ok(())
    }

    /// The record that gives `region` to `to`: a new epoch, opening there,
    /// logging to `to`'s WAL run, with a dead owner's run to replay.
    fn assigned(&self, region: &str, to: &String) -> Assignment {
        let (prev, _) = self
            .records
            .get(region)
            .cloned()
            .unwrap_or_else(|| (Assignment::new(region), 0));
        let mut replay = prev.replay.clone();
        // A dead owner may have unflushed edits in its WAL run.
        if let Some(wal) = &prev.owner_wal
            && prev.state != RegionState::Offline
            && !replay.contains(wal)
        {
            replay.push(wal.clone());
        }
        Assignment {
            owner: Some(to.clone()),
            epoch: prev.epoch + 1,
            state: RegionState::Opening,
            replay,
            // The run the new owner will log this region's edits
            // to: replayed if it dies, even before it says open.
            owner_wal: self
                .runs
                .get(to.as_str())
                .filter(|w| !w.is_empty())
                .map(|w| (*w).to_owned()),
            to: None,
            // A dead owner's L2 may come back with it; if it
            // does within the retain bound, so does the region.
            left_at_ms: match &prev.owner {
                Some(o) if o != to && prev.state != RegionState::Offline => Some(self.now_ms),
                _ => prev.left_at_ms,
            },
            last_owner: prev
                .owner
                .clone()
                .filter(|o| o != to)
                .or_else(|| prev.last_owner.clone()),
            ..prev
        }
    }

    /// The record that moves serving `region` to `to`, or `None` if it is
    /// not serving or a warm handoff is under way.
    fn moved(&self, region: &str, to: &str, why: assignment::MoveWhy) -> Option<Assignment> {
        let (prev, _) = self.records.get(region).cloned()?;
        if prev.state != RegionState::Open {
            return None; // only a serving region is moved
        }
        if prev.to.is_some() {
            return None; // a warm handoff is under way
        }
        Some(Assignment {
            // Warm: the owner serves on until the target is warm
            // (the target's round then asks it to close).
            state: if self.warm_moves {
                RegionState::Open
            } else {
                RegionState::Closing
            },
            to: Some(to.to_owned()),
            // Only a drained owner gets the region back when it
            // returns; a balance or homecoming move is final.
            left_at_ms: (why == assignment::MoveWhy::Drain).then_some(self.now_ms),
            ..prev
        })
    }
}

/// What a server round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ServerRound {
    /// Regions opened.
    pub opened: usize,
    /// Regions closed (moved away).
    pub closed: usize,
    /// Warm handoffs to this server that finished copying (their owner is
    /// asked to close them).
    pub warmed: usize,
    /// Opens or closes that failed (the record says offline; the master
    /// places the region again).
    pub failed: usize,
    /// The records as this round read them, with the opens, closes and
    /// handovers it wrote applied (revisions as read).
    pub records: std::collections::BTreeMap<String, (Assignment, i64)>,
}

/// The WAL runs to replay for `a` when opening it in `my_wal`: the dead
/// owners' runs, and the run it was last logged to if that is not ours now.
fn replay_for(a: &Assignment, my_wal: &str) -> Vec<String> {
    let mut replay = a.replay.clone();
    if let Some(wal) = &a.owner_wal
        && wal != my_wal
        && !replay.contains(wal)
    {
        replay.push(wal.clone());
    }
    replay
}

/// The record that gives `closed` (just closed and flushed by its owner,
/// `Offline`) straight to the server its move named, as the master's
/// assignment would: a new epoch, owned by the target, logging to the
/// target's WAL run. `None` when it names no target or the target is no
/// longer a live, non-draining member (the master then places it).
async fn handover(
    etcd: &Etcd,
    prefix: &str,
    closed: &Assignment,
    targets: &mut Option<std::collections::HashMap<String, String>>,
) -> Result<Option<Assignment>, EtcdError> {
    let Some(to) = closed.to.as_deref() else {
        return Ok(None);
    };
    if targets.is_none() {
        let draining = membership::draining(etcd, prefix).await?;
        *targets = Some(
            membership::members(etcd, prefix)
                .await?
                .into_iter()
                .filter(|m| !draining.contains(&m.name))
                .map(|m| (m.name, m.wal))
                .collect(),
        );
    }
    let Some(wal) = targets.as_ref().and_then(|t| t.get(to)) else {
        return Ok(None);
    };
    Ok(Some(Assignment {
        owner: Some(to.to_owned()),
        epoch: closed.epoch + 1,
        state: RegionState::Opening,
        owner_wal: (!wal.is_empty()).then(|| wal.clone()),
        to: None,
        ..closed.clone()
    }))
}

/// One round of server `me` (whose WAL run is `my_wal`): open the regions
/// assigned to it, close those it must give up, and record each outcome.
/// A region its record says this server serves but that is not open here
/// (this server restarted, or lost its lease and gave its regions up) is
/// opened again, replaying the run it was logged to.
///
/// In order: close what is open here but assigned elsewhere, claim records
/// of an earlier run of this server's, open what was given here, close
/// what must go, write the outcomes (ending the reads of a closed copy
/// whose record was not written), then warm handoffs to this server.
pub async fn server_round<H: RegionHost>(
    etcd: &Etcd,
    prefix: &str,
    me: &str,
    my_wal: &str,
    host: &H,
) -> Result<ServerRound, EtcdError> {
    let mut round = ServerRound::default();
    let records = assignment::read_all(etcd, prefix).await?;
    // Live, non-draining members and their WAL runs, read once if a
    // handover needs them.
    let mut targets: Option<HashMap<String, String>> = None;
    let open_here: HashSet<String> = host.open_regions().into_iter().collect();
    close_strays(host, me, &records, &open_here, &mut round).await;
    let claimed = claim_for_run(etcd, prefix, me, my_wal, &records, &open_here).await?;
    let opened = open_given(host, me, my_wal, &records, &claimed, &open_here).await;
    let closes = close_given(host, me, &records, &open_here).await;
    // Regions whose reads go on here: each needs a written record that says
    // so (the next owner ends them before its first write); one whose
    // record was not written stops reading at once.
    let mut reading: HashSet<String> = closes
        .iter()
        .filter(|(_, r)| matches!(r, Ok(Some(_))))
        .map(|(region, _)| region.clone())
        .collect();
    let mut written = Vec::new();
    let writes = write_outcomes(
        etcd,
        prefix,
        me,
        my_wal,
        &records,
        &claimed,
        &open_here,
        &opened,
        &closes,
        &mut targets,
        &mut round,
        &mut written,
    )
    .await;
    for next in &written {
        if next.reads_at.as_ref().is_some_and(|r| r.server == me) {
            reading.remove(&next.region);
        }
    }
    for region in &reading {
        tracing::info!(region = %region, "its record was not written: reads of the closed region end here at once");
        host.end_reads(region);
    }
    writes?;
    warm_handoffs(etcd, prefix, me, &records, host, &mut round).await?;
    round.records = records;
    // What this round wrote, so the server's directory names a region's new
    // owner at once (a client that met the region moving is pointed there).
    for next in written {
        if let Some(entry) = round.records.get_mut(&next.region) {
            entry.0 = next;
        }
    }
    Ok(round)
}

/// A region open here that its record no longer gives to this server
/// (reassigned while this server was cut off, or its open lost a race):
/// close it. Its manifest is fenced by the new owner's epoch anyway.
async fn close_strays<H: RegionHost>(
    host: &H,
    me: &str,
    records: &Records,
    open_here: &HashSet<String>,
    round: &mut ServerRound,
) {
    for region in open_here {
        let mine = records.get(region).is_some_and(|(a, _)| {
            a.owner.as_deref() == Some(me) && a.state != RegionState::Offline
        });
        if !mine {
            tracing::warn!(region = %region, "open here but assigned elsewhere; closing it");
            if host.close(region, false).await.is_ok() {
                round.closed += 1;
            }
        }
    }
}

/// Records that give this server a region under an earlier WAL run of
/// its own (it lost its lease, or restarted, since they were written):
/// claimed for this run before the region opens, and opened next round.
/// Opening first would let a master that read this server as dead (before
/// it rejoined) hand the region to another server, whose replay would
/// miss the writes acknowledged here meanwhile (they are in this run, not
/// the one the record names); after the claim, that master's write loses
/// the compare-and-swap instead. Returns the regions claimed (tried).
async fn claim_for_run(
    etcd: &Etcd,
    prefix: &str,
    me: &str,
    my_wal: &str,
    records: &Records,
    open_here: &HashSet<String>,
) -> Result<HashSet<String>, EtcdError> {
    let mut claimed = HashSet::new();
    for (region, (a, revision)) in records {
        let to_open_here = a.owner.as_deref() == Some(me)
            && (a.state == RegionState::Opening
                || (a.state == RegionState::Open && !open_here.contains(region)));
        if !to_open_here || a.owner_wal.as_deref().is_none_or(|w| w == my_wal) {
            continue;
        }
        let next = Assignment {
            state: RegionState::Opening,
            owner_wal: Some(my_wal.to_owned()),
            replay: replay_for(a, my_wal),
            ..a.clone()
        };
        if assignment::write(etcd, prefix, &next, *revision).await? {
            tracing::info!(region = %region, "region claimed for this server's new WAL run; opening it next round");
        }
        claimed.insert(region.clone());
    }
    Ok(claimed)
}

/// Regions to open this round (given here, not claimed, not open here
/// yet): opened concurrently (a dead server's regions come back together,
/// not one after another). Returns each one's outcome.
async fn open_given<H: RegionHost>(
    host: &H,
    me: &str,
    my_wal: &str,
    records: &Records,
    claimed: &HashSet<String>,
    open_here: &HashSet<String>,
) -> HashMap<String, Result<(), RegionHostError>> {
    let to_open: Vec<(&String, &Assignment)> = records
        .iter()
        .filter(|(region, (a, _))| {
            a.owner.as_deref() == Some(me)
                && !claimed.contains(*region)
                && (a.state == RegionState::Opening
                    || (a.state == RegionState::Open && !open_here.contains(*region)))
        })
        .map(|(region, (a, _))| (region, a))
        .collect();
    futures::future::join_all(to_open.iter().map(|(region, a)| async move {
        let replay = replay_for(a, my_wal);
        let last = a.last_owner.as_deref().filter(|l| *l != me);
        (
            (*region).clone(),
            host.open(region, a.epoch, &replay, last, a.reads_at.as_ref())
                .await,
        )
    }))
    .await
    .into_iter()
    .collect()
}

/// What a close returned: how long the closed copy goes on answering reads
/// (`Some`: a move's close kept them on), or why it failed.
type Closed = Result<Option<std::time::Duration>, RegionHostError>;

/// Regions to close this round, closed concurrently: a moved region
/// answers nothing from its close here to its open on the target, and in
/// a loaded cluster every client soon waits on a region in that gap, so
/// gaps that overlap cost one stall instead of one each. For the same
/// reason a move's close waits while another region of this server is
/// still warming on its target (a drain or a homecoming hands several
/// over at once): they then close together once the last is warm. The
/// wait is bounded by the targets' warm-up bound (`warm_up` gives up at
/// it and the target asks for the close); a target that leaves has its
/// handoff dropped by the master. Closes with no target (a table
/// disabled or altered) never wait. Returns each one's outcome.
async fn close_given<H: RegionHost>(
    host: &H,
    me: &str,
    records: &Records,
    open_here: &HashSet<String>,
) -> HashMap<String, Closed> {
    let warming = records.iter().any(|(region, (a, _))| {
        a.owner.as_deref() == Some(me)
            && a.state == RegionState::Open
            && a.to.is_some()
            && open_here.contains(region)
    });
    let to_close: Vec<&String> = records
        .iter()
        .filter(|(region, (a, _))| {
            a.owner.as_deref() == Some(me)
                && a.state == RegionState::Closing
                && open_here.contains(*region)
                && !(warming && a.to.is_some())
        })
        .map(|(region, _)| region)
        .collect();
    // A close for a move may keep answering reads from the flushed copy
    // until the next owner opens (and ends them): only the moves' closes.
    futures::future::join_all(to_close.iter().map(|region| async {
        let handoff = records.get(*region).is_some_and(|(a, _)| a.to.is_some());
        ((*region).clone(), host.close(region, handoff).await)
    }))
    .await
    .into_iter()
    .collect()
}

/// Warm handoffs to this server: copy while the owner serves, then ask
/// the owner to close (the move then proceeds as any other).
async fn warm_handoffs<H: RegionHost>(
    etcd: &Etcd,
    prefix: &str,
    me: &str,
    records: &Records,
    host: &H,
    round: &mut ServerRound,
) -> Result<(), EtcdError> {
    for (region, (a, revision)) in records {
        if a.state != RegionState::Open || a.to.as_deref() != Some(me) {
            continue;
        }
        let Some(owner) = a.owner.as_deref().filter(|o| *o != me) else {
            continue;
        };
        if host.warm_up(region, a.epoch, owner) {
            let next = Assignment {
                state: RegionState::Closing,
                ..a.clone()
            };
            if assignment::write(etcd, prefix, &next, *revision).await? {
                round.warmed += 1;
            }
        }
    }
    Ok(())
}

/// The records a server round writes for the opens and closes it made
/// (each a compare-and-swap; one lost to a concurrent change is left for
/// the next round). Appends each record written to `written`.
#[allow(clippy::too_many_arguments)]
async fn write_outcomes(
    etcd: &Etcd,
    prefix: &str,
    me: &str,
    my_wal: &str,
    records: &Records,
    claimed: &HashSet<String>,
    open_here: &HashSet<String>,
    opened: &HashMap<String, Result<(), RegionHostError>>,
    closes: &HashMap<String, Closed>,
    targets: &mut Option<HashMap<String, String>>,
    round: &mut ServerRound,
    written: &mut Vec<Assignment>,
) -> Result<(), EtcdError> {
    for (region, (a, revision)) in records.clone() {
        if a.owner.as_deref() != Some(me) || claimed.contains(&region) {
            continue;
        }
        let is_open = open_here.contains(&region);
        let next = match a.state {
            RegionState::Opening | RegionState::Open
                if !is_open || a.state == RegionState::Opening =>
            {
                let result = opened.get(&region).cloned().unwrap_or_else(|| {
                    Err(RegionHostError::Busy {
                        region: region.clone(),
                        reason: "not opened this round".into(),
                    })
                });
                opened_record(&region, a, result, my_wal, round)
            }
            RegionState::Closing if !is_open => {
                // Not open here (this server gave it up): the next owner
                // replays the run its edits went to.
                Assignment {
                    state: RegionState::Offline,
                    owner: None,
                    replay: replay_for(&a, my_wal),
                    owner_wal: None,
                    ..a
                }
            }
            RegionState::Closing => match closes.get(&region).cloned() {
                // Waits for the regions of this server still warming.
                None => continue,
                Some(result) => {
                    closed_record(etcd, prefix, me, &region, a, result, targets, round).await?
                }
            },
            RegionState::Opening | RegionState::Open | RegionState::Offline => continue,
        };
        // Lost to a concurrent change: the next round sees the new record.
        if assignment::write(etcd, prefix, &next, revision).await? {
            written.push(next);
        }
    }
    Ok(())
}

/// The record for `a` (of `region`) after this round's open of it:
/// serving here, logging to `my_wal`, or offline with its runs to replay
/// if the open failed.
fn opened_record(
    region: &str,
    a: Assignment,
    result: Result<(), RegionHostError>,
    my_wal: &str,
    round: &mut ServerRound,
) -> Assignment {
    let replay = replay_for(&a, my_wal);
    match result {
        Ok(()) => {
            round.opened += 1;
            Assignment {
                state: RegionState::Open,
                owner_wal: Some(my_wal.to_owned()),
                // Replayed and logged again in `my_wal`.
                replay: Vec::new(),
                // The open ended the former owner's reads.
                reads_at: None,
                ..a
            }
        }
        Err(reason) => {
            tracing::warn!(region = %region, %reason, "opening an assigned region failed");
            round.failed += 1;
            Assignment {
                state: RegionState::Offline,
                owner: None,
                owner_wal: None,
                replay,
                ..a
            }
        }
    }
}

/// The record for `a` (of `region`) after this round's close of it: closed
/// and flushed (handed straight to its move's target if it names one), or
/// still open here if the close failed.
#[allow(clippy::too_many_arguments)]
async fn closed_record(
    etcd: &Etcd,
    prefix: &str,
    me: &str,
    region: &str,
    a: Assignment,
    result: Closed,
    targets: &mut Option<HashMap<String, String>>,
    round: &mut ServerRound,
) -> Result<Assignment, EtcdError> {
    match result {
        Ok(reads) => {
            round.closed += 1;
            // Flushed: nothing of it is left to replay. Its blocks
            // are still in this server's L2 for the next owner.
            let closed = Assignment {
                state: RegionState::Offline,
                owner: None,
                owner_wal: None,
                last_owner: Some(me.to_owned()),
                reads_at: reads.map(|bound| MoveReads {
                    server: me.to_owned(),
                    bound_ms: bound.as_millis() as u64,
                }),
                ..a
            };
            // A move the master decided names its target: hand the
            // region over directly (as the master's next round
            // would), so the target opens it in its next round
            // without waiting for the master's.
            Ok(handover(etcd, prefix, &closed, targets)
                .await?
                .unwrap_or(closed))
        }
        Err(reason) => {
            tracing::warn!(region = %region, %reason, "closing a region failed; it stays open here");
            round.failed += 1;
            Ok(Assignment {
                state: RegionState::Open,
                to: None,
                ..a
            })
        }
    }
}

/// Keeps at most `max_moving` regions in motion: counts those already moving
/// among `records`, then keeps the first moves of `steps` that fit, drains
/// first, then moves home, then balance. Placements (`Step::Assign`) stay.
fn pace_moves(
    steps: &mut Vec<Step>,
    records: &std::collections::BTreeMap<String, (Assignment, i64)>,
    required: &std::collections::HashSet<&str>,
    max_moving: usize,
) {
    let moving = records
        .iter()
        .filter(|(r, (a, _))| {
            required.contains(r.as_str())
                && (matches!(a.state, RegionState::Closing | RegionState::Opening)
                    || (a.state == RegionState::Open && a.to.is_some()))
        })
        .count();
    let mut room = max_moving.saturating_sub(moving);
    let rank = |s: &Step| match s {
        Step::Assign { .. } => 0,
        Step::Move { why, .. } => match why {
            assignment::MoveWhy::Drain => 1,
            assignment::MoveWhy::Home => 2,
            assignment::MoveWhy::Balance => 3,
        },
    };
    steps.sort_by_key(rank);
    steps.retain(|s| match s {
        Step::Assign { .. } => true,
        Step::Move { .. } if room > 0 => {
            room -= 1;
            true
        }
        Step::Move { .. } => false,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignment::MoveWhy;

    fn mv(region: &str, why: MoveWhy) -> Step {
        Step::Move {
            region: region.into(),
            from: "a".into(),
            to: "b".into(),
            why,
        }
    }

    fn record(region: &str, state: RegionState, to: Option<&str>) -> (String, (Assignment, i64)) {
        let mut a = Assignment::new(region);
        a.state = state;
        a.owner = Some("a".into());
        a.to = to.map(str::to_owned);
        (region.to_owned(), (a, 1))
    }

    #[test]
    fn paced_moves_keep_placements_and_put_drains_first() {
        let regions = ["r1", "r2", "r3", "r4", "r5", "r6"];
        let required: std::collections::HashSet<&str> = regions.into_iter().collect();
        let steps = || {
            vec![
                mv("r1", MoveWhy::Balance),
                mv("r2", MoveWhy::Home),
                Step::Assign {
                    region: "r3".into(),
                    to: "c".into(),
                },
                mv("r4", MoveWhy::Drain),
                mv("r5", MoveWhy::Drain),
            ]
        };
        // Nothing moving: room for two, the drains.
        let idle: std::collections::BTreeMap<_, _> = [record("r6", RegionState::Open, None)]
            .into_iter()
            .collect();
        let mut s = steps();
        pace_moves(&mut s, &idle, &required, 2);
        let kept: Vec<&str> = s
            .iter()
            .map(|s| match s {
                Step::Assign { region, .. } | Step::Move { region, .. } => region.as_str(),
            })
            .collect();
        assert_eq!(kept, ["r3", "r4", "r5"]);
        // One warm handoff under way: room for one more.
        let busy: std::collections::BTreeMap<_, _> = [record("r6", RegionState::Open, Some("b"))]
            .into_iter()
            .collect();
        let mut s = steps();
        pace_moves(&mut s, &busy, &required, 2);
        assert_eq!(s.len(), 2, "{s:?}");
        // A region closing or opening counts as well; full: placements only.
        let full: std::collections::BTreeMap<_, _> = [
            record("r6", RegionState::Closing, Some("b")),
            record("r1", RegionState::Opening, None),
        ]
        .into_iter()
        .collect();
        let mut s = steps();
        pace_moves(&mut s, &full, &required, 2);
        assert!(matches!(s.as_slice(), [Step::Assign { .. }]), "{s:?}");
    }
}
