//! Rialto's domain values: the commands that go into the matching engine and the events that
//! come out of it.
//!
//! Role: the shared vocabulary of every other crate. Everything here is a plain `Copy` value.
//! `rng` holds the workspace's seeded generators (tests, benchmarks, simulated traders; the
//! engine never uses one); `decimal` the exact decimal text of prices and quantities that every
//! edge (FIX, JSON) parses and writes (its writers append to a caller's buffer).
//!
//! Never: I/O, clocks, allocation (but `decimal`'s writers' buffers), floats. Prices are integer ticks (`i64`) and quantities
//! integer lots (`u64`). Wire formats (FIX, CSV, JSON) live in adapters, not here.
//!
//! Invariants: a `Command` is self-contained (it carries everything the engine needs, so the
//! engine is a pure function of the command stream); an `Event` says what happened to exactly
//! one order, trade or price level.
#![forbid(unsafe_code)]

pub mod rng;

pub mod decimal;
pub use rng::{SplitMix64, XorShift64, XorShift64Star};

/// Price in the instrument's integer price unit. A valid limit price is positive and a multiple
/// of the instrument's `tick`.
pub type PriceTicks = i64;
/// Quantity in integer units. A valid quantity is positive and a multiple of the instrument's
/// `lot`.
pub type QtyLots = u64;
/// Engine-wide order identifier, unique for the life of the engine (live or past).
pub type OrderId = u64;
/// The owner of an order. Only the owner may cancel or replace it.
pub type AccountId = u32;
/// Index of an instrument in the engine's instrument table (0-based, dense).
pub type SymbolId = u32;
/// Engine-assigned trade identifier, strictly increasing from 1.
pub type TradeId = u64;

/// Maximum length of a symbol in bytes.
pub const SYMBOL_LEN_MAX: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Side {
    #[default]
    Buy,
    Sell,
}

impl Side {
    pub fn opposite(self) -> Side {
        match self {
            Side::Buy => Side::Sell,
            Side::Sell => Side::Buy,
        }
    }
    /// `B` or `S`, as in the CSV and JSON formats.
    pub fn as_char(self) -> char {
        match self {
            Side::Buy => 'B',
            Side::Sell => 'S',
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OrdType {
    #[default]
    Limit,
    /// Never rests: whatever does not trade on arrival is canceled with `NoLiquidity`.
    Market,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TimeInForce {
    /// Good till canceled.
    #[default]
    Gtc,
    /// Rests until canceled or until the trading day ends (`Command::ExpireDay`).
    Day,
    /// Immediate or cancel: the remainder after arrival is canceled (`CancelReason::Ioc`).
    Ioc,
    /// Fill or kill: the whole quantity trades on arrival or nothing does.
    Fok,
    /// Good till date: rests like GTC until `NewOrder::expire_ns`, then `Command::Expire`
    /// cancels it (`CancelReason::Expired`).
    Gtd,
}

/// Self-trade prevention mode, chosen per (aggressor) order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum StpMode {
    /// Cancel the aggressor's remainder when it would trade with its own account.
    #[default]
    CancelNewest,
    /// Cancel the resting order of the same account and go on matching.
    CancelOldest,
    /// Cancel both the resting order and the aggressor's remainder.
    CancelBoth,
    /// Let the account trade with itself.
    None,
}

impl StpMode {
    pub fn as_str(self) -> &'static str {
        match self {
            StpMode::CancelNewest => "cancel_newest",
            StpMode::CancelOldest => "cancel_oldest",
            StpMode::CancelBoth => "cancel_both",
            StpMode::None => "none",
        }
    }
}

/// An instrument: its symbol and the grid its prices and quantities must lie on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instrument {
    pub symbol: Symbol,
    /// Smallest price increment, in price units (>= 1).
    pub tick: PriceTicks,
    /// Smallest quantity increment (>= 1).
    pub lot: QtyLots,
}

/// A short ASCII symbol stored inline (no allocation), e.g. `ACME`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symbol {
    len: u8,
    bytes: [u8; SYMBOL_LEN_MAX],
}

