//! Security: who is calling (bearer tokens, `tokens`), what they may do
//! (HBase's permissions, `permissions`, stored with the catalog), what was
//! done and refused (`audit`), and TLS on the listeners (`tls`). The front
//! doors only find out who calls (`Security::authenticate`); every check is
//! made in the host API (`host::access`), so gRPC, Thrift and HTTP answer
//! alike; the gRPC port's HTTP/2 finds its callers with `AuthLayer`. See
//! `docs/security.md`.

pub mod audit;
mod auth_layer;
pub mod peer;
pub mod permissions;
pub mod tls;
pub mod tokens;

pub use auth_layer::{AuthLayer, AuthService};

use crate::catalog::Catalog;
use crate::config::AuthSection;
use audit::{Audit, Outcome};
use permissions::Acl;
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use tokens::Tokens;

/// Why security could not start.
#[derive(Debug, thiserror::Error)]
pub enum SecurityError {
    /// The token file.
    #[error(transparent)]
    Tokens(#[from] tokens::TokenFileError),
    /// The TLS files.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// The audit log could not be opened.
    #[error("auth.audit_log = {path}: {source}")]
    AuditLog {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The server's own token file.
    #[error("auth.server_token = {path}: {message}")]
    ServerToken {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// The front door a call came through (for the audit log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The gRPC API.
    Grpc,
    /// The HTTP surface.
    Http,
    /// The Thrift gateway.
    Thrift,
    /// HBase's native RPC (the Java client).
    HbaseRpc,
    /// HBase's REST gateway.
    Rest,
    /// The framed transport of Shoal's Data calls (on the gRPC port).
    Frames,
    /// The server itself (background work, cluster rounds).
    Internal,
}

impl Via {
    /// Its name in audit lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Grpc => "grpc",
            Via::Http => "http",
            Via::Thrift => "thrift",
            Via::HbaseRpc => "hbase_rpc",
            Via::Rest => "rest",
            Via::Frames => "frames",
            Via::Internal => "internal",
        }
    }
}

/// Who makes a call: a user a token named (or, with auth off, anyone).
#[derive(Debug, Clone)]
pub struct Caller {
    user: Arc<str>,
    via: Via,
    /// The client's address, when the door knows it (audit lines name it).
    peer: Option<std::net::SocketAddr>,
}

/// The client address of a request, as the listener saw it: put in every
/// HTTP/gRPC request's extensions by `listen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub std::net::SocketAddr);

impl Caller {
    /// `user`, through `via`.
    pub fn new(user: &str, via: Via) -> Caller {
        Caller {
            user: Arc::from(user),
            via,
            peer: None,
        }
    }

    /// This caller, calling from `peer`.
    pub fn with_peer(mut self, peer: Option<std::net::SocketAddr>) -> Caller {
        self.peer = peer;
        self
    }

    /// The client's address, if known.
    pub fn peer(&self) -> Option<std::net::SocketAddr> {
        self.peer
    }

    /// The caller with auth off (every check passes), through `via`.
    pub fn anyone(via: Via) -> Caller {
        Caller::new("", via)
    }

    /// The user name (empty with auth off).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The front door.
    pub fn via(&self) -> Via {
        self.via
    }
}

/// Why a presented credential was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `authorization` header.
    Missing,
    /// The header is not `Bearer TOKEN`.
    Malformed,
    /// Nobody holds this token.
    Unknown,
}

impl AuthFailure {
    /// What the client is told.
    pub fn message(&self) -> &'static str {
        match self {
            AuthFailure::Missing => {
                "this server needs a token: send `authorization: Bearer TOKEN` (the shell and \
                 bench take --token-file)"
            }
            AuthFailure::Malformed => "the authorization header must be `Bearer TOKEN`",
            AuthFailure::Unknown => "the token is not valid on this server",
        }
    }
}

/// The server's security state: settings, tokens, permissions, audit, TLS.
#[derive(Debug)]
pub struct Security {
    auth: AuthSection,
    tokens: RwLock<Arc<Tokens>>,
    acl: RwLock<Arc<Acl>>,
    superusers: HashSet<String>,
    audit: Audit,
    tls: Option<Arc<tls::TlsListeners>>,
    server_token: Option<String>,
}

