//! `shoal snapshot export` and `shoal snapshot import` through the real
//! binary: server A's multi-region table (a split region reading its
//! parent's files, cells only in the memstore at the cut, two families) →
//! snapshot → export to a directory → import into server B → clone: every
//! cell equals A's at the snapshot. An export killed with -9 midway (slowed
//! by a bandwidth limit) finishes when run again, every object's CRC32C as
//! recorded; an import killed midway too. A corrupted byte in an exported
//! file is refused naming the file, with nothing imported. A non-empty
//! target, one that cannot be written and an unknown snapshot are one
//! clear error each, nothing written. With auth on, registering needs ADMIN
//! globally and is audited. An S3 bucket (moto_server on loopback) as the export target,
//! skipped with a note when moto is absent (failing under CI, as
//! `object_store_e2e.rs` does).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

#[allow(dead_code)] // the S3 test uses part of it
#[path = "../../shoal-storage/tests/support/moto.rs"]
mod moto;

use shoal_client::{Admin, Client, RowMutation, Scan};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{ServerProcess, shoal_bin, write_config};

/// One cell: row, family, qualifier, timestamp, value.
type CellKey = (Vec<u8>, Vec<u8>, Vec<u8>, i64, Vec<u8>);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `shoal ARGS` with `env`: (success, stdout + stderr).
fn shoal(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new(shoal_bin())
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Every visible cell of `table`, in order.
async fn cells(c: &Client, table: &str) -> Vec<CellKey> {
    let rows = c.table(table).scan_collect(Scan::new()).await.unwrap();
    rows.into_iter()
        .flat_map(|r| {
            let row = r.row.to_vec();
            r.cells.into_iter().map(move |c| {
                (
                    row.clone(),
                    c.family.to_vec(),
                    c.qualifier.to_vec(),
                    c.timestamp,
                    c.value.to_vec(),
                )
            })
        })
        .collect()
}

/// A value of `len` bytes that does not compress (files of about the
/// size written).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e3779b97f4a7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Puts rows `range` of `table`: `cf:q` of `len` bytes, and `meta:m` on
/// every third row.
async fn put_rows(c: &Client, table: &str, range: std::ops::Range<u32>, len: usize, tag: &str) {
    let t = c.table(table);
    let all: Vec<u32> = range.collect();
    for chunk in all.chunks(100) {
        let batch = chunk
            .iter()
            .map(|&i| {
                let mut m = RowMutation::new(format!("r{i:05}")).put(
                    "cf",
                    "q",
                    noise(u64::from(i) + tag.len() as u64, len),
                );
                if i % 3 == 0 {
                    m = m.put("meta", "m", format!("{tag}-{i}"));
                }
                m
            })
            .collect();
        for r in t.mutate_many(batch).await.unwrap() {
            r.unwrap();
        }
    }
}

/// A table `t` of three regions, one of them split again after a flush
/// (its children read its files), with cells only in the memstore too;
/// returns its cells at snapshot `snap`, taken then, and writes more after.
async fn table_and_snapshot(c: &Client, rows: u32, len: usize, snap: &str) -> Vec<CellKey> {
    let admin = c.admin();
    admin
        .create_table(
            "t",
            vec![Admin::family("cf"), Admin::family("meta")],
            vec![
                format!("r{:05}", rows / 3).into_bytes(),
                format!("r{:05}", rows * 2 / 3).into_bytes(),
            ],
        )
        .await
        .unwrap();
    put_rows(c, "t", 0..rows, len, "v1").await;
    admin.flush("t").await.unwrap();
    admin
        .split("t", Some(format!("r{:05}", rows / 6).into_bytes()))
        .await
        .unwrap();
    put_rows(c, "t", rows / 2..rows / 2 + 20, len, "v1b").await;
    let at_cut = cells(c, "t").await;
    admin.snapshot("t", snap).await.unwrap();
    put_rows(c, "t", 0..10, len, "v2").await;
    c.table("t")
        .delete_row(format!("r{:05}", rows / 2))
        .await
        .unwrap();
    assert_ne!(cells(c, "t").await, at_cut);
    at_cut
}

/// Every file under `dir`, relative, `/`-separated.
fn files(dir: &Path) -> BTreeSet<String> {
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

/// Checks the export at `dir` as a reader would: `export.json` lists every
/// object but itself, each with its size and CRC32C.
fn check_export(dir: &Path) -> serde_json::Value {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("export.json")).unwrap()).unwrap();
    let listed: BTreeSet<String> = manifest["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let path = o["path"].as_str().unwrap();
            let data = std::fs::read(dir.join(path)).unwrap();
            assert_eq!(data.len() as u64, o["size"].as_u64().unwrap(), "{path}");
            assert_eq!(
                u64::from(crc32c::crc32c(&data)),
                o["crc32c"].as_u64().unwrap(),
                "{path}"
            );
            path.to_string()
        })
        .collect();
    let mut on_disk = files(dir);
    assert!(on_disk.remove("export.json"));
    assert_eq!(on_disk, listed, "exactly the listed objects, no leftovers");
    assert!(listed.contains("snapshot.json"));
    assert!(
        listed
            .iter()
            .filter(|p| p.as_str() != "snapshot.json")
            .all(|p| p.starts_with("files/") && p.ends_with(".sst") && p.split('/').count() == 4),
        "{listed:?}"
    );
    manifest
}

