//! The naive reference matcher: the executable form of the matching rules.
//!
//! Role: be obviously right, not fast. Each side of each book is a `Vec` kept sorted by
//! priority (re-sorted after every insert), every lookup is a linear scan, used ids live in a
//! `BTreeSet`, a book's pending stops are a `Vec` in acceptance order. It is written from the
//! issue text and the `types` doc comments only, never from the engine's code, so that the two
//! can check each other.
//!
//! Never: clocks, randomness, I/O, panics on any command. It has no capacity limits, so it never
//! emits `RejectReason::CapacityExceeded`; compare it with the engine only on streams that stay
//! within the engine's limits.
//!
//! Invariants (checked by [`Reference::check_invariants`]): a book is never crossed at rest
//! outside a call auction; every resting quantity is positive and on the lot grid, and an
//! order's shown part is positive, at most its remaining quantity and (for an iceberg) its peak;
//! each side is in priority order; a pending stop never rests; each order's quantity is
//! conserved (`entered = filled + canceled + replaced_away + remaining`, where a resting order's
//! remaining counts its hidden part and a pending stop's its whole quantity).
//!
//! Submodules: `stops` (pending stops and their trigger rounds), `auction` (call auctions and
//! the uncross), `invariants` (the checks above).

mod auction;
mod invariants;
mod stops;

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
    /// Remaining (open) quantity, shown and hidden; always positive while resting.
    pub qty: QtyLots,
    /// The part shown in `Level`s and met first by an aggressor: `qty` unless an iceberg.
    pub shown: QtyLots,
    /// Iceberg peak (0: all shown).
    pub display_qty: QtyLots,
    pub tif: TimeInForce,
    /// GTD expiry (0 unless `tif == Gtd`).
    pub expire_ns: u64,
    /// Entered as post-only; a replace that would make it cross is rejected.
    pub post_only: bool,
    pub stp: StpMode,
    /// Arrival stamp at this price: smaller is earlier in the queue. Renewed when a replace
    /// loses priority and when an iceberg's shown part is refilled.
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
    /// Quantity still live, resting (shown and hidden) or pending as a stop (0 once dead).
    pub remaining: QtyLots,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Book {
    bids: Vec<RestingOrder>,
    asks: Vec<RestingOrder>,
    /// Pending stop orders in acceptance order, with their current quantity and limit.
    stops: Vec<NewOrder>,
    /// In a call auction: nothing matches until the `Uncross`.
    in_call: bool,
    /// Highest and lowest price traded since the last trigger round.
    traded: Option<(PriceTicks, PriceTicks)>,
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
    fn note_trade(&mut self, price: PriceTicks) {
        self.traded = Some(match self.traded {
            None => (price, price),
            Some((hi, lo)) => (hi.max(price), lo.min(price)),
        });
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

/// One live order a mass cancel or an expiry may reach, in walk order.
#[derive(Clone, Copy, Debug)]
enum Live {
    Resting(SymbolId, RestingOrder),
    Pending(NewOrder),
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

/// The shown part of an order with `qty` remaining and peak `display_qty` (0: all shown).
fn peak(display_qty: QtyLots, qty: QtyLots) -> QtyLots {
    if display_qty == 0 {
        qty
    } else {
        display_qty.min(qty)
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

    /// Aggregated levels of one side as market data sees them (shown quantity only), best
    /// first: `(price, qty, orders)`.
    pub fn levels(&self, symbol: SymbolId, side: Side) -> Vec<(PriceTicks, QtyLots, u32)> {
        let mut out: Vec<(PriceTicks, QtyLots, u32)> = Vec::new();
        for o in self.resting(symbol, side) {
            match out.last_mut() {
                Some(last) if last.0 == o.price => {
                    last.1 = last.1.saturating_add(o.shown);
                    last.2 += 1;
                }
                _ => out.push((o.price, o.shown, 1)),
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

    /// The smallest `expire_ns` over live GTD orders, resting or pending stops.
    pub fn next_expiry(&self) -> Option<u64> {
        self.books
            .iter()
            .flat_map(|b| {
                let resting = b.bids.iter().chain(b.asks.iter());
                resting
                    .filter(|o| o.tif == TimeInForce::Gtd)
                    .map(|o| o.expire_ns)
                    .chain(
                        b.stops
                            .iter()
                            .filter(|o| o.tif == TimeInForce::Gtd)
                            .map(|o| o.expire_ns),
                    )
            })
            .min()
    }

    fn reject<S: EventSink>(sink: &mut S, id: OrderId, reason: RejectReason) {
        sink.on_event(&Event::Rejected { id, reason });
    }

    fn level_event(&self, symbol: SymbolId, side: Side, price: PriceTicks) -> Event {
        let (qty, orders) = self
            .resting(symbol, side)
            .iter()
            .filter(|o| o.price == price)
            .fold((0u64, 0u32), |(q, n), o| (q.saturating_add(o.shown), n + 1));
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

    /// Puts an order at the back of its price's queue showing `min(display_qty, qty)`, and
    /// emits the level.
    fn rest<S: EventSink>(&mut self, symbol: SymbolId, mut order: RestingOrder, sink: &mut S) {
        order.seq = self.next_seq;
        self.next_seq += 1;
        order.shown = peak(order.display_qty, order.qty);
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

    /// Takes `qty` (at most its shown part) from a resting order: it leaves the book at 0; an
    /// iceberg whose shown part is used up is refilled and goes to the back of its level.
    /// Returns the order's remaining quantity. Does not touch ledgers or emit events.
    fn fill_resting(&mut self, symbol: SymbolId, side: Side, id: OrderId, qty: QtyLots) -> u64 {
        let seq = self.next_seq;
        let orders = self.books[symbol as usize].side_mut(side);
        let Some(pos) = orders.iter().position(|o| o.id == id) else {
            return 0;
        };
        let o = &mut orders[pos];
        o.qty -= qty;
        o.shown -= qty;
        let leaves = o.qty;
        if leaves == 0 {
            orders.remove(pos);
        } else if o.shown == 0 {
            o.shown = peak(o.display_qty, o.qty);
            o.seq = seq;
            self.next_seq += 1;
            orders.sort_by_key(|o| priority_key(side, o));
        }
        leaves
    }

    fn note_fill(&mut self, id: OrderId, qty: QtyLots) {
        if let Some(l) = self.ledgers.get_mut(&id) {
            l.filled += u128::from(qty);
            l.remaining -= qty;
        }
    }

    fn next_trade(&mut self) -> TradeId {
        self.next_trade_id += 1;
        self.next_trade_id - 1
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

    /// Cancels a resting order (its whole remaining quantity): `Canceled`, then its `Level`.
    fn cancel_resting<S: EventSink>(
        &mut self,
        symbol: SymbolId,
        order: RestingOrder,
        reason: CancelReason,
        sink: &mut S,
    ) {
        if let Some(o) = self.take(symbol, order.side, order.id) {
            self.cancel_event(sink, o.id, o.account, symbol, reason, o.qty);
            self.emit_level(sink, symbol, o.side, o.price);
        }
    }

    /// Quantity a FOK aggressor could trade right now, honouring its STP mode. Icebergs count
    /// whole; under `CancelNewest`/`CancelBoth` the walk stops at the first own order and, in
    /// that order's level, counts only the shown part of the orders ahead of it (a refill
    /// would queue behind the own order).
    fn fillable(&self, taker: &Taker) -> QtyLots {
        let makers = self.resting(taker.symbol, taker.side.opposite());
        let stops_at_own = matches!(taker.stp, StpMode::CancelNewest | StpMode::CancelBoth);
        let own = makers
            .iter()
            .take_while(|m| crosses(taker.side, taker.limit, m.price))
            .position(|m| m.account == taker.account);
        let mut sum: QtyLots = 0;
        for (k, maker) in makers.iter().enumerate() {
            if !crosses(taker.side, taker.limit, maker.price) {
                break;
            }
            let counted = match own {
                Some(p) if stops_at_own => {
                    if k >= p {
                        break;
                    }
                    if maker.price == makers[p].price {
                        maker.shown
                    } else {
                        maker.qty
                    }
                }
                // Under `CancelOldest` the own order is canceled and matching goes on past it.
                _ if maker.account == taker.account && taker.stp == StpMode::CancelOldest => 0,
                _ => maker.qty,
            };
            sum = sum.saturating_add(counted);
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
            let qty = remaining.min(maker.shown);
            remaining -= qty;
            let maker_leaves = self.fill_resting(taker.symbol, maker_side, maker.id, qty);
            self.note_fill(maker.id, qty);
            self.note_fill(taker.id, qty);
            self.books[taker.symbol as usize].note_trade(maker.price);
            let trade_id = self.next_trade();
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

    /// The first failed check of a new order, in the documented order (capacity aside).
    fn validate(&self, o: &NewOrder) -> Result<Option<PriceTicks>, RejectReason> {
        let invalid = RejectReason::Invalid;
        let Some(inst) = self.instruments.get(o.symbol as usize) else {
            return Err(invalid(Field::Symbol));
        };
        if o.qty == 0 || !o.qty.is_multiple_of(inst.lot) {
            return Err(invalid(Field::Qty));
        }
        let limit = match o.ord_type {
            OrdType::Limit if o.price <= 0 || o.price % inst.tick != 0 => {
                return Err(invalid(Field::Price))
            }
            OrdType::Limit => Some(o.price),
            OrdType::Market => None,
        };
        if o.stop_price < 0 || o.stop_price % inst.tick != 0 || (o.stop_price > 0 && o.post_only) {
            return Err(invalid(Field::StopPrice));
        }
        let takes_only =
            o.ord_type == OrdType::Market || matches!(o.tif, TimeInForce::Ioc | TimeInForce::Fok);
        if o.display_qty > 0 && (!o.display_qty.is_multiple_of(inst.lot) || takes_only) {
            return Err(invalid(Field::DisplayQty));
        }
        if (o.tif == TimeInForce::Gtd) != (o.expire_ns > 0) {
            return Err(invalid(Field::ExpireTime));
        }
        if self.used_ids.contains(&o.id) {
            return Err(RejectReason::DuplicateId);
        }
        let book = &self.books[o.symbol as usize];
        if book.in_call && o.stop_price == 0 && takes_only {
            return Err(RejectReason::AuctionCall);
        }
        if o.post_only && !book.in_call {
            let best = book.side(o.side.opposite()).first();
            if best.is_some_and(|m| crosses(o.side, limit, m.price)) {
                return Err(RejectReason::PostOnlyWouldCross);
            }
        }
        Ok(limit)
    }

    fn new_order<S: EventSink>(&mut self, o: &NewOrder, sink: &mut S) {
        let limit = match self.validate(o) {
            Ok(limit) => limit,
            Err(reason) => return Self::reject(sink, o.id, reason),
        };
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
        if o.stop_price > 0 {
            let mut pending = *o;
            if o.ord_type == OrdType::Market {
                pending.price = 0;
            }
            self.books[o.symbol as usize].stops.push(pending);
            return;
        }
        self.run_order(o, sink);
        self.trigger_stops(o.symbol, sink);
    }

    /// What a new order does after `Accepted` (or a stop after `Triggered`): in a call it
    /// rests; otherwise the FOK check, its trades, then its remainder rests or is canceled.
    fn run_order<S: EventSink>(&mut self, o: &NewOrder, sink: &mut S) {
        let limit = match o.ord_type {
            OrdType::Limit => Some(o.price),
            OrdType::Market => None,
        };
        let taker = Taker {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            side: o.side,
            limit,
            stp: o.stp,
        };
        let in_call = self.books[o.symbol as usize].in_call;
        if !in_call && o.tif == TimeInForce::Fok && self.fillable(&taker) < o.qty {
            return self.cancel_event(sink, o.id, o.account, o.symbol, CancelReason::Fok, o.qty);
        }
        let remaining = if in_call {
            o.qty
        } else {
            match self.walk(taker, o.qty, sink) {
                Walk::StpCanceled | Walk::Done { remaining: 0 } => return,
                Walk::Done { remaining } => remaining,
            }
        };
        let reason = match (o.ord_type, o.tif) {
            (OrdType::Market, _) => CancelReason::NoLiquidity,
            (OrdType::Limit, TimeInForce::Ioc) => CancelReason::Ioc,
            // Unreachable after the fillable check; kept total rather than panicking.
            (OrdType::Limit, TimeInForce::Fok) => CancelReason::Fok,
            (OrdType::Limit, TimeInForce::Gtc | TimeInForce::Day | TimeInForce::Gtd) => {
                let order = RestingOrder {
                    id: o.id,
                    account: o.account,
                    side: o.side,
                    price: o.price,
                    qty: remaining,
                    shown: remaining,
                    display_qty: o.display_qty,
                    tif: o.tif,
                    expire_ns: o.expire_ns,
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
        if let Some(order) = self.owned(id, account, symbol) {
            return self.cancel_resting(symbol, order, CancelReason::User, sink);
        }
        match self.owned_stop(id, account, symbol) {
            Some(stop) => self.cancel_stop(&stop, CancelReason::User, sink),
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
        let stop = self.owned_stop(id, account, symbol);
        let stop_market = stop.is_some_and(|s| s.ord_type == OrdType::Market);
        if price < 0 || price % inst.tick != 0 || (price == 0 && !stop_market) {
            return Self::reject(sink, id, RejectReason::Invalid(Field::Price));
        }
        if let Some(stop) = stop {
            return self.replace_stop(&stop, price, qty, sink);
        }
        let Some(order) = self.owned(id, account, symbol) else {
            return Self::reject(sink, id, RejectReason::UnknownOrder);
        };
        let in_call = self.books[symbol as usize].in_call;
        let keeps_priority = price == order.price && qty <= order.qty;
        if !keeps_priority && order.post_only && !in_call {
            let best = self.resting(symbol, order.side.opposite()).first();
            if best.is_some_and(|m| crosses(order.side, Some(price), m.price)) {
                return Self::reject(sink, id, RejectReason::PostOnlyWouldCross);
            }
        }
        self.note_replace(id, order.qty, qty);
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
                o.shown = o.shown.min(qty);
            }
            sink.on_event(&replaced);
            return self.emit_level(sink, symbol, order.side, price);
        }
        self.take(symbol, order.side, id);
        sink.on_event(&replaced);
        self.emit_level(sink, symbol, order.side, order.price);
        let remaining = if in_call {
            qty
        } else {
            let taker = Taker {
                id,
                account,
                symbol,
                side: order.side,
                limit: Some(price),
                stp: order.stp,
            };
            match self.walk(taker, qty, sink) {
                Walk::StpCanceled => 0,
                Walk::Done { remaining } => remaining,
            }
        };
        if remaining > 0 {
            let moved = RestingOrder {
                price,
                qty: remaining,
                ..order
            };
            self.rest(symbol, moved, sink);
        }
        self.trigger_stops(symbol, sink);
    }

    /// Books a replace of an order with `old` remaining to `new` in its ledger.
    fn note_replace(&mut self, id: OrderId, old: QtyLots, new: QtyLots) {
        if let Some(l) = self.ledgers.get_mut(&id) {
            if new >= old {
                l.entered += u128::from(new - old);
            } else {
                l.replaced_away += u128::from(old - new);
            }
            l.remaining = new;
        }
    }

    /// Live orders matching `keep`, in the walk order of mass cancels and expiries: symbols
    /// ascending; in each, resting buys in priority, resting sells in priority, then pending
    /// stops in acceptance order. `side` filters both resting orders and stops.
    fn select(
        &self,
        symbol: Option<SymbolId>,
        side: Option<Side>,
        keep: impl Fn(AccountId, TimeInForce, u64) -> bool,
    ) -> Vec<Live> {
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
                        .filter(|o| keep(o.account, o.tif, o.expire_ns))
                        .map(|o| Live::Resting(s, *o)),
                );
            }
            out.extend(
                self.books[s as usize]
                    .stops
                    .iter()
                    .filter(|o| side.is_none_or(|x| x == o.side))
                    .filter(|o| keep(o.account, o.tif, o.expire_ns))
                    .map(|o| Live::Pending(*o)),
            );
        }
        out
    }

    /// Cancels each of `victims` (walk order) with `reason`.
    fn cancel_all<S: EventSink>(&mut self, victims: &[Live], reason: CancelReason, sink: &mut S) {
        for v in victims {
            match v {
                Live::Resting(s, order) => self.cancel_resting(*s, *order, reason, sink),
                Live::Pending(stop) => self.cancel_stop(stop, reason, sink),
            }
        }
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
        let victims = self.select(symbol, side, |a, _, _| a == account);
        self.cancel_all(&victims, CancelReason::User, sink);
        sink.on_event(&Event::MassCanceled {
            account,
            count: victims.len() as u64,
        });
    }

    fn expire_day<S: EventSink>(&mut self, symbol: Option<SymbolId>, sink: &mut S) {
        if symbol.is_some_and(|s| s as usize >= self.books.len()) {
            return Self::reject(sink, 0, RejectReason::Invalid(Field::Symbol));
        }
        let victims = self.select(symbol, None, |_, tif, _| tif == TimeInForce::Day);
        self.cancel_all(&victims, CancelReason::Expired, sink);
    }

    fn expire<S: EventSink>(&mut self, now_ns: u64, sink: &mut S) {
        let victims = self.select(None, None, |_, tif, exp| {
            tif == TimeInForce::Gtd && exp <= now_ns
        });
        self.cancel_all(&victims, CancelReason::Expired, sink);
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
            Command::Expire { now_ns } => self.expire(now_ns, sink),
            Command::CallStart { symbol } => self.call_start(symbol, sink),
            Command::Uncross { symbol, reference } => self.uncross(symbol, reference, sink),
        }
    }
}

#[cfg(test)]
mod tests;
