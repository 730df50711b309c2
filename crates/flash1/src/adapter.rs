//! The safe core of the flash1 adapter: flash1 messages in, Rialto commands to the engine, the
//! engine's events out as flash1 reports.
//!
//! Role: translation only. Every matching decision (price-time priority, fills at the maker's
//! price, IOC remainders, whether a cancel or modify finds a resting order) is the engine's; the
//! adapter reads the answer off the engine's events and re-words it in flash1's report format:
//! - New: `Accepted` → OrderAck (own price, original quantity); each `Trade` → Trade (the
//!   aggressor's sequence number, the maker's price, maker and taker ids); `Canceled{Ioc}` →
//!   CancelAck of the IOC remainder.
//! - Cancel: `Canceled{User}` → CancelAck with the resting order's side and price, both read
//!   from the `Level` event the engine emits right after it; `Rejected` → CancelReject.
//! - Modify: `Engine::modify_requeue` (cancel + reinsert under the same id, always losing
//!   priority): `Replaced` → ModifyAck, each `Trade` → Trade; `Rejected` → ModifyReject.
//! - Queries forward to the engine's own book (`best_bid`, `best_ask`, `depth_at`).
//!
//! One instrument (tick 1, lot 1), one account, self-trade prevention off (flash1 has none).
//!
//! Id reuse: flash1 lets an id be reused once its order is gone; Rialto's engine refuses any id
//! it ever accepted (`DuplicateId`). When the engine refuses a new order's id that way, the adapter
//! gives the order a fresh engine id from a reserved range (`ALIAS_BASE` and up) and remembers the
//! pair both ways; cancels and modifies of that flash1 id, and trades against that engine id, are
//! translated through the pair. The tables are empty (and cost one branch) unless ids are reused.
//!
//! Never: matches, keeps a shadow book, or answers a query from anything but the engine.
//!
//! Invariants: every report of one message carries that message's sequence number; a flash1 id
//! maps to at most one engine id at a time, and an engine id to exactly one flash1 id.
#![forbid(unsafe_code)]

use std::collections::HashMap;

use crate::abi::{
    CancelMsg, ModifyMsg, NewOrderMsg, Report, CANCEL_ACK, CANCEL_REJECT, MODIFY_ACK,
    MODIFY_REJECT, ORDER_ACK, TRADE,
};
use engine::{Engine, EngineConfig};
use types::{
    CancelReason, Command, Event, EventSink, Field, Instrument, Matcher, NewOrder, OrdType,
    OrderId, RejectReason, Side, StpMode, Symbol, SymbolId, TimeInForce,
};

/// The single account every flash1 order belongs to.
pub const ACCOUNT: u32 = 1;
/// The single instrument's symbol id.
pub const SYMBOL: SymbolId = 0;
/// First engine id handed out for a reused flash1 id.
pub const ALIAS_BASE: OrderId = 1 << 62;

/// Where reports go: the harness's transport, the adapter's own queue, or a Vec in tests.
pub trait ReportOut {
    fn push(&mut self, report: &Report);
}

impl ReportOut for Vec<Report> {
    fn push(&mut self, report: &Report) {
        Vec::push(self, *report);
    }
}

/// Messages the engine refused for a reason flash1 cannot express (a non-positive price, a zero
/// quantity, a full book); such a message produces no report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unrepresentable {
    pub new_orders: u64,
    pub cancels: u64,
    pub modifies: u64,
}

/// The engine configuration for flash1's workload: the engine's defaults, with room for 2^21
/// resting orders (a run has 10^6 new orders; ids are dense below 2^21).
pub fn engine_config() -> EngineConfig {
    EngineConfig {
        orders_max: 1 << 21,
        ..EngineConfig::default()
    }
}

/// The flash1 book: Rialto's engine with one instrument, plus the id-reuse tables.
pub struct Adapter {
    engine: Engine,
    /// flash1 id → engine id, only for reused flash1 ids.
    alias_of: HashMap<OrderId, OrderId>,
    /// engine id → flash1 id, for every alias ever handed out.
    flash_of: HashMap<OrderId, OrderId>,
    next_alias: OrderId,
    unrepresentable: Unrepresentable,
}

#[inline]
fn side_of(b: u8) -> Side {
    if b == 0 {
        Side::Buy
    } else {
        Side::Sell
    }
}

#[inline]
fn side_byte(s: Side) -> u8 {
    match s {
        Side::Buy => 0,
        Side::Sell => 1,
    }
}

#[inline]
fn report(
    report_type: u8,
    side: u8,
    seq: u64,
    order_id: u64,
    price_ticks: i64,
    quantity: u32,
) -> Report {
    Report {
        report_type,
        side,
        sequence_number: seq,
        order_id,
        price_ticks,
        quantity,
        ..Report::default()
    }
}

/// Which kind of message is being translated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    New,
    Cancel,
    Modify,
}

