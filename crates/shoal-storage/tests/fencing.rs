//! Fencing of region owners through the manifest chain: a stale owner's next commit
//! fails with `Fenced` and stays failed, even after GC has removed old manifests, and
//! racing openers get distinct, consecutive epochs. Every scenario runs on an in-memory
//! bucket and on a local-directory bucket.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use shoal_storage::manifest::{
    FilePins, GcOptions, ManifestError, ManifestStore, StoreFile, manifest_path,
};
use shoal_storage::object::{Bucket, Faults, ObjectStoreConfig, Op};
use shoal_storage::sst::FileId;

const DIR: &str = "data/ab/t1/r1";

/// An in-memory and a local-directory bucket (the tempdir lives as long as the bucket).
async fn buckets() -> Vec<(&'static str, Bucket, Option<tempfile::TempDir>)> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let local = Bucket::open(&ObjectStoreConfig::local(tmp.path()))
        .await
        .expect("local bucket");
    vec![
        ("memory", Bucket::memory(), None),
        ("local", local, Some(tmp)),
    ]
}

fn file(id: FileId) -> StoreFile {
    StoreFile {
        id,
        path: format!("{DIR}/cf/{id}.sst"),
        size: 100,
        cell_count: 1,
        max_seq: 1,
        min_timestamp: 0,
        max_timestamp: 0,
        first_row: Bytes::from_static(b"a"),
        last_row: Bytes::from_static(b"z"),
    }
}

fn add(id: FileId) -> impl FnOnce(&mut shoal_storage::manifest::Manifest) {
    move |m| {
        m.stores.entry("cf".into()).or_default().push(file(id));
        m.flushed_seq += 1;
        m.max_seq += 1;
    }
}

fn ids(m: &shoal_storage::manifest::Manifest) -> Vec<FileId> {
    m.files().map(|f| f.id).collect()
}

fn assert_fenced(result: Result<impl std::fmt::Debug, ManifestError>, our: u64, their: u64) {
    match result {
        Err(ManifestError::Fenced {
            region_dir,
            our_epoch,
            their_epoch,
        }) => {
            assert_eq!(
                (region_dir.as_str(), our_epoch, their_epoch),
                (DIR, our, their)
            );
        }
        other => panic!("expected Fenced({our} < {their}), got {other:?}"),
    }
}

#[tokio::test]
async fn newer_owner_fences_older_for_good() {
    for (name, bucket, _tmp) in buckets().await {
        let store = ManifestStore::new(bucket, DIR);
        let mut a = store
            .open_owner(Bytes::new(), Bytes::new())
            .await
            .expect("A opens");
        assert_eq!((a.current().seq, a.current().epoch), (1, 1), "{name}");
        a.commit(add(FileId(1))).await.expect("A commits");

        let mut b = store
            .open_owner(Bytes::from_static(b"ignored"), Bytes::new())
            .await
            .expect("B opens");
        assert_eq!((b.current().seq, b.current().epoch), (3, 2), "{name}");
        assert_eq!(ids(b.current()), vec![FileId(1)], "B starts from A's state");
        assert!(
            b.current().start_row.is_empty(),
            "bounds come from the manifest"
        );

        assert_fenced(a.commit(add(FileId(2))).await, 1, 2);
        assert!(a.is_fenced());
        for i in 10..15 {
            b.commit(add(FileId(i))).await.expect("B commits");
        }
        // A stays fenced, for commits and for GC, without touching the store again.
        let requests = store.bucket().metrics().conditional_put.requests;
        assert_fenced(a.commit(add(FileId(3))).await, 1, 2);
        assert_fenced(a.gc(&GcOptions::default(), &FilePins::new()).await, 1, 2);
        assert_eq!(store.bucket().metrics().conditional_put.requests, requests);

        let latest = store.load_latest().await.expect("load").expect("some");
        assert_eq!(&latest, b.current(), "{name}");
        assert_eq!(
            ids(&latest),
            [1, 10, 11, 12, 13, 14].map(FileId).to_vec(),
            "nothing of B's is lost, nothing of fenced A's appears"
        );
    }
}

