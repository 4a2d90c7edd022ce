//! How many connections the open-files limit leaves room for: every
//! connection is a descriptor, and the server needs some for its own files
//! (WAL, cache segments, object-store files, listeners).

/// Descriptors kept for the server's own files when fitting the cap.
pub(super) const RESERVED_DESCRIPTORS: u64 = 256;
/// The cap is never fitted below this (a limit that small is logged anyway).
const MIN_CONNECTIONS: u64 = 16;

/// The soft `RLIMIT_NOFILE` of this process, if it has one.
#[allow(unsafe_code)]
pub(super) fn open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes one `struct rlimit` through the pointer,
    // which points at a live, properly aligned local of exactly that type.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every platform
    let soft = limit.rlim_cur as u64;
    (rc == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(soft)
}

/// `configured`, lowered so that the connections and the reserved
/// descriptors fit under `soft_limit`.
pub(super) fn fit_connections(configured: usize, soft_limit: Option<u64>) -> usize {
    let Some(limit) = soft_limit else {
        return configured;
    };
    let room = limit
        .saturating_sub(RESERVED_DESCRIPTORS)
        .max(MIN_CONNECTIONS);
    configured.min(usize::try_from(room).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_fits_under_the_open_files_limit() {
        assert_eq!(fit_connections(10_000, None), 10_000);
        assert_eq!(fit_connections(10_000, Some(1_048_576)), 10_000);
        assert_eq!(fit_connections(10_000, Some(1024)), 768);
        assert_eq!(fit_connections(100, Some(1024)), 100);
        assert_eq!(fit_connections(10_000, Some(100)), 16);
    }

    /// The figure matches what the kernel shows in `/proc/self/limits`.
    #[cfg(target_os = "linux")]
    #[test]
    fn reads_the_soft_limit() {
        let limits = std::fs::read_to_string("/proc/self/limits").expect("/proc/self/limits");
        let line = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .expect("open files line");
        let soft = line.split_whitespace().nth(3).expect("soft column");
        let expected = soft.parse::<u64>().ok(); // "unlimited" = None
        assert_eq!(open_files_limit(), expected, "{line}");
    }
}
