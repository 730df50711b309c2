//! An auditor that rebuilds what must be true from the command and event streams alone, then
//! checks any matcher's book against it.
//!
//! Role: an independent witness. It never looks inside a matcher: it follows each order's
//! quantity through `Accepted`, `Triggered`, `Trade`, `Canceled` and `Replaced`, and the
//! market-data view through `Level`, and then compares with the resting orders the matcher
//! reports. It works for the reference, the engine, or anything else that emits Rialto events.
//! Fed with [`Auditor::on_command`] it also knows what only the command says: which accepted
//! order is a pending stop, each iceberg's peak (so it follows every order's shown part, its
//! refills and the time priority they take), and which books are in a call auction. Fed with
//! [`Auditor::on_events`] alone it assumes no stops, icebergs or calls beyond what the events
//! show (`Triggered`, `Uncrossed`).
//!
//! Never: trusts a matcher's internal counters; panics on a bad stream (it returns an error
//! naming the first inconsistency).
//!
//! What it checks: trade ids run 1, 2, 3, ... with positive quantities, at the maker's price
//! (at the auction price in an uncross, between the two orders' prices) and never more than the
//! maker's shown part; no trade on a book in a call but its uncross; `maker_leaves`/
//! `taker_leaves` and every canceled quantity agree with the quantity the order still had
//! (shown and hidden); a stop is triggered once, with its quantity and limit, and a pending
//! stop's replace keeps priority; every order conserves quantity
//! (`entered = filled + canceled + replaced_away + leaves`); the resting orders are exactly the
//! live orders that are not pending stops, at the price and quantity the events imply, in price-time order (time = when
//! the order last joined the back of a queue: on coming to rest, a priority-losing replace, or
//! an iceberg refill); no book is crossed outside a call; and the aggregate of `Level` events
//! equals the aggregate of the resting orders' shown parts.

use std::collections::{BTreeMap, BTreeSet};

use types::{AccountId, Command, Event, OrderId, PriceTicks, QtyLots, Side, SymbolId, TradeId};

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
    /// Open quantity, shown and hidden (resting once the command that changed it is finished,
    /// unless the order is a pending stop).
    pub leaves: QtyLots,
    /// When the order last joined the back of a queue (acceptance, trigger, a priority-losing
    /// replace, an iceberg refill).
    pub queued_at: u64,
    /// Iceberg peak from the command (0: all shown, or not known).
    pub display_qty: QtyLots,
    /// The shown part once the order rests; `None` while it has not come to rest since it last
    /// aggressed (then it is `min(display_qty, leaves)` when it does).
    pub shown: Option<QtyLots>,
    /// A stop accepted and not yet triggered (known from the command).
    pub pending: bool,
}

impl AuditOrder {
    /// The shown part while resting.
    fn shown_now(&self) -> QtyLots {
        self.shown.unwrap_or(if self.display_qty == 0 {
            self.leaves
        } else {
            self.display_qty.min(self.leaves)
        })
    }

    /// Takes `qty` from a resting order's shown part; an iceberg whose shown part is used up
    /// with some hidden is refilled and requeued at `clock`.
    fn fill_resting(&mut self, qty: QtyLots, clock: u64) -> Result<(), String> {
        let shown = self.shown_now();
        if qty > shown {
            return Err(format!("traded {qty} while showing {shown}"));
        }
        self.leaves -= qty;
        self.filled += u128::from(qty);
        self.shown = Some(shown - qty);
        if shown == qty && self.leaves > 0 {
            self.shown = None;
            self.queued_at = clock;
        }
        Ok(())
    }
}

/// A resting order as a matcher reports it: `(id, price, qty)` (`qty` shown and hidden).
pub type RestingView = (OrderId, PriceTicks, QtyLots);

