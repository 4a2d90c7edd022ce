//! HBase's comparison operators and comparators, in HBase's orientation:
//! `ValueFilter(<, 'binary:m')` keeps values that sort before `m` — the
//! cell's part on the left of the operator, the operand on the right.

use bytes::Bytes;

/// How a cell's part is compared with the operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `=`
    Equal,
    /// `!=`
    NotEqual,
    /// `>=`
    GreaterOrEqual,
    /// `>`
    Greater,
    /// Matches nothing (HBase's `NO_OP`).
    NoOp,
}

impl CompareOp {
    /// The operator as the filter language writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Less => "<",
            CompareOp::LessOrEqual => "<=",
            CompareOp::Equal => "=",
            CompareOp::NotEqual => "!=",
            CompareOp::GreaterOrEqual => ">=",
            CompareOp::Greater => ">",
            CompareOp::NoOp => "NO_OP",
        }
    }
}

/// What the operand is and how it compares.
#[derive(Debug, Clone)]
pub enum Comparator {
    /// Bytewise (`binary:`).
    Binary(Bytes),
    /// Bytewise against as many leading bytes of the part (`binaryprefix:`).
    BinaryPrefix(Bytes),
    /// Contains, ignoring ASCII case (`substring:`): a match or not.
    Substring(String),
    /// A regular expression found anywhere in the value read as UTF-8
    /// (`regexstring:`, HBase's default): a match or not.
    RegexText(regex::Regex),
    /// A regular expression found anywhere in the value read as ISO-8859-1
    /// (a `RegexStringComparator` with that charset): a match or not.
    Regex(regex::bytes::Regex),
    /// HBase's `NullComparator` (`null:`): no stored value is null, so
    /// `=` matches nothing and `!=` everything.
    Null,
    /// The part is an 8-byte big-endian signed number compared numerically
    /// (`long:`, Shoal's spelling of HBase's `LongComparator`); a part of
    /// another length never matches.
    Long(i64),
}

impl PartialEq for Comparator {
    fn eq(&self, other: &Comparator) -> bool {
        match (self, other) {
            (Comparator::Binary(a), Comparator::Binary(b)) => a == b,
            (Comparator::BinaryPrefix(a), Comparator::BinaryPrefix(b)) => a == b,
            (Comparator::Substring(a), Comparator::Substring(b)) => a == b,
            (Comparator::Regex(a), Comparator::Regex(b)) => a.as_str() == b.as_str(),
            (Comparator::RegexText(a), Comparator::RegexText(b)) => a.as_str() == b.as_str(),
            (Comparator::Null, Comparator::Null) => true,
            (Comparator::Long(a), Comparator::Long(b)) => a == b,
            _ => false,
        }
    }
}

impl Comparator {
    /// HBase's `compareTo`: the operand's order against the part (`Less`:
    /// the operand sorts first). The matching comparators (substring,
    /// regular expression, null) answer `Equal` for a match and `Greater`
    /// otherwise, as HBase's answer 0 or 1, and the operators then apply to
    /// that: `<` keeps what does not match, `<=` everything, `>` nothing.
    /// None: the part cannot be compared (a `long:` part that is not 8
    /// bytes).
    fn compare_to(&self, part: &[u8]) -> Option<std::cmp::Ordering> {
        use std::cmp::Ordering;
        let found = |yes: bool| {
            if yes {
                Ordering::Equal
            } else {
                Ordering::Greater
            }
        };
        Some(match self {
            Comparator::Binary(b) => b[..].cmp(part),
            Comparator::BinaryPrefix(b) => b[..].cmp(&part[..part.len().min(b.len())]),
            Comparator::Substring(s) => {
                let hay = part.to_ascii_lowercase();
                let needle = s.as_bytes();
                found(needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle))
            }
            Comparator::Regex(r) => found(r.is_match(part)),
            Comparator::RegexText(r) => found(r.is_match(&String::from_utf8_lossy(part))),
            // HBase's NullComparator: a stored value is never null, even
            // an empty one.
            Comparator::Null => Ordering::Greater,
            Comparator::Long(n) => {
                let bytes: [u8; 8] = part.try_into().ok()?;
                n.cmp(&i64::from_be_bytes(bytes))
            }
        })
    }

    /// True if `part OP operand` holds, as HBase's CompareFilter decides it
    /// from [`Comparator::compare_to`].
    pub fn matches(&self, op: CompareOp, part: &[u8]) -> bool {
        use std::cmp::Ordering::*;
        let Some(r) = self.compare_to(part) else {
            return false;
        };
        match op {
            CompareOp::Less => r == Greater,
            CompareOp::LessOrEqual => r != Less,
            CompareOp::Equal => r == Equal,
            CompareOp::NotEqual => r != Equal,
            CompareOp::GreaterOrEqual => r != Greater,
            CompareOp::Greater => r == Less,
            CompareOp::NoOp => false,
        }
    }

    /// The operand as the filter language writes it (`binary:abc`).
    pub fn describe(&self) -> String {
        let text = |b: &[u8]| String::from_utf8_lossy(b).replace('\'', "''");
        match self {
            Comparator::Binary(b) => format!("binary:{}", text(b)),
            Comparator::BinaryPrefix(b) => format!("binaryprefix:{}", text(b)),
            Comparator::Substring(s) => format!("substring:{}", text(s.as_bytes())),
            Comparator::Regex(r) => format!("regexstring:{}", text(r.as_str().as_bytes())),
            Comparator::RegexText(r) => format!("regexstring:{}", text(r.as_str().as_bytes())),
            Comparator::Null => "null:".to_string(),
            Comparator::Long(n) => format!("long:{n}"),
        }
    }
}

