//! HBase's names for what Shoal holds: table names (`ns:table`; a table of
//! the `default` namespace is named by its qualifier, as in the catalog,
//! `catalog::names`), region names
//! (`<table>,<start key>,<region id>.<encoded>.`, the encoded part the MD5
//! of the rest, as HBase's `RegionInfo` makes them), and the meta region.

use bytes::Bytes;
use md5::{Digest, Md5};

pub use crate::catalog::names::{DEFAULT_NAMESPACE, SYSTEM_NAMESPACE};
/// The catalog table's qualifier.
pub const META_QUALIFIER: &str = "meta";
/// The meta region's name, as the client addresses it.
pub const META_REGION_NAME: &[u8] = b"hbase:meta,,1";

/// A table name as HBase's client sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableRef {
    /// `hbase:meta`, served from Shoal's catalog.
    Meta,
    /// A Shoal table, by the catalog's name for it.
    Table(String),
}

/// Reads a `TableName{namespace, qualifier}`.
pub fn table_ref(namespace: &[u8], qualifier: &[u8]) -> TableRef {
    let ns = String::from_utf8_lossy(namespace);
    let q = String::from_utf8_lossy(qualifier).into_owned();
    match &*ns {
        "" | DEFAULT_NAMESPACE => TableRef::Table(q),
        SYSTEM_NAMESPACE if q == META_QUALIFIER => TableRef::Meta,
        other => TableRef::Table(format!("{other}:{q}")),
    }
}

/// Reads a table named in one string (`ns:table` or `table`).
pub fn table_ref_str(name: &[u8]) -> TableRef {
    match name.iter().position(|b| *b == b':') {
        Some(i) => table_ref(&name[..i], &name[i + 1..]),
        None => table_ref(b"", name),
    }
}

/// The numeric region id HBase shows for a Shoal region: the creation time
/// in milliseconds its ULID id carries (regions made together share it, as
/// a pre-split HBase table's do); an id that is not a ULID is hashed.
pub fn region_number(id: &str) -> u64 {
    match ulid::Ulid::from_string(&id.to_ascii_uppercase()) {
        Ok(u) => u.timestamp_ms(),
        Err(_) => {
            let d = Md5::digest(id.as_bytes());
            u64::from_be_bytes(d[..8].try_into().unwrap_or([0; 8])) >> 1
        }
    }
}

/// A region's full name and its encoded name (32 hex digits).
pub fn region_name(table: &str, start: &[u8], number: u64) -> (Bytes, String) {
    let mut base = Vec::with_capacity(table.len() + start.len() + 24);
    base.extend_from_slice(table.as_bytes());
    base.push(b',');
    base.extend_from_slice(start);
    base.push(b',');
    base.extend_from_slice(number.to_string().as_bytes());
    let encoded: String = Md5::digest(&base)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    base.push(b'.');
    base.extend_from_slice(encoded.as_bytes());
    base.push(b'.');
    (Bytes::from(base), encoded)
}

/// The encoded name at the end of a full region name (`.<32 hex>.`).
pub fn encoded_part(name: &[u8]) -> Option<&str> {
    let n = name.len();
    if n > 34 && name[n - 1] == b'.' && name[n - 34] == b'.' {
        let e = &name[n - 33..n - 1];
        if e.iter().all(u8::is_ascii_hexdigit) {
            return std::str::from_utf8(e).ok();
        }
    }
    None
}

/// What a region name the client sent names: the table and the encoded
/// name (None for the meta region or a name of another shape).
pub fn parse_region_name(name: &[u8]) -> Option<(TableRef, Option<String>)> {
    if name == META_REGION_NAME {
        return Some((TableRef::Meta, None));
    }
    let comma = name.iter().position(|b| *b == b',')?;
    let table = table_ref_str(&name[..comma]);
    Some((table, encoded_part(name).map(str::to_string)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_names_match_hbase() {
        // HBase 2.x: RegionInfo "t1,,1700000000000" → its MD5.
        let (name, encoded) = region_name("t1", b"", 1_700_000_000_000);
        let expected: String = Md5::digest(b"t1,,1700000000000")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(encoded, expected);
        assert_eq!(name, format!("t1,,1700000000000.{expected}.").as_bytes());
        let (t, e) = parse_region_name(&name).unwrap();
        assert_eq!(t, TableRef::Table("t1".into()));
        assert_eq!(e.as_deref(), Some(expected.as_str()));
        // A start key with commas and dots.
        let (name, encoded) = region_name("t", b"a,b.c", 5);
        let (t, e) = parse_region_name(&name).unwrap();
        assert_eq!((t, e), (TableRef::Table("t".into()), Some(encoded)));
    }

    #[test]
    fn tables_and_meta() {
        assert_eq!(
            parse_region_name(META_REGION_NAME).unwrap().0,
            TableRef::Meta
        );
        assert_eq!(table_ref(b"default", b"x"), TableRef::Table("x".into()));
        assert_eq!(table_ref(b"hbase", b"meta"), TableRef::Meta);
        assert_eq!(table_ref_str(b"ns1:x"), TableRef::Table("ns1:x".into()));
        assert_eq!(table_ref_str(b"default:x"), TableRef::Table("x".into()));
        let (name, _) = region_name("ns1:x", b"", 5);
        assert_eq!(
            parse_region_name(&name).unwrap().0,
            TableRef::Table("ns1:x".into())
        );
        assert!(parse_region_name(b"no-comma").is_none());
        let id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        assert!(region_number(&id) > 1_600_000_000_000);
        assert_eq!(region_number("odd"), region_number("odd"));
    }
}
