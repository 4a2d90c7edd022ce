//! [`Bucket`]: the one door through which every byte reaches the object store.
//!
//! Each public method validates the key, maps it under the bucket prefix, and drives
//! attempts through [`Inner::attempt`] — emulated latency, then injected faults, then the
//! backend — inside a retry loop ([`Retrier`]), recording every attempt in the metrics.
//!
//! Idempotent requests (get, head, list, delete, and unconditional put, which callers only
//! use for fresh unique names) are retried as they are. A create-if-absent is not: see
//! [`Bucket::create_if_absent`].

use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{
    GetOptions, GetRange, ObjectMeta, ObjectStore, PutMode, PutOptions, PutPayload,
};
use tokio::time::Instant;

use super::backend::{Backend, probe_timeout};
use super::config::{DEFAULT_PART_SIZE, Emulation, ObjectStoreConfig, RetryPolicy};
use super::emulate::Emulator;
use super::error::ObjectError;
use super::faults::Faults;
use super::metrics::{AttemptRecord, ObjectMetrics, ObjectMetricsSnapshot, Op};
use super::path::KeySpace;
use super::retry::{Failure, FailureKind, Retrier};
use super::upload::Upload;

/// Largest number of keys in one batched delete request (S3's limit).
const DELETE_BATCH: usize = 1000;

/// Metadata of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Key relative to the bucket prefix (what the caller passed to `put`).
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// When the object was last written, as reported by the store.
    pub last_modified: SystemTime,
    /// The store's entity tag, if it reports one.
    pub e_tag: Option<String>,
}

impl ObjectInfo {
    fn from_meta(path: String, meta: ObjectMeta) -> ObjectInfo {
        ObjectInfo {
            path,
            size: meta.size,
            last_modified: meta.last_modified.into(),
            e_tag: meta.e_tag,
        }
    }
}

/// A handle on one bucket (or local directory) under an optional key prefix.
///
/// Cheap to clone; clones share the client, the metrics and any attached [`Faults`].
#[derive(Clone)]
pub struct Bucket {
    pub(super) inner: Arc<Inner>,
}

#[derive(Clone)]
pub(super) struct Inner {
    store: Arc<dyn ObjectStore>,
    pub(super) multipart: Option<Arc<dyn MultipartStore>>,
    pub(super) local: Option<Arc<object_store::local::LocalFileSystem>>,
    lister: Option<Arc<dyn PaginatedListStore>>,
    keys: KeySpace,
    location: String,
    bucket_name: String,
    endpoint: String,
    /// False where the store refuses suffix ranges (Azure): a suffix read is
    /// then a HEAD and a ranged GET.
    suffix_ranges: bool,
    pub(super) retry: RetryPolicy,
    emulator: Option<Emulator>,
    faults: Option<Faults>,
    pub(super) metrics: Arc<ObjectMetrics>,
    pub(super) part_size: usize,
}

impl fmt::Debug for Bucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bucket")
            .field("location", &self.inner.location)
            .field("retry", &self.inner.retry)
            .field("emulated", &self.inner.emulator.is_some())
            .field("faults", &self.inner.faults)
            .finish()
    }
}

impl Bucket {
    /// Builds the backend from `config` and checks it is usable. For remote stores this is
    /// one bounded LIST of at most one key under the prefix: a missing bucket gives
    /// [`ObjectError::BucketNotFound`], an endpoint that cannot be reached gives
    /// [`ObjectError::Unreachable`] within about `connect_timeout + 5s`, never a hang.
    /// For the local backend the root directory is created if missing.
    pub async fn open(config: &ObjectStoreConfig) -> Result<Bucket, ObjectError> {
        config.validate()?;
        let backend = Backend::build(config).await?;
        let part_size = usize::try_from(config.upload_part_size).map_err(|_| {
            ObjectError::invalid_config("upload_part_size", "too large for this platform")
        })?;
        let bucket = Bucket::from_backend(
            backend,
            config.retry.clone(),
            config.emulate.clone(),
            part_size,
        );
        bucket.probe(config).await?;
        Ok(bucket)
    }

    /// An in-memory bucket for tests (default retry policy, no emulation).
    pub fn memory() -> Bucket {
        Bucket::from_backend(
            Backend::memory(),
            RetryPolicy::default(),
            None,
            DEFAULT_PART_SIZE as usize,
        )
    }

    fn from_backend(
        backend: Backend,
        retry: RetryPolicy,
        emulate: Option<Emulation>,
        part_size: usize,
    ) -> Bucket {
        Bucket {
            inner: Arc::new(Inner {
                store: backend.store,
                multipart: backend.multipart,
                local: backend.local,
                lister: backend.lister,
                keys: backend.keys,
                location: backend.location,
                bucket_name: backend.bucket,
                endpoint: backend.endpoint,
                suffix_ranges: backend.suffix_ranges,
                retry,
                emulator: emulate.map(Emulator::new),
                faults: None,
                metrics: Arc::default(),
                part_size,
            }),
        }
    }