impl Symbol {
    /// Returns `None` if `s` is empty, longer than `SYMBOL_LEN_MAX`, or not printable ASCII
    /// without spaces or commas.
    pub fn new(s: &str) -> Option<Symbol> {
        let b = s.as_bytes();
        if b.is_empty()
            || b.len() > SYMBOL_LEN_MAX
            || !b.iter().all(|c| c.is_ascii_graphic() && *c != b',')
        {
            return None;
        }
        let mut bytes = [0u8; SYMBOL_LEN_MAX];
        bytes[..b.len()].copy_from_slice(b);
        Some(Symbol {
            len: b.len() as u8,
            bytes,
        })
    }
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored (checked in `new`).
        std::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// The symbol's bytes (no UTF-8 check: for the order path).
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl std::fmt::Debug for Symbol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl std::fmt::Display for Symbol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A new order. `price` is ignored (and should be 0) for market orders.
///
/// Order types II (issue 40), each an attribute of an otherwise plain order:
/// - **Stop** (`stop_price > 0`): accepted but held off the book, invisible to market data,
///   until a trade in its symbol at or through the stop price (a buy: a trade at a price
///   `>= stop_price`; a sell: `<= stop_price`). Then it is `Triggered` and runs as a new order
///   would (a market order: a stop; a limit order: a stop-limit). See `Command` for the order
///   in which triggers fire.
/// - **Iceberg** (`display_qty > 0`): while resting, only `min(display_qty, remaining)` is
///   shown (in `Level`s and priority); the rest is hidden. When the shown part is used up and
///   some is hidden, it is refilled with `min(display_qty, hidden)` and the order goes to the
///   back of its level (new time priority). Hidden quantity trades (after the shown part) and
///   counts for FOK and auctions.
/// - **GTD** (`tif == Gtd`, `expire_ns > 0`): rests like GTC until `Command::Expire` with a
///   time at or after `expire_ns`.
///
/// Validation, in this order (the first failure is the reject): symbol; quantity; limit price;
/// `stop_price` negative, off the tick, or set on a post-only order (`Invalid(StopPrice)`);
/// `display_qty` off the lot, or set on a market, IOC or FOK order (`Invalid(DisplayQty)`);
/// `expire_ns` 0 with GTD or set without it (`Invalid(ExpireTime)`); duplicate id; a market,
/// IOC or FOK order that is not a stop while the book is in a call (`AuctionCall`); post-only
/// would cross (never in a call: nothing trades on arrival there); capacity.
///
/// A stop is `Accepted` (price: its limit, or 0) and nothing more until triggered. FOK with
/// icebergs resting: the fillable quantity walks the crossing levels best first and counts
/// every order's whole remaining quantity (shown and hidden), except with `CancelNewest` or
/// `CancelBoth`, where it stops at the first order of the aggressor's own account and counts,
/// in that order's level, only the *shown* quantity of the orders ahead of it (an iceberg's
/// refill would queue behind it).
///
/// Cancel, mass cancel, `ExpireDay` and `Expire` reach pending stops too (`Canceled`, never
/// followed by a `Level`). Mass cancels and expiries walk symbols ascending; in each, the
/// resting buys in priority order, the resting sells in priority order, then the symbol's
/// pending stops in the order they were accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct NewOrder {
    pub id: OrderId,
    pub account: AccountId,
    pub symbol: SymbolId,
    pub side: Side,
    pub ord_type: OrdType,
    pub tif: TimeInForce,
    pub price: PriceTicks,
    pub qty: QtyLots,
    /// Rejected (`PostOnlyWouldCross`) instead of trading on arrival.
    pub post_only: bool,
    pub stp: StpMode,
    /// Stop trigger price (on the tick grid); 0 = not a stop order.
    pub stop_price: PriceTicks,
    /// Iceberg peak: the quantity shown while resting (on the lot grid); 0 = all shown.
    pub display_qty: QtyLots,
    /// GTD expiry, nanoseconds since the Unix epoch on the journaled clock; 0 unless
    /// `tif == Gtd`.
    pub expire_ns: u64,
}

