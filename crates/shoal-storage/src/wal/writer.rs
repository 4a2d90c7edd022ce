//! [`WalWriter`]: the single task that owns the segment being written and turns queued
//! appends into group commits.
//!
//! Appenders encode their record, take queue permits worth its size (the queue is bounded
//! in bytes: `append` waits when it is full) and send it here. The writer takes the first
//! queued append, then everything else already queued up to `max_batch_bytes`, and makes
//! the whole batch durable with one write + `fdatasync` (local, on a blocking thread) or
//! one create-if-absent PUT (object). Appends that arrive while a batch is syncing wait in
//! the queue and form the next batch, so batches grow with load and shrink to one entry
//! when idle, with no timer.
//!
//! Invariants: an append is answered `Ok` only after the bytes holding it are durable and
//! the retention table knows the segment holds it; the retention table is updated before
//! any ack, so `mark_flushed` can never delete a segment holding an unaccounted entry.
//! After a local write or sync fails, the segment's state is unknown (a failed fsync may
//! have dropped dirty pages), so the writer is poisoned and answers every later append
//! with [`WalError::Poisoned`]; a restart recovers what is on disk.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use bytes::Bytes;
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot};

use super::error::WalError;
use super::history::{self, History};
use super::local::{SegmentFile, SpareSegment};
use super::metrics::WalMetrics;
use super::object;
use super::record::{self, HEADER_LEN};
use super::retention::{self, RegionMaxes, SegmentTable};
use super::stamp::Stamper;
use crate::object::Bucket;

/// One queued append: one record, or several of one region (`Wal::append_many`).
pub(crate) struct Pending {
    pub region: String,
    /// The highest sequence number among its records (what retention needs).
    pub seq: u64,
    /// The encoded records (prefix and body each), back to back.
    pub record: Vec<u8>,
    /// How many records `record` holds.
    pub entries: u64,
    pub done: oneshot::Sender<Result<(), WalError>>,
    /// Queue space, released when the append is answered.
    pub permit: OwnedSemaphorePermit,
}

pub(crate) enum Command {
    Append(Pending),
    /// Finish queued work, close the segment, answer, stop.
    Close(oneshot::Sender<Result<(), WalError>>),
}

/// State shared by the writer and the [`super::Wal`] handles.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub table: Mutex<SegmentTable>,
    pub metrics: WalMetrics,
    /// Set once the local writer's thread has finished all its work (its
    /// runtime dropped): nothing touches the segment files after that.
    pub writer_exited: Arc<std::sync::atomic::AtomicBool>,
    /// Object backend: the number and time of each segment object, taken by
    /// the writer for each group commit and by `Wal::append_bulk` for each of
    /// its objects (`stamp.rs`).
    pub stamper: Stamper,
    /// Object backend with `WalOptions::history`: the history kept for the window.
    pub history: Option<Arc<History>>,
}

impl Shared {
    pub fn table(&self) -> MutexGuard<'_, SegmentTable> {
        // The table is consistent after every statement, so a panic elsewhere while
        // holding the lock leaves nothing half-done.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn publish_live(&self, table: &SegmentTable) {
        use std::sync::atomic::Ordering::Relaxed;
        self.metrics.segments_live.store(table.live(), Relaxed);
        self.metrics.live_bytes.store(table.live_bytes(), Relaxed);
    }
}

/// Where batches go.
pub(crate) enum Sink {
    Local {
        dir: PathBuf,
        /// `None` only after a failure lost the handle.
        file: Option<SegmentFile>,
        segment_bytes: u64,
        writer_id: u128,
        /// The next segment, being prepared (preallocated) in the background.
        spare: Option<tokio::task::JoinHandle<Result<SpareSegment, WalError>>>,
        /// Prepare segments ahead of time (see `local`).
        preallocate: bool,
    },
    Object {
        bucket: Bucket,
        prefix: String,
    },
}

pub(crate) struct WalWriter {
    pub rx: mpsc::UnboundedReceiver<Command>,
    pub sink: Sink,
    pub shared: Arc<Shared>,
    pub max_batch_bytes: usize,
    pub poisoned: Option<Arc<WalError>>,
    /// Reused batch buffer (local backend).
    pub buf: Vec<u8>,
    /// Local backend: how long a batch waits for more appends before its
    /// write and `fdatasync`, when appends arrive fast enough that at least
    /// two more are expected in that time (see [`Arrivals`]). Zero: never.
    pub commit_delay: std::time::Duration,
    pub arrivals: Arrivals,
}

