//! `[tls]` and `[auth]`: TLS on the listeners, bearer-token authentication,
//! HBase-style permissions and the audit log (`docs/security.md`). Both are
//! off by default: a server on 127.0.0.1 with neither is what it was.

use serde::Deserialize;
use std::path::PathBuf;

/// A listener TLS may cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TlsListenerName {
    /// The gRPC port.
    Grpc,
    /// The HTTP port (status page, `/metrics`).
    Http,
    /// The Thrift gateway.
    Thrift,
    /// HBase's native RPC (`hbase_rpc`, the name the docs and the
    /// `[hbase_rpc]` section use; `hbaserpc` is still read).
    #[serde(rename = "hbase_rpc", alias = "hbaserpc")]
    HbaseRpc,
    /// HBase's REST gateway.
    Rest,
}

/// `[tls]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TlsSection {
    /// This server's certificate chain, PEM (with `key`, turns TLS on).
    pub cert: PathBuf,
    /// Its private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// CA certificates, PEM: when set, every client must present a
    /// certificate one of them signed (mutual TLS).
    pub client_ca: PathBuf,
    /// CA certificates, PEM, this server trusts when it calls another
    /// server (cluster mode); it presents `cert` as its client certificate.
    pub ca: PathBuf,
    /// The listeners TLS covers (default all three).
    pub listeners: Vec<TlsListenerName>,
}

impl Default for TlsSection {
    fn default() -> Self {
        TlsSection {
            cert: PathBuf::new(),
            key: PathBuf::new(),
            client_ca: PathBuf::new(),
            ca: PathBuf::new(),
            listeners: vec![
                TlsListenerName::Grpc,
                TlsListenerName::Http,
                TlsListenerName::Thrift,
                TlsListenerName::HbaseRpc,
                TlsListenerName::Rest,
            ],
        }
    }
}

impl TlsSection {
    /// True if TLS is configured.
    pub fn enabled(&self) -> bool {
        !self.cert.as_os_str().is_empty()
    }

    /// True if TLS covers `listener`.
    pub fn covers(&self, listener: TlsListenerName) -> bool {
        self.enabled() && self.listeners.contains(&listener)
    }

    /// Checks the section: `(key, message)` on a bad one.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let cert = !self.cert.as_os_str().is_empty();
        let key = !self.key.as_os_str().is_empty();
        if cert != key {
            return Err((
                if cert { "tls.key" } else { "tls.cert" },
                "tls.cert and tls.key go together: set both to turn TLS on".into(),
            ));
        }
        if !cert && !self.client_ca.as_os_str().is_empty() {
            return Err((
                "tls.client_ca",
                "mutual TLS needs TLS: set tls.cert and tls.key".into(),
            ));
        }
        Ok(())
    }
}

/// `[auth]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthSection {
    /// Require a token on every call, and check permissions (default false).
    pub enabled: bool,
    /// The token file: lines `USER sha256:HEX` (`shoal token new USER`
    /// makes one); reloaded on SIGHUP.
    pub tokens: PathBuf,
    /// Users who hold every permission (HBase's `hbase.superuser`); the
    /// only ones who can grant before any grant exists.
    pub superusers: Vec<String>,
    /// `/metrics` without a token (default true: scrapers rarely carry one).
    pub metrics_open: bool,
    /// The user every Thrift call runs as: happybase sends no credentials
    /// (HBase's Thrift gateway likewise acts as its own principal). With
    /// auth on and Thrift enabled it must be set.
    pub thrift_user: String,
    /// The user every call on HBase's native RPC runs as: with SIMPLE auth
    /// the Java client only claims a name, which proves nothing. With auth
    /// on and this empty, the native RPC port is not opened.
    pub hbase_rpc_user: String,
    /// A file the audit lines are appended to (JSON, one per line); they go
    /// to the server's log as well (target `shoal::audit`).
    pub audit_log: PathBuf,
    /// A file holding the token this server presents when it calls another
    /// server (cluster mode: registering a split with the master). Its user
    /// should be a superuser.
    pub server_token: PathBuf,
}

impl Default for AuthSection {
    fn default() -> Self {
        AuthSection {
            enabled: false,
            tokens: PathBuf::new(),
            superusers: Vec::new(),
            metrics_open: true,
            thrift_user: String::new(),
            hbase_rpc_user: String::new(),
            audit_log: PathBuf::new(),
            server_token: PathBuf::new(),
        }
    }
}

impl AuthSection {
    /// Checks the section against the rest: `(key, message)` on a bad one.
    pub fn validate(
        &self,
        thrift_enabled: bool,
        cluster: bool,
    ) -> Result<(), (&'static str, String)> {
        if !self.enabled {
            return Ok(());
        }
        if self.tokens.as_os_str().is_empty() {
            return Err((
                "auth.tokens",
                "auth needs a token file (lines `USER sha256:HEX`; `shoal token new USER` \
                 prints one)"
                    .into(),
            ));
        }
        if let Some(bad) = self.superusers.iter().find(|u| !valid_user(u)) {
            return Err((
                "auth.superusers",
                format!("{bad:?} is not a user name (letters, digits and `_ - . @`)"),
            ));
        }
        if thrift_enabled && self.thrift_user.is_empty() {
            return Err((
                "auth.thrift_user",
                "happybase sends no credentials: name the user Thrift calls run as, or set \
                 thrift.enabled = false"
                    .into(),
            ));
        }
        if !self.thrift_user.is_empty() && !valid_user(&self.thrift_user) {
            return Err((
                "auth.thrift_user",
                format!("{:?} is not a user name", self.thrift_user),
            ));
        }
        if !self.hbase_rpc_user.is_empty() && !valid_user(&self.hbase_rpc_user) {
            return Err((
                "auth.hbase_rpc_user",
                format!("{:?} is not a user name", self.hbase_rpc_user),
            ));
        }
        if cluster && self.server_token.as_os_str().is_empty() {
            return Err((
                "auth.server_token",
                "in cluster mode a server calls the master: name a file holding its token \
                 (a superuser's)"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// True if `user` is a name a token file and a grant may hold: 1 to 128
/// characters of letters, digits and `_ - . @`.
pub fn valid_user(user: &str) -> bool {
    !user.is_empty()
        && user.len() <= 128
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'))
}

#[cfg(test)]
mod tests {
    use super::TlsListenerName;

    #[derive(serde::Deserialize)]
    struct Listeners {
        listeners: Vec<TlsListenerName>,
    }

    #[test]
    fn listener_names_are_the_documented_ones() {
        let l: Listeners =
            toml::from_str("listeners = [\"grpc\", \"http\", \"thrift\", \"hbase_rpc\"]")
                .expect("the documented names");
        assert_eq!(l.listeners[3], TlsListenerName::HbaseRpc);
        let old: Listeners =
            toml::from_str("listeners = [\"hbaserpc\"]").expect("the old spelling");
        assert_eq!(old.listeners, vec![TlsListenerName::HbaseRpc]);
        assert!(toml::from_str::<Listeners>("listeners = [\"ftp\"]").is_err());
    }
}
