//! WAL history scenarios against buckets: segment times, the checkpoint, recovery
//! that skips history, deletion by age, the PITR reader, dead runs.

use std::time::Duration;

use bytes::Bytes;

use super::history::{Checkpoint, Timing, read_checkpoint};
use super::stamp::now_ms;
use super::*;
use crate::object::Bucket;

const HOUR: Duration = Duration::from_secs(3600);

fn payload(region: &str, seq: u64) -> Bytes {
    Bytes::from(format!("{region}:{seq}"))
}

/// Segment numbers under `prefix`, sorted.
async fn segments(bucket: &Bucket, prefix: &str) -> Vec<u64> {
    let mut out: Vec<u64> = bucket
        .list(prefix)
        .await
        .expect("list")
        .iter()
        .filter_map(|i| super::local::parse_segment_name(i.path.rsplit('/').next()?))
        .collect();
    out.sort_unstable();
    out
}

/// The decoded header of segment `n` under `prefix`.
async fn header(bucket: &Bucket, prefix: &str, n: u64) -> super::record::SegmentHeader {
    let data = bucket
        .get(&super::object::segment_key(prefix, n))
        .await
        .expect("get");
    super::record::decode_header(&data).expect("header")
}

async fn checkpoint(bucket: &Bucket, prefix: &str) -> Checkpoint {
    read_checkpoint(bucket, prefix)
        .await
        .expect("read")
        .expect("a checkpoint")
}

/// Appends `(region, seq)` one at a time (one segment each), returning the wall
/// time just before and just after each, 2 ms apart so no two appends share a ms.
async fn timed_appends(wal: &Wal, entries: &[(&str, u64)]) -> Vec<(u64, u64)> {
    let mut times = Vec::new();
    for (region, seq) in entries {
        tokio::time::sleep(Duration::from_millis(2)).await;
        let before = now_ms();
        wal.append(region, *seq, payload(region, *seq))
            .await
            .expect("append");
        times.push((before, now_ms()));
    }
    times
}

/// Timing that marks at every upkeep and never throttles the checkpoint; upkeep
/// runs only when a test calls it (after the first poke).
fn eager() -> Timing {
    Timing {
        mark_every_ms: 1,
        checkpoint_every_ms: 0,
        check_every_ms: u64::MAX,
    }
}

#[tokio::test]
async fn every_object_segment_carries_its_time() {
    let bucket = Bucket::memory();
    let wal = Wal::open(WalOptions::object(bucket.clone(), "wal/s"))
        .await
        .expect("open");
    let entries: Vec<(&str, u64)> = (1..=6).map(|s| ("a", s)).collect();
    let times = timed_appends(&wal, &entries).await;
    // A bulk append's objects are stamped too.
    let bulk: Vec<(u64, Bytes)> = (10..20).map(|s| (s, Bytes::from(vec![1u8; 600]))).collect();
    let before_bulk = now_ms();
    wal.append_bulk("b", &bulk).await.expect("bulk");
    let after_bulk = now_ms();
    let numbers = segments(&bucket, "wal/s").await;
    assert_eq!(numbers, (1..=7).collect::<Vec<_>>());
    let mut last = 0;
    for (i, n) in numbers.iter().enumerate() {
        let h = header(&bucket, "wal/s", *n).await;
        assert_eq!((h.version, h.flags), (1, FLAG_OBJECT_TIME));
        let t = h.time_ms().expect("a time");
        let (lo, hi) = times.get(i).copied().unwrap_or((before_bulk, after_bulk));
        assert!(
            (lo..=hi).contains(&t),
            "segment {n}: {t} not in [{lo}, {hi}]"
        );
        assert!(t >= last, "times follow numbers");
        last = t;
    }
    // Every object has a writer id of its own.
    let mut ids = std::collections::HashSet::new();
    for n in &numbers {
        assert!(ids.insert(header(&bucket, "wal/s", *n).await.writer));
    }
}

