//! The naive reference matcher: the executable form of the matching rules.
//!
//! Role: be obviously right, not fast. Each side of each book is a `Vec` kept sorted by
//! priority (re-sorted after every insert), every lookup is a linear scan, used ids live in a
//! `BTreeSet`. It is written from the issue text and the `types` doc comments only, never from
//! the engine's code, so that the two can check each other.
//!
//! Never: clocks, randomness, I/O, panics on any command. It has no capacity limits, so it never
//! emits `RejectReason::CapacityExceeded`; compare it with the engine only on streams that stay
//! within the engine's limits.
//!
//! Invariants (checked by [`Reference::check_invariants`]): a book is never crossed at rest;
//! every resting quantity is positive and on the lot grid; each side is in priority order; each
//! order's quantity is conserved (`entered = filled + canceled + replaced_away + remaining`).

use std::collections::{BTreeMap, BTreeSet};

use types::{
    AccountId, CancelReason, Command, Event, EventSink, Field, Instrument, Matcher, NewOrder,
    OrdType, OrderId, PriceTicks, QtyLots, RejectReason, Side, StpMode, SymbolId, TimeInForce,
    TradeId,
};

/// One order resting in a book.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RestingOrder {
    pub id: OrderId,
    pub account: AccountId,
    pub side: Side,
    pub price: PriceTicks,
    /// Remaining (open) quantity; always positive while resting.
    pub qty: QtyLots,
    pub tif: TimeInForce,
    /// Entered as post-only; a replace that would make it cross is rejected.
    pub post_only: bool,
    pub stp: StpMode,
    /// Arrival stamp at this price: smaller is earlier in the queue. Renewed when a replace
    /// loses priority.
    pub seq: u64,
}

/// Where every lot of one accepted order went. Kept for dead orders too. Sums are `u128`:
/// repeated replaces can enter more than `u64::MAX` lots over an order's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OrderLedger {
    /// Quantity on acceptance plus every increase made by replaces.
    pub entered: u128,
    /// Quantity removed by replaces that lowered the remaining quantity.
    pub replaced_away: u128,
    pub filled: u128,
    pub canceled: u128,
    /// Quantity still resting (0 once the order is dead).
    pub remaining: QtyLots,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Book {
    bids: Vec<RestingOrder>,
    asks: Vec<RestingOrder>,
}

impl Book {
    fn side(&self, side: Side) -> &Vec<RestingOrder> {
        match side {
            Side::Buy => &self.bids,
            Side::Sell => &self.asks,
        }
    }
    fn side_mut(&mut self, side: Side) -> &mut Vec<RestingOrder> {
        match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        }
    }
}

/// The aggressor while it walks the opposite side.
#[derive(Clone, Copy, Debug)]
struct Taker {
    id: OrderId,
    account: AccountId,
    symbol: SymbolId,
    side: Side,
    /// `None` for a market order (no price limit).
    limit: Option<PriceTicks>,
    stp: StpMode,
}

/// How an aggressor's walk ended.
enum Walk {
    /// Stopped by price, by an empty side, or fully filled; `remaining` is what is left.
    Done { remaining: QtyLots },
    /// Self-trade prevention canceled the aggressor's remainder (event already emitted).
    StpCanceled,
}

/// Sort key giving priority order: better price first, then earlier arrival.
fn priority_key(side: Side, order: &RestingOrder) -> (PriceTicks, u64) {
    match side {
        // Prices are positive, so negation cannot overflow.
        Side::Buy => (-order.price, order.seq),
        Side::Sell => (order.price, order.seq),
    }
}

/// Would an aggressor on `side` with `limit` trade against a maker resting at `maker_price`?
fn crosses(side: Side, limit: Option<PriceTicks>, maker_price: PriceTicks) -> bool {
    match (side, limit) {
        (_, None) => true,
        (Side::Buy, Some(limit)) => maker_price <= limit,
        (Side::Sell, Some(limit)) => maker_price >= limit,
    }
}

/// The naive reference matcher. See the crate docs for the exact event contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    instruments: Vec<Instrument>,
    books: Vec<Book>,
    used_ids: BTreeSet<OrderId>,
    ledgers: BTreeMap<OrderId, OrderLedger>,
    next_trade_id: TradeId,
    next_seq: u64,
}

/// Alias kept for readers who look for a "book".
pub type ReferenceBook = Reference;

impl Reference {
    /// An empty matcher over `instruments`; symbol id `i` is `instruments[i]`.
    pub fn new(instruments: &[Instrument]) -> Reference {
        Reference {
            instruments: instruments.to_vec(),
            books: vec![Book::default(); instruments.len()],
            used_ids: BTreeSet::new(),
            ledgers: BTreeMap::new(),
            next_trade_id: 1,
            next_seq: 0,
        }
    }

