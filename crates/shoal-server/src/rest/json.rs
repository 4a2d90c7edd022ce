//! The `application/json` representation, as HBase's gateway (Jackson over
//! its JAXB models) writes it: `CellSet` is
//! `{"Row":[{"key":b64,"Cell":[{"column":b64,"timestamp":n,"$":b64}]}]}`,
//! attributes of schemas are properties beside `name`, and so on. Reading
//! accepts what HBase's own models would read.

use super::b64;
use super::fault::RestError;
use super::model::*;
use bytes::Bytes;
use serde_json::{Map, Value, json};

/// A model as JSON text.
pub trait ToJson {
    /// The JSON value.
    fn to_json(&self) -> Value;
}

fn bad(what: &str, why: impl std::fmt::Display) -> RestError {
    RestError::bad(format!("malformed JSON {what}: {why}"))
}

/// Parses `body` as a JSON object.
fn object(body: &[u8], what: &str) -> Result<Map<String, Value>, RestError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(bad(what, "not an object")),
        Err(e) => Err(bad(what, e)),
    }
}

/// A base64 string property.
fn bytes_of(v: &Value, what: &str) -> Result<Bytes, RestError> {
    match v {
        Value::String(s) => b64::decode(s).map_err(|e| bad(what, format!("not base64: {e}"))),
        Value::Null => Ok(Bytes::new()),
        _ => Err(bad(what, "expected a base64 string")),
    }
}

/// An integer property (numbers, or numbers as strings, as Jackson reads).
fn int_of(v: &Value, what: &str) -> Result<i64, RestError> {
    match v {
        Value::Number(n) => n.as_i64().ok_or_else(|| bad(what, "not an integer")),
        Value::String(s) => s.trim().parse().map_err(|_| bad(what, "not an integer")),
        _ => Err(bad(what, "expected an integer")),
    }
}

/// A list property: an array, or one value standing for a list of one.
fn list_of(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(a) => a.iter().collect(),
        Value::Null => Vec::new(),
        other => vec![other],
    }
}

/// A scalar property as the string HBase's attribute maps hold.
fn attr_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl ToJson for CellSetModel {
    fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let cells: Vec<Value> = r
                    .cells
                    .iter()
                    .map(|c| {
                        json!({
                            "column": b64::encode(c.column.as_deref().unwrap_or_default()),
                            "timestamp": c.timestamp,
                            "$": b64::encode(&c.value),
                        })
                    })
                    .collect();
                json!({"key": b64::encode(r.key.as_deref().unwrap_or_default()), "Cell": cells})
            })
            .collect();
        json!({ "Row": rows })
    }
}

/// Reads a `CellSet`.
pub fn cell_set(body: &[u8]) -> Result<CellSetModel, RestError> {
    let m = object(body, "CellSet")?;
    let mut out = CellSetModel::default();
    for row in m.get("Row").map(list_of).unwrap_or_default() {
        let Value::Object(row) = row else {
            return Err(bad("CellSet", "a Row is not an object"));
        };
        let key = match row.get("key") {
            Some(k) => Some(bytes_of(k, "Row key")?),
            None => None,
        };
        let mut cells = Vec::new();
        for cell in row.get("Cell").map(list_of).unwrap_or_default() {
            let Value::Object(cell) = cell else {
                return Err(bad("CellSet", "a Cell is not an object"));
            };
            cells.push(CellModel {
                column: match cell.get("column") {
                    Some(c) => Some(bytes_of(c, "Cell column")?),
                    None => None,
                },
                timestamp: match cell.get("timestamp") {
                    Some(t) => int_of(t, "Cell timestamp")?,
                    None => LATEST,
                },
                value: match cell.get("$") {
                    Some(v) => bytes_of(v, "Cell value")?,
                    None => Bytes::new(),
                },
            });
        }
        out.rows.push(RowModel { key, cells });
    }
    Ok(out)
}

/// Reads a `Scanner`.
pub fn scanner(body: &[u8]) -> Result<ScannerModel, RestError> {
    let m = object(body, "Scanner")?;
    let mut s = ScannerModel::default();
    for (k, v) in &m {
        match k.as_str() {
            "startRow" => s.start_row = bytes_of(v, "startRow")?,
            "endRow" => s.end_row = bytes_of(v, "endRow")?,
            "column" => {
                for c in list_of(v) {
                    s.columns.push(bytes_of(c, "column")?);
                }
            }
            "batch" => s.batch = clamp_i32(int_of(v, "batch")?),
            "startTime" => s.start_time = int_of(v, "startTime")?,
            "endTime" => s.end_time = int_of(v, "endTime")?,
            "maxVersions" => s.max_versions = clamp_i32(int_of(v, "maxVersions")?),
            "caching" => s.caching = clamp_i32(int_of(v, "caching")?),
            "cacheBlocks" => s.cache_blocks = v.as_bool().unwrap_or(true),
            "filter" => {
                s.filter = match v {
                    Value::String(f) => Some(f.clone()),
                    Value::Null => None,
                    // A filter given as an object rather than a string.
                    other => Some(other.to_string()),
                }
            }
            "labels" => {}
            other => return Err(bad("Scanner", format!("unknown property {other:?}"))),
        }
    }
    Ok(s)
}

fn clamp_i32(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

impl ToJson for TableSchemaModel {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::String(self.name.clone()));
        for (k, v) in &self.attrs {
            m.insert(k.clone(), Value::String(v.clone()));
        }
        let columns: Vec<Value> = self
            .columns
            .iter()
            .map(|c| {
                let mut cm = Map::new();
                cm.insert("name".into(), Value::String(c.name.clone()));
                for (k, v) in &c.attrs {
                    cm.insert(k.clone(), Value::String(v.clone()));
                }
                Value::Object(cm)
            })
            .collect();
        m.insert("ColumnSchema".into(), Value::Array(columns));
        Value::Object(m)
    }
}

