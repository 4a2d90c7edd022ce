//! LEB128 varints (7 bits per byte, low bits first), as in LevelDB and protobuf.

/// Appends `v` as a varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`, advancing it. `None` if truncated or longer than
/// ten bytes (a u64 never needs more).
#[inline]
pub(crate) fn get_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    // Lengths inside blocks are nearly always below 128: one byte, decoded
    // here inline; longer ones take the out-of-line loop.
    let first = *buf.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(u64::from(first));
    }
    get_varint_long(buf, pos)
}

#[inline(never)]
fn get_varint_long(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for i in 0..10 {
        let b = *buf.get(*pos + i)?;
        // The tenth byte may only carry the top bit of a u64.
        if i == 9 && b > 1 {
            return None;
        }
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *pos += i + 1;
            return Some(v);
        }
    }
    None
}

/// Reads a varint that must fit a `usize` no larger than `max`.
#[inline]
pub(crate) fn get_len(buf: &[u8], pos: &mut usize, max: usize) -> Option<usize> {
    let v = get_varint(buf, pos)?;
    usize::try_from(v).ok().filter(|&n| n <= max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips(v in any::<u64>()) {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            let mut pos = 0;
            prop_assert_eq!(get_varint(&buf, &mut pos), Some(v));
            prop_assert_eq!(pos, buf.len());
            for cut in 0..buf.len() {
                let mut pos = 0;
                prop_assert_eq!(get_varint(&buf[..cut], &mut pos), None);
            }
        }
    }

    #[test]
    fn overlong_is_rejected() {
        let mut pos = 0;
        assert_eq!(get_varint(&[0xff; 11], &mut pos), None);
        let mut pos = 0;
        assert_eq!(
            get_varint(
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
                &mut pos
            ),
            None
        );
    }
}
