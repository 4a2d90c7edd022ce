//! The row cache seen through a region: hot rows are answered from it, a
//! write is never hidden by it (including writes racing reads, flushes and
//! compactions), column gets pick from the cached row exactly as the full
//! read path would, and rows that may not be cached (TTL) are not.

use bytes::Bytes;
use shoal_storage::cache::{BlockCache, CacheConfig};
use shoal_storage::object::Bucket;
use shoal_storage::region::{
    Columns, FamilyConfig, Get, Region, RegionConfig, RegionEnv, RowBundle, RowMutation, RowOp,
};
use shoal_storage::sst::BucketFetcher;
use shoal_storage::wal::{Wal, WalOptions};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

async fn open(
    dir: &std::path::Path,
    rows_bytes: usize,
    families: Vec<FamilyConfig>,
) -> (Region, BlockCache) {
    let bucket = Bucket::memory();
    let wal = Wal::open(WalOptions::local(dir)).await.expect("wal");
    let cache = BlockCache::new(
        CacheConfig {
            l1_rows_bytes: rows_bytes,
            ..CacheConfig::default()
        },
        Arc::new(BucketFetcher::new(bucket.clone())),
        None,
    );
    let env = RegionEnv::new(bucket, wal).with_cache(cache.clone());
    let config = RegionConfig::new("r1", "data/00/t1/r1", families);
    (Region::open(config, env).await.expect("open"), cache)
}

fn families() -> Vec<FamilyConfig> {
    vec![FamilyConfig::new("a"), FamilyConfig::new("b")]
}

fn value_of(cells: &[shoal_storage::cell::Cell], family: &[u8], q: &[u8]) -> Option<Bytes> {
    cells
        .iter()
        .find(|c| &c.family[..] == family && &c.qualifier[..] == q)
        .map(|c| c.value.clone())
}

#[tokio::test]
async fn hot_rows_hit_and_writes_are_seen_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (region, cache) = open(dir.path(), 1 << 20, families()).await;
    let row = Bytes::from_static(b"row-1");
    region
        .mutate(
            RowMutation::new(row.clone())
                .put("a", "x", "1")
                .put("b", "y", "2"),
        )
        .await
        .expect("put");
    // With the pool nearly empty a row enters on its first miss, so the
    // second get hits (a fuller pool waits for a second miss: the
    // doorkeeper, `cache/rows.rs`).
    let first = region.get(&Get::new(row.clone())).await.expect("get");
    assert_eq!(cache.metrics().rows.entries, 1);
    let second = region.get(&Get::new(row.clone())).await.expect("get");
    assert_eq!(first, second);
    assert_eq!(cache.metrics().rows.hits, 1, "the second get is a row hit");

    region
        .mutate(RowMutation::new(row.clone()).put("a", "x", "3"))
        .await
        .expect("put");
    let after = region.get(&Get::new(row.clone())).await.expect("get");
    assert_eq!(value_of(&after.cells, b"a", b"x"), Some(Bytes::from("3")));
    assert_eq!(value_of(&after.cells, b"b", b"y"), Some(Bytes::from("2")));

    // A flush changes no visible cell: the entry stays good.
    region.get(&Get::new(row.clone())).await.expect("get");
    region.flush().await.expect("flush");
    let hits = cache.metrics().rows.hits;
    let same = region.get(&Get::new(row.clone())).await.expect("get");
    assert_eq!(same, after);
    assert_eq!(cache.metrics().rows.hits, hits + 1);
    // A compaction may (see the next test): entries start over.
    region.compact(true).await.expect("compact");
    let same = region.get(&Get::new(row.clone())).await.expect("get");
    assert_eq!(same, after);
    assert_eq!(
        cache.metrics().rows.hits,
        hits + 1,
        "a miss after the compaction"
    );

    region
        .mutate(RowMutation::new(row.clone()).op(RowOp::DeleteRow { timestamp: None }))
        .await
        .expect("delete");
    let gone = region.get(&Get::new(row.clone())).await.expect("get");
    assert!(gone.cells.is_empty(), "{gone:?}");

    // Closing the region drops its entries. (Another row: a put to `row` in
    // the delete's millisecond would be masked by it, as in HBase.)
    let other = Bytes::from_static(b"row-2");
    region
        .mutate(RowMutation::new(other.clone()).put("a", "x", "4"))
        .await
        .expect("put");
    for _ in 0..2 {
        region.get(&Get::new(other.clone())).await.expect("get");
    }
    assert_eq!(cache.metrics().rows.entries, 1);
    region.close().await.expect("close");
    assert_eq!(cache.metrics().rows.entries, 0);
}

