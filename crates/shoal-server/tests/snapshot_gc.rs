//! Garbage collection that knows about snapshots, as a property: random
//! sequences of writes, deletes, flushes, compactions, snapshots, clones,
//! drops, restores, snapshot deletes and GC runs (grace zero) against a
//! model. After every GC run: every file a live table's regions read and
//! every file a snapshot record names exists; every other data file is
//! gone; every snapshot record in the bucket belongs to a catalog entry,
//! and a deleted entry stays only while a table holds it. Every table
//! reads what the model says, and so does every clone.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::Bytes;
use proptest::prelude::*;
use shoal_server::catalog::FamilyPatch;
use shoal_server::{Host, ServerConfig};
use shoal_storage::manifest::GcOptions;
use shoal_storage::region::{RowMutation, RowOp, Scan};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Rows = BTreeMap<String, String>;

#[derive(Debug, Clone)]
enum Op {
    Create,
    Put(usize, u8, u8),
    Delete(usize, u8),
    Flush(usize),
    Compact(usize),
    Snapshot(usize, u8),
    Clone(u8),
    Restore(u8),
    Drop(usize),
    DeleteSnapshot(u8),
    Gc,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::Create),
        6 => (any::<usize>(), 0u8..24, any::<u8>()).prop_map(|(t, r, v)| Op::Put(t, r, v)),
        2 => (any::<usize>(), 0u8..24).prop_map(|(t, r)| Op::Delete(t, r)),
        2 => any::<usize>().prop_map(Op::Flush),
        1 => any::<usize>().prop_map(Op::Compact),
        2 => (any::<usize>(), 0u8..3).prop_map(|(t, s)| Op::Snapshot(t, s)),
        1 => (0u8..3).prop_map(Op::Clone),
        1 => (0u8..3).prop_map(Op::Restore),
        1 => any::<usize>().prop_map(Op::Drop),
        1 => (0u8..3).prop_map(Op::DeleteSnapshot),
        2 => Just(Op::Gc),
    ]
}

struct World {
    host: Host,
    objects: std::path::PathBuf,
    tables: BTreeMap<String, Rows>,
    snapshots: BTreeMap<String, (String, Rows)>,
    next_table: u32,
    /// Timestamps of writes, one per write: a delete and a later put of
    /// the same row in one millisecond would share one (HBase masks such
    /// a put; the model keeps to distinct stamps).
    stamp: i64,
}

fn config(dir: &Path) -> ServerConfig {
    let mut c = ServerConfig::default();
    c.server.data_dir = dir.to_path_buf();
    c.cache.l2_capacity = shoal_server::config::ByteSize(64 << 20);
    c.cache.l1_data = shoal_server::config::ByteSize(4 << 20);
    // No background compaction racing a zero-grace GC: compactions run
    // when the sequence asks.
    c.regions.compaction_trigger_files = 1000;
    c
}

