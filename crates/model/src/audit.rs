//! An auditor that rebuilds what must be true from the event stream alone, then checks any
//! matcher's book against it.
//!
//! Role: an independent witness. It never looks inside a matcher: it follows each order's
//! quantity through `Accepted`, `Trade`, `Canceled` and `Replaced`, and the market-data view
//! through `Level`, and then compares with the resting orders the matcher reports. It works for
//! the reference, the engine, or anything else that emits Rialto events.
//!
//! Never: trusts a matcher's internal counters; panics on a bad stream (it returns an error
//! naming the first inconsistency).
//!
//! What it checks: trade ids run 1, 2, 3, ... with positive quantities at prices on the book;
//! `maker_leaves`/`taker_leaves` and every canceled quantity agree with the quantity the order
//! still had; every order conserves quantity (`entered = filled + canceled + replaced_away +
//! leaves`); the resting orders are exactly the orders with leaves, at the price and quantity the
//! events imply, in price-time order (time = when the order last came to rest); no book is
//! crossed; and the aggregate of `Level` events equals the aggregate of the resting orders.

use std::collections::BTreeMap;

use types::{AccountId, Event, OrderId, PriceTicks, QtyLots, Side, SymbolId, TradeId};

/// One order as the events describe it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AuditOrder {
    pub symbol: SymbolId,
    pub account: AccountId,
    pub side: Option<Side>,
    pub price: PriceTicks,
    pub entered: u128,
    pub replaced_away: u128,
    pub filled: u128,
    pub canceled: u128,
    /// Open quantity (resting once the command that changed it is finished).
    pub leaves: QtyLots,
    /// When the order last joined the back of a queue (acceptance or a priority-losing replace).
    pub queued_at: u64,
}

/// A resting order as a matcher reports it: `(id, price, qty)`.
pub type RestingView = (OrderId, PriceTicks, QtyLots);

/// Rebuilds order and level state from events. Feed it every event, in order.
#[derive(Clone, Debug, Default)]
pub struct Auditor {
    orders: BTreeMap<OrderId, AuditOrder>,
    levels: BTreeMap<(SymbolId, Side, PriceTicks), (QtyLots, u32)>,
    last_trade_id: TradeId,
    clock: u64,
}

impl Auditor {
    pub fn new() -> Auditor {
        Auditor::default()
    }

    /// Orders ever accepted, as the events describe them.
    pub fn orders(&self) -> &BTreeMap<OrderId, AuditOrder> {
        &self.orders
    }

    /// Levels as market data sees them: `(symbol, side, price) -> (qty, orders)`.
    pub fn levels(&self) -> &BTreeMap<(SymbolId, Side, PriceTicks), (QtyLots, u32)> {
        &self.levels
    }

    fn order(&mut self, id: OrderId, what: &str) -> Result<&mut AuditOrder, String> {
        self.orders
            .get_mut(&id)
            .ok_or_else(|| format!("{what} names order {id}, which was never accepted"))
    }

    /// Applies one event; the error names the first inconsistency.
    pub fn on_event(&mut self, event: &Event) -> Result<(), String> {
        self.clock += 1;
        let clock = self.clock;
        match *event {
            Event::Accepted {
                id,
                account,
                symbol,
                side,
                price,
                qty,
            } => {
                if self.orders.contains_key(&id) {
                    return Err(format!("order {id} accepted twice"));
                }
                if qty == 0 {
                    return Err(format!("order {id} accepted with qty 0"));
                }
                self.orders.insert(
                    id,
                    AuditOrder {
                        symbol,
                        account,
                        side: Some(side),
                        price,
                        entered: u128::from(qty),
                        leaves: qty,
                        queued_at: clock,
                        ..AuditOrder::default()
                    },
                );
            }
            Event::Rejected { .. } | Event::MassCanceled { .. } => {}
            Event::Trade {
                trade_id,
                symbol,
                price,
                qty,
                maker_id,
                taker_id,
                taker_side,
                maker_leaves,
                taker_leaves,
                ..
            } => {
                if trade_id != self.last_trade_id + 1 {
                    return Err(format!(
                        "trade id {trade_id} follows {}",
                        self.last_trade_id
                    ));
                }
                self.last_trade_id = trade_id;
                if qty == 0 {
                    return Err(format!("trade {trade_id} has qty 0"));
                }
                let maker = self.order(maker_id, "trade")?;
                if maker.symbol != symbol || maker.price != price {
                    return Err(format!(
                        "trade {trade_id} at {price} on symbol {symbol}, but maker {maker_id} rests at {} on {}",
                        maker.price, maker.symbol
                    ));
                }
                if maker.side != Some(taker_side.opposite()) {
                    return Err(format!(
                        "trade {trade_id}: maker {maker_id} on the taker's side"
                    ));
                }
                if maker.leaves < qty || maker.leaves - qty != maker_leaves {
                    return Err(format!(
                        "trade {trade_id}: maker {maker_id} had {} left, traded {qty}, reported leaves {maker_leaves}",
                        maker.leaves
                    ));
                }
                maker.leaves -= qty;
                maker.filled += u128::from(qty);
                let taker = self.order(taker_id, "trade")?;
                if taker.leaves < qty || taker.leaves - qty != taker_leaves {
                    return Err(format!(
                        "trade {trade_id}: taker {taker_id} had {} left, traded {qty}, reported leaves {taker_leaves}",
                        taker.leaves
                    ));
                }
                taker.leaves -= qty;
                taker.filled += u128::from(qty);
            }
            Event::Canceled { id, qty, .. } => {
                let o = self.order(id, "cancel")?;
                if qty == 0 || qty != o.leaves {
                    return Err(format!(
                        "order {id} canceled {qty} while it had {} left",
                        o.leaves
                    ));
                }
                o.leaves = 0;
                o.canceled += u128::from(qty);
            }
            Event::Replaced {
                id,
                price,
                qty,
                lost_priority,
                ..
            } => {
                let o = self.order(id, "replace")?;
                if o.leaves == 0 {
                    return Err(format!("order {id} replaced while not live"));
                }
                if qty == 0 {
                    return Err(format!("order {id} replaced to qty 0"));
                }
                let keeps = price == o.price && qty <= o.leaves;
                if keeps == lost_priority {
                    return Err(format!(
                        "order {id}: replace {} -> {qty}@{price} reported lost_priority={lost_priority}",
                        o.leaves
                    ));
                }
                if qty >= o.leaves {
                    o.entered += u128::from(qty - o.leaves);
                } else {
                    o.replaced_away += u128::from(o.leaves - qty);
                }
                o.leaves = qty;
                o.price = price;
                if lost_priority {
                    o.queued_at = clock;
                }
            }
            Event::Level {
                symbol,
                side,
                price,
                qty,
                orders,
            } => {
                if (qty == 0) != (orders == 0) {
                    return Err(format!(
                        "level {symbol} {side:?} {price}: qty {qty} with {orders} orders"
                    ));
                }
                if qty == 0 {
                    self.levels.remove(&(symbol, side, price));
                } else {
                    self.levels.insert((symbol, side, price), (qty, orders));
                }
            }
        }
        Ok(())
    }