/// The flash1 message whose events are being translated, as its reports repeat it.
#[derive(Clone, Copy)]
struct Message {
    kind: Kind,
    seq: u64,
    /// The flash1 id of the message's order.
    id: u64,
    side: u8,
    price: i64,
    qty: u32,
}

/// Translates the events of one message into reports.
struct Translate<'a, O: ReportOut> {
    out: &'a mut O,
    flash_of: &'a HashMap<OrderId, OrderId>,
    msg: Message,
    /// A `Canceled{User}` waits for the `Level` that names its side and price.
    cancel_pending: bool,
    /// The engine refused the id (a flash1 id reused after its order died).
    id_refused: bool,
    /// The engine refused for a reason flash1 has no report for.
    refused_other: bool,
    /// A modify was applied (ModifyAck due).
    replaced: bool,
}

impl<'a, O: ReportOut> Translate<'a, O> {
    #[inline]
    fn new(out: &'a mut O, flash_of: &'a HashMap<OrderId, OrderId>, msg: Message) -> Self {
        Translate {
            out,
            flash_of,
            msg,
            cancel_pending: false,
            id_refused: false,
            refused_other: false,
            replaced: false,
        }
    }

    #[inline]
    fn flash_id(&self, engine_id: OrderId) -> OrderId {
        if engine_id >= ALIAS_BASE {
            if let Some(&f) = self.flash_of.get(&engine_id) {
                return f;
            }
        }
        engine_id
    }
}

impl<O: ReportOut> EventSink for Translate<'_, O> {
    #[inline(always)]
    fn on_event(&mut self, event: &Event) {
        match *event {
            Event::Level { side, price, .. } => {
                if self.cancel_pending {
                    self.cancel_pending = false;
                    self.out.push(&report(
                        CANCEL_ACK,
                        side_byte(side),
                        self.msg.seq,
                        self.msg.id,
                        price,
                        0,
                    ));
                }
            }
            Event::Trade {
                price,
                qty,
                maker_id,
                taker_side,
                ..
            } => {
                let mut r = report(
                    TRADE,
                    side_byte(taker_side),
                    self.msg.seq,
                    0,
                    price,
                    qty as u32,
                );
                r.maker_order_id = self.flash_id(maker_id);
                r.taker_order_id = self.msg.id;
                self.out.push(&r);
            }
            Event::Accepted { .. } => {
                self.out.push(&report(
                    ORDER_ACK,
                    self.msg.side,
                    self.msg.seq,
                    self.msg.id,
                    self.msg.price,
                    self.msg.qty,
                ));
            }
            Event::Canceled { reason, qty, .. } => match reason {
                CancelReason::User => self.cancel_pending = true,
                // The IOC remainder of a new order (at its own price).
                _ => self.out.push(&report(
                    CANCEL_ACK,
                    self.msg.side,
                    self.msg.seq,
                    self.msg.id,
                    self.msg.price,
                    qty as u32,
                )),
            },
            // The ModifyAck follows the reinsert's trades (as in flash1's reference adapters);
            // `on_modify` pushes it once the engine is done.
            Event::Replaced { .. } => self.replaced = true,
            Event::Rejected { reason, .. } => match (self.msg.kind, reason) {
                (Kind::New, RejectReason::DuplicateId | RejectReason::Invalid(Field::Id)) => {
                    self.id_refused = true
                }
                (Kind::Cancel, RejectReason::UnknownOrder) => {
                    self.out
                        .push(&report(CANCEL_REJECT, 0, self.msg.seq, self.msg.id, 0, 0));
                }
                (Kind::Modify, RejectReason::UnknownOrder) => {
                    self.out
                        .push(&report(MODIFY_REJECT, 0, self.msg.seq, self.msg.id, 0, 0));
                }
                _ => self.refused_other = true,
            },
            // flash1 sends neither stops nor auctions.
            Event::MassCanceled { .. } | Event::Triggered { .. } | Event::Uncrossed { .. } => {}
        }
    }
}

impl Default for Adapter {
    fn default() -> Self {
        Adapter::new()
    }
}

impl Adapter {
    /// An empty book with `engine_config()`.
    pub fn new() -> Adapter {
        Adapter::with_config(engine_config())
    }

    /// An empty book with the given engine limits (tests and tuning).
    pub fn with_config(config: EngineConfig) -> Adapter {
        let instrument = Instrument {
            symbol: Symbol::new("FLASH1").expect("FLASH1 is a valid symbol"),
            tick: 1,
            lot: 1,
        };
        Adapter {
            engine: Engine::new(&[instrument], config),
            alias_of: HashMap::new(),
            flash_of: HashMap::new(),
            next_alias: ALIAS_BASE,
            unrepresentable: Unrepresentable::default(),
        }
    }

