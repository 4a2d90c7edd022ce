//! Output as HBase's shell prints it: binary-safe bytes, two-column tables
//! (`ROW  COLUMN+CELL`, `COLUMN  CELL`), sizes.

/// HBase's `Bytes.toStringBinary`: letters, digits and
/// `` `~!@#$%^&*()-_=+[]{}|;:'",.<>/?`` and space are kept, every other byte
/// (backslash included) is written `\xNN` with uppercase hex.
pub fn to_string_binary(bytes: &[u8]) -> String {
    const KEPT: &[u8] = b" `~!@#$%^&*()-_=+[]{}|;:'\",.<>/?";
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || KEPT.contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// A cell's column, `cf:q`.
pub fn column_name(c: &shoal_client::Cell) -> String {
    format!(
        "{}:{}",
        to_string_binary(&c.family),
        to_string_binary(&c.qualifier)
    )
}

/// A cell's version, `timestamp=…, value=…`.
pub fn version(c: &shoal_client::Cell) -> String {
    format!(
        "timestamp={}, value={}",
        c.timestamp,
        to_string_binary(&c.value)
    )
}

/// A cell as a scan prints it: `column=cf:q, timestamp=…, value=…`.
pub fn cell_line(c: &shoal_client::Cell) -> String {
    format!("column={}, {}", column_name(c), version(c))
}

/// Bytes for people: `1.5 MiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Width of the left column of a two-column table.
const LEFT: usize = 30;

/// A two-column table's header line, `ROW   COLUMN+CELL`.
pub fn header(left: &str, right: &str) -> String {
    format!("{left:<width$} {right}", width = LEFT + 1)
}

/// A two-column table's line, indented one space under its header.
pub fn line(left: &str, right: &str) -> String {
    format!(" {left:<LEFT$} {right}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_is_escaped_like_hbase() {
        assert_eq!(to_string_binary(b"row-1"), "row-1");
        assert_eq!(to_string_binary(&[0, 0xff, b'a']), "\\x00\\xFFa");
        assert_eq!(to_string_binary(b"a\\b"), "a\\x5Cb");
        assert_eq!(to_string_binary(b"tab\there\n"), "tab\\x09here\\x0A");
        assert_eq!(to_string_binary("é".as_bytes()), "\\xC3\\xA9");
    }

    #[test]
    fn tables_align_under_their_header() {
        let h = header("ROW", "COLUMN+CELL");
        let l = line("row1", "column=cf:q, timestamp=1, value=v");
        assert!(h.starts_with("ROW "));
        assert!(l.starts_with(" row1 "));
        assert_eq!(h.find("COLUMN+CELL"), l.find("column="));
        let c = shoal_client::Cell {
            family: b"cf".to_vec().into(),
            qualifier: b"q\x00".to_vec().into(),
            timestamp: 1700000000000,
            value: vec![b'v', 0].into(),
        };
        assert_eq!(
            cell_line(&c),
            r"column=cf:q\x00, timestamp=1700000000000, value=v\x00"
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(human_bytes(10), "10 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
