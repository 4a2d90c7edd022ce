//! `callcost`: the CPU one call costs the server and the client, for cached
//! gets, puts and 100-row scans; gets and puts over gRPC and over the framed
//! transport (`shoal_proto::frames`). The server runs as a child process
//! (`shoal serve`), this process is the client, so each side's CPU time
//! (`getrusage`, the server's read through its status RPC) is its own. Each
//! kind of call runs a fixed count from several concurrent tasks; CPU per
//! call is the CPU used over those calls divided by their count. The
//! server's idle CPU rate (flush checks, cache upkeep) is measured first
//! and reported beside, not subtracted.

use super::ScenarioError;
use super::child::ChildServer;
use super::errors::child_err;
use super::svg::{Bar, bars};
use crate::cpu::{CpuPerOp, CpuReading};
use crate::thread_cpu::ThreadCpu;
use serde::Serialize;
use shoal_client::{Admin, Client, ClientOptions, DataTransport, Get, RowMutation, Scan, Table};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct CallcostOptions {
    /// Rows loaded (10 cells of 100 bytes each, as a YCSB record).
    pub records: u64,
    /// Gets measured.
    pub gets: u64,
    /// Puts measured.
    pub puts: u64,
    /// 100-row scans measured.
    pub scans: u64,
    /// Concurrent calls.
    pub threads: usize,
    /// The `shoal` binary run as the server.
    pub shoal_bin: PathBuf,
}

/// One kind of call.
#[derive(Debug, Clone, Serialize)]
pub struct CallFigure {
    /// `get`, `put` or `scan100` over gRPC; `get_framed`, `put_framed` over
    /// the framed transport.
    pub call: String,
    /// Calls made.
    pub calls: u64,
    /// Wall time they took.
    pub seconds: f64,
    /// Calls per second.
    pub calls_per_sec: f64,
    /// Latency quantiles, microseconds.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// CPU per call.
    pub cpu: CpuPerOp,
    /// Of the server's CPU per call, what its WAL writer thread used (the
    /// write, the `fdatasync` and waking the calls that waited), in µs;
    /// None where `/proc` cannot be read.
    pub server_wal_thread_us: Option<f64>,
}

/// The scenario's report.
#[derive(Debug, Clone, Serialize)]
pub struct CallcostReport {
    /// Rows loaded.
    pub records: u64,
    /// Concurrent calls.
    pub threads: usize,
    /// `release` or `debug`: the server is this binary.
    pub build: &'static str,
    /// The server's CPU while no call runs, milliseconds per second.
    pub server_idle_cpu_ms_per_s: f64,
    /// Per kind of call.
    pub calls: Vec<CallFigure>,
}

const FAMILY: &str = "f";
const FIELDS: usize = 10;
const FIELD_BYTES: usize = 100;
const SCAN_ROWS: u64 = 100;
/// The server's WAL writer thread (`shoal-storage`'s `wal/log.rs`).
const WAL_THREAD: &str = "shoal-wal";

fn key(n: u64) -> String {
    format!("user{n:012}")
}

fn config(root: &Path) -> String {
    let p = |p: PathBuf| {
        p.display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    };
    format!(
        "[thrift]\naddr = \"127.0.0.1:0\"\n\n[rest]\naddr = \"127.0.0.1:0\"\n\n[hbase_rpc]\naddr = \"127.0.0.1:0\"\n\n[server]\ngrpc_addr = \"127.0.0.1:0\"\nhttp_addr = \"127.0.0.1:0\"\ndata_dir = \"{}\"\n\n\
         [object_store]\nurl = \"file://{}\"\n\n\
         [cache]\nl1_data = \"1GiB\"\n",
        p(root.join("data")),
        p(root.join("bucket")),
    )
}

