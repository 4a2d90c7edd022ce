//! Clones and restores of a table with more regions than are seeded at once
//! (`SEED_CONCURRENCY` in `host/snapshot_use.rs`): every new region keeps
//! its snapshot region's bounds, in key order, and reads exactly the rows
//! of the snapshot — flushed or still in the memstore at the cut.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::Bytes;
use shoal_server::catalog::FamilyPatch;
use shoal_server::{Host, ServerConfig};
use shoal_storage::region::{RowMutation, Scan};
use std::collections::BTreeMap;

/// More than the 16 seeded at once, and not a multiple of it.
const REGIONS: usize = 41;

fn row(i: usize) -> String {
    format!("r{i:04}")
}

async fn rows(host: &Host, table: &str) -> BTreeMap<String, String> {
    let mut s = host.scan(table, Scan::all()).unwrap();
    let mut out = BTreeMap::new();
    while let Some(r) = s.next().await.unwrap() {
        out.insert(
            String::from_utf8(r.row.to_vec()).unwrap(),
            String::from_utf8(r.cells[0].value.to_vec()).unwrap(),
        );
    }
    out
}

async fn bounds(host: &Host, table: &str) -> Vec<(Bytes, Bytes)> {
    let t = host
        .list_tables()
        .await
        .into_iter()
        .find(|t| t.name == table)
        .unwrap();
    t.regions
        .iter()
        .map(|r| (r.start_row.clone(), r.end_row.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clone_and_restore_keep_every_region_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ServerConfig::default();
    c.server.data_dir = dir.path().to_path_buf();
    c.cache.l2_capacity = shoal_server::config::ByteSize(64 << 20);
    c.cache.l1_data = shoal_server::config::ByteSize(4 << 20);
    let host = Host::open(c).await.unwrap();
    let family = FamilyPatch {
        name: "cf".into(),
        ..FamilyPatch::default()
    };
    // Region k holds rows 10k..10k+9.
    let splits: Vec<Bytes> = (1..REGIONS).map(|k| Bytes::from(row(10 * k))).collect();
    host.create_table("src", vec![family], splits)
        .await
        .unwrap();
    let mut want = BTreeMap::new();
    for i in 0..10 * REGIONS {
        let v = format!("v{i}");
        host.mutate("src", RowMutation::new(row(i)).put("cf", "q", v.clone()))
            .await
            .unwrap();
        want.insert(row(i), v);
        // Half the rows flushed, half in the memstore at the cut.
        if i == 5 * REGIONS {
            host.flush_table("src").await.unwrap();
        }
    }
    let src_bounds = bounds(&host, "src").await;
    assert_eq!(src_bounds.len(), REGIONS);
    host.take_snapshot("src", "snap").await.unwrap();

    let cloned = host.clone_snapshot("snap", "copy").await.unwrap();
    let cloned_bounds: Vec<(Bytes, Bytes)> = cloned
        .regions
        .iter()
        .map(|r| (r.start_row.clone(), r.end_row.clone()))
        .collect();
    assert_eq!(cloned_bounds, src_bounds, "the clone's regions, in order");
    assert_eq!(bounds(&host, "copy").await, src_bounds);
    assert_eq!(rows(&host, "copy").await, want);

    // Changes after the cut, then a restore: the snapshot's rows again.
    for i in (0..10 * REGIONS).step_by(7) {
        host.mutate("src", RowMutation::new(row(i)).put("cf", "q", "later"))
            .await
            .unwrap();
    }
    host.disable_table("src").await.unwrap();
    host.restore_snapshot("snap").await.unwrap();
    host.enable_table("src").await.unwrap();
    assert_eq!(bounds(&host, "src").await, src_bounds);
    assert_eq!(rows(&host, "src").await, want);
    assert_eq!(rows(&host, "copy").await, want);
}
