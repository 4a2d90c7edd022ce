//! The `Hbase` service's methods: each call's arguments picked by field id
//! from the decoded struct, the same host calls the gRPC services make, and
//! the answer (or the exception the method declares) built back. Errors
//! become HBase's exceptions: `AlreadyExists` for an existing table,
//! `IllegalArgument` for bad arguments where the method declares it,
//! `IOError` for everything else — as HBase's own gateway answers.

use super::convert;
use super::scanners::Scanners;
use super::wire::{Struct, TType, Value};
use crate::error::ServiceError;
use crate::host::Host;
use crate::metrics::RequestOp;
use bytes::Bytes;
use shoal_storage::region::{
    CheckAndMutate, Columns, CompareOp, Get, RowMutation, RowOp, Scan, TimeRange,
};
use std::sync::Arc;

/// What went wrong, as the exception HBase would raise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// Which exception.
    pub kind: FaultKind,
    /// Its message.
    pub message: String,
}

/// HBase's Thrift1 exceptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// `IOError` (field 1 of every method's result).
    Io,
    /// `IllegalArgument` (field 2, where declared).
    Illegal,
    /// `AlreadyExists` (field 3 of createTable).
    Exists,
    /// The method is not part of the service: a TApplicationException.
    UnknownMethod,
}

impl Fault {
    /// An `IOError`.
    pub fn io(message: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::Io,
            message: message.into(),
        }
    }

    /// An `IllegalArgument`.
    pub fn illegal(message: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::Illegal,
            message: message.into(),
        }
    }
}

impl From<ServiceError> for Fault {
    fn from(e: ServiceError) -> Fault {
        let kind = match &e {
            ServiceError::TableExists(_) => FaultKind::Exists,
            ServiceError::InvalidArgument(_) => FaultKind::Illegal,
            _ => FaultKind::Io,
        };
        Fault {
            kind,
            message: e.to_string(),
        }
    }
}

/// Methods that declare `IllegalArgument` (result field 2).
const DECLARE_ILLEGAL: &[&str] = &[
    "createTable",
    "mutateRow",
    "mutateRowTs",
    "mutateRows",
    "mutateRowsTs",
    "atomicIncrement",
    "scannerGet",
    "scannerGetList",
    "scannerClose",
    "checkAndPut",
];

/// The result struct of `method`: field 0 holds the answer (absent for
/// void), or the declared exception's field holds the fault; an exception
/// the method does not declare goes out as its `IOError`.
pub fn result_struct(method: &str, outcome: Result<Option<Value>, Fault>) -> Struct {
    match outcome {
        Ok(Some(v)) => Struct::new().with(0, v),
        Ok(None) => Struct::new(),
        Err(f) => {
            let message = Value::Binary(Bytes::from(f.message));
            match f.kind {
                FaultKind::Exists if method == "createTable" => {
                    Struct::new().with(3, Value::Struct(Struct::new().with(1, message)))
                }
                FaultKind::Illegal if DECLARE_ILLEGAL.contains(&method) => {
                    Struct::new().with(2, Value::Struct(Struct::new().with(1, message)))
                }
                _ => Struct::new().with(
                    1,
                    Value::Struct(Struct::new().with(1, message).with(2, Value::Bool(false))),
                ),
            }
        }
    }
}

/// The gateway: the host, and the scanners its clients opened.
pub struct Gateway {
    host: Host,
    scanners: Scanners,
    /// Who every call acts as (`auth.thrift_user`; anyone with auth off).
    caller: crate::security::Caller,
}

/// A required binary argument.
fn bin(args: &Struct, id: i16, what: &str) -> Result<Bytes, Fault> {
    args.binary(id)
        .cloned()
        .ok_or_else(|| Fault::illegal(format!("argument {what} is missing")))
}

/// A required table name argument.
fn table(args: &Struct, id: i16) -> Result<String, Fault> {
    let raw = bin(args, id, "tableName")?;
    String::from_utf8(raw.to_vec()).map_err(|_| Fault::illegal("a table name must be UTF-8"))
}