/// Runs the scenario; reports go to `out` as `callcost.{json,md,svg}`.
pub async fn run(o: &CallcostOptions, out: &Path) -> Result<CallcostReport, ScenarioError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| ScenarioError::Io { path, source }
    };
    let root = tempfile::tempdir().map_err(|e| ScenarioError::Server(e.to_string()))?;
    std::fs::create_dir_all(root.path().join("bucket")).map_err(io(root.path()))?;
    let cfg = root.path().join("server.toml");
    std::fs::write(&cfg, config(root.path())).map_err(io(&cfg))?;
    let server = ChildServer::start(&o.shoal_bin, &cfg, &root.path().join("server.log"))
        .await
        .map_err(child_err)?;
    // gRPC for the calls named plainly; the framed client below for the rest.
    let client = Client::connect_with(
        &server.grpc.to_string(),
        ClientOptions {
            data_transport: DataTransport::Grpc,
            ..ClientOptions::default()
        },
    )
    .await?;
    let admin = client.admin();
    let splits: Vec<Vec<u8>> = (1..4)
        .map(|i| key(o.records * i / 4).into_bytes())
        .collect();
    admin
        .create_table("callcost", vec![Admin::family(FAMILY)], splits)
        .await?;
    let table = client.table("callcost");

    // Load, flush and compact, then read every row once so every block is
    // in the L1 cache: the gets below are cached gets.
    let value = vec![b'v'; FIELD_BYTES];
    let load = calls(o.records, o.threads, {
        let (table, value) = (table.clone(), value.clone());
        move |i| {
            let (table, value) = (table.clone(), value.clone());
            async move {
                let mut m = RowMutation::new(key(i));
                for f in 0..FIELDS {
                    m = m.put(FAMILY, format!("field{f}"), value.clone());
                }
                table.mutate(m).await.map_err(ScenarioError::from)
            }
        }
    });
    load.await?;
    admin.flush("callcost").await?;
    admin.compact("callcost", true).await?;
    calls(o.records, o.threads, {
        let table = table.clone();
        move |i| get_row(table.clone(), i)
    })
    .await?;

    // The server's idle rate, for reference.
    let idle0 = CpuReading::take(Some(&admin)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle = idle0
        .per_op(&CpuReading::take(Some(&admin)).await, 1)
        .server_us
        .unwrap_or(0.0)
        / 1e3;

    let records = o.records;
    let pid = server.pid();
    let framed = Client::connect_with(
        &server.grpc.to_string(),
        ClientOptions {
            data_transport: DataTransport::Framed,
            ..ClientOptions::default()
        },
    )
    .await?
    .table("callcost");
    let mut figures = Vec::new();
    for (name, table) in [("get", &table), ("get_framed", &framed)] {
        let get = measure(name, o.gets, o.threads, &admin, pid, {
            let table = table.clone();
            move |_| get_row(table.clone(), rand::random_range(0..records))
        })
        .await?;
        figures.push(get);
    }
    let scan = measure("scan100", o.scans, o.threads, &admin, pid, {
        let table = table.clone();
        move |_| {
            let table = table.clone();
            async move {
                let first = rand::random_range(0..records.saturating_sub(SCAN_ROWS).max(1));
                let rows = table
                    .scan_collect(
                        Scan::new()
                            .start(key(first))
                            .limit(SCAN_ROWS)
                            .rows_per_message(SCAN_ROWS as u32),
                    )
                    .await?;
                let want = SCAN_ROWS.min(records - first) as usize;
                if rows.len() != want {
                    return Err(ScenarioError::Server(format!(
                        "scan from row {first} returned {} rows, expected {want}",
                        rows.len()
                    )));
                }
                Ok(())
            }
        }
    })
    .await?;
    figures.push(scan);
    for (name, table) in [("put", &table), ("put_framed", &framed)] {
        let put = measure(name, o.puts, o.threads, &admin, pid, {
            let (table, value) = (table.clone(), value.clone());
            move |_| {
                let (table, value) = (table.clone(), value.clone());
                async move {
                    let m = RowMutation::new(key(rand::random_range(0..records)))
                        .put(FAMILY, "field0", value);
                    table.mutate(m).await.map_err(ScenarioError::from)
                }
            }
        })
        .await?;
        figures.push(put);
    }
    server
        .terminate(Duration::from_secs(30))
        .await
        .map_err(child_err)?;

    let report = CallcostReport {
        records: o.records,
        threads: o.threads,
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        server_idle_cpu_ms_per_s: idle,
        calls: figures,
    };
    let chart = bars(
        &format!(
            "CPU per call ({} build, {} concurrent calls)",
            report.build, report.threads
        ),
        "µs",
        ["server", "client"],
        &report
            .calls
            .iter()
            .map(|c| Bar {
                label: c.call.clone(),
                first: c.cpu.server_us.unwrap_or(0.0),
                second: c.cpu.client_us,
            })
            .collect::<Vec<_>>(),
    );
    super::write_report(out, "callcost", &report, &markdown(&report), &chart)?;
    Ok(report)
}

