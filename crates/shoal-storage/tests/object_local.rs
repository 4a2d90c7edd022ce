//! The object-store layer on the local-disk backend (the embedded default): conditional
//! create, multipart uploads, suffix reads, and retries of injected transient failures
//! and throttling, with exhausted retries giving a `Transient` error that names the
//! operation and the object.

mod support;

use std::time::Duration;

use bytes::Bytes;
use shoal_storage::object::{Bucket, Faults, ObjectError, ObjectStoreConfig, Op, RetryPolicy};
use support::pattern;

fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(10),
        deadline: Duration::from_secs(10),
    }
}

async fn local(dir: &tempfile::TempDir) -> Bucket {
    // A root that does not exist yet: open creates it.
    let mut config = ObjectStoreConfig::local(dir.path().join("store/root"));
    config.retry = quick_retries();
    Bucket::open(&config).await.expect("open local bucket")
}

#[tokio::test]
async fn open_creates_the_root_and_round_trips() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = local(&dir).await;
    assert!(dir.path().join("store/root").is_dir());
    let data = Bytes::from(pattern(4096, 1));
    b.put("data/ab/t/r/cf/1.sst", data.clone())
        .await
        .expect("put");
    assert!(dir.path().join("store/root/data/ab/t/r/cf/1.sst").is_file());
    assert_eq!(b.get("data/ab/t/r/cf/1.sst").await.expect("get"), data);
    assert_eq!(
        b.get_range("data/ab/t/r/cf/1.sst", 10..20)
            .await
            .expect("range"),
        data.slice(10..20)
    );
    let listed = b.list("data").await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].path, "data/ab/t/r/cf/1.sst");
    assert!(b.list("nothing/here").await.expect("empty list").is_empty());
    b.delete("data/ab/t/r/cf/1.sst").await.expect("delete");
    b.delete("data/ab/t/r/cf/1.sst")
        .await
        .expect("delete missing");
}

#[tokio::test]
async fn suffix_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = local(&dir).await;
    let data = Bytes::from(pattern(1000, 2));
    b.put("f", data.clone()).await.expect("put");
    assert_eq!(
        b.get_suffix("f", 48).await.expect("suffix"),
        (data.slice(952..), 1000)
    );
    assert_eq!(
        b.get_suffix("f", 5000).await.expect("suffix"),
        (data.clone(), 1000)
    );
    b.put("empty", Bytes::new()).await.expect("put");
    assert_eq!(
        b.get_suffix("empty", 48).await.expect("suffix"),
        (Bytes::new(), 0)
    );
    assert!(matches!(
        b.get_suffix("missing", 48).await,
        Err(ObjectError::NotFound {
            op: Op::RangedGet,
            ..
        })
    ));
}

#[tokio::test]
async fn create_if_absent_is_exclusive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = local(&dir).await;
    b.create_if_absent("m/1", Bytes::from_static(b"A"))
        .await
        .expect("first");
    assert!(matches!(
        b.create_if_absent("m/1", Bytes::from_static(b"B")).await,
        Err(ObjectError::AlreadyExists { .. })
    ));
    assert_eq!(b.get("m/1").await.expect("get"), "A");

    // Many concurrent creators: exactly one wins.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let b = b.clone();
        tasks.push(tokio::spawn(async move {
            b.create_if_absent("m/2", Bytes::from(format!("writer {i}")))
                .await
        }));
    }
    let mut winners = 0;
    for task in tasks {
        match task.await.expect("join") {
            Ok(()) => winners += 1,
            Err(ObjectError::AlreadyExists { .. }) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!(winners, 1);
}

#[tokio::test]
async fn ambiguous_create_on_local_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let faults = Faults::new();
    let b = local(&dir).await.with_faults(faults.clone());
    faults.timeout_after_apply_next(Op::ConditionalPut, 1);
    b.create_if_absent("m/1", Bytes::from_static(b"ours token=1"))
        .await
        .expect("own write resolves to Ok");
    b.put("m/2", Bytes::from_static(b"theirs"))
        .await
        .expect("put");
    faults.timeout_next(Op::ConditionalPut, 1);
    assert!(matches!(
        b.create_if_absent("m/2", Bytes::from_static(b"ours token=2"))
            .await,
        Err(ObjectError::AlreadyExists { .. })
    ));
}

