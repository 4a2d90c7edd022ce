//! Text helpers of the status page: HTML escaping, row keys as HBase prints
//! them, byte sizes, percentages and durations.

use std::fmt::Write as _;
use std::time::Duration;

/// Escapes text for HTML (element content and quoted attributes).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A row key as HBase's `Bytes.toStringBinary` prints it: alphanumerics and
/// ``  `~!@#$%^&*()-_=+[]{}|;:'",.<>/?`` as they are, every other byte as
/// `\xNN`. Not escaped for HTML.
pub fn to_string_binary(b: &[u8]) -> String {
    const KEPT: &[u8] = b" `~!@#$%^&*()-_=+[]{}|;:'\",.<>/?";
    let mut s = String::with_capacity(b.len());
    for &c in b {
        if c.is_ascii_alphanumeric() || KEPT.contains(&c) {
            s.push(char::from(c));
        } else {
            let _ = write!(s, "\\x{c:02X}");
        }
    }
    s
}

/// A byte count in binary units: `512 B`, `1.5 KiB`, `3.0 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
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

/// A count with thousands separators: `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A ratio as a percentage, `–` when unknown.
pub fn pct(r: Option<f64>) -> String {
    r.map_or_else(|| "–".into(), |r| format!("{:.1}%", r * 100.0))
}

/// hits / lookups, `None` without lookups.
pub fn ratio(hits: u64, misses: u64) -> Option<f64> {
    let lookups = hits.saturating_add(misses);
    (lookups > 0).then(|| hits as f64 / lookups as f64)
}

/// An uptime: `3d 4h 05m`, `2h 01m 50s`, `42s`.
pub fn uptime(d: Duration) -> String {
    let s = d.as_secs();
    let (days, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    if days > 0 {
        format!("{days}d {h}h {m:02}m")
    } else if h > 0 {
        format!("{h}h {m:02}m {sec:02}s")
    } else if m > 0 {
        format!("{m}m {sec:02}s")
    } else {
        format!("{sec}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(
            to_string_binary(b"row-1\x00\xff\n~"),
            "row-1\\x00\\xFF\\x0A~"
        );
        assert_eq!(bytes(512), "512 B");
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(4_332_018), "4,332,018");
        assert_eq!(bytes(3 << 30), "3.0 GiB");
        assert_eq!(pct(None), "–");
        assert_eq!(pct(ratio(1, 3)), "25.0%");
        assert_eq!(ratio(0, 0), None);
        assert_eq!(uptime(Duration::from_secs(7310)), "2h 01m 50s");
        assert_eq!(uptime(Duration::from_secs(42)), "42s");
        assert_eq!(uptime(Duration::from_secs(90_000)), "1d 1h 00m");
    }
}
