//! The exchange's inputs and outputs: protocol-neutral order requests in, typed reports out.
//!
//! Role: the vocabulary every edge (FIX, and later REST and WebSocket) translates to and from,
//! and every follower of the journal (market data, the trade store) reads. One reject-reason
//! enum ([`Reject`]) names every refusal; each edge maps it explicitly to its own codes.
//!
//! Never: bytes of any protocol, a clock, anything that depends on the process.

use crate::{ClOrdId, OrderId, OrderRecord, OrderStatus};
use types::{AccountId, CancelReason, Event, OrdType, Side, SymbolId, TimeInForce};

/// Who sent a request: the originator (a FIX session, an API key: the key of its client
/// order ids and the owner of the orders it enters) and the firm it trades for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Principal {
    pub originator: u16,
    pub firm: u16,
}

/// A new order as a client asks for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewOrder {
    pub cl_ord_id: ClOrdId,
    pub symbol: SymbolId,
    pub side: Side,
    pub ord_type: OrdType,
    pub tif: TimeInForce,
    /// In the instrument's units; ignored for a market order.
    pub price: i64,
    pub qty: u64,
    /// One of the firm's accounts; `None`: the firm's default account.
    pub account: Option<AccountId>,
    /// Rejected rather than trading on arrival.
    pub post_only: bool,
    /// Stop trigger price in the instrument's units; 0: not a stop order (see
    /// `types::NewOrder` for stops, icebergs and GTD).
    pub stop_price: i64,
    /// Iceberg peak: the quantity shown; 0: all shown.
    pub display_qty: u64,
    /// GTD expiry, ns since the Unix epoch (with `TimeInForce::Gtd` only).
    pub expire_ns: u64,
}

impl NewOrder {
    /// A blank order (overwritten field by field when decoded in place).
    pub const BLANK: NewOrder = NewOrder {
        cl_ord_id: ClOrdId::EMPTY,
        symbol: 0,
        side: Side::Buy,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Day,
        price: 0,
        qty: 0,
        account: None,
        post_only: false,
        stop_price: 0,
        display_qty: 0,
        expire_ns: 0,
    };
}

impl Default for NewOrder {
    fn default() -> NewOrder {
        NewOrder::BLANK
    }
}

/// A new price and total quantity for a live limit order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replace {
    pub cl_ord_id: ClOrdId,
    /// The client order id the order has now.
    pub orig_cl_ord_id: ClOrdId,
    /// Must be the order's.
    pub symbol: SymbolId,
    pub price: i64,
    /// The new total quantity (filled quantity included).
    pub qty: u64,
    /// The stop price the request names (0: none given); it must be the order's: a stop
    /// price cannot change (`Reject::StopPriceChange`).
    pub stop_price: i64,
}

/// The state a checkpoint record says the exchange had before it (the event loop journals
/// one every so many records): applying it checks the replay has not diverged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checkpoint {
    /// The id the next accepted order gets.
    pub next_order_id: u64,
    /// The id the next trade gets.
    pub next_trade_id: u64,
}

