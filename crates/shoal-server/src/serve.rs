//! Starting and stopping a server: bind the gRPC and HTTP listeners, open
//! the host (storage, catalog, regions), run the services and the periodic
//! work, and stop gracefully (stop accepting, finish in-flight calls, close
//! regions, make the cache durable, close the WAL).

use crate::config::ServerConfig;
use crate::grpc::{AdminService, DataService};
use crate::host::{Host, StartError};
use crate::metrics::History;
use shoal_proto::v1::admin_server::AdminServer;
use shoal_proto::v1::data_server::DataServer;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// HTTP/2 flow-control window of one gRPC stream, bytes.
const STREAM_WINDOW: u32 = 4 << 20;
/// HTTP/2 flow-control window of one gRPC connection, bytes.
const CONNECTION_WINDOW: u32 = 16 << 20;

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
    /// Storage, catalog or regions failed to open.
    #[error(transparent)]
    Start(#[from] StartError),
}

/// A running server.
pub struct RunningServer {
    /// Where gRPC listens.
    pub grpc_addr: SocketAddr,
    /// Where HTTP listens.
    pub http_addr: SocketAddr,
    /// The regions and storage.
    pub host: Host,
    stop: watch::Sender<bool>,
    /// The gRPC and HTTP servers: they finish in-flight calls on stop.
    servers: Vec<tokio::task::JoinHandle<()>>,
    /// Periodic work: aborted on stop.
    periodic: Vec<tokio::task::JoinHandle<()>>,
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
    let host = Host::open(config).await?;
    let (stop, stopped) = watch::channel(false);
    let mut servers = Vec::new();
    let mut periodic = Vec::new();

    let wait_stop = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    // HTTP/2's default windows (64 KiB per stream and per connection) make
    // a client that streams megabytes per second of writes wait for window
    // updates, one round trip per 64 KiB; gRPC-Go grows its windows to
    // 16 MiB for the same reason.
    let budget = crate::grpc::budget::RequestBudget::new(
        host.config().limits.request_bytes_in_flight.0,
        host.requests().clone(),
    );
    let grpc = tonic::transport::Server::builder()
        .initial_stream_window_size(Some(STREAM_WINDOW))
        .initial_connection_window_size(Some(CONNECTION_WINDOW))
        .layer(crate::grpc::budget::BudgetLayer::new(budget))
        .add_service(
            DataServer::new(DataService::new(host.clone()))
                .max_decoding_message_size(crate::request_limits::MAX_MESSAGE_BYTES)
                .max_encoding_message_size(crate::request_limits::MAX_MESSAGE_BYTES),
        )
        .add_service(
            AdminServer::new(AdminService::new(host.clone()))
                .max_decoding_message_size(crate::request_limits::MAX_MESSAGE_BYTES),
        )
        .serve_with_incoming_shutdown(
            // Accepted connections do not inherit the builder's nodelay
            // setting: without it, small responses wait for delayed ACKs
            // (~40 ms per call).
            futures::StreamExt::inspect(
                tokio_stream::wrappers::TcpListenerStream::new(grpc_listener),
                |conn| {
                    if let Ok(c) = conn
                        && let Err(e) = c.set_nodelay(true)
                    {
                        tracing::debug!(error = %e, "TCP_NODELAY on a gRPC connection failed");
                    }
                },
            ),
            wait_stop(stopped.clone()),
        );
    servers.push(tokio::spawn(async move {
        if let Err(e) = grpc.await {
            tracing::error!(error = %e, "gRPC server stopped with an error");
        }
    }));

    let history = Arc::new(History::default());
    let view_host = host.clone();
    let view = Arc::new(move || view_host.status());
    periodic.push(crate::metrics::spawn_sampler(
        history.clone(),
        view.clone(),
        Duration::from_secs(10),
    ));
    let router = crate::http::router(crate::http::HttpState { view, history });
    let http =
        axum::serve(http_listener, router).with_graceful_shutdown(wait_stop(stopped.clone()));
    servers.push(tokio::spawn(async move {
        if let Err(e) = http.await {
            tracing::error!(error = %e, "HTTP server stopped with an error");
        }
    }));
    periodic.push(host.spawn_background());
    Ok(RunningServer {
        grpc_addr,
        http_addr,
        host,
        stop,
        servers,
        periodic,
    })
}

impl RunningServer {
    /// Stops gracefully: no new calls, in-flight calls finish (up to the
    /// configured timeout), regions close (memstores flushed), the cache
    /// and the WAL close.
    pub async fn shutdown(self) {
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
    }
}
