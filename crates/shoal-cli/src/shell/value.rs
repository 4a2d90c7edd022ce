//! What the parser produces: commands and their argument values.

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
    /// A bare word (a constant such as `VERSIONS` or `FOREVER`).
    Word(String),
    /// `[a, b]`.
    Array(Vec<Value>),
    /// `{K => v}`, in the order written.
    Hash(Vec<(String, Value)>),
}

impl Value {
    /// The value as text (strings and bare words; strings lossily).
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
    /// Its arguments in order; `KEY => value` pairs written outside braces
    /// are gathered into one trailing [`Value::Hash`].
    pub args: Vec<Value>,
}
