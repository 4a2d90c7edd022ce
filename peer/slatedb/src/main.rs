//! `shoal-vs-slatedb`: YCSB workloads A and C in-process against Shoal's storage
//! engine and against SlateDB, one after the other, on the same emulated object
//! store and with the same cache budget; prints and writes the ratios Shoal/SlateDB.
//!
//! Modules: `setup` (the shared conditions), `emulate` (the emulating object store
//! under SlateDB), `shoal_sys` and `slate_sys` (the two systems), `record` (SlateDB's
//! value format), `system` (the trait the driver uses), `driver` (load and run
//! phases), `report` (JSON and markdown).

mod driver;
mod emulate;
mod record;
mod report;
mod setup;
mod shoal_sys;
mod slate_sys;
mod system;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use shoal_bench::{CoreWorkload, Properties};

use report::{PhaseResult, Report, SystemResult};
use setup::Setup;
use system::System;

const SLATEDB_VERSION: &str = "0.18.0";
const OBJECT_STORE_VERSION: &str = "0.14.2";
const WORKLOAD_A: &str = include_str!("../../../workloads/workloada");
const WORKLOAD_C: &str = include_str!("../../../workloads/workloadc");

/// YCSB A and C against Shoal and SlateDB in one process.
#[derive(Debug, Parser)]
#[command(name = "shoal-vs-slatedb")]
struct Args {
    /// Records to load (each 10 fields of 100 bytes).
    #[arg(long, default_value_t = 100_000)]
    records: u64,
    /// Measured seconds of each workload.
    #[arg(long, default_value_t = 60)]
    duration: u64,
    /// Warm-up seconds before each workload's measurement (not recorded).
    #[arg(long, default_value_t = 10)]
    warmup: u64,
    /// Concurrent tasks, in the load and in the workloads.
    #[arg(long, default_value_t = 16)]
    threads: usize,
    /// Directory to write slatedb.json and slatedb.md to.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Smoke run: 10,000 records, 10 s phases, 2 s warm-up.
    #[arg(long)]
    quick: bool,
    /// Where the systems' files go (a fresh temporary directory per system).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Which systems to run: shoal, slatedb-durable, slatedb-async.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "shoal,slatedb-durable,slatedb-async"
    )]
    systems: Vec<String>,
    /// Memory cache for data blocks, MiB, given to both systems (default 48:
    /// with 16 MiB for index and filter blocks, the 64 MiB budget).
    #[arg(long, default_value_t = 48)]
    memory_data_mib: u64,
    /// Workload A stops after this many operations (warm-up included), or at
    /// its duration if sooner: every system then runs C after the same
    /// number of updates. Default: by time only.
    #[arg(long)]
    a_operations: Option<u64>,
    /// Shoal's data block size in bytes (its family BLOCKSIZE); default
    /// Shoal's own default, 64 KiB. SlateDB keeps its 4 KiB.
    #[arg(long)]
    shoal_block_size: Option<usize>,
    /// MiB of Shoal's memory data budget given to its row cache (whole rows
    /// for point gets) instead of its block pool; default 0. The total stays
    /// the same: `--memory-data-mib` is split, SlateDB's is not changed.
    #[arg(long, default_value_t = 0)]
    shoal_row_cache_mib: u64,
    /// Shoal's L2 reads use `O_DIRECT` (`cache.l2_page_cache = false`)
    /// instead of Shoal's default, the page cache (as SlateDB's disk cache
    /// reads).
    #[arg(long)]
    shoal_l2_direct: bool,
}

impl Args {
    /// The shared conditions, rooted at `dir`, with this run's overrides.
    fn setup(&self, dir: PathBuf) -> Setup {
        let mut setup = Setup::standard(dir);
        setup.memory_data_bytes = self.memory_data_mib << 20;
        setup.shoal_block_bytes = self.shoal_block_size;
        setup.shoal_rows_bytes = (self.shoal_row_cache_mib << 20).min(setup.memory_data_bytes);
        setup.shoal_l2_page_cache = !self.shoal_l2_direct;
        setup
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = Args::parse();
    if args.quick {
        args.records = 10_000;
        args.duration = 10;
        args.warmup = 2;
    }
    let data_dir = args.data_dir.clone().unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("creating {}", data_dir.display()))?;
    let mut systems = Vec::new();
    for name in &args.systems {
        let dir = tempfile::Builder::new()
            .prefix("shoal-vs-slatedb-")
            .tempdir_in(&data_dir)
            .context("creating a data directory")?;
        let setup = args.setup(dir.path().to_path_buf());
        eprintln!("== {name} in {}", dir.path().display());
        let result = match name.as_str() {
            "shoal" => run_shoal(&setup, &args).await?,
            "slatedb-durable" => run_slate(&setup, &args, true).await?,
            "slatedb-async" => run_slate(&setup, &args, false).await?,
            other => anyhow::bail!("unknown system {other:?}"),
        };
        systems.push(result);
    }
    let report = Report {
        slatedb_version: SLATEDB_VERSION.into(),
        object_store_version: OBJECT_STORE_VERSION.into(),
        conditions: conditions(&args, &args.setup(data_dir)),
        ratios: Report::ratios(&systems),
        systems,
    };
    let md = report.markdown();
    println!("{md}");
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(out.join("slatedb.json"), json).context("writing slatedb.json")?;
        std::fs::write(out.join("slatedb.md"), md).context("writing slatedb.md")?;
        eprintln!("wrote {}/slatedb.json and slatedb.md", out.display());
    }
    Ok(())
}

