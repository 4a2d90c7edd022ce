//! Scans: stateful scanners (`PUT`/`POST /<table>/scanner` with a
//! `Scanner` model → 201 and its `Location`; `GET` that address for the
//! next page, 204 once done; `DELETE` it) and the stateless prefix scan
//! `GET /<table>/<prefix>*` with HBase's query parameters (`startrow`,
//! `endrow`, `column`, `limit`, `maxversions`, `batchsize`, `starttime`,
//! `endtime`, `cacheblocks`, `reversed`, and `filter` / `filter_b64` in
//! HBase's filter language).

use super::cells;
use super::fault::RestError;
use super::model::{CellSetModel, RowModel, ScannerModel};
use super::representation::{CELLS, MODELS, Repr};
use super::request::RestRequest;
use super::row_spec::url_decode;
use super::scanners::{ScanState, Scanners};
use super::{Limits, b64, filter, json, protobuf, respond, xml};
use crate::host::Access;
use crate::security::Caller;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use shoal_storage::cell::Cell;
use shoal_storage::region::filter::Filter;
use shoal_storage::region::{Scan, TimeRange};
use std::sync::Arc;

/// Versions asked for as HBase's int (0 or less, or MAX: all).
fn versions(v: i32) -> u32 {
    match v {
        i32::MAX => u32::MAX,
        v => u32::try_from(v).ok().filter(|v| *v > 0).unwrap_or(u32::MAX),
    }
}

/// The scan a scanner model asks for.
fn scan_of(m: &ScannerModel) -> Result<Scan, RestError> {
    Ok(Scan {
        start_row: m.start_row.clone(),
        stop_row: m.end_row.clone(),
        columns: cells::columns(&m.columns)?,
        time_range: TimeRange {
            min: m.start_time,
            max: m.end_time,
        },
        max_versions: versions(m.max_versions),
        cache_blocks: m.cache_blocks,
        ..Scan::all()
    })
}

