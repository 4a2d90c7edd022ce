//! The `application/x-protobuf` representation: HBase REST's own messages
//! (`shoal_proto::hbase_rest`, vendored from hbase-rest 2.6.1), converted
//! to and from the models as HBase's models do it (a timestamp is sent only
//! when it is not `LATEST_TIMESTAMP`; a schema's `ttl`, `maxVersions` and
//! `compression` fields mirror their attributes).

use super::fault::RestError;
use super::model::*;
use prost::Message;
use shoal_proto::hbase_rest as pb;

/// A model as a protobuf message's bytes.
pub trait ToProtobuf {
    /// The encoded message.
    fn to_protobuf(&self) -> Vec<u8>;
}

fn bad(what: &str, e: prost::DecodeError) -> RestError {
    RestError::bad(format!("malformed protobuf {what}: {e}"))
}

impl ToProtobuf for CellSetModel {
    fn to_protobuf(&self) -> Vec<u8> {
        pb::CellSet {
            rows: self
                .rows
                .iter()
                .map(|r| pb::cell_set::Row {
                    key: r.key.clone().unwrap_or_default(),
                    values: r
                        .cells
                        .iter()
                        .map(|c| pb::Cell {
                            row: None,
                            column: c.column.clone(),
                            timestamp: (c.timestamp != LATEST).then_some(c.timestamp),
                            data: Some(c.value.clone()),
                        })
                        .collect(),
                })
                .collect(),
        }
        .encode_to_vec()
    }
}

/// Reads a `CellSet`.
pub fn cell_set(body: &[u8]) -> Result<CellSetModel, RestError> {
    let m = pb::CellSet::decode(body).map_err(|e| bad("CellSet", e))?;
    Ok(CellSetModel {
        rows: m
            .rows
            .into_iter()
            .map(|r| RowModel {
                key: Some(r.key),
                cells: r
                    .values
                    .into_iter()
                    .map(|c| CellModel {
                        column: c.column,
                        timestamp: c.timestamp.unwrap_or(LATEST),
                        value: c.data.unwrap_or_default(),
                    })
                    .collect(),
            })
            .collect(),
    })
}

/// Reads a `Scanner`.
pub fn scanner(body: &[u8]) -> Result<ScannerModel, RestError> {
    let m = pb::Scanner::decode(body).map_err(|e| bad("Scanner", e))?;
    let d = ScannerModel::default();
    Ok(ScannerModel {
        start_row: m.start_row.unwrap_or_default(),
        end_row: m.end_row.unwrap_or_default(),
        columns: m.columns,
        batch: m.batch.unwrap_or(d.batch),
        start_time: m.start_time.unwrap_or(d.start_time),
        end_time: m.end_time.unwrap_or(d.end_time),
        max_versions: m.max_versions.unwrap_or(d.max_versions),
        filter: m.filter,
        caching: m.caching.unwrap_or(d.caching),
        cache_blocks: m.cache_blocks.unwrap_or(d.cache_blocks),
    })
}

/// Reads a `TableSchema`.
pub fn table_schema(body: &[u8]) -> Result<TableSchemaModel, RestError> {
    let m = pb::TableSchema::decode(body).map_err(|e| bad("TableSchema", e))?;
    let mut attrs: Vec<(String, String)> = m.attrs.into_iter().map(|a| (a.name, a.value)).collect();
    if let Some(v) = m.in_memory {
        attrs.push(("IN_MEMORY".into(), v.to_string()));
    }
    if let Some(v) = m.read_only {
        attrs.push(("READONLY".into(), v.to_string()));
    }
    let columns = m
        .columns
        .into_iter()
        .map(|c| {
            let mut attrs: Vec<(String, String)> =
                c.attrs.into_iter().map(|a| (a.name, a.value)).collect();
            let mut set = |k: &str, v: String| {
                if !attrs.iter().any(|(n, _)| n.eq_ignore_ascii_case(k)) {
                    attrs.push((k.to_string(), v));
                }
            };
            if let Some(v) = c.ttl {
                set("TTL", v.to_string());
            }
            if let Some(v) = c.max_versions {
                set("VERSIONS", v.to_string());
            }
            if let Some(v) = c.compression {
                set("COMPRESSION", v);
            }
            ColumnSchemaModel {
                name: c.name.unwrap_or_default(),
                attrs,
            }
        })
        .collect();
    Ok(TableSchemaModel {
        name: m.name.unwrap_or_default(),
        attrs,
        columns,
    })
}

