//! The catalog: which tables exist, their families and regions, stored
//! durably in the object store (`schema` = the records, `store` = their
//! versioned objects).

pub mod history;
pub mod schema;
pub mod store;

pub use schema::{
    BloomName, Catalog, CompressionName, FamilyPatch, FamilySchema, GrantRecord, ImcName,
    RegionRecord, SnapshotEntry, SplitParentRecord, TableRecord, validate_table_name,
};
pub use store::{CatalogError, CatalogStore};