async fn get_row(table: Table, i: u64) -> Result<(), ScenarioError> {
    let row = table.get(Get::new(key(i))).await?;
    if row.cells.len() != FIELDS {
        return Err(ScenarioError::Server(format!(
            "get of row {i} returned {} cells, expected {FIELDS}",
            row.cells.len()
        )));
    }
    Ok(())
}

/// Makes `n` calls of `call(i)` from `threads` tasks; returns each call's
/// latency in microseconds.
async fn calls<F, Fut>(n: u64, threads: usize, call: F) -> Result<Vec<u64>, ScenarioError>
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), ScenarioError>> + Send,
{
    let next = Arc::new(AtomicU64::new(0));
    let call = Arc::new(call);
    let tasks: Vec<_> = (0..threads.max(1))
        .map(|_| {
            let (next, call) = (next.clone(), call.clone());
            tokio::spawn(async move {
                let mut lat = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return Ok::<_, ScenarioError>(lat);
                    }
                    let t = Instant::now();
                    call(i).await?;
                    lat.push(t.elapsed().as_micros() as u64);
                }
            })
        })
        .collect();
    let mut all = Vec::with_capacity(n as usize);
    for t in tasks {
        all.extend(
            t.await
                .map_err(|e| ScenarioError::Server(format!("call task: {e}")))??,
        );
    }
    Ok(all)
}

async fn measure<F, Fut>(
    name: &str,
    n: u64,
    threads: usize,
    admin: &Admin,
    server_pid: Option<u32>,
    call: F,
) -> Result<CallFigure, ScenarioError>
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), ScenarioError>> + Send,
{
    let threads0 = server_pid.map(ThreadCpu::read).unwrap_or_default();
    let cpu0 = CpuReading::take(Some(admin)).await;
    let start = Instant::now();
    let mut lat = calls(n, threads, call).await?;
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu0.per_op(&CpuReading::take(Some(admin)).await, n);
    let threads1 = server_pid.map(ThreadCpu::read).unwrap_or_default();
    let server_wal_thread_us = (!threads0.is_empty() && !threads1.is_empty())
        .then(|| threads0.used_by(&threads1, WAL_THREAD).as_secs_f64() * 1e6 / n.max(1) as f64);
    lat.sort_unstable();
    let q = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    Ok(CallFigure {
        call: name.to_string(),
        calls: n,
        seconds,
        calls_per_sec: n as f64 / seconds.max(1e-9),
        p50_us: q(0.50),
        p99_us: q(0.99),
        cpu,
        server_wal_thread_us,
    })
}

fn markdown(r: &CallcostReport) -> String {
    let mut s = format!(
        "# CPU per call\n\n{} build; {} rows of {FIELDS} × {FIELD_BYTES} B, flushed, major-compacted and \
         read once (every block in L1); {} concurrent calls; the server a child process, this \
         process the client. Server idle CPU: {:.2} ms/s (included below, not subtracted).\n\n\
         | call | calls | calls/s | p50 µs | p99 µs | server CPU µs/call (sys) | of which the WAL thread | client CPU µs/call (sys) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
        r.build, r.records, r.threads, r.server_idle_cpu_ms_per_s
    );
    for c in &r.calls {
        s.push_str(&format!(
            "| {} | {} | {:.0} | {} | {} | {:.1} ({:.1}) | {} | {:.1} ({:.1}) |\n",
            c.call,
            c.calls,
            c.calls_per_sec,
            c.p50_us,
            c.p99_us,
            c.cpu.server_us.unwrap_or(f64::NAN),
            c.cpu.server_system_us.unwrap_or(f64::NAN),
            c.server_wal_thread_us
                .map(|w| format!("{w:.1}"))
                .unwrap_or_else(|| "—".into()),
            c.cpu.client_us,
            c.cpu.client_system_us,
        ));
    }
    s
}
