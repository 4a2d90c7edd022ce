//! WAL recovery from damaged segments: a torn tail of the last segment is cut exactly at
//! the last whole record (every byte offset tried), a bad record anywhere else is a
//! `Corrupt` error naming the segment, and the object backend recovers the same way on a
//! real (local-directory) bucket.

use bytes::Bytes;
use shoal_storage::object::{Bucket, ObjectStoreConfig};
use shoal_storage::wal::{HEADER_LEN, Wal, WalEntry, WalError, WalOptions};
use std::path::{Path, PathBuf};

fn payload(region: &str, seq: u64) -> Bytes {
    Bytes::from(format!(
        "{region}/{seq}/{}",
        "x".repeat((seq % 5) as usize * 3)
    ))
}

/// On-disk size of one record, from the format in docs/wal.md (regions < 128 bytes).
fn record_len(region: &str, seq: u64) -> usize {
    8 + 1 + region.len() + 8 + payload(region, seq).len()
}

const REGIONS: [&str; 2] = ["ra", "rb"];

/// The entries appended by `write_run`, in log order.
fn run_entries(first_seq: u64, n: u64) -> Vec<(&'static str, u64)> {
    (first_seq..first_seq + n)
        .map(|seq| (REGIONS[(seq % 2) as usize], seq))
        .collect()
}

/// One run: open, append `n` entries one at a time (one record per sync), drop without close.
async fn write_run(dir: &Path, first_seq: u64, n: u64) {
    let wal = Wal::open(WalOptions::local(dir)).await.expect("open");
    for (region, seq) in run_entries(first_seq, n) {
        wal.append(region, seq, payload(region, seq))
            .await
            .expect("append");
    }
}

fn all_recovered(wal: &Wal) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for region in REGIONS {
        for WalEntry {
            region,
            seq,
            payload: p,
        } in wal.take_recovered(region, 0)
        {
            assert_eq!(p, payload(&region, seq), "payload of {region}/{seq}");
            out.push((region, seq));
        }
    }
    out.sort_by_key(|(_, seq)| *seq);
    out
}

fn expected(entries: &[(&str, u64)]) -> Vec<(String, u64)> {
    entries.iter().map(|(r, s)| (r.to_string(), *s)).collect()
}

fn segment(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:020}.wal"))
}

#[tokio::test]
async fn torn_tail_is_cut_at_the_last_whole_record_at_every_offset() {
    let src = tempfile::tempdir().expect("tempdir");
    let entries = run_entries(1, 12);
    write_run(src.path(), 1, 12).await;
    let bytes = std::fs::read(segment(src.path(), 1)).expect("read");
    let mut ends = vec![HEADER_LEN];
    for (r, s) in &entries {
        ends.push(ends.last().expect("end") + record_len(r, *s));
    }
    assert_eq!(
        *ends.last().expect("end"),
        bytes.len(),
        "docs/wal.md record layout"
    );

    // Every cut inside the last four records, and inside the header.
    let from = ends[ends.len() - 5];
    let cuts = (0..=HEADER_LEN).chain(from..=bytes.len());
    for cut in cuts {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(segment(dir.path(), 1), &bytes[..cut]).expect("write");
        let whole = ends.iter().filter(|&&e| e <= cut).count().saturating_sub(1);
        // A file shorter than a header was torn while being created: removed, counted.
        let torn = !ends.contains(&cut);
        let wal = Wal::open(WalOptions::local(dir.path()))
            .await
            .unwrap_or_else(|e| panic!("cut {cut}: {e}"));
        assert_eq!(
            all_recovered(&wal),
            expected(&entries[..whole]),
            "cut at {cut}"
        );
        let m = wal.metrics();
        assert_eq!(m.corrupt_tails_cut, u64::from(torn), "cut at {cut}");
        wal.append("ra", 1000, payload("ra", 1000))
            .await
            .expect("append after cut");
        drop(wal);
        // The cut segment is no longer the last one: it must now read clean.
        let wal = Wal::open(WalOptions::local(dir.path()))
            .await
            .unwrap_or_else(|e| panic!("reopen after cut {cut}: {e}"));
        let mut want = expected(&entries[..whole]);
        want.push(("ra".into(), 1000));
        assert_eq!(all_recovered(&wal), want, "reopen after cut at {cut}");
        assert_eq!(wal.metrics().corrupt_tails_cut, 0);
    }
}

