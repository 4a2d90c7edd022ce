//! WAL scenarios against the real backends: local files in a temp dir, and buckets.

use super::*;
use bytes::Bytes;
use std::path::Path;

fn payload(region: &str, seq: u64) -> Bytes {
    Bytes::from(format!(
        "{region}:{seq}:{}",
        "p".repeat((seq % 13) as usize)
    ))
}

fn segment_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wal"))
        .collect();
    names.sort();
    names
}

fn seqs(entries: &[WalEntry]) -> Vec<u64> {
    entries.iter().map(|e| e.seq).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_are_batched_and_all_recovered() {
    concurrent_appends_with(std::time::Duration::ZERO).await;
}

/// The same with group commits that wait for more appends at high rates.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_with_a_commit_delay_are_all_recovered() {
    concurrent_appends_with(std::time::Duration::from_millis(1)).await;
}

async fn concurrent_appends_with(commit_delay: std::time::Duration) {
    let dir = tempfile::tempdir().expect("tempdir");
    let wal = Wal::open(WalOptions {
        commit_delay,
        ..WalOptions::local(dir.path())
    })
    .await
    .expect("open");
    let tasks = 32u64;
    let per_task = 40u64;
    let mut handles = Vec::new();
    for t in 0..tasks {
        let wal = wal.clone();
        handles.push(tokio::spawn(async move {
            let region = format!("region-{}", t % 4);
            for i in 0..per_task {
                let seq = t * 1000 + i;
                wal.append(&region, seq, payload(&region, seq))
                    .await
                    .expect("append");
            }
        }));
    }
    for h in handles {
        h.await.expect("task");
    }
    let m = wal.metrics();
    assert_eq!(m.appends, tasks * per_task);
    assert!(m.syncs < m.appends, "group commit batched nothing: {m:?}");
    assert_eq!(m.batch_entries_sum, m.appends);
    assert!(m.batch_entries_max > 1);
    assert_eq!(m.batch_entries_histogram.iter().sum::<u64>(), m.syncs);
    assert_eq!(m.sync_micros_histogram.iter().sum::<u64>(), m.syncs);
    wal.close().await.expect("close");

    let wal = Wal::open(WalOptions::local(dir.path()))
        .await
        .expect("reopen");
    assert_eq!(wal.metrics().recovered_entries, tasks * per_task);
    for r in 0..4u64 {
        let region = format!("region-{r}");
        let got = wal.take_recovered(&region, 0);
        let mut want: Vec<u64> = (0..tasks)
            .filter(|t| t % 4 == r)
            .flat_map(|t| (0..per_task).map(move |i| t * 1000 + i))
            .filter(|&s| s > 0)
            .collect();
        want.sort_unstable();
        assert_eq!(seqs(&got), want, "{region}");
        for e in &got {
            assert_eq!(e.payload, payload(&region, e.seq));
            assert_eq!(e.region, region);
        }
    }
}

#[tokio::test]
async fn reopen_after_close_and_after_drop_filters_and_sorts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wal = Wal::open(WalOptions::local(dir.path()))
        .await
        .expect("open");
    for seq in [5u64, 3, 9, 1, 7] {
        wal.append("a", seq, payload("a", seq))
            .await
            .expect("append");
        wal.append("b", seq * 10, payload("b", seq * 10))
            .await
            .expect("append");
    }
    wal.close().await.expect("close");
    assert!(matches!(
        wal.append("a", 100, Bytes::new()).await,
        Err(WalError::Closed)
    ));
    wal.close().await.expect("close twice");

    let wal = Wal::open(WalOptions::local(dir.path()))
        .await
        .expect("reopen");
    // Second run: appended, then dropped without close.
    wal.append("a", 11, payload("a", 11)).await.expect("append");
    wal.append("c", 1, payload("c", 1)).await.expect("append");
    drop(wal);

    let wal = Wal::open(WalOptions::local(dir.path()))
        .await
        .expect("reopen 2");
    assert_eq!(wal.recovered_regions(), vec!["a", "b", "c"]);
    let a = wal.take_recovered("a", 3);
    assert_eq!(seqs(&a), vec![5, 7, 9, 11]);
    assert!(a.iter().all(|e| e.payload == payload("a", e.seq)));
    assert!(
        wal.take_recovered("a", 0).is_empty(),
        "taken entries are forgotten"
    );
    assert_eq!(seqs(&wal.take_recovered("b", 0)), vec![10, 30, 50, 70, 90]);
    assert_eq!(seqs(&wal.take_recovered("c", 0)), vec![1]);
    assert!(wal.take_recovered("nobody", 0).is_empty());
    // Three opens, three segments; none reused.
    assert_eq!(
        segment_files(dir.path()),
        vec![
            "00000000000000000001.wal",
            "00000000000000000002.wal",
            "00000000000000000003.wal"
        ]
    );
}

