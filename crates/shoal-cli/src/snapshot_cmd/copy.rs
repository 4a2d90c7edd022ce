//! The copy machinery `shoal snapshot export` and `shoal snapshot import`
//! share: objects from one bucket to another, several at once, each
//! streamed in chunks (ranged GETs into a streaming upload, so memory stays
//! at a few chunks per copy in flight whatever the object's size), under an
//! optional bandwidth limit (a token bucket over the bytes copied), each
//! one's CRC32C computed on the way and checked against the object read
//! back from the target (one extra read per object), with a progress bar on
//! stderr.
//!
//! Resuming is this machinery's too: an object already at the target with
//! the expected size is not copied again if its CRC32C (read back) equals
//! the expected one, or, when none is known (an export), the source's.

use super::progress::Progress;
use anyhow::{Context, bail};
use futures::StreamExt;
use shoal_storage::object::Bucket;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest chunk read and written at once.
pub(crate) const MAX_CHUNK: u64 = 8 << 20;
/// Smallest chunk (a very low bandwidth limit).
const MIN_CHUNK: u64 = 64 << 10;
/// Copies of one object made before a read-back mismatch is an error.
const ATTEMPTS: usize = 2;

/// One object to copy.
#[derive(Debug, Clone)]
pub(crate) struct CopyItem {
    /// Its path in the source bucket.
    pub src: String,
    /// Its path in the target bucket.
    pub dst: String,
    /// Its size.
    pub size: u64,
    /// Its CRC32C if known beforehand (an import: from `export.json`); a
    /// source that reads otherwise is damaged.
    pub crc: Option<u32>,
}

/// An object at the target, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Copied {
    /// Its path in the target bucket.
    pub dst: String,
    /// Its size.
    pub size: u64,
    /// Its CRC32C.
    pub crc: u32,
}

/// The source does not hold what it should: its bytes differ from the
/// CRC32C recorded for them.
#[derive(Debug, thiserror::Error)]
#[error(
    "{path}: its bytes have CRC32C {actual:08x}, the export recorded {expected:08x}: the object is damaged"
)]
pub(crate) struct Damaged {
    /// The object, in the source.
    pub path: String,
    /// What was recorded.
    pub expected: u32,
    /// What its bytes give.
    pub actual: u32,
}

/// A copy given up because another one failed.
#[derive(Debug, thiserror::Error)]
#[error("stopped: another copy failed")]
struct Stopped;

/// How to copy.
#[derive(Debug, Clone)]
pub(crate) struct CopyOptions {
    /// Objects copied at once.
    pub parallel: usize,
    /// Bytes per second, at most (None: no limit).
    pub bandwidth: Option<u64>,
}

