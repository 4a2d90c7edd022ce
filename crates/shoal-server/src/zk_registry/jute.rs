//! Jute, ZooKeeper's record encoding: big-endian `int` (4 bytes) and
//! `long` (8), `boolean` as one byte, `buffer` and `ustring` as an `int`
//! length (-1: null) then the bytes, `vector` as an `int` count (-1: null)
//! then the elements. Reading never trusts a length: each is checked
//! against the bytes left before anything is allocated.

/// Why a record could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JuteError {
    /// The record ends before a field does.
    #[error("record truncated: {field} needs {needed} bytes, {left} left")]
    Truncated {
        /// The field being read.
        field: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Bytes left.
        left: usize,
    },
    /// A length or count is negative (other than null's -1) or larger
    /// than the record.
    #[error("{field}: bad length {length}")]
    BadLength {
        /// The field being read.
        field: &'static str,
        /// The length read.
        length: i32,
    },
    /// A string is not UTF-8.
    #[error("{field}: not UTF-8")]
    NotUtf8 {
        /// The field being read.
        field: &'static str,
    },
}

/// Reads jute fields from one record, front to back.
#[derive(Debug)]
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader of `record`.
    pub fn new(record: &'a [u8]) -> Reader<'a> {
        Reader { rest: record }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], JuteError> {
        if self.rest.len() < n {
            return Err(JuteError::Truncated {
                field,
                needed: n,
                left: self.rest.len(),
            });
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    /// An `int`.
    pub fn int(&mut self, field: &'static str) -> Result<i32, JuteError> {
        let b = self.take(4, field)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A `long`.
    pub fn long(&mut self, field: &'static str) -> Result<i64, JuteError> {
        let b = self.take(8, field)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// A `boolean`.
    pub fn boolean(&mut self, field: &'static str) -> Result<bool, JuteError> {
        Ok(self.take(1, field)?[0] != 0)
    }

    /// A `buffer` (None: null).
    pub fn buffer(&mut self, field: &'static str) -> Result<Option<&'a [u8]>, JuteError> {
        let length = self.int(field)?;
        if length == -1 {
            return Ok(None);
        }
        let n = usize::try_from(length).map_err(|_| JuteError::BadLength { field, length })?;
        if n > self.rest.len() {
            return Err(JuteError::BadLength { field, length });
        }
        self.take(n, field).map(Some)
    }

    /// A `ustring` (None: null).
    pub fn ustring(&mut self, field: &'static str) -> Result<Option<&'a str>, JuteError> {
        match self.buffer(field)? {
            None => Ok(None),
            Some(b) => std::str::from_utf8(b)
                .map(Some)
                .map_err(|_| JuteError::NotUtf8 { field }),
        }
    }
}

/// Appends jute fields to a record.
#[derive(Debug, Default)]
pub struct Writer {
    out: Vec<u8>,
}

impl Writer {
    /// An empty record.
    pub fn new() -> Writer {
        Writer::default()
    }

    /// An `int`.
    pub fn int(&mut self, v: i32) -> &mut Writer {
        self.out.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// A `long`.
    pub fn long(&mut self, v: i64) -> &mut Writer {
        self.out.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// A `boolean`.
    pub fn boolean(&mut self, v: bool) -> &mut Writer {
        self.out.push(u8::from(v));
        self
    }

    /// A `buffer` (or `ustring`): its length, then its bytes. Records here
    /// are small (under the frame limit), so the length fits an `int`.
    pub fn buffer(&mut self, v: &[u8]) -> &mut Writer {
        self.int(i32::try_from(v.len()).unwrap_or(i32::MAX));
        self.out.extend_from_slice(v);
        self
    }

    /// A `vector<ustring>`.
    pub fn strings<S: AsRef<str>>(&mut self, v: &[S]) -> &mut Writer {
        self.int(i32::try_from(v.len()).unwrap_or(i32::MAX));
        for s in v {
            self.buffer(s.as_ref().as_bytes());
        }
        self
    }

    /// The record so far.
    #[cfg(test)]
    pub fn bytes(&self) -> &[u8] {
        &self.out
    }

    /// The record.
    pub fn finish(self) -> Vec<u8> {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let mut w = Writer::new();
        w.int(-2)
            .long(1 << 40)
            .boolean(true)
            .buffer(b"xy")
            .strings(&["a", "bc"]);
        let record = w.finish();
        let mut r = Reader::new(&record);
        assert_eq!(r.int("i").unwrap(), -2);
        assert_eq!(r.long("l").unwrap(), 1 << 40);
        assert!(r.boolean("b").unwrap());
        assert_eq!(r.buffer("buf").unwrap(), Some(&b"xy"[..]));
        assert_eq!(r.int("count").unwrap(), 2);
        assert_eq!(r.ustring("s").unwrap(), Some("a"));
        assert_eq!(r.ustring("s").unwrap(), Some("bc"));
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn bad_records_are_refused_without_allocating() {
        // Null buffer.
        let null = (-1i32).to_be_bytes();
        assert_eq!(Reader::new(&null).buffer("b").unwrap(), None);
        // A length past the end, a negative length, a short int.
        let mut huge = i32::MAX.to_be_bytes().to_vec();
        huge.extend_from_slice(b"abc");
        assert!(matches!(
            Reader::new(&huge).buffer("path"),
            Err(JuteError::BadLength { field: "path", .. })
        ));
        let neg = (-5i32).to_be_bytes();
        assert!(matches!(
            Reader::new(&neg).buffer("path"),
            Err(JuteError::BadLength { length: -5, .. })
        ));
        assert!(matches!(
            Reader::new(&[0, 1]).int("xid"),
            Err(JuteError::Truncated {
                needed: 4,
                left: 2,
                ..
            })
        ));
        let mut bad = 2i32.to_be_bytes().to_vec();
        bad.extend_from_slice(&[0xff, 0xfe]);
        assert_eq!(
            Reader::new(&bad).ustring("path"),
            Err(JuteError::NotUtf8 { field: "path" })
        );
    }
}
