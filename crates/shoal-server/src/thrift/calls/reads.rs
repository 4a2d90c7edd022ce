//! Read calls: `get*` (one column's versions), `getRow*` and `getRows*`
//! (whole rows, or chosen columns, at a time), `getRowOrBefore`, and
//! `getRegionInfo` (the region holding a row).

use super::{bin, int, long, table, texts, versions};
use crate::host::Access;
use crate::thrift::convert;
use crate::thrift::fault::Fault;
use crate::thrift::wire::{Struct, TType, Value};
use bytes::Bytes;
use shoal_storage::region::{Columns, Get, Scan, TimeRange};

/// Runs one read call: the answer or the fault.
pub(crate) async fn call(
    h: Access<'_>,
    method: &str,
    args: &Struct,
) -> Result<Option<Value>, Fault> {
    Ok(Some(match method {
        "get" | "getVer" | "getVerTs" => {
            let (name, row, column) = (
                table(args, 1)?,
                bin(args, 2, "row")?,
                bin(args, 3, "column")?,
            );
            let (max_versions, time_range) = match method {
                "get" => (1, TimeRange::ALL),
                "getVer" => (versions(int(args, 4, "numVersions")?)?, TimeRange::ALL),
                _ => (
                    versions(int(args, 5, "numVersions")?)?,
                    convert::before(long(args, 4, "timestamp")?),
                ),
            };
            let get = Get {
                per_family: Default::default(),
                row,
                columns: convert::columns(&[column])?,
                time_range,
                max_versions,
                filter: None,
            };
            convert::cells(h.get(&name, get).await?)
        }
        "getRow" | "getRowWithColumns" | "getRowTs" | "getRowWithColumnsTs" => {
            let (name, row) = (table(args, 1)?, bin(args, 2, "row")?);
            let (columns, ts) = match method {
                "getRow" => (Vec::new(), None),
                "getRowWithColumns" => (texts(args, 3)?, None),
                "getRowTs" => (Vec::new(), Some(long(args, 3, "timestamp")?)),
                _ => (texts(args, 3)?, Some(long(args, 4, "timestamp")?)),
            };
            let get = Get {
                per_family: Default::default(),
                row,
                columns: convert::columns(&columns)?,
                time_range: ts.map_or(TimeRange::ALL, convert::before),
                max_versions: 1,
                filter: None,
            };
            let r = h.get(&name, get).await?;
            let rows = if r.cells.is_empty() {
                Vec::new()
            } else {
                vec![convert::row_result(r, false)]
            };
            Value::List(TType::Struct, rows)
        }
        "getRows" | "getRowsWithColumns" | "getRowsTs" | "getRowsWithColumnsTs" => {
            let (name, rows) = (table(args, 1)?, texts(args, 2)?);
            let (columns, ts) = match method {
                "getRows" => (Vec::new(), None),
                "getRowsWithColumns" => (texts(args, 3)?, None),
                "getRowsTs" => (Vec::new(), Some(long(args, 3, "timestamp")?)),
                _ => (texts(args, 3)?, Some(long(args, 4, "timestamp")?)),
            };
            let columns = convert::columns(&columns)?;
            let time_range = ts.map_or(TimeRange::ALL, convert::before);
            let gets = rows
                .into_iter()
                .map(|row| Get {
                    per_family: Default::default(),
                    row,
                    columns: columns.clone(),
                    time_range,
                    max_versions: 1,
                    filter: None,
                })
                .collect();
            let results = h.multi_get(&name, gets).await?;
            Value::List(
                TType::Struct,
                results
                    .into_iter()
                    .filter(|r| !r.cells.is_empty())
                    .map(|r| convert::row_result(r, false))
                    .collect(),
            )
        }
        "getRowOrBefore" => row_or_before(h, args).await?,
        "getRegionInfo" => region_info(h, args)?,
        _ => return Err(Fault::unknown_method(method)),
    }))
}

/// `getRowOrBefore`: the row at or before the given one, in one family.
async fn row_or_before(h: Access<'_>, args: &Struct) -> Result<Value, Fault> {
    let (name, row, family) = (
        table(args, 1)?,
        bin(args, 2, "row")?,
        bin(args, 3, "family")?,
    );
    let (family, _) = convert::split_column(&family)?;
    let mut stop = row.to_vec();
    stop.push(0);
    let scan = Scan {
        start_row: Bytes::new(),
        stop_row: Bytes::from(stop),
        columns: Columns::all().family(family),
        limit: 1,
        reverse: true,
        ..Scan::all()
    };
    let mut stream = h.scan_filtered(&name, scan, None)?;
    Ok(match stream.next().await? {
        Some(r) => convert::cells(r),
        None => Value::List(TType::Struct, Vec::new()),
    })
}

/// `getRegionInfo`: the region of a region name's table holding its row.
fn region_info(h: Access<'_>, args: &Struct) -> Result<Value, Fault> {
    // A region name `table,row,…`: the region holding that row.
    let key = bin(args, 1, "row")?;
    let text = String::from_utf8_lossy(&key).into_owned();
    let (name, row) = text
        .split_once(',')
        .ok_or_else(|| Fault::io(format!("{text:?} is not a region name (table,row,…)")))?;
    let row = row.split(',').next().unwrap_or_default().as_bytes();
    let regions = h.region_map(name)?;
    let found = regions
        .iter()
        .enumerate()
        .find(|(_, r)| &r.start_row[..] <= row && (r.end_row.is_empty() || row < &r.end_row[..]))
        .ok_or_else(|| Fault::io(format!("no region of {name} holds that row")))?;
    Ok(convert::region_info(name, found.1, found.0))
}
