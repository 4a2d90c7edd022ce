//! SSTs on the object store: the writer's sink is a multipart [`Upload`], and
//! [`BucketFetcher`] reads blocks with ranged GETs.

use super::SstError;
use super::fetch::{BlockAddr, BlockFetcher, BlockKind, FileId};
use super::writer::SstSink;
use crate::object::{Bucket, Upload};
use bytes::Bytes;
use futures::future::BoxFuture;

fn object_err(file: &str, source: crate::object::ObjectError) -> SstError {
    SstError::Object {
        file: file.to_string(),
        source,
    }
}

/// Streams an SST into an object: full parts are uploaded as the writer goes,
/// and a file smaller than one part becomes a single PUT.
pub struct UploadSink {
    path: String,
    upload: Upload,
}

impl UploadSink {
    /// Starts an upload of `path` on `bucket`.
    pub async fn new(bucket: &Bucket, path: impl Into<String>) -> Result<UploadSink, SstError> {
        let path = path.into();
        let upload = bucket
            .upload(&path)
            .await
            .map_err(|e| object_err(&path, e))?;
        Ok(UploadSink { path, upload })
    }
}

impl SstSink for UploadSink {
    async fn write(&mut self, data: Bytes) -> Result<(), SstError> {
        let path = &self.path;
        self.upload
            .write(data)
            .await
            .map_err(|e| object_err(path, e))
    }

    async fn finish(self) -> Result<(), SstError> {
        let path = self.path;
        self.upload
            .finish()
            .await
            .map(|_| ())
            .map_err(|e| object_err(&path, e))
    }

    async fn abort(self) -> Result<(), SstError> {
        let path = self.path;
        self.upload.abort().await.map_err(|e| object_err(&path, e))
    }
}

/// Reads SST bytes straight from a bucket: one ranged GET per block, one suffix
/// GET per open. The block cache wraps a fetcher like this one.
#[derive(Debug, Clone)]
pub struct BucketFetcher {
    bucket: Bucket,
}

impl BucketFetcher {
    /// A fetcher over `bucket`.
    pub fn new(bucket: Bucket) -> BucketFetcher {
        BucketFetcher { bucket }
    }
}

impl BlockFetcher for BucketFetcher {
    fn fetch<'a>(
        &'a self,
        path: &'a str,
        addr: BlockAddr,
        _kind: BlockKind,
    ) -> BoxFuture<'a, Result<Bytes, SstError>> {
        Box::pin(async move {
            let end = addr.offset.checked_add(addr.len).ok_or_else(|| {
                SstError::corruption(
                    path,
                    addr.offset,
                    format!("block length {} overflows", addr.len),
                )
            })?;
            self.bucket
                .get_range(path, addr.offset..end)
                .await
                .map_err(|e| object_err(path, e))
        })
    }

    fn fetch_tail<'a>(
        &'a self,
        path: &'a str,
        _file: FileId,
        len: u64,
    ) -> BoxFuture<'a, Result<(Bytes, u64), SstError>> {
        Box::pin(async move {
            self.bucket
                .get_suffix(path, len)
                .await
                .map_err(|e| object_err(path, e))
        })
    }
}
