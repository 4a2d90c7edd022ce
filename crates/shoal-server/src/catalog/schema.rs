//! The catalog's records: tables, their column families (every setting
//! resolved to a value), their regions, and split parents awaiting cleanup.
//! Plain serde data; the JSON form is what the object store holds.

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use shoal_storage::cache::FamilyCachePolicy;
use shoal_storage::memstore::InMemoryCompaction;
use shoal_storage::region::FamilyConfig;
use shoal_storage::region::versions::{KeepDeleted, Retention};
use shoal_storage::sst::{BloomKind, Compression, SstWriterOptions};

/// Every table the server knows, at one catalog version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// Tables by name, in name order.
    pub tables: Vec<TableRecord>,
    /// Permissions granted to users (`security::permissions`), by user then
    /// scope. Absent from catalogs written before permissions existed, and
    /// not written while empty (an older server still reads the catalog).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grants: Vec<GrantRecord>,
    /// Snapshots (`docs/snapshots.md`), by name; their file lists live in
    /// the bucket under `snapshots/<id>/`. Not written while empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshots: Vec<SnapshotEntry>,
    /// When this version was committed (ms since the epoch, stamped just
    /// before its write; 0 in versions written before it existed): what a
    /// point-in-time restore reads the table's regions at an instant by.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub committed_ms: i64,
    /// Namespaces users made (`default` and `hbase` always exist and are
    /// not held here), by name. Not written while empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<NamespaceRecord>,
}

/// A namespace users made (`docs/namespaces.md`): a name and HBase's
/// free-form properties.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamespaceRecord {
    /// Its name.
    pub name: String,
    /// Properties as HBase's `NamespaceDescriptor` carries them
    /// (`hbase.namespace.quota.maxtables`, anything a user sets), by key.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub properties: std::collections::BTreeMap<String, String>,
}

/// A snapshot in the catalog: its name and where its record is. The
/// catalog commit that adds it is the point at which it exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotEntry {
    /// The name users give it.
    pub name: String,
    /// A unique id (ULID): its objects are under `snapshots/<id>/`.
    pub id: String,
    /// The table it was taken of.
    pub table: String,
    /// When it was taken (ms since the epoch).
    pub created_ms: i64,
    /// Deleted by a user while a clone still reads its files: hidden from
    /// every listing, its files kept until no table holds it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    /// A base of the point-in-time window (`host/pitr_base.rs`), taken and
    /// let go by the server: hidden from every listing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub base: bool,
}

/// Permissions of one user at one scope: globally (no table, no
/// namespace), on a namespace, on a table, or on one family of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantRecord {
    /// The user (a name from the token file).
    pub user: String,
    /// The table; absent for a global grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// The family of `table`; absent for the whole table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// The namespace (HBase's `@ns`), when the grant is on one; `table`
    /// is then absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// HBase's letters, in `RWCA` order.
    pub actions: String,
}

impl Catalog {
    /// The snapshot named `name` (not deleted).
    pub fn snapshot(&self, name: &str) -> Option<&SnapshotEntry> {
        self.snapshots.iter().find(|s| s.name == name && !s.deleted)
    }

    /// True if some table reads snapshot `id`'s files.
    pub fn snapshot_held(&self, id: &str) -> bool {
        self.tables.iter().any(|t| t.holds.iter().any(|h| h == id))
    }

    /// The table named `name` (`default:t` names `t`).
    pub fn table(&self, name: &str) -> Option<&TableRecord> {
        let name = super::names::canonical(name);
        self.tables.iter().find(|t| t.name == name)
    }

    /// The table named `name`, mutably.
    pub fn table_mut(&mut self, name: &str) -> Option<&mut TableRecord> {
        let name = super::names::canonical(name);
        self.tables.iter_mut().find(|t| t.name == name)
    }

    /// True if namespace `name` exists (`default` and `hbase` always do).
    pub fn has_namespace(&self, name: &str) -> bool {
        name == super::names::DEFAULT_NAMESPACE
            || name == super::names::SYSTEM_NAMESPACE
            || self.namespaces.iter().any(|n| n.name == name)
    }

