//! The order-id index: which ids were ever used (duplicate-id rule) and which slab slot holds
//! each resting order (cancel, replace, status).
//!
//! Role: answers both questions without allocating per command and with few cache misses:
//! - used ids below `direct_len` are one bit each in a bitmap (1 MiB covers 8 M ids; the OS
//!   commits its zeroed pages as they are touched); larger ids go to a hash set;
//! - resting ids map to slots in a small open-addressing hash table sized by the number of
//!   resting orders (not by the id range), so it stays cache-resident.
//!
//! Both hash tables use linear probing and a fixed multiplicative hash (deterministic, no
//! `RandomState`). They start at the configured capacity and double beyond a load of 1/2:
//! amortized growth, the only allocation here, which happens only when the count of resting
//! orders exceeds its previous peak or when new sparse ids arrive (the used set).
//!
//! Invariants: an id is resting iff `live_slot` names its slot; a resting id is used; an id once
//! used stays used.

/// Marks an empty bucket of the live table.
const NIL: u32 = u32::MAX;

#[inline]
pub(crate) fn mix64(mut x: u64) -> u64 {
    // splitmix64 finalizer: a fixed bijection, deterministic on every platform.
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[inline]
fn fib(id: u64, shift: u32) -> usize {
    (id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    id: u64,
    slot: u32,
}

/// Resting id -> slab slot.
#[derive(Clone, Debug)]
struct LiveMap {
    t: Vec<Entry>,
    shift: u32,
    len: usize,
}

impl LiveMap {
    fn new(cap: usize) -> LiveMap {
        let cap = cap.max(16).next_power_of_two();
        LiveMap {
            t: vec![Entry { id: 0, slot: NIL }; cap],
            shift: 64 - cap.trailing_zeros(),
            len: 0,
        }
    }

    #[inline(always)]
    fn get(&self, id: u64) -> Option<u32> {
        let mask = self.t.len() - 1;
        let mut b = fib(id, self.shift);
        loop {
            let e = self.t[b];
            if e.slot == NIL {
                return None;
            }
            if e.id == id {
                return Some(e.slot);
            }
            b = (b + 1) & mask;
        }
    }

    /// Inserts or overwrites.
    #[inline(always)]
    fn put(&mut self, id: u64, slot: u32) {
        let mask = self.t.len() - 1;
        let mut b = fib(id, self.shift);
        loop {
            let e = &mut self.t[b];
            if e.slot == NIL {
                *e = Entry { id, slot };
                self.len += 1;
                if self.len * 2 > self.t.len() {
                    self.grow();
                }
                return;
            }
            if e.id == id {
                e.slot = slot;
                return;
            }
            b = (b + 1) & mask;
        }
    }

    /// The bucket holding `id`, and its slot.
    #[inline(always)]
    fn find(&self, id: u64) -> Option<(usize, u32)> {
        let mask = self.t.len() - 1;
        let mut b = fib(id, self.shift);
        loop {
            let e = self.t[b];
            if e.slot == NIL {
                return None;
            }
            if e.id == id {
                return Some((b, e.slot));
            }
            b = (b + 1) & mask;
        }
    }

    /// Removes `id` if present (backward-shift deletion: no tombstones).
    #[inline(always)]
    fn remove(&mut self, id: u64) {
        if let Some((b, _)) = self.find(id) {
            self.remove_at(b);
        }
    }

    /// Empties bucket `i` (found by `find`) and closes the gap.
    #[inline(always)]
    fn remove_at(&mut self, mut i: usize) {
        let mask = self.t.len() - 1;
        self.len -= 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = self.t[j];
            if e.slot == NIL {
                self.t[i].slot = NIL;
                return;
            }
            let home = fib(e.id, self.shift);
            // `e` may move to the hole at `i` unless its home lies cyclically in (i, j].
            let stays = if i <= j {
                i < home && home <= j
            } else {
                i < home || home <= j
            };
            if !stays {
                self.t[i] = e;
                i = j;
            }
        }
    }

    fn grow(&mut self) {
        let cap = self.t.len() * 2;
        let old = std::mem::replace(&mut self.t, vec![Entry { id: 0, slot: NIL }; cap]);
        self.shift = 64 - cap.trailing_zeros();
        let mask = cap - 1;
        for e in old.into_iter().filter(|e| e.slot != NIL) {
            let mut b = fib(e.id, self.shift);
            while self.t[b].slot != NIL {
                b = (b + 1) & mask;
            }
            self.t[b] = e;
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct IdIndex {
    /// One bit per id below `direct_len`: ever used.
    used_bits: Vec<u64>,
    direct_len: u64,
    /// Used ids >= `direct_len`; key 0 marks an empty bucket (0 is always a direct id).
    used_keys: Vec<u64>,
    used_shift: u32,
    used_hashed: usize,
    live: LiveMap,
}

impl IdIndex {
    pub(crate) fn new(direct_len: usize, hashed_initial: usize, live_initial: usize) -> IdIndex {
        let direct_len = direct_len.max(1).next_multiple_of(64);
        let cap = hashed_initial.max(16).next_power_of_two();
        IdIndex {
            used_bits: vec![0; direct_len / 64],
            direct_len: direct_len as u64,
            used_keys: vec![0; cap],
            used_shift: 64 - cap.trailing_zeros(),
            used_hashed: 0,
            live: LiveMap::new(live_initial),
        }
    }

    /// Finds the bucket of sparse id `id`: `Ok` if present, `Err(empty bucket)` if not.
    #[inline(always)]
    fn used_bucket(&self, id: u64) -> Result<usize, usize> {
        let mask = self.used_keys.len() - 1;
        let mut b = fib(id, self.used_shift);
        loop {
            let k = self.used_keys[b];
            if k == id {
                return Ok(b);
            }
            if k == 0 {
                return Err(b);
            }
            b = (b + 1) & mask;
        }
    }

    /// Whether `id` was ever accepted.
    #[inline(always)]
    pub(crate) fn is_used(&self, id: u64) -> bool {
        if id < self.direct_len {
            let i = id as usize;
            self.used_bits[i >> 6] & (1u64 << (i & 63)) != 0
        } else {
            self.used_bucket(id).is_ok()
        }
    }

    /// Records `id` as used for ever. Idempotent.
    #[inline(always)]
    pub(crate) fn mark_used(&mut self, id: u64) {
        if id < self.direct_len {
            let i = id as usize;
            self.used_bits[i >> 6] |= 1u64 << (i & 63);
        } else if let Err(b) = self.used_bucket(id) {
            self.used_keys[b] = id;
            self.used_hashed += 1;
            if self.used_hashed * 2 > self.used_keys.len() {
                self.grow_used();
            }
        }
    }

    /// The number of used ids and an order-independent digest of them (for the state hash;
    /// O(direct range / 64 + hash capacity), never on the hot path).
    pub(crate) fn used_digest(&self) -> (u64, u64) {
        let mut count = 0u64;
        let mut digest = 0u64;
        for (w, &bits) in self.used_bits.iter().enumerate() {
            if bits != 0 {
                count += bits.count_ones() as u64;
                digest = digest.wrapping_add(mix64(mix64(w as u64) ^ bits));
            }
        }
        for &k in self.used_keys.iter().filter(|k| **k != 0) {
            count += 1;
            digest = digest.wrapping_add(mix64(k ^ 0x5bd1_e995_0000_0000));
        }
        (count, digest)
    }

    fn grow_used(&mut self) {
        let cap = self.used_keys.len() * 2;
        let old = std::mem::replace(&mut self.used_keys, vec![0; cap]);
        self.used_shift = 64 - cap.trailing_zeros();
        for k in old.into_iter().filter(|k| *k != 0) {
            if let Err(b) = self.used_bucket(k) {
                self.used_keys[b] = k;
            }
        }
    }

    /// The slab slot of a resting order.
    #[inline(always)]
    pub(crate) fn live_slot(&self, id: u64) -> Option<u32> {
        self.live.get(id)
    }

    /// Where resting id `id` is in the live table, and its slot (see `remove_live_at`).
    #[inline(always)]
    pub(crate) fn live_find(&self, id: u64) -> Option<(usize, u32)> {
        self.live.find(id)
    }

    /// Records that the id found by `live_find` at `bucket` no longer rests (no table change
    /// may happen in between).
    #[inline(always)]
    pub(crate) fn remove_live_at(&mut self, bucket: usize) {
        self.live.remove_at(bucket);
    }

    /// Records that used id `id` now rests in `slot`.
    #[inline(always)]
    pub(crate) fn set_live(&mut self, id: u64, slot: u32) {
        debug_assert!(self.is_used(id));
        self.live.put(id, slot);
    }

    /// Records that `id` no longer rests.
    #[inline(always)]
    pub(crate) fn set_gone(&mut self, id: u64) {
        self.live.remove(id);
    }

    /// Number of resting ids.
    pub(crate) fn live_len(&self) -> usize {
        self.live.len
    }

    /// Every used id, ascending (for snapshots; allocates).
    pub(crate) fn all_used(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for (w, &bits) in self.used_bits.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                out.push((w * 64) as u64 + b.trailing_zeros() as u64);
                b &= b - 1;
            }
        }
        let mut hashed: Vec<u64> = self.used_keys.iter().copied().filter(|k| *k != 0).collect();
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
        let mut ix = IdIndex::new(100, 16, 16);
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
            assert_eq!(ix.is_used(id), n % 2 == 0 && n >= 100);
            ix.mark_used(id);
            ix.set_live(id, n as u32);
        }
        for (n, &id) in ids.iter().enumerate() {
            if n >= 1900 || n % 2 == 1 {
                assert_eq!(ix.live_slot(id), Some(n as u32), "id {id}");
            }
            assert!(ix.is_used(id));
        }
        assert!(!ix.is_used(1 << 41));
        assert!(!ix.is_used(u64::MAX));
        assert_eq!(ix.live_slot(1 << 41), None);
        ix.set_gone(ids[1]);
        ix.set_gone(ids[2]);
        assert_eq!(ix.live_slot(ids[1]), None);
        assert_eq!(ix.live_slot(ids[2]), None);
        assert!(ix.is_used(ids[1]) && ix.is_used(ids[2]));
        assert_eq!(ix.used_digest().0, 50 + 1000, "50 distinct even direct ids");
        let all = ix.all_used();
        assert_eq!(all.len(), 1050);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn live_map_matches_a_btreemap_under_churn() {
        let mut m = LiveMap::new(16);
        let mut r = std::collections::BTreeMap::new();
        let mut x = 88172645463325252u64;
        for step in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // A small key space forces collisions, wrap-around and deletions mid-cluster.
            let id = if step % 3 == 0 {
                x % 512
            } else {
                x % 5000 + (1 << 33)
            };
            if x >> 60 < 7 {
                m.put(id, step);
                r.insert(id, step);
            } else {
                m.remove(id);
                r.remove(&id);
            }
            let probe = (x >> 20) % 5000 + if step % 2 == 0 { 0 } else { 1 << 33 };
            assert_eq!(m.get(probe), r.get(&probe).copied());
            assert_eq!(m.len, r.len());
        }
        for (k, v) in &r {
            assert_eq!(m.get(*k), Some(*v));
        }
    }
}
