//! The orders the exchange remembers: a slab of records, live orders by id, finished ones in
//! the order they finished (for status requests), with bounded work per order.

use crate::index::home_in;
use crate::OrderExt;
use crate::{Backing, ClOrdId, OrderId};
use std::collections::{BTreeMap, VecDeque};
use types::{OrdType, Side, TimeInForce};

/// Terminal orders kept for status requests before the oldest are forgotten.
pub(crate) const DONE_ORDERS_MAX: usize = 1 << 16;

/// How an order stands: live (resting, or being matched on arrival), or how it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OrderState {
    Live = 0,
    Filled = 1,
    Canceled = 2,
    /// A DAY order at the end of the trading day.
    Expired = 3,
}

/// An order's status as reports give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrderStatus {
    New,
    PartiallyFilled,
    Filled,
    Canceled,
    Expired,
}

/// What the exchange remembers of an order (the engine knows only ids and ticks), as reports
/// show it. 128 bytes, aligned to a cache line so that a record is two lines, never three (the
/// slab is random access: a record a new order reuses was last touched `DONE_ORDERS_MAX`
/// orders ago).
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(align(64))]
pub struct OrderRecord {
    /// The originator that entered it (a FIX session, an API key): the only one that may
    /// cancel or replace it, and the one its reports go to.
    pub owner: u16,
    pub account: u32,
    pub symbol: u32,
    pub side: Side,
    pub ord_type: OrdType,
    pub tif: TimeInForce,
    /// Limit price in the instrument's units (0 for a market order).
    pub price: i64,
    /// Current client order id (the latest accepted cancel/replace's).
    pub cl_ord_id: ClOrdId,
    pub order_qty: u64,
    pub cum_qty: u64,
    pub leaves_qty: u64,
    /// Sum of price * qty over fills, in price units.
    pub notional: i128,
    pub state: OrderState,
}

const _: () = assert!(std::mem::size_of::<OrderRecord>() == 128);

impl OrderRecord {
    /// The status a report gives it.
    #[inline]
    pub fn status(&self) -> OrderStatus {
        match self.state {
            OrderState::Filled => OrderStatus::Filled,
            OrderState::Canceled => OrderStatus::Canceled,
            OrderState::Expired => OrderStatus::Expired,
            OrderState::Live if self.cum_qty > 0 => OrderStatus::PartiallyFilled,
            OrderState::Live => OrderStatus::New,
        }
    }

    /// Still live.
    #[inline]
    pub fn is_live(&self) -> bool {
        self.state == OrderState::Live
    }

    /// A record to overwrite (`Orders::insert_new_live` on a slab with no free slot).
    const EMPTY: OrderRecord = OrderRecord {
        owner: 0,
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
        state: OrderState::Live,
    };
}

/// The orders the exchange remembers: live ones (at most `orders_max`) and finished ones (the
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
pub(crate) struct Orders {
    pub(crate) slab: Vec<OrderRecord>,
    pub(crate) free: Vec<u32>,
    pub(crate) live: SlotTable,
    pub(crate) done: VecDeque<(OrderId, u32)>,
    pub(crate) done_ix: DoneIndex,
    /// Stop, iceberg and GTD attributes of the remembered orders that have any (few: the
    /// plain order's path only checks that this is empty).
    pub(crate) ext: BTreeMap<OrderId, OrderExt>,
}

/// How many retirements `Orders::done_ix` lags behind `Orders::done` (see there).
pub(crate) const DONE_INDEX_LAG: usize = 16;

/// How many finished orders ahead of the oldest `retire` prefetches what forgetting it
/// touches (its index bucket and its record's slot, reused by the next new order).
pub(crate) const DONE_PREFETCH: usize = 8;

/// Order id -> slab slot: open addressing with linear probing (at most 5/8 full),
/// backward-shift deletion, a multiplicative hash (ids are the exchange's own, so there is
/// no collision attack; sequential ids spread evenly). A bucket is 16 bytes; an empty one has
/// slot `SlotTable::EMPTY`.
#[derive(Clone)]
pub struct SlotTable {
    pub(crate) buckets: Vec<(OrderId, u32)>,
    pub(crate) shift: u32,
    pub(crate) len: usize,
}

impl SlotTable {
    const EMPTY: u32 = u32::MAX;

    /// A table that holds `n` ids without growing.
    pub fn with_capacity(n: usize) -> SlotTable {
        let cap = (n * 8 / 5 + 1).next_power_of_two().max(16);
        let buckets = vec![(0, Self::EMPTY); cap];
        SlotTable {
            buckets,
            shift: 64 - cap.trailing_zeros(),
            len: 0,
        }
    }

