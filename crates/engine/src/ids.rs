//! The order-id index: which ids were ever used (duplicate-id rule) and which slab slot holds
//! each resting order (cancel, replace, status).
//!
//! Role: answers both questions without allocating per command, with few cache misses, and with
//! a bounded amount of work on every command (no table is ever rehashed or copied in one go):
//! - used ids below `direct_len` are one bit each in a bitmap (1 MiB covers 8 M ids; the OS
//!   commits its zeroed pages as they are touched);
//! - used ids from `direct_len` on that arrive at the frontier of what is covered (sequential ids,
//!   as the exchange assigns them) are bits in a chunked bitmap that grows by appending one
//!   zeroed chunk of `CHUNK_IDS` ids (128 KiB) at a time: bits are never copied;
//! - other used ids (sparse: anywhere in `u64`) go to a hash set whose growth is incremental:
//!   when it passes a load of 1/2 a table of twice the size takes new ids and each later insert
//!   moves `MIGRATE_STEP` buckets of the old table into it; both tables are split into segments
//!   of `SEG_BUCKETS` buckets, allocated on first write and freed as the move passes them;
//! - resting ids map to slots in a small open-addressing hash table sized by the number of
//!   resting orders (not by the id range), so it stays cache-resident. It doubles (amortized)
//!   only when the count of resting orders passes its previous peak, which `orders_max` bounds.
//!
//! Memory bound against hostile ids: a chunk is appended only while the ids in the chunks are at
//! least 1/8 of the ids they cover and fewer than `CHUNKS_MAX` chunks exist, so the chunks hold
//! at most 1 byte per id in them plus one chunk (and at most 2 GiB); an isolated far id never
//! gets a chunk of its own but costs the sparse set 16 to 64 bytes (load 1/4 to 1/2, and during
//! a move both tables).
//!
//! Hashing is linear probing with a fixed multiplicative hash (deterministic, no `RandomState`).
//!
//! Invariants: an id is resting iff `live_slot` names its slot; a resting id is used; an id once
//! used stays used; a used id is in exactly one of the bitmap (direct or chunked) and the sparse
//! set; the sparse set's smallest id is `SparseSet::min` or more; while the sparse set moves, an
//! id is in the new table or in an old bucket at or after the cursor.

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

    /// Starts loading the bucket `id` hashes to.
    #[inline(always)]
    fn prefetch(&self, id: u64) {
        let b = fib(id, self.shift) & (self.t.len() - 1);
        crate::hint::prefetch(&self.t[b]);
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

/// Ids per chunk of the bitmap above `direct_len`: 2^20 ids, 128 KiB.
pub(crate) const CHUNK_BITS: u32 = 20;
pub(crate) const CHUNK_IDS: u64 = 1 << CHUNK_BITS;
const CHUNK_WORDS: usize = (CHUNK_IDS / 64) as usize;
/// Most chunks: they cover at most 2^34 ids (2 GiB), the limit `ids_direct` has too.
pub(crate) const CHUNKS_MAX: usize = 1 << 14;
/// Buckets per segment of a sparse table (32 KiB).
const SEG_BUCKETS: usize = 1 << 12;
/// Old buckets moved per insert while the sparse set grows. A move starts when a table of
/// capacity C holds C/2 + 1 ids and must end before the new one (2C) holds C: at least C/2
/// inserts later, so 2 buckets per insert would do; 8 ends it within C/8 inserts.
const MIGRATE_STEP: usize = 8;
/// Added into the hash of an id at or above `direct_len` (keeps the state hash of older builds).
const SPARSE_SALT: u64 = 0x5bd1_e995_0000_0000;

/// One open-addressing table of ids (0 marks an empty bucket: 0 is always a direct id), split
/// into segments that are allocated on first write (an unallocated segment reads as empty).
#[derive(Clone, Debug)]
struct Table {
    segs: Vec<Box<[u64]>>,
    /// log2 of the buckets per segment.
    seg_bits: u32,
    shift: u32,
    cap: usize,
    len: usize,
}

impl Table {
    fn new(cap: usize) -> Table {
        let cap = cap.max(16).next_power_of_two();
        let seg = cap.min(SEG_BUCKETS);
        Table {
            segs: (0..cap / seg).map(|_| Box::default()).collect(),
            seg_bits: seg.trailing_zeros(),
            shift: 64 - cap.trailing_zeros(),
            cap,
            len: 0,
        }
    }

    #[inline(always)]
    fn key(&self, b: usize) -> u64 {
        let s = &self.segs[b >> self.seg_bits];
        if s.is_empty() {
            0
        } else {
            s[b & ((1 << self.seg_bits) - 1)]
        }
    }

    /// Finds `id`: `Ok(bucket)` if present, `Err(empty bucket)` if not.
    #[inline(always)]
    fn find(&self, id: u64) -> Result<usize, usize> {
        let mask = self.cap - 1;
        let mut b = fib(id, self.shift);
        loop {
            let k = self.key(b);
            if k == id {
                return Ok(b);
            }
            if k == 0 {
                return Err(b);
            }
            b = (b + 1) & mask;
        }
    }

    /// Inserts `id`, known absent. The table must stay below full (its owner keeps load <= 1/2).
    fn insert_absent(&mut self, id: u64) {
        let b = match self.find(id) {
            Err(b) => b,
            Ok(_) => return,
        };
        let seg_len = 1usize << self.seg_bits;
        let seg = &mut self.segs[b >> self.seg_bits];
        if seg.is_empty() {
            *seg = vec![0u64; seg_len].into_boxed_slice();
        }
        seg[b & (seg_len - 1)] = id;
        self.len += 1;
    }

    /// Whether `id` is in a bucket at or after `cursor` (buckets before it are ignored: the
    /// moved part of an old table). Visits at most `cap - cursor` buckets.
    fn contains_from(&self, cursor: usize, id: u64) -> bool {
        let mask = self.cap - 1;
        let mut b = fib(id, self.shift).max(cursor);
        for _ in cursor..self.cap {
            let k = self.key(b);
            if k == id {
                return true;
            }
            if k == 0 {
                return false;
            }
            // Wrapping past the end skips the moved part: an id whose probe run wraps into it
            // was either moved (it is in the new table) or sits after it.
            b = ((b + 1) & mask).max(cursor);
        }
        false
    }

    /// Every id in a bucket at or after `cursor`, in bucket order.
    fn each_from(&self, cursor: usize, mut f: impl FnMut(u64)) {
        let seg_len = 1usize << self.seg_bits;
        for (si, seg) in self.segs.iter().enumerate() {
            let base = si * seg_len;
            if seg.is_empty() || base + seg_len <= cursor {
                continue;
            }
            let from = cursor.saturating_sub(base);
            for &k in &seg[from..] {
                if k != 0 {
                    f(k);
                }
            }
        }
    }
}

/// The used ids that are not in the bitmap: a hash set that grows incrementally.
#[derive(Clone, Debug)]
struct SparseSet {
    cur: Table,
    /// While growing: the previous table, whose buckets before `cursor` are already in `cur`
    /// (and whose segments before `cursor`'s are freed).
    old: Option<Table>,
    cursor: usize,
    /// The number of ids.
    len: usize,
    /// No id below this is in the set (`u64::MAX` while it is empty): lets the bitmap's misses
    /// skip the probe.
    min: u64,
}

impl SparseSet {
    fn new(cap: usize) -> SparseSet {
        SparseSet {
            cur: Table::new(cap),
            old: None,
            cursor: 0,
            len: 0,
            min: u64::MAX,
        }
    }

    #[inline]
    fn contains(&self, id: u64) -> bool {
        if id < self.min {
            return false;
        }
        self.cur.find(id).is_ok()
            || self
                .old
                .as_ref()
                .is_some_and(|o| o.contains_from(self.cursor, id))
    }

    /// Inserts `id`, known absent: O(1) probes plus at most `MIGRATE_STEP` moved buckets.
    fn insert_absent(&mut self, id: u64) {
        self.migrate(MIGRATE_STEP);
        self.cur.insert_absent(id);
        self.len += 1;
        self.min = self.min.min(id);
        if self.old.is_none() && self.cur.len * 2 > self.cur.cap {
            // Allocates only the new table's segment pointers; its segments come on first write.
            let bigger = Table::new(self.cur.cap * 2);
            self.old = Some(std::mem::replace(&mut self.cur, bigger));
            self.cursor = 0;
        }
        debug_assert!(self.cur.len * 2 <= self.cur.cap + 2);
    }

    /// Moves up to `budget` buckets of the old table (an unallocated segment counts as one).
    fn migrate(&mut self, mut budget: usize) {
        let SparseSet {
            cur, old, cursor, ..
        } = self;
        let Some(o) = old else { return };
        let seg_len = 1usize << o.seg_bits;
        while budget > 0 && *cursor < o.cap {
            budget -= 1;
            let si = *cursor >> o.seg_bits;
            if o.segs[si].is_empty() {
                *cursor = (si + 1) * seg_len;
                continue;
            }
            let k = o.segs[si][*cursor & (seg_len - 1)];
            if k != 0 {
                cur.insert_absent(k);
            }
            *cursor += 1;
            if *cursor & (seg_len - 1) == 0 {
                // Every bucket of this segment is in `cur` now: free it.
                o.segs[si] = Box::default();
            }
        }
        if *cursor >= o.cap {
            *old = None;
        }
    }

    /// Every id, in no particular order.
    fn each(&self, mut f: impl FnMut(u64)) {
        self.cur.each_from(0, &mut f);
        if let Some(o) = &self.old {
            o.each_from(self.cursor, &mut f);
        }
    }
}

#[derive(Clone)]
pub(crate) struct IdIndex {
    /// One bit per id below `direct_len`: ever used.
    used_bits: Vec<u64>,
    direct_len: u64,
    /// One bit per id in `direct_len .. direct_len + chunks.len() * CHUNK_IDS`: ever used (and
    /// not in `sparse`). Each chunk has `CHUNK_WORDS` words.
    chunks: Vec<Box<[u64]>>,
    /// The number of set bits in `chunks`.
    chunk_ids: u64,
    /// Used ids at or above `direct_len` that are not in the bitmap.
    sparse: SparseSet,
    live: LiveMap,
}

impl std::fmt::Debug for IdIndex {
    /// A summary: the bitmaps are megabytes of words.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdIndex")
            .field("direct_len", &self.direct_len)
            .field("chunks", &self.chunks.len())
            .field("chunk_ids", &self.chunk_ids)
            .field("sparse_len", &self.sparse.len)
            .field("sparse_moving", &self.sparse.old.is_some())
            .field("live_len", &self.live.len)
            .finish()
    }
}

