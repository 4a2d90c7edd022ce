//! Point-in-time restore against a model: random writes, deletes,
//! flushes, major compactions, splits, restarts and new base snapshots on
//! one table with the point-in-time window on; after each step the instant
//! is noted with what the model says was acknowledged by then (the next
//! step starts strictly later). At the end, clones of the table as of
//! random noted instants read exactly the model's rows then, and a restore
//! to one instant brings the table back to it.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::Bytes;
use proptest::prelude::*;
use shoal_server::catalog::FamilyPatch;
use shoal_server::{Host, ServerConfig};
use shoal_storage::region::{RowMutation, RowOp, Scan};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

type Rows = BTreeMap<String, String>;

const TABLE: &str = "t";

#[derive(Debug, Clone)]
enum Op {
    Put(u8, u8),
    Delete(u8),
    Flush,
    Compact,
    Split(u8),
    Restart,
    Base,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (0u8..40, any::<u8>()).prop_map(|(r, v)| Op::Put(r, v)),
        3 => (0u8..40).prop_map(Op::Delete),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => (1u8..39).prop_map(Op::Split),
        1 => Just(Op::Restart),
        1 => Just(Op::Base),
    ]
}

fn config(dir: &Path) -> ServerConfig {
    let text = format!(
        "[server]\ndata_dir = {:?}\n[wal]\nbackend = \"object\"\n[cache]\nl2_capacity = \"64MiB\"\nl1_data = \"4MiB\"\n[snapshots]\npoint_in_time_window = \"1h\"\npoint_in_time_base_every = \"1s\"\n",
        dir.display().to_string()
    );
    ServerConfig::from_toml(&text).unwrap()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

async fn rows(host: &Host, table: &str) -> Rows {
    let mut s = host.scan(table, Scan::all()).unwrap();
    let mut out = Rows::new();
    while let Some(r) = s.next().await.unwrap() {
        let row = String::from_utf8(r.row.to_vec()).unwrap();
        out.insert(row, String::from_utf8(r.cells[0].value.to_vec()).unwrap());
    }
    out
}

struct World {
    dir: std::path::PathBuf,
    host: Host,
    model: Rows,
    /// (instant, the model's rows then), one per step.
    noted: Vec<(i64, Rows)>,
    stamp: i64,
}

impl World {
    async fn apply(&mut self, op: &Op) {
        let h = self.host.clone();
        match op {
            Op::Put(r, v) => {
                let (row, value) = (format!("r{r:02}"), format!("v{v}"));
                self.stamp += 1;
                let m = RowMutation::new(row.clone()).put_at("cf", "q", self.stamp, value.clone());
                h.mutate(TABLE, m).await.unwrap();
                self.model.insert(row, value);
            }
            Op::Delete(r) => {
                let row = format!("r{r:02}");
                self.stamp += 1;
                let m = RowMutation {
                    row: Bytes::from(row.clone()),
                    ops: vec![RowOp::DeleteRow {
                        timestamp: Some(self.stamp),
                    }],
                };
                h.mutate(TABLE, m).await.unwrap();
                self.model.remove(&row);
            }
            Op::Flush => {
                h.flush_table(TABLE).await.unwrap();
            }
            Op::Compact => {
                h.compact_table(TABLE, true).await.unwrap();
            }
            Op::Split(r) => {
                // A region still reading its parent's files does not split
                // again: that refusal is fine here.
                let _ = h.split(TABLE, Some(Bytes::from(format!("r{r:02}")))).await;
            }
            Op::Restart => {
                h.shutdown().await;
                self.host = Host::open(config(&self.dir)).await.unwrap();
            }
            Op::Base => {
                tokio::time::sleep(Duration::from_millis(1_050)).await;
                h.pitr_housekeeping().await;
            }
        }
        // Acknowledged by now; the next step starts after this instant.
        let at = now_ms();
        self.noted.push((at, self.model.clone()));
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
}

fn run(ops: Vec<Op>, picks: Vec<usize>) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(config(dir.path())).await.unwrap();
        let cf = FamilyPatch {
            name: "cf".into(),
            ..FamilyPatch::default()
        };
        host.create_table(TABLE, vec![cf], vec![Bytes::from_static(b"r20")])
            .await
            .unwrap();
        host.pitr_housekeeping().await; // The first base.
        let mut world = World {
            dir: dir.path().to_path_buf(),
            host,
            model: Rows::new(),
            noted: Vec::new(),
            stamp: 1_000,
        };
        world.apply(&Op::Flush).await;
        for op in &ops {
            world.apply(op).await;
        }
        let host = world.host.clone();
        for (n, pick) in picks.iter().enumerate() {
            let (at, want) = world.noted[pick % world.noted.len()].clone();
            let target = format!("c{n}");
            host.clone_at(TABLE, at, &target).await.unwrap();
            assert_eq!(
                rows(&host, &target).await,
                want,
                "clone of {TABLE} as of {at} (step {} of {})",
                pick % world.noted.len(),
                world.noted.len()
            );
        }
        // Restore to the first pick's instant.
        if let Some(pick) = picks.first() {
            let (at, want) = world.noted[pick % world.noted.len()].clone();
            host.disable_table(TABLE).await.unwrap();
            host.restore_at(TABLE, at).await.unwrap();
            host.enable_table(TABLE).await.unwrap();
            assert_eq!(rows(&host, TABLE).await, want, "{TABLE} restored to {at}");
        }
        host.shutdown().await;
    });
}

