//! Cluster mode on the server: joining (an etcd lease and a member key that
//! names this server's address and WAL run), and the node's loop that runs
//! every round — keep the lease view the request path checks, campaign for
//! master and (as master) run the master's round, run this server's round
//! over its assignments, refresh the directory clients are pointed with,
//! follow catalog changes, delete WAL runs nobody needs. On a lost lease it
//! gives every region up without flushing and rejoins with a new WAL run.
//! A graceful stop drains: the master moves this server's regions away
//! (each flushed, so none is replayed) before it leaves.
//!
//! Peer reads (`peer_reads.rs`): a region that moved here reads its blocks
//! from the former owner's L2 before the object store. Warm handoff
//! (`handoff.rs`): before the master's moves, the target copies the
//! region's blocks from the owner while the owner still serves. Reads
//! through a move (`move_reads.rs`): the owner answers a moving region's
//! reads until the target has opened it and ends them.
//!
//! Cache facts (`cache_report.rs`): every few seconds the node publishes
//! what its cache holds of each region it serves or served, for the
//! master's placement.
//!
//! The host knows the cluster only through its seam (`crate::host`'s
//! `RegionOwnership` and `ClusterRole`), which [`ClusterState`] implements
//! (`seam.rs`): the lease (`state.rs`), table changes, moves and splits
//! (`admin.rs`) and what the directory tells (`views.rs`). The cluster in
//! turn drives the host through a narrow API: the regions driver
//! (`regions.rs`) opens an assigned region as named steps — replay, warm,
//! open, hand over, serve — and closes one for a move.
//!
//! The protocol itself (records, rounds, membership) is `shoal-cluster`.

mod admin;
mod cache_report;
mod handoff;
pub(crate) mod move_reads;
mod node;
mod peer_reads;
mod regions;
mod seam;
mod snapshot_cut;
mod state;
mod views;

pub use handoff::Handoffs;
pub use node::{ClusterNode, JoinedCluster, join};
pub use peer_reads::{MAX_PEER_BLOCKS, MAX_PEER_BYTES, PeerCallStats, PeerReads};
pub use state::{ClusterState, Directory, Failover, Owner, ServerView};
