//! Opens an SST and reads its blocks through a [`BlockFetcher`].
//!
//! Opening costs at most two requests: a suffix read of the last
//! `open_read_size` bytes (64 KiB by default), which for most files already
//! holds the footer and the whole tail (bloom, index, meta), and, only when the
//! tail is larger, one ranged read of the rest of it. The reader then keeps the
//! decoded index and bloom filter in memory, so any data block costs exactly one
//! ranged read (or a cache hit). Every block's checksum is verified before use.

use super::SstError;
use super::block::{Block, BlockError};
use super::bloom::{BloomFilter, BloomKind, bloom_hash, row_col_hash};
use super::fetch::{BlockAddr, BlockFetcher, BlockKind, SstFile};
use super::footer::{BlockHandle, FOOTER_LEN, FORMAT_VERSION, Footer, FooterError};
use super::iter::{ScanRange, SstIter};
use super::meta::FileMeta;
use super::row_words::RowWords;
use super::varint::get_varint;
use super::{unseal, unseal_verified};
use crate::cell::{Cell, KeyRef, cmp_encoded};
use bytes::{Bytes, BytesMut};
use std::sync::Arc;

/// Default bytes read from the end of a file when opening it.
pub const DEFAULT_OPEN_READ_SIZE: u64 = 64 * 1024;

/// One index entry: the last key of a data block and where the block is.
#[derive(Debug, Clone)]
pub(crate) struct IndexEntry {
    pub(crate) last_key: Bytes,
    pub(crate) handle: BlockHandle,
}

#[derive(Debug)]
struct Inner {
    file: SstFile,
    size: u64,
    fetcher: Arc<dyn BlockFetcher>,
    meta: FileMeta,
    index: Vec<IndexEntry>,
    /// Words of the index keys' rows, for `find_block` (see [`RowWords`]).
    index_words: RowWords,
    index_levels: u8,
    bloom: Option<BloomFilter>,
}

impl std::fmt::Debug for dyn BlockFetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BlockFetcher")
    }
}

/// An open SST. Cheap to clone; clones share the decoded index and bloom.
#[derive(Debug, Clone)]
pub struct SstReader {
    inner: Arc<Inner>,
}

impl SstReader {
    /// Opens `file`, reading the last [`DEFAULT_OPEN_READ_SIZE`] bytes first.
    pub async fn open(
        fetcher: Arc<dyn BlockFetcher>,
        file: SstFile,
    ) -> Result<SstReader, SstError> {
        SstReader::open_with(fetcher, file, DEFAULT_OPEN_READ_SIZE).await
    }

