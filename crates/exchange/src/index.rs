//! The ClOrdID index: every remembered client order id, oldest first, in a ring, its bytes
//! in a second ring, and an open-addressing table from a hash of (originator, ClOrdID) to
//! ring positions.
//!
//! Role: answer "which order did this originator use this ClOrdID for" in one cache line of
//! the table and, on a hit, one ring entry and its bytes, for a window of the last
//! `CL_ORD_IDS_MAX` ClOrdIDs plus every live order's current one, without an allocation in
//! steady state.
//!
//! Never: iterates a hash table where the order could reach the output or a snapshot (the
//! ring is in first-use order); grows on the order path after start (everything is
//! reserved); trusts a client's bytes to spread the hash (foldhash, seeded per process).

use crate::OrderId;
use std::collections::VecDeque;

/// ClOrdIDs remembered for uniqueness and lookup, across originators. A live order's current
/// ClOrdID (its own, or that of its last accepted replace) is never forgotten; beyond this
/// count the oldest other ClOrdIDs are (those of finished orders, of requests about an order
/// that a later replace superseded, of rejected requests). So a ClOrdID is unique per
/// originator among live orders and the most recent `CL_ORD_IDS_MAX`, and the index holds
/// at most `CL_ORD_IDS_MAX` plus one entry per live order: a quote replaced all day keeps one.
pub(crate) const CL_ORD_IDS_MAX: usize = 1 << 20;
/// Bytes per remembered ClOrdID that a `Backing::Resident` index has faulted in from the
/// start (`ClBytes::with_backing`): 64 MiB for the `CL_ORD_IDS_MAX` window, room for a window
/// of the longest ClOrdIDs accepted (a UUID with dashes, 36 bytes, is a common ClOrdID), so
/// no usual client's ClOrdIDs make the serving loop grow the ring (a doubling copies the live
/// bytes and faults the new half in, in one iteration); a replay faults it in beside the
/// records (`Backing::Background`).
const CL_BYTES_RESIDENT_PER_ID: usize = crate::CL_ORD_ID_LEN_MAX;
/// Most entries one new ClOrdID moves from the front of the index's ring to its back (live
/// orders' current ClOrdIDs, which stay). Bounds the work per command: beyond it the ring is
/// longer than `CL_ORD_IDS_MAX` for a while, by at most the live orders.
pub(crate) const ROTATIONS_MAX: usize = 8;
/// How many ring entries ahead of the oldest `remember_cl_ord_id` prefetches the index slot
/// (one entry is forgotten or rotated per ClOrdID remembered, so this is about as many
/// requests ahead: enough for a DRAM miss to finish before the slot is needed).
const ROTATE_PREFETCH: usize = 16;

/// One remembered ClOrdID: which originator used it for which order; its bytes are in the
/// `ClBytes` ring at `start` (24 bytes, so a lookup or rotation touches less memory than an
/// inline 64-byte ClOrdID would).
#[derive(Clone, Copy)]
pub(crate) struct ClEntry {
    pub(crate) order: OrderId,
    /// `ClIndex::hash` of (originator, ClOrdID), kept so forgetting the entry needs no rehash.
    pub(crate) hash: u64,
    /// Absolute position of the ClOrdID's bytes in `ClIndex::bytes` (modulo 2^32).
    pub(crate) start: u32,
    pub(crate) originator: u16,
    pub(crate) len: u8,
    /// Moved to the back at least once because its order was live beyond the window.
    pub(crate) kept: bool,
}

const _: () = assert!(std::mem::size_of::<ClEntry>() == 24);

