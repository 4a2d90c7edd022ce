//! HBase's filter language (the HBase book, "Thrift API and Filter
//! Language"): `Name(arg, …)` filters joined by `AND` and `OR` (AND binds
//! tighter), prefixed by `SKIP` or `WHILE` (tightest), grouped with
//! parentheses. Arguments are quoted strings (`'it''s'`), numbers, booleans
//! and comparison operators; comparators are quoted `type:value`.
//! Bounded: 64 KiB of text, 64 levels of nesting, 1,000 filters.

use super::{Comparator, CompareOp, Filter};
use bytes::Bytes;

/// Longest filter string accepted.
pub const MAX_TEXT: usize = 64 << 10;
/// Deepest nesting accepted.
pub const MAX_DEPTH: usize = 64;
/// Most filters in one string.
pub const MAX_FILTERS: usize = 1000;

/// Why a filter string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// A filter Shoal does not evaluate.
    #[error("filter {0} is not supported")]
    Unsupported(String),
    /// Not the filter language.
    #[error("filter string: {message} at byte {at}")]
    Syntax {
        /// Where.
        at: usize,
        /// What was expected or wrong.
        message: String,
    },
    /// Too long, too deep or too many filters.
    #[error("filter string: {0}")]
    TooLarge(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(Bytes),
    Num(String),
    Op(CompareOp),
    Open,
    Close,
    Comma,
}

fn syntax(at: usize, message: impl Into<String>) -> FilterError {
    FilterError::Syntax {
        at,
        message: message.into(),
    }
}

fn lex(text: &str) -> Result<Vec<(usize, Tok)>, FilterError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        match c {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'(' => {
                out.push((i, Tok::Open));
                i += 1
            }
            b')' => {
                out.push((i, Tok::Close));
                i += 1
            }
            b',' => {
                out.push((i, Tok::Comma));
                i += 1
            }
            b'\'' => {
                let mut s = Vec::new();
                i += 1;
                loop {
                    match b.get(i) {
                        None => return Err(syntax(start, "unterminated quoted string")),
                        Some(b'\'') if b.get(i + 1) == Some(&b'\'') => {
                            s.push(b'\'');
                            i += 2;
                        }
                        Some(b'\'') => {
                            i += 1;
                            break;
                        }
                        Some(&ch) => {
                            s.push(ch);
                            i += 1;
                        }
                    }
                }
                out.push((start, Tok::Str(Bytes::from(s))));
            }
            b'<' | b'>' | b'=' | b'!' => {
                let two = b.get(i + 1) == Some(&b'=');
                let op = match (c, two) {
                    (b'<', true) => CompareOp::LessOrEqual,
                    (b'<', false) => CompareOp::Less,
                    (b'>', true) => CompareOp::GreaterOrEqual,
                    (b'>', false) => CompareOp::Greater,
                    (b'=', _) => CompareOp::Equal,
                    (b'!', true) => CompareOp::NotEqual,
                    _ => return Err(syntax(i, "expected '!='")),
                };
                i += if two && c != b'=' { 2 } else { 1 };
                out.push((start, Tok::Op(op)));
            }
            b'-' | b'0'..=b'9' | b'.' => {
                i += 1;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                    i += 1;
                }
                out.push((start, Tok::Num(text[start..i].to_string())));
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                out.push((start, Tok::Ident(text[start..i].to_string())));
            }
            _ => {
                return Err(syntax(
                    i,
                    format!(
                        "unexpected character {:?}",
                        text[i..].chars().next().unwrap_or(' ')
                    ),
                ));
            }
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    end: usize,
    filters: usize,
}

