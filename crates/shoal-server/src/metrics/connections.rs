//! Connection counters of the listeners: accepted, open, closed by
//! reason, and the effective connection cap. Lock-free: relaxed atomics,
//! updated by `crate::listen` as connections come and go.
//!
//! Invariant: for each listener, `open = accepted - closed` (summed over
//! reasons); a connection refused at the cap is accepted and closed at once
//! with reason `limit`.

use std::sync::atomic::{AtomicU64, Ordering};

/// Which listener a connection came in on (the `listener` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The gRPC port (HTTP/2 only).
    Grpc,
    /// The HTTP port (metrics, status page, health).
    Http,
    /// The Thrift1 gateway's port.
    Thrift,
    /// HBase's native RPC port.
    HbaseRpc,
    /// HBase's REST gateway's port.
    Rest,
}

impl Listener {
    /// Its name in `[tls] listeners`.
    pub fn tls_name(self) -> crate::config::TlsListenerName {
        use crate::config::TlsListenerName;
        match self {
            Listener::Grpc => TlsListenerName::Grpc,
            Listener::Http => TlsListenerName::Http,
            Listener::Thrift => TlsListenerName::Thrift,
            Listener::HbaseRpc => TlsListenerName::HbaseRpc,
            Listener::Rest => TlsListenerName::Rest,
        }
    }

    /// Every listener, in label order.
    pub const ALL: [Listener; 5] = [
        Listener::Grpc,
        Listener::Http,
        Listener::Thrift,
        Listener::HbaseRpc,
        Listener::Rest,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Listener::Grpc => "grpc",
            Listener::Http => "http",
            Listener::Thrift => "thrift",
            Listener::HbaseRpc => "hbase_rpc",
            Listener::Rest => "rest",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Why a connection ended (the `reason` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// No HTTP/2 preface or first request within `server.handshake_timeout`.
    Handshake,
    /// No call in flight for `server.idle_timeout` (or, on the HTTP port, no
    /// next request's headers within `server.handshake_timeout`).
    Idle,
    /// An HTTP/2 PING went unanswered for `server.keepalive_timeout`.
    Keepalive,
    /// Refused at once: `server.max_connections` were open.
    Limit,
    /// Closed because the server is stopping.
    Shutdown,
    /// The client closed it, or an I/O or protocol error ended it.
    Client,
    /// The TLS handshake failed (a plain-text client, an untrusted or
    /// missing client certificate).
    Tls,
}

impl CloseReason {
    /// Every reason, in label order.
    pub const ALL: [CloseReason; 7] = [
        CloseReason::Handshake,
        CloseReason::Idle,
        CloseReason::Keepalive,
        CloseReason::Limit,
        CloseReason::Shutdown,
        CloseReason::Client,
        CloseReason::Tls,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::Handshake => "handshake",
            CloseReason::Idle => "idle",
            CloseReason::Keepalive => "keepalive",
            CloseReason::Limit => "limit",
            CloseReason::Shutdown => "shutdown",
            CloseReason::Client => "client",
            CloseReason::Tls => "tls",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The live counters.
#[derive(Debug, Default)]
pub struct ConnectionMetrics {
    accepted: [AtomicU64; 5],
    closed: [[AtomicU64; 7]; 5],
    max_connections: AtomicU64,
}

impl ConnectionMetrics {
    /// A connection was accepted (also one refused at the cap).
    pub fn accepted(&self, on: Listener) {
        self.accepted[on.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// A connection ended.
    pub fn closed(&self, on: Listener, why: CloseReason) {
        self.closed[on.index()][why.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// Records the effective connection cap.
    pub fn set_max_connections(&self, max: usize) {
        self.max_connections.store(max as u64, Ordering::Relaxed);
    }

    /// The figures now.
    pub fn snapshot(&self) -> ConnectionMetricsSnapshot {
        let mut s = ConnectionMetricsSnapshot {
            max_connections: self.max_connections.load(Ordering::Relaxed),
            ..Default::default()
        };
        for on in Listener::ALL {
            let i = on.index();
            s.accepted[i] = self.accepted[i].load(Ordering::Relaxed);
            for why in CloseReason::ALL {
                let j = why.index();
                s.closed[i][j] = self.closed[i][j].load(Ordering::Relaxed);
            }
        }
        s
    }
}

/// A copy of the counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnectionMetricsSnapshot {
    accepted: [u64; 5],
    closed: [[u64; 7]; 5],
    /// The effective `server.max_connections` (0 before the listeners start).
    pub max_connections: u64,
}

impl ConnectionMetricsSnapshot {
    /// Connections accepted on `on` since start.
    pub fn accepted(&self, on: Listener) -> u64 {
        self.accepted[on.index()]
    }

    /// Connections on `on` closed for `why` since start.
    pub fn closed(&self, on: Listener, why: CloseReason) -> u64 {
        self.closed[on.index()][why.index()]
    }

    /// Connections open on `on` now.
    pub fn open(&self, on: Listener) -> u64 {
        let closed: u64 = self.closed[on.index()].iter().sum();
        self.accepted(on).saturating_sub(closed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_is_accepted_minus_closed() {
        let m = ConnectionMetrics::default();
        for _ in 0..5 {
            m.accepted(Listener::Grpc);
        }
        m.accepted(Listener::Http);
        m.closed(Listener::Grpc, CloseReason::Idle);
        m.closed(Listener::Grpc, CloseReason::Limit);
        let s = m.snapshot();
        assert_eq!(s.open(Listener::Grpc), 3);
        assert_eq!(s.open(Listener::Http), 1);
        assert_eq!(s.closed(Listener::Grpc, CloseReason::Limit), 1);
        assert_eq!(s.closed(Listener::Http, CloseReason::Limit), 0);
    }
}
