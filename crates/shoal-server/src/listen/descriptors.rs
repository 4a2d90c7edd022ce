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

/// Descriptors a server needs at the least: its own files
/// ([`RESERVED_DESCRIPTORS`]) and a few connections.
pub const MIN_OPEN_FILES: u64 = RESERVED_DESCRIPTORS + MIN_CONNECTIONS;

/// The open-files limits, after [`raise_open_files_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFilesLimit {
    /// The soft limit before (`None`: unlimited).
    pub before: Option<u64>,
    /// The soft limit now (`None`: unlimited).
    pub soft: Option<u64>,
    /// The hard limit (`None`: unlimited).
    pub hard: Option<u64>,
}

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit (a common
/// default soft limit is 1,024), as servers do at start. Fails with a
/// message saying what is needed and how to get it if even the hard limit
/// is below [`MIN_OPEN_FILES`].
#[allow(unsafe_code)]
pub fn raise_open_files_limit() -> Result<OpenFilesLimit, String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read or write one `struct rlimit`
    // through the pointer, which points at a live, aligned local of exactly
    // that type; failures are return codes.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    if rc != 0 {
        return Err(format!(
            "cannot read the open-files limit: {}",
            std::io::Error::last_os_error()
        ));
    }
    let finite = |v: libc::rlim_t| {
        #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every platform
        (v != libc::RLIM_INFINITY).then_some(v as u64)
    };
    let before = finite(limit.rlim_cur);
    let hard = finite(limit.rlim_max);
    if limit.rlim_cur != limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: as above.
        let rc = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) };
        if rc != 0 {
            tracing::warn!(
                error = %std::io::Error::last_os_error(),
                "could not raise the open-files limit to its hard limit"
            );
        }
    }
    let soft = open_files_limit();
    if let Some(s) = soft
        && s < MIN_OPEN_FILES
    {
        return Err(format!(
            "the open-files limit is {s} (hard limit {}); Shoal needs at least {MIN_OPEN_FILES} \
             (its WAL, cache and object-store files, and connections): raise it, e.g. \
             `ulimit -n 4096` in the shell that starts it, or LimitNOFILE=65536 in a systemd unit",
            hard.map_or("unlimited".to_string(), |h| h.to_string())
        ));
    }
    Ok(OpenFilesLimit { before, soft, hard })
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
