//! HBase 2.6.1's own reader on files Shoal's writer wrote: `tests/hbase-hfile-gen`'s
//! `ReadHFile.java` opens each with `HFile.createReader`, dumps its cells in the
//! fixtures' `.cells` format (compared here with what was written), and checks first,
//! last and mid keys, a seek to every key through the block index, and the store-file
//! keys of the file info. Needs Java 17 and Maven (the jars offline, as
//! `scripts/gen-hbase-fixtures` fetches them): skipped with a note outside CI without
//! them, a failure in CI (`CI` set).

use crate::cells::{fixture_cells, generated, write_all};
use crate::support::cell_line;
use shoal_hfile::{Compression, HCell, HFileWriterOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/hbase-hfile-gen")
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// JVM options of HBase's `bin/hbase` on Java 17 (as `scripts/gen-hbase-fixtures`).
const JVM_OPTS: &[&str] = &[
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.net.preferIPv4Stack=true",
    "--add-modules",
    "jdk.unsupported",
    "--add-opens",
    "java.base/java.nio=ALL-UNNAMED",
    "--add-opens",
    "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports",
    "java.base/jdk.internal.misc=ALL-UNNAMED",
];

/// Compiles the generator project's classes into `work`; the classpath, or None when
/// skipped.
fn compile(work: &Path) -> Option<String> {
    if !(have("java") && have("javac") && have("mvn")) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI: Java 17 (javac) and Maven are needed: scripts/test installs them"
        );
        eprintln!("skipped: install Java 17 and Maven to check the writer with HBase's reader");
        return None;
    }
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
        "mvn could not give tests/hbase-hfile-gen's classpath offline (scripts/gen-hbase-fixtures fetches it):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let jars = std::fs::read_to_string(&cp_file).expect("classpath file");
    let classes = work.join("classes");
    std::fs::create_dir_all(&classes).expect("classes dir");
    let src = project().join("src/main/java/shoal/hfilegen");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&src)
        .expect("generator sources")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    sources.sort();
    let out = Command::new("javac")
        .args(["-nowarn", "-XDsuppressNotes", "-d"])
        .arg(&classes)
        .arg("-cp")
        .arg(jars.trim())
        .args(&sources)
        .output()
        .expect("run javac");
    assert!(
        out.status.success(),
        "javac failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(format!("{}:{}", classes.display(), jars.trim()))
}

#[test]
fn hbase_reads_what_the_writer_wrote() {
    let work = tempfile::tempdir().expect("temp dir");
    let Some(cp) = compile(work.path()) else {
        return;
    };
    let small = |codec| HFileWriterOptions {
        block_size: 2048,
        index_block_max_size: 512,
        index_min_entries: 4,
        compression: codec,
        ..HFileWriterOptions::default()
    };
    let fixture = fixture_cells();
    let many = generated(60_000);
    let files: Vec<(&str, &[HCell], HFileWriterOptions)> = vec![
        ("fixture-none", &fixture, small(Compression::None)),
        ("fixture-gz", &fixture, small(Compression::Gz)),
        ("fixture-snappy", &fixture, small(Compression::Snappy)),
        (
            "many-4-levels",
            &many,
            HFileWriterOptions {
                block_size: 256,
                index_block_max_size: 1024,
                ..HFileWriterOptions::default()
            },
        ),
        (
            "many-default-gz",
            &many,
            HFileWriterOptions {
                compression: Compression::Gz,
                ..HFileWriterOptions::default()
            },
        ),
        ("empty", &[], HFileWriterOptions::default()),
    ];
    let mut paths = Vec::new();
    for (name, cells, options) in &files {
        let (bytes, s) = write_all(cells, options.clone());
        eprintln!(
            "{name}: {} cells, {} blocks, {} index levels",
            s.cells, s.data_blocks, s.index_levels
        );
        let path = work.path().join(format!("{name}.hfile"));
        std::fs::write(&path, bytes).expect("write hfile");
        paths.push(path);
    }
    let tmp = work.path().join("java-tmp");
    std::fs::create_dir_all(&tmp).expect("java tmp");
    let out = Command::new("java")
        .args(JVM_OPTS)
        .arg(format!("-Djava.io.tmpdir={}", tmp.display()))
        .arg("-cp")
        .arg(&cp)
        .arg("shoal.hfilegen.ReadHFile")
        .args(&paths)
        .output()
        .expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "HBase's reader refused a file:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for ((name, cells, _), path) in files.iter().zip(&paths) {
        let dump = std::fs::read_to_string(path.with_extension("hfile.hbase.cells"))
            .expect("HBase's dump");
        let got: Vec<&str> = dump.lines().collect();
        let want: Vec<String> = cells.iter().map(cell_line).collect();
        assert_eq!(got.len(), want.len(), "{name}: cell count");
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "{name}: cell {i}:\n  HBase read {}\n  written    {}",
                got[i], want[i]
            );
        }
    }
}
