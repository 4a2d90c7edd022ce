//! `warmup`: how fast prefetch-on-open refills an empty L2 from the object
//! store, as a fraction of the emulated store's bandwidth. Loads a dataset
//! through a server whose object store behaves like S3 (first-byte latency,
//! jitter, per-request bandwidth), stops it, deletes the L2 directory,
//! starts again on the same data and follows the prefetch to the end.

use super::{Embedded, ScenarioError, write_report};
use crate::scenario::svg::{Line, chart};
use serde::Serialize;
use shoal_client::{Admin, RowMutation};
use std::path::Path;
use std::time::{Duration, Instant};

/// Settings of one run.
#[derive(Debug, Clone)]
pub struct WarmupOptions {
    /// Bytes of values to load.
    pub dataset_bytes: u64,
    /// Emulated first-byte latency.
    pub latency: Duration,
    /// Emulated per-request bandwidth, bytes/s.
    pub bandwidth: u64,
    /// Give up following the prefetch after this long.
    pub timeout: Duration,
}

/// What the run measured.
#[derive(Debug, Clone, Serialize)]
pub struct WarmupReport {
    /// Bytes the prefetch set out to warm.
    pub prefetch_bytes: u64,
    /// Bytes warmed when the run ended.
    pub warmed_bytes: u64,
    /// Seconds from the restart until the prefetch finished (or the timeout).
    pub seconds: f64,
    /// Warmed bytes per second.
    pub bytes_per_sec: f64,
    /// `bytes_per_sec` / the emulated per-request bandwidth.
    pub fraction_of_request_bandwidth: f64,
    /// Emulated first-byte latency, ms.
    pub latency_ms: f64,
    /// Emulated per-request bandwidth, bytes/s.
    pub bandwidth: u64,
    /// Object-store GETs the prefetch issued.
    pub gets: u64,
    /// (seconds, bytes warmed) samples.
    pub progress: Vec<(f64, u64)>,
    /// True if the prefetch finished before the timeout.
    pub finished: bool,
}

fn emulate(c: &mut shoal_server::ServerConfig, o: &WarmupOptions) {
    c.object_store.emulate = Some(shoal_storage_emulation(o));
    c.cache.l2_capacity = shoal_server::config::ByteSize((o.dataset_bytes * 4).max(256 << 20));
    // The rate limiter must not be what is measured.
    c.cache.prefetch_rate = shoal_server::config::ByteSize(1 << 40);
}

fn shoal_storage_emulation(o: &WarmupOptions) -> shoal_server::config::Emulation {
    shoal_server::config::Emulation {
        latency: o.latency,
        jitter: o.latency / 3,
        bandwidth_bytes_per_sec: o.bandwidth,
    }
}

/// Runs the scenario and writes `warmup.{json,md,svg}` into `out`.
pub async fn run(o: &WarmupOptions, out: &Path) -> Result<WarmupReport, ScenarioError> {
    let dir = tempfile::tempdir().map_err(|e| ScenarioError::Server(e.to_string()))?;
    let server = Embedded::start_in(dir.path(), |c| emulate(c, o)).await?;
    let client = server.client().await?;
    client
        .admin()
        .create_table("warmup", vec![Admin::family("f")], vec![])
        .await?;
    let table = client.table("warmup");
    // Values that do not compress, so the files are as large as the data.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let rows = o.dataset_bytes / 1000;
    let mut batch = Vec::new();
    for i in 0..rows {
        let v: Vec<u8> = (0..1000)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                b' ' + ((x >> 33) % 95) as u8
            })
            .collect();
        batch.push(RowMutation::new(format!("row{i:010}")).put("f", "v", v));
        if batch.len() == 500 || i + 1 == rows {
            for r in table.mutate_many(std::mem::take(&mut batch)).await? {
                r?;
            }
        }
    }
    client.admin().flush("warmup").await?;
    server.stop().await;
    let l2 = dir.path().join("cache");
    let _ = std::fs::remove_dir_all(&l2);

    let start = Instant::now();
    let server = Embedded::start_in(dir.path(), |c| emulate(c, o)).await?;
    let gets_before = server
        .host()
        .status()
        .cache
        .map_or(0, |c| c.object_store_gets);
    let mut progress = Vec::new();
    let (mut done, mut total) = (0, 0);
    let mut finished = false;
    while start.elapsed() < o.timeout {
        if let Some(c) = server.host().status().cache {
            done = c.prefetch_bytes_done;
            total = c.prefetch_bytes_total;
        }
        progress.push((start.elapsed().as_secs_f64(), done));
        if total > 0 && done >= total {
            finished = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let seconds = start.elapsed().as_secs_f64();
    let gets = server
        .host()
        .status()
        .cache
        .map_or(0, |c| c.object_store_gets)
        - gets_before;
    server.stop().await;
    let bps = done as f64 / seconds.max(1e-3);
    let report = WarmupReport {
        prefetch_bytes: total,
        warmed_bytes: done,
        seconds,
        bytes_per_sec: bps,
        fraction_of_request_bandwidth: bps / o.bandwidth as f64,
        latency_ms: o.latency.as_secs_f64() * 1e3,
        bandwidth: o.bandwidth,
        gets,
        progress,
        finished,
    };
    let md = format!(
        "# warmup\n\nPrefetch-on-open after a restart with an empty L2, object store emulated at {:.0} ms first byte and {:.0} MB/s per request.\n\n| figure | value |\n|---|---|\n| bytes to warm | {:.1} MiB |\n| warmed | {:.1} MiB{} |\n| time | {:.1} s |\n| throughput | {:.1} MB/s |\n| fraction of one request's bandwidth | {:.1} % |\n| object-store GETs | {} |\n",
        report.latency_ms,
        o.bandwidth as f64 / 1e6,
        total as f64 / 1048576.0,
        done as f64 / 1048576.0,
        if finished { "" } else { " (timed out)" },
        seconds,
        bps / 1e6,
        report.fraction_of_request_bandwidth * 100.0,
        gets
    );
    let svg = chart(
        "warmup: bytes prefetched into L2 after a restart",
        "seconds since start",
        "MiB warmed",
        &[Line {
            name: "warmed".into(),
            color: "#2563eb",
            points: report
                .progress
                .iter()
                .map(|(t, b)| (*t, *b as f64 / 1048576.0))
                .collect(),
        }],
        &[],
    );
    write_report(out, "warmup", &report, &md, &svg)?;
    Ok(report)
}