    /// Every namespace, `default` and `hbase` included, by name.
    pub fn all_namespaces(&self) -> Vec<NamespaceRecord> {
        let mut all: Vec<NamespaceRecord> = [
            super::names::DEFAULT_NAMESPACE,
            super::names::SYSTEM_NAMESPACE,
        ]
        .into_iter()
        .map(|n| NamespaceRecord {
            name: n.to_string(),
            properties: Default::default(),
        })
        .chain(self.namespaces.iter().cloned())
        .collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// The tables in namespace `ns`.
    pub fn tables_in(&self, ns: &str) -> impl Iterator<Item = &TableRecord> {
        self.tables
            .iter()
            .filter(move |t| super::names::namespace_of(&t.name) == ns)
    }
}

/// One table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableRecord {
    /// The table's name.
    pub name: String,
    /// A unique id (ULID): a table dropped and created again under the same
    /// name gets new storage.
    pub id: String,
    /// False when disabled: its regions are closed.
    pub enabled: bool,
    /// Column families, in name order.
    pub families: Vec<FamilySchema>,
    /// Live regions, in key order, covering the whole key space.
    pub regions: Vec<RegionRecord>,
    /// Regions that split and whose files their children may still read.
    #[serde(default)]
    pub split_parents: Vec<SplitParentRecord>,
    /// Ids of the snapshots whose files this table's regions may read (it
    /// was cloned from them, or restored to one): their files stay while
    /// the table does. Not written while empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<String>,
    /// When the table's data was last replaced wholesale (truncated or
    /// restored to a snapshot; ms since the epoch, 0 = never): a
    /// point-in-time restore never replays across it. Not written while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reset_ms: i64,
}

impl TableRecord {
    /// Where the table's objects go under `data/<hash>/`: its id, behind
    /// its namespace unless that is `default`.
    pub fn object_root(&self) -> String {
        object_root(&self.name, &self.id)
    }
}

/// Where the objects of table `name` with id `id` go under `data/<hash>/`.
pub fn object_root(name: &str, id: &str) -> String {
    match super::names::namespace_of(name) {
        super::names::DEFAULT_NAMESPACE => id.to_string(),
        ns => format!("{ns}/{id}"),
    }
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// One region: a key range and where its data lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionRecord {
    /// Unique id (ULID); tags its WAL entries.
    pub id: String,
    /// Object prefix of its manifest and files.
    pub dir: String,
    /// First row (inclusive), hex; empty = unbounded.
    #[serde(with = "hex_bytes")]
    pub start_row: Bytes,
    /// End row (exclusive), hex; empty = unbounded.
    #[serde(with = "hex_bytes")]
    pub end_row: Bytes,
}

/// A region that split: kept until neither child reads its files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitParentRecord {
    /// The parent.
    pub region: RegionRecord,
    /// Object prefixes of its two children.
    pub children_dirs: Vec<String>,
}

/// Block compression of a family's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompressionName {
    /// Uncompressed.
    None,
    /// LZ4 (default).
    Lz4,
    /// Zstandard.
    Zstd,
}

impl CompressionName {
    /// HBase's name for it (`Compression.Algorithm`).
    pub fn hbase_name(self) -> &'static str {
        match self {
            CompressionName::None => "NONE",
            CompressionName::Lz4 => "LZ4",
            CompressionName::Zstd => "ZSTD",
        }
    }
}

/// What a family's bloom filter indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BloomName {
    /// No bloom filter.
    None,
    /// Rows (default).
    Row,
    /// Row + column.
    Rowcol,
}

impl BloomName {
    /// HBase's name for it (`BloomType`).
    pub fn hbase_name(self) -> &'static str {
        match self {
            BloomName::None => "NONE",
            BloomName::Row => "ROW",
            BloomName::Rowcol => "ROWCOL",
        }
    }
}

/// In-memory compaction of a family's memstore.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImcName {
    /// Skiplist segments are flushed as they are.
    None,
    /// Full segments are flattened into sorted arrays (default).
    #[default]
    Basic,
    /// As basic, and merges drop versions no reader can see.
    Eager,
}

