//! Changes to resting orders after they rest: replace (and flash1's modify), mass cancel and
//! the end of the trading day. See the crate docs and `types::Command` for the rules.

use crate::{
    level_event, side_ix, Engine, Ext, MatchEnd, Order, ReplaceRequest, Taker, F_ICEBERG, F_MARKET,
    F_STOP, NIL,
};
use types::{
    AccountId, CancelReason, Event, EventSink, Field, OrderId, PriceTicks, QtyLots, RejectReason,
    Side, SymbolId, TimeInForce,
};

impl Engine {
    pub(crate) fn replace<S: EventSink>(&mut self, r: ReplaceRequest, sink: &mut S) {
        let ReplaceRequest {
            id,
            account,
            symbol,
            price,
            qty,
            requeue,
        } = r;
        let Some(inst) = self.instruments.get(symbol as usize) else {
            return Self::reject(sink, id, RejectReason::Invalid(Field::Symbol));
        };
        if qty == 0 || (inst.lot != 1 && qty % inst.lot != 0) {
            return Self::reject(sink, id, RejectReason::Invalid(Field::Qty));
        }
        let found = self.ids.live_slot(id);
        let owned = |slot: u32| {
            let o = &self.orders[slot as usize];
            o.account == account && o.symbol == symbol
        };
        if price < 0 || (inst.tick != 1 && price % inst.tick != 0) {
            return Self::reject(sink, id, RejectReason::Invalid(Field::Price));
        }
        if price == 0 {
            // Only a pending stop market order has no price to keep.
            let stop_market = found.is_some_and(|s| {
                owned(s) && self.orders[s as usize].flags & (F_STOP | F_MARKET) == F_STOP | F_MARKET
            });
            if !stop_market {
                return Self::reject(sink, id, RejectReason::Invalid(Field::Price));
            }
        }
        let Some(slot) = found.filter(|&s| owned(s)) else {
            return Self::reject(sink, id, RejectReason::UnknownOrder);
        };
        let o = self.orders[slot as usize];
        if o.flags & F_STOP != 0 {
            return self.replace_stop(slot, price, qty, sink);
        }
        let hidden = Self::hidden_of(&self.orders, &self.ext, slot);
        let si = side_ix(o.side);
        if !requeue && price == o.price && qty <= o.qty + hidden {
            let shown = o.qty.min(qty);
            let lad = &mut self.books[symbol as usize][si];
            let idx = lad
                .idx_of(price)
                .expect("engine: resting order inside its ladder window");
            lad.sub_qty(idx, o.qty - shown);
            let r = &mut self.orders[slot as usize];
            r.qty = shown;
            r.orig_qty = qty;
            if o.flags & F_ICEBERG != 0 {
                self.ext[slot as usize].hidden = qty - shown;
                self.hidden.sub(symbol, o.side, price, hidden);
                self.hidden.add(symbol, o.side, price, qty - shown);
            }
            sink.on_event(&Event::Replaced {
                id,
                account,
                symbol,
                price,
                qty,
                lost_priority: false,
            });
            level_event(sink, symbol, lad, idx);
            return;
        }
        let in_call = self.call[symbol as usize];
        if !in_call && o.post_only && self.would_cross(symbol, o.side, Some(price)) {
            return Self::reject(sink, id, RejectReason::PostOnlyWouldCross);
        }
        let own = &self.books[symbol as usize][si];
        let fits = match own.idx_of(price) {
            Some(i) => {
                let others = own.level(i).qty - if price == o.price { o.qty } else { 0 };
                others.checked_add(qty).is_some()
            }
            None => own.can_hold(price),
        };
        if !fits {
            return Self::reject(sink, id, RejectReason::CapacityExceeded);
        }
        sink.on_event(&Event::Replaced {
            id,
            account,
            symbol,
            price,
            qty,
            lost_priority: true,
        });
        {
            let lad = &mut self.books[symbol as usize][si];
            let idx = lad
                .idx_of(o.price)
                .expect("engine: resting order inside its ladder window");
            lad.unlink(&mut self.orders, idx, slot);
            level_event(sink, symbol, lad, idx);
            self.hidden.sub(symbol, o.side, o.price, hidden);
        }
        let taker = Taker {
            id,
            account,
            symbol,
            side: o.side,
            limit: Some(price),
            stp: o.stp,
        };
        let end = if !in_call && self.would_cross(symbol, o.side, Some(price)) {
            self.match_taker(&taker, qty, sink)
        } else {
            MatchEnd::untouched(qty)
        };
        if end.left > 0 && !end.stp_stop {
            let peak = if o.flags & F_ICEBERG != 0 {
                self.ext[slot as usize].display
            } else {
                0
            };
            let shown = if peak != 0 {
                peak.min(end.left)
            } else {
                end.left
            };
            let r = &mut self.orders[slot as usize];
            r.price = price;
            r.qty = shown;
            r.orig_qty = qty;
            if peak != 0 {
                self.ext[slot as usize].hidden = end.left - shown;
                self.hidden.add(symbol, o.side, price, end.left - shown);
            }
            self.rest(slot, None, sink);
        } else {
            if o.flags & F_ICEBERG != 0 {
                self.icebergs[symbol as usize][si] -= 1;
            }
            self.ids.set_gone(id);
            Self::free_slot(&mut self.orders, &mut self.free_head, &mut self.live, slot);
            if end.stp_stop {
                sink.on_event(&Event::Canceled {
                    id,
                    account,
                    symbol,
                    reason: CancelReason::Stp,
                    qty: end.left,
                });
            }
        }
        if self.pending_stops != 0 && end.hi >= end.lo {
            self.run_stops(symbol, end.hi, end.lo, sink);
        }
    }

