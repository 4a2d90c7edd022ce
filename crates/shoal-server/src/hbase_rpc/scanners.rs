//! Server-side scanners of the native RPC: one per client scan of one
//! region, keyed by scanner id. A scanner holds its place (a host scan
//! clamped to the region, read ahead by a task of its own into a small
//! queue, or the rows of a meta scan), the `next_call_seq` it expects, and
//! a lease: one nobody asked rows from for `hbase_rpc.scanner_timeout` is
//! closed. At most `hbase_rpc.max_scanners` are open at once. Reading from
//! the queue with a deadline is what lets a call answer a heartbeat while
//! a filtered scan is still looking for its next row.

use super::errors::{self, RpcError};
use crate::host::ScanStream;
use shoal_storage::region::RowResult;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where a scanner's rows come from.
pub enum Source {
    /// A scan of a Shoal table, clamped to one region, read ahead.
    Stream(Feed),
    /// Rows made at open (the virtual `hbase:meta`).
    Rows(VecDeque<RowResult>),
}

/// Row chunks a feed reads ahead of the calls.
const READ_AHEAD: usize = 32;

/// A host scan read by a task of its own into a bounded queue; the task
/// ends with the scan, or when the feed is dropped.
pub struct Feed {
    rx: tokio::sync::mpsc::Receiver<Result<RowResult, crate::error::ServiceError>>,
    task: tokio::task::JoinHandle<()>,
    /// Set, before the queue closes, when the scan ended because its
    /// filter was done.
    filter_done: Arc<std::sync::atomic::AtomicBool>,
}

