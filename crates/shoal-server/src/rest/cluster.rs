//! The cluster-wide resources: `GET /` (the tables the caller may see),
//! `/version` (the gateway's), `/version/cluster` (the HBase version
//! Shoal speaks) and `/status/cluster` (this server as HBase's
//! `StorageClusterStatus` describes a region server).

use super::fault::RestError;
use super::model::*;
use super::representation::{INFO, Repr};
use super::request::RestRequest;
use super::respond;
use crate::host::Access;
use axum::response::Response;
use bytes::Bytes;

/// The HBase release whose protocol Shoal speaks.
pub const HBASE_VERSION: &str = "2.6.1";
/// HBase REST's protocol version (`RESTServlet`'s).
const REST_VERSION: &str = "0.0.3";

/// `GET /`: the tables, by name.
pub async fn tables(h: Access<'_>, req: &RestRequest) -> Result<Response, RestError> {
    let repr = req.accept(INFO)?;
    let mut names: Vec<String> = h.list_tables().await.into_iter().map(|t| t.name).collect();
    names.sort();
    let list = TableListModel { names };
    Ok(match repr {
        Repr::Text => respond::text(list.names.iter().map(|n| format!("{n}\n")).collect()),
        r => respond::model(r, &list),
    })
}

/// `GET /version`: the gateway's version.
pub fn version(req: &RestRequest) -> Result<Response, RestError> {
    let repr = req.accept(INFO)?;
    let v = VersionModel {
        rest: REST_VERSION.into(),
        jvm: format!("none (Shoal {} is Rust)", env!("CARGO_PKG_VERSION")),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        server: format!("shoal/{}", env!("CARGO_PKG_VERSION")),
        jersey: "none".into(),
        version: HBASE_VERSION.into(),
        revision: format!("shoal-{}", env!("CARGO_PKG_VERSION")),
    };
    Ok(match repr {
        Repr::Text => respond::text(format!(
            "rest {} [JVM: {}] [OS: {}] [Server: {}] [Jersey: {}]\n",
            v.rest, v.jvm, v.os, v.server, v.jersey
        )),
        r => respond::model(r, &v),
    })
}

/// `GET /version/cluster`: the HBase version (text, XML or JSON; HBase
/// offers no protobuf of it).
pub fn cluster_version(req: &RestRequest) -> Result<Response, RestError> {
    let v = ClusterVersionModel {
        version: HBASE_VERSION.into(),
    };
    Ok(match req.accept(INFO)? {
        Repr::Text => respond::text(format!("{HBASE_VERSION}\n")),
        Repr::Json => respond::with_body(
            axum::http::StatusCode::OK,
            Repr::Json.media_type(),
            super::json::ToJson::to_json(&v).to_string(),
        ),
        Repr::Protobuf => return Err(super::protobuf::not_offered("/version/cluster")),
        _ => respond::with_body(
            axum::http::StatusCode::OK,
            Repr::Xml.media_type(),
            super::xml::ToXml::to_xml(&v),
        ),
    })
}

/// `GET /status/cluster`: this server, its regions of the tables the
/// caller may see, and its request count.
pub fn status(h: Access<'_>, req: &RestRequest) -> Result<Response, RestError> {
    let repr = req.accept(INFO)?;
    let model = status_model(h);
    Ok(match repr {
        Repr::Text => respond::text(status_text(&model)),
        r => respond::model(r, &model),
    })
}

fn status_model(h: Access<'_>) -> ClusterStatusModel {
    let view = h.status();
    let mb = |b: u64| i32::try_from(b >> 20).unwrap_or(i32::MAX);
    let mut regions = Vec::new();
    for t in &view.tables {
        for r in &t.regions {
            regions.push(StatusRegion {
                name: Bytes::from(format!(
                    "{},{},{}.",
                    t.name,
                    String::from_utf8_lossy(&r.start_row),
                    r.id
                )),
                stores: i32::try_from(t.families.len()).unwrap_or(i32::MAX),
                storefiles: i32::try_from(r.files).unwrap_or(i32::MAX),
                storefile_size_mb: mb(r.size_bytes),
                memstore_size_mb: mb(r.memstore_bytes),
            });
        }
    }
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.saturating_sub(view.uptime).as_millis() as i64)
        .unwrap_or(0);
    let requests = i64::try_from(view.requests.total_requests()).unwrap_or(i64::MAX);
    let count = i32::try_from(regions.len()).unwrap_or(i32::MAX);
    ClusterStatusModel {
        live: vec![StatusNode {
            name: h.host().address().to_string(),
            start_code: started_ms,
            requests,
            heap_size_mb: mb(view.memstore_bytes),
            max_heap_size_mb: 0,
            regions,
        }],
        dead: Vec::new(),
        regions: count,
        requests,
        average_load: f64::from(count),
    }
}

fn status_text(m: &ClusterStatusModel) -> String {
    let mut out = format!(
        "{} live servers, {} dead servers, {:.4} average load\n\n{} live servers\n",
        m.live.len(),
        m.dead.len(),
        m.average_load,
        m.live.len()
    );
    for n in &m.live {
        out.push_str(&format!(
            "    {} {}\n        requests={}, regions={}\n",
            n.name,
            n.start_code,
            n.requests,
            n.regions.len()
        ));
        for r in &n.regions {
            out.push_str(&format!(
                "        {}\n            stores={}\n            storefiles={}\n",
                String::from_utf8_lossy(&r.name),
                r.stores,
                r.storefiles
            ));
        }
    }
    out
}