struct Server {
    process: ServerProcess,
    data: PathBuf,
    config: PathBuf,
}

impl Server {
    fn start(dir: &Path, name: &str) -> Server {
        Server::start_with(dir, name, "")
    }

    /// A server whose config has `extra` too.
    fn start_with(dir: &Path, name: &str, extra: &str) -> Server {
        let home = dir.join(name);
        std::fs::create_dir_all(&home).unwrap();
        let config = write_config(&home, extra);
        let data = home.join("data");
        let process = ServerProcess::start(&data, Some(&config));
        Server {
            process,
            data,
            config,
        }
    }

    /// `--config … --data-dir …` of this server.
    fn bucket_args(&self) -> Vec<String> {
        vec![
            "--config".into(),
            self.config.to_string_lossy().into_owned(),
            "--data-dir".into(),
            self.data.to_string_lossy().into_owned(),
        ]
    }

    fn export_args(&self, snap: &str, to: &str, extra: &[&str]) -> Vec<String> {
        let mut a: Vec<String> = vec!["snapshot".into(), "export".into(), snap.into()];
        a.extend(["--to".into(), to.into()]);
        a.extend(self.bucket_args());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    }

    fn import_args(&self, from: &str, extra: &[&str]) -> Vec<String> {
        let mut a: Vec<String> = vec!["snapshot".into(), "import".into(), from.into()];
        a.extend(["--addr".into(), self.process.grpc.to_string()]);
        a.extend(self.bucket_args());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    }

    /// Objects under the server's `snapshots/`.
    fn snapshot_objects(&self) -> BTreeSet<String> {
        files(&self.data.join("objects").join("snapshots"))
    }
}

fn run(args: &[String], env: &[(&str, &str)]) -> (bool, String) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    shoal(&args, env)
}

