//! `ClientService`: Get, Mutate, Multi and Scan as HBase's client sends
//! them, each addressed to a region by name. A name this server cannot
//! place answers `NotServingRegionException`, so the client reads
//! `hbase:meta` again; a row is then served by whichever Shoal region
//! holds it now (the host routes by row), so a split never fails a call.

use super::convert::{self, Mutation, ResultWriter};
use super::errors::{self, RpcError};
use super::meta;
use super::scanners::{Feed, Next, ScannerState, Source};
use super::{NativeRpc, Target};
use bytes::Bytes;
use shoal_proto::hbase as pb;
use shoal_storage::cell::Cell;
use shoal_storage::region::filter::{Filter, FilterState};
use shoal_storage::region::{
    CheckAndMutate, Columns, Nonce, RowChange, RowChanges, RowMutation, RowResult,
};
use std::collections::VecDeque;
use std::sync::Arc;

/// Default `max_result_size` of a scan call (HBase's client default).
const DEFAULT_MAX_RESULT_BYTES: u64 = 2 << 20;

/// One call's inputs beyond its message: the cell block's cells, in order.
pub struct CallCells {
    /// The decoded cell block.
    pub cells: std::vec::IntoIter<super::cells::KeyValue>,
}

/// A virtual (already resolved) row through HBase's filter protocol.
fn filter_meta_row(filter: &Option<Arc<Filter>>, row: RowResult) -> Vec<Cell> {
    match filter {
        None => row.cells,
        Some(f) => FilterState::new(f, false)
            .apply_to_row(&row.row, row.cells, &mut false)
            .unwrap_or_default(),
    }
}

fn select(cells: Vec<Cell>, columns: &Columns) -> Vec<Cell> {
    cells
        .into_iter()
        .filter(|c| columns.wants(&c.family, &c.qualifier))
        .collect()
}

fn exception_pair(e: &RpcError) -> pb::NameBytesPair {
    pb::NameBytesPair {
        name: e.class.to_string(),
        value: Some(Bytes::from(e.message.clone())),
    }
}

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

impl NativeRpc {
    /// `Get`.
    pub(super) async fn get(
        &self,
        req: pb::GetRequest,
        w: &mut ResultWriter,
    ) -> Result<pb::GetResponse, RpcError> {
        let spec = convert::get(&req.get)?;
        let target = self.resolve(&req.region).await?;
        let (found, cells) = self.read_row(&target, &spec).await?;
        let result = if spec.existence_only {
            pb::Result {
                exists: Some(found),
                associated_cell_count: Some(0),
                stale: Some(false),
                ..Default::default()
            }
        } else {
            w.result(&cells)
        };
        Ok(pb::GetResponse {
            result: Some(result),
        })
    }

    /// Reads one row for a Get: whether it has cells, and the cells.
    async fn read_row(
        &self,
        target: &Target,
        spec: &convert::GetSpec,
    ) -> Result<(bool, Vec<Cell>), RpcError> {
        let access = self.access();
        let row = match target {
            Target::Meta => {
                let tables = self.meta_tables(meta::table_of_key(&spec.get.row)).await;
                let rows = meta::rows(&access, &tables, &self.me);
                let Some(row) = rows.into_iter().find(|r| r.row == spec.get.row) else {
                    return Ok((false, Vec::new()));
                };
                let row = RowResult {
                    cells: select(row.cells, &spec.get.columns),
                    row: row.row,
                };
                let cells = filter_meta_row(&spec.filter, row);
                return Ok((!cells.is_empty(), cells));
            }
            Target::Region(view) => {
                if !view.holds(&spec.get.row) {
                    return Err(RpcError::not_serving(format!(
                        "row is outside region {}",
                        String::from_utf8_lossy(&view.name)
                    )));
                }
                // The filter travels in the Get: the region runs it.
                access.get(&view.table, spec.get.clone()).await?
            }
        };
        Ok((!row.cells.is_empty(), row.cells))
    }