/// One input of the exchange.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    New {
        who: Principal,
        order: &'a NewOrder,
    },
    /// Cancel the live order `orig_cl_ord_id` names.
    Cancel {
        who: Principal,
        cl_ord_id: &'a ClOrdId,
        orig_cl_ord_id: &'a ClOrdId,
    },
    Replace {
        who: Principal,
        replace: &'a Replace,
    },
    /// Cancel every live order of the firm's accounts, optionally only on one symbol and/or
    /// side: the orders entered before it, in order id order, in steps of at most
    /// `Config::mass_cancel_scan` order ids looked at and `Config::mass_cancel_chunk`
    /// canceled (this input's, then `Continue`s').
    MassCancel {
        who: Principal,
        /// The request's own id (the edge's: a FIX ClOrdID), given back in `MassCanceled`.
        cl_ord_id: &'a ClOrdId,
        symbol: Option<SymbolId>,
        side: Option<Side>,
    },
    /// Cancel every live order the originator entered (of any of its firm's accounts),
    /// optionally only on one symbol and/or side, in a mass cancel's steps; it ends with
    /// `MassCanceled` as a mass cancel does.
    CancelOwn {
        who: Principal,
        /// The request's own id, given back in `MassCanceled`.
        cl_ord_id: &'a ClOrdId,
        symbol: Option<SymbolId>,
        side: Option<Side>,
    },
    /// Report the state of the order `cl_ord_id` names.
    Status {
        who: Principal,
        cl_ord_id: &'a ClOrdId,
    },
    /// The originator's session ended (logout, connection lost): its orders are canceled if
    /// it asked for that (`Config::cancel_on_disconnect`), in a mass cancel's steps.
    Disconnected {
        who: Principal,
    },
    /// Time passes (the input's timestamp): the trading day may end.
    Tick,
    /// Advance each pending mass cancel (or cancel on disconnect) by one step, in the order
    /// they were requested (nothing if none is pending: `Exchange::has_pending_work`).
    Continue,
    Checkpoint(&'a Checkpoint),
    /// An operator's action (`AdminAction`); who did it is the journal record's.
    Admin(&'a AdminAction),
}

/// An instrument's trading status: open, or not taking orders (cancels are always taken).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InstrumentStatus {
    #[default]
    Open,
    /// Stopped by the operator (or a circuit breaker) for a while.
    Halted,
    /// Closed until the operator opens it.
    Closed,
    /// The opening (or reopening) call auction: orders collect without matching; opening
    /// uncrosses the book.
    PreOpen,
    /// The closing call auction: as `PreOpen`; closing (or opening) uncrosses the book.
    PreClose,
}

