//! How names appear in messages: quoted, and cut to a bounded length, so
//! a request naming a 10,000-character table gets a short answer.

/// Longest name (table, family, row) quoted in an error message, in chars.
const SHOWN_CHARS: usize = 64;

/// `name` quoted for an error message, cut to a bounded length: a request
/// naming a 10,000-character table gets a short answer.
pub fn shown(name: &str) -> String {
    let mut chars = name.chars();
    let head: String = chars.by_ref().take(SHOWN_CHARS).collect();
    if chars.next().is_none() {
        format!("{name:?}")
    } else {
        format!("{head:?}… ({} bytes)", name.len())
    }
}