#[derive(Debug)]
enum Arg {
    Str(Bytes),
    Num(String),
    Op(CompareOp),
    Bool(bool),
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(_, t)| t)
    }

    fn at(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |(a, _)| *a)
    }

    fn keyword(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s == k)
    }

    fn expect(&mut self, t: Tok, what: &str) -> Result<(), FilterError> {
        if self.peek() == Some(&t) {
            self.pos += 1;
            Ok(())
        } else {
            Err(syntax(self.at(), format!("expected {what}")))
        }
    }

    fn or_expr(&mut self, depth: usize) -> Result<Filter, FilterError> {
        let mut items = vec![self.and_expr(depth)?];
        while self.keyword("OR") {
            self.pos += 1;
            items.push(self.and_expr(depth)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Filter::List {
                all: false,
                filters: items,
            }
        })
    }

    fn and_expr(&mut self, depth: usize) -> Result<Filter, FilterError> {
        let mut items = vec![self.unary(depth)?];
        while self.keyword("AND") {
            self.pos += 1;
            items.push(self.unary(depth)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Filter::List {
                all: true,
                filters: items,
            }
        })
    }

    fn unary(&mut self, depth: usize) -> Result<Filter, FilterError> {
        if depth >= MAX_DEPTH {
            return Err(FilterError::TooLarge(format!(
                "nested deeper than {MAX_DEPTH} levels"
            )));
        }
        if self.keyword("SKIP") {
            self.pos += 1;
            return Ok(Filter::Skip(Box::new(self.unary(depth + 1)?)));
        }
        if self.keyword("WHILE") {
            self.pos += 1;
            return Ok(Filter::While(Box::new(self.unary(depth + 1)?)));
        }
        if self.peek() == Some(&Tok::Open) {
            self.pos += 1;
            let f = self.or_expr(depth + 1)?;
            self.expect(Tok::Close, "')'")?;
            return Ok(f);
        }
        self.call()
    }

    fn call(&mut self) -> Result<Filter, FilterError> {
        let at = self.at();
        let Some(Tok::Ident(name)) = self.peek().cloned() else {
            return Err(syntax(at, "expected a filter name"));
        };
        self.pos += 1;
        self.filters += 1;
        if self.filters > MAX_FILTERS {
            return Err(FilterError::TooLarge(format!(
                "more than {MAX_FILTERS} filters"
            )));
        }
        self.expect(Tok::Open, &format!("'(' after {name}"))?;
        let mut args = Vec::new();
        if self.peek() != Some(&Tok::Close) {
            loop {
                let a = self.at();
                let arg = match self.peek().cloned() {
                    Some(Tok::Str(s)) => Arg::Str(s),
                    Some(Tok::Num(n)) => Arg::Num(n),
                    Some(Tok::Op(op)) => Arg::Op(op),
                    Some(Tok::Ident(i)) => match i.to_ascii_lowercase().as_str() {
                        "true" => Arg::Bool(true),
                        "false" => Arg::Bool(false),
                        "less" => Arg::Op(CompareOp::Less),
                        "less_or_equal" => Arg::Op(CompareOp::LessOrEqual),
                        "equal" => Arg::Op(CompareOp::Equal),
                        "not_equal" => Arg::Op(CompareOp::NotEqual),
                        "greater_or_equal" => Arg::Op(CompareOp::GreaterOrEqual),
                        "greater" => Arg::Op(CompareOp::Greater),
                        "no_op" => Arg::Op(CompareOp::NoOp),
                        _ => {
                            return Err(syntax(
                                a,
                                format!("unexpected {i:?} in the arguments of {name}"),
                            ));
                        }
                    },
                    _ => return Err(syntax(a, format!("expected an argument of {name}"))),
                };
                self.pos += 1;
                args.push((a, arg));
                if self.peek() == Some(&Tok::Comma) {
                    self.pos += 1;
                    continue;
                }
                break;
            }
        }
        self.expect(
            Tok::Close,
            &format!("',' or ')' in the arguments of {name}"),
        )?;
        build(&name, at, args)
    }
}