#[tokio::test]
async fn segments_roll_and_are_deleted_once_every_region_is_flushed() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Without preallocation: a segment prepared ahead would be one more file.
    let options = WalOptions {
        segment_bytes: 256,
        preallocate: false,
        ..WalOptions::local(dir.path())
    };
    let wal = Wal::open(options.clone()).await.expect("open");
    // Region b writes once, into the first segment only.
    wal.append("b", 1, payload("b", 1)).await.expect("append");
    for seq in 1..=60u64 {
        wal.append("a", seq, payload("a", seq))
            .await
            .expect("append");
    }
    let files = segment_files(dir.path());
    assert!(files.len() > 5, "expected rolling, got {files:?}");
    let m = wal.metrics();
    assert_eq!(m.segments_live, files.len() as u64);
    assert_eq!(m.segments_created, files.len() as u64);

    // Flushing a everywhere frees every segment but the first (pinned by b) and the
    // current one.
    wal.mark_flushed("a", 1000).await.expect("mark");
    let left = segment_files(dir.path());
    assert_eq!(left.len(), 2, "{left:?}");
    assert_eq!(left[0], files[0]);
    assert_eq!(left[1], *files.last().expect("current"));
    wal.mark_flushed("b", 0)
        .await
        .expect("mark b below its entry");
    assert_eq!(segment_files(dir.path()).len(), 2);
    wal.mark_flushed("b", 1).await.expect("mark b");
    assert_eq!(
        segment_files(dir.path()),
        vec![files.last().expect("current").clone()]
    );
    assert_eq!(wal.metrics().segments_live, 1);
    assert_eq!(wal.metrics().segments_deleted, files.len() as u64 - 1);

    // The current segment still takes appends and is recovered.
    wal.append("a", 61, payload("a", 61)).await.expect("append");
    drop(wal);
    let wal = Wal::open(options).await.expect("reopen");
    let a = wal.take_recovered("a", 0);
    assert!(seqs(&a).contains(&61));
    assert!(a.iter().all(|e| e.payload == payload("a", e.seq)));
    // Old segments are tracked from recovery: flushing deletes them too.
    wal.mark_flushed("a", 61).await.expect("mark");
    assert_eq!(
        segment_files(dir.path()).len(),
        1,
        "only the new current segment"
    );
}

#[tokio::test]
async fn object_backend_recovers_and_deletes() {
    let bucket = crate::object::Bucket::memory();
    let options = WalOptions::object(bucket.clone(), "wal/server-1/");
    let wal = Wal::open(options.clone()).await.expect("open");
    for seq in 1..=20u64 {
        wal.append("a", seq, payload("a", seq))
            .await
            .expect("append");
    }
    wal.append("b", 7, payload("b", 7)).await.expect("append");
    let objects = bucket.list("wal/server-1").await.expect("list");
    assert_eq!(
        objects.len() as u64,
        wal.metrics().syncs,
        "one object per batch"
    );
    assert_eq!(objects[0].path, "wal/server-1/00000000000000000001.wal");
    // Objects stay in format version 1 (never reused: no mask or seal needed), so a
    // server of an older build can read a dead one's during a rolling upgrade.
    let first = bucket.get(&objects[0].path).await.expect("get");
    assert_eq!(
        super::record::decode_header(&first)
            .expect("header")
            .version,
        1
    );
    wal.close().await.expect("close");

    let wal = Wal::open(options.clone()).await.expect("reopen");
    assert_eq!(seqs(&wal.take_recovered("a", 15)), vec![16, 17, 18, 19, 20]);
    wal.append("a", 21, payload("a", 21))
        .await
        .expect("append after reopen");
    wal.mark_flushed("a", 21).await.expect("mark");
    let left = bucket.list("wal/server-1").await.expect("list");
    assert_eq!(left.len(), 1, "only b's object is pinned: {left:?}");
    wal.mark_flushed("b", 7).await.expect("mark");
    assert!(bucket.list("wal/server-1").await.expect("list").is_empty());
    assert_eq!(wal.metrics().segments_live, 0);
}