impl InstrumentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            InstrumentStatus::Open => "open",
            InstrumentStatus::Halted => "halted",
            InstrumentStatus::Closed => "closed",
            InstrumentStatus::PreOpen => "preopen",
            InstrumentStatus::PreClose => "preclose",
        }
    }

    /// A call auction: orders are taken, nothing matches until the uncross.
    pub fn is_call(self) -> bool {
        matches!(self, InstrumentStatus::PreOpen | InstrumentStatus::PreClose)
    }

    /// New orders and replaces are taken (open, or a call auction).
    pub fn takes_orders(self) -> bool {
        !matches!(self, InstrumentStatus::Halted | InstrumentStatus::Closed)
    }

    pub fn parse(s: &str) -> Option<InstrumentStatus> {
        [
            InstrumentStatus::Open,
            InstrumentStatus::Halted,
            InstrumentStatus::Closed,
            InstrumentStatus::PreOpen,
            InstrumentStatus::PreClose,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

/// What an operator does to the running exchange (`Input::Admin`), journaled and replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdminAction {
    /// The kill switch: the firm's (or only its `account`'s) new orders and replaces are
    /// refused from now on, and every live order it has is canceled (`CancelReason::Operator`),
    /// in a mass cancel's bounded steps.
    Kill {
        firm: u16,
        account: Option<AccountId>,
    },
    /// Lifts a kill switch (the firm's, or its `account`'s).
    Unblock {
        firm: u16,
        account: Option<AccountId>,
    },
    /// The instrument's trading status from now on.
    SetStatus {
        symbol: SymbolId,
        status: InstrumentStatus,
    },
    /// The instrument's price band and order limits from now on, in place of the
    /// configuration's; a `reference_price` given becomes its reference at once.
    SetRisk {
        symbol: SymbolId,
        risk: crate::InstrumentRisk,
    },
}

/// Why a request was refused. Each edge maps it explicitly to its codes (FIX OrdRejReason and
/// CxlRejReason; later HTTP statuses and JSON error codes) and says `text()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reject {
    UnknownSymbol,
    UnknownAccount,
    /// The originator used the client order id already (for a live order or one of the
    /// remembered window).
    DuplicateClOrdId,
    /// No live order of this originator has that client order id (or it is another
    /// originator's: no one learns another's orders exist).
    UnknownOrder,
    /// Off the tick, not positive, or out of range.
    InvalidPrice,
    /// Zero or off the lot.
    InvalidQty,
    /// Another field out of range.
    InvalidField(types::Field),
    /// The engine refused an order id it had seen (a journal written by another version).
    DuplicateOrderId,
    PostOnlyWouldCross,
    /// A preallocated limit (orders, price levels) is full.
    CapacityExceeded,
    /// The firm has `limit` open orders: its own limit or its share of the capacity
    /// (`Config::firm_limits`, `Config::firm_capacity_percent`).
    FirmOpenOrderLimit {
        limit: u64,
    },
    /// The account has `limit` open orders (`FirmLimits::max_open_orders_per_account`).
    AccountOpenOrderLimit {
        account: AccountId,
        limit: u64,
    },
    /// A replace names another symbol than the order's.
    ReplaceSymbolDiffers,
    /// A replace's total quantity is at or below what has filled.
    ReplaceQtyAtOrBelowFilled,
    /// Market orders cannot be replaced.
    ReplaceMarketOrder,
    /// Shed: the exchange was over its inbound limit.
    ExchangeBusy,
    /// Between the end of the trading day and the next day's start: no new order or replace.
    /// `opens_at_s`: the start, in seconds after midnight UTC.
    MarketClosed {
        opens_at_s: u32,
    },
    /// The price is outside the instrument's price band around its reference price (`risk`):
    /// `low` to `high`, in the instrument's units of `decimals` decimals.
    PriceBand {
        price: i64,
        low: i64,
        high: i64,
        decimals: u8,
    },
    /// A pre-trade limit (`risk`): the order would take `value` past `limit` (quantities, or
    /// notionals of `decimals` decimals).
    RiskLimit {
        kind: crate::RiskKind,
        value: i128,
        limit: i128,
        decimals: u8,
    },
    /// The operator pulled the kill switch of the firm (or of this account).
    Blocked {
        account: Option<AccountId>,
    },
    /// The instrument is halted or closed.
    InstrumentNotOpen {
        status: InstrumentStatus,
    },
    /// A market, IOC or FOK order while the instrument is in a call auction.
    AuctionCall,
    /// A GTD order whose expire time has passed already.
    ExpireTimePast,
    /// A replace names a stop price other than the order's (or one for an order that is not a
    /// stop).
    StopPriceChange,
}

impl Reject {
    /// The engine's reason as the exchange reports it.
    pub fn from_engine(r: types::RejectReason) -> Reject {
        use types::RejectReason as R;
        match r {
            R::DuplicateId => Reject::DuplicateOrderId,
            R::Invalid(types::Field::Price) => Reject::InvalidPrice,
            R::Invalid(types::Field::Qty) => Reject::InvalidQty,
            R::Invalid(types::Field::Symbol) => Reject::UnknownSymbol,
            R::Invalid(f) => Reject::InvalidField(f),
            R::UnknownOrder => Reject::UnknownOrder,
            R::PostOnlyWouldCross => Reject::PostOnlyWouldCross,
            R::CapacityExceeded => Reject::CapacityExceeded,
            R::AuctionCall => Reject::AuctionCall,
        }
    }

