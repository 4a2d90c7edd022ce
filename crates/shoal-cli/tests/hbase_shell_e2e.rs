//! HBase's own shell (`hbase shell`: hbase-shell 2.4.17's JRuby code from
//! Maven Central, on the 2.6.1 client jars) against Shoal and against a
//! real standalone HBase 2.6.1: one command script,
//! `tests/hbase-shell/commands.rb`, run once against each (one JVM per
//! side), its transcripts cut into one block per command, normalised
//! (`support/shell_transcript.rs`) and compared command by command.
//! Every command must print the same on both, except those named in
//! [`ALLOWED`], whose reasons `docs/hbase-client.md` ("The HBase shell")
//! gives.
//!
//! The shell starts without `bin/hbase`: `org.jruby.JarBootstrapMain` runs
//! the hbase-shell jar's `jar-bootstrap.rb`, with the two client lines of
//! `docs/hbase-client.md` as `-D` options and the script as its argument.
//! It runs interactively (no `-n`) with stdin closed, so that a failing
//! command prints its `ERROR:` and the script goes on: the errors are
//! compared too. `tests/hbase-shell/ruby` comes first on the classpath:
//! it replaces the 2.4 shell's `trace` command, which needs HTrace classes
//! the 2.6 client no longer has.
//!
//! Skipped outside CI without Java 17 and Maven, as `hbase_client_e2e.rs`.

#![allow(clippy::unwrap_used)] // test code

#[path = "support/hbase.rs"]
mod hbase;
#[path = "support/java.rs"]
mod java;
#[path = "support/shell_transcript.rs"]
mod shell_transcript;
mod support;

use shell_transcript::Block;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use support::ServerProcess;

/// A difference allowed in one command's output.
struct Allowance {
    /// The commands it covers: those that start with this (a command's
    /// name covers all its uses).
    command: &'static str,
    /// What may differ: text matching this regex is taken out of both
    /// sides' lines before they are compared; None: the whole output.
    differs: Option<&'static str>,
}

/// The differences allowed, by command (the first that covers a command
/// applies); each is explained in docs/hbase-client.md, "The HBase shell".
const ALLOWED: &[Allowance] = &[
    // Shoal's hbase:meta is virtual: two families (info, table), one
    // version, no coprocessor; HBase's has rep_barrier too and its own
    // storage settings.
    Allowance {
        command: "describe 'hbase:meta'",
        differs: None,
    },
    // Shoal's families compact their memstores in memory (BASIC) and
    // prefetch their blocks on open by default, and say so.
    Allowance {
        command: "describe",
        differs: Some(
            r", METADATA => \{'IN_MEMORY_COMPACTION' => 'BASIC', 'PREFETCH_BLOCKS_ON_OPEN' => 'true'\}",
        ),
    },
    // t1's regions were restored from a snapshot just before: each reads
    // the files of t1's earlier regions until its compaction, and Shoal
    // splits it only then; HBase at once.
    Allowance {
        command: "split 't1', 'm'",
        differs: None,
    },
    // Shoal's raw scans show neither delete markers nor the cells they
    // hide (docs/hbase-client.md).
    Allowance {
        command: "scan 't1', {RAW => true",
        differs: None,
    },
];

/// The shell's project: its pom, the command script, the Ruby overrides.
fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/hbase-shell")
}

/// The shell's classpath: the overrides, then Maven's (offline) jars.
fn classpath(work: &Path) -> String {
    let cp_file = work.join("classpath.txt");
    let out = Command::new("mvn")
        .args(["-q", "-B", "-o", "-f"])
        .arg(project().join("pom.xml"))
        .arg("dependency:build-classpath")
        .arg(format!("-Dmdep.outputFile={}", cp_file.display()))
        .output()
        .expect("run mvn");
    assert!(
        out.status.success(),
        "mvn could not give hbase-shell 2.4.17's classpath offline (scripts/test fetches it first):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let jars = std::fs::read_to_string(&cp_file).expect("read the classpath Maven wrote");
    format!("{}:{}", project().join("ruby").display(), jars.trim())
}

/// Runs the command script in the shell against `bootstrap`; the
/// transcript (the shell's stdout).
fn run_shell(cp: &str, bootstrap: &str, what: &str, context: &dyn Fn() -> String) -> String {
    let started = Instant::now();
    let out = Command::new("java")
        .args(hbase::JVM_OPTS)
        .arg("-cp")
        .arg(cp)
        .arg("org.jruby.JarBootstrapMain")
        .arg("-Dhbase.client.registry.impl=org.apache.hadoop.hbase.client.RpcConnectionRegistry")
        .arg(format!("-Dhbase.client.bootstrap.servers={bootstrap}"))
        // A command that fails fails fast (the same on both sides).
        .arg("-Dhbase.client.retries.number=3")
        .arg(project().join("commands.rb"))
        .stdin(Stdio::null())
        .output()
        .expect("run java (hbase shell)");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("hbase:001:0> status"),
        "hbase shell against {what} failed:\nstdout:\n{stdout}\nstderr (tail):\n{}\n{}",
        java::tail(&String::from_utf8_lossy(&out.stderr), 60),
        context(),
    );
    eprintln!("{what}: {:.1} s\n{stdout}", started.elapsed().as_secs_f64());
    stdout
}

