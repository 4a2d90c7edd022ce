//! `import`: HBase HFiles into Shoal with `shoal import hbase-snapshot`,
//! against the migration without it (scan HBase with `hbase-client`, write
//! every row into Shoal through its native RPC), in the same run.
//!
//! 1. `BigHFiles` (Java, HBase 2.6.1's writer) writes a bulk-load
//!    directory: one FAST_DIFF + SNAPPY HFile per region of YCSB rows.
//! 2. `ImportBench serve` (a standalone HBase in its own JVM) creates the
//!    pre-split table, bulk-loads the files with `BulkLoadHFiles` and takes
//!    a snapshot: the same cells are now in a real HBase and in a snapshot.
//! 3. `shoal serve` (this binary, a child process, local directory store)
//!    and `shoal import hbase-snapshot` (another child) import the snapshot:
//!    wall time, CPU of both processes, object-store requests (`/metrics`),
//!    until the CLI prints "loaded N regions" (then it verifies by reading
//!    every row back; that part is reported apart).
//! 4. `ImportBench copy` (a third JVM) copies the table from HBase into a
//!    Shoal table of the same schema and boundaries through a
//!    `BufferedMutator`, then the copy is flushed: wall time and the CPU of
//!    HBase, the copier and Shoal. A subset (the first rows of each region)
//!    can be copied; only rates are compared.
//!
//! Rates are in MB (10^6 bytes) of HFile input (bytes on disk) per second;
//! per core divides by the CPU seconds of every process involved.

use super::ScenarioError;
use super::child::{ChildServer, http_get_text};
use super::errors::{err, io};
use super::procs::{self, Finished};
use super::svg::{Bar, bars};
use serde::Serialize;
use shoal_client::{Admin, Client};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// HFile bytes on disk to generate.
    pub bytes: u64,
    /// Regions (one HFile each).
    pub regions: usize,
    /// Rows per region the baseline copies (0: all).
    pub baseline_rows_per_region: u64,
    /// Regions `shoal import` loads at once.
    pub parallel: usize,
    /// The `shoal` binary (server and CLI).
    pub shoal_bin: PathBuf,
    /// `tests/hbase-hfile-gen`.
    pub java_project: PathBuf,
    /// Where the work directory goes (removed at the end).
    pub work_parent: PathBuf,
}

/// The generated input.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Input {
    pub files: u64,
    pub rows: u64,
    pub cells: u64,
    /// HFile bytes on disk (the rates' numerator).
    pub disk_bytes: u64,
    /// HBase KeyValue bytes (key + value + lengths), uncompressed.
    pub kv_bytes: u64,
    /// Row + family + qualifier + value bytes.
    pub payload_bytes: u64,
    /// Writing them with HBase's writer.
    pub generate_seconds: f64,
    /// HBase's own bulk load of them (`BulkLoadHFiles`, files moved in).
    pub hbase_bulkload_seconds: f64,
}

/// Object-store requests and bytes by operation over a phase.
pub type Requests = BTreeMap<String, (u64, u64)>;

/// One measured phase.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Phase {
    pub wall_seconds: f64,
    /// CPU seconds by process.
    pub cpu_seconds: BTreeMap<String, f64>,
    /// HFile-input MB per second of wall time.
    pub mb_per_s: f64,
    /// HFile-input MB per CPU second of all processes.
    pub mb_per_cpu_s: f64,
    /// Shoal's object-store (requests, bytes) by operation.
    pub object_store: Requests,
}

/// The scenario's report.
#[derive(Debug, Clone, Serialize)]
pub struct ImportReport {
    pub build: &'static str,
    pub cores: usize,
    pub regions: usize,
    pub parallel: usize,
    pub input: Input,
    /// `shoal import` until every region is loaded.
    pub import: Phase,
    /// Its closing verification (reads every row back), apart.
    pub import_verify: Phase,
    /// Cells the import reported loaded.
    pub import_cells: u64,
    /// The baseline: rows, cells and the share of the input copied.
    pub baseline_rows: u64,
    pub baseline_cells: u64,
    pub baseline_fraction: f64,
    /// hbase-client scan + BufferedMutator into Shoal.
    pub baseline_copy: Phase,
    /// Then flushing the copy into files.
    pub baseline_flush_seconds: f64,
    /// Copy and flush together (what is compared).
    pub baseline: Phase,
    /// import MB per CPU second / baseline's.
    pub ratio_per_core: f64,
    /// import MB/s / baseline's.
    pub ratio_wall: f64,
}

