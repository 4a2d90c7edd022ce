//! A region's HBase semantics end to end: puts, deletes of every kind, gets
//! and scans with columns, versions, time ranges, limits and batches,
//! increment, append and check-and-mutate — across flushes, compactions and
//! reopen.

use bytes::Bytes;
use shoal_storage::object::Bucket;
use shoal_storage::region::{
    CheckAndMutate, Columns, CompareOp, FamilyConfig, Get, ManualClock, Region, RegionConfig,
    RegionEnv, RegionError, RowMutation, RowOp, Scan, TimeRange,
};
use shoal_storage::wal::{Wal, WalOptions};
use std::sync::Arc;

struct Fixture {
    _dir: tempfile::TempDir,
    bucket: Bucket,
    wal_dir: std::path::PathBuf,
    clock: ManualClock,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let wal_dir = dir.path().join("wal");
        Fixture {
            _dir: dir,
            bucket: Bucket::memory(),
            wal_dir,
            clock: ManualClock::new(1_000_000),
        }
    }

    fn config() -> RegionConfig {
        RegionConfig::new(
            "r1",
            "data/00/t1/r1",
            vec![
                FamilyConfig::new("cf").with_max_versions(3),
                FamilyConfig::new("meta"),
            ],
        )
    }

    async fn open(&self) -> (Region, Wal) {
        let wal = Wal::open(WalOptions::local(&self.wal_dir))
            .await
            .expect("wal");
        let mut env = RegionEnv::new(self.bucket.clone(), wal.clone());
        env.clock = Arc::new(self.clock.clone());
        (
            Region::open(Self::config(), env)
                .await
                .expect("open region"),
            wal,
        )
    }
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

async fn value(region: &Region, row: &str, family: &str, qualifier: &str) -> Option<Bytes> {
    let get = Get {
        columns: Columns::all().column(b(family), b(qualifier)),
        ..Get::new(b(row))
    };
    region
        .get(&get)
        .await
        .expect("get")
        .cells
        .into_iter()
        .next()
        .map(|c| c.value)
}

async fn rows(region: &Region, scan: Scan) -> Vec<(String, Vec<String>)> {
    let mut s = region.scanner(scan).expect("scanner");
    let mut out = Vec::new();
    while let Some(r) = s.next().await.expect("scan") {
        let cells = r
            .cells
            .iter()
            .map(|c| {
                format!(
                    "{}:{}@{}={}",
                    String::from_utf8_lossy(&c.family),
                    String::from_utf8_lossy(&c.qualifier),
                    c.timestamp,
                    String::from_utf8_lossy(&c.value)
                )
            })
            .collect();
        out.push((String::from_utf8_lossy(&r.row).into_owned(), cells));
    }
    out
}

#[tokio::test]
async fn puts_gets_and_versions_survive_flush_and_reopen() {
    let fx = Fixture::new();
    let (region, wal) = fx.open().await;
    for (ts, v) in [(10, "a"), (20, "b"), (30, "c"), (40, "d")] {
        region
            .mutate(RowMutation::new(b("row1")).put_at(b("cf"), b("q"), ts, b(v)))
            .await
            .expect("put");
    }
    region
        .mutate(RowMutation::new(b("row1")).put(b("meta"), b("m"), b("x")))
        .await
        .expect("put");
    assert_eq!(value(&region, "row1", "cf", "q").await, Some(b("d")));

    let all_versions = Get {
        max_versions: 10,
        ..Get::new(b("row1"))
    };
    let got = region.get(&all_versions).await.expect("get");
    let ts: Vec<i64> = got.cells.iter().map(|c| c.timestamp).collect();
    // cf keeps 3 versions; meta's cell uses the clock.
    assert_eq!(ts, vec![40, 30, 20, 1_000_000]);

    let ranged = Get {
        max_versions: 10,
        time_range: TimeRange { min: 15, max: 35 },
        ..Get::new(b("row1"))
    };
    let ts: Vec<i64> = region
        .get(&ranged)
        .await
        .expect("get")
        .cells
        .iter()
        .map(|c| c.timestamp)
        .collect();
    assert_eq!(ts, vec![30, 20]);

    region.flush().await.expect("flush");
    assert_eq!(value(&region, "row1", "cf", "q").await, Some(b("d")));
    region
        .mutate(RowMutation::new(b("row2")).put(b("cf"), b("q"), b("unflushed")))
        .await
        .expect("put");
    drop(region);
    wal.close().await.expect("close wal");

    // Reopen: flushed data from the file, unflushed from the WAL.
    let (region, _wal) = fx.open().await;
    assert_eq!(value(&region, "row1", "cf", "q").await, Some(b("d")));
    assert_eq!(
        value(&region, "row2", "cf", "q").await,
        Some(b("unflushed"))
    );
    let got = region.get(&all_versions).await.expect("get");
    assert_eq!(got.cells.len(), 4);
}