/// `PUT`/`POST /<table>/scanner`: opens a scanner; 201 and its address.
pub async fn open(
    h: Access<'_>,
    scanners: &Scanners,
    limits: &Limits,
    table: &str,
    req: &RestRequest,
) -> Result<Response, RestError> {
    let model = match req.content(MODELS)? {
        Repr::Json => json::scanner(&req.body)?,
        Repr::Protobuf => protobuf::scanner(&req.body)?,
        _ => xml::scanner(&req.body)?,
    };
    let filter = model
        .filter
        .as_deref()
        .filter(|f| !f.trim().is_empty())
        .map(filter::parse)
        .transpose()?
        .map(Arc::new);
    let mut scan = scan_of(&model)?;
    // A row wider than a page comes from the region in chunks, so a
    // scanner never holds more than a page of it (the pages are the same:
    // they are cut by cells). Not with a filter that decides on whole rows,
    // which HBase refuses in a batched scan.
    if filter.as_ref().is_none_or(|f| !f.has_filter_row()) {
        scan.batch = limits.max_cells;
    }
    let stream = h.scan_filtered(table, scan, filter)?;
    let batch = usize::try_from(model.batch)
        .ok()
        .filter(|b| *b > 0)
        .unwrap_or(usize::MAX);
    let id = scanners.open(table, h.caller().user(), stream, batch)?;
    let location = match &req.location {
        Some(base) => format!("{base}/{id}"),
        None => format!("/{table}/scanner/{id}"),
    };
    let mut r = respond::empty(StatusCode::CREATED);
    if let Ok(v) = HeaderValue::from_str(&location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    Ok(r)
}

/// `GET /<table>/scanner/<id>[?n=rows][&c=cells]`: the next page (204 when
/// the scan is done).
pub async fn next(
    scanners: &Scanners,
    limits: &Limits,
    caller: &Caller,
    table: &str,
    id: &str,
    req: &RestRequest,
) -> Result<Response, RestError> {
    let repr = req.accept(CELLS)?;
    let open = scanners.find(table, caller.user(), id)?;
    let mut state = open.state.lock().await;
    let max_rows = match req.number("n", 0i64)? {
        n if n > 0 => usize::try_from(n)
            .unwrap_or(usize::MAX)
            .min(limits.max_rows),
        _ => limits.max_rows,
    };
    let max_cells = match req.number("c", 0i64)? {
        c if c > 0 => usize::try_from(c).unwrap_or(usize::MAX),
        _ => state.batch,
    }
    .min(limits.max_cells);
    let page = if repr == Repr::Binary {
        page(&mut state, 1, 1).await
    } else {
        page(&mut state, max_rows, max_cells).await
    };
    drop(state);
    scanners.touch(&open);
    let page = page?;
    if page.rows.is_empty() {
        return Ok(respond::empty(StatusCode::NO_CONTENT));
    }
    Ok(match repr {
        Repr::Binary => binary_cell(&page),
        r => respond::model(r, &page),
    })
}

/// The next cell of a scanner: a pending one, or the first of the next
/// row (None once the scan is done).
async fn next_cell(state: &mut ScanState) -> Result<Option<Cell>, RestError> {
    loop {
        if let Some(c) = state.pending.pop_front() {
            return Ok(Some(c));
        }
        if state.done {
            return Ok(None);
        }
        match state.stream.next().await? {
            Some(row) => state.pending.extend(row.cells),
            None => state.done = true,
        }
    }
}

/// Up to `max_rows` rows and `max_cells` cells (a row may stop inside and
/// go on in the next page), as HBase's `ScannerInstanceResource` pages.
async fn page(
    state: &mut ScanState,
    max_rows: usize,
    max_cells: usize,
) -> Result<CellSetModel, RestError> {
    let mut set = CellSetModel::default();
    let mut cells = 0usize;
    while cells < max_cells {
        let Some(cell) = next_cell(state).await? else {
            break;
        };
        let same_row = set
            .rows
            .last()
            .is_some_and(|r| r.key.as_deref() == Some(&cell.row[..]));
        if !same_row {
            if set.rows.len() == max_rows {
                state.pending.push_front(cell);
                break;
            }
            set.rows.push(RowModel {
                key: Some(cell.row.clone()),
                cells: Vec::new(),
            });
        }
        if let Some(row) = set.rows.last_mut() {
            row.cells.push(cells::cell_model(&cell));
        }
        cells += 1;
    }
    Ok(set)
}

/// One cell bare, its row, column (base64) and timestamp in headers.
fn binary_cell(page: &CellSetModel) -> Response {
    let Some((row, cell)) = page
        .rows
        .first()
        .and_then(|r| r.cells.first().map(|c| (r, c)))
    else {
        return respond::empty(StatusCode::NO_CONTENT);
    };
    let mut r = respond::with_body(
        StatusCode::OK,
        Repr::Binary.media_type(),
        cell.value.clone(),
    );
    let headers = [
        ("X-Row", b64::encode(row.key.as_deref().unwrap_or_default())),
        (
            "X-Column",
            b64::encode(cell.column.as_deref().unwrap_or_default()),
        ),
        ("X-Timestamp", cell.timestamp.to_string()),
    ];
    for (k, v) in headers {
        if let Ok(v) = HeaderValue::from_str(&v) {
            r.headers_mut().insert(k, v);
        }
    }
    r
}

/// `DELETE /<table>/scanner/<id>`.
pub fn close(
    scanners: &Scanners,
    caller: &Caller,
    table: &str,
    id: &str,
) -> Result<Response, RestError> {
    scanners.close(table, caller.user(), id)?;
    Ok(respond::empty(StatusCode::OK))
}

/// The filter of a prefix scan: the `filter` (or base64url `filter_b64`)
/// parameter in HBase's filter language, and the prefix's.
fn table_scan_filter(prefix: &Bytes, req: &RestRequest) -> Result<Option<Filter>, RestError> {
    let text = match (req.params("filter_b64").next(), req.param("filter")?) {
        (Some(b), _) => {
            let bytes = b64::decode_url(b.as_bytes())
                .map_err(|e| RestError::bad(format!("filter_b64 is not base64url: {e}")))?;
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        (None, f) => f,
    };
    let mut filters = Vec::new();
    if let Some(t) = text.filter(|t| !t.trim().is_empty()) {
        let f = shoal_storage::region::filter::parse(&t)
            .map_err(|e| RestError::bad(format!("filter: {e}")))?;
        filters.push(f);
    }
    if !prefix.is_empty() {
        filters.push(Filter::Prefix(prefix.clone()));
    }
    Ok(match filters.len() {
        0 => None,
        1 => filters.pop(),
        _ => Some(Filter::List { all: true, filters }),
    })
}

/// `GET /<table>/<prefix>*`: the rows (at most `limit`, and at most
/// `rest.max_rows_per_response`).
pub async fn table_scan(
    h: Access<'_>,
    limits: &Limits,
    table: &str,
    spec: &str,
    req: &RestRequest,
) -> Result<Response, RestError> {
    let repr = req.accept(MODELS)?;
    let star = spec.find('*').unwrap_or(spec.len());
    let prefix = Bytes::from(url_decode(&spec[..star])?);
    let param_bytes = |name: &str| -> Result<Bytes, RestError> {
        Ok(req
            .params(name)
            .next()
            .map(url_decode)
            .transpose()?
            .map(Bytes::from)
            .unwrap_or_default())
    };
    let start = param_bytes("startrow")?;
    let columns = req
        .params("column")
        .map(|c| url_decode(c).map(|c| Bytes::copy_from_slice(c.trim_ascii())))
        .collect::<Result<Vec<_>, _>>()?;
    let limit: i64 = req.number("limit", i64::from(i32::MAX))?;
    let wanted = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
    let scan = Scan {
        start_row: if start.is_empty() {
            prefix.clone()
        } else {
            start
        },
        stop_row: param_bytes("endrow")?,
        columns: cells::columns(&columns)?,
        time_range: TimeRange {
            min: req.number("starttime", 0i64)?,
            max: req.number("endtime", i64::MAX)?,
        },
        max_versions: versions(req.number("maxversions", 1i32)?),
        batch: usize::try_from(req.number("batchsize", -1i64)?).unwrap_or(0),
        cache_blocks: req.param("cacheblocks")?.is_none_or(|v| v != "false"),
        reverse: req.param("reversed")?.is_some_and(|v| v == "true"),
        limit: wanted.min(limits.max_rows + 1),
        per_family: Default::default(),
        raw: false,
    };
    let filter = table_scan_filter(&prefix, req)?.map(Arc::new);
    let mut stream = h.scan_filtered(table, scan, filter)?;
    let mut rows = Vec::new();
    let mut cells = 0usize;
    while rows.len() < wanted {
        let Some(r) = stream.next().await? else {
            break;
        };
        cells += r.cells.len();
        rows.push(r);
        if rows.len() > limits.max_rows || cells > limits.max_cells {
            return Err(RestError::bad(format!(
                "the scan holds more than {} rows or {} cells (rest.max_rows_per_response, \
                 rest.max_cells_per_response): give a limit, or read it through a scanner",
                limits.max_rows, limits.max_cells
            )));
        }
    }
    Ok(respond::model(repr, &cells::cell_set(rows)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scanner_models_become_scans() {
        let m = ScannerModel {
            start_row: Bytes::from("a"),
            end_row: Bytes::from("b"),
            columns: vec![Bytes::from("cf:q")],
            max_versions: i32::MAX,
            ..ScannerModel::default()
        };
        let s = scan_of(&m).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (s.start_row.clone(), s.stop_row.clone()),
            (Bytes::from("a"), Bytes::from("b"))
        );
        assert_eq!(s.max_versions, u32::MAX);
        assert!(s.columns.wants(b"cf", b"q") && !s.columns.wants(b"cf", b"r"));
        assert_eq!(versions(1), 1);
        assert_eq!(versions(0), u32::MAX);
    }
}
