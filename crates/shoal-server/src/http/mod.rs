//! The HTTP surface: `/metrics` (Prometheus text), `/` (the status page),
//! `/api/status` (key figures as JSON, for scripts), `/healthz`.

mod chart;
mod page;

use crate::metrics::History;
use crate::status::StatusView;
use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use std::sync::Arc;

/// What the HTTP handlers read: the current view and the sampled history.
#[derive(Clone)]
pub struct HttpState {
    /// Builds the current view of the server.
    pub view: Arc<dyn Fn() -> StatusView + Send + Sync>,
    /// The last hour of rates.
    pub history: Arc<History>,
}

/// The router serving every HTTP route.
pub fn router(state: HttpState) -> Router {
    Router::new()
        .route("/", get(status_page))
        .route("/metrics", get(metrics))
        .route("/api/status", get(api_status))
        .route("/healthz", get(|| async { "ok\n" }))
        .with_state(state)
}

async fn metrics(axum::extract::State(s): axum::extract::State<HttpState>) -> impl IntoResponse {
    let body = crate::metrics::prometheus::render(&(s.view)());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
}

async fn status_page(axum::extract::State(s): axum::extract::State<HttpState>) -> Html<String> {
    Html(page::render(&(s.view)(), &s.history.points()))
}

async fn api_status(axum::extract::State(s): axum::extract::State<HttpState>) -> impl IntoResponse {
    let v = (s.view)();
    let regions: Vec<serde_json::Value> = v
        .tables
        .iter()
        .flat_map(|t| {
            t.regions.iter().map(move |r| {
                serde_json::json!({
                    "table": t.name,
                    "id": r.id,
                    "size_bytes": r.size_bytes,
                    "memstore_bytes": r.memstore_bytes,
                    "files": r.files,
                    "cache_ratio": r.cache_ratio,
                })
            })
        })
        .collect();
    let body = serde_json::json!({
        "version": v.version,
        "uptime_seconds": v.uptime.as_secs_f64(),
        "data_location": v.data_location,
        "tables": v.tables.iter().map(|t| serde_json::json!({"name": t.name, "enabled": t.enabled, "families": t.families})).collect::<Vec<_>>(),
        "regions": regions,
        "requests_total": v.requests.total_requests(),
        "memstore_bytes": v.memstore_bytes,
        "object_store_requests_total": v.object_store.total_requests(),
        "cache": v.cache.as_ref().map(|c| serde_json::json!({
            "l1_hit_ratio": c.data.hit_ratio(),
            "l2_hits": c.l2_hits,
            "l2_misses": c.l2_misses,
            "object_store_gets": c.object_store_gets,
        })),
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
}