/// A new owner's relog: a region's entries written beside the group commits as
/// several objects of at most `max_batch_bytes`, interleaved with ordinary
/// appends; all are recovered, counted as live and retired by `mark_flushed`.
#[tokio::test]
async fn bulk_appends_are_split_into_objects_recovered_and_retired() {
    let bucket = crate::object::Bucket::memory();
    let options = WalOptions {
        max_batch_bytes: 4 << 10,
        ..WalOptions::object(bucket.clone(), "wal/s")
    };
    let wal = Wal::open(options.clone()).await.expect("open");
    wal.append("b", 1, payload("b", 1)).await.expect("append");
    let entries: Vec<(u64, Bytes)> = (1..=40u64)
        .map(|seq| (seq, Bytes::from(vec![seq as u8; 500])))
        .collect();
    let (bulk, other) = tokio::join!(
        wal.append_bulk("a", &entries),
        wal.append("b", 2, payload("b", 2))
    );
    bulk.expect("bulk");
    other.expect("append beside it");
    let objects = bucket.list("wal/s").await.expect("list");
    // 40 records of ~520 bytes, at most 4 KiB an object: 6 objects, and b's two.
    assert_eq!(objects.len(), 8, "{objects:?}");
    let m = wal.metrics();
    assert_eq!((m.segments_live, m.appends), (8, 42), "{m:?}");
    assert_eq!(wal.live_bytes(), m.live_bytes);
    wal.close().await.expect("close");

    let wal = Wal::open(options).await.expect("reopen");
    assert_eq!(
        seqs(&wal.take_recovered("a", 0)),
        (1..=40).collect::<Vec<_>>()
    );
    assert_eq!(seqs(&wal.take_recovered("b", 0)), vec![1, 2]);
    assert!(wal.live_bytes() > 40 * 500);
    wal.mark_flushed("a", 40).await.expect("mark a");
    assert_eq!(bucket.list("wal/s").await.expect("list").len(), 2);
    wal.mark_flushed("b", 2).await.expect("mark b");
    assert!(bucket.list("wal/s").await.expect("list").is_empty());
    assert_eq!(wal.live_bytes(), 0);
}

#[tokio::test]
async fn two_writers_on_one_prefix_conflict_clearly() {
    let bucket = crate::object::Bucket::memory();
    let options = WalOptions::object(bucket.clone(), "wal/s");
    let first = Wal::open(options.clone()).await.expect("open");
    let second = Wal::open(options).await.expect("open");
    first.append("a", 1, payload("a", 1)).await.expect("append");
    let err = second
        .append("a", 2, payload("a", 2))
        .await
        .expect_err("conflict");
    assert!(matches!(err, WalError::ConcurrentWriter { .. }), "{err}");
    assert!(
        err.to_string().contains("wal/s/00000000000000000001.wal"),
        "{err}"
    );
    let err = second
        .append("a", 3, payload("a", 3))
        .await
        .expect_err("poisoned");
    assert!(matches!(err, WalError::Poisoned { .. }), "{err}");
}

