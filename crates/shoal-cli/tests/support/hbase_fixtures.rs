//! The HBase-written fixtures of `crates/shoal-hfile/tests/fixtures` as
//! test expectations: HBase's visible cells of the snapshot `imp_snap`
//! (less what a TTL has expired since it was written), its region
//! boundaries, and Shoal's cells of a table in the same form.
#![allow(dead_code)] // each test binary uses part of it
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use futures::TryStreamExt;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shoal-hfile/tests/fixtures")
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A cell as compared: row, family, qualifier, timestamp, value (or its
/// length and SHA-256 for the large ones the fixture abbreviates).
pub type Seen = (Vec<u8>, Vec<u8>, Vec<u8>, i64, String);

pub fn value_key(v: &[u8]) -> String {
    if v.len() > 1024 {
        let digest = ring::digest::digest(&ring::digest::SHA256, v);
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        format!("len={},sha256={hex}", v.len())
    } else {
        v.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// HBase's visible cells of the clone, less those a TTL has expired since
/// (the `ttl` family keeps an hour; the fixture's TTL is read from its
/// descriptor line).
pub fn expected_visible(now_ms: i64) -> (BTreeSet<Seen>, Vec<Vec<u8>>) {
    let text =
        std::fs::read_to_string(fixtures().join("hbase-root/imp_snap.expected-visible")).unwrap();
    let mut starts = Vec::new();
    let mut cells = BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# region start keys (hex, '' = first) = ") {
            starts = rest
                .split(',')
                .map(|k| unhex(k.trim_matches('\'')))
                .collect();
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let (family, ts) = (unhex(f[1]), f[3].parse::<i64>().unwrap());
        assert_eq!(f[4], "Put", "a normal scan shows only puts: {line}");
        if family == b"ttl" && ts < now_ms - 3_600_000 {
            continue;
        }
        cells.insert((unhex(f[0]), family, unhex(f[2]), ts, f[5].to_string()));
    }
    assert!(!starts.is_empty() && !cells.is_empty());
    (cells, starts)
}

pub async fn shoal_cells(addr: &str, table: &str) -> BTreeSet<Seen> {
    let client = shoal_client::Client::connect(addr).await.unwrap();
    let rows: Vec<shoal_client::proto::Row> = client
        .table(table)
        .scan(shoal_client::Scan::new().versions(10))
        .try_collect()
        .await
        .unwrap();
    let mut seen = BTreeSet::new();
    for r in rows {
        for c in r.cells {
            seen.insert((
                r.row.to_vec(),
                c.family.to_vec(),
                c.qualifier.to_vec(),
                c.timestamp,
                value_key(&c.value),
            ));
        }
    }
    seen
}

pub async fn region_starts(addr: &str, table: &str) -> Vec<Vec<u8>> {
    let client = shoal_client::Client::connect(addr).await.unwrap();
    let described = client.admin().describe(table).await.unwrap();
    described
        .regions
        .iter()
        .map(|r| r.start_row.to_vec())
        .collect()
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}