impl Security {
    /// Reads the token file, the TLS files and opens the audit log, as
    /// `[auth]` and `[tls]` say.
    pub fn load(
        auth: &AuthSection,
        tls_section: &crate::config::TlsSection,
    ) -> Result<Security, SecurityError> {
        let tokens = if auth.enabled {
            Tokens::load(&auth.tokens)?
        } else {
            Tokens::default()
        };
        let audit = Audit::open(&auth.audit_log).map_err(|source| SecurityError::AuditLog {
            path: auth.audit_log.display().to_string(),
            source,
        })?;
        let server_token = if auth.enabled && !auth.server_token.as_os_str().is_empty() {
            let path = auth.server_token.display().to_string();
            let text = std::fs::read_to_string(&auth.server_token).map_err(|e| {
                SecurityError::ServerToken {
                    path: path.clone(),
                    message: e.to_string(),
                }
            })?;
            let t = text.trim().to_string();
            if t.is_empty() || t.contains(char::is_whitespace) {
                return Err(SecurityError::ServerToken {
                    path,
                    message: "the file must hold one token".into(),
                });
            }
            Some(t)
        } else {
            None
        };
        Ok(Security {
            superusers: auth.superusers.iter().cloned().collect(),
            auth: auth.clone(),
            tokens: RwLock::new(Arc::new(tokens)),
            acl: RwLock::new(Arc::default()),
            audit,
            tls: tls::TlsListeners::load(tls_section)?,
            server_token,
        })
    }

    /// Security off: no TLS, no auth, audit to the log.
    pub fn off() -> Security {
        Security {
            auth: AuthSection::default(),
            tokens: RwLock::new(Arc::default()),
            acl: RwLock::new(Arc::default()),
            superusers: HashSet::new(),
            audit: Audit::log_only(),
            tls: None,
            server_token: None,
        }
    }

    /// True if calls need a token and permissions are checked.
    pub fn auth_enabled(&self) -> bool {
        self.auth.enabled
    }

    /// `[auth]`.
    pub fn auth(&self) -> &AuthSection {
        &self.auth
    }

    /// The listeners' TLS (None: TLS is off).
    pub fn tls(&self) -> Option<&Arc<tls::TlsListeners>> {
        self.tls.as_ref()
    }

    /// The token this server presents to other servers.
    pub fn server_token(&self) -> Option<&str> {
        self.server_token.as_deref()
    }

    /// Who presents `authorization` (the header's value) through `via`.
    /// With auth off, anyone.
    pub fn authenticate(
        &self,
        authorization: Option<&[u8]>,
        via: Via,
    ) -> Result<Caller, AuthFailure> {
        self.authenticate_from(authorization, via, None)
    }

    /// [`Security::authenticate`] for a client at `peer` (the caller, and
    /// the audit line of a refusal, carry it).
    pub fn authenticate_from(
        &self,
        authorization: Option<&[u8]>,
        via: Via,
        peer: Option<std::net::SocketAddr>,
    ) -> Result<Caller, AuthFailure> {
        if !self.auth.enabled {
            return Ok(Caller::anyone(via).with_peer(peer));
        }
        let failure = match authorization {
            None => AuthFailure::Missing,
            Some(h) => match bearer(h) {
                None => AuthFailure::Malformed,
                Some(token) => {
                    let tokens = self.tokens.read().unwrap_or_else(|e| e.into_inner());
                    match tokens.user(token) {
                        Some(user) => {
                            return Ok(Caller {
                                user: user.clone(),
                                via,
                                peer,
                            });
                        }
                        None => AuthFailure::Unknown,
                    }
                }
            },
        };
        self.audit.record(
            &Caller::anyone(via).with_peer(peer),
            "authenticate",
            "",
            Outcome::Unauthenticated,
            failure.message(),
        );
        Err(failure)
    }

    /// The caller of a Thrift connection (happybase sends no credentials).
    pub fn thrift_caller(&self) -> Caller {
        if self.auth.enabled {
            Caller::new(&self.auth.thrift_user, Via::Thrift)
        } else {
            Caller::anyone(Via::Thrift)
        }
    }

    /// The caller of a native-RPC connection: `auth.hbase_rpc_user` with
    /// auth on (None when it is not set: the port stays closed), anyone
    /// with auth off.
    pub fn hbase_rpc_caller(&self) -> Option<Caller> {
        Security::hbase_rpc_caller_for(&self.auth)
    }

