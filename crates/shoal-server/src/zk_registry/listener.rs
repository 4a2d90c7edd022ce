//! The registry's port: accept connections up to `zk_registry.max_connections`
//! (one more is accepted and closed at once, as ZooKeeper does past
//! `maxClientCnxns`), each served in a task of its own; on stop, stop
//! accepting and end the connections (ZooKeeper clients reconnect, to
//! another server of the quorum string if there is one).

use super::{ZkRegistry, session};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::{JoinHandle, JoinSet};

/// The port's bounds.
#[derive(Debug, Clone, Copy)]
pub struct ZkLimits {
    /// Open connections at most.
    pub max_connections: usize,
    /// A connection's `ConnectRequest` must arrive within this.
    pub handshake: Duration,
}

/// Serves the registry on `listener` until `stop` turns true.
pub fn serve_zk_registry(
    listener: TcpListener,
    registry: Arc<ZkRegistry>,
    limits: ZkLimits,
    stop: watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(run(listener, registry, limits, stop))
}

async fn run(
    listener: TcpListener,
    registry: Arc<ZkRegistry>,
    limits: ZkLimits,
    stop: watch::Receiver<bool>,
) {
    let places = Arc::new(Semaphore::new(limits.max_connections));
    let mut tasks = JoinSet::new();
    let mut stopping = stop.clone();
    let mut last_refusal: Option<Instant> = None;
    loop {
        tokio::select! {
            biased;
            _ = crate::listen::stopped(&mut stopping) => break,
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                if let Err(e) = done
                    && !e.is_cancelled()
                {
                    tracing::error!(error = %e, "a ZooKeeper registry connection task failed");
                }
            }
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    let Ok(place) = places.clone().try_acquire_owned() else {
                        if last_refusal.is_none_or(|t| t.elapsed() > Duration::from_secs(10)) {
                            tracing::warn!(
                                %peer,
                                max_connections = limits.max_connections,
                                "ZooKeeper registry: connection refused, zk_registry.max_connections are open"
                            );
                            last_refusal = Some(Instant::now());
                        }
                        continue; // dropping `tcp` closes it
                    };
                    let _ = tcp.set_nodelay(true);
                    let registry = registry.clone();
                    let stop = stop.clone();
                    tasks.spawn(async move {
                        session::serve(tcp, peer, &registry, limits.handshake, stop).await;
                        drop(place);
                    });
                }
                Err(e) => {
                    // Out of descriptors and the like: wait, then go on.
                    tracing::warn!(error = %e, "ZooKeeper registry: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
    drop(listener);
    tasks.shutdown().await;
}