#[tokio::test]
async fn concurrent_group_commits_and_bulk_objects_keep_numbers_and_times_in_order() {
    let bucket = Bucket::memory();
    let options = WalOptions {
        max_batch_bytes: 2 << 10,
        ..WalOptions::object(bucket.clone(), "wal/c")
    };
    let wal = Wal::open(options).await.expect("open");
    let mut tasks = Vec::new();
    for t in 0..8u64 {
        let wal = wal.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..20u64 {
                let region = format!("r{t}");
                wal.append(&region, i, payload(&region, i))
                    .await
                    .expect("append");
            }
        }));
    }
    let bulk: Vec<(u64, Bytes)> = (1..=30u64)
        .map(|s| (s, Bytes::from(vec![7u8; 500])))
        .collect();
    wal.append_bulk("bulk", &bulk).await.expect("bulk");
    for t in tasks {
        t.await.expect("task");
    }
    let numbers = segments(&bucket, "wal/c").await;
    assert!(numbers.len() > 8, "{numbers:?}");
    let mut last = 0;
    for n in numbers {
        let t = header(&bucket, "wal/c", n).await.time_ms().expect("time");
        assert!(t >= last, "segment {n} is older than the one before it");
        last = t;
    }
}

#[tokio::test]
async fn history_keeps_flushed_segments_and_recovery_reads_only_the_rest() {
    let bucket = Bucket::memory();
    let options = WalOptions::object(bucket.clone(), "wal/s").with_history(HOUR);
    let wal = Wal::open(options.clone()).await.expect("open");
    for seq in 1..=10 {
        wal.append("a", seq, payload("a", seq))
            .await
            .expect("append");
    }
    wal.append("b", 1, payload("b", 1)).await.expect("append");
    for seq in 11..=15 {
        wal.append("a", seq, payload("a", seq))
            .await
            .expect("append");
    }
    wal.mark_flushed("a", 15).await.expect("mark");
    // Nothing is deleted; segment 11 (b's) is still unflushed.
    assert_eq!(
        segments(&bucket, "wal/s").await,
        (1..=16).collect::<Vec<_>>()
    );
    let m = wal.metrics();
    assert_eq!(
        (m.history_objects, m.segments_live, m.segments_deleted),
        (15, 1, 0)
    );
    assert!(m.history_bytes > 15 * super::record::HEADER_LEN as u64);
    wal.close().await.expect("close");
    let cp = checkpoint(&bucket, "wal/s").await;
    assert_eq!((cp.format, cp.flushed_below, cp.deleted_below), (1, 11, 1));
    assert_eq!(
        cp.marks.first().map(|(n, _)| *n),
        Some(1),
        "the mark at open"
    );

    let gets = bucket.metrics().get.requests;
    let wal = Wal::open(options.clone()).await.expect("reopen");
    assert_eq!(
        bucket.metrics().get.requests - gets,
        1 + 6,
        "history.json and segments 11..=16 only"
    );
    assert_eq!(
        wal.take_recovered("a", 0)
            .iter()
            .map(|e| e.seq)
            .collect::<Vec<_>>(),
        (11..=15).collect::<Vec<_>>()
    );
    assert_eq!(wal.take_recovered("b", 0).len(), 1);
    assert_eq!(wal.metrics().recovered_entries, 6);
    wal.append("c", 1, payload("c", 1)).await.expect("append");
    assert_eq!(
        segments(&bucket, "wal/s").await.last(),
        Some(&17),
        "numbers go on"
    );
    // All flushed: the next run lists nothing above flushed_below, and still
    // numbers above every segment.
    wal.mark_flushed("a", 15).await.expect("mark");
    wal.mark_flushed("b", 1).await.expect("mark");
    wal.mark_flushed("c", 1).await.expect("mark");
    wal.close().await.expect("close");
    assert_eq!(checkpoint(&bucket, "wal/s").await.flushed_below, 18);
    let wal = Wal::open(options).await.expect("reopen");
    assert!(wal.recovered_regions().is_empty());
    wal.append("c", 2, payload("c", 2)).await.expect("append");
    assert_eq!(segments(&bucket, "wal/s").await.last(), Some(&18));
    // A reader of the dead WAL skips the history the same way.
    let foreign = ForeignWal::read(&bucket, "wal/s").await.expect("read");
    assert_eq!(foreign.segment_count(), 1);
    assert_eq!(foreign.entries("c", 0).len(), 1);
}

