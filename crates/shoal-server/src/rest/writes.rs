//! Writing rows: `PUT`/`POST /<table>/<row>[/<column>]` with a `CellSet`
//! (each cell's column and row default to the path's) or a bare
//! `application/octet-stream` value (`X-Row`, `X-Column`, `X-Timestamp`
//! headers override the path); `?check=put` and `?check=delete` for
//! HBase's check-and-put and check-and-delete (the last cell of the body is
//! the check: its column must hold exactly its value; 304 when it does
//! not); `?check=append` and `?check=increment` (`counters`);
//! `DELETE /<table>/<row>[/<columns>][/<timestamp>]`.

use super::counters::{self, Counter};
use super::fault::RestError;
use super::model::{CellModel, CellSetModel, LATEST, RowModel};
use super::representation::{CELLS, Repr};
use super::request::RestRequest;
use super::respond;
use super::row_spec::{RowSpec, split_column};
use super::rows::spec_of;
use super::{json, protobuf, xml};
use crate::host::Access;
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use shoal_storage::region::{CheckAndMutate, CompareOp, RowMutation, RowOp, TimeRange};

/// `PUT` or `POST` on a row.
pub async fn put(
    h: Access<'_>,
    table: &str,
    path: &str,
    req: &RestRequest,
) -> Result<Response, RestError> {
    let spec = spec_of(path, req)?;
    let check = req.param("check")?.unwrap_or_default().to_ascii_lowercase();
    let repr = req.content(CELLS)?;
    if repr == Repr::Binary {
        if !check.is_empty() {
            return Err(RestError::bad(
                "check=... needs a cell set body, not a bare value",
            ));
        }
        let set = binary_cell_set(&spec, req)?;
        return put_rows(h, table, &spec, set).await;
    }
    let set = read_cell_set(repr, &req.body)?;
    match check.as_str() {
        "" => put_rows(h, table, &spec, set).await,
        "put" => check_and_put(h, table, &spec, set).await,
        "delete" => check_and_delete(h, table, &spec, set).await,
        "append" => counters::run(h, table, &spec, set, Counter::Append, req).await,
        "increment" => counters::run(h, table, &spec, set, Counter::Increment, req).await,
        other => Err(RestError::bad(format!("Invalid check value '{other}'"))),
    }
}

/// The cell set in a body of representation `repr`.
fn read_cell_set(repr: Repr, body: &[u8]) -> Result<CellSetModel, RestError> {
    match repr {
        Repr::Json => json::cell_set(body),
        Repr::Protobuf => protobuf::cell_set(body),
        _ => xml::cell_set(body),
    }
}

/// A bare value as a one-cell set: row and column from the path or the
/// `X-Row` / `X-Column` headers, timestamp from `X-Timestamp`.
fn binary_cell_set(spec: &RowSpec, req: &RestRequest) -> Result<CellSetModel, RestError> {
    let row = req
        .header("X-Row")
        .map(|r| Bytes::copy_from_slice(r.as_bytes()))
        .unwrap_or_else(|| spec.row.clone());
    let column = req
        .header("X-Column")
        .map(|c| Bytes::copy_from_slice(c.as_bytes()))
        .or_else(|| spec.columns.first().cloned())
        .ok_or_else(|| {
            RestError::bad("Column found to be null: name it in the path or X-Column")
        })?;
    let timestamp = match req.header("X-Timestamp") {
        None => LATEST,
        Some(t) => t
            .trim()
            .parse()
            .map_err(|_| RestError::bad(format!("X-Timestamp {t:?} is not a number")))?,
    };
    Ok(CellSetModel {
        rows: vec![RowModel {
            key: Some(row),
            cells: vec![CellModel {
                column: Some(column),
                timestamp,
                value: req.body.clone(),
            }],
        }],
    })
}

fn ts(t: i64) -> Option<i64> {
    (t != LATEST).then_some(t)
}

/// A cell's family and qualifier (its column, or the path's `i`-th).
fn column_parts(
    cell: &CellModel,
    spec: &RowSpec,
    i: usize,
) -> Result<(Bytes, Option<Bytes>), RestError> {
    let column = cell
        .column
        .clone()
        .or_else(|| spec.columns.get(i).cloned())
        .ok_or_else(|| RestError::bad("Column found to be null"))?;
    let (family, qualifier) = split_column(&column);
    if family.is_empty() {
        return Err(RestError::bad("a cell's column names no family"));
    }
    Ok((family, qualifier))
}

