//! The catalog: which tables exist, their families and regions, stored
//! durably in the object store (`schema` = the records, `store` = their
//! versioned objects).

pub mod history;
pub mod names;
pub mod schema;
pub mod store;

pub use names::{validate_namespace_name, validate_table_name};
pub use schema::{
    BloomName, Catalog, CompressionName, FamilyPatch, FamilySchema, GrantRecord, ImcName,
    NamespaceRecord, RegionRecord, SnapshotEntry, SplitParentRecord, TableRecord,
};
pub use store::{CatalogError, CatalogStore};
