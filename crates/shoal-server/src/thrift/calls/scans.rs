//! Scanner calls: `scannerOpen*` (a scan's rows behind a scanner id),
//! `scannerGet*` (its next rows) and `scannerClose`. The scanners
//! themselves, with their leases, are `thrift::scanners`.

use super::{int, long, table, texts};
use crate::host::Access;
use crate::thrift::convert;
use crate::thrift::fault::Fault;
use crate::thrift::scanners::Scanners;
use crate::thrift::wire::{Struct, TType, Value};
use bytes::Bytes;
use shoal_storage::region::{Scan, TimeRange};
use std::sync::Arc;

/// Runs one scanner call: the answer (None for void) or the fault.
pub(crate) async fn call(
    h: Access<'_>,
    scanners: &Scanners,
    method: &str,
    args: &Struct,
) -> Result<Option<Value>, Fault> {
    Ok(Some(match method {
        "scannerOpenWithScan" => {
            let name = table(args, 1)?;
            let t = args.structure(2).cloned().unwrap_or_default();
            open_scan(h, scanners, &name, &t).await?
        }
        "scannerOpen"
        | "scannerOpenWithStop"
        | "scannerOpenWithPrefix"
        | "scannerOpenTs"
        | "scannerOpenWithStopTs" => {
            let name = table(args, 1)?;
            let start = args.binary(2).cloned().unwrap_or_default();
            let (stop, columns, ts) = match method {
                "scannerOpen" => (Bytes::new(), texts(args, 3)?, None),
                "scannerOpenWithStop" => (
                    args.binary(3).cloned().unwrap_or_default(),
                    texts(args, 4)?,
                    None,
                ),
                "scannerOpenWithPrefix" => (prefix_end(&start), texts(args, 3)?, None),
                "scannerOpenTs" => (
                    Bytes::new(),
                    texts(args, 3)?,
                    Some(long(args, 4, "timestamp")?),
                ),
                _ => (
                    args.binary(3).cloned().unwrap_or_default(),
                    texts(args, 4)?,
                    Some(long(args, 5, "timestamp")?),
                ),
            };
            // Equal start and stop rows read that row (HBase's gateway
            // builds these scans with `new Scan(start, stop)`, which
            // keeps the old "get scan" rule).
            let stop = if !start.is_empty() && start == stop {
                successor_or_empty(&start)
            } else {
                stop
            };
            let scan = Scan {
                start_row: start,
                stop_row: stop,
                columns: convert::columns(&columns)?,
                time_range: ts.map_or(TimeRange::ALL, convert::before),
                ..Scan::all()
            };
            let stream = h.scan_filtered(&name, scan, None)?;
            Value::I32(scanners.open(stream, false)?)
        }
        "scannerGet" | "scannerGetList" => {
            let id = int(args, 1, "id")?;
            let n = if method == "scannerGet" {
                1
            } else {
                int(args, 2, "nbRows")?
            };
            let rows = scanners.next_rows(id, n).await?;
            Value::List(TType::Struct, rows)
        }
        "scannerClose" => {
            scanners.close(int(args, 1, "id")?)?;
            return Ok(None);
        }
        _ => return Err(Fault::unknown_method(method)),
    }))
}

/// `scannerOpenWithScan`: a `TScan`.
async fn open_scan(
    h: Access<'_>,
    scanners: &Scanners,
    name: &str,
    t: &Struct,
) -> Result<Value, Fault> {
    let reverse = t.bool(9).unwrap_or(false);
    let (start, stop) = (
        t.binary(1).cloned().unwrap_or_default(),
        t.binary(2).cloned().unwrap_or_default(),
    );
    // HBase's reversed scan starts at its (inclusive) start row and runs
    // down to its (exclusive) stop row; Shoal's reverse scans read
    // `[start, stop)` from the top.
    let (start_row, stop_row) = if !start.is_empty() && start == stop {
        // HBase's gateway builds the scan with `setStartRow`/`setStopRow`,
        // which keep the old rule: equal start and stop rows read that
        // one row (a "get scan"), in either direction.
        let next = successor_or_empty(&start);
        (start, next)
    } else if reverse {
        (successor_or_empty(&stop), successor_or_empty(&start))
    } else {
        (start, stop)
    };
    let batch = t.i32(7).unwrap_or(0);
    let filter = match t.binary(6) {
        Some(text) if !text.is_empty() => {
            let text =
                std::str::from_utf8(text).map_err(|_| Fault::io("filterString must be UTF-8"))?;
            Some(Arc::new(
                shoal_storage::region::filter::parse(text).map_err(|e| Fault::io(e.to_string()))?,
            ))
        }
        _ => None,
    };
    let scan = Scan {
        start_row,
        stop_row,
        columns: convert::columns(&texts(t, 4)?)?,
        time_range: t.i64(3).map_or(TimeRange::ALL, convert::before),
        batch: usize::try_from(batch.max(0)).unwrap_or(0),
        reverse,
        cache_blocks: t.bool(10).unwrap_or(true),
        ..Scan::all()
    };
    let stream = h.scan_filtered(name, scan, filter)?;
    Ok(Value::I32(
        scanners.open(stream, t.bool(8).unwrap_or(false))?,
    ))
}

/// The first row after every row starting with `prefix` (empty: none).
fn prefix_end(prefix: &[u8]) -> Bytes {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Bytes::from(end);
        }
    }
    Bytes::new()
}

/// `row` followed by a zero byte (the next possible row), or empty.
fn successor_or_empty(row: &Bytes) -> Bytes {
    if row.is_empty() {
        return Bytes::new();
    }
    let mut v = row.to_vec();
    v.push(0);
    Bytes::from(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_ends_skip_trailing_ff() {
        assert_eq!(prefix_end(b"ab"), Bytes::from_static(b"ac"));
        assert_eq!(prefix_end(b"a\xff"), Bytes::from_static(b"b"));
        assert_eq!(prefix_end(b"\xff\xff"), Bytes::new());
    }
}
