//! etcd as a child process for the cluster scenarios (`failover`,
//! `rolling-restart`), and the /proc reading of a child's CPU time.

use super::ScenarioError;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// etcd as a child process on free loopback ports; killed when dropped.
pub struct EtcdChild {
    child: Option<Child>,
    /// Its client URL.
    pub endpoint: String,
}

impl Drop for EtcdChild {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A free TCP port on 127.0.0.1 (free when asked; bind it soon), below
/// Linux's ephemeral range (32768 and up), so that an outgoing connection
/// of another process cannot take it between now and its bind; the kernel
/// picks one only if none of a few hundred tries is free.
pub fn free_port() -> Result<u16, ScenarioError> {
    for _ in 0..500 {
        let port = rand::random_range(20_000..32_000u16);
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| ScenarioError::Server(format!("finding a free port: {e}")))
}

impl EtcdChild {
    /// Starts one with its data under `dir`; waits until it is healthy.
    pub async fn start(dir: &Path) -> Result<EtcdChild, ScenarioError> {
        let (client, peer) = (free_port()?, free_port()?);
        let endpoint = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let child = Command::new("etcd")
            .args(["--name", "shoal-bench"])
            .arg("--data-dir")
            .arg(dir.join("etcd"))
            .args(["--listen-client-urls", &endpoint])
            .args(["--advertise-client-urls", &endpoint])
            .args(["--listen-peer-urls", &peer_url])
            .args(["--initial-advertise-peer-urls", &peer_url])
            .args(["--initial-cluster", &format!("shoal-bench={peer_url}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                ScenarioError::Server(format!(
                    "starting etcd ({e}); cluster scenarios need etcd (Debian: apt-get install etcd-server)"
                ))
            })?;
        let e = EtcdChild {
            child: Some(child),
            endpoint,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while shoal_cluster_probe(&e.endpoint).await.is_err() {
            if Instant::now() > deadline {
                return Err(ScenarioError::Server("etcd did not start in 30 s".into()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(e)
    }
}

/// True once something answers HTTP on the endpoint's `/health`.
async fn shoal_cluster_probe(endpoint: &str) -> Result<(), ()> {
    let addr = endpoint.trim_start_matches("http://");
    let mut s = tokio::net::TcpStream::connect(addr).await.map_err(|_| ())?;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    s.write_all(
        format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .map_err(|_| ())?;
    let mut out = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), s.read_to_string(&mut out)).await;
    if out.contains("\"health\":\"true\"") {
        Ok(())
    } else {
        Err(())
    }
}

/// User + system CPU seconds of process `pid` so far (Linux /proc).
pub fn cpu_seconds(pid: Option<u32>) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid?)).ok()?;
    // Fields after the command name (which may hold spaces), from field 3.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let (utime, stime): (f64, f64) = (fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?);
    // Clock ticks: 100 per second on Linux (USER_HZ).
    Some((utime + stime) / 100.0)
}
