//! ClOrdID lookups answered ahead, on a full replay's decoding thread.
//!
//! Keeping the ClOrdID index costs the applying thread a lookup per ClOrdID, an insertion per
//! remembered one and a removal per forgotten one, each on a random line of an 8 MB table. In
//! a full replay the decoding thread keeps an index of its own over the same inputs instead (a
//! [`ClResolver`]) and hands each record's answers over with the record (a [`ClHint`]); the
//! applying thread keeps only the ring (in order, as live), turns an answer into an order with
//! a read or two, and builds its index from the ring once, at the end.
//!
//! The decoding thread cannot know everything the applying thread decides: whether an order
//! was accepted (so its ClOrdID remembered), which originator a connection's logon really
//! bound, whether the edge passed a request on at all, and which live orders keep their
//! ClOrdID beyond the window. So its answers name *candidates* (every new order, cancel and
//! replace on a connection it saw bound gets the next candidate number: the edge says which
//! records those are, [`Resolvable`]), and the applying side, which
//! records what became of each candidate (`Resolved::cand_pos`), resolves them exactly:
//!
//! - The resolver remembers every key whose newest candidate is among at least the last
//!   `GEN_CANDIDATES` (`GenIndex`), and the applying side checks that every ClOrdID its ring
//!   holds in order comes from a candidate that recent (`Resolved::published`): so "no
//!   candidate" means the ring holds the ClOrdID only if it kept it beyond the window.
//! - An answer is the newest candidate with that key before this record. A candidate that was
//!   remembered at a ring position still in the ring -> that entry, whose bytes must be the
//!   ClOrdID (the resolver tells keys apart by hash only); remembered but gone from the front,
//!   or no candidate at all -> only an entry kept beyond the window can hold it (the `side`
//!   table); never remembered -> the candidate before it with the key (a link the applying
//!   side wrote when it found the candidate not remembered).
//! - Falling back (an originator the resolver got wrong, a request the edge applied outside
//!   its own record, a hash two ClOrdIDs share, a chain of
//!   links too long, a window wider than the resolver's) builds the index from the ring and
//!   goes on as a replay always did; the outcome is the same either way. A normal journal
//!   never falls back; the replay's log line says which it did.
//!
//! A replay onto a snapshot does none of this (the snapshot's ClOrdIDs are not the
//! resolver's), nor does the live loop.

use crate::index::{eq_short, ClEntry, ClHasher, ClHashes, ClIndex};
use crate::OrderId;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The applying side notes (ring position, candidate) every this many remembered ClOrdIDs
/// (`Resolved::marks`).
const MARK_EVERY: u64 = 1024;
/// `ClHint::ix` of a record the resolver says nothing about.
const NO_ORIGINATOR: u16 = u16::MAX;
/// An answer: no candidate with this key.
const ANS_NONE: u64 = u64::MAX;
/// `cand_pos`: the candidate being applied (so far not remembered). A remembered one's slot
/// holds its ring position + 1 (so the table starts as zeroed pages); one not remembered,
/// `LINK` | (the candidate before it with the same key + 1, or 0 if none).
const UNPUSHED: u64 = 0;
const LINK: u64 = 1 << 63;
/// Links `resolve` follows at most before it falls back.
const HOPS_MAX: usize = 16;

/// What the resolver knew about one record's ClOrdIDs (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClHint {
    /// The originator the resolver took the record's connection to be bound to; `NO_ORIGINATOR`:
    /// nothing is said.
    ix: u16,
    /// Whether the record is a candidate (its ClOrdID may be remembered): then its number is
    /// `base`.
    cand: bool,
    /// Candidates numbered before this record.
    base: u64,
    /// The answer for the record's ClOrdID and OrigClOrdID: `ANS_NONE`, or the newest
    /// candidate before it with that key (its number's low 32 bits).
    cl: u64,
    orig: u64,
}

impl Default for ClHint {
    fn default() -> ClHint {
        ClHint {
            ix: NO_ORIGINATOR,
            cand: false,
            base: 0,
            cl: ANS_NONE,
            orig: ANS_NONE,
        }
    }
}

/// How far before candidate `base` the candidate of answer `a` (low 32 bits) is.
#[inline]
fn back_of(base: u64, a: u64) -> u64 {
    (base as u32).wrapping_sub(a as u32) as u64
}