#[tokio::test]
async fn every_delete_kind() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    let put = |q: &str, ts: i64| RowOp::Put {
        family: b("cf"),
        qualifier: b(q),
        timestamp: Some(ts),
        value: b(&format!("{q}{ts}")),
    };
    let mut m = RowMutation::new(b("r"));
    for q in ["a", "b", "c", "d"] {
        for ts in [1, 2, 3] {
            m = m.op(put(q, ts));
        }
    }
    region.mutate(m).await.expect("put");
    region
        .mutate(RowMutation::new(b("r")).op(RowOp::DeleteVersion {
            family: b("cf"),
            qualifier: b("a"),
            timestamp: None,
        }))
        .await
        .expect("delete newest");
    region
        .mutate(RowMutation::new(b("r")).op(RowOp::DeleteColumn {
            family: b("cf"),
            qualifier: b("b"),
            timestamp: Some(2),
        }))
        .await
        .expect("delete column");
    region
        .mutate(RowMutation::new(b("r")).op(RowOp::DeleteFamilyVersion {
            family: b("cf"),
            timestamp: 1,
        }))
        .await
        .expect("delete family version");
    region.flush().await.expect("flush");
    region
        .mutate(RowMutation::new(b("r")).op(RowOp::DeleteVersion {
            family: b("cf"),
            qualifier: b("d"),
            timestamp: Some(2),
        }))
        .await
        .expect("delete version");
    let scan = Scan {
        max_versions: 5,
        ..Scan::all()
    };
    let expect = vec![(
        "r".to_string(),
        vec![
            "cf:a@2=a2",
            "cf:b@3=b3",
            "cf:c@3=c3",
            "cf:c@2=c2",
            "cf:d@3=d3",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>(),
    )];
    assert_eq!(rows(&region, scan.clone()).await, expect);
    // Major compaction drops markers and what they mask, and changes nothing visible.
    region.compact(true).await.expect("major");
    assert_eq!(rows(&region, scan.clone()).await, expect);
    // Delete the whole row, then the family.
    region
        .mutate(RowMutation::new(b("r")).op(RowOp::DeleteRow { timestamp: None }))
        .await
        .expect("delete row");
    assert!(rows(&region, scan).await.is_empty());
    region
        .mutate(RowMutation::new(b("r")).put_at(b("cf"), b("a"), 2_000_000, b("new")))
        .await
        .expect("put");
    region
        .mutate(RowMutation::new(b("r")).op(RowOp::DeleteFamily {
            family: b("cf"),
            timestamp: Some(2_000_000),
        }))
        .await
        .expect("delete family");
    assert_eq!(value(&region, "r", "cf", "a").await, None);
}

