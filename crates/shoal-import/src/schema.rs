//! A family's settings as HBase's table schema states them
//! (`ColumnFamilySchema` attributes, HBase's defaults where absent), in a
//! plain form the server maps onto its own family schema.

use shoal_proto::hbase::ColumnFamilySchema;

/// HBase's `HConstants.FOREVER`: no TTL.
const FOREVER: u64 = i32::MAX as u64;

/// What an imported family keeps and how it stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilySettings {
    /// The family's name.
    pub name: String,
    /// `VERSIONS` (default 1).
    pub max_versions: u32,
    /// `MIN_VERSIONS` (default 0).
    pub min_versions: u32,
    /// `TTL` in seconds; 0 = forever (HBase's `FOREVER`).
    pub ttl_seconds: u64,
    /// `BLOCKSIZE` (default 64 KiB).
    pub block_size: u32,
    /// `COMPRESSION` as HBase names it (default `NONE`).
    pub compression: String,
    /// `BLOOMFILTER` (default `ROW`).
    pub bloom: String,
    /// `IN_MEMORY` (default false).
    pub in_memory: bool,
    /// `DATA_BLOCK_ENCODING` (default `NONE`; Shoal's files have their own).
    pub data_block_encoding: String,
    /// `KEEP_DELETED_CELLS` (default `FALSE`).
    pub keep_deleted_cells: String,
}

/// Reads one family's attributes; an unparsable number is the reason.
pub fn family_settings(cf: &ColumnFamilySchema) -> Result<FamilySettings, String> {
    let name = String::from_utf8(cf.name.to_vec())
        .map_err(|_| "a family name is not UTF-8".to_string())?;
    let attr = |key: &str| -> Option<String> {
        cf.attributes
            .iter()
            .find(|p| p.first.as_ref() == key.as_bytes())
            .map(|p| String::from_utf8_lossy(&p.second).trim().to_string())
    };
    let number = |key: &str, default: u64| -> Result<u64, String> {
        match attr(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<i64>()
                .map(|n| n.max(0) as u64)
                .map_err(|_| format!("family {name:?}: {key} is {v:?}, not a number")),
        }
    };
    let ttl = number("TTL", FOREVER)?;
    Ok(FamilySettings {
        max_versions: number("VERSIONS", 1)?.clamp(1, u32::MAX as u64) as u32,
        min_versions: number("MIN_VERSIONS", 0)?.min(u32::MAX as u64) as u32,
        ttl_seconds: if ttl >= FOREVER { 0 } else { ttl },
        block_size: number("BLOCKSIZE", 64 << 10)?.clamp(1, u32::MAX as u64) as u32,
        compression: attr("COMPRESSION")
            .unwrap_or_else(|| "NONE".into())
            .to_uppercase(),
        bloom: attr("BLOOMFILTER")
            .unwrap_or_else(|| "ROW".into())
            .to_uppercase(),
        in_memory: attr("IN_MEMORY").is_some_and(|v| v.eq_ignore_ascii_case("true")),
        data_block_encoding: attr("DATA_BLOCK_ENCODING")
            .unwrap_or_else(|| "NONE".into())
            .to_uppercase(),
        keep_deleted_cells: attr("KEEP_DELETED_CELLS")
            .unwrap_or_else(|| "FALSE".into())
            .to_uppercase(),
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use shoal_proto::hbase::BytesBytesPair;

    fn cf(attrs: &[(&str, &str)]) -> ColumnFamilySchema {
        ColumnFamilySchema {
            name: Bytes::from_static(b"cf"),
            attributes: attrs
                .iter()
                .map(|(k, v)| BytesBytesPair {
                    first: Bytes::copy_from_slice(k.as_bytes()),
                    second: Bytes::copy_from_slice(v.as_bytes()),
                })
                .collect(),
            configuration: vec![],
        }
    }

    #[test]
    fn defaults_and_values_are_hbases() {
        let d = family_settings(&cf(&[])).expect("defaults");
        assert_eq!((d.max_versions, d.min_versions, d.ttl_seconds), (1, 0, 0));
        assert_eq!(
            (d.block_size, d.compression.as_str(), d.bloom.as_str()),
            (65536, "NONE", "ROW")
        );
        let s = family_settings(&cf(&[
            ("VERSIONS", "3"),
            ("MIN_VERSIONS", "1"),
            ("TTL", "3600"),
            ("BLOCKSIZE", "8192"),
            ("COMPRESSION", "snappy"),
            ("BLOOMFILTER", "ROWCOL"),
            ("IN_MEMORY", "true"),
        ]))
        .expect("settings");
        assert_eq!(
            (s.max_versions, s.min_versions, s.ttl_seconds),
            (3, 1, 3600)
        );
        assert_eq!(
            (s.block_size, s.compression.as_str(), s.bloom.as_str()),
            (8192, "SNAPPY", "ROWCOL")
        );
        assert!(s.in_memory);
        assert_eq!(
            family_settings(&cf(&[("TTL", "2147483647")]))
                .expect("forever")
                .ttl_seconds,
            0
        );
        let bad = family_settings(&cf(&[("VERSIONS", "many")])).expect_err("bad");
        assert!(bad.contains("VERSIONS"), "{bad}");
    }
}
