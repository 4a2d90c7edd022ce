//! The real `shoal` binary end to end through the Rust client: kill -9 and
//! restart with no acknowledged write lost, a clean restart, splits under
//! load with reads and writes going on, `/metrics` and the status page,
//! transparent huge pages off.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use shoal_client::{Admin, Client, Get, Scan};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use support::{ServerProcess, write_config};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn kill_9_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), "");
    let rt = runtime();
    let server = ServerProcess::start(&data, Some(&config));
    let acked: Arc<std::sync::Mutex<Vec<u64>>> = Arc::default();
    rt.block_on(async {
        let client = Client::connect(&server.url()).await.unwrap();
        client
            .admin()
            .create_table("t", vec![Admin::family("cf")], vec![b"k5".to_vec()])
            .await
            .unwrap();
        // Writers run until the server dies under them.
        let stop = Arc::new(AtomicBool::new(false));
        let mut writers = Vec::new();
        for w in 0..8u64 {
            let (t, acked, stop) = (client.table("t"), acked.clone(), stop.clone());
            writers.push(tokio::spawn(async move {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let n = w * 1_000_000 + i;
                    let value = vec![b'x'; 300];
                    match t.put(format!("k{n:08}"), "cf", "q", &value).await {
                        Ok(()) => acked.lock().unwrap().push(n),
                        Err(_) => break,
                    }
                    i += 1;
                }
            }));
        }
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        server.kill9();
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            w.await.unwrap();
        }
    });
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() > 100,
        "only {} writes acknowledged",
        acked.len()
    );
    let server = ServerProcess::start(&data, Some(&config));
    rt.block_on(async {
        let client = Client::connect(&server.url()).await.unwrap();
        let t = client.table("t");
        for chunk in acked.chunks(500) {
            let gets = chunk.iter().map(|n| Get::new(format!("k{n:08}"))).collect();
            let rows = t.get_many(gets).await.unwrap();
            for (n, row) in chunk.iter().zip(rows) {
                assert!(!row.cells.is_empty(), "acknowledged write k{n:08} lost");
            }
        }
    });
}

#[test]
fn clean_restart_keeps_data_and_cache() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), "");
    let rt = runtime();
    let server = ServerProcess::start(&data, Some(&config));
    rt.block_on(async {
        let client = Client::connect(&server.url()).await.unwrap();
        client
            .admin()
            .create_table("t", vec![Admin::family("cf")], vec![])
            .await
            .unwrap();
        let t = client.table("t");
        for i in 0..300 {
            t.put(format!("r{i:04}"), "cf", "q", format!("v{i}"))
                .await
                .unwrap();
        }
    });
    let status = server.terminate();
    assert!(status.success(), "exit status {status:?}");
    let server = ServerProcess::start(&data, Some(&config));
    rt.block_on(async {
        let client = Client::connect(&server.url()).await.unwrap();
        let t = client.table("t");
        assert_eq!(t.count(Scan::new()).await.unwrap(), 300);
        assert_eq!(
            t.get_value("r0042", "cf", "q").await.unwrap().as_deref(),
            Some(&b"v42"[..])
        );
        // The clean stop flushed: reads after the restart come from files
        // whose blocks the persistent cache kept.
        let s = client.admin().status().await.unwrap();
        assert!(s.l2_bytes > 0, "{s:?}");
    });
}

#[test]
fn split_under_load_with_reads_and_writes_going_on() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), "");
    let rt = runtime();
    let server = ServerProcess::start(&data, Some(&config));
    rt.block_on(async {
        let client = Client::connect(&server.url()).await.unwrap();
        client
            .admin()
            .create_table("t", vec![Admin::family("cf")], vec![])
            .await
            .unwrap();
        let t = client.table("t");
        for i in 0..2000u64 {
            t.put(format!("r{i:06}"), "cf", "q", i.to_string())
                .await
                .unwrap();
        }
        let stop = Arc::new(AtomicBool::new(false));
        let next = Arc::new(AtomicU64::new(2000));
        let reads = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for _ in 0..3 {
            let (t, stop, next) = (t.clone(), stop.clone(), next.clone());
            tasks.push(tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    t.put(format!("r{i:06}"), "cf", "q", i.to_string())
                        .await
                        .unwrap();
                }
            }));
        }
        for k in 0..2 {
            let (t, stop, reads) = (t.clone(), stop.clone(), reads.clone());
            tasks.push(tokio::spawn(async move {
                let mut i = k;
                while !stop.load(Ordering::Relaxed) {
                    let row = format!("r{:06}", (i * 7919) % 2000);
                    let v = t.get_value(&row, "cf", "q").await.unwrap();
                    assert!(v.is_some(), "{row} missing during the split");
                    reads.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                }
            }));
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let admin = client.admin();
        admin.split("t", Some(b"r001000".to_vec())).await.unwrap();
        admin.compact("t", true).await.unwrap();
        admin.split("t", None).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        stop.store(true, Ordering::Relaxed);
        for task in tasks {
            task.await.unwrap();
        }
        assert!(reads.load(Ordering::Relaxed) > 0);
        let written = next.load(Ordering::Relaxed);
        let d = admin.describe("t").await.unwrap();
        assert!(d.regions.len() >= 3, "{} regions", d.regions.len());
        let rows = t.scan_collect(Scan::new()).await.unwrap();
        // Every write acknowledged before `stop` is there, in order, once.
        assert!(
            rows.len() as u64 >= written - 3,
            "{} rows of {written}",
            rows.len()
        );
        for w in rows.windows(2) {
            assert!(w[0].row < w[1].row);
        }
    });
}