    /// `Mutate`: put, delete, increment, append, and check-and-mutate.
    pub(super) async fn mutate(
        &self,
        req: pb::MutateRequest,
        cells: &mut CallCells,
        w: &mut ResultWriter,
    ) -> Result<pb::MutateResponse, RpcError> {
        let m = convert::mutation(&req.mutation, &mut cells.cells)?;
        // HBase's client marks increments and appends: a retry of one
        // applied already is answered, not applied again.
        let nonce = convert::nonce(req.nonce_group, &req.mutation);
        // Increment/Append with setReturnResults(false): HBase answers an
        // empty result.
        let returns = convert::returns_results(&req.mutation);
        let view = match self.resolve(&req.region).await? {
            Target::Meta => {
                return Err(RpcError::invalid("hbase:meta is read-only on Shoal"));
            }
            Target::Region(v) => v,
        };
        let row = match &m {
            Mutation::Row(rm) => &rm.row,
            Mutation::Increment(r, _) | Mutation::Append(r, _) => r,
        };
        if !view.holds(row) {
            return Err(RpcError::not_serving("row is outside the region named"));
        }
        let access = self.access();
        match (m, req.condition) {
            (Mutation::Row(rm), Some(cond)) => {
                let check = convert::check(&cond, rm)?;
                let applied = access.check_and_mutate(&view.table, check).await?;
                // A Put's or Delete's check answers no result, as HBase.
                Ok(pb::MutateResponse {
                    result: None,
                    processed: Some(applied),
                })
            }
            (Mutation::Increment(row, cols), Some(cond)) => {
                let condition = convert::condition(&cond, &row)?;
                let applied = access
                    .check_and_increment(&view.table, condition, row, cols, nonce)
                    .await?;
                // The stored cells when applied (as HBase answers them);
                // no result when the check failed.
                Ok(pb::MutateResponse {
                    processed: Some(applied.is_some()),
                    result: applied.map(|c| w.result(&c.cells)),
                })
            }
            (Mutation::Append(row, cols), Some(cond)) => {
                let condition = convert::condition(&cond, &row)?;
                let applied = access
                    .check_and_append(&view.table, condition, row, cols, nonce)
                    .await?;
                // The stored cells when applied (as HBase answers them);
                // no result when the check failed.
                Ok(pb::MutateResponse {
                    processed: Some(applied.is_some()),
                    result: applied.map(|c| w.result(&c.cells)),
                })
            }
            (Mutation::Row(rm), None) => {
                access.mutate(&view.table, rm).await?;
                Ok(pb::MutateResponse {
                    result: Some(w.result(&[])),
                    processed: Some(true),
                })
            }
            (Mutation::Increment(row, cols), None) => {
                let cells = self.increment(&view.table, row, cols, nonce).await?;
                Ok(pb::MutateResponse {
                    result: Some(w.result(if returns { &cells } else { &[] })),
                    processed: Some(true),
                })
            }
            (Mutation::Append(row, cols), None) => {
                let cells = self.append(&view.table, row, cols, nonce).await?;
                Ok(pb::MutateResponse {
                    result: Some(w.result(if returns { &cells } else { &[] })),
                    processed: Some(true),
                })
            }
        }
    }

    /// An increment's answer: the cells written, as stored (HBase answers
    /// the new versions' timestamps), one per column in HBase's cell
    /// order; for a retry its nonce shows applied already, the columns'
    /// current cells.
    async fn increment(
        &self,
        table: &str,
        row: Bytes,
        cols: Vec<(Bytes, Bytes, i64)>,
        nonce: Option<Nonce>,
    ) -> Result<Vec<Cell>, RpcError> {
        let changed = self.access().increment(table, row, cols, nonce).await?;
        Ok(changed.cells)
    }

    /// An append's answer, as [`NativeRpc::increment`]'s.
    async fn append(
        &self,
        table: &str,
        row: Bytes,
        cols: Vec<(Bytes, Bytes, Bytes)>,
        nonce: Option<Nonce>,
    ) -> Result<Vec<Cell>, RpcError> {
        let changed = self.access().append(table, row, cols, nonce).await?;
        Ok(changed.cells)
    }