#[tokio::test]
async fn zombie_cannot_win_a_slot_after_gc() {
    for (name, bucket, _tmp) in buckets().await {
        let store = ManifestStore::new(bucket, DIR);
        let mut a = store
            .open_owner(Bytes::new(), Bytes::new())
            .await
            .expect("A");
        a.commit(add(FileId(1))).await.expect("A commits");
        let a_seq = a.current().seq;

        let mut b = store
            .open_owner(Bytes::new(), Bytes::new())
            .await
            .expect("B");
        for i in 100..130 {
            b.commit(add(FileId(i))).await.expect("B commits");
        }
        let options = GcOptions {
            grace: Duration::ZERO,
            now: SystemTime::now() + Duration::from_secs(86_400),
        };
        let report = b.gc(&options, &FilePins::new()).await.expect("gc");
        assert!(report.manifests_deleted >= 29, "{name}: {report:?}");
        assert_eq!(report.epoch_fences_retained, 2, "{name}: {report:?}");

        // The slot A will target is B's fence, which GC kept.
        let target = manifest_path(DIR, a_seq + 1);
        assert!(
            store.bucket().exists(&target).await.expect("head"),
            "{name}"
        );
        assert_fenced(a.commit(add(FileId(2))).await, 1, 2);
        let latest = store.load_latest().await.expect("load").expect("some");
        assert_eq!(&latest, b.current(), "{name}");
        assert!(!ids(&latest).contains(&FileId(2)));
    }
}

#[tokio::test]
async fn zombie_gc_deletes_nothing() {
    let store = ManifestStore::new(Bucket::memory(), DIR);
    let a = store
        .open_owner(Bytes::new(), Bytes::new())
        .await
        .expect("A");
    let mut b = store
        .open_owner(Bytes::new(), Bytes::new())
        .await
        .expect("B");
    for i in 0..5 {
        b.commit(add(FileId(i))).await.expect("B commits");
    }
    let before = store.bucket().list(DIR).await.expect("list");
    let options = GcOptions {
        grace: Duration::ZERO,
        now: SystemTime::now() + Duration::from_secs(86_400),
    };
    // A has not tried to commit, so it does not know it is fenced; GC finds out.
    assert_fenced(a.gc(&options, &FilePins::new()).await, 1, 2);
    assert!(a.is_fenced());
    assert_eq!(store.bucket().list(DIR).await.expect("list"), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_openers_get_distinct_consecutive_epochs() {
    for (name, bucket, _tmp) in buckets().await {
        let store = ManifestStore::new(bucket, DIR);
        let mut seed = store
            .open_owner(Bytes::new(), Bytes::new())
            .await
            .expect("seed");
        seed.commit(add(FileId(7))).await.expect("seed commit");
        const OPENERS: usize = 6;
        let tasks: Vec<_> = (0..OPENERS)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move { store.open_owner(Bytes::new(), Bytes::new()).await })
            })
            .collect();
        let mut writers = Vec::new();
        for t in tasks {
            writers.push(t.await.expect("join").expect("open"));
        }
        let mut epochs: Vec<u64> = writers.iter().map(|w| w.current().epoch).collect();
        epochs.sort_unstable();
        assert_eq!(
            epochs,
            (2..2 + OPENERS as u64).collect::<Vec<_>>(),
            "{name}"
        );
        // Epoch order is slot order: each open is based on the slot before it.
        for w in &writers {
            assert_eq!(w.current().seq, w.current().epoch + 1, "{name}");
            assert_eq!(ids(w.current()), vec![FileId(7)]);
        }
        writers.sort_by_key(|w| w.current().epoch);
        let mut live = writers.pop().expect("last opener");
        for mut w in writers {
            let epoch = w.current().epoch;
            // Fenced by the fence in its next slot: the following opener's.
            assert_fenced(w.commit(add(FileId(8))).await, epoch, epoch + 1);
        }
        live.commit(add(FileId(9)))
            .await
            .expect("the last opener is the owner");
        let latest = store.load_latest().await.expect("load").expect("some");
        assert_eq!(ids(&latest), vec![FileId(7), FileId(9)], "{name}");
    }
}

#[tokio::test]
async fn ambiguous_create_commits_exactly_once() {
    let faults = Faults::new();
    let bucket = Bucket::memory().with_faults(faults.clone());
    let store = ManifestStore::new(bucket, DIR);
    let mut w = store
        .open_owner(Bytes::new(), Bytes::new())
        .await
        .expect("open");
    faults.timeout_after_apply_next(Op::ConditionalPut, 1);
    let seq = w.current().seq;
    w.commit(add(FileId(1)))
        .await
        .expect("applied-then-timed-out commit succeeds");
    assert_eq!(faults.fired(Op::ConditionalPut), 1);
    assert_eq!(w.current().seq, seq + 1);
    w.commit(add(FileId(2))).await.expect("next commit");
    assert_eq!(w.current().seq, seq + 2);
    let latest = store.load_latest().await.expect("load").expect("some");
    assert_eq!(ids(&latest), vec![FileId(1), FileId(2)]);
    let slots = store
        .bucket()
        .list(&format!("{DIR}/manifest"))
        .await
        .expect("list");
    assert_eq!(slots.len() as u64, seq + 2, "one object per commit");

    // The same for the fence an opener writes.
    faults.timeout_after_apply_next(Op::ConditionalPut, 1);
    let b = store
        .open_owner(Bytes::new(), Bytes::new())
        .await
        .expect("ambiguous open");
    assert_eq!(b.current().seq, seq + 3);
    assert_fenced(w.commit(add(FileId(3))).await, 1, 2);
}