#[tokio::test]
async fn multipart_upload_on_local_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let faults = Faults::new();
    let b = local(&dir).await.with_faults(faults.clone());
    let data = Bytes::from(pattern(2 * b.part_size() + 777, 5));
    // An injected failure before the disk is touched is retried in place, and
    // so is one after the part reached the disk: parts have fixed offsets.
    faults.fail_next(Op::Multipart, 1);
    let mut up = b.upload("data/ab/big.sst").await.expect("upload");
    for (i, chunk) in data.chunks(1_234_567).enumerate() {
        if i == 5 {
            faults.timeout_after_apply_next(Op::Multipart, 1);
        }
        up.write(data.slice_ref(chunk)).await.expect("write");
    }
    // The completion's rename happens, then the answer is lost: the retry
    // finds the object in place.
    faults.timeout_after_apply_next(Op::Multipart, 1);
    assert_eq!(up.finish().await.expect("finish"), data.len() as u64);
    assert!(b.get("data/ab/big.sst").await.expect("get") == data);
    let m = b.metrics();
    assert_eq!(m.multipart.retries, 3);
    assert_eq!(m.multipart.bytes, data.len() as u64);
    // No staging files left behind.
    let listed = b.list("data").await.expect("list");
    assert_eq!(listed.len(), 1, "{listed:?}");

    let mut aborted = b.upload("data/ab/aborted.sst").await.expect("upload");
    aborted
        .write(Bytes::from(pattern(b.part_size() + 1, 6)))
        .await
        .expect("write");
    aborted.abort().await.expect("abort");
    assert!(!b.exists("data/ab/aborted.sst").await.expect("exists"));
    // Nothing but the completed object is on the disk (no staging files).
    let names: Vec<String> = std::fs::read_dir(dir.path().join("store/root/data/ab"))
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["big.sst".to_string()]);
}

#[tokio::test]
async fn transient_failures_and_throttling_are_retried_and_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let faults = Faults::new();
    let b = local(&dir).await.with_faults(faults.clone());
    faults.fail_next(Op::Put, 2);
    faults.throttle_next(Op::Put, 1);
    b.put("k", Bytes::from_static(b"value")).await.expect("put");
    faults.throttle_next(Op::Get, 3);
    assert_eq!(b.get("k").await.expect("get"), "value");
    faults.timeout_next(Op::List, 1);
    assert_eq!(b.list("").await.expect("list").len(), 1);
    let m = b.metrics();
    assert_eq!((m.put.requests, m.put.errors, m.put.retries), (4, 3, 3));
    assert_eq!((m.get.requests, m.get.errors, m.get.retries), (4, 3, 3));
    assert_eq!((m.list.requests, m.list.retries), (2, 1));
    assert_eq!(m.put.bytes, 5);
    assert_eq!(m.get.bytes, 5);
}

#[tokio::test]
async fn exhausted_retries_name_the_operation_and_object() {
    let dir = tempfile::tempdir().expect("tempdir");
    let faults = Faults::new();
    let b = local(&dir).await.with_faults(faults.clone());
    b.put("data/ab/x.sst", Bytes::from_static(b"v"))
        .await
        .expect("put");
    faults.throttle_next(Op::RangedGet, 100);
    match b.get_range("data/ab/x.sst", 0..1).await {
        Err(e @ ObjectError::Transient { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("ranged_get"), "{msg}");
            assert!(msg.contains("data/ab/x.sst"), "{msg}");
            assert!(msg.contains("4 attempt"), "{msg}");
            let ObjectError::Transient { op, attempts, .. } = e else {
                unreachable!()
            };
            assert_eq!((op, attempts), (Op::RangedGet, 4));
        }
        other => panic!("expected Transient, got {other:?}"),
    }
    assert_eq!(faults.pending(Op::RangedGet), 96);
    let m = b.metrics();
    assert_eq!((m.ranged_get.requests, m.ranged_get.retries), (4, 3));

    // Not-found is never retried.
    faults.clear();
    assert!(matches!(
        b.get("missing").await,
        Err(ObjectError::NotFound { .. })
    ));
    assert_eq!(b.metrics().get.requests, 1);
}