    /// [`Security::hbase_rpc_caller`] from the `[auth]` settings.
    pub fn hbase_rpc_caller_for(auth: &crate::config::AuthSection) -> Option<Caller> {
        if !auth.enabled {
            return Some(Caller::anyone(Via::HbaseRpc));
        }
        if auth.hbase_rpc_user.is_empty() {
            return None;
        }
        Some(Caller::new(&auth.hbase_rpc_user, Via::HbaseRpc))
    }

    /// Reads the token file and the TLS files again (SIGHUP). On an error,
    /// what was in use stays and the error is returned.
    pub fn reload(&self) -> Result<(), SecurityError> {
        if self.auth.enabled {
            let next = Tokens::load(&self.auth.tokens)?;
            let n = next.len();
            *self.tokens.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
            tracing::info!(tokens = n, "token file reloaded");
        }
        if let Some(t) = &self.tls {
            t.reload()?;
            tracing::info!("TLS certificates reloaded");
        }
        Ok(())
    }

    /// Takes the grants of `catalog` as the permissions in force.
    pub fn set_grants(&self, catalog: &Catalog) {
        let acl = Arc::new(Acl::from_grants(&catalog.grants));
        *self.acl.write().unwrap_or_else(|e| e.into_inner()) = acl;
    }

    /// The permissions in force.
    pub fn acl(&self) -> Arc<Acl> {
        self.acl.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// True if `caller` passes every check: auth is off, or they are a
    /// superuser.
    pub fn unrestricted(&self, caller: &Caller) -> bool {
        !self.auth.enabled || self.superusers.contains(caller.user())
    }

    /// True if `user` is a superuser.
    pub fn is_superuser(&self, user: &str) -> bool {
        self.superusers.contains(user)
    }

    /// The audit log.
    pub fn audit(&self) -> &Audit {
        &self.audit
    }

    /// Records a denial and returns the error the caller gets.
    pub fn deny(
        &self,
        caller: &Caller,
        op: &str,
        needed: &'static str,
        object: &str,
    ) -> crate::error::ServiceError {
        self.audit
            .record(caller, op, object, Outcome::Denied, needed);
        crate::error::ServiceError::PermissionDenied {
            user: caller.user().to_string(),
            action: needed,
            object: object.to_string(),
        }
    }
}

/// The token of an `authorization: Bearer TOKEN` header.
fn bearer(header: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(header).ok()?;
    let (scheme, token) = s.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_headers_are_read_strictly() {
        assert_eq!(bearer(b"Bearer abc"), Some("abc"));
        assert_eq!(bearer(b"bearer  abc "), Some("abc"));
        assert_eq!(bearer(b"Basic abc"), None);
        assert_eq!(bearer(b"Bearer "), None);
        assert_eq!(bearer(b"abc"), None);
        assert_eq!(bearer(&[0xff, 0x20, 0x41]), None);
    }

    #[test]
    fn auth_off_lets_anyone_in_and_on_needs_a_known_token() {
        let off = Security::off();
        assert!(off.authenticate(None, Via::Grpc).is_ok());
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("tokens");
        std::fs::write(&file, tokens::line("alice", "secret")).expect("write");
        let auth = AuthSection {
            enabled: true,
            tokens: file.clone(),
            superusers: vec!["root".into()],
            ..AuthSection::default()
        };
        let s = Security::load(&auth, &Default::default()).expect("load");
        assert_eq!(
            s.authenticate(None, Via::Grpc).expect_err("none"),
            AuthFailure::Missing
        );
        assert_eq!(
            s.authenticate(Some(b"Bearer nope"), Via::Grpc)
                .expect_err("unknown"),
            AuthFailure::Unknown
        );
        let c = s
            .authenticate(Some(b"Bearer secret"), Via::Grpc)
            .expect("alice");
        assert_eq!(c.user(), "alice");
        assert!(!s.unrestricted(&c));
        assert!(s.unrestricted(&Caller::new("root", Via::Grpc)));
        // A reload picks up a new token; a broken file keeps the old ones.
        std::fs::write(&file, tokens::line("bob", "other")).expect("write");
        s.reload().expect("reload");
        assert!(s.authenticate(Some(b"Bearer secret"), Via::Grpc).is_err());
        assert!(s.authenticate(Some(b"Bearer other"), Via::Grpc).is_ok());
        std::fs::write(&file, "garbage\n").expect("write");
        assert!(s.reload().is_err());
        assert!(s.authenticate(Some(b"Bearer other"), Via::Grpc).is_ok());
    }
}
