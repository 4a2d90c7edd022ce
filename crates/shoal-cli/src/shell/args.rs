//! Reading a command's arguments: counts, positional strings and integers,
//! `family:qualifier` column specs, and the usage error when they are wrong.

use super::commands::{CommandError, usage_of};
use super::value::Value;

/// A command's arguments, with its name for error messages.
pub struct Args<'a> {
    /// The command (canonical name, for its usage line).
    pub name: &'a str,
    /// The arguments.
    pub values: &'a [Value],
}

impl<'a> Args<'a> {
    /// The usage error of this command.
    pub fn usage(&self) -> CommandError {
        CommandError::Usage(format!(
            "wrong arguments for '{}'. Usage: {}",
            self.name,
            usage_of(self.name)
        ))
    }

    /// Fails unless there are `min..=max` arguments.
    pub fn count(&self, min: usize, max: usize) -> Result<(), CommandError> {
        if (min..=max).contains(&self.values.len()) {
            Ok(())
        } else {
            Err(self.usage())
        }
    }

    /// Argument `i`, if given.
    pub fn get(&self, i: usize) -> Option<&'a Value> {
        self.values.get(i)
    }

    /// Argument `i` as text (a string or bare word).
    pub fn text(&self, i: usize) -> Result<String, CommandError> {
        self.get(i)
            .and_then(Value::as_text)
            .ok_or_else(|| self.usage())
    }

    /// Argument `i` as bytes (a string).
    pub fn bytes(&self, i: usize) -> Result<Vec<u8>, CommandError> {
        self.get(i)
            .and_then(Value::as_bytes)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| self.usage())
    }

    /// Argument `i` as a `family:qualifier` column.
    pub fn column(&self, i: usize) -> Result<(Vec<u8>, Vec<u8>), CommandError> {
        let spec = self.bytes(i)?;
        match split_column(&spec) {
            (f, Some(q)) if !f.is_empty() => Ok((f.to_vec(), q.to_vec())),
            _ => Err(CommandError::Usage(format!(
                "{:?} is not a column; write 'family:qualifier'",
                String::from_utf8_lossy(&spec)
            ))),
        }
    }

    /// Optional integer argument `i` (absent: `None`).
    pub fn opt_int(&self, i: usize) -> Result<Option<i64>, CommandError> {
        match self.get(i) {
            None => Ok(None),
            Some(Value::Int(n)) => Ok(Some(*n)),
            Some(_) => Err(self.usage()),
        }
    }
}

/// `family:qualifier` → (family, Some(qualifier)); `family` → (family,
/// None). The split is at the first `:` (families cannot hold one).
pub fn split_column(spec: &[u8]) -> (&[u8], Option<&[u8]>) {
    match spec.iter().position(|&b| b == b':') {
        Some(i) => (&spec[..i], Some(&spec[i + 1..])),
        None => (spec, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.as_bytes().to_vec())
    }

    #[test]
    fn column_specs() {
        assert_eq!(split_column(b"cf:q"), (&b"cf"[..], Some(&b"q"[..])));
        assert_eq!(split_column(b"cf:"), (&b"cf"[..], Some(&b""[..])));
        assert_eq!(split_column(b"cf:a:b"), (&b"cf"[..], Some(&b"a:b"[..])));
        assert_eq!(split_column(b"cf"), (&b"cf"[..], None));
        let values = [s("cf:q"), s("cf"), s(":q"), Value::Int(3)];
        let a = Args {
            name: "put",
            values: &values,
        };
        assert_eq!(a.column(0).unwrap(), (b"cf".to_vec(), b"q".to_vec()));
        assert!(
            a.column(1)
                .unwrap_err()
                .to_string()
                .contains("not a column")
        );
        assert!(a.column(2).is_err());
        assert!(a.column(3).unwrap_err().to_string().contains("Usage: put"));
    }

    #[test]
    fn counts_and_kinds() {
        let values = [s("t"), Value::Int(5)];
        let a = Args {
            name: "get",
            values: &values,
        };
        assert!(a.count(1, 2).is_ok());
        let e = a.count(3, 3).unwrap_err().to_string();
        assert!(
            e.starts_with("wrong arguments for 'get'. Usage: get 't1'"),
            "{e}"
        );
        assert_eq!(a.text(0).unwrap(), "t");
        assert!(a.text(1).is_err());
        assert_eq!(a.opt_int(1).unwrap(), Some(5));
        assert_eq!(a.opt_int(2).unwrap(), None);
        assert!(a.opt_int(0).is_err());
    }
}
