//! Between HBase's Thrift1 structs (`Hbase.thrift`, as happybase ships it)
//! and Shoal's own types: column names `family[:qualifier]`, mutations,
//! result rows and cells, column descriptors, region infos. Semantics follow
//! HBase's `ThriftHBaseServiceHandler`: a `*Ts` read means the time range
//! `[0, ts)`, a delete without a qualifier deletes the family, a batch's puts
//! of a row apply before its deletes.

use super::fault::Fault;
use super::wire::{Struct, TType, Value};
use crate::catalog::{BloomName, CompressionName, FamilyPatch, FamilySchema};
use crate::host::RegionLocation;
use bytes::Bytes;
use shoal_storage::region::{Columns, RowMutation, RowOp, RowResult, TimeRange};

/// A column name split at its first `:`: the family, and the qualifier
/// unless the name has no `:` at all (`"cf"` = the whole family; `"cf:"` =
/// the empty qualifier, as HBase's `CellUtil.parseColumn`).
pub fn split_column(column: &Bytes) -> Result<(Bytes, Option<Bytes>), Fault> {
    let (family, qualifier) = match column.iter().position(|&b| b == b':') {
        None => (column.clone(), None),
        Some(i) => (column.slice(..i), Some(column.slice(i + 1..))),
    };
    if family.is_empty() {
        return Err(Fault::illegal(format!(
            "column {:?} has no family",
            String::from_utf8_lossy(column)
        )));
    }
    Ok((family, qualifier))
}

/// The columns a read asks for (empty list: every column).
pub fn columns(list: &[Bytes]) -> Result<Columns, Fault> {
    let mut cols = Columns::all();
    for c in list {
        match split_column(c)? {
            (family, None) => cols = cols.family(family),
            (family, Some(q)) => {
                // A whole family already asked for stays whole.
                if cols.families.get(&family).is_some_and(|v| v.is_none()) {
                    continue;
                }
                cols = cols.column(family, q)
            }
        }
    }
    Ok(cols)
}

/// `[0, ts)`: the time range of every `*Ts` read.
pub fn before(ts: i64) -> TimeRange {
    TimeRange { min: 0, max: ts }
}

/// A `TCell`.
pub fn tcell(value: Bytes, timestamp: i64) -> Value {
    Value::Struct(
        Struct::new()
            .with(1, Value::Binary(value))
            .with(2, Value::I64(timestamp)),
    )
}

/// `family:qualifier` as one name.
pub fn column_name(family: &[u8], qualifier: &[u8]) -> Bytes {
    let mut v = Vec::with_capacity(family.len() + 1 + qualifier.len());
    v.extend_from_slice(family);
    v.push(b':');
    v.extend_from_slice(qualifier);
    Bytes::from(v)
}

/// A `TRowResult`: a map of columns to their cells, or with `sorted`, the
/// list `sortedColumns` in column order (TScan.sortColumns). Of several
/// versions of a column the map keeps the newest.
pub fn row_result(r: RowResult, sorted: bool) -> Value {
    let mut s = Struct::new().with(1, Value::Binary(r.row.clone()));
    if sorted {
        let list = r
            .cells
            .into_iter()
            .map(|c| {
                Value::Struct(
                    Struct::new()
                        .with(1, Value::Binary(column_name(&c.family, &c.qualifier)))
                        .with(2, tcell(c.value, c.timestamp)),
                )
            })
            .collect();
        s = s.with(3, Value::List(TType::Struct, list));
    } else {
        let mut entries: Vec<(Value, Value)> = Vec::with_capacity(r.cells.len());
        let mut last: Option<(Bytes, Bytes)> = None;
        for c in r.cells {
            // Cells come newest first within a column: keep the first.
            if last
                .as_ref()
                .is_some_and(|(f, q)| *f == c.family && *q == c.qualifier)
            {
                continue;
            }
            last = Some((c.family.clone(), c.qualifier.clone()));
            entries.push((
                Value::Binary(column_name(&c.family, &c.qualifier)),
                tcell(c.value, c.timestamp),
            ));
        }
        s = s.with(2, Value::Map(TType::Binary, TType::Struct, entries));
    }
    Value::Struct(s)
}

/// The cells of a row as a list of `TCell`s (every version, newest first
/// within each column).
pub fn cells(r: RowResult) -> Value {
    Value::List(
        TType::Struct,
        r.cells
            .into_iter()
            .map(|c| tcell(c.value, c.timestamp))
            .collect(),
    )
}

/// One `Mutation` struct.
pub struct ThriftMutation {
    /// A delete (of a column, or of a family when the column has no `:`).
    pub is_delete: bool,
    /// `family[:qualifier]`.
    pub column: Bytes,
    /// The value (puts).
    pub value: Bytes,
}

/// Reads a `list<Mutation>`.
pub fn mutations(list: &[Value]) -> Result<Vec<ThriftMutation>, Fault> {
    list.iter()
        .map(|v| {
            let s = v
                .as_struct()
                .ok_or_else(|| Fault::illegal("mutations: expected Mutation structs"))?;
            Ok(ThriftMutation {
                is_delete: s.bool(1).unwrap_or(false),
                column: s
                    .binary(2)
                    .cloned()
                    .ok_or_else(|| Fault::illegal("Mutation.column is missing"))?,
                value: s.binary(3).cloned().unwrap_or_default(),
            })
        })
        .collect()
}

