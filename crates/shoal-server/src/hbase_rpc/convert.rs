//! HBase's client messages to Shoal's requests, and Shoal's rows back to
//! HBase's `Result`s (their cells in the answer's cell block, or inline
//! when the connection asked for no codec). HBase's conventions kept:
//! `Long.MAX_VALUE` as a timestamp means "now"; time ranges are
//! `[from, to)`; check-and-mutate compares "operand OP current".

use super::cells::{self, KeyValue, KvType};
use super::errors::RpcError;
use super::filters;
use bytes::Bytes;
use shoal_proto::hbase as pb;
use shoal_storage::cell::{Cell, CellType};
use shoal_storage::region::filter::Filter;
use shoal_storage::region::{
    CheckAndMutate, Columns, CompareOp, Condition, FamilyOptions, Get, Nonce, RowMutation, RowOp,
    Scan, TimeRange,
};
use std::collections::BTreeSet;
use std::sync::Arc;

/// HBase's LATEST_TIMESTAMP: the server's clock decides.
pub const LATEST: i64 = i64::MAX;

fn ts(t: Option<u64>) -> Option<i64> {
    match t.map(|t| t as i64) {
        None | Some(LATEST) => None,
        Some(t) => Some(t),
    }
}

/// The columns of a Get or Scan (none listed: all of them).
pub fn columns(list: &[pb::Column]) -> Columns {
    let mut c = Columns::all();
    for col in list {
        let entry = c.families.entry(col.family.clone()).or_insert_with(|| {
            if col.qualifier.is_empty() {
                None
            } else {
                Some(BTreeSet::new())
            }
        });
        match (entry, col.qualifier.is_empty()) {
            (e @ Some(_), true) => *e = None,
            (Some(set), false) => set.extend(col.qualifier.iter().cloned()),
            (None, _) => {}
        }
    }
    c
}

/// A `TimeRange{from, to}`: `[from, to)`, unset ends open.
pub fn time_range(t: Option<&pb::TimeRange>) -> Result<TimeRange, RpcError> {
    let Some(t) = t else {
        return Ok(TimeRange::ALL);
    };
    let min = t.from.map_or(0, |v| v.min(i64::MAX as u64) as i64);
    let max = t.to.map_or(i64::MAX, |v| v.min(i64::MAX as u64) as i64);
    if min > max {
        return Err(RpcError::invalid(format!(
            "time range [{min}, {max}) ends before it starts"
        )));
    }
    Ok(TimeRange { min, max })
}

/// A Get's or Scan's per-family options: `store_limit`
/// (`setMaxResultsPerColumnFamily`), `store_offset`
/// (`setRowOffsetPerColumnFamily`) and `cf_time_range`
/// (`setColumnFamilyTimeRange`), served by the region as HBase's store
/// scanner serves them.
fn family_options(
    limit: Option<u32>,
    offset: Option<u32>,
    ranges: &[pb::ColumnFamilyTimeRange],
) -> Result<FamilyOptions, RpcError> {
    let mut time_ranges = std::collections::BTreeMap::new();
    for r in ranges {
        time_ranges.insert(r.column_family.clone(), time_range(Some(&r.time_range))?);
    }
    Ok(FamilyOptions {
        limit,
        offset: offset.unwrap_or(0),
        time_ranges,
    })
}

fn filter_of(f: Option<&pb::Filter>) -> Result<Option<Arc<Filter>>, RpcError> {
    f.map(|f| filters::filter(f).map(Arc::new)).transpose()
}

/// A Get: the read, its filter, and whether only existence is asked.
pub struct GetSpec {
    /// The read.
    pub get: Get,
    /// The Get's filter (also in `get`, which the region runs; this copy
    /// serves the virtual `hbase:meta`).
    pub filter: Option<Arc<Filter>>,
    /// Answer `exists` only.
    pub existence_only: bool,
}

