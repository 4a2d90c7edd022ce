//! Namespace commands, as HBase's shell names them: create_namespace,
//! alter_namespace, describe_namespace, drop_namespace, list_namespace and
//! list_namespace_tables. Tables in a namespace are named `ns:table`.

use super::CommandError;
use crate::shell::args::Args;
use crate::shell::value::Value;
use shoal_client::Client;
use std::collections::HashMap;
use std::io::Write;

type Result<T> = std::result::Result<T, CommandError>;

/// The namespace commands' usage lines.
pub const USAGE: &[(&str, &str)] = &[
    (
        "create_namespace",
        "create_namespace 'ns1' [, {'PROPERTY_NAME' => 'PROPERTY_VALUE'}]",
    ),
    (
        "alter_namespace",
        "alter_namespace 'ns1', {METHOD => 'set', 'PROPERTY_NAME' => 'PROPERTY_VALUE'}   (or METHOD => 'unset', NAME => 'PROPERTY_NAME')",
    ),
    ("describe_namespace", "describe_namespace 'ns1'"),
    (
        "drop_namespace",
        "drop_namespace 'ns1'   (it must hold no table)",
    ),
    ("list_namespace", "list_namespace"),
    ("list_namespace_tables", "list_namespace_tables 'ns1'"),
];

/// The `{'K' => 'V'}` properties of a command's argument `i`.
fn properties(a: &Args<'_>, i: usize) -> Result<Vec<(String, String)>> {
    match a.get(i) {
        None => Ok(Vec::new()),
        Some(Value::Hash(pairs)) => pairs
            .iter()
            .map(|(k, v)| {
                v.as_text().map(|v| (k.clone(), v)).ok_or_else(|| {
                    CommandError::Usage(format!("property {k} needs a string value"))
                })
            })
            .collect(),
        Some(_) => Err(a.usage()),
    }
}

/// HBase's shell shows a namespace as `{NAME => 'ns1', K => 'V'}`.
fn shown(ns: &shoal_client::proto::Namespace) -> String {
    let mut parts = vec![format!("NAME => '{}'", ns.name)];
    let mut props: Vec<_> = ns.properties.iter().collect();
    props.sort();
    parts.extend(props.into_iter().map(|(k, v)| format!("{k} => '{v}'")));
    format!("{{{}}}", parts.join(", "))
}

/// Runs namespace command `name`; false if `name` is not one.
pub async fn run(client: &Client, name: &str, a: &Args<'_>, out: &mut dyn Write) -> Result<bool> {
    let admin = client.admin();
    match name {
        "create_namespace" => {
            a.count(1, 2)?;
            let props: HashMap<_, _> = properties(a, 1)?.into_iter().collect();
            admin.create_namespace(&a.text(0)?, props).await?;
        }
        "alter_namespace" => {
            a.count(2, 2)?;
            let ns = a.text(0)?;
            let mut props = admin.describe_namespace(&ns).await?.properties;
            let given = properties(a, 1)?;
            let method = given
                .iter()
                .find(|(k, _)| k == "METHOD")
                .map(|(_, v)| v.to_ascii_lowercase())
                .ok_or_else(|| {
                    CommandError::Usage("alter_namespace needs METHOD => 'set' or 'unset'".into())
                })?;
            let rest = given.into_iter().filter(|(k, _)| k != "METHOD");
            match method.as_str() {
                "set" => props.extend(rest),
                "unset" => {
                    for (k, v) in rest {
                        if k == "NAME" {
                            props.remove(&v);
                        }
                    }
                }
                other => {
                    return Err(CommandError::Usage(format!(
                        "METHOD {other:?}: use 'set' or 'unset'"
                    )));
                }
            }
            admin.alter_namespace(&ns, props).await?;
        }
        "describe_namespace" => {
            a.count(1, 1)?;
            let ns = admin.describe_namespace(&a.text(0)?).await?;
            writeln!(out, "DESCRIPTION")?;
            writeln!(out, "{}", shown(&ns))?;
        }
        "drop_namespace" => {
            a.count(1, 1)?;
            admin.drop_namespace(&a.text(0)?).await?;
        }
        "list_namespace" => {
            a.count(0, 0)?;
            let all = admin.list_namespaces().await?;
            writeln!(out, "NAMESPACE")?;
            for ns in &all {
                writeln!(out, "{}", ns.name)?;
            }
            writeln!(out, "{} row(s)", all.len())?;
        }
        "list_namespace_tables" => {
            a.count(1, 1)?;
            let ns = a.text(0)?;
            admin.describe_namespace(&ns).await?;
            let prefix = format!("{ns}:");
            let tables: Vec<String> = admin
                .list()
                .await?
                .into_iter()
                .filter_map(|t| match t.name.strip_prefix(&prefix) {
                    Some(q) => Some(q.to_string()),
                    None if ns == "default" && !t.name.contains(':') => Some(t.name),
                    None => None,
                })
                .collect();
            writeln!(out, "TABLE")?;
            for t in &tables {
                writeln!(out, "{t}")?;
            }
            writeln!(out, "{} row(s)", tables.len())?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}
