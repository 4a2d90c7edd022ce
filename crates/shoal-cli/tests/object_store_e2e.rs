//! `shoal serve` itself on real object stores, from a config file: S3 over
//! plain http (moto_server, PyPI) set up through the environment and through
//! config keys, and Azure Blob (Azurite, npm). Each: create a table, write,
//! flush, write more (only in the WAL), kill -9, restart, read back exactly;
//! with the WAL in the object store, restart on a brand-new data directory
//! (a lost machine). Also: a missing bucket and an unreachable endpoint stop
//! the server at start with one clear line.
//!
//! Also: an HBase snapshot in an S3 bucket (an `ExportSnapshot` target)
//! imports with every cell, the server reading the HFiles from S3.
//!
//! A missing tool skips its test with a note, except under CI (`CI` set),
//! where it fails: `scripts/test` installs both.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

#[path = "support/hbase_fixtures.rs"]
mod fixtures;
mod support;

#[allow(dead_code)] // the S3 tests use part of it
#[path = "../../shoal-storage/tests/support/moto.rs"]
mod moto;

use shoal_client::{Admin, Client, Get, RowMutation, Scan};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::ServerProcess;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
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

fn value(i: u32) -> String {
    format!("value-{i}-{}", "x".repeat((i % 50) as usize))
}

/// Writes rows 0..200, flushes, writes 200..300 (WAL only).
async fn write_rows(server: &ServerProcess) {
    let client = Client::connect(&server.url()).await.unwrap();
    client
        .admin()
        .create_table("t", vec![Admin::family("cf")], vec![b"r0150".to_vec()])
        .await
        .unwrap();
    let table = client.table("t");
    for i in 0..300u32 {
        if i == 200 {
            client.admin().flush("t").await.unwrap();
        }
        table
            .mutate(RowMutation::new(format!("r{i:04}")).put("cf", "q", value(i)))
            .await
            .unwrap();
    }
}

/// Every row of `write_rows`, exactly, by scan and by get.
async fn check_rows(server: &ServerProcess) {
    let client = Client::connect(&server.url()).await.unwrap();
    let table = client.table("t");
    let mut scanner = table.scanner(Scan::new());
    let mut n = 0u32;
    while let Some(row) = scanner.next().await.unwrap() {
        assert_eq!(row.row, format!("r{n:04}").into_bytes());
        assert_eq!(row.cells.len(), 1);
        assert_eq!(row.cells[0].value, value(n).into_bytes());
        n += 1;
    }
    assert_eq!(n, 300, "rows after restart");
    let row = table.get(Get::new("r0299")).await.unwrap();
    assert_eq!(row.cells[0].value, value(299).into_bytes());
}

/// Writes, kills -9, restarts (on `restart_dir`), reads everything back.
fn round_trip(config: &Path, data: &Path, restart_dir: &Path, env: &[(&str, &str)]) {
    let rt = runtime();
    let server = ServerProcess::start_with_env(data, Some(config), env);
    rt.block_on(write_rows(&server));
    server.kill9();
    let server = ServerProcess::start_with_env(restart_dir, Some(config), env);
    rt.block_on(check_rows(&server));
    assert!(server.terminate().success());
}

const MOTO_ENV: [(&str, &str); 3] = [
    ("AWS_ACCESS_KEY_ID", "testing"),
    ("AWS_SECRET_ACCESS_KEY", "testing"),
    ("AWS_REGION", "us-east-1"),
];

#[test]
fn s3_over_http_configured_through_the_environment() {
    if !have("moto_server") {
        return;
    }
    let moto = moto::MotoServer::start();
    moto.create_bucket("shoal");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("shoal.toml");
    std::fs::write(&config, "[object_store]\nurl = \"s3://shoal/prod\"\n").unwrap();
    let endpoint = moto.endpoint();
    let mut env = MOTO_ENV.to_vec();
    env.push(("AWS_ENDPOINT", &endpoint));
    env.push(("AWS_ALLOW_HTTP", "true"));
    let data = dir.path().join("data");
    round_trip(&config, &data, &data, &env);
}

