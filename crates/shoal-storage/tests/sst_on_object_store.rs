//! SSTs written to and read from real object stores — a local directory and a
//! real S3-compatible server (moto on 127.0.0.1) — through the multipart upload
//! sink and the ranged-GET fetcher: byte-exact round trips, request counts
//! (open ≤ 2 GETs, one GET per data block), and conditional-create conflicts.

mod support;

use bytes::Bytes;
use shoal_storage::cell::{Cell, KeyRef};
use shoal_storage::object::{Bucket, ObjectError, ObjectStoreConfig};
use shoal_storage::sst::{
    BucketFetcher, Compression, FileId, ScanRange, SstFile, SstReader, SstWriter, SstWriterOptions,
    UploadSink,
};
use std::sync::Arc;
use support::moto::MotoServer;

fn cell(i: u32) -> Cell {
    // ~1 KB of poorly compressible value per cell so the file spans several parts.
    let value: Vec<u8> = support::pattern(1000, u64::from(i));
    Cell::put(
        format!("user{i:010}"),
        "cf",
        "field0",
        1_700_000_000_000,
        u64::from(i),
        value,
    )
}

async fn round_trip(bucket: Bucket, cells: u32) {
    let id = FileId::generate();
    let path = format!("data/3f/t1/r1/cf/{id}.sst");
    let sink = UploadSink::new(&bucket, &path).await.expect("start upload");
    let options = SstWriterOptions {
        compression: Compression::Zstd,
        ..SstWriterOptions::default()
    };
    let mut writer = SstWriter::new(id, &path, "cf", options, sink).expect("writer");
    for i in 0..cells {
        writer.add(&cell(i)).await.expect("add");
    }
    let summary = writer.finish().await.expect("finish");
    assert_eq!(bucket.head(&path).await.expect("head").size, summary.size);

    let before = bucket.metrics();
    let reader = SstReader::open(
        Arc::new(BucketFetcher::new(bucket.clone())),
        SstFile {
            id,
            path: path.clone(),
        },
    )
    .await
    .expect("open");
    let after = bucket.metrics();
    let gets =
        |m: &shoal_storage::object::ObjectMetricsSnapshot| m.get.requests + m.ranged_get.requests;
    assert!(
        gets(&after) - gets(&before) <= 2,
        "open took {} GETs",
        gets(&after) - gets(&before)
    );
    assert_eq!(reader.meta(), &summary.meta);

    // A point lookup costs exactly one ranged GET.
    let before = bucket.metrics();
    let row = format!("user{:010}", cells / 2);
    let got = reader
        .first_at_or_after(KeyRef::first_of_row(row.as_bytes()))
        .await
        .expect("lookup");
    assert_eq!(got, Some(cell(cells / 2)));
    let after = bucket.metrics();
    assert_eq!(after.ranged_get.requests - before.ranged_get.requests, 1);

    // Full scan: byte-exact, one GET per data block.
    let before = bucket.metrics();
    let mut it = reader.iter(ScanRange::all());
    let mut n = 0u32;
    while let Some(c) = it.next().await.expect("scan") {
        assert_eq!(c, cell(n));
        n += 1;
    }
    assert_eq!(n, cells);
    let after = bucket.metrics();
    assert_eq!(
        after.ranged_get.requests - before.ranged_get.requests,
        reader.data_block_count() as u64
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sst_round_trips_on_a_local_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bucket = Bucket::open(&ObjectStoreConfig::local(dir.path()))
        .await
        .expect("open");
    round_trip(bucket, 20_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sst_round_trips_on_s3() {
    let server = MotoServer::start();
    let bucket = Bucket::open(&server.bucket_config("ssts"))
        .await
        .expect("open");
    // ~20 MB: several multipart parts.
    round_trip(bucket.clone(), 20_000).await;
    assert!(
        bucket.metrics().multipart.requests > 0,
        "large SST went through multipart upload"
    );
    // A small file is a single PUT.
    round_trip(bucket, 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_create_conflicts_on_s3() {
    let server = MotoServer::start();
    let bucket = Bucket::open(&server.bucket_config("cas"))
        .await
        .expect("open");
    let path = "data/3f/t1/r1/manifest/00000000000000000001";
    bucket
        .create_if_absent(path, Bytes::from_static(b"writer-a"))
        .await
        .expect("first create");
    let err = bucket
        .create_if_absent(path, Bytes::from_static(b"writer-b"))
        .await
        .expect_err("second create");
    assert!(matches!(err, ObjectError::AlreadyExists { .. }), "{err}");
    assert_eq!(
        bucket.get(path).await.expect("get"),
        Bytes::from_static(b"writer-a")
    );
}