#[tokio::test]
async fn corrupt_object_is_an_error_naming_it() {
    let bucket = crate::object::Bucket::memory();
    let options = WalOptions::object(bucket.clone(), "wal/s");
    let wal = Wal::open(options.clone()).await.expect("open");
    wal.append("a", 1, payload("a", 1)).await.expect("append");
    wal.append("a", 2, payload("a", 2)).await.expect("append");
    wal.close().await.expect("close");
    let key = "wal/s/00000000000000000002.wal";
    let mut data = bucket.get(key).await.expect("get").to_vec();
    let last = data.len() - 1;
    data[last] ^= 1;
    bucket.put(key, data.into()).await.expect("put");
    let err = Wal::open(options).await.expect_err("corrupt");
    assert!(
        matches!(&err, WalError::Corrupt { segment, .. } if segment == key),
        "{err}"
    );
}

#[tokio::test]
async fn limits_and_options_are_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = WalOptions {
        max_batch_bytes: 0,
        ..WalOptions::local(dir.path())
    };
    assert!(matches!(
        Wal::open(bad).await,
        Err(WalError::InvalidOptions { .. })
    ));
    let wal = Wal::open(WalOptions::local(dir.path()))
        .await
        .expect("open");
    let long = "r".repeat(MAX_REGION_BYTES + 1);
    let err = wal
        .append(&long, 1, Bytes::new())
        .await
        .expect_err("too long");
    assert!(matches!(err, WalError::EntryTooLarge { .. }), "{err}");
    // An entry larger than a batch still goes through, alone.
    let small = WalOptions {
        max_batch_bytes: 64,
        ..WalOptions::local(dir.path())
    };
    drop(wal);
    let wal = Wal::open(small).await.expect("open");
    wal.append("a", 1, Bytes::from(vec![1u8; 10_000]))
        .await
        .expect("big entry");
    assert_eq!(wal.metrics().appends, 1);
}

#[tokio::test]
async fn preallocated_segments_recover_and_cut_torn_tails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = WalOptions {
        segment_bytes: 4096,
        ..WalOptions::local(dir.path())
    };
    assert!(
        options.preallocate,
        "local segments are preallocated by default"
    );
    let wal = Wal::open(options.clone()).await.expect("open");
    for seq in 1..=600u64 {
        wal.append("a", seq, payload("a", seq))
            .await
            .expect("append");
    }
    wal.close().await.expect("close");
    // Rolled segments were prepared ahead: full size, zeros after the records.
    let files = segment_files(dir.path());
    assert!(files.len() >= 3, "{files:?}");
    let sizes: Vec<u64> = files
        .iter()
        .map(|f| std::fs::metadata(dir.path().join(f)).expect("stat").len())
        .collect();
    assert!(sizes[1..].iter().any(|&s| s >= 4096), "{sizes:?}");

    // A spare left by a crash is deleted; zero tails are clean ends.
    std::fs::write(dir.path().join("00000000000000000999.wal.spare"), b"junk").expect("spare");
    let wal = Wal::open(options.clone()).await.expect("reopen");
    assert_eq!(
        seqs(&wal.take_recovered("a", 0)),
        (1..=600).collect::<Vec<_>>()
    );
    assert!(!dir.path().join("00000000000000000999.wal.spare").exists());
    assert_eq!(wal.metrics().corrupt_tails_cut, 0);
    // Enough to roll onto a preallocated segment and write a little into it.
    for seq in 601..=800u64 {
        wal.append("a", seq, payload("a", seq))
            .await
            .expect("append");
    }
    crash(wal).await;

    // A torn batch in the preallocated zeros of the newest segment is cut.
    let newest = dir
        .path()
        .join(segment_files(dir.path()).last().expect("a segment"));
    let data = std::fs::read(&newest).expect("read");
    let end = data.iter().rposition(|&b| b != 0).expect("records") + 1;
    let mut torn = data.clone();
    torn[end + 3] = 0x7f; // a length field half written
    torn[end + 40] = 0x11;
    std::fs::write(&newest, &torn).expect("write");
    let wal = Wal::open(options).await.expect("reopen after a torn batch");
    assert_eq!(
        seqs(&wal.take_recovered("a", 0)),
        (1..=800).collect::<Vec<_>>()
    );
    assert_eq!(wal.metrics().corrupt_tails_cut, 1);
}

