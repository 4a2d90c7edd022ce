//! The HTTP surface served for real on 127.0.0.1 from a synthetic status
//! view and history: `/metrics`, `/api/status`, `/healthz`, and the status
//! page as headless Chromium renders it (DOM dump and a screenshot).
//!
//! Chromium is found through `SHOAL_CHROMIUM`, else `chromium` or
//! `chromium-browser` on `PATH`; without one the test fails (install it with
//! `apt-get install -y chromium`) unless `SHOAL_SKIP_BROWSER_TESTS=1`.
//! `SHOAL_KEEP_SCREENSHOT=<path>` keeps a copy of the screenshot.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use bytes::Bytes;
use shoal_server::http::{HttpState, router};
use shoal_server::metrics::status::{RegionView, StatusView, TableView};
use shoal_server::metrics::{History, RequestMetrics, RequestOp};
use shoal_storage::cache::{CacheMetricsSnapshot, DiskCacheMetrics, PoolSnapshot};
use shoal_storage::object::{LATENCY_BUCKETS, LatencySnapshot, ObjectMetricsSnapshot, OpSnapshot};
use shoal_storage::wal::WalMetricsSnapshot;
use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BROWSER_TIMEOUT: Duration = Duration::from_secs(60);

fn region(id: &str, start: &'static [u8], end: &'static [u8], size: u64) -> RegionView {
    RegionView {
        id: id.into(),
        start_row: Bytes::from_static(start),
        end_row: Bytes::from_static(end),
        size_bytes: size,
        memstore_bytes: size / 50,
        files: 3,
        cache_ratio: Some(0.73),
        block_sources: Some(shoal_storage::cache::BlockSourcesSnapshot {
            l1: 50,
            l2: 20,
            peer: 25,
            object_store: 5,
            prefetch_peer: 30,
            prefetch_object_store: 4,
            object_store_gets: 2,
        }),
        has_references: false,
        prefetch: Some((size / 3, size)),
    }
}

fn object_op(requests: u64, bytes: u64) -> OpSnapshot {
    let mut buckets = [0u64; LATENCY_BUCKETS];
    buckets[10] = requests / 2;
    buckets[14] = requests - requests / 2;
    OpSnapshot {
        requests,
        errors: requests / 100,
        retries: requests / 200,
        bytes,
        latency: LatencySnapshot {
            sum_us: requests * 9_000,
            max_us: 16_000,
            buckets,
        },
    }
}

/// Cumulative count after `step` 10-second intervals of a rate that swings
/// around `base` per second with period `period` steps.
fn cumulative(step: u64, base: f64, period: f64) -> u64 {
    (0..step)
        .map(|i| (base * (1.0 + 0.6 * (i as f64 * std::f64::consts::TAU / period).sin())) * 10.0)
        .sum::<f64>() as u64
}

