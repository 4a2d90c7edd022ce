//! Byte encodings the writer needs: Hadoop's `WritableUtils` variable-length longs (cell
//! MVCC, root index key lengths) and protobuf varints and fields (trailer, file info).

/// Hadoop's `WritableUtils.writeVLong`: -112..=127 in one byte, otherwise a length byte
/// and the big-endian magnitude (ones' complement for negatives).
pub(crate) fn hadoop_vlong(out: &mut Vec<u8>, v: i64) {
    if (-112..=127).contains(&v) {
        out.push(v as u8);
        return;
    }
    let (mut i, mut len) = (v, -112i64);
    if i < 0 {
        i = !i;
        len = -120;
    }
    let mut tmp = i;
    while tmp != 0 {
        tmp >>= 8;
        len -= 1;
    }
    out.push(len as u8);
    let bytes = if len < -120 {
        -(len + 120)
    } else {
        -(len + 112)
    };
    for idx in (0..bytes).rev() {
        out.push((i >> (idx * 8)) as u8);
    }
}

/// A protobuf base-128 varint.
pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A protobuf varint field (wire type 0).
pub(crate) fn uint_field(out: &mut Vec<u8>, number: u32, v: u64) {
    varint(out, u64::from(number) << 3);
    varint(out, v);
}

/// A protobuf length-delimited field (wire type 2).
pub(crate) fn bytes_field(out: &mut Vec<u8>, number: u32, v: &[u8]) {
    varint(out, (u64::from(number) << 3) | 2);
    varint(out, v.len() as u64);
    out.extend_from_slice(v);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::Cursor;

    #[test]
    fn hadoop_vlong_reads_back() {
        for v in [
            0i64,
            1,
            127,
            128,
            -112,
            -113,
            255,
            256,
            65_535,
            1 << 40,
            i64::MAX,
            -1,
            i64::MIN,
        ] {
            let mut out = Vec::new();
            hadoop_vlong(&mut out, v);
            let mut c = Cursor::new(&out);
            assert_eq!(c.hadoop_vlong("v"), Ok(v), "{v}");
            assert!(c.is_empty());
        }
    }

    #[test]
    fn varints() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        let mut out = Vec::new();
        varint(&mut out, u64::MAX);
        assert_eq!(out.len(), 10);
    }
}
