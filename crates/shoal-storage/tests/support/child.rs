//! A tiny harness for tests that run part of themselves in a child process and kill
//! it: the test binary re-executes one of its own (ignored) tests as the child and
//! reads what it prints, line by line, with deadlines.

use std::io::{BufRead, BufReader};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Instant;

/// A child process running one test of this test binary, with its stdout as lines.
pub struct Child {
    process: std::process::Child,
    lines: mpsc::Receiver<String>,
    killed: bool,
}

/// What waiting for a line gave.
#[derive(Debug)]
pub enum Next {
    Line(String),
    /// The child closed its stdout (it exited or was killed).
    Eof,
    /// The deadline passed.
    Timeout,
}

impl Child {
    /// Runs the test named `test` (exactly) of the current test binary, ignored tests
    /// included, with `envs` set.
    pub fn spawn(test: &str, envs: &[(&str, String)]) -> Child {
        let exe = std::env::current_exe().expect("current test binary");
        let mut command = Command::new(exe);
        command
            .args([
                "--exact",
                test,
                "--nocapture",
                "--ignored",
                "--test-threads=1",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in envs {
            command.env(k, v);
        }
        let mut process = command.spawn().expect("spawn child test process");
        let stdout = process.stdout.take().expect("child stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Child {
            process,
            lines,
            killed: false,
        }
    }

    /// The next line the child printed, waiting at most until `deadline`.
    pub fn next_line(&self, deadline: Instant) -> Next {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(line) => Next::Line(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => Next::Eof,
            Err(mpsc::RecvTimeoutError::Timeout) => Next::Timeout,
        }
    }

    /// SIGKILL (on Unix, `Child::kill` is SIGKILL): no destructor, no flush runs.
    pub fn kill(&mut self) {
        let _ = self.process.kill();
        self.killed = true;
    }

    /// Every line printed before the child died, then its exit status.
    pub fn drain(self, deadline: Instant) -> (Vec<String>, ExitStatus) {
        let mut rest = Vec::new();
        loop {
            match self.next_line(deadline) {
                Next::Line(l) => rest.push(l),
                Next::Eof => break,
                Next::Timeout => panic!("child still printing after the deadline"),
            }
        }
        let mut this = self;
        let status = this.process.wait().expect("wait for child");
        this.killed = true;
        (rest, status)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.killed {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}
