//! `ClientService`: Get, Mutate, Multi and Scan as HBase's client sends
//! them, each addressed to a region by name. A name this server cannot
//! place answers `NotServingRegionException`, so the client reads
//! `hbase:meta` again; a row is then served by whichever Shoal region
//! holds it now (the host routes by row), so a split never fails a call.

use super::convert::{self, Mutation, ResultWriter};
use super::errors::RpcError;
use super::meta;
use super::{NativeRpc, Target};
use bytes::Bytes;
use shoal_proto::hbase as pb;
use shoal_storage::cell::Cell;
use shoal_storage::region::filter::{Filter, FilterState};
use shoal_storage::region::{Columns, Nonce, RowResult};
use std::sync::Arc;

/// One call's inputs beyond its message: the cell block's cells, in order.
pub struct CallCells {
    /// The decoded cell block.
    pub cells: std::vec::IntoIter<super::cells::KeyValue>,
}

/// A virtual (already resolved) row through HBase's filter protocol.
pub(super) fn filter_meta_row(filter: &Option<Arc<Filter>>, row: RowResult) -> Vec<Cell> {
    match filter {
        None => row.cells,
        Some(f) => FilterState::new(f, false)
            .apply_to_row(&row.row, row.cells, &mut false)
            .unwrap_or_default(),
    }
}

pub(super) fn select(cells: Vec<Cell>, columns: &Columns) -> Vec<Cell> {
    cells
        .into_iter()
        .filter(|c| columns.wants(&c.family, &c.qualifier))
        .collect()
}

/// An error as the name/message pair a region action or result carries.
pub(super) fn exception_pair(e: &RpcError) -> pb::NameBytesPair {
    pb::NameBytesPair {
        name: e.class.to_string(),
        value: Some(Bytes::from(e.message.clone())),
    }
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
    pub(super) async fn read_row(
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
    pub(super) async fn increment(
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
    pub(super) async fn append(
        &self,
        table: &str,
        row: Bytes,
        cols: Vec<(Bytes, Bytes, Bytes)>,
        nonce: Option<Nonce>,
    ) -> Result<Vec<Cell>, RpcError> {
        let changed = self.access().append(table, row, cols, nonce).await?;
        Ok(changed.cells)
    }
}