#[test]
fn metrics_carry_every_documented_name_and_the_status_page_renders() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), "");
    let rt = runtime();
    let server = ServerProcess::start(&data, Some(&config));
    rt.block_on(async {
        let client = Client::connect(&server.url()).await.unwrap();
        client
            .admin()
            .create_table("t", vec![Admin::family("cf")], vec![])
            .await
            .unwrap();
        let t = client.table("t");
        for i in 0..100 {
            t.put(format!("r{i}"), "cf", "q", "v").await.unwrap();
        }
        client.admin().flush("t").await.unwrap();
        t.get(Get::new("r1")).await.unwrap();
    });
    let (code, body) = server.http_get("/metrics");
    assert_eq!(code, 200);
    let doc = include_str!("../../../docs/metrics.md");
    let names: Vec<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        // Cluster mode's are checked by cluster_e2e (a single node has none).
        .filter(|n| !n.starts_with("shoal_cluster_"))
        .collect();
    assert!(names.len() > 30, "{names:?}");
    for n in names {
        assert!(
            body.contains(&format!("# TYPE {n} ")),
            "{n} is documented but not exported"
        );
    }
    for line in body.lines().filter(|l| !l.starts_with('#')) {
        let (_, value) = line.rsplit_once(' ').unwrap();
        assert!(value.parse::<f64>().is_ok(), "bad sample {line}");
    }
    assert!(
        body.contains("shoal_requests_total{op=\"mutate\"} 100"),
        "{body}"
    );
    let (code, body) = server.http_get("/healthz");
    assert_eq!((code, body.trim()), (200, "ok"));
    let (code, body) = server.http_get("/api/status");
    assert_eq!(code, 200);
    assert!(body.contains("\"tables\""));

    // Headless Chromium renders the status page.
    if std::env::var("SHOAL_SKIP_BROWSER_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("SHOAL_SKIP_BROWSER_TESTS=1: the status page is not rendered in a browser");
        return;
    }
    let browser = std::env::var("SHOAL_CHROMIUM").ok().or_else(|| {
        ["chromium", "chromium-browser", "google-chrome"]
            .into_iter()
            .find(|b| {
                std::process::Command::new("which")
                    .arg(b)
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
            .map(str::to_string)
    });
    let Some(browser) = browser else {
        panic!(
            "the status page test needs Chromium: apt-get install -y chromium (or set SHOAL_CHROMIUM, or SHOAL_SKIP_BROWSER_TESTS=1)"
        );
    };
    let profile = dir.path().join("chromium-profile");
    let shot = dir.path().join("status.png");
    let url = format!("http://{}/", server.http);
    let base = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ];
    let run = |extra: &[String]| {
        let mut child = std::process::Command::new(&browser)
            .args(base)
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(&url)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Read stdout while the browser runs: a DOM larger than the pipe
        // buffer would otherwise block it until the timeout.
        let mut stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut out = String::new();
            std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
            out
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("chromium did not finish in 90 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        reader.join().unwrap()
    };
    let dom = run(&["--dump-dom".to_string()]);
    for expected in [
        "<h1>Shoal</h1>",
        "id=\"tables\"",
        "id=\"regions\"",
        "id=\"cache\"",
        "Cache hit ratio",
        "Object-store GETs per second",
        "<svg",
    ] {
        assert!(
            dom.contains(expected),
            "rendered DOM lacks {expected:?}:\n{dom}"
        );
    }
    assert!(dom.contains(">t<"), "table t not shown");
    run(&[
        format!("--screenshot={}", shot.display()),
        "--window-size=1280,1600".to_string(),
    ]);
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "screenshot {} bytes",
        png.len()
    );
    if let Ok(keep) = std::env::var("SHOAL_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// The server turns transparent huge pages off for itself (refaulting 2 MiB
/// pages stalled writers; see docs/write-path.md). Linux reports it as
/// `THP_enabled` in /proc/<pid>/status; a kernel without that line has
/// nothing to check.
#[cfg(target_os = "linux")]
#[test]
fn the_server_runs_without_transparent_huge_pages() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = write_config(dir.path(), "");
    let server = ServerProcess::start(&data, Some(&config));
    let pid = server.pid().expect("a running server");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    match status.lines().find(|l| l.starts_with("THP_enabled:")) {
        Some(line) => assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}"),
        None => eprintln!("this kernel does not report THP_enabled; nothing to check"),
    }
}
