//! Rialto's matching engine: a deterministic price-time state machine over one book per
//! instrument. Commands in, events out.
//!
//! Role: the exchange's single source of truth for resting orders and trades. `Engine::apply`
//! (the `types::Matcher` impl) validates a command, matches it and reports every consequence to
//! an `EventSink`, in the order it happens.
//!
//! Never: reads a clock, an RNG, a socket or a file; uses floats; allocates per command in steady
//! state (the order slab, id index and price ladders are preallocated; see `EngineConfig` for the
//! few amortized growth paths); iterates a `HashMap` (no `RandomState` anywhere).
//!
//! Invariants (checked by `check_invariants`, after every command in tests): a book is never
//! crossed at rest outside a call; every resting quantity is positive; each level is a FIFO in arrival order
//! and its aggregates equal the sum of its orders; the id index points at exactly the resting
//! orders.
//!
//! # Data structures (chosen for the hot path; see `examples/bench.rs` for figures)
//! - Order slab (`ladder::Order`, one 64-byte cache line each) with a free list; capacity
//!   `orders_max`, reserved up front. Price levels are intrusive doubly linked FIFO queues
//!   through the slab, so a cancel is O(1) and a partial fill never moves an order.
//! - Per book side, a price ladder (`ladder::Ladder`): a window of 4 bytes per tick pointing
//!   into a compact slab of non-empty levels, O(1) lookup by price, best level cached, a
//!   hierarchical bitset of non-empty levels to find the next best. The window re-centres in
//!   place and grows only when the resting prices need it.
//! - Id index (`ids::IdIndex`): one bit per id for "ever used" (the duplicate-id rule): a direct
//!   bitmap below `ids_direct`, then a bitmap that grows by 128 KiB chunks as sequential ids
//!   arrive, and an incrementally grown hash set for sparse ids, so no command ever rehashes or
//!   copies the set; a small open-addressing table resting id -> slot; deterministic
//!   multiplicative hashing.
//! - Events are handed to a generic `EventSink` by reference; a sink that ignores a kind (the
//!   flash1 adapter ignores most `Level`s) lets the compiler drop the work of building it.
//!
//! # Semantics (issue 2, "Semantics (normative)", and the doc comments in `types`)
//! - Validation order, for a new order: symbol (`Invalid(Symbol)`), quantity zero or off the lot
//!   (`Invalid(Qty)`), limit price non-positive or off the tick (`Invalid(Price)`; market orders
//!   ignore their price), duplicate id (`DuplicateId`), post-only would cross
//!   (`PostOnlyWouldCross`), capacity (`CapacityExceeded`: a GTC/DAY limit order while the order
//!   slab is full, whose price cannot fit its side's ladder window of `levels_max` ticks, or
//!   whose quantity would overflow the `u64` aggregate of its price level; the same checks apply
//!   to a replace that loses priority, before anything changes).
//!   Cancel and replace check symbol, (replace: quantity, price,) then `UnknownOrder`.
//! - Used ids: an id becomes used when a `New` with it is `Accepted` (whatever happens to it
//!   afterwards: rests, trades, is canceled). A rejected `New` does not use its id.
//! - A new order emits `Accepted` (market orders report price 0), then its trades (each followed
//!   by the `Level` of the maker's price), then either a `Canceled` of the remainder (`Stp` when
//!   self-trade prevention stopped it, else `NoLiquidity` for market orders, `Ioc` for IOC) or,
//!   for a GTC/DAY limit order, the `Level` of the price it rests at.
//! - FOK: before any trade, the engine counts the quantity it could fill within its limit. With
//!   STP `None` every crossing order counts; `CancelOldest` skips orders of its own account
//!   (they would be canceled, and matching goes on); `CancelNewest` and `CancelBoth` count only
//!   the quantity ahead of the first crossing order of its own account. If it falls short: no
//!   trade, no STP cancel, the book is untouched, `Canceled{Fok, qty: full}`.
//! - Post-only: rejected if it would trade on arrival, i.e. it crosses the opposite best price
//!   (own orders included; a post-only market order crosses any non-empty opposite side).
//! - STP, for an aggressor meeting a resting order of its own account with mode: `CancelNewest`:
//!   stop, cancel the aggressor's remainder (`Stp`); `CancelOldest`: cancel the resting order
//!   (`Stp`, then its `Level`) and go on; `CancelBoth`: cancel the resting order, then the
//!   aggressor's remainder; `None`: trade.
//! - Replace: same price and qty <= remaining keeps priority (`Replaced{lost_priority: false}`,
//!   then `Level`). Otherwise: if the order was entered post-only and the new price crosses,
//!   `PostOnlyWouldCross` and nothing changes; else `Replaced{lost_priority: true}`, `Level` of
//!   the old price, trades as an aggressor with its own tif/stp, then the remainder rests at the
//!   back of the new price (`Level`), or is canceled `Stp`.
//! - `RestingOrder::orig_qty` is the quantity the order last entered the book with: the `New`'s
//!   quantity, or the quantity set by the last replace.
//! - Mass cancel and expire walk symbols ascending, then buy before sell, then priority order,
//!   then the symbol's pending stops in acceptance order.
//!
//! # Order types II (the rules: `types::NewOrder`, `types::Command`, `types::Event::Triggered`)
//! - Pending stops sit in the slab and the id index with `F_STOP` (so cancel, replace and mass
//!   cancel find them) and in their symbol's `stops::StopBook` by trigger price; a command's
//!   trades trigger them in rounds (`run_stops`), skipped at once while none is pending.
//! - An iceberg's `Order::qty` is its shown part; the peak and the hidden rest live in `Ext`
//!   beside the slab (an `Order` stays one cache line) and, per level, in `iceberg::HiddenLevels`.
//! - GTD expiries: a min-heap of `(expire_ns, id)` (`expiry`); `next_expiry` tells the
//!   exchange when to send `Command::Expire`.
//! - A book in a call (`auction`) takes limit orders without matching; `Uncross` trades at one
//!   price and `indicative` says which price and volume it would trade now.
// Denied everywhere but in `hint::prefetch` (a cache hint; see there).
#![deny(unsafe_code)]

