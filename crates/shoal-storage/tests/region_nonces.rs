//! HBase's nonces on a region: an increment or append retried with the
//! nonce of one the region applied lately is answered with the current
//! cells and not applied again — within the window, within the table's
//! bound, across a crash and reopen (the nonce is in the WAL entry), and on
//! another server that replays a dead server's WAL.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::Bytes;
use shoal_storage::object::Bucket;
use shoal_storage::region::{
    Changed, Columns, CompareOp, Condition, FamilyConfig, Get, ManualClock, Nonce, NonceOptions,
    Region, RegionConfig, RegionEnv, RowMutation,
};
use shoal_storage::wal::{ForeignWal, Wal, WalOptions};
use std::sync::Arc;
use std::time::Duration;

const T0: i64 = 1_700_000_000_000;
const WINDOW: Duration = Duration::from_secs(60);

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn nonce(n: u64) -> Option<Nonce> {
    Nonce::new(0x5eed, n)
}

fn config(max_entries: usize) -> RegionConfig {
    let mut c = RegionConfig::new(
        "r1",
        "data/00/t1/r1",
        vec![FamilyConfig::new("cf").with_max_versions(3)],
    );
    c.nonces = NonceOptions {
        window: WINDOW,
        max_entries,
    };
    c
}

struct Fixture {
    _dir: tempfile::TempDir,
    bucket: Bucket,
    wal_dir: std::path::PathBuf,
    clock: ManualClock,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let wal_dir = dir.path().join("wal");
        Fixture {
            _dir: dir,
            bucket: Bucket::memory(),
            wal_dir,
            clock: ManualClock::new(T0),
        }
    }

    async fn open_with(&self, config: RegionConfig) -> (Region, Wal) {
        let wal = Wal::open(WalOptions::local(&self.wal_dir)).await.unwrap();
        let mut env = RegionEnv::new(self.bucket.clone(), wal.clone());
        env.clock = Arc::new(self.clock.clone());
        (Region::open(config, env).await.unwrap(), wal)
    }

    async fn open(&self) -> (Region, Wal) {
        self.open_with(config(1_000)).await
    }
}

async fn incr(region: &Region, by: i64, n: Option<Nonce>) -> Changed<i64> {
    region
        .increment_nonced(b("row"), &[(b("cf"), b("n"), by)], n)
        .await
        .unwrap()
}

async fn counter(region: &Region) -> i64 {
    let get = Get {
        columns: Columns::all().column(b("cf"), b("n")),
        ..Get::new(b("row"))
    };
    let cells = region.get(&get).await.unwrap().cells;
    cells.first().map_or(0, |c| {
        i64::from_be_bytes(c.value[..].try_into().expect("8 bytes"))
    })
}

#[tokio::test]
async fn a_repeated_nonce_is_answered_with_the_current_cells_and_not_applied() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    let first = incr(&region, 1, nonce(1)).await;
    assert!(!first.repeated);
    assert_eq!(first.values, vec![1]);
    assert_eq!(first.cells.len(), 1);

    fx.clock.advance(10);
    let again = incr(&region, 1, nonce(1)).await;
    assert!(again.repeated, "{again:?}");
    assert_eq!(again.values, vec![1]);
    assert_eq!(
        (again.cells[0].timestamp, &again.cells[0].value),
        (first.cells[0].timestamp, &first.cells[0].value),
        "the answer is the stored cell"
    );
    assert_eq!(counter(&region).await, 1);

    // Another nonce, or none, applies.
    assert_eq!(incr(&region, 1, nonce(2)).await.values, vec![2]);
    assert_eq!(incr(&region, 1, None).await.values, vec![3]);
    assert_eq!(incr(&region, 1, None).await.values, vec![4]);
    // A late repeat of the first answers the columns as they are now.
    let late = incr(&region, 1, nonce(1)).await;
    assert!(late.repeated);
    assert_eq!(late.values, vec![4]);
    assert_eq!(counter(&region).await, 4);

    // Appends too.
    let cols = [(b("cf"), b("s"), b("x"))];
    let a = region
        .append_nonced(b("row"), &cols, nonce(3))
        .await
        .unwrap();
    assert_eq!(a.values, vec![b("x")]);
    let a2 = region
        .append_nonced(b("row"), &cols, nonce(3))
        .await
        .unwrap();
    assert!(a2.repeated);
    assert_eq!(a2.values, vec![b("x")]);
    assert_eq!(region.nonces_remembered(), 3);
}

