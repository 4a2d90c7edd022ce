//! Arbitrary bytes as a data or index block: `Block::new`, a full scan with
//! `advance`, and `seek` to a key taken from the input. Must never panic.
//!
//! Input layout: `n: u8 | target[..n] | block`. The target is an encoded cell
//! key when it decodes as one, else it is used as a row (first key of the row).

#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use shoal_storage::cell::KeyRef;
use shoal_storage::sst::block::Block;

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n).min(rest.len());
    let (target_bytes, block_bytes) = rest.split_at(n);
    let target =
        KeyRef::decode(target_bytes).unwrap_or_else(|_| KeyRef::first_of_row(target_bytes));

    let Ok(block) = Block::new(Bytes::copy_from_slice(block_bytes)) else {
        return;
    };
    assert_eq!(block.len(), block_bytes.len());

    // Full scan: every entry consumes at least three header bytes, so this ends.
    let mut it = block.iter();
    let mut entries = 0usize;
    let mut more = it.seek_to_first();
    while let Ok(true) = more {
        assert!(it.valid());
        let _ = KeyRef::decode(it.key());
        let v = it.value();
        assert!(v.len() <= block_bytes.len());
        entries += 1;
        assert!(
            entries <= block_bytes.len() / 3 + 1,
            "scan does not progress"
        );
        more = it.advance();
    }
    if more.is_err() || matches!(more, Ok(false)) {
        assert!(!it.valid());
    }

    // Seek, then walk on from wherever it landed.
    let mut it = block.iter();
    if let Ok(true) = it.seek(&target) {
        assert!(it.valid());
        let mut steps = 0usize;
        while let Ok(true) = it.advance() {
            steps += 1;
            assert!(
                steps <= block_bytes.len() / 3 + 1,
                "scan after seek does not progress"
            );
        }
    }
    // A seek on an exhausted or failed iterator must also be safe.
    let _ = it.seek(&target);
    let _ = it.seek_to_first();
});
