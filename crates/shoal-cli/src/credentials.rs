//! How the shell and the benchmarks reach a server with TLS or auth on:
//! `--token-file`, `--ca`, `--tls-cert`/`--tls-key` (mutual TLS) and
//! `--tls-domain`, turned into the client's options.

use anyhow::Context;
use shoal_client::{ClientOptions, ClientTls};
use std::path::PathBuf;

/// TLS and token flags shared by the commands that connect to a server.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Credentials {
    /// A file holding the token sent with every call (servers with auth on).
    #[arg(long, env = "SHOAL_TOKEN_FILE", global = true)]
    token_file: Option<PathBuf>,
    /// CA certificates (PEM) the server's certificate must chain to: the
    /// connection uses TLS.
    #[arg(long, env = "SHOAL_CA", global = true)]
    ca: Option<PathBuf>,
    /// A client certificate (PEM), for servers that ask for one (mutual TLS).
    #[arg(long, requires = "tls_key", global = true)]
    tls_cert: Option<PathBuf>,
    /// Its private key (PEM).
    #[arg(long, requires = "tls_cert", global = true)]
    tls_key: Option<PathBuf>,
    /// The name the server's certificate must carry (default: the host in
    /// the address).
    #[arg(long, global = true)]
    tls_domain: Option<String>,
}

impl Credentials {
    /// `options` with the token and TLS settings these flags name.
    pub fn apply(&self, mut options: ClientOptions) -> anyhow::Result<ClientOptions> {
        if let Some(p) = &self.token_file {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("--token-file {}", p.display()))?;
            let token = text.trim();
            anyhow::ensure!(
                !token.is_empty() && !token.contains(char::is_whitespace),
                "--token-file {}: the file must hold one token",
                p.display()
            );
            options.token = Some(token.to_string());
        }
        let read = |p: &PathBuf, flag: &str| {
            std::fs::read(p).with_context(|| format!("{flag} {}", p.display()))
        };
        if let Some(ca) = &self.ca {
            let identity = match (&self.tls_cert, &self.tls_key) {
                (Some(c), Some(k)) => Some((read(c, "--tls-cert")?, read(k, "--tls-key")?)),
                _ => None,
            };
            options.tls = Some(ClientTls {
                ca_pem: read(ca, "--ca")?,
                identity,
                domain: self.tls_domain.clone(),
            });
        } else {
            anyhow::ensure!(
                self.tls_cert.is_none() && self.tls_domain.is_none(),
                "--tls-cert and --tls-domain need --ca (the CA the server's certificate chains to)"
            );
        }
        Ok(options)
    }
}
