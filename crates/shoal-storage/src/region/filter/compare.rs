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
    /// A regular expression found anywhere (`regexstring:`): a match or not.
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
            Comparator::Null => "null:".to_string(),
            Comparator::Long(n) => format!("long:{n}"),
        }
    }
}
