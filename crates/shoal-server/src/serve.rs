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
use tokio::net::TcpListener;
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
    /// Where HBase's REST gateway listens (None: `rest.enabled` is false).
    pub rest_addr: Option<SocketAddr>,
    /// Where HBase's native RPC listens (None: `hbase_rpc.enabled` is
    /// false, or auth is on without `auth.hbase_rpc_user`).
    pub hbase_rpc_addr: Option<SocketAddr>,
    /// Where the read-only ZooKeeper registry listens (None:
    /// `zk_registry.enabled` is false, or the native RPC is closed).
    pub zk_registry_addr: Option<SocketAddr>,
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
    let native_caller = crate::security::Security::hbase_rpc_caller_for(&config.auth);
    let listeners = Listeners::bind(&config, native_caller.is_some()).await?;
    listeners.warn_if_exposed(&config);
    let native_identity = listeners.native_identity(&config);
    let (host, node) = open_host(config, listeners.grpc.addr, native_identity.as_ref()).await?;
    let (grpc_addr, http_addr) = (listeners.grpc.addr, listeners.http.addr);
    let thrift_addr = listeners.thrift.as_ref().map(|b| b.addr);
    let rest_addr = listeners.rest.as_ref().map(|b| b.addr);
    let hbase_rpc_addr = listeners.hbase_rpc.as_ref().map(|b| b.addr);
    let zk_registry_addr = listeners.zk_registry.as_ref().map(|b| b.addr);
    // After the host opened: the open-files limit the cap is fitted to is
    // the one the server runs with.
    let connection_metrics = Arc::new(ConnectionMetrics::default());
    let (stop, stopped) = watch::channel(false);
    let shared = Shared {
        connections: Connections::new(
            ConnectionPolicy::from_config(&host.config().server),
            connection_metrics.clone(),
        ),
        stopped,
        serving: serving_threads(&host)?,
    };

    let mut servers = vec![spawn_grpc(&host, listeners.grpc.listener, &shared)];
    let (router, sampler) = http_router(&host, connection_metrics.clone());
    if let Some(thrift) = listeners.thrift {
        servers.push(spawn_thrift(&host, thrift.listener, &shared));
    }
    if let (Some(zk), Some(me)) = (listeners.zk_registry, native_identity.clone()) {
        servers.push(spawn_zk_registry(&host, zk.listener, me, &shared));
    }
    if let Some(rest) = listeners.rest {
        servers.push(spawn_rest(&host, rest.listener, &shared));
    }
    if let (Some(hbase_rpc), Some(me), Some(caller)) =
        (listeners.hbase_rpc, native_identity, native_caller)
    {
        servers.push(spawn_hbase_rpc(
            &host,
            hbase_rpc.listener,
            me,
            caller,
            &shared,
        ));
    }
    servers.push(crate::listen::serve_http(
        listeners.http.listener,
        crate::metrics::Listener::Http,
        router,
        shared.connections,
        shared.stopped,
        host.security().tls().cloned(),
    ));
    let periodic = vec![
        sampler,
        host.spawn_background(),
        reload_on_sighup(host.security().clone()),
    ];
    Ok(RunningServer {
        grpc_addr,
        http_addr,
        thrift_addr,
        rest_addr,
        hbase_rpc_addr,
        zk_registry_addr,
        host,
        stop,
        connections: connection_metrics,
        servers,
        periodic,
        node,
        serving: shared.serving,
    })
}

/// A bound listener and the address it got.
struct Bound {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
}

impl Bound {
    /// Binds `addr` for the `what` listener (gRPC, HTTP, ...).
    async fn listen(addr: SocketAddr, what: &'static str) -> Result<TcpListener, ServeError> {
        TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, what, source })
    }

    /// `listener`, bound to `addr` for `what`, with the address it got
    /// (the port chosen when `addr` asked for any).
    fn new(
        listener: TcpListener,
        addr: SocketAddr,
        what: &'static str,
    ) -> Result<Bound, ServeError> {
        let local =
            listener
                .local_addr()
                .map_err(|source| ServeError::Bind { addr, what, source })?;
        Ok(Bound {
            listener,
            addr: local,
        })
    }

    /// Binds `addr` for `what`: the listener and the address it got.
    async fn bind(addr: SocketAddr, what: &'static str) -> Result<Bound, ServeError> {
        Bound::new(Bound::listen(addr, what).await?, addr, what)
    }
}

/// The listeners a server serves on.
struct Listeners {
    grpc: Bound,
    http: Bound,
    /// None: `thrift.enabled` is false.
    thrift: Option<Bound>,
    /// None: `rest.enabled` is false.
    rest: Option<Bound>,
    /// None: `hbase_rpc.enabled` is false, or no caller is configured for
    /// it (auth is on without `auth.hbase_rpc_user`).
    hbase_rpc: Option<Bound>,
    /// None: `zk_registry.enabled` is false, or the native RPC it points
    /// clients at is closed.
    zk_registry: Option<Bound>,
}

