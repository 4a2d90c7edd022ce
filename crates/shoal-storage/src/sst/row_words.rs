//! Row words: order-preserving 8-byte summaries of a sorted list of rows, so
//! a binary search over keys scattered in memory (a block's restart keys, a
//! file's index keys) compares words in one small array instead of reading
//! a key for each step, each a likely cache miss.
//!
//! All the rows share their first `skip` bytes (their common prefix); a row's
//! word is its bytes `skip..skip + 8`, big-endian, zero-padded. If two words
//! differ, their rows differ in the same order (a shorter row pads with
//! zeros, and a row that ends is smaller than any longer row with its
//! prefix); equal words say nothing, and the search compares the keys.
//! Built in memory when a block is decoded or a file opened; not stored.

use bytes::Bytes;
use std::cmp::Ordering;

/// The words of a list of rows, in the list's order.
#[derive(Debug, Default)]
pub(crate) struct RowWords {
    skip: usize,
    prefix: Bytes,
    words: Box<[u64]>,
}

/// Bytes `skip..skip + 8` of `row`, big-endian, zero-padded (also the
/// memstore keys' row words).
#[inline]
pub(crate) fn word(row: &[u8], skip: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(tail) = row.get(skip..) {
        let n = tail.len().min(8);
        w[..n].copy_from_slice(&tail[..n]);
    }
    u64::from_be_bytes(w)
}

impl RowWords {
    /// The words of `rows`; `prefix_of` turns the first row's common prefix
    /// into shared bytes (a slice of the block it lies in, or a copy).
    pub(crate) fn build<'a>(
        rows: &[&'a [u8]],
        prefix_of: impl FnOnce(&'a [u8]) -> Bytes,
    ) -> RowWords {
        let Some(first) = rows.first() else {
            return RowWords::default();
        };
        let skip = rows.iter().fold(first.len(), |common, row| {
            first[..common]
                .iter()
                .zip(row.iter())
                .take_while(|(a, b)| a == b)
                .count()
        });
        RowWords {
            skip,
            prefix: prefix_of(&first[..skip]),
            words: rows.iter().map(|r| word(r, skip)).collect(),
        }
    }

    /// The word of a searched-for row, or `None` when the row lacks the
    /// common prefix (the words then cannot order it; compare keys).
    #[inline]
    pub(crate) fn target(&self, row: &[u8]) -> Option<u64> {
        (!self.words.is_empty() && row.get(..self.skip) == Some(&self.prefix[..]))
            .then(|| word(row, self.skip))
    }

    /// Row `i` compared with the target row whose word is `target`, when the
    /// words decide it.
    #[inline]
    pub(crate) fn cmp(&self, i: usize, target: Option<u64>) -> Option<Ordering> {
        let order = self.words.get(i)?.cmp(&target?);
        (order != Ordering::Equal).then_some(order)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn words_that_differ_order_rows_as_bytes_do(
            rows in prop::collection::btree_set(prop::collection::vec(prop::sample::select(vec![0u8, 1, 0xff]), 0..12), 1..40),
            probe in prop::collection::vec(prop::sample::select(vec![0u8, 1, 0xff]), 0..12),
        ) {
            let rows: Vec<Vec<u8>> = rows.into_iter().collect();
            let refs: Vec<&[u8]> = rows.iter().map(Vec::as_slice).collect();
            let words = RowWords::build(&refs, Bytes::copy_from_slice);
            let target = words.target(&probe);
            for (i, row) in rows.iter().enumerate() {
                if let Some(order) = words.cmp(i, target) {
                    prop_assert_eq!(order, row.as_slice().cmp(probe.as_slice()));
                }
            }
            // Every row of the list has the prefix, so it has a word.
            for row in &rows {
                prop_assert!(words.target(row).is_some());
            }
        }
    }
}