mod amend;
mod auction;
mod bitset;
mod checks;
mod expiry;
pub mod hint;
mod iceberg;
mod ids;
mod ladder;
mod snapshot;
mod stops;

use ids::IdIndex;
use ladder::{Ladder, Order, NIL};
pub use snapshot::SnapshotError;
use types::{
    AccountId, CancelReason, Command, Event, EventSink, Field, Instrument, Matcher, NewOrder,
    OrdType, OrderId, PriceTicks, QtyLots, RejectReason, Side, StpMode, Symbol, SymbolId,
    TimeInForce,
};

/// Preallocation limits. Everything is reserved in `Engine::new`; nothing grows per command
/// except the amortized paths named below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// Maximum number of resting orders across all books (slab capacity, reserved up front).
    pub orders_max: usize,
    /// Initial width, in ticks, of each side's price ladder window.
    pub levels_initial: usize,
    /// Maximum width, in ticks, of a side's price ladder window (rounded up to a power of two).
    /// The window re-centres or doubles (amortized) while the resting prices of a side span
    /// less than this; an order to rest beyond it is refused with `CapacityExceeded`.
    pub levels_max: usize,
    /// Ids below this are indexed directly (one bit each, committed by the OS as touched).
    /// Used ids from here on that arrive in sequence go to a bitmap grown by 128 KiB chunks (an
    /// allocation per 2^20 ids), others to the sparse id set.
    pub ids_direct: usize,
    /// Initial capacity of the two id hash tables: sparse used ids (>= `ids_direct`, not in
    /// sequence), and resting id -> slot. Each doubles beyond a load of 1/2: the sparse set
    /// incrementally (a bounded part of the old table moves on each insert, segments of 32 KiB
    /// are allocated as first written), the resting table at once (amortized, and only when the
    /// number of resting orders passes its previous peak). With the id chunks, the only
    /// allocations a command can cause after warm-up.
    pub ids_hashed_initial: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            orders_max: 1 << 20,
            levels_initial: 1 << 12,
            levels_max: 1 << 22,
            ids_direct: 1 << 22,
            ids_hashed_initial: 1 << 12,
        }
    }
}

/// Why an engine could not be built from its instruments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// Two instruments share a symbol.
    DuplicateSymbol(String),
    /// A tick or lot below 1.
    BadGrid(String),
    /// More instruments than `SymbolId` can number, or `orders_max` beyond `u32` slots.
    TooMany,
    /// A config field above its maximum (named, with the maximum).
    Limit(&'static str, usize),
    /// The order slab could not be reserved.
    OutOfMemory,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::DuplicateSymbol(s) => write!(f, "duplicate symbol {s}"),
            ConfigError::BadGrid(s) => write!(f, "instrument {s}: tick and lot must be >= 1"),
            ConfigError::TooMany => write!(f, "too many instruments or orders_max too large"),
            ConfigError::Limit(name, max) => write!(f, "{name} above its maximum {max}"),
            ConfigError::OutOfMemory => write!(f, "cannot reserve the order slab"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// A live order, as seen from outside the engine: resting in a book, or a pending stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RestingOrder {
    pub id: OrderId,
    pub account: AccountId,
    pub symbol: SymbolId,
    pub side: Side,
    /// Limit price (0 for a pending stop market order).
    pub price: PriceTicks,
    /// Remaining quantity (> 0), an iceberg's hidden part included.
    pub qty: QtyLots,
    /// Quantity the order last entered the book with (the new order's, or the last replace's).
    pub orig_qty: QtyLots,
    pub tif: TimeInForce,
    pub post_only: bool,
    pub stp: StpMode,
    /// Quantity shown in its level: an iceberg's visible part, else `qty`.
    pub shown: QtyLots,
    /// Iceberg peak (0: not an iceberg).
    pub display_qty: QtyLots,
    /// A pending stop's trigger price; 0 for an order in a book.
    pub stop_price: PriceTicks,
    /// GTD expiry in ns (0 unless GTD).
    pub expire_ns: u64,
}

/// `Order::flags`: an iceberg (its `Ext` holds the peak and the hidden rest).
pub(crate) const F_ICEBERG: u8 = 1;
/// A pending stop: in the slab and the id index, in its symbol's `StopBook`, never in a level.
pub(crate) const F_STOP: u8 = 2;
/// A stop market order (price 0 until triggered).
pub(crate) const F_MARKET: u8 = 4;

/// The attributes of order types II, per slab slot, valid where `Order::flags` says so or the
/// order is GTD (kept beside the slab so that an `Order` stays one cache line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ext {
    pub stop_price: PriceTicks,
    /// Iceberg peak.
    pub display: QtyLots,
    /// Iceberg quantity not shown (resting icebergs only).
    pub hidden: QtyLots,
    pub expire_ns: u64,
}

