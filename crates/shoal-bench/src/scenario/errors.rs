//! How a scenario turns the failures of what it drives (a server child, a
//! client, a file) into a [`ScenarioError`]: one place, shared by every
//! scenario.

use super::ScenarioError;
use super::child::ChildError;
use std::path::Path;

/// Any failure of the server side, by its message.
pub fn err(what: impl std::fmt::Display) -> ScenarioError {
    ScenarioError::Server(what.to_string())
}

/// A server child's failure.
pub fn child_err(e: ChildError) -> ScenarioError {
    ScenarioError::Server(e.to_string())
}

/// An I/O failure on `path`.
pub fn io(path: &Path) -> impl Fn(std::io::Error) -> ScenarioError + '_ {
    move |source| ScenarioError::Io {
        path: path.display().to_string(),
        source,
    }
}
