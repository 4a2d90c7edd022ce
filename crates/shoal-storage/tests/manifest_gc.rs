//! GC of a region: old manifests and unreferenced SST files go; the newest manifest, the
//! first manifest of every epoch, referenced files, pinned files, files younger than the
//! grace period and objects it does not recognize stay. Runs on an in-memory and a
//! local-directory bucket.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use shoal_storage::manifest::{
    FilePins, GcOptions, GcReport, Manifest, ManifestStore, StoreFile, manifest_path,
};
use shoal_storage::object::{Bucket, ObjectStoreConfig};
use shoal_storage::sst::FileId;

const DIR: &str = "data/cd/t1/r9";

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

/// A file id whose ULID timestamp is `t`.
fn id_at(t: SystemTime, low: u128) -> FileId {
    let ms = t
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis();
    FileId((ms << 80) | low)
}

fn sst_path(id: FileId) -> String {
    format!("{DIR}/cf/{id}.sst")
}

fn file(id: FileId) -> StoreFile {
    StoreFile {
        id,
        path: sst_path(id),
        size: 3,
        cell_count: 1,
        max_seq: 1,
        min_timestamp: 0,
        max_timestamp: 0,
        first_row: Bytes::from_static(b"a"),
        last_row: Bytes::from_static(b"z"),
    }
}

fn add(id: FileId) -> impl FnOnce(&mut Manifest) {
    move |m| m.stores.entry("cf".into()).or_default().push(file(id))
}

fn remove(id: FileId) -> impl FnOnce(&mut Manifest) {
    move |m| {
        for files in m.stores.values_mut() {
            files.retain(|f| f.id != id);
        }
    }
}

async fn exists(bucket: &Bucket, path: &str) -> bool {
    bucket.exists(path).await.expect("head")
}

#[tokio::test]
async fn gc_deletes_only_what_nobody_can_need() {
    for (name, bucket, _tmp) in buckets().await {
        let real_now = SystemTime::now();
        // GC judges at "a day later" with a 1 h grace: everything written now is old.
        let later = GcOptions {
            grace: Duration::from_secs(3600),
            now: real_now + Duration::from_secs(86_400),
        };
        let [f1, f2, f3, f4, orphan, pinned] = [1, 2, 3, 4, 5, 6].map(|i| id_at(real_now, i));
        let young = id_at(later.now - Duration::from_secs(600), 7);

        let store = ManifestStore::new(bucket.clone(), DIR);
        let mut a = store
            .open_owner(Bytes::new(), Bytes::new())
            .await
            .expect("A"); // 1
        a.commit(add(f1)).await.expect("2");
        a.commit(add(f2)).await.expect("3");
        a.commit(|m| {
            remove(f1)(m);
            add(f3)(m);
        })
        .await
        .expect("4");
        let mut b = store
            .open_owner(Bytes::new(), Bytes::new())
            .await
            .expect("B"); // 5
        b.commit(remove(f2)).await.expect("6");
        b.commit(add(f4)).await.expect("7");

        for id in [f1, f2, f3, f4, orphan, pinned, young] {
            bucket
                .put(&sst_path(id), Bytes::from_static(b"sst"))
                .await
                .expect("put");
        }
        bucket
            .put(
                &format!("{DIR}/cf/not-a-ulid.sst"),
                Bytes::from_static(b"?"),
            )
            .await
            .expect("put");
        bucket
            .put(&format!("{DIR}/notes.txt"), Bytes::from_static(b"?"))
            .await
            .expect("put");

        let pins = FilePins::new();
        let guard = pins.pin(pinned);

        // Judged now, with the default grace: everything is recent; nothing goes.
        let report = b
            .gc(&GcOptions::at(SystemTime::now()), &pins)
            .await
            .expect("gc now");
        assert_eq!(
            (report.manifests_deleted, report.ssts_deleted),
            (0, 0),
            "{name}: {report:?}"
        );

        let report = b.gc(&later, &pins).await.expect("gc later");
        assert_eq!(
            report,
            GcReport {
                manifests_deleted: 4,     // 2, 3, 4, 6
                manifests_retained: 3,    // 1 and 5 (epoch-first), 7 (newest)
                epoch_fences_retained: 2, // 1 and 5
                ssts_deleted: 3,          // f1, f2, orphan
                ssts_referenced: 2,       // f3, f4
                ssts_pinned: 1,
                ssts_young: 1,
                ssts_unrecognized: 1,
            },
            "{name}"
        );
        for seq in [1, 5, 7] {
            assert!(
                exists(&bucket, &manifest_path(DIR, seq)).await,
                "{name}: slot {seq}"
            );
        }
        for seq in [2, 3, 4, 6] {
            assert!(
                !exists(&bucket, &manifest_path(DIR, seq)).await,
                "{name}: slot {seq}"
            );
        }
        for id in [f3, f4, pinned, young] {
            assert!(exists(&bucket, &sst_path(id)).await, "{name}: {id} kept");
        }
        for id in [f1, f2, orphan] {
            assert!(
                !exists(&bucket, &sst_path(id)).await,
                "{name}: {id} deleted"
            );
        }
        assert!(exists(&bucket, &format!("{DIR}/cf/not-a-ulid.sst")).await);
        assert!(exists(&bucket, &format!("{DIR}/notes.txt")).await);
        assert_eq!(
            store.load_latest().await.expect("load").as_ref(),
            Some(b.current())
        );

        // Unpinned, the file goes; the manifests left are all needed.
        drop(guard);
        let report = b.gc(&later, &pins).await.expect("gc again");
        assert_eq!(
            (report.manifests_deleted, report.ssts_deleted),
            (0, 1),
            "{name}: {report:?}"
        );
        assert!(!exists(&bucket, &sst_path(pinned)).await);

        // More commits and a third owner: the new epoch's fence is kept too.
        b.commit(remove(f3)).await.expect("8");
        let mut c = store
            .open_owner(Bytes::new(), Bytes::new())
            .await
            .expect("C"); // 9
        c.commit(add(f1)).await.expect("10");
        let report = c.gc(&later, &pins).await.expect("gc by C");
        // 7 and 8 go (7 is no longer newest); 1, 5, 9 stay as fences; 10 is newest.
        assert_eq!(report.manifests_deleted, 2, "{name}: {report:?}");
        assert_eq!(report.epoch_fences_retained, 3, "{name}: {report:?}");
        assert!(
            !exists(&bucket, &sst_path(f3)).await,
            "{name}: dropped by 8"
        );
        assert!(
            exists(&bucket, &sst_path(f4)).await,
            "{name}: still referenced"
        );
    }
}

#[tokio::test]
async fn recently_superseded_manifests_keep_their_files() {
    let bucket = Bucket::memory();
    let store = ManifestStore::new(bucket.clone(), DIR);
    let mut w = store
        .open_owner(Bytes::new(), Bytes::new())
        .await
        .expect("open");
    let old = id_at(SystemTime::now() - Duration::from_secs(7200), 1);
    bucket
        .put(&sst_path(old), Bytes::from_static(b"sst"))
        .await
        .expect("put");
    w.commit(add(old)).await.expect("add");
    w.commit(remove(old)).await.expect("remove");
    // A reader that loaded the previous version a moment ago may still read `old`.
    let report = w
        .gc(&GcOptions::at(SystemTime::now()), &FilePins::new())
        .await
        .expect("gc");
    assert_eq!(
        (report.ssts_deleted, report.ssts_referenced),
        (0, 1),
        "{report:?}"
    );
    assert!(exists(&bucket, &sst_path(old)).await);
}
