//! The object-store layer against a real S3-compatible server (moto): every request
//! kind, multipart uploads, conditional creates (including the ambiguous-timeout case),
//! bucket and endpoint failures at open, and per-operation metrics.

mod support;

use std::time::{Duration, Instant};

use bytes::Bytes;
use shoal_storage::object::{BackendConfig, Bucket, Faults, ObjectError, Op};
use support::moto::{MotoServer, closed_port, s3_config};
use support::pattern;

async fn open(server: &MotoServer, bucket: &str) -> Bucket {
    Bucket::open(&server.bucket_config(bucket))
        .await
        .unwrap_or_else(|e| panic!("open {bucket}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_kind_round_trips() {
    let server = MotoServer::start();
    let b = open(&server, "roundtrip").await;
    let data = Bytes::from(pattern(10_000, 1));
    let key = "data/3f/t1/r1/cf/01J0000000000000000000000.sst";

    b.put(key, data.clone()).await.expect("put");
    assert_eq!(b.get(key).await.expect("get"), data);
    assert_eq!(
        b.get_range(key, 100..1100).await.expect("ranged get"),
        data.slice(100..1100)
    );
    let (tail, size) = b.get_suffix(key, 64).await.expect("suffix");
    assert_eq!((tail, size), (data.slice(10_000 - 64..), 10_000));
    let (all, size) = b.get_suffix(key, 1 << 20).await.expect("long suffix");
    assert_eq!((all, size), (data.clone(), 10_000));
    match b.get_range(key, 9_000..11_000).await {
        Err(ObjectError::RangeOutOfBounds { size, .. }) => assert_eq!(size, Some(10_000)),
        other => panic!("expected RangeOutOfBounds, got {other:?}"),
    }

    let info = b.head(key).await.expect("head");
    assert_eq!((info.path.as_str(), info.size), (key, 10_000));

    for i in 0..5 {
        b.put(
            &format!("data/3f/t1/r1/cf/{i}.sst"),
            Bytes::from_static(b"x"),
        )
        .await
        .expect("put");
    }
    b.put("data/3fa/other", Bytes::from_static(b"y"))
        .await
        .expect("put");
    let listed = b.list("data/3f").await.expect("list");
    assert_eq!(listed.len(), 6, "{listed:?}");
    assert!(listed.iter().all(|i| i.path.starts_with("data/3f/")));
    assert_eq!(b.list("").await.expect("list all").len(), 7);

    b.delete(key).await.expect("delete");
    b.delete(key)
        .await
        .expect("deleting a missing object is fine");
    assert!(matches!(
        b.get(key).await,
        Err(ObjectError::NotFound { op: Op::Get, .. })
    ));
    let victims: Vec<String> = (0..5)
        .map(|i| format!("data/3f/t1/r1/cf/{i}.sst"))
        .collect();
    b.delete_many(victims).await.expect("delete_many");
    let rest: Vec<String> = b
        .list("")
        .await
        .expect("list")
        .into_iter()
        .map(|i| i.path)
        .collect();
    assert_eq!(rest, ["data/3fa/other"]);

    let empty = "empty/object";
    b.put(empty, Bytes::new()).await.expect("put empty");
    assert_eq!(
        b.get_suffix(empty, 16).await.expect("suffix of empty"),
        (Bytes::new(), 0)
    );

    let m = b.metrics();
    assert_eq!(m.put.requests, 8);
    assert_eq!(m.put.bytes, 10_000 + 6);
    assert_eq!(m.get.requests, 2);
    assert_eq!(m.get.bytes, 10_000);
    assert!(m.ranged_get.requests >= 4);
    // The out-of-bounds read transferred the 1,000 bytes that did exist.
    assert_eq!(m.ranged_get.bytes, 1000 + 64 + 10_000 + 1000);
    // One explicit HEAD, one from the suffix read of the empty object.
    assert_eq!(m.head.requests, 2);
    assert!(m.list.requests >= 3, "probe + listings: {:?}", m.list);
    assert_eq!(m.delete.requests, 3);
    assert_eq!(m.get.errors + m.put.errors + m.delete.errors, 0);
    assert!(m.put.latency.sum_us > 0 && m.put.latency.max_us > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multipart_upload_reads_back_byte_exact() {
    let server = MotoServer::start();
    let b = open(&server, "multipart").await;
    let data = Bytes::from(pattern(20 * 1024 * 1024 + 4321, 7));
    let mut upload = b.upload("data/ab/big.sst").await.expect("upload");
    // Odd-sized writes, so parts are cut across write boundaries.
    for chunk in data.chunks(3 * 1024 * 1024 + 17) {
        upload.write(data.slice_ref(chunk)).await.expect("write");
    }
    assert_eq!(upload.finish().await.expect("finish"), data.len() as u64);

    let read = b.get("data/ab/big.sst").await.expect("get");
    assert_eq!(read.len(), data.len());
    assert!(
        read == data,
        "multipart object differs from what was written"
    );
    let m = b.metrics();
    // create + 3 parts (8 + 8 + 4 MiB) + complete.
    assert_eq!(m.multipart.requests, 5, "{:?}", m.multipart);
    assert_eq!(m.multipart.bytes, data.len() as u64);
    assert_eq!(m.put.requests, 0);

    // Smaller than one part: a single PUT.
    let mut small = b.upload("data/ab/small.sst").await.expect("upload");
    small
        .write(Bytes::from_static(b"tiny"))
        .await
        .expect("write");
    assert_eq!(small.finish().await.expect("finish"), 4);
    assert_eq!(b.get("data/ab/small.sst").await.expect("get"), "tiny");
    assert_eq!(b.metrics().put.requests, 1);

    // Aborted: nothing visible.
    let mut aborted = b.upload("data/ab/aborted.sst").await.expect("upload");
    aborted
        .write(Bytes::from(pattern(9 * 1024 * 1024, 3)))
        .await
        .expect("write");
    aborted.abort().await.expect("abort");
    assert!(!b.exists("data/ab/aborted.sst").await.expect("exists"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_if_absent_succeeds_once() {
    let server = MotoServer::start();
    let b = open(&server, "conditional").await;
    let path = "data/ab/t1/r1/manifest/00000000000000000001";
    b.create_if_absent(path, Bytes::from_static(b"writer=A"))
        .await
        .expect("first create");
    match b
        .create_if_absent(path, Bytes::from_static(b"writer=B"))
        .await
    {
        Err(ObjectError::AlreadyExists { path: p }) => assert_eq!(p, path),
        other => panic!("expected AlreadyExists, got {other:?}"),
    }
    assert_eq!(b.get(path).await.expect("get"), "writer=A");
    let m = b.metrics();
    assert_eq!(m.conditional_put.requests, 2);
    assert_eq!(
        m.conditional_put.errors, 0,
        "a lost race is an answer, not an error"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ambiguous_create_resolves_by_reading_back() {
    let server = MotoServer::start();
    let faults = Faults::new();
    let b = open(&server, "ambiguous").await.with_faults(faults.clone());

    // Applied by S3, reported to us as a timeout; the retry sees AlreadyExists, reads
    // the object back, finds our bytes: Ok.
    faults.timeout_after_apply_next(Op::ConditionalPut, 1);
    b.create_if_absent("m/1", Bytes::from_static(b"writer=A token=01J1"))
        .await
        .expect("our own ambiguous write resolves to Ok");
    assert_eq!(faults.fired(Op::ConditionalPut), 1);
    let m = b.metrics();
    assert_eq!(m.conditional_put.requests, 2);
    assert_eq!(m.conditional_put.retries, 1);
    assert_eq!(m.get.requests, 1);

    // Our attempt timed out, and meanwhile another writer created the object.
    let other = open_same(&server, "ambiguous").await;
    other
        .create_if_absent("m/2", Bytes::from_static(b"writer=B token=01J2"))
        .await
        .expect("foreign create");
    faults.timeout_next(Op::ConditionalPut, 1);
    match b
        .create_if_absent("m/2", Bytes::from_static(b"writer=A token=01J3"))
        .await
    {
        Err(ObjectError::AlreadyExists { .. }) => {}
        other => panic!("expected AlreadyExists, got {other:?}"),
    }
    assert_eq!(
        b.get("m/2").await.expect("get"),
        "writer=B token=01J2",
        "the foreign object is untouched"
    );
}

async fn open_same(server: &MotoServer, bucket: &str) -> Bucket {
    Bucket::open(&server.config(bucket)).await.expect("open")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_failures_and_throttling_are_retried_against_s3() {
    let server = MotoServer::start();
    let faults = Faults::new();
    let b = open(&server, "retries").await.with_faults(faults.clone());
    faults.throttle_next(Op::Put, 2);
    faults.fail_next(Op::Get, 1);
    b.put("k", Bytes::from_static(b"v"))
        .await
        .expect("put after throttling");
    assert_eq!(b.get("k").await.expect("get after a 500"), "v");
    let m = b.metrics();
    assert_eq!((m.put.requests, m.put.errors, m.put.retries), (3, 2, 2));
    assert_eq!((m.get.requests, m.get.errors, m.get.retries), (2, 1, 1));

    // A part that fails is retried in place; the object is still byte-exact.
    faults.fail_next(Op::Multipart, 2);
    let data = Bytes::from(pattern(b.part_size() + 1000, 9));
    let mut up = b.upload("retried/part").await.expect("upload");
    up.write(data.clone()).await.expect("write");
    up.finish().await.expect("finish");
    assert_eq!(b.get("retried/part").await.expect("get"), data);
    assert_eq!(b.metrics().multipart.retries, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bucket_prefix_is_applied_and_stripped() {
    let server = MotoServer::start();
    server.create_bucket("prefixed");
    let mut config = server.config("prefixed");
    if let BackendConfig::S3(s3) = &mut config.backend {
        s3.prefix = "cluster-1/prod".to_owned();
    }
    let b = Bucket::open(&config).await.expect("open");
    assert_eq!(b.location(), "s3://prefixed/cluster-1/prod");
    b.put("catalog/manifest/1", Bytes::from_static(b"m"))
        .await
        .expect("put");
    let listed = b.list("catalog").await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].path, "catalog/manifest/1");

    let root = open_same(&server, "prefixed").await;
    assert_eq!(
        root.get("cluster-1/prod/catalog/manifest/1")
            .await
            .expect("raw key"),
        "m"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_bucket_is_a_clear_error_at_open() {
    let server = MotoServer::start();
    let start = Instant::now();
    match Bucket::open(&server.config("no-such-bucket")).await {
        Err(e @ ObjectError::BucketNotFound { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("no-such-bucket"), "{msg}");
        }
        other => panic!("expected BucketNotFound, got {other:?}"),
    }
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_endpoint_fails_fast() {
    let endpoint = format!("http://127.0.0.1:{}", closed_port());
    let config = s3_config(&endpoint, "anything");
    let start = Instant::now();
    match Bucket::open(&config).await {
        Err(e @ ObjectError::Unreachable { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&endpoint), "{msg}");
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}