fn build(name: &str, at: usize, args: Vec<(usize, Arg)>) -> Result<Filter, FilterError> {
    let count = |n: usize| -> Result<(), FilterError> {
        if args.len() != n {
            return Err(syntax(
                at,
                format!("{name} takes {n} argument(s), got {}", args.len()),
            ));
        }
        Ok(())
    };
    let string = |i: usize| -> Result<Bytes, FilterError> {
        match args.get(i) {
            Some((_, Arg::Str(s))) => Ok(s.clone()),
            Some((a, _)) => Err(syntax(
                *a,
                format!("{name}: argument {} must be a quoted string", i + 1),
            )),
            None => Err(syntax(at, format!("{name}: argument {} is missing", i + 1))),
        }
    };
    let number = |i: usize| -> Result<i64, FilterError> {
        match args.get(i) {
            Some((a, Arg::Num(n))) => n
                .parse::<i64>()
                .map_err(|_| syntax(*a, format!("{name}: {n} is not an integer"))),
            Some((a, _)) => Err(syntax(
                *a,
                format!("{name}: argument {} must be a number", i + 1),
            )),
            None => Err(syntax(at, format!("{name}: argument {} is missing", i + 1))),
        }
    };
    let boolean = |i: usize| -> Result<bool, FilterError> {
        match args.get(i) {
            Some((_, Arg::Bool(b))) => Ok(*b),
            Some((a, _)) => Err(syntax(
                *a,
                format!("{name}: argument {} must be true or false", i + 1),
            )),
            None => Err(syntax(at, format!("{name}: argument {} is missing", i + 1))),
        }
    };
    let op = |i: usize| -> Result<CompareOp, FilterError> {
        match args.get(i) {
            Some((_, Arg::Op(o))) => Ok(*o),
            Some((a, _)) => Err(syntax(
                *a,
                format!(
                    "{name}: argument {} must be a comparison (<, <=, =, !=, >=, >)",
                    i + 1
                ),
            )),
            None => Err(syntax(at, format!("{name}: argument {} is missing", i + 1))),
        }
    };
    let comparator = |i: usize| -> Result<Comparator, FilterError> {
        let a = args.get(i).map_or(at, |(a, _)| *a);
        comparator(&string(i)?, a)
    };
    let nonneg = |i: usize| -> Result<i64, FilterError> {
        let n = number(i)?;
        if n < 0 {
            return Err(syntax(at, format!("{name}: {n} must not be negative")));
        }
        Ok(n)
    };
    Ok(match name {
        "PrefixFilter" => {
            count(1)?;
            Filter::Prefix(string(0)?)
        }
        "KeyOnlyFilter" => match args.len() {
            0 => Filter::KeyOnly {
                value_length: false,
            },
            _ => {
                count(1)?;
                Filter::KeyOnly {
                    value_length: boolean(0)?,
                }
            }
        },
        "FirstKeyOnlyFilter" => {
            count(0)?;
            Filter::FirstKeyOnly
        }
        "ColumnPrefixFilter" => {
            count(1)?;
            Filter::ColumnPrefix(string(0)?)
        }
        "MultipleColumnPrefixFilter" => {
            if args.is_empty() {
                return Err(syntax(at, format!("{name} needs at least one prefix")));
            }
            Filter::MultipleColumnPrefix((0..args.len()).map(string).collect::<Result<_, _>>()?)
        }
        "ColumnCountGetFilter" => {
            count(1)?;
            Filter::ColumnCountGet(usize::try_from(nonneg(0)?).unwrap_or(usize::MAX))
        }
        "PageFilter" => {
            count(1)?;
            Filter::Page(nonneg(0)? as u64)
        }
        "InclusiveStopFilter" => {
            count(1)?;
            Filter::InclusiveStop(string(0)?)
        }
        "RowFilter" | "FamilyFilter" | "QualifierFilter" | "ValueFilter" => {
            count(2)?;
            let (o, c) = (op(0)?, comparator(1)?);
            match name {
                "RowFilter" => Filter::Row(o, c),
                "FamilyFilter" => Filter::Family(o, c),
                "QualifierFilter" => Filter::Qualifier(o, c),
                _ => Filter::Value(o, c),
            }
        }
        "SingleColumnValueFilter" | "SingleColumnValueExcludeFilter" => {
            if args.len() != 4 && args.len() != 6 {
                return Err(syntax(
                    at,
                    format!("{name} takes 4 or 6 arguments, got {}", args.len()),
                ));
            }
            let (filter_if_missing, latest_version_only) = if args.len() == 6 {
                (boolean(4)?, boolean(5)?)
            } else {
                (false, true)
            };
            Filter::SingleColumnValue {
                family: string(0)?,
                qualifier: string(1)?,
                op: op(2)?,
                comparator: comparator(3)?,
                filter_if_missing,
                latest_version_only,
                exclude: name == "SingleColumnValueExcludeFilter",
            }
        }
        "TimestampsFilter" => Filter::Timestamps {
            ts: (0..args.len()).map(number).collect::<Result<_, _>>()?,
            can_hint: false,
        },
        "RandomRowFilter" => {
            count(1)?;
            let p = match &args[0] {
                (a, Arg::Num(n)) => n
                    .parse::<f32>()
                    .ok()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or_else(|| {
                        syntax(*a, format!("{name}: {n} is not a chance between 0 and 1"))
                    })?,
                (a, _) => return Err(syntax(*a, format!("{name}: argument 1 must be a number"))),
            };
            Filter::RandomRow(p)
        }
        "ColumnRangeFilter" => {
            count(4)?;
            let bound = |b: Bytes| (!b.is_empty()).then_some(b);
            Filter::ColumnRange {
                min: bound(string(0)?),
                min_inclusive: boolean(1)?,
                max: bound(string(2)?),
                max_inclusive: boolean(3)?,
            }
        }
        other => return Err(FilterError::Unsupported(other.to_string())),
    })
}

