//! Pending stop and stop-limit orders and their triggers (see `types::NewOrder`).
//!
//! A pending stop lives in the order slab and the id index (so cancel, replace and mass cancel
//! find it as they find a resting order) with `F_STOP` set, and in its symbol's `StopBook`,
//! never in a level. Triggers: `Engine::run_stops` after a command's trades, in rounds.
//!
//! Invariants: each `StopBook` entry's slot holds a pending stop of that symbol and side with
//! that stop price and acceptance stamp (`Order::seq`), and every pending stop has one entry.

use std::collections::BTreeSet;

use crate::{Engine, Exec, Ext, Order, RestingOrder, F_ICEBERG, F_MARKET, F_STOP, NIL};
use types::{
    CancelReason, Event, EventSink, NewOrder, OrdType, OrderId, PriceTicks, QtyLots, RejectReason,
    Side, SymbolId, TimeInForce,
};

/// One symbol's pending stops, by trigger price.
#[derive(Clone, Debug, Default)]
pub(crate) struct StopBook {
    /// `(stop price, acceptance stamp, slot)`: the lowest stop price triggers first.
    buys: BTreeSet<(PriceTicks, u64, u32)>,
    /// `(-stop price, acceptance stamp, slot)`: the highest stop price triggers first.
    sells: BTreeSet<(PriceTicks, u64, u32)>,
}

impl StopBook {
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.buys.is_empty() && self.sells.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.buys.len() + self.sells.len()
    }

    fn key(side: Side, stop: PriceTicks, seq: u64, slot: u32) -> (PriceTicks, u64, u32) {
        match side {
            Side::Buy => (stop, seq, slot),
            Side::Sell => (-stop, seq, slot),
        }
    }

    fn set(&mut self, side: Side) -> &mut BTreeSet<(PriceTicks, u64, u32)> {
        match side {
            Side::Buy => &mut self.buys,
            Side::Sell => &mut self.sells,
        }
    }

    /// Appends `(acceptance stamp, slot)` of the stops (of one side, or both) in the order they
    /// were accepted.
    pub(crate) fn accepted_order(&self, side: Option<Side>, out: &mut Vec<(u64, u32)>) {
        let start = out.len();
        if side != Some(Side::Sell) {
            out.extend(self.buys.iter().map(|&(_, seq, slot)| (seq, slot)));
        }
        if side != Some(Side::Buy) {
            out.extend(self.sells.iter().map(|&(_, seq, slot)| (seq, slot)));
        }
        out[start..].sort_unstable();
    }

    /// Removes and appends `(acceptance stamp, slot)` of every stop that a trade at `hi` (buys)
    /// or `lo` (sells) triggers.
    fn take_triggered(&mut self, hi: PriceTicks, lo: PriceTicks, out: &mut Vec<(u64, u32)>) {
        while let Some(&(stop, seq, slot)) = self.buys.first() {
            if stop > hi {
                break;
            }
            self.buys.pop_first();
            out.push((seq, slot));
        }
        while let Some(&(neg, seq, slot)) = self.sells.first() {
            if -neg < lo {
                break;
            }
            self.sells.pop_first();
            out.push((seq, slot));
        }
    }

    /// Checks the book against the slab; returns its number of stops.
    pub(crate) fn check(
        &self,
        symbol: SymbolId,
        orders: &[Order],
        ext: &[Ext],
        live_slot: impl Fn(OrderId) -> Option<u32>,
    ) -> Result<usize, String> {
        for (side, set) in [(Side::Buy, &self.buys), (Side::Sell, &self.sells)] {
            for &(k, seq, slot) in set {
                let o = &orders[slot as usize];
                let stop = if side == Side::Buy { k } else { -k };
                if o.flags & F_STOP == 0
                    || o.side != side
                    || o.symbol != symbol
                    || o.seq != seq
                    || ext[slot as usize].stop_price != stop
                    || stop <= 0
                    || o.qty == 0
                {
                    return Err(format!("pending stop {}: does not match its entry", o.id));
                }
                if live_slot(o.id) != Some(slot) {
                    return Err(format!(
                        "pending stop {}: id index does not point at it",
                        o.id
                    ));
                }
            }
        }
        Ok(self.buys.len() + self.sells.len())
    }
}

impl Engine {
    /// Accepts a validated stop order: it waits, off the book, for its trigger.
    pub(crate) fn accept_stop<S: EventSink>(&mut self, o: &NewOrder, sink: &mut S) {
        if self.slab_full() {
            return Self::reject(sink, o.id, RejectReason::CapacityExceeded);
        }
        let market = o.ord_type == OrdType::Market;
        let price = if market { 0 } else { o.price };
        sink.on_event(&Event::Accepted {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            side: o.side,
            price,
            qty: o.qty,
        });
        self.ids.mark_used(o.id);
        self.insert_stop(o);
    }

