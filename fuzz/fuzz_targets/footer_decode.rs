//! `Footer::decode(buf, file_len)` on arbitrary bytes. Must never panic, and a
//! footer that decodes must survive an encode/decode round trip.
//!
//! Input layout: `file_len: u64 LE | buf`. Random bytes almost never carry the
//! magic and a valid crc32c, so each input is tried twice: as is, and with the
//! magic and checksum patched in so the field validation behind them is reached.

#![no_main]

use libfuzzer_sys::fuzz_target;
use shoal_storage::sst::{FOOTER_LEN, Footer, MAGIC};

fn check(buf: &[u8], file_len: u64) {
    if let Ok(footer) = Footer::decode(buf, file_len) {
        assert!((1..=2).contains(&footer.index_levels));
        assert!(footer.tail_offset <= file_len - FOOTER_LEN as u64);
        let again = Footer::decode(&footer.encode(), file_len).expect("an encoded footer decodes");
        assert_eq!(again, footer);
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        let _ = Footer::decode(data, data.len() as u64);
        return;
    }
    let (len, buf) = data.split_at(8);
    let file_len = u64::from_le_bytes(len.try_into().expect("8 bytes"));
    check(buf, file_len);

    let mut fixed = [0u8; FOOTER_LEN];
    let n = buf.len().min(FOOTER_LEN);
    fixed[..n].copy_from_slice(&buf[..n]);
    fixed[64..72].copy_from_slice(&MAGIC);
    let crc = crc32c::crc32c(&fixed[..72]);
    fixed[72..76].copy_from_slice(&crc.to_le_bytes());
    check(&fixed, file_len);
});
