//! Snapshots through the real binary: snapshot → write more → clone → the
//! clone reads exactly the snapshot's rows; restore → the table is back;
//! drop the source → the clone still reads everything after a major
//! compaction; delete the snapshot and the clone → their objects are gone
//! and nothing else is; bad input is one clear error each, nothing changed;
//! a consistent cut under concurrent writers across every region; the
//! shell's commands; a restart keeps it all.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use shoal_client::{Admin, Client, Scan};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use support::{ServerProcess, shell, write_config};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Every row's value of `cf:q`.
async fn rows(c: &Client, table: &str) -> BTreeMap<String, String> {
    let all = c.table(table).scan_collect(Scan::new()).await.unwrap();
    let mut out = BTreeMap::new();
    for r in all {
        let row = String::from_utf8(r.row.to_vec()).unwrap();
        let v = r
            .cells
            .iter()
            .find(|c| &c.qualifier[..] == b"q")
            .map(|c| String::from_utf8(c.value.to_vec()).unwrap())
            .unwrap_or_default();
        out.insert(row, v);
    }
    out
}

/// Every object under `dir`, relative.
fn objects(dir: &Path) -> BTreeSet<String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.insert(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

/// Objects of table data (`data/…/*.sst`) and of snapshots.
fn data_objects(bucket: &Path) -> BTreeSet<String> {
    objects(bucket)
        .into_iter()
        .filter(|p| p.starts_with("snapshots/") || (p.starts_with("data/") && p.ends_with(".sst")))
        .collect()
}

async fn put_rows(c: &Client, table: &str, range: std::ops::Range<u32>, value: &str) {
    let t = c.table(table);
    for i in range {
        t.put(format!("r{i:03}"), "cf", "q", value).await.unwrap();
    }
}

#[test]
fn snapshot_clone_restore_drop_and_delete_keep_exactly_what_is_needed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), "");
    let rt = runtime();
    let server = ServerProcess::start(&data, Some(&config));
    let bucket = data.join("objects");
    let other_files = rt.block_on(async {
        let c = Client::connect(&server.url()).await.unwrap();
        let admin = c.admin();
        // A table nothing here touches: its files must all stay.
        admin
            .create_table("other", vec![Admin::family("cf")], vec![])
            .await
            .unwrap();
        put_rows(&c, "other", 0..50, "o").await;
        admin.flush("other").await.unwrap();
        let other_files = data_objects(&bucket);
        assert!(!other_files.is_empty());

        admin
            .create_table(
                "t",
                vec![Admin::family("cf")],
                vec![b"r100".to_vec(), b"r200".to_vec()],
            )
            .await
            .unwrap();
        put_rows(&c, "t", 0..300, "v1").await;
        admin.flush("t").await.unwrap();
        // Some rows only in the memstore at the cut.
        put_rows(&c, "t", 250..300, "v1b").await;
        let at_cut = rows(&c, "t").await;
        let s = admin.snapshot("t", "s1").await.unwrap();
        assert_eq!(
            (s.name.as_str(), s.table.as_str(), s.regions),
            ("s1", "t", 3)
        );
        assert!(s.written_bytes > 0, "the memstore cells at the cut");
        let listed = admin.list_snapshots().await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].name, "s1");
        let d = admin.describe_snapshot("s1").await.unwrap();
        assert_eq!((d.regions, d.files), (s.regions, s.files));

        // Writes after the cut are not in the snapshot.
        put_rows(&c, "t", 0..100, "v2").await;
        put_rows(&c, "t", 300..350, "v2").await;
        c.table("t").delete_row("r150").await.unwrap();
        let after = rows(&c, "t").await;
        assert_ne!(after, at_cut);

        let cloned = admin.clone_snapshot("s1", "c1").await.unwrap();
        assert_eq!(cloned.regions.len(), 3);
        assert_eq!(rows(&c, "c1").await, at_cut, "the clone reads the cut");
        assert_eq!(rows(&c, "t").await, after, "the source is untouched");

        // Bad input: one clear error each, nothing changed.
        let err = |e: shoal_client::ClientError| e.to_string();
        let e = err(admin.snapshot("t", "s1").await.unwrap_err());
        assert!(e.contains("snapshot \"s1\" already exists"), "{e}");
        let e = err(admin.snapshot("t", "bad name").await.unwrap_err());
        assert!(e.contains("not allowed"), "{e}");
        let e = err(admin.snapshot("nope", "s2").await.unwrap_err());
        assert!(e.contains("does not exist"), "{e}");
        let e = err(admin.clone_snapshot("s1", "t").await.unwrap_err());
        assert!(e.contains("already exists"), "{e}");
        let e = err(admin.clone_snapshot("nope", "c9").await.unwrap_err());
        assert!(e.contains("snapshot \"nope\" does not exist"), "{e}");
        let e = err(admin.restore_snapshot("s1").await.unwrap_err());
        assert!(e.contains("disable it first"), "{e}");
        let e = err(admin.delete_snapshot("nope").await.unwrap_err());
        assert!(e.contains("does not exist"), "{e}");
        assert_eq!(admin.list_snapshots().await.unwrap().len(), 1);
        assert_eq!(rows(&c, "t").await, after);

        // The clone writes its own files (copy on write).
        c.table("c1").put("r000", "cf", "q", "clone").await.unwrap();
        admin.flush("c1").await.unwrap();
        assert_eq!(rows(&c, "t").await["r000"], "v2");

        // Restore: the table is back at the cut.
        admin.disable("t").await.unwrap();
        admin.restore_snapshot("s1").await.unwrap();
        admin.enable("t").await.unwrap();
        assert_eq!(rows(&c, "t").await, at_cut, "restored");
        put_rows(&c, "t", 0..10, "v3").await;
        admin.flush("t").await.unwrap();
        other_files
    });
    // A restart keeps snapshots, clones and holds.
    server.terminate();
    let server = ServerProcess::start(&data, Some(&config));
    rt.block_on(async {
        let c = Client::connect(&server.url()).await.unwrap();
        let admin = c.admin();
        assert_eq!(admin.list_snapshots().await.unwrap().len(), 1);
        let mut want = rows(&c, "c1").await;
        assert_eq!(want["r000"], "clone");
        // Drop the source: the clone reads everything, also after its own
        // major compaction.
        admin.disable("t").await.unwrap();
        admin.drop_table("t").await.unwrap();
        admin.compact("c1", true).await.unwrap();
        assert_eq!(rows(&c, "c1").await, want);
        // Delete the snapshot: hidden, its files stay for the clone.
        admin.delete_snapshot("s1").await.unwrap();
        assert!(admin.list_snapshots().await.unwrap().is_empty());
        let e = admin
            .clone_snapshot("s1", "c2")
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
        assert_eq!(rows(&c, "c1").await, want);
        c.table("c1").put("r999", "cf", "q", "late").await.unwrap();
        want.insert("r999".into(), "late".into());
        assert_eq!(rows(&c, "c1").await, want);
        // Drop the clone: nothing of t, c1 or s1 is left; all of `other` is.
        admin.disable("c1").await.unwrap();
        admin.drop_table("c1").await.unwrap();
        let left = data_objects(&bucket);
        assert_eq!(left, other_files, "only the untouched table's files remain");
        assert_eq!(rows(&c, "other").await.len(), 50);
    });
}