const TABLE: &str = "usertable";
const COPY: &str = "usercopy";
const SNAPSHOT: &str = "usertable_snap";
const MB: f64 = 1e6;

/// `key=value` fields of a line.
fn fields(line: &str) -> BTreeMap<&str, &str> {
    line.split_whitespace()
        .filter_map(|f| f.split_once('='))
        .collect()
}

fn num<T: std::str::FromStr + Default>(f: &BTreeMap<&str, &str>, k: &str) -> T {
    f.get(k).and_then(|v| v.parse().ok()).unwrap_or_default()
}

fn check(f: &Finished, what: &str, log: &Path) -> Result<(), ScenarioError> {
    if f.status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    Err(err(format!(
        "{what} exited with {}; {} ends:\n{}",
        f.status,
        log.display(),
        lines[lines.len().saturating_sub(30)..].join("\n")
    )))
}

/// A free loopback port (bound and released).
fn free_port() -> Result<u16, ScenarioError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| err(format!("port: {e}")))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| err(format!("port: {e}")))
}

/// The standalone HBase JVM: stopped (stdin closed, then killed) on drop.
struct HBase {
    child: Option<Child>,
    zk: u16,
    root: PathBuf,
    bulkload_seconds: f64,
}

impl HBase {
    fn start(cmd: std::process::Command, log: &Path) -> Result<HBase, ScenarioError> {
        let logf = std::fs::File::create(log).map_err(io(log))?;
        let mut cmd = cmd;
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(logf)
            .spawn()
            .map_err(|e| err(format!("starting java: {e}")))?;
        let stdout = child.stdout.take();
        let mut me = HBase {
            child: Some(child),
            zk: 0,
            root: PathBuf::new(),
            bulkload_seconds: 0.0,
        };
        let stdout = stdout.ok_or_else(|| err("no stdout from HBase"))?;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("ready ") {
                let f = fields(rest);
                me.zk = num(&f, "zk");
                me.bulkload_seconds = num(&f, "bulkload_seconds");
                return Ok(me);
            }
        }
        let text = std::fs::read_to_string(log).unwrap_or_default();
        Err(err(format!("HBase did not start:\n{text}")))
    }

    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Closes its stdin (it stops HBase and exits) and waits up to 30 s.
    fn stop(mut self) {
        if let Some(mut c) = self.child.take() {
            drop(c.stdin.take());
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for HBase {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// CPU seconds of the long-running processes, by name.
fn cpu_of(procs: &[(&str, Option<u32>)]) -> BTreeMap<String, f64> {
    procs
        .iter()
        .filter_map(|(n, p)| Some((n.to_string(), procs::cpu_seconds((*p)?)?)))
        .collect()
}

fn cpu_delta(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    b.iter()
        .map(|(k, v)| (k.clone(), v - a.get(k).copied().unwrap_or(0.0)))
        .collect()
}

/// Object-store requests and bytes by operation, from the server's `/metrics`
/// (also used by `snapshots`).
pub(crate) async fn requests(http: SocketAddr) -> Result<Requests, ScenarioError> {
    let page = http_get_text(http, "/metrics").await.map_err(err)?;
    let reqs = procs::by_op(&page, "shoal_object_store_requests_total");
    let bytes: BTreeMap<String, f64> = procs::by_op(&page, "shoal_object_store_bytes_total")
        .into_iter()
        .collect();
    Ok(reqs
        .into_iter()
        .map(|(op, n)| {
            let b = bytes.get(&op).copied().unwrap_or(0.0);
            (op, (n as u64, b as u64))
        })
        .collect())
}

/// What was counted from `a` to `b`, operations with no request left out.
pub(crate) fn req_delta(a: &Requests, b: &Requests) -> Requests {
    b.iter()
        .map(|(k, (n, by))| {
            let (n0, b0) = a.get(k).copied().unwrap_or((0, 0));
            (k.clone(), (n.saturating_sub(n0), by.saturating_sub(b0)))
        })
        .filter(|(_, (n, _))| *n > 0)
        .collect()
}

fn phase(wall: f64, cpu: BTreeMap<String, f64>, input_bytes: f64, object_store: Requests) -> Phase {
    let total: f64 = cpu.values().sum();
    Phase {
        wall_seconds: wall,
        mb_per_s: input_bytes / MB / wall.max(1e-9),
        mb_per_cpu_s: input_bytes / MB / total.max(1e-9),
        cpu_seconds: cpu,
        object_store,
    }
}

fn config(root: &Path, hbase_rpc: u16) -> String {
    let p = |p: PathBuf| {
        p.display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    };
    format!(
        "[thrift]\naddr = \"127.0.0.1:0\"\n\n[rest]\naddr = \"127.0.0.1:0\"\n\n[hbase_rpc]\naddr = \"127.0.0.1:{hbase_rpc}\"\n\n\
         [server]\ngrpc_addr = \"127.0.0.1:0\"\nhttp_addr = \"127.0.0.1:0\"\ndata_dir = \"{}\"\n\n\
         [object_store]\nurl = \"file://{}\"\n",
        p(root.join("data")),
        p(root.join("bucket")),
    )
}

/// Runs the scenario; reports go to `out` as `import.{json,md,svg}`.
pub async fn run(o: &ImportOptions, out: &Path) -> Result<ImportReport, ScenarioError> {
    std::fs::create_dir_all(&o.work_parent).map_err(io(&o.work_parent))?;
    let work = tempfile::Builder::new()
        .prefix("shoal-bench-import-")
        .tempdir_in(&o.work_parent)
        .map_err(io(&o.work_parent))?;
    let w = work.path();
    let classes = w.join("classes");
    std::fs::create_dir_all(&classes).map_err(io(&classes))?;
    let jtmp = w.join("jtmp");
    std::fs::create_dir_all(&jtmp).map_err(io(&jtmp))?;
    eprintln!("import: compiling {}", o.java_project.display());
    let cp = procs::java_classpath(&o.java_project, &classes).map_err(err)?;

    // 1. The HFiles.
    let bulk = w.join("bulk");
    eprintln!(
        "import: writing {} MB of HFiles in {} files",
        o.bytes / 1_000_000,
        o.regions
    );
    let gen_log = w.join("gen.log");
    let cmd = procs::java(
        &cp,
        "1g",
        &jtmp,
        "shoal.hfilegen.BigHFiles",
        &[
            bulk.display().to_string(),
            o.bytes.to_string(),
            o.regions.to_string(),
        ],
    );
    let mut gen_run = procs::spawn(cmd, &gen_log).map_err(io(&gen_log))?;
    let generated = gen_run.finish().await.map_err(io(&gen_log))?;
    check(&generated, "BigHFiles", &gen_log)?;
    let splits: Vec<String> = generated
        .stdout
        .iter()
        .filter_map(|l| l.strip_prefix("split ").map(str::to_string))
        .collect();
    let wrote = generated
        .stdout
        .iter()
        .find_map(|l| l.strip_prefix("wrote "))
        .map(fields)
        .ok_or_else(|| err("BigHFiles printed no summary"))?;
    let mut input = Input {
        files: num(&wrote, "files"),
        rows: num(&wrote, "rows"),
        cells: num(&wrote, "cells"),
        disk_bytes: num(&wrote, "disk_bytes"),
        kv_bytes: num(&wrote, "kv_bytes"),
        payload_bytes: num(&wrote, "payload_bytes"),
        generate_seconds: num(&wrote, "seconds"),
        hbase_bulkload_seconds: 0.0,
    };
    eprintln!(
        "import: {} files, {} cells, {:.1} MB on disk, {:.1} MB of KeyValues",
        input.files,
        input.cells,
        input.disk_bytes as f64 / MB,
        input.kv_bytes as f64 / MB
    );

    // 2. HBase with the files bulk-loaded and a snapshot.
    eprintln!("import: starting HBase, bulk-loading the files, taking a snapshot");
    let mut args = vec![
        "serve".to_string(),
        w.join("hbase").display().to_string(),
        bulk.display().to_string(),
        TABLE.to_string(),
        SNAPSHOT.to_string(),
    ];
    args.extend(splits.iter().cloned());
    let hbase_cmd = procs::java(&cp, "3g", &jtmp, "shoal.hfilegen.ImportBench", &args);
    let mut hbase = tokio::task::block_in_place(|| HBase::start(hbase_cmd, &w.join("hbase.log")))?;
    // `ImportBench serve <work>` keeps HBase's root in <work>/root.
    hbase.root = w.join("hbase").join("root");
    input.hbase_bulkload_seconds = hbase.bulkload_seconds;
    // HBase copied the files in: the originals are not needed any more (disk).
    std::fs::remove_dir_all(&bulk).map_err(io(&bulk))?;

    // 3. Shoal, and the import.
    std::fs::create_dir_all(w.join("shoal/bucket")).map_err(io(w))?;
    let rpc_port = free_port()?;
    let cfg = w.join("shoal/server.toml");
    std::fs::write(&cfg, config(&w.join("shoal"), rpc_port)).map_err(io(&cfg))?;
    let server = ChildServer::start(&o.shoal_bin, &cfg, &w.join("shoal/server.log"))
        .await
        .map_err(err)?;
    let long = [("shoal_server", server.pid()), ("hbase", hbase.pid())];
    eprintln!(
        "import: shoal import hbase-snapshot ({} regions at once)",
        o.parallel
    );
    let mut cmd = std::process::Command::new(&o.shoal_bin);
    cmd.arg("import")
        .arg("hbase-snapshot")
        .arg(&hbase.root)
        .arg(SNAPSHOT)
        .args(["--table", TABLE, "--parallel"])
        .arg(o.parallel.to_string())
        .arg("--addr")
        .arg(server.grpc.to_string());
    let cli_log = w.join("import-cli.log");
    let r0 = requests(server.http).await?;
    let c0 = cpu_of(&long);
    let mut cli = procs::spawn(cmd, &cli_log).map_err(io(&cli_log))?;
    let (cli_pid, cli_start) = (cli.pid(), cli.started());
    // Until "loaded N regions in X s": the load; after it, the verification.
    let mut loaded: Option<(Instant, BTreeMap<String, f64>, Requests)> = None;
    let mut import_cells = 0u64;
    let on_line = |line: &str, import_cells: &mut u64| {
        if let Some((n, _)) = line.split_once(" cells loaded (") {
            *import_cells = n.trim().parse().unwrap_or(0);
        }
    };
    let finished = loop {
        match cli.stderr.try_recv() {
            Ok((at, line)) => {
                if loaded.is_none() && line.starts_with("loaded ") && line.contains(" regions in ")
                {
                    let mut c = cpu_of(&long);
                    if let Some(p) = cli_pid.and_then(procs::cpu_seconds) {
                        c.insert("shoal_cli".into(), p);
                    }
                    loaded = Some((at, c, requests(server.http).await?));
                }
                on_line(&line, &mut import_cells);
            }
            Err(std::sync::mpsc::TryRecvError::Empty) if !cli.exited() => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(_) => break cli.finish().await.map_err(io(&cli_log))?,
        }
    };
    for (_, line) in cli.stderr.try_iter() {
        on_line(&line, &mut import_cells);
    }
    check(&finished, "shoal import", &cli_log)?;
    let c2 = cpu_of(&long);
    let r2 = requests(server.http).await?;
    let (loaded_at, c1, r1) =
        loaded.ok_or_else(|| err("shoal import never printed \"loaded N regions\""))?;
    let loaded_after = loaded_at.duration_since(cli_start);
    let cli_load = c1.get("shoal_cli").copied().unwrap_or(0.0);
    let cli_total = finished.cpu.unwrap_or(cli_load);
    let mut load_cpu = cpu_delta(&c0, &c1);
    load_cpu.remove("hbase");
    load_cpu.insert("shoal_cli".into(), cli_load);
    let mut verify_cpu = cpu_delta(&c1, &c2);
    verify_cpu.remove("hbase");
    verify_cpu.insert("shoal_cli".into(), (cli_total - cli_load).max(0.0));
    let disk = input.disk_bytes as f64;
    let load_wall = loaded_after.as_secs_f64();
    let import = phase(load_wall, load_cpu, disk, req_delta(&r0, &r1));
    let import_verify = phase(
        (finished.wall.as_secs_f64() - load_wall).max(0.0),
        verify_cpu,
        disk,
        req_delta(&r1, &r2),
    );
    eprintln!(
        "import: loaded in {:.1} s, {:.1} MB/s, {:.1} MB per CPU s",
        import.wall_seconds, import.mb_per_s, import.mb_per_cpu_s
    );

    // 4. The baseline: the same table copied from HBase through hbase-client.
    let client = Client::connect(&server.grpc.to_string()).await?;
    let admin = client.admin();
    let described = admin.describe(TABLE).await?;
    let families = if described.families.is_empty() {
        vec![Admin::family("f")]
    } else {
        described.families.clone()
    };
    admin
        .create_table(
            COPY,
            families,
            splits.iter().map(|s| s.clone().into_bytes()).collect(),
        )
        .await?;
    eprintln!(
        "import: baseline: hbase-client scan -> BufferedMutator into Shoal ({})",
        if o.baseline_rows_per_region == 0 {
            "every row".to_string()
        } else {
            format!("{} rows per region", o.baseline_rows_per_region)
        }
    );
    let copy_log = w.join("copy.log");
    let cmd = procs::java(
        &cp,
        "1g",
        &jtmp,
        "shoal.hfilegen.ImportBench",
        &[
            "copy".into(),
            hbase.zk.to_string(),
            TABLE.into(),
            format!("127.0.0.1:{rpc_port}"),
            COPY.into(),
            o.baseline_rows_per_region.to_string(),
            "2".into(),
        ],
    );
    let r3 = requests(server.http).await?;
    let c3 = cpu_of(&long);
    let mut copier = procs::spawn(cmd, &copy_log).map_err(io(&copy_log))?;
    let copied = copier.finish().await.map_err(io(&copy_log))?;
    check(&copied, "ImportBench copy", &copy_log)?;
    let c4 = cpu_of(&long);
    let r4 = requests(server.http).await?;
    let flush_start = Instant::now();
    admin.flush(COPY).await?;
    let flush_seconds = flush_start.elapsed().as_secs_f64();
    let c5 = cpu_of(&long);
    let r5 = requests(server.http).await?;
    let summary = copied
        .stdout
        .iter()
        .find_map(|l| l.strip_prefix("copied "))
        .map(fields)
        .ok_or_else(|| err("the copier printed no summary"))?;
    let baseline_rows: u64 = num(&summary, "rows");
    let baseline_cells: u64 = num(&summary, "cells");
    let fraction = baseline_cells as f64 / input.cells.max(1) as f64;
    let equiv = disk * fraction;
    let mut copy_cpu = cpu_delta(&c3, &c4);
    copy_cpu.insert("copier".into(), copied.cpu.unwrap_or(0.0));
    let copy_wall = copied.wall.as_secs_f64();
    let baseline_copy = phase(copy_wall, copy_cpu.clone(), equiv, req_delta(&r3, &r4));
    let mut all_cpu = cpu_delta(&c3, &c5);
    all_cpu.insert("copier".into(), copied.cpu.unwrap_or(0.0));
    let baseline = phase(
        copy_wall + flush_seconds,
        all_cpu,
        equiv,
        req_delta(&r3, &r5),
    );
    eprintln!(
        "import: baseline {:.1} MB/s, {:.2} MB per CPU s",
        baseline.mb_per_s, baseline.mb_per_cpu_s
    );

    drop(client);
    server
        .terminate(Duration::from_secs(60))
        .await
        .map_err(err)?;
    tokio::task::block_in_place(|| hbase.stop());

    let report = ImportReport {
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        regions: o.regions,
        parallel: o.parallel,
        input,
        ratio_per_core: import.mb_per_cpu_s / baseline.mb_per_cpu_s.max(1e-9),
        ratio_wall: import.mb_per_s / baseline.mb_per_s.max(1e-9),
        import,
        import_verify,
        import_cells,
        baseline_rows,
        baseline_cells,
        baseline_fraction: fraction,
        baseline_copy,
        baseline_flush_seconds: flush_seconds,
        baseline,
    };
    let md = markdown(&report);
    let svg = chart(&report);
    super::write_report(out, "import", &report, &md, &svg)?;
    drop(work);
    Ok(report)
}

fn ops(r: &Requests) -> String {
    if r.is_empty() {
        return "none".into();
    }
    r.iter()
        .map(|(op, (n, b))| format!("{op} {n} ({:.1} MB)", *b as f64 / MB))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cpus(c: &BTreeMap<String, f64>) -> String {
    c.iter()
        .map(|(k, v)| format!("{k} {v:.1}"))
        .collect::<Vec<_>>()
        .join(" + ")
}

fn row(name: &str, p: &Phase) -> String {
    format!(
        "| {name} | {:.1} | {:.1} | {} = {:.1} | {:.2} | {} |\n",
        p.wall_seconds,
        p.mb_per_s,
        cpus(&p.cpu_seconds),
        p.cpu_seconds.values().sum::<f64>(),
        p.mb_per_cpu_s,
        ops(&p.object_store)
    )
}

/// The markdown report.
pub fn markdown(r: &ImportReport) -> String {
    let i = &r.input;
    let mut s = format!(
        "## import: HBase HFiles into Shoal vs hbase-client copy\n\n\
         {} build, {} cores. Input: {} HFiles (HBase 2.6.1 writer, FAST_DIFF + SNAPPY, 64 KB \
         blocks), {} rows, {} cells: **{:.1} MB on disk**, {:.1} MB of KeyValues, {:.1} MB of \
         row + family + qualifier + value. {} regions; `shoal import --parallel {}`. \
         MB = 10^6 bytes of HFile input (on disk); per CPU s = over the CPU of every process \
         of the phase.\n\n\
         | phase | wall s | MB/s | CPU s | MB per CPU s | object-store requests |\n\
         |---|---:|---:|---|---:|---|\n",
        r.build,
        r.cores,
        i.files,
        i.rows,
        i.cells,
        i.disk_bytes as f64 / MB,
        i.kv_bytes as f64 / MB,
        i.payload_bytes as f64 / MB,
        r.regions,
        r.parallel,
    );
    s += &row("shoal import (load)", &r.import);
    s += &row("its verification (read back)", &r.import_verify);
    s += &row("baseline: copy", &r.baseline_copy);
    s += &row("baseline: copy + flush", &r.baseline);
    s += &format!(
        "\nImport loaded {} cells. Baseline copied {} rows, {} cells ({:.1} % of the input; \
         rates only), flush {:.1} s.\n\n\
         **Import vs baseline: {:.1}x per core, {:.1}x wall.**\n\n\
         Setup (not measured): writing the HFiles {:.1} s; HBase's BulkLoadHFiles {:.1} s.\n",
        r.import_cells,
        r.baseline_rows,
        r.baseline_cells,
        r.baseline_fraction * 100.0,
        r.baseline_flush_seconds,
        r.ratio_per_core,
        r.ratio_wall,
        i.generate_seconds,
        i.hbase_bulkload_seconds,
    );
    s
}

fn chart(r: &ImportReport) -> String {
    let bar = |label: &str, p: &Phase| Bar {
        label: label.into(),
        first: p.mb_per_cpu_s,
        second: 0.0,
    };
    bars(
        "HFile input MB per CPU second",
        "MB/CPU s",
        ["MB per CPU s", ""],
        &[
            bar("shoal import", &r.import),
            bar("hbase-client copy", &r.baseline),
        ],
    )
}