/// A required i64 argument.
fn long(args: &Struct, id: i16, what: &str) -> Result<i64, Fault> {
    args.i64(id)
        .ok_or_else(|| Fault::illegal(format!("argument {what} is missing")))
}

/// A required i32 argument.
fn int(args: &Struct, id: i16, what: &str) -> Result<i32, Fault> {
    args.i32(id)
        .ok_or_else(|| Fault::illegal(format!("argument {what} is missing")))
}

/// An optional `list<Text>` argument (absent: empty).
fn texts(args: &Struct, id: i16) -> Result<Vec<Bytes>, Fault> {
    match args.list(id) {
        None => Ok(Vec::new()),
        Some(list) => list
            .iter()
            .map(|v| {
                v.as_binary()
                    .cloned()
                    .ok_or_else(|| Fault::illegal("expected a list of strings"))
            })
            .collect(),
    }
}

fn binaries(list: Vec<Bytes>) -> Value {
    Value::List(TType::Binary, list.into_iter().map(Value::Binary).collect())
}

fn versions(n: i32) -> Result<u32, Fault> {
    if n < 1 {
        return Err(Fault::illegal(format!(
            "numVersions must be at least 1, got {n}"
        )));
    }
    Ok(n as u32)
}

impl Gateway {
    /// A gateway over `host`.
    pub fn new(host: Host, scanners: Scanners) -> Gateway {
        let caller = host.security().thrift_caller();
        Gateway {
            host,
            scanners,
            caller,
        }
    }

    /// The scanners (for the expiry sweep).
    pub fn scanners(&self) -> &Scanners {
        &self.scanners
    }

    /// Runs `method` with `args`: the answer (None for void) or the fault.
    /// Counted in the server's request metrics under the gRPC call it
    /// matches, so the status page and `/metrics` show Thrift traffic too.
    pub async fn call(&self, method: &str, args: &Struct) -> Result<Option<Value>, Fault> {
        let start = std::time::Instant::now();
        let outcome = self.dispatch(method, args).await;
        if let Some(op) = request_op(method) {
            self.host
                .requests()
                .record(op, start.elapsed(), outcome.is_ok());
        }
        outcome
    }

