//! The peer tier: block frames read from another server's L2 before the
//! object store.
//!
//! In a cluster a region that moves (balance, drain, a server that died and
//! came back) leaves its blocks in the L2 of the server that served it. The
//! cache asks a [`PeerTier`] for a block that misses both local tiers, and
//! prefetch-on-open asks it for whole runs, before either goes to the object
//! store. The tier (the server's cluster code) knows which peer may hold a
//! file and bounds every call by a deadline; this module only trusts what
//! it gets after the same checksum every L2 frame passes. A frame that
//! fails it is counted and the block is read from the object store: peer
//! data is never returned unverified.
//!
//! The other half, answering peers, is [`BlockCache::l2_frames`]: frames
//! from this server's L2 only (never the object store, so a peer's miss
//! never turns into a request on its behalf).

use super::{BlockCache, frame_is_sound, l2_frame_is_sound};
use crate::sst::BlockAddr;
use bytes::Bytes;
use futures::future::BoxFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a peer tier answered.
#[derive(Debug, Clone)]
pub enum PeerAnswer {
    /// No peer is known for the file: go to the object store.
    NoPeer,
    /// The peer failed or missed the deadline: go to the object store.
    Failed,
    /// One entry per block asked (`None`: the peer does not hold it).
    Frames(Vec<Option<Bytes>>),
}

/// Why the cache asks a peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerAsk {
    /// A read is waiting: the peer must beat the object store's first byte.
    Read,
    /// Background copying (prefetch-on-open, a warm handoff): nobody waits
    /// on it, and its alternative is object-store GETs, so a busy peer may
    /// take longer.
    Prefetch,
}

/// Another server's L2, as the cache sees it.
pub trait PeerTier: Send + Sync + 'static {
    /// The frames of `blocks` (all of the object at `path`). Must return
    /// within its own deadline (which may depend on `ask`).
    fn frames<'a>(
        &'a self,
        path: &'a str,
        blocks: &'a [BlockAddr],
        ask: PeerAsk,
    ) -> BoxFuture<'a, PeerAnswer>;
}

/// Counters of the peer tier, both directions.
#[derive(Debug, Default)]
pub(crate) struct PeerCounters {
    /// Blocks read from a peer (sound frames).
    pub hits: AtomicU64,
    /// Bytes of those blocks.
    pub bytes: AtomicU64,
    /// Blocks asked of a peer that it did not hold.
    pub misses: AtomicU64,
    /// Blocks a peer returned that failed their checksum.
    pub corrupt: AtomicU64,
    /// Blocks asked while the peer failed or was too slow (read from the
    /// object store instead).
    pub fallbacks: AtomicU64,
    /// Blocks this server's L2 handed to peers.
    pub served: AtomicU64,
    /// Bytes of those blocks.
    pub served_bytes: AtomicU64,
}

/// The peer tier's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerSnapshot {
    /// Blocks read from a peer's L2 instead of the object store.
    pub hits: u64,
    /// Bytes of those blocks.
    pub bytes: u64,
    /// Blocks a peer was asked for and did not hold.
    pub misses: u64,
    /// Blocks a peer returned that failed their checksum (never used).
    pub corrupt: u64,
    /// Blocks whose peer failed or missed its deadline.
    pub fallbacks: u64,
    /// Blocks this server's L2 handed to peers.
    pub served: u64,
    /// Bytes of those blocks.
    pub served_bytes: u64,
}

impl PeerCounters {
    pub(crate) fn snapshot(&self) -> PeerSnapshot {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        PeerSnapshot {
            hits: l(&self.hits),
            bytes: l(&self.bytes),
            misses: l(&self.misses),
            corrupt: l(&self.corrupt),
            fallbacks: l(&self.fallbacks),
            served: l(&self.served),
            served_bytes: l(&self.served_bytes),
        }
    }
}

impl BlockCache {
    /// Puts `tier` in front of the object store (`None` removes it).
    pub fn set_peer_tier(&self, tier: Option<Arc<dyn PeerTier>>) {
        *self.inner.peers.write().unwrap_or_else(|e| e.into_inner()) = tier;
    }

    fn peer_tier(&self) -> Option<Arc<dyn PeerTier>> {
        self.inner
            .peers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Asks the peer tier for `blocks` of `path`: the verified frames, one
    /// entry per block (`None` for a block to read from the object store).
    /// Returns `None` without a tier or when it had no answer.
    pub(crate) async fn peer_frames(
        &self,
        path: &str,
        blocks: &[BlockAddr],
        ask: PeerAsk,
    ) -> Option<Vec<Option<Bytes>>> {
        let tier = self.peer_tier()?;
        let c = &self.inner.peer;
        let answer = match tier.frames(path, blocks, ask).await {
            PeerAnswer::NoPeer => return None,
            PeerAnswer::Failed => {
                c.fallbacks
                    .fetch_add(blocks.len() as u64, Ordering::Relaxed);
                return None;
            }
            PeerAnswer::Frames(f) => f,
        };
        if answer.len() != blocks.len() {
            // A peer that answers another question: trust none of it.
            c.fallbacks
                .fetch_add(blocks.len() as u64, Ordering::Relaxed);
            return None;
        }
        Some(
            blocks
                .iter()
                .zip(answer)
                .map(|(b, frame)| match frame {
                    Some(f) if frame_is_sound(&f, b.len) => {
                        c.hits.fetch_add(1, Ordering::Relaxed);
                        c.bytes.fetch_add(b.len, Ordering::Relaxed);
                        Some(f)
                    }
                    Some(_) => {
                        tracing::warn!(
                            path,
                            offset = b.offset,
                            "a peer's block failed its checksum; reading it from the object store"
                        );
                        c.corrupt.fetch_add(1, Ordering::Relaxed);
                        None
                    }
                    None => {
                        c.misses.fetch_add(1, Ordering::Relaxed);
                        None
                    }
                })
                .collect(),
        )
    }

    /// For a peer: the frames of `blocks` this server's L2 holds, each
    /// verified (`None` for a block it does not hold or that fails its
    /// checksum). Never reads the object store and never fills L1.
    pub async fn l2_frames(&self, blocks: &[BlockAddr]) -> Vec<Option<Bytes>> {
        let Some(l2) = self.inner.l2.clone() else {
            return vec![None; blocks.len()];
        };
        let mut out = Vec::with_capacity(blocks.len());
        for b in blocks {
            let frame = match l2.get(b.file, b.offset).await {
                Some(f) if l2_frame_is_sound(l2.as_ref(), &f, b.len) => {
                    self.inner.peer.served.fetch_add(1, Ordering::Relaxed);
                    self.inner
                        .peer
                        .served_bytes
                        .fetch_add(b.len, Ordering::Relaxed);
                    Some(f)
                }
                _ => None,
            };
            out.push(frame);
        }
        out
    }
}
