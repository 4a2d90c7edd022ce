//! [`FilePins`]: which SST files readers are using right now. A reader pins the files of
//! the manifest version it read and holds the [`FilePin`] guards until it is done; GC
//! never deletes a pinned file.
//!
//! Invariant: a file's count is the number of live guards for it; an id is present in the
//! map only while its count is positive.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use super::Manifest;
use crate::sst::FileId;

/// A shared registry of pinned files. Cheap to clone; clones share the pins.
#[derive(Clone, Default)]
pub struct FilePins {
    inner: Arc<Mutex<HashMap<FileId, usize>>>,
    /// Every file counts as pinned while set: the owner of long-lived
    /// holds (snapshots) does not know all of them yet.
    everything: Arc<std::sync::atomic::AtomicBool>,
}

impl fmt::Debug for FilePins {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilePins")
            .field("files", &self.lock().len())
            .finish()
    }
}

impl FilePins {
    /// An empty registry.
    pub fn new() -> FilePins {
        FilePins::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<FileId, usize>> {
        // A panic while holding the lock cannot leave a count half-updated.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Pins `id` until the returned guard is dropped.
    pub fn pin(&self, id: FileId) -> FilePin {
        *self.lock().entry(id).or_insert(0) += 1;
        FilePin {
            pins: self.clone(),
            id,
        }
    }

    /// Pins every file of `manifest` (what a reader of that version needs).
    pub fn pin_manifest(&self, manifest: &Manifest) -> Vec<FilePin> {
        manifest.files().map(|f| self.pin(f.id)).collect()
    }

    /// Whether any guard for `id` is alive (or every file is held).
    pub fn is_pinned(&self, id: FileId) -> bool {
        self.holds_everything() || self.lock().contains_key(&id)
    }

    /// While `on`, every file counts as pinned and GC deletes no file: for
    /// an owner of long-lived pins that cannot tell yet which files it
    /// must hold (its records could not be read).
    pub fn hold_everything(&self, on: bool) {
        self.everything
            .store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// True while [`FilePins::hold_everything`] is on.
    pub fn holds_everything(&self) -> bool {
        self.everything.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Number of distinct pinned files.
    pub fn pinned_files(&self) -> usize {
        self.lock().len()
    }
}

/// Keeps one file pinned; unpins on drop.
#[must_use = "the file is unpinned as soon as the guard is dropped"]
pub struct FilePin {
    pins: FilePins,
    id: FileId,
}

impl FilePin {
    /// The pinned file.
    pub fn id(&self) -> FileId {
        self.id
    }
}

impl fmt::Debug for FilePin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FilePin").field(&self.id).finish()
    }
}

impl Drop for FilePin {
    fn drop(&mut self) {
        let mut map = self.pins.lock();
        if let Some(count) = map.get_mut(&self.id) {
            *count -= 1;
            if *count == 0 {
                map.remove(&self.id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_counted() {
        let pins = FilePins::new();
        let a = pins.pin(FileId(1));
        let b = pins.clone().pin(FileId(1));
        assert!(pins.is_pinned(FileId(1)));
        assert!(!pins.is_pinned(FileId(2)));
        drop(a);
        assert!(pins.is_pinned(FileId(1)));
        drop(b);
        assert!(!pins.is_pinned(FileId(1)));
        assert_eq!(pins.pinned_files(), 0);
    }
}