impl IdIndex {
    pub(crate) fn new(direct_len: usize, hashed_initial: usize, live_initial: usize) -> IdIndex {
        let direct_len = direct_len.max(1).next_multiple_of(64);
        IdIndex {
            used_bits: vec![0; direct_len / 64],
            direct_len: direct_len as u64,
            chunks: Vec::new(),
            chunk_ids: 0,
            sparse: SparseSet::new(hashed_initial),
            live: LiveMap::new(live_initial),
        }
    }

    /// Whether `id` was ever accepted.
    #[inline(always)]
    pub(crate) fn is_used(&self, id: u64) -> bool {
        if id < self.direct_len {
            let i = id as usize;
            self.used_bits[i >> 6] & (1u64 << (i & 63)) != 0
        } else {
            self.is_used_above(id)
        }
    }

    /// The chunk and word index of `id` (>= `direct_len`) in the chunked bitmap, whether or not
    /// that chunk exists.
    #[inline(always)]
    fn chunk_pos(&self, id: u64) -> (u64, usize) {
        let off = id - self.direct_len;
        (off >> CHUNK_BITS, (off as usize >> 6) & (CHUNK_WORDS - 1))
    }

    #[inline]
    fn is_used_above(&self, id: u64) -> bool {
        let (c, w) = self.chunk_pos(id);
        if let Some(chunk) = usize::try_from(c).ok().and_then(|c| self.chunks.get(c)) {
            if chunk[w] & (1u64 << (id & 63)) != 0 {
                return true;
            }
        }
        self.sparse.contains(id)
    }