/// Rebuilds order and level state from events. Feed it every event, in order.
#[derive(Clone, Debug, Default)]
pub struct Auditor {
    orders: BTreeMap<OrderId, AuditOrder>,
    levels: BTreeMap<(SymbolId, Side, PriceTicks), (QtyLots, u32)>,
    last_trade_id: TradeId,
    clock: u64,
    /// The command whose events are being applied (`on_command`).
    command: Option<Command>,
    /// Books in a call auction (known from the commands).
    in_call: BTreeSet<SymbolId>,
    /// After `Uncrossed`, until the next event that is neither a trade nor a level: the
    /// auction's symbol and price.
    uncross: Option<(SymbolId, PriceTicks)>,
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
        if !matches!(event, Event::Trade { .. } | Event::Level { .. }) {
            self.uncross = None;
        }
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
                let (display_qty, pending) = match self.command {
                    Some(Command::New(o)) if o.id == id => (o.display_qty, o.stop_price > 0),
                    _ => (0, false),
                };
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
                        display_qty,
                        shown: None,
                        pending,
                        ..AuditOrder::default()
                    },
                );
            }
            Event::Rejected { .. } | Event::MassCanceled { .. } => {}
            Event::Triggered {
                id,
                symbol,
                side,
                price,
                qty,
                ..
            } => {
                let known = self.command.is_some();
                let o = self.order(id, "trigger")?;
                if known && !o.pending {
                    return Err(format!("order {id} triggered but it is not a pending stop"));
                }
                if o.leaves == 0 {
                    return Err(format!("order {id} triggered while not live"));
                }
                if (o.symbol, o.side, o.price, o.leaves) != (symbol, Some(side), price, qty) {
                    return Err(format!(
                        "order {id} triggered as {qty}@{price}; events say {}@{}",
                        o.leaves, o.price
                    ));
                }
                o.pending = false;
                o.shown = None;
                o.queued_at = clock;
            }
            Event::Uncrossed { symbol, price, qty } => {
                if qty == 0 {
                    return Err(format!("uncross on symbol {symbol} with volume 0"));
                }
                self.uncross = Some((symbol, price));
            }
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
                let uncross = match self.uncross {
                    Some((s, p)) if s == symbol && p == price => true,
                    Some(_) => {
                        return Err(format!(
                            "trade {trade_id} at {price} on symbol {symbol} in another uncross"
                        ))
                    }
                    None => false,
                };
                if !uncross && self.in_call.contains(&symbol) {
                    return Err(format!(
                        "trade {trade_id} on symbol {symbol}, which is in a call"
                    ));
                }
                if uncross && taker_side != Side::Buy {
                    return Err(format!(
                        "uncross trade {trade_id}: the taker is not the buy"
                    ));
                }
                let maker = self.order(maker_id, "trade")?;
                let maker_at = if uncross {
                    maker.price <= price
                } else {
                    maker.price == price
                };
                if maker.symbol != symbol || !maker_at || maker.pending {
                    return Err(format!(
                        "trade {trade_id} at {price} on symbol {symbol}, but maker {maker_id} rests at {} on {}{}",
                        maker.price,
                        maker.symbol,
                        if maker.pending { " (a pending stop)" } else { "" }
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
                maker
                    .fill_resting(qty, clock)
                    .map_err(|e| format!("trade {trade_id}: maker {maker_id} {e}"))?;
                let taker = self.order(taker_id, "trade")?;
                if taker.leaves < qty || taker.leaves - qty != taker_leaves {
                    return Err(format!(
                        "trade {trade_id}: taker {taker_id} had {} left, traded {qty}, reported leaves {taker_leaves}",
                        taker.leaves
                    ));
                }
                if taker.pending || taker.symbol != symbol || taker.side != Some(taker_side) {
                    return Err(format!(
                        "trade {trade_id}: taker {taker_id} is not a live {taker_side:?} on symbol {symbol}"
                    ));
                }
                if uncross {
                    if taker.price < price {
                        return Err(format!(
                            "uncross trade {trade_id} at {price}: buy {taker_id} rests at {}",
                            taker.price
                        ));
                    }
                    taker
                        .fill_resting(qty, clock)
                        .map_err(|e| format!("uncross trade {trade_id}: buy {taker_id} {e}"))?;
                } else {
                    taker.leaves -= qty;
                    taker.filled += u128::from(qty);
                }
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
                o.pending = false;
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
                let keeps = o.pending || (price == o.price && qty <= o.leaves);
                if keeps == lost_priority {
                    return Err(format!(
                        "order {id}: replace {} -> {qty}@{price} reported lost_priority={lost_priority}",
                        o.leaves
                    ));
                }
                if !o.pending {
                    o.shown = if lost_priority {
                        None
                    } else {
                        Some(o.shown_now().min(qty))
                    };
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

    /// Applies a slice of events (e.g. one command's) without knowing the command.
    pub fn on_events(&mut self, events: &[Event]) -> Result<(), String> {
        events.iter().try_for_each(|e| self.on_event(e))
    }

    /// Applies the events of one command, knowing the command: it tells which accepted order
    /// is a pending stop, an iceberg's peak, and when a book enters or leaves a call.
    pub fn on_command(&mut self, cmd: &Command, events: &[Event]) -> Result<(), String> {
        match *cmd {
            // Not a rejection (no events): the book is in a call from now on.
            Command::CallStart { symbol } if events.is_empty() => {
                self.in_call.insert(symbol);
            }
            // The call ends before the uncross trades and the stops they trigger.
            Command::Uncross { symbol, .. } => {
                self.in_call.remove(&symbol);
            }
            _ => {}
        }
        self.command = Some(*cmd);
        let applied = self.on_events(events);
        self.command = None;
        self.uncross = None;
        applied
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
                    if a.pending {
                        return Err(format!("order {id} rests while a pending stop"));
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
                    l.0 = QtyLots::saturating_add(l.0, a.shown_now());
                    l.1 += 1;
                }
            }
            if let [Some(bid), Some(ask)] = best {
                if bid >= ask && !self.in_call.contains(&symbol) {
                    return Err(format!("symbol {symbol} crossed at rest: {bid} >= {ask}"));
                }
            }
        }
        for (id, o) in &self.orders {
            if o.entered != o.filled + o.canceled + o.replaced_away + u128::from(o.leaves) {
                return Err(format!("order {id} does not conserve quantity: {o:?}"));
            }
            if o.leaves > 0 && !o.pending && !seen.contains_key(id) {
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
