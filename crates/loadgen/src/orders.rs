//! One bot's view of its own resting orders: a fixed pool of slots (the active-orders window).
//!
//! Role: know which orders are live so cancels and replaces name real orders, and bound how
//! many orders a bot keeps in the book (like Ember's `activeOrdersWindow`). The driver updates
//! slots from execution reports; generators read them.
//!
//! Never: grows (the slot count is fixed at construction); trusts a reply that names another
//! occupant of the slot (every reply is checked against the request index `k` it names).
//!
//! Invariants: a slot is in `live` iff its state is `Live`, `PendingCancel` or
//! `PendingReplace` (an order the exchange acknowledged and has not reported gone); slot 0 is
//! never used (it means "does not rest").

use types::Side;

/// Where one slot's order stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotState {
    Free,
    /// NewOrderSingle sent, no acknowledgement yet.
    PendingNew,
    /// Acknowledged and resting.
    Live,
    /// Cancel sent, no answer yet.
    PendingCancel,
    /// Replace sent, no answer yet.
    PendingReplace,
}

/// One resting (or about to rest) limit order.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    pub state: SlotState,
    pub symbol: u16,
    pub side: Side,
    pub price_ticks: i64,
    /// Remaining quantity as last reported.
    pub leaves_qty: u64,
    /// The order's total quantity (its NewOrderSingle's, or its last replace's): with
    /// `leaves_qty`, what is filled (a replace must ask for more than that).
    pub order_qty: u64,
    /// Request index of the order's current ClOrdID (its NewOrderSingle or last replace).
    pub cur_k: u64,
    /// Kind letter of the current ClOrdID (`N` or `R`).
    pub cur_kind: u8,
    /// Request index of the cancel or replace in flight.
    pub pending_k: u64,
    pub pending_price_ticks: i64,
    pub pending_qty: u64,
}

impl Slot {
    /// What is filled of the order, as far as its reports have said.
    pub fn filled_qty(&self) -> u64 {
        self.order_qty.saturating_sub(self.leaves_qty)
    }

    const FREE: Slot = Slot {
        state: SlotState::Free,
        symbol: 0,
        side: Side::Buy,
        price_ticks: 0,
        leaves_qty: 0,
        order_qty: 0,
        cur_k: u64::MAX,
        cur_kind: 0,
        pending_k: u64::MAX,
        pending_price_ticks: 0,
        pending_qty: 0,
    };
}

/// The slots of one bot. Slot numbers run from 1 to `window`.
#[derive(Clone, Debug)]
pub struct BotOrders {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live: Vec<u32>,
    live_pos: Vec<u32>,
}

const NOT_LIVE: u32 = u32::MAX;

impl BotOrders {
    pub fn new(window: usize) -> BotOrders {
        let window = window.clamp(1, 1 << 20);
        BotOrders {
            slots: vec![Slot::FREE; window + 1],
            free: (1..=window as u32).rev().collect(),
            live: Vec::with_capacity(window),
            live_pos: vec![NOT_LIVE; window + 1],
        }
    }

    pub fn window(&self) -> usize {
        self.slots.len() - 1
    }

    pub fn slot(&self, n: u32) -> Option<&Slot> {
        if n == 0 {
            return None;
        }
        self.slots.get(n as usize)
    }

    /// Orders acknowledged and not reported gone (including those with a request in flight).
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    pub fn free_count(&self) -> usize {
        self.free.len()
    }

    /// The `i`-th live slot (`i < live_count()`), in no particular order.
    pub fn live_at(&self, i: usize) -> u32 {
        self.live[i]
    }

    /// Takes a free slot for a new order (`None` when the window is full).
    pub fn alloc(&mut self) -> Option<u32> {
        self.free.pop()
    }