/// A delete marker masks a put stamped at or before it even when the put is
/// written later, until a major compaction drops the marker (HBase's rule).
/// So a compaction changes what a get returns, and the cached row must go.
#[tokio::test]
async fn a_compaction_that_drops_a_marker_is_seen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (region, _cache) = open(dir.path(), 1 << 20, families()).await;
    let row = Bytes::from_static(b"r3");
    let delete = RowOp::DeleteVersion {
        family: Bytes::from_static(b"b"),
        qualifier: Bytes::from_static(b"q"),
        timestamp: Some(1000),
    };
    region
        .mutate(
            RowMutation::new(row.clone())
                .op(delete)
                .put_at("a", "x", 1000, "1"),
        )
        .await
        .expect("delete");
    region.flush().await.expect("flush");
    region
        .mutate(RowMutation::new(row.clone()).put_at("b", "q", 1000, "masked"))
        .await
        .expect("put");
    for _ in 0..2 {
        let got = region.get(&Get::new(row.clone())).await.expect("get");
        assert_eq!(
            value_of(&got.cells, b"b", b"q"),
            None,
            "masked by the marker"
        );
    }
    // The put is still in the memstore; the marker's file is compacted alone.
    region.compact(true).await.expect("major compaction");
    let got = region.get(&Get::new(row.clone())).await.expect("get");
    assert_eq!(
        value_of(&got.cells, b"b", b"q"),
        Some(Bytes::from_static(b"masked")),
        "the marker is gone, so is the mask"
    );
}

#[tokio::test]
async fn column_gets_from_the_cached_row_match_the_read_path() {
    let dir_cached = tempfile::tempdir().expect("tempdir");
    let dir_plain = tempfile::tempdir().expect("tempdir");
    let (cached, cache) = open(dir_cached.path(), 1 << 20, families()).await;
    let (plain, _) = open(dir_plain.path(), 0, families()).await;
    for region in [&cached, &plain] {
        for i in 0..5 {
            let m = RowMutation::new(Bytes::from(format!("r{i}")))
                .put_at("a", "x", 10, format!("ax{i}"))
                .put_at("a", "y", 10, format!("ay{i}"))
                .put_at("a", "y", 11, format!("ay{i}-newer"))
                .put_at("b", "x", 10, format!("bx{i}"));
            region.mutate(m).await.expect("put");
        }
        // Whole-row gets fill the cached region's entries (a row enters on
        // its second miss).
        for _ in 0..2 {
            for i in 0..5 {
                region
                    .get(&Get::new(Bytes::from(format!("r{i}"))))
                    .await
                    .expect("get");
            }
        }
    }
    // As HBase clients send a get: from 0 to the end of time. It fills and
    // is answered like one with no range.
    let hbase_get = |i: usize, min: i64| Get {
        time_range: shoal_storage::region::TimeRange { min, max: i64::MAX },
        ..Get::new(Bytes::from(format!("r{i}")))
    };
    for (i, min) in [(0, 0), (1, 11), (2, 12)] {
        let hits = cache.metrics().rows.hits;
        let a = cached.get(&hbase_get(i, min)).await.expect("get");
        assert_eq!(
            a,
            plain.get(&hbase_get(i, min)).await.expect("get"),
            "from {min}"
        );
        assert_eq!(cache.metrics().rows.hits, hits + 1, "from {min}");
    }
    let asks = [
        Columns::all(),
        Columns::all().family("a"),
        Columns::all().family("b"),
        Columns::all().column("a", "y"),
        Columns::all().column("a", "y").column("b", "x"),
        Columns::all().column("a", "missing"),
        Columns::all().family("b").column("a", "x"),
    ];
    let hits = cache.metrics().rows.hits;
    for i in 0..5 {
        for columns in &asks {
            let get = Get {
                columns: columns.clone(),
                ..Get::new(Bytes::from(format!("r{i}")))
            };
            let a = cached.get(&get).await.expect("cached get");
            let b = plain.get(&get).await.expect("plain get");
            assert_eq!(a, b, "{columns:?}");
        }
    }
    assert_eq!(cache.metrics().rows.hits, hits + 5 * asks.len() as u64);
    // A family the region lacks is still an error, cached or not.
    let get = Get {
        columns: Columns::all().family("nope"),
        ..Get::new(Bytes::from_static(b"r1"))
    };
    assert!(cached.get(&get).await.is_err());
    // Two versions, or a time range, go to the read path.
    let get = Get {
        max_versions: 2,
        ..Get::new(Bytes::from_static(b"r1"))
    };
    let hits = cache.metrics().rows.hits;
    assert_eq!(
        cached.get(&get).await.expect("get"),
        plain.get(&get).await.expect("get")
    );
    assert_eq!(cache.metrics().rows.hits, hits);
}