impl Listeners {
    /// Binds gRPC and HTTP, then Thrift and HBase's native RPC if they are
    /// on (the native RPC also needs a caller its calls act as: warned
    /// about when it is missing).
    async fn bind(config: &ServerConfig, native_caller: bool) -> Result<Listeners, ServeError> {
        let grpc = Bound::listen(config.server.grpc_addr, "gRPC").await?;
        let http = Bound::listen(config.server.http_addr, "HTTP").await?;
        let grpc = Bound::new(grpc, config.server.grpc_addr, "gRPC")?;
        let http = Bound::new(http, config.server.http_addr, "HTTP")?;
        let thrift = if config.thrift.enabled {
            Some(Bound::bind(config.thrift.addr, "Thrift").await?)
        } else {
            None
        };
        let rest = if config.rest.enabled {
            Some(Bound::bind(config.rest.addr, "REST").await?)
        } else {
            None
        };
        if config.hbase_rpc.enabled && !native_caller {
            tracing::warn!(
                "auth is on and auth.hbase_rpc_user is not set: HBase's native RPC port stays closed"
            );
        }
        let hbase_rpc = if native_caller && config.hbase_rpc.enabled {
            Some(Bound::bind(config.hbase_rpc.addr, "HBase native RPC").await?)
        } else {
            None
        };
        let zk_registry = if config.zk_registry.enabled && hbase_rpc.is_some() {
            Some(Bound::bind(config.zk_registry.addr, "ZooKeeper registry").await?)
        } else {
            if config.zk_registry.enabled {
                tracing::warn!(
                    "HBase's native RPC port is closed: the ZooKeeper registry, which points \
                     clients at it, stays closed too"
                );
            }
            None
        };
        Ok(Listeners {
            grpc,
            http,
            thrift,
            rest,
            hbase_rpc,
            zk_registry,
        })
    }

    /// Warns about each listener reachable from other hosts without TLS
    /// or without auth.
    fn warn_if_exposed(&self, config: &ServerConfig) {
        use crate::config::TlsListenerName as L;
        let (tls, auth) = (&config.tls, config.auth.enabled);
        crate::listen::warn_if_exposed(self.grpc.addr, "gRPC", tls.covers(L::Grpc), auth);
        crate::listen::warn_if_exposed(self.http.addr, "HTTP", tls.covers(L::Http), auth);
        if let Some(b) = &self.thrift {
            crate::listen::warn_if_exposed(b.addr, "Thrift", tls.covers(L::Thrift), auth);
        }
        if let Some(b) = &self.rest {
            crate::listen::warn_if_exposed(b.addr, "REST", tls.covers(L::Rest), auth);
        }
        if let Some(b) = &self.hbase_rpc {
            crate::listen::warn_if_exposed(
                b.addr,
                "HBase native RPC",
                tls.covers(L::HbaseRpc),
                auth,
            );
        }
        // The ZooKeeper registry is not warned about: read-only, it tells
        // only what the native RPC's own registry tells anyone.
    }

    /// How this server names itself to HBase's clients (None without the
    /// native RPC listener).
    fn native_identity(&self, config: &ServerConfig) -> Option<crate::hbase_rpc::ServerIdentity> {
        self.hbase_rpc.as_ref().map(|b| {
            crate::hbase_rpc::ServerIdentity::new(&config.hbase_rpc.advertise_addr, b.addr)
        })
    }
}