/// HBase's `KEEP_DELETED_CELLS` of a family.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeepDeletedName {
    /// Deletes mask, and major compactions drop what they mask (default).
    #[default]
    False,
    /// Deleted cells stay until versions or the TTL remove them.
    True,
    /// As `True` until a delete marker is older than the TTL.
    Ttl,
}

impl KeepDeletedName {
    /// HBase's name for it (`KeepDeletedCells`).
    pub fn hbase_name(self) -> &'static str {
        match self {
            KeepDeletedName::False => "FALSE",
            KeepDeletedName::True => "TRUE",
            KeepDeletedName::Ttl => "TTL",
        }
    }

    /// From HBase's name, in any case.
    pub fn from_hbase_name(name: &str) -> Option<KeepDeletedName> {
        match name.to_ascii_uppercase().as_str() {
            "FALSE" => Some(KeepDeletedName::False),
            "TRUE" => Some(KeepDeletedName::True),
            "TTL" => Some(KeepDeletedName::Ttl),
            _ => None,
        }
    }

    fn to_storage(self) -> KeepDeleted {
        match self {
            KeepDeletedName::False => KeepDeleted::False,
            KeepDeletedName::True => KeepDeleted::True,
            KeepDeletedName::Ttl => KeepDeleted::Ttl,
        }
    }
}

/// One column family with every setting resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilySchema {
    /// Name.
    pub name: String,
    /// Versions kept per column.
    pub max_versions: u32,
    /// Versions kept even past the TTL.
    pub min_versions: u32,
    /// Time to live in seconds; 0 = forever.
    pub ttl_seconds: u64,
    /// Target data block size in bytes.
    pub block_size: u32,
    /// Block compression.
    pub compression: CompressionName,
    /// Bloom filter.
    pub bloom: BloomName,
    /// Use the in-memory cache pool.
    pub in_memory: bool,
    /// Cache data blocks on read.
    pub cache_data_on_read: bool,
    /// Warm the cache with the family's files when a region opens.
    pub prefetch_on_open: bool,
    /// Let scans fill the cache.
    pub cache_scans: bool,
    /// In-memory compaction (absent in catalogs written before it existed).
    #[serde(default)]
    pub in_memory_compaction: ImcName,
    /// KEEP_DELETED_CELLS (absent in catalogs written before it existed,
    /// and not written while FALSE).
    #[serde(default, skip_serializing_if = "is_false_kdc")]
    pub keep_deleted_cells: KeepDeletedName,
}

fn is_false_kdc(k: &KeepDeletedName) -> bool {
    *k == KeepDeletedName::False
}

impl FamilySchema {
    /// A family with default settings.
    pub fn new(name: impl Into<String>) -> FamilySchema {
        FamilySchema {
            name: name.into(),
            max_versions: 1,
            min_versions: 0,
            ttl_seconds: 0,
            block_size: 64 << 10,
            compression: CompressionName::Lz4,
            bloom: BloomName::Row,
            in_memory: false,
            cache_data_on_read: true,
            prefetch_on_open: true,
            cache_scans: true,
            in_memory_compaction: ImcName::Basic,
            keep_deleted_cells: KeepDeletedName::False,
        }
    }

    /// Checks the settings; the error names the setting.
    pub fn validate(&self) -> Result<(), String> {
        shoal_storage::region::config::validate_family_name(self.name.as_bytes())
            .map_err(|e| format!("family name {} {e}", crate::text::shown(&self.name)))?;
        if self.max_versions == 0 {
            return Err(format!("family {}: VERSIONS must be at least 1", self.name));
        }
        if self.min_versions > self.max_versions {
            return Err(format!(
                "family {}: MIN_VERSIONS ({}) exceeds VERSIONS ({})",
                self.name, self.min_versions, self.max_versions
            ));
        }
        if !(512..=(16 << 20)).contains(&self.block_size) {
            return Err(format!(
                "family {}: BLOCKSIZE must be between 512 bytes and 16 MiB, got {}",
                self.name, self.block_size
            ));
        }
        if self.ttl_seconds > (i64::MAX / 1000) as u64 {
            return Err(format!("family {}: TTL is too large", self.name));
        }
        Ok(())
    }

