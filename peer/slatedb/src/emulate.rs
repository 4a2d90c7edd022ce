//! The emulated object store SlateDB runs on: an `object_store::ObjectStore` wrapper
//! that adds S3-like latency and bandwidth to every request and counts requests.
//!
//! It reproduces the model of Shoal's own emulation layer
//! (`crates/shoal-storage/src/object/emulate.rs`, which is crate-private): each
//! request first waits `latency ± jitter` (uniform, time to first byte), then
//! `bytes / bandwidth` for the payload it sends and for the payload it receives.
//! Bandwidth is per request, so concurrent requests do not slow each other down.
//!
//! One difference from a plain local directory, on purpose: `LocalFileSystem` refuses
//! puts that carry object attributes, which S3 stores as metadata. SlateDB tags its
//! conditional puts with an attribute and retries without it on refusal; on the
//! emulated S3 that would cost a second round trip S3 does not need. The wrapper
//! drops attributes before the local call, so each put is one emulated request.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    Attributes, CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result,
    UploadPart,
};
use rand::Rng;

/// Latency and bandwidth of the emulated store (the same three numbers as Shoal's
/// `object::Emulation`).
#[derive(Debug, Clone, Copy)]
pub struct Model {
    /// Time to first byte.
    pub latency: Duration,
    /// Uniform jitter around `latency`.
    pub jitter: Duration,
    /// Payload bytes per second of one request; 0 = unlimited.
    pub bandwidth_bytes_per_sec: u64,
}

impl Model {
    fn first_byte_delay(&self) -> Duration {
        let jitter_us = u64::try_from(self.jitter.as_micros()).unwrap_or(u64::MAX);
        if jitter_us == 0 {
            return self.latency;
        }
        let offset = rand::rng().random_range(0..=jitter_us.saturating_mul(2));
        self.latency
            .saturating_sub(Duration::from_micros(jitter_us))
            + Duration::from_micros(offset)
    }

    fn transfer_delay(&self, bytes: u64) -> Duration {
        if self.bandwidth_bytes_per_sec == 0 || bytes == 0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(bytes as f64 / self.bandwidth_bytes_per_sec as f64)
    }

    async fn first_byte(&self) {
        sleep(self.first_byte_delay()).await;
    }

    async fn transfer(&self, bytes: u64) {
        sleep(self.transfer_delay(bytes)).await;
    }
}

async fn sleep(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

/// Requests sent to the store so far (monotonic).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Requests {
    /// GETs, whole or ranged.
    pub gets: u64,
    /// PUTs: single puts, multipart creates, parts and completes.
    pub puts: u64,
    /// Everything else: HEAD, LIST, DELETE, COPY, RENAME.
    pub other: u64,
    /// Payload bytes received by GETs.
    pub get_bytes: u64,
    /// Payload bytes sent by PUTs.
    pub put_bytes: u64,
}

impl Requests {
    /// `self - earlier`.
    pub fn since(&self, earlier: &Requests) -> Requests {
        Requests {
            gets: self.gets.saturating_sub(earlier.gets),
            puts: self.puts.saturating_sub(earlier.puts),
            other: self.other.saturating_sub(earlier.other),
            get_bytes: self.get_bytes.saturating_sub(earlier.get_bytes),
            put_bytes: self.put_bytes.saturating_sub(earlier.put_bytes),
        }
    }
}

#[derive(Debug, Default)]
struct Counters {
    gets: AtomicU64,
    puts: AtomicU64,
    other: AtomicU64,
    get_bytes: AtomicU64,
    put_bytes: AtomicU64,
}

impl Counters {
    fn put(&self, bytes: u64) {
        self.puts.fetch_add(1, Ordering::Relaxed);
        self.put_bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}

/// An object store with emulated latency and bandwidth in front of `inner`.
#[derive(Debug, Clone)]
pub struct EmulatedStore {
    inner: Arc<dyn ObjectStore>,
    model: Model,
    counters: Arc<Counters>,
}

impl EmulatedStore {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ObjectStore>, model: Model) -> EmulatedStore {
        EmulatedStore {
            inner,
            model,
            counters: Arc::new(Counters::default()),
        }
    }

    /// The requests sent so far.
    pub fn requests(&self) -> Requests {
        let c = &self.counters;
        Requests {
            gets: c.gets.load(Ordering::Relaxed),
            puts: c.puts.load(Ordering::Relaxed),
            other: c.other.load(Ordering::Relaxed),
            get_bytes: c.get_bytes.load(Ordering::Relaxed),
            put_bytes: c.put_bytes.load(Ordering::Relaxed),
        }
    }

