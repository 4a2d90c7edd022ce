//! CPU per operation: readings of a server's process CPU time (from its
//! status RPC, which reports `getrusage`) and of this process's own, taken
//! around a phase and divided by the operations it ran. With the load
//! generator in its own process, the two are the server's and the client's
//! cost per call.

use shoal_client::Admin;
use shoal_server::process_cpu::process_cpu;
use std::time::Duration;

/// One reading of both processes' CPU time.
#[derive(Debug, Clone, Copy)]
pub struct CpuReading {
    /// The server's user and system time, when it could be read.
    server: Option<(Duration, Duration)>,
    /// This process's user and system time.
    client: (Duration, Duration),
}

/// CPU per operation over a phase, in microseconds.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct CpuPerOp {
    /// The server process, user + system (None: not measured).
    pub server_us: Option<f64>,
    /// Of which in the kernel.
    pub server_system_us: Option<f64>,
    /// This (client) process, user + system.
    pub client_us: f64,
    /// Of which in the kernel.
    pub client_system_us: f64,
}

impl CpuReading {
    /// Reads both: the server through `admin` (None: the server runs in this
    /// process, so its CPU cannot be told apart from the client's).
    pub async fn take(admin: Option<&Admin>) -> CpuReading {
        let server = match admin {
            Some(a) => a.status().await.ok().map(|s| {
                (
                    Duration::from_secs_f64(s.cpu_user_seconds.max(0.0)),
                    Duration::from_secs_f64(s.cpu_system_seconds.max(0.0)),
                )
            }),
            None => None,
        };
        let me = process_cpu();
        CpuReading {
            server,
            client: (me.user, me.system),
        }
    }

    /// CPU per operation from `self` to `later` over `ops` operations.
    pub fn per_op(&self, later: &CpuReading, ops: u64) -> CpuPerOp {
        let ops = ops.max(1) as f64;
        let us = |a: Duration, b: Duration| b.saturating_sub(a).as_secs_f64() * 1e6 / ops;
        let server = self.server.zip(later.server);
        CpuPerOp {
            server_us: server.map(|(a, b)| us(a.0 + a.1, b.0 + b.1)),
            server_system_us: server.map(|(a, b)| us(a.1, b.1)),
            client_us: us(
                self.client.0 + self.client.1,
                later.client.0 + later.client.1,
            ),
            client_system_us: us(self.client.1, later.client.1),
        }
    }
}

impl CpuPerOp {
    /// One line for a report: "server 42 µs (sys 20), client 30 µs (sys 12)".
    pub fn describe(&self) -> String {
        let server = match (self.server_us, self.server_system_us) {
            (Some(t), Some(s)) => format!("server {t:.1} µs (sys {s:.1})"),
            _ => "server not measured (in this process)".to_string(),
        };
        format!(
            "{server}, client {:.1} µs (sys {:.1})",
            self.client_us, self.client_system_us
        )
    }
}
