//! TLS on the listeners: the server's rustls configurations (one per
//! listener, as each offers its own ALPN protocols), built from the PEM
//! files of `[tls]` and rebuilt on reload. A connection takes the
//! configuration current when it is accepted, so a reload changes the
//! certificate for new connections and leaves open ones alone.

use crate::config::{TlsListenerName, TlsSection};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::{Arc, RwLock};
use tokio_rustls::TlsAcceptor;

/// Why the TLS files could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file could not be read or holds nothing usable.
    #[error("{key} = {path}: {message}")]
    File {
        /// The config key naming the file.
        key: &'static str,
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// rustls refused the certificate, key or CA.
    #[error("TLS configuration: {0}")]
    Rustls(String),
}

/// The crypto provider (aws-lc-rs, which the object store's HTTPS client
/// already brings in).
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

fn file_error(key: &'static str, path: &Path, message: impl ToString) -> TlsError {
    TlsError::File {
        key,
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// The certificates of a PEM file (at least one).
pub fn read_certs(
    key: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| file_error(key, path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_error(key, path, e))?;
    if certs.is_empty() {
        return Err(file_error(key, path, "no PEM certificate in the file"));
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| file_error("tls.key", path, e))
}

/// A root store of the CA certificates in `path`.
pub fn read_roots(key: &'static str, path: &Path) -> Result<rustls::RootCertStore, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    for c in read_certs(key, path)? {
        roots
            .add(c)
            .map_err(|e| file_error(key, path, format!("not a CA certificate: {e}")))?;
    }
    Ok(roots)
}

/// A server configuration from the files of `section`, offering `alpn`.
pub fn server_config(
    section: &TlsSection,
    alpn: &[&[u8]],
) -> Result<rustls::ServerConfig, TlsError> {
    let certs = read_certs("tls.cert", &section.cert)?;
    let key = read_key(&section.key)?;
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(rustls::DEFAULT_VERSIONS)
        .map_err(|e| TlsError::Rustls(e.to_string()))?;
    let builder = if section.client_ca.as_os_str().is_empty() {
        builder.with_no_client_auth()
    } else {
        let roots = read_roots("tls.client_ca", &section.client_ca)?;
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            provider(),
        )
        .build()
        .map_err(|e| TlsError::Rustls(e.to_string()))?;
        builder.with_client_cert_verifier(verifier)
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| TlsError::Rustls(format!("tls.cert and tls.key: {e}")))?;
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// What each listener offers in ALPN: gRPC is HTTP/2 only; the HTTP port
/// takes both; Thrift has no ALPN name.
fn alpn(listener: TlsListenerName) -> &'static [&'static [u8]] {
    match listener {
        TlsListenerName::Grpc => &[b"h2"],
        TlsListenerName::Http | TlsListenerName::Rest => &[b"h2", b"http/1.1"],
        TlsListenerName::Thrift | TlsListenerName::HbaseRpc => &[],
    }
}

/// The listeners' TLS configurations, swapped whole on reload.
#[derive(Debug)]
pub struct TlsListeners {
    section: TlsSection,
    current: RwLock<[Option<Arc<rustls::ServerConfig>>; 5]>,
}

fn index(l: TlsListenerName) -> usize {
    match l {
        TlsListenerName::Grpc => 0,
        TlsListenerName::Http => 1,
        TlsListenerName::Thrift => 2,
        TlsListenerName::HbaseRpc => 3,
        TlsListenerName::Rest => 4,
    }
}

impl TlsListeners {
    /// Reads the files of `section` (None when TLS is off).
    pub fn load(section: &TlsSection) -> Result<Option<Arc<TlsListeners>>, TlsError> {
        if !section.enabled() {
            return Ok(None);
        }
        let t = TlsListeners {
            section: section.clone(),
            current: RwLock::new([None, None, None, None, None]),
        };
        t.reload()?;
        Ok(Some(Arc::new(t)))
    }

    /// Reads the files again; on an error the configurations in use stay.
    pub fn reload(&self) -> Result<(), TlsError> {
        let mut next: [Option<Arc<rustls::ServerConfig>>; 5] = [None, None, None, None, None];
        for l in [
            TlsListenerName::Grpc,
            TlsListenerName::Http,
            TlsListenerName::Thrift,
            TlsListenerName::HbaseRpc,
            TlsListenerName::Rest,
        ] {
            if self.section.covers(l) {
                next[index(l)] = Some(Arc::new(server_config(&self.section, alpn(l))?));
            }
        }
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = next;
        Ok(())
    }

    /// The acceptor for a connection just accepted on `listener` (None:
    /// that listener is plain).
    pub fn acceptor(&self, listener: TlsListenerName) -> Option<TlsAcceptor> {
        let current = self.current.read().unwrap_or_else(|e| e.into_inner());
        current[index(listener)].clone().map(TlsAcceptor::from)
    }
}