    /// The storage engine's settings for this family.
    pub fn to_family_config(&self) -> FamilyConfig {
        let sst = SstWriterOptions {
            block_size: self.block_size as usize,
            compression: match self.compression {
                CompressionName::None => Compression::None,
                CompressionName::Lz4 => Compression::Lz4,
                CompressionName::Zstd => Compression::Zstd,
            },
            bloom: match self.bloom {
                BloomName::None => BloomKind::None,
                BloomName::Row => BloomKind::Row,
                BloomName::Rowcol => BloomKind::RowCol,
            },
            ..SstWriterOptions::default()
        };
        FamilyConfig {
            name: Bytes::from(self.name.clone().into_bytes()),
            retention: Retention {
                max_versions: self.max_versions,
                min_versions: self.min_versions,
                ttl_ms: (self.ttl_seconds > 0).then(|| self.ttl_seconds as i64 * 1000),
                keep_deleted: self.keep_deleted_cells.to_storage(),
            },
            sst,
            cache: FamilyCachePolicy {
                cache_data_on_read: self.cache_data_on_read,
                in_memory: self.in_memory,
                prefetch_on_open: self.prefetch_on_open,
                cache_scans: self.cache_scans,
            },
            in_memory_compaction: match self.in_memory_compaction {
                ImcName::None => InMemoryCompaction::None,
                ImcName::Basic => InMemoryCompaction::Basic,
                ImcName::Eager => InMemoryCompaction::Eager,
            },
        }
    }
}

/// Settings to change in (or give to a new) family: `None` keeps the
/// current value (or the default, for a new family).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FamilyPatch {
    /// The family.
    pub name: String,
    /// VERSIONS.
    pub max_versions: Option<u32>,
    /// MIN_VERSIONS.
    pub min_versions: Option<u32>,
    /// TTL in seconds (0 = forever).
    pub ttl_seconds: Option<u64>,
    /// BLOCKSIZE.
    pub block_size: Option<u32>,
    /// COMPRESSION.
    pub compression: Option<CompressionName>,
    /// BLOOMFILTER.
    pub bloom: Option<BloomName>,
    /// IN_MEMORY.
    pub in_memory: Option<bool>,
    /// Cache data blocks on read.
    pub cache_data_on_read: Option<bool>,
    /// Prefetch on open.
    pub prefetch_on_open: Option<bool>,
    /// Scans fill the cache.
    pub cache_scans: Option<bool>,
    /// IN_MEMORY_COMPACTION.
    pub in_memory_compaction: Option<ImcName>,
    /// KEEP_DELETED_CELLS.
    pub keep_deleted_cells: Option<KeepDeletedName>,
}

impl FamilyPatch {
    /// `base` with the patch's settings applied.
    pub fn apply(&self, base: FamilySchema) -> FamilySchema {
        FamilySchema {
            name: self.name.clone(),
            max_versions: self.max_versions.unwrap_or(base.max_versions),
            min_versions: self.min_versions.unwrap_or(base.min_versions),
            ttl_seconds: self.ttl_seconds.unwrap_or(base.ttl_seconds),
            block_size: self.block_size.unwrap_or(base.block_size),
            compression: self.compression.unwrap_or(base.compression),
            bloom: self.bloom.unwrap_or(base.bloom),
            in_memory: self.in_memory.unwrap_or(base.in_memory),
            cache_data_on_read: self.cache_data_on_read.unwrap_or(base.cache_data_on_read),
            prefetch_on_open: self.prefetch_on_open.unwrap_or(base.prefetch_on_open),
            cache_scans: self.cache_scans.unwrap_or(base.cache_scans),
            in_memory_compaction: self
                .in_memory_compaction
                .unwrap_or(base.in_memory_compaction),
            keep_deleted_cells: self.keep_deleted_cells.unwrap_or(base.keep_deleted_cells),
        }
    }
}