    /// The reason as a reject's text says it.
    pub fn text(self) -> &'static str {
        match self {
            Reject::UnknownSymbol => "unknown symbol",
            Reject::UnknownAccount => "unknown account",
            Reject::DuplicateClOrdId => "duplicate ClOrdID",
            Reject::UnknownOrder => "unknown order",
            Reject::InvalidPrice => "invalid price (off the tick or not positive)",
            Reject::InvalidQty => "invalid quantity (zero or off the lot)",
            Reject::InvalidField(types::Field::StopPrice) => {
                "invalid stop price (off the tick, not positive, or with post-only)"
            }
            Reject::InvalidField(types::Field::DisplayQty) => {
                "invalid display quantity (off the lot, or on a market, IOC or FOK order)"
            }
            Reject::InvalidField(types::Field::ExpireTime) => {
                "expire time missing with GTD, or given without GTD"
            }
            Reject::InvalidField(_) => "invalid field",
            Reject::DuplicateOrderId => "duplicate order id",
            Reject::PostOnlyWouldCross => "post-only order would cross",
            Reject::CapacityExceeded => "exchange capacity exceeded",
            Reject::FirmOpenOrderLimit { .. } => "firm at its open-order limit",
            Reject::AccountOpenOrderLimit { .. } => "account at its open-order limit",
            Reject::ReplaceSymbolDiffers => "symbol differs from the order's",
            Reject::ReplaceQtyAtOrBelowFilled => "OrderQty at or below the filled quantity",
            Reject::ReplaceMarketOrder => "market orders cannot be replaced",
            Reject::ExchangeBusy => "exchange busy",
            Reject::MarketClosed { .. } => "market closed",
            Reject::PriceBand { .. } => "price outside the price band",
            Reject::RiskLimit { kind, .. } => kind.text(),
            Reject::Blocked { account: None } => "firm blocked by the exchange operator",
            Reject::Blocked { account: Some(_) } => "account blocked by the exchange operator",
            Reject::InstrumentNotOpen {
                status: InstrumentStatus::Closed,
            } => "instrument closed",
            Reject::InstrumentNotOpen { .. } => "instrument halted",
            Reject::AuctionCall => {
                "market, IOC and FOK orders are not taken during an auction call"
            }
            Reject::ExpireTimePast => "expire time already passed",
            Reject::StopPriceChange => {
                "the stop price cannot be changed: cancel and enter a new order"
            }
        }
    }

    /// The reason with its detail (`text()` plus, for `MarketClosed`, "until HH:MM:SS UTC";
    /// for an open-order limit, the count), written into `buf` (no allocation).
    pub fn describe(self, buf: &mut [u8; DESCRIBE_MAX]) -> &str {
        let mut w = Bytes { buf, at: 0 };
        match self {
            Reject::MarketClosed { opens_at_s } => {
                let s = opens_at_s % 86_400;
                let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60);
                w.put(b"market closed until ");
                for (i, v) in [h, m, sec].into_iter().enumerate() {
                    if i > 0 {
                        w.put(b":");
                    }
                    w.put(&[b'0' + (v / 10) as u8, b'0' + (v % 10) as u8]);
                }
                w.put(b" UTC");
            }
            Reject::FirmOpenOrderLimit { limit } => {
                w.put(b"firm has ");
                w.num(limit);
                w.put(b" open orders, its limit");
            }
            Reject::AccountOpenOrderLimit { account, limit } => {
                w.put(b"account ");
                w.num(account as u64);
                w.put(b" has ");
                w.num(limit);
                w.put(b" open orders, its limit");
            }
            Reject::PriceBand {
                price,
                low,
                high,
                decimals,
            } => {
                w.put(b"price ");
                w.dec(price as i128, decimals);
                w.put(b" outside the price band ");
                w.dec(low as i128, decimals);
                w.put(b" to ");
                w.dec(high as i128, decimals);
            }
            Reject::RiskLimit {
                kind,
                value,
                limit,
                decimals,
            } => {
                w.put(kind.noun().as_bytes());
                w.put(b" ");
                w.dec(value, decimals);
                w.put(b" over the limit ");
                w.dec(limit, decimals);
            }
            r => return r.text(),
        }
        let at = w.at;
        std::str::from_utf8(&buf[..at]).expect("ASCII")
    }
}

/// The size of `Reject::describe`'s buffer: its longest text fits (two 39-digit numbers with
/// the longest `RiskKind` text).
pub const DESCRIBE_MAX: usize = 160;

