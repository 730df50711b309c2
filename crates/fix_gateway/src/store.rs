//! Each session's resend store: its newest application messages, ExecutionReports and
//! OrderCancelRejects kept as recipes (the fields they were made of) and formatted only when
//! written to a live connection or resent, so recovery formats no report at all.
//!
//! Role: the `fix::MessageStore` of the edge's sessions. A message is written once, in place,
//! into the slot of the one it replaces (no entry is built elsewhere and copied in); the bytes
//! of every entry (a body, or a recipe's ClOrdIDs) live back to back in a circular buffer
//! (`exchange::ClBytes`: forgetting an entry frees its bytes, nothing is ever compacted).
//!
//! Never: grows past `max` entries (a push past it reuses the slot of the entry it forgets),
//! allocates per message in steady state.

use crate::config::FixConfig;
use exchange::{ClBytes, OrderId};
use fix::app::{
    AppMessage, CxlRejResponseTo, DropCopy, ExecType, ExecutionReport, OrdStatus,
    OrderCancelReject, OrderExt,
};
use fix::{Encoder, FixVersion, MessageStore, Stored};
use std::sync::Arc;
use types::{CancelReason, OrdType, Side, TimeInForce};

/// What an ExecutionReport says, kept instead of its bytes. Every field is the value at the
/// time the report was generated; its ClOrdID (and OrigClOrdID) are the entry's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ExecRecipe {
    pub order_id: OrderId,
    /// ExecID (17) is `exec_seq.exec_n`.
    pub exec_seq: u64,
    pub exec_n: u32,
    pub exec_type: ExecType,
    pub ord_status: OrdStatus,
    pub side: Side,
    pub ord_type: OrdType,
    pub tif: TimeInForce,
    pub account: u32,
    pub symbol: u32,
    pub price: i64,
    pub order_qty: u64,
    /// LastPx and LastQty of a fill.
    pub last: Option<(i64, u64)>,
    pub leaves_qty: u64,
    pub cum_qty: u64,
    pub notional: i128,
    /// Text (58) of a cancel not asked for by the owner.
    pub text: Option<CancelReason>,
    /// StopPx, MaxFloor and ExpireTime of a stop, iceberg or GTD order (all 0 otherwise):
    /// every report of the order carries them.
    pub ext: OrderExt,
    /// A drop copy of the report to this session (the owner of the order): formatted as
    /// `fix::app::DropCopy`, DeliverToCompID its SenderCompID.
    pub copy_of: Option<u16>,
}

/// What an OrderCancelReject with a fixed text says, kept like `ExecRecipe` (replay rejects
/// many cancels and formats none of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CancelRejectRecipe {
    /// OrderID and OrdStatus of the order, if known.
    pub order: Option<(OrderId, OrdStatus)>,
    pub replace: bool,
    pub reason_code: u32,
    pub text: &'static str,
}

/// A stored message's body (inline: no allocation per message).
#[derive(Clone, Copy, Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Body {
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
pub(crate) struct StoredMeta {
    pub seq: u64,
    pub sending_ts: u64,
    /// Absolute position (in `Store::bytes`) and length of the entry's bytes.
    pub start: u32,
    pub len: u32,
    /// Of a recipe: the first `cl_len` bytes are the ClOrdID, the rest the OrigClOrdID (if
    /// `has_orig`).
    pub cl_len: u8,
    pub has_orig: bool,
    pub msg_type: u8,
    pub body: Body,
}