/// A quoted operand `type:value`.
fn comparator(text: &[u8], at: usize) -> Result<Comparator, FilterError> {
    let Some(colon) = text.iter().position(|&b| b == b':') else {
        return Err(syntax(
            at,
            "a comparator is 'type:value' (binary, binaryprefix, substring, regexstring, null, long)",
        ));
    };
    let (kind, value) = (&text[..colon], &text[colon + 1..]);
    Ok(match &kind.to_ascii_lowercase()[..] {
        b"binary" => Comparator::Binary(Bytes::copy_from_slice(value)),
        b"binaryprefix" => Comparator::BinaryPrefix(Bytes::copy_from_slice(value)),
        b"substring" => Comparator::Substring(String::from_utf8_lossy(value).to_ascii_lowercase()),
        b"regexstring" => {
            let pattern = std::str::from_utf8(value)
                .map_err(|_| syntax(at, "a regular expression must be UTF-8"))?;
            // As HBase's ParseFilter builds it: UTF-8, DOTALL.
            let flags = super::JavaRegexFlags {
                dot_all: true,
                ..super::JavaRegexFlags::default()
            };
            let re = super::java_text_regex(pattern, flags)
                .map_err(|e| syntax(at, format!("bad regular expression: {e}")))?;
            Comparator::RegexText(re)
        }
        b"null" => Comparator::Null,
        b"long" => Comparator::Long(
            std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.trim().parse::<i64>().ok())
                .ok_or_else(|| syntax(at, "long: needs a decimal number"))?,
        ),
        other => {
            return Err(syntax(
                at,
                format!(
                    "unknown comparator {:?} (binary, binaryprefix, substring, regexstring, null, long)",
                    String::from_utf8_lossy(other)
                ),
            ));
        }
    })
}

/// Parses a filter string.
pub fn parse(text: &str) -> Result<Filter, FilterError> {
    if text.len() > MAX_TEXT {
        return Err(FilterError::TooLarge(format!(
            "{} bytes, more than {MAX_TEXT}",
            text.len()
        )));
    }
    let toks = lex(text)?;
    if toks.is_empty() {
        return Err(syntax(0, "the filter string is empty"));
    }
    let mut p = Parser {
        toks,
        pos: 0,
        end: text.len(),
        filters: 0,
    };
    let f = p.or_expr(0)?;
    if p.pos != p.toks.len() {
        return Err(syntax(p.at(), "expected AND, OR or the end"));
    }
    Ok(f)
}