    fn with_inner(self, change: impl FnOnce(&mut Inner)) -> Bucket {
        let mut inner = Arc::unwrap_or_clone(self.inner);
        change(&mut inner);
        Bucket {
            inner: Arc::new(inner),
        }
    }

    /// This bucket with `faults` injected into every request (test tooling). The returned
    /// handle shares the store and the metrics with `self`.
    pub fn with_faults(self, faults: Faults) -> Bucket {
        self.with_inner(|inner| inner.faults = Some(faults))
    }

    /// This bucket with another retry policy (shares store and metrics).
    pub fn with_retry_policy(self, policy: RetryPolicy) -> Bucket {
        self.with_inner(|inner| inner.retry = policy)
    }

    /// This bucket with emulated latency and bandwidth, or none (shares store and
    /// metrics).
    pub fn with_emulation(self, emulation: Option<Emulation>) -> Bucket {
        self.with_inner(|inner| inner.emulator = emulation.map(Emulator::new))
    }

    /// Where this bucket lives, e.g. `s3://bucket/prefix` or `file:///var/lib/shoal`.
    pub fn location(&self) -> &str {
        &self.inner.location
    }

    /// The part size of [`Bucket::upload`].
    pub fn part_size(&self) -> usize {
        self.inner.part_size
    }

    /// The retry policy in force.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// A snapshot of the request metrics (shared by every clone of this bucket).
    pub fn metrics(&self) -> ObjectMetricsSnapshot {
        self.inner.metrics.snapshot()
    }

    /// The whole object.
    pub async fn get(&self, path: &str) -> Result<Bytes, ObjectError> {
        let key = self.inner.keys.object(path)?;
        let (store, key) = (&self.inner.store, &key);
        self.inner
            .run(Op::Get, path, 0, || async move {
                let bytes = store
                    .get_opts(key, GetOptions::default())
                    .await?
                    .bytes()
                    .await?;
                let len = bytes.len() as u64;
                Ok((bytes, len))
            })
            .await
    }

    /// Exactly the bytes `range` of the object. An empty range returns no bytes without
    /// a request; a range reaching past the end of the object is
    /// [`ObjectError::RangeOutOfBounds`] (a truncated file or a wrong offset), never a
    /// short read.
    pub async fn get_range(&self, path: &str, range: Range<u64>) -> Result<Bytes, ObjectError> {
        let key = self.inner.keys.object(path)?;
        if range.start >= range.end {
            if range.start == range.end {
                return Ok(Bytes::new());
            }
            return Err(ObjectError::RangeOutOfBounds {
                op: Op::RangedGet,
                path: path.to_owned(),
                requested: range,
                size: None,
            });
        }
        let (store, key) = (&self.inner.store, &key);
        let options = GetOptions::new().with_range(Some(GetRange::Bounded(range.clone())));
        let options = &options;
        let (bytes, size) = self
            .inner
            .run(Op::RangedGet, path, 0, || async move {
                let result = store.get_opts(key, options.clone()).await?;
                let size = result.meta.size;
                let bytes = result.bytes().await?;
                let len = bytes.len() as u64;
                Ok(((bytes, size), len))
            })
            .await
            .map_err(|e| with_range(e, &range))?;
        if bytes.len() as u64 != range.end - range.start {
            return Err(ObjectError::RangeOutOfBounds {
                op: Op::RangedGet,
                path: path.to_owned(),
                requested: range,
                size: Some(size),
            });
        }
        Ok(bytes)
    }

    /// The last `len` bytes of the object (all of it if it is shorter) and its total
    /// size, in one suffix-range GET. Reading an SST footer takes one request this way.
    pub async fn get_suffix(&self, path: &str, len: u64) -> Result<(Bytes, u64), ObjectError> {
        let key = self.inner.keys.object(path)?;
        if len == 0 {
            return Ok((Bytes::new(), self.head(path).await?.size));
        }
        if !self.inner.suffix_ranges {
            let size = self.head(path).await?.size;
            if size == 0 {
                return Ok((Bytes::new(), 0));
            }
            let data = self.get_range(path, size.saturating_sub(len)..size).await?;
            return Ok((data, size));
        }
        let (store, key) = (&self.inner.store, &key);
        let options = GetOptions::new().with_range(Some(GetRange::Suffix(len)));
        let options = &options;
        let result = self
            .inner
            .run(Op::RangedGet, path, 0, || async move {
                let result = store.get_opts(key, options.clone()).await?;
                let size = result.meta.size;
                let bytes = result.bytes().await?;
                let read = bytes.len() as u64;
                Ok(((bytes, size), read))
            })
            .await;
        match result {
            // Some stores refuse any range on an empty object (416); it has no suffix.
            Err(ObjectError::RangeOutOfBounds { .. }) => {
                let size = self.head(path).await?.size;
                if size == 0 {
                    Ok((Bytes::new(), 0))
                } else {
                    Err(ObjectError::RangeOutOfBounds {
                        op: Op::RangedGet,
                        path: path.to_owned(),
                        requested: size.saturating_sub(len)..size,
                        size: Some(size),
                    })
                }
            }
            other => other,
        }
    }

