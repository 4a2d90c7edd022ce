//! The shell's syntax: HBase shell's Ruby-ish command lines.
//!
//! A statement is a command name followed by comma-separated arguments:
//! strings (`'single'` — only `\\` and `\'` are escapes, as in Ruby — or
//! `"double"` with `\n`, `\t`, `\r`, `\0`, `\xNN`, `\\`, `\"`, `\'`),
//! integers (`-12`, `1_000`), `true`/`false`/`nil`, bare constants
//! (`FOREVER`), arrays `[a, b]` and hashes `{KEY => value, …}` (keys bare
//! words or strings). `key => value` pairs outside braces form one trailing
//! hash, as in Ruby. `;` separates statements; `#` starts a comment.
//! A statement left open (inside brackets, or after `,` or `=>`) is
//! reported as [`SyntaxError::incomplete`] so the caller can read on.

use super::value::{Command, Value};

/// A syntax error and where it was found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("syntax error at {}: {message}", position(*.line, *.column))]
pub struct SyntaxError {
    /// 1-based line within the statement.
    pub line: usize,
    /// 1-based column within that line.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The text ended where more was expected; another line may finish it.
    pub incomplete: bool,
}

fn position(line: usize, column: usize) -> String {
    if line > 1 {
        format!("line {line}, column {column}")
    } else {
        format!("column {column}")
    }
}

/// Parses text (one line, or several when a statement spans lines) into
/// commands; blank text and comments give none.
pub fn parse(text: &str) -> Result<Vec<Command>, SyntaxError> {
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
    };
    let mut out = Vec::new();
    loop {
        p.skip_ws();
        match p.peek() {
            None => return Ok(out),
            Some(b';') => p.pos += 1,
            Some(_) => {
                out.push(p.command()?);
                p.skip_ws();
                match p.peek() {
                    None => return Ok(out),
                    Some(b';') => p.pos += 1,
                    Some(c) => {
                        return Err(p.err_at(
                            p.pos,
                            format!("unexpected {:?}; separate arguments with ','", c as char),
                        ));
                    }
                }
            }
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn at_arrow(&self) -> bool {
        self.s[self.pos..].starts_with(b"=>")
    }

    fn err_at(&self, pos: usize, message: impl Into<String>) -> SyntaxError {
        let before = &self.s[..pos.min(self.s.len())];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        SyntaxError {
            line: before.iter().filter(|&&b| b == b'\n').count() + 1,
            column: pos - line_start + 1,
            message: message.into(),
            incomplete: false,
        }
    }

    /// An error at the current position; `incomplete` if the text ended.
    fn err(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            incomplete: self.peek().is_none(),
            ..self.err_at(self.pos, message)
        }
    }

    /// Skips blanks, newlines and `#` comments.
    fn skip_ws(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r' | b'\n') => self.pos += 1,
                Some(b'#') => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_') {
            self.pos += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.pos]).into_owned()
    }

    fn command(&mut self) -> Result<Command, SyntaxError> {
        if !matches!(self.peek(), Some(c) if c.is_ascii_alphabetic() || c == b'_') {
            return Err(self.err("expected a command name"));
        }
        let name = self.word();
        let mut args = Vec::new();
        let mut pairs: Vec<(String, Value)> = Vec::new();
        self.skip_ws();
        if matches!(self.peek(), None | Some(b';')) {
            return Ok(Command { name, args });
        }
        loop {
            self.skip_ws();
            let at = self.pos;
            let v = self.value()?;
            self.skip_ws();
            if self.at_arrow() {
                self.pos += 2;
                let key = key_text(&v).ok_or_else(|| {
                    self.err_at(
                        at,
                        format!("a hash key must be a word or string, not {}", v.kind()),
                    )
                })?;
                self.skip_ws();
                pairs.push((key, self.value()?));
            } else if !pairs.is_empty() {
                return Err(self.err_at(at, "a plain argument cannot follow KEY => value pairs"));
            } else {
                args.push(v);
            }
            self.skip_ws();
            if self.peek() != Some(b',') {
                break;
            }
            self.pos += 1;
        }
        if !pairs.is_empty() {
            args.push(Value::Hash(pairs));
        }
        Ok(Command { name, args })
    }

    fn value(&mut self) -> Result<Value, SyntaxError> {
        match self.peek() {
            None => Err(self.err("expected a value, found the end of the input")),
            Some(b'\'') => self.single_quoted(),
            Some(b'"') => self.double_quoted(),
            Some(b'[') => self.array(),
            Some(b'{') => self.hash(),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.integer(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let w = self.word();
                Ok(match w.as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "nil" => Value::Nil,
                    _ => Value::Word(w),
                })
            }
            Some(c) => Err(self.err(format!("unexpected {:?}; expected a value", c as char))),
        }
    }

    fn integer(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == b'_') {
            self.pos += 1;
        }
        let text = String::from_utf8_lossy(&self.s[start..self.pos]).replace('_', "");
        text.parse()
            .map(Value::Int)
            .map_err(|_| self.err_at(start, format!("{text:?} is not a 64-bit integer")))
    }

    fn array(&mut self) -> Result<Value, SyntaxError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(Value::Array(items));
            }
            items.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                _ => return Err(self.err("expected ',' or ']' in an array")),
            }
        }
    }

    fn hash(&mut self) -> Result<Value, SyntaxError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(Value::Hash(items));
            }
            let at = self.pos;
            let k = self.value()?;
            let key = key_text(&k).ok_or_else(|| {
                self.err_at(
                    at,
                    format!("a hash key must be a word or string, not {}", k.kind()),
                )
            })?;
            self.skip_ws();
            if !self.at_arrow() {
                return Err(self.err(format!("expected '=>' after hash key {key}")));
            }
            self.pos += 2;
            self.skip_ws();
            items.push((key, self.value()?));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return Err(self.err("expected ',' or '}' in a hash")),
            }
        }
    }

    fn single_quoted(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.err_at(start, "unterminated string")),
                Some(b'\'') => {
                    self.pos += 1;
                    return Ok(Value::Str(out));
                }
                Some(b'\\') if matches!(self.s.get(self.pos + 1), Some(b'\\' | b'\'')) => {
                    out.push(self.s[self.pos + 1]);
                    self.pos += 2;
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn double_quoted(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.err_at(start, "unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Value::Str(out));
                }
                Some(b'\\') => {
                    let esc = self.pos;
                    let Some(&e) = self.s.get(self.pos + 1) else {
                        return Err(self.err_at(start, "unterminated string"));
                    };
                    self.pos += 2;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'0' => 0,
                        b'e' => 0x1b,
                        b's' => b' ',
                        b'\\' | b'"' | b'\'' | b'#' => e,
                        b'x' => {
                            let hex = self
                                .s
                                .get(self.pos..self.pos + 2)
                                .and_then(|h| std::str::from_utf8(h).ok())
                                .and_then(|h| u8::from_str_radix(h, 16).ok())
                                .ok_or_else(|| self.err_at(esc, "\\x needs two hex digits"))?;
                            self.pos += 2;
                            hex
                        }
                        other => {
                            return Err(
                                self.err_at(esc, format!("unknown escape \\{}", char::from(other)))
                            );
                        }
                    });
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }
}