#[test]
fn export_then_import_into_another_server_clones_every_cell_of_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let a = Server::start(dir.path(), "a");
    let at_cut = rt.block_on(async {
        let c = Client::connect(&a.process.url()).await.unwrap();
        // A snapshot of an empty table holds no file: it moves too.
        c.admin()
            .create_table("empty", vec![Admin::family("cf")], vec![])
            .await
            .unwrap();
        c.admin().snapshot("empty", "e").await.unwrap();
        table_and_snapshot(&c, 600, 300, "s1").await
    });
    let exp_e = dir.path().join("exp-e").to_string_lossy().into_owned();
    let (ok, out) = run(&a.export_args("e", &exp_e, &[]), &[]);
    assert!(ok, "{out}");
    let exp = dir.path().join("exp");
    let exp_s = exp.to_string_lossy().into_owned();

    // Unknown snapshot, and a target that is not empty: one clear error
    // each, nothing written.
    let (ok, out) = run(&a.export_args("nope", &exp_s, &[]), &[]);
    assert!(
        !ok && out.contains("no snapshot \"nope\"") && out.contains("s1"),
        "{out}"
    );
    assert!(files(&exp).is_empty(), "nothing written");
    let busy = dir.path().join("busy");
    std::fs::create_dir_all(&busy).unwrap();
    std::fs::write(busy.join("notes.txt"), "mine").unwrap();
    let (ok, out) = run(
        &a.export_args("s1", &format!("file://{}", busy.display()), &[]),
        &[],
    );
    assert!(
        !ok && out.contains("is not empty") && out.contains("notes.txt"),
        "{out}"
    );
    assert_eq!(files(&busy), BTreeSet::from(["notes.txt".to_string()]));
    // A target that cannot be written (under a plain file).
    let under_file = busy.join("notes.txt").join("exp");
    let (ok, out) = run(
        &a.export_args("s1", &under_file.to_string_lossy(), &[]),
        &[],
    );
    assert!(!ok && out.contains("notes.txt/exp"), "{out}");
    assert_eq!(files(&busy), BTreeSet::from(["notes.txt".to_string()]));

    let started = Instant::now();
    let (ok, out) = run(&a.export_args("s1", &exp_s, &[]), &[]);
    assert!(ok, "{out}");
    eprintln!("export: {:?}\n{out}", started.elapsed());
    assert!(out.contains("exported snapshot s1"), "{out}");
    let manifest = check_export(&exp);
    assert_eq!(manifest["snapshot"], "s1");
    assert_eq!(manifest["table"], "t");
    // Again: complete already, nothing to do; into another snapshot's
    // export: refused.
    let (ok, out) = run(&a.export_args("s1", &exp_s, &[]), &[]);
    assert!(ok && out.contains("complete export"), "{out}");
    rt.block_on(async {
        let c = Client::connect(&a.process.url()).await.unwrap();
        c.admin().snapshot("t", "s2").await.unwrap();
    });
    let (ok, out) = run(&a.export_args("s2", &exp_s, &[]), &[]);
    assert!(
        !ok && out.contains("is not empty") && out.contains("export of snapshot s1"),
        "{out}"
    );

    let b = Server::start(dir.path(), "b");
    // A corrupted byte in an exported file: refused naming it, nothing
    // imported.
    let bad = dir.path().join("bad");
    copy_dir(&exp, &bad);
    let victim = files(&bad)
        .into_iter()
        .filter(|p| p.ends_with(".sst"))
        .max_by_key(|p| std::fs::metadata(bad.join(p)).unwrap().len())
        .unwrap();
    let mut data = std::fs::read(bad.join(&victim)).unwrap();
    let at = data.len() / 2;
    data[at] ^= 0x40;
    std::fs::write(bad.join(&victim), data).unwrap();
    let (ok, out) = run(
        &b.import_args(&bad.to_string_lossy(), &["--name", "broken"]),
        &[],
    );
    assert!(
        !ok && out.contains(&victim) && out.contains("damaged"),
        "{out}"
    );
    assert!(
        b.snapshot_objects().is_empty(),
        "{:?}",
        b.snapshot_objects()
    );
    // An export without its export.json is not one.
    let partial = dir.path().join("partial");
    copy_dir(&exp, &partial);
    std::fs::remove_file(partial.join("export.json")).unwrap();
    let (ok, out) = run(&b.import_args(&partial.to_string_lossy(), &[]), &[]);
    assert!(
        !ok && out.contains("not a complete snapshot export"),
        "{out}"
    );

    let (ok, out) = run(&b.import_args(&exp_e, &[]), &[]);
    assert!(ok, "{out}");
    rt.block_on(async {
        let c = Client::connect(&b.process.url()).await.unwrap();
        c.admin().clone_snapshot("e", "e1").await.unwrap();
        assert!(cells(&c, "e1").await.is_empty());
        c.table("e1").put("x", "cf", "q", "1").await.unwrap();
        c.admin().disable("e1").await.unwrap();
        c.admin().drop_table("e1").await.unwrap();
        c.admin().delete_snapshot("e").await.unwrap();
    });

    let started = Instant::now();
    let (ok, out) = run(&b.import_args(&exp_s, &["--name", "s1b"]), &[]);
    assert!(ok, "{out}");
    eprintln!("import: {:?}\n{out}", started.elapsed());
    assert!(out.contains("imported snapshot s1b"), "{out}");
    let (ok, out) = run(&b.import_args(&exp_s, &["--name", "s1b"]), &[]);
    assert!(ok && out.contains("imported already"), "{out}");
    rt.block_on(async {
        let c = Client::connect(&b.process.url()).await.unwrap();
        let admin = c.admin();
        let listed: Vec<String> = admin
            .list_snapshots()
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(listed, ["s1b"]);
        let d = admin.describe_snapshot("s1b").await.unwrap();
        assert_eq!((d.table.as_str(), d.regions), ("t", 4));
        admin.clone_snapshot("s1b", "c1").await.unwrap();
        assert_eq!(cells(&c, "c1").await, at_cut, "the clone reads A's cut");
        // The clone writes on its own; its major compaction reads the
        // imported files whole.
        c.table("c1").put("zz", "cf", "q", "new").await.unwrap();
        admin.compact("c1", true).await.unwrap();
        let mut got = cells(&c, "c1").await;
        got.retain(|k| k.0 != b"zz");
        assert_eq!(got, at_cut, "after a major compaction");
        // Another name is another snapshot; a name in use is refused.
        let (ok, out) = run(&b.import_args(&exp_s, &["--name", "s1c"]), &[]);
        assert!(ok, "{out}");
        admin.snapshot("c1", "taken").await.unwrap();
        let (ok, out) = run(&b.import_args(&exp_s, &["--name", "taken"]), &[]);
        assert!(!ok && out.contains("already exists"), "{out}");
        admin.delete_snapshot("taken").await.unwrap();
        // Deleting the imported snapshot and its clone leaves nothing of it.
        admin.disable("c1").await.unwrap();
        admin.drop_table("c1").await.unwrap();
        admin.delete_snapshot("s1b").await.unwrap();
        admin.delete_snapshot("s1c").await.unwrap();
    });
    assert!(
        b.snapshot_objects().is_empty(),
        "{:?}",
        b.snapshot_objects()
    );
}