    /// Writes the object, replacing any object of the same name. Retried on transient
    /// failures, which is safe because callers only use it for fresh unique names.
    pub async fn put(&self, path: &str, data: Bytes) -> Result<(), ObjectError> {
        let key = self.inner.keys.object(path)?;
        self.inner
            .put_payload(Op::Put, path, &key, data.into())
            .await
    }

    /// Writes the object only if no object of that name exists (`PutMode::Create`:
    /// `If-None-Match: *` on S3, `create_new` on a local disk). Returns
    /// [`ObjectError::AlreadyExists`] if another writer got there first.
    ///
    /// Retries are not blind. If an attempt fails ambiguously (a timeout, a broken
    /// connection or a 5xx after the request was sent — the store may have applied it)
    /// and a later attempt answers "already exists", the object is read back and compared
    /// byte for byte with `data`: equal means the earlier attempt was ours and this
    /// returns `Ok(())`; different means another writer won and this returns
    /// `AlreadyExists`. **Byte equality proves authorship only if the payload is unique
    /// to this writer: callers (manifest commits) must embed a unique writer token — e.g.
    /// a ULID per commit attempt — in `data`.**
    ///
    /// If retries run out after an ambiguous attempt, the result is
    /// [`ObjectError::Transient`] and the outcome is unknown: the object may exist with
    /// our bytes. Callers must re-read before concluding anything.
    pub async fn create_if_absent(&self, path: &str, data: Bytes) -> Result<(), ObjectError> {
        let key = self.inner.keys.object(path)?;
        let inner = &self.inner;
        let sent = data.len() as u64;
        let options = PutOptions::from(PutMode::Create);
        let mut retrier = Retrier::new(&inner.retry, &inner.metrics, Op::ConditionalPut, path);
        let mut maybe_applied = false;
        loop {
            let (store, key, options, data) = (&inner.store, &key, &options, &data);
            let result = inner
                .attempt(Op::ConditionalPut, sent, || async move {
                    store
                        .put_opts(key, data.clone().into(), options.clone())
                        .await?;
                    Ok(((), 0))
                })
                .await;
            let failure = match result {
                Ok(()) => return Ok(()),
                Err(failure) => failure,
            };
            if failure.kind == FailureKind::AlreadyExists && maybe_applied {
                return self.resolve_ambiguous_create(path, data).await;
            }
            maybe_applied |= failure.kind.may_have_applied();
            if !retrier.retry_after(&failure).await {
                return Err(retrier.into_error(failure));
            }
        }
    }

    /// After an ambiguous create attempt and an "already exists" answer: was it ours?
    async fn resolve_ambiguous_create(&self, path: &str, data: &Bytes) -> Result<(), ObjectError> {
        let already_exists = || ObjectError::AlreadyExists {
            path: path.to_owned(),
        };
        match self.get(path).await {
            Ok(existing) if existing == *data => {
                tracing::info!(
                    path,
                    "conditional_put: an earlier attempt failed ambiguously but the object \
                     holds our bytes; the write was ours"
                );
                Ok(())
            }
            Ok(_) => Err(already_exists()),
            // It existed a moment ago; whoever wrote it, it was not provably us.
            Err(ObjectError::NotFound { .. }) => Err(already_exists()),
            Err(e) => Err(e),
        }
    }

    /// The object's metadata.
    pub async fn head(&self, path: &str) -> Result<ObjectInfo, ObjectError> {
        let key = self.inner.keys.object(path)?;
        let (store, key) = (&self.inner.store, &key);
        let meta = self
            .inner
            .run(Op::Head, path, 0, || async move {
                let meta = store
                    .get_opts(key, GetOptions::new().with_head(true))
                    .await?
                    .meta;
                Ok((meta, 0))
            })
            .await?;
        Ok(ObjectInfo::from_meta(path.to_owned(), meta))
    }

