//! `?check=append` and `?check=increment` on a row, as HBase's gateway
//! takes them: one row whose cells name the columns (or the path's) and
//! carry the suffix to append, or the amount to add as decimal text. With
//! `?rr=true` the new cells are answered as a cell set (304 if none).

use super::cells;
use super::fault::RestError;
use super::model::{CellModel, CellSetModel};
use super::representation::{MODELS, Repr};
use super::request::RestRequest;
use super::respond;
use super::row_spec::{RowSpec, split_column};
use crate::host::Access;
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use shoal_storage::cell::Cell;

/// Append or increment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// `check=append`.
    Append,
    /// `check=increment`.
    Increment,
}

/// A column to change: family, qualifier, and the cell saying by what.
type Change<'a> = (Bytes, Bytes, &'a CellModel);

/// The row and its changes.
fn columns<'a>(
    set: &'a CellSetModel,
    spec: &RowSpec,
) -> Result<(Bytes, Vec<Change<'a>>), RestError> {
    let [row] = set.rows.as_slice() else {
        return Err(RestError::bad("Number of rows specified is not 1"));
    };
    let key = match &row.key {
        Some(k) => k.clone(),
        None if !spec.row.is_empty() => spec.row.clone(),
        None => return Err(RestError::bad("Row key found to be null")),
    };
    let mut out = Vec::with_capacity(row.cells.len());
    for (i, cell) in row.cells.iter().enumerate() {
        let column = cell
            .column
            .clone()
            .or_else(|| spec.columns.get(i).cloned())
            .ok_or_else(|| RestError::bad("Column found to be null"))?;
        let (family, qualifier) = split_column(&column);
        let qualifier = qualifier
            .filter(|_| !family.is_empty())
            .ok_or_else(|| RestError::bad("Column incorrectly specified"))?;
        out.push((family, qualifier, cell));
    }
    if out.is_empty() {
        return Err(RestError::bad("no column to change"));
    }
    Ok((key, out))
}

/// Runs an append or increment of the body's one row.
pub async fn run(
    h: Access<'_>,
    table: &str,
    spec: &RowSpec,
    set: CellSetModel,
    kind: Counter,
    req: &RestRequest,
) -> Result<Response, RestError> {
    let (row, cols) = columns(&set, spec)?;
    let written: Vec<Cell> = match kind {
        Counter::Append => {
            let cols = cols
                .into_iter()
                .map(|(f, q, c)| (f, q, c.value.clone()))
                .collect();
            h.append(table, row.clone(), cols, None).await?.cells
        }
        Counter::Increment => {
            let cols =
                cols.into_iter()
                    .map(|(f, q, c)| {
                        let text = String::from_utf8_lossy(&c.value);
                        text.trim().parse::<i64>().map(|n| (f, q, n)).map_err(|_| {
                            RestError::bad(format!("{text:?} is not an amount to add"))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
            h.increment(table, row.clone(), cols, None).await?.cells
        }
    };
    let returned = req
        .param("rr")?
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if !returned {
        return Ok(respond::empty(StatusCode::OK));
    }
    let answer = cells::cell_set([shoal_storage::region::RowResult {
        row,
        cells: written,
    }]);
    if answer.rows.is_empty() {
        return Ok(respond::with_body(
            StatusCode::NOT_MODIFIED,
            "text/plain",
            "Append return empty.\r\n",
        ));
    }
    let repr = req.accept(MODELS).unwrap_or(Repr::Xml);
    Ok(respond::model(repr, &answer))
}
