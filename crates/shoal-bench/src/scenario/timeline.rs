//! A 100 ms timeline of a scenario: reads answered, and where the machine's
//! CPU went (each server process, this client process, idle), so that a dip
//! in a 1 s window can be told apart as waiting (CPU idle) or work elsewhere
//! (a restarting server's start-up, a move's opens). Reads are counted by the
//! caller through [`Timeline::count`]; a task samples every 100 ms.

use super::etcd::cpu_seconds;
use serde::Serialize;
use shoal_server::process_cpu::process_cpu;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The sampling period.
pub const TICK: Duration = Duration::from_millis(100);

/// One 100 ms tick.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tick {
    /// Seconds since the scenario's clock started (tick start).
    pub t: f64,
    /// Reads answered in the tick.
    pub ops: u64,
    /// Reads failed in the tick.
    pub errors: u64,
    /// CPU of each server process in the tick, ms (by member name; a process
    /// that started in the tick counts from zero).
    pub server_cpu_ms: Vec<(String, f64)>,
    /// CPU of this (client) process, ms.
    pub client_cpu_ms: f64,
    /// Idle CPU of the whole machine, ms (all cores; 2 cores give 200 ms).
    pub idle_ms: f64,
}

/// The shared counters and the sampled ticks.
#[derive(Default)]
pub struct Timeline {
    ops: AtomicU64,
    errors: AtomicU64,
    /// Member name → pid of its live process (None while it is down).
    pids: Mutex<Vec<(String, Option<u32>)>>,
    ticks: Mutex<Vec<Tick>>,
}

impl Timeline {
    /// Counts one read (answered or failed).
    pub fn count(&self, ok: bool) {
        if ok {
            self.ops.fetch_add(1, Ordering::Relaxed);
        } else {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Sets the server processes to follow.
    pub fn set_pids(&self, pids: Vec<(String, Option<u32>)>) {
        *self.pids.lock().unwrap_or_else(|e| e.into_inner()) = pids;
    }

    /// The ticks sampled so far.
    pub fn take(&self) -> Vec<Tick> {
        std::mem::take(&mut *self.ticks.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Samples every [`TICK`] from `started` until `stop` is set.
    pub fn spawn_sampler(
        self: &Arc<Self>,
        started: Instant,
        stop: Arc<AtomicBool>,
    ) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            let mut next = started + TICK;
            let mut last = Reading::take(&me);
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep_until(next.into()).await;
                next += TICK;
                let now = Reading::take(&me);
                let tick = now.since(&last, n as f64 * TICK.as_secs_f64());
                me.ticks
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(tick);
                last = now;
                n += 1;
            }
        })
    }
}

/// Counters at one instant.
struct Reading {
    ops: u64,
    errors: u64,
    /// name → (pid, CPU s).
    servers: HashMap<String, (u32, f64)>,
    client_s: f64,
    idle_s: Option<f64>,
}

impl Reading {
    fn take(t: &Timeline) -> Reading {
        let pids = t.pids.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let servers = pids
            .into_iter()
            .filter_map(|(name, pid)| {
                let pid = pid?;
                Some((name, (pid, cpu_seconds(Some(pid))?)))
            })
            .collect();
        let me = process_cpu();
        Reading {
            ops: t.ops.load(Ordering::Relaxed),
            errors: t.errors.load(Ordering::Relaxed),
            servers,
            client_s: (me.user + me.system).as_secs_f64(),
            idle_s: machine_idle_seconds(),
        }
    }

