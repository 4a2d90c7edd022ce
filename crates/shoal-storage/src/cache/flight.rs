//! Single-flight: concurrent misses for the same key share one fetch.
//!
//! The first caller for a key becomes the leader and runs the fetch; callers
//! arriving while it runs wait on the same shared future. A successful
//! result stays joinable for [`LINGER`] after it completes: the caller
//! decodes the frame and puts the block into L1 only after its fetch
//! returns, and a miss that lands in that gap must join the finished flight
//! rather than issue a second GET. A failed fetch leaves the table at once
//! (the next caller retries), as does a flight every waiter abandoned.

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

type Flight<V, E> = Shared<BoxFuture<'static, Result<V, Arc<E>>>>;

/// In-flight fetches by key, each tagged with the id of the call that started it.
/// How long a completed flight's result stays joinable.
pub(crate) const LINGER: std::time::Duration = std::time::Duration::from_millis(5);

/// id, the shared fetch, and when it completed successfully.
type Table<K, V, E> = HashMap<K, (u64, Flight<V, E>, Option<std::time::Instant>)>;

/// Fetches in flight, by key.
pub(crate) struct Flights<K, V, E> {
    table: Mutex<Table<K, V, E>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl<K, V, E> Default for Flights<K, V, E> {
    fn default() -> Self {
        Flights {
            table: Mutex::new(HashMap::new()),
            next_id: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

/// Removes the table entry when the caller that created it is done with it.
struct Cleanup<'a, K: Hash + Eq, V, E> {
    flights: &'a Flights<K, V, E>,
    key: Option<K>,
    id: u64,
}

impl<K: Hash + Eq, V, E> Drop for Cleanup<'_, K, V, E> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let mut table = self.flights.table.lock().unwrap_or_else(|e| e.into_inner());
            if table.get(&key).is_some_and(|(id, _, _)| *id == self.id) {
                table.remove(&key);
            }
        }
    }
}

impl<K, V, E> Flights<K, V, E>
where
    K: Hash + Eq + Clone,
    V: Clone + Send + Sync + 'static,
    E: Send + Sync + 'static,
{
    /// Runs `fetch` for `key` unless a fetch for it is already running, in which
    /// case waits for that one. Returns the result and whether this call led.
    pub(crate) async fn run(
        &self,
        key: K,
        fetch: impl FnOnce() -> BoxFuture<'static, Result<V, E>>,
    ) -> (Result<V, Arc<E>>, bool) {
        let (flight, cleanup) = {
            let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
            let now = std::time::Instant::now();
            let fresh = |done: &Option<std::time::Instant>| {
                done.is_none_or(|t| now.duration_since(t) < LINGER)
            };
            match table.get(&key) {
                Some((_, f, done)) if fresh(done) => (f.clone(), None),
                _ => {
                    // Completed results past their linger time go now.
                    table.retain(|_, (_, _, done)| fresh(done));
                    let id = self
                        .next_id
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let f = fetch().map(|r| r.map_err(Arc::new)).boxed().shared();
                    table.insert(key.clone(), (id, f.clone(), None));
                    (
                        f,
                        Some(Cleanup {
                            flights: self,
                            key: Some(key),
                            id,
                        }),
                    )
                }
            }
        };
        let led = cleanup.is_some();
        let result = flight.await;
        if let Some(mut c) = cleanup
            && result.is_ok()
            && let Some(key) = c.key.take()
        {
            // Keep the result joinable for a moment (see the module doc).
            let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(entry) = table.get_mut(&key)
                && entry.0 == c.id
            {
                entry.2 = Some(std::time::Instant::now());
            }
        }
        (result, led)
    }

    /// Fetches currently in flight.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|(_, _, done)| done.is_none())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test(flavor = "current_thread")]
    async fn concurrent_misses_share_one_fetch() {
        let flights: Arc<Flights<u32, u32, String>> = Arc::new(Flights::default());
        let calls = Arc::new(AtomicU32::new(0));
        let (release, gate) = futures::channel::oneshot::channel::<()>();
        let gate = Arc::new(Mutex::new(Some(gate)));
        let mut tasks = Vec::new();
        for _ in 0..16 {
            let flights = flights.clone();
            let calls = calls.clone();
            let gate = gate.clone();
            tasks.push(tokio::spawn(async move {
                flights
                    .run(7, move || {
                        calls.fetch_add(1, Ordering::SeqCst);
                        let gate = gate.lock().unwrap().take();
                        async move {
                            if let Some(g) = gate {
                                let _ = g.await;
                            }
                            Ok(42)
                        }
                        .boxed()
                    })
                    .await
            }));
        }
        // On a current-thread runtime every spawned task runs until it blocks
        // on the shared fetch before this task continues.
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        assert_eq!(flights.len(), 1);
        release.send(()).unwrap();
        let mut leaders = 0;
        for t in tasks {
            let (r, led) = t.await.unwrap();
            assert_eq!(r.unwrap(), 42);
            leaders += usize::from(led);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(leaders, 1);
        assert_eq!(flights.len(), 0);
    }

    #[tokio::test]
    async fn a_miss_just_after_completion_joins_the_finished_fetch() {
        let flights: Flights<u32, u32, String> = Flights::default();
        let calls = Arc::new(AtomicU32::new(0));
        let fetch = |calls: Arc<AtomicU32>| {
            move || {
                calls.fetch_add(1, Ordering::SeqCst);
                async { Ok(9) }.boxed()
            }
        };
        let (r, led) = flights.run(3, fetch(calls.clone())).await;
        assert_eq!((r.unwrap(), led), (9, true));
        // Within the linger time: joined, no second fetch.
        let (r, led) = flights.run(3, fetch(calls.clone())).await;
        assert_eq!((r.unwrap(), led), (9, false));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        std::thread::sleep(LINGER * 2);
        let (_, led) = flights.run(3, fetch(calls.clone())).await;
        assert!(led);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn errors_are_not_remembered() {
        let flights: Flights<u32, u32, String> = Flights::default();
        let (r, _) = flights
            .run(1, || async { Err("boom".to_string()) }.boxed())
            .await;
        assert_eq!(r.unwrap_err().as_str(), "boom");
        let (r, led) = flights.run(1, || async { Ok(5) }.boxed()).await;
        assert_eq!((r.unwrap(), led), (5, true));
    }
}