/// The bytes of the remembered ClOrdIDs, in ring order: a power-of-two circular buffer
/// addressed by absolute positions (modulo 2^32; a position's slot is its low bits). Each
/// ClOrdID is contiguous: one that would cross the end of the buffer starts at the next
/// multiple of the capacity instead. The capacity (`cap`, the used front of `buf`) doubles
/// when the live bytes do not fit, and never shrinks. `buf` is allocated zeroed up front for
/// `CL_ORD_IDS_MAX` ClOrdIDs of the longest kind (address space only: the allocator maps
/// fresh zero pages, touched as the capacity grows), so growing moves bytes but neither
/// allocates nor clears memory. The index of a `Backing::Resident` exchange starts with the
/// capacity its window is expected to need, faulted in (`with_backing`), so the serving loop
/// neither faults on nor moves it.
///
/// Invariant: `cap` is a power of two at most `buf.len()`; the live bytes are the absolute
/// range `head..tail` (wrapping), at most `cap` long; `head` is at most the oldest entry's
/// `start` and past every forgotten entry's bytes (`tail` when there is none).
#[derive(Clone)]
pub struct ClBytes {
    pub(crate) buf: Vec<u8>,
    pub(crate) cap: usize,
    pub(crate) head: u32,
    pub(crate) tail: u32,
}

impl std::fmt::Debug for ClBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClBytes")
            .field("cap", &self.cap)
            .field("head", &self.head)
            .field("tail", &self.tail)
            .finish()
    }
}

impl ClBytes {
    const INITIAL: usize = 1 << 12;

    /// A ring with `reserve` bytes of address space. `Backing::Resident`: its capacity starts
    /// at `resident` (rounded up to a power of two, within `reserve`), faulted in and in 2 MiB
    /// pages where it can be, so pushing into it takes no page fault and growing to it moves
    /// no bytes; `Background`: the same capacity, its pages added to `later` to be faulted in
    /// by whoever runs that plan; `Lazy`: as `new`.
    pub fn with_backing(
        reserve: usize,
        resident: usize,
        backing: Backing,
        later: &mut engine::hint::Populate,
    ) -> ClBytes {
        let mut b = ClBytes::new(reserve);
        if backing != Backing::Lazy {
            b.cap = resident
                .next_power_of_two()
                .clamp(Self::INITIAL, 1 << b.buf.len().ilog2());
            backing.apply(&b.buf, b.cap, later);
        }
        b
    }

    pub fn new(reserve: usize) -> ClBytes {
        let buf = vec![0; reserve.max(Self::INITIAL)];
        ClBytes {
            buf,
            cap: Self::INITIAL,
            head: 0,
            tail: 0,
        }
    }

    #[inline]
    pub fn mask(&self) -> u32 {
        (self.cap - 1) as u32
    }

    /// The `len` bytes at absolute position `start`.
    #[inline]
    pub fn get(&self, start: u32, len: usize) -> &[u8] {
        let a = (start & self.mask()) as usize;
        &self.buf[a..a + len]
    }

    /// Appends `cl` as the newest; returns its absolute position.
    #[inline]
    pub fn push(&mut self, cl: &[u8]) -> u32 {
        let (start, a) = self.reserve(cl.len());
        copy_short(&mut self.buf[a..a + cl.len()], cl);
        start
    }

    /// Appends `a` and `b` back to back as the newest; returns their absolute position.
    #[inline]
    pub fn push2(&mut self, a: &[u8], b: &[u8]) -> u32 {
        let (start, at) = self.reserve(a.len() + b.len());
        copy_short(&mut self.buf[at..at + a.len()], a);
        let at = at + a.len();
        copy_short(&mut self.buf[at..at + b.len()], b);
        start
    }

    /// Takes the next `n` contiguous bytes (growing the buffer if the live bytes and them do
    /// not fit); returns their absolute position and their index in `buf`.
    #[inline]
    pub fn reserve(&mut self, n: usize) -> (u32, usize) {
        loop {
            let mask = self.mask();
            let mut start = self.tail;
            if (start & mask) as usize + n > self.cap {
                start = (start | mask).wrapping_add(1);
            }
            let end = start.wrapping_add(n as u32);
            if end.wrapping_sub(self.head) as usize <= self.cap {
                self.tail = end;
                return (start, (start & mask) as usize);
            }
            self.grow();
        }
    }