#[tokio::test]
async fn scans_with_bounds_limits_batches_columns_and_reverse() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    for i in 0..20 {
        let row = format!("row{i:02}");
        region
            .mutate(
                RowMutation::new(b(&row))
                    .put(b("cf"), b("a"), b("1"))
                    .put(b("cf"), b("b"), b("2"))
                    .put(b("meta"), b("m"), b("3")),
            )
            .await
            .expect("put");
        if i == 10 {
            region.flush().await.expect("flush");
        }
    }
    let names = |rs: Vec<(String, Vec<String>)>| rs.into_iter().map(|r| r.0).collect::<Vec<_>>();
    assert_eq!(
        names(rows(&region, Scan::range(b("row05"), b("row08"))).await),
        ["row05", "row06", "row07"]
    );
    assert_eq!(
        names(
            rows(
                &region,
                Scan {
                    limit: 2,
                    ..Scan::all()
                }
            )
            .await
        ),
        ["row00", "row01"]
    );
    assert_eq!(
        names(rows(&region, Scan::prefix(b("row1"))).await).len(),
        10
    );
    let rev = Scan {
        reverse: true,
        limit: 3,
        ..Scan::range(b("row05"), b("row15"))
    };
    assert_eq!(names(rows(&region, rev).await), ["row14", "row13", "row12"]);
    let batched = rows(
        &region,
        Scan {
            batch: 2,
            ..Scan::range(b("row00"), b("row01"))
        },
    )
    .await;
    assert_eq!(batched.len(), 2, "3 cells in chunks of 2: {batched:?}");
    let only_meta = rows(
        &region,
        Scan {
            columns: Columns::all().family(b("meta")),
            ..Scan::range(b("row00"), b("row01"))
        },
    )
    .await;
    assert_eq!(only_meta[0].1, vec!["meta:m@1000000=3".to_string()]);
    let one_column = rows(
        &region,
        Scan {
            columns: Columns::all().column(b("cf"), b("b")),
            ..Scan::range(b("row00"), b("row02"))
        },
    )
    .await;
    assert_eq!(one_column.len(), 2);
    assert!(
        one_column
            .iter()
            .all(|r| r.1 == vec!["cf:b@1000000=2".to_string()])
    );
}

#[tokio::test]
async fn read_modify_write_operations() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    let col = |q: &str, d: i64| (b("cf"), b(q), d);
    assert_eq!(
        region
            .increment(b("c"), &[col("n", 5)])
            .await
            .expect("incr"),
        vec![5]
    );
    assert_eq!(
        region
            .increment(b("c"), &[col("n", -2), col("m", 1)])
            .await
            .expect("incr"),
        vec![3, 1]
    );
    region.flush().await.expect("flush");
    assert_eq!(
        region
            .increment(b("c"), &[col("n", 10)])
            .await
            .expect("incr"),
        vec![13]
    );

    assert_eq!(
        region
            .append(b("a"), &[(b("cf"), b("s"), b("ab"))])
            .await
            .expect("append"),
        vec![b("ab")]
    );
    assert_eq!(
        region
            .append(b("a"), &[(b("cf"), b("s"), b("cd"))])
            .await
            .expect("append"),
        vec![b("abcd")]
    );
    let err = region
        .increment(b("a"), &[col("s", 1)])
        .await
        .expect_err("not a counter");
    assert!(matches!(err, RegionError::InvalidArgument { .. }), "{err}");

    let cas = |op, v: &str, new: &str| CheckAndMutate {
        time_range: Default::default(),
        filter: None,
        family: b("cf"),
        qualifier: b("s"),
        op,
        value: b(v),
        mutation: RowMutation::new(b("a")).put(b("cf"), b("s"), b(new)),
    };
    // Appends and increments stamp max(now, previous + 1); let the clock pass that.
    fx.clock.advance(10);
    assert!(
        !region
            .check_and_mutate(cas(CompareOp::Equal, "zz", "x"))
            .await
            .expect("cas")
    );
    assert!(
        region
            .check_and_mutate(cas(CompareOp::Equal, "abcd", "x"))
            .await
            .expect("cas")
    );
    assert_eq!(value(&region, "a", "cf", "s").await, Some(b("x")));
    fx.clock.advance(10);
    assert!(
        region
            .check_and_mutate(cas(CompareOp::Less, "y", "y"))
            .await
            .expect("cas")
    );
    assert!(
        !region
            .check_and_mutate(cas(CompareOp::Missing, "", "z"))
            .await
            .expect("cas")
    );

    // Concurrent increments are atomic.
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let r = region.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..25 {
                r.increment(b("hot"), &[(b("cf"), b("n"), 1)])
                    .await
                    .expect("incr");
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    assert_eq!(
        region
            .increment(b("hot"), &[col("n", 0)])
            .await
            .expect("read"),
        vec![200]
    );
}

