//! `decode_cell` and `KeyRef::decode` on arbitrary bytes. Must never panic, and
//! whatever decodes must re-encode to exactly the bytes it came from.

#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use shoal_storage::cell::{KeyRef, decode_cell, encode_cell, encoded_cell_len};
use std::cmp::Ordering;

fuzz_target!(|data: &[u8]| {
    // A key on its own (the form keys take in blocks and indexes).
    if let Ok(key) = KeyRef::decode(data) {
        assert_eq!(key.encoded_len(), data.len());
        assert_eq!(key.encode().expect("a decoded key re-encodes"), data);
        assert_eq!(key.cmp(&key), Ordering::Equal);
        let first = KeyRef::first_of_row(key.row);
        assert_ne!(first.cmp(&key), Ordering::Greater);
    }

    // A stream of cells (the WAL's form): decode until the first error.
    let buf = Bytes::copy_from_slice(data);
    let mut at = 0;
    while at < buf.len() {
        let Ok((cell, used)) = decode_cell(&buf.slice(at..)) else {
            break;
        };
        assert!(used > 0 && at + used <= buf.len());
        assert_eq!(encoded_cell_len(&cell), used);
        let mut out = Vec::new();
        encode_cell(&cell, &mut out).expect("a decoded cell re-encodes");
        assert_eq!(&out[..], &data[at..at + used]);
        at += used;
    }
});
