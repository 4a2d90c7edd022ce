//! Reader for HBase's HFile format (v3 as HBase 2.x writes it, and v2), independent of
//! the rest of Shoal so that importers, bulk loaders and fuzzers can use it alone.
//!
//! [`HFile::open`] reads the trailer and the load-on-open section (data and meta index
//! roots, file info, bloom metadata); [`HFile::cells`] then reads the data blocks one at a
//! time, verifying HBase's block checksums, decompressing and decoding them, and checks
//! the cells come in HBase's order.
//!
//! [`HFileWriter`] writes HFiles (v3) that HBase opens and bulk loads.
//!
//! ```no_run
//! use shoal_hfile::HFile;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let file = std::fs::File::open("store/f/0123abcd")?;
//! let hfile = HFile::open(file, "store/f/0123abcd")?;
//! println!("{:?} {:?}", hfile.encoding(), hfile.compression());
//! for cell in hfile.cells() {
//!     let cell = cell?;
//!     println!("{:?}/{:?}:{:?} {} {}", cell.row, cell.family, cell.qualifier, cell.timestamp, cell.kind.name());
//! }
//! # Ok(())
//! # }
//! ```

mod block;
mod checksum;
mod compression;
mod cursor;
mod encoding;
mod error;
mod file_info;
mod index;
mod kv;
mod order;
mod protobuf;
mod reader;
mod source;
mod trailer;
mod writer;

pub use block::{BlockHeader, BlockType};
pub use checksum::ChecksumType;
pub use compression::Compression;
pub use encoding::{CellFormat, DataBlockEncoding};
pub use error::{ErrorKind, HFileError};
pub use file_info::FileInfo;
pub use index::IndexEntry;
pub use kv::{CellKind, HCell, Key, Tag, parse_key};
pub use order::Comparator;
pub use reader::{Cells, HFile};
pub use source::ReadAt;
pub use trailer::Trailer;
pub use writer::{
    COMPARATOR_CLASS, CellRef, HFileSummary, HFileWriter, HFileWriterOptions, MAX_FAMILY_LEN,
    MAX_ROW_LEN, WriteError,
};
