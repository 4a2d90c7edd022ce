//! A progress line on stderr for long loads, and byte counts as people
//! read them.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

pub(crate) fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

pub(crate) fn bytes_shown(n: u64) -> String {
    const MIB: f64 = (1u64 << 20) as f64;
    if n >= 1 << 30 {
        format!("{:.2} GiB", n as f64 / MIB / 1024.0)
    } else {
        format!("{:.1} MiB", n as f64 / MIB)
    }
}

/// A progress line on stderr (rewritten in place on a terminal, one line
/// per 10 % otherwise).
pub(crate) struct Progress {
    regions: usize,
    bytes: u64,
    done_regions: AtomicU64,
    done_bytes: AtomicU64,
    started: Instant,
    tty: bool,
    last_tenth: AtomicU64,
}

impl Progress {
    pub(crate) fn new(regions: usize, bytes: u64) -> Arc<Progress> {
        Arc::new(Progress {
            regions,
            bytes,
            done_regions: AtomicU64::new(0),
            done_bytes: AtomicU64::new(0),
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            last_tenth: AtomicU64::new(0),
        })
    }

    pub(crate) fn region_done(&self, bytes: u64) {
        let regions = self.done_regions.fetch_add(1, Ordering::Relaxed) + 1;
        let done = self.done_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let line = format!(
            "{regions}/{} regions, {} of {} ({:.1} MiB/s)",
            self.regions,
            bytes_shown(done),
            bytes_shown(self.bytes),
            done as f64 / secs / (1u64 << 20) as f64
        );
        if self.tty {
            eprint!("\r{line}   ");
            let _ = std::io::stderr().flush();
        } else {
            let tenth = regions * 10 / (self.regions.max(1) as u64);
            if self.last_tenth.fetch_max(tenth, Ordering::Relaxed) < tenth {
                eprintln!("{line}");
            }
        }
    }

    pub(crate) fn finish(&self) {
        if self.tty {
            eprintln!();
        }
        eprintln!(
            "loaded {} regions in {:.1} s",
            self.regions,
            self.started.elapsed().as_secs_f64()
        );
    }
}