#[inline]
fn side_ix(side: Side) -> usize {
    match side {
        Side::Buy => 0,
        Side::Sell => 1,
    }
}

/// The matching engine. See the crate documentation for its exact semantics.
#[derive(Clone, Debug)]
pub struct Engine {
    instruments: Vec<Instrument>,
    /// (symbol, id) sorted by symbol, for `symbol_id`.
    by_symbol: Vec<(Symbol, SymbolId)>,
    config: EngineConfig,
    /// Per instrument: [bids, asks].
    books: Vec<[Ladder; 2]>,
    /// Order slab; capacity `orders_max`, reserved up front.
    orders: Vec<Order>,
    free_head: u32,
    live: usize,
    ids: IdIndex,
    next_trade_id: u64,
    next_seq: u64,
    /// Per slab slot: order types II attributes (grown as slots get them).
    ext: Vec<Ext>,
    /// Per instrument: its pending stops.
    stops: Vec<stops::StopBook>,
    /// Pending stops in all books (0: no trigger round to run).
    pending_stops: usize,
    /// Per instrument: in a call auction.
    call: Vec<bool>,
    /// Per instrument: resting icebergs on [bids, asks] (the plain fast paths skip when 0).
    icebergs: Vec<[u32; 2]>,
    /// Resting icebergs' hidden quantity by level.
    hidden: iceberg::HiddenLevels,
    /// GTD orders by expiry, `(expire_ns, id)`; entries of orders gone since are skipped.
    expiries: std::collections::BinaryHeap<std::cmp::Reverse<(u64, OrderId)>>,
    /// Scratch for stop triggers and expiries, `(sort key, slot)`.
    scratch: Vec<(u64, u32)>,
}

/// How matching an aggressor ended.
struct MatchEnd {
    left: QtyLots,
    /// Self-trade prevention canceled the aggressor's remainder.
    stp_stop: bool,
    /// Lowest and highest trade price (`MAX`, `MIN` if none traded).
    lo: PriceTicks,
    hi: PriceTicks,
}

impl MatchEnd {
    fn untouched(left: QtyLots) -> MatchEnd {
        MatchEnd {
            left,
            stp_stop: false,
            lo: PriceTicks::MAX,
            hi: PriceTicks::MIN,
        }
    }
}

/// A replace as `Engine::replace` applies it: `Command::Replace`'s fields, and whether the
/// order always goes to the back of its level (flash1's modify) instead of keeping its priority
/// when only its quantity goes down.
#[derive(Clone, Copy)]
struct ReplaceRequest {
    id: OrderId,
    account: AccountId,
    symbol: SymbolId,
    price: PriceTicks,
    qty: QtyLots,
    requeue: bool,
}

/// How `Engine::execute` runs an order: where it would rest (if known), the slot it already
/// holds (a triggered stop), whether it may rest at all, and whether the book is in a call.
#[derive(Clone, Copy)]
struct Exec {
    rest_idx: Option<usize>,
    slot: Option<u32>,
    can_rest: bool,
    in_call: bool,
}

/// The aggressor's fixed attributes during one match.
#[derive(Clone, Copy)]
struct Taker {
    id: OrderId,
    account: AccountId,
    symbol: SymbolId,
    side: Side,
    /// `None` for a market order.
    limit: Option<PriceTicks>,
    stp: StpMode,
}

#[inline]
fn crosses(side: Side, limit: Option<PriceTicks>, maker_price: PriceTicks) -> bool {
    match limit {
        None => true,
        Some(l) => match side {
            Side::Buy => maker_price <= l,
            Side::Sell => maker_price >= l,
        },
    }
}

#[inline]
fn m_iceberg(orders: &[Order], slot: u32) -> bool {
    orders[slot as usize].flags & F_ICEBERG != 0
}

#[inline]
fn level_event<S: EventSink>(sink: &mut S, symbol: SymbolId, lad: &Ladder, idx: usize) {
    if !S::LEVELS {
        return;
    }
    let l = lad.level(idx);
    sink.on_event(&Event::Level {
        symbol,
        side: lad.side,
        price: lad.price_of(idx),
        qty: l.qty,
        orders: l.count,
    });
}

impl Engine {
    /// Builds an engine. Panics (with the reason) if the instruments are invalid; use
    /// `try_new` to get the error instead.
    pub fn new(instruments: &[Instrument], config: EngineConfig) -> Engine {
        match Engine::try_new(instruments, config) {
            Ok(e) => e,
            Err(e) => panic!("engine: invalid instruments: {e}"),
        }
    }