/// Writers on every region, each writing its own increasing sequence; in
/// every snapshot taken meanwhile, if a write is present every write
/// acknowledged before it began is present.
#[test]
fn every_snapshot_is_one_consistent_cut_across_all_regions() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), "");
    let rt = runtime();
    let server = ServerProcess::start(&data, Some(&config));
    rt.block_on(async {
        let c = Client::connect(&server.url()).await.unwrap();
        let admin = c.admin();
        let splits: Vec<Vec<u8>> = (1..8).map(|i| format!("w{i}").into_bytes()).collect();
        admin
            .create_table("t", vec![Admin::family("cf")], splits)
            .await
            .unwrap();
        // One global order: a writer takes the next number, writes row
        // `w<region>-<number>`, and records it acknowledged. Writers run
        // on every region at once.
        let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let acked: Arc<std::sync::Mutex<Vec<(u64, std::time::Instant, std::time::Instant)>>> =
            Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let mut writers = Vec::new();
        for w in 0..6u64 {
            let (t, next, acked, stop) = (c.table("t"), next.clone(), acked.clone(), stop.clone());
            writers.push(tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    let began = std::time::Instant::now();
                    let row = format!("w{}-{n:08}", (n * 7 + w) % 8);
                    t.put(row, "cf", "q", "x").await.unwrap();
                    acked
                        .lock()
                        .unwrap()
                        .push((n, began, std::time::Instant::now()));
                }
            }));
        }
        let mut taken = Vec::new();
        for i in 0..5 {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            if i == 2 {
                admin.flush("t").await.unwrap();
            }
            let name = format!("cut{i}");
            admin.snapshot("t", &name).await.unwrap();
            taken.push(name);
        }
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            w.await.unwrap();
        }
        let acked = acked.lock().unwrap().clone();
        assert!(acked.len() > 200, "{} writes", acked.len());
        for (i, name) in taken.iter().enumerate() {
            let clone = format!("c{i}");
            admin.clone_snapshot(name, &clone).await.unwrap();
            let present: BTreeSet<u64> = rows(&c, &clone)
                .await
                .keys()
                .map(|r| r[3..].parse::<u64>().unwrap())
                .collect();
            assert!(!present.is_empty(), "{name} holds writes");
            // Every write acknowledged before some present write began is
            // present too.
            let earliest_began_present = acked
                .iter()
                .filter(|(n, _, _)| present.contains(n))
                .map(|(_, began, _)| *began)
                .max()
                .unwrap();
            let missing: Vec<u64> = acked
                .iter()
                .filter(|(n, _, done)| *done < earliest_began_present && !present.contains(n))
                .map(|(n, _, _)| *n)
                .collect();
            assert!(
                missing.is_empty(),
                "{name}: writes acknowledged before a present write began are missing: {:?}",
                &missing[..missing.len().min(10)]
            );
        }
    });
}

