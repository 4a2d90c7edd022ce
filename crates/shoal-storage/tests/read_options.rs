//! A region's HBase read options beyond the basics, end to end:
//! `KEEP_DELETED_CELLS` (deleted cells readable as of before the delete,
//! through flushes and major compactions, until versions or the TTL remove
//! them) and the per-family options of gets and scans (limit, offset, time
//! range per family).

use bytes::Bytes;
use shoal_storage::object::Bucket;
use shoal_storage::region::versions::KeepDeleted;
use shoal_storage::region::{
    FamilyConfig, FamilyOptions, Get, ManualClock, Region, RegionConfig, RegionEnv, RowMutation,
    RowOp, Scan, TimeRange,
};
use shoal_storage::wal::{Wal, WalOptions};
use std::sync::Arc;

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// A region with family `k` (3 versions, `keep`) and family `p` (3 versions).
async fn open(dir: &tempfile::TempDir, keep: KeepDeleted, ttl_ms: Option<i64>) -> Region {
    let wal = Wal::open(WalOptions::local(dir.path().join("wal")))
        .await
        .expect("wal");
    let mut env = RegionEnv::new(Bucket::memory(), wal);
    env.clock = Arc::new(ManualClock::new(1_000_000));
    let mut k = FamilyConfig::new("k").with_max_versions(3);
    k.retention.keep_deleted = keep;
    k.retention.ttl_ms = ttl_ms;
    let p = FamilyConfig::new("p").with_max_versions(3);
    Region::open(RegionConfig::new("r1", "data/00/t1/r1", vec![k, p]), env)
        .await
        .expect("open region")
}

async fn write(region: &Region, m: RowMutation) {
    region.mutate(m).await.expect("write");
}

/// `family:qualifier@ts` of every cell `get` answers.
async fn read(region: &Region, get: Get) -> Vec<String> {
    region
        .get(&get)
        .await
        .expect("get")
        .cells
        .iter()
        .map(|c| {
            format!(
                "{}:{}@{}",
                String::from_utf8_lossy(&c.family),
                String::from_utf8_lossy(&c.qualifier),
                c.timestamp
            )
        })
        .collect()
}

fn versions_before(max: i64) -> Get {
    Get {
        max_versions: 10,
        time_range: TimeRange { min: 0, max },
        ..Get::new(b("row"))
    }
}

async fn deleted_history(region: &Region) {
    for ts in [10, 20, 30] {
        write(
            region,
            RowMutation::new(b("row")).put_at(b("k"), b("q"), ts, b("v")),
        )
        .await;
    }
    let delete = RowOp::DeleteColumn {
        family: b("k"),
        qualifier: b("q"),
        timestamp: Some(25),
    };
    write(region, RowMutation::new(b("row")).op(delete)).await;
}

#[tokio::test]
async fn keep_deleted_cells_answers_reads_before_the_delete() {
    let dir = tempfile::tempdir().expect("tempdir");
    let region = open(&dir, KeepDeleted::True, None).await;
    deleted_history(&region).await;
    let all = Get {
        max_versions: 10,
        ..Get::new(b("row"))
    };
    for step in ["memstore", "flush", "major compaction"] {
        match step {
            "flush" => {
                region.flush().await.expect("flush");
            }
            "major compaction" => {
                region.compact(true).await.expect("compact");
            }
            _ => {}
        }
        // All time: the marker at 25 masks 20 and 10.
        assert_eq!(read(&region, all.clone()).await, ["k:q@30"], "{step}");
        // Before the delete: its marker is outside the range.
        assert_eq!(
            read(&region, versions_before(25)).await,
            ["k:q@20", "k:q@10"],
            "{step}"
        );
        // A range holding the marker: masked.
        assert!(
            read(&region, versions_before(26)).await.is_empty(),
            "{step}"
        );
    }
}

#[tokio::test]
async fn without_keep_deleted_cells_the_delete_masks_every_later_range() {
    let dir = tempfile::tempdir().expect("tempdir");
    let region = open(&dir, KeepDeleted::False, None).await;
    deleted_history(&region).await;
    assert!(read(&region, versions_before(25)).await.is_empty());
    region.compact(true).await.expect("compact");
    assert!(read(&region, versions_before(25)).await.is_empty());
}

#[tokio::test]
async fn keep_deleted_ttl_lets_expired_markers_go() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Now is 1,000,000; a TTL of 999,985 ms expires every stamp below 15.
    let region = open(&dir, KeepDeleted::Ttl, Some(999_985)).await;
    deleted_history(&region).await;
    region.flush().await.expect("flush");
    region.compact(true).await.expect("compact");
    // The marker at 25 is not expired: kept, masking nothing before it
    // (10 is expired).
    assert_eq!(read(&region, versions_before(25)).await, ["k:q@20"]);
}

#[tokio::test]
async fn per_family_limit_offset_and_time_range() {
    let dir = tempfile::tempdir().expect("tempdir");
    let region = open(&dir, KeepDeleted::False, None).await;
    let mut m = RowMutation::new(b("row"));
    for q in ["a", "b", "c"] {
        m = m
            .put_at(b("k"), b(q), 10, b("v"))
            .put_at(b("p"), b(q), 20, b("v"));
    }
    write(&region, m).await;
    let window = Get {
        per_family: FamilyOptions {
            limit: Some(1),
            offset: 1,
            ..FamilyOptions::default()
        },
        ..Get::new(b("row"))
    };
    assert_eq!(read(&region, window).await, ["k:b@10", "p:b@20"]);
    let ranged = Get {
        per_family: FamilyOptions {
            time_ranges: [(b("p"), TimeRange { min: 0, max: 15 })]
                .into_iter()
                .collect(),
            ..FamilyOptions::default()
        },
        ..Get::new(b("row"))
    };
    assert_eq!(read(&region, ranged).await, ["k:a@10", "k:b@10", "k:c@10"]);
    let mut scan = Scan::all();
    scan.per_family.limit = Some(2);
    let mut s = region.scanner(scan).expect("scanner");
    let row = s.next().await.expect("scan").expect("a row");
    assert_eq!(row.cells.len(), 4);
}

#[tokio::test]
async fn check_and_mutate_reads_its_time_range() {
    use shoal_storage::region::{CheckAndMutate, CompareOp};
    let dir = tempfile::tempdir().expect("tempdir");
    let region = open(&dir, KeepDeleted::False, None).await;
    let m = RowMutation::new(b("row"))
        .put_at(b("p"), b("q"), 10, b("old"))
        .put_at(b("p"), b("q"), 20, b("new"));
    write(&region, m).await;
    let check = |value: &str, max: i64| CheckAndMutate {
        family: b("p"),
        qualifier: b("q"),
        op: CompareOp::Equal,
        value: b(value),
        time_range: TimeRange { min: 0, max },
        filter: None,
        mutation: RowMutation::new(b("row")).put_at(b("p"), b("done"), 5, b("x")),
    };
    // The newest version within [0, 15) is "old".
    assert!(
        !region
            .check_and_mutate(check("new", 15))
            .await
            .expect("check")
    );
    assert!(
        region
            .check_and_mutate(check("old", 15))
            .await
            .expect("check")
    );
    assert!(
        region
            .check_and_mutate(check("new", i64::MAX))
            .await
            .expect("check")
    );
}