fn cases() -> u32 {
    std::env::var("SHOAL_PITR_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        max_shrink_iters: 50,
        ..ProptestConfig::default()
    })]

    #[test]
    fn clones_at_any_noted_instant_read_what_was_acknowledged_by_then(
        ops in proptest::collection::vec(op(), 10..40),
        picks in proptest::collection::vec(any::<usize>(), 3..6),
    ) {
        run(ops, picks);
    }
}

/// Bad input: each one a clear error, nothing changed.
#[test]
fn instants_outside_the_window_and_a_server_without_it_are_refused() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(config(dir.path())).await.unwrap();
        let cf = FamilyPatch {
            name: "cf".into(),
            ..FamilyPatch::default()
        };
        host.create_table(TABLE, vec![cf.clone()], vec![])
            .await
            .unwrap();
        let now = now_ms();
        // Before any base.
        let e = host.clone_at(TABLE, now, "c").await.unwrap_err();
        assert!(e.to_string().contains("no point-in-time base"), "{e}");
        host.pitr_housekeeping().await;
        let e = host.clone_at(TABLE, now + 60_000, "c").await.unwrap_err();
        assert!(e.to_string().contains("in the future"), "{e}");
        let e = host
            .clone_at(TABLE, now - 7_200_000, "c")
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("outside the point-in-time window"),
            "{e}"
        );
        let e = host.clone_at("nope", now_ms(), "c").await.unwrap_err();
        assert!(e.to_string().contains("did not exist"), "{e}");
        let e = host.clone_at(TABLE, now_ms(), TABLE).await.unwrap_err();
        assert!(e.to_string().contains("exists"), "{e}");
        let e = host.restore_at(TABLE, now_ms()).await.unwrap_err();
        assert!(e.to_string().to_lowercase().contains("enabled"), "{e}");
        let e = host.snapshot_at(TABLE, now_ms(), "@bad").await.unwrap_err();
        assert!(e.to_string().contains("not allowed"), "{e}");
        assert!(host.list_snapshots().await.is_empty(), "bases are hidden");
        assert_eq!(host.list_tables().await.len(), 1, "nothing was created");
        host.shutdown().await;

        // A server without the window.
        let dir = tempfile::tempdir().unwrap();
        let mut c = ServerConfig::default();
        c.server.data_dir = dir.path().to_path_buf();
        let host = Host::open(c).await.unwrap();
        host.create_table(TABLE, vec![cf], vec![]).await.unwrap();
        let e = host.clone_at(TABLE, now_ms(), "c").await.unwrap_err();
        assert!(e.to_string().contains("point_in_time_window"), "{e}");
        host.shutdown().await;
    });
}