    /// Whether the object exists (a HEAD).
    pub async fn exists(&self, path: &str) -> Result<bool, ObjectError> {
        match self.head(path).await {
            Ok(_) => Ok(true),
            Err(ObjectError::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Every object under `prefix`, sorted by path. `prefix` matches whole segments
    /// (`data/3f` lists `data/3f/...`, not `data/3fa/...`); `""` lists the whole bucket
    /// prefix. Not for the read path: listings are slow and paged.
    pub async fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>, ObjectError> {
        let list_prefix = self.inner.keys.list_prefix(prefix)?;
        let (store, list_prefix) = (&self.inner.store, &list_prefix);
        let metas = self
            .inner
            .run(Op::List, prefix, 0, || async move {
                let metas: Vec<ObjectMeta> = store.list(list_prefix.as_ref()).try_collect().await?;
                Ok((metas, 0))
            })
            .await?;
        Ok(self.sorted_infos(metas))
    }

    /// Every object under `prefix` whose key sorts after `start_after` (a key, which
    /// need not exist), sorted by path: a listing that starts there (S3's
    /// `start-after`), so the keys before it are not paged through. Same prefix rules
    /// as [`Bucket::list`].
    pub async fn list_after(
        &self,
        prefix: &str,
        start_after: &str,
    ) -> Result<Vec<ObjectInfo>, ObjectError> {
        let list_prefix = self.inner.keys.list_prefix(prefix)?;
        let offset = self.inner.keys.object(start_after)?;
        let (store, list_prefix, offset) = (&self.inner.store, &list_prefix, &offset);
        let metas = self
            .inner
            .run(Op::List, prefix, 0, || async move {
                let metas: Vec<ObjectMeta> = store
                    .list_with_offset(list_prefix.as_ref(), offset)
                    .try_collect()
                    .await?;
                Ok((metas, 0))
            })
            .await?;
        Ok(self.sorted_infos(metas))
    }

    /// The first object under `prefix` that one page of a listing returns: the first
    /// in key order on S3-compatible stores and in memory, any one of them on a local
    /// file system. `None` if there is none. One request, whatever lies under it.
    pub async fn list_first(&self, prefix: &str) -> Result<Option<ObjectInfo>, ObjectError> {
        let list_prefix = self.inner.keys.list_prefix(prefix)?;
        let (store, list_prefix) = (&self.inner.store, &list_prefix);
        let metas = self
            .inner
            .run(Op::List, prefix, 0, || async move {
                let metas: Vec<ObjectMeta> = store
                    .list(list_prefix.as_ref())
                    .take(1)
                    .try_collect()
                    .await?;
                Ok((metas, 0))
            })
            .await?;
        Ok(self.sorted_infos(metas).into_iter().next())
    }

    /// The "directories" directly under `prefix` (the common prefixes of a listing
    /// with delimiter `/`), as keys without a trailing `/`, sorted. Objects directly
    /// under `prefix` are paged through too, so use it where few lie.
    pub async fn list_dirs(&self, prefix: &str) -> Result<Vec<String>, ObjectError> {
        let list_prefix = self.inner.keys.list_prefix(prefix)?;
        let (store, list_prefix) = (&self.inner.store, &list_prefix);
        let listed = self
            .inner
            .run(Op::List, prefix, 0, || async move {
                let listed = store.list_with_delimiter(list_prefix.as_ref()).await?;
                Ok((listed.common_prefixes, 0))
            })
            .await?;
        let mut dirs: Vec<String> = listed
            .iter()
            .filter_map(|p| self.inner.keys.relative(p))
            .collect();
        dirs.sort();
        Ok(dirs)
    }

    /// Listed metadata as relative [`ObjectInfo`]s, sorted by path.
    fn sorted_infos(&self, metas: Vec<ObjectMeta>) -> Vec<ObjectInfo> {
        let mut infos: Vec<ObjectInfo> = metas
            .into_iter()
            .filter_map(|meta| {
                let path = self.inner.keys.relative(&meta.location)?;
                Some(ObjectInfo::from_meta(path, meta))
            })
            .collect();
        infos.sort_by(|a, b| a.path.cmp(&b.path));
        infos
    }

    /// Deletes the object. Deleting a missing object is not an error.
    pub async fn delete(&self, path: &str) -> Result<(), ObjectError> {
        let key = self.inner.keys.object(path)?;
        match self
            .inner
            .delete_batch(path, std::slice::from_ref(&key))
            .await
        {
            Err(ObjectError::NotFound { .. }) => Ok(()),
            other => other,
        }
    }

    /// Deletes many objects in batches of up to 1,000 keys (one bulk request each on S3).
    /// Every path is validated before anything is deleted; missing objects are not
    /// errors. A failed batch is retried whole (deletes are idempotent).
    pub async fn delete_many(&self, paths: Vec<String>) -> Result<(), ObjectError> {
        let keys = paths
            .iter()
            .map(|p| self.inner.keys.object(p))
            .collect::<Result<Vec<_>, _>>()?;
        for (names, keys) in paths.chunks(DELETE_BATCH).zip(keys.chunks(DELETE_BATCH)) {
            let label = match names {
                [one] => one.clone(),
                [first, rest @ ..] => format!("{first} (+{} more)", rest.len()),
                [] => continue,
            };
            self.inner.delete_batch(&label, keys).await?;
        }
        Ok(())
    }

    /// A streaming writer for a large object; see [`Upload`].
    pub async fn upload(&self, path: &str) -> Result<Upload, ObjectError> {
        let key = self.inner.keys.object(path)?;
        Ok(Upload::new(self.clone(), path.to_owned(), key))
    }

    /// The bounded usability check of [`Bucket::open`].
    async fn probe(&self, config: &ObjectStoreConfig) -> Result<(), ObjectError> {
        let inner = &self.inner;
        let Some(lister) = &inner.lister else {
            return Ok(());
        };
        let prefix = inner.keys.prefix();
        let list_prefix = (!prefix.is_empty()).then(|| format!("{prefix}/"));
        let list_prefix = &list_prefix;
        let options = PaginatedListOptions {
            max_keys: Some(1),
            ..PaginatedListOptions::default()
        };
        let options = &options;
        let limit = probe_timeout(config);
        // Throttling and 5xx get a few quick retries; anything else decides at once.
        let probe = async {
            let mut attempts = 0;
            loop {
                attempts += 1;
                let result = inner
                    .attempt(Op::List, 0, || async move {
                        lister
                            .list_paginated(list_prefix.as_deref(), options.clone())
                            .await?;
                        Ok(((), 0))
                    })
                    .await;
                match result {
                    Err(f)
                        if attempts < 3
                            && matches!(
                                f.kind,
                                FailureKind::Throttled | FailureKind::ServerError
                            ) =>
                    {
                        tokio::time::sleep(super::retry::backoff_delay(&inner.retry, attempts))
                            .await;
                    }
                    other => return other,
                }
            }
        };
        let started = Instant::now();
        let failure = match tokio::time::timeout(limit, probe).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(failure)) => failure,
            Err(_) => {
                return Err(ObjectError::Unreachable {
                    endpoint: inner.endpoint.clone(),
                    source: format!("no answer to a LIST of {} within {limit:?}", inner.location)
                        .into(),
                });
            }
        };
        let text = chain_text(failure.source.as_ref());
        // The caller reports the failure (one line at start); the full
        // chain is here for whoever turns on debug logs.
        tracing::debug!(
            location = %inner.location,
            kind = ?failure.kind,
            elapsed_ms = started.elapsed().as_millis() as u64,
            error = %text,
            "object store probe failed"
        );
        Err(match failure.kind {
            FailureKind::Connect | FailureKind::Timeout | FailureKind::Interrupted => {
                ObjectError::Unreachable {
                    endpoint: inner.endpoint.clone(),
                    source: failure.source,
                }
            }
            _ if text.contains("NoSuchBucket") || text.contains("ContainerNotFound") => {
                ObjectError::BucketNotFound {
                    bucket: inner.bucket_name.clone(),
                }
            }
            FailureKind::NotFound => ObjectError::BucketNotFound {
                bucket: inner.bucket_name.clone(),
            },
            _ => failure.into_error(Op::List, prefix, 1),
        })
    }
}

/// Puts `requested` into a `RangeOutOfBounds` produced by the generic error mapping.
fn with_range(error: ObjectError, requested: &Range<u64>) -> ObjectError {
    match error {
        ObjectError::RangeOutOfBounds { op, path, size, .. } => ObjectError::RangeOutOfBounds {
            op,
            path,
            requested: requested.clone(),
            size,
        },
        other => other,
    }
}

/// The messages of an error and all its sources, joined.
fn chain_text(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut current = error.source();
    while let Some(e) = current {
        text.push_str(": ");
        text.push_str(&e.to_string());
        current = e.source();
    }
    text
}

impl Inner {
    /// One attempt of `op`: emulated latency, injected faults, then the backend call;
    /// recorded in the metrics. `call` yields the result and the payload bytes received.
    pub(super) async fn attempt<T, F, Fut>(&self, op: Op, sent: u64, call: F) -> Result<T, Failure>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(T, u64), object_store::Error>>,
    {
        let started = Instant::now();
        if let Some(emulator) = &self.emulator {
            emulator.first_byte().await;
            emulator.transfer(sent).await;
        }
        let fault = self.faults.as_ref().and_then(|faults| faults.take(op));
        let result = match fault {
            Some(fault) if !fault.applies_request() => Err(fault.into_failure(op)),
            _ => match call().await {
                Ok(value) => match fault {
                    Some(fault) => Err(fault.into_failure(op)),
                    None => Ok(value),
                },
                Err(error) => Err(Failure::from_store(error)),
            },
        };
        let received = match &result {
            Ok((_, received)) => *received,
            Err(_) => 0,
        };
        if let Some(emulator) = &self.emulator {
            emulator.transfer(received).await;
        }
        self.metrics.record(AttemptRecord {
            op,
            latency: started.elapsed(),
            bytes: if result.is_ok() { sent + received } else { 0 },
            failed: result.as_ref().is_err_and(|f| f.kind.is_error()),
        });
        result.map(|(value, _)| value)
    }