/// What the engine is asked to do. Every order-entry command (`New`, `Cancel`, `Replace`,
/// `MassCancel`) is answered by at least one event; `ExpireDay` emits one `Canceled` per expired
/// order and nothing when there is none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    New(NewOrder),
    /// Cancel a resting order of `account`.
    Cancel {
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
    },
    /// Set a resting order's price and remaining quantity.
    ///
    /// Checks, in order: symbol; quantity; price (negative or off the tick: `Invalid(Price)`;
    /// 0: `Invalid(Price)` unless the order is a pending stop market order of this account,
    /// whose price is ignored); unknown order (`UnknownOrder`).
    /// - A pending stop: its quantity and limit price change in place; it keeps its place in
    ///   the trigger order; `Replaced{lost_priority: false}` (price: its limit or 0), no
    ///   `Level`. Its stop price cannot change.
    /// - An iceberg at the same price with a quantity at or below its whole remaining quantity
    ///   keeps its priority: shown becomes `min(shown, qty)`, hidden the rest. Otherwise it
    ///   loses priority like any order and rests showing `min(display_qty, remaining)`.
    /// - In a call, a replace that loses priority does not trade (and is never refused as
    ///   post-only): `Replaced`, the old `Level`, the new `Level`.
    Replace {
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
        price: PriceTicks,
        qty: QtyLots,
    },
    /// Cancel every resting order of `account`, optionally only on one symbol and/or side.
    MassCancel {
        account: AccountId,
        symbol: Option<SymbolId>,
        side: Option<Side>,
    },
    /// End of the trading day: cancel every resting DAY order (optionally of one symbol)
    /// with `CancelReason::Expired`.
    ExpireDay {
        symbol: Option<SymbolId>,
    },
    /// The journaled clock reached `now_ns`: cancel every GTD order (resting or a pending stop)
    /// whose `expire_ns <= now_ns`, with `CancelReason::Expired`, in the order of `ExpireDay`.
    Expire {
        now_ns: u64,
    },
    /// Start a call auction on one book (opening, closing, or reopening after a halt). Until
    /// the `Uncross`, nothing matches: limit orders rest even where they cross, and replaces
    /// that lose priority go to the back of their new level without trading. Market orders
    /// and IOC/FOK orders (not stops) are rejected (`AuctionCall`). Pending stops stay pending.
    /// Silent; on a book already in a call, nothing happens.
    CallStart {
        symbol: SymbolId,
    },
    /// End the call and return the book to continuous trading. The auction price is, among
    /// every price at which an order rests, the one with the largest executable volume
    /// (`min` of the buy quantity at or above it and the sell quantity at or below it,
    /// hidden iceberg quantity included), then the smallest imbalance between the two, then
    /// nearest to `reference` (0: no reference), then the lowest. If the volume is positive,
    /// `Uncrossed` is emitted, then trades at that price pair the best buy with the best sell
    /// (priority order on each side; icebergs refill as in matching) until the volume is done.
    /// In each, the sell is reported as the maker and the buy as the taker (`taker_side` Buy);
    /// each is followed by the `Level` of the sell's price, then that of the buy's price.
    /// Self-trade prevention does not apply to the uncross. Then stops trigger on the auction
    /// price. On a book not in a call, only the uncross of an uncrossed book: nothing.
    Uncross {
        symbol: SymbolId,
        reference: PriceTicks,
    },
}

/// Which field of a command made it invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    Id,
    Account,
    Symbol,
    Side,
    OrdType,
    Tif,
    Price,
    Qty,
    Stp,
    StopPrice,
    DisplayQty,
    ExpireTime,
}