impl ToProtobuf for TableSchemaModel {
    fn to_protobuf(&self) -> Vec<u8> {
        let flag = |attrs: &[(String, String)], k: &str| {
            attrs
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(k))
                .map(|(_, v)| v.eq_ignore_ascii_case("true"))
        };
        pb::TableSchema {
            name: Some(self.name.clone()),
            attrs: self
                .attrs
                .iter()
                .map(|(name, value)| pb::table_schema::Attribute {
                    name: name.clone(),
                    value: value.clone(),
                })
                .collect(),
            columns: self
                .columns
                .iter()
                .map(|c| pb::ColumnSchema {
                    name: Some(c.name.clone()),
                    attrs: c
                        .attrs
                        .iter()
                        .map(|(name, value)| pb::column_schema::Attribute {
                            name: name.clone(),
                            value: value.clone(),
                        })
                        .collect(),
                    ttl: c.attr("TTL").and_then(|v| v.parse().ok()),
                    max_versions: c.attr("VERSIONS").and_then(|v| v.parse().ok()),
                    compression: c.attr("COMPRESSION").map(str::to_string),
                })
                .collect(),
            in_memory: flag(&self.attrs, "IN_MEMORY"),
            read_only: flag(&self.attrs, "READONLY"),
        }
        .encode_to_vec()
    }
}

impl ToProtobuf for TableListModel {
    fn to_protobuf(&self) -> Vec<u8> {
        pb::TableList {
            name: self.names.clone(),
        }
        .encode_to_vec()
    }
}

impl ToProtobuf for TableInfoModel {
    fn to_protobuf(&self) -> Vec<u8> {
        pb::TableInfo {
            name: self.name.clone(),
            regions: self
                .regions
                .iter()
                .map(|r| pb::table_info::Region {
                    name: r.name.clone(),
                    start_key: Some(r.start_key.clone()),
                    end_key: Some(r.end_key.clone()),
                    id: Some(r.id),
                    location: Some(r.location.clone()),
                })
                .collect(),
        }
        .encode_to_vec()
    }
}

impl ToProtobuf for VersionModel {
    fn to_protobuf(&self) -> Vec<u8> {
        pb::Version {
            rest_version: Some(self.rest.clone()),
            jvm_version: Some(self.jvm.clone()),
            os_version: Some(self.os.clone()),
            server_version: Some(self.server.clone()),
            jersey_version: Some(self.jersey.clone()),
            version: Some(self.version.clone()),
            revision: Some(self.revision.clone()),
        }
        .encode_to_vec()
    }
}

impl ToProtobuf for ClusterStatusModel {
    fn to_protobuf(&self) -> Vec<u8> {
        use pb::storage_cluster_status::{Node, Region};
        pb::StorageClusterStatus {
            live_nodes: self
                .live
                .iter()
                .map(|n| Node {
                    name: n.name.clone(),
                    start_code: Some(n.start_code),
                    requests: Some(n.requests),
                    heap_size_mb: Some(n.heap_size_mb),
                    max_heap_size_mb: Some(n.max_heap_size_mb),
                    regions: n
                        .regions
                        .iter()
                        .map(|r| Region {
                            name: r.name.clone(),
                            stores: Some(r.stores),
                            storefiles: Some(r.storefiles),
                            storefile_size_mb: Some(r.storefile_size_mb),
                            mem_store_size_mb: Some(r.memstore_size_mb),
                            ..Region::default()
                        })
                        .collect(),
                })
                .collect(),
            dead_nodes: self.dead.clone(),
            regions: Some(self.regions),
            requests: Some(self.requests),
            average_load: Some(self.average_load),
        }
        .encode_to_vec()
    }
}

/// The protobuf of a model that has none in HBase (`/version/cluster`
/// answers XML and JSON only there): refused with 406.
pub fn not_offered(what: &str) -> RestError {
    RestError::new(
        axum::http::StatusCode::NOT_ACCEPTABLE,
        format!("{what} has no protobuf representation; ask for text/xml or application/json"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn cell_sets_round_trip_and_latest_is_not_sent() {
        let set = CellSetModel {
            rows: vec![RowModel {
                key: Some(Bytes::from("r")),
                cells: vec![
                    CellModel {
                        column: Some(Bytes::from("cf:a")),
                        timestamp: 5,
                        value: Bytes::from("v"),
                    },
                    CellModel {
                        column: Some(Bytes::from("cf:b")),
                        timestamp: LATEST,
                        value: Bytes::from("w"),
                    },
                ],
            }],
        };
        let bytes = set.to_protobuf();
        let decoded = pb::CellSet::decode(&bytes[..]).unwrap_or_default();
        assert_eq!(decoded.rows[0].values[1].timestamp, None);
        assert_eq!(cell_set(&bytes).ok(), Some(set));
    }

    #[test]
    fn schema_fields_become_attributes() {
        let msg = pb::TableSchema {
            name: Some("t".into()),
            columns: vec![pb::ColumnSchema {
                name: Some("cf".into()),
                max_versions: Some(3),
                ..Default::default()
            }],
            ..Default::default()
        };
        let t = table_schema(&msg.encode_to_vec()).unwrap_or_default();
        assert_eq!(t.columns[0].attr("VERSIONS"), Some("3"));
    }

    #[test]
    fn garbage_is_refused() {
        assert!(cell_set(&[0xff, 0xff, 0xff]).is_err());
        assert!(scanner(&[0x0a, 0x10, 0x01]).is_err());
    }
}
