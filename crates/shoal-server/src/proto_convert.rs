//! Conversions between the `shoal.v1` messages (gRPC and the framed
//! transport carry the same ones) and the engine's and catalog's types.
//! Every check of a request's shape happens here, with an error that names
//! the field.

use crate::catalog::schema::KeepDeletedName;
use crate::catalog::{BloomName, CompressionName, FamilyPatch, FamilySchema, ImcName, TableRecord};
use crate::error::ServiceError;
use crate::metrics::status::RegionView;
use bytes::Bytes;
use shoal_proto::v1 as pb;
use shoal_storage::region::{
    CheckAndMutate, Columns, CompareOp, Get, RowMutation, RowOp, RowResult, Scan, TimeRange,
};

fn invalid(msg: impl Into<String>) -> ServiceError {
    ServiceError::InvalidArgument(msg.into())
}

/// Column selectors → the engine's column set.
pub fn columns(selectors: &[pb::ColumnSelector]) -> Result<Columns, ServiceError> {
    let mut out = Columns::all();
    for s in selectors {
        if s.family.is_empty() {
            return Err(invalid("columns: a column selector has an empty family"));
        }
        if s.qualifiers.is_empty() {
            out = out.family(Bytes::from(s.family.clone()));
        } else {
            for q in &s.qualifiers {
                out = out.column(Bytes::from(s.family.clone()), Bytes::from(q.clone()));
            }
        }
    }
    Ok(out)
}

/// A time range, checked.
pub fn time_range(t: Option<&pb::TimeRange>) -> Result<TimeRange, ServiceError> {
    match t {
        None => Ok(TimeRange::ALL),
        Some(t) if t.min >= t.max => Err(invalid(format!(
            "time_range: min ({}) must be below max ({})",
            t.min, t.max
        ))),
        Some(t) => Ok(TimeRange {
            min: t.min,
            max: t.max,
        }),
    }
}

/// A get.
pub fn get(spec: Option<pb::GetSpec>) -> Result<Get, ServiceError> {
    let spec = spec.ok_or_else(|| invalid("get: missing"))?;
    if spec.row.is_empty() {
        return Err(invalid("get.row: row key is empty"));
    }
    Ok(Get {
        per_family: Default::default(),
        row: spec.row,
        columns: columns(&spec.columns)?,
        time_range: time_range(spec.time_range.as_ref())?,
        max_versions: spec.max_versions.max(1),
        filter: None,
    })
}

/// A copy of bytes decoded from a request. Decoded fields are slices of the
/// request's receive buffer (8 KiB or more); a put's bytes live on in the
/// memstore, which charges only their length, so they get their own
/// allocation instead of pinning the whole buffer.
fn owned(b: &Bytes) -> Bytes {
    Bytes::copy_from_slice(b)
}

/// A row mutation.
pub fn row_mutation(m: Option<pb::RowMutation>) -> Result<RowMutation, ServiceError> {
    let m = m.ok_or_else(|| invalid("mutation: missing"))?;
    if m.row.is_empty() {
        return Err(invalid("mutation.row: row key is empty"));
    }
    if m.mutations.is_empty() {
        return Err(invalid(
            "mutation.mutations: a mutation needs at least one change",
        ));
    }
    let mut out = RowMutation::new(owned(&m.row));
    for (i, op) in m.mutations.into_iter().enumerate() {
        let kind = op
            .kind
            .ok_or_else(|| invalid(format!("mutation.mutations[{i}]: neither put nor delete")))?;
        let row_op = match kind {
            pb::mutation::Kind::Put(p) => {
                if p.family.is_empty() {
                    return Err(invalid(format!("mutation.mutations[{i}].family is empty")));
                }
                RowOp::Put {
                    family: owned(&p.family),
                    qualifier: owned(&p.qualifier),
                    timestamp: p.timestamp,
                    value: owned(&p.value),
                }
            }
            pb::mutation::Kind::Delete(d) => delete_op(i, d)?,
        };
        out = out.op(row_op);
    }
    Ok(out)
}

fn delete_op(i: usize, d: pb::Delete) -> Result<RowOp, ServiceError> {
    let kind = pb::DeleteKind::try_from(d.kind).map_err(|_| {
        invalid(format!(
            "mutation.mutations[{i}].kind: unknown delete kind {}",
            d.kind
        ))
    })?;
    let family = Bytes::from(d.family);
    let need_family = || {
        if family.is_empty() {
            Err(invalid(format!("mutation.mutations[{i}].family is empty")))
        } else {
            Ok(())
        }
    };
    Ok(match kind {
        pb::DeleteKind::Unspecified => {
            return Err(invalid(format!(
                "mutation.mutations[{i}].kind: say which delete (version, column, family, family_version, row)"
            )));
        }
        pb::DeleteKind::Version => {
            need_family()?;
            RowOp::DeleteVersion {
                family,
                qualifier: Bytes::from(d.qualifier),
                timestamp: d.timestamp,
            }
        }
        pb::DeleteKind::Column => {
            need_family()?;
            RowOp::DeleteColumn {
                family,
                qualifier: Bytes::from(d.qualifier),
                timestamp: d.timestamp,
            }
        }
        pb::DeleteKind::Family => {
            need_family()?;
            RowOp::DeleteFamily {
                family,
                timestamp: d.timestamp,
            }
        }
        pb::DeleteKind::FamilyVersion => {
            need_family()?;
            RowOp::DeleteFamilyVersion {
                family,
                timestamp: d.timestamp.ok_or_else(|| {
                    invalid(format!(
                        "mutation.mutations[{i}].timestamp: a family-version delete needs one"
                    ))
                })?,
            }
        }
        pb::DeleteKind::Row => RowOp::DeleteRow {
            timestamp: d.timestamp,
        },
    })
}