impl Field {
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Account => "account",
            Field::Symbol => "symbol",
            Field::Side => "side",
            Field::OrdType => "type",
            Field::Tif => "tif",
            Field::Price => "price",
            Field::Qty => "qty",
            Field::Stp => "stp",
            Field::StopPrice => "stop_price",
            Field::DisplayQty => "display_qty",
            Field::ExpireTime => "expire_time",
        }
    }
}

/// Why a command was refused. The order (or the book) is unchanged by a rejected command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// A new order reused the id of a live or past order.
    DuplicateId,
    /// A field is out of range or off the instrument's tick or lot grid.
    Invalid(Field),
    /// Cancel or replace of an order that is not resting, or that belongs to another account.
    UnknownOrder,
    /// A post-only order (or a replace of one) would have traded on arrival.
    PostOnlyWouldCross,
    /// A preallocated limit (orders, price levels) is full.
    CapacityExceeded,
    /// A market, IOC or FOK order (not a stop) while its book is in a call auction.
    AuctionCall,
}

impl RejectReason {
    /// The reason as written in the offline matcher's JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::DuplicateId => "duplicate_id",
            RejectReason::Invalid(_) => "invalid",
            RejectReason::UnknownOrder => "unknown_order",
            RejectReason::PostOnlyWouldCross => "post_only_would_cross",
            RejectReason::CapacityExceeded => "capacity_exceeded",
            RejectReason::AuctionCall => "auction_call",
        }
    }
}

/// Why (part of) an order left the book or never rested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CancelReason {
    /// Canceled on the owner's request (cancel or mass cancel).
    User,
    /// Remainder of an IOC order.
    Ioc,
    /// A FOK order that could not fill completely.
    Fok,
    /// Self-trade prevention.
    Stp,
    /// Remainder of a market order.
    NoLiquidity,
    /// A DAY order at the end of the trading day, or a GTD order at its expire time.
    Expired,
    /// The owner's session ended and it had asked for its orders to be canceled then.
    Disconnect,
    /// Remainder of a market order beyond its instrument's price band (the collar): never
    /// emitted by the engine, which sees such an order as an IOC limit at the band's edge.
    Collar,
    /// The exchange's operator pulled the kill switch of the order's firm or account.
    Operator,
}

impl CancelReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CancelReason::User => "user",
            CancelReason::Ioc => "ioc",
            CancelReason::Fok => "fok",
            CancelReason::Stp => "stp",
            CancelReason::NoLiquidity => "no_liquidity",
            CancelReason::Expired => "expired",
            CancelReason::Disconnect => "cancel_on_disconnect",
            CancelReason::Collar => "price_band",
            CancelReason::Operator => "operator",
        }
    }

    /// The reason in words a trader reads (a report's Text), where `as_str` is an identifier.
    pub fn text(self) -> &'static str {
        match self {
            CancelReason::User => "canceled on request",
            CancelReason::Ioc => "immediate or cancel: remainder canceled",
            CancelReason::Fok => "fill or kill: could not fill in full",
            CancelReason::Stp => "self-trade prevention",
            CancelReason::NoLiquidity => "no liquidity",
            CancelReason::Expired => "expired (end of the trading day or its expire time)",
            CancelReason::Disconnect => "canceled on disconnect",
            CancelReason::Collar => "market order collar: no liquidity within the price band",
            CancelReason::Operator => "canceled by the exchange operator (kill switch)",
        }
    }
}

