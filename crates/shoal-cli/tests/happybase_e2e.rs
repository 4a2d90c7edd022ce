//! happybase 1.3.0's own test suite (`tests/test_api.py` from its source
//! package on PyPI, unmodified) against `shoal serve`'s Thrift gateway, in
//! all four combinations of transport (buffered, framed) and protocol
//! (binary, compact). `scripts/test` installs happybase and pytest and
//! points `SHOAL_HAPPYBASE_DIR` at the unpacked source package and
//! `SHOAL_PYTHON` at the Python that has them; `tests/happybase/conftest.py`
//! holds the two shims the 1.3.0 suite needs to run outside happybase's
//! own CI (see the file).

mod support;

use std::path::PathBuf;
use std::process::Command;
use support::ServerProcess;

/// The unpacked happybase source package and the Python to run it with;
/// None (the test is skipped, with a note) outside CI when not installed.
fn happybase() -> Option<(PathBuf, String)> {
    let dir = std::env::var_os("SHOAL_HAPPYBASE_DIR").map(PathBuf::from);
    let python = std::env::var("SHOAL_PYTHON").ok();
    match (dir, python) {
        (Some(d), Some(p)) if d.join("tests/test_api.py").is_file() => Some((d, p)),
        _ if std::env::var_os("CI").is_some() => {
            panic!("CI: happybase is not installed (scripts/test installs it)")
        }
        _ => {
            eprintln!(
                "skipped: set SHOAL_HAPPYBASE_DIR and SHOAL_PYTHON (scripts/test does) to run \
                 happybase's own tests"
            );
            None
        }
    }
}

#[test]
fn happybase_own_test_suite_passes_in_every_transport_and_protocol() {
    let Some((source, python)) = happybase() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&dir.path().join("data"), None);
    let thrift = server.thrift.expect("the gateway is on by default");
    // The suite, unmodified, beside our conftest.py.
    let suite = dir.path().join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::copy(source.join("tests/test_api.py"), suite.join("test_api.py")).unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/happybase/conftest.py"),
        suite.join("conftest.py"),
    )
    .unwrap();
    for (transport, protocol) in [
        ("buffered", "binary"),
        ("framed", "binary"),
        ("buffered", "compact"),
        ("framed", "compact"),
    ] {
        let out = Command::new(&python)
            .args([
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "test_api.py",
            ])
            .current_dir(&suite)
            .env("HAPPYBASE_HOST", thrift.ip().to_string())
            .env("HAPPYBASE_PORT", thrift.port().to_string())
            .env("HAPPYBASE_TRANSPORT", transport)
            .env("HAPPYBASE_PROTOCOL", protocol)
            .output()
            .expect("run pytest");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{transport}/{protocol}: happybase's tests failed:\n{stdout}\n{}\nserver stderr:\n{}",
            String::from_utf8_lossy(&out.stderr),
            server.stderr()
        );
        // Every test ran and passed: none skipped, none deselected.
        let summary = stdout.lines().last().unwrap_or_default();
        assert!(
            summary.contains(" passed")
                && !summary.contains("skipped")
                && !summary.contains("failed"),
            "{transport}/{protocol}: {summary}"
        );
        let passed: usize = summary
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(
            passed >= 25,
            "{transport}/{protocol}: only {passed} tests ran"
        );
    }
}