    /// `Multi`: batches of gets and mutations per region, atomic row
    /// mutations, and check-and-mutate on a row's mutations.
    pub(super) async fn multi(
        &self,
        req: pb::MultiRequest,
        cells: &mut CallCells,
        w: &mut ResultWriter,
    ) -> Result<pb::MultiResponse, RpcError> {
        tracing::trace!(request = ?req, "native RPC Multi");
        let n: usize = req.region_action.iter().map(|a| a.action.len()).sum();
        self.host.config().limits.check_batch(n, "actions")?;
        // Parse everything first: the cell block is read in order.
        struct PlannedAction {
            index: u32,
            plan: Planned,
            /// An increment's or append's answer carries its cells
            /// (`setReturnResults`).
            returns: bool,
        }
        struct PlannedRegion {
            target: Result<std::sync::Arc<meta::RegionView>, RpcError>,
            atomic: bool,
            condition: Option<pb::Condition>,
            actions: Vec<PlannedAction>,
        }
        let nonce_group = req.nonce_group;
        let mut regions = Vec::with_capacity(req.region_action.len());
        for ra in req.region_action {
            let target = match self.resolve(&ra.region).await {
                Ok(Target::Region(v)) => Ok(v),
                Ok(Target::Meta) => Err(RpcError::invalid(
                    "batches on hbase:meta are not served by Shoal",
                )),
                Err(e) => Err(e),
            };
            let mut actions = Vec::with_capacity(ra.action.len());
            for a in ra.action {
                let index = a.index.unwrap_or(0);
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
                let returns = a.mutation.as_ref().is_none_or(convert::returns_results);
                actions.push(PlannedAction {
                    index,
                    plan,
                    returns,
                });
            }
            regions.push(PlannedRegion {
                target,
                atomic: ra.atomic.unwrap_or(false),
                condition: ra.condition,
                actions,
            });
        }
        #[allow(deprecated)]
        let request_condition = req.condition;
        if let Some(c) = request_condition
            && let Some(first) = regions.first_mut()
            && first.condition.is_none()
        {
            // Older clients put a RowMutations' condition on the request.
            first.condition = Some(c);
        }

        let mut answers = Vec::with_capacity(regions.len());
        for region in regions {
            let view = match region.target {
                Ok(v) => v,
                Err(e) => {
                    answers.push(pb::RegionActionResult {
                        exception: Some(exception_pair(&e)),
                        ..Default::default()
                    });
                    continue;
                }
            };
            // A condition makes the region action one checkAndMutate (of
            // its one mutation, or of its RowMutations), as in HBase.
            if region.atomic || region.condition.is_some() {
                let actions = region.actions.into_iter().map(|a| (a.index, a.plan));
                answers.push(
                    self.atomic(&view, region.condition, actions.collect(), w)
                        .await?,
                );
                continue;
            }
            // Not atomic: puts and deletes go through one batch (one WAL
            // append per region), gets run side by side.
            let mut results: Vec<Option<Result<Answer, RpcError>>> =
                Vec::with_capacity(region.actions.len());
            let mut batch = Vec::new();
            let mut batch_at = Vec::new();
            let mut reads = Vec::new();
            let mut others = Vec::new();
            for (i, a) in region.actions.iter().enumerate() {
                results.push(None);
                match &a.plan {
                    Planned::Row(rm) if view.holds(&rm.row) => {
                        batch.push(rm.clone());
                        batch_at.push(i);
                    }
                    Planned::Row(_) => {
                        results[i] = Some(Err(RpcError::not_serving(
                            "row is outside the region named",
                        )))
                    }
                    Planned::Get(spec) => reads.push((i, spec)),
                    Planned::Failed(e) => results[i] = Some(Err(e.clone())),
                    Planned::Increment(..) | Planned::Append(..) => others.push(i),
                }
            }
            let access = self.access();
            if !batch.is_empty() {
                match access.mutate_many(&view.table, batch).await {
                    Ok(each) => {
                        for (i, r) in batch_at.into_iter().zip(each) {
                            results[i] = Some(
                                r.map(|()| Answer::Cells(Vec::new()))
                                    .map_err(RpcError::from),
                            );
                        }
                    }
                    Err(e) => {
                        let e = RpcError::from(e);
                        for i in batch_at {
                            results[i] = Some(Err(e.clone()));
                        }
                    }
                }
            }
            let target = Target::Region(view.clone());
            let got = futures::future::join_all(
                reads.iter().map(|(_, spec)| self.read_row(&target, spec)),
            )
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
            for i in others {
                let r = match &region.actions[i].plan {
                    Planned::Increment(row, cols, nonce) => {
                        self.increment(&view.table, row.clone(), cols.clone(), *nonce)
                            .await
                    }
                    Planned::Append(row, cols, nonce) => {
                        self.append(&view.table, row.clone(), cols.clone(), *nonce)
                            .await
                    }
                    _ => continue,
                };
                // setReturnResults(false): HBase answers an empty result.
                let returns = region.actions[i].returns;
                results[i] = Some(r.map(|c| Answer::Cells(if returns { c } else { Vec::new() })));
            }
            let mut out = pb::RegionActionResult::default();
            for (a, r) in region.actions.iter().zip(results) {
                let r = r.unwrap_or_else(|| Err(RpcError::invalid("action was not run")));
                if let Err(e) = &r
                    && e.whole_call
                {
                    return Err(e.clone());
                }
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
                    Err(e) => pb::ResultOrException {
                        index: Some(a.index),
                        exception: Some(exception_pair(&e)),
                        ..Default::default()
                    },
                });
            }
            answers.push(out);
        }
        Ok(pb::MultiResponse {
            region_action_result: answers,
            ..Default::default()
        })
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

    /// `Scan`: opens a scanner on a region (and answers its first rows),
    /// answers the next rows of an open one, or closes it.
    pub(super) async fn scan(
        &self,
        req: pb::ScanRequest,
        w: &mut ResultWriter,
    ) -> Result<pb::ScanResponse, RpcError> {
        let wanted = req.number_of_rows.unwrap_or(0) as usize;
        let (id, lease, opened) = match req.scanner_id {
            Some(id) => {
                if req.close_scanner.unwrap_or(false) && wanted == 0 {
                    self.scanners.close(id);
                    return Ok(pb::ScanResponse {
                        scanner_id: Some(id),
                        more_results: Some(false),
                        ..Default::default()
                    });
                }
                (id, self.scanners.get(id)?, false)
            }
            None => {
                let region = req
                    .region
                    .as_ref()
                    .ok_or_else(|| RpcError::invalid("a scan open without a region"))?;
                let scan = req
                    .scan
                    .as_ref()
                    .ok_or_else(|| RpcError::invalid("a scan open without a Scan"))?;
                let state = self.open_scan(region, scan).await?;
                let (id, lease) = self.scanners.open(state)?;
                (id, lease, true)
            }
        };
        let mut st = lease.lock().await;
        if !opened && let Some(seq) = req.next_call_seq {
            if seq != st.next_seq {
                let expected = st.next_seq;
                drop(st);
                self.scanners.close(id);
                return Err(RpcError::fatal(
                    errors::OUT_OF_ORDER,
                    format!(
                        "Expected nextCallSeq: {expected} But the nextCallSeq got from client: {seq}; request={id}"
                    ),
                ));
            }
            st.next_seq += 1;
        }
        if let Some(limit) = req.limit_of_rows.filter(|l| *l > 0) {
            st.rows_left = Some(st.rows_left.map_or(limit as u64, |l| l.min(limit as u64)));
        }
        let mut resp = pb::ScanResponse {
            scanner_id: Some(id),
            ttl: Some(self.scanners.ttl_ms()),
            ..Default::default()
        };
        let max_bytes = st.max_result_bytes;
        // A client that takes heartbeats gets an answer within the
        // heartbeat interval even while a filtered scan finds nothing; one
        // that does not waits for rows or the region's end.
        let heartbeats = req.client_handles_heartbeats.unwrap_or(false);
        let started = std::time::Instant::now();
        let budget = || {
            if heartbeats {
                self.heartbeat.saturating_sub(started.elapsed())
            } else {
                std::time::Duration::from_secs(24 * 3600)
            }
        };
        let mut bytes = 0u64;
        let mut taken = 0usize;
        let mut batch: Vec<(Vec<Cell>, bool)> = Vec::new();
        let mut failed = None;
        let mut ended = false;
        while taken < wanted && bytes < max_bytes && st.rows_left != Some(0) {
            let chunk = match st.next(budget()).await {
                Ok(Next::Row(c)) => c,
                Ok(Next::End) => {
                    ended = true;
                    break;
                }
                Ok(Next::Pending) => break,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            };
            // A chunk is partial when the next one is the same row (a
            // row's chunks are queued together).
            let wait = budget().max(std::time::Duration::from_millis(20));
            let partial = match st.peek(wait).await {
                Ok(Some(next)) => next.row == chunk.row,
                Ok(None) => false,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            };
            bytes += chunk
                .cells
                .iter()
                .map(|c| {
                    (c.row.len() + c.family.len() + c.qualifier.len() + c.value.len() + 24) as u64
                })
                .sum::<u64>();
            if !partial && let Some(left) = st.rows_left.as_mut() {
                *left = left.saturating_sub(1);
            }
            taken += 1;
            batch.push((chunk.cells, partial));
            if failed.is_some() {
                break;
            }
        }
        if let Some(e) = failed {
            drop(st);
            self.scanners.close(id);
            return Err(e.into());
        }
        // A call that asked for no rows (an open) does not wait to know.
        let more_in_region = !ended
            && st.rows_left != Some(0)
            && (wanted == 0
                || match st.peek(budget()).await {
                    Ok(Some(_)) => true,
                    Ok(None) => !st.ended,
                    Err(e) => {
                        drop(st);
                        self.scanners.close(id);
                        return Err(e.into());
                    }
                });
        // HBase reads no row past a call's limits: when only the look
        // ahead found the region ended by a done filter, HBase would not
        // know it yet, and its next call (empty, filter done) ends the whole
        // scan. Answer as HBase: more in the region.
        let more_in_region = more_in_region
            || (!ended
                && st.ended
                && !batch.is_empty()
                && st.rows_left != Some(0)
                && st.filter_done());
        let heartbeat = heartbeats && more_in_region && batch.is_empty() && wanted > 0;
        // A filter that is done ends its region's scan: HBase's client goes
        // on with the next region (and a fresh filter), unless the call
        // that found it done answers no row — then HBase's region server
        // ends the whole scan (`isFilterDone() && results.isEmpty()`).
        let filter_ended = (ended || st.ended) && batch.is_empty() && st.filter_done();
        let whole_scan_done = st.rows_left == Some(0) || filter_ended;
        let close = !more_in_region || req.close_scanner.unwrap_or(false);
        drop(st);
        for (cells, partial) in &batch {
            let r = w.result(cells);
            if w.cell_blocks {
                resp.cells_per_result.push(cells.len() as u32);
            } else {
                resp.results.push(r);
            }
            resp.partial_flag_per_result.push(*partial);
        }
        resp.more_results_in_region = Some(more_in_region);
        resp.more_results = Some(!whole_scan_done);
        resp.heartbeat_message = Some(heartbeat);
        if close {
            self.scanners.close(id);
        }
        Ok(resp)
    }

    /// A new scanner's state: the host scan of the region's part of the
    /// client's range, or the meta rows in range.
    async fn open_scan(
        &self,
        region: &pb::RegionSpecifier,
        scan: &pb::Scan,
    ) -> Result<ScannerState, RpcError> {
        let target = self.resolve(region).await?;
        let (low, high) = convert::scan_bounds(scan);
        let max_result_bytes = scan
            .max_result_size
            .filter(|n| *n > 0)
            .unwrap_or(DEFAULT_MAX_RESULT_BYTES);
        let empty = |max_result_bytes| ScannerState {
            source: Source::Rows(VecDeque::new()),
            peeked: None,
            next_seq: 0,
            rows_left: None,
            max_result_bytes,
            ended: false,
        };
        match target {
            Target::Meta => {
                let (shoal_scan, filter) = convert::scan(scan, low.clone(), high.clone())?;
                let table = meta::table_of_key(&low)
                    .filter(|t| Some(*t) == meta::table_of_key(&high))
                    .map(<[u8]>::to_vec);
                let tables = self.meta_tables(table.as_deref()).await;
                let mut run = filter.map(|f| FilterState::new(&f, shoal_scan.reverse));
                let mut rows: Vec<RowResult> = meta::rows(&self.access(), &tables, &self.me)
                    .into_iter()
                    .filter(|r| {
                        meta::order(&r.row, &low).is_ge()
                            && (high.is_empty() || meta::order(&r.row, &high).is_lt())
                    })
                    .collect();
                if shoal_scan.reverse {
                    rows.reverse();
                }
                let mut out = VecDeque::new();
                for r in rows {
                    let cells = select(r.cells, &shoal_scan.columns);
                    if cells.is_empty() {
                        continue;
                    }
                    let cells = match run.as_mut() {
                        None => cells,
                        Some(run) => {
                            let mut stop = false;
                            match run.apply_to_row(&r.row, cells, &mut stop) {
                                Some(c) if !c.is_empty() => {
                                    if stop {
                                        out.push_back(RowResult {
                                            row: r.row,
                                            cells: c,
                                        });
                                        break;
                                    }
                                    c
                                }
                                _ if stop => break,
                                _ => continue,
                            }
                        }
                    };
                    out.push_back(RowResult { row: r.row, cells });
                }
                Ok(ScannerState {
                    source: Source::Rows(out),
                    ..empty(max_result_bytes)
                })
            }
            Target::Region(view) => {
                // The Scan is read (and refused as HBase refuses it) even
                // when its range misses the region.
                let (mut shoal_scan, filter) = convert::scan(scan, low.clone(), high.clone())?;
                let Some((low, high)) = convert::clamp(low, high, &view.start, &view.end) else {
                    return Ok(empty(max_result_bytes));
                };
                shoal_scan.start_row = low;
                shoal_scan.stop_row = high;
                let stream = self
                    .access()
                    .scan_filtered(&view.table, shoal_scan, filter)?;
                Ok(ScannerState {
                    source: Source::Stream(Feed::start(stream)),
                    ..empty(max_result_bytes)
                })
            }
        }
    }
}