    /// Flash1's "modify": cancel and reinsert under the same id at `price` and `qty`, always
    /// losing priority (even at the same price with less quantity). Validation and events are
    /// those of a replace that loses priority: `Replaced{lost_priority: true}`, the old
    /// `Level`, then trades, then the new `Level` if it rests.
    pub fn modify_requeue<S: EventSink>(
        &mut self,
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
        price: PriceTicks,
        qty: QtyLots,
        sink: &mut S,
    ) {
        let r = ReplaceRequest {
            id,
            account,
            symbol,
            price,
            qty,
            requeue: true,
        };
        self.replace(r, sink);
    }

    /// Cancels, in (symbol, side, priority) order, every resting order of the selected books
    /// for which `pick` is true.
    fn cancel_where<S: EventSink>(
        &mut self,
        symbol: Option<SymbolId>,
        side: Option<Side>,
        reason: CancelReason,
        pick: impl Fn(&Order, &Ext) -> bool,
        sink: &mut S,
    ) -> u64 {
        let syms = match symbol {
            Some(s) => s as usize..s as usize + 1,
            None => 0..self.books.len(),
        };
        let mut count = 0;
        for sym in syms {
            for sd in [Side::Buy, Side::Sell] {
                if side.is_some_and(|x| x != sd) {
                    continue;
                }
                let mut level = self.books[sym][side_ix(sd)].best_idx();
                while let Some(idx) = level {
                    let mut slot = self.books[sym][side_ix(sd)].head(idx);
                    // Find the next level before this one may disappear.
                    level = self.books[sym][side_ix(sd)].next_worse(idx);
                    while slot != NIL {
                        let next = self.orders[slot as usize].next;
                        if pick(&self.orders[slot as usize], &self.ext_of(slot)) {
                            self.cancel_slot(slot, reason, None, sink);
                            count += 1;
                        }
                        slot = next;
                    }
                }
            }
            if self.stops[sym].is_empty() {
                continue;
            }
            let mut pending = std::mem::take(&mut self.scratch);
            pending.clear();
            self.stops[sym].accepted_order(side, &mut pending);
            for &(_, slot) in &pending {
                if pick(&self.orders[slot as usize], &self.ext_of(slot)) {
                    self.cancel_slot(slot, reason, None, sink);
                    count += 1;
                }
            }
            self.scratch = pending;
        }
        count
    }

    pub(crate) fn mass_cancel<S: EventSink>(
        &mut self,
        account: AccountId,
        symbol: Option<SymbolId>,
        side: Option<Side>,
        sink: &mut S,
    ) {
        if symbol.is_some_and(|s| s as usize >= self.books.len()) {
            return Self::reject(sink, 0, RejectReason::Invalid(Field::Symbol));
        }
        let count = self.cancel_where(
            symbol,
            side,
            CancelReason::User,
            |o, _| o.account == account,
            sink,
        );
        sink.on_event(&Event::MassCanceled { account, count });
    }

    pub(crate) fn expire_day<S: EventSink>(&mut self, symbol: Option<SymbolId>, sink: &mut S) {
        if symbol.is_some_and(|s| s as usize >= self.books.len()) {
            return Self::reject(sink, 0, RejectReason::Invalid(Field::Symbol));
        }
        self.cancel_where(
            symbol,
            None,
            CancelReason::Expired,
            |o, _| o.tif == TimeInForce::Day,
            sink,
        );
    }
}