fn copy_dir(from: &Path, to: &Path) {
    for f in files(from) {
        let target = to.join(&f);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&f), target).unwrap();
    }
}

/// Starts `shoal ARGS`, waits until `ready` holds (the job is midway),
/// kills it with -9. Panics if it finished first.
fn kill_midway(args: &[String], ready: impl Fn() -> bool) {
    let mut child = Command::new(shoal_bin())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the job finished before it could be killed"
        );
        if ready() {
            break;
        }
        assert!(Instant::now() < deadline, "the job made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_killed_export_and_a_killed_import_finish_when_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let a = Server::start(dir.path(), "a");
    let at_cut = rt.block_on(async {
        let c = Client::connect(&a.process.url()).await.unwrap();
        table_and_snapshot(&c, 1500, 2000, "big").await
    });
    let exp = dir.path().join("exp");
    let exp_s = exp.to_string_lossy().into_owned();
    // About 3 MB at 1 MiB/s: a few seconds; killed once a file is whole.
    let slow = ["--bandwidth", "1MiB/s", "--parallel", "2"];
    kill_midway(&a.export_args("big", &exp_s, &slow), || {
        files(&exp)
            .iter()
            .any(|p| p.ends_with(".sst") && !p.contains('#'))
    });
    assert!(!exp.join("export.json").exists(), "killed before the end");
    let (ok, out) = run(&a.export_args("big", &exp_s, &[]), &[]);
    assert!(ok, "{out}");
    eprintln!("export after kill -9:\n{out}");
    assert!(out.contains("holds part of this export"), "{out}");
    let skipped = out
        .lines()
        .find_map(|l| l.split("; ").nth(1)?.split(' ').next()?.parse::<u32>().ok())
        .unwrap();
    assert!(
        skipped >= 1,
        "objects already there were not copied again: {out}"
    );
    let manifest = check_export(&exp);
    // The limit holds: the same export elsewhere at 4 MiB/s takes at least
    // its bytes' worth of time.
    let total: u64 = manifest["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["size"].as_u64().unwrap())
        .sum();
    let exp2 = dir.path().join("exp2").to_string_lossy().into_owned();
    let started = Instant::now();
    let (ok, out) = run(
        &a.export_args("big", &exp2, &["--bandwidth", "4MiB/s"]),
        &[],
    );
    assert!(ok, "{out}");
    let least = Duration::from_secs_f64(total as f64 / f64::from(4u32 << 20) * 0.8);
    assert!(
        started.elapsed() >= least,
        "{:?} < {least:?}",
        started.elapsed()
    );

    let b = Server::start(dir.path(), "b");
    let objects = b.data.join("objects").join("snapshots");
    kill_midway(&b.import_args(&exp_s, &slow), || {
        files(&objects)
            .iter()
            .any(|p| p.ends_with(".sst") && !p.contains('#'))
    });
    let (ok, out) = run(&b.import_args(&exp_s, &[]), &[]);
    assert!(ok, "{out}");
    eprintln!("import after kill -9:\n{out}");
    assert!(out.contains("holds part of this import"), "{out}");
    assert!(
        !b.snapshot_objects().iter().any(|p| p.contains('#')),
        "no leftovers of the killed copies"
    );
    rt.block_on(async {
        let c = Client::connect(&b.process.url()).await.unwrap();
        c.admin().clone_snapshot("big", "c").await.unwrap();
        assert_eq!(cells(&c, "c").await, at_cut);
    });
}

/// A new token for `user` in the token file `tokens`; returns its file.
fn new_token(dir: &Path, tokens: &Path, user: &str) -> PathBuf {
    let out = dir.join(format!("{user}.token"));
    let (ok, text) = shoal(
        &[
            "token",
            "new",
            user,
            "--file",
            tokens.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(ok, "{text}");
    out
}

#[test]
fn registering_an_import_needs_admin_globally_and_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let a = Server::start(dir.path(), "a");
    let at_cut = rt.block_on(async {
        let c = Client::connect(&a.process.url()).await.unwrap();
        table_and_snapshot(&c, 300, 100, "s").await
    });
    let exp = dir.path().join("exp").to_string_lossy().into_owned();
    let (ok, out) = run(&a.export_args("s", &exp, &[]), &[]);
    assert!(ok, "{out}");

    let tokens = dir.path().join("tokens");
    let admin = new_token(dir.path(), &tokens, "admin");
    let alice = new_token(dir.path(), &tokens, "alice");
    let audit = dir.path().join("audit.log");
    let b = Server::start_with(
        dir.path(),
        "b",
        &format!(
            "[auth]\nenabled = true\ntokens = {:?}\nsuperusers = [\"admin\"]\nthrift_user = \"gateway\"\naudit_log = {:?}\n",
            tokens.display().to_string(),
            audit.display().to_string()
        ),
    );
    fn as_user(token: &Path) -> Vec<&str> {
        vec!["--token-file", token.to_str().unwrap()]
    }
    let (ok, out) = run(&b.import_args(&exp, &as_user(&alice)), &[]);
    assert!(
        !ok && out.contains("permission denied") && out.contains("ADMIN"),
        "{out}"
    );
    // The superuser's import finds what alice's copied, and names it.
    let (ok, out) = run(&b.import_args(&exp, &as_user(&admin)), &[]);
    assert!(ok && out.contains("holds part of this import"), "{out}");
    let log = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let has = |outcome: &str, user: &str| {
        lines
            .iter()
            .any(|l| l["op"] == "register_snapshot" && l["outcome"] == outcome && l["user"] == user)
    };
    assert!(has("denied", "alice") && has("ok", "admin"), "{log}");
    rt.block_on(async {
        let options = shoal_client::ClientOptions {
            token: Some(std::fs::read_to_string(&admin).unwrap().trim().to_string()),
            ..Default::default()
        };
        let c = Client::connect_with(&b.process.url(), options)
            .await
            .unwrap();
        c.admin().clone_snapshot("s", "c").await.unwrap();
        assert_eq!(cells(&c, "c").await, at_cut);
    });
}

/// True if `tool` runs; false (with a note) if it is missing outside CI.
fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{tool} is not installed; scripts/test installs it"
        );
        eprintln!("skipped: {tool} is not installed (scripts/test installs it)");
    }
    found
}