/// Candidates per generation of the resolver's index (`GenIndex`). The resolver remembers
/// every key whose newest candidate is among at least the last `GEN_CANDIDATES`; the applying
/// side checks its window spans no more (`Resolved::published`).
pub(crate) const GEN_CANDIDATES: u64 = 1 << 21;

/// The resolver's index: (hash of an (originator, ClOrdID)) -> its newest candidate, in two
/// generations of open-addressing tables, one per `GEN_CANDIDATES` candidates: a key is
/// written into the current one, looked up in it and then in the previous one, and a table
/// is emptied (sequentially) when it becomes current again. No entry is ever removed on its
/// own, so a candidate costs a lookup and an insertion and no deletion.
///
/// A slot is 8 bytes: 40 bits of the hash (the top one always set, so a used slot is never 0)
/// above the candidate's low 24 bits; the home slot comes from the hash's low bits, so a key is
/// told apart by 61 bits of its hash. Two ClOrdIDs of an originator that agree on those share an
/// entry; the applying side compares the bytes of every entry an answer leads it to, and falls
/// back on a mismatch, so such a collision costs a fallback, never a wrong answer (an answer
/// of "no candidate" is always right: equal ClOrdIDs have equal hashes).
struct GenIndex {
    gens: [Vec<u64>; 2],
    mask: usize,
    /// Index into `gens` of the current generation, and its number.
    cur: usize,
    number: u64,
    /// Whether a generation's table was ever written (a fresh one needs no emptying).
    used: [bool; 2],
    /// `GEN_CANDIDATES` (smaller in tests).
    per_gen: u64,
}

impl GenIndex {
    const CAND_BITS: u32 = 24;
    const CAND_MASK: u64 = (1 << Self::CAND_BITS) - 1;

    fn new(per_gen: u64) -> GenIndex {
        // Candidates are kept modulo 2^24 and reach two generations back.
        assert!(per_gen.is_power_of_two() && per_gen <= 1 << 22);
        let slots = (2 * per_gen) as usize;
        let gens = [vec![0u64; slots], vec![0u64; slots]];
        // 2 MiB pages, faulted in by first use (on the decoding thread). Not in the replay's
        // populating plan: these tables may be gone before that thread ends.
        for g in &gens {
            engine::hint::huge_prefix(g, slots);
        }
        GenIndex {
            gens,
            mask: slots - 1,
            cur: 0,
            number: 0,
            used: [false; 2],
            per_gen,
        }
    }

    /// The slot bits that identify hash `h` (the top one set).
    #[inline]
    fn check(h: u64) -> u64 {
        (h | 1 << 63) >> Self::CAND_BITS << Self::CAND_BITS
    }

    #[inline]
    fn home(&self, h: u64) -> usize {
        h as usize & self.mask
    }

