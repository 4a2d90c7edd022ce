//! Async Rust client for Shoal's gRPC API (`shoal-proto`): a [`Client`]
//! connected to one server, [`Table`] handles for reads and writes,
//! [`Admin`] for tables and regions, and builders for the requests.
//!
//! Calls that meet a region in motion (UNAVAILABLE) or a busy server
//! (RESOURCE_EXHAUSTED) are retried with jittered exponential backoff
//! ([`ClientOptions`]); scans resume after the last row they returned
//! ([`Scanner`]).

mod admin;
mod builders;
mod combine;
mod data_stub;
mod error;
mod frames;
mod retry;
mod route;
mod scanner;
mod table;

pub use admin::Admin;
pub use builders::{Get, RowMutation, Scan};
pub use error::ClientError;
pub use retry::Backoff;
pub use scanner::Scanner;
pub use shoal_proto::v1 as proto;
pub use shoal_proto::v1::{
    BloomType, Cell, CompareOp, Compression, FamilySchema, InMemoryCompaction, RegionInfo, Row,
    StatusResponse, TableDescription, TableState,
};
pub use table::{Table, counter_value};

use shoal_proto::v1::admin_client::AdminClient;
use shoal_proto::v1::data_client::DataClient;
use std::time::Duration;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

/// How a client connects and retries.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Time to establish the connection (default 10 s).
    pub connect_timeout: Duration,
    /// First retry delay (default 10 ms); doubles up to `max_backoff`.
    pub initial_backoff: Duration,
    /// Longest retry delay (default 1 s).
    pub max_backoff: Duration,
    /// Give up retrying after this long (default 30 s).
    pub retry_deadline: Duration,
    /// Combine concurrent [`Table::mutate`] calls into shared MultiMutate
    /// RPCs (default on; see the `combine` module). Off: one RPC per call.
    pub combine_writes: bool,
    /// Write RPCs a combining client keeps outstanding at once (default 8,
    /// at least 1); mutations beyond them wait and leave together.
    pub max_write_rpcs: usize,
    /// Most rows in one combined RPC (default 512, at least 1).
    pub max_combined_rows: usize,
    /// Most encoded bytes in one combined RPC (default 4 MiB; a larger
    /// mutation goes alone).
    pub max_combined_bytes: usize,
    /// Sent as `authorization: Bearer TOKEN` on every call (servers with
    /// auth on need one).
    pub token: Option<String>,
    /// TLS to the servers (None: plain text).
    pub tls: Option<ClientTls>,
    /// How gets and mutations travel (default: the framed transport). Scans,
    /// region maps and admin calls always use gRPC.
    pub data_transport: DataTransport,
}

/// How a client sends its gets and mutations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DataTransport {
    /// gRPC (HTTP/2), as every other call.
    Grpc,
    /// The framed transport on the same port (`shoal_proto::frames`): the
    /// same messages without HTTP/2, for less CPU per call on both sides;
    /// with [`ClientOptions::tls`], over TLS with the same settings. A
    /// cached get costs the server about a third of its CPU on gRPC
    /// (`docs/benchmarks.md`, `callcost`).
    #[default]
    Framed,
}

/// TLS settings of a client.
#[derive(Clone)]
pub struct ClientTls {
    /// The CA certificates (PEM) the servers' certificates must chain to.
    pub ca_pem: Vec<u8>,
    /// A client certificate and key (PEM), for servers that ask for one
    /// (mutual TLS).
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
    /// The name the server's certificate must carry (default: the host of
    /// the address).
    pub domain: Option<String>,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTls")
            .field("ca_pem_bytes", &self.ca_pem.len())
            .field("identity", &self.identity.is_some())
            .field("domain", &self.domain)
            .finish()
    }
}

/// The channel every stub runs on: with the token added to each call.
pub(crate) type Transport = InterceptedService<Channel, TokenInterceptor>;

/// Adds `authorization: Bearer TOKEN` to every call.
#[derive(Clone)]
pub(crate) struct TokenInterceptor(Option<MetadataValue<Ascii>>);

impl tonic::service::Interceptor for TokenInterceptor {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(10),
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(1),
            retry_deadline: Duration::from_secs(30),
            combine_writes: true,
            max_write_rpcs: 8,
            max_combined_rows: 512,
            max_combined_bytes: 4 << 20,
            token: None,
            tls: None,
            data_transport: DataTransport::Framed,
        }
    }
}

/// A connection to a Shoal server or cluster. Cheap to clone; clones share
/// the connections. In a cluster each call goes to the server serving its
/// row (see the `route` module).
#[derive(Debug, Clone)]
pub struct Client {
    pub(crate) router: std::sync::Arc<route::Router>,
    pub(crate) options: ClientOptions,
}

/// Largest message the client sends or accepts.
const MAX_MESSAGE: usize = 64 << 20;

impl Client {
    /// Connects to `addr` (`127.0.0.1:7070` or `http://127.0.0.1:7070`), or
    /// to the first that answers of several, comma-separated
    /// (`a:7070,b:7070`).
    pub async fn connect(addr: &str) -> Result<Client, ClientError> {
        Client::connect_with(addr, ClientOptions::default()).await
    }

