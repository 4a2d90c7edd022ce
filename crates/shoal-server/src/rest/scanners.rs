//! The gateway's stateful scanners (`POST /<table>/scanner` → an id, then
//! `GET .../scanner/<id>` for pages until 204, then `DELETE`): each holds
//! its scan and the cells of a row a page stopped inside. A scanner nobody
//! read for `rest.scanner_timeout` is closed (a client that died never
//! closes its own, as HBase's scanner cache expires them), at most
//! `rest.max_scanners` are open, and a scanner belongs to the table it was
//! opened on.

use super::fault::RestError;
use crate::host::ScanStream;
use shoal_storage::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a scanner read so far.
pub struct ScanState {
    /// The scan.
    pub stream: ScanStream,
    /// Cells of a row read from the stream and not answered yet.
    pub pending: VecDeque<Cell>,
    /// Cells per page (the model's `batch`).
    pub batch: usize,
    /// The stream is done.
    pub done: bool,
}

/// One open scanner.
pub struct Open {
    /// Its table.
    pub table: String,
    /// The user that opened it (only they may read or close it).
    pub user: String,
    /// Its state; locked while a page is read.
    pub state: tokio::sync::Mutex<ScanState>,
    last_used_ms: AtomicU64,
}

/// Every open scanner of the gateway.
pub struct Scanners {
    open: Mutex<HashMap<String, Arc<Open>>>,
    started: Instant,
    timeout: Duration,
    max: usize,
}

impl Scanners {
    /// A registry closing scanners idle for `timeout`, holding at most `max`.
    pub fn new(timeout: Duration, max: usize) -> Scanners {
        Scanners {
            open: Mutex::new(HashMap::new()),
            started: Instant::now(),
            timeout,
            max,
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Registers a scan of `table` for `user`; its id.
    pub fn open(
        &self,
        table: &str,
        user: &str,
        stream: ScanStream,
        batch: usize,
    ) -> Result<String, RestError> {
        self.sweep();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() >= self.max {
            return Err(RestError::unavailable(format!(
                "too many open scanners ({}, rest.max_scanners): delete some, or let idle ones \
                 expire",
                open.len()
            )));
        }
        let id = loop {
            // HBase's ids are a time and a random number; unguessable here.
            let id = format!(
                "{:016x}{:016x}",
                rand::random::<u64>(),
                rand::random::<u64>()
            );
            if !open.contains_key(&id) {
                break id;
            }
        };
        open.insert(
            id.clone(),
            Arc::new(Open {
                table: table.to_string(),
                user: user.to_string(),
                state: tokio::sync::Mutex::new(ScanState {
                    stream,
                    pending: VecDeque::new(),
                    batch,
                    done: false,
                }),
                last_used_ms: AtomicU64::new(self.now_ms()),
            }),
        );
        Ok(id)
    }

    /// Scanner `id` of `table`, opened by `user`, marked used now.
    pub fn find(&self, table: &str, user: &str, id: &str) -> Result<Arc<Open>, RestError> {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        match open.get(id) {
            Some(s) if s.table == table && s.user == user => {
                s.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
                Ok(s.clone())
            }
            _ => Err(self.missing(id)),
        }
    }

    fn missing(&self, id: &str) -> RestError {
        RestError::not_found(format!(
            "scanner {id} does not exist (never opened, deleted, or expired after {:?} unused)",
            self.timeout
        ))
    }

    /// Marks scanner `id` used now (after a page was read).
    pub fn touch(&self, open: &Open) {
        open.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// Closes scanner `id` of `table`, opened by `user`.
    pub fn close(&self, table: &str, user: &str, id: &str) -> Result<(), RestError> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        match open.get(id) {
            Some(s) if s.table == table && s.user == user => {
                open.remove(id);
                Ok(())
            }
            _ => Err(self.missing(id)),
        }
    }

    /// Closes the scanners unused for longer than the timeout (not one
    /// being read now); how many.
    pub fn sweep(&self) -> usize {
        let now = self.now_ms();
        let timeout = self.timeout.as_millis() as u64;
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let before = open.len();
        open.retain(|_, s| {
            let idle = now.saturating_sub(s.last_used_ms.load(Ordering::Relaxed)) > timeout;
            !idle || s.state.try_lock().is_err()
        });
        let n = before - open.len();
        drop(open);
        if n > 0 {
            tracing::info!(scanners = n, "REST scanners expired unused");
        }
        n
    }

    /// Scanners open now.
    pub fn len(&self) -> usize {
        self.open.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}
