//! Where background work runs: flushes, compactions and in-memory
//! compactions go to a small dedicated runtime whose threads run at a lower
//! CPU priority (a higher nice value), so on a busy machine the scheduler
//! gives writers and readers the CPU first and background work the rest —
//! RocksDB lowers its compaction threads' priority for the same reason.
//! Background work then cannot sit on a request-serving worker thread
//! either: a flush encoding blocks between two awaits no longer delays the
//! requests queued behind it.

use std::future::Future;
use std::sync::{Arc, Mutex};

/// A handle to the background runtime (cheap to clone; the runtime stops
/// when the last clone is dropped).
#[derive(Debug, Clone)]
pub struct Background {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    handle: tokio::runtime::Handle,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    nice: i32,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let rt = self
            .runtime
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(rt) = rt {
            // Never blocks, so it is safe inside an async context.
            rt.shutdown_background();
        }
    }
}

impl Background {
    /// A runtime of `threads` worker threads whose threads (workers and
    /// blocking pool) lower their priority to `nice` (0 keeps the
    /// default; Linux only, ignored elsewhere).
    pub fn new(threads: usize, nice: i32) -> std::io::Result<Background> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("shoal-background")
            .enable_all()
            .on_thread_start(move || lower_priority(nice))
            .build()?;
        Ok(Background {
            inner: Arc::new(Inner {
                handle: runtime.handle().clone(),
                runtime: Mutex::new(Some(runtime)),
                nice,
            }),
        })
    }

    /// The nice value of the runtime's threads.
    pub fn nice(&self) -> i32 {
        self.inner.nice
    }

    /// Runs `fut` on the background runtime.
    pub fn spawn<F>(&self, fut: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.inner.handle.spawn(fut)
    }

    /// Runs `f` on the background runtime's blocking pool, at its lower
    /// priority: CPU-heavy work that must not take the CPU from requests
    /// while they wait for it (a moving region's rows, built and taken).
    pub fn spawn_blocking<F, R>(&self, f: F) -> tokio::task::JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.inner.handle.spawn_blocking(f)
    }
}

/// Runs `f` on `background`'s blocking pool if there is one, else on the
/// current runtime's.
pub fn spawn_blocking<F, R>(background: Option<&Background>, f: F) -> tokio::task::JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    match background {
        Some(b) => b.spawn_blocking(f),
        None => tokio::task::spawn_blocking(f),
    }
}

/// Runs `fut` on `background` if there is one, else on the current runtime.
pub fn spawn<F>(background: Option<&Background>, fut: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match background {
        Some(b) => b.spawn(fut),
        None => tokio::spawn(fut),
    }
}

/// Lowers the calling thread's CPU priority to `nice` (0 does nothing;
/// Linux only). Failures are logged, never fatal.
#[cfg(target_os = "linux")]
pub fn lower_priority(nice: i32) {
    if nice == 0 {
        return;
    }
    // On Linux the nice value belongs to the thread: PRIO_PROCESS with a
    // thread id changes only that thread.
    let tid = rustix::thread::gettid();
    if let Err(e) = rustix::process::setpriority_process(Some(tid), nice) {
        tracing::warn!(nice, error = %e, "could not lower the priority of a background thread");
    }
}

/// Lowers the calling thread's CPU priority (Linux only; a no-op here).
#[cfg(not(target_os = "linux"))]
pub fn lower_priority(_nice: i32) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn background_threads_run_at_the_lower_priority() {
        let bg = Background::new(1, 7).unwrap();
        let nice = bg
            .spawn(async {
                let tid = rustix::thread::gettid();
                rustix::process::getpriority_process(Some(tid)).unwrap()
            })
            .await
            .unwrap();
        assert_eq!(nice, 7);
        let blocking = bg
            .spawn(async {
                tokio::task::spawn_blocking(|| {
                    let tid = rustix::thread::gettid();
                    rustix::process::getpriority_process(Some(tid)).unwrap()
                })
                .await
                .unwrap()
            })
            .await
            .unwrap();
        assert_eq!(blocking, 7, "the blocking pool is lowered too");
        let from_outside = spawn_blocking(Some(&bg), || {
            let tid = rustix::thread::gettid();
            rustix::process::getpriority_process(Some(tid)).unwrap()
        })
        .await
        .unwrap();
        assert_eq!(from_outside, 7, "work handed to its blocking pool");
        // Dropping the last handle inside an async context must not panic.
        drop(bg);
    }
}