/// Rows as lowercase hex in JSON (binary-safe, readable).
pub(crate) mod hex_bytes {
    use bytes::Bytes;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &Bytes, s: S) -> Result<S::Ok, S::Error> {
        let mut out = String::with_capacity(b.len() * 2);
        for byte in b.iter() {
            out.push_str(&format!("{byte:02x}"));
        }
        s.serialize_str(&out)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() % 2 != 0 {
            return Err(serde::de::Error::custom("odd-length hex string"));
        }
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map(Bytes::from)
            .map_err(|e| serde::de::Error::custom(format!("bad hex: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::validate_table_name;

    #[test]
    fn keep_deleted_cells_is_optional_in_json() {
        let mut f = FamilySchema::new("cf");
        let old = serde_json::to_string(&f).unwrap();
        assert!(!old.contains("keep_deleted_cells"));
        f.keep_deleted_cells = KeepDeletedName::Ttl;
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(serde_json::from_str::<FamilySchema>(&json).unwrap(), f);
        let back: FamilySchema = serde_json::from_str(&old).unwrap();
        assert_eq!(back.keep_deleted_cells, KeepDeletedName::False);
        assert_eq!(
            f.to_family_config().retention.keep_deleted,
            KeepDeleted::Ttl
        );
    }

    #[test]
    fn table_names() {
        assert!(validate_table_name("usertable").is_ok());
        assert!(validate_table_name("a.b-c_1").is_ok());
        assert!(validate_table_name("").is_err());
        assert!(validate_table_name(".meta").is_err());
        assert!(validate_table_name("a b").unwrap_err().contains("' '"));
        assert!(validate_table_name(&"x".repeat(129)).is_err());
    }

    #[test]
    fn catalog_json_round_trip() {
        let catalog = Catalog {
            tables: vec![TableRecord {
                name: "t".into(),
                id: "01J".into(),
                enabled: true,
                families: vec![FamilySchema::new("cf")],
                regions: vec![RegionRecord {
                    id: "r1".into(),
                    dir: "data/t/r1".into(),
                    start_row: Bytes::new(),
                    end_row: Bytes::from_static(b"\x00\xffm"),
                }],
                split_parents: vec![],
                holds: vec![],
                reset_ms: 0,
            }],
            grants: vec![],
            snapshots: vec![],
            committed_ms: 0,
            namespaces: vec![],
        };
        let json = serde_json::to_string(&catalog).unwrap();
        assert!(json.contains("\"00ff6d\""));
        assert!(!json.contains("grants"), "no grants: the old format");
        assert!(!json.contains("snapshots") && !json.contains("holds"));
        assert!(!json.contains("committed_ms") && !json.contains("reset_ms"));
        assert!(
            !json.contains("namespaces"),
            "no namespaces: the old format"
        );
        let back: Catalog = serde_json::from_str(&json).unwrap();
        assert_eq!(back, catalog);
        let mut with = catalog.clone();
        with.grants.push(GrantRecord {
            user: "alice".into(),
            table: Some("t".into()),
            family: None,
            namespace: None,
            actions: "RW".into(),
        });
        with.snapshots.push(SnapshotEntry {
            name: "s1".into(),
            id: "01K".into(),
            table: "t".into(),
            created_ms: 5,
            deleted: false,
            base: false,
        });
        with.tables[0].holds.push("01K".into());
        let json = serde_json::to_string(&with).unwrap();
        assert!(!json.contains("deleted"));
        let back: Catalog = serde_json::from_str(&json).unwrap();
        assert_eq!(back, with);
        assert!(back.snapshot("s1").is_some() && back.snapshot_held("01K"));
    }

    #[test]
    fn family_validation_names_the_setting() {
        let mut f = FamilySchema::new("cf");
        f.max_versions = 0;
        assert!(f.validate().unwrap_err().contains("VERSIONS"));
        let mut f = FamilySchema::new("cf");
        f.min_versions = 3;
        assert!(f.validate().unwrap_err().contains("MIN_VERSIONS"));
        assert!(FamilySchema::new("bad name").validate().is_err());
    }
}
