//! Admission: what a request must pass before it runs, whatever door it
//! came in by. Today that is the server-wide budget of request bytes in
//! flight (`limits.request_bytes_in_flight`): one [`RequestBudget`] per
//! server, shared by the gRPC port (through [`BudgetLayer`], counting
//! HTTP/2 bodies as they arrive) and the framed transport (holding each
//! call's bytes whole). It sits below the doors and the socket layer, so
//! none of them imports another to use it.

mod budget;
mod layer;

pub use budget::RequestBudget;
pub use layer::{BudgetLayer, BudgetService};
