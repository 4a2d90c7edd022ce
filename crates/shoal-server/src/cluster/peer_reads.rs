//! Peer reads: the cache's [`PeerTier`] in cluster mode. A region that moved
//! here leaves its blocks in the L2 of the server that served it before;
//! for `cluster.peer_window` after the move, blocks this server's caches
//! miss are asked of that server (`Admin.PeerBlocks`) before the object
//! store. Every call has `cluster.peer_read_timeout`; a peer that fails or
//! misses it is skipped for `cluster.peer_backoff`, so a dead peer costs one
//! deadline, not one per block. The cache verifies every frame (see
//! `shoal_storage::cache`); this module only finds the peer and asks.
//!
//! The answering side, which hands frames from this server's L2 to a peer
//! (bounded per call), is the host's: `host/peer_frames.rs`.

use super::ClusterState;
use crate::config::ServerConfig;
pub use crate::host::{MAX_PEER_BLOCKS, MAX_PEER_BYTES};
pub use crate::metrics::status::PeerCallStats;
use crate::security::Security;
use bytes::Bytes;
use futures::future::BoxFuture;
use shoal_proto::v1 as pb;
use shoal_storage::cache::{PeerAnswer, PeerAsk, PeerTier};
use shoal_storage::sst::BlockAddr;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tonic::transport::Channel;

/// Where a moved region's blocks may still be, and until when.
#[derive(Debug, Clone)]
struct Hint {
    /// The former owner's cluster name.
    server: String,
    until: Instant,
}

/// Peer reads of one server.
pub struct PeerReads {
    config: ServerConfig,
    security: Arc<Security>,
    state: Arc<ClusterState>,
    timeout: Duration,
    backoff: Duration,
    window: Duration,
    /// Region directory + '/' → the server that served it before.
    hints: Mutex<BTreeMap<String, Hint>>,
    channels: tokio::sync::Mutex<HashMap<String, Channel>>,
    /// Peers skipped until the instant (they failed or were too slow).
    down: Mutex<HashMap<String, Instant>>,
    calls: AtomicU64,
    failures: AtomicU64,
    micros: AtomicU64,
}

impl std::fmt::Debug for PeerReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerReads")
            .field("timeout", &self.timeout)
            .field("calls", &self.calls)
            .finish()
    }
}

impl PeerReads {
    /// Peer reads for the server `state` names, with `config`'s
    /// `[cluster]` settings.
    pub fn new(config: ServerConfig, security: Arc<Security>, state: Arc<ClusterState>) -> Self {
        let c = config.cluster.clone().unwrap_or_default();
        PeerReads {
            config,
            security,
            state,
            timeout: c.peer_read_timeout,
            backoff: c.peer_backoff,
            window: c.peer_window,
            hints: Mutex::default(),
            channels: tokio::sync::Mutex::default(),
            down: Mutex::default(),
            calls: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            micros: AtomicU64::new(0),
        }
    }

    /// Region `dir` moved here from `server`: ask it first for a while.
    pub fn hint(&self, dir: &str, server: &str) {
        if server == self.state.name {
            return;
        }
        let mut hints = self.hints.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        hints.retain(|_, h| h.until > now);
        hints.insert(
            format!("{}/", dir.trim_end_matches('/')),
            Hint {
                server: server.to_owned(),
                until: now + self.window,
            },
        );
    }

    /// The figures so far.
    pub fn stats(&self) -> PeerCallStats {
        let now = Instant::now();
        PeerCallStats {
            calls: self.calls.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            micros: self.micros.load(Ordering::Relaxed),
            hinted_regions: self
                .hints
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .filter(|h| h.until > now)
                .count() as u64,
        }
    }

    /// The peer to ask for the object at `path`, if any: its address.
    fn peer_for(&self, path: &str) -> Option<String> {
        let now = Instant::now();
        let server = {
            let hints = self.hints.lock().unwrap_or_else(|e| e.into_inner());
            // The greatest directory ≤ path is the only one that can prefix it.
            let (dir, hint) = hints.range(..=path.to_owned()).next_back()?;
            if !path.starts_with(dir.as_str()) || hint.until <= now {
                return None;
            }
            hint.server.clone()
        };
        let addr = self.state.server_addr(&server).filter(|a| !a.is_empty())?;
        let down = self.down.lock().unwrap_or_else(|e| e.into_inner());
        match down.get(&addr) {
            Some(until) if *until > now => None,
            _ => Some(addr),
        }
    }