    /// Attempts `call` until it succeeds, fails permanently, or the retry policy gives
    /// up. For idempotent requests only.
    pub(super) async fn run<T, F, Fut>(
        &self,
        op: Op,
        path: &str,
        sent: u64,
        mut call: F,
    ) -> Result<T, ObjectError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<(T, u64), object_store::Error>>,
    {
        let mut retrier = Retrier::new(&self.retry, &self.metrics, op, path);
        loop {
            match self.attempt(op, sent, &mut call).await {
                Ok(value) => return Ok(value),
                Err(failure) => {
                    if !retrier.retry_after(&failure).await {
                        return Err(retrier.into_error(failure));
                    }
                }
            }
        }
    }

    /// Unconditional put of a payload (retried).
    pub(super) async fn put_payload(
        &self,
        op: Op,
        path: &str,
        key: &Path,
        payload: PutPayload,
    ) -> Result<(), ObjectError> {
        let sent = payload.content_length() as u64;
        let (store, payload) = (&self.store, &payload);
        self.run(op, path, sent, || async move {
            store
                .put_opts(key, payload.clone(), PutOptions::default())
                .await?;
            Ok(((), 0))
        })
        .await
    }

    /// Deletes `keys` in one request (retried whole); "not found" answers are ignored.
    async fn delete_batch(&self, label: &str, keys: &[Path]) -> Result<(), ObjectError> {
        let store = &self.store;
        self.run(Op::Delete, label, 0, || async move {
            let locations = futures::stream::iter(keys.to_vec()).map(Ok).boxed();
            let mut results = store.delete_stream(locations);
            while let Some(result) = results.next().await {
                match result {
                    Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(((), 0))
        })
        .await
    }
}

// Compile-time check: the futures of the public API are Send (callers spawn them).
#[allow(dead_code)]
fn assert_send_futures(bucket: &Bucket) {
    fn send<T: Send>(_: T) {}
    send(bucket.get("a"));
    send(bucket.get_range("a", 0..1));
    send(bucket.get_suffix("a", 1));
    send(bucket.put("a", Bytes::new()));
    send(bucket.create_if_absent("a", Bytes::new()));
    send(bucket.head("a"));
    send(bucket.list("a"));
    send(bucket.list_after("a", "a/b"));
    send(bucket.list_first("a"));
    send(bucket.list_dirs("a"));
    send(bucket.delete("a"));
    send(bucket.delete_many(Vec::new()));
    send(bucket.upload("a"));
    send(Bucket::open(&ObjectStoreConfig::memory()));
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::Duration;

    use super::*;
    use crate::object::config::{BackendConfig, S3Config, Secret};

    fn fast_retries() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            deadline: Duration::from_secs(10),
        }
    }