    /// Opens `file`, reading its last `open_read_size` bytes (≥ the footer) first.
    pub async fn open_with(
        fetcher: Arc<dyn BlockFetcher>,
        file: SstFile,
        open_read_size: u64,
    ) -> Result<SstReader, SstError> {
        let path = file.path.as_str();
        let (suffix, size) = fetcher
            .fetch_tail(path, file.id, open_read_size.max(FOOTER_LEN as u64))
            .await?;
        if size < FOOTER_LEN as u64 || (suffix.len() as u64) < (FOOTER_LEN as u64).min(size) {
            return Err(SstError::NotAnSst {
                file: path.to_string(),
                reason: format!("{size} bytes is shorter than a footer"),
            });
        }
        let footer_at = size - FOOTER_LEN as u64;
        let footer =
            Footer::decode(&suffix[suffix.len() - FOOTER_LEN..], size).map_err(|e| match e {
                FooterError::NotAnSst(reason) => SstError::NotAnSst {
                    file: path.to_string(),
                    reason,
                },
                FooterError::UnsupportedVersion(found) => SstError::UnsupportedVersion {
                    file: path.to_string(),
                    found,
                    supported: FORMAT_VERSION,
                },
                FooterError::Corrupt(reason) => SstError::corruption(path, footer_at, reason),
            })?;

        // The tail, [tail_offset, footer_at): reuse what the suffix read holds and
        // fetch the rest with one ranged read.
        let suffix_start = size - suffix.len() as u64;
        let tail = if footer.tail_offset >= suffix_start {
            let from = (footer.tail_offset - suffix_start) as usize;
            suffix.slice(from..suffix.len() - FOOTER_LEN)
        } else {
            let addr = BlockAddr {
                file: file.id,
                offset: footer.tail_offset,
                len: suffix_start - footer.tail_offset,
            };
            let head = fetcher.fetch(path, addr, BlockKind::Tail).await?;
            if head.len() as u64 != addr.len {
                return Err(SstError::corruption(
                    path,
                    addr.offset,
                    "short read of the file's tail",
                ));
            }
            let mut buf = BytesMut::with_capacity((footer_at - footer.tail_offset) as usize);
            buf.extend_from_slice(&head);
            buf.extend_from_slice(&suffix[..suffix.len() - FOOTER_LEN]);
            buf.freeze()
        };
        let tail_block = |h: BlockHandle| -> Result<Bytes, SstError> {
            let start = (h.offset - footer.tail_offset) as usize;
            let frame = tail.slice(start..start + h.len as usize);
            unseal(&frame).map_err(|reason| SstError::corruption(path, h.offset, reason))
        };

        let meta_raw = tail_block(footer.meta)?;
        let meta = FileMeta::decode(&meta_raw)
            .map_err(|r| SstError::corruption(path, footer.meta.offset, r))?;

        let root = parse_index(path, footer.index.offset, tail_block(footer.index)?)?;
        let index = if footer.index_levels == 1 {
            root
        } else {
            let mut all = Vec::new();
            for leaf in root {
                if leaf.handle.offset < footer.tail_offset || leaf.handle.end() > footer_at {
                    return Err(SstError::corruption(
                        path,
                        footer.index.offset,
                        "index leaf outside the tail",
                    ));
                }
                all.extend(parse_index(
                    path,
                    leaf.handle.offset,
                    tail_block(leaf.handle)?,
                )?);
            }
            all
        };
        // Data blocks are contiguous from offset 0 to the tail, in key order.
        let mut expect = 0u64;
        for e in &index {
            if e.handle.offset != expect || e.handle.len == 0 || e.handle.end() > footer.tail_offset
            {
                return Err(SstError::corruption(
                    path,
                    footer.index.offset,
                    "index handles do not tile the data",
                ));
            }
            expect = e.handle.end();
        }
        if expect != footer.tail_offset
            || index.len() as u64 != meta.data_block_count
            || index.is_empty()
        {
            return Err(SstError::corruption(
                path,
                footer.index.offset,
                "index does not cover the data blocks",
            ));
        }

        let bloom = match footer.bloom {
            Some(h) => Some(
                BloomFilter::decode(tail_block(h)?)
                    .map_err(|r| SstError::corruption(path, h.offset, r))?,
            ),
            None => None,
        };
        let index_words = {
            let mut rows = Vec::with_capacity(index.len());
            for e in &index {
                let key = KeyRef::decode(&e.last_key).map_err(|err| {
                    SstError::corruption(path, footer.index.offset, format!("index key: {err}"))
                })?;
                rows.push(key.row);
            }
            RowWords::build(&rows, Bytes::copy_from_slice)
        };
        Ok(SstReader {
            inner: Arc::new(Inner {
                size,
                fetcher,
                meta,
                index_words,
                index,
                index_levels: footer.index_levels,
                bloom,
                file,
            }),
        })
    }

    /// The file this reader reads.
    pub fn file(&self) -> &SstFile {
        &self.inner.file
    }

    /// Total size of the file in bytes.
    pub fn size(&self) -> u64 {
        self.inner.size
    }

    /// The file's meta block.
    pub fn meta(&self) -> &FileMeta {
        &self.inner.meta
    }

    /// 1 or 2.
    pub fn index_levels(&self) -> u8 {
        self.inner.index_levels
    }

    /// Number of data blocks.
    pub fn data_block_count(&self) -> usize {
        self.inner.index.len()
    }

    /// Address of data block `i` (for prefetching and the cache).
    pub fn block_addr(&self, i: usize) -> Option<BlockAddr> {
        self.inner.index.get(i).map(|e| BlockAddr {
            file: self.inner.file.id,
            offset: e.handle.offset,
            len: e.handle.len,
        })
    }

    /// False if the file certainly holds no cell of `row`.
    pub fn may_contain_row(&self, row: &[u8]) -> bool {
        match &self.inner.bloom {
            Some(b) if b.kind() == BloomKind::Row => b.may_contain_hash(bloom_hash(row)),
            _ => self.row_in_key_range(row),
        }
    }

    /// False if the file certainly holds no cell of column `row:qualifier`.
    pub fn may_contain_column(&self, row: &[u8], qualifier: &[u8]) -> bool {
        match &self.inner.bloom {
            Some(b) if b.kind() == BloomKind::RowCol => {
                b.may_contain_hash(row_col_hash(row, qualifier))
            }
            _ => self.may_contain_row(row),
        }
    }

    fn row_in_key_range(&self, row: &[u8]) -> bool {
        let m = &self.inner.meta;
        row >= &m.first_key.row[..] && row <= &m.last_key.row[..]
    }