    /// Doubles the capacity, moving each live byte to the slot of its absolute position in
    /// the larger buffer.
    #[cold]
    pub fn grow(&mut self) {
        let cap = self.cap;
        assert!(cap <= 1 << 30, "ClOrdID byte ring beyond 1 GiB");
        if self.buf.len() < cap * 2 {
            // More live orders than `CL_ORD_IDS_MAX` ClOrdIDs of the longest kind.
            self.buf.resize(cap * 2, 0);
        }
        self.cap = cap * 2;
        // The live range is at most two contiguous runs of the old buffer (before and after
        // its end); a run whose absolute positions have the `cap` bit set moves up by `cap`.
        let (h, t) = (self.head, self.tail);
        let live = t.wrapping_sub(h) as usize;
        let run = |from: u32, n: usize, buf: &mut Vec<u8>| {
            if n > 0 && from as usize & cap != 0 {
                let a = from as usize & (cap - 1);
                buf.copy_within(a..a + n, a + cap);
            }
        };
        let first = (cap - (h as usize & (cap - 1))).min(live);
        run(h, first, &mut self.buf);
        run(h.wrapping_add(first as u32), live - first, &mut self.buf);
    }

    /// The absolute position after the newest bytes.
    #[inline]
    pub fn tail(&self) -> u32 {
        self.tail
    }

    /// Forgets every byte before absolute position `head` (the oldest entry's `start`, or a
    /// position before it after which no byte is used by an entry that was forgotten).
    #[inline]
    pub fn set_head(&mut self, head: u32) {
        self.head = head;
    }
}

/// Copies `src` into `dst` (as long) 8 bytes at a time: no `memcpy` call for a ClOrdID.
#[inline]
pub fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if n >= 8 {
        let mut at = 0;
        while at + 8 <= n {
            dst[at..at + 8].copy_from_slice(&src[at..at + 8]);
            at += 8;
        }
        if at < n {
            // The last 8 bytes, overlapping what is copied already.
            dst[n - 8..n].copy_from_slice(&src[n - 8..n]);
        }
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
    }
}

/// Whether `a == b`, 8 bytes at a time: no `memcmp` call for a ClOrdID (the call and its
/// dispatch cost more than comparing one to three words).
#[inline]
pub fn eq_short(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
    if n >= 8 {
        let mut at = 0;
        while at + 8 <= n {
            if word(a, at) != word(b, at) {
                return false;
            }
            at += 8;
        }
        // The last 8 bytes, overlapping what is compared already.
        at == n || word(a, n - 8) == word(b, n - 8)
    } else {
        a.iter().zip(b).all(|(x, y)| x == y)
    }
}

/// Every remembered ClOrdID, oldest first, with an index by (originator, ClOrdID).
///
/// The entries live in a ring buffer (`ring`, in first-use order: the order the snapshot
/// stores and forgetting follows), their bytes in a second ring (`bytes`, same order); the
/// index (`PosTable`) maps a hash to ring positions, so a lookup touches one cache line of the
/// index and, on a hit, one ring entry and its bytes, and a ClOrdID costs no allocation.
/// ClOrdIDs are chosen by clients: the hash is foldhash with a per-process random seed (fast
/// on short strings, not predictable enough for a collision attack); equal hashes are told
/// apart by comparing the full hash, then the bytes.
///
/// Invariant: each (originator, ClOrdID) is in the ring at most once, and the index holds
/// exactly one position per ring entry.
#[derive(Clone)]
pub(crate) struct ClIndex {
    pub(crate) ring: VecDeque<ClEntry>,
    /// Absolute position of `ring[0]`.
    pub(crate) head: u64,
    pub(crate) bytes: ClBytes,
    pub(crate) table: PosTable,
    pub(crate) seed: ClHasher,
    /// How the ring and the table (and a rebuilt table) are backed.
    pub(crate) backing: Backing,
    /// While a full replay takes its lookups from a `ClResolver` (`resolve`): the table is not
    /// kept meanwhile, and is built from the ring when resolving stops.
    pub(crate) resolved: Option<Box<crate::resolve::Resolved>>,
}