/// The recent rate of appends, measured over windows of about 20 ms: the
/// writer waits for a batch to grow only when the rate says it will.
#[derive(Debug)]
pub(crate) struct Arrivals {
    window_start: Instant,
    count: u64,
    per_sec: f64,
}

impl Default for Arrivals {
    fn default() -> Self {
        Arrivals {
            window_start: Instant::now(),
            count: 0,
            per_sec: 0.0,
        }
    }
}

impl Arrivals {
    const WINDOW: std::time::Duration = std::time::Duration::from_millis(20);

    fn note(&mut self, n: u64) {
        self.count += n;
        let elapsed = self.window_start.elapsed();
        if elapsed >= Self::WINDOW {
            self.per_sec = self.count as f64 / elapsed.as_secs_f64();
            self.count = 0;
            self.window_start = Instant::now();
        }
    }

    /// Appends expected within `d` at the recent rate: none once no batch
    /// has been noted for two windows (the rate measured before a quiet spell
    /// says nothing about the lone append that ends it).
    fn expected_within(&self, d: std::time::Duration) -> f64 {
        if self.window_start.elapsed() > 2 * Self::WINDOW {
            return 0.0;
        }
        self.per_sec * d.as_secs_f64()
    }
}

fn join_error(
    path: impl std::fmt::Display,
    action: &'static str,
    e: tokio::task::JoinError,
) -> WalError {
    WalError::io(
        path,
        action,
        std::io::Error::other(format!("blocking task failed: {e}")),
    )
}

impl WalWriter {
    pub async fn run(mut self) {
        let mut carry: Option<Command> = None;
        loop {
            let command = match carry.take() {
                Some(c) => c,
                None => match self.rx.recv().await {
                    Some(c) => c,
                    // Every `Wal` handle is gone: nobody can append or wait any more.
                    // (Not sealed: dropping every handle is how tests stand in
                    // for a crash, and what it leaves must read as one would.)
                    None => {
                        self.finish(false);
                        return;
                    }
                },
            };
            let first = match command {
                Command::Append(p) => p,
                Command::Close(reply) => {
                    self.finish(true);
                    self.refuse_rest();
                    let _ = reply.send(Ok(()));
                    return;
                }
            };
            let mut bytes = first.record.len();
            let mut batch = vec![first];
            carry = self.take_queued(&mut batch, &mut bytes);
            if carry.is_none() && self.should_wait(bytes) {
                // The writer has this thread to itself (local backend), so
                // a plain sleep holds up nothing but this batch.
                std::thread::sleep(self.commit_delay);
                carry = self.take_queued(&mut batch, &mut bytes);
            }
            self.arrivals.note(batch.len() as u64);
            self.commit(batch, bytes).await;
        }
    }

    /// Adds what is already queued to `batch`, up to `max_batch_bytes`;
    /// returns a command that must wait for the next round.
    fn take_queued(&mut self, batch: &mut Vec<Pending>, bytes: &mut usize) -> Option<Command> {
        while *bytes < self.max_batch_bytes {
            match self.rx.try_recv() {
                Ok(Command::Append(p)) if *bytes + p.record.len() <= self.max_batch_bytes => {
                    *bytes += p.record.len();
                    batch.push(p);
                }
                Ok(other) => return Some(other),
                Err(_) => return None,
            }
        }
        None
    }

    /// True if this batch should wait `commit_delay` for more appends: a
    /// local sink, room left, and at least two more appends expected in that
    /// time at the recent rate. One `fdatasync` per batch costs the same
    /// kernel work (and wake-ups) whatever the batch holds, so at high rates
    /// fewer, larger batches take CPU off every put; at low rates, or with a
    /// lone writer, nothing waits.
    fn should_wait(&self, bytes: usize) -> bool {
        !self.commit_delay.is_zero()
            && matches!(self.sink, Sink::Local { .. })
            && bytes < self.max_batch_bytes
            && self.arrivals.expected_within(self.commit_delay) >= 2.0
    }