#[tokio::test]
async fn flipped_byte_in_the_last_record_cuts_there() {
    let src = tempfile::tempdir().expect("tempdir");
    let entries = run_entries(1, 6);
    write_run(src.path(), 1, 6).await;
    let bytes = std::fs::read(segment(src.path(), 1)).expect("read");
    let last_len = record_len(entries[5].0, entries[5].1);
    for i in bytes.len() - last_len..bytes.len() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut damaged = bytes.clone();
        damaged[i] ^= 0x40;
        std::fs::write(segment(dir.path(), 1), &damaged).expect("write");
        let wal = Wal::open(WalOptions::local(dir.path()))
            .await
            .unwrap_or_else(|e| panic!("flip {i}: {e}"));
        assert_eq!(all_recovered(&wal), expected(&entries[..5]), "flip at {i}");
        assert_eq!(wal.metrics().corrupt_tails_cut, 1);
    }
}

#[tokio::test]
async fn flipped_byte_in_an_earlier_segment_is_corruption() {
    let src = tempfile::tempdir().expect("tempdir");
    write_run(src.path(), 1, 6).await;
    write_run(src.path(), 7, 6).await;
    let first = std::fs::read(segment(src.path(), 1)).expect("read");
    let second = std::fs::read(segment(src.path(), 2)).expect("read");
    // Header and record bytes alike: every byte is checksummed, so every flip is caught.
    for i in (0..first.len()).step_by(3) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut damaged = first.clone();
        damaged[i] ^= 0x01;
        std::fs::write(segment(dir.path(), 1), &damaged).expect("write");
        std::fs::write(segment(dir.path(), 2), &second).expect("write");
        let err = Wal::open(WalOptions::local(dir.path()))
            .await
            .expect_err("corrupt");
        match &err {
            WalError::Corrupt {
                segment: s, offset, ..
            } => {
                assert!(s.ends_with("00000000000000000001.wal"), "{err}");
                assert!(*offset as usize <= i, "{err}");
            }
            other => panic!("flip at {i}: expected Corrupt, got {other}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains("00000000000000000001.wal") && msg.contains("truncate"),
            "{msg}"
        );
    }
}

#[tokio::test]
async fn object_backend_on_a_local_directory_bucket() {
    let root = tempfile::tempdir().expect("tempdir");
    let bucket = Bucket::open(&ObjectStoreConfig::local(root.path()))
        .await
        .expect("bucket");
    let options = WalOptions::object(bucket.clone(), "wal/server-7");
    let entries = run_entries(1, 10);
    {
        let wal = Wal::open(options.clone()).await.expect("open");
        let mut tasks = Vec::new();
        for (region, seq) in entries.clone() {
            let wal = wal.clone();
            tasks.push(tokio::spawn(async move {
                wal.append(region, seq, payload(region, seq)).await
            }));
        }
        for t in tasks {
            t.await.expect("task").expect("append");
        }
        // Dropped without close.
    }
    let wal = Wal::open(options.clone()).await.expect("reopen");
    assert_eq!(all_recovered(&wal), expected(&entries));
    assert_eq!(wal.metrics().corrupt_tails_cut, 0);
    drop(wal);

    // Objects are never torn: a short object is corruption, not a tail to cut.
    let objects = bucket.list("wal/server-7").await.expect("list");
    let last = objects.last().expect("objects").path.clone();
    let data = bucket.get(&last).await.expect("get");
    bucket
        .put(&last, data.slice(..data.len() - 1))
        .await
        .expect("put");
    let err = Wal::open(options).await.expect_err("corrupt");
    assert!(
        matches!(&err, WalError::Corrupt { segment, .. } if *segment == last),
        "{err}"
    );
}
