//! The native RPC's `Multi`: a batch of region actions, each a list of
//! gets and mutations of one region (run side by side, puts and deletes in
//! one WAL append per region), an atomic RowMutations (Increments and
//! Appends among its changes too) or a CheckAndMutate. Answered as HBase's
//! `RSRpcServices.multi` answers: one result or exception per action by
//! index, a region action's failure as its exception, and a failure HBase
//! cannot catch per action (NO_OP compared) as the whole call's.

use super::client::{CallCells, exception_pair};
use super::convert::{self, Mutation, ResultWriter};
use super::errors::RpcError;
use super::meta;
use super::{NativeRpc, Target};
use bytes::Bytes;
use shoal_proto::hbase as pb;
use shoal_storage::cell::Cell;
use shoal_storage::region::{CheckAndMutate, Nonce, RowChange, RowChanges, RowMutation};
use std::sync::Arc;

/// What one Multi action answers.
enum Answer {
    Cells(Vec<Cell>),
    Exists(bool),
}

/// What one Multi action became, before it runs.
enum Planned {
    Get(convert::GetSpec),
    Row(RowMutation),
    Increment(Bytes, Vec<(Bytes, Bytes, i64)>, Option<Nonce>),
    Append(Bytes, Vec<(Bytes, Bytes, Bytes)>, Option<Nonce>),
    Failed(RpcError),
}

/// The changes of an atomic region action, all to one row.
fn row_changes(actions: &[(u32, Planned)]) -> Result<RowChanges, RpcError> {
    let mut row: Option<&Bytes> = None;
    let mut changes = Vec::with_capacity(actions.len());
    for (_, plan) in actions {
        let (r, change) = match plan {
            Planned::Row(rm) => {
                for op in &rm.ops {
                    changes.push(RowChange::Op(op.clone()));
                }
                (&rm.row, None)
            }
            Planned::Increment(r, cols, _) => (r, Some(RowChange::Increment(cols.clone()))),
            Planned::Append(r, cols, _) => (r, Some(RowChange::Append(cols.clone()))),
            Planned::Failed(e) => return Err(e.clone()),
            Planned::Get(_) => {
                return Err(RpcError::invalid(
                    "an atomic batch (RowMutations) holds puts, deletes, increments and appends only, not a Get",
                ));
            }
        };
        match row {
            None => row = Some(r),
            Some(first) if first == r => {}
            Some(_) => {
                return Err(RpcError::invalid(
                    "an atomic batch (RowMutations) must change one row",
                ));
            }
        }
        changes.extend(change);
    }
    let row = row
        .cloned()
        .ok_or_else(|| RpcError::invalid("an atomic batch with no mutation"))?;
    Ok(RowChanges { row, changes })
}

/// One action of a region action, parsed.
struct PlannedAction {
    index: u32,
    plan: Planned,
    /// An increment's or append's answer carries its cells
    /// (`setReturnResults`).
    returns: bool,
}

/// One region action, parsed (the cell block is read in order, so every
/// action is parsed before any runs).
struct PlannedRegion {
    target: Result<Arc<meta::RegionView>, RpcError>,
    atomic: bool,
    condition: Option<pb::Condition>,
    actions: Vec<PlannedAction>,
}

/// The results of a non-atomic region action's actions, by position; None:
/// not run yet.
type Results = Vec<Option<Result<Answer, RpcError>>>;

impl NativeRpc {
    /// `Multi`: every region action in order.
    pub(super) async fn multi(
        &self,
        req: pb::MultiRequest,
        cells: &mut CallCells,
        w: &mut ResultWriter,
    ) -> Result<pb::MultiResponse, RpcError> {
        tracing::trace!(request = ?req, "native RPC Multi");
        let n: usize = req.region_action.iter().map(|a| a.action.len()).sum();
        self.host.config().limits.check_batch(n, "actions")?;
        let nonce_group = req.nonce_group;
        #[allow(deprecated)]
        let request_condition = req.condition;
        let mut regions = Vec::with_capacity(req.region_action.len());
        for ra in req.region_action {
            regions.push(self.plan_region(ra, nonce_group, cells).await);
        }
        if let Some(c) = request_condition
            && let Some(first) = regions.first_mut()
            && first.condition.is_none()
        {
            // Older clients put a RowMutations' condition on the request.
            first.condition = Some(c);
        }
        let mut answers = Vec::with_capacity(regions.len());
        for region in regions {
            answers.push(self.region_action(region, w).await?);
        }
        Ok(pb::MultiResponse {
            region_action_result: answers,
            ..Default::default()
        })
    }