    /// Makes `batch` durable and answers every append in it.
    async fn commit(&mut self, batch: Vec<Pending>, bytes: usize) {
        if let Some(cause) = &self.poisoned {
            let err = WalError::Poisoned {
                cause: cause.clone(),
            };
            self.answer(batch, Err(err));
            return;
        }
        let started = Instant::now();
        let result = match &mut self.sink {
            Sink::Local { .. } => self.write_local(&batch, bytes),
            Sink::Object { .. } => self.write_object(&batch, bytes).await,
        };
        match result {
            Ok(()) => {
                let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                let entries = batch.iter().map(|p| p.entries).sum();
                self.shared
                    .metrics
                    .record_sync(entries, bytes as u64, micros);
                self.answer(batch, Ok(()));
                self.maybe_roll().await;
            }
            Err(e) => {
                tracing::error!(error = %e, entries = batch.len(), "WAL group commit failed");
                let poison = match (&self.sink, &e) {
                    (Sink::Local { .. }, _) | (_, WalError::ConcurrentWriter { .. }) => true,
                    // A failed PUT leaves nothing half-written: the next batch goes to a
                    // fresh object.
                    (Sink::Object { .. }, _) => false,
                };
                if poison {
                    self.poisoned = Some(Arc::new(e.clone()));
                }
                self.answer(batch, Err(e));
            }
        }
    }

    fn answer(&self, batch: Vec<Pending>, result: Result<(), WalError>) {
        if result.is_err() {
            let entries = batch.iter().map(|p| p.entries).sum();
            self.shared.metrics.record_failures(entries);
        }
        for p in batch {
            // The appender may have given up (its future dropped); nothing to do then.
            let _ = p.done.send(result.clone());
            drop(p.permit);
        }
    }

    /// Writes and syncs `batch` inline: the local writer has a thread of its
    /// own (`log::spawn_local_writer`), where nothing else runs.
    fn write_local(&mut self, batch: &[Pending], bytes: usize) -> Result<(), WalError> {
        let Sink::Local { dir, file, .. } = &mut self.sink else {
            unreachable!("write_local on a local sink only")
        };
        let segment = file.as_mut().ok_or_else(|| {
            WalError::io(
                dir.display(),
                "write",
                std::io::Error::other("no open segment"),
            )
        })?;
        let buf = &mut self.buf;
        buf.clear();
        buf.reserve(bytes);
        for p in batch {
            buf.extend_from_slice(&p.record);
        }
        let result = segment.append(buf);
        if buf.capacity() > 2 * self.max_batch_bytes {
            *buf = Vec::new();
        }
        result?;
        let mut table = self.shared.table();
        for p in batch {
            table.note_current(&p.region, p.seq, p.record.len() as u64);
        }
        self.shared.publish_live(&table);
        Ok(())
    }

    async fn write_object(&mut self, batch: &[Pending], bytes: usize) -> Result<(), WalError> {
        let Sink::Object { bucket, prefix } = &mut self.sink else {
            unreachable!("write_object on an object sink only")
        };
        let shared = &self.shared;
        // Number and time (the object's own ULID) just before the bytes are assembled.
        let (flight, ulid) = shared.stamper.stamp_object();
        let number = flight.number;
        let mut data = Vec::with_capacity(HEADER_LEN + bytes);
        data.extend_from_slice(&record::encode_object_header(number, ulid));
        let mut maxes = RegionMaxes::new();
        for p in batch {
            data.extend_from_slice(&p.record);
            retention::note(&mut maxes, &p.region, p.seq);
        }
        object::put_segment(bucket, prefix, number, Bytes::from(data)).await?;
        let mut table = shared.table();
        table.add_sealed(number, maxes, bytes as u64);
        shared
            .metrics
            .segments_created
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        shared.publish_live(&table);
        // In the table before it leaves the in-flight set (`history::flushed_below_now`).
        drop(table);
        drop(flight);
        history::poke(shared);
        Ok(())
    }