#[tokio::test]
async fn bad_requests_are_clear_errors() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    let err = region
        .mutate(RowMutation::new(b("r")).put(b("nope"), b("q"), b("v")))
        .await
        .expect_err("family");
    assert!(matches!(err, RegionError::NoSuchFamily { .. }), "{err}");
    assert!(err.to_string().contains("nope"));
    let err = region
        .mutate(RowMutation::new(Bytes::new()).put(b("cf"), b("q"), b("v")))
        .await
        .expect_err("row");
    assert!(matches!(err, RegionError::InvalidArgument { .. }), "{err}");
    let err = region
        .mutate(RowMutation::new(b("r")))
        .await
        .expect_err("empty");
    assert!(matches!(err, RegionError::InvalidArgument { .. }), "{err}");
    let err = region
        .scanner(Scan {
            time_range: TimeRange { min: 5, max: 5 },
            ..Scan::all()
        })
        .err()
        .expect("range");
    assert!(matches!(err, RegionError::InvalidArgument { .. }), "{err}");
}

#[tokio::test]
async fn a_second_owner_fences_the_first() {
    let fx = Fixture::new();
    let (a, wal) = fx.open().await;
    a.mutate(RowMutation::new(b("r")).put(b("cf"), b("q"), b("1")))
        .await
        .expect("put");
    // A second owner opens the same region (sharing the WAL here, as after a restart).
    let mut env = RegionEnv::new(fx.bucket.clone(), wal.clone());
    env.clock = Arc::new(fx.clock.clone());
    let b_region = Region::open(Fixture::config(), env)
        .await
        .expect("second open");
    b_region
        .mutate(RowMutation::new(b("r")).put(b("cf"), b("q"), b("2")))
        .await
        .expect("put");
    let err = a.flush().await.expect_err("stale owner");
    assert!(matches!(err, RegionError::Fenced { .. }), "{err}");
    assert!(a.is_fenced());
    assert!(
        a.get(&Get::new(b("r"))).await.is_err(),
        "a fenced region stops serving"
    );
    b_region.flush().await.expect("live owner flushes");
    assert_eq!(value(&b_region, "r", "cf", "q").await, Some(b("2")));
}

#[tokio::test]
async fn gc_never_deletes_files_an_open_scanner_reads() {
    let fx = Fixture::new();
    let wal = Wal::open(WalOptions::local(&fx.wal_dir))
        .await
        .expect("wal");
    let mut family = FamilyConfig::new("cf");
    family.sst.block_size = 256;
    let config = RegionConfig::new("r1", "data/00/t1/r1", vec![family]);
    let region = Region::open(config, RegionEnv::new(fx.bucket.clone(), wal))
        .await
        .expect("open");
    for i in 0..300 {
        region
            .mutate(RowMutation::new(b(&format!("row{i:03}"))).put(b("cf"), b("q"), b("value")))
            .await
            .expect("put");
        if i % 100 == 99 {
            region.flush().await.expect("flush");
        }
    }
    let mut scanner = region.scanner(Scan::all()).expect("scanner");
    assert!(scanner.next().await.expect("first row").is_some());
    let reports = region.compact(true).await.expect("major compaction");
    assert_eq!(reports[0].inputs, 3);
    let far_future = std::time::SystemTime::now() + std::time::Duration::from_secs(86_400);
    let gc = shoal_storage::manifest::GcOptions {
        grace: std::time::Duration::ZERO,
        now: far_future,
    };
    region.collect_garbage(&gc).await.expect("gc");
    let mut n = 1;
    while scanner.next().await.expect("scan after gc").is_some() {
        n += 1;
    }
    assert_eq!(n, 300, "the scanner read every row from its pinned files");
    drop(scanner);
    // Unpinned now: the inputs go.
    let report = region.collect_garbage(&gc).await.expect("gc");
    assert_eq!(report.ssts_deleted, 3, "{report:?}");
}

