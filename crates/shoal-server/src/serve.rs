//! Starting and stopping a server: bind the gRPC and HTTP listeners, open
//! the host (storage, catalog, regions), run the services (connections are
//! handled by `crate::listen`) and the periodic work, and stop gracefully
//! (stop accepting, close idle connections, finish in-flight calls, close
//! regions, make the cache durable, close the WAL).

use crate::config::ServerConfig;
use crate::grpc::{AdminService, DataService};
use crate::host::{Host, StartError};
use crate::listen::{ConnectionPolicy, Connections};
use crate::metrics::{ConnectionMetrics, ConnectionMetricsSnapshot, History};
use shoal_proto::v1::admin_server::AdminServer;
use shoal_proto::v1::data_server::DataServer;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A listener could not bind.
    #[error("cannot listen on {addr} ({what}): {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// gRPC or HTTP.
        what: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The threads that serve gRPC connections could not start.
    #[error("cannot start the gRPC serving threads: {0}")]
    Threads(std::io::Error),
    /// Storage, catalog or regions failed to open.
    #[error(transparent)]
    Start(#[from] StartError),
}

/// A running server.
pub struct RunningServer {
    /// Where gRPC listens.
    pub grpc_addr: SocketAddr,
    /// Where the Thrift gateway listens (None: `thrift.enabled` is false).
    pub thrift_addr: Option<SocketAddr>,
    /// Where HBase's native RPC listens (None: `hbase_rpc.enabled` is
    /// false, or auth is on without `auth.hbase_rpc_user`).
    pub hbase_rpc_addr: Option<SocketAddr>,
    /// Where HTTP listens.
    pub http_addr: SocketAddr,
    /// The regions and storage.
    pub host: Host,
    stop: watch::Sender<bool>,
    /// The listeners' connection counters.
    connections: Arc<ConnectionMetrics>,
    /// The gRPC and HTTP servers: they finish in-flight calls on stop.
    servers: Vec<tokio::task::JoinHandle<()>>,
    /// Periodic work: aborted on stop.
    periodic: Vec<tokio::task::JoinHandle<()>>,
    /// Cluster mode: the node (drained on stop).
    node: Option<crate::cluster::ClusterNode>,
    /// The threads gRPC connections are served on (stopped last).
    serving: Option<Arc<crate::listen::ServingThreads>>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("grpc_addr", &self.grpc_addr)
            .field("http_addr", &self.http_addr)
            .finish()
    }
}