/// How an `Exchange`'s large tables (the ClOrdID index and its ring, the order slab) are
/// backed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backing {
    /// In 2 MiB pages, all faulted in when the exchange is made
    /// (`engine::hint::huge_and_populated`): no page of them faults later and random access
    /// misses the TLB less. For the exchange a loop serves from and for replay; made before the
    /// loop serves (faulting 106 MB in holds the process's memory-map lock for tens of ms).
    Resident,
    /// Ordinary pages, faulted in as they are first written: for a replica made while the loop
    /// already serves (`snapshot-idle`), which must not hold that lock for long.
    Lazy,
    /// As `Resident`, but the pages are faulted in by whoever runs the plan
    /// [`Exchange::take_populate`] returns, while the exchange is already in use; until then a
    /// first write faults its page in (a 2 MiB one). For replay, which runs the plan on a
    /// thread of its own, so the applying thread does not first spend 10-215 ms (on the Intel
    /// host, by the minute) faulting 106 MB in. Recovery joins that thread before it returns:
    /// the exchange a loop then serves from is resident.
    Background,
}

impl Backing {
    /// Backs the first `n` elements of `v`'s allocation as `self` says; `Background` adds
    /// their pages to `later`.
    pub(crate) fn apply<T>(self, v: &Vec<T>, n: usize, later: &mut engine::hint::Populate) {
        match self {
            Backing::Resident => engine::hint::huge_and_populated_prefix(v, n),
            Backing::Background => {
                engine::hint::huge_prefix(v, n);
                later.add_prefix(v, n);
            }
            Backing::Lazy => {}
        }
    }

    /// How a table made later (a rebuilt index table) is backed: `Background` tables are
    /// resident by then.
    pub(crate) fn later(self) -> Backing {
        match self {
            Backing::Background => Backing::Resident,
            b => b,
        }
    }
}

/// The originator-independent part of the ClOrdID index's hash (foldhash of the ClOrdID's
/// bytes, seeded per `Exchange`): the index mixes the originator in with one multiply
/// (`ClIndex::hash`). Replay computes it on the decoding thread,
/// so the applying thread hashes no ClOrdID of a new order, cancel or replace.
#[derive(Clone, Debug, Default)]
pub struct ClHasher(foldhash::fast::RandomState);

impl ClHasher {
    /// The hash of ClOrdID bytes `cl` (never 0 in practice; 0 means "not computed" in
    /// `ClHashes`, and then the applying side computes it: the same value).
    #[inline]
    pub fn hash(&self, cl: &[u8]) -> u64 {
        use std::hash::BuildHasher;
        self.0.hash_one(cl)
    }
}

/// `ClHasher` hashes of an input's ClOrdID and OrigClOrdID, computed ahead of `apply` (on
/// replay's decoding thread). 0: not computed (the exchange computes it when it needs it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClHashes {
    pub cl: u64,
    pub orig: u64,
}

impl ClIndex {
    /// Room for `CL_ORD_IDS_MAX` entries from the start (the ring, the index table and the
    /// first `CL_BYTES_RESIDENT_PER_ID` bytes per entry of the ClOrdID bytes' ring resident
    /// from the start, in 2 MiB pages, with `Backing::Resident`; the rest of the bytes' ring
    /// is address space until used),
    /// so remembering a ClOrdID never copies the ring or rebuilds the index on the way up,
    /// and the steady state allocates nothing.
    pub(crate) fn new(backing: Backing, later: &mut engine::hint::Populate) -> ClIndex {
        Self::with_backing(CL_ORD_IDS_MAX + 1, backing, later)
    }

    /// An index with room for `n` entries (tests use small ones, to exercise rebuilds).
    #[cfg(test)]
    pub(crate) fn with_capacity(n: usize) -> ClIndex {
        Self::with_backing(n, Backing::Resident, &mut engine::hint::Populate::default())
    }

