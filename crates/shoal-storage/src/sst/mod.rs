//! The SST file format, version 1: immutable sorted files of cells.
//!
//! ```text
//! [data block 0] … [data block n-1]            cells, in key order
//! [bloom block]                                optional   ┐
//! [index leaf blocks]                          2-level    │ the tail, read in
//! [root index block]                                      │ one go at open
//! [meta block]                                            ┘
//! [footer, 76 bytes]
//! ```
//!
//! Every block is stored in a frame (optional compression, crc32c), addressed by
//! (file id, offset, length) and readable with one ranged GET. `docs/format.md`
//! specifies the bytes; each module's header repeats its part.
//!
//! Module map: [`block`] (entries, prefix compression, restarts), `compression`
//! (frames), `bloom`, `footer`, `meta`, `writer` (streaming writer and
//! sinks), `reader` (open and block reads), `iter` and `rev_iter` (forward and backward range scans), `object_io` (upload sink and bucket fetcher), `fetch` (the
//! [`BlockFetcher`] seam the block cache sits behind).

pub mod block;
mod bloom;
mod compression;
mod error;
mod fetch;
mod footer;
mod iter;
mod meta;
mod object_io;
mod reader;
mod rev_iter;
pub(crate) mod row_words;
pub(crate) mod varint;
mod writer;

pub use block::Block;
pub use bloom::{BloomFilter, BloomKind, bloom_hash, row_col_hash};
pub use compression::{Compression, FRAME_TRAILER_LEN};
pub(crate) use compression::{unseal, unseal_verified};
pub use error::SstError;
pub use fetch::{BlockAddr, BlockFetcher, BlockKind, FileId, MemoryFetcher, SstFile};
pub use footer::{BlockHandle, FOOTER_LEN, FORMAT_VERSION, Footer, FooterError, MAGIC};
pub use iter::{ScanRange, SstIter};
pub use meta::FileMeta;
pub use object_io::{BucketFetcher, UploadSink};
pub use reader::{DEFAULT_OPEN_READ_SIZE, SstReader};
pub use rev_iter::SstRevIter;
pub use writer::{BlockObserver, SstSink, SstSummary, SstWriter, SstWriterOptions};

#[cfg(test)]
mod tests;