    /// Parses one region action: its region and each action.
    async fn plan_region(
        &self,
        ra: pb::RegionAction,
        nonce_group: Option<u64>,
        cells: &mut CallCells,
    ) -> PlannedRegion {
        let target = match self.resolve(&ra.region).await {
            Ok(Target::Region(v)) => Ok(v),
            Ok(Target::Meta) => Err(RpcError::invalid(
                "batches on hbase:meta are not served by Shoal",
            )),
            Err(e) => Err(e),
        };
        let actions = ra
            .action
            .iter()
            .map(|a| plan_action(a, nonce_group, cells))
            .collect();
        PlannedRegion {
            target,
            atomic: ra.atomic.unwrap_or(false),
            condition: ra.condition,
            actions,
        }
    }

    /// Runs one region action: atomic or conditioned as one row's changes,
    /// otherwise action by action.
    async fn region_action(
        &self,
        region: PlannedRegion,
        w: &mut ResultWriter,
    ) -> Result<pb::RegionActionResult, RpcError> {
        let view = match region.target {
            Ok(v) => v,
            Err(e) => {
                return Ok(pb::RegionActionResult {
                    exception: Some(exception_pair(&e)),
                    ..Default::default()
                });
            }
        };
        // A condition makes the region action one checkAndMutate (of its
        // one mutation, or of its RowMutations), as in HBase.
        if region.atomic || region.condition.is_some() {
            let actions = region.actions.into_iter().map(|a| (a.index, a.plan));
            return self
                .atomic(&view, region.condition, actions.collect(), w)
                .await;
        }
        let results = self.run_actions(&view, &region.actions).await;
        answer_actions(&region.actions, results, w)
    }

    /// A non-atomic region action's actions: puts and deletes through one
    /// batch (one WAL append per region), gets side by side, then the
    /// increments and appends.
    async fn run_actions(
        &self,
        view: &Arc<meta::RegionView>,
        actions: &[PlannedAction],
    ) -> Results {
        let mut results: Results = Vec::with_capacity(actions.len());
        let mut batch = Vec::new();
        let mut reads = Vec::new();
        let mut counters = Vec::new();
        for (i, a) in actions.iter().enumerate() {
            results.push(None);
            match &a.plan {
                Planned::Row(rm) if view.holds(&rm.row) => batch.push((i, rm.clone())),
                Planned::Row(_) => {
                    results[i] = Some(Err(RpcError::not_serving(
                        "row is outside the region named",
                    )))
                }
                Planned::Get(spec) => reads.push((i, spec)),
                Planned::Failed(e) => results[i] = Some(Err(e.clone())),
                Planned::Increment(..) | Planned::Append(..) => counters.push(i),
            }
        }
        self.run_writes(view, batch, &mut results).await;
        let target = Target::Region(view.clone());
        let got =
            futures::future::join_all(reads.iter().map(|(_, spec)| self.read_row(&target, spec)))
                .await;
        for ((i, spec), r) in reads.iter().zip(got) {
            results[*i] = Some(r.map(|(found, cells)| {
                if spec.existence_only {
                    Answer::Exists(found)
                } else {
                    Answer::Cells(cells)
                }
            }));
        }
        for i in counters {
            results[i] = Some(self.run_counter(view, &actions[i]).await);
        }
        results
    }

    /// A region action's puts and deletes, as one batch.
    async fn run_writes(
        &self,
        view: &meta::RegionView,
        batch: Vec<(usize, RowMutation)>,
        results: &mut Results,
    ) {
        if batch.is_empty() {
            return;
        }
        let (at, mutations): (Vec<usize>, Vec<RowMutation>) = batch.into_iter().unzip();
        match self.access().mutate_many(&view.table, mutations).await {
            Ok(each) => {
                for (i, r) in at.into_iter().zip(each) {
                    results[i] = Some(
                        r.map(|()| Answer::Cells(Vec::new()))
                            .map_err(RpcError::from),
                    );
                }
            }
            Err(e) => {
                let e = RpcError::from(e);
                for i in at {
                    results[i] = Some(Err(e.clone()));
                }
            }
        }
    }

    /// One increment or append of a region action.
    async fn run_counter(
        &self,
        view: &meta::RegionView,
        action: &PlannedAction,
    ) -> Result<Answer, RpcError> {
        let cells = match &action.plan {
            Planned::Increment(row, cols, nonce) => {
                self.increment(&view.table, row.clone(), cols.clone(), *nonce)
                    .await?
            }
            Planned::Append(row, cols, nonce) => {
                self.append(&view.table, row.clone(), cols.clone(), *nonce)
                    .await?
            }
            _ => return Err(RpcError::invalid("not an increment or append")),
        };
        // setReturnResults(false): HBase answers an empty result.
        Ok(Answer::Cells(if action.returns {
            cells
        } else {
            Vec::new()
        }))
    }