#[test]
fn s3_over_http_with_the_wal_in_the_bucket_survives_losing_the_machine() {
    if !have("moto_server") {
        return;
    }
    let moto = moto::MotoServer::start();
    moto.create_bucket("shoal");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("shoal.toml");
    std::fs::write(
        &config,
        format!(
            "[object_store]\nurl = \"s3://shoal/prod\"\nendpoint = \"{}\"\nallow_http = true\n\
             region = \"us-east-1\"\naccess_key_id = \"testing\"\n\
             secret_access_key = \"testing\"\n[wal]\nbackend = \"object\"\n",
            moto.endpoint()
        ),
    )
    .unwrap();
    // Everything in the config; the restart is on a new, empty data dir.
    round_trip(
        &config,
        &dir.path().join("machine-1"),
        &dir.path().join("machine-2"),
        &[],
    );
}

#[test]
fn a_missing_bucket_or_an_unreachable_endpoint_is_one_clear_line_at_start() {
    if !have("moto_server") {
        return;
    }
    let moto = moto::MotoServer::start();
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            format!(
                "url = \"s3://nobucket/p\"\nendpoint = \"{}\"\nallow_http = true",
                moto.endpoint()
            ),
            "\"nobucket\" does not exist",
        ),
        (
            format!(
                "url = \"s3://b/p\"\nendpoint = \"http://127.0.0.1:{}\"\nallow_http = true",
                moto::closed_port()
            ),
            "unreachable",
        ),
        (
            format!("url = \"s3://b/p\"\nendpoint = \"{}\"", moto.endpoint()),
            "allow_http",
        ),
    ];
    for (i, (section, expected)) in cases.iter().enumerate() {
        let config = dir.path().join(format!("bad{i}.toml"));
        std::fs::write(&config, format!("[object_store]\n{section}\n")).unwrap();
        let start = Instant::now();
        let out = Command::new(support::shoal_bin())
            .args([
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
            ])
            .arg("--data-dir")
            .arg(dir.path().join(format!("data{i}")))
            .arg("--config")
            .arg(&config)
            .envs(MOTO_ENV)
            .env_remove("RUST_BACKTRACE")
            .output()
            .unwrap();
        assert!(!out.status.success(), "case {i} started");
        assert!(start.elapsed() < Duration::from_secs(60), "case {i} hung");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().last().unwrap_or_default();
        assert!(last.starts_with("error: "), "case {i}: {stderr}");
        assert!(last.contains(expected), "case {i}: {last}");
        assert_eq!(
            stderr.lines().filter(|l| l.contains("error")).count(),
            1,
            "case {i}: one error line: {stderr}"
        );
    }
}