/// The block with what `allowed` lets differ taken out; None when its
/// whole output may differ.
fn allowed_view(block: &Block, allowed: &[Allowance]) -> Option<Block> {
    let covers = |a: &&Allowance| a.command == block.name() || block.command.starts_with(a.command);
    let Some(allowance) = allowed.iter().find(covers) else {
        return Some(block.clone());
    };
    let re = regex::Regex::new(allowance.differs?).unwrap();
    Some(Block {
        command: block.command.clone(),
        output: block
            .output
            .iter()
            .map(|l| re.replace_all(l, "").into_owned())
            .collect(),
    })
}

/// Every difference between Shoal's blocks and HBase's that `allowed`
/// does not allow.
fn differences(shoal: &[Block], hbase: &[Block], allowed: &[Allowance]) -> Vec<String> {
    let mut out = Vec::new();
    if shoal.len() != hbase.len() {
        out.push(format!(
            "shoal's transcript has {} commands, hbase's {}",
            shoal.len(),
            hbase.len()
        ));
    }
    for (a, b) in shoal.iter().zip(hbase) {
        if a == b {
            continue;
        }
        let diff = format!(
            "{}\n  shoal: {}\n  hbase: {}",
            a.command,
            a.output.join("\n         "),
            b.output.join("\n         ")
        );
        let same_once_allowed = a.command == b.command
            && match (allowed_view(a, allowed), allowed_view(b, allowed)) {
                (Some(x), Some(y)) => x == y,
                _ => true,
            };
        if same_once_allowed {
            eprintln!("allowed difference in {diff}");
        } else {
            out.push(diff);
        }
    }
    out
}

#[test]
fn hbase_shell_prints_the_same_against_shoal_and_hbase() {
    if !java::present() {
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    // HBase starts (half a minute and more) while the shell runs against
    // Shoal.
    let real = std::thread::spawn(|| hbase::shared(false));
    let cp = classpath(dir.path());
    let server = ServerProcess::start(&dir.path().join("data"), None);
    let addr = server.hbase.expect("the native RPC port").to_string();
    let shoal = run_shell(&cp, &addr, "shoal", &|| {
        format!(
            "server stderr (tail):\n{}",
            java::tail(&server.stderr(), 40)
        )
    });
    let real = match real.join() {
        Ok(real) => real,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    let Some(real) = real else {
        return;
    };
    let reference = run_shell(&cp, &real.bootstrap(), "hbase", &|| {
        format!("hbase.log (tail):\n{}", java::tail(&real.log(), 40))
    });
    let (shoal, reference) = (
        shell_transcript::blocks(&shoal),
        shell_transcript::blocks(&reference),
    );
    let found = differences(&shoal, &reference, ALLOWED);
    assert!(
        found.is_empty(),
        "the HBase shell prints otherwise against Shoal than against HBase ({} differences):\n{}",
        found.len(),
        found.join("\n")
    );
    assert_not_vacuous(&reference);
    eprintln!("whole test: {:.1} s", started.elapsed().as_secs_f64());
}

/// The reference did what the script says: every command ran, and the
/// lines that prove the data path are there.
fn assert_not_vacuous(reference: &[Block]) {
    let script = std::fs::read_to_string(project().join("commands.rb")).unwrap();
    assert_eq!(
        reference.len(),
        script.lines().filter(|l| !l.trim().is_empty()).count(),
        "HBase's transcript does not show every command of the script"
    );
    let all: Vec<&str> = reference
        .iter()
        .flat_map(|b| b.output.iter().map(String::as_str))
        .collect();
    for expected in [
        " cf:q timestamp=1970-01-01T00:00:02, value=v2",
        "COUNTER VALUE = 6",
        "ERROR: Unknown namespace nsX!",
        "Created table ns1:t2",
    ] {
        assert!(
            all.contains(&expected),
            "HBase printed no line {expected:?}"
        );
    }
}