/// One row's Thrift mutations as one atomic row mutation: its puts (at `ts`,
/// or now), then its deletes (of every version at or below `ts`, or all),
/// in HBase's order.
pub fn row_mutation(
    row: Bytes,
    list: &[ThriftMutation],
    ts: Option<i64>,
) -> Result<RowMutation, Fault> {
    if row.is_empty() {
        return Err(Fault::illegal("row key is empty"));
    }
    let mut m = RowMutation::new(row);
    for t in list.iter().filter(|t| !t.is_delete) {
        let (family, qualifier) = split_column(&t.column)?;
        m.ops.push(RowOp::Put {
            family,
            qualifier: qualifier.unwrap_or_default(),
            timestamp: ts,
            value: t.value.clone(),
        });
    }
    for t in list.iter().filter(|t| t.is_delete) {
        m.ops.push(match split_column(&t.column)? {
            (family, None) => RowOp::DeleteFamily {
                family,
                timestamp: ts,
            },
            (family, Some(qualifier)) => RowOp::DeleteColumn {
                family,
                qualifier,
                timestamp: ts,
            },
        });
    }
    Ok(m)
}

/// A `ColumnDescriptor` from the catalog (name with its trailing `:`).
pub fn column_descriptor(f: &FamilySchema) -> Value {
    let compression = f.compression.hbase_name();
    let bloom = f.bloom.hbase_name();
    let ttl = if f.ttl_seconds == 0 {
        -1
    } else {
        i32::try_from(f.ttl_seconds).unwrap_or(i32::MAX)
    };
    Value::Struct(
        Struct::new()
            .with(1, Value::Binary(Bytes::from(format!("{}:", f.name))))
            .with(
                2,
                Value::I32(i32::try_from(f.max_versions).unwrap_or(i32::MAX)),
            )
            .with(3, Value::Binary(Bytes::from_static(compression.as_bytes())))
            .with(4, Value::Bool(f.in_memory))
            .with(5, Value::Binary(Bytes::from_static(bloom.as_bytes())))
            .with(6, Value::I32(0))
            .with(7, Value::I32(0))
            .with(8, Value::Bool(f.cache_data_on_read))
            .with(9, Value::I32(ttl)),
    )
}

/// A family patch from a `ColumnDescriptor` (createTable).
pub fn family_patch(s: &Struct) -> Result<FamilyPatch, Fault> {
    let raw = s
        .binary(1)
        .ok_or_else(|| Fault::illegal("ColumnDescriptor.name is missing"))?;
    let name = std::str::from_utf8(raw)
        .map_err(|_| Fault::illegal("a column family name must be UTF-8"))?;
    let name = name.strip_suffix(':').unwrap_or(name);
    if name.is_empty() || name.contains(':') {
        return Err(Fault::illegal(format!(
            "column family name {name:?} is not valid"
        )));
    }
    let max_versions = match s.i32(2) {
        None => None,
        Some(v) if v >= 1 => Some(v as u32),
        Some(v) => {
            return Err(Fault::illegal(format!(
                "family {name}: maxVersions must be at least 1, got {v}"
            )));
        }
    };
    let compression = match s.binary(3).map(|b| b.to_ascii_uppercase()) {
        None => None,
        Some(c) => Some(match &c[..] {
            b"NONE" | b"" => CompressionName::None,
            b"LZ4" => CompressionName::Lz4,
            b"ZSTD" => CompressionName::Zstd,
            // HBase's codecs Shoal does not have: the data is compressed
            // with one it has (documented in docs/thrift.md).
            b"GZ" | b"SNAPPY" | b"LZO" | b"BZIP2" => CompressionName::Zstd,
            other => {
                return Err(Fault::illegal(format!(
                    "family {name}: unknown compression {:?}",
                    String::from_utf8_lossy(other)
                )));
            }
        }),
    };
    let bloom = match s.binary(5).map(|b| b.to_ascii_uppercase()) {
        None => None,
        Some(b) => Some(match &b[..] {
            b"NONE" | b"" => BloomName::None,
            b"ROW" => BloomName::Row,
            b"ROWCOL" => BloomName::Rowcol,
            other => {
                return Err(Fault::illegal(format!(
                    "family {name}: unknown bloom filter type {:?}",
                    String::from_utf8_lossy(other)
                )));
            }
        }),
    };
    let ttl_seconds = match s.i32(9) {
        None => None,
        Some(t) if t <= 0 || t == i32::MAX => Some(0),
        Some(t) => Some(t as u64),
    };
    Ok(FamilyPatch {
        name: name.to_string(),
        max_versions,
        ttl_seconds,
        compression,
        bloom,
        in_memory: s.bool(4),
        ..Default::default()
    })
}

/// A `TRegionInfo`.
pub fn region_info(table: &str, r: &RegionLocation, index: usize) -> Value {
    let (host, port) = r
        .server
        .rsplit_once(':')
        .map(|(h, p)| (h.to_string(), p.parse::<i32>().unwrap_or(0)))
        .unwrap_or_else(|| (r.server.clone(), 0));
    // HBase's region name: table,startKey,id.
    let mut name = Vec::new();
    name.extend_from_slice(table.as_bytes());
    name.push(b',');
    name.extend_from_slice(&r.start_row);
    name.push(b',');
    name.extend_from_slice(r.region_id.as_bytes());
    Value::Struct(
        Struct::new()
            .with(1, Value::Binary(r.start_row.clone()))
            .with(2, Value::Binary(r.end_row.clone()))
            .with(3, Value::I64(index as i64))
            .with(4, Value::Binary(Bytes::from(name)))
            .with(5, Value::Byte(1))
            .with(6, Value::Binary(Bytes::from(host)))
            .with(7, Value::I32(port)),
    )
}
