//! CPU time of one process's threads, grouped by thread name, read from
//! `/proc/PID/task/*/stat` (Linux). It splits a server's CPU per call into
//! the part its WAL writer thread spends (the write, the `fdatasync` and the
//! wake-ups of the puts that waited) and everything else, which a process
//! total cannot. Elsewhere, or when `/proc` cannot be read, readings are
//! empty and figures derived from them are `None`.

use std::collections::HashMap;
use std::time::Duration;

/// Clock ticks per second of `/proc`'s `utime` and `stime`: `USER_HZ`, which
/// Linux fixes at 100 on every architecture it exports to user space.
const TICKS_PER_SEC: f64 = 100.0;

/// Each thread's name and CPU time (user + system), by thread id.
#[derive(Debug, Clone, Default)]
pub struct ThreadCpu {
    threads: HashMap<u32, (String, Duration)>,
}

impl ThreadCpu {
    /// Reads every thread of `pid`; empty when `/proc` is missing or the
    /// process is gone.
    pub fn read(pid: u32) -> ThreadCpu {
        let mut threads = HashMap::new();
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return ThreadCpu { threads };
        };
        for entry in dir.flatten() {
            let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            // A thread may exit between the listing and this read.
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            if let Some(parsed) = parse_stat(&stat) {
                threads.insert(tid, parsed);
            }
        }
        ThreadCpu { threads }
    }

    /// Whether anything was read.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }

    /// CPU that threads named `name` used between `self` and `later`
    /// (threads that started in between count from zero; threads that
    /// exited in between are lost, so use this for long-lived threads).
    pub fn used_by(&self, later: &ThreadCpu, name: &str) -> Duration {
        later
            .threads
            .iter()
            .filter(|(_, (n, _))| n == name)
            .map(|(tid, (_, t))| {
                let before = self.threads.get(tid).map(|(_, b)| *b).unwrap_or_default();
                t.saturating_sub(before)
            })
            .sum()
    }
}

/// A thread's name and user + system time from one `stat` line. The name sits
/// in parentheses and may itself hold spaces or parentheses, so the fields
/// after it are counted from the last `)`.
fn parse_stat(stat: &str) -> Option<(String, Duration)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    // After ") " come field 3 (state) onwards; utime and stime are fields 14
    // and 15, so the 12th and 13th after the name.
    let mut rest = stat.get(close + 1..)?.split_whitespace().skip(11);
    let utime: u64 = rest.next()?.parse().ok()?;
    let stime: u64 = rest.next()?.parse().ok()?;
    Some((
        name,
        Duration::from_secs_f64((utime + stime) as f64 / TICKS_PER_SEC),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_stat_line_whose_name_has_spaces_and_parentheses() {
        let line = "4242 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0";
        let (name, t) = parse_stat(line).expect("parses");
        assert_eq!(name, "a (b) c");
        assert_eq!(t, Duration::from_secs(3));
    }

    #[test]
    fn a_truncated_line_is_not_a_reading() {
        assert!(parse_stat("4242 (x) S 1 2").is_none());
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn reads_this_process_and_counts_only_the_named_threads() {
        let me = std::process::id();
        let name = "tcpu-spin";
        let before = ThreadCpu::read(me);
        if before.is_empty() {
            return; // not Linux: nothing to read
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spin = std::thread::Builder::new()
            .name(name.into())
            .spawn({
                let stop = stop.clone();
                move || {
                    let mut x = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                    x
                }
            })
            .expect("spawn");
        // Polls while the thread still exists (an exited thread leaves /proc)
        // until it has used 50 ms: however loaded the machine, it gets there.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let mut used = Duration::ZERO;
        let mut other = Duration::ZERO;
        while used < Duration::from_millis(50) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            let now = ThreadCpu::read(me);
            used = before.used_by(&now, name);
            other = before.used_by(&now, "no-such-thread");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spin.join().expect("join");
        assert!(
            used >= Duration::from_millis(50),
            "spinning thread used {used:?}"
        );
        assert_eq!(other, Duration::ZERO);
    }
}
