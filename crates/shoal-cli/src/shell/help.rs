//! `help`: every command's usage, or one command's.

use super::commands::{all_usage, canonical, usage_of};

/// The help text for `command`, or for all commands.
pub fn help(command: Option<&str>) -> String {
    if let Some(c) = command {
        return match canonical(c) {
            Some(name) => format!("{}\n", usage_of(name)),
            None => format!("no command '{c}'; 'help' lists them all\n"),
        };
    }
    let mut out = String::from(
        "Shoal shell: HBase shell commands against a Shoal server.\n\
         Strings are 'single' or \"double\" quoted (\"\\x00\" for any byte); options go in {KEY => value}.\n\
         Separate commands with ';' or newlines; a command may continue on the next line after ',' or inside [ ] or { }.\n\n",
    );
    for (name, usage) in all_usage() {
        out.push_str(&format!("  {name:<14} {usage}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_every_command_or_one() {
        let all = help(None);
        for (name, _) in all_usage() {
            assert!(all.contains(&format!("  {name} ")), "{name}");
        }
        assert!(help(Some("desc")).starts_with("describe 't1'"));
        assert!(help(Some("nope")).contains("no command 'nope'"));
    }
}