    /// Applies a slice of events (e.g. one command's).
    pub fn on_events(&mut self, events: &[Event]) -> Result<(), String> {
        events.iter().try_for_each(|e| self.on_event(e))
    }

    /// Checks a matcher's resting orders against the events seen so far. Call it between
    /// commands. `resting(symbol, side)` lists one side in the matcher's priority order.
    pub fn check_book(
        &self,
        symbols: SymbolId,
        resting: impl Fn(SymbolId, Side) -> Vec<RestingView>,
    ) -> Result<(), String> {
        let mut seen = BTreeMap::new();
        let mut levels = BTreeMap::new();
        for symbol in 0..symbols {
            let mut best = [None, None];
            for (k, side) in [Side::Buy, Side::Sell].into_iter().enumerate() {
                let orders = resting(symbol, side);
                best[k] = orders.first().map(|o| o.1);
                let mut prev: Option<(PriceTicks, u64, OrderId)> = None;
                for &(id, price, qty) in &orders {
                    let a = self
                        .orders
                        .get(&id)
                        .ok_or_else(|| format!("order {id} rests but was never accepted"))?;
                    if a.symbol != symbol || a.side != Some(side) {
                        return Err(format!("order {id} rests on the wrong book or side"));
                    }
                    if qty == 0 || qty != a.leaves || price != a.price {
                        return Err(format!(
                            "order {id} rests as {qty}@{price}; events say {}@{}",
                            a.leaves, a.price
                        ));
                    }
                    if seen.insert(id, ()).is_some() {
                        return Err(format!("order {id} rests twice"));
                    }
                    if let Some((pp, pq, pid)) = prev {
                        let better = match side {
                            Side::Buy => pp > price,
                            Side::Sell => pp < price,
                        };
                        if !(better || (pp == price && pq < a.queued_at)) {
                            return Err(format!(
                                "symbol {symbol} {side:?}: order {pid} ({pp}) queued before {id} ({price}) against price-time priority"
                            ));
                        }
                    }
                    prev = Some((price, a.queued_at, id));
                    let l = levels.entry((symbol, side, price)).or_insert((0, 0u32));
                    l.0 = QtyLots::saturating_add(l.0, qty);
                    l.1 += 1;
                }
            }
            if let [Some(bid), Some(ask)] = best {
                if bid >= ask {
                    return Err(format!("symbol {symbol} crossed at rest: {bid} >= {ask}"));
                }
            }
        }
        for (id, o) in &self.orders {
            if o.entered != o.filled + o.canceled + o.replaced_away + u128::from(o.leaves) {
                return Err(format!("order {id} does not conserve quantity: {o:?}"));
            }
            if o.leaves > 0 && !seen.contains_key(id) {
                return Err(format!(
                    "order {id} has {} left but does not rest",
                    o.leaves
                ));
            }
        }
        if levels != self.levels {
            let diff: Vec<_> = levels
                .iter()
                .filter(|(k, v)| self.levels.get(k) != Some(v))
                .map(|(k, v)| format!("book {k:?}={v:?} events {:?}", self.levels.get(k)))
                .chain(
                    self.levels
                        .iter()
                        .filter(|(k, _)| !levels.contains_key(k))
                        .map(|(k, v)| format!("book {k:?}=none events {v:?}")),
                )
                .collect();
            return Err(format!(
                "Level events disagree with the book: {}",
                diff.join(", ")
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
