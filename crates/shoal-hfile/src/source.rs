//! Where HFile bytes come from: anything that can read a range at an offset.

use bytes::Bytes;
use std::io;

/// Positional reads. The reader asks for the trailer, the load-on-open section, then one
/// block at a time; it never asks for the whole file.
pub trait ReadAt {
    /// Length of the file in bytes.
    fn len(&self) -> u64;

    /// Reads exactly `len` bytes starting at `offset`, or fails (`UnexpectedEof` if the
    /// range runs past the end).
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>>;

    /// True if the file has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn slice_range(data: &[u8], offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let start = usize::try_from(offset).map_err(|_| eof())?;
    let end = start.checked_add(len).ok_or_else(eof)?;
    data.get(start..end).map(<[u8]>::to_vec).ok_or_else(eof)
}

fn eof() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "read past end of file")
}

impl ReadAt for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        slice_range(self, offset, len)
    }
}

impl ReadAt for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        slice_range(self, offset, len)
    }
}

impl ReadAt for Bytes {
    fn len(&self) -> u64 {
        self.as_ref().len() as u64
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        slice_range(self, offset, len)
    }
}

/// A file read with positional reads (files read here are immutable). If its metadata
/// cannot be read its length counts as 0, so opening it fails as "not an HFile".
impl ReadAt for std::fs::File {
    fn len(&self) -> u64 {
        self.metadata().map(|m| m.len()).unwrap_or(0)
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0; len];
        positional_read(self, &mut buf, offset)?;
        Ok(buf)
    }
}

#[cfg(unix)]
fn positional_read(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn positional_read(file: &std::fs::File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(eof()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn len(&self) -> u64 {
        (**self).len()
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        (**self).read_at(offset, len)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for std::sync::Arc<T> {
    fn len(&self) -> u64 {
        (**self).len()
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        (**self).read_at(offset, len)
    }
}