impl StoredMeta {
    /// A placeholder (a slot not written yet, the scratch entry).
    pub(crate) const EMPTY: StoredMeta = StoredMeta {
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

/// The last `max` application messages of a session. `ring` holds at most `max` entries,
/// allocated once: a push past `max` reuses the slot of the entry it forgets, so every
/// session's store stays as small as it can (8 sessions x 5,000 entries, about 7 MB, stays in
/// the last-level cache).
#[derive(Clone, Debug)]
pub struct Store {
    cfg: Arc<FixConfig>,
    /// The stored entries, oldest first from `head`: `ring[head..]` then `ring[..head]`. The
    /// ring grows in order (`head` 0) until it holds `max` entries; from then on a push
    /// overwrites the oldest entry in its slot.
    ring: Vec<StoredMeta>,
    head: usize,
    bytes: ClBytes,
    max: usize,
    /// Replay only (`FixEdge::bound_stores`): application messages numbered below this are
    /// not stored, because the store will have forgotten them by the end of the journal. 0
    /// (store everything) when live. Not state: never hashed or snapshotted.
    pub(crate) skip_below: u64,
    /// Where such a message's recipe is written (and dropped).
    scratch: StoredMeta,
    /// Bodies formatted for a resend.
    enc: Encoder,
}

impl Store {
    /// Most slots reserved up front (a larger `max` grows the ring by doubling first).
    const RESERVE_MAX: usize = 1 << 16;
    /// How many pushes ahead `push_slot` prefetches the slot it will overwrite (a session
    /// gets about one message in eight records of the bench's flow).
    const PREFETCH_AHEAD: usize = 2;

    pub fn new(cfg: Arc<FixConfig>) -> Store {
        let max = cfg.resend_store_max;
        Store {
            cfg,
            ring: Vec::new(),
            head: 0,
            bytes: ClBytes::new(0),
            max,
            skip_below: 0,
            scratch: StoredMeta::EMPTY,
            enc: Encoder::default(),
        }
    }

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

    /// The slot of application message `seq`: its store slot with its bytes `cl` and `orig`
    /// (a body, or a recipe's ClOrdID and OrigClOrdID) stored and `seq`, `sending_ts` and
    /// `msg_type` set, or the scratch entry when a bounded replay knows the store will have
    /// forgotten it by the end. The caller writes the body in place.
    #[inline(always)]
    pub(crate) fn slot(
        &mut self,
        seq: u64,
        msg_type: u8,
        ts: u64,
        cl: &[u8],
        orig: Option<&[u8]>,
    ) -> &mut StoredMeta {
        let m = if seq < self.skip_below {
            &mut self.scratch
        } else {
            self.push_slot(cl, orig)
        };
        m.seq = seq;
        m.sending_ts = ts;
        m.msg_type = msg_type;
        m
    }

    /// Takes the slot of the next message, forgetting the oldest beyond the newest `max`:
    /// stores its bytes and returns the slot with `start`, `len`, `cl_len` and `has_orig` set.
    #[inline(always)]
    fn push_slot(&mut self, cl: &[u8], orig: Option<&[u8]>) -> &mut StoredMeta {
        let max = self.max.max(1);
        let i = if self.ring.len() == max {
            // The steady state: the oldest entry's slot takes the new one. The slot a few
            // pushes ahead is cold (written `max` pushes ago): start loading it now.
            let i = self.head;
            self.head = if i + 1 == max { 0 } else { i + 1 };
            let a = i + Self::PREFETCH_AHEAD;
            engine::hint::prefetch_all(&self.ring[if a < max { a } else { a % max }]);
            // The replaced entry's bytes are freed. Its own header says where they end: the
            // oldest entry left starts there or, after a wrap of the buffer, later.
            let old = &self.ring[i];
            let freed_to = if max == 1 {
                self.bytes.tail()
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

    /// `push_slot` while the ring is not `max` long: it grows, or after a restore it is put
    /// in order and cut to the newest `max - 1` first. Returns the new slot (at the end).
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
            let next = self.ring.first().map_or(self.bytes.tail(), |m| m.start);
            self.bytes.set_head(next);
        }
        self.ring.push(StoredMeta::EMPTY);
        self.ring.len() - 1
    }

    /// Stores a message given as its body.
    pub(crate) fn push_body(&mut self, seq: u64, msg_type: u8, sending_ts: u64, body: &[u8]) {
        let m = self.slot(seq, msg_type, sending_ts, body, None);
        m.cl_len = 0;
        m.body = Body::Bytes;
    }

    /// The newest entry.
    pub(crate) fn last(&self) -> &StoredMeta {
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

    /// Writes the body (the fields after the standard header) of stored message `m` as
    /// `version` has it.
    pub(crate) fn body_into(&self, m: &StoredMeta, version: FixVersion, enc: &mut Encoder) {
        match &m.body {
            Body::Bytes => enc.raw(self.bytes_of(m)),
            recipe => {
                let (cl, orig) = self.ids(m);
                self.recipe_into(recipe, (cl, orig), m.sending_ts, version, enc);
            }
        }
    }

    /// Writes the body a recipe stands for (`Body::Bytes` writes nothing: its bytes are the
    /// entry's), with its ClOrdID and OrigClOrdID `ids`, sent at `sending_ts`.
    pub(crate) fn recipe_into(
        &self,
        recipe: &Body,
        (cl, orig): (&[u8], Option<&[u8]>),
        sending_ts: u64,
        version: FixVersion,
        enc: &mut Encoder,
    ) {
        match recipe {
            Body::Bytes => {}
            Body::Exec(r) => {
                let inst = &self.cfg.instruments[r.symbol as usize];
                let report = ExecutionReport {
                    order_id: r.order_id,
                    cl_ord_id: cl,
                    orig_cl_ord_id: orig,
                    exec_id: (r.exec_seq, r.exec_n),
                    exec_type: r.exec_type,
                    ord_status: r.ord_status,
                    account: r.account,
                    symbol: inst.symbol.as_bytes(),
                    side: r.side,
                    ord_type: r.ord_type,
                    price: r.price,
                    time_in_force: r.tif,
                    order_qty: r.order_qty,
                    ext: r.ext,
                    last: r.last,
                    leaves_qty: r.leaves_qty,
                    cum_qty: r.cum_qty,
                    notional: r.notional,
                    price_decimals: inst.price_decimals,
                    text: r.text.map(|t| t.text().as_bytes()),
                    transact_time_ns: sending_ts,
                };
                match r.copy_of {
                    None => report.encode_body(version, enc),
                    Some(owner) => DropCopy {
                        deliver_to_comp_id: self.cfg.sessions[owner as usize]
                            .sender_comp_id
                            .as_bytes(),
                        report: &report,
                    }
                    .encode_body(version, enc),
                }
            }
            Body::CancelReject(r) => {
                OrderCancelReject {
                    order_id: r.order.map(|o| o.0),
                    cl_ord_id: cl,
                    orig_cl_ord_id: orig.unwrap_or_default(),
                    ord_status: r.order.map(|o| o.1),
                    response_to: if r.replace {
                        CxlRejResponseTo::CancelReplaceRequest
                    } else {
                        CxlRejResponseTo::CancelRequest
                    },
                    reason: r.reason_code,
                    text: r.text.as_bytes(),
                }
                .encode_body(version, enc);
            }
        }
    }

    /// How many stored messages a session can still ask for (see `live`).
    pub(crate) fn live_len(&self) -> usize {
        self.ring.len().min(self.max.max(1))
    }

    /// The stored messages a session can still ask for, oldest first: the newest `max`.
    pub(crate) fn live(&self) -> impl Iterator<Item = &StoredMeta> {
        let (newer, older) = self.ring.split_at(self.head);
        older
            .iter()
            .chain(newer)
            .skip(self.ring.len().saturating_sub(self.max.max(1)))
    }

    /// A stored entry's kind, its recipe, and its bytes (snapshots).
    pub(crate) fn parts<'a>(&'a self, m: &'a StoredMeta) -> (&'a Body, &'a [u8], Option<&'a [u8]>) {
        match m.body {
            Body::Bytes => (&m.body, self.bytes_of(m), None),
            _ => {
                let (cl, orig) = self.ids(m);
                (&m.body, cl, orig)
            }
        }
    }

    /// Stores an entry as a snapshot had it (any number of them: a restore).
    pub(crate) fn restore_entry(
        &mut self,
        seq: u64,
        msg_type: u8,
        sending_ts: u64,
        body: Body,
        cl: &[u8],
        orig: Option<&[u8]>,
    ) {
        let max = self.max;
        self.max = usize::MAX;
        let m = self.push_slot(cl, orig);
        m.seq = seq;
        m.sending_ts = sending_ts;
        m.msg_type = msg_type;
        m.body = body;
        if matches!(body, Body::Bytes) {
            m.cl_len = 0;
        }
        self.max = max;
    }
}

impl MessageStore for Store {
    fn resend(
        &mut self,
        begin: u64,
        end: u64,
        version: FixVersion,
        each: &mut dyn FnMut(Stored<'_>),
    ) {
        let mut enc = std::mem::take(&mut self.enc);
        for m in self.live() {
            if m.seq < begin || m.seq > end {
                continue;
            }
            enc.begin_body();
            self.body_into(m, version, &mut enc);
            each(Stored {
                seq: m.seq,
                msg_type: std::slice::from_ref(&m.msg_type),
                sending_time_ns: m.sending_ts,
                body: enc.body(),
            });
        }
        self.enc = enc;
    }

    fn reset(&mut self) {
        self.ring.clear();
        self.head = 0;
        self.bytes.set_head(self.bytes.tail());
    }
}

#[cfg(test)]
mod tests;