/// What the engine did. Events of one command are emitted in the order they happen:
/// `Accepted` (or `Replaced`) before the trades it causes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// A new order passed validation. Emitted before any of its trades.
    Accepted {
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
        side: Side,
        price: PriceTicks,
        qty: QtyLots,
    },
    /// A command was refused; `id` is the order named by the command (0 for a mass cancel).
    Rejected { id: OrderId, reason: RejectReason },
    /// One match between an aggressor (taker) and a resting order (maker), at the maker's price.
    Trade {
        trade_id: TradeId,
        symbol: SymbolId,
        price: PriceTicks,
        qty: QtyLots,
        maker_id: OrderId,
        taker_id: OrderId,
        maker_account: AccountId,
        taker_account: AccountId,
        taker_side: Side,
        /// Maker's remaining quantity after this trade (0 = filled, left the book).
        maker_leaves: QtyLots,
        /// Taker's remaining quantity after this trade.
        taker_leaves: QtyLots,
    },
    /// `qty` of order `id` was canceled; the order is no longer live.
    Canceled {
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
        reason: CancelReason,
        qty: QtyLots,
    },
    /// A replace was applied; `qty` is the new remaining quantity. Emitted before its trades.
    Replaced {
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
        price: PriceTicks,
        qty: QtyLots,
        /// False if the order kept its place in the queue.
        lost_priority: bool,
    },
    /// A mass cancel finished, after one `Canceled` per order it canceled.
    MassCanceled { account: AccountId, count: u64 },
    /// A pending stop order was triggered; what it does next follows, as for a new order after
    /// `Accepted`. `price` is its limit (0 for a stop market order), `qty` its quantity.
    ///
    /// Stop triggers (see `NewOrder`) are checked after the command's own trades, in rounds: a
    /// round takes the highest and lowest price traded in the symbol since the previous round,
    /// removes every pending stop of that symbol those prices trigger, and runs them one after the
    /// other in the order they were accepted (each: `Triggered`, then what a new order with its
    /// fields would emit after `Accepted`). Their trades feed the next round, until a round
    /// triggers nothing. A stop is never triggered by the trades that happened before it was
    /// accepted.
    Triggered {
        id: OrderId,
        account: AccountId,
        symbol: SymbolId,
        side: Side,
        price: PriceTicks,
        qty: QtyLots,
    },
    /// A call auction uncrossed: `qty` trades at `price` follow (emitted only if `qty > 0`).
    Uncrossed {
        symbol: SymbolId,
        price: PriceTicks,
        qty: QtyLots,
    },
    /// The aggregate resting quantity at one price changed (market data). `qty == 0` means the
    /// level is gone. Emitted after the order event that caused it, by this exact rule (the engine
    /// and the reference model must agree byte for byte):
    /// - each `Trade` is immediately followed by the `Level` of the maker's side and price;
    /// - an order coming to rest emits its `Level` right after the event that made it rest
    ///   (`Accepted`/`Replaced`, or the last `Trade`/`Canceled` of that command);
    /// - a canceled resting order's `Canceled` is immediately followed by its `Level`;
    /// - a replace that keeps priority emits `Replaced` then `Level`; one that loses priority emits
    ///   `Replaced`, the `Level` of the old price, then its trades, then the `Level` of the new
    ///   price if it rests.
    Level {
        symbol: SymbolId,
        side: Side,
        price: PriceTicks,
        qty: QtyLots,
        orders: u32,
    },
}

/// Where the engine writes events. Implemented by whatever consumes them (a Vec in tests, the
/// exchange's order events, the flash1 report queue). Must not fail.
pub trait EventSink {
    /// Whether this sink wants `Event::Level`s. False: the engine emits none to it, and
    /// nothing else changes (every other event, and the order of the rest, are the same).
    const LEVELS: bool = true;
    fn on_event(&mut self, event: &Event);
}

impl EventSink for Vec<Event> {
    #[inline]
    fn on_event(&mut self, event: &Event) {
        self.push(*event);
    }
}

/// Discards events (benchmarks that only want the engine's work).
pub struct NullSink;

impl EventSink for NullSink {
    #[inline]
    fn on_event(&mut self, _event: &Event) {}
}

/// Anything that applies commands with Rialto's matching semantics: the fast engine and the
/// naive reference model used to check it.
pub trait Matcher {
    fn apply<S: EventSink>(&mut self, cmd: &Command, sink: &mut S);
}

#[cfg(test)]
mod tests;