/// Reads a `TableSchema`.
pub fn table_schema(body: &[u8]) -> Result<TableSchemaModel, RestError> {
    let m = object(body, "TableSchema")?;
    let mut t = TableSchemaModel::default();
    for (k, v) in &m {
        match k.as_str() {
            "name" => t.name = attr_text(v),
            "ColumnSchema" => {
                for c in list_of(v) {
                    let Value::Object(c) = c else {
                        return Err(bad("TableSchema", "a ColumnSchema is not an object"));
                    };
                    let mut col = ColumnSchemaModel::default();
                    for (ck, cv) in c {
                        if ck == "name" {
                            col.name = attr_text(cv);
                        } else {
                            col.attrs.push((ck.clone(), attr_text(cv)));
                        }
                    }
                    t.columns.push(col);
                }
            }
            _ => t.attrs.push((k.clone(), attr_text(v))),
        }
    }
    Ok(t)
}

impl ToJson for TableListModel {
    fn to_json(&self) -> Value {
        let tables: Vec<Value> = self.names.iter().map(|n| json!({ "name": n })).collect();
        json!({ "table": tables })
    }
}

impl ToJson for TableInfoModel {
    fn to_json(&self) -> Value {
        let regions: Vec<Value> = self
            .regions
            .iter()
            .map(|r| {
                json!({
                    "endKey": b64::encode(&r.end_key),
                    "id": r.id,
                    "location": r.location,
                    "name": r.name,
                    "startKey": b64::encode(&r.start_key),
                })
            })
            .collect();
        json!({ "name": self.name, "Region": regions })
    }
}

impl ToJson for VersionModel {
    fn to_json(&self) -> Value {
        json!({
            "REST": self.rest,
            "JVM": self.jvm,
            "OS": self.os,
            "Server": self.server,
            "Jersey": self.jersey,
            "Version": self.version,
            "Revision": self.revision,
        })
    }
}

impl ToJson for ClusterVersionModel {
    fn to_json(&self) -> Value {
        json!({ "Version": self.version })
    }
}

impl ToJson for ClusterStatusModel {
    fn to_json(&self) -> Value {
        let live: Vec<Value> = self
            .live
            .iter()
            .map(|n| {
                let regions: Vec<Value> = n
                    .regions
                    .iter()
                    .map(|r| {
                        json!({
                            "name": b64::encode(&r.name),
                            "stores": r.stores,
                            "storefiles": r.storefiles,
                            "storefileSizeMB": r.storefile_size_mb,
                            "memStoreSizeMB": r.memstore_size_mb,
                        })
                    })
                    .collect();
                json!({
                    "name": n.name,
                    "startCode": n.start_code,
                    "requests": n.requests,
                    "heapSizeMB": n.heap_size_mb,
                    "maxHeapSizeMB": n.max_heap_size_mb,
                    "Region": regions,
                })
            })
            .collect();
        json!({
            "regions": self.regions,
            "requests": self.requests,
            "averageLoad": self.average_load,
            "LiveNodes": live,
            "DeadNodes": self.dead,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_sets_round_trip() {
        let set = CellSetModel {
            rows: vec![RowModel {
                key: Some(Bytes::from("r1")),
                cells: vec![CellModel {
                    column: Some(Bytes::from("cf:a")),
                    timestamp: 7,
                    value: Bytes::from("v"),
                }],
            }],
        };
        let text = set.to_json().to_string();
        assert_eq!(
            set.to_json(),
            json!({"Row":[{"key":"cjE=","Cell":[{"column":"Y2Y6YQ==","timestamp":7,"$":"dg=="}]}]})
        );
        assert_eq!(cell_set(text.as_bytes()).ok(), Some(set));
    }

    #[test]
    fn a_cell_without_column_or_timestamp_is_read() {
        let set = cell_set(br#"{"Row":{"Cell":{"$":"dg=="}}}"#).unwrap_or_default();
        assert_eq!(set.rows.len(), 1);
        assert_eq!(set.rows[0].key, None);
        assert_eq!(set.rows[0].cells[0].timestamp, LATEST);
        assert_eq!(set.rows[0].cells[0].column, None);
    }

    #[test]
    fn malformed_bodies_are_refused() {
        assert!(cell_set(b"{not json").is_err());
        assert!(cell_set(b"[1,2]").is_err());
        assert!(cell_set(br#"{"Row":[{"key":"%%%"}]}"#).is_err());
        assert!(cell_set(br#"{"Row":[{"Cell":[{"timestamp":"soon"}]}]}"#).is_err());
        assert!(scanner(br#"{"startRow":"cjE=","bogus":1}"#).is_err());
    }

    #[test]
    fn scanners_and_schemas_are_read() {
        let s = scanner(br#"{"startRow":"cjE=","column":["Y2Y="],"batch":5,"filter":"{\"type\":\"PageFilter\",\"value\":\"1\"}"}"#)
            .unwrap_or_default();
        assert_eq!(s.start_row, "r1");
        assert_eq!(s.columns, vec![Bytes::from("cf")]);
        assert_eq!(s.batch, 5);
        assert!(s.filter.is_some_and(|f| f.contains("PageFilter")));
        let t = table_schema(
            br#"{"name":"t","IS_META":"false","ColumnSchema":[{"name":"cf","VERSIONS":"3"}]}"#,
        )
        .unwrap_or_default();
        assert_eq!(t.name, "t");
        assert_eq!(t.columns[0].attr("versions"), Some("3"));
    }
}