#[tokio::test]
async fn a_checkpoint_is_never_taken_for_a_segment() {
    assert_eq!(super::local::parse_segment_name("history.json"), None);
    // A WAL without history reads a prefix that has one, from its flushed_below.
    let bucket = Bucket::memory();
    let wal = Wal::open(WalOptions::object(bucket.clone(), "wal/s").with_history(HOUR))
        .await
        .expect("open");
    wal.append("a", 1, payload("a", 1)).await.expect("append");
    wal.append("a", 2, payload("a", 2)).await.expect("append");
    wal.mark_flushed("a", 1).await.expect("mark");
    wal.close().await.expect("close");
    let wal = Wal::open(WalOptions::object(bucket.clone(), "wal/s"))
        .await
        .expect("reopen without history");
    assert_eq!(wal.take_recovered("a", 0).len(), 1);
    // It deletes what it flushes from now on; the kept history stays.
    wal.mark_flushed("a", 2).await.expect("mark");
    assert_eq!(segments(&bucket, "wal/s").await, vec![1]);
}

#[tokio::test]
async fn history_ages_out_by_time_and_never_takes_unflushed_segments() {
    let bucket = Bucket::memory();
    let window = Duration::from_millis(50);
    let wal = Wal::open(WalOptions::object(bucket.clone(), "wal/s").with_history(window))
        .await
        .expect("open");
    let opened_ms = now_ms();
    wal.set_history_timing(eager());
    for seq in 1..=5 {
        wal.append("a", seq, payload("a", seq))
            .await
            .expect("append");
    }
    wal.mark_flushed("a", 5).await.expect("mark");
    assert_eq!(wal.metrics().history_objects, 5);
    tokio::time::sleep(Duration::from_millis(5)).await;
    wal.maintain_history(true)
        .await
        .expect("upkeep: mark (6, t1)");
    // Later segments are strictly younger than the mark.
    tokio::time::sleep(Duration::from_millis(2)).await;
    for seq in 1..=3 {
        wal.append("b", seq, payload("b", seq))
            .await
            .expect("append");
    }
    tokio::time::sleep(Duration::from_millis(80)).await;
    // The mark (6, t1) is now older than the window: segments below it go.
    wal.maintain_history(true).await.expect("upkeep");
    assert_eq!(segments(&bucket, "wal/s").await, vec![6, 7, 8]);
    assert_eq!(wal.metrics().history_objects, 0);
    wal.maintain_history(true).await.expect("upkeep");
    let cp = checkpoint(&bucket, "wal/s").await;
    assert_eq!((cp.flushed_below, cp.deleted_below), (6, 6));
    assert!(cp.marks.iter().all(|(n, _)| *n >= 6), "{cp:?}");
    // The time before the deletion is gone for a reader.
    let prefixes = vec!["wal/s".to_owned()];
    let err = read_history(&bucket, &prefixes, opened_ms, now_ms())
        .await
        .expect_err("gone");
    assert!(
        matches!(&err, WalError::HistoryGone { prefix, oldest_ms: Some(_) } if prefix == "wal/s"),
        "{err}"
    );
    let b = read_history(&bucket, &prefixes, cp.marks[0].1, now_ms())
        .await
        .expect("from the oldest mark on");
    assert_eq!(b.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![1, 2, 3]);
    // Unflushed segments stay however old.
    tokio::time::sleep(Duration::from_millis(80)).await;
    wal.maintain_history(true).await.expect("upkeep");
    assert_eq!(segments(&bucket, "wal/s").await, vec![6, 7, 8]);
    // Flushed, then aged out.
    wal.mark_flushed("b", 3).await.expect("mark");
    assert_eq!(wal.metrics().history_objects, 3);
    wal.maintain_history(true)
        .await
        .expect("upkeep: a mark after them");
    tokio::time::sleep(Duration::from_millis(80)).await;
    wal.maintain_history(true).await.expect("upkeep");
    assert!(segments(&bucket, "wal/s").await.is_empty());
    assert_eq!(
        (wal.metrics().history_objects, wal.metrics().history_bytes),
        (0, 0)
    );
    wal.close().await.expect("close");
    assert_eq!(checkpoint(&bucket, "wal/s").await.deleted_below, 9);
}

