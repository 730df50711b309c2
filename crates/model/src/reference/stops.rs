//! Pending stop and stop-limit orders: held off the book until a trade at or through their stop
//! price, then run as new orders, in trigger rounds.
//!
//! A round takes the highest and lowest price traded in the symbol since the previous round,
//! removes every pending stop of that symbol those prices trigger (a buy: highest `>=` its stop;
//! a sell: lowest `<=` its stop), and runs them one after the other in acceptance order:
//! `Triggered`, then what a new order with its fields emits after `Accepted`. Their trades feed
//! the next round; rounds go on until one triggers nothing.

use types::{
    AccountId, CancelReason, Event, EventSink, NewOrder, OrdType, OrderId, PriceTicks, QtyLots,
    Side, SymbolId,
};

use super::Reference;

/// Does a trade range `(hi, lo)` trigger `stop`?
fn triggers(stop: &NewOrder, hi: PriceTicks, lo: PriceTicks) -> bool {
    match stop.side {
        Side::Buy => hi >= stop.stop_price,
        Side::Sell => lo <= stop.stop_price,
    }
}

impl Reference {
    /// Pending stops of one symbol in acceptance order, with their current quantity and limit
    /// (`price` 0 for a stop market order). Empty for an unknown symbol.
    pub fn pending_stops(&self, symbol: SymbolId) -> Vec<NewOrder> {
        self.books
            .get(symbol as usize)
            .map(|b| b.stops.clone())
            .unwrap_or_default()
    }

    /// The pending stop with this id, if any (any symbol, any account).
    pub fn find_pending(&self, id: OrderId) -> Option<NewOrder> {
        self.books
            .iter()
            .flat_map(|b| b.stops.iter())
            .find(|o| o.id == id)
            .copied()
    }

    /// The pending stop `id` of `account` on `symbol`, if there is one.
    pub(super) fn owned_stop(
        &self,
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
    ) -> Option<NewOrder> {
        self.books
            .get(symbol as usize)?
            .stops
            .iter()
            .find(|o| o.id == id && o.account == account)
            .copied()
    }

    /// Removes a pending stop and emits its `Canceled` (never a `Level`: it never rested).
    pub(super) fn cancel_stop<S: EventSink>(
        &mut self,
        stop: &NewOrder,
        reason: CancelReason,
        sink: &mut S,
    ) {
        let stops = &mut self.books[stop.symbol as usize].stops;
        let Some(pos) = stops.iter().position(|o| o.id == stop.id) else {
            return;
        };
        let o = stops.remove(pos);
        self.cancel_event(sink, o.id, o.account, o.symbol, reason, o.qty);
    }

    /// Replaces a pending stop in place: new quantity and limit (a stop market order ignores
    /// the price), same place in the trigger order, same stop price. `Replaced` kept, no `Level`.
    pub(super) fn replace_stop<S: EventSink>(
        &mut self,
        stop: &NewOrder,
        price: PriceTicks,
        qty: QtyLots,
        sink: &mut S,
    ) {
        let price = match stop.ord_type {
            OrdType::Limit => price,
            OrdType::Market => 0,
        };
        self.note_replace(stop.id, stop.qty, qty);
        if let Some(o) = self.books[stop.symbol as usize]
            .stops
            .iter_mut()
            .find(|o| o.id == stop.id)
        {
            o.qty = qty;
            o.price = price;
        }
        sink.on_event(&Event::Replaced {
            id: stop.id,
            account: stop.account,
            symbol: stop.symbol,
            price,
            qty,
            lost_priority: false,
        });
    }

    /// Runs trigger rounds on `symbol` until one triggers nothing (see the module docs).
    pub(super) fn trigger_stops<S: EventSink>(&mut self, symbol: SymbolId, sink: &mut S) {
        loop {
            let book = &mut self.books[symbol as usize];
            let Some((hi, lo)) = book.traded.take() else {
                return;
            };
            let (fired, kept): (Vec<NewOrder>, Vec<NewOrder>) =
                book.stops.iter().partition(|o| triggers(o, hi, lo));
            if fired.is_empty() {
                return;
            }
            book.stops = kept;
            for o in &fired {
                sink.on_event(&Event::Triggered {
                    id: o.id,
                    account: o.account,
                    symbol: o.symbol,
                    side: o.side,
                    price: o.price,
                    qty: o.qty,
                });
                self.run_order(o, sink);
            }
        }
    }
}
