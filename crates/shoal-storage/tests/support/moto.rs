//! A real S3-compatible server for tests: `moto_server` on a free loopback port.
//!
//! [`MotoServer::start`] spawns `moto_server -H 127.0.0.1 -p <port>`, waits (polling with
//! a deadline) until it accepts connections, and kills it on drop. Buckets are created
//! with a plain HTTP `PUT /<bucket>` (moto does not check signatures). Only loopback is
//! ever used. Install the server with `pip install 'moto[server]'`.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use shoal_storage::object::{BackendConfig, ObjectStoreConfig, RetryPolicy, S3Config, Secret};

/// How long moto may take to start accepting connections.
const START_DEADLINE: Duration = Duration::from_secs(30);

/// A running moto server; killed when dropped.
pub struct MotoServer {
    child: Child,
    port: u16,
}

impl MotoServer {
    /// Starts a server on a free loopback port. Panics with installation instructions if
    /// `moto_server` is not on `PATH`.
    pub fn start() -> MotoServer {
        // A port found free can be taken before moto binds it; try a few.
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port();
            let child = match Command::new("moto_server")
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
            {
                Ok(child) => child,
                Err(e) if e.kind() == ErrorKind::NotFound => panic!(
                    "moto_server is not installed (needed for S3 integration tests); \
                     install it with: pip install 'moto[server]'"
                ),
                Err(e) => panic!("cannot start moto_server: {e}"),
            };
            let mut server = MotoServer { child, port };
            match server.wait_ready() {
                Ok(()) => return server,
                Err(e) => last_error = e, // dropped (killed) here
            }
        }
        panic!("moto_server did not start: {last_error}");
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let start = Instant::now();
        let addr = self.addr();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "moto_server exited with {status} (port {})",
                    self.port
                ));
            }
            // Ready when moto itself answers: a port found free can be taken
            // by another test's server before moto binds it (moto then exits).
            if self.answers_as_s3() {
                return Ok(());
            }
            if start.elapsed() > START_DEADLINE {
                return Err(format!(
                    "not accepting connections on {addr} after {START_DEADLINE:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// True if the server on our port answers an S3 ListBuckets.
    fn answers_as_s3(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect_timeout(&self.addr(), Duration::from_millis(200))
        else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let request = format!(
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.port
        );
        if stream.write_all(request.as_bytes()).is_err() {
            return false;
        }
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        String::from_utf8_lossy(&response).contains("ListAllMyBucketsResult")
    }

    fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates `bucket` with a plain `PUT /<bucket>`.
    pub fn create_bucket(&self, bucket: &str) {
        let status = self.raw_request("PUT", &format!("/{bucket}"));
        assert_eq!(status, 200, "creating bucket {bucket} on moto");
    }

    /// Sends a body-less request and returns the HTTP status.
    fn raw_request(&self, method: &str, path: &str) -> u16 {
        let mut stream = TcpStream::connect_timeout(&self.addr(), Duration::from_secs(5))
            .expect("connect to moto");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("set timeout");
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n",
            self.port
        );
        stream.write_all(request.as_bytes()).expect("send to moto");
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        let text = String::from_utf8_lossy(&response);
        text.split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad response from moto: {text:?}"))
    }

    /// A config for `bucket` on this server: endpoint, `allow_http`, region us-east-1,
    /// dummy credentials, and quick retries so failure tests stay fast.
    pub fn config(&self, bucket: &str) -> ObjectStoreConfig {
        s3_config(&self.endpoint(), bucket)
    }

    /// Creates a fresh bucket and returns its config.
    pub fn bucket_config(&self, bucket: &str) -> ObjectStoreConfig {
        self.create_bucket(bucket);
        self.config(bucket)
    }
}

/// An S3 config for `bucket` at a loopback `endpoint` with dummy credentials.
pub fn s3_config(endpoint: &str, bucket: &str) -> ObjectStoreConfig {
    let mut config = ObjectStoreConfig::new(BackendConfig::S3(S3Config {
        bucket: bucket.to_owned(),
        region: Some("us-east-1".to_owned()),
        endpoint: Some(endpoint.to_owned()),
        access_key_id: Some("testing".to_owned()),
        secret_access_key: Some(Secret::new("testing")),
        allow_http: true,
        ..S3Config::default()
    }));
    config.retry = RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        deadline: Duration::from_secs(20),
    };
    config
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("find a free loopback port")
}

/// A loopback port with nothing listening (bound, then released).
pub fn closed_port() -> u16 {
    free_port()
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
