//! The order-id index: for every id ever accepted, whether it is still resting and where.
//!
//! Role: answers "is this id used?" (duplicate-id rule) and "which slab slot holds this live
//! order?" (cancel, replace, status) with one lookup, without allocating per command.
//!
//! Ids below `direct_len` live in a directly indexed table (one `u32` per id, zeroed pages
//! are committed lazily by the OS, so a large table costs nothing until used). Larger ids go
//! into an open-addressing hash table with linear probing and a fixed multiplicative hash
//! (deterministic, no `RandomState`). Entries are never removed: a past id stays as `DEAD`.
//! The hash table is preallocated; beyond a load of 1/2 it doubles (amortized growth, the only
//! allocation this module can make after construction).
//!
//! Invariants: an entry is `EMPTY` (never used), `DEAD` (used, not resting) or `slot + 1`.

/// Entry value of an id never accepted.
const EMPTY: u32 = 0;
/// Entry value of an id accepted in the past that is not resting now.
pub(crate) const DEAD: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub(crate) struct IdIndex {
    direct: Vec<u32>,
    /// Keys of the hash table; `0` marks an empty bucket (0 is always a direct id).
    keys: Vec<u64>,
    vals: Vec<u32>,
    shift: u32,
    hashed_len: usize,
    /// Number of ids ever used, and an order-independent digest of them (for the state hash).
    pub(crate) used_count: u64,
    pub(crate) used_digest: u64,
}

#[inline]
pub(crate) fn mix64(mut x: u64) -> u64 {
    // splitmix64 finalizer: a fixed bijection, deterministic on every platform.
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl IdIndex {
    pub(crate) fn new(direct_len: usize, hashed_initial: usize) -> IdIndex {
        let cap = hashed_initial.max(16).next_power_of_two();
        IdIndex {
            direct: vec![EMPTY; direct_len.max(1)],
            keys: vec![0; cap],
            vals: vec![EMPTY; cap],
            shift: 64 - cap.trailing_zeros(),
            hashed_len: 0,
            used_count: 0,
            used_digest: 0,
        }
    }

    #[inline]
    fn bucket(&self, id: u64) -> usize {
        (id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// The entry of `id`: `EMPTY`, `DEAD` or `slot + 1`.
    #[inline]
    pub(crate) fn get(&self, id: u64) -> u32 {
        if (id as usize as u64) == id && (id as usize) < self.direct.len() {
            return self.direct[id as usize];
        }
        let mask = self.keys.len() - 1;
        let mut b = self.bucket(id);
        loop {
            let k = self.keys[b];
            if k == id {
                return self.vals[b];
            }
            if k == 0 {
                return EMPTY;
            }
            b = (b + 1) & mask;
        }
    }

    #[inline]
    pub(crate) fn is_used(&self, id: u64) -> bool {
        self.get(id) != EMPTY
    }

    /// The slab slot of a resting order.
    #[inline]
    pub(crate) fn live_slot(&self, id: u64) -> Option<u32> {
        match self.get(id) {
            EMPTY | DEAD => None,
            v => Some(v - 1),
        }
    }

    /// Sets the entry of `id` to `val` (`DEAD` or `slot + 1`). The first time an id is set it
    /// becomes used for ever.
    #[inline]
    pub(crate) fn set(&mut self, id: u64, val: u32) {
        debug_assert!(val != EMPTY);
        if (id as usize as u64) == id && (id as usize) < self.direct.len() {
            let e = &mut self.direct[id as usize];
            if *e == EMPTY {
                self.used_count += 1;
                self.used_digest = self.used_digest.wrapping_add(mix64(id));
            }
            *e = val;
            return;
        }
        self.set_hashed(id, val);
    }

    fn set_hashed(&mut self, id: u64, val: u32) {
        let mask = self.keys.len() - 1;
        let mut b = self.bucket(id);
        loop {
            let k = self.keys[b];
            if k == id {
                self.vals[b] = val;
                return;
            }
            if k == 0 {
                break;
            }
            b = (b + 1) & mask;
        }
        self.keys[b] = id;
        self.vals[b] = val;
        self.hashed_len += 1;
        self.used_count += 1;
        self.used_digest = self.used_digest.wrapping_add(mix64(id));
        if self.hashed_len * 2 > self.keys.len() {
            self.grow();
        }
    }

    fn grow(&mut self) {
        let cap = self.keys.len() * 2;
        let old_keys = std::mem::replace(&mut self.keys, vec![0; cap]);
        let old_vals = std::mem::replace(&mut self.vals, vec![EMPTY; cap]);
        self.shift = 64 - cap.trailing_zeros();
        let mask = cap - 1;
        for (k, v) in old_keys.into_iter().zip(old_vals) {
            if k == 0 {
                continue;
            }
            let mut b = self.bucket(k);
            while self.keys[b] != 0 {
                b = (b + 1) & mask;
            }
            self.keys[b] = k;
            self.vals[b] = v;
        }
    }

    /// Every used id with its entry, ascending by id (for snapshots; allocates).
    pub(crate) fn all_used(&self) -> Vec<(u64, u32)> {
        let mut out: Vec<(u64, u32)> = self
            .direct
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != EMPTY)
            .map(|(i, v)| (i as u64, *v))
            .collect();
        let mut hashed: Vec<(u64, u32)> = self
            .keys
            .iter()
            .zip(&self.vals)
            .filter(|(k, _)| **k != 0)
            .map(|(k, v)| (*k, *v))
            .collect();
        hashed.sort_unstable();
        out.extend(hashed);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_and_hashed_ids_round_trip_and_grow() {
        let mut ix = IdIndex::new(100, 16);
        let ids: Vec<u64> = (0..2000u64)
            .map(|i| {
                if i % 2 == 0 {
                    i % 100
                } else {
                    mix64(i) | 1 << 40
                }
            })
            .collect();
        for (n, &id) in ids.iter().enumerate() {
            ix.set(id, n as u32 + 1);
        }
        for (n, &id) in ids.iter().enumerate() {
            if id >= 100 {
                assert_eq!(ix.live_slot(id), Some(n as u32));
            }
            assert!(ix.is_used(id));
        }
        assert!(!ix.is_used(1 << 41));
        assert!(!ix.is_used(u64::MAX));
        ix.set(ids[1], DEAD);
        assert_eq!(ix.live_slot(ids[1]), None);
        assert!(ix.is_used(ids[1]));
        assert_eq!(ix.used_count, 50 + 1000, "50 distinct even direct ids");
        assert_eq!(ix.all_used().len(), 1050);
    }
}