/// A put cell: `family:qualifier` required.
fn put_op(cell: &CellModel, spec: &RowSpec, i: usize) -> Result<RowOp, RestError> {
    let (family, qualifier) = column_parts(cell, spec, i)?;
    let qualifier =
        qualifier.ok_or_else(|| RestError::bad("a put cell's column must be family:qualifier"))?;
    Ok(RowOp::Put {
        family,
        qualifier,
        timestamp: ts(cell.timestamp),
        value: cell.value.clone(),
    })
}

/// The row a body row writes (its key, or the path's).
fn row_key(row: &RowModel, spec: &RowSpec) -> Result<Bytes, RestError> {
    match &row.key {
        Some(k) => Ok(k.clone()),
        None if !spec.row.is_empty() => Ok(spec.row.clone()),
        None => Err(RestError::bad("Row key not specified")),
    }
}

/// Puts every row of `set`.
async fn put_rows(
    h: Access<'_>,
    table: &str,
    spec: &RowSpec,
    set: CellSetModel,
) -> Result<Response, RestError> {
    let mut mutations = Vec::with_capacity(set.rows.len());
    for row in &set.rows {
        let mut m = RowMutation::new(row_key(row, spec)?);
        for (i, cell) in row.cells.iter().enumerate() {
            m.ops.push(put_op(cell, spec, i)?);
        }
        if !m.ops.is_empty() {
            mutations.push(m);
        }
    }
    match mutations.len() {
        0 => {}
        1 => {
            let m = mutations.remove(0);
            h.mutate(table, m).await?;
        }
        _ => {
            for outcome in h.mutate_many(table, mutations).await? {
                outcome?;
            }
        }
    }
    Ok(respond::empty(StatusCode::OK))
}

/// The one row of a check request, its key, and its cells with the check
/// cell last split off.
fn check_row<'a>(
    set: &'a CellSetModel,
    spec: &RowSpec,
) -> Result<(Bytes, &'a [CellModel], &'a CellModel), RestError> {
    let [row] = set.rows.as_slice() else {
        return Err(RestError::bad("Number of rows specified is not 1"));
    };
    let key = row_key(row, spec)?;
    let Some((check, rest)) = row.cells.split_last() else {
        return Err(RestError::bad("no cell to check"));
    };
    Ok((key, rest, check))
}

/// `?check=put`: the cells before the last are put if the last cell's
/// column holds its value; one of them must write that column.
async fn check_and_put(
    h: Access<'_>,
    table: &str,
    spec: &RowSpec,
    set: CellSetModel,
) -> Result<Response, RestError> {
    let (key, puts, check) = check_row(&set, spec)?;
    if puts.is_empty() {
        return Err(RestError::bad(
            "Either row key is null or no data found for columns specified",
        ));
    }
    let (family, qualifier) = column_parts(check, spec, puts.len())?;
    let qualifier = qualifier
        .filter(|q| !q.is_empty())
        .ok_or_else(|| RestError::bad("Column incorrectly specified"))?;
    let mut m = RowMutation::new(key);
    let mut writes_checked = false;
    for (i, cell) in puts.iter().enumerate() {
        let op = put_op(cell, spec, i)?;
        if let RowOp::Put {
            family: f,
            qualifier: q,
            ..
        } = &op
        {
            writes_checked |= *f == family && *q == qualifier;
        }
        m.ops.push(op);
    }
    if !writes_checked {
        return Err(RestError::bad("The column to put and check do not match"));
    }
    checked(h, table, family, qualifier, check.value.clone(), m).await
}

/// `?check=delete`: the cells before the last (a family or a column
/// version each; none: the checked column, all versions) are deleted if
/// the last cell's column holds its value.
async fn check_and_delete(
    h: Access<'_>,
    table: &str,
    spec: &RowSpec,
    set: CellSetModel,
) -> Result<Response, RestError> {
    let (key, deletes, check) = check_row(&set, spec)?;
    let (family, qualifier) = match &check.column {
        Some(_) => column_parts(check, spec, usize::MAX)?,
        None => column_parts(check, spec, 0)
            .map_err(|_| RestError::bad("Column not specified for check"))?,
    };
    let qualifier =
        qualifier.ok_or_else(|| RestError::bad("Column to check incorrectly specified"))?;
    let mut m = RowMutation::new(key);
    for cell in deletes {
        let (f, q) = column_parts(cell, spec, usize::MAX)?;
        m.ops.push(match q {
            None => RowOp::DeleteFamily {
                family: f,
                timestamp: ts(cell.timestamp),
            },
            Some(q) => RowOp::DeleteVersion {
                family: f,
                qualifier: q,
                timestamp: ts(cell.timestamp),
            },
        });
    }
    if m.ops.is_empty() {
        m.ops.push(RowOp::DeleteColumn {
            family: family.clone(),
            qualifier: qualifier.clone(),
            timestamp: None,
        });
    }
    checked(h, table, family, qualifier, check.value.clone(), m).await
}

