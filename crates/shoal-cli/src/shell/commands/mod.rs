//! The shell's commands: the usage table, dispatch by name, and the
//! error a command fails with. `data` holds the row commands, `admin` the
//! table and server ones.

mod admin;
mod data;
mod namespace;
mod point_in_time;
mod snapshot;

use super::args::Args;
use super::value::Command;
use shoal_client::Client;
use std::io::Write;

/// A command's failure, printed as `ERROR: …`.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Wrong arguments, or an unknown command.
    #[error("{0}")]
    Usage(String),
    /// The server refused or failed.
    #[error("{0}")]
    Client(#[from] shoal_client::ClientError),
    /// Ctrl-C stopped the command.
    #[error("interrupted")]
    Interrupted,
    /// Stdout could not be written.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// Every command and its usage, for `help` and argument errors.
pub const USAGE: &[(&str, &str)] = &[
    (
        "create",
        "create 't1', 'cf1', {NAME => 'cf2', VERSIONS => 3, TTL => 86400, COMPRESSION => 'ZSTD', BLOOMFILTER => 'ROWCOL'}, SPLITS => ['g', 'n']",
    ),
    ("put", "put 't1', 'row', 'cf:q', 'value' [, timestamp]"),
    (
        "get",
        "get 't1', 'row' [, 'cf:q' | 'cf' | {COLUMN => ['cf:q', 'cf2'], VERSIONS => 3, TIMERANGE => [min, max], TIMESTAMP => ts}]",
    ),
    (
        "scan",
        "scan 't1' [, {STARTROW => 'a', STOPROW => 'z', ROWPREFIXFILTER => 'p', LIMIT => 10, COLUMNS => ['cf', 'cf:q'], VERSIONS => 2, REVERSED => true, FILTER => \"PrefixFilter('p') AND KeyOnlyFilter()\", BATCH => n, TIMERANGE => [min, max], CACHE_BLOCKS => false}]",
    ),
    ("delete", "delete 't1', 'row', 'cf:q' [, timestamp]"),
    (
        "deleteall",
        "deleteall 't1', 'row' [, 'cf' | 'cf:q'] [, timestamp]",
    ),
    ("incr", "incr 't1', 'row', 'cf:q' [, amount]"),
    ("get_counter", "get_counter 't1', 'row', 'cf:q'"),
    ("append", "append 't1', 'row', 'cf:q', 'value'"),
    (
        "check_and_put",
        "check_and_put 't1', 'row', 'cf:q', 'expected', 'cf:q2', 'value'",
    ),
    (
        "count",
        "count 't1' [, {INTERVAL => 1000, STARTROW => 'a', STOPROW => 'z', …scan options}]",
    ),
    ("list", "list"),
    ("describe", "describe 't1'   (alias: desc)"),
    (
        "alter",
        "alter 't1', {NAME => 'cf', VERSIONS => 5}  |  alter 't1', 'delete' => 'cf'  |  alter 't1', NAME => 'cf', METHOD => 'delete'",
    ),
    ("disable", "disable 't1'"),
    ("enable", "enable 't1'"),
    ("is_enabled", "is_enabled 't1'"),
    ("is_disabled", "is_disabled 't1'"),
    ("exists", "exists 't1'"),
    ("drop", "drop 't1'   (disable it first)"),
    (
        "truncate",
        "truncate 't1'   (keeps the schema and region boundaries)",
    ),
    ("flush", "flush 't1'"),
    ("compact", "compact 't1'"),
    ("major_compact", "major_compact 't1'"),
    ("split", "split 't1' [, 'row']"),
    (
        "status",
        "status [ 'detailed' ]   (detailed: the cluster's servers and their regions)",
    ),
    (
        "move",
        "move 'region_id' [, 'server']   (cluster: the master picks a server if none is given)",
    ),
    (
        "balancer",
        "balancer   (cluster: says whether the balancer runs)",
    ),
    (
        "balance_switch",
        "balance_switch true|false   (cluster: turns the balancer on or off; prints the former state)",
    ),
    (
        "grant",
        "grant 'user', 'RWCA' [, 'table' [, 'family']]   (auth on: replaces what the user holds there)",
    ),
    (
        "revoke",
        "revoke 'user' [, 'table' [, 'family']]   (removes what the user holds there)",
    ),
    (
        "user_permission",
        "user_permission [ 'table' ]   (the grants; every scope if no table)",
    ),
    ("version", "version"),
    ("help", "help [ 'command' ]"),
    ("exit", "exit   (alias: quit)"),
];

/// Every command's usage: the table above, then the snapshot,
/// point-in-time and namespace commands.
pub fn all_usage() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    USAGE
        .iter()
        .chain(snapshot::USAGE.iter())
        .chain(point_in_time::USAGE.iter())
        .chain(namespace::USAGE.iter())
}