    pub(crate) fn with_backing(
        n: usize,
        backing: Backing,
        later: &mut engine::hint::Populate,
    ) -> ClIndex {
        // The table first: replay's plan faults in what the applying thread touches first.
        let table = PosTable::with_backing(n, Self::pbits_for(n), backing, later);
        let ring = Vec::with_capacity(n);
        backing.apply(&ring, n, later);
        ClIndex {
            ring: VecDeque::from(ring),
            head: 0,
            // The window is `n - 1` ClOrdIDs (`n` counts the one remembered before the oldest
            // is forgotten): `n * CL_BYTES_RESIDENT_PER_ID` would round up to twice the bytes.
            bytes: ClBytes::with_backing(
                (n * crate::CL_ORD_ID_LEN_MAX).next_power_of_two(),
                (n - 1).max(1) * CL_BYTES_RESIDENT_PER_ID,
                backing,
                later,
            ),
            table,
            seed: ClHasher::default(),
            backing,
            resolved: None,
        }
    }

    /// Position bits for a ring of up to `n` entries, with room for about as many again (live
    /// orders' ClOrdIDs beyond the window) before a rebuild: twice `n - 1` rounded up to a
    /// power of two (the window's `CL_ORD_IDS_MAX + 1` takes 21 bits, leaving 4 bits of tag;
    /// with 22 the 3-bit tag let 1 lookup in 13 compare a random, cold ring entry).
    pub(crate) fn pbits_for(n: usize) -> u32 {
        n.saturating_sub(1).next_power_of_two().trailing_zeros() + 1
    }

    #[inline]
    pub(crate) fn hash(&self, originator: u16, cl: &[u8]) -> u64 {
        Self::with_originator(self.seed.hash(cl), originator)
    }

    /// `hash(originator, cl)` from `pre` = `ClHasher::hash(cl)` if it is not 0.
    #[inline]
    pub(crate) fn hash_pre(&self, originator: u16, cl: &[u8], pre: u64) -> u64 {
        let h = if pre != 0 { pre } else { self.seed.hash(cl) };
        Self::with_originator(h, originator)
    }