    pub fn instruments(&self) -> &[Instrument] {
        &self.instruments
    }

    /// Resting orders of one side in priority order (empty for an unknown symbol).
    pub fn resting(&self, symbol: SymbolId, side: Side) -> &[RestingOrder] {
        match self.books.get(symbol as usize) {
            Some(book) => book.side(side),
            None => &[],
        }
    }

    /// Aggregated levels of one side, best first: `(price, qty, orders)`.
    pub fn levels(&self, symbol: SymbolId, side: Side) -> Vec<(PriceTicks, QtyLots, u32)> {
        let mut out: Vec<(PriceTicks, QtyLots, u32)> = Vec::new();
        for o in self.resting(symbol, side) {
            match out.last_mut() {
                Some(last) if last.0 == o.price => {
                    last.1 = last.1.saturating_add(o.qty);
                    last.2 += 1;
                }
                _ => out.push((o.price, o.qty, 1)),
            }
        }
        out
    }

    /// The resting order with this id, if any (any symbol, any account).
    pub fn find(&self, id: OrderId) -> Option<(SymbolId, RestingOrder)> {
        for (symbol, book) in self.books.iter().enumerate() {
            for o in book.bids.iter().chain(book.asks.iter()) {
                if o.id == id {
                    return Some((symbol as SymbolId, *o));
                }
            }
        }
        None
    }

    /// Where the lots of an accepted order went, `None` if `id` was never accepted.
    pub fn ledger(&self, id: OrderId) -> Option<OrderLedger> {
        self.ledgers.get(&id).copied()
    }

    /// True once a new order with this id was accepted (live or past).
    pub fn is_used(&self, id: OrderId) -> bool {
        self.used_ids.contains(&id)
    }

    /// The id the next trade will get.
    pub fn next_trade_id(&self) -> TradeId {
        self.next_trade_id
    }