/// ASCII written into a fixed buffer (`Reject::describe`: every text fits).
struct Bytes<'a> {
    buf: &'a mut [u8; DESCRIBE_MAX],
    at: usize,
}

impl Bytes<'_> {
    fn put(&mut self, b: &[u8]) {
        self.buf[self.at..self.at + b.len()].copy_from_slice(b);
        self.at += b.len();
    }

    /// `v` as a decimal of `decimals` decimals (`-12345`, 2: `-123.45`).
    fn dec(&mut self, v: i128, decimals: u8) {
        if v < 0 {
            self.put(b"-");
        }
        let mut digits = [0u8; 48];
        let mut i = digits.len();
        let mut u = v.unsigned_abs();
        let mut k = 0u8;
        loop {
            i -= 1;
            digits[i] = b'0' + (u % 10) as u8;
            u /= 10;
            k += 1;
            if k == decimals {
                i -= 1;
                digits[i] = b'.';
            }
            if u == 0 && k > decimals {
                break;
            }
        }
        self.put(&digits[i..]);
    }

    fn num(&mut self, v: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut v = v;
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.put(&digits[i..]);
    }
}

/// Whether the market takes new orders: what an edge reports as the trading session's
/// status (FIX TradingSessionStatus).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TradingStatus {
    Open,
    /// Between the end of the trading day and the next day's start.
    Closed,
}

/// What a report says happened to an order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportKind {
    /// Accepted.
    New,
    /// `qty` traded at `price` (the maker's).
    Fill {
        price: i64,
        qty: u64,
    },
    /// The rest of the order left the book (`CancelReason::User`: on the owner's request).
    Canceled(CancelReason),
    Replaced,
    /// The answer to a status request.
    Status,
    /// A stop order was triggered: it now works as a market or limit order.
    Triggered,
}

/// An order's order types II attributes (all 0 for a plain order), as reports show them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OrderExt {
    /// Stop trigger price (0: not a stop).
    pub stop_price: i64,
    /// Iceberg peak (0: all shown).
    pub display_qty: u64,
    /// GTD expiry, ns since the Unix epoch (0: not GTD).
    pub expire_ns: u64,
    /// A stop that has been triggered.
    pub triggered: bool,
}

impl OrderExt {
    pub fn is_plain(&self) -> bool {
        *self == OrderExt::default()
    }

    pub fn of(n: &NewOrder) -> OrderExt {
        OrderExt {
            stop_price: n.stop_price,
            display_qty: n.display_qty,
            expire_ns: n.expire_ns,
            triggered: false,
        }
    }
}

/// A report about an order, to its owner.
#[derive(Clone, Copy, Debug)]
pub struct Report<'a> {
    pub id: OrderId,
    /// The order after the change.
    pub order: &'a OrderRecord,
    /// The report's number within its input: with the input's sequence number, a unique
    /// execution id.
    pub n: u32,
    pub kind: ReportKind,
    /// The client order id it answers with: the requester's on its own cancel, replace or
    /// status request, the order's otherwise.
    pub cl_ord_id: &'a [u8],
    /// The OrigClOrdID of the requester's own cancel or replace.
    pub orig_cl_ord_id: Option<&'a [u8]>,
    /// Stop, iceberg and GTD attributes.
    pub ext: OrderExt,
}