/// `java.util.regex.Pattern` flags HBase's `RegexStringComparator` carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JavaRegexFlags {
    /// `CASE_INSENSITIVE` (ASCII letters, as Java's default).
    pub case_insensitive: bool,
    /// `MULTILINE`.
    pub multi_line: bool,
    /// `DOTALL`.
    pub dot_all: bool,
    /// `UNIX_LINES`: only `\n` ends a line.
    pub unix_lines: bool,
}

impl JavaRegexFlags {
    /// From `Pattern`'s flag bits.
    pub fn from_bits(bits: i32) -> JavaRegexFlags {
        JavaRegexFlags {
            unix_lines: bits & 0x01 != 0,
            case_insensitive: bits & 0x02 != 0,
            multi_line: bits & 0x08 != 0,
            dot_all: bits & 0x20 != 0,
        }
    }
}

/// A regular expression that matches values as HBase's
/// `RegexStringComparator` with the charset `ISO-8859-1`: the value read one
/// character per byte, `.` not matching Java's line terminators in that
/// charset (`\n`, `\r`, `\x85`) unless `DOTALL`, `\w`, `\d`, `\s` and case
/// folding in ASCII as Java's defaults. A pattern character from U+0080 to
/// U+00FF stands for its byte; one beyond cannot occur in such a value.
pub fn java_regex(
    pattern: &str,
    flags: JavaRegexFlags,
) -> Result<regex::bytes::Regex, regex::Error> {
    regex::bytes::RegexBuilder::new(&java_pattern(pattern, flags, true))
        .unicode(false)
        .case_insensitive(flags.case_insensitive)
        .multi_line(flags.multi_line)
        .dot_matches_new_line(flags.dot_all)
        .size_limit(1 << 20)
        .build()
}

/// A regular expression that matches values as HBase's
/// `RegexStringComparator` with its default charset, UTF-8: the value
/// decoded (malformed bytes read as U+FFFD, as Java decodes them), `.` not
/// matching Java's line terminators unless `DOTALL`.
pub fn java_text_regex(pattern: &str, flags: JavaRegexFlags) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(&java_pattern(pattern, flags, false))
        .case_insensitive(flags.case_insensitive)
        .multi_line(flags.multi_line)
        .dot_matches_new_line(flags.dot_all)
        .size_limit(1 << 20)
        .build()
}

/// A Java pattern in the regex crate's syntax: `.` as Java reads it, and
/// (for ISO-8859-1) pattern characters as the bytes they stand for.
fn java_pattern(pattern: &str, flags: JavaRegexFlags, latin1: bool) -> String {
    // DOTALL: `.` is left as written (the builder matches newlines), so
    // the pattern reads back as given.
    let dot = if flags.dot_all {
        "."
    } else if flags.unix_lines {
        "[^\\n]"
    } else if latin1 {
        "[^\\n\\r\\x85]"
    } else {
        "[^\\n\\r\\x{85}\\x{2028}\\x{2029}]"
    };
    let literal = |out: &mut String, c: char| {
        if latin1 {
            push_latin1(out, c)
        } else {
            out.push(c)
        }
    };
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next) if next.is_ascii() => {
                    out.push('\\');
                    out.push(next);
                }
                // An escaped non-ASCII character is itself.
                Some(next) => literal(&mut out, next),
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                // A `]` or `^]` right after the bracket is a literal.
                let rest = chars.as_str();
                if let Some(stripped) = rest.strip_prefix("^]") {
                    out.push_str("^\\]");
                    chars = stripped.chars();
                } else if let Some(stripped) = rest.strip_prefix(']') {
                    out.push_str("\\]");
                    chars = stripped.chars();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '.' if !in_class => out.push_str(dot),
            c => literal(&mut out, c),
        }
    }
    out
}

/// A pattern character as the ISO-8859-1 byte it stands for.
fn push_latin1(out: &mut String, c: char) {
    use std::fmt::Write;
    match c as u32 {
        0..=0x7f => out.push(c),
        // `write!` to a String cannot fail.
        b @ 0x80..=0xff => {
            let _ = write!(out, "\\x{b:02X}");
        }
        // No ISO-8859-1 value holds it: an empty class never matches.
        _ => out.push_str("[^\\x00-\\xFF]"),
    }
}
