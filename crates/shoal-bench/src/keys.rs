//! YCSB's key names: `"user"` + the decimal of the key number, hashed with
//! Java YCSB's `fnvhash64` when `insertorder=hashed`.

/// Java YCSB's `Utils.fnvhash64`: FNV-1a over the 8 bytes of the value,
/// least significant first, then `Math.abs` of the signed result
/// (`Long.MIN_VALUE` stays negative, as in Java).
pub fn fnvhash64(val: i64) -> i64 {
    const OFFSET: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
    const PRIME: i64 = 1_099_511_628_211;
    let mut h = OFFSET;
    let mut v = val;
    for _ in 0..8 {
        let octet = v & 0xff;
        v >>= 8;
        h ^= octet;
        h = h.wrapping_mul(PRIME);
    }
    h.wrapping_abs()
}

/// `buildKeyName`: `"user"` + the (hashed) key number, left-padded with
/// zeros to `zeropadding` digits.
pub fn build_key_name(keynum: u64, zeropadding: usize, hashed: bool) -> String {
    let k = if hashed {
        fnvhash64(keynum as i64)
    } else {
        keynum as i64
    };
    format!("user{k:0>zeropadding$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_java_ycsb() {
        assert_eq!(build_key_name(0, 1, true), "user6284781860667377211");
        assert_eq!(build_key_name(1, 1, true), "user8517097267634966620");
        assert_eq!(build_key_name(2, 1, true), "user1820151046732198393");
        // go-ycsb's big-endian variant would give user6284782960179005422.
        assert_ne!(build_key_name(1, 1, true), "user6284782960179005422");
        assert_eq!(build_key_name(42, 5, false), "user00042");
    }
}