    fn bucket_with_faults() -> (Bucket, Faults) {
        let faults = Faults::new();
        let bucket = Bucket::memory()
            .with_retry_policy(fast_retries())
            .with_faults(faults.clone());
        (bucket, faults)
    }

    #[tokio::test]
    async fn round_trip_on_memory() {
        let b = Bucket::memory();
        let data = Bytes::from_static(b"0123456789");
        b.put("data/ab/t/r/cf/1.sst", data.clone())
            .await
            .expect("put");
        assert_eq!(b.get("data/ab/t/r/cf/1.sst").await.expect("get"), data);
        assert_eq!(
            b.get_range("data/ab/t/r/cf/1.sst", 2..5)
                .await
                .expect("range"),
            Bytes::from_static(b"234")
        );
        assert_eq!(
            b.get_range("data/ab/t/r/cf/1.sst", 3..3)
                .await
                .expect("empty"),
            Bytes::new()
        );
        assert_eq!(
            b.get_suffix("data/ab/t/r/cf/1.sst", 4)
                .await
                .expect("suffix"),
            (Bytes::from_static(b"6789"), 10)
        );
        assert_eq!(
            b.get_suffix("data/ab/t/r/cf/1.sst", 100)
                .await
                .expect("suffix"),
            (data.clone(), 10)
        );
        let info = b.head("data/ab/t/r/cf/1.sst").await.expect("head");
        assert_eq!(
            (info.path.as_str(), info.size),
            ("data/ab/t/r/cf/1.sst", 10)
        );
        assert!(b.exists("data/ab/t/r/cf/1.sst").await.expect("exists"));

        b.put("data/ab/t/r/cf/2.sst", data.clone())
            .await
            .expect("put");
        b.put("data/abc/x", data.clone()).await.expect("put");
        let listed: Vec<String> = b
            .list("data/ab")
            .await
            .expect("list")
            .into_iter()
            .map(|i| i.path)
            .collect();
        assert_eq!(listed, ["data/ab/t/r/cf/1.sst", "data/ab/t/r/cf/2.sst"]);

        b.delete("data/ab/t/r/cf/1.sst").await.expect("delete");
        b.delete("data/ab/t/r/cf/1.sst")
            .await
            .expect("delete missing");
        b.delete_many(vec!["data/ab/t/r/cf/2.sst".into(), "missing/x".into()])
            .await
            .expect("delete_many");
        assert_eq!(b.list("").await.expect("list").len(), 1);

        let m = b.metrics();
        assert_eq!(m.put.requests, 3);
        assert_eq!(m.put.bytes, 30);
        assert_eq!(m.get.bytes, 10);
        assert_eq!(m.ranged_get.requests, 3);
        assert_eq!(m.delete.requests, 3);
        assert_eq!(m.delete.errors, 0);
    }

    #[tokio::test]
    async fn listings_after_a_key_of_the_first_object_and_of_directories() {
        let b = Bucket::memory();
        for key in ["w/a/1", "w/a/2", "w/a/3", "w/b/x/1", "w/c", "wx/1"] {
            b.put(key, Bytes::from_static(b"v")).await.expect("put");
        }
        let paths =
            |infos: Vec<ObjectInfo>| -> Vec<String> { infos.into_iter().map(|i| i.path).collect() };
        assert_eq!(
            paths(b.list_after("w/a", "w/a/1").await.expect("list")),
            ["w/a/2", "w/a/3"]
        );
        assert_eq!(
            paths(b.list_after("w", "w/a/3").await.expect("list")),
            ["w/b/x/1", "w/c"]
        );
        assert!(b.list_after("w/a", "w/a/9").await.expect("list").is_empty());
        let first = b.list_first("w").await.expect("first").expect("one");
        assert_eq!(first.path, "w/a/1");
        assert!(b.list_first("nothing").await.expect("first").is_none());
        assert_eq!(b.list_dirs("w").await.expect("dirs"), ["w/a", "w/b"]);
        assert_eq!(b.list_dirs("w/b/").await.expect("dirs"), ["w/b/x"]);
        assert_eq!(b.list_dirs("").await.expect("dirs"), ["w", "wx"]);
        assert_eq!(b.metrics().list.requests, 8);
    }

