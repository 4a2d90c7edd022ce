//! HBase's files, for Shoal: moving a table out of HBase without reading
//! it row by row through a client.
//!
//! - [`snapshot`]: an HBase snapshot in an HBase root directory (or an
//!   `ExportSnapshot` target) — schema, regions and every store file,
//!   resolved through HFile links and split references.
//! - [`names`]: HBase's directory and file names.
//! - [`schema`]: a family's settings as HBase states them.
//! - [`peek`]: an HFile's rows, cell count and newest write, from its
//!   trailer and index alone.
//! - [`cells`]: one HFile as the cells of a bulk load into a region
//!   ([`shoal_storage::region::Region::ingest`]), read with bounded memory.
//!
//! The HFile format itself is `shoal-hfile`'s.

pub mod cells;
mod error;
pub mod names;
pub mod peek;
pub mod schema;
pub mod snapshot;

pub use cells::{ReadStats, RowRange, open_hfile, to_cell};
pub use error::ImportError;
pub use names::TableName;
pub use peek::{HFileFacts, peek};
pub use schema::FamilySettings;
pub use snapshot::{HBaseSnapshot, Half, SnapshotFile, SnapshotRegion};
