//! Shoal's storage engine.
//!
//! Layers, bottom up: [`object`] (every byte that reaches the object store goes
//! through a [`object::Bucket`]: metrics, retries, emulated latency), [`cell`]
//! (HBase's cell and its total order), and [`sst`] (the immutable sorted file
//! format, read block by block through a [`sst::BlockFetcher`] seam that the block
//! cache will sit behind).

pub mod background;
pub mod cache;
pub mod cell;
pub mod manifest;
pub mod memstore;
pub mod object;
pub mod region;
pub mod sst;
pub mod wal;
pub mod write_stages;
pub mod writeback;
