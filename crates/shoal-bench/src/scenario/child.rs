//! A `shoal serve --config FILE` child process, for the phases of
//! `bucketcache` that must kill a server with SIGKILL (an in-process server
//! cannot be killed). Owns the process: starting it and reading the
//! addresses it prints, reading its `/api/status` counters over HTTP, and
//! stopping it with SIGKILL or SIGTERM. A child never outlives its
//! [`ChildServer`]: every path that drops one (errors included) kills and
//! reaps the process.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a child may take to print its addresses (region opens, WAL
/// replay and L2 recovery included).
const START_TIMEOUT: Duration = Duration::from_secs(180);
/// How long an HTTP request to the child may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a child server failed.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The process could not be started.
    #[error("starting {bin} serve: {source}")]
    Spawn {
        /// The binary.
        bin: String,
        /// The error.
        source: std::io::Error,
    },
    /// Another I/O operation on the process or its files failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// It exited before printing where it listens.
    #[error("shoal serve exited before printing its addresses ({status}); its stderr ends:\n{log}")]
    EarlyExit {
        /// Its exit status, if known.
        status: String,
        /// The end of its stderr.
        log: String,
    },
    /// It did not print where it listens in time.
    #[error("shoal serve did not print its addresses within {timeout:?}; its stderr ends:\n{log}")]
    StartTimeout {
        /// The limit.
        timeout: Duration,
        /// The end of its stderr.
        log: String,
    },
    /// It did not exit after SIGTERM in time (it was then killed).
    #[error("shoal serve did not stop within {0:?} of SIGTERM (killed)")]
    StopTimeout(Duration),
    /// It exited unsuccessfully after SIGTERM.
    #[error("shoal serve exited with {status} after SIGTERM; its stderr ends:\n{log}")]
    BadExit {
        /// Its exit status.
        status: ExitStatus,
        /// The end of its stderr.
        log: String,
    },
    /// An HTTP request to it failed.
    #[error("GET http://{addr}{path}: {message}")]
    Http {
        /// Its HTTP address.
        addr: SocketAddr,
        /// The path.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// The process itself: killed (SIGKILL) and reaped when dropped.
struct Guard(Option<Child>);

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            // Errors mean it already exited; nothing else to do in a drop.
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A running `shoal serve` child.
pub struct ChildServer {
    guard: Guard,
    /// Its gRPC address.
    pub grpc: SocketAddr,
    /// Its HTTP address.
    pub http: SocketAddr,
    log: PathBuf,
}

/// The counters of `/api/status` that the scenario samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    /// Client requests since start.
    pub requests: u64,
    /// L2 hits since start.
    pub l2_hits: u64,
    /// L2 misses since start.
    pub l2_misses: u64,
    /// Object-store GETs caused by cache misses since start.
    pub object_store_gets: u64,
}