async fn run_shoal(setup: &Setup, args: &Args) -> anyhow::Result<SystemResult> {
    let fields = workload(WORKLOAD_A, args.records)?.field_count;
    let sys = Arc::new(shoal_sys::Shoal::open(setup, fields).await?);
    let durability = "acknowledged after the local WAL group commit is fsync'd".to_string();
    let result = bench("Shoal", durability, &sys, args).await?;
    let sys = Arc::into_inner(sys).context("Shoal still in use after the run")?;
    sys.close().await?;
    Ok(result)
}

async fn run_slate(setup: &Setup, args: &Args, durable: bool) -> anyhow::Result<SystemResult> {
    // The load never awaits durability (it is flushed afterwards): awaiting one WAL
    // upload per write would make the load take minutes without telling anything.
    let sys = Arc::new(slate_sys::Slate::open(setup, false).await?);
    let (label, durability) = if durable {
        (
            "SlateDB (await_durable=true)",
            "acknowledged once its WAL object is on the object store (await_durable)",
        )
    } else {
        (
            "SlateDB (await_durable=false)",
            "acknowledged once in the memtable; WAL uploaded every 100 ms",
        )
    };
    let load_done = |s: &slate_sys::Slate| s.set_durable(durable);
    let result = bench_with(label, durability.into(), &sys, args, load_done).await?;
    let sys = Arc::into_inner(sys).context("SlateDB still in use after the run")?;
    sys.close().await?;
    Ok(result)
}

async fn bench<S: System>(
    label: &str,
    durability: String,
    sys: &Arc<S>,
    args: &Args,
) -> anyhow::Result<SystemResult> {
    bench_with(label, durability, sys, args, |_| {}).await
}

/// Load, settle, workload A, workload C; `after_load` runs before A.
async fn bench_with<S: System>(
    label: &str,
    durability: String,
    sys: &Arc<S>,
    args: &Args,
    after_load: impl FnOnce(&S),
) -> anyhow::Result<SystemResult> {
    let (warmup, duration) = (
        Duration::from_secs(args.warmup),
        Duration::from_secs(args.duration),
    );
    let w = Arc::new(workload(WORKLOAD_A, args.records)?);
    let load = driver::load(sys, &w, args.threads).await?;
    let load_state = sys.state();
    eprintln!(
        "  load: {} records in {:.1} s; {load_state}",
        args.records,
        load.elapsed.as_secs_f64()
    );
    let layout = sys.settle().await?;
    eprintln!("  settled: {layout}");
    after_load(sys);
    let a = driver::run(sys, &w, args.threads, warmup, duration, args.a_operations).await?;
    let a_state = sys.state();
    eprintln!(
        "  A: {:.0} ops/s, {} operations measured; {a_state}",
        a.ops_per_sec(),
        a.measurements.total()
    );
    let c = Arc::new(workload(WORKLOAD_C, args.records)?);
    let c = driver::run(sys, &c, args.threads, warmup, duration, None).await?;
    let c_state = sys.state();
    eprintln!("  C: {:.0} ops/s; {c_state}", c.ops_per_sec());
    Ok(SystemResult {
        label: label.into(),
        durability,
        load: PhaseResult::from(&load, load_state),
        layout,
        workload_a: PhaseResult::from(&a, a_state),
        workload_c: PhaseResult::from(&c, c_state),
    })
}

/// YCSB's property file with `recordcount` set.
fn workload(text: &str, records: u64) -> anyhow::Result<CoreWorkload> {
    let mut p = Properties::default();
    p.parse(text);
    p.set(&format!("recordcount={records}"))?;
    p.set("operationcount=1000000000")?;
    Ok(CoreWorkload::from_properties(&p)?)
}

fn conditions(args: &Args, setup: &Setup) -> serde_json::Value {
    serde_json::json!({
        "records": args.records,
        "fields": 10,
        "field_bytes": 100,
        "threads": args.threads,
        "warmup_s": args.warmup,
        "duration_s": args.duration,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "object_store": {
            "backend": "local directory",
            "latency_ms": setup.model.latency.as_millis() as u64,
            "jitter_ms": setup.model.jitter.as_millis() as u64,
            "bandwidth_bytes_per_sec": setup.model.bandwidth_bytes_per_sec,
        },
        "memory_cache_bytes": { "data": setup.memory_data_bytes, "meta": setup.memory_meta_bytes },
        "disk_cache_bytes": setup.disk_bytes,
        "write_buffer_bytes": setup.write_buffer_bytes,
        "shoal_block_bytes": setup.shoal_block_bytes,
        "shoal_rows_bytes": setup.shoal_rows_bytes,
        "shoal_l2_page_cache": setup.shoal_l2_page_cache,
        "a_operations": args.a_operations,
    })
}
