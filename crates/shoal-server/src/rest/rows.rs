//! Reading rows: `GET /<table>/<row spec>` (one row, or the rows of a
//! `start,end` range or `prefix*` glob, with columns, a time range and
//! `?v=` versions) and `GET /<table>/multiget?row=...&row=...`. Nothing
//! found is 404, as in HBase's gateway. `application/octet-stream` answers
//! one cell's value bare, with its timestamp in `X-Timestamp`.

use super::Limits;
use super::cells;
use super::fault::RestError;
use super::model::CellSetModel;
use super::representation::{CELLS, MODELS, Repr};
use super::request::RestRequest;
use super::respond;
use super::row_spec::RowSpec;
use crate::host::Access;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use shoal_storage::region::{Get, RowResult, Scan, TimeRange};

/// The row spec of `path` with the request's `?v=` and key encoding.
pub fn spec_of(path: &str, req: &RestRequest) -> Result<RowSpec, RestError> {
    let encoding = req
        .header("Encoding")
        .map(str::to_string)
        .or(req.param("e")?);
    let mut spec = RowSpec::parse(path, encoding.as_deref())?;
    if let Some(v) = req.param("v")? {
        let n: i64 = v
            .trim()
            .parse()
            .map_err(|_| RestError::bad(format!("v={v:?} is not a number of versions")))?;
        spec.max_versions = u32::try_from(n.max(1)).unwrap_or(u32::MAX);
    }
    Ok(spec)
}

/// The versions a spec asks for.
fn time_range(spec: &RowSpec) -> TimeRange {
    TimeRange {
        min: spec.start_time,
        max: spec.end_time,
    }
}

/// The get of a one-row spec.
pub fn get_of(spec: &RowSpec) -> Result<Get, RestError> {
    Ok(Get {
        columns: cells::columns(&spec.columns)?,
        time_range: time_range(spec),
        max_versions: spec.max_versions,
        ..Get::new(spec.row.clone())
    })
}

/// `GET /<table>/<row spec>`.
pub async fn get(
    h: Access<'_>,
    limits: &Limits,
    table: &str,
    path: &str,
    req: &RestRequest,
) -> Result<Response, RestError> {
    let repr = req.accept(CELLS)?;
    let spec = spec_of(path, req)?;
    if repr == Repr::Binary && spec.columns.len() != 1 {
        return Err(RestError::bad(
            "an application/octet-stream GET needs exactly one column in the path; ask for \
             text/xml, application/json or application/x-protobuf to read the whole row",
        ));
    }
    let rows = if spec.is_single_row() {
        vec![h.get(table, get_of(&spec)?).await?]
    } else {
        range(h, limits, table, &spec).await?
    };
    let set = cells::cell_set(rows);
    if set.rows.is_empty() {
        return Err(RestError::not_found("no cells found"));
    }
    if set.cell_count() > limits.max_cells {
        return Err(too_many_cells(limits));
    }
    Ok(match repr {
        Repr::Binary => binary(&set),
        r => respond::model(r, &set),
    })
}

fn too_many_cells(limits: &Limits) -> RestError {
    RestError::bad(format!(
        "the answer would hold more than {} cells (rest.max_cells_per_response): read it \
         through a scanner",
        limits.max_cells
    ))
}

/// The first cell's value, bare.
fn binary(set: &CellSetModel) -> Response {
    let Some(cell) = set.rows.first().and_then(|r| r.cells.first()) else {
        return respond::empty(StatusCode::NOT_FOUND);
    };
    let mut r = respond::with_body(
        StatusCode::OK,
        Repr::Binary.media_type(),
        cell.value.clone(),
    );
    if let Ok(v) = HeaderValue::from_str(&cell.timestamp.to_string()) {
        r.headers_mut().insert("X-Timestamp", v);
    }
    r
}

/// The rows of a range spec, at most `rest.max_rows_per_response`.
async fn range(
    h: Access<'_>,
    limits: &Limits,
    table: &str,
    spec: &RowSpec,
) -> Result<Vec<RowResult>, RestError> {
    let scan = Scan {
        start_row: spec.row.clone(),
        stop_row: spec.end_row.clone().unwrap_or_default(),
        columns: cells::columns(&spec.columns)?,
        time_range: time_range(spec),
        max_versions: spec.max_versions,
        limit: limits.max_rows + 1,
        ..Scan::all()
    };
    let mut stream = h.scan_filtered(table, scan, None)?;
    let mut rows = Vec::new();
    while let Some(r) = stream.next().await? {
        rows.push(r);
        if rows.len() > limits.max_rows {
            return Err(RestError::bad(format!(
                "the range holds more than {} rows (rest.max_rows_per_response): read it \
                 through a scanner",
                limits.max_rows
            )));
        }
    }
    Ok(rows)
}

/// `GET /<table>/multiget?row=<spec>&row=<spec>[&v=n]`: the rows found,
/// in the order asked.
pub async fn multi_get(
    h: Access<'_>,
    limits: &Limits,
    table: &str,
    req: &RestRequest,
) -> Result<Response, RestError> {
    let repr = req.accept(MODELS)?;
    let specs: Vec<&str> = req.params("row").collect();
    if specs.is_empty() {
        return Err(RestError::bad("multiget needs at least one row=..."));
    }
    if specs.len() > limits.max_rows {
        return Err(RestError::bad(format!(
            "multiget asks for {} rows; at most {} (rest.max_rows_per_response)",
            specs.len(),
            limits.max_rows
        )));
    }
    let gets = specs
        .iter()
        .map(|s| spec_of(s, req).and_then(|spec| get_of(&spec)))
        .collect::<Result<Vec<_>, _>>()?;
    let rows = h.multi_get(table, gets).await?;
    let set = cells::cell_set(rows);
    if set.rows.is_empty() {
        return Err(RestError::not_found("none of the rows was found"));
    }
    if set.cell_count() > limits.max_cells {
        return Err(too_many_cells(limits));
    }
    Ok(respond::model(repr, &set))
}
