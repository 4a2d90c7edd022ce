//! Object keys: validation of the relative keys callers use, and their mapping to and from
//! full keys under the bucket's prefix.
//!
//! A key is `/`-separated segments, e.g. `data/3f/t1/r1/cf/01J....sst`. Invariants kept
//! here: no empty segment (so no leading, trailing or doubled `/`), no `.` or `..`
//! segment, no control characters, no `\`, `#` or `%`, and at most [`MAX_KEY_BYTES`] bytes including
//! the prefix (S3's limit). Keys that pass map one-to-one onto `object_store` paths, so
//! what a caller writes is exactly what a listing returns.

use object_store::path::Path;

use super::error::ObjectError;

/// S3's limit on the length of a key, prefix included.
pub const MAX_KEY_BYTES: usize = 1024;

fn invalid(path: &str, reason: impl Into<String>) -> ObjectError {
    ObjectError::InvalidPath {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// Checks a relative object key (see the module docs for the rules).
pub(crate) fn validate(path: &str) -> Result<(), ObjectError> {
    if path.is_empty() {
        return Err(invalid(path, "the key is empty"));
    }
    if path.len() > MAX_KEY_BYTES {
        return Err(invalid(
            path,
            format!(
                "the key is {} bytes; the limit is {MAX_KEY_BYTES}",
                path.len()
            ),
        ));
    }
    for segment in path.split('/') {
        match segment {
            "" => {
                return Err(invalid(
                    path,
                    "empty segment (leading, trailing or doubled '/')",
                ));
            }
            "." | ".." => {
                return Err(invalid(
                    path,
                    format!("{segment:?} segments are not allowed"),
                ));
            }
            _ => {}
        }
        if let Some(c) = segment.chars().find(|c| c.is_control() || *c == '\\') {
            return Err(invalid(path, format!("contains the character {c:?}")));
        }
        // The local backend names in-progress uploads `<key>#<n>` and maps keys through
        // URLs, so '#' and '%' would not round-trip on every backend.
        if let Some(c) = segment.chars().find(|c| matches!(c, '#' | '%')) {
            return Err(invalid(
                path,
                format!("contains {c:?}, which is reserved (not portable across backends)"),
            ));
        }
    }
    Ok(())
}

/// Maps relative keys to full store paths under an optional prefix, and back.
#[derive(Debug, Clone)]
pub(crate) struct KeySpace {
    /// The prefix without trailing `/`; empty for the bucket root.
    prefix: String,
}

impl KeySpace {
    /// `prefix` must already be valid (config validation checks it).
    pub(crate) fn new(prefix: &str) -> KeySpace {
        KeySpace {
            prefix: prefix.trim_matches('/').to_owned(),
        }
    }

    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The store path of object `path`, after validating it.
    pub(crate) fn object(&self, path: &str) -> Result<Path, ObjectError> {
        validate(path)?;
        let full = self.join(path);
        if full.len() > MAX_KEY_BYTES {
            return Err(invalid(
                path,
                format!(
                    "with the bucket prefix the key is {} bytes; the limit is {MAX_KEY_BYTES}",
                    full.len()
                ),
            ));
        }
        Path::parse(&full).map_err(|e| invalid(path, e.to_string()))
    }

    /// The store path of a listing prefix. `""` lists everything under the bucket prefix;
    /// one trailing `/` is allowed. Prefixes match whole segments: `data/3f` lists
    /// `data/3f/...` but not `data/3fa/...`.
    pub(crate) fn list_prefix(&self, prefix: &str) -> Result<Option<Path>, ObjectError> {
        let trimmed = prefix.strip_suffix('/').unwrap_or(prefix);
        if trimmed.is_empty() {
            if self.prefix.is_empty() {
                return Ok(None);
            }
            return Path::parse(&self.prefix)
                .map(Some)
                .map_err(|e| invalid(prefix, e.to_string()));
        }
        self.object(trimmed).map(Some)
    }

    /// The relative key of a store path returned by a listing, or `None` if the path is
    /// not under the prefix (which the store should never return).
    pub(crate) fn relative(&self, location: &Path) -> Option<String> {
        let full = location.as_ref();
        if self.prefix.is_empty() {
            return Some(full.to_owned());
        }
        full.strip_prefix(self.prefix.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            .map(str::to_owned)
    }

    fn join(&self, path: &str) -> String {
        if self.prefix.is_empty() {
            path.to_owned()
        } else {
            format!("{}/{path}", self.prefix)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_keys() {
        for ok in [
            "a",
            "data/3f/t1/r1/cf/01J9ZQ.sst",
            "catalog/manifest/00000000000000000001",
            "wal/s-1/7/000001.wal",
            "with space/and-dash_under.score~tilde",
        ] {
            validate(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn rejects_bad_keys_with_a_reason() {
        for bad in [
            "", "/a", "a/", "a//b", "./a", "a/../b", "..", "a/\u{0}b", "a\\b", "a/\nb", "a#1",
            "a%20",
        ] {
            match validate(bad) {
                Err(ObjectError::InvalidPath { path, reason }) => {
                    assert_eq!(path, bad);
                    assert!(!reason.is_empty());
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        let long = "x".repeat(MAX_KEY_BYTES + 1);
        assert!(validate(&long).is_err());
    }

    #[test]
    fn prefix_round_trip() {
        let keys = KeySpace::new("prod/c1");
        let p = keys.object("data/x.sst").expect("valid");
        assert_eq!(p.as_ref(), "prod/c1/data/x.sst");
        assert_eq!(keys.relative(&p).as_deref(), Some("data/x.sst"));
        assert_eq!(
            keys.list_prefix("").expect("root").map(|p| p.to_string()),
            Some("prod/c1".to_owned())
        );
        assert_eq!(
            keys.list_prefix("data/")
                .expect("dir")
                .map(|p| p.to_string()),
            Some("prod/c1/data".to_owned())
        );
        assert!(keys.relative(&Path::from("other/x")).is_none());

        let root = KeySpace::new("");
        assert_eq!(root.object("a/b").expect("valid").as_ref(), "a/b");
        assert!(root.list_prefix("").expect("root").is_none());
        assert!(root.list_prefix("a//").is_err());

        let near_limit = "y".repeat(MAX_KEY_BYTES - 2);
        assert!(root.object(&near_limit).is_ok());
        assert!(keys.object(&near_limit).is_err());
    }
}