    /// Records `id` as used for ever. Idempotent.
    #[inline(always)]
    pub(crate) fn mark_used(&mut self, id: u64) {
        if id < self.direct_len {
            let i = id as usize;
            self.used_bits[i >> 6] |= 1u64 << (i & 63);
        } else {
            self.mark_above(id);
        }
    }

    /// Whether one more chunk may be appended (the memory bound in the module comment).
    #[inline]
    fn may_append_chunk(&self) -> bool {
        self.chunks.len() < CHUNKS_MAX
            && self.chunk_ids * 8 >= (self.chunks.len() as u64) << CHUNK_BITS
    }

    fn mark_above(&mut self, id: u64) {
        if self.sparse.contains(id) {
            return;
        }
        let (c, w) = self.chunk_pos(id);
        if c == self.chunks.len() as u64 && self.may_append_chunk() {
            // Zeroed by the allocator (fresh pages come from the OS as they are touched, a
            // page per 32 K ids): no copy, no burst.
            self.chunks.push(vec![0u64; CHUNK_WORDS].into_boxed_slice());
        }
        match usize::try_from(c).ok().and_then(|c| self.chunks.get_mut(c)) {
            Some(chunk) => {
                let bit = 1u64 << (id & 63);
                if chunk[w] & bit == 0 {
                    chunk[w] |= bit;
                    self.chunk_ids += 1;
                }
            }
            None => self.sparse.insert_absent(id),
        }
    }

