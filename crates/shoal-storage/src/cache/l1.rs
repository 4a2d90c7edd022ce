//! L1: an in-memory pool of cache entries with a byte budget and CLOCK
//! (second-chance) eviction.
//!
//! A pool is split into shards by key hash, each a `Mutex` over a hash map and
//! a ring of slots. A hit sets the slot's reference bit; an insert that needs
//! room sweeps the ring, clearing set bits and evicting the first unreferenced
//! entries it finds. So a block read once by a scan is evicted before a block
//! that is read again, and a hit costs one hash lookup under a shard lock — no
//! list reordering. Removing a whole file (after compaction) tombstones its
//! slots; the sweep reclaims them.
//!
//! The cache keeps several pools (see `mod.rs`) so that data blocks can never
//! push out index and bloom data.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Something the pool can hold and weigh.
pub(crate) trait Weighted: Clone {
    /// Bytes charged against the budget.
    fn weight(&self) -> usize;

    /// True if this value should replace `old` under the same key (by
    /// default an entry under a key is immutable and kept).
    fn supersedes(&self, _old: &Self) -> bool {
        false
    }
}

/// Fixed bytes charged per entry for the map, slot and handles.
pub(crate) const ENTRY_OVERHEAD: usize = 96;

struct Slot<K, V> {
    key: K,
    value: Option<V>,
    weight: usize,
    referenced: bool,
}

struct Shard<K, V> {
    index: HashMap<K, usize>,
    slots: Vec<Slot<K, V>>,
    free: Vec<usize>,
    hand: usize,
    used: usize,
    capacity: usize,
}

impl<K: Hash + Eq + Clone, V: Weighted> Shard<K, V> {
    fn get(&mut self, key: &K) -> Option<V> {
        let i = *self.index.get(key)?;
        let slot = &mut self.slots[i];
        slot.referenced = true;
        slot.value.clone()
    }

    fn remove_slot(&mut self, i: usize) -> usize {
        let slot = &mut self.slots[i];
        if slot.value.take().is_none() {
            return 0;
        }
        self.index.remove(&slot.key);
        self.used -= slot.weight;
        self.free.push(i);
        slot.weight
    }

    fn remove(&mut self, key: &K) -> bool {
        match self.index.get(key) {
            Some(&i) => self.remove_slot(i) > 0,
            None => false,
        }
    }

    /// Inserts, evicting as needed. Returns (inserted, entries evicted).
    fn insert(&mut self, key: K, value: V) -> (bool, u64) {
        let weight = value.weight() + ENTRY_OVERHEAD;
        if weight > self.capacity {
            return (false, 0);
        }
        if let Some(&i) = self.index.get(&key) {
            // Same key: normally the same immutable bytes, just marked used.
            let slot = &mut self.slots[i];
            slot.referenced = true;
            if let Some(old) = &slot.value
                && value.supersedes(old)
                && self.used - slot.weight + weight <= self.capacity
            {
                self.used = self.used - slot.weight + weight;
                slot.weight = weight;
                slot.value = Some(value);
            }
            return (true, 0);
        }
        let mut evicted = 0;
        // Each full sweep clears every reference bit, so two sweeps always
        // free enough room (the entry fits the capacity).
        let mut steps = 2 * self.slots.len() + 1;
        while self.used + weight > self.capacity && steps > 0 && !self.slots.is_empty() {
            steps -= 1;
            self.hand = (self.hand + 1) % self.slots.len();
            let i = self.hand;
            if self.slots[i].value.is_none() {
                continue;
            }
            if self.slots[i].referenced {
                self.slots[i].referenced = false;
                continue;
            }
            self.remove_slot(i);
            evicted += 1;
        }
        if self.used + weight > self.capacity {
            return (false, evicted);
        }
        let slot = Slot {
            key: key.clone(),
            value: Some(value),
            weight,
            referenced: false,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
        self.index.insert(key, i);
        self.used += weight;
        (true, evicted)
    }
}

/// Counters of one pool.
#[derive(Debug, Default)]
pub(crate) struct PoolCounters {
    pub(crate) hits: AtomicU64,
    pub(crate) misses: AtomicU64,
    pub(crate) inserts: AtomicU64,
    pub(crate) evictions: AtomicU64,
    pub(crate) rejected: AtomicU64,
}

/// A sharded CLOCK pool with a byte budget.
pub(crate) struct Pool<K, V> {
    shards: Vec<Mutex<Shard<K, V>>>,
    hasher: std::collections::hash_map::RandomState,
    capacity: usize,
    pub(crate) counters: PoolCounters,
}

impl<K: Hash + Eq + Clone, V: Weighted> Pool<K, V> {
    /// A pool of `capacity` bytes over `shards` shards (each gets an equal share).
    pub(crate) fn new(capacity: usize, shards: usize) -> Pool<K, V> {
        let shards = shards.max(1);
        let per = capacity / shards;
        Pool {
            shards: (0..shards)
                .map(|_| {
                    Mutex::new(Shard {
                        index: HashMap::new(),
                        slots: Vec::new(),
                        free: Vec::new(),
                        hand: 0,
                        used: 0,
                        capacity: per,
                    })
                })
                .collect(),
            hasher: Default::default(),
            capacity,
            counters: PoolCounters::default(),
        }
    }

