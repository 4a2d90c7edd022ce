//! Open files of the L2 segments, bounded: a small least-recently-used set of
//! slots keeps its files open, any other slot is opened when a read or the
//! writer needs it. A cache of 640 segments (10 GiB) used to hold 1,280
//! descriptors (each segment open twice: buffered, and `O_DIRECT` for reads)
//! and could not start under a 1,024 open-files limit; now it holds at most
//! `2 × capacity` plus the files of reads in flight, whatever its size.
//!
//! A slot's files are shared (`Arc`), so evicting it from the set never closes
//! a file a read or the writer is using; it closes when they finish.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One segment's files.
#[derive(Debug)]
pub(super) struct SlotFiles {
    /// Read-write, buffered.
    pub(super) file: File,
    /// The same file opened with `O_DIRECT` for reads; `None` where the file
    /// system refuses direct I/O (tmpfs).
    pub(super) direct: Option<File>,
}

/// The bounded set of open segment files.
#[derive(Debug)]
pub(super) struct Handles {
    dir: PathBuf,
    capacity: usize,
    /// Open an `O_DIRECT` file beside each buffered one.
    direct: bool,
    state: Mutex<Lru>,
}

#[derive(Debug, Default)]
struct Lru {
    open: HashMap<usize, (Arc<SlotFiles>, u64)>,
    tick: u64,
    opened: u64,
}

/// Path of segment `slot`.
pub(super) fn slot_path(dir: &Path, slot: usize) -> PathBuf {
    dir.join(format!("slot-{slot:05}"))
}

/// Opens (creating if missing) segment `slot` read-write.
pub(super) fn open_slot(dir: &Path, slot: usize) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(slot_path(dir, slot))
}

impl Handles {
    /// Keeps at most `capacity` (≥ 1) slots open in `dir`, each with an
    /// `O_DIRECT` file for reads if `direct`.
    pub(super) fn new(dir: PathBuf, capacity: usize, direct: bool) -> Handles {
        Handles {
            dir,
            capacity: capacity.max(1),
            direct,
            state: Mutex::new(Lru::default()),
        }
    }

    /// The files of `slot`, opened if they are not open.
    pub(super) fn get(&self, slot: usize) -> std::io::Result<Arc<SlotFiles>> {
        let mut lru = self.state.lock().unwrap_or_else(|e| e.into_inner());
        lru.tick += 1;
        let tick = lru.tick;
        if let Some((files, used)) = lru.open.get_mut(&slot) {
            *used = tick;
            return Ok(files.clone());
        }
        // Opening under the lock keeps the bound exact; an open costs
        // microseconds and happens only on a miss of the set.
        let file = open_slot(&self.dir, slot)?;
        super::advise_random(&file);
        let files = Arc::new(SlotFiles {
            direct: if self.direct {
                super::open_direct(&slot_path(&self.dir, slot))
            } else {
                None
            },
            file,
        });
        if lru.open.len() >= self.capacity
            && let Some(oldest) = lru
                .open
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(s, _)| *s)
        {
            lru.open.remove(&oldest);
        }
        lru.open.insert(slot, (files.clone(), tick));
        lru.opened += 1;
        Ok(files)
    }

    /// Slots open now.
    pub(super) fn open_count(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .open
            .len()
    }

    /// Times a slot's files were opened since start.
    pub(super) fn opened(&self) -> u64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).opened
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_capacity_slots_stay_open_and_the_least_recent_goes_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let h = Handles::new(dir.path().to_path_buf(), 3, true);
        for slot in 0..3 {
            h.get(slot).expect("open");
        }
        h.get(0).expect("hit"); // 0 is now the most recent
        h.get(7).expect("open"); // evicts 1, the least recent
        assert_eq!(h.open_count(), 3);
        assert_eq!(h.opened(), 4);
        h.get(0).expect("still open");
        h.get(2).expect("still open");
        assert_eq!(h.opened(), 4, "0 and 2 were open");
        h.get(1).expect("reopened");
        assert_eq!(h.opened(), 5);
        assert_eq!(h.open_count(), 3);
    }

    #[test]
    fn an_evicted_slot_in_use_stays_readable() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let h = Handles::new(dir.path().to_path_buf(), 1, true);
        let held = h.get(0).expect("open");
        held.file.write_all_at(b"hello", 0).expect("write");
        h.get(1).expect("evicts 0 from the set");
        let mut buf = [0u8; 5];
        held.file.read_exact_at(&mut buf, 0).expect("read");
        assert_eq!(&buf, b"hello");
    }
}
