//! The one error type of this crate: which file, at which byte offset, and what was wrong.

use std::fmt;

/// Everything that can go wrong reading an HFile. Always names the file and the byte
/// offset (in the file) of the structure that was bad: the trailer, or the block whose
/// contents were bad.
#[derive(Debug)]
pub struct HFileError {
    /// The name given to [`crate::HFile::open`].
    pub file: String,
    /// Byte offset in the file of the damaged structure (block start, trailer start, …).
    pub offset: u64,
    /// What was wrong.
    pub kind: ErrorKind,
}

impl fmt::Display for HFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: at byte {}: {}", self.file, self.offset, self.kind)
    }
}

impl std::error::Error for HFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// What was wrong, without the where (see [`HFileError`]).
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("not an HFile: {0}")]
    NotAnHFile(String),
    #[error("unsupported HFile version {major}.{minor}")]
    UnsupportedVersion { major: u32, minor: u32 },
    #[error("truncated: {0}")]
    Truncated(String),
    #[error(
        "checksum mismatch in block at offset {block_offset} (chunk {chunk}: stored {stored:#010x}, computed {computed:#010x})"
    )]
    ChecksumMismatch {
        block_offset: u64,
        chunk: usize,
        stored: u32,
        computed: u32,
    },
    #[error("unknown checksum type {0}")]
    UnknownChecksumType(u8),
    #[error("bad block magic {0:?}")]
    BadBlockMagic(String),
    #[error("unexpected block type {found}, wanted {wanted}")]
    UnexpectedBlockType { found: String, wanted: String },
    #[error("unknown compression codec ordinal {0}")]
    UnknownCompression(u32),
    #[error("unsupported compression {0}")]
    UnsupportedCompression(&'static str),
    #[error("decompression failed ({codec}): {detail}")]
    Decompression { codec: &'static str, detail: String },
    #[error("unknown data block encoding id {0}")]
    UnknownEncodingId(u16),
    #[error("unknown data block encoding name {0:?}")]
    UnknownEncodingName(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("unknown comparator class {0:?}")]
    UnknownComparator(String),
    #[error("cell overruns block: {0}")]
    CellOverrunsBlock(String),
    #[error("corrupt: {0}")]
    Corrupt(String),
    #[error("cells out of order: {0}")]
    OutOfOrder(String),
}

impl HFileError {
    pub(crate) fn new(file: &str, offset: u64, kind: ErrorKind) -> Self {
        HFileError {
            file: file.to_owned(),
            offset,
            kind,
        }
    }
}

/// Where an error is reported: the file name and the offset of the structure being read.
/// Decoders take one so every error they raise is complete.
#[derive(Clone, Copy, Debug)]
pub(crate) struct At<'a> {
    pub file: &'a str,
    pub offset: u64,
}

impl At<'_> {
    pub fn err(&self, kind: ErrorKind) -> HFileError {
        HFileError::new(self.file, self.offset, kind)
    }

    pub fn corrupt(&self, what: impl Into<String>) -> HFileError {
        self.err(ErrorKind::Corrupt(what.into()))
    }

    pub fn truncated(&self, what: impl Into<String>) -> HFileError {
        self.err(ErrorKind::Truncated(what.into()))
    }
}
