//! `shoal bench scenario NAME`: scripted experiments on an embedded server
//! that write a JSON report, a markdown table and an SVG chart. Each
//! scenario module owns one experiment; `svg` draws the charts.

pub mod bucketcache;
pub mod callcost;
pub mod child;
pub mod errors;
pub mod etcd;
pub mod failover;
pub mod figures;
pub mod import;
pub mod pitr;
pub mod procs;
pub mod rolling;
pub mod snapshot_export;
pub mod snapshots;
pub mod svg;
pub mod timeline;
pub mod warmup;
pub mod writetail;

use serde::Serialize;
use std::path::Path;

/// Why a scenario failed.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The embedded server failed to start.
    #[error("embedded server: {0}")]
    Server(String),
    /// A client call failed.
    #[error(transparent)]
    Client(#[from] shoal_client::ClientError),
    /// Writing the report failed.
    #[error("writing {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// An in-process server on a temporary directory (or a given one).
pub struct Embedded {
    server: shoal_server::RunningServer,
    _dir: Option<tempfile::TempDir>,
}

impl Embedded {
    /// Starts one on a fresh temporary directory with the defaults changed
    /// by `tune`.
    pub async fn start(
        tune: impl FnOnce(&mut shoal_server::ServerConfig),
    ) -> Result<Embedded, ScenarioError> {
        let dir = tempfile::tempdir().map_err(|e| ScenarioError::Server(e.to_string()))?;
        let mut e = Embedded::start_in(dir.path(), tune).await?;
        e._dir = Some(dir);
        Ok(e)
    }

    /// Starts one on `dir` (kept after it stops, for restarts).
    pub async fn start_in(
        dir: &Path,
        tune: impl FnOnce(&mut shoal_server::ServerConfig),
    ) -> Result<Embedded, ScenarioError> {
        let mut c = shoal_server::ServerConfig::default();
        c.server.data_dir = dir.to_path_buf();
        c.server.grpc_addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        c.server.http_addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        c.thrift.addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        c.rest.addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        c.hbase_rpc.addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        tune(&mut c);
        let server = shoal_server::start(c)
            .await
            .map_err(|e| ScenarioError::Server(e.to_string()))?;
        Ok(Embedded { server, _dir: None })
    }

    /// A client connected to it.
    pub async fn client(&self) -> Result<shoal_client::Client, ScenarioError> {
        Ok(shoal_client::Client::connect(&self.server.grpc_addr.to_string()).await?)
    }

    /// The server's host (status, counters).
    pub fn host(&self) -> &shoal_server::Host {
        &self.server.host
    }

    /// Stops it gracefully.
    pub async fn stop(self) {
        self.server.shutdown().await;
    }
}

/// Writes `NAME.json`, `NAME.md` and `NAME.svg` into `out`.
pub fn write_report(
    out: &Path,
    name: &str,
    report: &impl Serialize,
    md: &str,
    svg: &str,
) -> Result<(), ScenarioError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| ScenarioError::Io { path, source }
    };
    std::fs::create_dir_all(out).map_err(io(out))?;
    let json = serde_json::to_string_pretty(report).map_err(|e| ScenarioError::Io {
        path: name.into(),
        source: std::io::Error::other(e),
    })?;
    for (ext, body) in [("json", json.as_str()), ("md", md), ("svg", svg)] {
        let p = out.join(format!("{name}.{ext}"));
        std::fs::write(&p, body).map_err(io(&p))?;
    }
    Ok(())
}
