//! Table and namespace names as HBase writes them: a table is
//! `namespace:qualifier`, and a table of the `default` namespace is named
//! by its qualifier alone (`t1` and `default:t1` are one table; the catalog
//! holds `t1`). `hbase` is the system namespace: it holds `hbase:meta` and
//! no user table. Both always exist.

/// The namespace of tables named without one.
pub const DEFAULT_NAMESPACE: &str = "default";
/// HBase's own namespace (its catalog table lives there).
pub const SYSTEM_NAMESPACE: &str = "hbase";
/// Longest namespace or table qualifier, bytes.
const MAX_PART: usize = 128;

/// The namespace a table name is in.
pub fn namespace_of(table: &str) -> &str {
    match table.split_once(':') {
        Some((ns, _)) => ns,
        None => DEFAULT_NAMESPACE,
    }
}

/// The name the catalog holds for `table`: `default:t` is `t`; any other
/// name is itself.
pub fn canonical(table: &str) -> &str {
    table
        .strip_prefix(DEFAULT_NAMESPACE)
        .and_then(|rest| rest.strip_prefix(':'))
        .unwrap_or(table)
}

/// Checks a namespace name as HBase does: 1–128 letters, digits and `_`.
pub fn validate_namespace_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_PART {
        return Err(format!(
            "namespace name {} must be 1 to {MAX_PART} characters long",
            crate::text::shown(name)
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(format!(
            "namespace name {name:?} contains {bad:?}; use letters, digits and '_'"
        ));
    }
    Ok(())
}

/// Checks a table name: an optional `namespace:` (see
/// [`validate_namespace_name`]) and a qualifier of 1–128 bytes of
/// `[A-Za-z0-9_.-]`, not starting with `.` or `-`. User tables may not be
/// made in the `hbase` namespace.
pub fn validate_table_name(name: &str) -> Result<(), String> {
    let qualifier = match name.split_once(':') {
        Some((ns, q)) => {
            validate_namespace_name(ns).map_err(|e| format!("table {name:?}: {e}"))?;
            if ns == SYSTEM_NAMESPACE {
                return Err(format!(
                    "table {name:?}: the {SYSTEM_NAMESPACE:?} namespace holds HBase's system tables only"
                ));
            }
            q
        }
        None => name,
    };
    if qualifier.is_empty() || qualifier.len() > MAX_PART {
        return Err(format!(
            "table name {} must be 1 to {MAX_PART} characters long",
            crate::text::shown(name)
        ));
    }
    if qualifier.starts_with('.') || qualifier.starts_with('-') {
        return Err(format!(
            "table name {name:?} must not start with '.' or '-'"
        ));
    }
    if let Some(bad) = qualifier
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "table name {name:?} contains {bad:?}; use letters, digits, '_', '-' and '.'"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_namespace_is_implied() {
        assert_eq!(canonical("default:t1"), "t1");
        assert_eq!(canonical("t1"), "t1");
        assert_eq!(canonical("ns1:t1"), "ns1:t1");
        assert_eq!(canonical("defaultx:t1"), "defaultx:t1");
        assert_eq!(namespace_of("t1"), "default");
        assert_eq!(namespace_of("ns1:t1"), "ns1");
    }

    #[test]
    fn names_are_checked_as_hbase_does() {
        assert!(validate_table_name("t1").is_ok());
        assert!(validate_table_name("ns_1:t-1.x").is_ok());
        assert!(
            validate_table_name("ns-1:t").is_err(),
            "no '-' in a namespace"
        );
        assert!(validate_table_name(":t").is_err());
        assert!(validate_table_name("ns:").is_err());
        assert!(validate_table_name("a:b:c").is_err());
        assert!(validate_table_name("hbase:t").is_err());
        assert!(validate_table_name(".t").is_err());
        assert!(validate_namespace_name("ns1").is_ok());
        assert!(validate_namespace_name("").is_err());
        assert!(validate_namespace_name(&"n".repeat(129)).is_err());
    }
}
