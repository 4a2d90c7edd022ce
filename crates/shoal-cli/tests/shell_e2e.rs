//! The real `shoal` binary end to end: the shell's whole command list
//! against a running server, and bad input of every kind answered with a
//! clear error while the server stays up.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use support::{ServerProcess, shell};

#[test]
fn the_full_command_list_through_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&dir.path().join("data"), None);
    let script = r#"
create 't1', 'cf1', {NAME => 'cf2', VERSIONS => 3}, SPLITS => ['m']
list
exists 't1'
is_enabled 't1'
put 't1', 'row1', 'cf1:q', 'v1'
put 't1', 'row2', 'cf1:q', "bin\x00\xff"
put 't1', 'zed', 'cf2:a', 'old', 100
put 't1', 'zed', 'cf2:a', 'new', 200
get 't1', 'row1'
get 't1', 'zed', {COLUMN => 'cf2:a', VERSIONS => 3}
scan 't1'
scan 't1', {STARTROW => 'row2', LIMIT => 1}
scan 't1', {REVERSED => true}
count 't1'
incr 't1', 'c', 'cf1:n', 5
incr 't1', 'c', 'cf1:n'
get_counter 't1', 'c', 'cf1:n'
append 't1', 'row1', 'cf1:q', '+tail'
check_and_put 't1', 'row1', 'cf1:q', 'v1+tail', 'cf1:r', 'checked'
delete 't1', 'row1', 'cf1:r'
deleteall 't1', 'row2'
describe 't1'
alter 't1', {NAME => 'cf1', VERSIONS => 5}
alter 't1', NAME => 'cf3'
alter 't1', 'delete' => 'cf3'
flush 't1'
compact 't1'
major_compact 't1'
split 't1', 'c'
status
truncate 't1'
count 't1'
disable 't1'
is_disabled 't1'
enable 't1'
disable 't1'
drop 't1'
list
help
"#;
    let (code, out, err) = shell(server.grpc, &[], script);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.is_empty(), "{err}");
    for expected in [
        "Created table t1 with 2 region(s)",
        "Table t1 does exist",
        "column=cf1:q, timestamp=",
        "value=bin\\x00\\xFF",
        "timestamp=200, value=new",
        "timestamp=100, value=old",
        "COUNTER VALUE = 6",
        "CURRENT VALUE = v1+tail",
        "COLUMN FAMILIES DESCRIPTION",
        "{NAME => 'cf2', VERSIONS => '3'",
        "Table t1 altered",
        "2 new region(s)",
        "table t1 truncated",
        "table t1 disabled",
        "table t1 dropped",
        "TABLE\n0 row(s)",
        "Took ",
        "major_compact",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
}

/// The row keys a shell scan printed, in order (the first word of each
/// `column=` line).
fn scanned_rows(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.contains("column="))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn scans_list_rows_in_order_and_reversed_scans_in_reverse() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&dir.path().join("data"), None);
    let setup = "create 'o', 'cf', SPLITS => ['h']\n\
                 put 'o', 'm', 'cf:q', '2'\n\
                 put 'o', 'a', 'cf:q', '1'\n\
                 put 'o', 'z', 'cf:q', '3'\n";
    let (code, _, err) = shell(server.grpc, &[], setup);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = shell(server.grpc, &[], "scan 'o'\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(scanned_rows(&out), ["a", "m", "z"], "{out}");
    let (code, out, err) = shell(server.grpc, &[], "scan 'o', {REVERSED => true}\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(scanned_rows(&out), ["z", "m", "a"], "{out}");
    let (code, out, err) = shell(
        server.grpc,
        &[],
        "scan 'o', {REVERSED => true, STARTROW => 'n', LIMIT => 2}\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(scanned_rows(&out), ["m", "a"], "{out}");
    // FILTER, in HBase's filter language, across both regions.
    let (code, out, err) = shell(
        server.grpc,
        &[],
        "scan 'o', {FILTER => \"ValueFilter(>=, 'binary:2')\"}\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(scanned_rows(&out), ["m", "z"], "{out}");
    // WHILE ends the scan at the first row it rejects, regions and all.
    let (code, out, err) = shell(
        server.grpc,
        &[],
        "scan 'o', {FILTER => \"WHILE RowFilter(<, 'binary:n')\"}\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(scanned_rows(&out), ["a", "m"], "{out}");
    let (code, _, err) = shell(
        server.grpc,
        &[],
        "scan 'o', {FILTER => \"FuzzyRowFilter('x')\"}\n",
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("filter FuzzyRowFilter is not supported"),
        "{err}"
    );
}

#[test]
fn bad_input_gets_clear_errors_and_the_server_stays_up() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = ServerProcess::start(&dir.path().join("data"), None);
    let cases: &[(&str, &str)] = &[
        ("bogus 't'", "Unknown command 'bogus'"),
        ("put 't1', 'r'", "wrong arguments for 'put'"),
        ("put 't1', 'r', 'nocolon', 'v'", "not a column"),
        ("get 'missing', 'r'", "does not exist"),
        ("create 'bad name', 'cf'", "table name"),
        ("create 't', 'bad family!'", "family name"),
        ("create 't', {NAME => 'cf', VERSIONS => 0}", "VERSIONS"),
        ("create 't', {NAME => 'cf', COLOR => 'red'}", "COLOR"),
        ("scan 't', {LIMIT 10}", "syntax error"),
        ("put 't1', 'r1", "unterminated"),
        ("create 'ok', 'cf'; create 'ok', 'cf'", "already exists"),
        ("put 'ok', 'r', 'nope:q', 'v'", "no column family"),
        ("put 'ok', '', 'cf:q', 'v'", "empty"),
        ("drop 'ok'", "disable it first"),
        ("split 'ok'", "could be split"),
        ("split 'ok', ''", "must not be empty"),
        ("scan 'ok', {STARTROW => 'z', STOPROW => 'a'}", "after stop"),
        ("get 'ok', 'r', {TIMERANGE => [5, 1]}", "time_range"),
        ("alter 'ok', 'delete' => 'cf'", "no column family left"),
        ("enable 'ok'", "already enabled"),
    ];
    for (cmd, expected) in cases {
        let (code, out, err) = shell(server.grpc, &["-e", cmd], "");
        assert_eq!(code, 1, "{cmd}: exit code; stdout {out} stderr {err}");
        assert!(
            err.contains("ERROR:") && err.to_lowercase().contains(&expected.to_lowercase()),
            "{cmd}: expected an error mentioning {expected:?}, got stderr:\n{err}\nstdout:\n{out}"
        );
    }
    assert!(server.is_running(), "server died: {}", server.stderr());
    let (code, out, _) = shell(server.grpc, &["-e", "list"], "");
    assert_eq!(code, 0);
    assert!(out.contains("ok"));
    // A shell pointed at nothing says where it tried.
    let closed: std::net::SocketAddr = "127.0.0.1:9".parse().unwrap();
    let (code, _, err) = shell(closed, &["-e", "list"], "");
    assert_eq!(code, 1);
    assert!(err.contains("127.0.0.1:9"), "{err}");
}
