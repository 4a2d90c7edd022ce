//! [`Upload`]: a streaming writer for large objects (SSTs, compaction output).
//!
//! Writes are cut into parts of exactly the bucket's part size (default 8 MiB, never
//! below S3's 5 MiB minimum; only the last part may be shorter, as R2 requires). The
//! multipart upload is created lazily when the first part fills, so an object smaller
//! than one part is sent as a single PUT at [`Upload::finish`]. Each full part is
//! uploaded by a background task while the caller fills the next one; before starting a
//! part the previous one must have finished, so memory is bounded by about two parts.
//!
//! Retries: on S3, GCS, Azure and memory each part goes through the low-level
//! `MultipartStore` API with an explicit part number, so a failed part is retried in
//! place like any idempotent request. On the local disk we write the staging file
//! ourselves (`local_upload`): each part at its fixed offset, with write-behind, so a
//! part is retried in place too; a real local I/O error is permanent and fails the
//! upload.
//!
//! An upload that is dropped without [`Upload::finish`] or [`Upload::abort`] is aborted
//! in the background (best effort; an S3 lifecycle rule for incomplete multipart uploads
//! is the backstop). After any error, call `abort` or drop the upload.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{MultipartId, PutPayload};
use tokio::task::JoinHandle;

use super::bucket::Bucket;
use super::error::ObjectError;
use super::local_upload::LocalStaging;
use super::metrics::Op;
use super::retry::Retrier;

/// A multipart upload in progress.
#[derive(Clone)]
enum Session {
    /// Low-level API: parts are numbered by us and retried in place.
    Parts {
        store: Arc<dyn MultipartStore>,
        id: MultipartId,
    },
    /// Local disk: a staging file we write at fixed offsets.
    Local(Arc<LocalStaging>),
}

type PartTask = JoinHandle<Result<Option<PartId>, ObjectError>>;

/// Streaming writer returned by [`Bucket::upload`]. See the module documentation.
pub struct Upload {
    bucket: Bucket,
    path: String,
    key: Path,
    part_size: usize,
    /// Bytes of the part being filled (zero-copy slices of what the caller wrote).
    buffer: Vec<Bytes>,
    buffered: usize,
    total: u64,
    session: Option<Session>,
    in_flight: Option<PartTask>,
    /// Completed parts, in order (low-level API only).
    parts: Vec<PartId>,
    next_part: usize,
    /// Set by the first error; later calls fail fast.
    failed: bool,
    /// Set by `finish` / `abort`, so `Drop` has nothing left to clean up.
    closed: bool,
}

impl fmt::Debug for Upload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upload")
            .field("path", &self.path)
            .field("total", &self.total)
            .field("parts", &self.next_part)
            .field("failed", &self.failed)
            .finish()
    }
}

impl Upload {
    pub(super) fn new(bucket: Bucket, path: String, key: Path) -> Upload {
        let part_size = bucket.part_size();
        Upload {
            bucket,
            path,
            key,
            part_size,
            buffer: Vec::new(),
            buffered: 0,
            total: 0,
            session: None,
            in_flight: None,
            parts: Vec::new(),
            next_part: 0,
            failed: false,
            closed: false,
        }
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.total
    }

    /// Appends `data`. Returns once `data` is buffered; it may wait for the previous
    /// part's upload to finish first (that is the memory bound).
    pub async fn write(&mut self, mut data: Bytes) -> Result<(), ObjectError> {
        self.check_usable()?;
        self.total += data.len() as u64;
        while !data.is_empty() {
            let take = (self.part_size - self.buffered).min(data.len());
            self.buffer.push(data.split_to(take));
            self.buffered += take;
            if self.buffered == self.part_size {
                let result = self.flush_part().await;
                self.fail_on_error(result)?;
            }
        }
        Ok(())
    }

    /// Uploads what is buffered, completes the object and returns its total size. An
    /// object that never filled a part is written with one PUT.
    pub async fn finish(mut self) -> Result<u64, ObjectError> {
        self.check_usable()?;
        let result = self.finish_inner().await;
        self.closed = true;
        match result {
            Ok(()) => Ok(self.total),
            Err(e) => {
                // Best effort: do not leave parts behind. The error that matters is `e`.
                let _ = self.abort_session().await;
                Err(e)
            }
        }
    }

    /// Abandons the upload; nothing becomes visible. Parts already uploaded are deleted.
    pub async fn abort(mut self) -> Result<(), ObjectError> {
        self.closed = true;
        self.abort_session().await
    }