/// Reads a `Get`.
pub fn get(g: &pb::Get) -> Result<GetSpec, RpcError> {
    if g.row.is_empty() {
        return Err(RpcError::invalid("a Get needs a row"));
    }
    if g.closest_row_before.unwrap_or(false) {
        // HBase 2's own answer (its class and its text): asynchbase, which
        // still sends these to find regions, switches to a reversed scan
        // of `hbase:meta` on `UnknownProtocolException`.
        return Err(RpcError::fatal(
            super::errors::UNKNOWN_PROTOCOL,
            "Is this a pre-hbase-1.0.0 or asynchbase client? Client is invoking \
             getClosestRowBefore removed in hbase-2.0.0 replaced by reverse Scan.",
        ));
    }
    let per_family = family_options(g.store_limit, g.store_offset, &g.cf_time_range)?;
    let filter = filter_of(g.filter.as_ref())?;
    Ok(GetSpec {
        get: Get {
            row: g.row.clone(),
            columns: columns(&g.column),
            time_range: time_range(g.time_range.as_ref())?,
            max_versions: g.max_versions.unwrap_or(1).max(1),
            filter: filter.clone(),
            per_family,
        },
        filter,
        existence_only: g.existence_only.unwrap_or(false),
    })
}

use crate::host::row_successor as successor;

/// A scan's rows as Shoal's `[start, stop)` (empty ends open), from
/// HBase's start/stop rows with their inclusive flags (a reversed scan
/// starts at its high row).
pub fn scan_bounds(s: &pb::Scan) -> (Bytes, Bytes) {
    let start = s.start_row.clone().unwrap_or_default();
    let stop = s.stop_row.clone().unwrap_or_default();
    let include_start = s.include_start_row.unwrap_or(true);
    let include_stop = s.include_stop_row.unwrap_or(false);
    if !s.reversed.unwrap_or(false) {
        let low = if include_start || start.is_empty() {
            start
        } else {
            successor(&start)
        };
        let high = if include_stop && !stop.is_empty() {
            successor(&stop)
        } else {
            stop
        };
        (low, high)
    } else {
        // Reversed: `start` is the top (inclusive by default), `stop` the
        // bottom (exclusive by default).
        let high = if include_start && !start.is_empty() {
            successor(&start)
        } else {
            start
        };
        let low = if include_stop || stop.is_empty() {
            stop
        } else {
            successor(&stop)
        };
        (low, high)
    }
}

/// `[low, high)` narrowed to a region's `[start, end)` (empty ends open);
/// None when nothing is left.
pub fn clamp(low: Bytes, high: Bytes, start: &[u8], end: &[u8]) -> Option<(Bytes, Bytes)> {
    let low = if low[..] < *start {
        Bytes::copy_from_slice(start)
    } else {
        low
    };
    let high = if !end.is_empty() && (high.is_empty() || high[..] > *end) {
        Bytes::copy_from_slice(end)
    } else {
        high
    };
    (high.is_empty() || low < high).then_some((low, high))
}

