//! The mini-batch write path (HBase's `doMiniBatchMutation`): several row
//! mutations of one region applied together — their row locks taken in row
//! order, one WAL append for all of them, one wait for the read point — while
//! each row stays atomic and gets its own answer. A MultiMutate (and so every
//! batch of combined client writes) goes through it; what a batch costs per row
//! is then the cells, not the synchronisation around them.

use super::mutate::latest_means_now;
use super::ops::{RowMutation, RowOp};
use super::{Region, RegionError};
use crate::write_stages::Stage;
use bytes::Bytes;
use std::time::Instant;

/// One mutation of a batch, on its way through the fast path.
struct Prepared {
    /// Position in the caller's list.
    index: usize,
    seq: u64,
    cells: Vec<crate::cell::Cell>,
    payload: Bytes,
}

impl Region {
    /// Applies `mutations` (each atomic on its own) and answers each, in
    /// order. On the batch path mutations of the same row apply in list
    /// order. A batch that holds a change needing a read first ("delete the
    /// newest version"), or that the write gate refuses, goes row by row
    /// instead: every row on its own path, concurrently, with its own answer.
    pub async fn mutate_batch(&self, mutations: Vec<RowMutation>) -> Vec<Result<(), RegionError>> {
        let needs_read = |m: &RowMutation| {
            m.ops.iter().any(|op| {
                matches!(
                    latest_means_now(op.clone(), 0),
                    RowOp::DeleteVersion {
                        timestamp: None,
                        ..
                    }
                )
            })
        };
        if mutations.len() <= 1 || mutations.iter().any(needs_read) {
            return self.row_by_row(mutations).await;
        }
        let stages = &self.inner.env.memstore.stats().stages;
        let started = Instant::now();
        let Ok(_gate) = self.write_gate().await else {
            // Closed, fenced or too busy: each row asks again and gets its own
            // answer (errors are not `Clone`).
            return self.row_by_row(mutations).await;
        };
        let gated = stages.since(Stage::Gate, started);
        let mut results: Vec<Option<Result<(), RegionError>>> =
            mutations.iter().map(|_| None).collect();
        let mut rows: Vec<Bytes> = Vec::with_capacity(mutations.len());
        for (i, m) in mutations.iter().enumerate() {
            if let Err(e) = self.check_row(&m.row) {
                results[i] = Some(Err(e));
            } else if m.ops.is_empty() {
                results[i] = Some(Err(self.invalid("a mutation needs at least one change")));
            } else {
                rows.push(m.row.clone());
            }
        }
        // Locks in row order, each row once: two batches never wait for each
        // other in a cycle, and single-row writers hold one lock at a time.
        rows.sort_unstable();
        rows.dedup();
        let mut guards = Vec::with_capacity(rows.len());
        for row in &rows {
            guards.push(self.inner.row_locks.lock(row).await);
        }
        stages.since(Stage::RowLocks, gated);

        let now = self.stamp_now();
        let mut prepared: Vec<Prepared> = Vec::with_capacity(rows.len());
        for (i, m) in mutations.iter().enumerate() {
            if results[i].is_some() {
                continue;
            }
            let specs: Vec<RowOp> = m
                .ops
                .iter()
                .map(|op| latest_means_now(op.clone(), now))
                .collect();
            let seq = self.inner.mvcc.begin();
            match self.prepare_cells(&m.row, &specs, seq, now) {
                Ok((cells, payload)) => prepared.push(Prepared {
                    index: i,
                    seq,
                    cells,
                    payload,
                }),
                Err(e) => {
                    self.inner.mvcc.complete(seq);
                    results[i] = Some(Err(e));
                }
            }
        }

        if !prepared.is_empty() {
            let entries: Vec<(u64, Bytes)> = prepared
                .iter()
                .map(|p| (p.seq, p.payload.clone()))
                .collect();
            let queued = Instant::now();
            let logged = self.inner.env.wal.append_many(self.id(), &entries).await;
            stages.since(Stage::Wal, queued);
            let mut newest = 0;
            for p in &prepared {
                let result = match &logged {
                    Ok(()) => self.insert_cells(&p.cells),
                    Err(source) => Err(RegionError::Wal {
                        region: self.id().to_string(),
                        source: source.clone(),
                    }),
                };
                self.inner.mvcc.complete(p.seq);
                if result.is_ok() {
                    newest = newest.max(p.seq);
                }
                results[p.index] = Some(result);
            }
            if newest > 0 {
                let inserted = Instant::now();
                self.inner.mvcc.wait_visible(newest).await;
                stages.since(Stage::ReadPoint, inserted);
                self.note_edit(now);
                self.maybe_compact_in_memory();
                self.maybe_schedule_flush();
            }
        }
        drop(guards);
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(RegionError::InvalidArgument {
                        region: self.id().to_string(),
                        reason: "mutation was not applied".into(),
                    })
                })
            })
            .collect()
    }

    /// Every mutation on the single-row path, concurrently (as MultiMutate
    /// rows were applied before mini-batches).
    async fn row_by_row(&self, mutations: Vec<RowMutation>) -> Vec<Result<(), RegionError>> {
        futures::future::join_all(mutations.into_iter().map(|m| self.mutate(m))).await
    }
}