    /// The number of used ids and an order-independent digest of them (for the state hash;
    /// O(covered range / 64 + used ids above `direct_len` + sparse capacity), never on the hot
    /// path). The value depends only on the set: per non-zero word `w` of the direct bitmap
    /// `mix64(mix64(w) ^ bits)`, per used id `k >= direct_len` `mix64(k ^ SPARSE_SALT)`, summed.
    pub(crate) fn used_digest(&self) -> (u64, u64) {
        let mut count = 0u64;
        let mut digest = 0u64;
        for (w, &bits) in self.used_bits.iter().enumerate() {
            if bits != 0 {
                count += bits.count_ones() as u64;
                digest = digest.wrapping_add(mix64(mix64(w as u64) ^ bits));
            }
        }
        let mut per_id = |k: u64| {
            count += 1;
            digest = digest.wrapping_add(mix64(k ^ SPARSE_SALT));
        };
        self.each_chunk_id(&mut per_id);
        self.sparse.each(per_id);
        (count, digest)
    }

    /// Every id in the chunked bitmap, ascending.
    fn each_chunk_id(&self, mut f: impl FnMut(u64)) {
        for (w, &bits) in self.chunks.iter().flat_map(|c| c.iter()).enumerate() {
            let mut b = bits;
            while b != 0 {
                f(self.direct_len + (w as u64) * 64 + b.trailing_zeros() as u64);
                b &= b - 1;
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

    /// Starts loading where resting `id` is indexed (a cache hint for `set_gone` soon).
    #[inline(always)]
    pub(crate) fn prefetch_live(&self, id: u64) {
        self.live.prefetch(id);
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

    // ---- Snapshot support (never on the hot path; may allocate) ----

    /// The number of chunks of the bitmap above `direct_len`.
    pub(crate) fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The bitmap's used ids (direct and chunked) as maximal runs `(start, len)`, ascending.
    pub(crate) fn bitmap_runs(&self, mut f: impl FnMut(u64, u64)) {
        let mut open: Option<(u64, u64)> = None; // start, end (exclusive)
        let words = self
            .used_bits
            .iter()
            .chain(self.chunks.iter().flat_map(|c| c.iter()));
        for (wi, &word) in words.enumerate() {
            let base = wi as u64 * 64;
            let mut w = word;
            while w != 0 {
                let s = w.trailing_zeros();
                let ones = (w >> s).trailing_ones();
                let (start, end) = (base + s as u64, base + (s + ones) as u64);
                open = match open {
                    Some((rs, re)) if re == start => Some((rs, end)),
                    Some((rs, re)) => {
                        f(rs, re - rs);
                        Some((start, end))
                    }
                    None => Some((start, end)),
                };
                w = if s + ones >= 64 {
                    0
                } else {
                    w & (u64::MAX << (s + ones))
                };
            }
        }
        if let Some((rs, re)) = open {
            f(rs, re - rs);
        }
    }

    /// The sparse set's ids, ascending.
    pub(crate) fn sparse_sorted(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(self.sparse.len);
        self.sparse.each(|k| v.push(k));
        v.sort_unstable();
        v
    }

    /// Restores the chunk count of a fresh index (no id used yet).
    pub(crate) fn restore_chunks(&mut self, n: usize) -> Result<(), &'static str> {
        if n > CHUNKS_MAX {
            return Err("more id chunks than the limit");
        }
        if !self.chunks.is_empty() || self.chunk_ids != 0 || self.sparse.len != 0 {
            return Err("id chunks restored into a used index");
        }
        let mut chunks = Vec::new();
        chunks
            .try_reserve_exact(n)
            .map_err(|_| "out of memory for id chunks")?;
        chunks.extend((0..n).map(|_| vec![0u64; CHUNK_WORDS].into_boxed_slice()));
        self.chunks = chunks;
        Ok(())
    }

    /// Marks `start .. start + len` used in the bitmap. The caller restores maximal runs
    /// ascending, so these ids are not used yet.
    pub(crate) fn restore_run(&mut self, start: u64, len: u64) -> Result<(), &'static str> {
        let covered = self.direct_len + (self.chunks.len() as u64) * CHUNK_IDS;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= covered)
            .ok_or("used-id run beyond the bitmap")?;
        if len == 0 {
            return Err("empty used-id run");
        }
        if end > self.direct_len {
            self.chunk_ids += end - start.max(self.direct_len);
        }
        let mut i = start;
        while i < end {
            let n = (64 - (i & 63)).min(end - i);
            let mask = if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << (i & 63)
            };
            let word = (i / 64) as usize;
            let direct_words = self.used_bits.len();
            if word < direct_words {
                self.used_bits[word] |= mask;
            } else {
                let cw = word - direct_words;
                self.chunks[cw / CHUNK_WORDS][cw % CHUNK_WORDS] |= mask;
            }
            i += n;
        }
        Ok(())
    }

