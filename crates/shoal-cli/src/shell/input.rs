//! Gathering input lines into complete statements: a statement left open
//! (inside brackets, after `,` or `=>`) continues on the next line. Syntax
//! errors give lines of the whole input.

use super::parser::{SyntaxError, parse};
use super::value::Command;

/// What feeding a line produced.
#[derive(Debug, PartialEq)]
pub enum Fed {
    /// The statement so far is open; feed the next line.
    More,
    /// The commands of a complete statement, or its syntax error.
    Ready(Result<Vec<Command>, SyntaxError>),
}

/// Lines of input not yet parsed.
#[derive(Debug, Default)]
pub struct Assembler {
    pending: String,
    /// Lines seen so far.
    lines: usize,
    /// Line the pending statement starts on (0-based).
    start: usize,
}

impl Assembler {
    /// Adds a line.
    pub fn feed(&mut self, line: &str) -> Fed {
        if self.pending.is_empty() {
            self.start = self.lines;
        } else {
            self.pending.push('\n');
        }
        self.lines += 1;
        self.pending.push_str(line);
        match parse(&self.pending) {
            Err(e) if e.incomplete => Fed::More,
            result => {
                self.pending.clear();
                Fed::Ready(result.map_err(|e| self.absolute(e)))
            }
        }
    }

    /// Counts a line that could not be read.
    pub fn skip_line(&mut self) {
        self.lines += 1;
    }

    /// Lines seen so far (the number of the last one).
    pub fn line(&self) -> usize {
        self.lines
    }

    /// `e` with its line counted from the start of the input.
    fn absolute(&self, e: SyntaxError) -> SyntaxError {
        SyntaxError {
            line: e.line + self.start,
            ..e
        }
    }

    /// True if a statement is open.
    pub fn is_open(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Drops an open statement (Ctrl-C).
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    /// The end of the input: the error of a statement left open, if any.
    pub fn finish(&mut self) -> Option<SyntaxError> {
        let pending = std::mem::take(&mut self.pending);
        parse(&pending).err().map(|e| self.absolute(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_statements_wait_for_more_lines() {
        let mut a = Assembler::default();
        assert_eq!(a.feed("create 't1',"), Fed::More);
        assert_eq!(a.feed("  {NAME => 'cf',"), Fed::More);
        assert!(a.is_open());
        let Fed::Ready(Ok(c)) = a.feed("   VERSIONS => 3}") else {
            panic!("not ready");
        };
        assert_eq!(c[0].name, "create");
        assert_eq!(c[0].args.len(), 2);
        assert!(!a.is_open());
        assert!(matches!(a.feed("list; status"), Fed::Ready(Ok(c)) if c.len() == 2));
        let Fed::Ready(Err(e)) = a.feed("put 't") else {
            panic!("no error");
        };
        assert_eq!((e.line, e.column), (5, 5), "lines of the whole input");
        assert_eq!(a.line(), 5);
        assert!(a.finish().is_none());
    }

    #[test]
    fn input_ending_inside_a_statement_is_an_error() {
        let mut a = Assembler::default();
        a.skip_line();
        assert_eq!(a.feed("scan 't', {LIMIT => 1"), Fed::More);
        assert_eq!(a.feed(""), Fed::More);
        let e = a.finish().unwrap();
        assert!(e.message.contains("'}'"), "{e}");
        assert_eq!(e.line, 3);
        assert!(!a.is_open());
        a.feed("x [");
        a.clear();
        assert!(a.finish().is_none());
    }
}
