//! The gateway's resources as plain data, whatever their representation:
//! HBase REST's `CellSetModel`, `TableSchemaModel`, `ScannerModel` and the
//! rest. `json`, `xml` and `protobuf` turn them into bodies and back.

use bytes::Bytes;

/// HBase's `LATEST_TIMESTAMP`: a cell written without a timestamp.
pub const LATEST: i64 = i64::MAX;

/// One cell: its column (`family:qualifier`), timestamp and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellModel {
    /// `family:qualifier` (None: the path's column is meant).
    pub column: Option<Bytes>,
    /// The version ([`LATEST`]: none given).
    pub timestamp: i64,
    /// The value.
    pub value: Bytes,
}

/// One row's cells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowModel {
    /// The row key (None: the path's row is meant).
    pub key: Option<Bytes>,
    /// Its cells.
    pub cells: Vec<CellModel>,
}

/// Rows of cells: what gets answer and puts carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CellSetModel {
    /// The rows.
    pub rows: Vec<RowModel>,
}

impl CellSetModel {
    /// Cells in all rows.
    pub fn cell_count(&self) -> usize {
        self.rows.iter().map(|r| r.cells.len()).sum()
    }
}

/// A column family's schema: its name and HBase's attributes
/// (`VERSIONS`, `TTL`, `COMPRESSION`, ...), as strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnSchemaModel {
    /// The family.
    pub name: String,
    /// Attribute name and value, in order.
    pub attrs: Vec<(String, String)>,
}

impl ColumnSchemaModel {
    /// The value of attribute `name` (case-insensitive, as HBase's keys).
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A table's schema.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableSchemaModel {
    /// The table.
    pub name: String,
    /// Table attributes (`IS_META`, ...).
    pub attrs: Vec<(String, String)>,
    /// Its families.
    pub columns: Vec<ColumnSchemaModel>,
}

/// One region of a table (`/<table>/regions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionModel {
    /// HBase's region name, `table,startKey,id.`.
    pub name: String,
    /// Its numeric id.
    pub id: i64,
    /// First row (inclusive).
    pub start_key: Bytes,
    /// End row (exclusive; empty: the table's end).
    pub end_key: Bytes,
    /// The server serving it, `host:port`.
    pub location: String,
}

/// A table's regions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableInfoModel {
    /// The table.
    pub name: String,
    /// Its regions, in key order.
    pub regions: Vec<RegionModel>,
}

/// The tables (`GET /`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableListModel {
    /// Their names.
    pub names: Vec<String>,
}

/// The gateway's version (`/version`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionModel {
    /// The REST protocol's version.
    pub rest: String,
    /// What HBase's gateway calls its JVM.
    pub jvm: String,
    /// The operating system.
    pub os: String,
    /// The server.
    pub server: String,
    /// What HBase's gateway calls its Jersey.
    pub jersey: String,
    /// The HBase version spoken.
    pub version: String,
    /// The build (Shoal's version).
    pub revision: String,
}

/// The HBase version the cluster speaks (`/version/cluster`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterVersionModel {
    /// e.g. `2.6.1`.
    pub version: String,
}

/// One region in the cluster status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusRegion {
    /// HBase's region name.
    pub name: Bytes,
    /// Families.
    pub stores: i32,
    /// Files.
    pub storefiles: i32,
    /// Bytes in files, MB.
    pub storefile_size_mb: i32,
    /// Bytes in the memstore, MB.
    pub memstore_size_mb: i32,
}

/// One live server in the cluster status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusNode {
    /// `host:port`.
    pub name: String,
    /// When it started, ms.
    pub start_code: i64,
    /// Requests served.
    pub requests: i64,
    /// Heap in use, MB (the process's memory, for Shoal).
    pub heap_size_mb: i32,
    /// Heap at most, MB.
    pub max_heap_size_mb: i32,
    /// Its regions.
    pub regions: Vec<StatusRegion>,
}

/// The cluster's status (`/status/cluster`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterStatusModel {
    /// Live servers.
    pub live: Vec<StatusNode>,
    /// Dead servers.
    pub dead: Vec<String>,
    /// Regions in all.
    pub regions: i32,
    /// Requests in all.
    pub requests: i64,
    /// Regions per server.
    pub average_load: f64,
}

/// A scanner's specification (`POST /<table>/scanner`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannerModel {
    /// First row (inclusive).
    pub start_row: Bytes,
    /// Row to stop before (empty: the end).
    pub end_row: Bytes,
    /// `family` or `family:qualifier` each (empty: all).
    pub columns: Vec<Bytes>,
    /// Cells per answer at most.
    pub batch: i32,
    /// Versions from (inclusive).
    pub start_time: i64,
    /// Versions before (exclusive).
    pub end_time: i64,
    /// Versions per column.
    pub max_versions: i32,
    /// HBase's filter, as the JSON its `ScannerModel` carries.
    pub filter: Option<String>,
    /// Rows the gateway reads at once (a hint Shoal ignores).
    pub caching: i32,
    /// Let the scan fill the block cache.
    pub cache_blocks: bool,
}

impl Default for ScannerModel {
    fn default() -> Self {
        ScannerModel {
            start_row: Bytes::new(),
            end_row: Bytes::new(),
            columns: Vec::new(),
            batch: i32::MAX,
            start_time: 0,
            end_time: LATEST,
            max_versions: i32::MAX,
            filter: None,
            caching: -1,
            cache_blocks: true,
        }
    }
}
