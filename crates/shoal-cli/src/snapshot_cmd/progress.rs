//! The progress bar of a snapshot copy on stderr: bytes, objects, rate and
//! time left. On a terminal it is one line redrawn five times a second;
//! otherwise (a log, a pipe) a plain line at every tenth of the bytes and
//! at least every ten seconds. Objects already at the target count as done
//! but not toward the rate.

use crate::import::progress::bytes_shown;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Counters of one copy, and how they are shown.
#[derive(Debug)]
pub(crate) struct Progress {
    verb: &'static str,
    objects: u64,
    bytes: u64,
    copied_objects: AtomicU64,
    copied_bytes: AtomicU64,
    skipped_objects: AtomicU64,
    skipped_bytes: AtomicU64,
    started: Instant,
    tty: bool,
    stopped: AtomicBool,
    /// Held while a line is written; the last plain line's tenth and time.
    out: Mutex<(u64, Instant)>,
}

impl Progress {
    /// Progress of copying `objects` objects, `bytes` bytes in all;
    /// `verb` says what is done to them ("exported").
    pub(crate) fn new(verb: &'static str, objects: usize, bytes: u64) -> Arc<Progress> {
        Arc::new(Progress {
            verb,
            objects: objects as u64,
            bytes,
            copied_objects: AtomicU64::new(0),
            copied_bytes: AtomicU64::new(0),
            skipped_objects: AtomicU64::new(0),
            skipped_bytes: AtomicU64::new(0),
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            stopped: AtomicBool::new(false),
            out: Mutex::new((0, Instant::now())),
        })
    }

    /// `n` bytes more were copied.
    pub(crate) fn bytes(&self, n: u64) {
        self.copied_bytes.fetch_add(n, Ordering::Relaxed);
    }

    /// An attempt that copied up to `n` bytes did not count after all.
    pub(crate) fn retract(&self, n: u64) {
        let _ = self
            .copied_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some(b.saturating_sub(n))
            });
    }

    /// One object was copied and checked.
    pub(crate) fn copied(&self) {
        self.copied_objects.fetch_add(1, Ordering::Relaxed);
    }

    /// One object of `size` bytes was already at the target, checked.
    pub(crate) fn skipped(&self, size: u64) {
        self.skipped_objects.fetch_add(1, Ordering::Relaxed);
        self.skipped_bytes.fetch_add(size, Ordering::Relaxed);
    }

    /// (objects copied, objects already there).
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.copied_objects.load(Ordering::Relaxed),
            self.skipped_objects.load(Ordering::Relaxed),
        )
    }

    /// Draws the bar until [`Progress::finish`].
    pub(crate) fn start(self: &Arc<Self>) {
        let me = self.clone();
        let every = if self.tty {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(1)
        };
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                if !me.draw() {
                    break;
                }
            }
        });
    }

    /// The line as it is now.
    fn line(&self) -> (String, u64) {
        let copied = self.copied_bytes.load(Ordering::Relaxed);
        let done_bytes = (copied + self.skipped_bytes.load(Ordering::Relaxed)).min(self.bytes);
        let done_objects = self.copied_objects.load(Ordering::Relaxed)
            + self.skipped_objects.load(Ordering::Relaxed);
        let per_mille = (done_bytes * 1000).checked_div(self.bytes).unwrap_or(
            if done_objects >= self.objects {
                1000
            } else {
                0
            },
        );
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let rate = copied as f64 / secs;
        let left = self.bytes - done_bytes;
        let eta = if rate > 0.0 && left > 0 {
            format!("  ETA {}", short_duration(left as f64 / rate))
        } else {
            String::new()
        };
        let bar = if self.tty {
            let filled = (per_mille * 24 / 1000) as usize;
            format!("[{}{}] ", "#".repeat(filled), "-".repeat(24 - filled))
        } else {
            String::new()
        };
        let line = format!(
            "{bar}{:>3}%  {} / {}  {done_objects}/{} objects  {:.1} MiB/s{eta}",
            per_mille / 10,
            bytes_shown(done_bytes),
            bytes_shown(self.bytes),
            self.objects,
            rate / (1u64 << 20) as f64,
        );
        (line, per_mille / 100)
    }

    /// Draws one update; false once finished.
    fn draw(&self) -> bool {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if self.stopped.load(Ordering::Relaxed) {
            return false;
        }
        let (line, tenth) = self.line();
        if self.tty {
            eprint!("\r{line}   ");
            let _ = std::io::stderr().flush();
        } else if tenth > out.0 || out.1.elapsed() >= Duration::from_secs(10) {
            eprintln!("{line}");
            *out = (tenth.max(out.0), Instant::now());
        }
        true
    }

    /// Stops the bar and prints the summary.
    pub(crate) fn finish(&self) {
        let _out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if self.stopped.swap(true, Ordering::Relaxed) {
            return;
        }
        let (line, _) = self.line();
        if self.tty {
            eprintln!("\r{line}   ");
        } else {
            eprintln!("{line}");
        }
        let secs = self.started.elapsed().as_secs_f64();
        let copied = self.copied_bytes.load(Ordering::Relaxed);
        let (n_copied, n_skipped) = self.counts();
        eprintln!(
            "{} {} ({}) in {secs:.1} s ({:.1} MiB/s); {} ({}) were already there and checked",
            self.verb,
            objects(n_copied),
            bytes_shown(copied),
            copied as f64 / secs.max(1e-3) / (1u64 << 20) as f64,
            objects(n_skipped),
            bytes_shown(self.skipped_bytes.load(Ordering::Relaxed)),
        );
    }

    /// Stops the bar without a summary (the copy failed).
    pub(crate) fn abandon(&self) {
        let _out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if !self.stopped.swap(true, Ordering::Relaxed) && self.tty {
            eprintln!();
        }
    }
}

/// `n objects`, or `1 object`.
fn objects(n: u64) -> String {
    if n == 1 {
        "1 object".into()
    } else {
        format!("{n} objects")
    }
}

/// `secs` as people read a time left: `42s`, `3m 5s`, `2h 10m`.
fn short_duration(secs: f64) -> String {
    let s = secs.ceil() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {}s", s / 60, s % 60),
        _ => format!("{}h {}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_times_read_well() {
        assert_eq!(short_duration(4.2), "5s");
        assert_eq!(short_duration(185.0), "3m 5s");
        assert_eq!(short_duration(7800.0), "2h 10m");
        let p = Progress::new("copied", 4, 1000);
        p.bytes(300);
        p.copied();
        p.skipped(200);
        p.bytes(50);
        p.retract(50);
        let (line, tenth) = p.line();
        assert!(line.contains(" 50%"), "{line}");
        assert!(line.contains("2/4 objects"), "{line}");
        assert_eq!(tenth, 5);
        assert_eq!(p.counts(), (1, 1));
    }
}
