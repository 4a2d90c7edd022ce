//! Point in time through the real binary: with the window on (and the WAL
//! in the bucket), the server takes its base snapshots by itself; rows are
//! written, overwritten and deleted in three rounds with an instant noted
//! after each; a kill -9 and a restart keep the WAL's history; then the
//! shell's `clone_at` (RFC 3339), `snapshot_at` (ms) and `restore_at`, and
//! the Rust client's `clone_at`, read exactly the rows of each instant.
//! `/metrics` shows what the window holds. A server with a local WAL and
//! the window on refuses to start with one line saying why.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use shoal_client::{Admin, Client, Scan};
use std::collections::BTreeMap;
use std::time::Duration;
use support::{ServerProcess, shell, shoal_bin, write_config};

const WINDOW: &str = "[wal]\nbackend = \"object\"\n[snapshots]\npoint_in_time_window = \"1h\"\npoint_in_time_base_every = \"1s\"\n";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn rows(c: &Client, table: &str) -> BTreeMap<String, String> {
    let all = c.table(table).scan_collect(Scan::new()).await.unwrap();
    all.into_iter()
        .map(|r| {
            let row = String::from_utf8(r.row.to_vec()).unwrap();
            (row, String::from_utf8(r.cells[0].value.to_vec()).unwrap())
        })
        .collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn rfc3339(ms: i64) -> String {
    let t = std::time::UNIX_EPOCH + Duration::from_millis(ms as u64);
    humantime::format_rfc3339_millis(t).to_string()
}

/// Writes `round` of rows (overwriting and deleting some of the last
/// round's), returns the instant after it with the rows then.
async fn round(c: &Client, round: u32) -> (i64, BTreeMap<String, String>) {
    let t = c.table("t");
    for i in 0..40 {
        if (i + round).is_multiple_of(7) {
            t.delete_row(format!("r{i:02}")).await.unwrap();
        } else {
            t.put(format!("r{i:02}"), "cf", "q", format!("v{round}-{i}"))
                .await
                .unwrap();
        }
    }
    let want = rows(c, "t").await;
    let at = now_ms();
    tokio::time::sleep(Duration::from_millis(5)).await;
    (at, want)
}

#[test]
fn clones_snapshots_and_restores_as_of_instants_across_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), WINDOW);
    let rt = runtime();
    let server = ServerProcess::start(&data, Some(&config));
    let noted = rt.block_on(async {
        let c = Client::connect(&server.url()).await.unwrap();
        c.admin()
            .create_table("t", vec![Admin::family("cf")], vec![b"r20".to_vec()])
            .await
            .unwrap();
        // The server's own checks take the first base within a second or so.
        let mut waited = 0;
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            match c.admin().snapshot_at("t", now_ms(), "probe").await {
                Ok(_) => break,
                Err(e) if waited < 50 => {
                    assert!(e.to_string().contains("no point-in-time base"), "{e}");
                    waited += 1;
                }
                Err(e) => panic!("no base after 10 s: {e}"),
            }
        }
        c.admin().delete_snapshot("probe").await.unwrap();
        let mut noted = Vec::new();
        for r in 0..3 {
            noted.push(round(&c, r).await);
            if r == 1 {
                c.admin().flush("t").await.unwrap();
            }
        }
        noted
    });
    server.kill9();
    let server = ServerProcess::start(&data, Some(&config));
    let (first, second, third) = (&noted[0], &noted[1], &noted[2]);
    let script = format!(
        "clone_at 't', '{}', 'c0'\nsnapshot_at 't', '{}', 's1'\nclone_snapshot 's1', 'c1'\nlist_snapshots\n",
        rfc3339(first.0),
        second.0
    );
    let (code, out, err) = shell(server.grpc, &[], &script);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Cloned t as of"), "{out}");
    assert!(out.contains("Took snapshot s1 of t as of"), "{out}");
    assert!(out.contains(" s1 t ("), "s1 is listed: {out}");
    assert!(!out.contains("@pitr"), "bases are not listed: {out}");
    rt.block_on(async {
        let c = Client::connect(&server.url()).await.unwrap();
        assert_eq!(&rows(&c, "c0").await, &first.1, "clone as of round 0");
        assert_eq!(&rows(&c, "c1").await, &second.1, "snapshot as of round 1");
        c.admin().clone_at("t", third.0, "c2").await.unwrap();
        assert_eq!(&rows(&c, "c2").await, &third.1, "clone as of round 2");
        assert_eq!(&rows(&c, "t").await, &third.1, "the table itself");
    });
    let script = format!(
        "disable 't'\nrestore_at 't', '{}'\nenable 't'\ncount 't'\n",
        rfc3339(first.0)
    );
    let (code, out, err) = shell(server.grpc, &[], &script);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Restored table t to"), "{out}");
    rt.block_on(async {
        let c = Client::connect(&server.url()).await.unwrap();
        assert_eq!(&rows(&c, "t").await, &first.1, "t restored to round 0");
        let e = c
            .admin()
            .clone_at("t", now_ms() + 3_600_000, "c9")
            .await
            .unwrap_err();
        assert!(e.to_string().contains("in the future"), "{e}");
    });
    let (status, metrics) = server.http_get("/metrics");
    assert_eq!(status, 200);
    let held = metrics
        .lines()
        .find(|l| l.starts_with("shoal_wal_history_objects "))
        .unwrap_or_else(|| panic!("no WAL history gauge in:\n{metrics}"));
    assert!(held.contains(' '), "{held}");
    assert!(metrics.contains("shoal_pitr_window_bytes "), "{metrics}");
}

#[test]
fn the_window_with_a_local_wal_refuses_to_start_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "[snapshots]\npoint_in_time_window = \"24h\"\n");
    let out = std::process::Command::new(shoal_bin())
        .args(["serve", "--config"])
        .arg(&config)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("wal.backend") && err.contains("point_in_time_window"),
        "{err}"
    );
}