    /// Index of the first data block whose last key is ≥ `key`, if any.
    pub(crate) fn find_block(&self, key: &KeyRef<'_>) -> Result<Option<usize>, SstError> {
        let index = &self.inner.index;
        let words = &self.inner.index_words;
        let target_word = words.target(key.row);
        let (mut lo, mut hi) = (0usize, index.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if let Some(order) = words.cmp(mid, target_word) {
                if order == std::cmp::Ordering::Less {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
                continue;
            }
            let order = cmp_encoded(&index[mid].last_key, key).map_err(|e| {
                SstError::corruption(
                    &self.inner.file.path,
                    index[mid].handle.offset,
                    format!("index key: {e}"),
                )
            })?;
            if order == std::cmp::Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok((lo < index.len()).then_some(lo))
    }

    /// The last key of data block `i`, encoded.
    pub(crate) fn block_last_key(&self, i: usize) -> Option<&Bytes> {
        self.inner.index.get(i).map(|e| &e.last_key)
    }

    /// Reads, verifies and decodes data block `i` (one ranged read on a miss).
    pub async fn read_block(&self, i: usize) -> Result<Block, SstError> {
        self.read_block_with(i, true).await
    }

    /// Reads data block `i`; with `fill_cache` false a cache may serve it but
    /// does not keep it.
    pub async fn read_block_with(&self, i: usize, fill_cache: bool) -> Result<Block, SstError> {
        let path = self.inner.file.path.as_str();
        let addr = self.block_addr(i).ok_or_else(|| {
            SstError::corruption(
                path,
                0,
                format!("block {i} of {} requested", self.data_block_count()),
            )
        })?;
        if let Some(block) = self.inner.fetcher.cached_block(&addr) {
            return Ok(block);
        }
        let (frame, verified) = self
            .inner
            .fetcher
            .fetch_verified(
                path,
                addr,
                if fill_cache {
                    BlockKind::Data
                } else {
                    BlockKind::DataNoFill
                },
            )
            .await?;
        if frame.len() as u64 != addr.len {
            return Err(SstError::corruption(
                path,
                addr.offset,
                format!("read {} bytes of a {}-byte block", frame.len(), addr.len),
            ));
        }
        let raw = if verified {
            unseal_verified(&frame)
        } else {
            unseal(&frame)
        }
        .map_err(|r| SstError::corruption(path, addr.offset, r))?;
        let block = Block::new(raw)
            .map_err(|e: BlockError| SstError::corruption(path, addr.offset, e.0))?;
        if fill_cache {
            self.inner.fetcher.offer_block(addr, &block);
        }
        Ok(block)
    }

    /// An iterator over the cells in `range`, positioned before the first.
    pub fn iter(&self, range: ScanRange) -> SstIter {
        SstIter::new(self.clone(), range, true)
    }

    /// Like [`SstReader::iter`], choosing whether blocks it reads may fill the cache.
    pub fn iter_with(&self, range: ScanRange, fill_cache: bool) -> SstIter {
        SstIter::new(self.clone(), range, fill_cache)
    }

    /// A backward iterator over the cells in `range`, starting at the largest.
    pub fn rev_iter(&self, range: ScanRange) -> super::rev_iter::SstRevIter {
        super::rev_iter::SstRevIter::new(self.clone(), range, true)
    }

    /// Like [`SstReader::rev_iter`], choosing whether blocks it reads may fill the cache.
    pub fn rev_iter_with(&self, range: ScanRange, fill_cache: bool) -> super::rev_iter::SstRevIter {
        super::rev_iter::SstRevIter::new(self.clone(), range, fill_cache)
    }

    /// The first cell at or after `key`, if any (a point lookup).
    pub async fn first_at_or_after(&self, key: KeyRef<'_>) -> Result<Option<Cell>, SstError> {
        let mut it = self.iter(ScanRange::all());
        it.seek(key).await?;
        it.next().await
    }
}

fn parse_index(path: &str, offset: u64, raw: Bytes) -> Result<Vec<IndexEntry>, SstError> {
    let block = Block::new(raw).map_err(|e| SstError::corruption(path, offset, e.0))?;
    let mut it = block.iter();
    let mut out = Vec::new();
    let mut prev: Option<Bytes> = None;
    let mut more = it
        .seek_to_first()
        .map_err(|e| SstError::corruption(path, offset, e.0))?;
    while more {
        let key = Bytes::copy_from_slice(it.key());
        let k = KeyRef::decode(&key)
            .map_err(|e| SstError::corruption(path, offset, format!("index key: {e}")))?;
        if let Some(p) = &prev {
            let pk =
                KeyRef::decode(p).map_err(|e| SstError::corruption(path, offset, e.to_string()))?;
            if pk >= k {
                return Err(SstError::corruption(
                    path,
                    offset,
                    "index keys out of order",
                ));
            }
        }
        let value = it.value();
        let mut pos = 0;
        let (Some(h_off), Some(h_len)) =
            (get_varint(&value, &mut pos), get_varint(&value, &mut pos))
        else {
            return Err(SstError::corruption(
                path,
                offset,
                "bad block handle in index",
            ));
        };
        out.push(IndexEntry {
            last_key: key.clone(),
            handle: BlockHandle {
                offset: h_off,
                len: h_len,
            },
        });
        prev = Some(key);
        more = it
            .advance()
            .map_err(|e| SstError::corruption(path, offset, e.0))?;
    }
    Ok(out)
}