    /// Mixes the originator into a ClOrdID's hash (the same ClOrdID of two originators lands
    /// in unrelated slots: the low bits, which pick the slot, differ per originator).
    #[inline]
    pub(crate) fn with_originator(h: u64, originator: u16) -> u64 {
        h ^ (originator as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    pub(crate) fn len(&self) -> usize {
        self.ring.len()
    }

    /// Ring index of the entry at the position whose low bits (`PosTable::pos_mask`) are
    /// `low` (the ring is shorter than their range, so they determine it).
    #[inline]
    pub(crate) fn at(&self, low: u32) -> usize {
        (low.wrapping_sub(self.head as u32) & self.table.pos_mask()) as usize
    }

    /// The ClOrdID of entry `e`.
    #[inline]
    pub(crate) fn cl_of(&self, e: &ClEntry) -> &[u8] {
        self.bytes.get(e.start, e.len as usize)
    }

    /// The order that `originator` used `cl` for, if remembered.
    #[inline]
    pub(crate) fn get(&self, originator: u16, cl: &[u8]) -> Option<OrderId> {
        self.get_hashed(self.hash(originator, cl), originator, cl)
    }

    /// `get` with `h` = `hash(originator, cl)` (a caller that also `push`es hashes once).
    #[inline]
    pub(crate) fn get_hashed(&self, h: u64, originator: u16, cl: &[u8]) -> Option<OrderId> {
        let mut found = None;
        self.table.find(h, |p| {
            let e = &self.ring[self.at(p)];
            let hit = e.hash == h
                && e.originator == originator
                && e.len as usize == cl.len()
                && eq_short(self.cl_of(e), cl);
            if hit {
                found = Some(e.order);
            }
            hit
        });
        found
    }

    /// Remembers a ClOrdID that `get` does not know yet, as the newest.
    pub(crate) fn push(&mut self, originator: u16, cl: &[u8], order: OrderId) {
        self.push_hashed(self.hash(originator, cl), originator, cl, order);
    }

    /// `push` with `hash` = `hash(originator, cl)`.
    #[inline(always)]
    pub(crate) fn push_hashed(&mut self, hash: u64, originator: u16, cl: &[u8], order: OrderId) {
        let pos = self.head + self.ring.len() as u64;
        let start = self.bytes.push(cl);
        self.ring.push_back(ClEntry {
            order,
            hash,
            start,
            originator,
            len: cl.len() as u8,
            kept: false,
        });
        if self.resolved.is_some() {
            return self.pushed_hinted(pos);
        }
        if self.ring.len() as u64 >= 1 << self.table.pbits {
            self.rebuild(false);
        } else if self.table.insert(hash, pos).is_err() {
            self.rebuild(true);
        }
    }

    /// Builds the index afresh from the ring: with more position bits if the ring outgrew
    /// them, and twice the room if `grow` (the old table was full or a probe run too long
    /// to code). Rare: the table starts with room for `CL_ORD_IDS_MAX` entries.
    #[cold]
    #[inline(never)]
    pub(crate) fn rebuild(&mut self, grow: bool) {
        let mut pbits = self.table.pbits;
        while 1u64 << pbits <= self.ring.len() as u64 {
            pbits += 1;
        }
        // The ring holds at most the window plus about 8/7 of the live orders, and
        // `Config::orders_max` keeps that below 2^PBITS_MAX.
        assert!(
            pbits <= PosTable::PBITS_MAX,
            "ClOrdID index: {} entries is more than positions can name",
            self.ring.len()
        );
        let mut n = self.table.capacity().max(self.ring.len() + 1);
        if grow {
            n *= 2;
        }
        'build: loop {
            let mut t = PosTable::with_backing(
                n,
                pbits,
                self.backing.later(),
                &mut engine::hint::Populate::default(),
            );
            for (k, e) in self.ring.iter().enumerate() {
                if t.insert(e.hash, self.head + k as u64).is_err() {
                    n *= 2;
                    continue 'build;
                }
            }
            self.table = t;
            return;
        }
    }

    /// Starts loading the index slot of (`originator`, `cl`) into the cache, for a lookup
    /// soon (`pre` as in `hash_pre`).
    #[inline]
    pub(crate) fn prefetch(&self, originator: u16, cl: &[u8], pre: u64) {
        if self.resolved.is_some() {
            return;
        }
        self.table.prefetch(self.hash_pre(originator, cl, pre));
    }

    /// Starts loading the ring entries that the index slots of (`originator`, `cl`) point
    /// to (those `get` compares), reading the slots: call it once `prefetch` had time to load
    /// them.
    #[inline]
    pub(crate) fn prefetch_entries(&self, originator: u16, cl: &[u8], pre: u64) {
        if self.resolved.is_some() {
            return;
        }
        self.table.find(self.hash_pre(originator, cl, pre), |p| {
            if let Some(e) = self.ring.get(self.at(p)) {
                engine::hint::prefetch(e);
            }
            false
        });
    }

    /// Starts loading the index slot of the entry that `rotate_or_forget` will reach after
    /// about `ROTATE_PREFETCH` more calls (the ring is read in order, so its entries stream in
    /// by themselves; the index slots are random).
    #[inline]
    pub(crate) fn prefetch_rotation(&self) {
        // The oldest entries were written up to `CL_ORD_IDS_MAX` pushes ago and are not in
        // the cache either (reading `hash` here stalled): load them further ahead still.
        if let Some(e) = self.ring.get(ROTATE_PREFETCH * 4) {
            engine::hint::prefetch(e);
        }
        if self.resolved.is_some() {
            return;
        }
        if let Some(e) = self.ring.get(ROTATE_PREFETCH) {
            self.table.prefetch(e.hash);
        }
    }

    /// Removes the oldest entry; if `keep` says so, appends it again as the newest.
    pub(crate) fn rotate_or_forget(&mut self, keep: impl Fn(OrderId, &[u8]) -> bool) {
        let Some(e) = self.ring.pop_front() else {
            return;
        };
        let old = self.head;
        self.head += 1;
        // Its index slot (none while resolving: the table is not kept then).
        let slot = self.resolved.is_none().then(|| {
            let low = old as u32 & self.table.pos_mask();
            self.table
                .find(e.hash, |p| p == low)
                .expect("every ring entry is in the index")
        });
        let next = self.ring.front().map_or(self.bytes.tail, |f| f.start);
        if keep(e.order, self.cl_of(&e)) {
            // Copied out first: appending may reuse the bytes it frees.
            let mut cl = [0u8; crate::CL_ORD_ID_LEN_MAX];
            let cl = &mut cl[..e.len as usize];
            cl.copy_from_slice(self.cl_of(&e));
            self.bytes.set_head(next);
            let new = self.head + self.ring.len() as u64;
            let start = self.bytes.push(cl);
            self.ring.push_back(ClEntry {
                start,
                kept: true,
                ..e
            });
            match slot {
                Some(slot) => self.table.set_pos(slot, new),
                None => self.rotated_hinted(&e, old, Some(new)),
            }
        } else {
            self.bytes.set_head(next);
            match slot {
                Some(slot) => self.table.remove_at(slot),
                None => self.rotated_hinted(&e, old, None),
            }
        }
    }

    /// (originator, ClOrdID, order) of every entry, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u16, &[u8], OrderId)> {
        self.ring
            .iter()
            .map(|e| (e.originator, self.cl_of(e), e.order))
    }
}