/// Binds, opens and starts serving.
pub async fn start(config: ServerConfig) -> Result<RunningServer, ServeError> {
    let bind = |addr: SocketAddr, what: &'static str| async move {
        tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, what, source })
    };
    let grpc_listener = bind(config.server.grpc_addr, "gRPC").await?;
    let http_listener = bind(config.server.http_addr, "HTTP").await?;
    let grpc_addr = grpc_listener
        .local_addr()
        .map_err(|source| ServeError::Bind {
            addr: config.server.grpc_addr,
            what: "gRPC",
            source,
        })?;
    let http_addr = http_listener
        .local_addr()
        .map_err(|source| ServeError::Bind {
            addr: config.server.http_addr,
            what: "HTTP",
            source,
        })?;
    let thrift_listener = if config.thrift.enabled {
        Some(bind(config.thrift.addr, "Thrift").await?)
    } else {
        None
    };
    let thrift_addr = match &thrift_listener {
        Some(l) => Some(l.local_addr().map_err(|source| ServeError::Bind {
            addr: config.thrift.addr,
            what: "Thrift",
            source,
        })?),
        None => None,
    };
    let native_caller = crate::security::Security::hbase_rpc_caller_for(&config.auth);
    if config.hbase_rpc.enabled && native_caller.is_none() {
        tracing::warn!(
            "auth is on and auth.hbase_rpc_user is not set: HBase's native RPC port stays closed"
        );
    }
    let hbase_rpc_listener = match (&native_caller, config.hbase_rpc.enabled) {
        (Some(_), true) => Some(bind(config.hbase_rpc.addr, "HBase native RPC").await?),
        _ => None,
    };
    let hbase_rpc_addr = match &hbase_rpc_listener {
        Some(l) => Some(l.local_addr().map_err(|source| ServeError::Bind {
            addr: config.hbase_rpc.addr,
            what: "HBase native RPC",
            source,
        })?),
        None => None,
    };
    {
        use crate::config::TlsListenerName as L;
        let (tls, auth) = (&config.tls, config.auth.enabled);
        crate::listen::warn_if_exposed(grpc_addr, "gRPC", tls.covers(L::Grpc), auth);
        crate::listen::warn_if_exposed(http_addr, "HTTP", tls.covers(L::Http), auth);
        if let Some(a) = thrift_addr {
            crate::listen::warn_if_exposed(a, "Thrift", tls.covers(L::Thrift), auth);
        }
        if let Some(a) = hbase_rpc_addr {
            crate::listen::warn_if_exposed(a, "HBase native RPC", tls.covers(L::HbaseRpc), auth);
        }
    }
    let native_identity = hbase_rpc_addr
        .map(|a| crate::hbase_rpc::ServerIdentity::new(&config.hbase_rpc.advertise_addr, a));
    let (host, node) = match config.cluster.clone() {
        None => (Host::open(config).await?, None),
        Some(section) => {
            let native = native_identity
                .as_ref()
                .map(|m| m.address())
                .unwrap_or_default();
            let joined = crate::cluster::join(&section, grpc_addr, &native).await?;
            let state = joined.state.clone();
            let run = joined.wal_run.clone();
            let host = Host::open_cluster(config, state, &run).await?;
            let node = crate::cluster::ClusterNode::start(joined, host.clone());
            (host, Some(node))
        }
    };
    host.set_address(match host.config().cluster.as_ref() {
        Some(c) if !c.advertise_addr.is_empty() => c.advertise_addr.clone(),
        _ => grpc_addr.to_string(),
    });
    // After the host opened: the open-files limit the cap is fitted to is
    // the one the server runs with.
    let connection_metrics = Arc::new(ConnectionMetrics::default());
    let connections = Connections::new(
        ConnectionPolicy::from_config(&host.config().server),
        connection_metrics.clone(),
    );
    let (stop, stopped) = watch::channel(false);
    let mut servers = Vec::new();
    let mut periodic = Vec::new();

    let routes = tonic::service::Routes::new(
        DataServer::new(DataService::new(host.clone()))
            .max_decoding_message_size(crate::config::limits::MAX_MESSAGE_BYTES)
            .max_encoding_message_size(crate::config::limits::MAX_MESSAGE_BYTES),
    )
    .add_service(
        AdminServer::new(AdminService::new(host.clone()))
            .max_decoding_message_size(crate::config::limits::MAX_MESSAGE_BYTES),
    );
    let budget = crate::admission::RequestBudget::new(
        host.config().limits.request_bytes_in_flight.0,
        host.requests().clone(),
    );
    let serving = match host.config().server.serving_threads {
        0 => None,
        n => Some(crate::listen::ServingThreads::start(n).map_err(ServeError::Threads)?),
    };
    let frames: Arc<dyn crate::listen::SecondProtocol> =
        Arc::new(crate::frames::FramesDoor::new(host.clone(), budget.clone()));
    servers.push(crate::listen::serve_grpc(
        grpc_listener,
        routes,
        budget,
        connections.clone(),
        serving.clone(),
        stopped.clone(),
        host.security().clone(),
        Some(frames),
    ));

    let history = Arc::new(History::default());
    let view_host = host.clone();
    let view = Arc::new(move || view_host.status());
    periodic.push(crate::metrics::spawn_sampler(
        history.clone(),
        view.clone(),
        Duration::from_secs(10),
    ));
    let router = crate::http::router(crate::http::HttpState {
        view,
        history,
        connections: connection_metrics.clone(),
        auth: crate::http::auth::AuthState {
            security: host.security().clone(),
            tls: host
                .config()
                .tls
                .covers(crate::config::TlsListenerName::Http),
        },
    });
    if let Some(listener) = thrift_listener {
        let t = &host.config().thrift;
        let limits = crate::thrift::wire::Limits {
            max_message_bytes: usize::try_from(t.max_message_bytes.0).unwrap_or(usize::MAX),
            max_depth: 64,
        };
        let scanners = crate::thrift::Scanners::new(
            t.scanner_timeout,
            t.max_scanners,
            limits.max_message_bytes / 4,
        );
        let gateway = Arc::new(crate::thrift::Gateway::new(host.clone(), scanners));
        servers.push(crate::thrift::serve_thrift(
            listener,
            gateway,
            connections.clone(),
            limits,
            stopped.clone(),
            host.security().tls().cloned(),
            serving.clone(),
        ));
    }
    if let (Some(listener), Some(me), Some(caller)) =
        (hbase_rpc_listener, native_identity, native_caller)
    {
        let n = &host.config().hbase_rpc;
        let scanners = crate::hbase_rpc::Scanners::new(n.scanner_timeout, n.max_scanners);
        let rpc = Arc::new(
            crate::hbase_rpc::NativeRpc::new(host.clone(), caller, me, scanners)
                .with_heartbeat(n.heartbeat_interval),
        );
        let policy = connections.policy();
        let limits = crate::hbase_rpc::ConnectionLimits {
            max_message_bytes: usize::try_from(n.max_message_bytes.0).unwrap_or(usize::MAX),
            max_calls: n.max_calls_per_connection,
            handshake: policy.handshake_timeout,
            idle: policy.idle_timeout,
        };
        servers.push(crate::hbase_rpc::serve_hbase_rpc(
            listener,
            rpc,
            connections.clone(),
            limits,
            stopped.clone(),
            host.security().tls().cloned(),
            serving.clone(),
        ));
    }
    servers.push(crate::listen::serve_http(
        http_listener,
        router,
        connections,
        stopped,
        host.security().tls().cloned(),
    ));
    periodic.push(host.spawn_background());
    periodic.push(reload_on_sighup(host.security().clone()));
    Ok(RunningServer {
        grpc_addr,
        http_addr,
        thrift_addr,
        hbase_rpc_addr,
        host,
        stop,
        connections: connection_metrics,
        servers,
        periodic,
        node,
        serving,
    })
}

