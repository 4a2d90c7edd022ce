//! Calls from this server to another (cluster mode): the channel, over TLS
//! with `[tls] ca` when TLS is on (presenting this server's certificate, for
//! peers that ask for one), and this server's token on every call.

use super::Security;
use crate::config::ServerConfig;
use std::time::Duration;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

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
        .timeout(timeout);
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
