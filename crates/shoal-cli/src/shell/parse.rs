//! The shell's syntax: HBase shell's Ruby-ish command lines.
//!
//! A line is a command name followed by comma-separated arguments: strings
//! (`'single'` — only `\\` and `\'` are escapes — or `"double"` with `\n`,
//! `\t`, `\xNN`, `\\`, `\"`), integers, `true`/`false`/`nil`, arrays
//! `[a, b]`, hashes `{KEY => value, …}` (keys bare words or strings).
//! `key => value` pairs outside braces form one trailing hash, as in Ruby.
//! Several commands may share a line, separated by `;`.

/// A parsed argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A string (bytes: `\xNN` escapes may make it non-UTF-8).
    Str(Vec<u8>),
    /// An integer.
    Int(i64),
    /// `true` / `false`.
    Bool(bool),
    /// `nil`.
    Nil,
    /// A bare word (a constant such as `VERSIONS`).
    Word(String),
    /// `[a, b]`.
    Array(Vec<Value>),
    /// `{K => v}` in order.
    Hash(Vec<(String, Value)>),
}

impl Value {
    /// The value as a string (strings and bare words), lossily.
    pub fn as_text(&self) -> Option<String> {
        match self {
            Value::Str(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Value::Word(w) => Some(w.clone()),
            _ => None,
        }
    }

    /// The value's bytes (strings only).
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Str(b) => Some(b),
            _ => None,
        }
    }

    /// What kind of value this is, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(_) => "an integer",
            Value::Bool(_) => "a boolean",
            Value::Nil => "nil",
            Value::Word(_) => "a bare word",
            Value::Array(_) => "an array",
            Value::Hash(_) => "a hash",
        }
    }
}

/// One command: its name and arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The command name (`put`, `scan` …).
    pub name: String,
    /// Its arguments in order.
    pub args: Vec<Value>,
}