/// A Scan over `[low, high)` (already clamped to the region) and its
/// filter.
pub fn scan(
    s: &pb::Scan,
    low: Bytes,
    high: Bytes,
) -> Result<(Scan, Option<Arc<Filter>>), RpcError> {
    let per_family = family_options(s.store_limit, s.store_offset, &s.cf_time_range)?;
    // `Scan.setRaw` travels as the attribute `_raw_` (a boolean byte).
    let raw = s.attribute.iter().any(|a| {
        a.name == "_raw_"
            && a.value
                .as_ref()
                .is_some_and(|v| v.first().is_some_and(|&b| b != 0))
    });
    let scan = Scan {
        raw,
        start_row: low,
        stop_row: high,
        columns: columns(&s.column),
        time_range: time_range(s.time_range.as_ref())?,
        max_versions: s.max_versions.unwrap_or(1).max(1),
        limit: 0,
        batch: s.batch_size.unwrap_or(0) as usize,
        reverse: s.reversed.unwrap_or(false),
        cache_blocks: s.cache_blocks.unwrap_or(true),
        per_family,
    };
    let filter = filter_of(s.filter.as_ref())?;
    if scan.batch > 0 && filter.as_ref().is_some_and(|f| f.has_filter_row()) {
        // HBase's region server refuses it as it reads the Scan.
        // HBase's region server refuses it as it reads the Scan (its
        // IncompatibleFilterException reaches the client as an IOException).
        return Err(RpcError::fatal(
            "java.io.IOException",
            "java.io.IOException: Cannot set batch on a scan using a filter that returns true for filter.hasFilterRow",
        ));
    }
    if raw && s.column.iter().any(|c| !c.qualifier.is_empty()) {
        // HBase's store scanner refuses it (after the check above).
        return Err(RpcError::invalid(
            "Cannot specify any column for a raw scan",
        ));
    }
    Ok((scan, filter))
}

/// What a `MutationProto` asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Mutation {
    /// A put or a delete: one atomic row mutation.
    Row(RowMutation),
    /// Add to counters.
    Increment(Bytes, Vec<(Bytes, Bytes, i64)>),
    /// Append to values.
    Append(Bytes, Vec<(Bytes, Bytes, Bytes)>),
}

/// The cells of one mutation: its inline column values, or its
/// `associated_cell_count` cells taken from the call's cell block.
struct MutationCell {
    row: Option<Bytes>,
    family: Bytes,
    qualifier: Bytes,
    timestamp: Option<i64>,
    /// Put, or a delete kind.
    kind: KvType,
    value: Bytes,
}

fn delete_kind(t: Option<i32>) -> Result<KvType, RpcError> {
    use pb::mutation_proto::DeleteType;
    Ok(match t.map(DeleteType::try_from) {
        None | Some(Ok(DeleteType::DeleteMultipleVersions)) => KvType::DeleteColumn,
        Some(Ok(DeleteType::DeleteOneVersion)) => KvType::Delete,
        Some(Ok(DeleteType::DeleteFamily)) => KvType::DeleteFamily,
        Some(Ok(DeleteType::DeleteFamilyVersion)) => KvType::DeleteFamilyVersion,
        Some(Err(_)) => return Err(RpcError::invalid("unknown delete type")),
    })
}

/// The nonce HBase's client marked an Increment or Append with: the
/// request's nonce group (`MutateRequest.nonce_group`,
/// `MultiRequest.nonceGroup`; 0 when absent, as HBase reads it) and the
/// mutation's nonce. None when the mutation has none (or HBase's NO_NONCE,
/// 0).
pub fn nonce(group: Option<u64>, m: &pb::MutationProto) -> Option<Nonce> {
    Nonce::new(group.unwrap_or(0), m.nonce?)
}

/// False when the client asked an Increment or Append not to answer its
/// cells (`Mutation.setReturnResults(false)`: the attribute `_rr_` holding
/// a false boolean).
pub fn returns_results(m: &pb::MutationProto) -> bool {
    !m.attribute
        .iter()
        .any(|a| a.name == "_rr_" && a.value.as_deref() == Some(&[0u8][..]))
}