#[tokio::test]
async fn a_torn_tail_before_a_prepared_unwritten_segment_is_cut() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = WalOptions {
        segment_bytes: 1 << 20,
        ..WalOptions::local(dir.path())
    };
    let wal = Wal::open(options.clone()).await.expect("open");
    for seq in 1..=50u64 {
        wal.append("a", seq, payload("a", seq))
            .await
            .expect("append");
    }
    crash(wal).await;
    // The crash tore the batch in flight at the end of the newest written
    // segment (a record past its end, as a write beyond the preallocated size
    // leaves it) while the next segment was already prepared and in place.
    let files = segment_files(dir.path());
    let number_of = |f: &String| -> u64 { f.trim_end_matches(".wal").parse().expect("number") };
    let written = files
        .iter()
        .rev()
        .find(|f| {
            let data = std::fs::read(dir.path().join(f)).expect("read");
            data[super::record::HEADER_LEN..].iter().any(|&b| b != 0)
        })
        .expect("a segment with records")
        .clone();
    let number = number_of(files.last().expect("a segment"));
    let path = dir.path().join(&written);
    let data = bytes::Bytes::from(std::fs::read(&path).expect("read"));
    // Its records end where the scan stops (the zeros of preallocation follow).
    let header = super::record::decode_header(&data).expect("header");
    let scan = super::record::scan_records(&data, &header, super::record::HEADER_LEN);
    assert!(!scan.sealed, "a crash leaves no seal");
    let end = scan.valid_len;
    let mut torn = data[..end].to_vec();
    torn.extend_from_slice(&[0x00, 0x00, 0x05, 0x27, 0x42, 0x42, 0x42]);
    std::fs::write(&path, &torn).expect("write");
    for next in number + 1..=number + 2 {
        super::local::SpareSegment::create(dir.path(), next, 7, 8192).expect("prepared segment");
    }
    let wal = Wal::open(options).await.expect("reopen after a torn batch");
    assert_eq!(
        seqs(&wal.take_recovered("a", 0)),
        (1..=50).collect::<Vec<_>>()
    );
    assert_eq!(wal.metrics().corrupt_tails_cut, 1);
    assert_eq!(std::fs::metadata(&path).expect("stat").len(), end as u64);
}

