//! The CPU time this process has used (user and system), read with
//! `getrusage(RUSAGE_SELF)` at microsecond resolution. The server reports it
//! (status RPC, `/metrics`) so a load generator in another process can
//! measure server CPU per operation; the benchmarks read their own with the
//! same function for the client's side.

use std::time::Duration;

/// CPU time used by every thread of this process since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessCpu {
    /// Time spent running this process's code.
    pub user: Duration,
    /// Time the kernel spent on its behalf (syscalls, page faults).
    pub system: Duration,
}

impl ProcessCpu {
    /// User plus system time.
    pub fn total(&self) -> Duration {
        self.user + self.system
    }
}

/// This process's CPU time so far; zero if the system call fails (it cannot
/// with these arguments on any supported system).
#[allow(unsafe_code)]
pub fn process_cpu() -> ProcessCpu {
    // SAFETY: `getrusage` writes one `rusage` into the pointer it is given and
    // reads nothing from it; `usage` is a properly aligned, zero-initialised
    // (a valid bit pattern for this plain C struct of integers) local that
    // outlives the call, and RUSAGE_SELF is a valid `who`.
    let (rc, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let rc = libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        (rc, usage)
    };
    if rc != 0 {
        return ProcessCpu::default();
    }
    let d = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    ProcessCpu {
        user: d(usage.ru_utime),
        system: d(usage.ru_stime),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let before = process_cpu();
        // Spin for a while: user time must grow by a clearly measurable amount.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let after = process_cpu();
        assert!(after.total() > before.total(), "{before:?} -> {after:?}");
        assert!(after.user >= before.user && after.system >= before.system);
    }
}