#[tokio::test]
async fn read_history_returns_exactly_the_entries_in_range_across_prefixes() {
    let bucket = Bucket::memory();
    let open = |p: &str| Wal::open(WalOptions::object(bucket.clone(), p).with_history(HOUR));
    let (w1, w2) = (
        open("wal/s1").await.expect("open"),
        open("wal/s2").await.expect("open"),
    );
    let mut times = Vec::new(); // (before, after, prefix, region, seq)
    for i in 1..=12u64 {
        let (wal, prefix, region) = if i % 2 == 0 {
            (&w1, "wal/s1", "r1")
        } else {
            (&w2, "wal/s2", "r2")
        };
        let t = timed_appends(wal, &[(region, i)]).await[0];
        times.push((t.0, t.1, prefix, region, i));
        if i == 6 {
            // Flushed entries are history too.
            w1.mark_flushed("r1", 6).await.expect("mark");
            w2.mark_flushed("r2", 5).await.expect("mark");
        }
    }
    let prefixes = vec!["wal/s1".to_owned(), "wal/s2".to_owned()];
    // (after entry 3, after entry 9]: entries 4..=9, by time.
    let (from, to) = (times[2].1, times[8].1);
    let got = read_history(&bucket, &prefixes, from, to)
        .await
        .expect("read");
    assert_eq!(
        got.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (4..=9).collect::<Vec<_>>()
    );
    for e in &got {
        let (before, after, _, region, _) = times[(e.seq - 1) as usize];
        assert_eq!(e.region, region);
        assert_eq!(e.payload, payload(region, e.seq));
        assert!((before..=after).contains(&e.time_ms));
    }
    assert!(got.windows(2).all(|w| w[0].time_ms <= w[1].time_ms));
    // Everything, and nothing.
    let all = read_history(&bucket, &prefixes, times[0].0 - 1, now_ms())
        .await
        .expect("read");
    assert_eq!(all.len(), 12);
    let none = read_history(&bucket, &prefixes, to, to)
        .await
        .expect("read");
    assert!(none.is_empty());
    // Before the first open: gone (history starts at the first open with it).
    let err = read_history(&bucket, &prefixes, times[0].0 - 10_000, to)
        .await
        .expect_err("gone");
    assert!(matches!(err, WalError::HistoryGone { .. }), "{err}");
}

/// Writes segment `n` under `prefix` by hand: header with the time flag at `time_ms`
/// (or an old-format header without it), one entry of `region`.
async fn put_segment(bucket: &Bucket, prefix: &str, n: u64, time_ms: Option<u64>, seq: u64) {
    let mut data = match time_ms {
        Some(t) => super::record::encode_object_header(n, ulid::Ulid::from_parts(t, 1).0).to_vec(),
        None => super::record::encode_header_version(n, 7, 1).to_vec(),
    };
    data.extend_from_slice(&super::record::encode_record("r", seq, b"x"));
    bucket
        .put(&super::object::segment_key(prefix, n), data.into())
        .await
        .expect("put");
}

#[tokio::test]
async fn read_history_stops_past_the_end_and_refuses_segments_without_a_time() {
    let bucket = Bucket::memory();
    // No history.json: read from the first segment. Times by the hour.
    let h = 3_600_000u64;
    for n in 1..=100 {
        put_segment(&bucket, "wal/x", n, Some(n * h), n).await;
    }
    let prefixes = vec!["wal/x".to_owned()];
    let gets = bucket.metrics().get.requests;
    let got = read_history(&bucket, &prefixes, 2 * h, 5 * h)
        .await
        .expect("read");
    assert_eq!(got.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![3, 4, 5]);
    let read = bucket.metrics().get.requests - gets;
    // history.json (missing), then segments in order until the first past
    // to + 30 s (segment 6), reading at most 32 ahead.
    assert!(read <= 1 + 6 + 32, "read on past the end: {read}");
    // An old-format segment where reading starts is an error naming it.
    put_segment(&bucket, "wal/old", 1, None, 1).await;
    let err = read_history(&bucket, &["wal/old".to_owned()], 0, u64::MAX)
        .await
        .expect_err("no time");
    assert!(
        matches!(&err, WalError::NoSegmentTime { segment } if segment.ends_with("00000000000000000001.wal")),
        "{err}"
    );
}

#[tokio::test]
async fn history_needs_the_object_backend() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = Wal::open(WalOptions::local(dir.path()).with_history(HOUR))
        .await
        .expect_err("local with history");
    assert!(matches!(err, WalError::HistoryNeedsObjectStore), "{err}");
    assert!(err.to_string().contains("object-store backend"), "{err}");
}