/// Reads a mutation; `block` yields the call's cell-block cells in order.
pub fn mutation(
    m: &pb::MutationProto,
    block: &mut impl Iterator<Item = KeyValue>,
) -> Result<Mutation, RpcError> {
    use pb::mutation_proto::MutationType;
    let kind = m
        .mutate_type
        .map(MutationType::try_from)
        .transpose()
        .map_err(|_| RpcError::invalid("unknown mutation type"))?
        .ok_or_else(|| RpcError::invalid("a mutation without a type"))?;
    let default_ts = ts(m.timestamp);
    let mut cells = Vec::new();
    for cv in &m.column_value {
        for qv in &cv.qualifier_value {
            let k = if kind == MutationType::Delete {
                delete_kind(qv.delete_type)?
            } else {
                KvType::Put
            };
            cells.push(MutationCell {
                row: None,
                family: cv.family.clone(),
                qualifier: qv.qualifier.clone().unwrap_or_default(),
                timestamp: qv.timestamp.map_or(default_ts, |t| ts(Some(t))),
                kind: k,
                value: qv.value.clone().unwrap_or_default(),
            });
        }
    }
    let from_block = usize::try_from(m.associated_cell_count.unwrap_or(0))
        .map_err(|_| RpcError::invalid("a negative associated cell count"))?;
    for _ in 0..from_block {
        let kv = block.next().ok_or_else(|| {
            RpcError::invalid("the cell block holds fewer cells than the mutations announce")
        })?;
        cells.push(MutationCell {
            row: Some(kv.row),
            family: kv.family,
            qualifier: kv.qualifier,
            timestamp: ts(Some(kv.timestamp as u64)),
            kind: kv.kind,
            value: kv.value,
        });
    }
    let row = match (&m.row, cells.iter().find_map(|c| c.row.clone())) {
        (Some(r), _) if !r.is_empty() => r.clone(),
        (_, Some(r)) => r,
        _ => return Err(RpcError::invalid("a mutation without a row")),
    };
    if cells
        .iter()
        .any(|c| c.row.as_ref().is_some_and(|r| *r != row))
    {
        return Err(RpcError::invalid(
            "a mutation's cells belong to more than one row",
        ));
    }
    match kind {
        MutationType::Put => {
            if cells.is_empty() {
                return Err(RpcError::invalid("a Put with no columns"));
            }
            let mut rm = RowMutation::new(row);
            for c in cells {
                if c.kind != KvType::Put {
                    return Err(RpcError::invalid("a delete cell inside a Put"));
                }
                rm.ops.push(RowOp::Put {
                    family: c.family,
                    qualifier: c.qualifier,
                    timestamp: c.timestamp,
                    value: c.value,
                });
            }
            Ok(Mutation::Row(rm))
        }
        MutationType::Delete => {
            let mut rm = RowMutation::new(row);
            if cells.is_empty() {
                rm.ops.push(RowOp::DeleteRow {
                    timestamp: default_ts,
                });
            }
            for c in cells {
                rm.ops.push(match c.kind {
                    KvType::Put => return Err(RpcError::invalid("a put cell inside a Delete")),
                    KvType::Delete => RowOp::DeleteVersion {
                        family: c.family,
                        qualifier: c.qualifier,
                        timestamp: c.timestamp,
                    },
                    KvType::DeleteColumn => RowOp::DeleteColumn {
                        family: c.family,
                        qualifier: c.qualifier,
                        timestamp: c.timestamp,
                    },
                    KvType::DeleteFamily => RowOp::DeleteFamily {
                        family: c.family,
                        timestamp: c.timestamp,
                    },
                    KvType::DeleteFamilyVersion => RowOp::DeleteFamilyVersion {
                        family: c.family,
                        timestamp: c.timestamp.ok_or_else(|| {
                            RpcError::invalid("addFamilyVersion needs an explicit timestamp")
                        })?,
                    },
                });
            }
            Ok(Mutation::Row(rm))
        }
        MutationType::Increment => {
            let mut cols = Vec::with_capacity(cells.len());
            for c in cells {
                let n: [u8; 8] = c.value[..].try_into().map_err(|_| {
                    RpcError::invalid(format!(
                        "an increment amount is {} bytes, not an 8-byte long",
                        c.value.len()
                    ))
                })?;
                cols.push((c.family, c.qualifier, i64::from_be_bytes(n)));
            }
            if cols.is_empty() {
                return Err(RpcError::invalid("an Increment with no columns"));
            }
            Ok(Mutation::Increment(row, cols))
        }
        MutationType::Append => {
            let cols: Vec<_> = cells
                .into_iter()
                .map(|c| (c.family, c.qualifier, c.value))
                .collect();
            if cols.is_empty() {
                return Err(RpcError::invalid("an Append with no columns"));
            }
            Ok(Mutation::Append(row, cols))
        }
    }
}