#[tokio::test]
async fn commit_with_unknown_outcome_poisons_the_writer() {
    let faults = Faults::new();
    let bucket = Bucket::memory().with_faults(faults.clone());
    let store = ManifestStore::new(bucket, DIR);
    let mut w = store
        .open_owner(Bytes::new(), Bytes::new())
        .await
        .expect("open");
    // Every attempt times out before reaching the store, and the read-back fails too.
    faults.timeout_next(Op::ConditionalPut, 100);
    faults.timeout_next(Op::Get, 100);
    let err = w.commit(add(FileId(1))).await.expect_err("unknown");
    assert!(
        matches!(err, ManifestError::CommitUnknown { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("open_owner"), "{err}");
    faults.clear();
    assert!(matches!(
        w.commit(add(FileId(2))).await,
        Err(ManifestError::Poisoned { .. })
    ));
    // Reopening works and sees the true state.
    let w2 = store
        .open_owner(Bytes::new(), Bytes::new())
        .await
        .expect("reopen");
    assert_eq!(w2.current().epoch, 2);
    assert!(ids(w2.current()).is_empty());
}

#[tokio::test]
async fn corrupt_newest_manifest_is_reported_not_skipped() {
    for (name, bucket, _tmp) in buckets().await {
        let store = ManifestStore::new(bucket.clone(), DIR);
        let mut w = store
            .open_owner(Bytes::new(), Bytes::new())
            .await
            .expect("open");
        w.commit(add(FileId(1))).await.expect("commit");
        let newest = manifest_path(DIR, w.current().seq);
        let mut data = bucket.get(&newest).await.expect("get").to_vec();
        let mid = data.len() / 2;
        data[mid] ^= 0x10;
        bucket
            .put(&newest, Bytes::from(data))
            .await
            .expect("overwrite");

        for result in [
            store.load_latest().await.map(|_| ()),
            store
                .open_owner(Bytes::new(), Bytes::new())
                .await
                .map(|_| ()),
        ] {
            match result {
                Err(e @ ManifestError::Corrupt { .. }) => {
                    let ManifestError::Corrupt { ref path, .. } = e else {
                        unreachable!()
                    };
                    assert_eq!(path, &newest, "{name}");
                    assert!(e.to_string().contains(&newest), "{name}: {e}");
                }
                other => panic!("{name}: expected Corrupt, got {other:?}"),
            }
        }
    }
}

#[tokio::test]
async fn round_trip_and_many_commits() {
    for (name, bucket, _tmp) in buckets().await {
        let store = ManifestStore::new(bucket, DIR);
        assert!(store.load_latest().await.expect("load").is_none(), "{name}");
        let mut w = store
            .open_owner(Bytes::from_static(b"b"), Bytes::from_static(b"m"))
            .await
            .expect("open");
        for i in 0..40u128 {
            w.commit(|m| {
                add(FileId(i))(m);
                m.stores.entry(format!("f{}", i % 3)).or_default();
            })
            .await
            .expect("commit");
        }
        let latest = store.load_latest().await.expect("load").expect("some");
        assert_eq!(&latest, w.current(), "{name}");
        assert_eq!(latest.seq, 41);
        assert_eq!(latest.flushed_seq, 40);
        assert_eq!(latest.start_row, "b");
        assert_eq!(latest.end_row, "m");
        assert_eq!(latest.stores.len(), 4);

        // Invalid edits write nothing.
        let seq = w.current().seq;
        assert!(matches!(
            w.commit(|m| m.flushed_seq = 0).await,
            Err(ManifestError::InvalidEdit { .. })
        ));
        assert!(matches!(
            w.commit(add(FileId(3))).await,
            Err(ManifestError::InvalidEdit { .. })
        ));
        assert_eq!(w.current().seq, seq);
        w.commit(|m| m.seq = 999)
            .await
            .expect("identity fields are set by commit");
        assert_eq!(w.current().seq, seq + 1);
    }
}

/// A opens the region and commits one file; its writer, and the newest
/// manifest as another server's warm-up reads it (a hint).
async fn owner_with_one_file(
    store: &ManifestStore,
) -> (
    shoal_storage::manifest::ManifestWriter,
    shoal_storage::manifest::Manifest,
) {
    let mut a = store
        .open_owner(Bytes::new(), Bytes::new())
        .await
        .expect("A opens");
    a.commit(add(FileId(1))).await.expect("A commits");
    let hint = store
        .load_latest()
        .await
        .expect("reading the newest manifest")
        .expect("a manifest");
    (a, hint)
}

#[tokio::test]
async fn a_hinted_open_fences_from_the_hint_and_rebases_on_commits_made_since() {
    use std::time::Instant;
    for (name, bucket, _tmp) in buckets().await {
        let store = ManifestStore::new(bucket.clone(), DIR);
        // B warms up: it reads the newest manifest (seq 2) ...
        let (mut a, hint) = owner_with_one_file(&store).await;
        assert_eq!(hint.seq, 2, "{name}");
        // ... A commits twice more meanwhile (its close flushes) ...
        a.commit(add(FileId(2))).await.expect("A commits");
        a.commit(add(FileId(3))).await.expect("A commits");
        // ... and B opens from its hint: it lands after A's last commit,
        // with every file, and A is fenced.
        let b = store
            .open_owner_hinted(Bytes::new(), Bytes::new(), Some((hint, Instant::now())))
            .await
            .expect("B opens");
        assert_eq!((b.current().seq, b.current().epoch), (5, 2), "{name}");
        assert_eq!(
            ids(b.current()),
            [FileId(1), FileId(2), FileId(3)],
            "{name}"
        );
        assert_fenced(a.commit(add(FileId(4))).await, 1, 2);
        // A fresh hint: one write, straight to the next slot.
        let hint = store.load_latest().await.unwrap().unwrap();
        let c = store
            .open_owner_hinted(Bytes::new(), Bytes::new(), Some((hint, Instant::now())))
            .await
            .expect("C opens");
        assert_eq!((c.current().seq, c.current().epoch), (6, 3), "{name}");
        // GC (a day later, no grace) deletes slots 2-4 (superseded, not the
        // first of their epoch). A hint of seq 1 would now fence into a
        // deleted slot, below the true newest: a hint older than
        // MAX_HINT_AGE is not trusted, the open reads the newest itself.
        let options = GcOptions {
            grace: Duration::ZERO,
            now: SystemTime::now() + Duration::from_secs(86_400),
        };
        let report = c.gc(&options, &FilePins::new()).await.expect("gc");
        assert_eq!(report.manifests_deleted, 3, "{name}: {report:?}");
        let old = Instant::now()
            .checked_sub(shoal_storage::manifest::MAX_HINT_AGE + Duration::from_secs(1))
            .expect("an instant in the past");
        let mut stale_hint = store.load_latest().await.unwrap().unwrap();
        stale_hint.seq = 1;
        stale_hint.epoch = 1;
        let d = store
            .open_owner_hinted(Bytes::new(), Bytes::new(), Some((stale_hint, old)))
            .await
            .expect("D opens");
        assert_eq!((d.current().seq, d.current().epoch), (7, 4), "{name}");
        assert!(
            !bucket.exists(&manifest_path(DIR, 2)).await.unwrap(),
            "{name}"
        );
    }
}

/// A server paused in the middle of an open, past its cluster lease: the
/// cluster gave the region to another server, which fenced it. When the
/// paused opener wakes, its fence attempt loses the slot, and it must not
/// rebase and fence the new owner (whose acknowledged writes would then be
/// lost with its fenced memstore): `may_own` (its lease) stops it first.
#[tokio::test]
async fn an_opener_that_lost_its_lease_never_fences_the_new_owner() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;
    for (name, bucket, _tmp) in buckets().await {
        let store = ManifestStore::new(bucket.clone(), DIR);
        // The paused server read the newest manifest (its warm-up hint)...
        let (_a, hint) = owner_with_one_file(&store).await;
        // ... then the cluster gave the region to B, which fenced it.
        let mut b = store
            .open_owner(Bytes::new(), Bytes::new())
            .await
            .expect("B opens");
        let b_seq = b.current().seq;
        // The paused server wakes: its lease held for the first fence
        // attempt's check (made before the pause), not after.
        let asked = AtomicUsize::new(0);
        let lease = || asked.fetch_add(1, Ordering::SeqCst) == 0;
        let result = store
            .open_owner_guarded(
                Bytes::new(),
                Bytes::new(),
                Some((hint.clone(), Instant::now())),
                &lease,
            )
            .await;
        assert!(
            matches!(result, Err(ManifestError::OwnershipLost { .. })),
            "{name}: {result:?}"
        );
        assert_eq!(
            asked.load(Ordering::SeqCst),
            2,
            "{name}: asked before each attempt"
        );
        // Nothing was written past B's fence: B still owns the region.
        assert_eq!(
            store.load_latest().await.unwrap().unwrap().seq,
            b_seq,
            "{name}"
        );
        b.commit(add(FileId(2))).await.expect("B is not fenced");
        // Without a lease at all, not even the first attempt is made.
        let none = store
            .open_owner_guarded(
                Bytes::new(),
                Bytes::new(),
                Some((hint, Instant::now())),
                &|| false,
            )
            .await;
        assert!(
            matches!(none, Err(ManifestError::OwnershipLost { .. })),
            "{name}"
        );
        b.commit(add(FileId(3)))
            .await
            .expect("B is still not fenced");
    }
}
