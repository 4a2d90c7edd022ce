//! Per-row exclusive locks: every mutation of a row holds its row's lock, so
//! read-modify-write operations (increment, append, check-and-mutate) are atomic.

use bytes::Bytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// The lock table. Entries are removed when no one holds or waits for them.
#[derive(Debug, Default)]
pub(crate) struct RowLocks {
    table: Mutex<HashMap<Bytes, Arc<AsyncMutex<()>>>>,
}

/// A held row lock; released on drop.
pub(crate) struct RowGuard<'a> {
    locks: &'a RowLocks,
    row: Bytes,
    guard: Option<OwnedMutexGuard<()>>,
}

impl RowLocks {
    /// Waits for and takes the lock of `row`.
    pub(crate) async fn lock(&self, row: &Bytes) -> RowGuard<'_> {
        let mutex = {
            let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
            table.entry(row.clone()).or_default().clone()
        };
        let guard = mutex.lock_owned().await;
        RowGuard {
            locks: self,
            row: row.clone(),
            guard: Some(guard),
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

impl Drop for RowGuard<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut table = self.locks.table.lock().unwrap_or_else(|e| e.into_inner());
        // Only the table holds a reference: nobody holds or waits for this row.
        if table
            .get(&self.row)
            .is_some_and(|m| Arc::strong_count(m) == 1)
        {
            table.remove(&self.row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn locks_are_exclusive_and_cleaned_up() {
        let locks = Arc::new(RowLocks::default());
        let row = Bytes::from_static(b"r");
        let g = locks.lock(&row).await;
        let l2 = locks.clone();
        let r2 = row.clone();
        let waiter = tokio::spawn(async move {
            let _g = l2.lock(&r2).await;
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(g);
        waiter.await.unwrap();
        assert_eq!(locks.len(), 0);
    }
}
