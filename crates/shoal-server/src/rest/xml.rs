//! The `text/xml` representation, as HBase's gateway (JAXB) writes it:
//! `<CellSet><Row key=b64><Cell column=b64 timestamp=n>b64</Cell></Row></CellSet>`
//! and the other models' elements and attributes; reading the bodies
//! clients send (`CellSet`, `Scanner`, `TableSchema`) through `xml_tree`.

use super::b64;
use super::fault::RestError;
use super::model::*;
use super::xml_tree::{self, Element, escape};
use bytes::Bytes;
use std::fmt::Write;

const HEADER: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#;

/// A model as an XML document.
pub trait ToXml {
    /// The document.
    fn to_xml(&self) -> String;
}

fn bad(what: &str, why: impl std::fmt::Display) -> RestError {
    RestError::bad(format!("malformed XML {what}: {why}"))
}

/// ` name="value"`, escaped.
fn attr(out: &mut String, name: &str, value: impl std::fmt::Display) {
    let _ = write!(out, " {name}=\"{}\"", escape(&value.to_string()));
}

impl ToXml for CellSetModel {
    fn to_xml(&self) -> String {
        let mut out = format!("{HEADER}<CellSet>");
        for r in &self.rows {
            out.push_str("<Row");
            attr(
                &mut out,
                "key",
                b64::encode(r.key.as_deref().unwrap_or_default()),
            );
            out.push('>');
            for c in &r.cells {
                out.push_str("<Cell");
                attr(
                    &mut out,
                    "column",
                    b64::encode(c.column.as_deref().unwrap_or_default()),
                );
                attr(&mut out, "timestamp", c.timestamp);
                let _ = write!(out, ">{}</Cell>", b64::encode(&c.value));
            }
            out.push_str("</Row>");
        }
        out.push_str("</CellSet>");
        out
    }
}

fn root(body: &[u8], name: &str) -> Result<Element, RestError> {
    let e = xml_tree::parse(body)?;
    if e.name != name {
        return Err(bad(name, format!("the root element is <{}>", e.name)));
    }
    Ok(e)
}

fn b64_of(text: &str, what: &str) -> Result<Bytes, RestError> {
    b64::decode(text).map_err(|e| bad(what, format!("not base64: {e}")))
}

fn int_of(text: &str, what: &str) -> Result<i64, RestError> {
    text.trim()
        .parse()
        .map_err(|_| bad(what, format!("{text:?} is not an integer")))
}

/// Reads a `CellSet`.
pub fn cell_set(body: &[u8]) -> Result<CellSetModel, RestError> {
    let e = root(body, "CellSet")?;
    let mut out = CellSetModel::default();
    for row in e.named("Row") {
        let key = row.attr("key").map(|k| b64_of(k, "Row key")).transpose()?;
        let mut cells = Vec::new();
        for cell in row.named("Cell") {
            cells.push(CellModel {
                column: cell
                    .attr("column")
                    .map(|c| b64_of(c, "Cell column"))
                    .transpose()?,
                timestamp: match cell.attr("timestamp") {
                    Some(t) => int_of(t, "Cell timestamp")?,
                    None => LATEST,
                },
                value: b64_of(&cell.text, "Cell value")?,
            });
        }
        out.rows.push(RowModel { key, cells });
    }
    Ok(out)
}

/// Reads a `Scanner`.
pub fn scanner(body: &[u8]) -> Result<ScannerModel, RestError> {
    let e = root(body, "Scanner")?;
    let mut s = ScannerModel::default();
    for (k, v) in &e.attrs {
        let clamp = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        match k.as_str() {
            "startRow" => s.start_row = b64_of(v, "startRow")?,
            "endRow" => s.end_row = b64_of(v, "endRow")?,
            "batch" => s.batch = clamp(int_of(v, "batch")?),
            "startTime" => s.start_time = int_of(v, "startTime")?,
            "endTime" => s.end_time = int_of(v, "endTime")?,
            "maxVersions" => s.max_versions = clamp(int_of(v, "maxVersions")?),
            "caching" => s.caching = clamp(int_of(v, "caching")?),
            "cacheBlocks" => s.cache_blocks = v.trim() != "false",
            other => return Err(bad("Scanner", format!("unknown attribute {other:?}"))),
        }
    }
    for c in e.named("column") {
        s.columns.push(b64_of(&c.text, "column")?);
    }
    if let Some(f) = e.named("filter").next() {
        s.filter = Some(f.text.clone());
    }
    Ok(s)
}

/// Reads a `TableSchema`.
pub fn table_schema(body: &[u8]) -> Result<TableSchemaModel, RestError> {
    let e = root(body, "TableSchema")?;
    let split = |attrs: &[(String, String)]| {
        let mut name = String::new();
        let mut rest = Vec::new();
        for (k, v) in attrs {
            if k == "name" {
                name = v.clone();
            } else {
                rest.push((k.clone(), v.clone()));
            }
        }
        (name, rest)
    };
    let (name, attrs) = split(&e.attrs);
    let columns = e
        .named("ColumnSchema")
        .map(|c| {
            let (name, attrs) = split(&c.attrs);
            ColumnSchemaModel { name, attrs }
        })
        .collect();
    Ok(TableSchemaModel {
        name,
        attrs,
        columns,
    })
}