#[tokio::test]
async fn concurrent_retries_of_one_nonce_apply_once() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let region = region.clone();
            tokio::spawn(async move { incr(&region, 5, nonce(9)).await })
        })
        .collect();
    let mut applied = 0;
    for t in tasks {
        let c = t.await.unwrap();
        applied += usize::from(!c.repeated);
        assert_eq!(c.values, vec![5]);
    }
    assert_eq!(applied, 1);
    assert_eq!(counter(&region).await, 5);
}

#[tokio::test]
async fn a_nonce_is_forgotten_after_the_window() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    incr(&region, 1, nonce(1)).await;
    fx.clock.advance(WINDOW.as_millis() as i64 - 1);
    assert!(incr(&region, 1, nonce(1)).await.repeated);
    fx.clock.advance(2);
    let late = incr(&region, 1, nonce(1)).await;
    assert!(
        !late.repeated,
        "past the window the retry is a new increment"
    );
    assert_eq!(counter(&region).await, 2);
}

#[tokio::test]
async fn the_table_keeps_the_newest_nonces_up_to_its_bound() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open_with(config(2)).await;
    for n in 1..=3 {
        incr(&region, 1, nonce(n)).await;
    }
    assert_eq!(region.nonces_remembered(), 2);
    assert!(incr(&region, 1, nonce(3)).await.repeated);
    assert!(incr(&region, 1, nonce(2)).await.repeated);
    // The oldest was dropped to keep the bound.
    assert!(!incr(&region, 1, nonce(1)).await.repeated);
    assert_eq!(counter(&region).await, 4);
}

#[tokio::test]
async fn a_crash_and_reopen_replays_the_nonces_from_the_wal() {
    let fx = Fixture::new();
    let (region, wal) = fx.open().await;
    let first = incr(&region, 7, nonce(1)).await;
    region
        .append_nonced(b("row"), &[(b("cf"), b("s"), b("ab"))], nonce(2))
        .await
        .unwrap();
    // Entries without a nonce are still read (payload version 1).
    region
        .mutate(RowMutation::new(b("row")).put(b("cf"), b("p"), b("v")))
        .await
        .unwrap();
    // Crash: nothing flushed, the region is dropped as it is.
    drop(region);
    wal.close().await.unwrap();

    fx.clock.advance(1_000);
    let (region, _wal) = fx.open().await;
    assert_eq!(region.nonces_remembered(), 2);
    let again = incr(&region, 7, nonce(1)).await;
    assert!(again.repeated, "the replayed entry's nonce is remembered");
    assert_eq!(again.cells[0].timestamp, first.cells[0].timestamp);
    assert_eq!(counter(&region).await, 7);
    let a = region
        .append_nonced(b("row"), &[(b("cf"), b("s"), b("ab"))], nonce(2))
        .await
        .unwrap();
    assert!(a.repeated);
    assert_eq!(a.values, vec![b("ab")]);
}