    async fn dispatch(&self, method: &str, args: &Struct) -> Result<Option<Value>, Fault> {
        let h = self.host.access(&self.caller);
        Ok(Some(match method {
            // ---- table admin
            "getTableNames" => binaries(
                h.list_tables()
                    .await
                    .into_iter()
                    .map(|t| Bytes::from(t.name))
                    .collect(),
            ),
            "getTableNamesWithIsTableEnabled" => Value::Map(
                TType::Binary,
                TType::Bool,
                h.list_tables()
                    .await
                    .into_iter()
                    .map(|t| (Value::Binary(Bytes::from(t.name)), Value::Bool(t.enabled)))
                    .collect(),
            ),
            "isTableEnabled" => Value::Bool(h.describe_table(&table(args, 1)?).await?.enabled),
            "enableTable" => {
                h.enable_table(&table(args, 1)?).await?;
                return Ok(None);
            }
            "disableTable" => {
                h.disable_table(&table(args, 1)?).await?;
                return Ok(None);
            }
            "compact" | "majorCompact" => {
                // A table name, or a region name `table,startKey,id`.
                let name = table(args, 1)?;
                let name = name.split(',').next().unwrap_or_default();
                h.compact_table(name, method == "majorCompact").await?;
                return Ok(None);
            }
            "getColumnDescriptors" => {
                let t = h.describe_table(&table(args, 1)?).await?;
                Value::Map(
                    TType::Binary,
                    TType::Struct,
                    t.families
                        .iter()
                        .map(|f| {
                            (
                                Value::Binary(Bytes::from(format!("{}:", f.name))),
                                convert::column_descriptor(f),
                            )
                        })
                        .collect(),
                )
            }
            "getTableRegions" => {
                let name = table(args, 1)?;
                let regions = h.region_map(&name)?;
                Value::List(
                    TType::Struct,
                    regions
                        .iter()
                        .enumerate()
                        .map(|(i, r)| convert::region_info(&name, r, i))
                        .collect(),
                )
            }
            "createTable" => {
                let name = table(args, 1)?;
                let families = args.list(2).unwrap_or_default();
                if families.is_empty() {
                    return Err(Fault::illegal(format!(
                        "table {name} needs at least one column family"
                    )));
                }
                let patches = families
                    .iter()
                    .map(|v| {
                        v.as_struct()
                            .ok_or_else(|| Fault::illegal("expected ColumnDescriptor structs"))
                            .and_then(convert::family_patch)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                h.create_table(&name, patches, Vec::new()).await?;
                return Ok(None);
            }
            "deleteTable" => {
                h.drop_table(&table(args, 1)?).await?;
                return Ok(None);
            }
            // ---- reads
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
            "getRowOrBefore" => {
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
                match stream.next().await? {
                    Some(r) => convert::cells(r),
                    None => Value::List(TType::Struct, Vec::new()),
                }
            }
            "getRegionInfo" => {
                // A region name `table,row,…`: the region holding that row.
                let key = bin(args, 1, "row")?;
                let text = String::from_utf8_lossy(&key).into_owned();
                let (name, row) = text.split_once(',').ok_or_else(|| {
                    Fault::io(format!("{text:?} is not a region name (table,row,…)"))
                })?;
                let row = row.split(',').next().unwrap_or_default().as_bytes();
                let regions = h.region_map(name)?;
                let found = regions
                    .iter()
                    .enumerate()
                    .find(|(_, r)| {
                        &r.start_row[..] <= row && (r.end_row.is_empty() || row < &r.end_row[..])
                    })
                    .ok_or_else(|| Fault::io(format!("no region of {name} holds that row")))?;
                convert::region_info(name, found.1, found.0)
            }
            // ---- writes
            "mutateRow" | "mutateRowTs" => {
                let (name, row) = (table(args, 1)?, bin(args, 2, "row")?);
                let list = convert::mutations(args.list(3).unwrap_or_default())?;
                let ts = match method {
                    "mutateRowTs" => Some(long(args, 4, "timestamp")?),
                    _ => None,
                };
                h.mutate(&name, convert::row_mutation(row, &list, ts)?)
                    .await?;
                return Ok(None);
            }
            "mutateRows" | "mutateRowsTs" => {
                let name = table(args, 1)?;
                let ts = match method {
                    "mutateRowsTs" => Some(long(args, 3, "timestamp")?),
                    _ => None,
                };
                let mut batch = Vec::new();
                for b in args.list(2).unwrap_or_default() {
                    let b = b.as_struct().ok_or_else(|| {
                        Fault::illegal("rowBatches: expected BatchMutation structs")
                    })?;
                    let row = bin(b, 1, "BatchMutation.row")?;
                    let list = convert::mutations(b.list(2).unwrap_or_default())?;
                    let m = convert::row_mutation(row, &list, ts)?;
                    if !m.ops.is_empty() {
                        batch.push(m);
                    }
                }
                if batch.is_empty() {
                    return Ok(None);
                }
                for r in h.mutate_many(&name, batch).await? {
                    r?;
                }
                return Ok(None);
            }
            "atomicIncrement" => {
                let (name, row, column) = (
                    table(args, 1)?,
                    bin(args, 2, "row")?,
                    bin(args, 3, "column")?,
                );
                let by = long(args, 4, "value")?;
                let (family, qualifier) = match convert::split_column(&column)? {
                    (f, Some(q)) => (f, q),
                    (f, None) => (f, Bytes::new()),
                };
                let values = h
                    .increment(&name, row, vec![(family, qualifier, by)], None)
                    .await?
                    .values;
                Value::I64(values.first().copied().unwrap_or_default())
            }
            "increment" => {
                let inc = args
                    .structure(1)
                    .ok_or_else(|| Fault::illegal("argument increment is missing"))?;
                self.increment(inc).await?;
                return Ok(None);
            }
            "incrementRows" => {
                for v in args.list(1).unwrap_or_default() {
                    let inc = v
                        .as_struct()
                        .ok_or_else(|| Fault::illegal("increments: expected TIncrement structs"))?;
                    self.increment(inc).await?;
                }
                return Ok(None);
            }
            "deleteAll" | "deleteAllTs" => {
                let (name, row, column) = (
                    table(args, 1)?,
                    bin(args, 2, "row")?,
                    bin(args, 3, "column")?,
                );
                let ts = match method {
                    "deleteAllTs" => Some(long(args, 4, "timestamp")?),
                    _ => None,
                };
                let op = match convert::split_column(&column)? {
                    (family, None) => RowOp::DeleteFamily {
                        family,
                        timestamp: ts,
                    },
                    (family, Some(qualifier)) => RowOp::DeleteColumn {
                        family,
                        qualifier,
                        timestamp: ts,
                    },
                };
                h.mutate(&name, RowMutation::new(row).op(op)).await?;
                return Ok(None);
            }
            "deleteAllRow" | "deleteAllRowTs" => {
                let (name, row) = (table(args, 1)?, bin(args, 2, "row")?);
                let ts = match method {
                    "deleteAllRowTs" => Some(long(args, 3, "timestamp")?),
                    _ => None,
                };
                h.mutate(
                    &name,
                    RowMutation::new(row).op(RowOp::DeleteRow { timestamp: ts }),
                )
                .await?;
                return Ok(None);
            }
            "append" => {
                let a = args
                    .structure(1)
                    .ok_or_else(|| Fault::illegal("argument append is missing"))?;
                let name = table(a, 1)?;
                let row = bin(a, 2, "TAppend.row")?;
                let (columns, values) = (texts(a, 3)?, texts(a, 4)?);
                if columns.len() != values.len() {
                    return Err(Fault::io(format!(
                        "TAppend: {} columns but {} values",
                        columns.len(),
                        values.len()
                    )));
                }
                let mut list = Vec::with_capacity(columns.len());
                for (c, v) in columns.iter().zip(values) {
                    let (f, q) = convert::split_column(c)?;
                    list.push((f, q.unwrap_or_default(), v));
                }
                let names: Vec<(Bytes, Bytes)> = list
                    .iter()
                    .map(|(f, q, _)| (f.clone(), q.clone()))
                    .collect();
                let new = h.append(&name, row, list, None).await?;
                // Each new value with its stored cell's timestamp.
                let stamp = |f: &Bytes, q: &Bytes| {
                    new.cells
                        .iter()
                        .find(|c| c.family == f && c.qualifier == q)
                        .map_or(0, |c| c.timestamp)
                };
                Value::List(
                    TType::Struct,
                    names
                        .iter()
                        .zip(&new.values)
                        .map(|((f, q), v)| convert::tcell(v.clone(), stamp(f, q)))
                        .collect(),
                )
            }
            "checkAndPut" => {
                let (name, row, column) = (
                    table(args, 1)?,
                    bin(args, 2, "row")?,
                    bin(args, 3, "column")?,
                );
                let (family, qualifier) = convert::split_column(&column)?;
                let m = args
                    .structure(6)
                    .ok_or_else(|| Fault::illegal("argument mput is missing"))?;
                let list = convert::mutations(&[Value::Struct(m.clone())])?;
                let mutation = convert::row_mutation(row, &list, None)?;
                // An absent value checks that the column does not exist.
                let (op, value) = match args.binary(5) {
                    Some(v) => (CompareOp::Equal, v.clone()),
                    None => (CompareOp::Missing, Bytes::new()),
                };
                let check = CheckAndMutate {
                    family,
                    qualifier: qualifier.unwrap_or_default(),
                    op,
                    value,
                    mutation,
                };
                Value::Bool(h.check_and_mutate(&name, check).await?)
            }
            // ---- scanners
            "scannerOpenWithScan" => {
                let name = table(args, 1)?;
                let t = args.structure(2).cloned().unwrap_or_default();
                self.open_scan(&name, &t).await?
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
                Value::I32(self.scanners.open(stream, false)?)
            }
            "scannerGet" | "scannerGetList" => {
                let id = int(args, 1, "id")?;
                let n = if method == "scannerGet" {
                    1
                } else {
                    int(args, 2, "nbRows")?
                };
                let rows = self.scanners.next_rows(id, n).await?;
                Value::List(TType::Struct, rows)
            }
            "scannerClose" => {
                self.scanners.close(int(args, 1, "id")?)?;
                return Ok(None);
            }
            // ---- the rest of upstream's Hbase.thrift
            "getThriftServerType" => Value::I32(1), // ONE: this is Thrift1
            "getClusterId" => Value::Binary(Bytes::from_static(b"shoal")),
            "grant" | "revoke" => {
                return Err(Fault::io(format!(
                    "{method}: permissions are not supported by Shoal yet"
                )));
            }
            _ => {
                return Err(Fault {
                    kind: FaultKind::UnknownMethod,
                    message: format!("Invalid method name: '{method}'"),
                });
            }
        }))
    }

    async fn increment(&self, inc: &Struct) -> Result<(), Fault> {
        let name = table(inc, 1)?;
        let row = bin(inc, 2, "TIncrement.row")?;
        let column = bin(inc, 3, "TIncrement.column")?;
        let by = inc.i64(4).unwrap_or(1);
        let (f, q) = convert::split_column(&column)?;
        self.host
            .access(&self.caller)
            .increment(&name, row, vec![(f, q.unwrap_or_default(), by)], None)
            .await?;
        Ok(())
    }

    /// `scannerOpenWithScan`: a `TScan`.
    async fn open_scan(&self, name: &str, t: &Struct) -> Result<Value, Fault> {
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
                let text = std::str::from_utf8(text)
                    .map_err(|_| Fault::io("filterString must be UTF-8"))?;
                Some(Arc::new(
                    shoal_storage::region::filter::parse(text)
                        .map_err(|e| Fault::io(e.to_string()))?,
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
        let stream = self
            .host
            .access(&self.caller)
            .scan_filtered(name, scan, filter)?;
        Ok(Value::I32(
            self.scanners.open(stream, t.bool(8).unwrap_or(false))?,
        ))
    }
}

/// The request metric a method counts under (None: unknown methods).
fn request_op(method: &str) -> Option<RequestOp> {
    Some(match method {
        "get"
        | "getVer"
        | "getVerTs"
        | "getRow"
        | "getRowWithColumns"
        | "getRowTs"
        | "getRowWithColumnsTs"
        | "getRowOrBefore" => RequestOp::Get,
        "getRows" | "getRowsWithColumns" | "getRowsTs" | "getRowsWithColumnsTs" => {
            RequestOp::MultiGet
        }
        "mutateRow" | "mutateRowTs" | "deleteAll" | "deleteAllTs" | "deleteAllRow"
        | "deleteAllRowTs" => RequestOp::Mutate,
        "mutateRows" | "mutateRowsTs" => RequestOp::MultiMutate,
        "atomicIncrement" | "increment" | "incrementRows" => RequestOp::Increment,
        "append" => RequestOp::Append,
        "checkAndPut" => RequestOp::CheckAndMutate,
        m if m.starts_with("scanner") => RequestOp::Scan,
        "getTableNames"
        | "getTableNamesWithIsTableEnabled"
        | "isTableEnabled"
        | "enableTable"
        | "disableTable"
        | "compact"
        | "majorCompact"
        | "getColumnDescriptors"
        | "getTableRegions"
        | "createTable"
        | "deleteTable"
        | "getRegionInfo"
        | "getThriftServerType"
        | "getClusterId"
        | "grant"
        | "revoke" => RequestOp::Admin,
        _ => return None,
    })
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

    #[test]
    fn faults_go_to_the_declared_exception_or_io_error() {
        let s = result_struct("createTable", Err(Fault::illegal("x")));
        assert!(s.get(2).is_some());
        let s = result_struct("deleteTable", Err(Fault::illegal("x")));
        assert!(s.get(1).is_some() && s.get(2).is_none());
        let s = result_struct(
            "createTable",
            Err(Fault {
                kind: FaultKind::Exists,
                message: "t".into(),
            }),
        );
        assert!(s.get(3).is_some());
        assert!(result_struct("enableTable", Ok(None)).fields.is_empty());
    }
}