/// Azurite's blob service on a free loopback port; killed when dropped.
struct Azurite {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

/// Azurite's well-known development account and key.
const AZURITE_ACCOUNT: &str = "devstoreaccount1";
const AZURITE_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

impl Azurite {
    /// Starts Azurite on a free port. A port found free can be taken by
    /// another test's server before Azurite binds it (Azurite then exits):
    /// readiness means Azurite itself answers, and a lost port is retried.
    fn start() -> Azurite {
        let mut last = String::new();
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let port = free_port();
            let mut child = Command::new("azurite-blob")
                .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
                .arg("--location")
                .arg(dir.path())
                .args([
                    "--silent",
                    "--skipApiVersionCheck",
                    "--disableProductStyleUrl",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                if let Ok(Some(status)) = child.try_wait() {
                    last = format!("azurite exited with {status} (port {port} taken?)");
                    break;
                }
                if answers_as_azurite(port) {
                    return Azurite {
                        child,
                        port,
                        _dir: dir,
                    };
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    last = format!("azurite did not answer on port {port}");
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("azurite did not start: {last}");
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/{AZURITE_ACCOUNT}", self.port)
    }

    /// Creates `container`, signed with the account key (Shared Key).
    fn create_container(&self, container: &str) {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD;
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let version = "2021-08-06";
        let to_sign = format!(
            "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n\
             /{AZURITE_ACCOUNT}/{AZURITE_ACCOUNT}/{container}\nrestype:container"
        );
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &b64.decode(AZURITE_KEY).unwrap());
        let signature = b64.encode(ring::hmac::sign(&key, to_sign.as_bytes()).as_ref());
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "PUT /{AZURITE_ACCOUNT}/{container}?restype=container HTTP/1.1\r\n\
             Host: 127.0.0.1:{}\r\nx-ms-date: {date}\r\nx-ms-version: {version}\r\n\
             Authorization: SharedKey {AZURITE_ACCOUNT}:{signature}\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )
        .unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        assert!(
            response.starts_with("HTTP/1.1 201"),
            "creating container {container}: {response}"
        );
    }
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// True if the server on `port` answers as Azurite does.
fn answers_as_azurite(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!(
        "GET /{AZURITE_ACCOUNT}?comp=list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    );
    if s.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut response = String::new();
    let _ = s.read_to_string(&mut response);
    response.to_ascii_lowercase().contains("azurite")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn azure_blob_on_azurite_with_the_wal_in_the_container() {
    if !have("azurite-blob") {
        return;
    }
    let azurite = Azurite::start();
    azurite.create_container("shoal");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("shoal.toml");
    std::fs::write(
        &config,
        format!(
            "[object_store]\nurl = \"az://shoal/prod\"\nendpoint = \"{}\"\n\
             account = \"{AZURITE_ACCOUNT}\"\naccess_key = \"{AZURITE_KEY}\"\n\
             [wal]\nbackend = \"object\"\n",
            azurite.endpoint()
        ),
    )
    .unwrap();
    round_trip(
        &config,
        &dir.path().join("machine-1"),
        &dir.path().join("machine-2"),
        &[],
    );
}

/// Uploads every file under `dir` to `bucket` under `prefix`.
async fn upload_tree(bucket: &shoal_storage::object::Bucket, dir: &Path, prefix: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let key = format!("{prefix}/{name}");
        if entry.file_type().unwrap().is_dir() {
            Box::pin(upload_tree(bucket, &entry.path(), &key)).await;
        } else {
            let data = std::fs::read(entry.path()).unwrap();
            bucket.put(&key, data.into()).await.unwrap();
        }
    }
}

#[test]
fn an_hbase_snapshot_in_s3_imports_with_every_cell() {
    if !have("moto_server") {
        return;
    }
    let moto = moto::MotoServer::start();
    let rt = runtime();
    let exported = rt.block_on(async {
        shoal_storage::object::Bucket::open(&moto.bucket_config("hbase"))
            .await
            .unwrap()
    });
    // The snapshot as ExportSnapshot leaves it: its HFiles under archive/.
    let root = fixtures::fixtures().join("hbase-root");
    rt.block_on(upload_tree(
        &exported,
        &root.join(".hbase-snapshot"),
        "migration/.hbase-snapshot",
    ));
    rt.block_on(upload_tree(
        &exported,
        &root.join("data"),
        "migration/archive/data",
    ));
    let dir = tempfile::tempdir().unwrap();
    let endpoint = moto.endpoint();
    let mut env = MOTO_ENV.to_vec();
    env.push(("AWS_ENDPOINT", &endpoint));
    env.push(("AWS_ALLOW_HTTP", "true"));
    let server = ServerProcess::start_with_env(&dir.path().join("data"), None, &env);
    let addr = server.grpc.to_string();
    let out = Command::new(support::shoal_bin())
        .args([
            "import",
            "hbase-snapshot",
            "s3://hbase/migration",
            "imp_snap",
        ])
        .args(["--addr", &addr])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{}", server.stderr());
    assert!(text.contains("2207 cells loaded"), "{text}");
    let (expected, _) = fixtures::expected_visible(fixtures::now_ms());
    let got = rt.block_on(fixtures::shoal_cells(&addr, "imp"));
    assert_eq!(got, expected);
}
