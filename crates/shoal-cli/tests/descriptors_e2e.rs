//! Open files through the real binary: `shoal serve` with default settings
//! (a 10 GiB L2 cache of 640 segments) starts and serves under a 1,024
//! open-files limit, soft and hard, and holds a bounded number of
//! descriptors; under a limit too small to work it stops at once with a
//! message saying what it needs.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use shoal_client::{Admin, Client, Get, RowMutation};
use std::process::Command;
use std::time::{Duration, Instant};
use support::ServerProcess;

fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

#[test]
fn a_default_server_starts_and_serves_under_1024_open_files() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with_open_files(&dir.path().join("data"), None, 1024);
    let pid = server.pid().unwrap();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    assert!(line.contains(" 1024 "), "{line}");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = Client::connect(&server.url()).await.unwrap();
        client
            .admin()
            .create_table("t", vec![Admin::family("cf")], vec![])
            .await
            .unwrap();
        let table = client.table("t");
        for i in 0..500 {
            table
                .mutate(RowMutation::new(format!("r{i:04}")).put("cf", "q", vec![b'v'; 4096]))
                .await
                .unwrap();
        }
        client.admin().flush("t").await.unwrap();
        for i in (0..500).step_by(7) {
            let row = table.get(Get::new(format!("r{i:04}"))).await.unwrap();
            assert_eq!(row.cells.len(), 1);
        }
    });
    let fds = open_descriptors(pid);
    eprintln!("descriptors held by a default server after writes, a flush and reads: {fds}");
    assert!(fds < 300, "{fds} descriptors");
    assert!(server.terminate().success());
}

#[test]
fn a_limit_too_small_to_work_is_one_clear_error_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = Command::new("sh")
        .args([
            "-c",
            "ulimit -n 64 && exec \"$0\" \"$@\"",
            support::shoal_bin(),
            "serve",
            "--grpc-addr",
            "127.0.0.1:0",
            "--http-addr",
            "127.0.0.1:0",
            "--thrift-addr",
            "127.0.0.1:0",
            "--rest-addr",
            "127.0.0.1:0",
            "--hbase-rpc-addr",
            "127.0.0.1:0",
            "--data-dir",
        ])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(start.elapsed() < Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: the open-files limit is 64"),
        "{stderr}"
    );
    assert!(last.contains("ulimit -n"), "{last}");
}
