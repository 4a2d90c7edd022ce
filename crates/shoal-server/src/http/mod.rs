//! The HTTP surface: `/metrics` (Prometheus text), `/` (the status page),
//! `/api/status` (key figures as JSON, for scripts), `/healthz`.

mod api;
pub mod auth;
mod chart;
mod format;
mod page;

pub use api::status_json;
pub use page::render as render_page;

use crate::metrics::status::StatusView;
use crate::metrics::{ConnectionMetrics, History};
use crate::security::Caller;
use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::{Extension, Router};
use std::sync::Arc;

/// What the handlers read. Every request builds a fresh view through
/// `view`; the charts come from `history`, which a sampler fills (see
/// [`crate::metrics::spawn_sampler`]).
#[derive(Clone)]
pub struct HttpState {
    /// Builds the current view of the server.
    pub view: Arc<dyn Fn() -> StatusView + Send + Sync>,
    /// The last hour of rates.
    pub history: Arc<History>,
    /// The listeners' connection counters (appended to `/metrics`).
    pub connections: Arc<ConnectionMetrics>,
    /// Tokens (auth on: every route but `/healthz` needs one).
    pub auth: auth::AuthState,
    /// Cuts a view down to what a caller may see (the host's rule,
    /// `Access::trim_status`); with auth off no caller is known and the
    /// whole view is shown.
    pub trim: Arc<TrimView>,
}

/// Cuts a view down to what a caller may see.
pub type TrimView = dyn Fn(&Caller, StatusView) -> StatusView + Send + Sync;

impl HttpState {
    /// The current view, as `caller` (if known) may see it.
    fn view_for(&self, caller: Option<&Caller>) -> StatusView {
        let view = (self.view)();
        match caller {
            Some(c) => (self.trim)(c, view),
            None => view,
        }
    }
}

/// The router serving every HTTP route.
pub fn router(state: HttpState) -> Router {
    let auth = state.auth.clone();
    Router::new()
        .route("/", get(status_page))
        .route("/metrics", get(metrics))
        .route("/api/status", get(api_status))
        .route("/healthz", get(|| async { "ok\n" }))
        // With auth on, the middleware answers it.
        .route(
            "/login",
            get(|| async { (axum::http::StatusCode::NOT_FOUND, "auth is off\n") }),
        )
        .with_state(state)
        .layer(axum::middleware::from_fn_with_state(
            auth,
            auth::require_token,
        ))
}

async fn metrics(
    State(s): State<HttpState>,
    caller: Option<Extension<Caller>>,
) -> impl IntoResponse {
    let mut body = crate::metrics::prometheus::render(&s.view_for(caller.as_deref()));
    body.push_str(&crate::metrics::prometheus::render_connections(
        &s.connections.snapshot(),
    ));
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
}

async fn status_page(
    State(s): State<HttpState>,
    caller: Option<Extension<Caller>>,
) -> Html<String> {
    Html(page::render(
        &s.view_for(caller.as_deref()),
        &s.history.points(),
    ))
}

async fn api_status(
    State(s): State<HttpState>,
    caller: Option<Extension<Caller>>,
) -> impl IntoResponse {
    let body = api::status_json(&s.view_for(caller.as_deref()), s.history.latest().as_ref());
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
}
