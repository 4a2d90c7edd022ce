//! The gRPC surface: `shoal.v1.Data` and `shoal.v1.Admin` over a
//! [`crate::host::Host`]. Callers are found by `security::AuthLayer` and
//! request bytes counted by `admission::BudgetLayer`, both in front of the
//! services (`listen::serve_grpc`); every unary call then takes the shape
//! written once in `door`.

mod admin;
mod data;
mod door;
pub mod scan;
mod snapshot_convert;

pub use admin::AdminService;
pub use data::DataService;
