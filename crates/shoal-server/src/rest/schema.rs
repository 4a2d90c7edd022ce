//! A table's resources: `/<table>/schema` (GET describes; PUT creates, or
//! replaces the families of an existing table; POST creates or adds and
//! changes families; DELETE disables and drops), `/<table>/regions` and
//! `/<table>/exists`. Families are HBase's attributes (`VERSIONS`, `TTL`,
//! `COMPRESSION`, `BLOOMFILTER`, `IN_MEMORY`, `BLOCKSIZE`, `BLOCKCACHE`,
//! `MIN_VERSIONS`, `PREFETCH_BLOCKS_ON_OPEN`); others are ignored, and a
//! value Shoal cannot honour (a compression or bloom type it lacks) is
//! refused with 400.

use super::fault::RestError;
use super::model::*;
use super::representation::{MODELS, Repr};
use super::request::RestRequest;
use super::respond;
use super::{json, protobuf, xml};
use crate::catalog::schema::KeepDeletedName;
use crate::catalog::{BloomName, CompressionName, FamilyPatch, FamilySchema, TableRecord};
use crate::error::ServiceError;
use crate::host::Access;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

/// HBase's TTL meaning "forever".
const TTL_FOREVER: u64 = i32::MAX as u64;

/// `GET /<table>/schema`.
pub async fn get(h: Access<'_>, table: &str, req: &RestRequest) -> Result<Response, RestError> {
    let repr = req.accept(MODELS)?;
    let record = h.describe_table(table).await?;
    Ok(respond::model(repr, &schema_of(&record)))
}

/// The schema HBase's gateway would describe `record` with.
fn schema_of(record: &TableRecord) -> TableSchemaModel {
    TableSchemaModel {
        name: record.name.clone(),
        attrs: vec![("IS_META".into(), "false".into())],
        columns: record.families.iter().map(column_of).collect(),
    }
}

fn column_of(f: &FamilySchema) -> ColumnSchemaModel {
    let ttl = if f.ttl_seconds == 0 {
        TTL_FOREVER
    } else {
        f.ttl_seconds
    };
    let attrs = [
        ("BLOCKCACHE", f.cache_data_on_read.to_string()),
        ("BLOCKSIZE", f.block_size.to_string()),
        ("BLOOMFILTER", f.bloom.hbase_name().to_string()),
        ("COMPRESSION", f.compression.hbase_name().to_string()),
        ("IN_MEMORY", f.in_memory.to_string()),
        (
            "KEEP_DELETED_CELLS",
            f.keep_deleted_cells.hbase_name().to_string(),
        ),
        ("MIN_VERSIONS", f.min_versions.to_string()),
        ("TTL", ttl.to_string()),
        ("VERSIONS", f.max_versions.to_string()),
    ];
    ColumnSchemaModel {
        name: f.name.clone(),
        attrs: attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    }
}

/// Reads the schema in the body.
fn read_schema(req: &RestRequest) -> Result<TableSchemaModel, RestError> {
    Ok(match req.content(MODELS)? {
        Repr::Json => json::table_schema(&req.body)?,
        Repr::Protobuf => protobuf::table_schema(&req.body)?,
        _ => xml::table_schema(&req.body)?,
    })
}

/// The family settings a column schema asks for.
pub fn patch_of(c: &ColumnSchemaModel) -> Result<FamilyPatch, RestError> {
    if c.name.is_empty() {
        return Err(RestError::bad("a ColumnSchema has no name"));
    }
    let number = |key: &str| -> Result<Option<u64>, RestError> {
        let Some(v) = c.attr(key) else {
            return Ok(None);
        };
        // The shell writes "86400 SECONDS (1 DAY)"; HBase writes FOREVER.
        if v.eq_ignore_ascii_case("FOREVER") {
            return Ok(Some(TTL_FOREVER));
        }
        let digits = v.split_whitespace().next().unwrap_or("");
        digits
            .parse()
            .map(Some)
            .map_err(|_| RestError::bad(format!("family {}: {key}={v:?} is not a number", c.name)))
    };
    let to_u32 = |key: &str| -> Result<Option<u32>, RestError> {
        number(key)?
            .map(|n| {
                u32::try_from(n).map_err(|_| {
                    RestError::bad(format!("family {}: {key}={n} is too large", c.name))
                })
            })
            .transpose()
    };
    let flag = |key: &str| c.attr(key).map(|v| v.eq_ignore_ascii_case("true"));
    let compression = match c
        .attr("COMPRESSION")
        .map(str::to_ascii_uppercase)
        .as_deref()
    {
        None => None,
        Some("NONE") => Some(CompressionName::None),
        Some("LZ4") => Some(CompressionName::Lz4),
        Some("ZSTD") => Some(CompressionName::Zstd),
        Some(other) => {
            return Err(RestError::bad(format!(
                "family {}: COMPRESSION {other} is not supported (NONE, LZ4 or ZSTD)",
                c.name
            )));
        }
    };
    let bloom = match c
        .attr("BLOOMFILTER")
        .map(str::to_ascii_uppercase)
        .as_deref()
    {
        None => None,
        Some("NONE") => Some(BloomName::None),
        Some("ROW") => Some(BloomName::Row),
        Some("ROWCOL") => Some(BloomName::Rowcol),
        Some(other) => {
            return Err(RestError::bad(format!(
                "family {}: BLOOMFILTER {other} is not supported (NONE, ROW or ROWCOL)",
                c.name
            )));
        }
    };
    let ttl_seconds = number("TTL")?.map(|t| if t >= TTL_FOREVER { 0 } else { t });
    let keep_deleted_cells = match c.attr("KEEP_DELETED_CELLS") {
        None => None,
        Some(v) => Some(KeepDeletedName::from_hbase_name(v).ok_or_else(|| {
            RestError::bad(format!(
                "family {}: KEEP_DELETED_CELLS {v:?} is not FALSE, TRUE or TTL",
                c.name
            ))
        })?),
    };
    Ok(FamilyPatch {
        name: c.name.clone(),
        max_versions: to_u32("VERSIONS")?,
        min_versions: to_u32("MIN_VERSIONS")?,
        ttl_seconds,
        block_size: to_u32("BLOCKSIZE")?,
        compression,
        bloom,
        in_memory: flag("IN_MEMORY"),
        cache_data_on_read: flag("BLOCKCACHE"),
        prefetch_on_open: flag("PREFETCH_BLOCKS_ON_OPEN"),
        keep_deleted_cells,
        ..FamilyPatch::default()
    })
}