    async fn channel(&self, addr: &str) -> Result<Channel, String> {
        let mut channels = self.channels.lock().await;
        if let Some(c) = channels.get(addr) {
            return Ok(c.clone());
        }
        // The channel's own limit is the largest call's deadline; each call
        // is held to its own (`deadline_for`).
        let longest = (self.timeout * PREFETCH_DEADLINE_FACTOR).max(MIN_PREFETCH_DEADLINE)
            + Duration::from_micros(MAX_PEER_BYTES / 64);
        let c = crate::security::peer::connect(&self.config, addr, longest).await?;
        channels.insert(addr.to_owned(), c.clone());
        Ok(c)
    }

    async fn call(&self, addr: &str, blocks: &[BlockAddr]) -> Result<Vec<Option<Bytes>>, String> {
        let channel = self.channel(addr).await?;
        let mut admin = pb::admin_client::AdminClient::new(channel);
        let req = pb::PeerBlocksRequest {
            blocks: blocks
                .iter()
                .map(|b| pb::PeerBlock {
                    file: b.file.to_string(),
                    offset: b.offset,
                    len: b.len,
                })
                .collect(),
        };
        let answer = admin
            .peer_blocks(crate::security::peer::authorize(
                &self.security,
                tonic::Request::new(req),
            ))
            .await
            .map_err(|s| s.message().to_owned())?
            .into_inner();
        Ok(answer
            .frames
            .into_iter()
            .map(|f| (!f.is_empty()).then_some(f))
            .collect())
    }

    async fn frames_from(&self, path: &str, blocks: &[BlockAddr], ask: PeerAsk) -> PeerAnswer {
        let Some(addr) = self.peer_for(path) else {
            return PeerAnswer::NoPeer;
        };
        let started = Instant::now();
        self.calls.fetch_add(1, Ordering::Relaxed);
        let mut answer = Vec::with_capacity(blocks.len());
        let mut result = Ok(());
        // A prefetch run can be longer than one call may ask.
        for chunk in blocks.chunks(MAX_PEER_BLOCKS) {
            let deadline = deadline_for(self.timeout, chunk, ask);
            match tokio::time::timeout(deadline, self.call(&addr, chunk)).await {
                Ok(Ok(frames)) => answer.extend(frames),
                Ok(Err(e)) => {
                    result = Err(e);
                    break;
                }
                Err(_) => {
                    result = Err(format!("no answer within {deadline:?}"));
                    break;
                }
            }
        }
        self.micros
            .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
        match result {
            Ok(()) => PeerAnswer::Frames(answer),
            Err(reason) => {
                self.failures.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(peer = %addr, %reason, backoff = ?self.backoff, "a peer's block read failed; reading from the object store and skipping the peer for a while");
                self.down
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(addr.clone(), Instant::now() + self.backoff);
                // The next attempt reconnects.
                self.channels.lock().await.remove(&addr);
                PeerAnswer::Failed
            }
        }
    }
}

/// A call's deadline: `timeout` (what a single block may take) plus the
/// time to move its bytes at 64 MB/s, so a prefetch or handoff call of a
/// few MiB is not cut off where an object-store GET of the same bytes would
/// still be running (90 MB/s per request in our S3 figures).
fn deadline_for(timeout: Duration, blocks: &[BlockAddr], ask: PeerAsk) -> Duration {
    let bytes: u64 = blocks.iter().map(|b| b.len).sum();
    let base = match ask {
        PeerAsk::Read => timeout,
        // Background copying waits on a busy peer longer: measured in the
        // rolling-restart scenario, a draining server under load answered
        // warm-ups after more than 50 ms, and each miss sent a region's
        // whole warm-up (131 blocks) to the object store and skipped the
        // peer for `peer_backoff`.
        PeerAsk::Prefetch => (timeout * PREFETCH_DEADLINE_FACTOR).max(MIN_PREFETCH_DEADLINE),
    };
    base + Duration::from_micros(bytes / 64)
}

/// A prefetch's peer call waits this many times `peer_read_timeout`...
const PREFETCH_DEADLINE_FACTOR: u32 = 10;
/// ... and at least this long.
const MIN_PREFETCH_DEADLINE: Duration = Duration::from_millis(500);

