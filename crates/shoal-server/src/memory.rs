//! How much memory this server may use: the machine's (`/proc/meminfo`), or
//! less when the process runs in a cgroup with a memory limit (a container),
//! where going past the limit gets the process killed instead of slowed by
//! backpressure. cgroup v2 (`memory.max`) and v1 (`memory.limit_in_bytes`).

use std::path::Path;

/// Memory assumed when nothing can be read.
const UNKNOWN: u64 = 8 << 30;

/// Where the memory figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySource {
    /// `/proc/meminfo`'s MemTotal.
    Machine,
    /// The process's cgroup limit, below the machine's memory.
    Cgroup,
    /// Neither could be read: 8 GiB assumed.
    Assumed,
}

/// Bytes of memory this process may use, and where the figure came from.
pub fn available_memory() -> (u64, MemorySource) {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| parse_meminfo(&m));
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|c| cgroup_limit(&c, Path::new("/sys/fs/cgroup")));
    pick(machine, cgroup)
}

fn pick(machine: Option<u64>, cgroup: Option<u64>) -> (u64, MemorySource) {
    match (machine, cgroup) {
        (Some(m), Some(c)) if c < m => (c, MemorySource::Cgroup),
        (Some(m), _) => (m, MemorySource::Machine),
        (None, Some(c)) => (c, MemorySource::Cgroup),
        (None, None) => (UNKNOWN, MemorySource::Assumed),
    }
}

/// MemTotal in bytes.
fn parse_meminfo(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// The memory limit of the process's cgroup (`/proc/self/cgroup` text)
/// under the cgroup file system mounted at `root`; `None` when unlimited or
/// unreadable. The limit of an ancestor cgroup applies too: the smallest
/// along the path is taken.
fn cgroup_limit(proc_self_cgroup: &str, root: &Path) -> Option<u64> {
    let mut best: Option<u64> = None;
    let mut take = |v: Option<u64>| {
        if let Some(v) = v {
            best = Some(best.map_or(v, |b| b.min(v)));
        }
    };
    for line in proc_self_cgroup.lines() {
        // hierarchy-id:controllers:path
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let path = path.trim_start_matches('/');
        if controllers.is_empty() {
            // cgroup v2: the unified hierarchy.
            for dir in ancestors(root, path) {
                take(read_limit(&dir.join("memory.max")));
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            for base in [root.join("memory"), root.to_path_buf()] {
                for dir in ancestors(&base, path) {
                    take(read_limit(&dir.join("memory.limit_in_bytes")));
                }
            }
        }
    }
    best
}

/// `root/path` and each of its ancestors up to `root`.
fn ancestors(root: &Path, path: &str) -> Vec<std::path::PathBuf> {
    let mut out = vec![root.to_path_buf()];
    let mut dir = root.to_path_buf();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        dir = dir.join(part);
        out.push(dir.clone());
    }
    out
}

/// A limit file's value: `max` (v2) or a huge number (v1's "unlimited") is
/// `None`.
fn read_limit(file: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let text = text.trim();
    if text == "max" {
        return None;
    }
    let v: u64 = text.parse().ok()?;
    // cgroup v1 reports "no limit" as a page-rounded i64::MAX.
    (v < (1 << 60)).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_root(files: &[(&str, &str)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("tempdir");
        for (path, content) in files {
            let p = root.path().join(path);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, content).expect("write");
        }
        root
    }

    #[test]
    fn cgroup_v2_limits_along_the_path_and_max() {
        let root = fake_root(&[
            ("memory.max", "max\n"),
            ("kubepods/memory.max", "8589934592\n"),
            ("kubepods/pod1/memory.max", "2147483648\n"),
            ("kubepods/pod1/c1/memory.max", "max\n"),
        ]);
        assert_eq!(
            cgroup_limit("0::/kubepods/pod1/c1\n", root.path()),
            Some(2 << 30)
        );
        let unlimited = fake_root(&[("memory.max", "max\n"), ("a/memory.max", "max\n")]);
        assert_eq!(cgroup_limit("0::/a\n", unlimited.path()), None);
    }

    #[test]
    fn cgroup_v1_memory_controller_and_its_no_limit_value() {
        let root = fake_root(&[
            ("memory/docker/abc/memory.limit_in_bytes", "536870912\n"),
            ("memory/memory.limit_in_bytes", "9223372036854771712\n"),
        ]);
        let text = "12:cpu,cpuacct:/docker/abc\n5:memory:/docker/abc\n";
        assert_eq!(cgroup_limit(text, root.path()), Some(512 << 20));
        let none = fake_root(&[("memory/memory.limit_in_bytes", "9223372036854771712\n")]);
        assert_eq!(cgroup_limit("5:memory:/\n", none.path()), None);
    }

    #[test]
    fn the_smaller_of_machine_and_cgroup_wins() {
        assert_eq!(
            pick(Some(16 << 30), Some(2 << 30)),
            (2 << 30, MemorySource::Cgroup)
        );
        assert_eq!(
            pick(Some(16 << 30), Some(64 << 30)),
            (16 << 30, MemorySource::Machine)
        );
        assert_eq!(
            pick(Some(16 << 30), None),
            (16 << 30, MemorySource::Machine)
        );
        assert_eq!(pick(None, None), (8 << 30, MemorySource::Assumed));
        assert_eq!(
            parse_meminfo("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            Some(24_576_000 * 1024)
        );
    }
}