/// Reads the token file and the TLS files again on every SIGHUP.
fn reload_on_sighup(security: Arc<crate::security::Security>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hup = match signal(SignalKind::hangup()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGHUP: tokens and certificates are not reloaded");
                return;
            }
        };
        while hup.recv().await.is_some() {
            if let Err(e) = security.reload() {
                tracing::error!(error = %e, "SIGHUP: reload failed; the tokens and certificates in use stay");
            }
        }
    })
}

impl RunningServer {
    /// Reads the token file and the TLS files again (what SIGHUP does).
    pub fn reload_security(&self) -> Result<(), crate::security::SecurityError> {
        self.host.security().reload()
    }

    /// The listeners' connection counters now (also on `/metrics`).
    pub fn connections(&self) -> ConnectionMetricsSnapshot {
        self.connections.snapshot()
    }

    /// Stops gracefully: no new connections, connections with no call in
    /// flight close at once, in-flight calls finish (up to the configured
    /// timeout), regions close (memstores flushed), the cache
    /// and the WAL close.
    pub async fn shutdown(self) {
        // Cluster mode: hand the regions over first (each flushed, so no
        // replay is needed), serving all the while.
        if let Some(node) = self.node {
            node.drain_and_leave().await;
        }
        let timeout = self.host.config().server.shutdown_timeout;
        let _ = self.stop.send(true);
        for task in &self.periodic {
            task.abort();
        }
        let finish = futures::future::join_all(self.servers);
        if tokio::time::timeout(timeout, finish).await.is_err() {
            tracing::warn!(
                ?timeout,
                "in-flight calls did not finish in time; stopping anyway"
            );
        }
        self.host.shutdown().await;
        // Last: work that calls spawned runs on the serving threads.
        if let Some(serving) = self.serving {
            serving.stop().await;
        }
    }
}