/// A token bucket: `take(n)` waits until `n` bytes may go at `rate`. A
/// take larger than what is in the bucket goes into debt and waits it off,
/// so chunks of any size keep the average rate.
#[derive(Debug)]
pub(crate) struct Limiter {
    rate: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl Limiter {
    pub(crate) fn new(bytes_per_sec: u64, burst: u64) -> Limiter {
        Limiter {
            rate: bytes_per_sec.max(1) as f64,
            burst: burst as f64,
            state: Mutex::new((0.0, Instant::now())),
        }
    }

    pub(crate) async fn take(&self, n: u64) {
        let wait = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let refill = now.duration_since(s.1).as_secs_f64() * self.rate;
            s.0 = (s.0 + refill).min(self.burst);
            s.1 = now;
            s.0 -= n as f64;
            if s.0 < 0.0 {
                Duration::from_secs_f64(-s.0 / self.rate)
            } else {
                Duration::ZERO
            }
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

/// Copies from `src` to `dst`.
pub(crate) struct Copier {
    src: Bucket,
    dst: Bucket,
    chunk: u64,
    limiter: Option<Limiter>,
    parallel: usize,
    progress: Arc<Progress>,
    /// Set at the first failure: copies not begun do not begin, those
    /// under way stop at their next chunk.
    stop: AtomicBool,
}

impl Copier {
    pub(crate) fn new(
        src: Bucket,
        dst: Bucket,
        options: &CopyOptions,
        progress: Arc<Progress>,
    ) -> Copier {
        // Under a limit, chunks of about an eighth of a second keep the
        // progress smooth and the rate even.
        let chunk = options
            .bandwidth
            .map_or(MAX_CHUNK, |b| (b / 8).clamp(MIN_CHUNK, MAX_CHUNK));
        Copier {
            src,
            dst,
            chunk,
            limiter: options.bandwidth.map(|b| Limiter::new(b, chunk)),
            parallel: options.parallel.max(1),
            progress,
            stop: AtomicBool::new(false),
        }
    }

    /// Copies every item not already at the target (`present`: sizes of
    /// what is there), at most `parallel` at once. At the first error the
    /// others stop (each at its next chunk, its upload aborted) and that
    /// error is returned once every copy has settled: no write of this call
    /// lands after it returns. The results are in `items`' order.
    pub(crate) async fn copy_all(
        &self,
        items: &[CopyItem],
        present: &HashMap<String, u64>,
    ) -> anyhow::Result<Vec<Copied>> {
        self.stop.store(false, Ordering::Relaxed);
        let mut order: Vec<usize> = (0..items.len()).collect();
        // Largest first: the last copies to finish are then small ones.
        order.sort_by_key(|&i| std::cmp::Reverse(items[i].size));
        let mut results: Vec<Option<Copied>> = vec![None; items.len()];
        let mut copies = futures::stream::iter(order)
            .map(|i| async move {
                let item = &items[i];
                let done = self.one(item, present.get(&item.dst).copied()).await;
                (i, done)
            })
            .buffer_unordered(self.parallel);
        let mut first: Option<anyhow::Error> = None;
        while let Some((i, done)) = copies.next().await {
            match done {
                Ok(c) => results[i] = Some(c),
                Err(e) => {
                    self.stop.store(true, Ordering::Relaxed);
                    if first.is_none() && e.downcast_ref::<Stopped>().is_none() {
                        first = Some(e);
                    }
                }
            }
        }
        if let Some(e) = first {
            return Err(e);
        }
        Ok(results.into_iter().flatten().collect())
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// One object: skipped if already there and checked, else copied and
    /// checked.
    async fn one(&self, item: &CopyItem, present: Option<u64>) -> anyhow::Result<Copied> {
        if self.stopped() {
            return Err(Stopped.into());
        }
        if present == Some(item.size)
            && let Some(crc) = self.already_there(item).await?
        {
            self.progress.skipped(item.size);
            return Ok(Copied {
                dst: item.dst.clone(),
                size: item.size,
                crc,
            });
        }
        let head = self
            .src
            .head(&item.src)
            .await
            .with_context(|| format!("reading {}", item.src))?;
        if head.size != item.size {
            bail!(
                "{}: {} bytes, where {} were recorded",
                item.src,
                head.size,
                item.size
            );
        }
        for attempt in 1..=ATTEMPTS {
            let crc = self.stream(item).await?;
            let back = self
                .crc_of(&self.dst, &item.dst, item.size)
                .await
                .with_context(|| format!("reading back {}", item.dst))?;
            if back == crc {
                self.progress.copied();
                return Ok(Copied {
                    dst: item.dst.clone(),
                    size: item.size,
                    crc,
                });
            }
            self.progress.retract(item.size);
            if attempt == ATTEMPTS {
                bail!(
                    "{}: read back from the target with CRC32C {back:08x} after writing {crc:08x}, \
                     {ATTEMPTS} times: the target does not keep what it is sent",
                    item.dst
                );
            }
            eprintln!(
                "\nwarning: {}: read back with CRC32C {back:08x} after writing {crc:08x}; copying it again",
                item.dst
            );
        }
        unreachable!("the loop returns or fails on its last attempt")
    }

    /// The CRC32C of the object already at the target, if it is the one
    /// wanted: equal to the recorded one, or when none is recorded, to the
    /// source's.
    async fn already_there(&self, item: &CopyItem) -> anyhow::Result<Option<u32>> {
        let target = self.crc_of(&self.dst, &item.dst, item.size);
        let (target, wanted) = match item.crc {
            Some(c) => (target.await, c),
            None => {
                let source = self.crc_of(&self.src, &item.src, item.size);
                let (target, source) = tokio::join!(target, source);
                (
                    target,
                    source.with_context(|| format!("reading {}", item.src))?,
                )
            }
        };
        // A target object that cannot be read whole (cut short, gone) is
        // copied again.
        Ok(target.ok().filter(|&t| t == wanted))
    }

    /// Streams `item` from the source into a new target object; returns
    /// its CRC32C. The target object appears whole or not at all.
    async fn stream(&self, item: &CopyItem) -> anyhow::Result<u32> {
        let mut upload = self
            .dst
            .upload(&item.dst)
            .await
            .with_context(|| format!("writing {}", item.dst))?;
        let mut crc = 0u32;
        let mut at = 0u64;
        while at < item.size {
            if self.stopped() {
                let _ = upload.abort().await;
                self.progress.retract(at);
                return Err(Stopped.into());
            }
            let end = (at + self.chunk).min(item.size);
            let data = match self.src.get_range(&item.src, at..end).await {
                Ok(d) => d,
                Err(e) => {
                    let _ = upload.abort().await;
                    return Err(e).with_context(|| format!("reading {}", item.src));
                }
            };
            if let Some(l) = &self.limiter {
                l.take(data.len() as u64).await;
            }
            crc = crc32c::crc32c_append(crc, &data);
            at = end;
            let n = data.len() as u64;
            if let Err(e) = upload.write(data).await {
                let _ = upload.abort().await;
                return Err(e).with_context(|| format!("writing {}", item.dst));
            }
            self.progress.bytes(n);
        }
        if let Some(expected) = item.crc
            && expected != crc
        {
            let _ = upload.abort().await;
            self.progress.retract(item.size);
            return Err(Damaged {
                path: item.src.clone(),
                expected,
                actual: crc,
            }
            .into());
        }
        upload
            .finish()
            .await
            .with_context(|| format!("writing {}", item.dst))?;
        Ok(crc)
    }

    /// The CRC32C of `size` bytes of `path` in `bucket`, read in chunks
    /// (not counted against the bandwidth limit: a check, not a copy).
    async fn crc_of(&self, bucket: &Bucket, path: &str, size: u64) -> anyhow::Result<u32> {
        let mut crc = 0u32;
        let mut at = 0u64;
        while at < size {
            let end = (at + MAX_CHUNK).min(size);
            let data = bucket.get_range(path, at..end).await?;
            crc = crc32c::crc32c_append(crc, &data);
            at = end;
        }
        Ok(crc)
    }
}

/// Removes what uploads killed midway left beside the objects `dsts` of a
/// local-directory target at `root`: the local store stages an object as
/// `<name>#<n>` and skips such files when listing, so nothing else would
/// ever remove them. Only the directories of `dsts` are looked at; best
/// effort. Returns how many were removed.
pub(crate) fn remove_local_leftovers<'a>(
    root: &Path,
    dsts: impl IntoIterator<Item = &'a str>,
) -> usize {
    let dirs: BTreeSet<&str> = dsts
        .into_iter()
        .map(|d| d.rsplit_once('/').map_or("", |(dir, _)| dir))
        .collect();
    let mut removed = 0;
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let staged = name
                .to_str()
                .and_then(|n| n.rsplit_once('#'))
                .is_some_and(|(base, n)| {
                    !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
                });
            if staged && std::fs::remove_file(e.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// The CRC32C of `data`.
pub(crate) fn crc_of_bytes(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bytes::Bytes;

    fn item(src: &str, dst: &str, size: u64, crc: Option<u32>) -> CopyItem {
        CopyItem {
            src: src.into(),
            dst: dst.into(),
            size,
            crc,
        }
    }

    #[tokio::test]
    async fn copies_verify_skip_what_is_there_and_refuse_damage() {
        let (src, dst) = (Bucket::memory(), Bucket::memory());
        let big: Vec<u8> = (0..(MAX_CHUNK as usize * 2 + 17))
            .map(|i| (i % 251) as u8)
            .collect();
        src.put("a", Bytes::from(big.clone())).await.unwrap();
        src.put("b", Bytes::from_static(b"")).await.unwrap();
        src.put("c", Bytes::from_static(b"hello")).await.unwrap();
        let options = CopyOptions {
            parallel: 2,
            bandwidth: None,
        };
        let progress = Progress::new("copied", 3, big.len() as u64 + 5);
        let copier = Copier::new(src.clone(), dst.clone(), &options, progress);
        let items = vec![
            item("a", "x/a", big.len() as u64, None),
            item("b", "x/b", 0, None),
            item("c", "x/c", 5, Some(crc_of_bytes(b"hello"))),
        ];
        let done = copier.copy_all(&items, &HashMap::new()).await.unwrap();
        assert_eq!(done[0].crc, crc_of_bytes(&big));
        assert_eq!(dst.get("x/a").await.unwrap(), Bytes::from(big.clone()));
        assert_eq!(dst.get("x/b").await.unwrap().len(), 0);

        // Again: everything is there and checked, nothing copied.
        let present: HashMap<String, u64> = dst
            .list("x")
            .await
            .unwrap()
            .into_iter()
            .map(|o| (o.path, o.size))
            .collect();
        let progress = Progress::new("copied", 3, big.len() as u64 + 5);
        let copier = Copier::new(src.clone(), dst.clone(), &options, progress.clone());
        assert_eq!(copier.copy_all(&items, &present).await.unwrap(), done);
        assert_eq!(progress.counts(), (0, 3));

        // A target object with a wrong byte is copied again.
        let mut bad = big.clone();
        bad[5] ^= 1;
        dst.put("x/a", Bytes::from(bad)).await.unwrap();
        let progress = Progress::new("copied", 3, big.len() as u64 + 5);
        let copier = Copier::new(src.clone(), dst.clone(), &options, progress.clone());
        assert_eq!(copier.copy_all(&items, &present).await.unwrap(), done);
        assert_eq!(progress.counts(), (1, 2));
        assert_eq!(dst.get("x/a").await.unwrap(), Bytes::from(big));

        // A source that does not match its recorded CRC is damaged.
        let wrong = vec![item("c", "y/c", 5, Some(1))];
        let e = copier.copy_all(&wrong, &HashMap::new()).await.unwrap_err();
        let damaged = e.downcast_ref::<Damaged>().unwrap();
        assert_eq!(damaged.path, "c");
        assert!(!dst.exists("y/c").await.unwrap(), "nothing written");
    }

    #[tokio::test]
    async fn the_limiter_keeps_the_rate() {
        let l = Limiter::new(1 << 20, 64 << 10);
        let started = Instant::now();
        for _ in 0..8 {
            l.take(64 << 10).await;
        }
        let secs = started.elapsed().as_secs_f64();
        assert!((0.4..1.5).contains(&secs), "{secs}");
    }
}