    /// Puts an accepted stop (its id already used) in the slab, the id index and its stop
    /// book.
    pub(crate) fn insert_stop(&mut self, o: &NewOrder) {
        let market = o.ord_type == OrdType::Market;
        let price = if market { 0 } else { o.price };
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut flags = F_STOP;
        if market {
            flags |= F_MARKET;
        }
        if o.display_qty != 0 {
            flags |= F_ICEBERG;
        }
        let slot = self.alloc_slot(Order {
            id: o.id,
            price,
            qty: o.qty,
            orig_qty: o.qty,
            seq,
            prev: NIL,
            next: NIL,
            account: o.account,
            symbol: o.symbol,
            side: o.side,
            tif: o.tif,
            post_only: false,
            stp: o.stp,
            flags,
        });
        self.ids.set_live(o.id, slot);
        self.ext_put(
            slot,
            crate::Ext {
                stop_price: o.stop_price,
                display: o.display_qty,
                hidden: 0,
                expire_ns: o.expire_ns,
            },
        );
        self.stops[o.symbol as usize]
            .set(o.side)
            .insert(StopBook::key(o.side, o.stop_price, seq, slot));
        self.pending_stops += 1;
        if o.tif == TimeInForce::Gtd {
            self.push_expiry(o.expire_ns, o.id);
        }
    }

    /// Cancels a pending stop: `Canceled` (no `Level`: it was never in a book).
    pub(crate) fn cancel_stop<S: EventSink>(
        &mut self,
        slot: u32,
        reason: CancelReason,
        sink: &mut S,
    ) {
        let o = self.orders[slot as usize];
        let stop = self.ext[slot as usize].stop_price;
        let removed = self.stops[o.symbol as usize]
            .set(o.side)
            .remove(&StopBook::key(o.side, stop, o.seq, slot));
        assert!(removed, "engine: pending stop {} in its stop book", o.id);
        self.pending_stops -= 1;
        self.ids.set_gone(o.id);
        Self::free_slot(&mut self.orders, &mut self.free_head, &mut self.live, slot);
        sink.on_event(&Event::Canceled {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            reason,
            qty: o.qty,
        });
    }

    /// Replaces a pending stop's quantity and limit price in place (a stop market order keeps
    /// price 0); it keeps its place in the trigger order.
    pub(crate) fn replace_stop<S: EventSink>(
        &mut self,
        slot: u32,
        price: PriceTicks,
        qty: QtyLots,
        sink: &mut S,
    ) {
        let o = &mut self.orders[slot as usize];
        if o.flags & F_MARKET == 0 {
            o.price = price;
        }
        o.qty = qty;
        o.orig_qty = qty;
        sink.on_event(&Event::Replaced {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            price: o.price,
            qty,
            lost_priority: false,
        });
    }

    /// Triggers, in rounds, the stops of `symbol` that trades between `lo` and `hi` reach, and
    /// runs each (see `types::Event::Triggered`).
    pub(crate) fn run_stops<S: EventSink>(
        &mut self,
        symbol: SymbolId,
        mut hi: PriceTicks,
        mut lo: PriceTicks,
        sink: &mut S,
    ) {
        let sym = symbol as usize;
        let mut batch = std::mem::take(&mut self.scratch);
        loop {
            batch.clear();
            self.stops[sym].take_triggered(hi, lo, &mut batch);
            if batch.is_empty() {
                break;
            }
            self.pending_stops -= batch.len();
            batch.sort_unstable();
            let (mut next_lo, mut next_hi) = (PriceTicks::MAX, PriceTicks::MIN);
            for &(_, slot) in &batch {
                let o = self.orders[slot as usize];
                let x = self.ext[slot as usize];
                let market = o.flags & F_MARKET != 0;
                let order = NewOrder {
                    id: o.id,
                    account: o.account,
                    symbol: o.symbol,
                    side: o.side,
                    ord_type: if market {
                        OrdType::Market
                    } else {
                        OrdType::Limit
                    },
                    tif: o.tif,
                    price: o.price,
                    qty: o.qty,
                    post_only: false,
                    stp: o.stp,
                    stop_price: 0,
                    display_qty: x.display,
                    expire_ns: x.expire_ns,
                };
                sink.on_event(&Event::Triggered {
                    id: o.id,
                    account: o.account,
                    symbol: o.symbol,
                    side: o.side,
                    price: o.price,
                    qty: o.qty,
                });
                let may_rest = !market && !matches!(o.tif, TimeInForce::Ioc | TimeInForce::Fok);
                let (rest_idx, can_rest) = if may_rest {
                    match self.rest_fit(o.symbol, o.side, o.price, o.qty) {
                        Some(i) => (i, true),
                        None => (None, false),
                    }
                } else {
                    (None, true)
                };
                let exec = Exec {
                    rest_idx,
                    slot: Some(slot),
                    can_rest,
                    in_call: self.call[sym],
                };
                let end = self.execute(&order, exec, sink);
                next_lo = next_lo.min(end.lo);
                next_hi = next_hi.max(end.hi);
            }
            if next_hi < next_lo {
                break;
            }
            (hi, lo) = (next_hi, next_lo);
        }
        self.scratch = batch;
    }

    /// The pending stops of `symbol`, in the order they were accepted.
    pub fn pending_stops(&self, symbol: SymbolId) -> Vec<RestingOrder> {
        let mut v = Vec::new();
        if let Some(book) = self.stops.get(symbol as usize) {
            book.accepted_order(None, &mut v);
        }
        v.into_iter().map(|(_, slot)| self.view(slot)).collect()
    }
}
