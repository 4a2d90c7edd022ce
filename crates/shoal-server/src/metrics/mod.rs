//! What the server counts and how it is exported: request counters and
//! latency histograms (`requests`), the listeners' connection counters
//! (`connections`), the last hour of rates for the status
//! page (`history`), and the Prometheus text format (`prometheus`).

mod connections;
mod history;
pub mod prometheus;
mod requests;
#[cfg(test)]
pub(crate) mod test_support;

pub use connections::{CloseReason, ConnectionMetrics, ConnectionMetricsSnapshot, Listener};
pub use history::{HISTORY_POINTS, History, Point, spawn_sampler};
pub use requests::{
    LATENCY_BOUNDS_US, OpFigures, RequestMetrics, RequestMetricsSnapshot, RequestOp,
};
