//! The scanners Thrift clients open (`scannerOpen*` → an id, then
//! `scannerGet*` until an empty list, then `scannerClose`): server-side
//! state with a lease. A scanner nobody asked rows from for
//! `thrift.scanner_timeout` is closed (a client that died never closes its
//! own), at most `thrift.max_scanners` are open at once, and one call's
//! answer stops growing at a byte budget, however many rows it asked for.

use super::convert;
use super::fault::Fault;
use super::wire::Value;
use crate::host::ScanStream;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One open scanner.
struct Open {
    state: tokio::sync::Mutex<OpenState>,
    /// Milliseconds since the registry started, at the last use.
    last_used_ms: AtomicU64,
}

struct OpenState {
    stream: ScanStream,
    /// Answer `sortedColumns` lists rather than column maps.
    sorted: bool,
    done: bool,
}

/// Every open scanner of the gateway.
pub struct Scanners {
    open: Mutex<HashMap<i32, Arc<Open>>>,
    next_id: AtomicI32,
    started: Instant,
    timeout: Duration,
    max: usize,
    /// Bytes of row data one call answers at most (it always answers at
    /// least one row, however large).
    budget: usize,
    expired: AtomicU64,
}

impl Scanners {
    /// A registry closing scanners idle for `timeout`, holding at most `max`.
    pub fn new(timeout: Duration, max: usize, budget: usize) -> Scanners {
        Scanners {
            open: Mutex::new(HashMap::new()),
            next_id: AtomicI32::new(1),
            started: Instant::now(),
            timeout,
            max,
            budget,
            expired: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Registers a scan; its id.
    pub fn open(&self, stream: ScanStream, sorted: bool) -> Result<i32, Fault> {
        self.sweep();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() >= self.max {
            return Err(Fault::io(format!(
                "too many open scanners ({}, thrift.max_scanners): close some, or let idle ones \
                 expire",
                open.len()
            )));
        }
        let id = loop {
            // Ids are positive and never reused while open.
            let id = self
                .next_id
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                    Some(if n == i32::MAX { 1 } else { n + 1 })
                })
                .unwrap_or(1);
            if !open.contains_key(&id) {
                break id;
            }
        };
        open.insert(
            id,
            Arc::new(Open {
                state: tokio::sync::Mutex::new(OpenState {
                    stream,
                    sorted,
                    done: false,
                }),
                last_used_ms: AtomicU64::new(self.now_ms()),
            }),
        );
        Ok(id)
    }

    fn find(&self, id: i32) -> Result<Arc<Open>, Fault> {
        self.open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
            .ok_or_else(|| {
                Fault::illegal(format!(
                    "scanner ID {id} is invalid (never opened, closed, or expired after {:?} \
                     unused)",
                    self.timeout
                ))
            })
    }

    /// Up to `n` more rows (`TRowResult`s) of scanner `id`; an empty list at
    /// the end.
    pub async fn next_rows(&self, id: i32, n: i32) -> Result<Vec<Value>, Fault> {
        let open = self.find(id)?;
        open.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        let mut state = open.state.lock().await;
        let mut rows = Vec::new();
        let mut bytes = 0usize;
        while !state.done
            && rows.len() < usize::try_from(n.max(0)).unwrap_or(0)
            && bytes < self.budget
        {
            match state.stream.next().await {
                Ok(Some(r)) => {
                    bytes += r
                        .cells
                        .iter()
                        .map(|c| c.family.len() + c.qualifier.len() + c.value.len() + 16)
                        .sum::<usize>()
                        + r.row.len();
                    rows.push(convert::row_result(r, state.sorted));
                }
                Ok(None) => state.done = true,
                Err(e) => return Err(Fault::io(e.to_string())),
            }
        }
        open.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        Ok(rows)
    }

    /// Closes scanner `id`.
    pub fn close(&self, id: i32) -> Result<(), Fault> {
        match self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
        {
            Some(_) => Ok(()),
            None => Err(Fault::illegal(format!("scanner ID {id} is invalid"))),
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
            self.expired.fetch_add(n as u64, Ordering::Relaxed);
            tracing::info!(scanners = n, "Thrift scanners expired unused");
        }
        n
    }

    /// Scanners open now.
    pub fn len(&self) -> usize {
        self.open.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// True if none is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Scanners closed by expiry since start.
    pub fn expired(&self) -> u64 {
        self.expired.load(Ordering::Relaxed)
    }
}