/// Opens the host (storage, catalog, regions): alone, or in cluster mode
/// after joining the cluster (whose node then runs); then records the
/// address clients reach it at.
async fn open_host(
    config: ServerConfig,
    grpc_addr: SocketAddr,
    native_identity: Option<&crate::hbase_rpc::ServerIdentity>,
) -> Result<(Host, Option<crate::cluster::ClusterNode>), ServeError> {
    let (host, node) = match config.cluster.clone() {
        None => (Host::open(config).await?, None),
        Some(section) => {
            let native = native_identity.map(|m| m.address()).unwrap_or_default();
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
    Ok((host, node))
}

/// What every listener's server is given: the connection cap and
/// counters, the stop signal, and the threads connections are served on.
struct Shared {
    connections: Arc<Connections>,
    stopped: watch::Receiver<bool>,
    serving: Option<Arc<crate::listen::ServingThreads>>,
}

/// Starts the threads gRPC connections are served on (None: served on
/// the runtime, `server.serving_threads` is 0).
fn serving_threads(host: &Host) -> Result<Option<Arc<crate::listen::ServingThreads>>, ServeError> {
    Ok(match host.config().server.serving_threads {
        0 => None,
        n => Some(crate::listen::ServingThreads::start(n).map_err(ServeError::Threads)?),
    })
}

/// Serves gRPC (the data and admin services, and Shoal's framed protocol
/// on the same port) under the request-bytes budget.
fn spawn_grpc(host: &Host, listener: TcpListener, shared: &Shared) -> tokio::task::JoinHandle<()> {
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
    let frames: Arc<dyn crate::listen::SecondProtocol> =
        Arc::new(crate::frames::FramesDoor::new(host.clone(), budget.clone()));
    crate::listen::serve_grpc(
        listener,
        routes,
        budget,
        shared.connections.clone(),
        shared.serving.clone(),
        shared.stopped.clone(),
        host.security().clone(),
        Some(frames),
    )
}

/// The HTTP pages' router, and the task that samples the status every 10
/// seconds for their history.
fn http_router(
    host: &Host,
    connection_metrics: Arc<ConnectionMetrics>,
) -> (axum::Router, tokio::task::JoinHandle<()>) {
    let history = Arc::new(History::default());
    let view_host = host.clone();
    let view = Arc::new(move || view_host.status());
    let sampler =
        crate::metrics::spawn_sampler(history.clone(), view.clone(), Duration::from_secs(10));
    let router = crate::http::router(crate::http::HttpState {
        view,
        history,
        connections: connection_metrics,
        trim: {
            let host = host.clone();
            Arc::new(move |caller, view| host.access(caller).trim_status(view))
        },
        auth: crate::http::auth::AuthState {
            security: host.security().clone(),
            tls: host
                .config()
                .tls
                .covers(crate::config::TlsListenerName::Http),
        },
    });
    (router, sampler)
}

/// Serves the Thrift gateway, with the limits of the `thrift` section.
fn spawn_thrift(
    host: &Host,
    listener: TcpListener,
    shared: &Shared,
) -> tokio::task::JoinHandle<()> {
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
    crate::thrift::serve_thrift(
        listener,
        gateway,
        shared.connections.clone(),
        limits,
        shared.stopped.clone(),
        host.security().tls().cloned(),
        shared.serving.clone(),
    )
}

/// Serves HBase's REST gateway, with the limits of the `rest` section.
fn spawn_rest(host: &Host, listener: TcpListener, shared: &Shared) -> tokio::task::JoinHandle<()> {
    let gateway = Arc::new(crate::rest::RestGateway::new(
        host.clone(),
        shared.stopped.clone(),
    ));
    let router = crate::rest::router(gateway.clone());
    let sweeper = crate::rest::spawn_scanner_sweep(gateway, shared.stopped.clone());
    let server = crate::listen::serve_http(
        listener,
        crate::metrics::Listener::Rest,
        router,
        shared.connections.clone(),
        shared.stopped.clone(),
        host.security().tls().cloned(),
    );
    tokio::spawn(async move {
        let _ = server.await;
        sweeper.abort();
    })
}

/// Serves HBase's native RPC as `me`, its calls acting as `caller`, with
/// the limits of the `hbase_rpc` section and the connection timeouts.
fn spawn_hbase_rpc(
    host: &Host,
    listener: TcpListener,
    me: crate::hbase_rpc::ServerIdentity,
    caller: crate::security::Caller,
    shared: &Shared,
) -> tokio::task::JoinHandle<()> {
    let n = &host.config().hbase_rpc;
    let scanners = crate::hbase_rpc::Scanners::new(n.scanner_timeout, n.max_scanners);
    let rpc = Arc::new(
        crate::hbase_rpc::NativeRpc::new(host.clone(), caller, me, scanners)
            .with_heartbeat(n.heartbeat_interval),
    );
    let policy = shared.connections.policy();
    let limits = crate::hbase_rpc::ConnectionLimits {
        max_message_bytes: usize::try_from(n.max_message_bytes.0).unwrap_or(usize::MAX),
        max_calls: n.max_calls_per_connection,
        handshake: policy.handshake_timeout,
        idle: policy.idle_timeout,
    };
    crate::hbase_rpc::serve_hbase_rpc(
        listener,
        rpc,
        shared.connections.clone(),
        limits,
        shared.stopped.clone(),
        host.security().tls().cloned(),
        shared.serving.clone(),
    )
}

/// Serves the read-only ZooKeeper registry, telling clients of `me`.
fn spawn_zk_registry(
    host: &Host,
    listener: TcpListener,
    me: crate::hbase_rpc::ServerIdentity,
    shared: &Shared,
) -> tokio::task::JoinHandle<()> {
    let section = &host.config().zk_registry;
    let registry = Arc::new(crate::zk_registry::ZkRegistry::new(
        host.clone(),
        me,
        section,
    ));
    let limits = crate::zk_registry::ZkLimits {
        max_connections: section.max_connections,
        handshake: shared.connections.policy().handshake_timeout,
    };
    crate::zk_registry::serve_zk_registry(listener, registry, limits, shared.stopped.clone())
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