impl ToXml for TableSchemaModel {
    fn to_xml(&self) -> String {
        let mut out = format!("{HEADER}<TableSchema");
        attr(&mut out, "name", &self.name);
        for (k, v) in &self.attrs {
            attr(&mut out, k, v);
        }
        out.push('>');
        for c in &self.columns {
            out.push_str("<ColumnSchema");
            attr(&mut out, "name", &c.name);
            for (k, v) in &c.attrs {
                attr(&mut out, k, v);
            }
            out.push_str("/>");
        }
        out.push_str("</TableSchema>");
        out
    }
}

impl ToXml for TableListModel {
    fn to_xml(&self) -> String {
        let mut out = format!("{HEADER}<TableList>");
        for n in &self.names {
            out.push_str("<table");
            attr(&mut out, "name", n);
            out.push_str("/>");
        }
        out.push_str("</TableList>");
        out
    }
}

impl ToXml for TableInfoModel {
    fn to_xml(&self) -> String {
        let mut out = format!("{HEADER}<TableInfo");
        attr(&mut out, "name", &self.name);
        out.push('>');
        for r in &self.regions {
            out.push_str("<Region");
            attr(&mut out, "endKey", b64::encode(&r.end_key));
            attr(&mut out, "id", r.id);
            attr(&mut out, "location", &r.location);
            attr(&mut out, "name", &r.name);
            attr(&mut out, "startKey", b64::encode(&r.start_key));
            out.push_str("/>");
        }
        out.push_str("</TableInfo>");
        out
    }
}

impl ToXml for VersionModel {
    fn to_xml(&self) -> String {
        let mut out = format!("{HEADER}<Version");
        attr(&mut out, "JVM", &self.jvm);
        attr(&mut out, "Jersey", &self.jersey);
        attr(&mut out, "OS", &self.os);
        attr(&mut out, "REST", &self.rest);
        attr(&mut out, "Revision", &self.revision);
        attr(&mut out, "Server", &self.server);
        attr(&mut out, "Version", &self.version);
        out.push_str("/>");
        out
    }
}

impl ToXml for ClusterVersionModel {
    fn to_xml(&self) -> String {
        let mut out = format!("{HEADER}<ClusterVersion");
        attr(&mut out, "Version", &self.version);
        out.push_str("/>");
        out
    }
}

impl ToXml for ClusterStatusModel {
    fn to_xml(&self) -> String {
        let mut out = format!("{HEADER}<ClusterStatus");
        attr(&mut out, "averageLoad", self.average_load);
        attr(&mut out, "regions", self.regions);
        attr(&mut out, "requests", self.requests);
        out.push_str("><LiveNodes>");
        for n in &self.live {
            out.push_str("<Node");
            attr(&mut out, "heapSizeMB", n.heap_size_mb);
            attr(&mut out, "maxHeapSizeMB", n.max_heap_size_mb);
            attr(&mut out, "name", &n.name);
            attr(&mut out, "requests", n.requests);
            attr(&mut out, "startCode", n.start_code);
            out.push('>');
            for r in &n.regions {
                out.push_str("<Region");
                attr(&mut out, "memStoreSizeMB", r.memstore_size_mb);
                attr(&mut out, "name", b64::encode(&r.name));
                attr(&mut out, "storefileSizeMB", r.storefile_size_mb);
                attr(&mut out, "storefiles", r.storefiles);
                attr(&mut out, "stores", r.stores);
                out.push_str("/>");
            }
            out.push_str("</Node>");
        }
        out.push_str("</LiveNodes><DeadNodes>");
        for d in &self.dead {
            let _ = write!(out, "<Node>{}</Node>", escape(d));
        }
        out.push_str("</DeadNodes></ClusterStatus>");
        out
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
        let doc = set.to_xml();
        assert!(doc.ends_with(
            r#"<CellSet><Row key="cjE="><Cell column="Y2Y6YQ==" timestamp="7">dg==</Cell></Row></CellSet>"#
        ));
        assert_eq!(cell_set(doc.as_bytes()).ok(), Some(set));
    }

    #[test]
    fn scanners_and_schemas_are_read() {
        let s = scanner(br#"<Scanner startRow="cjE=" batch="3"><column>Y2Y=</column><filter>{"type":"PrefixFilter","value":"cg=="}</filter></Scanner>"#)
            .unwrap_or_default();
        assert_eq!((s.start_row.clone(), s.batch), (Bytes::from("r1"), 3));
        assert_eq!(s.columns, vec![Bytes::from("cf")]);
        assert!(s.filter.is_some_and(|f| f.contains("PrefixFilter")));
        let t = table_schema(
            br#"<TableSchema name="t"><ColumnSchema name="cf" VERSIONS="2"/></TableSchema>"#,
        )
        .unwrap_or_default();
        assert_eq!(t.columns[0].attr("VERSIONS"), Some("2"));
    }

    #[test]
    fn wrong_documents_are_refused() {
        assert!(cell_set(b"<Scanner/>").is_err());
        assert!(cell_set(br#"<CellSet><Row key="!!"/></CellSet>"#).is_err());
        assert!(scanner(br#"<Scanner batch="many"/>"#).is_err());
    }
}
