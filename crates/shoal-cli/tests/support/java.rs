//! The Java programs the HBase end-to-end tests drive
//! (`tests/hbase-client-java`): compiled against hbase-client 2.6.1's jars
//! (Maven gives the classpath offline; `scripts/test` fetches the jars
//! first). Outside CI, a machine without Java 17 and Maven skips the test
//! with a note; in CI their absence fails it.

#![allow(dead_code)] // each test binary uses part of it

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Java project's directory.
pub fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/hbase-client-java")
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// True if Java and Maven are here; false (the test is skipped, with a
/// note) outside CI without them; in CI their absence fails the test.
pub fn present() -> bool {
    if !(have("java") && have("javac") && have("mvn")) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI: Java 17 (javac) and Maven are needed: scripts/test installs them"
        );
        eprintln!("skipped: install Java 17 and Maven (scripts/test does) to run this test");
        return false;
    }
    true
}

/// Compiles `sources` into `work/classes`; the classpath to run them with,
/// or None (skipped) outside CI without Java and Maven.
pub fn compile(work: &Path, sources: &[PathBuf]) -> Option<String> {
    if !present() {
        return None;
    }
    let cp_file = work.join("classpath.txt");
    let out = Command::new("mvn")
        .args(["-q", "-B", "-o", "-f"])
        .arg(project().join("pom.xml"))
        .arg("dependency:build-classpath")
        .arg("-Dhbase.version=2.6.1")
        .arg(format!("-Dmdep.outputFile={}", cp_file.display()))
        .output()
        .expect("run mvn");
    assert!(
        out.status.success(),
        "mvn could not give hbase-client 2.6.1's classpath offline (scripts/test fetches it first):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let jars = std::fs::read_to_string(&cp_file).expect("classpath file");
    Some(compile_against(work, sources, jars.trim()))
}

/// Compiles `sources` into `work/classes` against the dependencies of the
/// Maven project `pom` (its classpath asked of Maven offline: `scripts/test`
/// fetches the jars first); the classpath to run them with, or None
/// (skipped) outside CI without Java and Maven.
pub fn compile_with_pom(work: &Path, pom: &Path, sources: &[PathBuf]) -> Option<String> {
    if !present() {
        return None;
    }
    std::fs::create_dir_all(work).expect("work directory");
    let cp_file = work.join("classpath.txt");
    let out = Command::new("mvn")
        .args(["-q", "-B", "-o", "-f"])
        .arg(pom)
        .arg("dependency:build-classpath")
        .arg(format!("-Dmdep.outputFile={}", cp_file.display()))
        .output()
        .expect("run mvn");
    assert!(
        out.status.success(),
        "mvn could not give {}'s classpath offline (scripts/test fetches it first):\n{}{}",
        pom.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let jars = std::fs::read_to_string(&cp_file).expect("classpath file");
    Some(compile_against(work, sources, jars.trim()))
}

/// Compiles `sources` into `work/classes` against `jars` (a classpath);
/// the classpath to run them with.
pub fn compile_against(work: &Path, sources: &[PathBuf], jars: &str) -> String {
    let classes = work.join("classes");
    std::fs::create_dir_all(&classes).expect("classes directory");
    let out = Command::new("javac")
        .args(["-nowarn", "-d"])
        .arg(&classes)
        .arg("-cp")
        .arg(jars.trim())
        .args(sources)
        .output()
        .expect("run javac");
    assert!(
        out.status.success(),
        "javac failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    format!("{}:{}", classes.display(), jars.trim())
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The step a line of a compared program reports (the text before its
/// first `: `).
pub fn step(line: &str) -> &str {
    line.split(": ").next().unwrap_or(line)
}

/// Every difference between the lines a program printed against Shoal and
/// against HBase, except steps named in `allowed` (each explained in
/// docs/hbase-client.md).
pub fn differences(shoal: &str, hbase: &str, allowed: &[&str]) -> Vec<String> {
    let a: Vec<&str> = shoal.lines().collect();
    let b: Vec<&str> = hbase.lines().collect();
    let mut out = Vec::new();
    if a.len() != b.len() {
        out.push(format!(
            "shoal printed {} lines, hbase {}",
            a.len(),
            b.len()
        ));
    }
    for (x, y) in a.iter().zip(b.iter()) {
        if x == y {
            continue;
        }
        if step(x) == step(y) && allowed.contains(&step(x)) {
            eprintln!(
                "allowed difference in {:?}:\n  shoal: {x}\n  hbase: {y}",
                step(x)
            );
            continue;
        }
        out.push(format!("shoal: {x}\nhbase: {y}"));
    }
    out
}