/// A `Condition` (single column, binary comparator) with the mutation it
/// guards.
pub fn check(c: &pb::Condition, mutation: RowMutation) -> Result<CheckAndMutate, RpcError> {
    let cond = condition(c, &mutation.row)?;
    Ok(CheckAndMutate {
        family: cond.family,
        qualifier: cond.qualifier,
        op: cond.op,
        value: cond.value,
        time_range: cond.time_range,
        filter: cond.filter,
        mutation,
    })
}

/// HBase's `Condition` (a column compared with a value) for `row`.
pub fn condition(c: &pb::Condition, row: &[u8]) -> Result<Condition, RpcError> {
    if c.row != row {
        return Err(RpcError::invalid(
            "checkAndMutate: the condition and the mutation name different rows",
        ));
    }
    let range = time_range(c.time_range.as_ref())?;
    if let Some(f) = &c.filter {
        // ifMatches(Filter): the row read through the filter decides.
        return Ok(Condition {
            family: Bytes::new(),
            qualifier: Bytes::new(),
            op: CompareOp::Equal,
            value: Bytes::new(),
            time_range: range,
            filter: Some(Arc::new(filters::filter(f)?)),
        });
    }
    let family = c
        .family
        .clone()
        .ok_or_else(|| RpcError::invalid("checkAndMutate without a family"))?;
    let qualifier = c.qualifier.clone().unwrap_or_default();
    let cmp = c
        .comparator
        .as_ref()
        .ok_or_else(|| RpcError::invalid("checkAndMutate without a comparator"))?;
    let value = match filters::comparator(cmp)? {
        shoal_storage::region::filter::Comparator::Binary(v) => v,
        _ => {
            return Err(RpcError::invalid(format!(
                "checkAndMutate compares with BinaryComparator only, not {}",
                cmp.name
            )));
        }
    };
    // HBase reads "operand OP current"; Shoal's check reads "current OP
    // operand". An EQUAL/NOT_EQUAL with no operand is ifNotExists/ifExists.
    let op = match pb::CompareType::try_from(c.compare_type.unwrap_or(2)) {
        Ok(pb::CompareType::Equal) if value.is_empty() => CompareOp::Missing,
        Ok(pb::CompareType::NotEqual) if value.is_empty() => CompareOp::Exists,
        Ok(pb::CompareType::Equal) => CompareOp::Equal,
        Ok(pb::CompareType::NotEqual) => CompareOp::NotEqual,
        Ok(pb::CompareType::Less) => CompareOp::Greater,
        Ok(pb::CompareType::LessOrEqual) => CompareOp::GreaterOrEqual,
        Ok(pb::CompareType::Greater) => CompareOp::Less,
        Ok(pb::CompareType::GreaterOrEqual) => CompareOp::LessOrEqual,
        Ok(pb::CompareType::NoOp) => CompareOp::NoOp,
        Err(_) => {
            return Err(RpcError::invalid(
                "checkAndMutate: unsupported compare type",
            ));
        }
    };
    Ok(Condition {
        family,
        qualifier,
        op,
        value,
        time_range: range,
        filter: None,
    })
}

/// Where the cells of answers go: the cell block, or inline.
pub struct ResultWriter {
    /// Cells go to the block (the connection named a codec).
    pub cell_blocks: bool,
    /// The block so far.
    pub block: Vec<u8>,
}

impl ResultWriter {
    /// A writer for a connection with or without a codec.
    pub fn new(cell_blocks: bool) -> ResultWriter {
        ResultWriter {
            cell_blocks,
            block: Vec::new(),
        }
    }