/// What an input caused, in order.
#[derive(Clone, Copy, Debug)]
pub enum Output<'a> {
    Report(&'a Report<'a>),
    /// A new order refused; nothing was made of it. `n` numbers the answer as a report's.
    NewRejected {
        to: u16,
        order: &'a NewOrder,
        reason: Reject,
        n: u32,
    },
    /// A cancel or replace refused; `order` is the order it named (id and status), if the
    /// requester has it.
    CancelRejected {
        to: u16,
        cl_ord_id: &'a ClOrdId,
        orig_cl_ord_id: &'a ClOrdId,
        replace: bool,
        reason: Reject,
        order: Option<(OrderId, OrderStatus)>,
    },
    /// A mass cancel finished, after one `Canceled` report per order it canceled (in the
    /// input of its last chunk: its request's or a `Continue`'s).
    MassCanceled {
        to: u16,
        /// The request's id (`Input::MassCancel::cl_ord_id`).
        cl_ord_id: &'a ClOrdId,
        symbol: Option<SymbolId>,
        side: Option<Side>,
        /// The sequence number of the request's input.
        request_seq: u64,
        /// Orders it canceled.
        count: u64,
    },
    /// A status request named no order the requester has. `n` numbers the answer as a
    /// report's.
    StatusUnknown {
        to: u16,
        cl_ord_id: &'a ClOrdId,
        n: u32,
    },
    /// A trade or a price level's change, in the engine's order (only to an `Outputs` whose
    /// `MARKET_DATA` is true).
    Market(&'a Event),
    /// The market's status changed (to everyone: an edge tells those who asked). At the end of
    /// the trading day `Closed` follows the expiries; `Open` comes when the next day starts
    /// (at once, with no `trading_day_start_ns`).
    TradingStatus(TradingStatus),
    /// One instrument's trading status changed (to everyone, as `TradingStatus`).
    InstrumentStatus {
        symbol: SymbolId,
        status: InstrumentStatus,
    },
    /// In a call auction, the price and volume the uncross would trade now changed
    /// (`qty == 0`: none; to everyone, as market data).
    Indicative {
        symbol: SymbolId,
        price: i64,
        qty: u64,
    },
}

/// An output kept past its input: an edge hands the outputs for originators it does not serve
/// to the edge that does (`OwnedOutput::of`, then `with`). Market data and the trading status
/// go to every edge as they are, so they have no owned form.
#[derive(Clone, Debug)]
pub enum OwnedOutput {
    Report {
        id: OrderId,
        order: OrderRecord,
        n: u32,
        kind: ReportKind,
        cl_ord_id: ClOrdId,
        orig_cl_ord_id: Option<ClOrdId>,
        ext: OrderExt,
    },
    NewRejected {
        to: u16,
        order: NewOrder,
        reason: Reject,
        n: u32,
    },
    CancelRejected {
        to: u16,
        cl_ord_id: ClOrdId,
        orig_cl_ord_id: ClOrdId,
        replace: bool,
        reason: Reject,
        order: Option<(OrderId, OrderStatus)>,
    },
    MassCanceled {
        to: u16,
        cl_ord_id: ClOrdId,
        symbol: Option<SymbolId>,
        side: Option<Side>,
        request_seq: u64,
        count: u64,
    },
    StatusUnknown {
        to: u16,
        cl_ord_id: ClOrdId,
        n: u32,
    },
}

impl OwnedOutput {
    /// The owned copy of `o` (`None` for market data and the trading status).
    pub fn of(o: &Output<'_>) -> Option<OwnedOutput> {
        let cl = |b: &[u8]| ClOrdId::from_bytes(b).unwrap_or(ClOrdId::EMPTY);
        Some(match *o {
            Output::Report(r) => OwnedOutput::Report {
                id: r.id,
                order: r.order.clone(),
                n: r.n,
                kind: r.kind,
                cl_ord_id: cl(r.cl_ord_id),
                orig_cl_ord_id: r.orig_cl_ord_id.map(cl),
                ext: r.ext,
            },
            Output::NewRejected {
                to,
                order,
                reason,
                n,
            } => OwnedOutput::NewRejected {
                to,
                order: *order,
                reason,
                n,
            },
            Output::CancelRejected {
                to,
                cl_ord_id,
                orig_cl_ord_id,
                replace,
                reason,
                order,
            } => OwnedOutput::CancelRejected {
                to,
                cl_ord_id: *cl_ord_id,
                orig_cl_ord_id: *orig_cl_ord_id,
                replace,
                reason,
                order,
            },
            Output::MassCanceled {
                to,
                cl_ord_id,
                symbol,
                side,
                request_seq,
                count,
            } => OwnedOutput::MassCanceled {
                to,
                cl_ord_id: *cl_ord_id,
                symbol,
                side,
                request_seq,
                count,
            },
            Output::StatusUnknown { to, cl_ord_id, n } => OwnedOutput::StatusUnknown {
                to,
                cl_ord_id: *cl_ord_id,
                n,
            },
            Output::Market(_)
            | Output::TradingStatus(_)
            | Output::InstrumentStatus { .. }
            | Output::Indicative { .. } => return None,
        })
    }