/// A server with two tables (one disabled), binary row keys, a hostile
/// table name, both cache tiers and some traffic; counters grow with `step`
/// (one step = 10 s).
fn view(step: u64) -> StatusView {
    let requests = RequestMetrics::default();
    for (i, op) in RequestOp::ALL.iter().enumerate() {
        requests.record(*op, Duration::from_micros(90 + 400 * i as u64), true);
        requests.record(*op, Duration::from_millis(3 + i as u64), i != 3);
    }
    let mut requests = requests.snapshot();
    let calls = cumulative(step, 1200.0, 90.0);
    for (op, f) in &mut requests.ops {
        let share = match op {
            RequestOp::Get => 6,
            RequestOp::Mutate => 3,
            RequestOp::Scan => 1,
            _ => 0,
        };
        f.count += calls * share / 10;
        f.buckets[3] += calls * share / 10;
        f.sum_us += calls * share / 10 * 400;
    }
    let l1_lookups = cumulative(step, 4000.0, 60.0);
    let l1_misses = cumulative(step, 500.0, 45.0);
    let l2_misses = cumulative(step, 60.0, 120.0);
    let pool = |hits: u64, misses: u64, used: u64, free: u64| PoolSnapshot {
        hits,
        misses,
        inserts: misses,
        evictions: misses / 4,
        rejected: 1,
        bytes_used: used,
        bytes_free: free,
        entries: used / 65_536,
    };
    let cache = CacheMetricsSnapshot {
        data: pool(l1_lookups - l1_misses, l1_misses, 700 << 20, 324 << 20),
        in_memory: pool(step * 5, step, 10 << 20, 54 << 20),
        meta: pool(step * 40, 3, 30 << 20, 98 << 20),
        rows: pool(step * 20, step, 20 << 20, 44 << 20),
        l2_hits: l1_misses - l2_misses,
        l2_misses,
        l2_corrupt: 0,
        object_store_gets: l2_misses,
        object_store_bytes: l2_misses * 65_536,
        shared_misses: step / 3,
        prefetch_bytes_total: 3 << 30,
        prefetch_bytes_done: 1 << 30,
        peer: Default::default(),
        l2: Some(DiskCacheMetrics {
            hits: l1_misses - l2_misses,
            misses: l2_misses,
            corrupt: 0,
            inserts: step * 12,
            dropped: 2,
            evicted: step,
            entries: 150_000,
            bytes_used: 9 << 30,
            bytes_free: 1 << 30,
            index_bytes: 12 << 20,
            recovered_entries: 140_000,
            recovery_micros: 1_250_000,
            recovered: true,
            open_segments: 32,
            segment_opens: 900,
            page_cache_hits: 0,
        }),
    };
    let object_store = ObjectMetricsSnapshot {
        get: object_op(step * 3 + 10, step * 300_000),
        ranged_get: object_op(l2_misses, l2_misses * 65_536),
        put: object_op(step + 4, step * 1_000_000),
        list: object_op(12, 0),
        ..Default::default()
    };
    StatusView {
        version: "0.1.0",
        uptime: Duration::from_secs(3_700 + step * 10),
        cpu: Default::default(),
        data_location: "s3://bucket/shoal <prod>".into(),
        tables: vec![
            TableView {
                name: "usertable".into(),
                enabled: true,
                families: vec!["cf".into(), "meta".into()],
                regions: vec![
                    region("01J9ZQ3M4B", b"", b"user4\x00\xff", 3 << 30),
                    region("01J9ZQ3M4C", b"user4\x00\xff", b"user8", 2 << 30),
                    RegionView {
                        has_references: true,
                        cache_ratio: None,
                        prefetch: None,
                        ..region("01J9ZQ3M4D", b"user8", b"", 512 << 20)
                    },
                ],
            },
            TableView {
                name: "<script>alert(1)</script>".into(),
                enabled: false,
                families: vec!["f".into()],
                regions: vec![],
            },
        ],
        cache: Some(cache),
        object_store,
        wal: wal(calls),
        requests,
        memstore_bytes: 110 << 20,
        flushes: 17,
        compactions: 4,
        splits: 2,
        cluster: None,
        snapshots: Default::default(),
        write: shoal_server::metrics::status::WritePathView::default(),
    }
}

fn wal(calls: u64) -> WalMetricsSnapshot {
    let syncs = calls / 8;
    let mut w = WalMetricsSnapshot {
        appends: calls * 3 / 10,
        bytes: calls * 3 / 10 * 180,
        syncs,
        batch_entries_sum: calls * 3 / 10,
        batch_entries_max: 64,
        sync_micros_sum: syncs * 1_800,
        sync_micros_max: 21_000,
        segments_live: 3,
        ..Default::default()
    };
    w.batch_entries_histogram[2] = syncs;
    w.sync_micros_histogram[11] = syncs;
    w
}

/// Serves the router on 127.0.0.1:0 from a thread of its own.
fn serve() -> SocketAddr {
    let history = Arc::new(History::default());
    for step in 0..=360 {
        history.sample(&view(step));
    }
    let state = HttpState {
        view: Arc::new(|| view(361)),
        history,
        connections: Arc::default(),
        trim: Arc::new(|_, view| view),
        auth: shoal_server::http::auth::AuthState {
            security: Arc::new(shoal_server::security::Security::off()),
            tls: false,
        },
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, router(state)).await.unwrap();
        });
    });
    rx.recv().unwrap()
}

/// A plain HTTP/1.1 GET: (status code, content type, body).
fn http_get(addr: SocketAddr, path: &str) -> (u16, String, String) {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let code = head.split(' ').nth(1).unwrap().parse().unwrap();
    let ctype = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_string)
        })
        .unwrap_or_default();
    (code, ctype, body.to_string())
}