    fn shard(&self, key: &K) -> &Mutex<Shard<K, V>> {
        let h = self.hasher.hash_one(key) as usize;
        &self.shards[h % self.shards.len()]
    }

    /// Looks a key up, counting the hit or miss.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let found = self
            .shard(key)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key);
        let c = if found.is_some() {
            &self.counters.hits
        } else {
            &self.counters.misses
        };
        c.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// True if `key` is cached (no hit or miss is counted, no reference bit set).
    pub(crate) fn contains(&self, key: &K) -> bool {
        self.shard(key)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .index
            .contains_key(key)
    }

    /// Inserts a value; an entry larger than a shard's budget is not cached.
    pub(crate) fn insert(&self, key: K, value: V) {
        self.insert_unless(key, value, || false);
    }

    /// Inserts a value only if its shard has room for it without evicting
    /// anything (and the key is absent); true if it was inserted. For
    /// background fills, which must never push out what reads use.
    pub(crate) fn insert_if_room(&self, key: K, value: V) -> bool {
        let weight = value.weight() + ENTRY_OVERHEAD;
        let mut shard = self.shard(&key).lock().unwrap_or_else(|e| e.into_inner());
        if shard.index.contains_key(&key) || shard.used + weight > shard.capacity {
            return false;
        }
        let (inserted, evicted) = shard.insert(key, value);
        drop(shard);
        debug_assert_eq!(evicted, 0, "there was room");
        if inserted {
            self.counters.inserts.fetch_add(1, Ordering::Relaxed);
        }
        inserted
    }

    /// Inserts a value unless `refuse` (called under the shard's lock, so
    /// no [`Pool::remove`] of the same shard runs at the same time) says
    /// no. True if the value is cached now.
    pub(crate) fn insert_unless(&self, key: K, value: V, refuse: impl FnOnce() -> bool) -> bool {
        if self.capacity == 0 {
            return false;
        }
        let mut shard = self.shard(&key).lock().unwrap_or_else(|e| e.into_inner());
        if refuse() {
            return false;
        }
        let (inserted, evicted) = shard.insert(key, value);
        drop(shard);
        let c = if inserted {
            &self.counters.inserts
        } else {
            &self.counters.rejected
        };
        c.fetch_add(1, Ordering::Relaxed);
        self.counters
            .evictions
            .fetch_add(evicted, Ordering::Relaxed);
        inserted
    }