/// Backward-shift deletion in a linear-probing table: with bucket `i` emptied, the entry at
/// `j` (further along its probe run) stays where it is iff its home bucket `k` lies
/// cyclically in `(i, j]`; otherwise it moves back into `i`.
#[inline(always)]
pub(crate) fn home_in(i: usize, k: usize, j: usize) -> bool {
    if i <= j {
        i < k && k <= j
    } else {
        i < k || k <= j
    }
}

/// An open-addressing hash index (linear probing, at most 5/8 full) from a 64-bit hash to
/// ring positions, in 4 bytes a slot (a 1 M-entry index is 8 MB: it is read at random, once
/// or twice per ClOrdID, and half the size is twice the share of it the cache holds).
///
/// A slot holds, from the top: 7 bits of displacement + 1 (how far it sits from its home
/// slot; 0 is an empty slot), `25 - pbits` bits of the hash (a tag) and the low `pbits` bits of
/// the position (the ring is shorter than `2^pbits`, so they determine it). A lookup compares
/// only slots whose displacement says they share its home and whose tag matches, so it asks
/// the caller's match function (which reads the ring) about another entry rarely; a removal
/// shifts the following entries back (no tombstones), finding each one's home from its
/// displacement. The table never reads the ring: when a slot cannot be coded (the table is
/// 5/8 full, a displacement would pass `DISP_MAX`, or the ring reaches `2^pbits`) the owner
/// builds a larger one (`ClIndex::rebuild`).
#[derive(Clone)]
pub(crate) struct PosTable {
    pub(crate) slots: Vec<u32>,
    pub(crate) mask: usize,
    pub(crate) len: usize,
    pub(crate) pbits: u32,
}

impl PosTable {
    /// Bits of a slot below the displacement field.
    const DISP_SHIFT: u32 = 25;
    /// The largest displacement a slot can code (its field holds displacement + 1).
    const DISP_MAX: usize = 126;
    /// The most position bits (no tag bits left).
    const PBITS_MAX: u32 = Self::DISP_SHIFT;

    /// A table that holds `n` entries at positions below `2^pbits` without a rebuild (unless a
    /// displacement passes `DISP_MAX`, which hashes the table's user cannot choose make
    /// vanishingly rare: with a 6-bit field, 62, a 200 K/s journal's replay rebuilt its index
    /// about once per 10 M ClOrdIDs, a stall of tens of ms on a live loop; with 126, never in
    /// 9 replays of three 10 M-record journals).
    #[cfg(test)]
    pub(crate) fn new(n: usize, pbits: u32) -> PosTable {
        Self::with_backing(
            n,
            pbits,
            Backing::Resident,
            &mut engine::hint::Populate::default(),
        )
    }

