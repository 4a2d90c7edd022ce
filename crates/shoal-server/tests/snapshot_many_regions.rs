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

/// A snapshot that writes a large memstore has its regions flushed after,
/// so the next snapshot shares those cells as files and writes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_that_wrote_much_memstore_leaves_the_next_one_nothing_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::default();
    config.server.data_dir = dir.path().to_path_buf();
    config.cache.l2_capacity = shoal_server::config::ByteSize(64 << 20);
    config.cache.l1_data = shoal_server::config::ByteSize(8 << 20);
    let host = Host::open(config).await.unwrap();
    let cf = FamilyPatch {
        name: "cf".into(),
        ..FamilyPatch::default()
    };
    host.create_table("big", vec![cf], vec![Bytes::from_static(b"r0500")])
        .await
        .unwrap();
    // Values that do not compress (an LCG's hex digits).
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..1000 {
        let value: String = (0..750)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                format!("{:016x}", x >> 1)
            })
            .collect();
        host.mutate("big", RowMutation::new(row(i)).put("cf", "q", value))
            .await
            .unwrap();
    }
    let first = host.take_snapshot("big", "s1").await.unwrap();
    assert!(first.written_bytes >= 8 << 20, "{first:?}");
    // The flush after it runs in the background.
    let start = std::time::Instant::now();
    let second = loop {
        let name = format!("s{}", start.elapsed().as_millis());
        let s = host.take_snapshot("big", &name).await.unwrap();
        if s.written_bytes == 0 {
            break s;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "the regions were not flushed after the first snapshot: {s:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(second.regions, 2);
    host.clone_snapshot(&second.name, "c").await.unwrap();
    assert_eq!(rows(&host, "c").await.len(), 1000);
    host.shutdown().await;
}