    /// The engine underneath (read-only).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Messages that produced no report because flash1 has no report for the engine's refusal.
    pub fn unrepresentable(&self) -> Unrepresentable {
        self.unrepresentable
    }

    /// The engine id currently standing for flash1 id `id`.
    #[inline]
    fn engine_id(&self, id: OrderId) -> OrderId {
        if self.alias_of.is_empty() {
            return id;
        }
        self.alias_of.get(&id).copied().unwrap_or(id)
    }

    /// A fresh engine id for a reused flash1 id.
    fn new_alias(&mut self, flash_id: OrderId) -> OrderId {
        while self.engine.id_used(self.next_alias) {
            self.next_alias += 1;
        }
        let alias = self.next_alias;
        self.next_alias += 1;
        self.alias_of.insert(flash_id, alias);
        self.flash_of.insert(alias, flash_id);
        alias
    }

    /// flash1 `engine_on_new_order`.
    #[inline]
    pub fn on_new_order<O: ReportOut>(&mut self, m: &NewOrderMsg, out: &mut O) {
        let mut cmd = NewOrder {
            id: m.order_id,
            account: ACCOUNT,
            symbol: SYMBOL,
            side: side_of(m.side),
            ord_type: OrdType::Limit,
            tif: if m.ioc != 0 {
                TimeInForce::Ioc
            } else {
                TimeInForce::Gtc
            },
            price: m.price_ticks,
            qty: u64::from(m.quantity),
            post_only: false,
            stp: StpMode::None,
            ..Default::default()
        };
        let msg = Message {
            kind: Kind::New,
            seq: m.sequence_number,
            id: m.order_id,
            side: m.side,
            price: m.price_ticks,
            qty: m.quantity,
        };
        let mut t = Translate::new(out, &self.flash_of, msg);
        self.engine.apply(&Command::New(cmd), &mut t);
        let (id_refused, refused_other) = (t.id_refused, t.refused_other);
        if id_refused {
            cmd.id = self.new_alias(m.order_id);
            let mut t = Translate::new(out, &self.flash_of, msg);
            self.engine.apply(&Command::New(cmd), &mut t);
            if t.id_refused || t.refused_other {
                self.unrepresentable.new_orders += 1;
            }
        } else if refused_other {
            self.unrepresentable.new_orders += 1;
        }
    }

    /// flash1 `engine_on_cancel`.
    #[inline]
    pub fn on_cancel<O: ReportOut>(&mut self, m: &CancelMsg, out: &mut O) {
        let cmd = Command::Cancel {
            id: self.engine_id(m.order_id),
            account: ACCOUNT,
            symbol: SYMBOL,
        };
        let mut t = Translate::new(
            out,
            &self.flash_of,
            Message {
                kind: Kind::Cancel,
                seq: m.sequence_number,
                id: m.order_id,
                side: 0,
                price: 0,
                qty: 0,
            },
        );
        self.engine.apply(&cmd, &mut t);
        if t.refused_other {
            self.unrepresentable.cancels += 1;
        }
    }

    /// flash1 `engine_on_modify`: cancel + reinsert under the same id, losing priority.
    #[inline]
    pub fn on_modify<O: ReportOut>(&mut self, m: &ModifyMsg, out: &mut O) {
        let id = self.engine_id(m.order_id);
        let mut t = Translate::new(
            out,
            &self.flash_of,
            Message {
                kind: Kind::Modify,
                seq: m.sequence_number,
                id: m.order_id,
                side: m.side,
                price: m.new_price_ticks,
                qty: m.new_quantity,
            },
        );
        self.engine.modify_requeue(
            id,
            ACCOUNT,
            SYMBOL,
            m.new_price_ticks,
            u64::from(m.new_quantity),
            &mut t,
        );
        if t.replaced {
            out.push(&report(
                MODIFY_ACK,
                m.side,
                m.sequence_number,
                m.order_id,
                m.new_price_ticks,
                m.new_quantity,
            ));
        } else if t.refused_other {
            self.unrepresentable.modifies += 1;
        }
    }

    /// Best bid price, or `i64::MIN` when there is no bid.
    #[inline]
    pub fn best_bid(&self) -> i64 {
        self.engine.best_bid(SYMBOL).map_or(i64::MIN, |(p, _)| p)
    }

    /// Best ask price, or `i64::MAX` when there is no ask.
    #[inline]
    pub fn best_ask(&self) -> i64 {
        self.engine.best_ask(SYMBOL).map_or(i64::MAX, |(p, _)| p)
    }

    /// Resting quantity at exactly `price` on `side` (0 = buy, 1 = sell; anything else: 0).
    #[inline]
    pub fn depth_at(&self, price: i64, side: u8) -> u64 {
        match side {
            0 => self.engine.depth_at(SYMBOL, Side::Buy, price),
            1 => self.engine.depth_at(SYMBOL, Side::Sell, price),
            _ => 0,
        }
    }
}