/// A check-and-mutate.
pub fn check_and_mutate(r: pb::CheckAndMutateRequest) -> Result<CheckAndMutate, ServiceError> {
    let op = match pb::CompareOp::try_from(r.op) {
        Ok(pb::CompareOp::Equal) => CompareOp::Equal,
        Ok(pb::CompareOp::NotEqual) => CompareOp::NotEqual,
        Ok(pb::CompareOp::Less) => CompareOp::Less,
        Ok(pb::CompareOp::LessOrEqual) => CompareOp::LessOrEqual,
        Ok(pb::CompareOp::Greater) => CompareOp::Greater,
        Ok(pb::CompareOp::GreaterOrEqual) => CompareOp::GreaterOrEqual,
        Ok(pb::CompareOp::Exists) => CompareOp::Exists,
        Ok(pb::CompareOp::Missing) => CompareOp::Missing,
        Ok(pb::CompareOp::Unspecified) | Err(_) => {
            return Err(invalid("op: give a comparison (EQUAL, LESS, EXISTS, …)"));
        }
    };
    if r.family.is_empty() {
        return Err(invalid("family is empty"));
    }
    let mutation = row_mutation(r.mutation)?;
    if mutation.row[..] != r.row[..] {
        return Err(invalid("mutation.row must be the checked row"));
    }
    Ok(CheckAndMutate {
        time_range: Default::default(),
        filter: None,
        family: Bytes::from(r.family),
        qualifier: Bytes::from(r.qualifier),
        op,
        value: Bytes::from(r.value),
        mutation,
    })
}

/// A scan.
pub fn scan(r: &pb::ScanRequest) -> Result<Scan, ServiceError> {
    if !r.stop_row.is_empty() && r.start_row > r.stop_row {
        return Err(invalid("start_row is after stop_row"));
    }
    Ok(Scan {
        raw: false,
        per_family: Default::default(),
        start_row: Bytes::from(r.start_row.clone()),
        stop_row: Bytes::from(r.stop_row.clone()),
        columns: columns(&r.columns)?,
        time_range: time_range(r.time_range.as_ref())?,
        max_versions: r.max_versions.max(1),
        limit: usize::try_from(r.limit).unwrap_or(usize::MAX),
        batch: r.batch as usize,
        reverse: r.reverse,
        cache_blocks: !r.skip_cache,
    })
}

/// A scan's filter, in HBase's filter language (empty: none).
pub fn filter(
    text: &str,
) -> Result<Option<std::sync::Arc<shoal_storage::region::filter::Filter>>, ServiceError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    shoal_storage::region::filter::parse(text)
        .map(|f| Some(std::sync::Arc::new(f)))
        .map_err(|e| invalid(format!("filter: {e}")))
}

/// A result row.
pub fn row(r: RowResult) -> pb::Row {
    // No copies: the cells' bytes (slices of cached blocks or memstore
    // entries) go to the encoder as they are.
    pb::Row {
        row: r.row,
        cells: r
            .cells
            .into_iter()
            .map(|c| pb::Cell {
                family: c.family,
                qualifier: c.qualifier,
                timestamp: c.timestamp,
                value: c.value,
            })
            .collect(),
        partial: false,
    }
}