    /// Checks every invariant named in the module docs; the error names the first broken one.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut live = BTreeMap::new();
        for (symbol, book) in self.books.iter().enumerate() {
            let inst = &self.instruments[symbol];
            for side in [Side::Buy, Side::Sell] {
                let orders = book.side(side);
                for w in orders.windows(2) {
                    if priority_key(side, &w[0]) >= priority_key(side, &w[1]) {
                        return Err(format!(
                            "symbol {symbol} {side:?}: order {} is queued before {} against priority",
                            w[0].id, w[1].id
                        ));
                    }
                }
                for o in orders {
                    if o.side != side {
                        return Err(format!("order {} rests on the wrong side", o.id));
                    }
                    if o.qty == 0 || !o.qty.is_multiple_of(inst.lot) {
                        return Err(format!("order {} rests with qty {}", o.id, o.qty));
                    }
                    if o.price <= 0 || o.price % inst.tick != 0 {
                        return Err(format!("order {} rests at price {}", o.id, o.price));
                    }
                    if live.insert(o.id, o.qty).is_some() {
                        return Err(format!("order {} rests twice", o.id));
                    }
                }
            }
            if let (Some(bid), Some(ask)) = (book.bids.first(), book.asks.first()) {
                if bid.price >= ask.price {
                    return Err(format!(
                        "symbol {symbol} crossed at rest: bid {} ({}) >= ask {} ({})",
                        bid.price, bid.id, ask.price, ask.id
                    ));
                }
            }
        }
        for (id, l) in &self.ledgers {
            if !self.used_ids.contains(id) {
                return Err(format!("order {id} has a ledger but its id is not used"));
            }
            if l.entered != l.filled + l.canceled + l.replaced_away + u128::from(l.remaining) {
                return Err(format!("order {id} does not conserve quantity: {l:?}"));
            }
            if l.remaining != live.get(id).copied().unwrap_or(0) {
                return Err(format!(
                    "order {id}: ledger remaining {} but book has {:?}",
                    l.remaining,
                    live.get(id)
                ));
            }
        }
        if let Some(id) = live.keys().find(|id| !self.ledgers.contains_key(id)) {
            return Err(format!("order {id} rests without a ledger"));
        }
        Ok(())
    }

    fn reject<S: EventSink>(sink: &mut S, id: OrderId, reason: RejectReason) {
        sink.on_event(&Event::Rejected { id, reason });
    }

    fn level_event(&self, symbol: SymbolId, side: Side, price: PriceTicks) -> Event {
        let mut qty = 0;
        let mut orders = 0;
        for o in self.resting(symbol, side) {
            if o.price == price {
                qty = QtyLots::saturating_add(qty, o.qty);
                orders += 1;
            }
        }
        Event::Level {
            symbol,
            side,
            price,
            qty,
            orders,
        }
    }

    fn emit_level<S: EventSink>(
        &self,
        sink: &mut S,
        symbol: SymbolId,
        side: Side,
        price: PriceTicks,
    ) {
        sink.on_event(&self.level_event(symbol, side, price));
    }

    /// Puts an order at the back of its price's queue and emits the level.
    fn rest<S: EventSink>(&mut self, symbol: SymbolId, mut order: RestingOrder, sink: &mut S) {
        order.seq = self.next_seq;
        self.next_seq += 1;
        let side = order.side;
        let orders = self.books[symbol as usize].side_mut(side);
        orders.push(order);
        orders.sort_by_key(|o| priority_key(side, o));
        self.emit_level(sink, symbol, side, order.price);
    }

    /// Removes a resting order and returns it (`None` if not resting there).
    fn take(&mut self, symbol: SymbolId, side: Side, id: OrderId) -> Option<RestingOrder> {
        let orders = self.books[symbol as usize].side_mut(side);
        let pos = orders.iter().position(|o| o.id == id)?;
        Some(orders.remove(pos))
    }

    fn cancel_event<S: EventSink>(
        &mut self,
        sink: &mut S,
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
        reason: CancelReason,
        qty: QtyLots,
    ) {
        if let Some(l) = self.ledgers.get_mut(&id) {
            l.canceled += u128::from(qty);
            l.remaining -= qty;
        }
        sink.on_event(&Event::Canceled {
            id,
            account,
            symbol,
            reason,
            qty,
        });
    }

    /// Cancels a resting order: `Canceled`, then the `Level` of its price.
    fn cancel_resting<S: EventSink>(
        &mut self,
        symbol: SymbolId,
        order: RestingOrder,
        reason: CancelReason,
        sink: &mut S,
    ) {
        if self.take(symbol, order.side, order.id).is_some() {
            self.cancel_event(sink, order.id, order.account, symbol, reason, order.qty);
            self.emit_level(sink, symbol, order.side, order.price);
        }
    }

    /// Quantity a FOK aggressor could trade right now, honouring its STP mode.
    fn fillable(&self, taker: &Taker) -> QtyLots {
        let mut sum = 0;
        for maker in self.resting(taker.symbol, taker.side.opposite()) {
            if !crosses(taker.side, taker.limit, maker.price) {
                break;
            }
            if maker.account == taker.account {
                match taker.stp {
                    StpMode::None => sum = QtyLots::saturating_add(sum, maker.qty),
                    // The own order is canceled and matching goes on past it.
                    StpMode::CancelOldest => {}
                    // Matching stops at the first own order.
                    StpMode::CancelNewest | StpMode::CancelBoth => break,
                }
            } else {
                sum = QtyLots::saturating_add(sum, maker.qty);
            }
        }
        sum
    }

    /// Walks the opposite side: trades at the makers' prices in priority order, applying STP.
    fn walk<S: EventSink>(&mut self, taker: Taker, mut remaining: QtyLots, sink: &mut S) -> Walk {
        let maker_side = taker.side.opposite();
        while remaining > 0 {
            let Some(maker) = self.resting(taker.symbol, maker_side).first().copied() else {
                break;
            };
            if !crosses(taker.side, taker.limit, maker.price) {
                break;
            }
            if maker.account == taker.account && taker.stp != StpMode::None {
                match taker.stp {
                    StpMode::CancelOldest => {
                        self.cancel_resting(taker.symbol, maker, CancelReason::Stp, sink);
                        continue;
                    }
                    StpMode::CancelBoth => {
                        self.cancel_resting(taker.symbol, maker, CancelReason::Stp, sink);
                    }
                    StpMode::CancelNewest | StpMode::None => {}
                }
                self.cancel_event(
                    sink,
                    taker.id,
                    taker.account,
                    taker.symbol,
                    CancelReason::Stp,
                    remaining,
                );
                return Walk::StpCanceled;
            }
            let qty = remaining.min(maker.qty);
            remaining -= qty;
            let maker_leaves = maker.qty - qty;
            {
                let orders = self.books[taker.symbol as usize].side_mut(maker_side);
                if maker_leaves == 0 {
                    orders.remove(0);
                } else {
                    orders[0].qty = maker_leaves;
                }
            }
            for (id, q) in [(maker.id, qty), (taker.id, qty)] {
                if let Some(l) = self.ledgers.get_mut(&id) {
                    l.filled += u128::from(q);
                    l.remaining -= q;
                }
            }
            let trade_id = self.next_trade_id;
            self.next_trade_id += 1;
            sink.on_event(&Event::Trade {
                trade_id,
                symbol: taker.symbol,
                price: maker.price,
                qty,
                maker_id: maker.id,
                taker_id: taker.id,
                maker_account: maker.account,
                taker_account: taker.account,
                taker_side: taker.side,
                maker_leaves,
                taker_leaves: remaining,
            });
            self.emit_level(sink, taker.symbol, maker_side, maker.price);
        }
        Walk::Done { remaining }
    }

    fn new_order<S: EventSink>(&mut self, o: &NewOrder, sink: &mut S) {
        let Some(inst) = self.instruments.get(o.symbol as usize).copied() else {
            return Self::reject(sink, o.id, RejectReason::Invalid(Field::Symbol));
        };
        if o.qty == 0 || !o.qty.is_multiple_of(inst.lot) {
            return Self::reject(sink, o.id, RejectReason::Invalid(Field::Qty));
        }
        let limit = match o.ord_type {
            OrdType::Limit => {
                if o.price <= 0 || o.price % inst.tick != 0 {
                    return Self::reject(sink, o.id, RejectReason::Invalid(Field::Price));
                }
                Some(o.price)
            }
            OrdType::Market => None,
        };
        if self.used_ids.contains(&o.id) {
            return Self::reject(sink, o.id, RejectReason::DuplicateId);
        }
        let taker = Taker {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            side: o.side,
            limit,
            stp: o.stp,
        };
        if o.post_only {
            let best = self.resting(o.symbol, o.side.opposite()).first();
            if best.is_some_and(|m| crosses(o.side, limit, m.price)) {
                return Self::reject(sink, o.id, RejectReason::PostOnlyWouldCross);
            }
        }
        self.used_ids.insert(o.id);
        self.ledgers.insert(
            o.id,
            OrderLedger {
                entered: u128::from(o.qty),
                remaining: o.qty,
                ..OrderLedger::default()
            },
        );
        sink.on_event(&Event::Accepted {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            side: o.side,
            price: limit.unwrap_or(0),
            qty: o.qty,
        });
        if o.tif == TimeInForce::Fok && self.fillable(&taker) < o.qty {
            return self.cancel_event(sink, o.id, o.account, o.symbol, CancelReason::Fok, o.qty);
        }
        let remaining = match self.walk(taker, o.qty, sink) {
            Walk::StpCanceled | Walk::Done { remaining: 0 } => return,
            Walk::Done { remaining } => remaining,
        };
        let reason = match (o.ord_type, o.tif) {
            (OrdType::Market, _) => CancelReason::NoLiquidity,
            (OrdType::Limit, TimeInForce::Ioc) => CancelReason::Ioc,
            // Unreachable after the fillable check; kept total rather than panicking.
            (OrdType::Limit, TimeInForce::Fok) => CancelReason::Fok,
            (OrdType::Limit, TimeInForce::Gtc | TimeInForce::Day) => {
                let order = RestingOrder {
                    id: o.id,
                    account: o.account,
                    side: o.side,
                    price: o.price,
                    qty: remaining,
                    tif: o.tif,
                    post_only: o.post_only,
                    stp: o.stp,
                    seq: 0,
                };
                return self.rest(o.symbol, order, sink);
            }
        };
        self.cancel_event(sink, o.id, o.account, o.symbol, reason, remaining);
    }

    /// The resting order `id` of `account` on `symbol`, if there is one.
    fn owned(&self, id: OrderId, account: AccountId, symbol: SymbolId) -> Option<RestingOrder> {
        let book = self.books.get(symbol as usize)?;
        book.bids
            .iter()
            .chain(book.asks.iter())
            .find(|o| o.id == id && o.account == account)
            .copied()
    }

    fn cancel<S: EventSink>(
        &mut self,
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
        sink: &mut S,
    ) {
        if symbol as usize >= self.books.len() {
            return Self::reject(sink, id, RejectReason::Invalid(Field::Symbol));
        }
        match self.owned(id, account, symbol) {
            Some(order) => self.cancel_resting(symbol, order, CancelReason::User, sink),
            None => Self::reject(sink, id, RejectReason::UnknownOrder),
        }
    }

    fn replace<S: EventSink>(
        &mut self,
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
        price: PriceTicks,
        qty: QtyLots,
        sink: &mut S,
    ) {
        let Some(inst) = self.instruments.get(symbol as usize).copied() else {
            return Self::reject(sink, id, RejectReason::Invalid(Field::Symbol));
        };
        if qty == 0 || !qty.is_multiple_of(inst.lot) {
            return Self::reject(sink, id, RejectReason::Invalid(Field::Qty));
        }
        if price <= 0 || price % inst.tick != 0 {
            return Self::reject(sink, id, RejectReason::Invalid(Field::Price));
        }
        let Some(order) = self.owned(id, account, symbol) else {
            return Self::reject(sink, id, RejectReason::UnknownOrder);
        };
        let keeps_priority = price == order.price && qty <= order.qty;
        if !keeps_priority && order.post_only {
            let best = self.resting(symbol, order.side.opposite()).first();
            if best.is_some_and(|m| crosses(order.side, Some(price), m.price)) {
                return Self::reject(sink, id, RejectReason::PostOnlyWouldCross);
            }
        }
        if let Some(l) = self.ledgers.get_mut(&id) {
            if qty >= order.qty {
                l.entered += u128::from(qty - order.qty);
            } else {
                l.replaced_away += u128::from(order.qty - qty);
            }
            l.remaining = qty;
        }
        let replaced = Event::Replaced {
            id,
            account,
            symbol,
            price,
            qty,
            lost_priority: !keeps_priority,
        };
        if keeps_priority {
            let orders = self.books[symbol as usize].side_mut(order.side);
            if let Some(o) = orders.iter_mut().find(|o| o.id == id) {
                o.qty = qty;
            }
            sink.on_event(&replaced);
            return self.emit_level(sink, symbol, order.side, price);
        }
        self.take(symbol, order.side, id);
        sink.on_event(&replaced);
        self.emit_level(sink, symbol, order.side, order.price);
        let taker = Taker {
            id,
            account,
            symbol,
            side: order.side,
            limit: Some(price),
            stp: order.stp,
        };
        match self.walk(taker, qty, sink) {
            Walk::StpCanceled | Walk::Done { remaining: 0 } => {}
            Walk::Done { remaining } => {
                let moved = RestingOrder {
                    price,
                    qty: remaining,
                    ..order
                };
                self.rest(symbol, moved, sink);
            }
        }
    }

    /// Resting orders matching `keep`, in mass-cancel order: symbol id, then side (buy first),
    /// then priority.
    fn select(
        &self,
        symbol: Option<SymbolId>,
        side: Option<Side>,
        keep: impl Fn(&RestingOrder) -> bool,
    ) -> Vec<(SymbolId, RestingOrder)> {
        let mut out = Vec::new();
        for s in 0..self.books.len() as SymbolId {
            if symbol.is_some_and(|x| x != s) {
                continue;
            }
            for sd in [Side::Buy, Side::Sell] {
                if side.is_some_and(|x| x != sd) {
                    continue;
                }
                out.extend(
                    self.resting(s, sd)
                        .iter()
                        .filter(|o| keep(o))
                        .map(|o| (s, *o)),
                );
            }
        }
        out
    }

    fn mass_cancel<S: EventSink>(
        &mut self,
        account: AccountId,
        symbol: Option<SymbolId>,
        side: Option<Side>,
        sink: &mut S,
    ) {
        if symbol.is_some_and(|s| s as usize >= self.books.len()) {
            return Self::reject(sink, 0, RejectReason::Invalid(Field::Symbol));
        }
        let victims = self.select(symbol, side, |o| o.account == account);
        for (s, order) in &victims {
            self.cancel_resting(*s, *order, CancelReason::User, sink);
        }
        sink.on_event(&Event::MassCanceled {
            account,
            count: victims.len() as u64,
        });
    }

    fn expire_day<S: EventSink>(&mut self, symbol: Option<SymbolId>, sink: &mut S) {
        if symbol.is_some_and(|s| s as usize >= self.books.len()) {
            return Self::reject(sink, 0, RejectReason::Invalid(Field::Symbol));
        }
        for (s, order) in self.select(symbol, None, |o| o.tif == TimeInForce::Day) {
            self.cancel_resting(s, order, CancelReason::Expired, sink);
        }
    }
}

impl Matcher for Reference {
    fn apply<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        match *cmd {
            Command::New(ref o) => self.new_order(o, sink),
            Command::Cancel {
                id,
                account,
                symbol,
            } => self.cancel(id, account, symbol, sink),
            Command::Replace {
                id,
                account,
                symbol,
                price,
                qty,
            } => self.replace(id, account, symbol, price, qty, sink),
            Command::MassCancel {
                account,
                symbol,
                side,
            } => self.mass_cancel(account, symbol, side, sink),
            Command::ExpireDay { symbol } => self.expire_day(symbol, sink),
        }
    }
}

#[cfg(test)]
mod tests;