#[tokio::test]
async fn families_with_a_ttl_are_not_cached() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut family = FamilyConfig::new("a");
    family.retention.ttl_ms = Some(60_000);
    let (region, cache) = open(dir.path(), 1 << 20, vec![family]).await;
    let row = Bytes::from_static(b"row-1");
    region
        .mutate(RowMutation::new(row.clone()).put("a", "x", "1"))
        .await
        .expect("put");
    for _ in 0..3 {
        let got = region.get(&Get::new(row.clone())).await.expect("get");
        assert_eq!(got.cells.len(), 1);
    }
    let m = cache.metrics().rows;
    assert_eq!((m.hits, m.inserts), (0, 0), "{m:?}");
}

/// Writers put increasing numbers into a few hot rows while readers get them:
/// a get that starts after a put was acknowledged must see that number or a
/// later one. Flushes and compactions run alongside.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_is_never_hidden_by_a_cached_row() {
    const ROWS: usize = 4;
    const WRITES: u64 = 400;
    let dir = tempfile::tempdir().expect("tempdir");
    let (region, cache) = open(dir.path(), 1 << 20, vec![FamilyConfig::new("a")]).await;
    let acked: Arc<Vec<AtomicU64>> = Arc::new((0..ROWS).map(|_| AtomicU64::new(0)).collect());
    let row = |i: usize| Bytes::from(format!("hot-{i}"));
    let mut tasks = Vec::new();
    for w in 0..ROWS {
        let (region, acked) = (region.clone(), acked.clone());
        tasks.push(tokio::spawn(async move {
            for n in 1..=WRITES {
                region
                    .mutate(RowMutation::new(row(w)).put("a", "n", n.to_be_bytes().to_vec()))
                    .await
                    .expect("put");
                acked[w].store(n, Ordering::SeqCst);
                if n % 7 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    for r in 0..4 {
        let (region, acked) = (region.clone(), acked.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = r;
            while (0..ROWS).any(|w| acked[w].load(Ordering::SeqCst) < WRITES) {
                i = (i + 1) % ROWS;
                let floor = acked[i].load(Ordering::SeqCst);
                let got = region.get(&Get::new(row(i))).await.expect("get");
                let seen = value_of(&got.cells, b"a", b"n").map_or(0, |v| {
                    u64::from_be_bytes(v[..].try_into().expect("8 bytes"))
                });
                assert!(
                    seen >= floor,
                    "row {i}: read {seen} after {floor} was acknowledged"
                );
                // A cached get never waits: let the writers run.
                tokio::task::yield_now().await;
            }
        }));
    }
    {
        let region = region.clone();
        let acked = acked.clone();
        tasks.push(tokio::spawn(async move {
            while (0..ROWS).any(|w| acked[w].load(Ordering::SeqCst) < WRITES) {
                region.flush().await.expect("flush");
                region.compact(false).await.expect("compact");
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    for w in 0..ROWS {
        let got = region.get(&Get::new(row(w))).await.expect("get");
        assert_eq!(
            value_of(&got.cells, b"a", b"n"),
            Some(Bytes::copy_from_slice(&WRITES.to_be_bytes()))
        );
    }
    let m = cache.metrics().rows;
    assert!(m.hits > 0 && m.inserts > 0, "the cache took part: {m:?}");
}

/// A region on `bucket` with its own WAL and cache (another server's).
async fn open_on(bucket: &Bucket, wal_dir: &std::path::Path) -> (Region, BlockCache) {
    let wal = Wal::open(WalOptions::local(wal_dir)).await.expect("wal");
    let cache = BlockCache::new(
        CacheConfig {
            l1_rows_bytes: 8 << 20,
            ..CacheConfig::default()
        },
        Arc::new(BucketFetcher::new(bucket.clone())),
        None,
    );
    let env = RegionEnv::new(bucket.clone(), wal).with_cache(cache.clone());
    let config = RegionConfig::new("r1", "data/00/t1/r1", families());
    (Region::open(config, env).await.expect("open"), cache)
}

#[tokio::test]
async fn rows_handed_to_the_next_owner_hit_there_and_never_hide_a_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bucket = Bucket::memory();
    let (old, _) = open_on(&bucket, &dir.path().join("wal-old")).await;
    for i in 0..20 {
        let m = RowMutation::new(format!("row-{i:02}"))
            .put("a", "x", format!("v{i}"))
            .put("b", "y", "same");
        old.mutate(m).await.expect("put");
    }
    for i in 0..20 {
        old.get(&Get::new(format!("row-{i:02}")))
            .await
            .expect("get");
    }
    // Closed for the move: its rows are the region's final state.
    old.close_keeping_reads().await.expect("close");
    let bundle = old.handed_rows(64 << 20);
    let mut handed = bundle.to_rows().expect("rows");
    assert_eq!(handed.len(), 20);
    let some = old.handed_rows(3000);
    assert!(some.len() <= 3000, "bounded in bytes");
    assert!(some.to_rows().expect("rows").len() < 20);
    old.end_reads();

    let (new, cache) = open_on(&bucket, &dir.path().join("wal-new")).await;
    let opened_at = new.read_point();
    // A write here before the rows are taken: that row is refused, as a
    // read at the open's read point would be.
    new.mutate(RowMutation::new("row-03").put("a", "x", "newer"))
        .await
        .expect("put");
    // Rows that do not fit the region are left out.
    let mut stranger = handed[0].clone();
    stranger.cells[0].family = Bytes::from_static(b"zz");
    handed.push(stranger);
    // A damaged bundle keeps nothing.
    let inserts = cache.metrics().rows.inserts;
    let mut damaged = RowBundle::from_rows(&handed).into_bytes().to_vec();
    damaged[100] ^= 4;
    assert!(
        new.take_handed_rows(&RowBundle::from_bytes(damaged.into()), opened_at)
            .is_err()
    );
    assert_eq!(cache.metrics().rows.inserts, inserts);
    let kept = new.take_handed_rows(&RowBundle::from_rows(&handed), opened_at);
    assert_eq!(kept, Ok(19));

    let before = cache.metrics().rows.hits;
    for i in 0..20 {
        let got = new
            .get(&Get::new(format!("row-{i:02}")))
            .await
            .expect("get");
        let want = if i == 3 {
            "newer".to_string()
        } else {
            format!("v{i}")
        };
        assert_eq!(
            value_of(&got.cells, b"a", b"x"),
            Some(Bytes::from(want)),
            "row {i}"
        );
        assert_eq!(value_of(&got.cells, b"b", b"y"), Some(Bytes::from("same")));
    }
    // Every handed row was a hit on its first read here.
    assert_eq!(cache.metrics().rows.hits, before + 19);
    // A write after the take removes the entry as for any cached row.
    new.mutate(RowMutation::new("row-05").put("a", "x", "later"))
        .await
        .expect("put");
    let got = new.get(&Get::new("row-05")).await.expect("get");
    assert_eq!(value_of(&got.cells, b"a", b"x"), Some(Bytes::from("later")));
}