#[tokio::test]
async fn a_batch_answers_each_row_and_survives_reopen() {
    let fx = Fixture::new();
    let (region, wal) = fx.open().await;
    let batch = vec![
        RowMutation::new(b("a")).put(b("cf"), b("q"), b("a1")),
        RowMutation::new(b("b")).put(b("nope"), b("q"), b("bad family")),
        RowMutation::new(b("c")).put(b("cf"), b("q"), b("c1")),
        // The same row twice: list order, the later change wins.
        RowMutation::new(b("a")).put(b("cf"), b("q"), b("a2")),
        RowMutation::new(b("d")),
        RowMutation::new(b("e"))
            .put(b("cf"), b("q"), b("e1"))
            .put(b("meta"), b("m"), b("e2")),
    ];
    let results = region.mutate_batch(batch).await;
    assert_eq!(results.len(), 6);
    assert!(results[0].is_ok() && results[2].is_ok() && results[3].is_ok());
    assert!(results[5].is_ok());
    let bad = results[1].as_ref().expect_err("unknown family");
    assert!(bad.to_string().contains("nope"), "{bad}");
    assert!(results[4].is_err(), "a mutation without changes");
    assert_eq!(value(&region, "a", "cf", "q").await, Some(b("a2")));
    assert_eq!(value(&region, "b", "cf", "q").await, None);
    assert_eq!(value(&region, "c", "cf", "q").await, Some(b("c1")));
    assert_eq!(value(&region, "e", "meta", "m").await, Some(b("e2")));
    // One WAL append for the four logged rows, each still its own entry.
    let m = wal.metrics();
    assert_eq!((m.appends, m.syncs), (4, 1), "{m:?}");

    // A batch with a change that must read first takes the row-by-row path.
    let results = region
        .mutate_batch(vec![
            RowMutation::new(b("c")).op(RowOp::DeleteVersion {
                family: b("cf"),
                qualifier: b("q"),
                timestamp: None,
            }),
            RowMutation::new(b("f")).put(b("cf"), b("q"), b("f1")),
        ])
        .await;
    assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
    assert_eq!(value(&region, "c", "cf", "q").await, None);

    drop(region);
    wal.close().await.expect("close wal");
    let (region, _wal) = fx.open().await;
    assert_eq!(value(&region, "a", "cf", "q").await, Some(b("a2")));
    assert_eq!(value(&region, "c", "cf", "q").await, None);
    assert_eq!(value(&region, "e", "cf", "q").await, Some(b("e1")));
    assert_eq!(value(&region, "f", "cf", "q").await, Some(b("f1")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_batches_and_single_writes_never_deadlock() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    let mut tasks = Vec::new();
    for t in 0..6u64 {
        let region = region.clone();
        tasks.push(tokio::spawn(async move {
            let mut x = t.wrapping_mul(6364136223846793005).wrapping_add(1);
            let mut next = move || {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                x >> 33
            };
            for i in 0..60u64 {
                if t % 3 == 0 {
                    let row = format!("r{:02}", next() % 12);
                    let m = RowMutation::new(b(&row)).put(b("cf"), b("q"), b(&format!("{t}-{i}")));
                    region.mutate(m).await.expect("single put");
                } else {
                    // Rows in random order, repeats included.
                    let batch: Vec<RowMutation> = (0..8)
                        .map(|k| {
                            let row = format!("r{:02}", next() % 12);
                            RowMutation::new(b(&row)).put(
                                b("cf"),
                                b("q"),
                                b(&format!("{t}-{i}-{k}")),
                            )
                        })
                        .collect();
                    for r in region.mutate_batch(batch).await {
                        r.expect("batch put");
                    }
                }
            }
        }));
    }
    let all = futures::future::join_all(tasks);
    let done = tokio::time::timeout(std::time::Duration::from_secs(60), all)
        .await
        .expect("writers finished: no deadlock");
    for d in done {
        d.expect("writer task");
    }
    for r in 0..12 {
        assert!(
            value(&region, &format!("r{r:02}"), "cf", "q")
                .await
                .is_some()
        );
    }
}

/// A hot row: columns with thousands of versions, in files and in the
/// memstore. A read skips each column's older versions once it has its
/// newest ones (one seek in the memstore), and must answer exactly as if it
/// had read them all: deletes, version counts, time ranges, column choices,
/// the empty qualifier (whose column shares its place with the family's
/// delete markers) and the next row are all respected.
#[tokio::test]
async fn hot_columns_with_thousands_of_versions_read_exactly() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    let put = |q: &'static str, ts: i64| {
        RowMutation::new(b("hot")).put_at(b("cf"), b(q), ts, b(&format!("{q}{ts}")))
    };
    for ts in 1..=3000i64 {
        for q in ["a", "b", ""] {
            region.mutate(put(q, ts)).await.expect("put");
        }
        if ts == 1500 {
            // The first half goes to a file; the rest stays in the memstore.
            region.flush().await.expect("flush");
        }
    }
    region
        .mutate(RowMutation::new(b("next")).put_at(b("cf"), b("a"), 7, b("n")))
        .await
        .expect("put");
    // The newest version of `a` deleted; a family delete at 2 masks ts ≤ 2
    // of every column (it sorts with the empty qualifier's versions).
    region
        .mutate(RowMutation::new(b("hot")).op(RowOp::DeleteVersion {
            family: b("cf"),
            qualifier: b("a"),
            timestamp: Some(3000),
        }))
        .await
        .expect("delete");
    region
        .mutate(RowMutation::new(b("hot")).op(RowOp::DeleteFamily {
            family: b("cf"),
            timestamp: Some(2),
        }))
        .await
        .expect("delete");

    let read = |max_versions: u32, time_range: TimeRange, columns: Columns| {
        let region = region.clone();
        async move {
            let got = region
                .get(&Get {
                    max_versions,
                    time_range,
                    columns,
                    ..Get::new(b("hot"))
                })
                .await
                .expect("get");
            got.cells
                .iter()
                .map(|c| String::from_utf8_lossy(&c.value).into_owned())
                .collect::<Vec<_>>()
        }
    };
    let all = TimeRange::default();
    assert_eq!(
        read(1, all, Columns::all()).await,
        ["3000", "a2999", "b3000"]
    );
    assert_eq!(
        read(3, all, Columns::all()).await,
        [
            "3000", "2999", "2998", "a2999", "a2998", "a2997", "b3000", "b2999", "b2998"
        ]
    );
    assert_eq!(
        read(2, TimeRange { min: 0, max: 2401 }, Columns::all()).await,
        ["2400", "2399", "a2400", "a2399", "b2400", "b2399"]
    );
    // The flush at 1500 kept each column's newest 3 versions and dropped the
    // older ones, as HBase's flush does: a time range below the memstore's
    // versions reaches only those.
    assert_eq!(
        read(3, TimeRange { min: 0, max: 1500 }, Columns::all()).await,
        ["1499", "1498", "a1499", "a1498", "b1499", "b1498"]
    );
    assert!(
        read(3, TimeRange { min: 0, max: 1498 }, Columns::all())
            .await
            .is_empty()
    );
    assert_eq!(
        read(3, all, Columns::all().column(b("cf"), b("b"))).await,
        ["b3000", "b2999", "b2998"]
    );
    // A scan moves on to the next row after the hot one.
    let got = rows(
        &region,
        Scan {
            max_versions: 1,
            ..Scan::all()
        },
    )
    .await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[1].0, "next");
}
