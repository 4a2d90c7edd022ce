//! The gRPC surface: `shoal.v1.Data` and `shoal.v1.Admin` over a
//! [`crate::host::Host`].

mod admin;
pub mod auth;
pub mod budget;
mod data;
pub mod scan;

pub use admin::AdminService;
pub use data::DataService;
