//! HBase's names on disk: table and region directories, encoded region
//! names, HFile links (`[ns=]table=region-hfile`) and split references
//! (`<hfile or link>.<parent region>`), and the places a store file named in
//! a snapshot may live (the table's own directory, the archive, `.tmp`).
//!
//! Facts from HBase 2.6's `HFileLink`, `StoreFileInfo`, `RegionInfo` and
//! `HFileArchiveUtil`; the code is ours.

use md5::{Digest, Md5};

/// A table's name as HBase spells it: namespace and qualifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableName {
    /// `default` for tables without one.
    pub namespace: String,
    /// The table's own name.
    pub qualifier: String,
}

impl TableName {
    /// Parses `ns:qualifier` or `qualifier` (namespace `default`).
    pub fn parse(name: &str) -> TableName {
        match name.split_once(':') {
            Some((ns, q)) => TableName {
                namespace: ns.to_owned(),
                qualifier: q.to_owned(),
            },
            None => TableName {
                namespace: "default".to_owned(),
                qualifier: name.to_owned(),
            },
        }
    }

    /// HBase's bytes for the name: the qualifier alone in `default`.
    pub fn full(&self) -> String {
        if self.namespace == "default" {
            self.qualifier.clone()
        } else {
            format!("{}:{}", self.namespace, self.qualifier)
        }
    }

    /// `data/<ns>/<table>`, relative to the HBase root.
    pub fn data_dir(&self) -> String {
        format!("data/{}/{}", self.namespace, self.qualifier)
    }
}

/// The encoded (directory) name of a region: the MD5 hex of
/// `<table>,<start key>,<region id>[_<replica>]`.
pub fn encoded_region_name(
    table: &TableName,
    start_key: &[u8],
    region_id: u64,
    replica_id: i32,
) -> String {
    let mut name = Vec::with_capacity(64 + start_key.len());
    name.extend_from_slice(table.full().as_bytes());
    name.push(b',');
    name.extend_from_slice(start_key);
    name.push(b',');
    name.extend_from_slice(region_id.to_string().as_bytes());
    if replica_id > 0 {
        name.push(b'_');
        name.extend_from_slice(format!("{replica_id:04X}").as_bytes());
    }
    let digest = Md5::digest(&name);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a store file name in a region's family directory points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileTarget {
    /// The table holding the HFile.
    pub table: TableName,
    /// Its region (encoded name).
    pub region: String,
    /// The HFile's own name.
    pub hfile: String,
}

/// True for a plain HFile name: hex, optionally `_SeqId_<n>_` or `_del`.
pub fn is_hfile_name(name: &str) -> bool {
    let base = name
        .strip_suffix("_del")
        .or_else(|| {
            let (head, tail) = name.split_once("_SeqId_")?;
            let digits = tail.strip_suffix('_')?;
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(head)
        })
        .unwrap_or(name);
    !base.is_empty()
        && base
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Parses an HFile link name `[ns=]table=region-hfile`.
pub fn parse_link(name: &str) -> Option<FileTarget> {
    let (table_part, rest) = name.rsplit_once('=')?;
    let (region, hfile) = rest.split_once('-')?;
    if region.is_empty() || !region.bytes().all(|b| b.is_ascii_hexdigit()) || !is_hfile_name(hfile)
    {
        return None;
    }
    let table = match table_part.split_once('=') {
        Some((ns, q)) => TableName {
            namespace: ns.to_owned(),
            qualifier: q.to_owned(),
        },
        None => TableName {
            namespace: "default".to_owned(),
            qualifier: table_part.to_owned(),
        },
    };
    if table.qualifier.is_empty() || table.namespace.is_empty() {
        return None;
    }
    Some(FileTarget {
        table,
        region: region.to_owned(),
        hfile: hfile.to_owned(),
    })
}

/// Splits a reference name `<hfile or link>.<parent region>` into the
/// referred name and the parent's encoded name.
pub fn parse_reference(name: &str) -> Option<(&str, &str)> {
    let (referred, parent) = name.rsplit_once('.')?;
    let ok = !parent.is_empty()
        && parent.bytes().all(|b| b.is_ascii_hexdigit())
        && (is_hfile_name(referred) || parse_link(referred).is_some());
    ok.then_some((referred, parent))
}

/// Where the HFile `target` (family `family`) may be, relative to the HBase
/// root, in the order HBase's `HFileLink` tries them: the live table, the
/// archive (where `ExportSnapshot` and compactions put files), `.tmp`, the
/// MOB area.
pub fn candidates(target: &FileTarget, family: &str) -> Vec<String> {
    let tail = format!(
        "{}/{}/{}/{}",
        target.table.data_dir(),
        target.region,
        family,
        target.hfile
    );
    vec![
        tail.clone(),
        format!("archive/{tail}"),
        format!(".tmp/{tail}"),
        format!(
            "mobdir/{}/{}/{}/{}",
            target.table.data_dir(),
            target.region,
            family,
            target.hfile
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_names_are_hbases() {
        // HBase 2.6: RegionInfoBuilder.newBuilder(TableName.valueOf("t1"))
        // .setStartKey("row5").setRegionId(1700000000000L).build()
        // .getEncodedName() — computed as MD5("t1,row5,1700000000000").
        let t = TableName::parse("t1");
        let name = encoded_region_name(&t, b"row5", 1_700_000_000_000, 0);
        let expected: String = Md5::digest(b"t1,row5,1700000000000")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(name, expected);
        assert_eq!(name.len(), 32);
        let ns = TableName::parse("ns1:t2");
        assert_eq!(ns.full(), "ns1:t2");
        assert_eq!(ns.data_dir(), "data/ns1/t2");
    }

    #[test]
    fn links_and_references_parse() {
        assert!(is_hfile_name("0123abcd"));
        assert!(is_hfile_name("0123abcd_SeqId_42_"));
        assert!(!is_hfile_name("0123abcd_SeqId__"));
        assert!(!is_hfile_name("xyz"));
        let link = parse_link("tbl=0a1b-77ff").expect("link");
        assert_eq!(link.table, TableName::parse("tbl"));
        assert_eq!(
            (link.region.as_str(), link.hfile.as_str()),
            ("0a1b", "77ff")
        );
        let link = parse_link("ns=tbl=0a1b-77ff_SeqId_3_").expect("link");
        assert_eq!(link.table.full(), "ns:tbl");
        assert_eq!(parse_reference("77ff.0a1b"), Some(("77ff", "0a1b")));
        assert_eq!(
            parse_reference("tbl=0a1b-77ff.c0de"),
            Some(("tbl=0a1b-77ff", "c0de"))
        );
        assert_eq!(parse_reference("77ff"), None);
        assert_eq!(parse_link("77ff"), None);
        let c = candidates(&link, "cf");
        assert_eq!(c[0], "data/ns/tbl/0a1b/cf/77ff_SeqId_3_");
        assert_eq!(c[1], "archive/data/ns/tbl/0a1b/cf/77ff_SeqId_3_");
    }
}