    #[inline(always)]
    pub fn home(&self, id: OrderId) -> usize {
        (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline(always)]
    pub fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    /// The bucket holding `id`, if any.
    #[inline(always)]
    pub fn find(&self, id: OrderId) -> Option<usize> {
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

    /// Starts loading `id`'s home bucket (a hint only).
    #[inline(always)]
    pub fn prefetch(&self, id: OrderId) {
        engine::hint::prefetch(&self.buckets[self.home(id)]);
    }

    #[inline(always)]
    pub fn get(&self, id: OrderId) -> Option<u32> {
        self.find(id).map(|b| self.buckets[b].1)
    }

    /// Maps `id` (not in the table) to `slot`.
    #[inline]
    pub fn insert(&mut self, id: OrderId, slot: u32) {
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
    pub fn grow(&mut self) {
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
    pub fn remove_at(&mut self, mut i: usize) {
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
    pub fn put(&mut self, id: u64, slot: u32) {
        match self.find(id) {
            Some(b) => self.buckets[b].1 = slot,
            None => self.insert(id, slot),
        }
    }

    /// Removes `id`; returns its slot if it was in the table.
    pub fn remove(&mut self, id: u64) -> Option<u32> {
        let b = self.find(id)?;
        let slot = self.buckets[b].1;
        self.remove_at(b);
        Some(slot)
    }

    pub fn clear(&mut self) {
        self.buckets.fill((0, Self::EMPTY));
        self.len = 0;
    }

    /// Every (id, slot), in bucket order.
    pub fn iter(&self) -> impl Iterator<Item = (OrderId, u32)> + '_ {
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
pub(crate) struct DoneIndex {
    pub(crate) cells: Vec<(OrderId, u32)>,
    pub(crate) mask: usize,
    pub(crate) overflow: SlotTable,
}

impl DoneIndex {
    const EMPTY: u32 = SlotTable::EMPTY;

    /// An index for about `n` ids: `n` cells rounded up to a power of two (the exchange's
    /// `DONE_ORDERS_MAX + 1` rounds up to twice `DONE_ORDERS_MAX`).
    pub(crate) fn with_capacity(n: usize) -> DoneIndex {
        let cells = n.next_power_of_two().max(16);
        DoneIndex {
            cells: vec![(0, Self::EMPTY); cells],
            mask: cells - 1,
            overflow: SlotTable::with_capacity(1024),
        }
    }

    #[inline(always)]
    pub(crate) fn cell(&self, id: OrderId) -> usize {
        id as usize & self.mask
    }

    /// Indexes `id` (not indexed yet) at `slot`; an id in its cell moves to the overflow.
    #[inline]
    pub(crate) fn insert(&mut self, id: OrderId, slot: u32) {
        let c = self.cell(id);
        let (old, old_slot) = self.cells[c];
        if old_slot != Self::EMPTY {
            self.overflow.insert(old, old_slot);
        }
        self.cells[c] = (id, slot);
    }

    #[inline]
    pub(crate) fn get(&self, id: OrderId) -> Option<u32> {
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
    pub(crate) fn remove(&mut self, id: OrderId) -> Option<u32> {
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
    pub(crate) fn prefetch(&self, id: OrderId) {
        engine::hint::prefetch(&self.cells[self.cell(id)]);
    }
}

impl Orders {
    /// Room for every finished order from the start (address space only), so retiring never
    /// copies the ring or the slab on the way up.
    pub(crate) fn new(backing: Backing, later: &mut engine::hint::Populate) -> Orders {
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
            ext: BTreeMap::new(),
        }
    }

    /// The order types II attributes of remembered order `id` (plain: all 0).
    #[inline]
    pub(crate) fn ext_of(&self, id: OrderId) -> OrderExt {
        if self.ext.is_empty() {
            return OrderExt::default();
        }
        self.ext.get(&id).copied().unwrap_or_default()
    }

    /// The slot of remembered order `id` (live or finished).
    #[inline(always)]
    pub(crate) fn slot(&self, id: OrderId) -> Option<u32> {
        match self.live.get(id) {
            Some(s) => Some(s),
            None => self.done_slot(id),
        }
    }

    /// The slot of finished order `id` (rare: out of line, so `slot` stays small).
    #[inline(never)]
    pub(crate) fn done_slot(&self, id: OrderId) -> Option<u32> {
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
    pub(crate) fn get(&self, id: &OrderId) -> Option<&OrderRecord> {
        self.slot(*id).map(|s| &self.slab[s as usize])
    }

    /// The record of live order `id`.
    #[inline]
    pub(crate) fn live(&self, id: &OrderId) -> Option<&OrderRecord> {
        self.live.get(*id).map(|s| &self.slab[s as usize])
    }

    /// Every live order's record.
    pub(crate) fn live_records(&self) -> impl Iterator<Item = &OrderRecord> {
        self.live.iter().map(|(_, s)| &self.slab[s as usize])
    }

    /// Remembers `o` as live order `id` (replacing its record if `id` is live already).
    #[inline]
    pub(crate) fn insert_live(&mut self, id: OrderId, o: OrderRecord) {
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
    pub(crate) fn insert_new_live(&mut self, id: OrderId, fill: impl FnOnce(&mut OrderRecord)) {
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
                self.slab.push(OrderRecord::EMPTY);
                let s = self.slab.len() - 1;
                fill(&mut self.slab[s]);
                s as u32
            }
        };
        self.live.insert(id, slot);
    }

    /// Forgets a live order entirely (one the engine rejected).
    pub(crate) fn remove_live(&mut self, id: &OrderId) -> Option<OrderRecord> {
        let slot = self.live.remove(*id)?;
        self.free.push(slot);
        if !self.ext.is_empty() {
            self.ext.remove(id);
        }
        Some(self.slab[slot as usize].clone())
    }

    /// Moves live order `id` to the finished ones, forgetting the oldest finished order
    /// beyond `DONE_ORDERS_MAX`.
    #[inline]
    pub(crate) fn retire(&mut self, id: OrderId) {
        if !self.push_done(id) {
            return;
        }
        if self.done.len() > DONE_ORDERS_MAX {
            if let Some((old, slot)) = self.done.pop_front() {
                self.done_ix.remove(old);
                self.free.push(slot);
                if !self.ext.is_empty() {
                    self.ext.remove(&old);
                }
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
    pub(crate) fn push_done(&mut self, id: OrderId) -> bool {
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
    pub(crate) fn sorted(&self) -> Vec<(OrderId, &OrderRecord)> {
        let mut v: Vec<(OrderId, &OrderRecord)> = self
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

#[cfg(test)]
mod tests;
