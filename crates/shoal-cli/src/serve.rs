//! `shoal serve`: runs a server until SIGTERM or Ctrl-C. With no flags it
//! is the embedded default: object store, WAL and L2 cache all in local
//! directories under `--data-dir` (default `./shoal-data`), no other service.

use anyhow::Context;
use shoal_server::ServerConfig;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Arguments of `shoal serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// TOML configuration file (every key: docs/config.md).
    #[arg(long, short = 'c')]
    config: Option<PathBuf>,
    /// Data directory (overrides `server.data_dir`).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// gRPC listen address (overrides `server.grpc_addr`).
    #[arg(long)]
    grpc_addr: Option<SocketAddr>,
    /// HTTP listen address for /metrics and the status page (overrides `server.http_addr`).
    #[arg(long)]
    http_addr: Option<SocketAddr>,
    /// Thrift1 gateway listen address (overrides `thrift.addr`).
    #[arg(long)]
    thrift_addr: Option<SocketAddr>,
    /// HBase REST gateway listen address (overrides `rest.addr`).
    #[arg(long)]
    rest_addr: Option<SocketAddr>,
    /// HBase native RPC listen address (overrides `hbase_rpc.addr`).
    #[arg(long)]
    hbase_rpc_addr: Option<SocketAddr>,
    /// Serve the read-only ZooKeeper registry (for hbase-client 2.0–2.4 and
    /// asynchbase) here: turns `zk_registry.enabled` on and overrides
    /// `zk_registry.addr`.
    #[arg(long)]
    zk_registry_addr: Option<SocketAddr>,
    /// Log filter, e.g. `info` or `shoal_server=debug` (or env RUST_LOG).
    #[arg(long, default_value = "info")]
    log: String,
    /// A measuring tool, never for data (`server.noop`): gets answer an
    /// empty row, mutations are acknowledged and dropped.
    #[arg(long)]
    noop: bool,
}

/// Runs the server until SIGTERM or Ctrl-C, then stops gracefully.
pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| args.log.clone());
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&filter)
                .with_context(|| format!("bad log filter {filter:?}"))?,
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let mut config = match &args.config {
        Some(path) => ServerConfig::from_file(path)?,
        None => ServerConfig::default(),
    };
    if let Some(d) = args.data_dir {
        config.server.data_dir = d;
    }
    if let Some(a) = args.grpc_addr {
        config.server.grpc_addr = a;
    }
    if let Some(a) = args.http_addr {
        config.server.http_addr = a;
    }
    if let Some(a) = args.thrift_addr {
        config.thrift.addr = a;
    }
    if let Some(a) = args.rest_addr {
        config.rest.addr = a;
    }
    if let Some(a) = args.hbase_rpc_addr {
        config.hbase_rpc.addr = a;
    }
    if let Some(a) = args.zk_registry_addr {
        config.zk_registry.enabled = true;
        config.zk_registry.addr = a;
    }
    if args.noop {
        config.server.noop = true;
    }
    config.validate()?;
    // A common default soft limit is 1,024 descriptors; the hard limit is
    // usually far higher. Take it, as servers do, before opening anything.
    let files = shoal_server::listen::raise_open_files_limit().map_err(anyhow::Error::msg)?;
    let shown = |v: Option<u64>| v.map_or("unlimited".to_string(), |n| n.to_string());
    tracing::info!(
        before = %shown(files.before),
        soft = %shown(files.soft),
        hard = %shown(files.hard),
        "open-files limit"
    );
    let data_dir = config.server.data_dir.clone();
    let server = shoal_server::start(config).await?;
    let data = server.host.data_location();
    // Printed on stdout, one fact per line, for people and for scripts.
    println!("shoal {} serving", env!("CARGO_PKG_VERSION"));
    let cfg = server.host.config();
    {
        use shoal_server::config::TlsListenerName as L;
        let tls = |l: L| if cfg.tls.covers(l) { " (TLS)" } else { "" };
        let http = if cfg.tls.covers(L::Http) {
            "https"
        } else {
            "http"
        };
        println!("gRPC:   {}{}", server.grpc_addr, tls(L::Grpc));
        println!(
            "HTTP:   {http}://{}/ (status page), {http}://{}/metrics",
            server.http_addr, server.http_addr
        );
        if let Some(a) = server.thrift_addr {
            println!(
                "Thrift: {a} (HBase Thrift1 gateway: happybase){}",
                tls(L::Thrift)
            );
        }
        if let Some(a) = server.rest_addr {
            let scheme = if cfg.tls.covers(L::Rest) {
                "https"
            } else {
                "http"
            };
            println!("REST:   {scheme}://{a}/ (HBase REST gateway: RemoteHTable, curl)");
        }
        if let Some(a) = server.hbase_rpc_addr {
            println!(
                "HBase:  {a} (native RPC: hbase-client 2.5+ with RpcConnectionRegistry){}",
                tls(L::HbaseRpc)
            );
        }
        if let Some(a) = server.zk_registry_addr {
            println!(
                "ZooKeeper: {a} (read-only registry: hbase-client 2.0-2.4, asynchbase; znode parent {})",
                cfg.zk_registry.znode_parent
            );
        }
        if cfg.auth.enabled {
            println!(
                "auth:   on (tokens: {}; Thrift calls run as {:?})",
                cfg.auth.tokens.display(),
                cfg.auth.thrift_user
            );
        }
    }
    println!("data:   {} (objects: {data})", data_dir.display());
    println!("shell:  shoal shell --addr {}", server.grpc_addr);
    if server.host.config().server.noop {
        println!(
            "NO-OP:  writes are acknowledged and dropped, reads answer empty rows (a measuring tool)"
        );
    }
    wait_for_signal().await?;
    tracing::info!("stopping: finishing in-flight calls, flushing regions");
    server.shutdown().await;
    tracing::info!("stopped");
    Ok(())
}

async fn wait_for_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("waiting for Ctrl-C")?,
        _ = term.recv() => {}
    }
    Ok(())
}
