//! The exchange state machine: FIX sessions, ClOrdID <-> order mapping and the matching engine,
//! driven only by journaled `Input`s.
//!
//! Role: given the next journaled input (with its sequence number and timestamp), update every
//! piece of exchange state and write the FIX messages it causes into an `Outbox`. The server
//! calls it only after the input is durable; recovery calls it on the journal tail and throws
//! the outbox away. Because it is a pure function of the input stream, everything a restart
//! must restore (inbound/outbound MsgSeqNum, the outbound store for ResendRequest, ClOrdID
//! uniqueness and mapping, the engine's books) is rebuilt by replay: outbound messages are
//! regenerated, never journaled. The outbound store keeps ExecutionReports as recipes (the
//! fields they were made of) and formats them only when written to a live connection or
//! resent, so recovery (`replaying`) formats no ExecutionReport at all.
//!
//! Never: reads a clock (time is the record's timestamp), touches a socket or a file, iterates a
//! `HashMap` where the order can reach the output or the snapshot (keys are sorted first).
//!
//! Invariants: an order can be canceled or replaced only through the session that owns its
//! ClOrdID (so only by its own firm); anyone else gets "unknown order" and nothing changes. A
//! ClOrdID is used at most once per session, for the life of the session (sequence resets
//! included). Outbound MsgSeqNum increases by one per message sent on a session.

use crate::config::{Config, InstrumentDef};
use crate::record::{
    Checkpoint, ClOrdId, ConnId, FixMsg, Input, InvalidKind, NewOrderMsg, SessionMark,
};
use crate::wire::{push_scaled, push_u64, push_utc_timestamp, utc_timestamp, MsgWriter};
use engine::{Engine, EngineConfig};
use std::collections::VecDeque;
use std::sync::Arc;
use types::{
    CancelReason, Command, Event, EventSink, Matcher, NewOrder, OrdType, OrderId, RejectReason,
    Side, StpMode, TimeInForce,
};

mod resolve;
pub use resolve::{ClHint, ClResolver};

/// See `gateway::fuzz_resolve`.
pub fn fuzz_resolve(bytes: &[u8]) {
    resolve::check::fuzz(bytes);
}

/// Terminal orders kept for OrderStatusRequest before the oldest are forgotten.
const DONE_ORDERS_MAX: usize = 1 << 16;
/// ClOrdIDs remembered for uniqueness and lookup, across sessions. A live order's current
/// ClOrdID (its own, or that of its last accepted replace) is never forgotten; beyond this
/// count the oldest other ClOrdIDs are (those of finished orders, of requests about an order
/// that a later replace superseded, of rejected requests). So a ClOrdID is unique per session
/// among live orders and the most recent `CL_ORD_IDS_MAX`, and the index holds at most
/// `CL_ORD_IDS_MAX` plus one entry per live order: a quote replaced all day keeps one.
const CL_ORD_IDS_MAX: usize = 1 << 20;
/// Bytes per remembered ClOrdID that a `Backing::Resident` index has faulted in from the start
/// (`ClBytes::with_backing`): 64 MiB for the `CL_ORD_IDS_MAX` window, room for a window of
/// the longest ClOrdIDs accepted (`record::STR_LEN_MAX`), so no usual client's ClOrdIDs make
/// the serving loop grow the ring (a doubling copies the live bytes and faults the new half
/// in: on the Intel host up to 32 MiB copied and 10-75 ms of faulting, in one iteration). The
/// fifteenth session meant 32 bytes (a UUID without dashes) but the window's `n + 1` rounded
/// it up to 64 MiB; the seventeenth kept 64 on purpose, since a UUID with dashes (36 bytes)
/// is a common ClOrdID. Without it the serving loop took about 8,600 page faults (2,800 with
/// it) and copied its ring at every doubling (up to 16 MiB at once) in its first 10 s at
/// 150 K orders/s; a replay faults it in beside the records (`Backing::Background`).
const CL_BYTES_RESIDENT_PER_ID: usize = crate::record::STR_LEN_MAX;
/// Most entries one new ClOrdID moves from the front of the index's ring to its back (live
/// orders' current ClOrdIDs, which stay). Bounds the work per command: beyond it the ring is
/// longer than `CL_ORD_IDS_MAX` for a while, by at most the live orders.
const ROTATIONS_MAX: usize = 8;
/// How many ring entries ahead of the oldest `remember_cl_ord_id` prefetches the index slot
/// (one entry is forgotten or rotated per ClOrdID remembered, so this is about as many
/// requests ahead: enough for a DRAM miss to finish before the slot is needed).
const ROTATE_PREFETCH: usize = 16;

/// FIX messages to send, in order, after a batch of inputs was applied.
#[derive(Default)]
pub struct Outbox {
    pub buf: Vec<u8>,
    /// (connection, start, end, close the connection after sending).
    pub items: Vec<OutItem>,
}

#[derive(Clone, Copy, Debug)]
pub struct OutItem {
    pub conn: ConnId,
    pub start: usize,
    pub end: usize,
    pub close: bool,
}

impl Outbox {
    pub fn clear(&mut self) {
        self.buf.clear();
        self.items.clear();
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    fn close(&mut self, conn: ConnId) {
        let at = self.buf.len();
        self.items.push(OutItem {
            conn,
            start: at,
            end: at,
            close: true,
        });
    }
}

/// One application message to resend: the fields after the standard header.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stored {
    seq: u64,
    msg_type: u8,
    sending_ts: u64,
    body: Vec<u8>,
}

/// What an ExecutionReport says, kept instead of its bytes: replay (and the live path)
/// stores this small recipe and formats the body only when it is sent or resent
/// (`encode_exec`), so recovery never formats an ExecutionReport. Every field is the value at
/// the time the report was generated. Its ClOrdID (11: the requester's on its own
/// cancel/replace, the order's otherwise) and OrigClOrdID (41, on the requester's own
/// cancel/replace with an OrigClOrdID) are the entry's bytes (see `StoredMeta`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ExecRecipe {
    order_id: OrderId,
    /// ExecID (17) is `exec_seq.exec_n`.
    exec_seq: u64,
    exec_n: u32,
    exec_type: u8,
    ord_status: u8,
    side: Side,
    ord_type: OrdType,
    tif: TimeInForce,
    account: u32,
    symbol: u32,
    price: i64,
    order_qty: u64,
    /// LastPx and LastQty of a fill.
    last: Option<(i64, u64)>,
    leaves_qty: u64,
    cum_qty: u64,
    notional: i128,
    /// Text (58) of a cancel not asked for by the owner.
    text: Option<CancelReason>,
}

/// What an OrderCancelReject with a fixed text says, kept instead of its bytes like
/// `ExecRecipe` (replay rejects many cancels and formats none of them): the body is
/// `encode_cancel_reject` of these fields and the entry's ClOrdID and OrigClOrdID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CancelRejectRecipe {
    /// OrderID and OrdStatus of the order, if known.
    order: Option<(OrderId, u8)>,
    replace: bool,
    reason_code: u8,
    text: &'static str,
}

/// A stored message's body (inline: no allocation per message; the store is bounded by
/// `resend_store_max`).
#[derive(Clone, Copy, Debug)]
#[allow(clippy::large_enum_variant)]
enum Body {
    /// The entry's bytes are the body.
    Bytes,
    /// An ExecutionReport; the entry's bytes are its ClOrdID and OrigClOrdID.
    Exec(ExecRecipe),
    /// An OrderCancelReject; the entry's bytes are its ClOrdID and OrigClOrdID.
    CancelReject(CancelRejectRecipe),
}

/// One stored message. `repr(C)`: the header (`seq` to `msg_type`) comes first, in the entry's
/// first cache line or the line of the start of `body`, which `Store::push_slot` prefetches.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct StoredMeta {
    seq: u64,
    sending_ts: u64,
    /// Absolute position (in `Store::bytes`) and length of the entry's bytes.
    start: u32,
    len: u32,
    /// Of a recipe: the first `cl_len` bytes are the ClOrdID, the rest the OrigClOrdID (if
    /// `has_orig`).
    cl_len: u8,
    has_orig: bool,
    msg_type: u8,
    body: Body,
}

impl StoredMeta {
    /// A placeholder (a slot not written yet, the scratch entry).
    const EMPTY: StoredMeta = StoredMeta {
        seq: 0,
        sending_ts: 0,
        start: 0,
        len: 0,
        cl_len: 0,
        has_orig: false,
        msg_type: 0,
        body: Body::Bytes,
    };
}

/// The last `resend_store_max` application messages of a session: ExecutionReports and
/// OrderCancelRejects as recipes, the bytes of every entry (a body, or a recipe's ClOrdIDs)
/// back to back in a circular buffer (`ClBytes`, like the ClOrdID index: forgetting an entry
/// frees its bytes, so nothing is ever compacted, and a short entry is copied without a
/// `memcpy` call).
///
/// `ring` holds at most `max` entries, allocated once: a push past `max` reuses the
/// slot of the entry it forgets. So every session's store stays as small as it can
/// (8 sessions x 5,000 entries, about 6 MB, stays in the last-level cache), where letting it
/// run to twice `max` and dropping half in bulk kept ~21 MB in flight and made replay miss
/// the cache on nearly every stored message.
#[derive(Clone, Debug)]
struct Store {
    /// The stored entries, oldest first from `head`: `ring[head..]` then `ring[..head]`. The
    /// ring grows in order (`head` 0) until it holds `max` entries; from then on a push
    /// overwrites the oldest entry in its slot (no entry is built elsewhere and copied in).
    ring: Vec<StoredMeta>,
    head: usize,
    bytes: ClBytes,
}

impl Default for Store {
    fn default() -> Store {
        Store {
            ring: Vec::new(),
            head: 0,
            bytes: ClBytes::new(0),
        }
    }
}

impl Store {
    /// Most slots reserved up front (a larger `max` grows the ring by doubling first).
    const RESERVE_MAX: usize = 1 << 16;
    /// How many pushes ahead `push_slot` prefetches the slot it will overwrite (a session
    /// gets about one message in eight records of the bench's flow).
    const PREFETCH_AHEAD: usize = 2;

    /// Appends `cl` and `orig` (if any) to the byte buffer; returns where they start
    /// (absolute) and their length. Call it once the bytes of the entry being replaced (if
    /// any) are freed (`ClBytes::set_head`).
    #[inline(always)]
    fn push_bytes(&mut self, cl: &[u8], orig: Option<&[u8]>) -> (u32, u32) {
        match orig {
            None => (self.bytes.push(cl), cl.len() as u32),
            Some(o) => {
                let start = self.bytes.push2(cl, o);
                (start, (cl.len() + o.len()) as u32)
            }
        }
    }

    /// Takes the slot of the next message, forgetting the oldest beyond the newest `max`:
    /// stores its bytes `cl` and `orig` (a body, or a recipe's ClOrdID and OrigClOrdID) and
    /// returns the slot with `start`, `len`, `cl_len` and `has_orig` set for them. The caller
    /// sets every other field (the slot still holds the entry it replaces): so a message is
    /// written once, in place, never built elsewhere and copied in.
    #[inline(always)]
    fn push_slot(&mut self, max: usize, cl: &[u8], orig: Option<&[u8]>) -> &mut StoredMeta {
        let max = max.max(1);
        let i = if self.ring.len() == max {
            // The steady state: the oldest entry's slot takes the new one. The slot a few
            // pushes ahead is cold (written `max` pushes ago): start loading it now.
            let i = self.head;
            self.head = if i + 1 == max { 0 } else { i + 1 };
            let a = i + Self::PREFETCH_AHEAD;
            engine::hint::prefetch_all(&self.ring[if a < max { a } else { a % max }]);
            // The replaced entry's bytes are freed. Its own header says where they end (the
            // entry was prefetched `PREFETCH_AHEAD` pushes ago; reading the next entry's
            // `start` instead stalled on a line prefetched one push ago, or never): the
            // oldest entry left starts there or, after a wrap of the buffer, later, so the
            // bytes from there on stay live (at most one wrap gap more than needed).
            let old = &self.ring[i];
            let freed_to = if max == 1 {
                self.bytes.tail
            } else {
                old.start.wrapping_add(old.len)
            };
            self.bytes.set_head(freed_to);
            i
        } else {
            self.push_resize(max)
        };
        let (start, len) = self.push_bytes(cl, orig);
        let m = &mut self.ring[i];
        m.start = start;
        m.len = len;
        m.cl_len = cl.len() as u8;
        m.has_orig = orig.is_some();
        m
    }

    /// `push_slot` while the ring is not `max` long: it grows, or after a restore or a smaller
    /// `max` it is put in order and cut to the newest `max - 1` first. Returns the new slot
    /// (a placeholder entry, at the end).
    #[cold]
    fn push_resize(&mut self, max: usize) -> usize {
        if self.ring.capacity() == 0 {
            // As many slots as will be used, at once (address space until used).
            self.ring.reserve_exact(max.min(Self::RESERVE_MAX));
        }
        if self.ring.len() >= max || self.head != 0 {
            self.ring.rotate_left(self.head);
            self.head = 0;
            let cut = (self.ring.len() + 1).saturating_sub(max);
            self.ring.drain(..cut);
            let next = self.ring.first().map_or(self.bytes.tail, |m| m.start);
            self.bytes.set_head(next);
        }
        self.ring.push(StoredMeta::EMPTY);
        self.ring.len() - 1
    }

    fn push(&mut self, seq: u64, msg_type: u8, sending_ts: u64, body: &[u8], max: usize) {
        let m = self.push_slot(max, body, None);
        m.seq = seq;
        m.sending_ts = sending_ts;
        m.cl_len = 0;
        m.msg_type = msg_type;
        m.body = Body::Bytes;
    }
    /// Stores a recipe `body` with its ClOrdID `cl` (at most `STR_LEN_MAX` bytes) and
    /// OrigClOrdID `orig` (the newest entry: `last`).
    #[allow(clippy::too_many_arguments)]
    fn push_recipe(
        &mut self,
        seq: u64,
        msg_type: u8,
        sending_ts: u64,
        body: Body,
        cl: &[u8],
        orig: Option<&[u8]>,
        max: usize,
    ) {
        let m = self.push_slot(max, cl, orig);
        m.seq = seq;
        m.sending_ts = sending_ts;
        m.msg_type = msg_type;
        m.body = body;
    }
    /// The newest entry.
    fn last(&self) -> &StoredMeta {
        let i = if self.head == 0 {
            self.ring.len()
        } else {
            self.head
        };
        &self.ring[i - 1]
    }
    /// The entry's bytes (see `StoredMeta`).
    fn bytes_of(&self, m: &StoredMeta) -> &[u8] {
        self.bytes.get(m.start, m.len as usize)
    }
    /// ClOrdID and OrigClOrdID of a stored recipe.
    fn ids(&self, m: &StoredMeta) -> (&[u8], Option<&[u8]>) {
        let (cl, orig) = self.bytes_of(m).split_at(m.cl_len as usize);
        (cl, m.has_orig.then_some(orig))
    }
    /// Appends the body (the fields after the standard header) of stored message `m`, as
    /// FIX 4.2 has it when `fix42` (see `encode_exec`).
    fn body_into(&self, m: &StoredMeta, cfg: &Config, fix42: bool, out: &mut Vec<u8>) {
        match &m.body {
            Body::Bytes => out.extend_from_slice(self.bytes_of(m)),
            Body::Exec(r) => {
                let (cl, orig) = self.ids(m);
                encode_exec(r, cl, orig, m.sending_ts, cfg, fix42, out);
            }
            Body::CancelReject(r) => {
                let (cl, orig) = self.ids(m);
                encode_cancel_reject(r, cl, orig.unwrap_or_default(), out);
            }
        }
    }
    fn clear(&mut self) {
        self.ring.clear();
        self.head = 0;
        self.bytes.set_head(self.bytes.tail);
    }
    /// How many stored messages a session can still ask for (see `live`).
    fn live_len(&self, max: usize) -> usize {
        self.ring.len().min(max.max(1))
    }
    /// The stored messages a session can still ask for, oldest first: the newest `max`.
    fn live(&self, max: usize) -> impl Iterator<Item = &StoredMeta> {
        let (newer, older) = self.ring.split_at(self.head);
        older
            .iter()
            .chain(newer)
            .skip(self.ring.len().saturating_sub(max.max(1)))
    }
}

/// One remembered ClOrdID: which session used it for which order; its bytes are in the
/// `ClBytes` ring at `start` (24 bytes, so a lookup or rotation touches less memory than an
/// inline 64-byte ClOrdID would).
#[derive(Clone, Copy)]
struct ClEntry {
    order: OrderId,
    /// `ClIndex::hash` of (session, ClOrdID), kept so forgetting the entry needs no rehash.
    hash: u64,
    /// Absolute position of the ClOrdID's bytes in `ClIndex::bytes` (modulo 2^32).
    start: u32,
    session: u16,
    len: u8,
    /// Moved to the back at least once because its order was live beyond the window.
    kept: bool,
}

