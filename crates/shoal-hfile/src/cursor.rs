//! Bounds-checked reading of big-endian integers, HBase's varints and byte runs from a
//! byte slice. Every read either succeeds or says what was being read when bytes ran out.

/// Reading position over a byte slice. Errors are plain strings naming what was being
/// read and where; callers wrap them with the file and block offset.
#[derive(Clone, Debug)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

pub(crate) type CResult<T> = Result<T, String>;

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn take(&mut self, n: usize, what: &str) -> CResult<&'a [u8]> {
        if n > self.remaining() {
            return Err(format!(
                "{what}: needs {n} bytes at position {}, only {} left",
                self.pos,
                self.remaining()
            ));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub fn array<const N: usize>(&mut self, what: &str) -> CResult<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub fn u8(&mut self, what: &str) -> CResult<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    pub fn u16(&mut self, what: &str) -> CResult<u16> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    pub fn u32(&mut self, what: &str) -> CResult<u32> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }

    pub fn i32(&mut self, what: &str) -> CResult<i32> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    pub fn u64(&mut self, what: &str) -> CResult<u64> {
        Ok(u64::from_be_bytes(self.array(what)?))
    }

    pub fn i64(&mut self, what: &str) -> CResult<i64> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }

    /// A non-negative big-endian i32 used as a length.
    pub fn len32(&mut self, what: &str) -> CResult<usize> {
        let v = self.i32(what)?;
        usize::try_from(v).map_err(|_| format!("{what}: negative length {v}"))
    }

    /// Hadoop's `WritableUtils` variable-length long (also used for vints).
    pub fn hadoop_vlong(&mut self, what: &str) -> CResult<i64> {
        let first = self.u8(what)? as i8;
        if first >= -112 {
            return Ok(i64::from(first));
        }
        let negative = first < -120;
        let len = if negative {
            -120 - i32::from(first)
        } else {
            -112 - i32::from(first)
        };
        let mut value: u64 = 0;
        for _ in 0..len {
            value = (value << 8) | u64::from(self.u8(what)?);
        }
        let value = value as i64;
        Ok(if negative { !value } else { value })
    }

    /// A Hadoop vint that must be a non-negative length.
    pub fn hadoop_vlen(&mut self, what: &str) -> CResult<usize> {
        let v = self.hadoop_vlong(what)?;
        usize::try_from(v)
            .ok()
            .filter(|_| v <= i64::from(i32::MAX))
            .ok_or_else(|| format!("{what}: bad length {v}"))
    }

    /// HBase's `ByteBufferUtils` compressed int: 7 bits a byte, least significant first,
    /// high bit set on all but the last byte; at most 5 bytes.
    pub fn compressed_int(&mut self, what: &str) -> CResult<usize> {
        let mut value: u64 = 0;
        for i in 0..5 {
            let b = self.u8(what)?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return i32::try_from(value)
                    .ok()
                    .and_then(|v| usize::try_from(v).ok())
                    .ok_or_else(|| format!("{what}: value {value} out of range"));
            }
        }
        Err(format!("{what}: compressed int longer than 5 bytes"))
    }

    /// `fit` bytes, least significant first (HBase's `ByteBufferUtils.readLong(in, n)`).
    pub fn le_long(&mut self, fit: usize, what: &str) -> CResult<u64> {
        let bytes = self.take(fit, what)?;
        Ok(bytes
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, b)| acc | (u64::from(*b) << (8 * i))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hadoop's WritableUtils.writeVLong, written from its documented layout.
    pub(crate) fn write_vlong(out: &mut Vec<u8>, v: i64) {
        if (-112..=127).contains(&v) {
            out.push(v as u8);
            return;
        }
        let (mut len, mut x) = (-112i32, v);
        if x < 0 {
            x = !x;
            len = -120;
        }
        let mut tmp = x;
        while tmp != 0 {
            tmp >>= 8;
            len -= 1;
        }
        out.push(len as i8 as u8);
        let n = if len < -120 {
            -(len + 120)
        } else {
            -(len + 112)
        };
        for idx in (0..n).rev() {
            out.push((x >> (idx * 8)) as u8);
        }
    }

    #[test]
    fn hadoop_vlong_round_trips() {
        for v in [
            0i64,
            1,
            -1,
            127,
            -112,
            -113,
            128,
            255,
            256,
            65_535,
            1 << 40,
            i64::MAX,
            i64::MIN,
            -1000,
        ] {
            let mut buf = Vec::new();
            write_vlong(&mut buf, v);
            let mut c = Cursor::new(&buf);
            assert_eq!(c.hadoop_vlong("v"), Ok(v), "value {v}");
            assert!(c.is_empty());
        }
    }

    #[test]
    fn compressed_int_reads_leb128() {
        let mut c = Cursor::new(&[0x96, 0x01, 0x05]);
        assert_eq!(c.compressed_int("x"), Ok(150));
        assert_eq!(c.compressed_int("x"), Ok(5));
        assert!(Cursor::new(&[0x80; 6]).compressed_int("x").is_err());
        assert!(Cursor::new(&[0x80]).compressed_int("x").is_err());
    }

    #[test]
    fn take_past_end_fails() {
        let mut c = Cursor::new(&[1, 2, 3]);
        assert!(c.u32("n").is_err());
        assert_eq!(c.u16("n"), Ok(0x0102));
    }
}
