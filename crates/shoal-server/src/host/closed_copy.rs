//! Closed copies: a region this server closed for a move whose reads go on
//! (`Slot::Closing`) — from the region while its closing flush runs, then
//! from the flushed copy, which holds every acknowledged write — until the
//! next owner ends them or their bound passes. This file owns the copy's
//! slot and lifetime on this server, and its answer to the next owner
//! (`Admin/EndMoveReads`: the copy's cached rows, then the end of its
//! reads). When to keep reads, and the next owner's side of ending them,
//! are the cluster's (`cluster/move_reads.rs`).
//!
//! Invariant: once the slot leaves `Closing` no read is routed to the copy,
//! and one already routed to it fails as closed (and is retried), so the
//! copy answers nothing after its next owner was told it stopped.

use super::{Host, Slot};
use crate::error::ServiceError;
use shoal_storage::region::{Region, RowBundle};
use std::time::{Duration, Instant};

impl Host {
    /// Counts a read answered by a region being closed here for a move.
    pub(crate) fn count_move_read(&self) {
        if let Some(c) = &self.inner.cluster {
            c.count_move_read();
        }
    }

    /// Region `id` was closed here for a move keeping its reads
    /// (`region.close_keeping_reads()`): its closed copy answers them for at
    /// most `bound` from now, unless the next owner ends them first.
    pub(crate) fn keep_move_reads(&self, id: &str, region: Region, bound: Duration) {
        let until = Instant::now() + bound;
        self.set_slot(
            id,
            Slot::Closing {
                region: region.clone(),
                reads_until: Some(until),
            },
        );
        let host = self.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep_until(until.into()).await;
            // Routing already stopped at `until`; this drops the copy's
            // state. Ending a newer copy's reads early would be safe too.
            region.end_reads();
            if host.end_closed_copy(&id).is_ok() {
                tracing::debug!(region = %id, "reads of a region moved away reached their bound");
            }
        });
    }

    /// Closed copies here still answering reads (a draining server waits
    /// for their next owners to end them before it leaves, so they need not
    /// wait out the bound).
    pub(crate) fn closed_copies(&self) -> usize {
        self.tables()
            .iter()
            .flat_map(|t| t.regions.values())
            .filter(|(_, s)| {
                matches!(
                    s,
                    Slot::Closing {
                        reads_until: Some(until),
                        ..
                    } if Instant::now() < *until
                )
            })
            .count()
    }

    /// For region `id`'s next owner (`next_owner`, for the logs): stops
    /// answering reads of `id` from a copy closed here for a move. Ok once
    /// this server answers none (also when it had none to answer); a
    /// region still in its closing flush answers UNAVAILABLE (ask again),
    /// one open here FAILED_PRECONDITION.
    ///
    /// The closed copy's cached rows come back first, up to `max_row_bytes`
    /// (its row cache's entries, as of the region's final state); with
    /// `keep_reads` only they do, and the copy goes on answering reads.
    pub async fn end_move_reads(
        &self,
        id: &str,
        next_owner: &str,
        max_row_bytes: u64,
        keep_reads: bool,
    ) -> Result<RowBundle, ServiceError> {
        let rows = if max_row_bytes > 0 {
            self.closed_copy_rows(id, max_row_bytes).await?
        } else {
            RowBundle::default()
        };
        if keep_reads {
            tracing::debug!(region = %id, next_owner = %crate::error::shown(next_owner), rows = rows.len(), "rows of a region moving away handed over");
            return Ok(rows);
        }
        self.end_closed_copy(id)?;
        tracing::debug!(region = %id, next_owner = %crate::error::shown(next_owner), rows = rows.len(), "reads of a region moved away ended");
        Ok(rows)
    }

    /// Runs the CPU-heavy part of a move (building or taking its handed
    /// rows) on the background runtime's blocking pool, at its lower
    /// priority: reads of the moving region go on meanwhile (the former
    /// owner's copy answers them), and on a busy machine they get the CPU
    /// first. Rolling-restart run 43 had readers waiting on servers whose
    /// cores were taken by this work.
    pub(crate) fn spawn_move_work<F, R>(&self, f: F) -> tokio::task::JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        shoal_storage::background::spawn_blocking(self.inner.env.background.as_ref(), f)
    }

    /// The cached rows of region `id`'s closed copy here, up to
    /// `max_row_bytes` (none if it has no copy here); the copy goes on.
    ///
    /// Collected as move work (`spawn_move_work`): megabytes of rows take
    /// a runtime worker for tens of milliseconds, and the reads this server
    /// still answers (the copy's among them) would wait behind them.
    pub(crate) async fn closed_copy_rows(
        &self,
        id: &str,
        max_row_bytes: u64,
    ) -> Result<RowBundle, ServiceError> {
        let max = max_row_bytes.min(usize::MAX as u64) as usize;
        let Some(region) = self.closed_copy(id, false)? else {
            return Ok(RowBundle::default());
        };
        self.spawn_move_work(move || region.handed_rows(max))
            .await
            .map_err(|e| {
                ServiceError::Unavailable(format!(
                    "collecting region {id}'s cached rows failed: {e}"
                ))
            })
    }

    /// Ends the reads of region `id`'s closed copy, if it has one here.
    pub(crate) fn end_closed_copy(&self, id: &str) -> Result<(), ServiceError> {
        // After the slot changed: no read is routed to the copy any more,
        // and one already routed to it fails as closed (and is retried).
        if let Some(region) = self.closed_copy(id, true)? {
            region.end_reads();
        }
        Ok(())
    }

    /// Region `id`'s copy closed here for a move that still answers reads,
    /// if it has one; with `stop_routing`, no read is routed to it after
    /// this. A region still in its closing flush is UNAVAILABLE (ask
    /// again), one open here FAILED_PRECONDITION.
    fn closed_copy(&self, id: &str, stop_routing: bool) -> Result<Option<Region>, ServiceError> {
        let mut copy: Option<Region> = None;
        let mut outcome = Ok(());
        self.update_slot(id, |slot| match slot {
            Slot::Closing {
                region,
                reads_until: Some(_),
            } => {
                copy = Some(region.clone());
                if stop_routing {
                    *slot = Slot::Elsewhere;
                }
            }
            Slot::Closing {
                reads_until: None, ..
            } => {
                outcome = Err(ServiceError::Unavailable(format!(
                    "region {id} is still being closed here; ask again"
                )));
            }
            Slot::Open(_) => {
                outcome = Err(ServiceError::FailedPrecondition(format!(
                    "region {id} is open here"
                )));
            }
            Slot::Moving | Slot::Elsewhere => {}
        });
        outcome.map(|()| copy)
    }
}