/// The usage line of `cmd` (empty if unknown).
pub fn usage_of(cmd: &str) -> &'static str {
    all_usage().find(|(n, _)| *n == cmd).map_or("", |(_, u)| *u)
}

/// The canonical name of a command (aliases resolved), if it exists.
pub fn canonical(name: &str) -> Option<&'static str> {
    let name = match name {
        "desc" => "describe",
        "quit" => "exit",
        "truncate_preserve" => "truncate",
        other => other,
    };
    all_usage().find(|(n, _)| *n == name).map(|(n, _)| *n)
}

/// Runs a command that needs no server — `help`, `exit`, or an unknown
/// name (an error) — and returns true; false if `cmd` needs the server.
pub fn run_local(cmd: &Command, out: &mut dyn Write) -> Result<bool, CommandError> {
    let Some(name) = canonical(&cmd.name) else {
        return Err(CommandError::Usage(format!(
            "Unknown command '{}'. Try 'help'.",
            cmd.name
        )));
    };
    match name {
        "help" => {
            let a = Args {
                name,
                values: &cmd.args,
            };
            a.count(0, 1)?;
            let topic = a.get(0).and_then(|v| v.as_text());
            out.write_all(super::help::help(topic.as_deref()).as_bytes())?;
            Ok(true)
        }
        // The session stops at `exit`; nothing to do here.
        "exit" => Ok(true),
        _ => Ok(false),
    }
}

/// Runs one command, writing what it prints to `out`.
pub async fn run(client: &Client, cmd: &Command, out: &mut dyn Write) -> Result<(), CommandError> {
    if run_local(cmd, out)? {
        return Ok(());
    }
    let name = canonical(&cmd.name).unwrap_or_default();
    let a = Args {
        name,
        values: &cmd.args,
    };
    match name {
        "put" => data::put(client, &a).await,
        "get" => data::get(client, &a, out).await,
        "scan" => data::scan(client, &a, out).await,
        "count" => data::count(client, &a, out).await,
        "delete" => data::delete(client, &a).await,
        "deleteall" => data::deleteall(client, &a).await,
        "incr" => data::incr(client, &a, out).await,
        "get_counter" => data::get_counter(client, &a, out).await,
        "append" => data::append(client, &a, out).await,
        "check_and_put" => data::check_and_put(client, &a, out).await,
        _ if snapshot::run(client, name, &a, out).await? => Ok(()),
        _ if point_in_time::run(client, name, &a, out).await? => Ok(()),
        _ if namespace::run(client, name, &a, out).await? => Ok(()),
        _ => admin::run(client, name, &a, out).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases() {
        assert_eq!(canonical("desc"), Some("describe"));
        assert_eq!(canonical("quit"), Some("exit"));
        assert_eq!(canonical("scan"), Some("scan"));
        assert_eq!(canonical("bogus"), None);
        assert!(usage_of("put").starts_with("put 't1'"));
        assert_eq!(usage_of("bogus"), "");
        let mut out = Vec::new();
        let cmd = |name: &str| Command {
            name: name.into(),
            args: vec![],
        };
        assert!(run_local(&cmd("help"), &mut out).unwrap());
        assert!(String::from_utf8(out).unwrap().contains("major_compact"));
        assert!(!run_local(&cmd("scan"), &mut Vec::new()).unwrap());
        let e = run_local(&cmd("bogus"), &mut Vec::new()).unwrap_err();
        assert_eq!(e.to_string(), "Unknown command 'bogus'. Try 'help'.");
        for (name, usage) in all_usage() {
            assert!(usage.starts_with(name), "{name}: {usage}");
        }
        assert_eq!(canonical("clone_snapshot"), Some("clone_snapshot"));
    }
}