impl Feed {
    /// Starts reading `stream`.
    pub fn start(mut stream: ScanStream) -> Feed {
        let (tx, rx) = tokio::sync::mpsc::channel(READ_AHEAD);
        let filter_done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let done = filter_done.clone();
        let task = tokio::spawn(async move {
            loop {
                match stream.next().await {
                    Ok(Some(row)) => {
                        if tx.send(Ok(row)).await.is_err() {
                            return;
                        }
                    }
                    Ok(None) => {
                        done.store(stream.filter_done(), Ordering::Release);
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                }
            }
        });
        Feed {
            rx,
            task,
            filter_done,
        }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What waiting for the next row chunk gave.
pub enum Next {
    /// A chunk.
    Row(RowResult),
    /// The scan (of this region) is over.
    End,
    /// Nothing yet: the wait ran out.
    Pending,
}

/// One scanner's state.
pub struct ScannerState {
    /// Its rows.
    pub source: Source,
    /// A row chunk read ahead (to know whether the row goes on).
    pub peeked: Option<RowResult>,
    /// The `next_call_seq` the next call must carry.
    pub next_seq: u64,
    /// Rows still allowed (the scan's limit), None: no limit.
    pub rows_left: Option<u64>,
    /// Bytes of cells one call answers at most (at least one row chunk).
    pub max_result_bytes: u64,
    /// A peek found the end.
    pub ended: bool,
    /// A peek met an error: answered when the client reaches it.
    pub failed_ahead: Option<crate::error::ServiceError>,
}

impl ScannerState {
    /// True once the scan ended because its filter was done (HBase's
    /// `isFilterDone`); known once the end was seen.
    pub fn filter_done(&self) -> bool {
        match &self.source {
            Source::Stream(feed) => feed.filter_done.load(Ordering::Acquire),
            Source::Rows(_) => false,
        }
    }

    async fn pull(&mut self, wait: Duration) -> Result<Next, crate::error::ServiceError> {
        match &mut self.source {
            Source::Rows(rows) => Ok(rows.pop_front().map_or(Next::End, Next::Row)),
            Source::Stream(feed) => match tokio::time::timeout(wait, feed.rx.recv()).await {
                Err(_) => Ok(Next::Pending),
                Ok(None) => Ok(Next::End),
                Ok(Some(Ok(row))) => Ok(Next::Row(row)),
                Ok(Some(Err(e))) => Err(e),
            },
        }
    }

    /// The next row chunk, waiting at most `wait` for it; an error read
    /// ahead by a peek comes out here, where the client reaches it.
    pub async fn next(&mut self, wait: Duration) -> Result<Next, crate::error::ServiceError> {
        if let Some(p) = self.peeked.take() {
            return Ok(Next::Row(p));
        }
        if let Some(e) = self.failed_ahead.take() {
            return Err(e);
        }
        self.pull(wait).await
    }

    /// Looks at the next row chunk without taking it, waiting at most
    /// `wait`: None when there is none yet, or none at all (see `ended`).
    /// An error met there is kept for [`ScannerState::next`]: the rows
    /// before it are answered first, and a client that stops before it (a
    /// limit) never sees it, as with HBase, which reads no further than
    /// the client asks.
    pub async fn peek(
        &mut self,
        wait: Duration,
    ) -> Result<Option<&RowResult>, crate::error::ServiceError> {
        if self.peeked.is_none() && self.failed_ahead.is_none() {
            match self.pull(wait).await {
                Ok(Next::Row(r)) => self.peeked = Some(r),
                Ok(Next::End) => self.ended = true,
                Ok(Next::Pending) => {}
                Err(e) => self.failed_ahead = Some(e),
            }
        }
        Ok(self.peeked.as_ref())
    }

    /// True when a peek met an error the client has not reached yet (so
    /// the region has more to answer: that error).
    pub fn failed_ahead(&self) -> bool {
        self.failed_ahead.is_some()
    }
}

struct Open {
    state: tokio::sync::Mutex<ScannerState>,
    last_used_ms: AtomicU64,
}

/// Every open scanner of the native RPC.
pub struct Scanners {
    open: Mutex<HashMap<u64, Arc<Open>>>,
    next_id: AtomicU64,
    started: Instant,
    timeout: Duration,
    max: usize,
}

/// A scanner taken for one call.
pub struct Lease {
    open: Arc<Open>,
}

impl Lease {
    /// Its state, locked for the call.
    pub async fn lock(&self) -> tokio::sync::MutexGuard<'_, ScannerState> {
        self.open.state.lock().await
    }
}

impl Scanners {
    /// A registry closing scanners idle for `timeout`, holding at most `max`.
    pub fn new(timeout: Duration, max: usize) -> Scanners {
        Scanners {
            open: Mutex::new(HashMap::new()),
            // Ids start high and random-ish so that a restarted server does
            // not hand out the ids of its previous life.
            next_id: AtomicU64::new(rand::random::<u32>() as u64 + 1),
            started: Instant::now(),
            timeout,
            max,
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Open>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lease, in seconds, the client is told.
    pub fn ttl_ms(&self) -> u32 {
        self.timeout.as_millis().min(u32::MAX as u128) as u32
    }

    /// Registers a scanner; its id.
    pub fn open(&self, state: ScannerState) -> Result<(u64, Lease), RpcError> {
        let mut map = self.map();
        if map.len() >= self.max {
            return Err(RpcError {
                class: "org.apache.hadoop.hbase.RegionTooBusyException",
                message: format!(
                    "{} scanners are open (hbase_rpc.max_scanners); close some or retry later",
                    map.len()
                ),
                do_not_retry: false,
                whole_call: false,
            });
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let open = Arc::new(Open {
            state: tokio::sync::Mutex::new(state),
            last_used_ms: AtomicU64::new(self.now_ms()),
        });
        map.insert(id, open.clone());
        Ok((id, Lease { open }))
    }

    /// The scanner `id`, its lease renewed.
    pub fn get(&self, id: u64) -> Result<Lease, RpcError> {
        let map = self.map();
        let open = map.get(&id).cloned().ok_or_else(|| {
            RpcError::fatal(
                errors::UNKNOWN_SCANNER,
                format!(
                    "Unknown scanner '{id}'. This can happen due to any of the following reasons: \
                     a) Scanner id given is wrong, b) Scanner lease expired because of long wait \
                     between consecutive client checkins, c) Server may be closing down, d) \
                     RegionServer restart during upgrade."
                ),
            )
        })?;
        open.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        Ok(Lease { open })
    }

    /// Closes `id` (closing one already gone is not an error).
    pub fn close(&self, id: u64) {
        self.map().remove(&id);
    }

    /// Closes scanners idle past the lease.
    pub fn sweep(&self) {
        let now = self.now_ms();
        let limit = self.timeout.as_millis() as u64;
        let mut map = self.map();
        let before = map.len();
        map.retain(|_, o| now.saturating_sub(o.last_used_ms.load(Ordering::Relaxed)) < limit);
        let gone = before - map.len();
        if gone > 0 {
            tracing::debug!(expired = gone, "native RPC scanners expired");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> ScannerState {
        ScannerState {
            source: Source::Rows(VecDeque::new()),
            peeked: None,
            next_seq: 0,
            rows_left: None,
            max_result_bytes: 1 << 20,
            ended: false,
            failed_ahead: None,
        }
    }

    #[test]
    fn limits_and_leases() {
        let s = Scanners::new(Duration::from_millis(0), 2);
        let (a, _) = s.open(rows()).unwrap();
        let (b, _) = s.open(rows()).unwrap();
        assert_ne!(a, b);
        assert!(s.open(rows()).is_err(), "over max_scanners");
        assert!(s.get(a).is_ok());
        s.close(a);
        s.close(a);
        assert_eq!(
            s.get(a).err().map(|e| e.class),
            Some(errors::UNKNOWN_SCANNER)
        );
        // A zero lease: everything idle expires.
        s.sweep();
        assert!(s.get(b).is_err(), "expired");
        assert!(s.open(rows()).is_ok(), "room again");
    }
}