    /// Removes one entry; true if it was there.
    pub(crate) fn remove(&self, key: &K) -> bool {
        self.shard(key)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key)
    }

    /// The largest value weight a shard can take.
    pub(crate) fn max_weight(&self) -> usize {
        (self.capacity / self.shards.len()).saturating_sub(ENTRY_OVERHEAD)
    }

    /// Removes every entry whose key matches.
    pub(crate) fn remove_where(&self, mut matches: impl FnMut(&K) -> bool) -> usize {
        let mut removed = 0;
        for shard in &self.shards {
            let mut s = shard.lock().unwrap_or_else(|e| e.into_inner());
            let doomed: Vec<usize> = s
                .slots
                .iter()
                .enumerate()
                .filter(|(_, slot)| slot.value.is_some() && matches(&slot.key))
                .map(|(i, _)| i)
                .collect();
            for i in doomed {
                if s.remove_slot(i) > 0 {
                    removed += 1;
                }
            }
        }
        removed
    }

    /// Copies of the entries whose key matches, until their weights add up
    /// to `max_weight`: first those read since the clock last passed them
    /// (in every shard), then the others.
    pub(crate) fn collect_where(
        &self,
        mut matches: impl FnMut(&K) -> bool,
        max_weight: usize,
    ) -> Vec<(K, V)> {
        let mut out = Vec::new();
        let mut total = 0;
        for referenced in [true, false] {
            for shard in &self.shards {
                let s = shard.lock().unwrap_or_else(|e| e.into_inner());
                for slot in &s.slots {
                    if slot.referenced != referenced || !matches(&slot.key) {
                        continue;
                    }
                    let Some(v) = &slot.value else { continue };
                    if total + slot.weight > max_weight {
                        return out;
                    }
                    total += slot.weight;
                    out.push((slot.key.clone(), v.clone()));
                }
            }
        }
        out
    }

    /// Bytes charged and entries held.
    pub(crate) fn usage(&self) -> (usize, usize) {
        self.shards.iter().fold((0, 0), |(b, n), shard| {
            let s = shard.lock().unwrap_or_else(|e| e.into_inner());
            (b + s.used, n + s.index.len())
        })
    }

    /// Budget not charged yet, bytes.
    pub(crate) fn free_bytes(&self) -> u64 {
        self.capacity.saturating_sub(self.usage().0) as u64
    }

    /// The budget in bytes.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct V(usize);
    impl Weighted for V {
        fn weight(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn insert_if_room_never_evicts() {
        let pool: Pool<u32, V> = Pool::new(4 * (100 + ENTRY_OVERHEAD), 1);
        for k in 0..4 {
            assert!(pool.insert_if_room(k, V(100)));
        }
        assert!(
            !pool.insert_if_room(9, V(100)),
            "full: nothing is pushed out"
        );
        assert!(!pool.insert_if_room(0, V(100)), "already there");
        for k in 0..4 {
            assert!(pool.contains(&k));
        }
        assert!(!pool.contains(&9));
    }

    #[test]
    fn stays_within_budget_and_counts() {
        let pool: Pool<u64, V> = Pool::new(10 * (100 + ENTRY_OVERHEAD), 1);
        for k in 0..100 {
            pool.insert(k, V(100));
            assert!(pool.usage().0 <= pool.capacity());
        }
        let (_, n) = pool.usage();
        assert_eq!(n, 10);
        assert_eq!(pool.counters.evictions.load(Ordering::Relaxed), 90);
        assert!(pool.get(&99).is_some());
        assert!(pool.get(&0).is_none());
    }

    #[test]
    fn referenced_entries_survive_a_scan() {
        let pool: Pool<u64, V> = Pool::new(10 * (100 + ENTRY_OVERHEAD), 1);
        for k in 0..5 {
            pool.insert(k, V(100));
        }
        for _ in 0..3 {
            for k in 0..5 {
                assert!(pool.get(&k).is_some());
            }
            // A "scan" of blocks read once each.
            for k in 1000..1005 {
                pool.insert(k, V(100));
            }
        }
        let hot = (0..5).filter(|k| pool.get(k).is_some()).count();
        assert_eq!(hot, 5, "hot entries were evicted by a scan");
    }

    #[test]
    fn oversized_entries_are_rejected_and_removal_frees_room() {
        let pool: Pool<u64, V> = Pool::new(1000, 1);
        pool.insert(1, V(5000));
        assert!(pool.get(&1).is_none());
        assert_eq!(pool.counters.rejected.load(Ordering::Relaxed), 1);
        pool.insert(2, V(100));
        pool.insert(3, V(100));
        assert_eq!(pool.remove_where(|k| *k == 2), 1);
        assert_eq!(pool.usage(), (100 + ENTRY_OVERHEAD, 1));
        pool.insert(4, V(100));
        assert_eq!(pool.usage().1, 2);
    }

    #[test]
    fn collect_where_takes_entries_read_since_the_clock_first_in_every_shard() {
        let pool: Pool<u64, V> = Pool::new(400 * (100 + ENTRY_OVERHEAD), 8);
        for k in 0..200 {
            pool.insert(k, V(100));
        }
        // Read the odd keys: spread over every shard.
        for k in (1..200).step_by(2) {
            assert!(pool.get(&k).is_some());
        }
        let budget = 20 * (100 + ENTRY_OVERHEAD);
        let got = pool.collect_where(|k| *k < 1000, budget);
        assert_eq!(got.len(), 20);
        assert!(
            got.iter().all(|(k, _)| k % 2 == 1),
            "read entries come first"
        );
        let all = pool.collect_where(|k| *k % 3 == 0, usize::MAX);
        assert_eq!(all.len(), 67, "every match when the budget allows");
    }
}