    #[tokio::test]
    async fn errors_are_specific() {
        let b = Bucket::memory();
        assert!(matches!(
            b.get("nope").await,
            Err(ObjectError::NotFound { op: Op::Get, ref path }) if path == "nope"
        ));
        assert!(matches!(
            b.head("nope").await,
            Err(ObjectError::NotFound { op: Op::Head, .. })
        ));
        assert!(matches!(
            b.put("a//b", Bytes::new()).await,
            Err(ObjectError::InvalidPath { .. })
        ));
        assert!(matches!(
            b.delete_many(vec!["ok".into(), "../x".into()]).await,
            Err(ObjectError::InvalidPath { .. })
        ));
        b.put("short", Bytes::from_static(b"abc"))
            .await
            .expect("put");
        match b.get_range("short", 1..10).await {
            Err(ObjectError::RangeOutOfBounds {
                requested, size, ..
            }) => assert_eq!((requested, size), (1..10, Some(3))),
            other => panic!("{other:?}"),
        }
        match b.get_range("short", 5..10).await {
            Err(ObjectError::RangeOutOfBounds { requested, .. }) => assert_eq!(requested, 5..10),
            other => panic!("{other:?}"),
        }
        // NotFound answers are not errors in the metrics.
        assert_eq!(b.metrics().get.errors, 0);
        assert_eq!(b.metrics().get.retries, 0);
    }

    #[tokio::test]
    async fn create_if_absent_once() {
        let b = Bucket::memory();
        b.create_if_absent("m/1", Bytes::from_static(b"a"))
            .await
            .expect("first");
        assert!(matches!(
            b.create_if_absent("m/1", Bytes::from_static(b"a")).await,
            Err(ObjectError::AlreadyExists { ref path }) if path == "m/1"
        ));
        assert_eq!(b.metrics().conditional_put.errors, 0);
    }

    #[tokio::test]
    async fn ambiguous_create_resolves_by_content() {
        // Our own write, applied but reported as a timeout: Ok.
        let (b, faults) = bucket_with_faults();
        faults.timeout_after_apply_next(Op::ConditionalPut, 1);
        b.create_if_absent("m/1", Bytes::from_static(b"ours token=1"))
            .await
            .expect("our own write");
        let m = b.metrics();
        assert_eq!(m.conditional_put.requests, 2);
        assert_eq!(m.conditional_put.retries, 1);
        assert_eq!(m.get.requests, 1, "one read-back to compare");
        assert_eq!(b.get("m/1").await.expect("get"), "ours token=1");

        // A foreign write landed while our attempt timed out: AlreadyExists.
        b.put("m/2", Bytes::from_static(b"theirs"))
            .await
            .expect("put");
        faults.timeout_next(Op::ConditionalPut, 1);
        assert!(matches!(
            b.create_if_absent("m/2", Bytes::from_static(b"ours")).await,
            Err(ObjectError::AlreadyExists { .. })
        ));

        // Without an ambiguous attempt, AlreadyExists needs no read-back.
        let gets = b.metrics().get.requests;
        faults.throttle_next(Op::ConditionalPut, 1);
        assert!(matches!(
            b.create_if_absent("m/2", Bytes::from_static(b"theirs"))
                .await,
            Err(ObjectError::AlreadyExists { .. })
        ));
        assert_eq!(b.metrics().get.requests, gets);
    }

