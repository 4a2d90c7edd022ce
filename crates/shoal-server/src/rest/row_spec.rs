//! HBase REST's row specification: the part of a path after the table,
//! `<row>[,<end row>][/<column>[,<column>...]][/<timestamp>[,<end timestamp>]]`,
//! parsed as HBase's `RowSpec` does. Each piece is percent-decoded (`+` is
//! a space, as Java's `URLDecoder` reads it); a row ending in `*` is a
//! prefix (rows from it up to the prefix followed by 0xff, HBase's rule);
//! one timestamp `t` asks for versions in `[0, t)`, two for `[t0, t1)`.
//! With `e=b64` (or the `Encoding` header) rows and columns are base64url.

use super::fault::RestError;
use super::model::LATEST;
use bytes::Bytes;

/// What a row path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSpec {
    /// The row, or the first row of a range.
    pub row: Bytes,
    /// The end of a range (exclusive; None: one row).
    pub end_row: Option<Bytes>,
    /// `family` or `family:qualifier` each (empty: every column).
    pub columns: Vec<Bytes>,
    /// Versions from (inclusive).
    pub start_time: i64,
    /// Versions before (exclusive; [`LATEST`]: no bound).
    pub end_time: i64,
    /// Versions per column (`?v=`; 1 by default).
    pub max_versions: u32,
}

impl RowSpec {
    /// Parses `path` (after the table and its `/`), with `encoding` the
    /// `e` parameter or `Encoding` header when given.
    pub fn parse(path: &str, encoding: Option<&str>) -> Result<RowSpec, RestError> {
        let path = path.trim_start_matches('/');
        let mut parts = path.splitn(3, '/');
        let rows = parts.next().unwrap_or("");
        if rows.is_empty() {
            return Err(RestError::bad("invalid row spec: no row key"));
        }
        let (row, end_row) = parse_rows(rows)?;
        let columns = match parts.next() {
            None => Vec::new(),
            Some(c) => parse_columns(c)?,
        };
        let (start_time, end_time) = match parts.next() {
            None | Some("") => (0, LATEST),
            Some(t) => parse_times(t)?,
        };
        let mut spec = RowSpec {
            row,
            end_row,
            columns,
            start_time,
            end_time,
            max_versions: 1,
        };
        if let Some(e) = encoding {
            spec.decode_keys(e)?;
        }
        Ok(spec)
    }

    /// True if the spec names one row (not a range or prefix).
    pub fn is_single_row(&self) -> bool {
        self.end_row.is_none()
    }

    /// True if the path gave one timestamp (HBase's `hasTimestamp`).
    pub fn has_timestamp(&self) -> bool {
        self.start_time == 0 && self.end_time != LATEST
    }

    /// Rows and columns given in base64 (`e=b64`).
    fn decode_keys(&mut self, encoding: &str) -> Result<(), RestError> {
        let url = match encoding {
            "b64" | "base64" | "b64url" | "base64url" => true,
            "b64basic" | "base64basic" => false,
            other => {
                return Err(RestError::bad(format!("unknown key encoding '{other}'")));
            }
        };
        let decode = |b: &Bytes| -> Result<Bytes, RestError> {
            let decoded = if url {
                super::b64::decode_url(b)
            } else {
                super::b64::decode(&String::from_utf8_lossy(b))
            };
            decoded.map_err(|e| RestError::bad(format!("key is not {encoding}: {e}")))
        };
        self.row = decode(&self.row)?;
        if let Some(end) = &self.end_row {
            self.end_row = Some(decode(end)?);
        }
        self.columns = self.columns.iter().map(decode).collect::<Result<_, _>>()?;
        Ok(())
    }
}

/// `row`, `start,end` or `prefix*`.
fn parse_rows(text: &str) -> Result<(Bytes, Option<Bytes>), RestError> {
    let (start, end) = match text.split_once(',') {
        Some((s, e)) => (url_decode(s)?, Some(url_decode(e)?)),
        None => (url_decode(text)?, None),
    };
    if start.last() == Some(&b'*') {
        if end.is_some() {
            return Err(RestError::bad(
                "invalid path: start row specified with wildcard",
            ));
        }
        let prefix = &start[..start.len() - 1];
        let mut stop = prefix.to_vec();
        stop.push(0xff);
        return Ok((Bytes::copy_from_slice(prefix), Some(Bytes::from(stop))));
    }
    Ok((Bytes::from(start), end.map(Bytes::from)))
}

/// `column[,column...]`; an empty piece between commas is refused.
fn parse_columns(text: &str) -> Result<Vec<Bytes>, RestError> {
    let mut out = Vec::new();
    let pieces: Vec<&str> = text.split(',').collect();
    for (i, piece) in pieces.iter().enumerate() {
        if piece.is_empty() {
            if i + 1 == pieces.len() {
                continue;
            }
            return Err(RestError::bad("invalid path: empty column"));
        }
        out.push(Bytes::from(url_decode(piece)?));
    }
    Ok(out)
}