    /// A `Result` of these cells (sorted as HBase's client expects).
    pub fn result(&mut self, cells: &[Cell]) -> pb::Result {
        if self.cell_blocks {
            self.block.reserve(
                cells
                    .iter()
                    .map(|c| {
                        4 + 8
                            + 12
                            + c.row.len()
                            + c.family.len()
                            + c.qualifier.len()
                            + c.value.len()
                    })
                    .sum(),
            );
            for c in cells {
                cells::encode(
                    &mut self.block,
                    &c.row,
                    &c.family,
                    &c.qualifier,
                    c.timestamp,
                    kv_type(c.kind),
                    &c.value,
                );
            }
            pb::Result {
                associated_cell_count: Some(cells.len() as i32),
                stale: Some(false),
                ..Default::default()
            }
        } else {
            pb::Result {
                cell: cells
                    .iter()
                    .map(|c| pb::Cell {
                        row: Some(c.row.clone()),
                        family: Some(c.family.clone()),
                        qualifier: Some(c.qualifier.clone()),
                        timestamp: Some(c.timestamp as u64),
                        cell_type: Some(pb::CellType::Put as i32),
                        value: Some(c.value.clone()),
                        tags: None,
                    })
                    .collect(),
                stale: Some(false),
                ..Default::default()
            }
        }
    }
}