/// A hash key's text: a bare word or a string.
fn key_text(v: &Value) -> Option<String> {
    match v {
        Value::Str(_) | Value::Word(_) => v.as_text(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.as_bytes().to_vec())
    }

    fn one(text: &str) -> Command {
        let mut c = parse(text).unwrap();
        assert_eq!(c.len(), 1, "{c:?}");
        c.remove(0)
    }

    fn err(text: &str) -> SyntaxError {
        parse(text).unwrap_err()
    }

    #[test]
    fn a_command_without_arguments() {
        assert_eq!(
            one("list"),
            Command {
                name: "list".into(),
                args: vec![]
            }
        );
        assert_eq!(one("  major_compact\t").name, "major_compact");
    }

    #[test]
    fn strings_integers_and_constants() {
        let c = one("put 't1', \"r1\", 'cf:q', 'v', 42, -7, 1_000, true, false, nil, FOREVER");
        assert_eq!(c.name, "put");
        assert_eq!(
            c.args,
            vec![
                s("t1"),
                s("r1"),
                s("cf:q"),
                s("v"),
                Value::Int(42),
                Value::Int(-7),
                Value::Int(1000),
                Value::Bool(true),
                Value::Bool(false),
                Value::Nil,
                Value::Word("FOREVER".into()),
            ]
        );
    }

    #[test]
    fn hashes_and_arrays_nest() {
        let c = one(
            "scan 't', {STARTROW => 'a', 'LIMIT' => 10, COLUMNS => ['cf1', \"cf2\"], TIMERANGE => [1, 2], X => {Y => []}, E => {}}",
        );
        assert_eq!(
            c.args[1],
            Value::Hash(vec![
                ("STARTROW".into(), s("a")),
                ("LIMIT".into(), Value::Int(10)),
                ("COLUMNS".into(), Value::Array(vec![s("cf1"), s("cf2")])),
                (
                    "TIMERANGE".into(),
                    Value::Array(vec![Value::Int(1), Value::Int(2)])
                ),
                (
                    "X".into(),
                    Value::Hash(vec![("Y".into(), Value::Array(vec![]))])
                ),
                ("E".into(), Value::Hash(vec![])),
            ])
        );
        assert_eq!(
            one("x [[1], [], ['a',]]").args[0],
            Value::Array(vec![
                Value::Array(vec![Value::Int(1)]),
                Value::Array(vec![]),
                Value::Array(vec![s("a")]),
            ])
        );
    }

    #[test]
    fn trailing_pairs_become_one_hash() {
        assert_eq!(
            one("alter 't1', NAME => 'f1', VERSIONS => 5").args,
            vec![
                s("t1"),
                Value::Hash(vec![
                    ("NAME".into(), s("f1")),
                    ("VERSIONS".into(), Value::Int(5))
                ])
            ]
        );
        assert_eq!(
            one("alter 't1', 'delete' => 'f1'").args[1],
            Value::Hash(vec![("delete".into(), s("f1"))])
        );
        let c = one("create 't', 'cf', {NAME => 'b'}, SPLITS => ['g']");
        assert_eq!(c.args.len(), 4);
        assert_eq!(
            c.args[3],
            Value::Hash(vec![("SPLITS".into(), Value::Array(vec![s("g")]))])
        );
    }

    #[test]
    fn double_quoted_escapes() {
        let c = one(r#"put "a\x00\xff\xAb\n\t\r\\\"\'\0""#);
        assert_eq!(
            c.args[0],
            Value::Str(vec![
                b'a', 0, 0xff, 0xab, b'\n', b'\t', b'\r', b'\\', b'"', b'\'', 0
            ])
        );
    }

    #[test]
    fn single_quoted_escapes_only_backslash_and_quote() {
        let c = one(r#"put 'it\'s \\ \n \x41 "q"'"#);
        assert_eq!(c.args[0], s(r#"it's \ \n \x41 "q""#));
        assert_eq!(one("put ''").args[0], s(""));
    }

    #[test]
    fn several_commands_comments_and_blank_lines() {
        assert!(parse("   ").unwrap().is_empty());
        assert!(parse("# nothing").unwrap().is_empty());
        assert!(parse(";;").unwrap().is_empty());
        let c = parse("list; status # both; not this").unwrap();
        assert_eq!(
            c.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["list", "status"]
        );
        let c = parse("put 't', 'a;b#c'; get 't', 'a'").unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].args[1], s("a;b#c"));
    }

    #[test]
    fn statements_may_span_lines() {
        let c = one("create 't',\n  {NAME => 'a', # first\n   VERSIONS => 3}");
        assert_eq!(c.args.len(), 2);
        for open in [
            "create 't',",
            "scan 't', {STARTROW => 'a'",
            "x [1, 2",
            "x A =>",
        ] {
            let e = err(open);
            assert!(e.incomplete, "{open}: {e:?}");
        }
        for closed in ["put 't1', 'r1", "get 't' 'r'", "scan 't', {LIMIT 10}"] {
            assert!(!err(closed).incomplete, "{closed}");
        }
    }

    #[test]
    fn errors_say_what_and_where() {
        let e = err("put 't1', 'r1");
        assert_eq!((e.line, e.column), (1, 11));
        assert!(e.message.contains("unterminated"));
        assert_eq!(
            e.to_string(),
            "syntax error at column 11: unterminated string"
        );
        let e = err("scan 't', {LIMIT 10}");
        assert!(e.message.contains("=>"), "{e}");
        assert_eq!(e.column, 18);
        let e = err("get 't' 'r'");
        assert!(e.message.contains("unexpected"), "{e}");
        assert_eq!(e.column, 9);
        let e = err(r#"put "\q""#);
        assert!(e.message.contains("unknown escape \\q"), "{e}");
        assert_eq!(e.column, 6);
        assert!(err(r#"put "\x4""#).message.contains("two hex digits"));
        assert!(
            err("put 't', 99999999999999999999")
                .message
                .contains("not a 64-bit integer")
        );
        assert!(err("put 't', -").message.contains("integer"));
        assert!(
            err("alter 't', A => 1, 'x'")
                .message
                .contains("cannot follow")
        );
        assert!(err("x {1 => 2}").message.contains("hash key"));
        assert!(err("x [1 2]").message.contains("',' or ']'"));
        assert!(err("x {A => 1 B => 2}").message.contains("',' or '}'"));
        assert!(err("'t'").message.contains("command name"));
        assert!(err("x @").message.contains("unexpected '@'"));
        let e = err("create 't',\n  {NAME => 'a' VERSIONS => 3}");
        assert_eq!((e.line, e.column), (2, 16));
        assert!(
            e.to_string()
                .starts_with("syntax error at line 2, column 16")
        );
    }
}