/// A syntax error with the column it was found at (1-based).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("syntax error at column {column}: {message}")]
pub struct SyntaxError {
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

/// Parses one line into commands (empty lines and `#` comments give none).
pub fn parse_line(line: &str) -> Result<Vec<Command>, SyntaxError> {
    let mut p = Parser {
        s: line.as_bytes(),
        pos: 0,
    };
    let mut out = Vec::new();
    loop {
        p.skip_ws();
        if p.eof() || p.peek() == Some(b'#') {
            return Ok(out);
        }
        if p.peek() == Some(b';') {
            p.pos += 1;
            continue;
        }
        out.push(p.command()?);
        p.skip_ws();
        match p.peek() {
            None | Some(b'#') => return Ok(out),
            Some(b';') => p.pos += 1,
            Some(c) => return Err(p.err(format!("unexpected {:?}", c as char))),
        }
    }
}

impl Parser<'_> {
    fn eof(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn err(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            column: self.pos + 1,
            message: message.into(),
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.pos += 1;
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
        let mut trailing: Vec<(String, Value)> = Vec::new();
        self.skip_ws();
        if matches!(self.peek(), None | Some(b';' | b'#')) {
            return Ok(Command { name, args });
        }
        loop {
            self.skip_ws();
            let v = self.value()?;
            self.skip_ws();
            if self.s[self.pos..].starts_with(b"=>") {
                self.pos += 2;
                let key = v.as_text().ok_or_else(|| {
                    self.err(format!(
                        "a hash key must be a word or string, not {}",
                        v.kind()
                    ))
                })?;
                self.skip_ws();
                let val = self.value()?;
                trailing.push((key, val));
            } else {
                if !trailing.is_empty() {
                    return Err(self.err("a plain argument cannot follow KEY => value pairs"));
                }
                args.push(v);
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                _ => break,
            }
        }
        if !trailing.is_empty() {
            args.push(Value::Hash(trailing));
        }
        Ok(Command { name, args })
    }

    fn value(&mut self) -> Result<Value, SyntaxError> {
        match self.peek() {
            None => Err(self.err("expected a value, found the end of the line")),
            Some(b'\'') => self.single_quoted(),
            Some(b'"') => self.double_quoted(),
            Some(b'[') => {
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
            Some(b'{') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        return Ok(Value::Hash(items));
                    }
                    let k = self.value()?;
                    let key = k.as_text().ok_or_else(|| {
                        self.err(format!(
                            "a hash key must be a word or string, not {}",
                            k.kind()
                        ))
                    })?;
                    self.skip_ws();
                    if !self.s[self.pos..].starts_with(b"=>") {
                        return Err(self.err(format!("expected '=>' after hash key {key}")));
                    }
                    self.pos += 2;
                    self.skip_ws();
                    let v = self.value()?;
                    items.push((key, v));
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        _ => return Err(self.err("expected ',' or '}' in a hash")),
                    }
                }
            }
            Some(c) if c == b'-' || c.is_ascii_digit() => {
                let start = self.pos;
                self.pos += 1;
                while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == b'_') {
                    self.pos += 1;
                }
                let text: String =
                    String::from_utf8_lossy(&self.s[start..self.pos]).replace('_', "");
                text.parse().map(Value::Int).map_err(|_| SyntaxError {
                    column: start + 1,
                    message: format!("{text:?} is not an integer"),
                })
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let w = self.word();
                // Ruby's `Class::CONSTANT` forms (e.g. `org.apache…`) are not
                // supported; plain constants are.
                Ok(match w.as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "nil" => Value::Nil,
                    _ => Value::Word(w),
                })
            }
            Some(c) => Err(self.err(format!("unexpected {:?}", c as char))),
        }
    }

    fn single_quoted(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => {
                    return Err(SyntaxError {
                        column: start + 1,
                        message: "unterminated string".into(),
                    });
                }
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
                None => {
                    return Err(SyntaxError {
                        column: start + 1,
                        message: "unterminated string".into(),
                    });
                }
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Value::Str(out));
                }
                Some(b'\\') => {
                    let Some(&e) = self.s.get(self.pos + 1) else {
                        return Err(self.err("a string ends with a lone backslash"));
                    };
                    self.pos += 2;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'0' => out.push(0),
                        b'\\' => out.push(b'\\'),
                        b'"' => out.push(b'"'),
                        b'\'' => out.push(b'\''),
                        b'x' => {
                            let hex = self
                                .s
                                .get(self.pos..self.pos + 2)
                                .and_then(|h| std::str::from_utf8(h).ok())
                                .and_then(|h| u8::from_str_radix(h, 16).ok())
                                .ok_or_else(|| self.err("\\x needs two hex digits"))?;
                            out.push(hex);
                            self.pos += 2;
                        }
                        other => {
                            return Err(self.err(format!("unknown escape \\{}", other as char)));
                        }
                    }
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.as_bytes().to_vec())
    }

    #[test]
    fn commands_with_strings_numbers_hashes_arrays() {
        let c = parse_line("put 't1', 'r1', 'cf:q', 'v', 42").unwrap();
        assert_eq!(c[0].name, "put");
        assert_eq!(
            c[0].args,
            vec![s("t1"), s("r1"), s("cf:q"), s("v"), Value::Int(42)]
        );
        let c = parse_line("scan 't', {STARTROW => 'a', LIMIT => 10, COLUMNS => ['cf1', \"cf2\"], REVERSED => true}").unwrap();
        assert_eq!(
            c[0].args[1],
            Value::Hash(vec![
                ("STARTROW".into(), s("a")),
                ("LIMIT".into(), Value::Int(10)),
                ("COLUMNS".into(), Value::Array(vec![s("cf1"), s("cf2")])),
                ("REVERSED".into(), Value::Bool(true)),
            ])
        );
    }

    #[test]
    fn trailing_pairs_become_one_hash() {
        let c = parse_line("alter 't1', NAME => 'f1', VERSIONS => 5").unwrap();
        assert_eq!(
            c[0].args,
            vec![
                s("t1"),
                Value::Hash(vec![
                    ("NAME".into(), s("f1")),
                    ("VERSIONS".into(), Value::Int(5))
                ])
            ]
        );
        let c = parse_line("alter 't1', 'delete' => 'f1'").unwrap();
        assert_eq!(c[0].args[1], Value::Hash(vec![("delete".into(), s("f1"))]));
    }

    #[test]
    fn escapes() {
        let c = parse_line(r#"put 't', "a\x00\xff\n", 'it\'s \\ \n'"#).unwrap();
        assert_eq!(c[0].args[1], Value::Str(vec![b'a', 0, 0xff, b'\n']));
        assert_eq!(c[0].args[2], s("it's \\ \\n"));
    }

    #[test]
    fn several_commands_comments_and_blank_lines() {
        assert!(parse_line("   ").unwrap().is_empty());
        assert!(parse_line("# nothing").unwrap().is_empty());
        let c = parse_line("list; status # both").unwrap();
        assert_eq!(
            c.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["list", "status"]
        );
    }

    #[test]
    fn errors_point_at_the_column() {
        let e = parse_line("put 't1', 'r1").unwrap_err();
        assert_eq!(e.column, 11);
        assert!(e.message.contains("unterminated"));
        let e = parse_line("scan 't', {LIMIT 10}").unwrap_err();
        assert!(e.message.contains("=>"), "{e}");
        let e = parse_line("get 't' 'r'").unwrap_err();
        assert!(e.message.contains("unexpected"), "{e}");
        let e = parse_line(r#"put "\q""#).unwrap_err();
        assert!(e.message.contains("unknown escape"), "{e}");
        assert!(parse_line("put 't', 99999999999999999999").is_err());
        assert!(parse_line("alter 't', A => 1, 'x'").is_err());
    }
}