#[tokio::test]
async fn replayed_nonces_older_than_one_and_a_half_windows_are_not_remembered() {
    let fx = Fixture::new();
    let (region, wal) = fx.open().await;
    incr(&region, 1, nonce(1)).await;
    drop(region);
    wal.close().await.unwrap();

    fx.clock.advance((WINDOW.as_millis() as i64) * 3 / 2 + 1);
    let (region, _wal) = fx.open().await;
    assert_eq!(region.nonces_remembered(), 0);
    assert!(!incr(&region, 1, nonce(1)).await.repeated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_server_replaying_a_dead_servers_wal_refuses_the_retry() {
    let bucket = Bucket::memory();
    let server = |prefix: &'static str| {
        let bucket = bucket.clone();
        async move {
            let wal = Wal::open(WalOptions::object(bucket.clone(), prefix))
                .await
                .unwrap();
            RegionEnv::new(bucket, wal)
        }
    };
    // A applies the increment; its answer is lost, and A dies.
    let a = Region::open(config(1_000), server("wal/a/run1").await)
        .await
        .unwrap();
    incr(&a, 1, nonce(42)).await;
    // B takes the region over with A's WAL.
    let dead = ForeignWal::read(&bucket, "wal/a/run1").await.unwrap();
    let b_region = Region::open_with_recovered(
        config(1_000),
        server("wal/b/run1").await,
        dead.entries("r1", 0),
    )
    .await
    .unwrap();
    let retry = incr(&b_region, 1, nonce(42)).await;
    assert!(retry.repeated, "the new owner refuses the client's retry");
    assert_eq!(counter(&b_region).await, 1);
    // B logged A's entries again, nonce included: C, recovering from B's
    // WAL alone, still refuses it.
    let dead_b = ForeignWal::read(&bucket, "wal/b/run1").await.unwrap();
    let c = Region::open_with_recovered(
        config(1_000),
        server("wal/c/run1").await,
        dead_b.entries("r1", 0),
    )
    .await
    .unwrap();
    assert!(incr(&c, 1, nonce(42)).await.repeated);
    assert_eq!(counter(&c).await, 1);
}

#[tokio::test]
async fn check_and_increment_checks_first_then_the_nonce() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    region
        .mutate(RowMutation::new(b("row")).put(b("cf"), b("flag"), b("on")))
        .await
        .unwrap();
    let on = Condition {
        time_range: Default::default(),
        filter: None,
        family: b("cf"),
        qualifier: b("flag"),
        op: CompareOp::Equal,
        value: b("on"),
    };
    let cols = [(b("cf"), b("n"), 1)];
    let first = region
        .check_and_increment(&on, b("row"), &cols, nonce(1))
        .await
        .unwrap()
        .unwrap();
    assert!(!first.repeated);
    let retry = region
        .check_and_increment(&on, b("row"), &cols, nonce(1))
        .await
        .unwrap()
        .unwrap();
    assert!(retry.repeated);
    assert_eq!(retry.values, vec![1]);
    let off = Condition {
        value: b("off"),
        ..on.clone()
    };
    assert!(
        region
            .check_and_increment(&off, b("row"), &cols, nonce(1))
            .await
            .unwrap()
            .is_none()
    );
    let appended = region
        .check_and_append(&on, b("row"), &[(b("cf"), b("s"), b("x"))], nonce(2))
        .await
        .unwrap()
        .unwrap();
    assert!(!appended.repeated);
    assert!(
        region
            .check_and_append(&on, b("row"), &[(b("cf"), b("s"), b("x"))], nonce(2))
            .await
            .unwrap()
            .unwrap()
            .repeated
    );
    assert_eq!(counter(&region).await, 1);
}

#[tokio::test]
async fn answers_carry_the_stored_timestamps() {
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    // A version stamped an hour ahead: the increment stamps one past it.
    let ahead = T0 + 3_600_000;
    region
        .mutate(RowMutation::new(b("row")).put_at(
            b("cf"),
            b("n"),
            ahead,
            Bytes::copy_from_slice(&4i64.to_be_bytes()),
        ))
        .await
        .unwrap();
    let c = incr(&region, 1, None).await;
    assert_eq!(c.cells[0].timestamp, ahead + 1);
    let stored = region
        .get(&Get {
            columns: Columns::all().column(b("cf"), b("n")),
            ..Get::new(b("row"))
        })
        .await
        .unwrap();
    assert_eq!(stored.cells[0].timestamp, c.cells[0].timestamp);
    assert_eq!(stored.cells[0].value, c.cells[0].value);
    // A new column is stamped now; an append's cells likewise.
    let a = region
        .append_nonced(b("row"), &[(b("cf"), b("s"), b("x"))], None)
        .await
        .unwrap();
    assert_eq!(a.cells[0].timestamp, T0);
    // A column named twice: one cell, the last change's, as stored.
    let twice = region
        .increment_nonced(
            b("row"),
            &[(b("cf"), b("m"), 1), (b("cf"), b("m"), 5)],
            None,
        )
        .await
        .unwrap();
    assert_eq!(twice.cells.len(), 1);
    assert_eq!(&twice.cells[0].value[..], &5i64.to_be_bytes());
}