impl PeerTier for PeerReads {
    fn frames<'a>(
        &'a self,
        path: &'a str,
        blocks: &'a [BlockAddr],
        ask: PeerAsk,
    ) -> BoxFuture<'a, PeerAnswer> {
        Box::pin(self.frames_from(path, blocks, ask))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Directory, ServerView};
    use shoal_storage::sst::FileId;

    fn reads(peer_addr: &str, timeout: Duration) -> PeerReads {
        let state = Arc::new(ClusterState::new("me".into()));
        state.set_directory(Directory {
            servers: vec![ServerView {
                name: "old".into(),
                addr: peer_addr.into(),
                hbase: String::new(),
                regions: 0,
            }],
            ..Directory::default()
        });
        let config = ServerConfig {
            cluster: Some(crate::config::ClusterSection {
                peer_read_timeout: timeout,
                ..Default::default()
            }),
            ..ServerConfig::default()
        };
        PeerReads::new(config, Arc::new(Security::off()), state)
    }

    fn block() -> BlockAddr {
        BlockAddr {
            file: FileId(7),
            offset: 0,
            len: 100,
        }
    }

    #[test]
    fn only_files_under_a_hinted_region_have_a_peer() {
        let r = reads("127.0.0.1:1", Duration::from_millis(50));
        r.hint("data/t/r1", "old");
        r.hint("data/t/r3", "me"); // this server: never asked
        assert_eq!(
            r.peer_for("data/t/r1/cf/01.sst").as_deref(),
            Some("127.0.0.1:1")
        );
        assert_eq!(r.peer_for("data/t/r10/cf/01.sst"), None);
        assert_eq!(r.peer_for("data/t/r2/cf/01.sst"), None);
        assert_eq!(r.peer_for("data/t/r3/cf/01.sst"), None);
        assert_eq!(r.stats().hinted_regions, 1);
        // A former owner no longer in the cluster is not asked.
        r.hint("data/t/r4", "gone");
        assert_eq!(r.peer_for("data/t/r4/cf/01.sst"), None);
    }

    #[test]
    fn a_call_s_deadline_grows_with_its_bytes() {
        let t = Duration::from_millis(50);
        let one = BlockAddr {
            file: FileId(1),
            offset: 0,
            len: 64 << 10,
        };
        let read = PeerAsk::Read;
        assert_eq!(
            deadline_for(t, &[one], read),
            t + Duration::from_micros(1024)
        );
        // 128 blocks of 64 KiB (8 MiB): 131 ms more than one block's.
        let run = vec![one; 128];
        assert_eq!(
            deadline_for(t, &run, read),
            t + Duration::from_micros(131_072)
        );
        // Background copying waits ten times longer, at least 500 ms.
        let prefetch = PeerAsk::Prefetch;
        assert_eq!(
            deadline_for(t, &run, prefetch),
            Duration::from_millis(500) + Duration::from_micros(131_072)
        );
        assert_eq!(
            deadline_for(Duration::from_millis(80), &[one], prefetch),
            Duration::from_millis(800) + Duration::from_micros(1024)
        );
    }

    #[tokio::test]
    async fn a_peer_that_does_not_answer_costs_one_deadline_then_is_skipped() {
        // Accepts connections (the kernel's backlog) and never answers.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = silent.local_addr().unwrap().to_string();
        let timeout = Duration::from_millis(200);
        let r = reads(&addr, timeout);
        r.hint("data/t/r1", "old");
        let path = "data/t/r1/cf/01.sst";
        let started = Instant::now();
        assert!(matches!(
            r.frames(path, &[block()], PeerAsk::Read).await,
            PeerAnswer::Failed
        ));
        assert!(started.elapsed() >= timeout);
        assert_eq!(r.stats().failures, 1);
        // Backed off: the next read goes to the object store at once.
        assert!(matches!(
            r.frames(path, &[block()], PeerAsk::Read).await,
            PeerAnswer::NoPeer
        ));
        assert_eq!(r.stats().calls, 1);
        drop(silent);
    }

    #[tokio::test]
    async fn a_refused_connection_fails_at_once() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = closed.local_addr().unwrap().to_string();
        drop(closed);
        let r = reads(&addr, Duration::from_secs(5));
        r.hint("data/t/r1", "old");
        assert!(matches!(
            r.frames("data/t/r1/cf/01.sst", &[block()], PeerAsk::Read)
                .await,
            PeerAnswer::Failed
        ));
        assert_eq!(r.stats().failures, 1);
    }
}
