//! A lease kept alive, and this process's own view of whether it still holds
//! it — the view a server consults before acknowledging a write.
//!
//! The view is conservative: after each keep-alive that etcd answers, the
//! lease is held until *the moment that keep-alive was sent* plus the TTL
//! etcd returned. etcd's own expiry is later than that (it restarted the TTL
//! only when it received the request), so when this process believes it
//! holds the lease, etcd has not expired it yet, and nobody else can have
//! been given its regions. Clock rate differences between machines are far
//! below the margin a keep-alive interval of a third of the TTL leaves.

use crate::etcd::{Etcd, EtcdError};
use crate::proto;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// Whether the lease is held, as this process sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseState {
    /// Held until the given instant, unless renewed before.
    Held {
        /// When the lease lapses without another renewal.
        until: Instant,
    },
    /// The lease lapsed (or etcd said it is gone): it can never be held
    /// again; a new one must be granted.
    Lost,
}

/// A lease and the task that keeps it alive. Dropping it stops the
/// keep-alives (the lease then lapses after its TTL); [`KeptLease::revoke`]
/// ends it at once.
#[derive(Debug)]
pub struct KeptLease {
    id: i64,
    ttl: Duration,
    state: watch::Receiver<LeaseState>,
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
    etcd: Etcd,
}

impl KeptLease {
    /// Grants a lease of `ttl` and keeps it alive, renewing every third of
    /// the TTL.
    pub async fn grant(etcd: &Etcd, ttl: Duration) -> Result<KeptLease, EtcdError> {
        let sent = Instant::now();
        let (id, granted) = etcd.grant(ttl).await?;
        let ttl = Duration::from_secs(u64::try_from(granted.max(1)).unwrap_or(1));
        let (tx, state) = watch::channel(LeaseState::Held { until: sent + ttl });
        let stop = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(keep_alive(etcd.clone(), id, ttl, tx, stop.clone()));
        Ok(KeptLease {
            id,
            ttl,
            state,
            stop,
            task,
            etcd: etcd.clone(),
        })
    }

    /// The lease id, to attach keys to.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// The TTL etcd granted.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// True if the lease is held now, by this process's clock.
    pub fn is_held(&self) -> bool {
        match *self.state.borrow() {
            LeaseState::Held { until } => Instant::now() < until,
            LeaseState::Lost => false,
        }
    }

    /// Changes of the state (a renewal, or the loss).
    pub fn watch(&self) -> watch::Receiver<LeaseState> {
        self.state.clone()
    }

    /// Stops the keep-alives and revokes the lease: its keys go at once.
    pub async fn revoke(self) -> Result<(), EtcdError> {
        self.stop.store(true, Ordering::Release);
        self.task.abort();
        self.etcd.revoke(self.id).await
    }
}

impl Drop for KeptLease {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        self.task.abort();
    }
}

/// Renews `id` every third of `ttl` over one keep-alive stream (reopened
/// when it breaks) until the lease is lost or `stop` is set.
async fn keep_alive(
    etcd: Etcd,
    id: i64,
    ttl: Duration,
    state: watch::Sender<LeaseState>,
    stop: Arc<AtomicBool>,
) {
    let every = (ttl / 3).max(Duration::from_millis(100));
    let lapse = |state: &watch::Sender<LeaseState>| {
        let held_until = match *state.borrow() {
            LeaseState::Held { until } => until,
            LeaseState::Lost => return true,
        };
        if Instant::now() >= held_until {
            tracing::warn!(
                lease = id,
                "cluster lease lapsed: etcd did not renew it in time"
            );
            state.send_replace(LeaseState::Lost);
            return true;
        }
        false
    };
    'streams: while !stop.load(Ordering::Acquire) {
        let (tx, rx) = tokio::sync::mpsc::channel::<proto::LeaseKeepAliveRequest>(1);
        // etcd answers the stream's headers with its first response, so the
        // first request is queued before the call is awaited.
        let mut sent = Instant::now();
        if tx.send(proto::LeaseKeepAliveRequest { id }).await.is_err() {
            return;
        }
        let mut client = etcd.lease.clone();
        let opened = tokio::time::timeout(
            every,
            client.lease_keep_alive(tokio_stream::wrappers::ReceiverStream::new(rx)),
        )
        .await;
        let mut answers = match opened {
            Ok(Ok(r)) => r.into_inner(),
            _ => {
                if lapse(&state) {
                    return;
                }
                tokio::time::sleep(every / 4).await;
                continue 'streams;
            }
        };
        let mut first = true;
        loop {
            if stop.load(Ordering::Acquire) {
                return;
            }
            if !first {
                sent = Instant::now();
                if tx.send(proto::LeaseKeepAliveRequest { id }).await.is_err() {
                    continue 'streams;
                }
            }
            first = false;
            match tokio::time::timeout(every, answers.message()).await {
                Ok(Ok(Some(answer))) if answer.ttl > 0 => {
                    let granted = Duration::from_secs(u64::try_from(answer.ttl).unwrap_or(1));
                    if !matches!(*state.borrow(), LeaseState::Lost) {
                        state.send_replace(LeaseState::Held {
                            until: sent + granted,
                        });
                    }
                }
                Ok(Ok(Some(_))) => {
                    tracing::warn!(lease = id, "etcd says the cluster lease is gone");
                    state.send_replace(LeaseState::Lost);
                    return;
                }
                // The stream broke or etcd is slow: check the deadline, retry.
                _ => {
                    if lapse(&state) {
                        return;
                    }
                    continue 'streams;
                }
            }
            if lapse(&state) {
                return;
            }
            // Wake in time to notice a lapse even if renewals stop coming.
            let until = match *state.borrow() {
                LeaseState::Held { until } => until,
                LeaseState::Lost => return,
            };
            let next = (Instant::now() + every).min(until);
            tokio::time::sleep_until(next).await;
            if lapse(&state) {
                return;
            }
        }
    }
}
