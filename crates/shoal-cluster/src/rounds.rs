//! The assignment state machine in motion: the master's round (read the
//! live members and the records, plan, write the steps) and every server's
//! round (open what it was given, close what it must give up, and say so in
//! the record). Both only read etcd and write by compare-and-swap, so either
//! can stop at any point and a new master or a restarted server resumes from
//! what etcd holds: no state lives only in memory.

use crate::assignment::{self, Assignment, RegionState, Step};
use crate::etcd::{Etcd, EtcdError};
use crate::membership;
use std::future::Future;

/// What a server does with regions: the host implements it.
pub trait RegionHost {
    /// Opens `region` as its owner at `epoch`, first replaying its entries
    /// from the dead servers' WAL runs in `replay`. Err: the reason.
    fn open(
        &self,
        region: &str,
        epoch: u64,
        replay: &[String],
    ) -> impl Future<Output = Result<(), String>> + Send;

    /// Flushes and closes `region` (it is moving away). Err: the reason.
    fn close(&self, region: &str) -> impl Future<Output = Result<(), String>> + Send;

    /// The regions open here now.
    fn open_regions(&self) -> Vec<String>;
}

/// What a master round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MasterRound {
    /// Regions given to a server (including those of dead servers).
    pub assigned: usize,
    /// Regions told to move (their owners will close them).
    pub moves: usize,
    /// Writes lost to a concurrent change (retried next round).
    pub conflicts: usize,
}

/// One round of the master over `regions` (every region that must be
/// served, from the catalog), moving at most `max_moves` for balance.
pub async fn master_round(
    etcd: &Etcd,
    prefix: &str,
    regions: &[String],
    max_moves: usize,
) -> Result<MasterRound, EtcdError> {
    let live: Vec<String> = membership::members(etcd, prefix)
        .await?
        .into_iter()
        .map(|m| m.name)
        .collect();
    let records = assignment::read_all(etcd, prefix).await?;
    let mut round = MasterRound::default();
    let mut steps = Vec::new();
    // A closed region that was moving goes to the server it was moving to.
    let mut planned = records.clone();
    for (region, (a, _)) in &records {
        if a.state == RegionState::Offline
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
    steps.extend(assignment::plan(regions, &live, &planned, max_moves));
    for step in steps {
        let (region, next) = match &step {
            Step::Assign { region, to } => {
                let (prev, _) = records
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
                (
                    region,
                    Assignment {
                        owner: Some(to.clone()),
                        epoch: prev.epoch + 1,
                        state: RegionState::Opening,
                        replay,
                        owner_wal: None,
                        to: None,
                        ..prev
                    },
                )
            }
            Step::Move { region, to, .. } => {
                let Some((prev, _)) = records.get(region).cloned() else {
                    continue;
                };
                if prev.state != RegionState::Open {
                    continue; // only a serving region is moved
                }
                (
                    region,
                    Assignment {
                        state: RegionState::Closing,
                        to: Some(to.clone()),
                        ..prev
                    },
                )
            }
        };
        let revision = records.get(region).map_or(0, |(_, rev)| *rev);
        if assignment::write(etcd, prefix, &next, revision).await? {
            match step {
                Step::Assign { .. } => round.assigned += 1,
                Step::Move { .. } => round.moves += 1,
            }
            tracing::info!(region = %next.region, owner = ?next.owner, epoch = next.epoch, state = ?next.state, "assignment");
        } else {
            round.conflicts += 1;
        }
    }
    Ok(round)
}

/// What a server round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ServerRound {
    /// Regions opened.
    pub opened: usize,
    /// Regions closed (moved away).
    pub closed: usize,
    /// Opens or closes that failed (the record says offline; the master
    /// places the region again).
    pub failed: usize,
}

/// One round of server `me` (whose WAL run is `my_wal`): open the regions
/// assigned to it, close those it must give up, and record each outcome.
pub async fn server_round<H: RegionHost>(
    etcd: &Etcd,
    prefix: &str,
    me: &str,
    my_wal: &str,
    host: &H,
) -> Result<ServerRound, EtcdError> {
    let mut round = ServerRound::default();
    let records = assignment::read_all(etcd, prefix).await?;
    // A region open here that its record no longer gives to this server
    // (reassigned while this server was cut off, or its open lost a race):
    // close it. Its manifest is fenced by the new owner's epoch anyway.
    for region in host.open_regions() {
        let mine = records.get(&region).is_some_and(|(a, _)| {
            a.owner.as_deref() == Some(me) && a.state != RegionState::Offline
        });
        if !mine {
            tracing::warn!(region = %region, "open here but assigned elsewhere; closing it");
            if host.close(&region).await.is_ok() {
                round.closed += 1;
            }
        }
    }
    for (region, (a, revision)) in records {
        if a.owner.as_deref() != Some(me) {
            continue;
        }
        let next = match a.state {
            RegionState::Opening => match host.open(&region, a.epoch, &a.replay).await {
                Ok(()) => {
                    round.opened += 1;
                    Assignment {
                        state: RegionState::Open,
                        owner_wal: Some(my_wal.to_owned()),
                        // Replayed and logged again in `my_wal`.
                        replay: Vec::new(),
                        ..a
                    }
                }
                Err(reason) => {
                    tracing::warn!(region = %region, %reason, "opening an assigned region failed");
                    round.failed += 1;
                    Assignment {
                        state: RegionState::Offline,
                        owner: None,
                        ..a
                    }
                }
            },
            RegionState::Closing => match host.close(&region).await {
                Ok(()) => {
                    round.closed += 1;
                    // Flushed: nothing of it is left to replay.
                    Assignment {
                        state: RegionState::Offline,
                        owner: None,
                        owner_wal: None,
                        ..a
                    }
                }
                Err(reason) => {
                    tracing::warn!(region = %region, %reason, "closing a region failed; it stays open here");
                    round.failed += 1;
                    Assignment {
                        state: RegionState::Open,
                        to: None,
                        ..a
                    }
                }
            },
            RegionState::Open | RegionState::Offline => continue,
        };
        // Lost to a concurrent change: the next round sees the new record.
        let _ = assignment::write(etcd, prefix, &next, revision).await?;
    }
    Ok(round)
}