/// Drops `wal` as a crash would (no close) and waits until its writer thread
/// has finished everything it was doing, so the test reads settled files.
async fn crash(wal: Wal) {
    let exited = wal.writer_exited();
    drop(wal);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !exited.load(std::sync::atomic::Ordering::Acquire) {
        assert!(
            std::time::Instant::now() < deadline,
            "the WAL writer thread did not stop"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// A WAL with 32 KiB segments in a new directory, after `append_and_retire(1, 400)`.
async fn recycling_wal() -> (tempfile::TempDir, WalOptions, Wal) {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = WalOptions {
        segment_bytes: 32 << 10,
        ..WalOptions::local(dir.path())
    };
    let wal = Wal::open(options.clone()).await.expect("open");
    append_and_retire(&wal, 1, 400).await;
    (dir, options, wal)
}

/// A 1 KiB payload that names its seq.
fn kib_payload(seq: u64) -> Bytes {
    Bytes::from(format!("{seq}:{}", "r".repeat(1000)))
}

/// Appends 1 KiB entries of region `a` from `from` to `to`, marking everything but
/// the last 8 flushed every 16 appends, so segments retire while the log rolls.
async fn append_and_retire(wal: &Wal, from: u64, to: u64) {
    for seq in from..=to {
        wal.append("a", seq, kib_payload(seq))
            .await
            .expect("append");
        if seq % 16 == 0 {
            wal.mark_flushed("a", seq - 8).await.expect("mark flushed");
        }
    }
}

fn free_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .expect("read dir")
        .filter(|e| {
            e.as_ref()
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .ends_with(super::recycle::FREE_SUFFIX)
        })
        .count()
}

/// Every entry recovered for `a` is one that was appended (its payload names its
/// seq), none twice, and every one above `flushed` up to `last` is there.
fn assert_recovered_exactly(wal: &Wal, flushed: u64, last: u64) {
    let got = wal.take_recovered("a", 0);
    for e in &got {
        assert!(
            e.payload.starts_with(format!("{}:", e.seq).as_bytes()),
            "entry {} carries another entry's payload",
            e.seq
        );
    }
    let mut s = seqs(&got);
    let n = s.len();
    s.dedup();
    assert_eq!(s.len(), n, "an entry came back twice: leftovers were read");
    let above: Vec<u64> = s.into_iter().filter(|&q| q > flushed).collect();
    assert_eq!(above, (flushed + 1..=last).collect::<Vec<_>>());
}

#[tokio::test]
async fn retired_segments_are_recycled_and_their_leftovers_never_come_back() {
    let (dir, options, wal) = recycling_wal().await;
    let m = wal.metrics();
    assert!(m.segments_created > 8, "{m:?}");
    assert!(m.segments_recycled >= 4, "few segments recycled: {m:?}");
    assert!(free_files(dir.path()) <= super::recycle::FREE_FILES_KEPT);
    // A clean close seals the last segment: no torn tail at the next open, though
    // its file holds an earlier segment's records after its own.
    wal.close().await.expect("close");
    let wal = Wal::open(options.clone())
        .await
        .expect("reopen after close");
    assert_eq!(wal.metrics().corrupt_tails_cut, 0);
    assert_eq!(wal.metrics().segments_recycled, 1, "the first segment too");
    assert_recovered_exactly(&wal, 392, 400);
    // Now a crash: the last segment ends in its leftovers, cut as a torn tail.
    append_and_retire(&wal, 401, 700).await;
    crash(wal).await;
    let wal = Wal::open(options.clone())
        .await
        .expect("reopen after a crash");
    assert_recovered_exactly(&wal, 696, 700);
    wal.close().await.expect("close");
    // And the cut segment reads clean once it is no longer the last.
    let wal = Wal::open(options).await.expect("reopen again");
    assert_eq!(wal.metrics().corrupt_tails_cut, 0);
    assert_recovered_exactly(&wal, 696, 700);
}

#[tokio::test]
async fn a_damaged_seal_before_a_written_segment_is_corruption() {
    let (dir, options, wal) = recycling_wal().await;
    // Then no more flushes: the next segments (the first ones recycled) stay.
    for seq in 401..=520u64 {
        wal.append("a", seq, kib_payload(seq))
            .await
            .expect("append");
    }
    wal.close().await.expect("close");
    let files = segment_files(dir.path());
    assert!(files.len() >= 2, "{files:?}");
    // The segment before the last ends in a seal; leftovers follow it (written
    // here, as a recycled file's would be).
    let victim = files[files.len() - 2].clone();
    let path = dir.path().join(&victim);
    let data = Bytes::from(std::fs::read(&path).expect("read"));
    let h = super::record::decode_header(&data).expect("header");
    let scan = super::record::scan_records(&data, &h, super::record::HEADER_LEN);
    assert!(scan.sealed, "a segment the writer left is sealed");
    let mut data = data[..scan.valid_len].to_vec();
    data.extend_from_slice(&[0xab; 300]);
    std::fs::write(&path, &data).expect("write");
    let wal = Wal::open(options.clone())
        .await
        .expect("leftovers after a seal");
    assert_eq!(wal.metrics().corrupt_tails_cut, 0);
    assert_recovered_exactly(&wal, 392, 520);
    wal.close().await.expect("close");
    // The same with its seal damaged: the leftovers could be records cut off.
    data[scan.valid_len - 3] ^= 0x01;
    std::fs::write(&path, &data).expect("write");
    let err = Wal::open(options).await.expect_err("damage is not an end");
    assert!(
        matches!(&err, WalError::Corrupt { segment, .. } if segment.ends_with(&victim)),
        "{err}"
    );
}

#[tokio::test]
async fn an_empty_region_name_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wal = Wal::open(WalOptions::local(dir.path()))
        .await
        .expect("open");
    let err = wal.append("", 1, Bytes::from_static(b"x")).await;
    assert!(
        matches!(err, Err(WalError::EmptyRegion { seq: 1 })),
        "{err:?}"
    );
}