    fn since(&self, before: &Reading, t: f64) -> Tick {
        let mut server_cpu_ms: Vec<(String, f64)> = self
            .servers
            .iter()
            .map(|(name, (pid, s))| {
                let was = match before.servers.get(name) {
                    Some((p, b)) if p == pid => *b,
                    _ => 0.0,
                };
                (name.clone(), (s - was).max(0.0) * 1e3)
            })
            .collect();
        server_cpu_ms.sort_by(|a, b| a.0.cmp(&b.0));
        Tick {
            t,
            ops: self.ops.saturating_sub(before.ops),
            errors: self.errors.saturating_sub(before.errors),
            server_cpu_ms,
            client_cpu_ms: (self.client_s - before.client_s).max(0.0) * 1e3,
            idle_ms: match (self.idle_s, before.idle_s) {
                (Some(a), Some(b)) => (a - b).max(0.0) * 1e3,
                _ => 0.0,
            },
        }
    }
}

/// Idle time of all CPUs since boot, s (`/proc/stat`: idle + iowait, in
/// USER_HZ ticks of 10 ms).
fn machine_idle_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu = stat.lines().next()?.strip_prefix("cpu ")?;
    let f: Vec<f64> = cpu
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    Some((f.get(3)? + f.get(4)?) / 100.0)
}

/// The ticks from `from` s to `to` s, as a markdown table with one column per
/// server: reads per second at the tick's pace, each process's CPU share and
/// the machine's idle share.
pub fn markdown(ticks: &[Tick], from: f64, to: f64) -> String {
    let shown: Vec<&Tick> = ticks
        .iter()
        .filter(|k| k.t + 1e-9 >= from && k.t < to)
        .collect();
    let Some(first) = shown.first() else {
        return String::new();
    };
    let mut names: Vec<String> = first.server_cpu_ms.iter().map(|(n, _)| n.clone()).collect();
    for k in &shown {
        for (n, _) in &k.server_cpu_ms {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    names.sort();
    let mut md = format!(
        "| s | reads/s | errors | {} | client CPU | idle |\n|---|---|---|{}---|---|\n",
        names
            .iter()
            .map(|n| format!("{n} CPU"))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(names.len())
    );
    let per = 1.0 / TICK.as_secs_f64();
    for k in shown {
        let cpu = names
            .iter()
            .map(|n| {
                k.server_cpu_ms.iter().find(|(m, _)| m == n).map_or_else(
                    || "down".into(),
                    |(_, ms)| format!("{:.0} %", ms / 1e3 * per * 100.0),
                )
            })
            .collect::<Vec<_>>()
            .join(" | ");
        md += &format!(
            "| {:.1} | {:.0} | {} | {} | {:.0} % | {:.0} % |\n",
            k.t,
            k.ops as f64 * per,
            k.errors,
            cpu,
            k.client_cpu_ms / 1e3 * per * 100.0,
            k.idle_ms / 1e3 * per * 100.0
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tick_counts_a_restarted_process_from_zero() {
        let before = Reading {
            ops: 10,
            errors: 0,
            servers: [
                ("s1".to_string(), (100, 5.0)),
                ("s2".to_string(), (200, 7.0)),
            ]
            .into(),
            client_s: 1.0,
            idle_s: Some(50.0),
        };
        let now = Reading {
            ops: 25,
            errors: 1,
            servers: [
                ("s1".to_string(), (101, 0.02)),
                ("s2".to_string(), (200, 7.05)),
            ]
            .into(),
            client_s: 1.03,
            idle_s: Some(50.1),
        };
        let t = now.since(&before, 3.0);
        assert_eq!((t.ops, t.errors), (15, 1));
        assert_eq!(t.server_cpu_ms.len(), 2);
        assert!(
            (t.server_cpu_ms[0].1 - 20.0).abs() < 1e-6,
            "{:?}",
            t.server_cpu_ms
        );
        assert!((t.server_cpu_ms[1].1 - 50.0).abs() < 1e-6);
        assert!((t.client_cpu_ms - 30.0).abs() < 1e-6);
        assert!((t.idle_ms - 100.0).abs() < 1e-6);
        let md = markdown(&[t], 2.95, 3.5);
        assert!(
            md.contains("| 3.0 | 150 | 1 | 20 % | 50 % | 30 % | 100 % |"),
            "{md}"
        );
    }
}
