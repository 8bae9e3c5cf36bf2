//! A bounded least-recently-used map (this project): the engine's cache of picks, keyed on
//! plain values. Entries live in one vector and form a doubly linked list by index (most
//! recent at the head), so a hit, an insert and an eviction are O(1) with no allocation
//! once the map is full.

use std::collections::HashMap;
use std::hash::Hash;

const NONE: usize = usize::MAX;

struct Slot<K, V> {
    key: K,
    value: V,
    prev: usize,
    next: usize,
}

/// At most `capacity` entries; inserting into a full map drops the least recently used.
pub struct Lru<K, V> {
    capacity: usize,
    index: HashMap<K, usize>,
    slots: Vec<Slot<K, V>>,
    head: usize,
    tail: usize,
    hits: u64,
    misses: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> Lru<K, V> {
    /// A map of at most `capacity` entries (0: nothing is kept).
    pub fn new(capacity: usize) -> Lru<K, V> {
        Lru {
            capacity,
            index: HashMap::with_capacity(capacity.min(1 << 16)),
            slots: Vec::with_capacity(capacity.min(1 << 16)),
            head: NONE,
            tail: NONE,
            hits: 0,
            misses: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// (hits, misses) of `get` since the map was made or cleared.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// The value of `key`, now the most recently used; counted as a hit or a miss.
    pub fn get(&mut self, key: &K) -> Option<V> {
        match self.index.get(key).copied() {
            Some(i) => {
                self.hits += 1;
                self.move_to_front(i);
                Some(self.slots[i].value.clone())
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Keep `value` under `key` as the most recently used entry.
    pub fn put(&mut self, key: K, value: V) {
        if self.capacity == 0 {
            return;
        }
        if let Some(&i) = self.index.get(&key) {
            self.slots[i].value = value;
            self.move_to_front(i);
            return;
        }
        let i = if self.slots.len() < self.capacity {
            self.slots.push(Slot {
                key: key.clone(),
                value,
                prev: NONE,
                next: NONE,
            });
            self.slots.len() - 1
        } else {
            // Reuse the least recently used slot.
            let i = self.tail;
            self.unlink(i);
            let old = std::mem::replace(&mut self.slots[i].key, key.clone());
            self.index.remove(&old);
            self.slots[i].value = value;
            i
        };
        self.index.insert(key, i);
        self.push_front(i);
    }

    /// Drop every entry and the hit counts.
    pub fn clear(&mut self) {
        self.index.clear();
        self.slots.clear();
        self.head = NONE;
        self.tail = NONE;
        self.hits = 0;
        self.misses = 0;
    }

    fn unlink(&mut self, i: usize) {
        let (p, n) = (self.slots[i].prev, self.slots[i].next);
        if p == NONE {
            self.head = n;
        } else {
            self.slots[p].next = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.slots[n].prev = p;
        }
        self.slots[i].prev = NONE;
        self.slots[i].next = NONE;
    }

    fn push_front(&mut self, i: usize) {
        self.slots[i].prev = NONE;
        self.slots[i].next = self.head;
        if self.head != NONE {
            self.slots[self.head].prev = i;
        }
        self.head = i;
        if self.tail == NONE {
            self.tail = i;
        }
    }

    fn move_to_front(&mut self, i: usize) {
        if self.head != i {
            self.unlink(i);
            self.push_front(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let mut c = Lru::new(2);
        c.put(1, "a");
        c.put(2, "b");
        assert_eq!(c.get(&1), Some("a")); // 2 is now the oldest
        c.put(3, "c");
        assert_eq!(c.get(&2), None);
        assert_eq!(c.get(&1), Some("a"));
        assert_eq!(c.get(&3), Some("c"));
        assert_eq!(c.len(), 2);
        assert_eq!(c.stats(), (3, 1));
        // Replacing a value refreshes it.
        c.put(1, "A");
        c.put(4, "d");
        assert_eq!(c.get(&3), None);
        assert_eq!(c.get(&1), Some("A"));
    }

    #[test]
    fn zero_capacity_keeps_nothing_and_clear_empties() {
        let mut c = Lru::new(0);
        c.put(1, 1);
        assert_eq!(c.get(&1), None);
        let mut c = Lru::new(3);
        for i in 0..10 {
            c.put(i, i * 10);
        }
        assert_eq!(c.len(), 3);
        assert_eq!(
            (0..10).filter_map(|i| c.get(&i)).collect::<Vec<_>>(),
            [70, 80, 90]
        );
        c.clear();
        assert!(c.is_empty());
        assert_eq!(c.stats(), (0, 0));
    }

    #[test]
    fn matches_a_reference_model_on_a_long_sequence() {
        // A plain vector kept in recency order is the reference.
        let mut c = Lru::new(5);
        let mut reference: Vec<(u32, u32)> = Vec::new();
        let mut x: u32 = 12345;
        for step in 0..5000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let key = (x >> 16) % 9;
            if x % 3 == 0 {
                c.put(key, step);
                reference.retain(|(k, _)| *k != key);
                reference.insert(0, (key, step));
                reference.truncate(5);
            } else {
                let want = reference.iter().position(|(k, _)| *k == key).map(|i| {
                    let e = reference.remove(i);
                    reference.insert(0, e);
                    e.1
                });
                assert_eq!(c.get(&key), want, "step {step}");
            }
        }
    }
}