    pub(crate) fn with_backing(
        n: usize,
        pbits: u32,
        backing: Backing,
        later: &mut engine::hint::Populate,
    ) -> PosTable {
        assert!(pbits <= Self::PBITS_MAX);
        let cap = (n * 8 / 5 + 1).next_power_of_two().max(16);
        let slots = vec![0; cap];
        backing.apply(&slots, cap, later);
        PosTable {
            slots,
            mask: cap - 1,
            len: 0,
            pbits,
        }
    }

    /// How many entries this table can take before it is 5/8 full.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len() * 5 / 8
    }

    /// The mask of a slot's position bits.
    #[inline(always)]
    pub(crate) fn pos_mask(&self) -> u32 {
        (1u32 << self.pbits) - 1
    }

    /// `hash`'s tag, in place (its bits 39 and up: independent of the home slot, which the
    /// low bits pick).
    #[inline(always)]
    pub(crate) fn tag(&self, hash: u64) -> u32 {
        let field = (1u32 << Self::DISP_SHIFT) - 1;
        ((hash >> 39) as u32) << self.pbits & field
    }

    #[inline(always)]
    pub(crate) fn home(&self, hash: u64) -> usize {
        hash as usize & self.mask
    }

    /// The slot holding a position with `hash` for which `is_it(low pbits bits of the
    /// position)` is true, if any.
    #[inline(always)]
    pub(crate) fn find(&self, hash: u64, mut is_it: impl FnMut(u32) -> bool) -> Option<usize> {
        let pos_mask = self.pos_mask();
        let mut i = self.home(hash);
        // Displacement + 1 and tag, as a slot at displacement 0 would hold them.
        let mut key = 1u32 << Self::DISP_SHIFT | self.tag(hash);
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if s & !pos_mask == key && is_it(s & pos_mask) {
                return Some(i);
            }
            i = (i + 1) & self.mask;
            key = key.wrapping_add(1 << Self::DISP_SHIFT);
        }
    }

    /// Starts loading the home slot of `hash` into the cache (a hint: no effect on the state).
    #[inline]
    pub(crate) fn prefetch(&self, hash: u64) {
        let i = self.home(hash);
        engine::hint::prefetch(&self.slots[i]);
        // The probe run (and a removal's backward shift) may go on into the next line.
        engine::hint::prefetch(&self.slots[(i + 8) & self.mask]);
    }

    /// Adds `pos` for `hash`; `Err` (and no change) when the slot cannot be coded: the table
    /// is full, or the free slot is too far from the home slot.
    #[inline]
    pub(crate) fn insert(&mut self, hash: u64, pos: u64) -> Result<(), ()> {
        if (self.len + 1) * 8 > self.slots.len() * 5 {
            return Err(());
        }
        let mut i = self.home(hash);
        let mut disp = 0;
        while self.slots[i] != 0 {
            i = (i + 1) & self.mask;
            disp += 1;
        }
        if disp > Self::DISP_MAX {
            return Err(());
        }
        self.slots[i] = ((disp as u32 + 1) << Self::DISP_SHIFT)
            | self.tag(hash)
            | (pos as u32 & self.pos_mask());
        self.len += 1;
        Ok(())
    }

    pub(crate) fn set_pos(&mut self, i: usize, pos: u64) {
        let m = self.pos_mask();
        self.slots[i] = (self.slots[i] & !m) | (pos as u32 & m);
    }

    /// Empties slot `i`, moving later entries of its probe run back so every entry stays
    /// reachable from its home slot (a move back by `d` slots lowers its displacement by `d`).
    pub(crate) fn remove_at(&mut self, mut i: usize) {
        self.len -= 1;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let s = self.slots[j];
            if s == 0 {
                break;
            }
            let disp = (s >> Self::DISP_SHIFT) as usize - 1;
            let home = j.wrapping_sub(disp) & self.mask;
            if !home_in(i, home, j) {
                let back = j.wrapping_sub(i) & self.mask;
                self.slots[i] = s - ((back as u32) << Self::DISP_SHIFT);
                i = j;
            }
        }
        self.slots[i] = 0;
    }
}

#[cfg(test)]
mod tests;
