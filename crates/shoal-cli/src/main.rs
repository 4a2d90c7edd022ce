//! The `shoal` command: `serve` runs a server, `shell` talks to one,
//! `import` and `bulkload` bring HBase's files in, `export` writes them out,
//! `snapshot export` / `snapshot import` move a snapshot between servers.

mod bench;
mod bulkload;
mod credentials;
mod export;
mod import;
mod serve;
mod shell;
mod snapshot_cmd;
mod token;

use clap::{Parser, Subcommand};

/// mimalloc instead of glibc's malloc: a server allocates and frees small
/// buffers for every request on every thread; glibc's malloc took about 12 %
/// of the CPU samples of a write-heavy run here, and with mimalloc the
/// closed-loop single-put maximum rose from about 25k to 35k puts/s.
///
/// Transparent huge pages are off for the process (mimalloc is built
/// without them, and [`disable_transparent_huge_pages`] covers systems whose
/// THP mode is `always`): mimalloc returns freed memory to the kernel, and
/// with huge pages every later touch of it faulted in and zeroed 2 MiB at a
/// time on a request thread. In `shoal bench scenario writetail` at 10k
/// puts/s those faults stalled every writer for up to 80 ms (perf: the
/// request threads in `clear_page_erms`); without huge pages p99.9 went from
/// 64 ms to 15 ms.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Turns transparent huge pages off for this process (Linux only; the
/// kernel applies it to every mapping at fault time, including those made
/// before the call). A failure is ignored: it only costs latency.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn disable_transparent_huge_pages() {
    // SAFETY: prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) takes only integer
    // arguments and reads or writes no memory of ours; it sets a flag on the
    // process's address space. Any error is returned as -1, never UB.
    let _ = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1 as libc::c_ulong, 0, 0, 0) };
}

#[cfg(not(target_os = "linux"))]
fn disable_transparent_huge_pages() {}

/// Shoal: a wide-column database on object storage with a persistent block cache.
#[derive(Debug, Parser)]
#[command(name = "shoal", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a server (embedded default: local directory store, local WAL and cache).
    Serve(serve::ServeArgs),
    /// HBase-shell-like client: interactive, `-e 'cmd'`, or commands from a file / stdin.
    Shell(shell::ShellArgs),
    /// Benchmarks: YCSB core workloads.
    Bench(bench::BenchArgs),
    /// Bearer tokens for servers with auth on (docs/security.md).
    Token(token::TokenArgs),
    /// Import from HBase: `shoal import hbase-snapshot LOCATION SNAPSHOT`
    /// (docs/migrate-from-hbase.md).
    Import(import::ImportArgs),
    /// Load a directory of HBase HFiles (one subdirectory per family) into
    /// a table, as HBase's BulkLoadHFilesTool.
    Bulkload(bulkload::BulkloadArgs),
    /// Export to HBase: `shoal export hfiles --table T --to DIR` writes HFiles
    /// for HBase's bulk load (docs/export-to-hbase.md).
    Export(export::ExportArgs),
    /// Move a snapshot between servers: `shoal snapshot export NAME --to URL`
    /// copies it and its files out of a server's bucket, `shoal snapshot
    /// import URL` into another's (docs/snapshots-export.md).
    Snapshot(snapshot_cmd::SnapshotArgs),
}

fn main() {
    disable_transparent_huge_pages();
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        eprintln!("error: {}", one_line(&e));
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Serve(args) => runtime.block_on(serve::run(args)),
        Command::Bench(args) => {
            if let Ok(f) = std::env::var("SHOAL_BENCH_LOG") {
                tracing_subscriber::fmt()
                    .with_env_filter(tracing_subscriber::EnvFilter::new(f))
                    .with_writer(std::io::stderr)
                    .init();
            }
            runtime.block_on(bench::run(args))
        }
        Command::Token(args) => token::run(args),
        Command::Import(args) => runtime.block_on(import::run(args)),
        Command::Bulkload(args) => runtime.block_on(bulkload::run(args)),
        Command::Export(args) => runtime.block_on(export::run(args)),
        Command::Snapshot(args) => runtime.block_on(snapshot_cmd::run(args)),
        Command::Shell(args) => {
            let code = runtime.block_on(shell::run(args))?;
            drop(runtime);
            std::process::exit(code);
        }
    }
}

/// An error and its causes on one line, each cause only if its text is not
/// already there (libraries often repeat their source's message in their
/// own, and a plain chain would print it again at every level).
fn one_line(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