#[tokio::test]
async fn a_dead_run_is_retired_then_swept_once_aged_out() {
    let bucket = Bucket::memory();
    let prefix = "wal/a/run1";
    let wal = Wal::open(WalOptions::object(bucket.clone(), prefix).with_history(HOUR))
        .await
        .expect("open");
    // Its segments are strictly younger than the mark at open.
    tokio::time::sleep(Duration::from_millis(2)).await;
    for seq in 1..=4 {
        wal.append("r", seq, payload("r", seq))
            .await
            .expect("append");
    }
    wal.mark_flushed("r", 2).await.expect("mark");
    drop(wal); // The server dies.
    let dead = ForeignWal::read(&bucket, prefix).await.expect("read");
    assert_eq!(dead.entries("r", 2).len(), 2);
    // Its regions reopened elsewhere: retire instead of delete.
    ForeignWal::retire(&bucket, prefix, HOUR)
        .await
        .expect("retire");
    let cp = checkpoint(&bucket, prefix).await;
    assert_eq!(cp.flushed_below, 5);
    let (n, t) = *cp.marks.last().expect("a mark");
    assert_eq!(n, 5);
    assert!(t + 1000 >= now_ms());
    assert_eq!(segments(&bucket, prefix).await, vec![1, 2, 3, 4], "kept");
    assert_eq!(
        ForeignWal::read(&bucket, prefix)
            .await
            .expect("read")
            .segment_count(),
        0
    );
    // Its history reads back from the mark at open; not from before it.
    let opened_ms = cp.marks[0].1;
    let all = read_history(&bucket, &[prefix.to_owned()], opened_ms, now_ms()).await;
    assert_eq!(all.expect("read").len(), 4);

    // A live WAL with unflushed entries and an empty prefix beside it.
    let live = Wal::open(WalOptions::object(bucket.clone(), "wal/b/run1"))
        .await
        .expect("open");
    live.append("q", 1, payload("q", 1)).await.expect("append");
    let prefixes = vec![
        prefix.to_owned(),
        "wal/b/run1".to_owned(),
        "wal/none".to_owned(),
    ];
    let young = sweep_history(&bucket, &prefixes, HOUR, now_ms())
        .await
        .expect("sweep");
    assert_eq!(
        young,
        SweepReport::default(),
        "everything is within the window"
    );
    let later = now_ms() + 2 * 3_600_000;
    let report = sweep_history(&bucket, &prefixes, HOUR, later)
        .await
        .expect("sweep");
    assert_eq!(report.prefixes_deleted, vec![prefix.to_owned()]);
    assert_eq!(report.objects_deleted, 5, "four segments and history.json");
    assert!(report.bytes_deleted > 4 * super::record::HEADER_LEN as u64);
    assert_eq!(report.skipped_unflushed, vec!["wal/b/run1".to_owned()]);
    assert!(bucket.list(prefix).await.expect("list").is_empty());
    assert_eq!(segments(&bucket, "wal/b/run1").await, vec![1]);
}

#[tokio::test]
async fn retiring_deletes_what_of_a_dead_runs_history_already_aged_out() {
    let bucket = Bucket::memory();
    let prefix = "wal/a/run2";
    let h = 3_600_000u64;
    let t0 = now_ms();
    for n in 1..=6 {
        put_segment(&bucket, prefix, n, Some(t0 + n), n).await;
    }
    let cp = Checkpoint {
        format: 1,
        flushed_below: 4,
        deleted_below: 1,
        marks: vec![(1, t0), (4, t0 + 4)],
    };
    super::history::write_checkpoint(&bucket, prefix, &cp)
        .await
        .expect("write");
    // Retired two hours later with a one-hour window: both marks are old, so
    // segments below the newer one (4) go and the newer stays as the start.
    super::pitr::retire(&bucket, prefix, HOUR, t0 + 2 * h)
        .await
        .expect("retire");
    assert_eq!(segments(&bucket, prefix).await, vec![4, 5, 6]);
    let cp = checkpoint(&bucket, prefix).await;
    assert_eq!((cp.flushed_below, cp.deleted_below), (7, 4));
    assert_eq!(cp.marks, vec![(4, t0 + 4), (7, t0 + 2 * h)]);
}