    /// Calls `f` with the output this is a copy of.
    pub fn with<R>(&self, f: impl FnOnce(&Output<'_>) -> R) -> R {
        match self {
            OwnedOutput::Report {
                id,
                order,
                n,
                kind,
                cl_ord_id,
                orig_cl_ord_id,
                ext,
            } => {
                let r = Report {
                    id: *id,
                    order,
                    n: *n,
                    kind: *kind,
                    cl_ord_id: cl_ord_id.as_bytes(),
                    orig_cl_ord_id: orig_cl_ord_id.as_ref().map(|c| c.as_bytes()),
                    ext: *ext,
                };
                f(&Output::Report(&r))
            }
            OwnedOutput::NewRejected {
                to,
                order,
                reason,
                n,
            } => f(&Output::NewRejected {
                to: *to,
                order,
                reason: *reason,
                n: *n,
            }),
            OwnedOutput::CancelRejected {
                to,
                cl_ord_id,
                orig_cl_ord_id,
                replace,
                reason,
                order,
            } => f(&Output::CancelRejected {
                to: *to,
                cl_ord_id,
                orig_cl_ord_id,
                replace: *replace,
                reason: *reason,
                order: *order,
            }),
            OwnedOutput::MassCanceled {
                to,
                cl_ord_id,
                symbol,
                side,
                request_seq,
                count,
            } => f(&Output::MassCanceled {
                to: *to,
                cl_ord_id,
                symbol: *symbol,
                side: *side,
                request_seq: *request_seq,
                count: *count,
            }),
            OwnedOutput::StatusUnknown { to, cl_ord_id, n } => f(&Output::StatusUnknown {
                to: *to,
                cl_ord_id,
                n: *n,
            }),
        }
    }
}

/// Where the outputs of an input go: a FIX edge turns them into messages, a follower into
/// market data or stored trades.
pub trait Outputs {
    /// Whether this sink wants `Output::Market`. False: the engine builds no level events for
    /// it (their work, not only their copy, is saved).
    const MARKET_DATA: bool = false;
    /// Called once before each report to `to` is built: true means the sink accounts for the
    /// report itself and wants nothing of it (a replay of a report it will have forgotten by
    /// its end); the report is counted all the same.
    #[inline]
    fn skip_report(&mut self, _to: u16) -> bool {
        false
    }
    fn output(&mut self, o: &Output<'_>);
    /// `output(&Output::Report(r))`, the most frequent output, which a sink may take directly.
    #[inline]
    fn report(&mut self, r: &Report<'_>) {
        self.output(&Output::Report(r));
    }
    /// A wrapping sink that keeps output `o` for itself (an API edge's own) tells the sink it
    /// wraps, which may copy it (a trade-store replica collects every report); most sinks
    /// ignore it.
    #[inline(always)]
    fn tee(&mut self, _o: &Output<'_>) {}
}

/// Outputs thrown away (benchmarks, replicas that only keep state).
pub struct NoOutputs;

impl Outputs for NoOutputs {
    #[inline]
    fn skip_report(&mut self, _to: u16) -> bool {
        true
    }
    #[inline]
    fn output(&mut self, _o: &Output<'_>) {}
}