    async fn other_request(&self) {
        self.counters.other.fetch_add(1, Ordering::Relaxed);
        self.model.first_byte().await;
    }

    /// A stream that waits one first-byte latency before its first item.
    fn delayed<T: Send + 'static>(
        &self,
        stream: BoxStream<'static, Result<T>>,
    ) -> BoxStream<'static, Result<T>> {
        self.counters.other.fetch_add(1, Ordering::Relaxed);
        let delay = self.model.first_byte_delay();
        futures::stream::once(async move {
            sleep(delay).await;
            stream
        })
        .flatten()
        .boxed()
    }
}

impl fmt::Display for EmulatedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Emulated({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for EmulatedStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        let bytes = payload.content_length() as u64;
        self.counters.put(bytes);
        self.model.first_byte().await;
        self.model.transfer(bytes).await;
        let opts = PutOptions {
            attributes: Attributes::new(),
            ..opts
        };
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.counters.put(0);
        self.model.first_byte().await;
        let opts = PutMultipartOptions {
            attributes: Attributes::new(),
            ..opts
        };
        let inner = self.inner.put_multipart_opts(location, opts).await?;
        Ok(Box::new(EmulatedUpload {
            inner,
            model: self.model,
            counters: self.counters.clone(),
        }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if options.head {
            self.counters.other.fetch_add(1, Ordering::Relaxed);
        } else {
            self.counters.gets.fetch_add(1, Ordering::Relaxed);
        }
        self.model.first_byte().await;
        let head = options.head;
        let result = self.inner.get_opts(location, options).await?;
        if !head {
            let bytes = result.range.end.saturating_sub(result.range.start);
            self.counters.get_bytes.fetch_add(bytes, Ordering::Relaxed);
            self.model.transfer(bytes).await;
        }
        Ok(result)
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        // One request per range, each emulated (as the default, coalescing aside).
        let mut out = Vec::with_capacity(ranges.len());
        for range in ranges {
            let options = GetOptions {
                range: Some(range.clone().into()),
                ..GetOptions::default()
            };
            out.push(self.get_opts(location, options).await?.bytes().await?);
        }
        Ok(out)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        let stream = self.inner.delete_stream(locations);
        self.delayed(stream)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let stream = self.inner.list(prefix);
        self.delayed(stream)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, Result<ObjectMeta>> {
        let stream = self.inner.list_with_offset(prefix, offset);
        self.delayed(stream)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.other_request().await;
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.other_request().await;
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.other_request().await;
        self.inner.rename_opts(from, to, options).await
    }
}

/// A multipart upload whose parts and completion are emulated requests.
#[derive(Debug)]
struct EmulatedUpload {
    inner: Box<dyn MultipartUpload>,
    model: Model,
    counters: Arc<Counters>,
}

#[async_trait]
impl MultipartUpload for EmulatedUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let bytes = data.content_length() as u64;
        self.counters.put(bytes);
        let model = self.model;
        let part = self.inner.put_part(data);
        Box::pin(async move {
            model.first_byte().await;
            model.transfer(bytes).await;
            part.await
        })
    }

    async fn complete(&mut self) -> Result<PutResult> {
        self.counters.put(0);
        self.model.first_byte().await;
        self.inner.complete().await
    }

    async fn abort(&mut self) -> Result<()> {
        self.counters.other.fetch_add(1, Ordering::Relaxed);
        self.model.first_byte().await;
        self.inner.abort().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::ObjectStoreExt;
    use object_store::memory::InMemory;

    #[tokio::test(start_paused = true)]
    async fn requests_wait_and_are_counted() -> anyhow::Result<()> {
        let model = Model {
            latency: Duration::from_millis(30),
            jitter: Duration::ZERO,
            bandwidth_bytes_per_sec: 1_000_000,
        };
        let store = EmulatedStore::new(Arc::new(InMemory::new()), model);
        let path = Path::from("a/b");
        let start = tokio::time::Instant::now();
        store.put(&path, vec![0u8; 500_000].into()).await?;
        assert_eq!(start.elapsed(), Duration::from_millis(530));
        let start = tokio::time::Instant::now();
        let got = store.get_range(&path, 0..100_000).await?;
        assert_eq!(got.len(), 100_000);
        assert_eq!(start.elapsed(), Duration::from_millis(130));
        let r = store.requests();
        assert_eq!(
            (r.gets, r.puts, r.get_bytes, r.put_bytes),
            (1, 1, 100_000, 500_000)
        );
        Ok(())
    }
}
