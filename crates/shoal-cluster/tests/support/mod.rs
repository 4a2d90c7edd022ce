//! A real etcd for tests: Debian's `etcd` on free loopback ports with a
//! temporary data directory, killed when dropped; it can be stopped and
//! started again on the same ports and data, and paused (SIGSTOP).
#![allow(dead_code, clippy::unwrap_used)] // test code; each test uses part of it

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running etcd.
pub struct EtcdServer {
    child: Option<Child>,
    client_port: u16,
    peer_port: u16,
    dir: tempfile::TempDir,
    /// Started once: its ports are fixed from then on.
    started: bool,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// True if `etcd` is installed; outside CI a missing one skips the test
/// with a note, under CI it is a failure (`scripts/test` installs it).
pub fn have_etcd() -> bool {
    let found = Command::new("sh")
        .args(["-c", "command -v etcd"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "etcd is not installed; scripts/test installs Debian's etcd-server"
        );
        eprintln!("skipped: etcd is not installed (apt-get install etcd-server)");
    }
    found
}

impl EtcdServer {
    /// Starts etcd and waits until it answers.
    pub fn start() -> EtcdServer {
        let mut s = EtcdServer {
            child: None,
            client_port: free_port(),
            peer_port: free_port(),
            dir: tempfile::tempdir().unwrap(),
            started: false,
        };
        s.run();
        s
    }

    /// The client URL.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }

    fn run(&mut self) {
        let client = self.endpoint();
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let child = Command::new("etcd")
            .args(["--name", "shoal-test"])
            .arg("--data-dir")
            .arg(self.dir.path().join("etcd"))
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &format!("shoal-test={peer}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start etcd");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.healthy() {
            assert!(Instant::now() < deadline, "etcd did not start");
            let exited = self
                .child
                .as_mut()
                .is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))));
            if exited {
                // A port found free was taken before etcd bound it: try
                // others (only before its first start: a restart must keep
                // its ports).
                assert!(!self.started, "etcd exited on restart");
                self.client_port = free_port();
                self.peer_port = free_port();
                return self.run();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.started = true;
    }

    /// True if `/health` says so.
    fn healthy(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.client_port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let req = format!(
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.client_port
        );
        if s.write_all(req.as_bytes()).is_err() {
            return false;
        }
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out.contains("\"health\":\"true\"")
    }

    /// Kills etcd (its data stays).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same ports and data.
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// SIGSTOP / SIGCONT.
    pub fn pause(&self, paused: bool) {
        let pid = self.child.as_ref().unwrap().id();
        let sig = if paused { "-STOP" } else { "-CONT" };
        assert!(
            Command::new("kill")
                .args([sig, &pid.to_string()])
                .status()
                .unwrap()
                .success()
        );
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        if let Some(c) = &self.child {
            let _ = Command::new("kill")
                .args(["-CONT", &c.id().to_string()])
                .status();
        }
        self.stop();
    }
}
