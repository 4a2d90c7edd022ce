//! Bearer tokens: the token file (one `USER sha256:HEX` line per token,
//! the SHA-256 of the token, never the token itself), and looking a
//! presented token up. A leaked file lets nobody in; a token is shown once,
//! when `shoal token new` makes it.

use std::collections::HashMap;
use std::path::Path;

/// Why a token file was refused.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file could not be read.
    #[error("token file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not `USER sha256:HEX`.
    #[error("token file {path}, line {line}: {message}")]
    Line {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// The users of a token file, by the SHA-256 of their tokens.
#[derive(Debug, Default, Clone)]
pub struct Tokens {
    /// Users as shared strings: a call's caller clones one, never allocates.
    by_hash: HashMap<[u8; 32], std::sync::Arc<str>>,
}

/// The SHA-256 of `token`.
pub fn hash(token: &str) -> [u8; 32] {
    let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// The token file line for `user` holding `token`.
pub fn line(user: &str, token: &str) -> String {
    let hex: String = hash(token).iter().map(|b| format!("{b:02x}")).collect();
    format!("{user} sha256:{hex}")
}

/// A new random token: 32 random bytes, hex (256 bits).
pub fn generate() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub use crate::config::valid_user;

impl Tokens {
    /// Reads a token file.
    pub fn load(path: &Path) -> Result<Tokens, TokenFileError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TokenFileError::Read {
            path: shown.clone(),
            source,
        })?;
        Tokens::parse(&text).map_err(|(line, message)| TokenFileError::Line {
            path: shown,
            line,
            message,
        })
    }

    /// Parses a token file's text; errors name the 1-based line.
    pub fn parse(text: &str) -> Result<Tokens, (usize, String)> {
        let mut by_hash = HashMap::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let mut parts = l.split_whitespace();
            let (Some(user), Some(digest), None) = (parts.next(), parts.next(), parts.next())
            else {
                return Err((n, "expected `USER sha256:HEX`".into()));
            };
            if !valid_user(user) {
                return Err((
                    n,
                    format!("user {user:?}: 1 to 128 letters, digits and `_ - . @`"),
                ));
            }
            let hex = digest
                .strip_prefix("sha256:")
                .ok_or_else(|| (n, "the digest must start with `sha256:`".to_string()))?;
            let h = parse_hex32(hex).ok_or_else(|| {
                (
                    n,
                    "the digest must be 64 hex digits (`shoal token new` writes the line)"
                        .to_string(),
                )
            })?;
            if let Some(other) = by_hash.insert(h, std::sync::Arc::from(user))
                && &*other != user
            {
                return Err((
                    n,
                    format!("the same token is given to {other:?} and {user:?}"),
                ));
            }
        }
        Ok(Tokens { by_hash })
    }

    /// The user whose token `token` is.
    pub fn user(&self, token: &str) -> Option<&std::sync::Arc<str>> {
        self.by_hash.get(&hash(token))
    }

    /// Tokens in the file.
    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    /// True if the file holds no token.
    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }
}

fn parse_hex32(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_token_is_found_by_its_line() {
        let t = generate();
        assert_eq!(t.len(), 64);
        let file = format!(
            "# users\n\n{}\n{}\n",
            line("alice", &t),
            line("bob", "b-token")
        );
        let tokens = Tokens::parse(&file).expect("parse");
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens.user(&t).map(|u| &**u), Some("alice"));
        assert_eq!(tokens.user("b-token").map(|u| &**u), Some("bob"));
        assert_eq!(tokens.user("wrong"), None);
        assert_eq!(tokens.user(""), None);
    }

    #[test]
    fn bad_lines_are_named() {
        let (n, m) = Tokens::parse("# c\nalice\n").expect_err("no digest");
        assert_eq!(n, 2);
        assert!(m.contains("USER sha256:HEX"));
        let (_, m) = Tokens::parse("alice md5:00\n").expect_err("md5");
        assert!(m.contains("sha256:"));
        let (_, m) = Tokens::parse("alice sha256:zz\n").expect_err("hex");
        assert!(m.contains("64 hex digits"));
        let (_, m) = Tokens::parse("a/b sha256:00\n").expect_err("user");
        assert!(m.contains("a/b"));
        let dup = format!("{}\n{}\n", line("a", "x"), line("b", "x"));
        let (n, m) = Tokens::parse(&dup).expect_err("dup");
        assert_eq!(n, 2);
        assert!(m.contains("\"a\"") && m.contains("\"b\""));
    }
}