    async fn finish_inner(&mut self) -> Result<(), ObjectError> {
        // On the local disk, anything over one write-behind chunk goes through
        // the staging file too: a single PUT would reach the disk in one burst.
        if self.session.is_none()
            && self.bucket.inner.local.is_some()
            && self.buffered > crate::writeback::CHUNK
        {
            self.flush_part().await?;
        }
        if self.session.is_none() {
            let payload: PutPayload = self.buffer.drain(..).collect();
            self.buffered = 0;
            let inner = &self.bucket.inner;
            return inner
                .put_payload(Op::Put, &self.path, &self.key, payload)
                .await;
        }
        if self.buffered > 0 {
            self.flush_part().await?;
        }
        self.wait_in_flight().await?;
        match self.session.clone() {
            Some(Session::Parts { store, id }) => self.complete_parts(store, id).await,
            Some(Session::Local(staging)) => {
                let total = self.total;
                let staging = &staging;
                self.bucket
                    .inner
                    .run(Op::Multipart, &self.path, 0, || async move {
                        let staging = staging.clone();
                        blocking(move || staging.complete(total)).await?;
                        Ok(((), 0))
                    })
                    .await
            }
            None => Ok(()),
        }
    }

    /// Completes a low-level multipart upload. If a complete attempt fails ambiguously
    /// and a retry then finds the upload gone, the object is checked: present with our
    /// size means the ambiguous attempt completed it.
    async fn complete_parts(
        &self,
        store: Arc<dyn MultipartStore>,
        id: MultipartId,
    ) -> Result<(), ObjectError> {
        let inner = &self.bucket.inner;
        let mut retrier = Retrier::new(&inner.retry, &inner.metrics, Op::Multipart, &self.path);
        let mut maybe_applied = false;
        loop {
            let (store, key, id, parts) = (&store, &self.key, &id, &self.parts);
            let result = inner
                .attempt(Op::Multipart, 0, || async move {
                    store.complete_multipart(key, id, parts.clone()).await?;
                    Ok(((), 0))
                })
                .await;
            let failure = match result {
                Ok(()) => return Ok(()),
                Err(failure) => failure,
            };
            if maybe_applied && failure.kind == super::retry::FailureKind::NotFound {
                match self.bucket.head(&self.path).await {
                    Ok(info) if info.size == self.total => return Ok(()),
                    Ok(_) | Err(ObjectError::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            maybe_applied |= failure.kind.may_have_applied();
            if !retrier.retry_after(&failure).await {
                return Err(retrier.into_error(failure));
            }
        }
    }

    fn check_usable(&self) -> Result<(), ObjectError> {
        if self.failed {
            return Err(ObjectError::Other {
                op: Op::Multipart,
                path: self.path.clone(),
                source: "an earlier write of this upload failed; abort it and start over".into(),
            });
        }
        Ok(())
    }

    fn fail_on_error<T>(&mut self, result: Result<T, ObjectError>) -> Result<T, ObjectError> {
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    /// Sends the buffered bytes as the next part, in the background.
    async fn flush_part(&mut self) -> Result<(), ObjectError> {
        // Memory bound: at most one part in flight while the next one fills.
        self.wait_in_flight().await?;
        let session = match &self.session {
            Some(session) => session.clone(),
            None => {
                let session = self.start_session().await?;
                self.session = Some(session.clone());
                session
            }
        };
        let payload: PutPayload = self.buffer.drain(..).collect();
        self.buffered = 0;
        let idx = self.next_part;
        self.next_part += 1;
        // Every part but the last has exactly `part_size` bytes.
        let offset = (idx * self.part_size) as u64;
        let (bucket, path, key) = (self.bucket.clone(), self.path.clone(), self.key.clone());
        self.in_flight = Some(tokio::spawn(async move {
            let part = Part {
                idx,
                offset,
                payload,
            };
            upload_part(bucket, path, key, session, part).await
        }));
        Ok(())
    }

    async fn wait_in_flight(&mut self) -> Result<(), ObjectError> {
        let Some(task) = self.in_flight.take() else {
            return Ok(());
        };
        match task.await {
            Ok(Ok(Some(part))) => {
                self.parts.push(part);
                Ok(())
            }
            Ok(Ok(None)) => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(join) => Err(ObjectError::Other {
                op: Op::Multipart,
                path: self.path.clone(),
                source: Box::new(join),
            }),
        }
    }

    async fn start_session(&self) -> Result<Session, ObjectError> {
        let inner = &self.bucket.inner;
        let key = &self.key;
        if let Some(store) = &inner.multipart {
            let store_ref = store;
            let id = inner
                .run(Op::Multipart, &self.path, 0, || async move {
                    Ok((store_ref.create_multipart(key).await?, 0))
                })
                .await?;
            return Ok(Session::Parts {
                store: store.clone(),
                id,
            });
        }
        let Some(local) = &inner.local else {
            return Err(ObjectError::Other {
                op: Op::Multipart,
                path: self.path.clone(),
                source: "this backend has no multipart upload".into(),
            });
        };
        let dest = local
            .path_to_filesystem(key)
            .map_err(|e| ObjectError::Other {
                op: Op::Multipart,
                path: self.path.clone(),
                source: Box::new(e),
            })?;
        // A local file create is not a request: not retried (a retry after an
        // ambiguous failure could leave a staging file behind).
        let staging = blocking(move || LocalStaging::create(dest))
            .await
            .map_err(|e| ObjectError::Other {
                op: Op::Multipart,
                path: self.path.clone(),
                source: Box::new(e),
            })?;
        Ok(Session::Local(Arc::new(staging)))
    }

    async fn abort_session(&mut self) -> Result<(), ObjectError> {
        if let Some(task) = self.in_flight.take() {
            task.abort();
            let _ = task.await;
        }
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        abort_session(&self.bucket, &self.path, &self.key, session).await
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        let in_flight = self.in_flight.take();
        let Some(session) = self.session.take() else {
            if let Some(task) = in_flight {
                task.abort();
            }
            return;
        };
        tracing::warn!(
            path = %self.path,
            "upload dropped without finish() or abort(); aborting it in the background"
        );
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (bucket, path, key) = (self.bucket.clone(), self.path.clone(), self.key.clone());
        runtime.spawn(async move {
            if let Some(task) = in_flight {
                task.abort();
                let _ = task.await;
            }
            if let Err(e) = abort_session(&bucket, &path, &key, session).await {
                tracing::warn!(path = %path, error = %e, "background abort of an upload failed");
            }
        });
    }
}

async fn abort_session(
    bucket: &Bucket,
    path: &str,
    key: &Path,
    session: Session,
) -> Result<(), ObjectError> {
    let inner = &bucket.inner;
    let result = match session {
        Session::Parts { store, id } => {
            let (store, id) = (&store, &id);
            inner
                .run(Op::Multipart, path, 0, || async move {
                    store.abort_multipart(key, id).await?;
                    Ok(((), 0))
                })
                .await
        }
        Session::Local(staging) => {
            let staging = &staging;
            inner
                .run(Op::Multipart, path, 0, || async move {
                    let staging = staging.clone();
                    blocking(move || staging.abort()).await?;
                    Ok(((), 0))
                })
                .await
        }
    };
    match result {
        Err(ObjectError::NotFound { .. }) => Ok(()),
        other => other,
    }
}

/// One part of an upload.
struct Part {
    idx: usize,
    offset: u64,
    payload: PutPayload,
}

/// Uploads one part (retried as the module docs describe).
async fn upload_part(
    bucket: Bucket,
    path: String,
    key: Path,
    session: Session,
    part: Part,
) -> Result<Option<PartId>, ObjectError> {
    let Part {
        idx,
        offset,
        payload,
    } = part;
    let len = payload.content_length() as u64;
    match session {
        Session::Parts { store, id } => {
            let (store, id, key, payload) = (&store, &id, &key, &payload);
            bucket
                .inner
                .run(Op::Multipart, &path, len, || async move {
                    let part = store.put_part(key, id, idx, payload.clone()).await?;
                    Ok((Some(part), 0))
                })
                .await
        }
        Session::Local(staging) => {
            let (staging, payload) = (&staging, &payload);
            bucket
                .inner
                .run(Op::Multipart, &path, len, || async move {
                    let (staging, payload) = (staging.clone(), payload.clone());
                    blocking(move || staging.write_part(offset, &payload)).await?;
                    Ok((None, 0))
                })
                .await
        }
    }
}

/// Runs blocking file work off the async threads; an I/O error becomes a
/// (permanent) store error.
async fn blocking<T, F>(work: F) -> Result<T, object_store::Error>
where
    F: FnOnce() -> std::io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    let generic = |source: Box<dyn std::error::Error + Send + Sync>| object_store::Error::Generic {
        store: "LocalFileSystem",
        source,
    };
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(generic(Box::new(e))),
        Err(join) => Err(generic(Box::new(join))),
    }
}
