//! Starts the real `shoal` binary on free loopback ports with a temp data
//! dir, reads where it listens from its stdout, and kills it when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `shoal serve`.
pub struct ServerProcess {
    child: Option<Child>,
    pub grpc: SocketAddr,
    pub http: SocketAddr,
    /// The Thrift gateway (None when the config turned it off).
    pub thrift: Option<SocketAddr>,
    /// HBase's native RPC (None when the config turned it off).
    pub hbase: Option<SocketAddr>,
    /// The read-only ZooKeeper registry (None unless the config turned it on).
    pub zk: Option<SocketAddr>,
    /// HBase's REST gateway (None when the config turned it off).
    pub rest: Option<SocketAddr>,
    pub data_dir: PathBuf,
    stderr_log: PathBuf,
}

/// Path of the binary under test.
pub fn shoal_bin() -> &'static str {
    env!("CARGO_BIN_EXE_shoal")
}

/// Writes a small-server config (small flush size, small caches) to `dir`.
pub fn write_config(dir: &Path, extra: &str) -> PathBuf {
    let path = dir.join("shoal.toml");
    let text = format!(
        "[cache]\nl1_data = \"16MiB\"\nl2_capacity = \"64MiB\"\n[regions]\nflush_size = \"1MiB\"\nsplit_check_interval = \"1s\"\n{extra}"
    );
    std::fs::write(&path, text).expect("write config");
    path
}

impl ServerProcess {
    /// Starts a server on `data_dir` with `config`, on free ports.
    pub fn start(data_dir: &Path, config: Option<&Path>) -> ServerProcess {
        ServerProcess::start_with_env(data_dir, config, &[])
    }

    /// As [`ServerProcess::start`], with extra environment variables.
    pub fn start_with_env(
        data_dir: &Path,
        config: Option<&Path>,
        env: &[(&str, &str)],
    ) -> ServerProcess {
        ServerProcess::start_full(data_dir, config, env, None, None)
    }

    /// As [`ServerProcess::start`], with HBase's native RPC on `hbase`
    /// (a port that stays the same across restarts).
    pub fn start_with_hbase_addr(
        data_dir: &Path,
        config: Option<&Path>,
        hbase: SocketAddr,
    ) -> ServerProcess {
        ServerProcess::start_full(data_dir, config, &[], None, Some(hbase))
    }

    /// As [`ServerProcess::start`], under an open-files limit (soft and hard)
    /// of `nofile`.
    pub fn start_with_open_files(
        data_dir: &Path,
        config: Option<&Path>,
        nofile: u64,
    ) -> ServerProcess {
        ServerProcess::start_full(data_dir, config, &[], Some(nofile), None)
    }

    fn start_full(
        data_dir: &Path,
        config: Option<&Path>,
        env: &[(&str, &str)],
        nofile: Option<u64>,
        hbase: Option<SocketAddr>,
    ) -> ServerProcess {
        let stderr_log = data_dir.with_extension(format!(
            "stderr.{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let log = std::fs::File::create(&stderr_log).expect("stderr log");
        let mut cmd = match nofile {
            None => Command::new(shoal_bin()),
            Some(n) => {
                // `ulimit -n` in sh sets the soft and the hard limit.
                let mut c = Command::new("sh");
                c.args([
                    "-c",
                    &format!("ulimit -n {n} && exec \"$0\" \"$@\""),
                    shoal_bin(),
                ]);
                c
            }
        };
        cmd.arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .args([
                "--grpc-addr",
                "127.0.0.1:0",
                "--http-addr",
                "127.0.0.1:0",
                "--thrift-addr",
                "127.0.0.1:0",
                "--rest-addr",
                "127.0.0.1:0",
                "--hbase-rpc-addr",
                &hbase.map_or("127.0.0.1:0".to_string(), |a| a.to_string()),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        if let Some(c) = config {
            cmd.arg("--config").arg(c);
        }
        cmd.envs(env.iter().copied());
        let mut child = cmd.spawn().expect("spawn shoal serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let (mut grpc, mut http, mut thrift, mut hbase, mut zk, mut rest) =
            (None, None, None, None, None, None);
        let deadline = Instant::now() + Duration::from_secs(60);
        // The addresses come first, then the data line.
        loop {
            assert!(Instant::now() < deadline, "server did not start in time");
            let Some(Ok(line)) = lines.next() else {
                let _ = child.kill();
                let log = std::fs::read_to_string(&stderr_log).unwrap_or_default();
                panic!("server exited before printing its addresses; stderr:\n{log}");
            };
            if let Some(rest) = line.strip_prefix("gRPC:") {
                grpc = rest.split_whitespace().next().and_then(|a| a.parse().ok());
            } else if let Some(rest) = line.strip_prefix("HTTP:") {
                let addr = rest
                    .trim()
                    .trim_start_matches("https://")
                    .trim_start_matches("http://");
                let addr = addr.split('/').next().unwrap_or_default();
                http = addr.parse().ok();
            } else if let Some(rest) = line.strip_prefix("Thrift:") {
                thrift = rest.split_whitespace().next().and_then(|a| a.parse().ok());
            } else if let Some(rest) = line.strip_prefix("HBase:") {
                hbase = rest.split_whitespace().next().and_then(|a| a.parse().ok());
            } else if let Some(rest) = line.strip_prefix("ZooKeeper:") {
                zk = rest.split_whitespace().next().and_then(|a| a.parse().ok());
            } else if let Some(line) = line.strip_prefix("REST:") {
                let addr = line
                    .trim()
                    .trim_start_matches("https://")
                    .trim_start_matches("http://");
                rest = addr.split('/').next().and_then(|a| a.parse().ok());
            } else if line.starts_with("data:") {
                break;
            }
        }
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        ServerProcess {
            child: Some(child),
            grpc: grpc.expect("grpc"),
            http: http.expect("http"),
            thrift,
            hbase,
            zk,
            rest,
            data_dir: data_dir.to_path_buf(),
            stderr_log,
        }
    }

    /// The server's process id.
    #[allow(dead_code)] // not every test binary that includes this module uses it
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// The gRPC address as a URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.grpc)
    }

    /// SIGKILL, no warning.
    pub fn kill9(mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM and wait for a clean exit; returns the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let mut c = self.child.take().expect("running");
        let status = Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(s) = c.try_wait().expect("wait") {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "server did not stop after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// True while the process runs.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// The server's stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_log).unwrap_or_default()
    }

    /// GET `path` from the HTTP port: (status code, body).
    pub fn http_get(&self, path: &str) -> (u16, String) {
        http_get(self.http, path)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A minimal HTTP/1.1 GET (no dependency needed for a loopback test).
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect http");
    s.set_read_timeout(Some(Duration::from_secs(30))).ok();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    (code, body)
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

/// Runs `shoal shell` with `args` and `stdin`; returns (exit code, stdout, stderr).
pub fn shell(addr: SocketAddr, args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(shoal_bin())
        .arg("shell")
        .arg("--addr")
        .arg(addr.to_string())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn shell");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("shell output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