    /// Checks what the live path guarantees of the chunks: each was appended while the chunks
    /// held 1/8 of the ids they covered, and holds the id that appended it.
    pub(crate) fn check_chunks(&self) -> Result<(), &'static str> {
        let n = self.chunks.len() as u64;
        if n > 0 && self.chunk_ids * 8 < (n - 1) << CHUNK_BITS {
            return Err("id chunks sparser than 1/8");
        }
        if self
            .chunks
            .last()
            .is_some_and(|c| c.iter().all(|&w| w == 0))
        {
            return Err("last id chunk empty");
        }
        Ok(())
    }

    /// Adds a sparse id to a restored index: ids ascending, at or above `direct_len`, none in
    /// the bitmap.
    pub(crate) fn restore_sparse(&mut self, id: u64) -> Result<(), &'static str> {
        if id < self.direct_len {
            return Err("sparse id below ids_direct");
        }
        if self.is_used(id) {
            return Err("sparse id used twice");
        }
        self.sparse.insert_absent(id);
        Ok(())
    }

    /// Sizes an empty sparse set for `n` ids, so a restore moves nothing.
    pub(crate) fn reserve_sparse(&mut self, n: usize) {
        if self.sparse.len == 0 && n * 2 > self.sparse.cur.cap {
            self.sparse = SparseSet::new((n * 2 + 1).next_power_of_two());
        }
    }
}

#[cfg(test)]
mod tests;
