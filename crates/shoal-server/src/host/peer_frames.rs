//! The answering side of peer reads: frames of blocks from this server's
//! L2, for another server that now serves a region this one served before
//! (it asks here before the object store; the asking side is the
//! cluster's). Only L2 answers — never the object store on another's
//! behalf — and each call is bounded in blocks and bytes. The asker checks
//! every frame's crc32c, as an L2 frame is checked.

use super::Host;
use crate::error::ServiceError;
use bytes::Bytes;
use shoal_storage::sst::BlockAddr;

/// Most blocks one `PeerBlocks` call may ask for.
pub const MAX_PEER_BLOCKS: usize = 1024;
/// Most frame bytes one `PeerBlocks` answer holds; blocks past it come back
/// empty (the asker reads them from the object store).
pub const MAX_PEER_BYTES: u64 = 16 << 20;

impl Host {
    /// For a peer: frames of `blocks` from this server's L2 (never the
    /// object store), at most [`MAX_PEER_BLOCKS`] blocks and
    /// [`MAX_PEER_BYTES`] of frames per call (blocks past that come back
    /// empty).
    pub(crate) async fn peer_blocks(
        &self,
        blocks: &[BlockAddr],
    ) -> Result<Vec<Option<Bytes>>, ServiceError> {
        if blocks.len() > MAX_PEER_BLOCKS {
            return Err(ServiceError::InvalidArgument(format!(
                "{} blocks asked; at most {MAX_PEER_BLOCKS} per call",
                blocks.len()
            )));
        }
        let Some(cache) = self.cache() else {
            return Ok(vec![None; blocks.len()]);
        };
        let mut budget = MAX_PEER_BYTES;
        let within = blocks
            .iter()
            .take_while(|b| {
                let fits = b.len <= budget;
                budget = budget.saturating_sub(b.len);
                fits
            })
            .count();
        let mut frames = cache.l2_frames(&blocks[..within]).await;
        frames.resize(blocks.len(), None);
        Ok(frames)
    }
}
