//! Calls from this server to another (cluster mode): the channel, over TLS
//! with `[tls] ca` when TLS is on (presenting this server's certificate, for
//! peers that ask for one), and this server's token on every call.

use super::Security;
use crate::config::ServerConfig;
use std::time::Duration;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

/// HTTP/2 flow-control window per stream of a call to another server.
const PEER_STREAM_WINDOW: u32 = 16 << 20;
/// … and per connection.
const PEER_CONNECTION_WINDOW: u32 = 32 << 20;

/// A channel to the server at `addr` (host:port).
pub async fn connect(
    config: &ServerConfig,
    addr: &str,
    timeout: Duration,
) -> Result<Channel, String> {
    let tls = &config.tls;
    let scheme = if tls.enabled() { "https" } else { "http" };
    let mut endpoint = Endpoint::from_shared(format!("{scheme}://{addr}"))
        .map_err(|e| format!("address {addr}: {e}"))?
        .connect_timeout(Duration::from_secs(5))
        .timeout(timeout)
        // Answers between servers carry megabytes (a region's handed rows,
        // its hottest blocks). HTTP/2's default 64 KiB windows would make
        // each answer wait for a window update per 64 KiB, one wake-up of
        // both servers each, while they serve reads.
        .initial_stream_window_size(PEER_STREAM_WINDOW)
        .initial_connection_window_size(PEER_CONNECTION_WINDOW);
    if tls.enabled() {
        let read = |p: &std::path::Path, key: &str| {
            std::fs::read(p).map_err(|e| format!("{key} = {}: {e}", p.display()))
        };
        if tls.ca.as_os_str().is_empty() {
            return Err(
                "TLS is on: set tls.ca, the CA this server trusts for other servers".into(),
            );
        }
        let client = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(read(&tls.ca, "tls.ca")?))
            .identity(Identity::from_pem(
                read(&tls.cert, "tls.cert")?,
                read(&tls.key, "tls.key")?,
            ));
        endpoint = endpoint
            .tls_config(client)
            .map_err(|e| format!("TLS to {addr}: {e}"))?;
    }
    endpoint
        .connect()
        .await
        .map_err(|e| format!("connecting to {addr}: {e}"))
}

/// `req` with this server's token, when auth is on.
pub fn authorize<T>(security: &Security, mut req: tonic::Request<T>) -> tonic::Request<T> {
    if let Some(token) = security.server_token()
        && let Ok(v) = format!("Bearer {token}").parse()
    {
        req.metadata_mut().insert("authorization", v);
    }
    req
}