#[test]
fn routes_answer() {
    let addr = serve();
    let (code, ctype, body) = http_get(addr, "/metrics");
    assert_eq!(code, 200);
    assert!(ctype.starts_with("text/plain; version=0.0.4"), "{ctype}");
    let l2_hits = view(361).cache.unwrap().l2_hits;
    let expected = format!("shoal_cache_hits_total{{tier=\"l2\"}} {l2_hits}\n");
    assert!(body.contains(&expected), "{body}");
    assert!(body.contains("table=\"usertable\",region=\"01J9ZQ3M4B\""));
    let (code, _, body) = http_get(addr, "/healthz");
    assert_eq!((code, body.as_str()), (200, "ok\n"));
    let (code, ctype, body) = http_get(addr, "/api/status");
    assert_eq!(code, 200);
    assert!(ctype.starts_with("application/json"), "{ctype}");
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["tables"][0]["name"], "usertable");
    assert_eq!(json["regions"].as_array().unwrap().len(), 3);
    assert_eq!(json["regions"][0]["block_sources"]["peer"], 25);
    let (code, ctype, _) = http_get(addr, "/");
    assert_eq!(code, 200);
    assert!(ctype.starts_with("text/html"), "{ctype}");
    let (code, _, _) = http_get(addr, "/nope");
    assert_eq!(code, 404);
}

/// The browser to use, or `None` when browser tests are skipped.
fn chromium() -> Option<PathBuf> {
    if std::env::var("SHOAL_SKIP_BROWSER_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("SHOAL_SKIP_BROWSER_TESTS=1: status page not rendered in a browser");
        return None;
    }
    if let Some(p) = std::env::var_os("SHOAL_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    panic!(
        "the status page test needs Chromium: install it with `apt-get install -y chromium` \
         (or point SHOAL_CHROMIUM at a binary, or set SHOAL_SKIP_BROWSER_TESTS=1)"
    );
}

/// Runs headless Chromium on `url` with `extra` flags and a fresh profile,
/// killing it after [`BROWSER_TIMEOUT`]; returns its stdout.
fn run_browser(browser: &Path, profile: &Path, url: &str, extra: &[String]) -> String {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    // Drain stdout while waiting: a large DOM would fill the pipe.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let deadline = Instant::now() + BROWSER_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {BROWSER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = reader.join().unwrap();
    assert!(status.success(), "chromium failed: {status}");
    out
}

#[test]
fn chromium_renders_the_status_page() {
    let Some(browser) = chromium() else {
        return;
    };
    let addr = serve();
    let url = format!("http://{addr}/");
    let tmp = tempfile::tempdir().unwrap();

    let dom = run_browser(
        &browser,
        &tmp.path().join("profile-dom"),
        &url,
        &["--dump-dom".to_string()],
    );
    for expected in [
        "<h1>Shoal</h1>",
        "version 0.1.0",
        "s3://bucket/shoal &lt;prod&gt;",
        "id=\"tables\"",
        "id=\"regions\"",
        "id=\"cache\"",
        "id=\"objects\"",
        ">usertable<",
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "disabled",
        "01J9ZQ3M4C",
        "user4\\x00\\xFF",
        "id=\"requests\"",
        "group commits",
        "3.0 GiB",
        "reads its split parent's files",
        "peer 25% · object store 5%<br>prefetched: 30 from a peer · 4 from the object store (2 GETs)",
        "L2 disk",
        "ranged_get",
        "Cache hit ratio",
        "Requests per second",
        "Object-store GETs per second",
    ] {
        assert!(
            dom.contains(expected),
            "rendered DOM lacks {expected:?}:\n{dom}"
        );
    }
    assert!(!dom.contains("<script>"), "a table name became markup");
    assert_eq!(dom.matches("<svg").count(), 3, "three charts");
    assert!(dom.matches("<path").count() >= 4, "chart lines drawn");

    let shot = tmp.path().join("status.png");
    run_browser(
        &browser,
        &tmp.path().join("profile-shot"),
        &url,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1400,1800".to_string(),
        ],
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(png.len() > 30_000, "screenshot only {} bytes", png.len());
    if let Ok(keep) = std::env::var("SHOAL_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