#[tokio::test]
async fn a_split_child_takes_over_its_parents_nonces() {
    let fx = Fixture::new();
    let (parent, wal) = fx.open().await;
    incr(&parent, 1, nonce(1)).await;
    let mut child_config = config(1_000);
    child_config.region_id = "r2".into();
    child_config.region_dir = "data/00/t1/r2".into();
    let mut env = RegionEnv::new(fx.bucket.clone(), wal);
    env.clock = Arc::new(fx.clock.clone());
    let child = Region::open(child_config, env).await.unwrap();
    assert_eq!(child.nonces_remembered(), 0);
    child.adopt_nonces(&parent);
    assert!(incr(&child, 1, nonce(1)).await.repeated);
    assert!(!incr(&child, 1, nonce(2)).await.repeated);
}

/// HBase's RowMutations holding counters: the increment and append read the
/// row as it was before the changes, everything lands as one write, the
/// answer is the counters' cells in the order of the changes; a failed
/// check writes nothing; a retry with the nonce is answered, not applied;
/// NO_OP comparing an existing cell fails as HBase's does.
#[tokio::test]
async fn row_changes_with_counters_apply_together() {
    use shoal_storage::region::{RegionError, RowChange, RowChanges, RowOp};
    let fx = Fixture::new();
    let (region, _wal) = fx.open().await;
    region
        .mutate(
            RowMutation::new(b("row"))
                .put_at(b("cf"), b("n"), T0 - 10, 5i64.to_be_bytes().to_vec())
                .put_at(b("cf"), b("s"), T0 - 10, b("ab")),
        )
        .await
        .unwrap();
    let changes = RowChanges {
        row: b("row"),
        changes: vec![
            RowChange::Append(vec![(b("cf"), b("s"), b("c"))]),
            // A put of the counter in the same changes: the increment still
            // reads 5, as HBase's atomic batch reads before it applies.
            RowChange::Op(RowOp::Put {
                family: b("cf"),
                qualifier: b("other"),
                timestamp: None,
                value: b("v"),
            }),
            RowChange::Increment(vec![(b("cf"), b("n"), 2)]),
        ],
    };
    assert!(changes.has_counters());
    let cells = region
        .mutate_changes(&changes, None, nonce(7))
        .await
        .unwrap()
        .unwrap();
    let got: Vec<(Bytes, Bytes)> = cells
        .iter()
        .map(|c| (c.qualifier.clone(), c.value.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (b("s"), b("abc")),
            (b("n"), Bytes::copy_from_slice(&7i64.to_be_bytes()))
        ]
    );
    assert!(cells.iter().all(|c| c.seq == cells[0].seq), "one write");
    // The retry is answered with the current cells and adds nothing.
    region
        .mutate_changes(&changes, None, nonce(7))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(counter(&region).await, 7);

    let failing = Condition {
        time_range: Default::default(),
        filter: None,
        family: b("cf"),
        qualifier: b("other"),
        op: CompareOp::Equal,
        value: b("w"),
    };
    assert!(
        region
            .mutate_changes(&changes, Some(&failing), nonce(8))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(counter(&region).await, 7);

    let no_op = Condition {
        op: CompareOp::NoOp,
        ..failing.clone()
    };
    let err = region
        .mutate_changes(&changes, Some(&no_op), nonce(9))
        .await
        .unwrap_err();
    assert!(matches!(err, RegionError::CompareNoOp { .. }), "{err}");
    // NO_OP with an empty operand asks about emptiness, as EQUAL does.
    let missing = Condition {
        qualifier: b("absent"),
        value: Bytes::new(),
        ..no_op
    };
    assert!(
        region
            .mutate_changes(&changes, Some(&missing), nonce(10))
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(counter(&region).await, 9);
}