/// `PUT` (`replace`) or `POST /<table>/schema`: creates the table (201), or
/// changes its families (PUT: to exactly these; POST: these added or
/// changed).
pub async fn put(
    h: Access<'_>,
    table: &str,
    req: &RestRequest,
    replace: bool,
) -> Result<Response, RestError> {
    let schema = read_schema(req)?;
    let patches = schema
        .columns
        .iter()
        .map(patch_of)
        .collect::<Result<Vec<_>, _>>()?;
    let existing = match h.describe_table(table).await {
        Ok(t) => Some(t),
        Err(ServiceError::NoSuchTable(_)) => None,
        Err(e) => return Err(e.into()),
    };
    match existing {
        None => match h.create_table(table, patches, Vec::new()).await {
            Ok(_) => Ok(created(req)),
            // Someone created it meanwhile (HBase answers the same).
            Err(ServiceError::TableExists(_)) => Ok(respond::empty(StatusCode::NOT_MODIFIED)),
            Err(e) => Err(e.into()),
        },
        Some(record) => {
            let dropped: Vec<String> = if replace {
                record
                    .families
                    .iter()
                    .filter(|f| !patches.iter().any(|p| p.name == f.name))
                    .map(|f| f.name.clone())
                    .collect()
            } else {
                Vec::new()
            };
            h.alter_table(table, patches, dropped).await?;
            Ok(if replace {
                created(req)
            } else {
                respond::empty(StatusCode::OK)
            })
        }
    }
}

/// 201, with the schema's own address as `Location`.
fn created(req: &RestRequest) -> Response {
    let mut r = respond::empty(StatusCode::CREATED);
    if let Some(l) = req
        .location
        .as_deref()
        .and_then(|l| HeaderValue::from_str(l).ok())
    {
        r.headers_mut().insert(header::LOCATION, l);
    }
    r
}

/// `DELETE /<table>/schema`: disables (if enabled) and drops the table.
pub async fn delete(h: Access<'_>, table: &str) -> Result<Response, RestError> {
    match h.disable_table(table).await {
        Ok(()) | Err(ServiceError::TableDisabled(_)) => {}
        Err(e) => return Err(e.into()),
    }
    h.drop_table(table).await?;
    Ok(respond::empty(StatusCode::OK))
}

/// `GET /<table>/regions`: the table's regions and where they are served.
pub async fn regions(h: Access<'_>, table: &str, req: &RestRequest) -> Result<Response, RestError> {
    let repr = req.accept(MODELS)?;
    h.describe_table(table).await?;
    let regions = h
        .region_map(table)?
        .into_iter()
        .map(|r| {
            let id = i64::from(crc32c::crc32c(r.region_id.as_bytes()));
            RegionModel {
                name: format!(
                    "{table},{},{id}.{}.",
                    String::from_utf8_lossy(&r.start_row),
                    r.region_id
                ),
                id,
                start_key: r.start_row,
                end_key: r.end_row,
                location: if r.hbase.is_empty() {
                    r.server
                } else {
                    r.hbase
                },
            }
        })
        .collect();
    let info = TableInfoModel {
        name: table.to_string(),
        regions,
    };
    Ok(respond::model(repr, &info))
}

/// `GET /<table>/exists`: 200 if the caller can see the table, else 404.
pub async fn exists(h: Access<'_>, table: &str) -> Result<Response, RestError> {
    h.describe_table(table).await?;
    Ok(respond::empty(StatusCode::OK))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(attrs: &[(&str, &str)]) -> ColumnSchemaModel {
        ColumnSchemaModel {
            name: "cf".into(),
            attrs: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn hbase_attributes_become_family_settings() {
        let p = patch_of(&column(&[
            ("VERSIONS", "3"),
            ("TTL", "2147483647"),
            ("COMPRESSION", "NONE"),
            ("BLOOMFILTER", "ROW"),
            ("IN_MEMORY", "false"),
            ("KEEP_DELETED_CELLS", "FALSE"),
        ]))
        .unwrap_or_default();
        assert_eq!(p.max_versions, Some(3));
        assert_eq!(p.ttl_seconds, Some(0));
        assert_eq!(p.compression, Some(CompressionName::None));
        assert_eq!(p.bloom, Some(BloomName::Row));
        let p = patch_of(&column(&[("TTL", "86400 SECONDS (1 DAY)")])).unwrap_or_default();
        assert_eq!(p.ttl_seconds, Some(86400));
    }

    #[test]
    fn settings_shoal_lacks_are_refused() {
        for attrs in [
            &[("COMPRESSION", "SNAPPY")][..],
            &[("BLOOMFILTER", "ROWPREFIX_FIXED_LENGTH")],
            &[("VERSIONS", "many")],
            &[("VERSIONS", "99999999999")],
        ] {
            assert!(patch_of(&column(attrs)).is_err(), "{attrs:?}");
        }
        assert!(patch_of(&ColumnSchemaModel::default()).is_err());
    }
}