    /// Builds an engine, or says why its instruments or config are invalid.
    pub fn try_new(
        instruments: &[Instrument],
        config: EngineConfig,
    ) -> Result<Engine, ConfigError> {
        if instruments.len() > u32::MAX as usize || config.orders_max >= u32::MAX as usize - 1 {
            return Err(ConfigError::TooMany);
        }
        // Bounds that keep every table addressable and its size sane (a snapshot's config is
        // checked here too, so a crafted one cannot ask for absurd memory).
        for (name, value, max) in [
            ("levels_initial", config.levels_initial, 1usize << 30),
            ("levels_max", config.levels_max, 1 << 30),
            ("ids_direct", config.ids_direct, 1 << 34),
            ("ids_hashed_initial", config.ids_hashed_initial, 1 << 30),
        ] {
            if value > max {
                return Err(ConfigError::Limit(name, max));
            }
        }
        let mut orders = Vec::new();
        orders
            .try_reserve_exact(config.orders_max)
            .map_err(|_| ConfigError::OutOfMemory)?;
        let mut by_symbol: Vec<(Symbol, SymbolId)> = Vec::with_capacity(instruments.len());
        for (i, inst) in instruments.iter().enumerate() {
            if inst.tick < 1 || inst.lot < 1 {
                return Err(ConfigError::BadGrid(inst.symbol.to_string()));
            }
            by_symbol.push((inst.symbol, i as SymbolId));
        }
        by_symbol.sort();
        for w in by_symbol.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(ConfigError::DuplicateSymbol(w[0].0.to_string()));
            }
        }
        let books = instruments
            .iter()
            .map(|inst| {
                [
                    Ladder::new(
                        Side::Buy,
                        inst.tick,
                        config.levels_initial,
                        config.levels_max,
                    ),
                    Ladder::new(
                        Side::Sell,
                        inst.tick,
                        config.levels_initial,
                        config.levels_max,
                    ),
                ]
            })
            .collect();
        Ok(Engine {
            instruments: instruments.to_vec(),
            by_symbol,
            config,
            books,
            orders,
            free_head: NIL,
            live: 0,
            ids: IdIndex::new(
                config.ids_direct,
                config.ids_hashed_initial,
                config.ids_hashed_initial,
            ),
            next_trade_id: 1,
            next_seq: 1,
            ext: Vec::new(),
            stops: vec![stops::StopBook::default(); instruments.len()],
            pending_stops: 0,
            call: vec![false; instruments.len()],
            icebergs: vec![[0, 0]; instruments.len()],
            hidden: iceberg::HiddenLevels::default(),
            expiries: std::collections::BinaryHeap::new(),
            scratch: Vec::new(),
        })
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub fn instruments(&self) -> &[Instrument] {
        &self.instruments
    }

    pub fn symbol_id(&self, symbol: &str) -> Option<SymbolId> {
        let s = Symbol::new(symbol)?;
        self.by_symbol
            .binary_search_by(|(k, _)| k.cmp(&s))
            .ok()
            .map(|i| self.by_symbol[i].1)
    }

    /// Number of resting orders across all books.
    pub fn resting_count(&self) -> usize {
        self.live
    }

    /// The id the next trade will get.
    pub fn next_trade_id(&self) -> u64 {
        self.next_trade_id
    }

    fn best(&self, symbol: SymbolId, side: Side) -> Option<(PriceTicks, QtyLots)> {
        let lad = &self.books.get(symbol as usize)?[side_ix(side)];
        let i = lad.best_idx()?;
        Some((lad.price_of(i), lad.level(i).qty))
    }

    /// Best bid price and the aggregate quantity there.
    #[inline]
    pub fn best_bid(&self, symbol: SymbolId) -> Option<(PriceTicks, QtyLots)> {
        self.best(symbol, Side::Buy)
    }

    /// Best ask price and the aggregate quantity there.
    #[inline]
    pub fn best_ask(&self, symbol: SymbolId) -> Option<(PriceTicks, QtyLots)> {
        self.best(symbol, Side::Sell)
    }

    /// Aggregate resting quantity at exactly `price` (0 if none).
    #[inline]
    pub fn depth_at(&self, symbol: SymbolId, side: Side, price: PriceTicks) -> QtyLots {
        let Some(book) = self.books.get(symbol as usize) else {
            return 0;
        };
        let lad = &book[side_ix(side)];
        match lad.idx_of(price) {
            Some(i) => lad.level(i).qty,
            None => 0,
        }
    }

    /// Resting orders of one side in priority order: best price first, then time.
    pub fn resting(&self, symbol: SymbolId, side: Side) -> impl Iterator<Item = RestingOrder> + '_ {
        let lad = self.books.get(symbol as usize).map(|b| &b[side_ix(side)]);
        let mut level = lad.and_then(|l| l.best_idx());
        let mut slot = match (lad, level) {
            (Some(l), Some(i)) => l.head(i),
            _ => NIL,
        };
        std::iter::from_fn(move || {
            let lad = lad?;
            if slot == NIL {
                return None;
            }
            let cur = slot;
            slot = self.orders[slot as usize].next;
            if slot == NIL {
                level = level.and_then(|i| lad.next_worse(i));
                if let Some(i) = level {
                    slot = lad.head(i);
                }
            }
            Some(self.view(cur))
        })
    }

    /// A live order by id: resting, or a pending stop.
    pub fn order(&self, id: OrderId) -> Option<RestingOrder> {
        let slot = self.ids.live_slot(id)?;
        Some(self.view(slot))
    }

    /// The order in `slot` as seen from outside.
    fn view(&self, slot: u32) -> RestingOrder {
        let o = &self.orders[slot as usize];
        let x = self.ext_of(slot);
        let hidden = if o.flags & (F_ICEBERG | F_STOP) == F_ICEBERG {
            x.hidden
        } else {
            0
        };
        RestingOrder {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            side: o.side,
            price: o.price,
            qty: o.qty + hidden,
            orig_qty: o.orig_qty,
            tif: o.tif,
            post_only: o.post_only,
            stp: o.stp,
            shown: o.qty,
            display_qty: x.display,
            stop_price: x.stop_price,
            expire_ns: x.expire_ns,
        }
    }

    /// The order types II attributes of `slot` (all 0 for a plain order).
    #[inline]
    fn ext_of(&self, slot: u32) -> Ext {
        let o = &self.orders[slot as usize];
        if o.flags == 0 && o.tif != TimeInForce::Gtd {
            return Ext::default();
        }
        self.ext[slot as usize]
    }

    fn ext_put(&mut self, slot: u32, x: Ext) {
        let i = slot as usize;
        if self.ext.len() <= i {
            // Amortized: grows with the slab's high-water mark, only once such orders exist.
            self.ext.resize(
                (i + 1)
                    .max(self.ext.len() * 2)
                    .min(self.orders.len().max(i + 1)),
                Ext::default(),
            );
        }
        self.ext[i] = x;
    }

    /// An iceberg's hidden quantity in `slot` (0 for others).
    #[inline]
    fn hidden_of(orders: &[Order], ext: &[Ext], slot: u32) -> QtyLots {
        if orders[slot as usize].flags & F_ICEBERG != 0 {
            ext[slot as usize].hidden
        } else {
            0
        }
    }

    /// Whether `id` was ever accepted (the duplicate-id rule).
    pub fn id_used(&self, id: OrderId) -> bool {
        self.ids.is_used(id)
    }

    // ---------------------------------------------------------------- slab

    #[inline]
    fn slab_full(&self) -> bool {
        self.free_head == NIL && self.orders.len() >= self.config.orders_max
    }

    #[inline(always)]
    fn alloc_slot(&mut self, o: Order) -> u32 {
        self.live += 1;
        if self.free_head != NIL {
            let s = self.free_head;
            self.free_head = self.orders[s as usize].next;
            self.orders[s as usize] = o;
            s
        } else {
            self.orders.push(o);
            (self.orders.len() - 1) as u32
        }
    }

    #[inline]
    fn free_slot(orders: &mut [Order], free_head: &mut u32, live: &mut usize, slot: u32) {
        let o = &mut orders[slot as usize];
        o.qty = 0;
        o.id = 0;
        o.prev = NIL;
        o.next = *free_head;
        *free_head = slot;
        *live -= 1;
    }

    // ---------------------------------------------------------------- commands

    fn reject<S: EventSink>(sink: &mut S, id: OrderId, reason: RejectReason) {
        sink.on_event(&Event::Rejected { id, reason });
    }

    #[inline]
    fn new_order<S: EventSink>(&mut self, o: &NewOrder, sink: &mut S) {
        let sym = o.symbol as usize;
        let Some(inst) = self.instruments.get(sym) else {
            return Self::reject(sink, o.id, RejectReason::Invalid(Field::Symbol));
        };
        if o.qty == 0 || (inst.lot != 1 && !o.qty.is_multiple_of(inst.lot)) {
            return Self::reject(sink, o.id, RejectReason::Invalid(Field::Qty));
        }
        let market = o.ord_type == OrdType::Market;
        if !market && (o.price <= 0 || (inst.tick != 1 && o.price % inst.tick != 0)) {
            return Self::reject(sink, o.id, RejectReason::Invalid(Field::Price));
        }
        let ioc_fok = matches!(o.tif, TimeInForce::Ioc | TimeInForce::Fok);
        // Order types II (one well-predicted branch for plain orders).
        if (o.stop_price as u64 | o.display_qty | o.expire_ns) != 0 || o.tif == TimeInForce::Gtd {
            if o.stop_price < 0
                || (inst.tick != 1 && o.stop_price % inst.tick != 0)
                || (o.stop_price != 0 && o.post_only)
            {
                return Self::reject(sink, o.id, RejectReason::Invalid(Field::StopPrice));
            }
            if o.display_qty != 0
                && ((inst.lot != 1 && !o.display_qty.is_multiple_of(inst.lot)) || market || ioc_fok)
            {
                return Self::reject(sink, o.id, RejectReason::Invalid(Field::DisplayQty));
            }
            if (o.tif == TimeInForce::Gtd) != (o.expire_ns != 0) {
                return Self::reject(sink, o.id, RejectReason::Invalid(Field::ExpireTime));
            }
        }
        if self.ids.is_used(o.id) {
            return Self::reject(sink, o.id, RejectReason::DuplicateId);
        }
        let in_call = self.call[sym];
        if o.stop_price != 0 {
            return self.accept_stop(o, sink);
        }
        if in_call && (market || ioc_fok) {
            return Self::reject(sink, o.id, RejectReason::AuctionCall);
        }
        let limit = if market { None } else { Some(o.price) };
        if !in_call && o.post_only && self.would_cross(o.symbol, o.side, limit) {
            return Self::reject(sink, o.id, RejectReason::PostOnlyWouldCross);
        }
        let may_rest = !market && !ioc_fok;
        // Where it would rest, if the window already covers its price (the common case).
        let mut rest_idx = None;
        if may_rest {
            if self.slab_full() {
                return Self::reject(sink, o.id, RejectReason::CapacityExceeded);
            }
            match self.rest_fit(o.symbol, o.side, o.price, o.qty) {
                Some(i) => rest_idx = i,
                None => return Self::reject(sink, o.id, RejectReason::CapacityExceeded),
            }
        }
        sink.on_event(&Event::Accepted {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            side: o.side,
            price: if market { 0 } else { o.price },
            qty: o.qty,
        });
        self.ids.mark_used(o.id);
        if o.tif == TimeInForce::Gtd {
            self.push_expiry(o.expire_ns, o.id);
        }
        let end = self.execute(
            o,
            Exec {
                rest_idx,
                slot: None,
                can_rest: true,
                in_call,
            },
            sink,
        );
        if self.pending_stops != 0 && end.hi >= end.lo {
            self.run_stops(o.symbol, end.hi, end.lo, sink);
        }
    }

    /// Whether an order of `qty` can rest at `price`: `Some(level index if the window covers
    /// the price)`, or `None` if its level or the ladder cannot hold it.
    #[inline]
    fn rest_fit(
        &self,
        symbol: SymbolId,
        side: Side,
        price: PriceTicks,
        qty: QtyLots,
    ) -> Option<Option<usize>> {
        let own = &self.books[symbol as usize][side_ix(side)];
        match own.idx_of(price) {
            // The level's aggregate must stay representable.
            Some(i) => own.level(i).qty.checked_add(qty).map(|_| Some(i)),
            None => own.can_hold(price).then_some(None),
        }
    }

    /// Runs an accepted (or triggered) order: FOK check, matching (not in a call), then rests
    /// or cancels the remainder. Returns how matching ended (its trade prices).
    #[inline(always)]
    fn execute<S: EventSink>(&mut self, o: &NewOrder, x: Exec, sink: &mut S) -> MatchEnd {
        let market = o.ord_type == OrdType::Market;
        let limit = if market { None } else { Some(o.price) };
        let taker = Taker {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            side: o.side,
            limit,
            stp: o.stp,
        };
        if o.tif == TimeInForce::Fok && !self.fok_fillable(&taker, o.qty) {
            self.drop_slot(o.id, x.slot);
            sink.on_event(&Event::Canceled {
                id: o.id,
                account: o.account,
                symbol: o.symbol,
                reason: CancelReason::Fok,
                qty: o.qty,
            });
            return MatchEnd::untouched(o.qty);
        }
        let end = if !x.in_call && self.would_cross(o.symbol, o.side, limit) {
            self.match_taker(&taker, o.qty, sink)
        } else {
            MatchEnd::untouched(o.qty)
        };
        if end.left == 0 {
            self.drop_slot(o.id, x.slot);
            return end;
        }
        let reason = if end.stp_stop {
            CancelReason::Stp
        } else if market {
            CancelReason::NoLiquidity
        } else {
            match o.tif {
                TimeInForce::Ioc => CancelReason::Ioc,
                // Unreachable after a successful FOK check; cancel rather than rest.
                TimeInForce::Fok => CancelReason::Fok,
                // A triggered order whose price the ladder cannot hold.
                _ if !x.can_rest => CancelReason::NoLiquidity,
                TimeInForce::Gtc | TimeInForce::Day | TimeInForce::Gtd => {
                    let shown = if o.display_qty != 0 {
                        o.display_qty.min(end.left)
                    } else {
                        end.left
                    };
                    let flags = if o.display_qty != 0 { F_ICEBERG } else { 0 };
                    let rec = Order {
                        id: o.id,
                        price: o.price,
                        qty: shown,
                        orig_qty: o.qty,
                        seq: 0,
                        prev: NIL,
                        next: NIL,
                        account: o.account,
                        symbol: o.symbol,
                        side: o.side,
                        tif: o.tif,
                        post_only: o.post_only,
                        stp: o.stp,
                        flags,
                    };
                    let slot = match x.slot {
                        Some(s) => {
                            self.orders[s as usize] = rec;
                            s
                        }
                        None => {
                            let s = self.alloc_slot(rec);
                            self.ids.set_live(o.id, s);
                            s
                        }
                    };
                    if flags != 0 || o.tif == TimeInForce::Gtd {
                        self.ext_put(
                            slot,
                            Ext {
                                stop_price: 0,
                                display: o.display_qty,
                                hidden: end.left - shown,
                                expire_ns: o.expire_ns,
                            },
                        );
                    }
                    if flags != 0 {
                        self.icebergs[o.symbol as usize][side_ix(o.side)] += 1;
                        self.hidden.add(o.symbol, o.side, o.price, end.left - shown);
                    }
                    self.rest(slot, x.rest_idx, sink);
                    return end;
                }
            }
        };
        self.drop_slot(o.id, x.slot);
        sink.on_event(&Event::Canceled {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            reason,
            qty: end.left,
        });
        end
    }

    /// An iceberg whose shown part is used up shows `min(peak, hidden)` more, with a new time
    /// priority (the caller queues it at the back of its level).
    #[inline]
    fn refill(
        orders: &mut [Order],
        ext: &mut [Ext],
        hidden: &mut iceberg::HiddenLevels,
        next_seq: &mut u64,
        slot: u32,
    ) {
        let x = &mut ext[slot as usize];
        let shown = x.display.min(x.hidden);
        x.hidden -= shown;
        let o = &mut orders[slot as usize];
        hidden.sub(o.symbol, o.side, o.price, shown);
        o.qty = shown;
        o.seq = *next_seq;
        *next_seq += 1;
    }

    /// Frees a triggered stop's slot when its order does not rest.
    #[inline]
    fn drop_slot(&mut self, id: OrderId, slot: Option<u32>) {
        if let Some(s) = slot {
            self.ids.set_gone(id);
            Self::free_slot(&mut self.orders, &mut self.free_head, &mut self.live, s);
        }
    }

    /// Links `slot` (price, qty, side, symbol set) at the back of its level and emits `Level`.
    /// `idx` is the level's ladder index if the caller knows it.
    #[inline]
    fn rest<S: EventSink>(&mut self, slot: u32, idx: Option<usize>, sink: &mut S) {
        let (sym, side, price) = {
            let o = &mut self.orders[slot as usize];
            o.seq = self.next_seq;
            (o.symbol, o.side, o.price)
        };
        self.next_seq += 1;
        let lad = &mut self.books[sym as usize][side_ix(side)];
        let idx = match idx {
            Some(i) => i,
            None => lad.ensure(price),
        };
        lad.push_back(&mut self.orders, idx, slot);
        level_event(sink, sym, lad, idx);
    }

    #[inline]
    fn would_cross(&self, symbol: SymbolId, side: Side, limit: Option<PriceTicks>) -> bool {
        let opp = &self.books[symbol as usize][side_ix(side.opposite())];
        match opp.best_idx() {
            None => false,
            Some(i) => crosses(side, limit, opp.price_of(i)),
        }
    }

    /// Whether a FOK of `qty` could fill completely now (see `types::NewOrder` for STP and
    /// icebergs).
    fn fok_fillable(&self, t: &Taker, qty: QtyLots) -> bool {
        let opp_ix = side_ix(t.side.opposite());
        let opp = &self.books[t.symbol as usize][opp_ix];
        let icebergs = self.icebergs[t.symbol as usize][opp_ix] != 0;
        let mut need = qty;
        let mut level = opp.best_idx();
        while let Some(i) = level {
            if !crosses(t.side, t.limit, opp.price_of(i)) {
                return false;
            }
            let lvl = opp.level(i);
            if t.stp == StpMode::None && !icebergs {
                if lvl.qty >= need {
                    return true;
                }
                need -= lvl.qty;
            } else {
                let stops_at_own = matches!(t.stp, StpMode::CancelNewest | StpMode::CancelBoth);
                let own_here = stops_at_own && {
                    let mut s = lvl.head;
                    while s != NIL && self.orders[s as usize].account != t.account {
                        s = self.orders[s as usize].next;
                    }
                    s != NIL
                };
                let mut s = lvl.head;
                while s != NIL {
                    let m = &self.orders[s as usize];
                    if m.account == t.account && t.stp != StpMode::None {
                        if stops_at_own {
                            return false;
                        }
                    } else {
                        // Ahead of an own order in this level, an iceberg's refill would queue
                        // behind it: only what it shows counts.
                        let q = if own_here {
                            m.qty
                        } else {
                            m.qty + Self::hidden_of(&self.orders, &self.ext, s)
                        };
                        if q >= need {
                            return true;
                        }
                        need -= q;
                    }
                    s = m.next;
                }
            }
            level = opp.next_worse(i);
        }
        false
    }

    /// Matches an aggressor against the opposite side. Emits trades, STP cancels of makers and
    /// `Level`s; leaves the aggressor's own remainder to the caller.
    #[inline]
    fn match_taker<S: EventSink>(&mut self, t: &Taker, qty: QtyLots, sink: &mut S) -> MatchEnd {
        let mut left = qty;
        let (mut lo, mut hi) = (PriceTicks::MAX, PriceTicks::MIN);
        let Engine {
            books,
            orders,
            free_head,
            live,
            ids,
            next_trade_id,
            next_seq,
            ext,
            icebergs,
            hidden: hidden_levels,
            ..
        } = self;
        let opp_ix = side_ix(t.side.opposite());
        let opp = &mut books[t.symbol as usize][opp_ix];
        let icebergs = &mut icebergs[t.symbol as usize][opp_ix];
        while left > 0 {
            let Some(idx) = opp.best_idx() else { break };
            let price = opp.price_of(idx);
            if !crosses(t.side, t.limit, price) {
                break;
            }
            let mut slot = opp.head(idx);
            while slot != NIL && left > 0 {
                let m = &mut orders[slot as usize];
                let next = m.next;
                if m.account == t.account && t.stp != StpMode::None {
                    if t.stp == StpMode::CancelNewest {
                        return MatchEnd {
                            left,
                            stp_stop: true,
                            lo,
                            hi,
                        };
                    }
                    // CancelOldest or CancelBoth: cancel the resting order.
                    let (mid, macct, mshown) = (m.id, m.account, m.qty);
                    let iceberg = m.flags & F_ICEBERG != 0;
                    let mhidden = Self::hidden_of(orders, ext, slot);
                    let mqty = mshown + mhidden;
                    if iceberg {
                        *icebergs -= 1;
                        hidden_levels.sub(t.symbol, t.side.opposite(), price, mhidden);
                    }
                    opp.unlink(orders, idx, slot);
                    ids.set_gone(mid);
                    Self::free_slot(orders, free_head, live, slot);
                    sink.on_event(&Event::Canceled {
                        id: mid,
                        account: macct,
                        symbol: t.symbol,
                        reason: CancelReason::Stp,
                        qty: mqty,
                    });
                    level_event(sink, t.symbol, opp, idx);
                    if t.stp == StpMode::CancelBoth {
                        return MatchEnd {
                            left,
                            stp_stop: true,
                            lo,
                            hi,
                        };
                    }
                    slot = next;
                    continue;
                }
                let q = left.min(m.qty);
                m.qty -= q;
                left -= q;
                let (mid, macct, mleft) = (m.id, m.account, m.qty);
                let hidden = if m.flags & F_ICEBERG != 0 {
                    ext[slot as usize].hidden
                } else {
                    0
                };
                lo = lo.min(price);
                hi = hi.max(price);
                let trade_id = *next_trade_id;
                *next_trade_id += 1;
                sink.on_event(&Event::Trade {
                    trade_id,
                    symbol: t.symbol,
                    price,
                    qty: q,
                    maker_id: mid,
                    taker_id: t.id,
                    maker_account: macct,
                    taker_account: t.account,
                    taker_side: t.side,
                    maker_leaves: mleft + hidden,
                    taker_leaves: left,
                });
                // The level loses `q`; a filled maker (now qty 0) then leaves it, or, an
                // iceberg with some hidden, refills and goes to the back of the level.
                opp.sub_qty(idx, q);
                if mleft == 0 {
                    opp.unlink(orders, idx, slot);
                    if hidden > 0 {
                        Self::refill(orders, ext, hidden_levels, next_seq, slot);
                        opp.push_back(orders, idx, slot);
                    } else {
                        if m_iceberg(orders, slot) {
                            *icebergs -= 1;
                        }
                        ids.set_gone(mid);
                        Self::free_slot(orders, free_head, live, slot);
                    }
                }
                level_event(sink, t.symbol, opp, idx);
                slot = next;
            }
        }
        MatchEnd {
            left,
            stp_stop: false,
            lo,
            hi,
        }
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
        let Some((bucket, slot)) = self.ids.live_find(id) else {
            return Self::reject(sink, id, RejectReason::UnknownOrder);
        };
        let o = &self.orders[slot as usize];
        if o.account != account || o.symbol != symbol {
            return Self::reject(sink, id, RejectReason::UnknownOrder);
        }
        self.cancel_slot(slot, CancelReason::User, Some(bucket), sink);
    }

    /// Removes a resting order and emits `Canceled` then `Level`.
    /// `bucket` is the order's place in the id index if the caller just looked it up.
    #[inline]
    fn cancel_slot<S: EventSink>(
        &mut self,
        slot: u32,
        reason: CancelReason,
        bucket: Option<usize>,
        sink: &mut S,
    ) {
        let o = self.orders[slot as usize];
        if o.flags & F_STOP != 0 {
            return self.cancel_stop(slot, reason, sink);
        }
        let hidden = Self::hidden_of(&self.orders, &self.ext, slot);
        let qty = o.qty + hidden;
        if o.flags & F_ICEBERG != 0 {
            self.icebergs[o.symbol as usize][side_ix(o.side)] -= 1;
            self.hidden.sub(o.symbol, o.side, o.price, hidden);
        }
        let lad = &mut self.books[o.symbol as usize][side_ix(o.side)];
        let idx = lad
            .idx_of(o.price)
            .expect("engine: resting order inside its ladder window");
        lad.unlink(&mut self.orders, idx, slot);
        match bucket {
            Some(b) => self.ids.remove_live_at(b),
            None => self.ids.set_gone(o.id),
        }
        Self::free_slot(&mut self.orders, &mut self.free_head, &mut self.live, slot);
        sink.on_event(&Event::Canceled {
            id: o.id,
            account: o.account,
            symbol: o.symbol,
            reason,
            qty,
        });
        level_event(sink, o.symbol, lad, idx);
    }
}

impl Matcher for Engine {
    #[inline]
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
            } => {
                let r = ReplaceRequest {
                    id,
                    account,
                    symbol,
                    price,
                    qty,
                    requeue: false,
                };
                self.replace(r, sink)
            }
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