#[test]
fn the_shell_takes_lists_clones_restores_and_deletes_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), "");
    let server = ServerProcess::start(&data, Some(&config));
    let script = "create 't1', 'cf'\nput 't1', 'a', 'cf:q', '1'\nsnapshot 't1', 'snap'\nput 't1', 'b', 'cf:q', '2'\nlist_snapshots\ndescribe_snapshot 'snap'\nclone_snapshot 'snap', 't2'\ncount 't2'\ndisable 't1'\nrestore_snapshot 'snap'\nenable 't1'\ncount 't1'\ndelete_snapshot 'snap'\nlist_snapshots\n";
    let (code, out, err) = shell(server.grpc, &[], script);
    assert_eq!(code, 0, "{out}\n{err}");
    for want in [
        "Took snapshot snap of t1: 1 region(s)",
        " snap t1 (",
        "Snapshot snap of table t1",
        "Cloned snapshot into table t2 with 1 region(s)",
        "Restored table t1 (1 region(s)); enable it to serve",
        "deleted snapshot snap",
        "0 row(s)",
    ] {
        assert!(out.contains(want), "{want:?} not in:\n{out}");
    }
    // count prints the row count of t2 and of the restored t1: 1 each.
    assert_eq!(out.matches("1 row(s)").count(), 3, "{out}");
}

/// kill -9 while a snapshot is taken, then while a clone is made: after a
/// restart each exists whole or not at all, the table has every
/// acknowledged row, and the same name can be used again if it is absent.
#[test]
fn kill_9_during_a_snapshot_or_a_clone_leaves_it_whole_or_absent() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), "");
    let rt = runtime();
    let splits: Vec<Vec<u8>> = (1..32)
        .map(|i| format!("r{:03}", i * 10).into_bytes())
        .collect();
    let server = ServerProcess::start(&data, Some(&config));
    let want = rt.block_on(async {
        let c = Client::connect(&server.url()).await.unwrap();
        c.admin()
            .create_table("t", vec![Admin::family("cf")], splits)
            .await
            .unwrap();
        put_rows(&c, "t", 0..320, "v").await;
        let want = rows(&c, "t").await;
        let admin = c.admin();
        tokio::spawn(async move { admin.snapshot("t", "s1").await });
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        want
    });
    server.kill9();
    let server = ServerProcess::start(&data, Some(&config));
    let server = rt.block_on(async {
        let c = Client::connect(&server.url()).await.unwrap();
        assert_eq!(rows(&c, "t").await, want, "the table after the kill");
        let listed = c.admin().list_snapshots().await.unwrap();
        if listed.is_empty() {
            c.admin().snapshot("t", "s1").await.unwrap();
        }
        let admin = c.admin();
        tokio::spawn(async move { admin.clone_snapshot("s1", "c1").await });
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        server
    });
    server.kill9();
    let server = ServerProcess::start(&data, Some(&config));
    rt.block_on(async {
        let c = Client::connect(&server.url()).await.unwrap();
        let tables: Vec<String> = c
            .admin()
            .list()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        if !tables.contains(&"c1".to_string()) {
            c.admin().clone_snapshot("s1", "c1").await.unwrap();
        }
        assert_eq!(rows(&c, "c1").await, want, "the clone after the kill");
        assert_eq!(rows(&c, "t").await, want);
    });
}
