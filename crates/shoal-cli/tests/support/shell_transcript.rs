//! A transcript of `hbase shell` (the JRuby shell of hbase-shell 2.4.17 on
//! the 2.6.1 client), cut into one block per command and normalised so
//! that a run against Shoal and one against HBase compare line for line.
//!
//! The shell echoes each command after its prompt (`hbase:007:0> create
//! …`), so a block is the prompt's command and the lines up to the next
//! prompt. Normalising removes only what legitimately differs between
//! two servers and two runs: durations (`Took 0.0123 seconds`), wall-clock
//! times (cells written at the server's clock, snapshot creation times),
//! server names (host, port, start code), region ids and encoded names,
//! Java object ids, the server's stack trace under an `ERROR:` line, the
//! average load of `status`, and — for `status 'detailed'` and
//! `list_regions` — the per-server and per-region load figures, of which
//! only the shape is compared.

#![allow(dead_code)] // each test binary uses part of it

use regex::Regex;
use std::sync::OnceLock;

/// One command and what the shell printed for it, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub command: String,
    pub output: Vec<String>,
}

impl Block {
    /// The command's name (its first word), as allow-lists name it.
    pub fn name(&self) -> &str {
        self.command
            .split(|c: char| c.is_whitespace() || c == '(')
            .next()
            .unwrap_or("")
    }
}

fn prompt() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^hbase:\d+:\d+> ?(.*)$").expect("prompt regex"))
}

/// The transcript's blocks, in order: what precedes the first prompt
/// (JVM and logging noise) and the empty prompt at the end (with the
/// banner the shell prints when its input ends) are left out.
pub fn blocks(transcript: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for line in transcript.lines() {
        if let Some(caps) = prompt().captures(line) {
            let command = caps.get(1).map_or("", |m| m.as_str()).trim().to_string();
            if command.is_empty() {
                break;
            }
            out.push(Block {
                command,
                output: Vec::new(),
            });
        } else if let Some(block) = out.last_mut() {
            block.output.push(line.to_string());
        }
    }
    for block in &mut out {
        block.output = normalise(&block.command, &block.output);
    }
    out
}

/// Replacements applied to every output line, in order.
fn rules() -> &'static [(Regex, &'static str)] {
    static RULES: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    RULES.get_or_init(|| {
        [
            (r"Took \d+\.\d+ seconds", "Took <t> seconds"),
            // Cells written at the server's clock (not the script's own
            // timestamps, which are in 1970).
            (
                r"\b(19[89]\d|2\d{3})-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?",
                "<now>",
            ),
            (r"\(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}\)", "(<time>)"),
            // Server names: host,port,startcode and host:port [startcode].
            (r"[\w.-]+,\d{2,5},\d{10,}", "<server>"),
            (r"\b\d{1,3}(\.\d{1,3}){3}:\d{2,5}( \d{10,})?", "<server>"),
            // Region names: <table>,<start>,<region id>.<encoded>.
            (r",\d{10,}\.[0-9a-f]{32}\.", ",<id>.<enc>."),
            (r"\b[0-9a-f]{32}\b", "<enc>"),
            (r":0x[0-9a-f]+>", ":0x…>"),
            (r"\d+\.\d{4} average load", "<n> average load"),
        ]
        .into_iter()
        .map(|(re, to)| (Regex::new(re).expect("normalising regex"), to))
        .collect()
    })
}

/// One block's lines, normalised for the command that printed them.
fn normalise(command: &str, lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = lines
        .iter()
        // The server's stack trace under an `ERROR:` line (HBase sends its
        // own; Shoal has none).
        .filter(|l| !l.starts_with("\tat ") && !l.starts_with("\t... "))
        .map(|l| {
            rules().iter().fold(l.clone(), |s, (re, to)| {
                re.replace_all(&s, *to).into_owned()
            })
        })
        .collect();
    if command.starts_with("status 'detailed'") {
        // Per-server and per-region load lines: only the top level stays.
        out.retain(|l| !l.starts_with("    "));
    }
    if command.starts_with("list_regions") {
        out = out.iter().map(|l| region_row(l)).collect();
    }
    out
}

/// A `list_regions` row with its load figures (SIZE, REQ, LOCALITY) and
/// column padding taken out: server, region name, start and end keys stay.
fn region_row(line: &str) -> String {
    let cells: Vec<&str> = line.split('|').map(str::trim).collect();
    if cells.len() < 4 {
        return line.trim().to_string();
    }
    cells[..4].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "log4j:WARN noise\n\
hbase:001:0> status\n\
1 active master, 0 backup masters, 1 servers, 0 dead, 2.0000 average load\n\
Took 1.8201 seconds\n\
hbase:002:0> drop_namespace 'ns1'\n\
\n\
ERROR: org.apache.hadoop.hbase.constraint.ConstraintException: Only empty namespaces can be removed.\n\
\tat org.apache.hadoop.hbase.master.procedure.DeleteNamespaceProcedure.prepareDelete(X.java:213)\n\
Took 0.7197 seconds\n\
hbase:003:0> locate_region 't1', 'h'\n\
\x20127.0.0.1:26683 {ENCODED => 5ef79ca6ddf5f6bafd9e20bdd54d2535, NAME => 't1,g,1795824501027.5ef79ca6ddf5f6bafd9e20bdd54d2535.'}\n\
=> #<Java::OrgApacheHadoopHbase::HRegionLocation:0x1693d505>\n\
hbase:004:0> \n\
HBase Shell\n";

    #[test]
    fn cuts_one_block_per_command_and_drops_the_noise_around() {
        let b = blocks(SAMPLE);
        let names: Vec<&str> = b.iter().map(Block::name).collect();
        assert_eq!(names, ["status", "drop_namespace", "locate_region"]);
        assert_eq!(
            b[0].output,
            [
                "1 active master, 0 backup masters, 1 servers, 0 dead, <n> average load",
                "Took <t> seconds"
            ]
        );
    }

    #[test]
    fn drops_server_stack_traces_and_masks_names_and_ids() {
        let b = blocks(SAMPLE);
        assert!(!b[1].output.iter().any(|l| l.contains("prepareDelete")));
        assert_eq!(
            b[2].output,
            [
                " <server> {ENCODED => <enc>, NAME => 't1,g,<id>.<enc>.'}",
                "=> #<Java::OrgApacheHadoopHbase::HRegionLocation:0x…>"
            ]
        );
    }

    #[test]
    fn keeps_script_timestamps_and_masks_server_clock_ones() {
        let lines = [
            " a1 column=cf:q, timestamp=1970-01-01T00:00:03, value=v3".to_string(),
            " c1 column=cf:n, timestamp=2026-11-28T00:08:37.310, value=x".to_string(),
            " s1 t1 (2026-11-28 00:08:42 +0000)".to_string(),
        ];
        assert_eq!(
            normalise("scan 't1'", &lines),
            [
                " a1 column=cf:q, timestamp=1970-01-01T00:00:03, value=v3",
                " c1 column=cf:n, timestamp=<now>, value=x",
                " s1 t1 (<time>)"
            ]
        );
    }

    #[test]
    fn list_regions_keeps_keys_and_drops_load() {
        let row = " 127.0.0.1,26683,1795824388822 | t1,g,1795824501027.5ef79ca6ddf5f6bafd9e20bdd54d2535. |   g |  p |  1 |  0 |  0.0 |";
        assert_eq!(
            normalise("list_regions 't1'", &[row.to_string()]),
            ["<server> | t1,g,<id>.<enc>. | g | p"]
        );
    }
}