/// `t` (versions before it) or `t0,t1` (versions in `[t0, t1)`).
fn parse_times(text: &str) -> Result<(i64, i64), RestError> {
    let text = text.trim_end_matches('/');
    let number = |s: &str| -> Result<i64, RestError> {
        let s = String::from_utf8_lossy(&url_decode(s)?).into_owned();
        s.parse::<i64>()
            .map_err(|_| RestError::bad(format!("invalid timestamp {s:?}")))
    };
    match text.split_once(',') {
        Some((a, b)) => {
            let (t0, t1) = (number(a)?, number(b)?);
            // HBase's rule: an end of 0 means "one timestamp".
            Ok(if t1 != 0 { (t0, t1) } else { (0, t0) })
        }
        None => Ok((0, number(text)?)),
    }
}

/// Percent-decodes `s` (`+` is a space, as Java's `URLDecoder`): bytes,
/// not necessarily UTF-8.
pub fn url_decode(s: &str) -> Result<Vec<u8>, RestError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = |c: u8| (c as char).to_digit(16);
                let (Some(h), Some(l)) = (
                    b.get(i + 1).and_then(|c| hex(*c)),
                    b.get(i + 2).and_then(|c| hex(*c)),
                ) else {
                    return Err(RestError::bad(format!(
                        "malformed percent-encoding in {s:?}"
                    )));
                };
                out.push((h * 16 + l) as u8);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    Ok(out)
}

/// Splits `family:qualifier` at its first `:` (HBase's `parseColumn`):
/// the family, and the qualifier if a `:` was there.
pub fn split_column(column: &[u8]) -> (Bytes, Option<Bytes>) {
    match column.iter().position(|b| *b == b':') {
        Some(i) => (
            Bytes::copy_from_slice(&column[..i]),
            Some(Bytes::copy_from_slice(&column[i + 1..])),
        ),
        None => (Bytes::copy_from_slice(column), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(p: &str) -> RowSpec {
        RowSpec::parse(p, None).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    #[test]
    fn a_row_alone() {
        let s = spec("row1");
        assert_eq!(s.row, "row1");
        assert!(s.is_single_row() && s.columns.is_empty());
        assert_eq!((s.start_time, s.end_time), (0, LATEST));
        assert!(!s.has_timestamp());
    }

    #[test]
    fn columns_and_timestamps() {
        let s = spec("r/cf:a,cf2/1000");
        assert_eq!(s.columns, vec![Bytes::from("cf:a"), Bytes::from("cf2")]);
        assert_eq!((s.start_time, s.end_time), (0, 1000));
        assert!(s.has_timestamp());
        let s = spec("r/cf/10,20");
        assert_eq!((s.start_time, s.end_time), (10, 20));
        assert!(!s.has_timestamp());
        let s = spec("r//5");
        assert!(s.columns.is_empty());
        assert_eq!(s.end_time, 5);
    }

    #[test]
    fn percent_encoding_and_plus() {
        let s = spec("a%2Fb+c/cf%3Aq");
        assert_eq!(s.row, "a/b c");
        assert_eq!(s.columns, vec![Bytes::from("cf:q")]);
        let s = spec("%FF%00");
        assert_eq!(&s.row[..], &[0xff, 0x00]);
    }

    #[test]
    fn ranges_and_globs() {
        let s = spec("a,c");
        assert_eq!(
            (s.row.clone(), s.end_row.clone()),
            (Bytes::from("a"), Some(Bytes::from("c")))
        );
        let s = spec("ab*/cf");
        assert_eq!(s.row, "ab");
        assert_eq!(s.end_row.as_deref(), Some(&b"ab\xff"[..]));
        assert_eq!(s.columns, vec![Bytes::from("cf")]);
    }

    #[test]
    fn bad_specs_are_refused() {
        for bad in [
            "",
            "/",
            "a*,b",
            "r/cf/notanumber",
            "r/cf/1,x",
            "r%zz",
            "r/a,,b",
        ] {
            let e = RowSpec::parse(bad, None).err();
            assert_eq!(
                e.map(|e| e.status),
                Some(axum::http::StatusCode::BAD_REQUEST),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn base64_keys() {
        // "row" and "cf:q" in base64url.
        let s = RowSpec::parse("cm93/Y2Y6cQ", Some("b64")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.row, "row");
        assert_eq!(s.columns, vec![Bytes::from("cf:q")]);
        assert!(RowSpec::parse("cm93", Some("rot13")).is_err());
        assert!(RowSpec::parse("!!!", Some("b64")).is_err());
    }

    #[test]
    fn columns_split_at_the_first_colon() {
        assert_eq!(
            split_column(b"cf:a:b"),
            (Bytes::from("cf"), Some(Bytes::from("a:b")))
        );
        assert_eq!(split_column(b"cf"), (Bytes::from("cf"), None));
        assert_eq!(
            split_column(b"cf:"),
            (Bytes::from("cf"), Some(Bytes::new()))
        );
    }
}
