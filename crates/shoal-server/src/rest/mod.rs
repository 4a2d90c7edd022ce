//! HBase's REST gateway ("Stargate"), served by `shoal serve` itself on its
//! own port (`[rest]`, default 8080): what HBase's `RemoteHTable`,
//! `RemoteAdmin` and plain HTTP clients speak. Every request acts as the
//! caller its `Authorization: Bearer` token names (anyone with auth off)
//! and goes through [`crate::host::Access`], so permissions and audit are
//! those of every other door. `docs/rest.md` says what is served and how it
//! differs from HBase's gateway.
//!
//! - `routes`: a request's path to the resource that answers it.
//! - `cluster`, `schema`, `rows`, `writes` (with `counters`), `scan`: the
//!   resources.
//! - `row_spec`: HBase's row paths (`row/column/timestamp`).
//! - `model` and its representations `json`, `xml` (with `xml_tree`),
//!   `protobuf`; `representation` picks one; `respond` writes it; `b64`.
//! - `filter`: HBase's JSON filter models.
//! - `scanners`: stateful scanners with leases.
//! - `request`, `fault`: a request read whole, and what it can fail with.
//!
//! Bounds: a body over `rest.max_body_bytes` is refused (413); one answer
//! holds at most `rest.max_rows_per_response` rows and
//! `rest.max_cells_per_response` cells; at most `rest.max_scanners`
//! scanners are open, each closed after `rest.scanner_timeout` unused.

mod b64;
mod cells;
mod cluster;
mod counters;
mod fault;
mod filter;
mod json;
mod model;
mod namespaces;
mod protobuf;
mod representation;
mod request;
mod respond;
mod routes;
mod row_spec;
mod rows;
mod scan;
mod scanners;
mod schema;
#[cfg(test)]
mod tests;
mod writes;
mod xml;
mod xml_tree;

pub use fault::RestError;

use crate::host::Host;
use crate::security::{Caller, Via};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use request::RestRequest;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The limits of one gateway (`[rest]`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest body read.
    pub max_body_bytes: usize,
    /// Rows per answer at most.
    pub max_rows: usize,
    /// Cells per answer at most.
    pub max_cells: usize,
}

/// The gateway: the host, its scanners, its limits.
pub struct RestGateway {
    host: Host,
    scanners: scanners::Scanners,
    limits: Limits,
    stop: watch::Receiver<bool>,
    /// `https` when TLS covers the port, else `http` (for `Location`s).
    scheme: &'static str,
}

impl RestGateway {
    /// A gateway over `host` with the `[rest]` settings of its config;
    /// it refuses requests (503) once `stop` turns true.
    pub fn new(host: Host, stop: watch::Receiver<bool>) -> RestGateway {
        let r = &host.config().rest;
        let limits = Limits {
            max_body_bytes: usize::try_from(r.max_body_bytes.0).unwrap_or(usize::MAX),
            max_rows: r.max_rows_per_response,
            max_cells: r.max_cells_per_response,
        };
        let scanners = scanners::Scanners::new(r.scanner_timeout, r.max_scanners);
        let tls = host
            .config()
            .tls
            .covers(crate::config::TlsListenerName::Rest);
        RestGateway {
            host,
            scanners,
            limits,
            stop,
            scheme: if tls { "https" } else { "http" },
        }
    }

    /// Scanners open now.
    pub fn open_scanners(&self) -> usize {
        self.scanners.len()
    }
}

/// The gateway's router: every path goes to [`handle`].
pub fn router(gateway: Arc<RestGateway>) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(gateway)
}

/// Closes idle scanners every few seconds until `stop` turns true.
pub fn spawn_scanner_sweep(
    gateway: Arc<RestGateway>,
    mut stop: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    gateway.scanners.sweep();
                }
                _ = crate::listen::stopped(&mut stop) => return,
            }
        }
    })
}

/// One request: refused while stopping (503) or without a valid token
/// (401), its body read under the cap (413), then routed and counted.
async fn handle(State(g): State<Arc<RestGateway>>, req: Request) -> Response {
    if *g.stop.borrow() {
        return RestError::unavailable("the server is shutting down").into_response();
    }
    let authorization = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes().to_vec());
    let caller = match g
        .host
        .security()
        .authenticate(authorization.as_deref(), Via::Rest)
    {
        Ok(c) => c,
        Err(f) => {
            return RestError::new(StatusCode::UNAUTHORIZED, f.message()).into_response();
        }
    };
    let (parts, body) = req.into_parts();
    let body = match axum::body::to_bytes(body, g.limits.max_body_bytes).await {
        Ok(b) => b,
        Err(_) => {
            return RestError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the body is larger than rest.max_body_bytes ({} bytes) or was cut short",
                    g.limits.max_body_bytes
                ),
            )
            .into_response();
        }
    };
    let path = parts.uri.path().to_string();
    // HTTP/1.1 names the host in `Host`, HTTP/2 in the URI's authority.
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| parts.uri.authority().map(|a| a.to_string()));
    let location = host.map(|host| format!("{}://{host}{}", g.scheme, path.trim_end_matches('/')));
    let request = RestRequest {
        method: parts.method,
        query: request::split_query(parts.uri.query()),
        headers: parts.headers,
        body,
        location,
    };
    serve(&g, &caller, &path, request).await
}

/// Routes a request and counts it in the server's request metrics.
async fn serve(g: &RestGateway, caller: &Caller, path: &str, req: RestRequest) -> Response {
    let start = std::time::Instant::now();
    let route = routes::Route::of(path);
    let outcome = match route {
        Ok(route) => {
            let op = route.request_op(&req.method);
            let outcome = routes::run(g, caller, route, req).await;
            if let Some(op) = op {
                g.host
                    .requests()
                    .record(op, start.elapsed(), outcome.is_ok());
            }
            outcome
        }
        Err(e) => Err(e),
    };
    match outcome {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(%path, status = %e.status, message = %e.message, "REST request refused");
            e.into_response()
        }
    }
}