/// A family patch from the wire.
pub fn family_patch(f: pb::FamilySchema) -> Result<FamilyPatch, ServiceError> {
    let compression = match pb::Compression::try_from(f.compression) {
        Ok(pb::Compression::Unspecified) => None,
        Ok(pb::Compression::None) => Some(CompressionName::None),
        Ok(pb::Compression::Lz4) => Some(CompressionName::Lz4),
        Ok(pb::Compression::Zstd) => Some(CompressionName::Zstd),
        Err(_) => {
            return Err(invalid(format!(
                "family {}: unknown compression {}",
                f.name, f.compression
            )));
        }
    };
    let bloom = match pb::BloomType::try_from(f.bloom) {
        Ok(pb::BloomType::Unspecified) => None,
        Ok(pb::BloomType::None) => Some(BloomName::None),
        Ok(pb::BloomType::Row) => Some(BloomName::Row),
        Ok(pb::BloomType::Rowcol) => Some(BloomName::Rowcol),
        Err(_) => {
            return Err(invalid(format!(
                "family {}: unknown bloom type {}",
                f.name, f.bloom
            )));
        }
    };
    let in_memory_compaction = match pb::InMemoryCompaction::try_from(f.in_memory_compaction) {
        Ok(pb::InMemoryCompaction::Unspecified) => None,
        Ok(pb::InMemoryCompaction::None) => Some(ImcName::None),
        Ok(pb::InMemoryCompaction::Basic) => Some(ImcName::Basic),
        Ok(pb::InMemoryCompaction::Eager) => Some(ImcName::Eager),
        Err(_) => {
            return Err(invalid(format!(
                "family {}: unknown in-memory compaction {}",
                f.name, f.in_memory_compaction
            )));
        }
    };
    let keep_deleted_cells = match pb::KeepDeletedCells::try_from(f.keep_deleted_cells) {
        Ok(pb::KeepDeletedCells::Unspecified) => None,
        Ok(pb::KeepDeletedCells::False) => Some(KeepDeletedName::False),
        Ok(pb::KeepDeletedCells::True) => Some(KeepDeletedName::True),
        Ok(pb::KeepDeletedCells::Ttl) => Some(KeepDeletedName::Ttl),
        Err(_) => {
            return Err(invalid(format!(
                "family {}: unknown keep_deleted_cells {}",
                f.name, f.keep_deleted_cells
            )));
        }
    };
    Ok(FamilyPatch {
        name: f.name,
        in_memory_compaction,
        keep_deleted_cells,
        max_versions: f.max_versions,
        min_versions: f.min_versions,
        ttl_seconds: f.ttl_seconds,
        block_size: f.block_size,
        compression,
        bloom,
        in_memory: f.in_memory,
        cache_data_on_read: f.cache_data_on_read,
        prefetch_on_open: f.prefetch_on_open,
        cache_scans: f.cache_scans,
    })
}

/// A family's settings on the wire (all fields set).
pub fn family_schema(f: &FamilySchema) -> pb::FamilySchema {
    pb::FamilySchema {
        name: f.name.clone(),
        max_versions: Some(f.max_versions),
        min_versions: Some(f.min_versions),
        ttl_seconds: Some(f.ttl_seconds),
        block_size: Some(f.block_size),
        compression: match f.compression {
            CompressionName::None => pb::Compression::None,
            CompressionName::Lz4 => pb::Compression::Lz4,
            CompressionName::Zstd => pb::Compression::Zstd,
        } as i32,
        bloom: match f.bloom {
            BloomName::None => pb::BloomType::None,
            BloomName::Row => pb::BloomType::Row,
            BloomName::Rowcol => pb::BloomType::Rowcol,
        } as i32,
        in_memory: Some(f.in_memory),
        cache_data_on_read: Some(f.cache_data_on_read),
        prefetch_on_open: Some(f.prefetch_on_open),
        cache_scans: Some(f.cache_scans),
        in_memory_compaction: match f.in_memory_compaction {
            ImcName::None => pb::InMemoryCompaction::None,
            ImcName::Basic => pb::InMemoryCompaction::Basic,
            ImcName::Eager => pb::InMemoryCompaction::Eager,
        } as i32,
        keep_deleted_cells: match f.keep_deleted_cells {
            KeepDeletedName::False => pb::KeepDeletedCells::False,
            KeepDeletedName::True => pb::KeepDeletedCells::True,
            KeepDeletedName::Ttl => pb::KeepDeletedCells::Ttl,
        } as i32,
    }
}

/// A region on the wire.
pub fn region_info(r: &RegionView) -> pb::RegionInfo {
    pb::RegionInfo {
        id: r.id.clone(),
        start_row: r.start_row.to_vec(),
        end_row: r.end_row.to_vec(),
        size_bytes: r.size_bytes,
        memstore_bytes: r.memstore_bytes,
        files: r.files,
        cache_ratio: r.cache_ratio.unwrap_or(0.0),
        has_references: r.has_references,
    }
}

/// A table on the wire, with its open regions' figures from `regions`.
pub fn table_description(t: &TableRecord, regions: &[RegionView]) -> pb::TableDescription {
    pb::TableDescription {
        name: t.name.clone(),
        state: if t.enabled {
            pb::TableState::Enabled
        } else {
            pb::TableState::Disabled
        } as i32,
        families: t.families.iter().map(family_schema).collect(),
        regions: t
            .regions
            .iter()
            .map(|r| {
                regions
                    .iter()
                    .find(|v| v.id == r.id)
                    .map(region_info)
                    .unwrap_or_else(|| pb::RegionInfo {
                        id: r.id.clone(),
                        start_row: r.start_row.to_vec(),
                        end_row: r.end_row.to_vec(),
                        ..Default::default()
                    })
            })
            .collect(),
    }
}