/// Applies `m` if `family:qualifier` holds `value`: 200, or 304.
async fn checked(
    h: Access<'_>,
    table: &str,
    family: Bytes,
    qualifier: Bytes,
    value: Bytes,
    m: RowMutation,
) -> Result<Response, RestError> {
    let applied = h
        .check_and_mutate(
            table,
            CheckAndMutate {
                family,
                qualifier,
                op: CompareOp::Equal,
                value,
                mutation: m,
                time_range: TimeRange::ALL,
                filter: None,
            },
        )
        .await?;
    Ok(if applied {
        respond::empty(StatusCode::OK)
    } else {
        respond::with_body(
            StatusCode::NOT_MODIFIED,
            "text/plain",
            "Value not Modified\r\n",
        )
    })
}

/// `DELETE` on a row: the whole row, families or columns (all versions),
/// up to the path's timestamp; with `?check=delete` and a cell set body,
/// a check-and-delete.
pub async fn delete(
    h: Access<'_>,
    table: &str,
    path: &str,
    req: &RestRequest,
) -> Result<Response, RestError> {
    let spec = spec_of(path, req)?;
    if !spec.is_single_row() {
        return Err(RestError::bad(
            "a DELETE names one row, not a range or prefix",
        ));
    }
    match req.param("check")?.as_deref() {
        None | Some("") => {}
        Some(c) if c.eq_ignore_ascii_case("delete") => {
            let set = read_cell_set(req.content(CELLS)?, &req.body)?;
            return check_and_delete(h, table, &spec, set).await;
        }
        Some(other) => return Err(RestError::bad(format!("Invalid check value '{other}'"))),
    }
    h.mutate(table, delete_of(&spec)?).await?;
    Ok(respond::empty(StatusCode::OK))
}

/// The delete a row spec names (HBase's `RowResource.delete`).
fn delete_of(spec: &RowSpec) -> Result<RowMutation, RestError> {
    let t = spec.has_timestamp().then_some(spec.end_time);
    let mut m = RowMutation::new(spec.row.clone());
    for column in &spec.columns {
        let (family, qualifier) = split_column(column);
        if family.is_empty() {
            return Err(RestError::bad("a column names no family"));
        }
        m.ops.push(match qualifier {
            None => RowOp::DeleteFamily {
                family,
                timestamp: t,
            },
            Some(qualifier) => RowOp::DeleteColumn {
                family,
                qualifier,
                timestamp: t,
            },
        });
    }
    if m.ops.is_empty() {
        m.ops.push(RowOp::DeleteRow { timestamp: t });
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(p: &str) -> RowSpec {
        RowSpec::parse(p, None).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn deletes_follow_the_path() {
        let m = delete_of(&spec("r")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.ops, vec![RowOp::DeleteRow { timestamp: None }]);
        let m = delete_of(&spec("r/cf:a,g/100")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            m.ops,
            vec![
                RowOp::DeleteColumn {
                    family: Bytes::from("cf"),
                    qualifier: Bytes::from("a"),
                    timestamp: Some(100)
                },
                RowOp::DeleteFamily {
                    family: Bytes::from("g"),
                    timestamp: Some(100)
                },
            ]
        );
    }

    #[test]
    fn put_cells_need_a_qualified_column() {
        let s = spec("r/cf:a");
        let cell = CellModel {
            column: None,
            timestamp: LATEST,
            value: Bytes::from("v"),
        };
        assert!(matches!(
            put_op(&cell, &s, 0),
            Ok(RowOp::Put {
                timestamp: None,
                ..
            })
        ));
        assert!(put_op(&cell, &s, 1).is_err());
        let bare = CellModel {
            column: Some(Bytes::from("cf")),
            ..cell
        };
        assert!(put_op(&bare, &s, 0).is_err());
    }

    #[test]
    fn check_rows_need_one_row_and_a_check_cell() {
        let s = spec("r");
        assert!(check_row(&CellSetModel::default(), &s).is_err());
        let empty_row = CellSetModel {
            rows: vec![RowModel::default()],
        };
        assert!(check_row(&empty_row, &s).is_err());
    }
}