    /// Takes slot `n` if it is free (generators that keep fixed quote positions).
    pub fn alloc_at(&mut self, n: u32) -> bool {
        match self.free.iter().position(|&s| s == n) {
            Some(i) => {
                self.free.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// Records the NewOrderSingle sent for slot `n` (taken with `alloc`).
    pub fn on_new_sent(&mut self, n: u32, k: u64, symbol: u16, side: Side, price: i64, qty: u64) {
        let s = &mut self.slots[n as usize];
        *s = Slot {
            state: SlotState::PendingNew,
            symbol,
            side,
            price_ticks: price,
            leaves_qty: qty,
            order_qty: qty,
            cur_k: k,
            cur_kind: crate::clordid::KIND_NEW,
            ..Slot::FREE
        };
    }

    /// Records a cancel (`replace == None`) or a replace sent for live slot `n`.
    pub fn on_request_sent(&mut self, n: u32, k: u64, replace: Option<(i64, u64)>) {
        let s = &mut self.slots[n as usize];
        s.pending_k = k;
        match replace {
            Some((price, qty)) => {
                s.state = SlotState::PendingReplace;
                s.pending_price_ticks = price;
                s.pending_qty = qty;
            }
            None => s.state = SlotState::PendingCancel,
        }
    }

    /// Returns slot `n` unused (a request could not be sent).
    pub fn release(&mut self, n: u32) {
        self.free_slot(n);
    }

    fn free_slot(&mut self, n: u32) {
        let i = n as usize;
        if self.slots[i].state == SlotState::Free {
            return;
        }
        self.slots[i] = Slot::FREE;
        let p = self.live_pos[i];
        if p != NOT_LIVE {
            let last = *self.live.last().unwrap_or(&n);
            self.live.swap_remove(p as usize);
            if last != n {
                self.live_pos[last as usize] = p;
            }
            self.live_pos[i] = NOT_LIVE;
        }
        self.free.push(n);
    }

    fn make_live(&mut self, n: u32) {
        let i = n as usize;
        if self.live_pos[i] == NOT_LIVE {
            self.live_pos[i] = self.live.len() as u32;
            self.live.push(n);
        }
    }

    /// True if `k` is the current or in-flight request of slot `n`.
    fn owns(&self, n: u32, k: u64) -> bool {
        match self.slot(n) {
            Some(s) => s.state != SlotState::Free && (s.cur_k == k || s.pending_k == k),
            None => false,
        }
    }

    /// ExecType New for request `k`.
    pub fn on_new_ack(&mut self, n: u32, k: u64) {
        if self.owns(n, k) && self.slots[n as usize].state == SlotState::PendingNew {
            self.slots[n as usize].state = SlotState::Live;
            self.make_live(n);
        }
    }

    /// A fill, or a report with the order's remaining quantity: 0 means gone.
    pub fn on_leaves(&mut self, n: u32, k: u64, leaves: u64) {
        if !self.owns(n, k) {
            return;
        }
        if leaves == 0 {
            self.free_slot(n);
        } else {
            self.slots[n as usize].leaves_qty = leaves;
        }
    }

    /// The order is gone (rejected, canceled for any reason, expired).
    pub fn on_gone(&mut self, n: u32, k: u64) {
        if self.owns(n, k) {
            self.free_slot(n);
        }
    }

    /// ExecType Replaced answering replace `k`.
    pub fn on_replaced(&mut self, n: u32, k: u64, leaves: Option<u64>) {
        if !self.owns(n, k) {
            return;
        }
        let s = &mut self.slots[n as usize];
        if s.state != SlotState::PendingReplace || s.pending_k != k {
            return;
        }
        s.state = SlotState::Live;
        s.cur_k = k;
        s.cur_kind = crate::clordid::KIND_REPLACE;
        s.price_ticks = s.pending_price_ticks;
        s.leaves_qty = leaves.unwrap_or(s.pending_qty);
        s.order_qty = s.pending_qty;
        s.pending_k = u64::MAX;
        if s.leaves_qty == 0 {
            self.free_slot(n);
        }
    }

    /// OrderCancelReject answering request `k`: the order stays as it was.
    pub fn on_cancel_rejected(&mut self, n: u32, k: u64) {
        let Some(s) = self.slot(n) else { return };
        if s.state == SlotState::Free || s.pending_k != k {
            return;
        }
        let s = &mut self.slots[n as usize];
        s.state = SlotState::Live;
        s.pending_k = u64::MAX;
    }

    /// Forgets every order (after a mass cancel or a lost connection).
    pub fn clear(&mut self) {
        for n in 1..self.slots.len() as u32 {
            self.free_slot(n);
        }
    }
}

#[cfg(test)]
mod tests;