const _: () = assert!(std::mem::size_of::<ClEntry>() == 24);
const _: () = assert!(std::mem::size_of::<OrderInfo>() == 128);

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
struct ClBytes {
    buf: Vec<u8>,
    cap: usize,
    head: u32,
    tail: u32,
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
    fn with_backing(
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

    fn new(reserve: usize) -> ClBytes {
        let buf = vec![0; reserve.max(Self::INITIAL)];
        ClBytes {
            buf,
            cap: Self::INITIAL,
            head: 0,
            tail: 0,
        }
    }

    #[inline]
    fn mask(&self) -> u32 {
        (self.cap - 1) as u32
    }

    /// The `len` bytes at absolute position `start`.
    #[inline]
    fn get(&self, start: u32, len: usize) -> &[u8] {
        let a = (start & self.mask()) as usize;
        &self.buf[a..a + len]
    }

    /// Appends `cl` as the newest; returns its absolute position.
    #[inline]
    fn push(&mut self, cl: &[u8]) -> u32 {
        let (start, a) = self.reserve(cl.len());
        copy_short(&mut self.buf[a..a + cl.len()], cl);
        start
    }

    /// Appends `a` and `b` back to back as the newest; returns their absolute position.
    #[inline]
    fn push2(&mut self, a: &[u8], b: &[u8]) -> u32 {
        let (start, at) = self.reserve(a.len() + b.len());
        copy_short(&mut self.buf[at..at + a.len()], a);
        let at = at + a.len();
        copy_short(&mut self.buf[at..at + b.len()], b);
        start
    }

    /// Takes the next `n` contiguous bytes (growing the buffer if the live bytes and them do
    /// not fit); returns their absolute position and their index in `buf`.
    #[inline]
    fn reserve(&mut self, n: usize) -> (u32, usize) {
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
    fn grow(&mut self) {
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

    /// Forgets every byte before absolute position `head` (the oldest entry's `start`, or a
    /// position before it after which no byte is used by an entry that was forgotten).
    #[inline]
    fn set_head(&mut self, head: u32) {
        self.head = head;
    }
}

/// Copies `src` into `dst` (as long) 8 bytes at a time: no `memcpy` call for a ClOrdID.
#[inline]
fn copy_short(dst: &mut [u8], src: &[u8]) {
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
fn eq_short(a: &[u8], b: &[u8]) -> bool {
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

/// Every remembered ClOrdID, oldest first, with an index by (session, ClOrdID).
///
/// The entries live in a ring buffer (`ring`, in first-use order: the order the snapshot
/// stores and forgetting follows), their bytes in a second ring (`bytes`, same order); the
/// index (`PosTable`) maps a hash to ring positions, so a lookup touches one cache line of the
/// index and, on a hit, one ring entry and its bytes, and a ClOrdID costs no allocation.
/// ClOrdIDs are chosen by clients: the hash is foldhash with a per-process random seed (fast
/// on short strings, not predictable enough for a collision attack); equal hashes are told
/// apart by comparing the full hash, then the bytes.
///
/// Invariant: each (session, ClOrdID) is in the ring at most once, and the index holds
/// exactly one position per ring entry.
#[derive(Clone)]
struct ClIndex {
    ring: VecDeque<ClEntry>,
    /// Absolute position of `ring[0]`.
    head: u64,
    bytes: ClBytes,
    table: PosTable,
    seed: ClHasher,
    /// How the ring and the table (and a rebuilt table) are backed.
    backing: Backing,
    /// While a full replay takes its lookups from a `ClResolver` (`resolve`): the table is not
    /// kept meanwhile, and is built from the ring when resolving stops.
    resolved: Option<Box<resolve::Resolved>>,
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
    fn apply<T>(self, v: &Vec<T>, n: usize, later: &mut engine::hint::Populate) {
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
    fn later(self) -> Backing {
        match self {
            Backing::Background => Backing::Resident,
            b => b,
        }
    }
}

/// The session-independent part of the ClOrdID index's hash (foldhash of the ClOrdID's
/// bytes, seeded per `Exchange`): the index mixes the session in with one multiply
/// (`ClIndex::hash`). Replay computes it on the decoding thread (`ClHasher::input_hashes`),
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

    /// The hashes `Exchange::apply_prehashed` uses for `input`: of the ClOrdID and the
    /// OrigClOrdID of a NewOrderSingle, OrderCancelRequest or OrderCancelReplaceRequest
    /// (0 for anything else).
    #[inline]
    pub fn input_hashes(&self, input: &Input) -> ClHashes {
        let Input::Fix { msg, .. } = input else {
            return ClHashes::default();
        };
        match msg.order_cl_ord_ids() {
            Some((cl, orig)) => ClHashes {
                cl: self.hash(cl.as_bytes()),
                orig: orig.map_or(0, |o| self.hash(o.as_bytes())),
            },
            None => ClHashes::default(),
        }
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
    fn new(backing: Backing, later: &mut engine::hint::Populate) -> ClIndex {
        Self::with_backing(CL_ORD_IDS_MAX + 1, backing, later)
    }

    /// An index with room for `n` entries (tests use small ones, to exercise rebuilds).
    #[cfg(test)]
    fn with_capacity(n: usize) -> ClIndex {
        Self::with_backing(n, Backing::Resident, &mut engine::hint::Populate::default())
    }

    fn with_backing(n: usize, backing: Backing, later: &mut engine::hint::Populate) -> ClIndex {
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
                (n * crate::record::STR_LEN_MAX).next_power_of_two(),
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
    fn pbits_for(n: usize) -> u32 {
        n.saturating_sub(1).next_power_of_two().trailing_zeros() + 1
    }

    #[inline]
    fn hash(&self, session: u16, cl: &[u8]) -> u64 {
        Self::with_session(self.seed.hash(cl), session)
    }

    /// `hash(session, cl)` from `pre` = `ClHasher::hash(cl)` if it is not 0.
    #[inline]
    fn hash_pre(&self, session: u16, cl: &[u8], pre: u64) -> u64 {
        let h = if pre != 0 { pre } else { self.seed.hash(cl) };
        Self::with_session(h, session)
    }

    /// Mixes the session into a ClOrdID's hash (the same ClOrdID in two sessions lands in
    /// unrelated slots: the low bits, which pick the slot, differ per session).
    #[inline]
    fn with_session(h: u64, session: u16) -> u64 {
        h ^ (session as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn len(&self) -> usize {
        self.ring.len()
    }

    /// Ring index of the entry at the position whose low bits (`PosTable::pos_mask`) are
    /// `low` (the ring is shorter than their range, so they determine it).
    #[inline]
    fn at(&self, low: u32) -> usize {
        (low.wrapping_sub(self.head as u32) & self.table.pos_mask()) as usize
    }

    /// The ClOrdID of entry `e`.
    #[inline]
    fn cl_of(&self, e: &ClEntry) -> &[u8] {
        self.bytes.get(e.start, e.len as usize)
    }

    /// The order that `session` used `cl` for, if remembered.
    #[inline]
    fn get(&self, session: u16, cl: &[u8]) -> Option<OrderId> {
        self.get_hashed(self.hash(session, cl), session, cl)
    }

    /// `get` with `h` = `hash(session, cl)` (a caller that also `push`es hashes once).
    #[inline]
    fn get_hashed(&self, h: u64, session: u16, cl: &[u8]) -> Option<OrderId> {
        let mut found = None;
        self.table.find(h, |p| {
            let e = &self.ring[self.at(p)];
            let hit = e.hash == h
                && e.session == session
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
    fn push(&mut self, session: u16, cl: &[u8], order: OrderId) {
        self.push_hashed(self.hash(session, cl), session, cl, order);
    }

    /// `push` with `hash` = `hash(session, cl)`.
    #[inline(always)]
    fn push_hashed(&mut self, hash: u64, session: u16, cl: &[u8], order: OrderId) {
        let pos = self.head + self.ring.len() as u64;
        let start = self.bytes.push(cl);
        self.ring.push_back(ClEntry {
            order,
            hash,
            start,
            session,
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
    fn rebuild(&mut self, grow: bool) {
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

    /// Starts loading the index slot of (`session`, `cl`) into the cache, for a lookup soon
    /// (`pre` as in `hash_pre`).
    #[inline]
    fn prefetch(&self, session: u16, cl: &[u8], pre: u64) {
        if self.resolved.is_some() {
            return;
        }
        self.table.prefetch(self.hash_pre(session, cl, pre));
    }

    /// Starts loading the ring entries that the index slots of (`session`, `cl`) point to
    /// (those `get` compares), reading the slots: call it once `prefetch` had time to load
    /// them.
    #[inline]
    fn prefetch_entries(&self, session: u16, cl: &[u8], pre: u64) {
        if self.resolved.is_some() {
            return;
        }
        self.table.find(self.hash_pre(session, cl, pre), |p| {
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
    fn prefetch_rotation(&self) {
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
    fn rotate_or_forget(&mut self, keep: impl Fn(OrderId, &[u8]) -> bool) {
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
            let mut cl = [0u8; crate::record::STR_LEN_MAX];
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

    /// (session, ClOrdID, order) of every entry, oldest first.
    fn iter(&self) -> impl Iterator<Item = (u16, &[u8], OrderId)> {
        self.ring
            .iter()
            .map(|e| (e.session, self.cl_of(e), e.order))
    }
}

/// Backward-shift deletion in a linear-probing table: with bucket `i` emptied, the entry at
/// `j` (further along its probe run) stays where it is iff its home bucket `k` lies
/// cyclically in `(i, j]`; otherwise it moves back into `i`.
#[inline(always)]
fn home_in(i: usize, k: usize, j: usize) -> bool {
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
struct PosTable {
    slots: Vec<u32>,
    mask: usize,
    len: usize,
    pbits: u32,
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
    fn new(n: usize, pbits: u32) -> PosTable {
        Self::with_backing(
            n,
            pbits,
            Backing::Resident,
            &mut engine::hint::Populate::default(),
        )
    }

    fn with_backing(
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
    fn capacity(&self) -> usize {
        self.slots.len() * 5 / 8
    }

    /// The mask of a slot's position bits.
    #[inline(always)]
    fn pos_mask(&self) -> u32 {
        (1u32 << self.pbits) - 1
    }

    /// `hash`'s tag, in place (its bits 39 and up: independent of the home slot, which the
    /// low bits pick).
    #[inline(always)]
    fn tag(&self, hash: u64) -> u32 {
        let field = (1u32 << Self::DISP_SHIFT) - 1;
        ((hash >> 39) as u32) << self.pbits & field
    }

    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        hash as usize & self.mask
    }

    /// The slot holding a position with `hash` for which `is_it(low pbits bits of the
    /// position)` is true, if any.
    #[inline(always)]
    fn find(&self, hash: u64, mut is_it: impl FnMut(u32) -> bool) -> Option<usize> {
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
    fn prefetch(&self, hash: u64) {
        let i = self.home(hash);
        engine::hint::prefetch(&self.slots[i]);
        // The probe run (and a removal's backward shift) may go on into the next line.
        engine::hint::prefetch(&self.slots[(i + 8) & self.mask]);
    }

    /// Adds `pos` for `hash`; `Err` (and no change) when the slot cannot be coded: the table
    /// is full, or the free slot is too far from the home slot.
    #[inline]
    fn insert(&mut self, hash: u64, pos: u64) -> Result<(), ()> {
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

    fn set_pos(&mut self, i: usize, pos: u64) {
        let m = self.pos_mask();
        self.slots[i] = (self.slots[i] & !m) | (pos as u32 & m);
    }

    /// Empties slot `i`, moving later entries of its probe run back so every entry stays
    /// reachable from its home slot (a move back by `d` slots lowers its displacement by `d`).
    fn remove_at(&mut self, mut i: usize) {
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

impl Session {
    /// Numbers the next outbound message and takes its store slot with its ClOrdID `cl` and
    /// OrigClOrdID `orig` (`Store::push_slot`), `seq`, `sending_ts` and `msg_type` set; the
    /// caller writes the recipe into `body` (in place: no recipe is built and copied in) and
    /// then the message (`write_last_stored`). Returns the MsgSeqNum and the slot.
    #[inline(always)]
    fn next_stored(
        &mut self,
        msg_type: u8,
        ts: u64,
        cl: &[u8],
        orig: Option<&[u8]>,
        max: usize,
    ) -> (u64, &mut StoredMeta) {
        let seq = self.out_seq;
        self.out_seq += 1;
        self.last_sent_ns = ts;
        // A message the store will have forgotten by the end of this replay is written to
        // the scratch entry instead (`Exchange::bound_stores`).
        let m = if seq < self.skip_below {
            &mut self.scratch
        } else {
            self.store.push_slot(max, cl, orig)
        };
        m.seq = seq;
        m.sending_ts = ts;
        m.msg_type = msg_type;
        (seq, m)
    }

    /// Numbers the next outbound application message and returns true if a bounded replay
    /// knows the store will have forgotten it by the end (`Exchange::bound_stores`): the
    /// caller then builds nothing of it (what `next_stored` would write to the scratch entry
    /// is never read). False, with nothing changed, otherwise (always when live).
    #[inline(always)]
    fn skip_unstored(&mut self, ts: u64) -> bool {
        if self.out_seq >= self.skip_below {
            return false;
        }
        self.out_seq += 1;
        self.last_sent_ns = ts;
        true
    }
}

#[derive(Clone, Debug)]
struct Session {
    /// Next MsgSeqNum expected from the client.
    in_seq: u64,
    /// MsgSeqNum of our next message.
    out_seq: u64,
    conn: Option<ConnId>,
    heartbeat_secs: u32,
    last_recv_ns: u64,
    last_sent_ns: u64,
    test_request_sent_ns: u64,
    logout_sent: bool,
    /// Highest MsgSeqNum for which a ResendRequest is outstanding (0: none).
    resend_until: u64,
    store: Store,
    /// Replay only (`Exchange::bound_stores`): application messages numbered below this are
    /// not stored, because the store will have forgotten them by the end of the journal. 0
    /// (store everything) when live. Not state: never hashed or snapshotted.
    skip_below: u64,
    /// Where such a message's recipe is written (and dropped).
    scratch: StoredMeta,
}

impl Session {
    fn new() -> Session {
        Session {
            in_seq: 1,
            out_seq: 1,
            conn: None,
            heartbeat_secs: 30,
            last_recv_ns: 0,
            last_sent_ns: 0,
            test_request_sent_ns: 0,
            logout_sent: false,
            resend_until: 0,
            store: Store::default(),
            skip_below: 0,
            scratch: StoredMeta::EMPTY,
        }
    }
}

/// What the gateway remembers of an order (the engine knows only ids and ticks). 128 bytes,
/// aligned to a cache line so that a record is two lines, never three (the slab is random
/// access: a record a new order reuses was last touched `DONE_ORDERS_MAX` orders ago).
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(align(64))]
struct OrderInfo {
    session: u16,
    account: u32,
    symbol: u32,
    side: Side,
    ord_type: OrdType,
    tif: TimeInForce,
    price: i64,
    /// Current ClOrdID (the latest accepted cancel/replace's).
    cl_ord_id: ClOrdId,
    order_qty: u64,
    cum_qty: u64,
    leaves_qty: u64,
    /// Sum of price * qty over fills, in price units.
    notional: i128,
    /// FIX OrdStatus of a terminal order (0 while live).
    done_status: u8,
}

impl OrderInfo {
    /// A record to overwrite (`Orders::insert_new_live` on a slab with no free slot).
    const EMPTY: OrderInfo = OrderInfo {
        session: 0,
        account: 0,
        symbol: 0,
        side: Side::Buy,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Day,
        price: 0,
        cl_ord_id: ClOrdId::EMPTY,
        order_qty: 0,
        cum_qty: 0,
        leaves_qty: 0,
        notional: 0,
        done_status: 0,
    };
}

/// The orders the gateway remembers: live ones (at most `orders_max`) and finished ones (the
/// newest `DONE_ORDERS_MAX`, in the order they finished, for OrderStatusRequest).
///
/// Each order's record lives in one slot of `slab` from its acceptance until it is forgotten
/// (slots are reused through `free`); the indexes hold only slot numbers: `live` (small and
/// hot: the orders events refer to), `done` (finished ids and slots, oldest first) and
/// `done_ix` (finished id -> slot). So retiring an order moves no record, and the per-order
/// cost does not grow with the number of orders remembered. `live` is a `SlotTable` (one
/// multiply and a probe or two per lookup); `done_ix` a `DoneIndex`, direct-mapped by id.
///
/// `done_ix` lags `DONE_INDEX_LAG` retirements behind `done`: retiring an order prefetches
/// its cell and indexes the order retired that many retirements before (whose cell is loaded
/// by then: indexing at once stalled on the cell, about 5% of a replay's time), and a lookup
/// that misses the index scans those newest few.
///
/// Invariant: an id is in at most one of `live` and `done`; `done_ix` holds exactly the ids
/// of `done` but its newest `DONE_INDEX_LAG`; a slot is in `free` or referred to by exactly
/// one of `live` and `done`.
#[derive(Clone)]
struct Orders {
    slab: Vec<OrderInfo>,
    free: Vec<u32>,
    live: SlotTable,
    done: VecDeque<(OrderId, u32)>,
    done_ix: DoneIndex,
}

/// How many retirements `Orders::done_ix` lags behind `Orders::done` (see there).
const DONE_INDEX_LAG: usize = 16;

/// How many finished orders ahead of the oldest `retire` prefetches what forgetting it
/// touches (its index bucket and its record's slot, reused by the next new order).
const DONE_PREFETCH: usize = 8;

/// Order id -> slab slot: open addressing with linear probing (at most 5/8 full),
/// backward-shift deletion, a multiplicative hash (ids are the exchange's own, so there is
/// no collision attack; sequential ids spread evenly). A bucket is 16 bytes; an empty one has
/// slot `SlotTable::EMPTY`.
#[derive(Clone)]
struct SlotTable {
    buckets: Vec<(OrderId, u32)>,
    shift: u32,
    len: usize,
}

impl SlotTable {
    const EMPTY: u32 = u32::MAX;

    /// A table that holds `n` ids without growing.
    fn with_capacity(n: usize) -> SlotTable {
        let cap = (n * 8 / 5 + 1).next_power_of_two().max(16);
        let buckets = vec![(0, Self::EMPTY); cap];
        SlotTable {
            buckets,
            shift: 64 - cap.trailing_zeros(),
            len: 0,
        }
    }

    #[inline(always)]
    fn home(&self, id: OrderId) -> usize {
        (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    /// The bucket holding `id`, if any.
    #[inline(always)]
    fn find(&self, id: OrderId) -> Option<usize> {
        let mut b = self.home(id);
        loop {
            let (k, slot) = self.buckets[b];
            if slot == Self::EMPTY {
                return None;
            }
            if k == id {
                return Some(b);
            }
            b = (b + 1) & self.mask();
        }
    }

    #[inline(always)]
    fn get(&self, id: OrderId) -> Option<u32> {
        self.find(id).map(|b| self.buckets[b].1)
    }

    /// Maps `id` (not in the table) to `slot`.
    #[inline]
    fn insert(&mut self, id: OrderId, slot: u32) {
        if (self.len + 1) * 8 > self.buckets.len() * 5 {
            self.grow();
        }
        let mut b = self.home(id);
        while self.buckets[b].1 != Self::EMPTY {
            b = (b + 1) & self.mask();
        }
        self.buckets[b] = (id, slot);
        self.len += 1;
    }

    #[cold]
    fn grow(&mut self) {
        let cap = self.buckets.len() * 2;
        let old = std::mem::replace(&mut self.buckets, vec![(0, Self::EMPTY); cap]);
        self.shift -= 1;
        for (id, slot) in old {
            if slot != Self::EMPTY {
                let mut b = self.home(id);
                while self.buckets[b].1 != Self::EMPTY {
                    b = (b + 1) & self.mask();
                }
                self.buckets[b] = (id, slot);
            }
        }
    }

    /// Empties bucket `i`, moving later entries of its probe run back so every entry stays
    /// reachable from its home bucket.
    #[inline]
    fn remove_at(&mut self, mut i: usize) {
        self.len -= 1;
        let mask = self.mask();
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = self.buckets[j];
            if e.1 == Self::EMPTY {
                break;
            }
            if !home_in(i, self.home(e.0), j) {
                self.buckets[i] = e;
                i = j;
            }
        }
        self.buckets[i] = (0, Self::EMPTY);
    }

    /// Maps `id` to `slot`, replacing its slot if it is in the table already.
    fn put(&mut self, id: u64, slot: u32) {
        match self.find(id) {
            Some(b) => self.buckets[b].1 = slot,
            None => self.insert(id, slot),
        }
    }

    /// Removes `id`; returns its slot if it was in the table.
    fn remove(&mut self, id: u64) -> Option<u32> {
        let b = self.find(id)?;
        let slot = self.buckets[b].1;
        self.remove_at(b);
        Some(slot)
    }

    fn clear(&mut self) {
        self.buckets.fill((0, Self::EMPTY));
        self.len = 0;
    }

    /// Every (id, slot), in bucket order.
    fn iter(&self) -> impl Iterator<Item = (OrderId, u32)> + '_ {
        self.buckets
            .iter()
            .copied()
            .filter(|&(_, slot)| slot != Self::EMPTY)
    }
}

/// Finished order id -> slab slot, direct-mapped: cell `id % cells` holds the id and its
/// slot, and an id whose cell is taken by another goes to a small overflow `SlotTable`.
///
/// Why not a hash table: ids are sequential and most orders finish soon after they are
/// made, so the newest finished ids fall in a narrow, moving band of cells that stays in the
/// cache, and the oldest finished order, forgotten as each new one finishes, sits about
/// `DONE_ORDERS_MAX` finishes back, where the band was: the cells are used roughly in
/// order instead of at random (a hashed index cost two cold cache lines a finished order in
/// replay, one to index it and one to forget it, plus its probing). With twice as many cells
/// as finished orders remembered, an id shares a cell with a newer one only if that many
/// orders were made between them (an order that rested that long): the overflow holds those.
///
/// Invariant: each indexed id is in exactly one place: its cell (`cells[id & mask]`, slot not
/// `EMPTY`) or `overflow`.
#[derive(Clone)]
struct DoneIndex {
    cells: Vec<(OrderId, u32)>,
    mask: usize,
    overflow: SlotTable,
}

impl DoneIndex {
    const EMPTY: u32 = SlotTable::EMPTY;

    /// An index for about `n` ids: `n` cells rounded up to a power of two (the gateway's
    /// `DONE_ORDERS_MAX + 1` rounds up to twice `DONE_ORDERS_MAX`).
    fn with_capacity(n: usize) -> DoneIndex {
        let cells = n.next_power_of_two().max(16);
        DoneIndex {
            cells: vec![(0, Self::EMPTY); cells],
            mask: cells - 1,
            overflow: SlotTable::with_capacity(1024),
        }
    }

    #[inline(always)]
    fn cell(&self, id: OrderId) -> usize {
        id as usize & self.mask
    }

    /// Indexes `id` (not indexed yet) at `slot`; an id in its cell moves to the overflow.
    #[inline]
    fn insert(&mut self, id: OrderId, slot: u32) {
        let c = self.cell(id);
        let (old, old_slot) = self.cells[c];
        if old_slot != Self::EMPTY {
            self.overflow.insert(old, old_slot);
        }
        self.cells[c] = (id, slot);
    }

    #[inline]
    fn get(&self, id: OrderId) -> Option<u32> {
        let (k, slot) = self.cells[self.cell(id)];
        if slot != Self::EMPTY && k == id {
            Some(slot)
        } else if self.overflow.len == 0 {
            None
        } else {
            self.overflow.get(id)
        }
    }

    /// Unindexes `id`; returns its slot if it was indexed.
    #[inline]
    fn remove(&mut self, id: OrderId) -> Option<u32> {
        let c = self.cell(id);
        let (k, slot) = self.cells[c];
        if slot != Self::EMPTY && k == id {
            self.cells[c] = (0, Self::EMPTY);
            Some(slot)
        } else if self.overflow.len == 0 {
            None
        } else {
            self.overflow.remove(id)
        }
    }

    /// Starts loading `id`'s cell (a hint only).
    #[inline(always)]
    fn prefetch(&self, id: OrderId) {
        engine::hint::prefetch(&self.cells[self.cell(id)]);
    }
}

impl Orders {
    /// Room for every finished order from the start (address space only), so retiring never
    /// copies the ring or the slab on the way up.
    fn new(backing: Backing, later: &mut engine::hint::Populate) -> Orders {
        let slab = Vec::with_capacity(DONE_ORDERS_MAX + 1024);
        backing.apply(&slab, slab.capacity(), later);
        // Resident too (1 MiB): filled in order as orders finish, it gave the serving loop a
        // page fault per 256 finished orders until it had turned once.
        let done = Vec::with_capacity(DONE_ORDERS_MAX + 1);
        backing.apply(&done, done.capacity(), later);
        Orders {
            slab,
            free: Vec::with_capacity(DONE_ORDERS_MAX + 1024),
            live: SlotTable::with_capacity(1024),
            done: VecDeque::from(done),
            done_ix: DoneIndex::with_capacity(DONE_ORDERS_MAX + 1),
        }
    }

    /// The slot of remembered order `id` (live or finished).
    #[inline(always)]
    fn slot(&self, id: OrderId) -> Option<u32> {
        match self.live.get(id) {
            Some(s) => Some(s),
            None => self.done_slot(id),
        }
    }

    /// The slot of finished order `id` (rare: out of line, so `slot` stays small).
    #[inline(never)]
    fn done_slot(&self, id: OrderId) -> Option<u32> {
        self.done_ix.get(id).or_else(|| {
            self.done
                .iter()
                .rev()
                .take(DONE_INDEX_LAG)
                .find(|&&(d, _)| d == id)
                .map(|&(_, s)| s)
        })
    }

    #[inline]
    fn get(&self, id: &OrderId) -> Option<&OrderInfo> {
        self.slot(*id).map(|s| &self.slab[s as usize])
    }

    /// The record of live order `id`.
    #[inline]
    fn live(&self, id: &OrderId) -> Option<&OrderInfo> {
        self.live.get(*id).map(|s| &self.slab[s as usize])
    }

    /// Every live order's record.
    fn live_records(&self) -> impl Iterator<Item = &OrderInfo> {
        self.live.iter().map(|(_, s)| &self.slab[s as usize])
    }

    /// Remembers `o` as live order `id` (replacing its record if `id` is live already).
    #[inline]
    fn insert_live(&mut self, id: OrderId, o: OrderInfo) {
        match self.live.get(id) {
            Some(s) => self.slab[s as usize] = o,
            None => self.insert_new_live(id, |r| *r = o),
        }
    }

    /// Remembers new order `id` (not live yet) as live, with its record written in place by
    /// `fill`, which must set every field (the slot holds a forgotten order's record). A
    /// record built on the stack and copied in made that copy the hottest instruction of the
    /// replay's order path; written in place, a real journal replays 1.5-2.5% faster.
    #[inline(always)]
    fn insert_new_live(&mut self, id: OrderId, fill: impl FnOnce(&mut OrderInfo)) {
        debug_assert!(self.live.get(id).is_none());
        let slot = match self.free.pop() {
            Some(s) => {
                fill(&mut self.slab[s as usize]);
                // The next new order takes the slot now on top of the free list, which was
                // freed (and prefetched by `retire`) who knows how long ago: load it now.
                if let Some(&next) = self.free.last() {
                    engine::hint::prefetch_all(&self.slab[next as usize]);
                }
                s
            }
            None => {
                self.slab.push(OrderInfo::EMPTY);
                let s = self.slab.len() - 1;
                fill(&mut self.slab[s]);
                s as u32
            }
        };
        self.live.insert(id, slot);
    }

    /// Forgets a live order entirely (one the engine rejected).
    fn remove_live(&mut self, id: &OrderId) -> Option<OrderInfo> {
        let slot = self.live.remove(*id)?;
        self.free.push(slot);
        Some(self.slab[slot as usize].clone())
    }

    /// Moves live order `id` to the finished ones, forgetting the oldest finished order
    /// beyond `DONE_ORDERS_MAX`.
    #[inline]
    fn retire(&mut self, id: OrderId) {
        if !self.push_done(id) {
            return;
        }
        if self.done.len() > DONE_ORDERS_MAX {
            if let Some((old, slot)) = self.done.pop_front() {
                self.done_ix.remove(old);
                self.free.push(slot);
            }
            // The oldest entries were written `DONE_ORDERS_MAX` retirements ago and are cold
            // too (reading the id below stalled): load them further ahead still.
            if let Some(e) = self.done.get(DONE_PREFETCH * 4) {
                engine::hint::prefetch(e);
            }
            if let Some(&(next, slot)) = self.done.get(DONE_PREFETCH) {
                self.done_ix.prefetch(next);
                engine::hint::prefetch_all(&self.slab[slot as usize]);
            }
        }
    }

    /// Moves live order `id` to the newest finished one; false if it is not live. Indexes
    /// the finished order `DONE_INDEX_LAG` retirements older (see `Orders`).
    #[inline]
    fn push_done(&mut self, id: OrderId) -> bool {
        let Some(slot) = self.live.remove(id) else {
            return false;
        };
        self.done_ix.prefetch(id);
        self.done.push_back((id, slot));
        if let Some(&(lagging, s)) = self
            .done
            .get(self.done.len().wrapping_sub(DONE_INDEX_LAG + 1))
        {
            self.done_ix.insert(lagging, s);
        }
        true
    }

    /// Every remembered order (live and finished), by id.
    fn sorted(&self) -> Vec<(OrderId, &OrderInfo)> {
        let mut v: Vec<(OrderId, &OrderInfo)> = self
            .live
            .iter()
            .map(|(id, s)| (id, &self.slab[s as usize]))
            .collect();
        v.sort_unstable_by_key(|(id, _)| *id);
        // The finished ones (the most) come nearly sorted already: the stable sort merges
        // their natural runs with the sorted live ones instead of partitioning them.
        v.extend(
            self.done
                .iter()
                .map(|&(id, s)| (id, &self.slab[s as usize])),
        );
        v.sort_by_key(|(id, _)| *id);
        v
    }
}

/// Counters the server reports (not part of the replicated state).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub orders: u64,
    pub execution_reports: u64,
    pub trades: u64,
    pub busy_rejects: u64,
}

/// Collects the engine events that become FIX messages: all but `Level` (market data, which
/// no order-entry message reports). The engine builds a level update only for a sink that
/// keeps it, so skipping them here saves their work, not only their copy. A trade also starts
/// loading its maker's order record while the engine goes on matching (a resting order's
/// record is usually cold by the time it fills; its report stalled on it).
struct OrderEvents<'a> {
    events: &'a mut Vec<Event>,
    orders: &'a Orders,
}

impl EventSink for OrderEvents<'_> {
    /// Order entry has no use for book levels (they were built and dropped per event).
    const LEVELS: bool = false;
    #[inline(always)]
    fn on_event(&mut self, event: &Event) {
        match event {
            Event::Level { .. } => {}
            Event::Trade { maker_id, .. } => {
                if let Some(s) = self.orders.live.get(*maker_id) {
                    engine::hint::prefetch_all(&self.orders.slab[s as usize]);
                }
                self.events.push(*event);
            }
            _ => self.events.push(*event),
        }
    }
}

/// The request whose events are being turned into messages.
struct Ctx<'a> {
    session: u16,
    seq: u64,
    ts: u64,
    exec_n: u32,
    /// The request's ClOrdID and OrigClOrdID (borrowed from the input: not copied).
    cl_ord_id: &'a ClOrdId,
    orig_cl_ord_id: &'a ClOrdId,
    kind: CtxKind,
    mass_count: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CtxKind {
    New,
    Cancel,
    Replace,
    Mass,
    Other,
}

pub struct Exchange {
    cfg: Arc<Config>,
    engine: Engine,
    sessions: Vec<Session>,
    /// Connection -> session index (a `SlotTable`: one multiply and a probe or two, where a
    /// `HashMap` lookup cost ~25 instructions three times per replayed record).
    conns: SlotTable,
    orders: Orders,
    /// Every remembered ClOrdID in the order it was first used, indexed by (session,
    /// ClOrdID); the snapshot stores the list (already in a deterministic order).
    cl: ClIndex,
    /// The pages of the large tables still to fault in (`Backing::Background`; empty
    /// otherwise), taken by [`Exchange::take_populate`].
    populate: engine::hint::Populate,
    next_order_id: OrderId,
    last_seq: u64,
    events: Vec<Event>,
    w: MsgWriter,
    body: Vec<u8>,
    pub stats: Stats,
    /// When set, every engine event is also appended here (for `journal dump`).
    pub event_log: Option<Vec<Event>>,
    /// Recovery: messages are numbered and stored exactly as live, but not framed for the
    /// (long gone) connections. Output only; never part of the state.
    pub replaying: bool,
    /// ClOrdID hashes of the input being applied, computed ahead (`apply_prehashed`); zero
    /// (not computed) outside it.
    pre: ClHashes,
    /// Since `begin_resolving`: the record at which the exchange stopped taking answers from
    /// the resolver before the end (`cl_find`), if it did.
    resolve_fell_back: Option<u64>,
    /// The journal record of the checkpoint `bound_stores` took its bounds from (0: none).
    bound_seq: u64,
    /// The first checkpoint this exchange disagreed with (`Input::Checkpoint`).
    divergence: Option<String>,
    /// `CL_ORD_IDS_MAX` (smaller in tests).
    cl_max: usize,
}

fn engine_config(cfg: &Config) -> EngineConfig {
    let d = EngineConfig::default();
    EngineConfig {
        orders_max: cfg.orders_max,
        ids_direct: (cfg.orders_max * 4).min(d.ids_direct),
        ..d
    }
}

impl Exchange {
    /// An empty exchange, its large tables `Backing::Resident`.
    pub fn new(cfg: Arc<Config>) -> Exchange {
        Self::with_backing(cfg, Backing::Resident)
    }

    pub fn with_backing(cfg: Arc<Config>, backing: Backing) -> Exchange {
        let engine = Engine::new(&cfg.engine_instruments(), engine_config(&cfg));
        let sessions = (0..cfg.sessions.len()).map(|_| Session::new()).collect();
        let cfg_sessions = cfg.sessions.len();
        let mut populate = engine::hint::Populate::default();
        let cl = ClIndex::new(backing, &mut populate);
        let orders = Orders::new(backing, &mut populate);
        Exchange {
            cfg,
            engine,
            sessions,
            conns: SlotTable::with_capacity(cfg_sessions),
            orders,
            cl,
            populate,
            next_order_id: 1,
            last_seq: 0,
            events: Vec::with_capacity(64),
            w: MsgWriter::new(),
            body: Vec::with_capacity(512),
            stats: Stats::default(),
            event_log: None,
            replaying: false,
            pre: ClHashes::default(),
            resolve_fell_back: None,
            bound_seq: 0,
            divergence: None,
            cl_max: CL_ORD_IDS_MAX,
        }
    }

    /// The plan that faults in the pages of this exchange's large tables, for an exchange
    /// made with `Backing::Background` (empty otherwise, and on a second call). Run it while
    /// the exchange is alive, on another thread (`recovery` does, while it applies records).
    pub fn take_populate(&mut self) -> engine::hint::Populate {
        std::mem::take(&mut self.populate)
    }

    /// A stable 64-bit hash (FNV-1a) of a session's SenderCompID and TargetCompID, as the
    /// client sends them: how a [`Checkpoint`] names a session.
    pub fn comp_ids_hash(sender: &str, target: &str) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for &b in sender
            .as_bytes()
            .iter()
            .chain(&[1u8])
            .chain(target.as_bytes())
        {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }

    /// The index of the session a checkpoint's mark names, if this configuration has it.
    fn marked_session(&self, m: &SessionMark) -> Option<usize> {
        let hash = |def: &crate::config::SessionDef| {
            Exchange::comp_ids_hash(&def.sender_comp_id, &def.target_comp_id)
        };
        let at = m.session as usize;
        if self
            .cfg
            .sessions
            .get(at)
            .is_some_and(|d| hash(d) == m.comp_ids)
        {
            return Some(at);
        }
        self.cfg.sessions.iter().position(|d| hash(d) == m.comp_ids)
    }

    /// The checkpoint of the current state (the event loop journals one every
    /// `Config::checkpoint_every_records` records): each session that has sent anything, with
    /// its next outbound MsgSeqNum and the MsgSeqNum of the oldest message it still stores.
    pub fn checkpoint(&self) -> Checkpoint {
        let max = self.cfg.resend_store_max;
        Checkpoint {
            store_max: max as u64,
            sessions: self
                .sessions
                .iter()
                .enumerate()
                .filter(|(_, s)| s.out_seq > 1)
                .map(|(ix, s)| {
                    let def = &self.cfg.sessions[ix];
                    SessionMark {
                        session: ix as u32,
                        comp_ids: Exchange::comp_ids_hash(&def.sender_comp_id, &def.target_comp_id),
                        out_seq: s.out_seq,
                        oldest_stored: s.store.live(max).next().map_or(0, |m| m.seq),
                    }
                })
                .collect(),
        }
    }

    /// Replay only: skip storing the application messages that checkpoint `cp` (journal
    /// record `seq`; recovery uses the first one of the last segment) shows the resend store
    /// will have forgotten by the end of the journal. The store keeps each session's newest `resend_store_max`
    /// application messages, so a message older than the oldest one stored at the checkpoint
    /// can never be among them later, provided the store is no larger now than when the
    /// checkpoint was written (otherwise nothing is skipped). Until the session's sequence
    /// numbers are reset after the checkpoint (Logon with ResetSeqNumFlag, which empties its
    /// store), its messages numbered below that oldest one are numbered and hashed as ever but
    /// not stored; the final state is the same as without bounds (`tests/replay.rs`). The
    /// replay must apply record `seq` (which checks the checkpoint); `unbound_stores` at its
    /// end. Returns whether any bound was set.
    pub fn bound_stores(&mut self, seq: u64, cp: &Checkpoint) -> bool {
        if self.cfg.resend_store_max as u64 > cp.store_max {
            return false;
        }
        let mut any = false;
        for m in &cp.sessions {
            if let Some(ix) = self.marked_session(m) {
                self.sessions[ix].skip_below = m.oldest_stored;
                any |= m.oldest_stored > 1;
            }
        }
        if any {
            self.bound_seq = seq;
        }
        any
    }

    /// Whether `bound_stores` set bounds (and `unbound_stores` has not cleared them).
    pub fn bounded(&self) -> bool {
        self.bound_seq != 0
    }

    /// Stores every message from now on (the end of a replay with `bound_stores`).
    pub fn unbound_stores(&mut self) {
        for s in &mut self.sessions {
            s.skip_below = 0;
        }
        self.bound_seq = 0;
    }

    /// The first checkpoint in the journal that this exchange's state disagreed with when it
    /// was applied: the replay diverged from the run that wrote the journal (another build or
    /// configuration). Recovery fails with it.
    pub fn divergence(&self) -> Option<&str> {
        self.divergence.as_deref()
    }

    /// Checks checkpoint record `seq` against the state: every session it names must have the
    /// same next outbound MsgSeqNum.
    fn on_checkpoint(&mut self, seq: u64, cp: &Checkpoint) {
        if self.divergence.is_some() {
            return;
        }
        for m in &cp.sessions {
            let Some(ix) = self.marked_session(m) else {
                continue;
            };
            let now = self.sessions[ix].out_seq;
            if now != m.out_seq {
                let def = &self.cfg.sessions[ix];
                self.divergence = Some(format!(
                    "journal record {seq}: session {}->{} would send its next message as \
                     MsgSeqNum {now}, but the run that wrote the journal sent it as {}: this \
                     replay diverged from that run (another version or configuration)",
                    def.sender_comp_id, def.target_comp_id, m.out_seq
                ));
                return;
            }
        }
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.cfg
    }

    /// Sequence number of the last applied input (0 = none).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// A hint for a caller that knows the inputs ahead (recovery: a few records before
    /// applying `input`): starts loading the ClOrdID index slots `input` will look up, so the
    /// lookups in `apply` find them in the cache. Changes nothing; skipping it changes nothing.
    /// `hashes` are the input's `ClHasher::input_hashes` (zeros: computed here).
    #[inline]
    pub fn prefetch(&self, input: &Input, hashes: &ClHashes) {
        let Input::Fix { conn, msg, .. } = input else {
            return;
        };
        let Some(ix) = self.conns.get(*conn) else {
            return;
        };
        let ix = ix as u16;
        if let Some((cl, orig)) = msg.order_cl_ord_ids() {
            if let Some(orig) = orig {
                self.cl.prefetch(ix, orig.as_bytes(), hashes.orig);
            }
            self.cl.prefetch(ix, cl.as_bytes(), hashes.cl);
        }
    }

    /// The second step of `prefetch`, for the same input a little later (the event loop: after
    /// the journal commit, before applying the batch): the index slots are in the cache by then,
    /// so this follows them and starts loading the remembered ClOrdIDs a cancel or replace
    /// will compare (its OrigClOrdID's entry; random in a ring of up to 1M entries). Changes
    /// nothing.
    #[inline]
    pub fn prefetch_entries(&self, input: &Input, hashes: &ClHashes) {
        let Input::Fix { conn, msg, .. } = input else {
            return;
        };
        let Some(ix) = self.conns.get(*conn) else {
            return;
        };
        let ix = ix as u16;
        if let FixMsg::Cancel { orig_cl_ord_id, .. } | FixMsg::Replace { orig_cl_ord_id, .. } = msg
        {
            self.cl
                .prefetch_entries(ix, orig_cl_ord_id.as_bytes(), hashes.orig);
        }
    }

    /// `ClHasher::input_hashes` of `input` with this exchange's own seed (for `prefetch` and
    /// `apply_prehashed` on the same thread: the event loop hashes each input of a batch once,
    /// before the journal stage, and prefetches with it).
    #[inline]
    pub fn input_hashes(&self, input: &Input) -> ClHashes {
        self.cl.seed.input_hashes(input)
    }

    /// The hasher whose `ClHasher::input_hashes` `apply_prehashed` takes (this exchange's
    /// seed: another exchange's hashes would not match).
    pub fn cl_hasher(&self) -> ClHasher {
        self.cl.seed.clone()
    }

    /// `apply` with the input's ClOrdID hashes computed ahead: each of `hashes` must be that
    /// of `self.cl_hasher().input_hashes(input)` or 0 (not computed; then computed here).
    /// Replay computes them on its decoding thread. The outcome is exactly that of `apply`.
    pub fn apply_prehashed(
        &mut self,
        seq: u64,
        ts_ns: u64,
        input: &Input,
        hashes: ClHashes,
        out: &mut Outbox,
    ) {
        #[cfg(debug_assertions)]
        {
            let want = self.cl.seed.input_hashes(input);
            assert!(
                (hashes.cl == 0 || hashes.cl == want.cl)
                    && (hashes.orig == 0 || hashes.orig == want.orig),
                "record {seq}: ClOrdID hashes {hashes:?} are not this exchange's {want:?}"
            );
        }
        self.pre = hashes;
        self.apply(seq, ts_ns, input, out);
        self.pre = ClHashes::default();
    }

    /// For a full replay into this exchange, while it is empty: the resolver that answers its
    /// ClOrdID lookups ahead, on the decoding thread (`resolve`'s module docs), fed every
    /// record in order; this exchange then takes its answers through `apply_resolved` until
    /// `end_resolving`. `None` if the exchange is not empty (a replay onto a snapshot keeps its
    /// index as the live loop does).
    pub fn begin_resolving(&mut self) -> Option<ClResolver> {
        self.begin_resolving_with(resolve::GEN_CANDIDATES)
    }

    /// `begin_resolving` with a resolver of `per_gen` candidates per generation (a power of
    /// two; tests use small ones).
    fn begin_resolving_with(&mut self, per_gen: u64) -> Option<ClResolver> {
        if self.last_seq != 0 || self.cl.len() != 0 || self.cl.resolved.is_some() {
            return None;
        }
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        self.cl.resolved = Some(Box::new(resolve::Resolved::new(stop.clone(), per_gen)));
        let sessions = self
            .cfg
            .sessions
            .iter()
            .map(|d| (d.sender_comp_id.clone(), d.target_comp_id.clone()))
            .collect();
        Some(ClResolver::new(
            self.cl.seed.clone(),
            sessions,
            stop,
            per_gen,
        ))
    }

    /// Stops taking ClOrdID answers from a resolver (`begin_resolving`) and builds the index
    /// from the ring. Returns what became of resolving, for the recovery log (`None`: it was
    /// not begun).
    pub fn end_resolving(&mut self) -> Option<String> {
        let t0 = std::time::Instant::now();
        match (self.cl.stop_resolving(), self.resolve_fell_back.take()) {
            (Some(n), _) => Some(format!(
                "{n} ClOrdID lookups answered on the decoding thread (index built in {:.1} ms)",
                t0.elapsed().as_secs_f64() * 1e3
            )),
            (None, Some(seq)) => Some(format!(
                "ClOrdID lookups answered on the decoding thread until record {seq}, then from the index"
            )),
            (None, None) => None,
        }
    }

    /// `apply_prehashed` with the resolver's hint for this record (`begin_resolving`). The
    /// outcome is exactly that of `apply`.
    pub fn apply_resolved(
        &mut self,
        seq: u64,
        ts_ns: u64,
        input: &Input,
        hashes: ClHashes,
        hint: &ClHint,
        out: &mut Outbox,
    ) {
        self.cl.begin_hinted(hint);
        self.apply_prehashed(seq, ts_ns, input, hashes, out);
        self.cl.end_hinted();
    }

    /// Starts loading what `apply_resolved` will read for `hint`'s record (a few ahead).
    #[inline]
    pub fn prefetch_hinted(&self, hint: &ClHint) {
        self.cl.prefetch_hinted(hint);
    }

    /// The order session `ix` used ClOrdID `cl` (whose `ClIndex::hash` is `h`) for, if
    /// remembered: from the record's hint while resolving (`orig`: the OrigClOrdID's answer),
    /// else (or if the hint cannot say) from the index.
    #[inline]
    fn cl_find(&mut self, orig: bool, h: u64, ix: u16, cl: &[u8]) -> Option<OrderId> {
        if self.cl.resolved.is_some() {
            match self.cl.resolve(orig, h, ix, cl) {
                Some(r) => return r,
                None => {
                    self.cl.stop_resolving();
                    self.resolve_fell_back = Some(self.last_seq);
                }
            }
        }
        self.cl.get_hashed(h, ix, cl)
    }

    /// Applies journal record `seq` (stamped `ts_ns`). Records must come in sequence order.
    pub fn apply(&mut self, seq: u64, ts_ns: u64, input: &Input, out: &mut Outbox) {
        assert!(
            seq > self.last_seq,
            "journal record {seq} applied after {}",
            self.last_seq
        );
        self.last_seq = seq;
        match input {
            Input::Startup => {
                self.conns.clear();
                for s in &mut self.sessions {
                    s.conn = None;
                    s.logout_sent = false;
                    s.resend_until = 0;
                }
            }
            Input::Tick => self.on_tick(ts_ns, out),
            Input::Shutdown => {
                for ix in 0..self.sessions.len() {
                    if let Some(conn) = self.sessions[ix].conn {
                        self.send_logout(ix as u16, ts_ns, "exchange shutting down", out);
                        out.close(conn);
                        self.unbind(conn);
                    }
                }
            }
            Input::Disconnected { conn } => self.unbind(*conn),
            Input::Checkpoint(cp) => self.on_checkpoint(seq, cp),
            Input::Fix {
                conn,
                seq: msg_seq,
                poss_dup,
                msg,
            } => self.on_fix(seq, ts_ns, *conn, *msg_seq, *poss_dup, msg, out),
        }
    }

    fn unbind(&mut self, conn: ConnId) {
        if let Some(ix) = self.conns.remove(conn) {
            let s = &mut self.sessions[ix as usize];
            s.conn = None;
            s.logout_sent = false;
            s.resend_until = 0;
        }
    }

    fn on_tick(&mut self, ts: u64, out: &mut Outbox) {
        for ix in 0..self.sessions.len() {
            let s = &self.sessions[ix];
            let Some(conn) = s.conn else { continue };
            let hb_ns = s.heartbeat_secs.max(1) as u64 * 1_000_000_000;
            if s.test_request_sent_ns != 0 && ts >= s.test_request_sent_ns + hb_ns {
                self.send_logout(ix as u16, ts, "heartbeat timeout", out);
                out.close(conn);
                self.unbind(conn);
                continue;
            }
            if s.test_request_sent_ns == 0 && ts >= s.last_recv_ns + hb_ns + hb_ns / 5 {
                self.body.clear();
                let mut b = std::mem::take(&mut self.body);
                b.extend_from_slice(b"112=TEST");
                push_u64(&mut b, ts / 1_000_000);
                b.push(1);
                self.send(ix as u16, b'1', ts, &b, out);
                self.body = b;
                self.sessions[ix].test_request_sent_ns = ts;
            } else if ts >= self.sessions[ix].last_sent_ns + hb_ns {
                self.send(ix as u16, b'0', ts, &[], out);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn on_fix(
        &mut self,
        seq: u64,
        ts: u64,
        conn: ConnId,
        msg_seq: u64,
        poss_dup: bool,
        msg: &FixMsg,
        out: &mut Outbox,
    ) {
        let Some(ix) = self.conns.get(conn).map(|ix| ix as u16) else {
            match msg {
                FixMsg::Logon { .. } => self.on_logon(ts, conn, msg_seq, msg, out),
                _ => out.close(conn),
            }
            return;
        };
        let s = &mut self.sessions[ix as usize];
        s.last_recv_ns = ts;
        s.test_request_sent_ns = 0;
        if let FixMsg::SequenceReset {
            new_seq,
            gap_fill: false,
        } = msg
        {
            if *new_seq > s.in_seq {
                s.in_seq = *new_seq;
            }
            return;
        }
        if msg_seq == 0 {
            self.send_logout(ix, ts, "MsgSeqNum(34) missing", out);
            out.close(conn);
            self.unbind(conn);
            return;
        }
        if msg_seq < s.in_seq {
            if !poss_dup {
                let text = format!(
                    "MsgSeqNum too low, expecting {} but received {}",
                    s.in_seq, msg_seq
                );
                self.send_logout(ix, ts, &text, out);
                out.close(conn);
                self.unbind(conn);
            }
            return;
        }
        if msg_seq > s.in_seq {
            // Gap: ask once for everything missing; answer ResendRequest and Logout anyway.
            if s.resend_until < s.in_seq {
                s.resend_until = msg_seq;
                let from = s.in_seq;
                let mut b = std::mem::take(&mut self.body);
                b.clear();
                b.extend_from_slice(b"7=");
                push_u64(&mut b, from);
                b.extend_from_slice(b"\x0116=0\x01");
                self.send(ix, b'2', ts, &b, out);
                self.body = b;
            }
            match msg {
                FixMsg::ResendRequest { begin, end } => self.resend(ix, ts, *begin, *end, out),
                FixMsg::Logout { .. } => self.on_logout(ix, ts, conn, out),
                _ => {}
            }
            return;
        }
        s.in_seq += 1;
        match msg {
            FixMsg::Logon { .. } => {
                self.session_reject(ix, ts, msg_seq, 0, "A", "already logged on", out)
            }
            FixMsg::Heartbeat { .. } | FixMsg::SessionReject => {}
            FixMsg::TestRequest { test_req_id } => {
                let mut b = std::mem::take(&mut self.body);
                b.clear();
                b.extend_from_slice(b"112=");
                b.extend_from_slice(test_req_id.as_bytes());
                b.push(1);
                self.send(ix, b'0', ts, &b, out);
                self.body = b;
            }
            FixMsg::ResendRequest { begin, end } => self.resend(ix, ts, *begin, *end, out),
            FixMsg::SequenceReset { new_seq, .. } => {
                let s = &mut self.sessions[ix as usize];
                if *new_seq > s.in_seq {
                    s.in_seq = *new_seq;
                }
            }
            FixMsg::Logout { .. } => self.on_logout(ix, ts, conn, out),
            FixMsg::New(n) => self.on_new(ix, seq, ts, n, out),
            FixMsg::Cancel {
                cl_ord_id,
                orig_cl_ord_id,
            } => self.on_cancel(ix, seq, ts, cl_ord_id, orig_cl_ord_id, None, out),
            FixMsg::Replace {
                cl_ord_id,
                orig_cl_ord_id,
                symbol,
                price,
                qty,
            } => self.on_cancel(
                ix,
                seq,
                ts,
                cl_ord_id,
                orig_cl_ord_id,
                Some((*symbol, *price, *qty)),
                out,
            ),
            FixMsg::MassCancel {
                cl_ord_id,
                request_type,
                symbol,
                side,
            } => self.on_mass_cancel(ix, seq, ts, cl_ord_id, *request_type, *symbol, *side, out),
            FixMsg::Status { cl_ord_id, echo } => {
                self.on_status(ix, seq, ts, cl_ord_id, echo.as_bytes(), out)
            }
            FixMsg::Invalid {
                kind,
                msg_type,
                ref_tag,
                cl_ord_id,
                orig_cl_ord_id,
                reason,
                echo,
            } => match kind {
                InvalidKind::Session => {
                    self.session_reject(ix, ts, msg_seq, *ref_tag, msg_type, reason, out)
                }
                InvalidKind::Business => {
                    self.business_reject(ix, ts, msg_seq, msg_type, cl_ord_id, reason, out)
                }
                InvalidKind::Order => {
                    self.order_reject(ix, seq, ts, cl_ord_id, reason, echo.as_bytes(), out)
                }
                InvalidKind::CancelReject { replace } => self.cancel_reject_text(
                    ix,
                    ts,
                    cl_ord_id,
                    orig_cl_ord_id,
                    *replace,
                    1,
                    reason,
                    out,
                ),
            },
            FixMsg::Busy {
                msg_type,
                cl_ord_id,
                orig_cl_ord_id,
                echo,
            } => {
                self.stats.busy_rejects += 1;
                match msg_type.as_str() {
                    "D" => self.order_reject(
                        ix,
                        seq,
                        ts,
                        cl_ord_id,
                        "exchange busy",
                        echo.as_bytes(),
                        out,
                    ),
                    "F" | "G" => self.cancel_reject(
                        ix,
                        ts,
                        cl_ord_id,
                        orig_cl_ord_id,
                        None,
                        msg_type == "G",
                        3,
                        "exchange busy",
                        out,
                    ),
                    _ => self.business_reject(
                        ix,
                        ts,
                        msg_seq,
                        msg_type,
                        cl_ord_id,
                        "exchange busy",
                        out,
                    ),
                }
            }
        }
    }

    fn on_logon(&mut self, ts: u64, conn: ConnId, msg_seq: u64, msg: &FixMsg, out: &mut Outbox) {
        let FixMsg::Logon {
            sender,
            target,
            begin_string,
            heartbeat_secs,
            reset,
            password,
        } = msg
        else {
            return;
        };
        let found = self
            .cfg
            .sessions
            .iter()
            .position(|d| &d.sender_comp_id == sender && &d.target_comp_id == target);
        let refuse = |out: &mut Outbox, text: &str| {
            let mut w = MsgWriter::new();
            w.str(35, "5").u64(34, 1).str(49, target).str(56, sender);
            let mut t = Vec::new();
            push_utc_timestamp(&mut t, ts);
            w.field(52, &t).str(58, text);
            let start = out.buf.len();
            w.finish(begin_string, &mut out.buf);
            out.items.push(OutItem {
                conn,
                start,
                end: out.buf.len(),
                close: true,
            });
        };
        let Some(ix) = found else {
            refuse(out, "unknown SenderCompID/TargetCompID");
            return;
        };
        let def = &self.cfg.sessions[ix];
        if &def.begin_string != begin_string {
            refuse(out, "wrong BeginString");
            return;
        }
        if let Some(pw) = &def.password {
            if pw != password {
                refuse(out, "bad password");
                return;
            }
        }
        if self.sessions[ix].conn.is_some() {
            refuse(out, "session already logged on");
            return;
        }
        if *heartbeat_secs == 0 || *heartbeat_secs > 3600 {
            refuse(out, "HeartBtInt(108) must be 1..3600");
            return;
        }
        let s = &mut self.sessions[ix];
        if *reset {
            s.in_seq = 1;
            s.out_seq = 1;
            s.store.clear();
            if self.last_seq > self.bound_seq {
                // Numbers start again after the bounding checkpoint: store them all.
                s.skip_below = 0;
            }
        }
        if msg_seq < s.in_seq {
            let text = format!(
                "MsgSeqNum too low, expecting {} but received {}",
                s.in_seq, msg_seq
            );
            refuse(out, &text);
            return;
        }
        s.conn = Some(conn);
        s.heartbeat_secs = *heartbeat_secs;
        s.last_recv_ns = ts;
        s.test_request_sent_ns = 0;
        s.logout_sent = false;
        s.resend_until = 0;
        let gap = msg_seq > s.in_seq;
        if !gap {
            s.in_seq += 1;
        }
        self.conns.put(conn, ix as u32);
        let mut b = std::mem::take(&mut self.body);
        b.clear();
        b.extend_from_slice(b"98=0\x01108=");
        push_u64(&mut b, *heartbeat_secs as u64);
        b.push(1);
        if *reset {
            b.extend_from_slice(b"141=Y\x01");
        }
        if begin_string == "FIXT.1.1" {
            // DefaultApplVerID: FIX 5.0 SP2.
            b.extend_from_slice(b"1137=9\x01");
        }
        self.send(ix as u16, b'A', ts, &b, out);
        if gap {
            let s = &mut self.sessions[ix];
            s.resend_until = msg_seq;
            b.clear();
            b.extend_from_slice(b"7=");
            push_u64(&mut b, s.in_seq);
            b.extend_from_slice(b"\x0116=0\x01");
            self.send(ix as u16, b'2', ts, &b, out);
        }
        self.body = b;
    }

    fn on_logout(&mut self, ix: u16, ts: u64, conn: ConnId, out: &mut Outbox) {
        if !self.sessions[ix as usize].logout_sent {
            self.send_logout(ix, ts, "", out);
        }
        out.close(conn);
        self.unbind(conn);
    }

    fn send_logout(&mut self, ix: u16, ts: u64, text: &str, out: &mut Outbox) {
        let mut b = std::mem::take(&mut self.body);
        b.clear();
        if !text.is_empty() {
            b.extend_from_slice(b"58=");
            b.extend_from_slice(text.as_bytes());
            b.push(1);
        }
        self.send(ix, b'5', ts, &b, out);
        self.body = b;
        self.sessions[ix as usize].logout_sent = true;
    }

    /// Sends (and for application messages, stores) one message on session `ix`. Messages to
    /// a session with no connection are still numbered and stored: the client gets them by
    /// ResendRequest after its next logon.
    fn send(&mut self, ix: u16, msg_type: u8, ts: u64, body: &[u8], out: &mut Outbox) {
        let s = &mut self.sessions[ix as usize];
        let seq = s.out_seq;
        s.out_seq += 1;
        s.last_sent_ns = ts;
        let is_app = !matches!(msg_type, b'0' | b'1' | b'2' | b'3' | b'4' | b'5' | b'A');
        if is_app && seq >= s.skip_below {
            s.store
                .push(seq, msg_type, ts, body, self.cfg.resend_store_max);
        }
        if let Some(conn) = s.conn {
            if !self.replaying {
                self.write(ix, conn, msg_type, seq, ts, None, body, out);
            }
        }
    }

    /// Writes session `ix`'s newest stored message (a recipe just stored with
    /// `Session::push_recipe`, number `seq`) to its live connection, formatted in the session's
    /// FIX dialect; nothing when it has none or in replay (recipes are formatted only when sent).
    #[inline(always)]
    fn write_last_stored(&mut self, ix: u16, msg_type: u8, seq: u64, ts: u64, out: &mut Outbox) {
        if let Some(conn) = self.sessions[ix as usize].conn.filter(|_| !self.replaying) {
            self.write_stored(ix, conn, msg_type, seq, ts, out);
        }
    }

    /// `write_last_stored` to connection `conn`.
    fn write_stored(
        &mut self,
        ix: u16,
        conn: ConnId,
        msg_type: u8,
        seq: u64,
        ts: u64,
        out: &mut Outbox,
    ) {
        let mut b = std::mem::take(&mut self.body);
        b.clear();
        let fix42 = self.is_fix42(ix);
        let store = &self.sessions[ix as usize].store;
        store.body_into(store.last(), &self.cfg, fix42, &mut b);
        self.write(ix, conn, msg_type, seq, ts, None, &b, out);
        self.body = b;
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        ix: u16,
        conn: ConnId,
        msg_type: u8,
        seq: u64,
        ts: u64,
        orig_ts: Option<u64>,
        body: &[u8],
        out: &mut Outbox,
    ) {
        let def = &self.cfg.sessions[ix as usize];
        let w = &mut self.w;
        w.clear();
        // Tags as text (no number to format), and the body copied once, by `finish_with`.
        w.field_at(b"35=", &[msg_type])
            .u64_at(b"34=", seq)
            .field_at(b"49=", def.target_comp_id.as_bytes())
            .field_at(b"56=", def.sender_comp_id.as_bytes());
        if let Some(o) = orig_ts {
            w.field_at(b"43=", b"Y")
                .field_at(b"52=", &utc_timestamp(ts))
                .field_at(b"122=", &utc_timestamp(o));
        } else {
            w.field_at(b"52=", &utc_timestamp(ts));
        }
        let start = out.buf.len();
        w.finish_with(&def.begin_string, body, &mut out.buf);
        out.items.push(OutItem {
            conn,
            start,
            end: out.buf.len(),
            close: false,
        });
    }

    /// True if session `ix` speaks FIX 4.2 (ExecutionReports in its dialect: `encode_exec`).
    fn is_fix42(&self, ix: u16) -> bool {
        self.cfg.sessions[ix as usize].begin_string == "FIX.4.2"
    }

    /// Answers a ResendRequest: stored application messages with PossDupFlag=Y and
    /// OrigSendingTime, SequenceReset-GapFill over admin messages and anything not stored.
    fn resend(&mut self, ix: u16, ts: u64, begin: u64, end: u64, out: &mut Outbox) {
        if self.replaying {
            return; // output only
        }
        let fix42 = self.is_fix42(ix);
        let s = &self.sessions[ix as usize];
        let Some(conn) = s.conn else { return };
        let last = s.out_seq - 1;
        let end = if end == 0 || end > last { last } else { end };
        let begin = begin.max(1);
        if begin > end {
            return;
        }
        let msgs: Vec<Stored> = s
            .store
            .live(self.cfg.resend_store_max)
            .filter(|m| m.seq >= begin && m.seq <= end)
            .map(|m| Stored {
                seq: m.seq,
                msg_type: m.msg_type,
                sending_ts: m.sending_ts,
                body: {
                    let mut b = Vec::with_capacity(256);
                    s.store.body_into(m, &self.cfg, fix42, &mut b);
                    b
                },
            })
            .collect();
        let mut next = begin;
        let mut b = Vec::with_capacity(32);
        let gap_fill =
            |this: &mut Exchange, from: u64, to: u64, b: &mut Vec<u8>, out: &mut Outbox| {
                b.clear();
                b.extend_from_slice(b"123=Y\x0136=");
                push_u64(b, to);
                b.push(1);
                this.write(ix, conn, b'4', from, ts, Some(ts), b, out);
            };
        for m in msgs {
            if m.seq > next {
                gap_fill(self, next, m.seq, &mut b, out);
            }
            self.write(
                ix,
                conn,
                m.msg_type,
                m.seq,
                ts,
                Some(m.sending_ts),
                &m.body,
                out,
            );
            next = m.seq + 1;
        }
        if next <= end {
            gap_fill(self, next, end + 1, &mut b, out);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn session_reject(
        &mut self,
        ix: u16,
        ts: u64,
        ref_seq: u64,
        ref_tag: u32,
        msg_type: &str,
        text: &str,
        out: &mut Outbox,
    ) {
        let mut b = std::mem::take(&mut self.body);
        b.clear();
        b.extend_from_slice(b"45=");
        push_u64(&mut b, ref_seq);
        b.push(1);
        if ref_tag != 0 {
            b.extend_from_slice(b"371=");
            push_u64(&mut b, ref_tag as u64);
            b.push(1);
        }
        if !msg_type.is_empty() {
            b.extend_from_slice(b"372=");
            b.extend_from_slice(msg_type.as_bytes());
            b.push(1);
        }
        b.extend_from_slice(b"58=");
        b.extend_from_slice(text.as_bytes());
        b.push(1);
        self.send(ix, b'3', ts, &b, out);
        self.body = b;
    }

    #[allow(clippy::too_many_arguments)]
    fn business_reject(
        &mut self,
        ix: u16,
        ts: u64,
        ref_seq: u64,
        msg_type: &str,
        cl_ord_id: &ClOrdId,
        text: &str,
        out: &mut Outbox,
    ) {
        let mut b = std::mem::take(&mut self.body);
        b.clear();
        b.extend_from_slice(b"45=");
        push_u64(&mut b, ref_seq);
        b.extend_from_slice(b"\x01372=");
        b.extend_from_slice(msg_type.as_bytes());
        b.push(1);
        if !cl_ord_id.is_empty() {
            b.extend_from_slice(b"379=");
            b.extend_from_slice(cl_ord_id.as_bytes());
            b.push(1);
        }
        // 380: 3 = unsupported message type, 0 = other (including "exchange busy").
        let reason: &[u8] = if text.starts_with("unsupported") {
            b"3"
        } else {
            b"0"
        };
        b.extend_from_slice(b"380=");
        b.extend_from_slice(reason);
        b.extend_from_slice(b"\x0158=");
        b.extend_from_slice(text.as_bytes());
        b.push(1);
        self.send(ix, b'j', ts, &b, out);
        self.body = b;
    }

    /// ExecutionReport ExecType=8 for a NewOrderSingle refused before reaching the engine.
    #[allow(clippy::too_many_arguments)]
    fn order_reject(
        &mut self,
        ix: u16,
        seq: u64,
        ts: u64,
        cl_ord_id: &ClOrdId,
        text: &str,
        echo: &[u8],
        out: &mut Outbox,
    ) {
        let mut b = std::mem::take(&mut self.body);
        b.clear();
        let codes = if self.is_fix42(ix) {
            b".0\x0120=0\x01150=8\x0139=8\x01".as_slice()
        } else {
            b".0\x01150=8\x0139=8\x01"
        };
        push_orderless_report(&mut b, cl_ord_id, seq, codes, echo);
        b.extend_from_slice(b"103=");
        let code: &[u8] = if text.starts_with("unknown symbol") {
            b"1"
        } else if text.starts_with("duplicate") {
            b"6"
        } else if self.is_fix42(ix) {
            b"0"
        } else {
            b"99"
        };
        b.extend_from_slice(code);
        b.extend_from_slice(b"\x0158=");
        b.extend_from_slice(text.as_bytes());
        b.extend_from_slice(b"\x0160=");
        push_utc_timestamp(&mut b, ts);
        b.push(1);
        self.stats.execution_reports += 1;
        self.send(ix, b'8', ts, &b, out);
        self.body = b;
    }

    /// OrderCancelReject with a fixed text: stored as a recipe, formatted only when written
    /// to a live connection or resent (never in replay).
    #[allow(clippy::too_many_arguments)]
    fn cancel_reject(
        &mut self,
        ix: u16,
        ts: u64,
        cl_ord_id: &ClOrdId,
        orig_cl_ord_id: &ClOrdId,
        order: Option<(OrderId, u8)>,
        replace: bool,
        reason_code: u8,
        text: &'static str,
        out: &mut Outbox,
    ) {
        let (seq, m) = self.sessions[ix as usize].next_stored(
            b'9',
            ts,
            cl_ord_id.as_bytes(),
            Some(orig_cl_ord_id.as_bytes()),
            self.cfg.resend_store_max,
        );
        m.body = Body::CancelReject(CancelRejectRecipe {
            order,
            replace,
            reason_code,
            text,
        });
        self.write_last_stored(ix, b'9', seq, ts, out);
    }

    /// OrderCancelReject with a text from the input (stored as bytes).
    #[allow(clippy::too_many_arguments)]
    fn cancel_reject_text(
        &mut self,
        ix: u16,
        ts: u64,
        cl_ord_id: &ClOrdId,
        orig_cl_ord_id: &ClOrdId,
        replace: bool,
        reason_code: u8,
        text: &str,
        out: &mut Outbox,
    ) {
        let mut b = std::mem::take(&mut self.body);
        b.clear();
        let recipe = CancelRejectRecipe {
            order: None,
            replace,
            reason_code,
            text: "",
        };
        encode_cancel_reject_with(
            &recipe,
            cl_ord_id.as_bytes(),
            orig_cl_ord_id.as_bytes(),
            text,
            &mut b,
        );
        self.send(ix, b'9', ts, &b, out);
        self.body = b;
    }

    fn firm_account(&self, ix: u16, requested: Option<u32>) -> Option<u32> {
        let firm = &self.cfg.firms[self.cfg.sessions[ix as usize].firm];
        match requested {
            None => Some(firm.accounts[0]),
            Some(a) if firm.accounts.contains(&a) => Some(a),
            Some(_) => None,
        }
    }

    fn on_new(&mut self, ix: u16, seq: u64, ts: u64, n: &NewOrderMsg, out: &mut Outbox) {
        self.stats.orders += 1;
        if n.symbol as usize >= self.cfg.instruments.len() {
            // Only a journal written with a longer instrument list can say this.
            return self.order_reject(ix, seq, ts, &n.cl_ord_id, "unknown symbol", b"", out);
        }
        let cl_hash = self.cl.hash_pre(ix, n.cl_ord_id.as_bytes(), self.pre.cl);
        if self
            .cl_find(false, cl_hash, ix, n.cl_ord_id.as_bytes())
            .is_some()
        {
            let echo = self.echo_new(n);
            return self.order_reject(ix, seq, ts, &n.cl_ord_id, "duplicate ClOrdID", &echo, out);
        }
        let Some(account) = self.firm_account(ix, n.account) else {
            let echo = self.echo_new(n);
            return self.order_reject(ix, seq, ts, &n.cl_ord_id, "unknown account", &echo, out);
        };
        let id = self.next_order_id;
        self.next_order_id += 1;
        let cl = &n.cl_ord_id;
        self.remember_cl_ord_id(cl_hash, ix, cl, id);
        let cmd = Command::New(NewOrder {
            id,
            account,
            symbol: n.symbol,
            side: n.side,
            ord_type: n.ord_type,
            tif: n.tif,
            price: if n.ord_type == OrdType::Market {
                0
            } else {
                n.price
            },
            qty: n.qty,
            post_only: n.post_only,
            stp: StpMode::CancelNewest,
        });
        // Remember the order's static fields before the engine runs: its events refer to it.
        let price = if n.ord_type == OrdType::Market {
            0
        } else {
            n.price
        };
        self.orders.insert_new_live(id, |o| {
            o.session = ix;
            o.account = account;
            o.symbol = n.symbol;
            o.side = n.side;
            o.ord_type = n.ord_type;
            o.tif = n.tif;
            o.price = price;
            o.cl_ord_id = *cl;
            o.order_qty = n.qty;
            o.cum_qty = 0;
            o.leaves_qty = n.qty;
            o.notional = 0;
            o.done_status = 0;
        });
        let mut ctx = Ctx {
            session: ix,
            seq,
            ts,
            exec_n: 0,
            cl_ord_id: cl,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: CtxKind::New,
            mass_count: 0,
        };
        self.run(&cmd, &mut ctx, out);
    }

    #[allow(clippy::too_many_arguments)]
    fn on_cancel(
        &mut self,
        ix: u16,
        seq: u64,
        ts: u64,
        cl_ord_id: &ClOrdId,
        orig_cl_ord_id: &ClOrdId,
        replace: Option<(u32, i64, u64)>,
        out: &mut Outbox,
    ) {
        let is_replace = replace.is_some();
        let orig_hash = self
            .cl
            .hash_pre(ix, orig_cl_ord_id.as_bytes(), self.pre.orig);
        let found = self.cl_find(true, orig_hash, ix, orig_cl_ord_id.as_bytes());
        let live = found
            .and_then(|id| self.orders.live(&id).map(|o| (id, o)))
            .filter(|(_, o)| o.done_status == 0 && o.session == ix)
            .map(|(id, o)| {
                (
                    id,
                    ord_status(o),
                    o.account,
                    o.symbol,
                    o.cum_qty,
                    o.ord_type,
                )
            });
        let Some((id, status, account, symbol, cum, ord_type)) = live else {
            return self.cancel_reject(
                ix,
                ts,
                cl_ord_id,
                orig_cl_ord_id,
                None,
                is_replace,
                1,
                "unknown order",
                out,
            );
        };
        let cl_hash = self.cl.hash_pre(ix, cl_ord_id.as_bytes(), self.pre.cl);
        if self
            .cl_find(false, cl_hash, ix, cl_ord_id.as_bytes())
            .is_some()
        {
            return self.cancel_reject(
                ix,
                ts,
                cl_ord_id,
                orig_cl_ord_id,
                Some((id, status)),
                is_replace,
                6,
                "duplicate ClOrdID",
                out,
            );
        }
        let cmd = match replace {
            None => Command::Cancel {
                id,
                account,
                symbol,
            },
            Some((new_symbol, price, qty)) => {
                let reason = if new_symbol != symbol {
                    Some("symbol differs from the order's")
                } else if qty <= cum {
                    Some("OrderQty at or below the filled quantity")
                } else if ord_type == OrdType::Market {
                    Some("market orders cannot be replaced")
                } else {
                    None
                };
                if let Some(r) = reason {
                    return self.cancel_reject(
                        ix,
                        ts,
                        cl_ord_id,
                        orig_cl_ord_id,
                        Some((id, status)),
                        true,
                        99,
                        r,
                        out,
                    );
                }
                Command::Replace {
                    id,
                    account,
                    symbol,
                    price,
                    qty: qty - cum,
                }
            }
        };
        self.remember_cl_ord_id(cl_hash, ix, cl_ord_id, id);
        let mut ctx = Ctx {
            session: ix,
            seq,
            ts,
            exec_n: 0,
            cl_ord_id,
            orig_cl_ord_id,
            kind: if is_replace {
                CtxKind::Replace
            } else {
                CtxKind::Cancel
            },
            mass_count: 0,
        };
        self.run(&cmd, &mut ctx, out);
    }

    #[allow(clippy::too_many_arguments)]
    fn on_mass_cancel(
        &mut self,
        ix: u16,
        seq: u64,
        ts: u64,
        cl_ord_id: &ClOrdId,
        request_type: u8,
        symbol: Option<u32>,
        side: Option<Side>,
        out: &mut Outbox,
    ) {
        let mut ctx = Ctx {
            session: ix,
            seq,
            ts,
            exec_n: 0,
            cl_ord_id,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: CtxKind::Mass,
            mass_count: 0,
        };
        let reject = match request_type {
            7 => None,
            1 if symbol.is_some() => None,
            1 => Some("MassCancelRequestType 1 needs Symbol(55)"),
            _ => Some("unsupported MassCancelRequestType (use 1 or 7)"),
        };
        if reject.is_none() {
            let firm = self.cfg.sessions[ix as usize].firm;
            // The config is shared: a reference count, not a copy of the account list.
            let cfg = self.cfg.clone();
            let symbol = if request_type == 7 { None } else { symbol };
            for &account in &cfg.firms[firm].accounts {
                let cmd = Command::MassCancel {
                    account,
                    symbol,
                    side,
                };
                self.run(&cmd, &mut ctx, out);
            }
        }
        let mut b = std::mem::take(&mut self.body);
        b.clear();
        b.extend_from_slice(b"11=");
        b.extend_from_slice(cl_ord_id.as_bytes());
        b.extend_from_slice(b"\x0137=");
        push_u64(&mut b, seq);
        b.extend_from_slice(b"\x01530=");
        push_u64(&mut b, request_type as u64);
        b.extend_from_slice(b"\x01531=");
        match reject {
            None => push_u64(&mut b, request_type as u64),
            Some(_) => b.push(b'0'),
        }
        b.extend_from_slice(b"\x01533=");
        push_u64(&mut b, ctx.mass_count);
        b.push(1);
        if self.cfg.sessions[ix as usize].begin_string == "FIXT.1.1" {
            b.extend_from_slice(b"1369=");
            push_u64(&mut b, seq);
            b.push(1);
        }
        if let Some(s) = symbol {
            b.extend_from_slice(b"55=");
            b.extend_from_slice(self.symbol_str(s).as_bytes());
            b.push(1);
        }
        if let Some(side) = side {
            b.extend_from_slice(b"54=");
            b.push(side_char(side));
            b.push(1);
        }
        if let Some(r) = reject {
            b.extend_from_slice(b"532=99\x0158=");
            b.extend_from_slice(r.as_bytes());
            b.push(1);
        }
        self.send(ix, b'r', ts, &b, out);
        self.body = b;
    }

    /// Symbol, Side, OrderQty, OrdType and Price of a new order, for its reject.
    fn echo_new(&self, n: &NewOrderMsg) -> Vec<u8> {
        let mut b = Vec::with_capacity(64);
        let inst = self.cfg.instruments[n.symbol as usize];
        b.extend_from_slice(b"55=");
        b.extend_from_slice(inst.instrument.symbol.as_str().as_bytes());
        b.extend_from_slice(b"\x0154=");
        b.push(side_char(n.side));
        b.extend_from_slice(b"\x0138=");
        push_u64(&mut b, n.qty);
        b.extend_from_slice(b"\x0140=");
        b.push(if n.ord_type == OrdType::Market {
            b'1'
        } else {
            b'2'
        });
        if n.ord_type == OrdType::Limit {
            b.extend_from_slice(b"\x0144=");
            push_price(&mut b, n.price as i128, 1, inst);
        }
        b.push(1);
        b
    }

    fn on_status(
        &mut self,
        ix: u16,
        seq: u64,
        ts: u64,
        cl_ord_id: &ClOrdId,
        echo: &[u8],
        out: &mut Outbox,
    ) {
        let h = self.cl.hash(ix, cl_ord_id.as_bytes());
        let id = self.cl_find(false, h, ix, cl_ord_id.as_bytes());
        let Some(id) = id.filter(|id| self.orders.get(id).is_some()) else {
            let mut b = std::mem::take(&mut self.body);
            b.clear();
            // FIX 4.2: a status answer is ExecTransType 3 with the OrdStatus as ExecType.
            let codes = if self.is_fix42(ix) {
                b".0\x0120=3\x01150=8\x0139=8\x01".as_slice()
            } else {
                b".0\x01150=I\x0139=8\x01"
            };
            push_orderless_report(&mut b, cl_ord_id, seq, codes, echo);
            b.extend_from_slice(b"58=unknown order\x01");
            self.stats.execution_reports += 1;
            self.send(ix, b'8', ts, &b, out);
            self.body = b;
            return;
        };
        let mut ctx = Ctx {
            session: ix,
            seq,
            ts,
            exec_n: 0,
            cl_ord_id,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: CtxKind::Other,
            mass_count: 0,
        };
        self.exec_report(&mut ctx, id, b'I', None, None, out);
    }

    fn symbol_str(&self, symbol: u32) -> &str {
        self.cfg
            .instruments
            .get(symbol as usize)
            .map(|i| i.instrument.symbol.as_str())
            .unwrap_or("?")
    }

    /// Applies one engine command and turns its events into messages.
    fn run(&mut self, cmd: &Command, ctx: &mut Ctx<'_>, out: &mut Outbox) {
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        if let Some(log) = &mut self.event_log {
            self.engine.apply(cmd, &mut events);
            log.extend_from_slice(&events);
        } else {
            let mut sink = OrderEvents {
                events: &mut events,
                orders: &self.orders,
            };
            self.engine.apply(cmd, &mut sink);
        }
        for ev in &events {
            self.on_event(ev, ctx, out);
        }
        self.events = events;
    }

    fn on_event(&mut self, ev: &Event, ctx: &mut Ctx<'_>, out: &mut Outbox) {
        match *ev {
            Event::Accepted { id, .. } => self.exec_report(ctx, id, b'0', None, None, out),
            Event::Rejected { id, reason } => {
                let text = reject_text(reason);
                match ctx.kind {
                    CtxKind::New => {
                        let cl = *ctx.cl_ord_id;
                        let echo = match self.orders.remove_live(&id) {
                            Some(o) => self.echo_new(&NewOrderMsg {
                                cl_ord_id: ClOrdId::EMPTY,
                                symbol: o.symbol,
                                side: o.side,
                                ord_type: o.ord_type,
                                tif: o.tif,
                                price: o.price,
                                qty: o.order_qty,
                                account: None,
                                post_only: false,
                            }),
                            None => Vec::new(),
                        };
                        self.order_reject(ctx.session, ctx.seq, ctx.ts, &cl, text, &echo, out);
                    }
                    CtxKind::Cancel | CtxKind::Replace => {
                        let (cl, orig) = (*ctx.cl_ord_id, *ctx.orig_cl_ord_id);
                        let status = self.orders.get(&id).map(|o| (id, ord_status(o)));
                        let code = if reason == RejectReason::UnknownOrder {
                            1
                        } else {
                            99
                        };
                        self.cancel_reject(
                            ctx.session,
                            ctx.ts,
                            &cl,
                            &orig,
                            status,
                            ctx.kind == CtxKind::Replace,
                            code,
                            text,
                            out,
                        );
                    }
                    CtxKind::Mass | CtxKind::Other => {}
                }
            }
            Event::Trade {
                price,
                qty,
                maker_id,
                taker_id,
                maker_leaves,
                taker_leaves,
                ..
            } => {
                self.stats.trades += 1;
                for (id, leaves) in [(maker_id, maker_leaves), (taker_id, taker_leaves)] {
                    // Both sides are live orders: one lookup serves the update, the report
                    // and the retirement.
                    let Some(slot) = self.orders.slot(id) else {
                        continue;
                    };
                    let o = &mut self.orders.slab[slot as usize];
                    o.cum_qty += qty;
                    o.leaves_qty = leaves;
                    o.notional += price as i128 * qty as i128;
                    if leaves == 0 {
                        o.done_status = b'2';
                    }
                    self.exec_report_at(ctx, id, slot, b'F', Some((price, qty)), None, out);
                    if leaves == 0 {
                        self.orders.retire(id);
                    }
                }
            }
            Event::Canceled { id, reason, .. } => {
                if ctx.kind == CtxKind::Mass {
                    ctx.mass_count += 1;
                }
                let Some(slot) = self.orders.slot(id) else {
                    return;
                };
                let o = &mut self.orders.slab[slot as usize];
                o.leaves_qty = 0;
                o.done_status = b'4';
                let text = match reason {
                    CancelReason::User => None,
                    r => Some(r),
                };
                self.exec_report_at(ctx, id, slot, b'4', None, text, out);
                self.orders.retire(id);
            }
            Event::Replaced { id, price, qty, .. } => {
                let Some(slot) = self.orders.slot(id) else {
                    return;
                };
                let o = &mut self.orders.slab[slot as usize];
                o.price = price;
                o.leaves_qty = qty;
                o.order_qty = o.cum_qty + qty;
                o.cl_ord_id = *ctx.cl_ord_id;
                self.exec_report_at(ctx, id, slot, b'5', None, None, out);
            }
            Event::MassCanceled { .. } | Event::Level { .. } => {}
        }
    }

    /// Remembers that session `ix` used `cl_ord_id` (whose `ClIndex::hash` is `hash`) for
    /// order `id`, forgetting finished orders' ClOrdIDs beyond `CL_ORD_IDS_MAX`.
    fn remember_cl_ord_id(&mut self, hash: u64, ix: u16, cl_ord_id: &ClOrdId, id: OrderId) {
        self.cl.push_hashed(hash, ix, cl_ord_id.as_bytes(), id);
        if self.cl.len() > self.cl_max {
            self.cl.prefetch_rotation();
        }
        // Forget the oldest ClOrdIDs but live orders' current ones, which go to the back (at
        // most `ROTATIONS_MAX` of them per call).
        let mut rotations = ROTATIONS_MAX;
        while self.cl.len() > self.cl_max && rotations > 0 {
            rotations -= 1;
            let orders = &self.orders;
            self.cl.rotate_or_forget(|oid, cl| {
                orders
                    .live(&oid)
                    .is_some_and(|o| o.done_status == 0 && eq_short(o.cl_ord_id.as_bytes(), cl))
            });
        }
    }

    /// ExecutionReport for order `id` to its owning session (nothing if it is not remembered).
    #[inline]
    fn exec_report(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: OrderId,
        exec_type: u8,
        last: Option<(i64, u64)>,
        text: Option<CancelReason>,
        out: &mut Outbox,
    ) {
        if let Some(slot) = self.orders.slot(id) {
            self.exec_report_at(ctx, id, slot, exec_type, last, text, out);
        }
    }

    /// `exec_report` for order `id`, whose record is at `slot`. The check that a bounded replay
    /// only numbers the report is inline (most reports of such a replay: no call at all); the
    /// report itself is built out of line.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn exec_report_at(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: OrderId,
        slot: u32,
        exec_type: u8,
        last: Option<(i64, u64)>,
        text: Option<CancelReason>,
        out: &mut Outbox,
    ) {
        let session = self.orders.slab[slot as usize].session;
        if self.sessions[session as usize].skip_unstored(ctx.ts) {
            ctx.exec_n += 1;
            self.stats.execution_reports += 1;
            return;
        }
        self.exec_report_built(ctx, id, slot, exec_type, last, text, out);
    }

    /// `exec_report_at` for a report that is stored (and sent if the session is connected).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn exec_report_built(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: OrderId,
        slot: u32,
        exec_type: u8,
        last: Option<(i64, u64)>,
        text: Option<CancelReason>,
        out: &mut Outbox,
    ) {
        let o = &self.orders.slab[slot as usize];
        let ts = ctx.ts;
        let session = o.session;
        // The requester's ClOrdID on its own cancel/replace; the order's own otherwise.
        let own_request = o.session == ctx.session
            && matches!(
                ctx.kind,
                CtxKind::Cancel | CtxKind::Replace | CtxKind::Other
            )
            && matches!(exec_type, b'4' | b'5' | b'I');
        // Borrowed, not cloned: an Arc clone and drop per report cost two atomic operations.
        let (cl, orig): (&[u8], Option<&[u8]>) = if own_request {
            let orig = (!ctx.orig_cl_ord_id.is_empty()).then(|| ctx.orig_cl_ord_id.as_bytes());
            (ctx.cl_ord_id.as_bytes(), orig)
        } else {
            (o.cl_ord_id.as_bytes(), None)
        };
        // `send` of an ExecutionReport, with the borrows split by field (`cl` may borrow
        // the order record): the recipe is written into its store slot, then the message if
        // the session is connected.
        let (seq, m) = self.sessions[session as usize].next_stored(
            b'8',
            ts,
            cl,
            orig,
            self.cfg.resend_store_max,
        );
        m.body = Body::Exec(ExecRecipe {
            order_id: id,
            exec_seq: ctx.seq,
            exec_n: ctx.exec_n,
            exec_type,
            ord_status: ord_status(o),
            side: o.side,
            ord_type: o.ord_type,
            tif: o.tif,
            account: o.account,
            symbol: o.symbol,
            price: o.price,
            order_qty: o.order_qty,
            last,
            leaves_qty: o.leaves_qty,
            cum_qty: o.cum_qty,
            notional: o.notional,
            text,
        });
        ctx.exec_n += 1;
        self.stats.execution_reports += 1;
        self.write_last_stored(session, b'8', seq, ts, out);
    }

    /// Engine hash and gateway hash, combined: equal exactly when engine state and every
    /// session's sequence numbers, store, ClOrdIDs and order records are equal.
    pub fn state_hash(&self) -> u64 {
        let mut buf = Vec::new();
        self.snapshot_gateway(&mut buf);
        self.combine_hash(&buf)
    }

    fn combine_hash(&self, gateway_state: &[u8]) -> u64 {
        let g = hash_bytes(gateway_state);
        self.engine.state_hash() ^ g.rotate_left(17).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// Appends the full state (gateway then engine) to `out`.
    pub fn snapshot(&self, out: &mut Vec<u8>) {
        self.snapshot_and_hash(out);
    }

    /// `snapshot` and `state_hash` in one pass over the state (the snapshot stall matters).
    pub fn snapshot_and_hash(&self, out: &mut Vec<u8>) -> u64 {
        out.extend_from_slice(SNAP_MAGIC);
        let len_at = out.len();
        out.extend_from_slice(&0u64.to_le_bytes());
        let start = out.len();
        self.snapshot_gateway(out);
        let len = (out.len() - start) as u64;
        out[len_at..len_at + 8].copy_from_slice(&len.to_le_bytes());
        let hash = self.combine_hash(&out[start..]);
        self.engine.snapshot(out);
        hash
    }

    fn snapshot_gateway(&self, out: &mut Vec<u8>) {
        // Reserve about what it takes, so a large state is not copied by doubling (at most
        // one more allocation when ClOrdIDs are long).
        let stored: usize = self
            .sessions
            .iter()
            .map(|s| s.store.live_len(self.cfg.resend_store_max))
            .sum();
        let orders = self.orders.live.len + self.orders.done.len();
        out.reserve(64 + self.cl.len() * 24 + orders * 64 + stored * 96);
        let mut scratch = Vec::with_capacity(256);
        let mut e = SnapWriter(out);
        e.u64(self.last_seq);
        e.u64(self.next_order_id);
        e.u64(self.cfg.instruments.len() as u64);
        e.u64(self.sessions.len() as u64);
        for s in &self.sessions {
            e.u64(s.in_seq);
            e.u64(s.out_seq);
            e.u64(s.conn.unwrap_or(0));
            e.u64(s.conn.is_some() as u64);
            e.u64(s.heartbeat_secs as u64);
            e.u64(s.last_recv_ns);
            e.u64(s.last_sent_ns);
            e.u64(s.test_request_sent_ns);
            e.u64(s.logout_sent as u64);
            e.u64(s.resend_until);
            let live = s.store.live(self.cfg.resend_store_max);
            e.u64(s.store.live_len(self.cfg.resend_store_max) as u64);
            for m in live {
                e.u64(m.seq);
                e.u64(m.msg_type as u64);
                e.u64(m.sending_ts);
                match &m.body {
                    Body::Bytes => {
                        e.u64(0);
                        e.bytes(s.store.bytes_of(m));
                    }
                    // Stored as the bytes it stands for (the snapshot layout predates it).
                    Body::CancelReject(_) => {
                        e.u64(0);
                        scratch.clear();
                        s.store.body_into(m, &self.cfg, false, &mut scratch);
                        e.bytes(&scratch);
                    }
                    Body::Exec(r) => {
                        e.u64(1);
                        e.u64(r.order_id);
                        let (cl, orig) = s.store.ids(m);
                        e.bytes(cl);
                        match orig {
                            Some(o) => {
                                e.u64(1);
                                e.bytes(o);
                            }
                            None => e.u64(0),
                        }
                        e.u64(r.exec_seq);
                        e.u64(r.exec_n as u64);
                        e.u64(r.exec_type as u64);
                        e.u64(r.ord_status as u64);
                        e.u64(side_char(r.side) as u64);
                        e.u64(ord_type_code(r.ord_type));
                        e.u64(tif_code(r.tif));
                        e.u64(r.account as u64);
                        e.u64(r.symbol as u64);
                        e.u64(r.price as u64);
                        e.u64(r.order_qty);
                        match r.last {
                            Some((px, qty)) => {
                                e.u64(1);
                                e.u64(px as u64);
                                e.u64(qty);
                            }
                            None => e.u64(0),
                        }
                        e.u64(r.leaves_qty);
                        e.u64(r.cum_qty);
                        e.bytes(&r.notional.to_le_bytes());
                        e.u64(r.text.map_or(0, |t| {
                            CANCEL_REASONS
                                .iter()
                                .position(|c| *c == t)
                                .map_or(0, |i| i + 1) as u64
                        }));
                    }
                }
            }
        }
        e.u64(self.cl.len() as u64);
        for (session, cl, order) in self.cl.iter() {
            e.u64(session as u64);
            e.u64(order);
            e.bytes(cl);
        }
        let orders = self.orders.sorted();
        e.u64(orders.len() as u64);
        for (id, o) in orders {
            e.u64(id);
            e.u64(o.session as u64);
            e.u64(o.account as u64);
            e.u64(o.symbol as u64);
            e.u64(side_char(o.side) as u64);
            e.u64(ord_type_code(o.ord_type));
            e.u64(tif_code(o.tif));
            e.u64(o.price as u64);
            e.bytes(o.cl_ord_id.as_bytes());
            e.u64(o.order_qty);
            e.u64(o.cum_qty);
            e.u64(o.leaves_qty);
            e.bytes(&o.notional.to_le_bytes());
            e.u64(o.done_status as u64);
        }
        e.u64(self.orders.done.len() as u64);
        for (id, _) in &self.orders.done {
            e.u64(*id);
        }
    }

    /// True if `bytes` starts with this version's snapshot magic (older layouts have another).
    pub fn snapshot_format_matches(bytes: &[u8]) -> bool {
        bytes.starts_with(SNAP_MAGIC)
    }

    /// Rebuilds an exchange from `snapshot` bytes taken with the same configuration.
    pub fn restore(cfg: Arc<Config>, bytes: &[u8]) -> Result<Exchange, String> {
        Self::restore_with(cfg, bytes, Backing::Resident)
    }

    /// `restore`, with the large tables backed as `backing` says.
    pub fn restore_with(
        cfg: Arc<Config>,
        bytes: &[u8],
        backing: Backing,
    ) -> Result<Exchange, String> {
        let mut x = Exchange::with_backing(cfg, backing);
        let mut r = SnapReader(bytes);
        if r.take(SNAP_MAGIC.len())? != SNAP_MAGIC {
            return Err("snapshot: bad magic".into());
        }
        let len = r.fixed_u64()?;
        if len > r.0.len() as u64 {
            return Err("snapshot: truncated".into());
        }
        let gateway = r.take(len as usize)?;
        x.engine = Engine::restore(r.0).map_err(|e| format!("snapshot: engine: {e:?}"))?;
        let mut r = SnapReader(gateway);
        x.last_seq = r.u64()?;
        x.next_order_id = r.u64()?;
        if r.u64()? != x.cfg.instruments.len() as u64 {
            return Err("snapshot: instrument count differs from the config".into());
        }
        let n = r.u64()? as usize;
        if n != x.sessions.len() {
            return Err(format!(
                "snapshot: {n} sessions but the config has {}",
                x.sessions.len()
            ));
        }
        for s in &mut x.sessions {
            s.in_seq = r.u64()?;
            s.out_seq = r.u64()?;
            let conn = r.u64()?;
            s.conn = (r.u64()? == 1).then_some(conn);
            s.heartbeat_secs = r.u64()? as u32;
            s.last_recv_ns = r.u64()?;
            s.last_sent_ns = r.u64()?;
            s.test_request_sent_ns = r.u64()?;
            s.logout_sent = r.u64()? == 1;
            s.resend_until = r.u64()?;
            for _ in 0..r.count()? {
                let seq = r.u64()?;
                let msg_type = r.u64()? as u8;
                let sending_ts = r.u64()?;
                match r.u64()? {
                    0 => {
                        let body = r.bytes()?;
                        s.store.push(seq, msg_type, sending_ts, body, usize::MAX);
                    }
                    1 => {
                        let (recipe, cl, orig) = read_exec_recipe(&mut r, x.cfg.instruments.len())?;
                        s.store.push_recipe(
                            seq,
                            b'8',
                            sending_ts,
                            Body::Exec(recipe),
                            cl,
                            orig,
                            usize::MAX,
                        );
                    }
                    k => return Err(format!("snapshot: stored message kind {k}")),
                }
            }
        }
        for _ in 0..r.count()? {
            let s = r.u64()? as usize;
            let id = r.u64()?;
            let cl = ClOrdId::from_bytes(r.bytes()?)
                .ok_or_else(|| "snapshot: ClOrdID not UTF-8 or too long".to_string())?;
            if s >= x.sessions.len() {
                return Err("snapshot: ClOrdID of an unknown session".into());
            }
            if x.cl.get(s as u16, cl.as_bytes()).is_some() {
                return Err("snapshot: ClOrdID remembered twice".into());
            }
            x.cl.push(s as u16, cl.as_bytes(), id);
        }
        for (ix, s) in x.sessions.iter().enumerate() {
            if let Some(c) = s.conn {
                x.conns.put(c, ix as u32);
            }
        }
        for _ in 0..r.count()? {
            let id = r.u64()?;
            let session = r.u64()? as u16;
            let account = r.u64()? as u32;
            let symbol = r.u64()? as u32;
            let side = if r.u64()? == b'1' as u64 {
                Side::Buy
            } else {
                Side::Sell
            };
            let ord_type = if r.u64()? == 2 {
                OrdType::Market
            } else {
                OrdType::Limit
            };
            let tif = match r.u64()? {
                0 => TimeInForce::Day,
                1 => TimeInForce::Gtc,
                3 => TimeInForce::Ioc,
                _ => TimeInForce::Fok,
            };
            let price = r.u64()? as i64;
            let cl_ord_id = ClOrdId::from_bytes(r.bytes()?)
                .ok_or_else(|| "snapshot: ClOrdID not UTF-8 or too long".to_string())?;
            let order_qty = r.u64()?;
            let cum_qty = r.u64()?;
            let leaves_qty = r.u64()?;
            let nb = r.bytes()?;
            let notional = i128::from_le_bytes(
                nb.try_into()
                    .map_err(|_| "snapshot: bad notional".to_string())?,
            );
            let done_status = r.u64()? as u8;
            if session as usize >= x.sessions.len() {
                return Err("snapshot: order of an unknown session".into());
            }
            x.orders.insert_live(
                id,
                OrderInfo {
                    session,
                    account,
                    symbol,
                    side,
                    ord_type,
                    tif,
                    price,
                    cl_ord_id,
                    order_qty,
                    cum_qty,
                    leaves_qty,
                    notional,
                    done_status,
                },
            );
        }
        for _ in 0..r.count()? {
            let id = r.u64()?;
            if x.orders.done.len() == DONE_ORDERS_MAX {
                return Err("snapshot: more finished orders than remembered".into());
            }
            if !x.orders.push_done(id) {
                return Err(format!(
                    "snapshot: finished order {id} is not among the orders"
                ));
            }
        }
        if !r.0.is_empty() {
            return Err("snapshot: trailing bytes in the gateway state".into());
        }
        Ok(x)
    }

    /// Number of live (not terminal) orders the gateway tracks.
    pub fn live_orders(&self) -> usize {
        self.orders
            .live_records()
            .filter(|o| o.done_status == 0)
            .count()
    }

    /// (inbound expected, outbound next) MsgSeqNum of session `sender_comp_id`.
    pub fn session_seqs(&self, sender_comp_id: &str) -> Option<(u64, u64)> {
        let ix = self
            .cfg
            .sessions
            .iter()
            .position(|s| s.sender_comp_id == sender_comp_id)?;
        let s = &self.sessions[ix];
        Some((s.in_seq, s.out_seq))
    }
}

const SNAP_MAGIC: &[u8; 8] = b"RIALTOG3";

struct SnapWriter<'a>(&'a mut Vec<u8>);
impl SnapWriter<'_> {
    /// LEB128: 7 bits per byte, low first; most values in the snapshot are small, so this
    /// keeps it (and the time to write it) a fraction of fixed 8-byte integers.
    fn u64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
}

struct SnapReader<'a>(&'a [u8]);
impl<'a> SnapReader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("snapshot: truncated".into());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn fixed_u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    /// LEB128 (see `SnapWriter::u64`); more than 64 bits or an unterminated number is an error.
    fn u64(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            let part = (b & 0x7f) as u64;
            if shift == 63 && part > 1 {
                return Err("snapshot: integer overflows 64 bits".into());
            }
            v |= part << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("snapshot: integer longer than 10 bytes".into())
    }
    fn count(&mut self) -> Result<u64, String> {
        let n = self.u64()?;
        if n > self.0.len() as u64 {
            return Err("snapshot: count larger than the data".into());
        }
        Ok(n)
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u64()?;
        if n > self.0.len() as u64 {
            return Err("snapshot: truncated".into());
        }
        self.take(n as usize)
    }
}

/// 64-bit hash of a byte string, 8 bytes per step (a multiply-xorshift mix; not
/// cryptographic: it detects divergence between replicas of our own state, nothing more).
fn hash_bytes(b: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ (b.len() as u64).wrapping_mul(K);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ v).wrapping_mul(K);
        h ^= h >> 29;
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 32)
}

/// The start of an ExecutionReport about no order (a refused NewOrderSingle, a status request
/// for an unknown order): OrderID NONE, ClOrdID `cl`, ExecID `seq`.0 then `codes` (the rest of
/// the ExecID, ExecTransType, ExecType, OrdStatus), the request's `echo`, zero quantities.
fn push_orderless_report(b: &mut Vec<u8>, cl: &ClOrdId, seq: u64, codes: &[u8], echo: &[u8]) {
    b.extend_from_slice(b"37=NONE\x0111=");
    b.extend_from_slice(cl.as_bytes());
    b.extend_from_slice(b"\x0117=");
    push_u64(b, seq);
    b.extend_from_slice(codes);
    b.extend_from_slice(echo);
    b.extend_from_slice(b"151=0\x0114=0\x016=0\x01");
}

/// The body (fields after the standard header) of the OrderCancelReject `r`.
fn encode_cancel_reject(r: &CancelRejectRecipe, cl: &[u8], orig: &[u8], b: &mut Vec<u8>) {
    encode_cancel_reject_with(r, cl, orig, r.text, b);
}

/// `encode_cancel_reject` with Text (58) `text` instead of the recipe's.
fn encode_cancel_reject_with(
    r: &CancelRejectRecipe,
    cl: &[u8],
    orig: &[u8],
    text: &str,
    b: &mut Vec<u8>,
) {
    b.extend_from_slice(b"37=");
    match r.order {
        Some((id, _)) => push_u64(b, id),
        None => b.extend_from_slice(b"NONE"),
    }
    b.extend_from_slice(b"\x0111=");
    b.extend_from_slice(cl);
    b.extend_from_slice(b"\x0141=");
    b.extend_from_slice(orig);
    b.extend_from_slice(b"\x0139=");
    b.push(r.order.map(|o| o.1).unwrap_or(b'8'));
    b.extend_from_slice(b"\x01434=");
    b.push(if r.replace { b'2' } else { b'1' });
    b.extend_from_slice(b"\x01102=");
    push_u64(b, r.reason_code as u64);
    b.extend_from_slice(b"\x0158=");
    b.extend_from_slice(text.as_bytes());
    b.push(1);
}

/// The body (fields after the standard header) of the ExecutionReport `r`, sent at `ts`.
fn encode_exec(
    r: &ExecRecipe,
    cl: &[u8],
    orig: Option<&[u8]>,
    ts: u64,
    cfg: &Config,
    fix42: bool,
    b: &mut Vec<u8>,
) {
    let inst = cfg.instruments[r.symbol as usize];
    b.extend_from_slice(b"37=");
    push_u64(b, r.order_id);
    b.extend_from_slice(b"\x0111=");
    b.extend_from_slice(cl);
    if let Some(orig) = orig {
        b.extend_from_slice(b"\x0141=");
        b.extend_from_slice(orig);
    }
    b.extend_from_slice(b"\x0117=");
    push_u64(b, r.exec_seq);
    b.push(b'.');
    push_u64(b, r.exec_n as u64);
    if fix42 {
        // FIX 4.2 has ExecTransType (20, required: 0 = New, 3 = Status) and no ExecType F
        // (Trade) or I (Order Status): a fill is 1 (Partial fill) or 2 (Fill), a status
        // answer repeats the OrdStatus.
        b.extend_from_slice(if r.exec_type == b'I' {
            b"\x0120=3"
        } else {
            b"\x0120=0"
        });
    }
    b.extend_from_slice(b"\x01150=");
    b.push(exec_type_in(r.exec_type, r.ord_status, fix42));
    b.extend_from_slice(b"\x0139=");
    b.push(r.ord_status);
    b.extend_from_slice(b"\x011=");
    push_u64(b, r.account as u64);
    b.extend_from_slice(b"\x0155=");
    b.extend_from_slice(inst.instrument.symbol.as_str().as_bytes());
    b.extend_from_slice(b"\x0154=");
    b.push(side_char(r.side));
    b.extend_from_slice(b"\x0140=");
    b.push(match r.ord_type {
        OrdType::Market => b'1',
        OrdType::Limit => b'2',
    });
    if r.ord_type == OrdType::Limit {
        b.extend_from_slice(b"\x0144=");
        push_price(b, r.price as i128, 1, inst);
    }
    b.extend_from_slice(b"\x0159=");
    b.push(match r.tif {
        TimeInForce::Day => b'0',
        TimeInForce::Gtc => b'1',
        TimeInForce::Ioc => b'3',
        TimeInForce::Fok => b'4',
    });
    b.extend_from_slice(b"\x0138=");
    push_u64(b, r.order_qty);
    if let Some((px, qty)) = r.last {
        b.extend_from_slice(b"\x0131=");
        push_price(b, px as i128, 1, inst);
        b.extend_from_slice(b"\x0132=");
        push_u64(b, qty);
    }
    b.extend_from_slice(b"\x01151=");
    push_u64(b, r.leaves_qty);
    b.extend_from_slice(b"\x0114=");
    push_u64(b, r.cum_qty);
    b.extend_from_slice(b"\x016=");
    if r.cum_qty == 0 {
        b.push(b'0');
    } else {
        push_price(b, r.notional, r.cum_qty, inst);
    }
    if let Some(t) = r.text {
        b.extend_from_slice(b"\x0158=");
        b.extend_from_slice(t.as_str().as_bytes());
    }
    b.extend_from_slice(b"\x0160=");
    push_utc_timestamp(b, ts);
    b.push(1);
}

/// ExecType (150) of a report with OrdStatus `ord_status`, in FIX 4.2's codes when `fix42`
/// (FIX 4.4 and 5.0 share theirs).
fn exec_type_in(exec_type: u8, ord_status: u8, fix42: bool) -> u8 {
    match (fix42, exec_type) {
        (true, b'F') if ord_status == b'2' => b'2',
        (true, b'F') => b'1',
        (true, b'I') => ord_status,
        _ => exec_type,
    }
}

/// One ExecutionReport recipe of a snapshot (see `snapshot_gateway` for the layout).
#[allow(clippy::type_complexity)]
fn read_exec_recipe<'a>(
    r: &mut SnapReader<'a>,
    instruments: usize,
) -> Result<(ExecRecipe, &'a [u8], Option<&'a [u8]>), String> {
    let arc = |b: &'a [u8]| -> Result<&'a [u8], String> {
        if b.len() > u16::MAX as usize {
            return Err("snapshot: stored ClOrdID too long".into());
        }
        std::str::from_utf8(b)
            .map(|_| b)
            .map_err(|_| "snapshot: stored ClOrdID not UTF-8".to_string())
    };
    let order_id = r.u64()?;
    let cl_ord_id = arc(r.bytes()?)?;
    let orig_cl_ord_id = match r.u64()? {
        0 => None,
        1 => Some(arc(r.bytes()?)?),
        _ => return Err("snapshot: bad OrigClOrdID flag".into()),
    };
    let exec_seq = r.u64()?;
    let exec_n = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad exec number")?;
    let exec_type = u8::try_from(r.u64()?).map_err(|_| "snapshot: bad ExecType")?;
    let ord_status = u8::try_from(r.u64()?).map_err(|_| "snapshot: bad OrdStatus")?;
    let side = match r.u64()? {
        x if x == side_char(Side::Buy) as u64 => Side::Buy,
        x if x == side_char(Side::Sell) as u64 => Side::Sell,
        _ => return Err("snapshot: bad side".into()),
    };
    let ord_type = match r.u64()? {
        1 => OrdType::Limit,
        2 => OrdType::Market,
        _ => return Err("snapshot: bad order type".into()),
    };
    let tif_n = r.u64()?;
    let tif = [
        TimeInForce::Day,
        TimeInForce::Gtc,
        TimeInForce::Ioc,
        TimeInForce::Fok,
    ]
    .into_iter()
    .find(|t| tif_code(*t) == tif_n)
    .ok_or("snapshot: bad time in force")?;
    let account = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad account")?;
    let symbol = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad symbol")?;
    if symbol as usize >= instruments {
        return Err("snapshot: stored report for an unknown symbol".into());
    }
    let price = r.u64()? as i64;
    let order_qty = r.u64()?;
    let last = match r.u64()? {
        0 => None,
        1 => Some((r.u64()? as i64, r.u64()?)),
        _ => return Err("snapshot: bad last fill flag".into()),
    };
    let leaves_qty = r.u64()?;
    let cum_qty = r.u64()?;
    let notional = i128::from_le_bytes(
        r.bytes()?
            .try_into()
            .map_err(|_| "snapshot: bad notional".to_string())?,
    );
    let text = match r.u64()? {
        0 => None,
        k => Some(
            *CANCEL_REASONS
                .get(k as usize - 1)
                .ok_or("snapshot: bad cancel reason")?,
        ),
    };
    let recipe = ExecRecipe {
        order_id,
        exec_seq,
        exec_n,
        exec_type,
        ord_status,
        side,
        ord_type,
        tif,
        account,
        symbol,
        price,
        order_qty,
        last,
        leaves_qty,
        cum_qty,
        notional,
        text,
    };
    Ok((recipe, cl_ord_id, orig_cl_ord_id))
}

/// Cancel reasons by snapshot code (code = index + 1; 0 = no text).
const CANCEL_REASONS: [CancelReason; 6] = [
    CancelReason::User,
    CancelReason::Ioc,
    CancelReason::Fok,
    CancelReason::Stp,
    CancelReason::NoLiquidity,
    CancelReason::Expired,
];

/// OrdType as the snapshot stores it (the snapshot reader maps 1 and 2 back).
fn ord_type_code(t: OrdType) -> u64 {
    match t {
        OrdType::Limit => 1,
        OrdType::Market => 2,
    }
}

fn tif_code(t: TimeInForce) -> u64 {
    match t {
        TimeInForce::Day => 0,
        TimeInForce::Gtc => 1,
        TimeInForce::Ioc => 3,
        TimeInForce::Fok => 4,
    }
}

fn side_char(s: Side) -> u8 {
    match s {
        Side::Buy => b'1',
        Side::Sell => b'2',
    }
}

fn ord_status(o: &OrderInfo) -> u8 {
    if o.done_status != 0 {
        o.done_status
    } else if o.cum_qty > 0 {
        b'1'
    } else {
        b'0'
    }
}

fn reject_text(r: RejectReason) -> &'static str {
    match r {
        RejectReason::DuplicateId => "duplicate order id",
        RejectReason::Invalid(f) => match f {
            types::Field::Price => "invalid price (off the tick or not positive)",
            types::Field::Qty => "invalid quantity (zero or off the lot)",
            types::Field::Symbol => "unknown symbol",
            _ => "invalid field",
        },
        RejectReason::UnknownOrder => "unknown order",
        RejectReason::PostOnlyWouldCross => "post-only order would cross",
        RejectReason::CapacityExceeded => "exchange capacity exceeded",
    }
}

/// Writes `num / den` price units as a decimal with the instrument's decimals, exactly when
/// the quotient terminates within 8 more digits, rounded half-up beyond that.
pub fn push_price(out: &mut Vec<u8>, num: i128, den: u64, inst: InstrumentDef) {
    if num >= 0 && num <= u64::MAX as i128 {
        // A price or LastPx (`den` 1): no division at all.
        if den <= 1 {
            return push_scaled(out, num as u64, inst.price_decimals);
        }
        // An exact quotient (the AvgPx of fills at one price) in 64 bits: no 128-bit division.
        let n = num as u64;
        if n.is_multiple_of(den) {
            return push_scaled(out, n / den, inst.price_decimals);
        }
    }
    const EXTRA: u32 = 8;
    let den = den.max(1) as i128;
    let scaled = num * 10i128.pow(EXTRA);
    let q = if scaled >= 0 {
        (scaled + den / 2) / den
    } else {
        (scaled - den / 2) / den
    };
    let decimals = inst.price_decimals + EXTRA;
    let neg = q < 0;
    let q = q.unsigned_abs();
    let p = 10u128.pow(decimals);
    let (int, mut frac) = (q / p, q % p);
    if neg {
        out.push(b'-');
    }
    push_u64(out, int as u64);
    if frac == 0 {
        return;
    }
    let mut digits = decimals;
    while frac % 10 == 0 {
        frac /= 10;
        digits -= 1;
    }
    out.push(b'.');
    // On the stack, zero-padded to `digits` (at most 17: a tick has at most 9 decimals, plus
    // `EXTRA`): most fills' AvgPx has decimals, so no `String` for it.
    let mut tmp = [b'0'; 40];
    let n = digits as usize;
    let mut i = n;
    while frac > 0 {
        i -= 1;
        tmp[i] = b'0' + (frac % 10) as u8;
        frac /= 10;
    }
    out.extend_from_slice(&tmp[..n]);
}

/// Parses a FIX price decimal into price units of `inst`: `Err` says why (not a number, off the
/// tick, out of range: a whole part of more than 15 significant digits is out of range, as is
/// one whose price units overflow). `fix::Decimal::parse` and `to_ticks` do the same job with
/// other edge rules (no 15-digit limit on the whole part, tick counts rather than price units);
/// moving the gateway onto the `fix` crate (ARCHITECTURE, "Known debt") would leave one of the
/// two.
pub fn parse_price(text: &[u8], inst: &InstrumentDef) -> Result<i64, &'static str> {
    const NOT_DECIMAL: &str = "price is not a decimal";
    const OUT_OF_RANGE: &str = "price out of range";
    // One pass over the bytes (an order's price is parsed on the event loop): an optional
    // '-', digits, then optionally '.' and digits. A whole part of more than 15 significant
    // digits is out of range (leading zeros are allowed).
    let (neg, body) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut int: i64 = 0;
    let mut at = 0;
    while let Some(&c) = body.get(at) {
        let d = c.wrapping_sub(b'0');
        if d <= 9 {
            // Past 15 digits (rare): leading zeros, or a whole part out of range.
            if at >= 15 && int >= 100_000_000_000_000 {
                return Err(long_whole_part(&body[at..]));
            }
            int = int * 10 + i64::from(d);
        } else if c == b'.' {
            break;
        } else {
            return Err(NOT_DECIMAL);
        }
        at += 1;
    }
    let int_len = at;
    let frac = body.get(at + 1..).unwrap_or(&[]);
    if !frac.iter().all(u8::is_ascii_digit) || (int_len == 0 && frac.is_empty()) {
        return Err(NOT_DECIMAL);
    }
    let mut frac_len = frac.len();
    while frac_len > 0 && frac[frac_len - 1] == b'0' {
        frac_len -= 1;
    }
    let dec = inst.price_decimals as usize;
    if frac_len > dec {
        return Err("price is off the tick");
    }
    let f = frac[..frac_len]
        .iter()
        .fold(0i64, |n, &c| n * 10 + i64::from(c - b'0'));
    let mut units = int
        .checked_mul(POW10[dec])
        .and_then(|u| u.checked_add(f * POW10[dec - frac_len]))
        .ok_or(OUT_OF_RANGE)?;
    if neg {
        units = -units;
    }
    if units <= 0 {
        return Err("price must be positive");
    }
    if units % inst.instrument.tick != 0 {
        return Err("price is off the tick");
    }
    Ok(units)
}

/// `parse_price`'s error for a whole part past 15 significant digits, `rest` being the text
/// from its 16th one: out of range if the rest is a decimal, else not a decimal.
#[cold]
fn long_whole_part(rest: &[u8]) -> &'static str {
    let (int, frac) = match rest.iter().position(|&c| c == b'.') {
        Some(p) => (&rest[..p], &rest[p + 1..]),
        None => (rest, &[][..]),
    };
    if int.iter().chain(frac).all(u8::is_ascii_digit) {
        "price out of range"
    } else {
        "price is not a decimal"
    }
}

/// 10^0 to 10^18.
const POW10: [i64; 19] = {
    let mut t = [1i64; 19];
    let mut k = 1;
    while k < 19 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;
    use engine::hint::Populate;

    /// `parse_price` as it was before the one-pass version (with its sum checked; since the
    /// fifteenth session a whole part of more than 15 significant digits is out of range, not
    /// "not a decimal", and leading zeros do not count): the reference
    /// `one_pass_price_parsing_matches_the_reference` compares against.
    fn parse_price_reference(text: &[u8], inst: &InstrumentDef) -> Result<i64, &'static str> {
        let s = std::str::from_utf8(text).map_err(|_| "price is not a decimal")?;
        let (neg, s) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (int, frac) = match s.split_once('.') {
            Some((i, f)) => (i, f),
            None => (s, ""),
        };
        if (int.is_empty() && frac.is_empty())
            || !int.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
        {
            return Err("price is not a decimal");
        }
        if int.trim_start_matches('0').len() > 15 {
            return Err("price out of range");
        }
        let dec = inst.price_decimals as usize;
        let frac_trim = frac.trim_end_matches('0');
        if frac_trim.len() > dec {
            return Err("price is off the tick");
        }
        let mut units: i64 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| "price out of range")?
        };
        units = units
            .checked_mul(10i64.pow(dec as u32))
            .ok_or("price out of range")?;
        if !frac_trim.is_empty() {
            let f: i64 = frac_trim.parse().map_err(|_| "price is not a decimal")?;
            units = units
                .checked_add(f * 10i64.pow((dec - frac_trim.len()) as u32))
                .ok_or("price out of range")?;
        }
        if neg {
            units = -units;
        }
        if units <= 0 {
            return Err("price must be positive");
        }
        if units % inst.instrument.tick != 0 {
            return Err("price is off the tick");
        }
        Ok(units)
    }

    /// A Logon from `sender` to RIALTO in `begin_string`, resetting sequence numbers.
    fn logon_msg(sender: &str, begin_string: &str) -> FixMsg {
        FixMsg::Logon {
            sender: sender.into(),
            target: "RIALTO".into(),
            begin_string: begin_string.into(),
            heartbeat_secs: 30,
            reset: true,
            password: String::new(),
        }
    }
    use types::{Instrument, Symbol};

    #[test]
    fn snapshot_integers_round_trip_and_overlong_ones_are_refused() {
        let vals = [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX];
        let mut buf = Vec::new();
        let mut w = SnapWriter(&mut buf);
        for v in vals {
            w.u64(v);
        }
        assert_eq!(buf.len(), 1 + 1 + 1 + 2 + 2 + 6 + 10 + 10);
        let mut r = SnapReader(&buf);
        for v in vals {
            assert_eq!(r.u64(), Ok(v));
        }
        assert!(r.u64().is_err(), "nothing left");
        // 11 continuation bytes, a 10th byte above bit 63, and a number cut short.
        assert!(SnapReader(&[0x80; 11]).u64().is_err());
        let mut over = vec![0xff; 9];
        over.push(0x02);
        assert!(SnapReader(&over).u64().is_err());
        assert!(SnapReader(&[0x80, 0x80]).u64().is_err());
    }

    /// Application messages (`35=8`/`35=9`) in `out`: (MsgSeqNum, PossDup, body from 37= up
    /// to the checksum).
    fn app_msgs(out: &Outbox) -> Vec<(u64, bool, Vec<u8>)> {
        let find = |m: &[u8], pat: &[u8]| m.windows(pat.len()).position(|w| w == pat);
        out.items
            .iter()
            .map(|it| &out.buf[it.start..it.end])
            .filter(|m| find(m, b"\x0135=8\x01").is_some() || find(m, b"\x0135=9\x01").is_some())
            .map(|m| {
                let at = find(m, b"\x0134=").expect("MsgSeqNum") + 4;
                let end = at + m[at..].iter().position(|&b| b == 1).expect("SOH");
                let seq = std::str::from_utf8(&m[at..end]).unwrap().parse().unwrap();
                let body = find(m, b"\x0137=").expect("OrderID") + 1;
                let cks = find(m, b"\x0110=").expect("CheckSum") + 1;
                (
                    seq,
                    find(m, b"\x0143=Y\x01").is_some(),
                    m[body..cks].to_vec(),
                )
            })
            .collect()
    }

    /// One session (CLIENT1 on connection 7, logged on) driven message by message.
    struct Driver {
        x: Exchange,
        out: Outbox,
        seq: u64,
    }

    impl Driver {
        fn new(x: Exchange) -> Driver {
            let mut d = Driver {
                x,
                out: Outbox::default(),
                seq: 0,
            };
            d.send(logon_msg("CLIENT1", "FIX.4.4"));
            d
        }

        /// Applies `msg` (journal record and MsgSeqNum both the next) and returns what was
        /// sent, as text.
        fn send(&mut self, msg: FixMsg) -> String {
            self.seq += 1;
            self.out.clear();
            let ts = 1_800_000_000_000_000_000u64 + self.seq;
            let input = Input::Fix {
                conn: 7,
                seq: self.seq,
                poss_dup: false,
                msg,
            };
            self.x.apply(self.seq, ts, &input, &mut self.out);
            String::from_utf8_lossy(&self.out.buf).into_owned()
        }
    }

    /// A limit order for 5 of instrument 0.
    fn limit(cl: &str, side: Side, price: i64, tif: TimeInForce) -> FixMsg {
        FixMsg::New(NewOrderMsg {
            cl_ord_id: ClOrdId::from(cl),
            symbol: 0,
            side,
            ord_type: OrdType::Limit,
            tif,
            price,
            qty: 5,
            account: None,
            post_only: false,
        })
    }

    /// A resting order replaced many times keeps only its current ClOrdID once the others
    /// leave the window; the index stays within the window plus the live orders, each new
    /// ClOrdID moves at most `ROTATIONS_MAX` entries, and the order can still be canceled by
    /// its current ClOrdID (and not by a forgotten one).
    #[test]
    fn a_long_lived_order_replaced_many_times_keeps_one_clordid_beyond_the_window() {
        let mut x = Exchange::new(Arc::new(Config::defaults()));
        x.cl_max = 64;
        let mut d = Driver::new(x);
        // Ten resting bids, each replaced 100 times; between replaces, IOC sells far above
        // that never trade (finished at once).
        for i in 0..10 {
            let o = d.send(limit(
                &format!("q{i}-0"),
                Side::Buy,
                1000 + i,
                TimeInForce::Day,
            ));
            assert!(o.contains("\x01150=0\x01"), "{o}");
        }
        let mut longest = 0;
        for r in 1..=100 {
            for i in 0..10 {
                let o = d.send(FixMsg::Replace {
                    cl_ord_id: ClOrdId::from(format!("q{i}-{r}").as_str()),
                    orig_cl_ord_id: ClOrdId::from(format!("q{i}-{}", r - 1).as_str()),
                    symbol: 0,
                    price: 1000 + i,
                    qty: 5,
                });
                assert!(o.contains("\x01150=5\x01"), "replace {i}/{r}: {o}");
                d.send(limit(
                    &format!("f{r}-{i}"),
                    Side::Sell,
                    5000,
                    TimeInForce::Ioc,
                ));
                longest = longest.max(d.x.cl.len());
            }
        }
        // 64 + the 10 current ClOrdIDs at most, plus what one call may leave over.
        assert!(longest <= 64 + 10 + 1, "the index held {longest} entries");
        for i in 0..10 {
            assert!(
                d.x.cl.get(0, format!("q{i}-100").as_bytes()).is_some(),
                "q{i}-100"
            );
            assert!(
                d.x.cl.get(0, format!("q{i}-1").as_bytes()).is_none(),
                "q{i}-1 is forgotten"
            );
        }
        let o = d.send(FixMsg::Cancel {
            cl_ord_id: ClOrdId::from("x1"),
            orig_cl_ord_id: ClOrdId::from("q3-100"),
        });
        assert!(
            o.contains("\x01150=4\x01"),
            "canceled by its current ClOrdID: {o}"
        );
        let o = d.send(FixMsg::Cancel {
            cl_ord_id: ClOrdId::from("x2"),
            orig_cl_ord_id: ClOrdId::from("q4-2"),
        });
        assert!(
            o.contains("\x0135=9\x01"),
            "a forgotten ClOrdID is unknown: {o}"
        );
    }

    /// A resting order finishes after more orders than the finished-order index has cells:
    /// a newer finished order holds its cell, so one of the two goes to the index's overflow;
    /// both still answer an OrderStatusRequest, also after a snapshot and restore; once
    /// `DONE_ORDERS_MAX` more orders have finished, both are forgotten ("unknown order") and
    /// the overflow is empty again.
    #[test]
    fn finished_orders_that_share_an_index_cell_answer_status_until_forgotten() {
        let cfg = Arc::new(Config::defaults());
        let mut d = Driver::new(Exchange::new(cfg.clone()));
        let status = |cl: &str| FixMsg::Status {
            cl_ord_id: ClOrdId::from(cl),
            echo: crate::record::Echo::from("55=ACME\x0154=1\x01"),
        };
        // IOC sells far above the bid: each is finished (canceled) as soon as it arrives.
        let iocs = |d: &mut Driver, from: usize, n: usize| {
            for j in from..from + n {
                let o = d.send(limit(&format!("f{j}"), Side::Sell, 5000, TimeInForce::Ioc));
                assert!(o.contains("\x01150=4\x01"), "f{j}: {o}");
            }
        };
        let o = d.send(limit("old", Side::Buy, 1000, TimeInForce::Day));
        assert!(o.contains("\x01150=0\x01"), "{o}");
        let cells = d.x.orders.done_ix.cells.len();
        // The IOC numbered `cells - 1` has the id `cells` above the resting order's.
        iocs(&mut d, 0, cells + 100);
        let o = d.send(FixMsg::Cancel {
            cl_ord_id: ClOrdId::from("old-x"),
            orig_cl_ord_id: ClOrdId::from("old"),
        });
        assert!(o.contains("\x01150=4\x01"), "{o}");
        // Past the index's lag, so the canceled order is in the index itself.
        iocs(&mut d, cells + 100, DONE_INDEX_LAG + 4);
        let overflow = d.x.orders.done_ix.overflow.len;
        assert_eq!(overflow, 1, "one of the two overflowed");
        let twin = format!("f{}", cells - 1);
        for cl in ["old", twin.as_str()] {
            let o = d.send(status(cl));
            assert!(
                o.contains("\x01150=I\x0139=4\x01") && o.contains("\x0114=0\x01"),
                "status of {cl}: {o}"
            );
        }
        // The same from a snapshot.
        let mut snap = Vec::new();
        let hash = d.x.snapshot_and_hash(&mut snap);
        let y = Exchange::restore(cfg.clone(), &snap).expect("restores");
        assert_eq!(y.state_hash(), hash);
        for cl in ["old", twin.as_str()] {
            let id = y.cl.get(0, cl.as_bytes()).expect("remembered");
            let o = y.orders.get(&id).expect("a finished order is found");
            assert_eq!((o.done_status, o.leaves_qty), (b'4', 0), "{cl}");
        }
        // More finished orders than are remembered: both are forgotten.
        iocs(&mut d, cells + 200, DONE_ORDERS_MAX + 1);
        for cl in ["old", twin.as_str()] {
            let o = d.send(status(cl));
            assert!(
                o.contains("\x0158=unknown order\x01"),
                "status of {cl}: {o}"
            );
        }
        assert_eq!(d.x.orders.done_ix.overflow.len, 0);
    }

    #[test]
    fn stored_reports_and_cancel_rejects_resend_as_sent() {
        let cfg = Arc::new(Config::defaults());
        let mut x = Exchange::new(cfg.clone());
        let mut out = Outbox::default();
        let ts = 1_800_000_000_000_000_000u64;
        let fix = |seq: u64, msg: FixMsg| Input::Fix {
            conn: 7,
            seq,
            poss_dup: false,
            msg,
        };
        let cl = |s: &str| ClOrdId::from(s);
        let inputs = [
            fix(1, logon_msg("CLIENT1", "FIX.4.4")),
            fix(
                2,
                FixMsg::New(NewOrderMsg {
                    cl_ord_id: cl("a"),
                    symbol: 0,
                    side: Side::Buy,
                    ord_type: OrdType::Limit,
                    tif: TimeInForce::Day,
                    price: 1234,
                    qty: 5,
                    account: None,
                    post_only: false,
                }),
            ),
            fix(
                3,
                FixMsg::Cancel {
                    cl_ord_id: cl("c1"),
                    orig_cl_ord_id: cl("nope"),
                },
            ),
            fix(
                4,
                FixMsg::Replace {
                    cl_ord_id: cl("c2"),
                    orig_cl_ord_id: cl("a"),
                    symbol: 1,
                    price: 1200,
                    qty: 5,
                },
            ),
            fix(
                5,
                FixMsg::Invalid {
                    kind: InvalidKind::CancelReject { replace: true },
                    msg_type: "G".into(),
                    ref_tag: 44,
                    cl_ord_id: cl("c3"),
                    orig_cl_ord_id: cl("a"),
                    reason: "price is off the tick".into(),
                    echo: String::new(),
                },
            ),
            fix(
                6,
                FixMsg::Cancel {
                    cl_ord_id: cl("c4"),
                    orig_cl_ord_id: cl("a"),
                },
            ),
        ];
        let mut live = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            out.clear();
            x.apply(i as u64 + 1, ts + i as u64, input, &mut out);
            live.extend(app_msgs(&out));
        }
        assert_eq!(live.len(), 5, "new, three cancel rejects, canceled");
        assert!(live.iter().filter(|m| m.2.starts_with(b"37=NONE")).count() == 2);
        let resend = |x: &mut Exchange, rec: u64, msg_seq: u64| {
            let mut out = Outbox::default();
            let req = fix(msg_seq, FixMsg::ResendRequest { begin: 1, end: 0 });
            x.apply(rec, ts + rec, &req, &mut out);
            app_msgs(&out)
        };
        let mut snap = Vec::new();
        let hash = x.snapshot_and_hash(&mut snap);
        let again = resend(&mut x, 7, 7);
        assert!(
            again.iter().all(|m| m.1),
            "PossDupFlag on every resent message"
        );
        let strip = |v: &[(u64, bool, Vec<u8>)]| -> Vec<(u64, Vec<u8>)> {
            v.iter().map(|(s, _, b)| (*s, b.clone())).collect()
        };
        assert_eq!(strip(&again), strip(&live));
        let mut y = Exchange::restore(cfg, &snap).unwrap();
        assert_eq!(y.state_hash(), hash);
        assert_eq!(strip(&resend(&mut y, 7, 7)), strip(&live));
    }

    /// A FIX 4.2 session gets ExecutionReports in FIX 4.2's codes (ExecTransType 20, fills as
    /// ExecType 1/2, status answers as ExecTransType 3 with the OrdStatus as ExecType), live
    /// and resent alike; a FIX 4.4 session on the same exchange keeps FIX 4.4's.
    #[test]
    fn fix42_sessions_get_fix42_execution_reports() {
        let toml = "[[instruments]]\nsymbol = \"ACME\"\ntick = \"0.01\"\nlot = 1\n\n\
            [[firms]]\nname = \"A\"\naccounts = [1]\n\n[[firms]]\nname = \"B\"\naccounts = [2]\n\n\
            [[sessions]]\nsender_comp_id = \"OLD\"\nfirm = \"A\"\nfix_version = \"FIX.4.2\"\n\n\
            [[sessions]]\nsender_comp_id = \"NEW\"\nfirm = \"B\"\n";
        let cfg = Arc::new(Config::from_toml(toml).expect("config"));
        let mut x = Exchange::new(cfg);
        let ts = 1_800_000_000_000_000_000u64;
        let fix = |conn: u64, seq: u64, msg: FixMsg| Input::Fix {
            conn,
            seq,
            poss_dup: false,
            msg,
        };
        let order = |cl: &str, side: Side, qty: u64| {
            FixMsg::New(NewOrderMsg {
                cl_ord_id: ClOrdId::from(cl),
                symbol: 0,
                side,
                ord_type: OrdType::Limit,
                tif: TimeInForce::Day,
                price: 1000,
                qty,
                account: None,
                post_only: false,
            })
        };
        let inputs = [
            fix(1, 1, logon_msg("OLD", "FIX.4.2")),
            fix(2, 1, logon_msg("NEW", "FIX.4.4")),
            fix(1, 2, order("o1", Side::Buy, 10)), // rests
            fix(2, 2, order("n1", Side::Sell, 4)), // partial fill of o1, n1 filled
            fix(2, 3, order("n2", Side::Sell, 6)), // fills the rest of o1
            fix(
                1,
                3,
                FixMsg::Status {
                    cl_ord_id: ClOrdId::from("o1"),
                    echo: "55=ACME\x0154=1\x01".into(),
                },
            ),
            fix(
                1,
                4,
                FixMsg::Status {
                    cl_ord_id: ClOrdId::from("nope"),
                    echo: "55=ACME\x0154=1\x01".into(),
                },
            ),
        ];
        // Application messages per connection, whole (header included).
        let mut per_conn: std::collections::HashMap<u64, Vec<Vec<u8>>> =
            std::collections::HashMap::new();
        for (i, input) in inputs.iter().enumerate() {
            let mut out = Outbox::default();
            x.apply(i as u64 + 1, ts + i as u64, input, &mut out);
            for it in &out.items {
                let m = out.buf[it.start..it.end].to_vec();
                if m.windows(6).any(|w| w == b"\x0135=8\x01") {
                    per_conn.entry(it.conn).or_default().push(m);
                }
            }
        }
        let field = |m: &[u8], tag: &str| -> Option<String> {
            let pat = format!("\x01{tag}=");
            let at = m.windows(pat.len()).position(|w| w == pat.as_bytes())? + pat.len();
            let end = at + m[at..].iter().position(|&b| b == 1)?;
            Some(String::from_utf8(m[at..end].to_vec()).unwrap())
        };
        let codes = |ms: &[Vec<u8>]| -> Vec<(Option<String>, String, String)> {
            ms.iter()
                .map(|m| {
                    (
                        field(m, "20"),
                        field(m, "150").unwrap(),
                        field(m, "39").unwrap(),
                    )
                })
                .collect()
        };
        let t = |a: Option<&str>, b: &str, c: &str| (a.map(String::from), b.into(), c.into());
        let old = &per_conn[&1];
        assert!(old.iter().all(|m| m.starts_with(b"8=FIX.4.2\x01")));
        assert_eq!(
            codes(old),
            vec![
                t(Some("0"), "0", "0"), // o1 new
                t(Some("0"), "1", "1"), // partial fill
                t(Some("0"), "2", "2"), // fill
                t(Some("3"), "2", "2"), // status of o1: filled
                t(Some("3"), "8", "8"), // status of an unknown order
            ]
        );
        let new = &per_conn[&2];
        assert!(new.iter().all(|m| m.starts_with(b"8=FIX.4.4\x01")));
        assert_eq!(
            codes(new),
            vec![
                t(None, "0", "0"),
                t(None, "F", "2"),
                t(None, "0", "0"),
                t(None, "F", "2"),
            ]
        );
        // Resent to the FIX 4.2 session: the same bodies in the same dialect.
        let mut out = Outbox::default();
        let req = fix(1, 5, FixMsg::ResendRequest { begin: 1, end: 0 });
        x.apply(8, ts + 8, &req, &mut out);
        let resent: Vec<Vec<u8>> = out
            .items
            .iter()
            .map(|it| out.buf[it.start..it.end].to_vec())
            .filter(|m| m.windows(6).any(|w| w == b"\x0135=8\x01"))
            .collect();
        assert!(resent
            .iter()
            .all(|m| field(m, "43").as_deref() == Some("Y")));
        let recipes_only = |v: &[(Option<String>, String, String)]| v[..3].to_vec();
        assert_eq!(recipes_only(&codes(&resent)), recipes_only(&codes(old)));
    }

    /// The resend store keeps exactly the newest `max` messages with their bytes through
    /// many turns of its circular byte buffer, for a `max` that changes (as after a restore).
    #[test]
    fn resend_store_keeps_the_newest_bodies_through_wraparound() {
        let mut st = Store::default();
        let body = |i: u64| format!("58=message {i} {}\x01", "x".repeat((i % 50) as usize));
        for i in 0..20_000u64 {
            let max = if i < 10_000 { 7 } else { 3 };
            st.push(i, b'j', i, body(i).as_bytes(), max);
            let live: Vec<(u64, Vec<u8>)> = st
                .live(max)
                .map(|m| (m.seq, st.bytes_of(m).to_vec()))
                .collect();
            let want: Vec<(u64, Vec<u8>)> = (i.saturating_sub(max as u64 - 1)..=i)
                .map(|k| (k, body(k).into_bytes()))
                .collect();
            assert_eq!(live, want, "after push {i}");
            assert_eq!(st.live_len(max), want.len());
            assert_eq!(
                st.bytes.cap,
                ClBytes::INITIAL,
                "the live bytes fit the first buffer"
            );
        }
    }

    /// The exchange's own index faults in exactly `CL_BYTES_RESIDENT_PER_ID` bytes per ClOrdID
    /// of its window (64 MiB: the longest ClOrdID's 64 bytes), not twice that: the window's
    /// `n` counts one entry more than the window, and rounding `n * 32` up to a power of two
    /// made 64 MiB of a meant 32 resident until the seventeenth session.
    #[test]
    fn the_window_byte_ring_is_resident_for_a_window_of_the_longest_cl_ord_ids() {
        let resident = ClIndex::new(Backing::Resident, &mut Populate::default());
        assert_eq!(
            resident.bytes.cap,
            CL_ORD_IDS_MAX * CL_BYTES_RESIDENT_PER_ID
        );
        assert_eq!(resident.bytes.cap, 64 << 20);
        assert_eq!(
            ClIndex::new(Backing::Lazy, &mut Populate::default())
                .bytes
                .cap,
            ClBytes::INITIAL
        );
    }

    /// A resident ClOrdID byte ring starts with the capacity it was asked for (a power of two,
    /// within its address space), keeps ClOrdIDs through turns of it without growing, and
    /// grows as before past it; a lazy one starts small.
    #[test]
    fn a_resident_byte_ring_starts_at_its_expected_capacity() {
        let lazy = ClBytes::with_backing(1 << 20, 100_000, Backing::Lazy, &mut Populate::default());
        assert_eq!(lazy.cap, ClBytes::INITIAL);
        assert_eq!(
            ClBytes::with_backing(
                1 << 16,
                1 << 20,
                Backing::Resident,
                &mut Populate::default()
            )
            .cap,
            1 << 16,
            "no larger than its address space"
        );
        assert_eq!(
            ClBytes::with_backing(1 << 16, 10, Backing::Resident, &mut Populate::default()).cap,
            ClBytes::INITIAL
        );
        let mut b = ClBytes::with_backing(
            1 << 20,
            100_000,
            Backing::Resident,
            &mut Populate::default(),
        );
        assert_eq!(b.cap, 1 << 17);
        let id = |i: u32| format!("N{i:07}.{}", i % 13).into_bytes();
        let mut live = std::collections::VecDeque::new();
        for i in 0..40_000u32 {
            let cl = id(i);
            live.push_back((b.push(&cl), cl));
            // Keep the newest 8,000 (about 100 KB of the 128 KB).
            if live.len() > 8_000 {
                live.pop_front();
                b.set_head(live[0].0);
            }
        }
        assert_eq!(b.cap, 1 << 17, "no growth within the resident capacity");
        for (start, cl) in &live {
            assert_eq!(b.get(*start, cl.len()), &cl[..]);
        }
        for i in 40_000..60_000u32 {
            let cl = id(i);
            live.push_back((b.push(&cl), cl));
        }
        assert_eq!(b.cap, 1 << 19, "grows past it, keeping every live ClOrdID");
        for (start, cl) in &live {
            assert_eq!(b.get(*start, cl.len()), &cl[..]);
        }
    }

    fn inst(tick: i64, dec: u32) -> InstrumentDef {
        InstrumentDef {
            instrument: Instrument {
                symbol: Symbol::new("X").unwrap(),
                tick,
                lot: 1,
            },
            price_decimals: dec,
        }
    }

    /// The finished-order index (`DoneIndex`) against a `HashMap`: sequential ids that share
    /// cells with older ones still indexed (so through the overflow and back), far ids, and
    /// ids indexed and removed in an order other than their numbering.
    #[test]
    fn done_index_matches_a_map() {
        let mut t = DoneIndex::with_capacity(64);
        assert_eq!(t.cells.len(), 64);
        let mut m = std::collections::HashMap::new();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for step in 0..50_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly recent ids of a numbering that moves on by one a step; some that are
            // 64 or 128 ids older (the same cell); some far ones.
            let id = match x % 16 {
                0 => x >> 24,
                1 | 2 => step.saturating_sub(64 * (1 + x % 2)),
                _ => step.saturating_sub(x % 48),
            };
            if (x >> 8).is_multiple_of(3) {
                assert_eq!(t.remove(id), m.remove(&id), "remove {id}");
            } else if let std::collections::hash_map::Entry::Vacant(v) = m.entry(id) {
                v.insert(step as u32);
                t.insert(id, step as u32);
            }
            assert_eq!(t.get(id), m.get(&id).copied(), "get {id}");
            let cell = t.cells.iter().filter(|c| c.1 != DoneIndex::EMPTY).count();
            assert_eq!(cell + t.overflow.len, m.len(), "each id in one place");
        }
        assert!(t.overflow.len > 0, "the test reaches the overflow");
        for (&id, &slot) in &m {
            assert_eq!(t.get(id), Some(slot));
            assert_eq!(t.remove(id), Some(slot));
            assert_eq!(t.get(id), None);
        }
        assert_eq!(t.overflow.len, 0);
        assert!(t.cells.iter().all(|c| c.1 == DoneIndex::EMPTY));
    }

    /// The order index (`SlotTable`) against a `HashMap`, through growth, removals that shift
    /// probe runs back (dense sequential ids and ids that share home buckets), `put` over an
    /// existing id and `clear`.
    #[test]
    fn slot_table_matches_a_map() {
        let mut t = SlotTable::with_capacity(4);
        let mut m = std::collections::HashMap::new();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for step in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly a window of sequential ids (as orders are numbered), some far ones.
            let id = if x.is_multiple_of(8) {
                x >> 20
            } else {
                step.saturating_sub(x % 64)
            };
            match x % 5 {
                0 | 1 => {
                    if let std::collections::hash_map::Entry::Vacant(v) = m.entry(id) {
                        v.insert(step as u32);
                        t.insert(id, step as u32);
                    }
                }
                2 => {
                    m.insert(id, step as u32);
                    t.put(id, step as u32);
                }
                _ => assert_eq!(t.remove(id), m.remove(&id), "remove {id}"),
            }
            assert_eq!(t.get(id), m.get(&id).copied());
            assert_eq!(t.len, m.len());
        }
        let mut all: Vec<(u64, u32)> = t.iter().collect();
        all.sort_unstable();
        let mut want: Vec<(u64, u32)> = m.iter().map(|(&k, &v)| (k, v)).collect();
        want.sort_unstable();
        assert_eq!(all, want);
        for &(id, slot) in &want {
            assert_eq!(t.get(id), Some(slot));
        }
        t.clear();
        assert_eq!(t.len, 0);
        assert!(want.iter().all(|&(id, _)| t.get(id).is_none()));
    }

    /// The position index with long probe runs that wrap around the end of the table and
    /// many equal tags, against a plain list, through insertions and removals; then a run too
    /// long to code is refused without a change.
    #[test]
    fn position_index_with_colliding_hashes() {
        let mut t = PosTable::new(1000, 12);
        let cap = t.slots.len() as u64;
        let mut model: Vec<(u64, u64)> = Vec::new();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        for pos in 0..20_000u64 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Homes among 16 slots astride the end of the table; half the hashes share
            // their tag bits, the other half differ only there.
            let home = (cap - 8 + (rng >> 40) % 16) % cap;
            let high = if rng.is_multiple_of(2) {
                0
            } else {
                (rng >> 8) << 38
            };
            let hash = home | high;
            if model.len() < 40 {
                t.insert(hash, pos).expect("room and short runs");
                model.push((hash, pos));
            }
            if rng % 5 < 2 || model.len() >= 40 {
                let k = (rng >> 20) as usize % model.len();
                let (h, p) = model.swap_remove(k);
                let slot = t.find(h, |q| q == p as u32 & 0xFFF).expect("present");
                t.remove_at(slot);
            }
            for &(h, p) in &model {
                assert!(
                    t.find(h, |q| q == p as u32 & 0xFFF).is_some(),
                    "lost {p} at {pos}"
                );
            }
            assert_eq!(t.len, model.len());
            assert_eq!(t.slots.iter().filter(|&&s| s != 0).count(), model.len());
        }
        // One home for all: the 64th entry would sit 63 slots from it.
        let mut t = PosTable::new(1000, 12);
        for pos in 0..=PosTable::DISP_MAX as u64 {
            t.insert(5, pos).expect("codable");
        }
        let before = t.slots.clone();
        assert_eq!(t.insert(5, 99), Err(()));
        assert_eq!(t.slots, before);
        assert_eq!(t.len, PosTable::DISP_MAX + 1);
        for pos in 0..=PosTable::DISP_MAX as u32 {
            assert!(t.find(5, |q| q == pos).is_some());
        }
        // Full at 5/8.
        let mut t = PosTable::new(10, 12);
        let room = t.capacity();
        for pos in 0..room as u64 {
            t.insert(pos.wrapping_mul(0x9E37_79B9_7F4A_7C15), pos)
                .expect("room");
        }
        assert_eq!(t.insert(12345, 999), Err(()));
    }

    /// A xorshift64 sequence from `seed` (not 0): cheap, deterministic test data.
    pub(super) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// At the production size, a FIFO of a million random hashes turned over three times (as
    /// the ClOrdID window is) never meets a displacement the slots cannot code: no rebuild, a
    /// stall on a live loop, in the steady state. (The longest here is 70: past a 6-bit
    /// field's 62, which is why the field has 7 bits.)
    #[test]
    fn a_full_window_turned_over_needs_no_rebuild() {
        let n = CL_ORD_IDS_MAX;
        let mut t = PosTable::new(n + 1, ClIndex::pbits_for(n + 1));
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let mut fifo = VecDeque::with_capacity(n + 1);
        let mut worst = 0;
        let mask = t.pos_mask();
        for pos in 0..4 * n as u64 {
            let h = next();
            t.insert(h, pos).expect("codable");
            let slot = t.find(h, |q| q == pos as u32 & mask).expect("present");
            worst = worst.max(slot.wrapping_sub(t.home(h)) & t.mask);
            fifo.push_back((h, pos));
            if fifo.len() > n {
                let (h, p) = fifo.pop_front().expect("full");
                let slot = t.find(h, |q| q == p as u32 & mask).expect("present");
                t.remove_at(slot);
            }
        }
        assert_eq!(t.len, n);
        assert!(worst < PosTable::DISP_MAX, "displacement {worst}");
    }

    /// The ClOrdID index against a plain map, through growth, rotation and forgetting, with
    /// ClOrdIDs of 2 to 63 bytes (so the byte ring wraps, pads at its end and grows while
    /// wrapped: the ring is kept short first, then longer).
    #[test]
    fn clordid_index_matches_a_map() {
        use std::collections::HashMap as Map;
        // Room for 64 entries: the index is rebuilt as it grows past that and as the ring
        // outgrows its position bits.
        let mut ix = ClIndex::with_capacity(64);
        let mut model: Map<(u16, String), OrderId> = Map::new();
        let mut order: VecDeque<(u16, String)> = VecDeque::new();
        let mut live = std::collections::HashSet::new();
        let mut next = xorshift(0x1234_5678_9abc_def0);
        for step in 0..20_000u64 {
            let r = next();
            let session = (r % 3) as u16;
            let n = (r >> 8) % 5000;
            let cl = format!("c{n}{}", "x".repeat((n % 59) as usize));
            let key = (session, cl.clone());
            assert_eq!(
                ix.get(session, cl.as_bytes()),
                model.get(&key).copied(),
                "step {step}"
            );
            if !model.contains_key(&key) {
                ix.push(session, cl.as_bytes(), step);
                model.insert(key.clone(), step);
                order.push_back(key);
                if r.is_multiple_of(4) {
                    live.insert(step);
                }
            }
            while ix.len() > if step < 8_000 { 150 } else { 700 } {
                let keep = |o: OrderId, _: &[u8]| live.contains(&o);
                let front = order.pop_front().unwrap();
                let id = model[&front];
                ix.rotate_or_forget(keep);
                if keep(id, b"") {
                    order.push_back(front);
                } else {
                    model.remove(&front);
                }
                if next().is_multiple_of(3) {
                    live.remove(&id);
                }
            }
            assert_eq!(ix.table.len, model.len());
        }
        for ((s, cl), id) in &model {
            assert_eq!(ix.get(*s, cl.as_bytes()), Some(*id));
        }
        let ring: Vec<(u16, String)> = ix
            .iter()
            .map(|(s, cl, _)| (s, String::from_utf8(cl.to_vec()).expect("UTF-8")))
            .collect();
        assert_eq!(ring, Vec::from(order));
        // The ring outgrew both the first table's room and its position bits.
        assert!(
            ix.table.pbits > ClIndex::pbits_for(64),
            "{}",
            ix.table.pbits
        );
        assert!(ix.table.capacity() > 64);
    }

    /// `eq_short` against `==` for every length up to the longest ClOrdID, with one byte
    /// differing at each position, and for unequal lengths.
    #[test]
    fn short_comparison_matches_slice_equality() {
        let a: Vec<u8> = (0..crate::record::STR_LEN_MAX as u8)
            .map(|i| b'A' + i % 50)
            .collect();
        for n in 0..=a.len() {
            let x = &a[..n];
            assert!(eq_short(x, x));
            for at in 0..n {
                let mut y = x.to_vec();
                y[at] ^= 1;
                assert!(!eq_short(x, &y), "length {n}, byte {at}");
            }
            if n > 0 {
                assert!(!eq_short(x, &a[..n - 1]));
                assert!(!eq_short(&a[..n - 1], x));
            }
        }
    }

    /// The one-pass `parse_price` against the straightforward one it replaced (string
    /// splitting and `str::parse`; with the sum checked, where that one could overflow), on
    /// random text over digits, '.', '-', other bytes and long runs of digits, for every
    /// number of decimals and a few ticks.
    #[test]
    fn one_pass_price_parsing_matches_the_reference() {
        let pieces: [&[u8]; 14] = [
            b"0",
            b"1",
            b"9",
            b"5",
            b"00",
            b".",
            b"-",
            b"e",
            b" ",
            b"\xc3\xa9",
            b"922337203685477",
            b"99999999999999999",
            b"0000000000",
            b"1234567890123456",
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut checked = 0;
        for dec in 0..=9u32 {
            for tick in [1i64, 5, 25] {
                let i = inst(tick, dec);
                for _ in 0..4_000 {
                    let mut t = Vec::new();
                    for _ in 0..next() % 7 {
                        t.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
                    }
                    assert_eq!(
                        parse_price(&t, &i),
                        parse_price_reference(&t, &i),
                        "{:?} with {dec} decimals, tick {tick}",
                        String::from_utf8_lossy(&t)
                    );
                    checked += parse_price(&t, &i).is_ok() as u32;
                }
            }
        }
        assert!(checked > 1_000, "{checked} valid prices among the cases");
        // The sum of the whole and fractional parts overflowing is out of range (it wrapped).
        assert_eq!(
            parse_price(b"922337203685477.9999", &inst(1, 4)),
            Err("price out of range")
        );
    }

    #[test]
    fn prices_convert_exactly() {
        let i = inst(1, 2);
        assert_eq!(parse_price(b"12.34", &i), Ok(1234));
        assert_eq!(parse_price(b"12.3", &i), Ok(1230));
        assert_eq!(parse_price(b"12", &i), Ok(1200));
        assert_eq!(parse_price(b"12.340000", &i), Ok(1234));
        assert_eq!(parse_price(b"12.345", &i), Err("price is off the tick"));
        // More than 15 significant digits in the whole part: out of range, whatever the
        // leading zeros; a bad byte after them still makes it "not a decimal".
        assert_eq!(
            parse_price(b"1234567890123456", &i),
            Err("price out of range")
        );
        assert_eq!(
            parse_price(b"1234567890123456.5", &i),
            Err("price out of range")
        );
        assert_eq!(
            parse_price(b"1234567890123456x", &i),
            Err("price is not a decimal")
        );
        assert_eq!(parse_price(b"00000000000000000012.34", &i), Ok(1234));
        assert_eq!(
            parse_price(b"999999999999999.99", &i),
            Ok(99_999_999_999_999_999)
        );
        assert_eq!(parse_price(b"0", &i), Err("price must be positive"));
        assert!(parse_price(b"1e5", &i).is_err());
        assert_eq!(
            parse_price(b"0.07", &inst(5, 2)),
            Err("price is off the tick")
        );
        assert_eq!(parse_price(b"0.05", &inst(5, 2)), Ok(5));
        let fmt = |n: i128, d: u64| {
            let mut v = Vec::new();
            push_price(&mut v, n, d, i);
            String::from_utf8(v).unwrap()
        };
        assert_eq!(fmt(1234, 1), "12.34");
        assert_eq!(fmt(1205, 1), "12.05");
        assert_eq!(fmt(5, 1), "0.05");
        assert_eq!(fmt(1200, 2), "6");
        assert_eq!(fmt(1200, 1), "12");
        assert_eq!(fmt(1000 + 1001, 2), "10.005");
        assert_eq!(fmt(100, 3), "0.3333333333");
        assert_eq!(fmt(1, 7), "0.0014285714");
        assert_eq!(fmt(-1234, 1), "-12.34");
        assert_eq!(fmt(-2461, 2), "-12.305");
        assert_eq!(fmt(3 * 1025, 3), "10.25");
        assert_eq!(fmt(0, 5), "0");
        assert_eq!(fmt(u64::MAX as i128 + 1, 2), "92233720368547758.08");
    }
}