fn pick(names: &BTreeMap<String, Rows>, i: usize) -> Option<String> {
    (!names.is_empty()).then(|| names.keys().nth(i % names.len()).unwrap().clone())
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

fn sst_files(objects: &Path) -> BTreeSet<String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else if p.extension().is_some_and(|x| x == "sst") {
                out.insert(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(objects, objects, &mut out);
    out
}

impl World {
    async fn create(&mut self) {
        let name = format!("t{}", self.next_table);
        self.next_table += 1;
        let cf = FamilyPatch {
            name: "cf".into(),
            ..FamilyPatch::default()
        };
        self.host
            .create_table(&name, vec![cf], vec![Bytes::from_static(b"r12")])
            .await
            .unwrap();
        self.tables.insert(name, Rows::new());
    }

    async fn apply(&mut self, op: &Op) {
        let h = self.host.clone();
        match op {
            Op::Create => self.create().await,
            Op::Put(t, r, v) => {
                let Some(t) = pick(&self.tables, *t) else {
                    return;
                };
                let (row, value) = (format!("r{r:02}"), format!("v{v}"));
                self.stamp += 1;
                let m = RowMutation::new(row.clone()).put_at("cf", "q", self.stamp, value.clone());
                h.mutate(&t, m).await.unwrap();
                self.tables.get_mut(&t).unwrap().insert(row, value);
            }
            Op::Delete(t, r) => {
                let Some(t) = pick(&self.tables, *t) else {
                    return;
                };
                let row = format!("r{r:02}");
                self.stamp += 1;
                let m = RowMutation {
                    row: Bytes::from(row.clone()),
                    ops: vec![RowOp::DeleteRow {
                        timestamp: Some(self.stamp),
                    }],
                };
                h.mutate(&t, m).await.unwrap();
                self.tables.get_mut(&t).unwrap().remove(&row);
            }
            Op::Flush(t) => {
                let Some(t) = pick(&self.tables, *t) else {
                    return;
                };
                h.flush_table(&t).await.unwrap();
            }
            Op::Compact(t) => {
                let Some(t) = pick(&self.tables, *t) else {
                    return;
                };
                h.compact_table(&t, true).await.unwrap();
            }
            Op::Snapshot(t, s) => {
                let Some(t) = pick(&self.tables, *t) else {
                    return;
                };
                let name = format!("s{s}");
                let r = h.take_snapshot(&t, &name).await;
                if self.snapshots.contains_key(&name) {
                    assert!(r.is_err(), "a second snapshot named {name}");
                } else {
                    r.unwrap();
                    self.snapshots
                        .insert(name, (t.clone(), self.tables[&t].clone()));
                }
            }
            Op::Clone(s) => {
                let name = format!("s{s}");
                let target = format!("t{}", self.next_table);
                let r = h.clone_snapshot(&name, &target).await;
                match self.snapshots.get(&name) {
                    None => assert!(r.is_err()),
                    Some((_, snap)) => {
                        r.unwrap();
                        self.next_table += 1;
                        self.tables.insert(target, snap.clone());
                    }
                }
            }
            Op::Restore(s) => {
                let name = format!("s{s}");
                let Some((table, snap)) = self.snapshots.get(&name).cloned() else {
                    assert!(h.restore_snapshot(&name).await.is_err());
                    return;
                };
                if self.tables.contains_key(&table) {
                    h.disable_table(&table).await.unwrap();
                    h.restore_snapshot(&name).await.unwrap();
                    h.enable_table(&table).await.unwrap();
                } else {
                    // The table is gone: restore creates it (as HBase).
                    h.restore_snapshot(&name).await.unwrap();
                }
                self.tables.insert(table, snap);
            }
            Op::Drop(t) => {
                let Some(t) = pick(&self.tables, *t) else {
                    return;
                };
                h.disable_table(&t).await.unwrap();
                h.drop_table(&t).await.unwrap();
                self.tables.remove(&t);
            }
            Op::DeleteSnapshot(s) => {
                let name = format!("s{s}");
                let r = h.delete_snapshot(&name).await;
                assert_eq!(r.is_ok(), self.snapshots.remove(&name).is_some());
            }
            Op::Gc => {
                let options = GcOptions {
                    grace: std::time::Duration::ZERO,
                    now: std::time::SystemTime::now(),
                };
                h.collect_garbage(&options).await;
                self.check_objects().await;
            }
        }
    }

    /// The files live tables read and snapshots name exist; nothing else
    /// does; records match entries; deleted entries are held.
    async fn check_objects(&self) {
        let present = sst_files(&self.objects);
        let mut needed = BTreeSet::new();
        for t in self.host.list_tables().await {
            for r in &t.regions {
                let m =
                    shoal_storage::manifest::ManifestStore::new(self.host_bucket(), r.dir.clone())
                        .load_latest()
                        .await
                        .unwrap();
                for f in m.iter().flat_map(|m| m.files()) {
                    needed.insert(f.path.clone());
                }
            }
        }
        let live_files = needed.clone();
        let entries = self.host.snapshot_entries().await;
        let tables = self.host.list_tables().await;
        for e in &entries {
            if e.deleted {
                assert!(
                    tables.iter().any(|t| t.holds.contains(&e.id)),
                    "deleted snapshot {} is kept though no table holds it",
                    e.name
                );
            }
            let record =
                shoal_server::snapshots::SnapshotRecord::read(&self.host_bucket(), &e.id, &e.name)
                    .await
                    .unwrap();
            for f in record.files() {
                needed.insert(f.path.clone());
            }
        }
        let records: BTreeSet<String> = sst_and_records(&self.objects);
        let ids: BTreeSet<String> = entries.iter().map(|e| e.id.clone()).collect();
        assert_eq!(
            records, ids,
            "snapshot records in the bucket vs catalog entries"
        );
        for p in &needed {
            assert!(
                present.contains(p),
                "needed file {p} is missing (live: {})",
                live_files.contains(p)
            );
        }
        for p in &present {
            assert!(
                needed.contains(p),
                "file {p} is kept though nothing needs it"
            );
        }
        for (t, want) in &self.tables {
            assert_eq!(&rows(&self.host, t).await, want, "table {t}");
        }
    }

    fn host_bucket(&self) -> shoal_storage::object::Bucket {
        self.host.bucket().clone()
    }
}

/// Ids of the snapshot records under `snapshots/`.
fn sst_and_records(objects: &Path) -> BTreeSet<String> {
    std::fs::read_dir(objects.join("snapshots"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("snapshot.json").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

fn run(ops: Vec<Op>) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(config(dir.path())).await.unwrap();
        let mut world = World {
            host,
            objects: dir.path().join("objects"),
            tables: BTreeMap::new(),
            snapshots: BTreeMap::new(),
            next_table: 0,
            stamp: 1_000,
        };
        world.create().await;
        for op in &ops {
            world.apply(op).await;
        }
        world.apply(&Op::Gc).await;
        world.host.shutdown().await;
    });
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("SHOAL_GC_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn gc_keeps_exactly_what_tables_and_snapshots_need(ops in prop::collection::vec(op(), 10..60)) {
        run(ops);
    }
}