    #[tokio::test]
    async fn transient_faults_are_retried_and_counted() {
        let (b, faults) = bucket_with_faults();
        faults.fail_next(Op::Put, 2);
        faults.throttle_next(Op::Get, 3);
        b.put("k", Bytes::from_static(b"v")).await.expect("put");
        assert_eq!(b.get("k").await.expect("get"), "v");
        let m = b.metrics();
        assert_eq!((m.put.requests, m.put.errors, m.put.retries), (3, 2, 2));
        assert_eq!((m.get.requests, m.get.errors, m.get.retries), (4, 3, 3));
        assert_eq!(m.put.bytes, 1);

        faults.fail_next(Op::Head, 10);
        match b.head("k").await {
            Err(ObjectError::Transient {
                op, path, attempts, ..
            }) => assert_eq!((op, path.as_str(), attempts), (Op::Head, "k", 4)),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn upload_small_is_one_put_and_large_is_multipart() {
        let (b, faults) = bucket_with_faults();
        let mut up = b.upload("small").await.expect("upload");
        up.write(Bytes::from_static(b"hello "))
            .await
            .expect("write");
        up.write(Bytes::from_static(b"world")).await.expect("write");
        assert_eq!(up.finish().await.expect("finish"), 11);
        assert_eq!(b.get("small").await.expect("get"), "hello world");
        assert_eq!(b.metrics().multipart.requests, 0);
        assert_eq!(b.metrics().put.requests, 1);

        let part = b.part_size();
        let data: Vec<u8> = (0..(2 * part + 12345)).map(|i| (i % 251) as u8).collect();
        let data = Bytes::from(data);
        faults.fail_next(Op::Multipart, 1);
        let mut up = b.upload("big").await.expect("upload");
        for chunk in data.chunks(1_000_003) {
            up.write(data.slice_ref(chunk)).await.expect("write");
        }
        assert_eq!(up.finish().await.expect("finish"), data.len() as u64);
        assert_eq!(b.get("big").await.expect("get"), data);
        let m = b.metrics();
        // create + 3 parts + complete, plus one retried attempt.
        assert_eq!((m.multipart.requests, m.multipart.retries), (6, 1));
        assert_eq!(m.multipart.bytes, data.len() as u64);
    }

    #[tokio::test]
    async fn upload_abort_leaves_nothing() {
        let b = Bucket::memory();
        let mut up = b.upload("gone").await.expect("upload");
        up.write(Bytes::from(vec![7u8; b.part_size() + 1]))
            .await
            .expect("write");
        up.abort().await.expect("abort");
        assert!(!b.exists("gone").await.expect("exists"));
    }

    #[tokio::test(start_paused = true)]
    async fn emulation_adds_latency_and_transfer_time() {
        let b = Bucket::memory().with_emulation(Some(Emulation {
            latency: Duration::from_millis(30),
            jitter: Duration::ZERO,
            bandwidth_bytes_per_sec: 1_000_000,
        }));
        let start = Instant::now();
        b.put("k", Bytes::from(vec![0u8; 100_000]))
            .await
            .expect("put");
        assert_eq!(start.elapsed(), Duration::from_millis(130));
        let start = Instant::now();
        b.get_range("k", 0..50_000).await.expect("get");
        assert_eq!(start.elapsed(), Duration::from_millis(80));
        let m = b.metrics();
        assert_eq!(m.put.latency.sum_us, 130_000);
        assert_eq!(m.ranged_get.latency.max_us, 80_000);
    }

    /// Serves `responses` (one per connection) on a loopback port.
    fn canned_http(responses: Vec<&'static str>) -> (String, std::thread::JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        let handle = std::thread::spawn(move || {
            for response in responses {
                let Ok((mut stream, _)) = listener.accept() else {
                    return;
                };
                let mut buf = [0u8; 8192];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(response.as_bytes());
            }
        });
        (endpoint, handle)
    }

    fn s3_at(endpoint: String) -> Bucket {
        let mut config = ObjectStoreConfig::new(BackendConfig::S3(S3Config {
            bucket: "b".into(),
            region: Some("us-east-1".into()),
            endpoint: Some(endpoint),
            access_key_id: Some("test".into()),
            secret_access_key: Some(Secret::new("test")),
            allow_http: true,
            ..S3Config::default()
        }));
        config.retry = fast_retries();
        let backend = futures::executor::block_on(Backend::build(&config)).expect("build");
        Bucket::from_backend(
            backend,
            config.retry.clone(),
            None,
            DEFAULT_PART_SIZE as usize,
        )
    }

    const SLOW_DOWN: &str = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/xml\r\n\
        Content-Length: 95\r\nConnection: close\r\n\r\n\
        <Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>\n\n\n\n";
    const OK_ABC: &str = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc";
    const FORBIDDEN: &str =
        "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

    #[tokio::test]
    async fn real_s3_client_errors_are_classified() {
        // Two 503 SlowDown answers, then the data: retried by our layer.
        let (endpoint, server) = canned_http(vec![SLOW_DOWN, SLOW_DOWN, OK_ABC]);
        let b = s3_at(endpoint);
        assert_eq!(b.get("k").await.expect("get after throttling"), "abc");
        let m = b.metrics();
        assert_eq!((m.get.requests, m.get.errors, m.get.retries), (3, 2, 2));
        server.join().expect("server");

        // 403: final at once.
        let (endpoint, server) = canned_http(vec![FORBIDDEN]);
        let b = s3_at(endpoint);
        assert!(matches!(
            b.get("k").await,
            Err(ObjectError::Permission { op: Op::Get, .. })
        ));
        assert_eq!(b.metrics().get.requests, 1);
        server.join().expect("server");

        // Only throttling, forever: Transient after max_attempts, naming op and path.
        let (endpoint, server) = canned_http(vec![SLOW_DOWN; 4]);
        let b = s3_at(endpoint);
        match b.put("x/y", Bytes::from_static(b"v")).await {
            Err(e @ ObjectError::Transient { .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("put") && msg.contains("x/y") && msg.contains("4 attempt"),
                    "{msg}"
                );
            }
            other => panic!("{other:?}"),
        }
        server.join().expect("server");
    }
}
