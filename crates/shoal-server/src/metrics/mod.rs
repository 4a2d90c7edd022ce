//! What the server counts and how it is exported: request counters and
//! latency histograms (`requests`), the listeners' connection counters
//! (`connections`), the point-in-time view of the whole server that the
//! status page, `/metrics` and the gRPC `Status` call show (`status`), the
//! last hour of rates for the status page (`history`), and the Prometheus
//! text format (`prometheus`).

mod connections;
mod history;
pub mod prometheus;
mod requests;
pub mod status;
#[cfg(test)]
pub(crate) mod test_support;

pub use connections::{CloseReason, ConnectionMetrics, ConnectionMetricsSnapshot, Listener};
pub use history::{HISTORY_POINTS, History, Point, spawn_sampler};
pub use requests::{
    LATENCY_BOUNDS_US, OpFigures, RequestMetrics, RequestMetricsSnapshot, RequestOp,
};