    /// An atomic or conditioned region action: one row's changes together
    /// (HBase's RowMutations, which may hold Increments and Appends, and a
    /// CheckAndMutate in a batch), guarded by a condition when one is given.
    /// Answered as HBase's `multi` answers it: `processed`, one entry per
    /// action by position, the first carrying the increments' and appends'
    /// cells (merged in the order of the changes); a failure is the
    /// region action's.
    async fn atomic(
        &self,
        view: &meta::RegionView,
        condition: Option<pb::Condition>,
        actions: Vec<(u32, Planned)>,
        w: &mut ResultWriter,
    ) -> Result<pb::RegionActionResult, RpcError> {
        let fail = |e: RpcError| pb::RegionActionResult {
            exception: Some(exception_pair(&e)),
            ..Default::default()
        };
        let changes = match row_changes(&actions) {
            Ok(c) => c,
            Err(e) => return Ok(fail(e)),
        };
        if !view.holds(&changes.row) {
            return Ok(fail(RpcError::not_serving(
                "row is outside the region named",
            )));
        }
        let condition = match condition.map(|c| convert::condition(&c, &changes.row)) {
            Some(Ok(c)) => Some(c),
            Some(Err(e)) => return Ok(fail(e)),
            None => None,
        };
        // HBase marks the whole with the last increment's or append's nonce.
        let nonce = actions.iter().rev().find_map(|(_, p)| match p {
            Planned::Increment(_, _, n) | Planned::Append(_, _, n) => *n,
            _ => None,
        });
        let access = self.access();
        let outcome = if changes.has_counters() {
            access
                .mutate_changes(&view.table, changes, condition, nonce)
                .await
        } else {
            let m = RowMutation {
                row: changes.row,
                ops: changes
                    .changes
                    .into_iter()
                    .filter_map(|c| match c {
                        RowChange::Op(op) => Some(op),
                        _ => None,
                    })
                    .collect(),
            };
            match condition {
                Some(c) => {
                    let check = CheckAndMutate {
                        family: c.family,
                        qualifier: c.qualifier,
                        op: c.op,
                        value: c.value,
                        time_range: c.time_range,
                        filter: c.filter,
                        mutation: m,
                    };
                    access
                        .check_and_mutate(&view.table, check)
                        .await
                        .map(|applied| applied.then(Vec::new))
                }
                None => access
                    .mutate(&view.table, m)
                    .await
                    .map(|()| Some(Vec::new())),
            }
        };
        let cells = match outcome.map_err(RpcError::from) {
            Ok(cells) => cells,
            // HBase's whole call fails (NO_OP compared).
            Err(e) if e.whole_call => return Err(e),
            Err(e) => return Ok(fail(e)),
        };
        let processed = cells.is_some();
        let first = cells.filter(|c| !c.is_empty()).map(|c| w.result(&c));
        Ok(pb::RegionActionResult {
            result_or_exception: (0..actions.len())
                .map(|i| pb::ResultOrException {
                    index: Some(i as u32),
                    result: if i == 0 { first.clone() } else { None },
                    ..Default::default()
                })
                .collect(),
            processed: Some(processed),
            exception: None,
        })
    }
}

/// Parses one action: a mutation, a get, or (refused) a coprocessor call.
fn plan_action(a: &pb::Action, nonce_group: Option<u64>, cells: &mut CallCells) -> PlannedAction {
    let plan = if let Some(m) = &a.mutation {
        let nonce = convert::nonce(nonce_group, m);
        match convert::mutation(m, &mut cells.cells) {
            Ok(Mutation::Row(rm)) => Planned::Row(rm),
            Ok(Mutation::Increment(r, c)) => Planned::Increment(r, c, nonce),
            Ok(Mutation::Append(r, c)) => Planned::Append(r, c, nonce),
            Err(e) => Planned::Failed(e),
        }
    } else if let Some(g) = &a.get {
        match convert::get(g) {
            Ok(spec) => Planned::Get(spec),
            Err(e) => Planned::Failed(e),
        }
    } else {
        Planned::Failed(RpcError::invalid(
            "coprocessor service calls are not supported",
        ))
    };
    PlannedAction {
        index: a.index.unwrap_or(0),
        plan,
        returns: a.mutation.as_ref().is_none_or(convert::returns_results),
    }
}

/// A non-atomic region action's answer: one result or exception per
/// action, by its index; an error HBase fails the whole call with is the
/// call's.
fn answer_actions(
    actions: &[PlannedAction],
    results: Results,
    w: &mut ResultWriter,
) -> Result<pb::RegionActionResult, RpcError> {
    let mut out = pb::RegionActionResult::default();
    for (a, r) in actions.iter().zip(results) {
        let r = r.unwrap_or_else(|| Err(RpcError::invalid("action was not run")));
        out.result_or_exception.push(match r {
            Ok(answer) => pb::ResultOrException {
                index: Some(a.index),
                result: Some(match answer {
                    Answer::Cells(cells) => w.result(&cells),
                    Answer::Exists(found) => pb::Result {
                        exists: Some(found),
                        associated_cell_count: Some(0),
                        stale: Some(false),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            },
            Err(e) if e.whole_call => return Err(e),
            Err(e) => pb::ResultOrException {
                index: Some(a.index),
                exception: Some(exception_pair(&e)),
                ..Default::default()
            },
        });
    }
    Ok(out)
}