#[tokio::test]
async fn wal_prefixes_finds_single_node_and_cluster_runs() {
    let bucket = Bucket::memory();
    for (prefix, history) in [
        ("wal/server-1", false),
        ("wal/srv-a/run1", true),
        ("wal/srv-a/run2", false),
        ("wal/srv-b/run1", true),
    ] {
        let mut options = WalOptions::object(bucket.clone(), prefix);
        if history {
            options = options.with_history(HOUR);
        }
        let wal = Wal::open(options).await.expect("open");
        wal.append("r", 1, payload("r", 1)).await.expect("append");
        wal.close().await.expect("close");
    }
    bucket
        .put("wal/srv-c/notes/readme", Bytes::from_static(b"x"))
        .await
        .expect("put");
    let lists = bucket.metrics().list.requests;
    let found = wal_prefixes(&bucket, "wal").await.expect("prefixes");
    assert_eq!(
        found,
        [
            "wal/server-1",
            "wal/srv-a/run1",
            "wal/srv-a/run2",
            "wal/srv-b/run1"
        ]
    );
    // One listing of wal's directories, a first-key look at each (4), a listing
    // of the directories of each that holds no WAL itself (3), a first-key look
    // at each of those (4): never a listing of a prefix's segments.
    assert_eq!(bucket.metrics().list.requests - lists, 1 + 4 + 3 + 4);
}

#[tokio::test]
async fn a_new_run_numbers_above_every_mark_of_the_last() {
    let bucket = Bucket::memory();
    let t0 = now_ms() + 5_000; // The last run's clock was ahead of ours.
    for n in 40..=44 {
        put_segment(&bucket, "wal/m", n, Some(t0 - 100), n).await;
    }
    // Segments 45..=49 were numbered but never written.
    let cp = Checkpoint {
        format: 1,
        flushed_below: 40,
        deleted_below: 1,
        marks: vec![(1, t0 - 1000), (50, t0)],
    };
    super::history::write_checkpoint(&bucket, "wal/m", &cp)
        .await
        .expect("write");
    let wal = Wal::open(WalOptions::object(bucket.clone(), "wal/m").with_history(HOUR))
        .await
        .expect("open");
    let seqs: Vec<u64> = wal.take_recovered("r", 0).iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (40..=44).collect::<Vec<_>>());
    wal.append("r", 100, payload("r", 100))
        .await
        .expect("append");
    assert_eq!(segments(&bucket, "wal/m").await.last(), Some(&50));
    let t = header(&bucket, "wal/m", 50).await.time_ms().expect("time");
    assert!(t >= t0, "times go on from the last run's newest");
    let marks = checkpoint(&bucket, "wal/m").await.marks;
    assert!(
        marks
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
        "{marks:?}"
    );
}

/// The same listings against a local directory, whose listings are unordered and
/// whose `list_with_offset` is the store's generic one.
#[tokio::test]
async fn history_and_prefixes_on_a_local_directory_bucket() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = crate::object::ObjectStoreConfig::local(dir.path());
    let bucket = Bucket::open(&config).await.expect("bucket");
    let options = WalOptions::object(bucket.clone(), "wal/srv/run1").with_history(HOUR);
    let wal = Wal::open(options.clone()).await.expect("open");
    for seq in 1..=6 {
        wal.append("a", seq, payload("a", seq))
            .await
            .expect("append");
    }
    wal.mark_flushed("a", 4).await.expect("mark");
    wal.close().await.expect("close");
    let gets = bucket.metrics().get.requests;
    let wal = Wal::open(options).await.expect("reopen");
    assert_eq!(bucket.metrics().get.requests - gets, 1 + 2);
    let seqs: Vec<u64> = wal.take_recovered("a", 0).iter().map(|e| e.seq).collect();
    assert_eq!(seqs, vec![5, 6]);
    wal.append("a", 7, payload("a", 7)).await.expect("append");
    assert_eq!(segments(&bucket, "wal/srv/run1").await.last(), Some(&7));
    let single = Wal::open(WalOptions::object(bucket.clone(), "wal/server-1"))
        .await
        .expect("open");
    single
        .append("b", 1, payload("b", 1))
        .await
        .expect("append");
    assert_eq!(
        wal_prefixes(&bucket, "wal").await.expect("prefixes"),
        ["wal/server-1", "wal/srv/run1"]
    );
    let all = read_history(&bucket, &["wal/srv/run1".to_owned()], 0, now_ms()).await;
    assert!(matches!(all, Err(WalError::HistoryGone { .. })), "{all:?}");
}