    /// The candidate (low 24 bits) stored for hash `h` in generation `g`.
    #[inline]
    fn find_in(&self, g: usize, h: u64) -> Option<u64> {
        let t = &self.gens[g];
        let want = Self::check(h);
        let mut i = self.home(h);
        loop {
            let s = t[i];
            if s & !Self::CAND_MASK == want {
                return Some(s & Self::CAND_MASK);
            }
            if s == 0 {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The newest candidate before `next` with a key of hash `h`.
    #[inline]
    fn find(&self, h: u64, next: u64) -> Option<u64> {
        let low = self
            .find_in(self.cur, h)
            .or_else(|| self.find_in(self.cur ^ 1, h))?;
        Some(next - ((next - low) & Self::CAND_MASK))
    }

    /// Records candidate `c` for hash `h` (`c` numbers candidates in order).
    #[inline]
    fn insert(&mut self, h: u64, c: u64) {
        if c / self.per_gen != self.number {
            self.number = c / self.per_gen;
            self.cur ^= 1;
            if self.used[self.cur] {
                self.gens[self.cur].fill(0);
            }
        }
        self.used[self.cur] = true;
        let want = Self::check(h);
        let mut i = self.home(h);
        let t = &mut self.gens[self.cur];
        loop {
            let s = t[i];
            if s == 0 || s & !Self::CAND_MASK == want {
                t[i] = want | (c & Self::CAND_MASK);
                return;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Starts loading the slots `find` and `insert` will read for hash `h`.
    #[inline]
    fn prefetch(&self, h: u64) {
        let i = self.home(h);
        engine::hint::prefetch(&self.gens[0][i]);
        engine::hint::prefetch(&self.gens[1][i]);
    }
}

/// What one record means to the resolver: the edge that wrote the record says it (the
/// resolver runs on the decoding thread, ahead of the edge's own processing, so these are
/// guesses the applying side verifies).
#[derive(Clone, Copy, Debug)]
pub enum Resolvable<'a> {
    /// Nothing it tracks.
    Nothing,
    /// A new process run: every connection is unbound.
    Restart,
    /// Connection `conn` asks to act for `originator` (a logon): bound if it is not yet.
    Bind {
        conn: u64,
        originator: u16,
    },
    Unbind {
        conn: u64,
    },
    /// A request whose client order id may be remembered (a new order, cancel or replace),
    /// with the OrigClOrdID of a cancel or replace.
    Candidate {
        conn: u64,
        cl: &'a [u8],
        orig: Option<&'a [u8]>,
    },
    /// A lookup without remembering (a status request).
    Lookup {
        conn: u64,
        cl: &'a [u8],
    },
}

/// The decoding thread's side: an index of (originator, ClOrdID) -> candidates, fed every
/// record in order. Made by [`crate::Exchange::begin_resolving`].
pub struct ClResolver {
    index: GenIndex,
    seed: ClHasher,
    /// Connection -> originator, as `Bind`, `Unbind` and `Restart` say.
    conns: ConnMap,
    next: u64,
    /// Set by the applying side when it no longer reads hints; read once per batch.
    stop: Arc<AtomicBool>,
    gave_up: bool,
}

impl ClResolver {
    pub(crate) fn new(seed: ClHasher, stop: Arc<AtomicBool>, per_gen: u64) -> ClResolver {
        ClResolver {
            index: GenIndex::new(per_gen),
            seed,
            conns: ConnMap::default(),
            next: 0,
            stop,
            gave_up: false,
        }
    }

    /// The seed of the exchange it answers for (its hashes are the ones `apply_prehashed`
    /// takes).
    pub fn hasher(&self) -> &ClHasher {
        &self.seed
    }

    /// `ClIndex::hash` of (`ix`, `cl`), from `pre` = `ClHasher::hash(cl)` if not 0.
    #[inline]
    fn hash(&self, ix: u16, cl: &[u8], pre: u64) -> u64 {
        let h = if pre != 0 { pre } else { self.seed.hash(cl) };
        ClIndex::with_originator(h, ix)
    }

    /// Whether the applying side still reads hints: call once per batch, before `resolve`.
    pub fn check_stop(&mut self) {
        if self.stop.load(Ordering::Relaxed) {
            self.give_up();
        }
    }

    fn give_up(&mut self) {
        if !self.gave_up {
            self.gave_up = true;
            self.conns.clear();
        }
    }

    /// Starts loading the index slots `resolve` will read for `r` (a few records ahead).
    #[inline]
    pub fn prefetch(&self, r: Resolvable<'_>, hashes: &ClHashes) {
        if self.gave_up {
            return;
        }
        let Resolvable::Candidate { conn, cl, orig } = r else {
            return;
        };
        let Some(&ix) = self.conns.get(&conn) else {
            return;
        };
        if let Some(orig) = orig {
            self.index.prefetch(self.hash(ix, orig, hashes.orig));
        }
        self.index.prefetch(self.hash(ix, cl, hashes.cl));
    }

    /// The hint for the next record, which means `r` (its ClOrdID hashes are `hashes`, as
    /// `ClHasher::hash` gives them, or 0).
    pub fn resolve(&mut self, r: Resolvable<'_>, hashes: &ClHashes) -> ClHint {
        if self.gave_up {
            return ClHint::default();
        }
        let (conn, cl, orig, candidate) = match r {
            Resolvable::Nothing => return ClHint::default(),
            Resolvable::Restart => {
                self.conns.clear();
                return ClHint::default();
            }
            Resolvable::Unbind { conn } => {
                self.conns.remove(&conn);
                return ClHint::default();
            }
            Resolvable::Bind { conn, originator } => {
                // As the edge: a logon binds a connection that is not bound yet.
                if !self.conns.contains_key(&conn) {
                    self.conns.insert(conn, originator);
                }
                return ClHint::default();
            }
            Resolvable::Candidate { conn, cl, orig } => (conn, cl, orig, true),
            Resolvable::Lookup { conn, cl } => (conn, cl, None, false),
        };
        let Some(&ix) = self.conns.get(&conn) else {
            return ClHint::default();
        };
        let mut hint = ClHint {
            ix,
            cand: false,
            base: self.next,
            cl: ANS_NONE,
            orig: ANS_NONE,
        };
        if !candidate {
            hint.cl = self.answer(self.hash(ix, cl, 0));
            return hint;
        }
        // As the exchange looks them up: the OrigClOrdID, then the ClOrdID, which is
        // remembered (if at all) after both.
        if let Some(orig) = orig {
            hint.orig = self.answer(self.hash(ix, orig, hashes.orig));
        }
        let h = self.hash(ix, cl, hashes.cl);
        hint.cl = self.answer(h);
        hint.cand = true;
        self.add(h);
        hint
    }

    /// The newest candidate with a key of hash `h` (its low 32 bits).
    #[inline]
    fn answer(&self, h: u64) -> u64 {
        match self.index.find(h, self.next) {
            None => ANS_NONE,
            Some(c) => c & 0xFFFF_FFFF,
        }
    }

    /// Numbers the next candidate, with a key of hash `h`.
    #[inline]
    fn add(&mut self, h: u64) {
        let c = self.next;
        self.next += 1;
        self.index.insert(h, c);
    }
}

/// Connection -> originator: connections are numbered from 1 up, so a small id is an index
/// (`NO_ORIGINATOR`: unbound); a large one (a long-lived server) goes to a map.
#[derive(Default)]
struct ConnMap {
    small: Vec<u16>,
    large: HashMap<u64, u16, BuildHasherDefault<IdHasher>>,
}

impl ConnMap {
    const SMALL: u64 = 1 << 16;

    #[inline]
    fn get(&self, conn: &u64) -> Option<&u16> {
        if *conn < Self::SMALL {
            self.small
                .get(*conn as usize)
                .filter(|&&ix| ix != NO_ORIGINATOR)
        } else {
            self.large.get(conn)
        }
    }

    fn contains_key(&self, conn: &u64) -> bool {
        self.get(conn).is_some()
    }

    fn insert(&mut self, conn: u64, ix: u16) {
        if conn < Self::SMALL {
            let i = conn as usize;
            if self.small.len() <= i {
                self.small.resize(i + 1, NO_ORIGINATOR);
            }
            self.small[i] = ix;
        } else {
            self.large.insert(conn, ix);
        }
    }

    fn remove(&mut self, conn: &u64) {
        if *conn < Self::SMALL {
            if let Some(ix) = self.small.get_mut(*conn as usize) {
                *ix = NO_ORIGINATOR;
            }
        } else {
            self.large.remove(conn);
        }
    }

    fn clear(&mut self) {
        self.small.clear();
        self.large.clear();
    }
}

/// A hasher for keys that are hashes already.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The applying side's state while it takes its answers from a resolver (`ClIndex::resolved`;
/// the index table is not kept meanwhile).
#[derive(Clone)]
pub(crate) struct Resolved {
    /// Candidate number modulo `cap` -> what became of it (`UNPUSHED`, `LINK`).
    cand_pos: Vec<u64>,
    /// The resolver's candidates per generation: `cand_pos` has a slot for each of the newest
    /// this many (an older candidate is not in the ring in order).
    cap: u64,
    /// Entries kept beyond the window (moved to the back because their order is live):
    /// `ClIndex::hash` -> ring position.
    side: HashMap<u64, u64, BuildHasherDefault<IdHasher>>,
    /// The hint of the record being applied (`ClHint::default()` between records).
    hint: ClHint,
    /// ClOrdIDs remembered since resolving began, and every `MARK_EVERY`th one's (ring
    /// position, candidate): once the front passes such a position, no entry from before its
    /// candidate is in the ring in order any more.
    pushes: u64,
    marks: VecDeque<(u64, u64)>,
    /// `MARK_EVERY` (smaller in tests).
    pub(crate) mark_every: u64,
    /// Tells the resolver to stop.
    stop: Arc<AtomicBool>,
    /// From the marks the front has passed: no entry of a candidate at or before it is in the
    /// ring in order.
    published: u64,
    /// Something `side` cannot say exactly (a collision of two kept entries' hashes): fall
    /// back at the next lookup.
    broken: bool,
    /// Lookups answered from hints.
    pub(crate) answered: u64,
}

impl Resolved {
    /// For a resolver of `per_gen` candidates per generation (`GEN_CANDIDATES`).
    pub(crate) fn new(stop: Arc<AtomicBool>, per_gen: u64) -> Resolved {
        let cand_pos = vec![UNPUSHED; per_gen as usize];
        // Read at random (a cancel's candidate): in 2 MiB pages, faulted in by first use (it
        // is dropped before the replay's populating thread ends, so not in its plan).
        engine::hint::huge_prefix(&cand_pos, per_gen as usize);
        Resolved {
            cand_pos,
            cap: per_gen,
            side: HashMap::default(),
            hint: ClHint::default(),
            pushes: 0,
            marks: VecDeque::new(),
            mark_every: MARK_EVERY,
            stop,
            published: 0,
            broken: false,
            answered: 0,
        }
    }

    /// Tells the resolver to stop (the applying side no longer reads hints).
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl ClIndex {
    /// Starts a record with hint `h` (resolving).
    #[inline]
    pub(crate) fn begin_hinted(&mut self, h: &ClHint) {
        if let Some(r) = self.resolved.as_deref_mut() {
            r.hint = *h;
            if h.cand {
                r.cand_pos[(h.base % r.cap) as usize] = UNPUSHED;
            }
        }
    }

    /// Ends the record `begin_hinted` started: a candidate not remembered links to the one
    /// before it with the same key (its ClOrdID's answer).
    #[inline]
    pub(crate) fn end_hinted(&mut self) {
        if let Some(r) = self.resolved.as_deref_mut() {
            let h = std::mem::take(&mut r.hint);
            if h.cand {
                let slot = &mut r.cand_pos[(h.base % r.cap) as usize];
                if *slot == UNPUSHED {
                    *slot = LINK
                        | match h.cl {
                            ANS_NONE => 0,
                            a => h.base - back_of(h.base, a) + 1,
                        };
                }
            }
        }
    }

    /// Starts loading the `cand_pos` slot that the OrigClOrdID answer of a record a few ahead
    /// will read (a cancel's or replace's).
    #[inline]
    pub(crate) fn prefetch_hinted(&self, h: &ClHint) {
        if let Some(r) = self.resolved.as_deref() {
            if h.orig != ANS_NONE {
                let c = h.base.wrapping_sub(back_of(h.base, h.orig));
                engine::hint::prefetch(&r.cand_pos[(c % r.cap) as usize]);
            }
        }
    }

    /// The order remembered for (`ix`, `cl`) (hash `h`) from the current record's answer for
    /// its OrigClOrdID (`orig`) or ClOrdID: `None` if not resolving, or if the answer cannot
    /// be placed (the caller falls back).
    #[inline]
    pub(crate) fn resolve(
        &mut self,
        orig: bool,
        h: u64,
        ix: u16,
        cl: &[u8],
    ) -> Option<Option<OrderId>> {
        let r = self.resolved.as_deref_mut()?;
        let hint = r.hint;
        let ans = if orig { hint.orig } else { hint.cl };
        if hint.ix != ix || r.broken {
            return None;
        }
        // Every ClOrdID the ring holds in order (from a candidate after `published`) must be
        // among those the resolver remembers.
        if hint.base.saturating_sub(r.published) >= r.cap {
            return None;
        }
        r.answered += 1;
        if ans == ANS_NONE {
            return Some(self.kept(h, ix, cl));
        }
        let back = back_of(hint.base, ans);
        if back == 0 {
            return None;
        }
        if back >= r.cap {
            // Older than anything in order.
            return Some(self.kept(h, ix, cl));
        }
        // The newest candidate with the key that was remembered (the links lead from each
        // one that was not to the one before it).
        let mut c = hint.base - back;
        for _ in 0..HOPS_MAX {
            let slot = r.cand_pos[(c % r.cap) as usize];
            if slot == UNPUSHED {
                return None;
            }
            if slot & LINK != 0 {
                let prev = slot & !LINK;
                if prev == 0 {
                    // No candidate before it had the key.
                    return Some(self.kept(h, ix, cl));
                }
                c = prev - 1;
                if hint.base - c >= r.cap {
                    return Some(self.kept(h, ix, cl));
                }
                continue;
            }
            let pos = slot - 1;
            if pos >= self.head {
                // The resolver tells keys apart by hash only: this must be the ClOrdID.
                let e = &self.ring[(pos - self.head) as usize];
                if e.originator != ix || !eq_short(self.cl_of(e), cl) {
                    return None;
                }
                return Some(Some(e.order));
            }
            // Gone from the front: forgotten, or kept beyond the window.
            return Some(self.kept(h, ix, cl));
        }
        None
    }

    /// The order of the entry kept beyond the window for (`ix`, `cl`), if any.
    #[inline]
    fn kept(&self, h: u64, ix: u16, cl: &[u8]) -> Option<OrderId> {
        let r = self.resolved.as_deref()?;
        if r.side.is_empty() {
            return None;
        }
        let pos = *r.side.get(&h)?;
        let e = self.ring.get(pos.checked_sub(self.head)? as usize)?;
        (e.originator == ix && eq_short(self.cl_of(e), cl)).then_some(e.order)
    }

    /// `push_hashed`'s part while resolving: the entry is at ring position `pos`.
    #[inline]
    pub(crate) fn pushed_hinted(&mut self, pos: u64) {
        let Some(r) = self.resolved.as_deref_mut() else {
            return;
        };
        let h = r.hint;
        if !h.cand {
            // Remembered outside a candidate: nothing the resolver knows of.
            r.broken = true;
            return;
        }
        r.cand_pos[(h.base % r.cap) as usize] = pos + 1;
        r.pushes += 1;
        if r.pushes.is_multiple_of(r.mark_every) {
            r.marks.push_back((pos, h.base));
        }
    }

    /// `rotate_or_forget`'s part while resolving: entry `e`, which was at ring position `old`,
    /// moved to `new` (kept) or was forgotten (`None`). The front is now `self.head`.
    #[inline]
    pub(crate) fn rotated_hinted(&mut self, e: &ClEntry, old: u64, new: Option<u64>) {
        let head = self.head;
        let Some(r) = self.resolved.as_deref_mut() else {
            return;
        };
        // Another entry under the same hash: `side` cannot tell them apart.
        let clash = match new {
            Some(p) => r.side.insert(e.hash, p).is_some_and(|q| q != old),
            None if e.kept => r.side.remove(&e.hash) != Some(old),
            None => false,
        };
        if clash {
            r.broken = true;
        }
        let mut published = None;
        while let Some(&(pos, cand)) = r.marks.front() {
            if pos >= head {
                break;
            }
            published = Some(cand);
            r.marks.pop_front();
        }
        if let Some(b) = published {
            r.published = b;
        }
    }

    /// Builds the index table from the ring in the table's own memory (already resident: a
    /// new table would first fault 8 MB in), loading each entry's slot a few entries ahead.
    fn refill(&mut self) {
        let n = self.ring.len();
        if n as u64 >= 1 << self.table.pbits || n + 1 > self.table.capacity() {
            return self.rebuild(false);
        }
        self.table.slots.fill(0);
        self.table.len = 0;
        const AHEAD: usize = 16;
        for k in 0..n {
            if let Some(e) = self.ring.get(k + AHEAD) {
                self.table.prefetch(e.hash);
            }
            let e = &self.ring[k];
            if self.table.insert(e.hash, self.head + k as u64).is_err() {
                return self.rebuild(true);
            }
        }
    }

    /// Stops resolving: the index table is built from the ring, as if it had been kept all
    /// along. Returns the lookups answered from hints, if it was resolving.
    pub(crate) fn stop_resolving(&mut self) -> Option<u64> {
        let r = self.resolved.take()?;
        r.stop();
        self.refill();
        Some(r.answered)
    }
}