fn kv_type(kind: CellType) -> KvType {
    match kind {
        CellType::Put => KvType::Put,
        CellType::Delete => KvType::Delete,
        CellType::DeleteFamilyVersion => KvType::DeleteFamilyVersion,
        CellType::DeleteColumn => KvType::DeleteColumn,
        CellType::DeleteFamily => KvType::DeleteFamily,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_family_options_reach_the_read() {
        let g = pb::Get {
            row: Bytes::from_static(b"r"),
            store_limit: Some(2),
            store_offset: Some(1),
            cf_time_range: vec![pb::ColumnFamilyTimeRange {
                column_family: Bytes::from_static(b"a"),
                time_range: pb::TimeRange {
                    from: Some(5),
                    to: Some(9),
                },
            }],
            ..Default::default()
        };
        let o = get(&g).unwrap().get.per_family;
        assert_eq!((o.limit, o.offset), (Some(2), 1));
        assert_eq!(
            o.time_range(b"a", TimeRange::ALL),
            TimeRange { min: 5, max: 9 }
        );
        assert_eq!(o.time_range(b"b", TimeRange::ALL), TimeRange::ALL);
    }
    use pb::mutation_proto::column_value::QualifierValue;
    use pb::mutation_proto::{ColumnValue, DeleteType, MutationType};

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn bounds_forward_and_reversed() {
        let mut s = pb::Scan {
            start_row: Some(b("b")),
            stop_row: Some(b("d")),
            ..Default::default()
        };
        assert_eq!(scan_bounds(&s), (b("b"), b("d")));
        s.include_stop_row = Some(true);
        assert_eq!(scan_bounds(&s), (b("b"), successor(b"d")));
        // Reversed from "d" down to "b" (exclusive).
        let s = pb::Scan {
            start_row: Some(b("d")),
            stop_row: Some(b("b")),
            reversed: Some(true),
            ..Default::default()
        };
        assert_eq!(scan_bounds(&s), (successor(b"b"), successor(b"d")));
        // The meta lookup: start "t,row,99999999999999", stop "t,," inclusive.
        let s = pb::Scan {
            start_row: Some(b("t,r,99999999999999")),
            stop_row: Some(b("t,,")),
            include_stop_row: Some(true),
            reversed: Some(true),
            ..Default::default()
        };
        assert_eq!(
            scan_bounds(&s),
            (b("t,,"), successor(b"t,r,99999999999999"))
        );
        assert_eq!(clamp(b("a"), b("z"), b"c", b"f"), Some((b("c"), b("f"))));
        assert_eq!(
            clamp(b("a"), Bytes::new(), b"", b""),
            Some((b("a"), Bytes::new()))
        );
        assert_eq!(clamp(b("x"), b("z"), b"c", b"f"), None);
    }

    #[test]
    fn mutations_inline_and_from_the_block() {
        let put = pb::MutationProto {
            row: Some(b("r")),
            mutate_type: Some(MutationType::Put as i32),
            column_value: vec![ColumnValue {
                family: b("f"),
                qualifier_value: vec![QualifierValue {
                    qualifier: Some(b("q")),
                    value: Some(b("v")),
                    timestamp: Some(i64::MAX as u64),
                    ..Default::default()
                }],
            }],
            ..Default::default()
        };
        let m = mutation(&put, &mut std::iter::empty()).unwrap();
        assert_eq!(m, Mutation::Row(RowMutation::new("r").put("f", "q", "v")));
        // From the block.
        let mut block = Vec::new();
        cells::encode(&mut block, b"r", b"f", b"q", 5, KvType::Put, b"v");
        let kvs = cells::decode(Bytes::from(block)).unwrap();
        let m2 = pb::MutationProto {
            row: None,
            mutate_type: Some(MutationType::Put as i32),
            associated_cell_count: Some(1),
            ..Default::default()
        };
        let m = mutation(&m2, &mut kvs.clone().into_iter()).unwrap();
        assert_eq!(
            m,
            Mutation::Row(RowMutation::new("r").put_at("f", "q", 5, "v"))
        );
        // Missing cells.
        assert!(mutation(&m2, &mut std::iter::empty()).is_err());
        // A whole-row delete, and a one-version delete of the newest.
        let del = pb::MutationProto {
            row: Some(b("r")),
            mutate_type: Some(MutationType::Delete as i32),
            ..Default::default()
        };
        assert_eq!(
            mutation(&del, &mut std::iter::empty()).unwrap(),
            Mutation::Row(RowMutation::new("r").op(RowOp::DeleteRow { timestamp: None }))
        );
        let one = pb::MutationProto {
            column_value: vec![ColumnValue {
                family: b("f"),
                qualifier_value: vec![QualifierValue {
                    qualifier: Some(b("q")),
                    delete_type: Some(DeleteType::DeleteOneVersion as i32),
                    ..Default::default()
                }],
            }],
            ..del
        };
        assert_eq!(
            mutation(&one, &mut std::iter::empty()).unwrap(),
            Mutation::Row(RowMutation::new("r").op(RowOp::DeleteVersion {
                family: b("f"),
                qualifier: b("q"),
                timestamp: None
            }))
        );
    }

    #[test]
    fn check_and_mutate_orientation() {
        let cond = |op: pb::CompareType, v: &str| pb::Condition {
            row: b("r"),
            family: Some(b("f")),
            qualifier: Some(b("q")),
            compare_type: Some(op as i32),
            comparator: Some(pb::Comparator {
                name: "org.apache.hadoop.hbase.filter.BinaryComparator".into(),
                serialized_comparator: Some(Bytes::from(prost::Message::encode_to_vec(
                    &pb::BinaryComparator {
                        comparable: pb::ByteArrayComparable { value: Some(b(v)) },
                    },
                ))),
            }),
            time_range: None,
            filter: None,
        };
        let m = RowMutation::new("r").put("f", "q", "x");
        // HBase: LESS passes when the operand is less than the current value.
        let c = check(&cond(pb::CompareType::Less, "a"), m.clone()).unwrap();
        assert!(c.op.passes(Some(b"b"), &c.value));
        assert!(!c.op.passes(Some(b"0"), &c.value));
        let c = check(&cond(pb::CompareType::Equal, ""), m.clone()).unwrap();
        assert_eq!(c.op, CompareOp::Missing);
        let mut other = m.clone();
        other.row = b("s");
        assert!(check(&cond(pb::CompareType::Equal, "v"), other).is_err());
    }
}