    /// Connects with explicit options; `addr` as for [`Client::connect`].
    pub async fn connect_with(addr: &str, options: ClientOptions) -> Result<Client, ClientError> {
        let addrs: Vec<&str> = addr
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .collect();
        let Some((last, first)) = addrs.split_last() else {
            return Err(ClientError::InvalidArgument(format!(
                "no server address in {addr:?}"
            )));
        };
        let seeds: Vec<String> = addrs.iter().map(|a| a.to_string()).collect();
        for a in first {
            match Client::connect_one(a, options.clone(), &seeds).await {
                Ok(c) => return Ok(c),
                Err(e @ ClientError::InvalidArgument(_)) => return Err(e),
                Err(e) => {
                    tracing::debug!(addr = a, error = %e, "server unreachable; trying the next")
                }
            }
        }
        Client::connect_one(last, options, &seeds)
            .await
            .map_err(|e| match e {
                ClientError::Connect { source, .. } if !first.is_empty() => ClientError::Connect {
                    addr: addrs.join(","),
                    source,
                },
                other => other,
            })
    }

    /// Connects to one address; the others in `seeds` are asked for region
    /// maps if it goes away.
    async fn connect_one(
        addr: &str,
        options: ClientOptions,
        seeds: &[String],
    ) -> Result<Client, ClientError> {
        let conn = Client::connect_conn(addr, &route::single_attempt(&options)).await?;
        Ok(Client {
            router: std::sync::Arc::new(route::Router::new(seeds.to_vec(), conn, &options)),
            options,
        })
    }

    /// One server's connection, with its write combiner (making single
    /// attempts: the router retries).
    pub(crate) async fn connect_conn(
        addr: &str,
        options: &ClientOptions,
    ) -> Result<route::Conn, ClientError> {
        let scheme = if options.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let url = if addr.contains("://") {
            addr.to_string()
        } else {
            format!("{scheme}://{addr}")
        };
        let mut endpoint = Endpoint::from_shared(url.clone())
            .map_err(|e| ClientError::InvalidArgument(format!("bad server address {addr:?}: {e}")))?
            .connect_timeout(options.connect_timeout)
            .tcp_nodelay(true)
            // HTTP/2's default 64 KiB windows would make combined writes
            // (megabytes per second) wait for window updates.
            .initial_stream_window_size(4 << 20)
            .initial_connection_window_size(16 << 20);
        if let Some(tls) = &options.tls {
            let mut config =
                ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&tls.ca_pem));
            if let Some((cert, key)) = &tls.identity {
                config = config.identity(Identity::from_pem(cert, key));
            }
            if let Some(d) = &tls.domain {
                config = config.domain_name(d.clone());
            }
            endpoint = endpoint.tls_config(config).map_err(|e| {
                ClientError::InvalidArgument(format!("TLS settings for {addr:?}: {e}"))
            })?;
        }
        let token = match &options.token {
            None => None,
            Some(t) => Some(format!("Bearer {t}").parse().map_err(|_| {
                ClientError::InvalidArgument(
                    "the token holds characters a header cannot carry".into(),
                )
            })?),
        };
        let channel = endpoint
            .connect()
            .await
            .map_err(|source| ClientError::Connect {
                addr: addr.to_string(),
                source,
            })?;
        let channel = InterceptedService::new(channel, TokenInterceptor(token));
        let framed = match (options.data_transport, &options.tls) {
            (DataTransport::Grpc, _) => None,
            (DataTransport::Framed, tls) => {
                let tls = match tls {
                    None => None,
                    Some(t) => Some(frames::FramedTls::new(t, addr).map_err(|e| {
                        ClientError::InvalidArgument(format!("TLS settings for {addr:?}: {e}"))
                    })?),
                };
                Some(frames::FramedConn::new(
                    addr,
                    options.token.clone(),
                    options.connect_timeout,
                    tls,
                ))
            }
        };
        let data = data_stub::DataStub::new(
            DataClient::new(channel.clone())
                .max_decoding_message_size(MAX_MESSAGE)
                .max_encoding_message_size(MAX_MESSAGE),
            framed,
        );
        let combiner = options
            .combine_writes
            .then(|| combine::Combiner::start(data.clone(), options.clone()));
        Ok(route::Conn {
            addr: addr.to_string(),
            data,
            combiner,
            admin: AdminClient::new(channel)
                .max_decoding_message_size(MAX_MESSAGE)
                .max_encoding_message_size(MAX_MESSAGE),
        })
    }

    /// Reads and writes of table `name`.
    pub fn table(&self, name: impl Into<String>) -> Table {
        Table {
            client: self.clone(),
            name: name.into(),
        }
    }

    /// Table and region administration.
    pub fn admin(&self) -> Admin {
        Admin {
            client: self.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unreachable_server_is_named_in_the_error() {
        // A port that was free a moment ago: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let e = Client::connect(&addr).await.unwrap_err();
        assert!(matches!(e, ClientError::Connect { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains(&addr), "{text}");
        assert!(text.to_lowercase().contains("refused"), "{text}");
        let e = Client::connect(&format!("http://{addr}"))
            .await
            .unwrap_err();
        assert!(matches!(e, ClientError::Connect { .. }), "{e:?}");
        let e = Client::connect("not an address").await.unwrap_err();
        assert!(e.is_invalid_argument(), "{e:?}");
    }
}