    /// Starts a new local segment once the current one reaches `segment_bytes`;
    /// prepares the next one in the background once it is half full.
    async fn maybe_roll(&mut self) {
        let Sink::Local {
            dir,
            file,
            segment_bytes,
            writer_id,
            spare,
            preallocate,
        } = &mut self.sink
        else {
            return;
        };
        let Some(current) = file.as_ref() else { return };
        let next = current.number + 1;
        if *preallocate && spare.is_none() && current.len >= *segment_bytes / 2 {
            let (d, w, size) = (dir.clone(), *writer_id, *segment_bytes);
            *spare = Some(tokio::task::spawn_blocking(move || {
                SpareSegment::create(&d, next, w, size)
            }));
        }
        if current.len < *segment_bytes {
            return;
        }
        let (d, w) = (dir.clone(), *writer_id);
        // A spare takes segment number `next` itself, so waiting for it is the
        // only safe choice; it had half a segment's time, so this is rare.
        let spare = spare.take();
        if spare.as_ref().is_some_and(|t| !t.is_finished()) {
            tracing::warn!(
                segment = next,
                "WAL: the next segment is not prepared yet; commits wait for it"
            );
        }
        let prepared = match spare {
            Some(task) => match task.await {
                Ok(Ok(s)) if s.number() == next => Some(s),
                Ok(Ok(s)) => {
                    s.discard();
                    None
                }
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "WAL: preparing the next segment failed; creating it now");
                    None
                }
                Err(e) => {
                    tracing::warn!(error = %e, "WAL: preparing the next segment failed; creating it now");
                    None
                }
            },
            None => None,
        };
        let recycled = prepared.as_ref().is_some_and(SpareSegment::recycled);
        let created = tokio::task::spawn_blocking(move || match prepared {
            Some(s) => s.install(),
            None => SegmentFile::create(&d, next, w),
        })
        .await
        .unwrap_or_else(|e| Err(join_error(dir.display(), "create segment", e)));
        // The old segment's seal goes out before the first write to the new one, so
        // a newer segment holding records always means an older one ended cleanly.
        let created = created.and_then(|new| match file.as_mut() {
            Some(old) => old.seal().map(|()| new),
            None => Ok(new),
        });
        match created {
            Ok(new) => {
                *file = Some(new);
                if recycled {
                    self.shared
                        .metrics
                        .segments_recycled
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                let mut table = self.shared.table();
                table.start_current(next);
                self.shared
                    .metrics
                    .segments_created
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.shared.publish_live(&table);
            }
            Err(e) => {
                // Appending on to the old segment would be safe, but a half-created newer
                // file would make it "not the last" at the next open; stop instead.
                tracing::error!(error = %e, "WAL: could not start a new segment; refusing appends");
                self.poisoned = Some(Arc::new(e));
            }
        }
    }

    /// Closes the segment being written (it becomes sealed, deletable once covered).
    /// With `seal` (a close), its seal is written: it then reads as cleanly ended at
    /// the next open. Without one, or if the seal fails, what follows its last record
    /// reads as a torn tail there, and is cut.
    fn finish(&mut self, seal: bool) {
        if let Sink::Local { file, spare, .. } = &mut self.sink {
            if seal
                && self.poisoned.is_none()
                && let Some(segment) = file.as_mut()
                && let Err(e) = segment.seal()
            {
                tracing::warn!(error = %e, "WAL: could not seal the last segment at close");
            }
            *file = None;
            // A spare still being prepared is left for recovery to delete.
            drop(spare.take());
            let mut table = self.shared.table();
            table.seal_current();
            self.shared.publish_live(&table);
        }
    }

    /// After close: answer whatever is still queued with `Closed`.
    fn refuse_rest(&mut self) {
        self.rx.close();
        while let Ok(command) = self.rx.try_recv() {
            match command {
                Command::Append(p) => {
                    self.shared.metrics.record_failures(p.entries);
                    let _ = p.done.send(Err(WalError::Closed));
                }
                Command::Close(reply) => {
                    let _ = reply.send(Ok(()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Arrivals;
    use std::time::{Duration, Instant};

    #[test]
    fn arrivals_expect_appends_only_at_the_measured_rate() {
        let mut a = Arrivals::default();
        assert_eq!(a.expected_within(Duration::from_millis(1)), 0.0);
        // 100 appends over a window of at least 20 ms: at most 5,000/s.
        a.window_start = Instant::now() - Duration::from_millis(20);
        a.note(100);
        let per_ms = a.expected_within(Duration::from_millis(1));
        assert!(per_ms > 0.0 && per_ms <= 5.0, "{per_ms}");
        // After a quiet spell the old rate no longer counts.
        a.window_start = Instant::now() - Duration::from_millis(100);
        assert_eq!(a.expected_within(Duration::from_millis(1)), 0.0);
        a.window_start = Instant::now();
        // A quiet window brings the rate down again.
        a.window_start = Instant::now() - Duration::from_millis(20);
        a.note(0);
        assert_eq!(a.expected_within(Duration::from_millis(1)), 0.0);
    }
}