#[test]
fn an_s3_bucket_as_the_export_target() {
    if !have("moto_server") {
        return;
    }
    let moto = moto::MotoServer::start();
    moto.create_bucket("exports");
    let endpoint = moto.endpoint();
    let env = [
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT", endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let a = Server::start(dir.path(), "a");
    let at_cut = rt.block_on(async {
        let c = Client::connect(&a.process.url()).await.unwrap();
        table_and_snapshot(&c, 300, 200, "s").await
    });
    let url = "s3://exports/backups/s";
    let (ok, out) = run(&a.export_args("s", url, &[]), &env);
    assert!(ok, "{out}");
    // Not into a prefix that holds another export.
    let (ok, out) = run(&a.export_args("s", "s3://exports/backups", &[]), &env);
    assert!(!ok && out.contains("is not empty"), "{out}");
    let (ok, out) = run(&a.export_args("s", "s3://missing-bucket/x", &[]), &env);
    assert!(!ok && out.contains("missing-bucket"), "{out}");

    let b = Server::start(dir.path(), "b");
    let (ok, out) = run(&b.import_args(url, &[]), &env);
    assert!(ok, "{out}");
    rt.block_on(async {
        let c = Client::connect(&b.process.url()).await.unwrap();
        c.admin().clone_snapshot("s", "c").await.unwrap();
        assert_eq!(cells(&c, "c").await, at_cut);
    });
}