impl ChildServer {
    /// Starts `bin serve --config config`, its stderr appended to `log`,
    /// and waits until it prints its gRPC and HTTP addresses.
    pub async fn start(bin: &Path, config: &Path, log: &Path) -> Result<ChildServer, ChildError> {
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|source| ChildError::Io {
                what: format!("opening {}", log.display()),
                source,
            })?;
        let mut child = Command::new(bin)
            .arg("serve")
            .arg("--config")
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|source| ChildError::Spawn {
                bin: bin.display().to_string(),
                source,
            })?;
        let stdout = child.stdout.take();
        let mut guard = Guard(Some(child));
        let Some(stdout) = stdout else {
            return Err(ChildError::Io {
                what: "reading shoal serve's stdout".into(),
                source: std::io::Error::other("no stdout pipe"),
            });
        };
        // A thread reads the lines it prints, hands over the addresses and
        // keeps draining, so the child never blocks on a full pipe; it ends
        // when the child's stdout closes.
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("shoal-serve-stdout".into())
            .spawn(move || {
                let (mut grpc, mut http) = (None, None);
                let mut tx = Some(tx);
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if let Some(rest) = line.strip_prefix("gRPC:") {
                        grpc = rest.trim().parse::<SocketAddr>().ok();
                    } else if let Some(rest) = line.strip_prefix("HTTP:") {
                        let rest = rest.trim().trim_start_matches("http://");
                        http = rest
                            .split('/')
                            .next()
                            .and_then(|a| a.parse::<SocketAddr>().ok());
                    }
                    if let (Some(g), Some(h)) = (grpc, http)
                        && let Some(tx) = tx.take()
                    {
                        let _ = tx.send((g, h));
                    }
                }
            })
            .map_err(|source| ChildError::Io {
                what: "starting the stdout reader thread".into(),
                source,
            })?;
        match tokio::time::timeout(START_TIMEOUT, rx).await {
            Ok(Ok((grpc, http))) => Ok(ChildServer {
                guard,
                grpc,
                http,
                log: log.to_path_buf(),
            }),
            Ok(Err(_)) => {
                // Stdout closed without the addresses: it exited (or is
                // about to); reap it for the status.
                let status = match guard.0.take() {
                    Some(mut c) => {
                        let _ = c.kill();
                        c.wait()
                            .map_or_else(|e| format!("wait failed: {e}"), |s| s.to_string())
                    }
                    None => "unknown".into(),
                };
                Err(ChildError::EarlyExit {
                    status,
                    log: log_tail(log),
                })
            }
            Err(_) => Err(ChildError::StartTimeout {
                timeout: START_TIMEOUT,
                log: log_tail(log),
            }),
        }
    }

    /// Its process id.
    pub fn pid(&self) -> Option<u32> {
        self.guard.0.as_ref().map(Child::id)
    }

    /// SIGKILL, no warning; returns once the process is gone.
    pub fn kill9(mut self) -> Result<(), ChildError> {
        if let Some(mut c) = self.guard.0.take() {
            c.kill().map_err(|source| ChildError::Io {
                what: "sending SIGKILL".into(),
                source,
            })?;
            c.wait().map_err(|source| ChildError::Io {
                what: "waiting for the killed server".into(),
                source,
            })?;
        }
        Ok(())
    }

    /// SIGTERM, then waits up to `timeout` for a clean exit (SIGKILL after
    /// that). An unsuccessful exit is an error.
    pub async fn terminate(mut self, timeout: Duration) -> Result<(), ChildError> {
        let Some(pid) = self.pid() else {
            return Ok(());
        };
        // No signal API in std and no unsafe code here: the `kill` command.
        // The child is not reaped yet, so the pid cannot have been reused.
        let sent = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|source| ChildError::Io {
                what: "running kill -TERM".into(),
                source,
            })?;
        if !sent.success() {
            return Err(ChildError::Io {
                what: format!("kill -TERM {pid}"),
                source: std::io::Error::other(format!("exited with {sent}")),
            });
        }
        let deadline = Instant::now() + timeout;
        loop {
            let status = match self.guard.0.as_mut() {
                Some(c) => c.try_wait().map_err(|source| ChildError::Io {
                    what: "waiting for the server to stop".into(),
                    source,
                })?,
                None => return Ok(()),
            };
            if let Some(status) = status {
                self.guard.0 = None;
                return if status.success() {
                    Ok(())
                } else {
                    Err(ChildError::BadExit {
                        status,
                        log: log_tail(&self.log),
                    })
                };
            }
            if Instant::now() >= deadline {
                // Dropping `self` kills it.
                return Err(ChildError::StopTimeout(timeout));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The `/api/status` counters of the server whose HTTP address is `http`.
pub async fn counters(http: SocketAddr) -> Result<Counters, ChildError> {
    let v = http_get_json(http, "/api/status").await?;
    let bad = |message: String| ChildError::Http {
        addr: http,
        path: "/api/status".into(),
        message,
    };
    let requests = v["requests_total"]
        .as_u64()
        .ok_or_else(|| bad("no requests_total".into()))?;
    let cache = &v["cache"];
    let num = |k: &str| cache[k].as_u64().unwrap_or(0);
    Ok(Counters {
        requests,
        l2_hits: num("l2_hits"),
        l2_misses: num("l2_misses"),
        object_store_gets: num("object_store_gets"),
    })
}

/// The whole `/api/status` document of the server at `http`.
pub async fn status_json(http: SocketAddr) -> Result<serde_json::Value, ChildError> {
    http_get_json(http, "/api/status").await
}

/// GET `path` over HTTP/1.1 from `addr` and parse the body as JSON.
async fn http_get_json(addr: SocketAddr, path: &str) -> Result<serde_json::Value, ChildError> {
    let body = http_get_text(addr, path).await?;
    serde_json::from_str(&body).map_err(|e| ChildError::Http {
        addr,
        path: path.into(),
        message: format!("bad JSON: {e}"),
    })
}

/// GET `path` over HTTP/1.1 from `addr`: the body (e.g. `/metrics`).
pub async fn http_get_text(addr: SocketAddr, path: &str) -> Result<String, ChildError> {
    let err = |message: String| ChildError::Http {
        addr,
        path: path.into(),
        message,
    };
    let exchange = async {
        let mut s = tokio::net::TcpStream::connect(addr).await?;
        s.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).await?;
        Ok::<_, std::io::Error>(raw)
    };
    let raw = tokio::time::timeout(HTTP_TIMEOUT, exchange)
        .await
        .map_err(|_| err(format!("no answer within {HTTP_TIMEOUT:?}")))?
        .map_err(|e| err(e.to_string()))?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| err("malformed response".into()))?;
    let code = head.split_whitespace().nth(1).unwrap_or_default();
    if code != "200" {
        return Err(err(format!("status {code}")));
    }
    Ok(
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(body)
        } else {
            body.to_string()
        },
    )
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// The last lines of a child's stderr log, for error messages.
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
