//! A request's path to the resource that answers it, as HBase's gateway
//! lays them out: `/`, `/version[/rest|/cluster]`, `/status/cluster`, and
//! under `/<table>/`: `schema`, `regions`, `exists`, `multiget`,
//! `scanner[/<id>]`, a path ending in `*` (a prefix scan), or a row
//! specification; `/namespaces[/<ns>[/tables]]`.

use super::fault::RestError;
use super::row_spec::url_decode;
use super::{RestGateway, cluster, namespaces, request::RestRequest, rows, scan, schema, writes};
use crate::metrics::RequestOp;
use crate::security::Caller;
use axum::http::{Method, StatusCode};
use axum::response::Response;

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/`: the tables.
    Tables,
    /// `/version`, `/version/rest`: the gateway's version.
    Version,
    /// `/version/cluster`: the HBase version spoken.
    ClusterVersion,
    /// `/status/cluster`.
    ClusterStatus,
    /// `/namespaces`.
    Namespaces,
    /// `/namespaces/<ns>`.
    Namespace(String),
    /// `/namespaces/<ns>/tables`.
    NamespaceTables(String),
    /// `/<table>/schema`.
    Schema(String),
    /// `/<table>/regions`.
    Regions(String),
    /// `/<table>/exists`.
    Exists(String),
    /// `/<table>/multiget`.
    MultiGet(String),
    /// `/<table>/scanner`.
    Scanners(String),
    /// `/<table>/scanner/<id>`.
    Scanner(String, String),
    /// `/<table>/<prefix>*`: a stateless scan.
    TableScan(String, String),
    /// `/<table>/<row spec>` (raw, percent-encoded).
    Row(String, String),
}

impl Route {
    /// The route of `path`.
    pub fn of(path: &str) -> Result<Route, RestError> {
        let trimmed = path.trim_start_matches('/');
        if trimmed.is_empty() {
            return Ok(Route::Tables);
        }
        let (first, rest) = match trimmed.split_once('/') {
            Some((f, r)) => (f, r),
            None => (trimmed, ""),
        };
        match (first, rest.trim_end_matches('/')) {
            ("version", "" | "rest") => return Ok(Route::Version),
            ("version", "cluster") => return Ok(Route::ClusterVersion),
            ("status", "cluster") => return Ok(Route::ClusterStatus),
            ("namespaces", "") => return Ok(Route::Namespaces),
            ("namespaces", ns) => {
                let (ns, tail) = ns.split_once('/').unwrap_or((ns, ""));
                let ns = String::from_utf8(url_decode(ns)?)
                    .map_err(|_| RestError::bad("the namespace is not UTF-8"))?;
                return match tail {
                    "" => Ok(Route::Namespace(ns)),
                    "tables" => Ok(Route::NamespaceTables(ns)),
                    other => Err(RestError::not_found(format!(
                        "/namespaces/{ns}/{other}: a namespace has only /tables"
                    ))),
                };
            }
            _ => {}
        }
        let table = String::from_utf8(url_decode(first)?)
            .map_err(|_| RestError::bad("the table name is not UTF-8"))?;
        if table.is_empty() {
            return Err(RestError::bad("no table in the path"));
        }
        Ok(match rest {
            "" => {
                return Err(RestError::not_found(format!(
                    "{path}: name a resource of the table (schema, regions, a row...)"
                )));
            }
            "schema" | "schema/" => Route::Schema(table),
            "regions" | "regions/" => Route::Regions(table),
            "exists" | "exists/" => Route::Exists(table),
            "multiget" | "multiget/" => Route::MultiGet(table),
            "scanner" | "scanner/" => Route::Scanners(table),
            r if r.starts_with("scanner/") => Route::Scanner(
                table,
                r["scanner/".len()..].trim_end_matches('/').to_string(),
            ),
            r if r.ends_with('*') => Route::TableScan(table, r.to_string()),
            r => Route::Row(table, r.to_string()),
        })
    }

    /// The request metric the call counts under.
    pub fn request_op(&self, method: &Method) -> Option<RequestOp> {
        Some(match self {
            Route::Row(..) if method == Method::GET => RequestOp::Get,
            Route::Row(..) => RequestOp::Mutate,
            Route::MultiGet(_) => RequestOp::MultiGet,
            Route::Scanners(_) | Route::Scanner(..) | Route::TableScan(..) => RequestOp::Scan,
            Route::Tables
            | Route::Version
            | Route::ClusterVersion
            | Route::ClusterStatus
            | Route::Namespaces
            | Route::Namespace(_)
            | Route::NamespaceTables(_)
            | Route::Schema(_)
            | Route::Regions(_)
            | Route::Exists(_) => RequestOp::Admin,
        })
    }
}

fn not_allowed(method: &Method) -> RestError {
    RestError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on this resource"),
    )
}

/// Runs the request on its resource.
pub async fn run(
    g: &RestGateway,
    caller: &Caller,
    route: Route,
    req: RestRequest,
) -> Result<Response, RestError> {
    let h = g.host.access(caller);
    let m = req.method.clone();
    match route {
        Route::Tables if m == Method::GET => cluster::tables(h, &req).await,
        Route::Version if m == Method::GET => cluster::version(&req),
        Route::ClusterVersion if m == Method::GET => cluster::cluster_version(&req),
        Route::ClusterStatus if m == Method::GET => cluster::status(h, &req),
        Route::Namespaces if m == Method::GET => namespaces::list(h, &req).await,
        Route::Namespace(ns) => match m {
            Method::GET => namespaces::describe(h, &ns, &req).await,
            Method::POST => namespaces::update(h, &ns, &req, false).await,
            Method::PUT => namespaces::update(h, &ns, &req, true).await,
            Method::DELETE => namespaces::delete(h, &ns).await,
            _ => Err(not_allowed(&m)),
        },
        Route::NamespaceTables(ns) if m == Method::GET => namespaces::tables(h, &ns, &req).await,
        Route::Schema(t) => match m {
            Method::GET => schema::get(h, &t, &req).await,
            Method::PUT => schema::put(h, &t, &req, true).await,
            Method::POST => schema::put(h, &t, &req, false).await,
            Method::DELETE => schema::delete(h, &t).await,
            _ => Err(not_allowed(&m)),
        },
        Route::Regions(t) if m == Method::GET => schema::regions(h, &t, &req).await,
        Route::Exists(t) if m == Method::GET => schema::exists(h, &t).await,
        Route::MultiGet(t) if m == Method::GET => rows::multi_get(h, &g.limits, &t, &req).await,
        Route::Scanners(t) if m == Method::PUT || m == Method::POST => {
            scan::open(h, &g.scanners, &g.limits, &t, &req).await
        }
        Route::Scanner(t, id) => match m {
            Method::GET => scan::next(&g.scanners, &g.limits, caller, &t, &id, &req).await,
            Method::DELETE => scan::close(&g.scanners, caller, &t, &id),
            _ => Err(not_allowed(&m)),
        },
        Route::TableScan(t, spec) if m == Method::GET => {
            scan::table_scan(h, &g.limits, &t, &spec, &req).await
        }
        Route::Row(t, spec) => match m {
            Method::GET => rows::get(h, &g.limits, &t, &spec, &req).await,
            Method::PUT | Method::POST => writes::put(h, &t, &spec, &req).await,
            Method::DELETE => writes::delete(h, &t, &spec, &req).await,
            _ => Err(not_allowed(&m)),
        },
        _ => Err(not_allowed(&m)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(p: &str) -> Result<Route, RestError> {
        Route::of(p)
    }

    #[test]
    fn paths_name_their_resources() {
        assert_eq!(route("/"), Ok(Route::Tables));
        assert_eq!(route("/version"), Ok(Route::Version));
        assert_eq!(route("/version/rest"), Ok(Route::Version));
        assert_eq!(route("/version/cluster"), Ok(Route::ClusterVersion));
        assert_eq!(route("/status/cluster"), Ok(Route::ClusterStatus));
        assert_eq!(route("/namespaces"), Ok(Route::Namespaces));
        assert_eq!(route("/namespaces/"), Ok(Route::Namespaces));
        assert_eq!(route("/namespaces/ns1"), Ok(Route::Namespace("ns1".into())));
        assert_eq!(
            route("/namespaces/ns1/tables"),
            Ok(Route::NamespaceTables("ns1".into()))
        );
        assert!(route("/namespaces/ns1/other").is_err());
        assert_eq!(route("/t/schema"), Ok(Route::Schema("t".into())));
        assert_eq!(route("/ns%3At/regions"), Ok(Route::Regions("ns:t".into())));
        assert_eq!(route("/ns:t/exists"), Ok(Route::Exists("ns:t".into())));
        assert_eq!(route("/t/multiget/"), Ok(Route::MultiGet("t".into())));
        assert_eq!(route("/t/scanner"), Ok(Route::Scanners("t".into())));
        assert_eq!(
            route("/t/scanner/abc"),
            Ok(Route::Scanner("t".into(), "abc".into()))
        );
        assert_eq!(
            route("/t/ro*"),
            Ok(Route::TableScan("t".into(), "ro*".into()))
        );
        assert_eq!(
            route("/t/ro*/cf"),
            Ok(Route::Row("t".into(), "ro*/cf".into()))
        );
        assert_eq!(
            route("/t/r1/cf:a/5"),
            Ok(Route::Row("t".into(), "r1/cf:a/5".into()))
        );
    }

    #[test]
    fn paths_without_a_resource_are_refused() {
        assert_eq!(
            route("/t").map_err(|e| e.status),
            Err(StatusCode::NOT_FOUND)
        );
        assert_eq!(
            route("/namespaces/ns/other").map_err(|e| e.status),
            Err(StatusCode::NOT_FOUND)
        );
        assert_eq!(
            route("/%zz/r").map_err(|e| e.status),
            Err(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            route("/%FF/r").map_err(|e| e.status),
            Err(StatusCode::BAD_REQUEST)
        );
    }
}
