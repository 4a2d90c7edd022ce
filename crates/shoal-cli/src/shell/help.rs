//! `help`: every command's usage, or one command's.

use super::commands::USAGE;

/// The help text for `command`, or for all commands.
pub fn help(command: Option<&str>) -> String {
    if let Some(c) = command {
        return match USAGE.iter().find(|(n, _)| *n == c) {
            Some((_, u)) => format!("{u}\n"),
            None => format!("no command '{c}'; 'help' lists them all\n"),
        };
    }
    let mut out = String::from(
        "Shoal shell: HBase shell commands against a Shoal server.\n\
         Strings are 'single' or \"double\" quoted (\"\\x00\" for bytes); options go in {KEY => value}.\n\n",
    );
    for (name, usage) in USAGE {
        out.push_str(&format!("  {name:<14} {usage}\n"));
    }
    out
}
