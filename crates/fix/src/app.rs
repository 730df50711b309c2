//! Order-entry application messages: typed readers of what clients send (NewOrderSingle,
//! OrderCancelRequest, OrderCancelReplaceRequest, OrderMassCancelRequest, OrderStatusRequest,
//! TradingSessionStatusRequest) and builders of what Rialto answers (ExecutionReport,
//! OrderCancelReject, OrderMassCancelReport, BusinessMessageReject, TradingSessionStatus, an
//! ExecutionReport's drop copy), in FIX 4.2, 4.4 and 5.0SP2.
//!
//! Role: say exactly what the wire said, with FIX 4.4 tags, and write each answer in the
//! version's codes (FIX 4.2: ExecTransType 20, ExecType 1/2 for fills, a status answer as
//! ExecTransType 3 with the OrdStatus as ExecType). A reader converts a price to the
//! instrument's units (the caller's [`Instruments`] says which instrument a symbol is) and
//! refuses a message with the reason a reject reports ([`Refusal`]); which message carries
//! that reject is the caller's choice.
//!
//! Never: allocates on a message that reads without error (views borrow the inbound buffer,
//! builders borrow their inputs and write into an `Encoder`), uses floats, or decides business
//! rules (a market order with a price, an order for an account the firm does not have: the
//! exchange judges).
//!
//! Order types II: a NewOrderSingle may be a stop (OrdType 3, StopPx 99) or stop limit (4,
//! Price and StopPx), an iceberg (MaxFloor 111) and GTD (TimeInForce 6 with ExpireTime 126);
//! an ExecutionReport writes them back on every report of such an order ([`OrderExt`]).
//!
//! Invariants: a reader checks fields in a fixed order and reports the first problem; every
//! builder writes the fields in one fixed order per version.

use types::{OrdType, Side, TimeInForce};

use crate::decimal::Decimal;
use crate::decode::{parse_u64, Message};
use crate::encode::Encoder;
use crate::tags::{self, msg_type};
use crate::time::TimePrecision;
use crate::{BusinessRejectReason, FixVersion};

mod echo;
mod fields;
pub use echo::{Echo, ECHO_MAX};
use fields::{expire_time, max_floor, order_qty, price, stop_px};

/// An outbound application message the session can send.
pub trait AppMessage {
    fn msg_type(&self) -> &[u8];
    /// Writes the body fields (the session writes header and trailer).
    fn encode_body(&self, version: FixVersion, enc: &mut Encoder);
}

/// True for the inbound application MsgTypes Rialto handles; anything else deserves a
/// BusinessMessageReject with `UnsupportedMessageType`.
pub fn is_supported(msg_type: &[u8]) -> bool {
    matches!(msg_type, b"D" | b"F" | b"G" | b"H" | b"q" | b"g")
}

/// Longest ClOrdID or OrigClOrdID accepted.
pub const ID_LEN_MAX: usize = 64;

/// An instrument as a reader needs it: its index, and the grid of its prices (units of
/// `10^-decimals`, a multiple of `tick` units).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstrumentRef {
    pub id: u32,
    pub decimals: u32,
    pub tick: i64,
}

/// The caller's instrument table.
pub trait Instruments {
    fn find(&self, symbol: &[u8]) -> Option<InstrumentRef>;
}

/// Why a reader refused a message: the field at fault and the reason, as a reject's Text says
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub tag: u32,
    pub text: String,
}

impl Refusal {
    fn new(tag: u32, text: impl Into<String>) -> Refusal {
        Refusal {
            tag,
            text: text.into(),
        }
    }
    /// True if the message cannot be answered per order (its ClOrdID or OrigClOrdID is
    /// unusable, and an OrderCancelReject must echo both): a session-level Reject is due.
    pub fn is_session_level(&self) -> bool {
        self.tag == tags::CL_ORD_ID || self.tag == tags::ORIG_CL_ORD_ID
    }
}

/// An id field (ClOrdID, OrigClOrdID): present, at most [`ID_LEN_MAX`] bytes, UTF-8 (checked
/// only past ASCII).
fn id<'a>(msg: &Message<'a>, tag: u32) -> Result<&'a [u8], Refusal> {
    match msg.get(tag) {
        None | Some(b"") => Err(Refusal::new(tag, format!("missing tag {tag}"))),
        Some(b) if b.len() > ID_LEN_MAX => Err(Refusal::new(
            tag,
            format!("tag {tag} longer than {ID_LEN_MAX}"),
        )),
        Some(b) if !b.is_ascii() && std::str::from_utf8(b).is_err() => {
            Err(Refusal::new(tag, format!("tag {tag} is not UTF-8")))
        }
        Some(b) => Ok(b),
    }
}

fn symbol<I: Instruments>(msg: &Message<'_>, instruments: &I) -> Result<InstrumentRef, Refusal> {
    let s = msg
        .get(tags::SYMBOL)
        .ok_or_else(|| Refusal::new(tags::SYMBOL, "missing Symbol(55)"))?;
    instruments.find(s).ok_or_else(|| {
        let shown = String::from_utf8_lossy(&s[..s.len().min(ID_LEN_MAX)]).into_owned();
        let mut end = shown.len().min(ID_LEN_MAX);
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        Refusal::new(tags::SYMBOL, format!("unknown symbol {}", &shown[..end]))
    })
}

fn side(msg: &Message<'_>) -> Result<Side, Refusal> {
    match msg.get(tags::SIDE) {
        Some(b"1") => Ok(Side::Buy),
        Some(b"2") => Ok(Side::Sell),
        None => Err(Refusal::new(tags::SIDE, "missing Side(54)")),
        Some(_) => Err(Refusal::new(
            tags::SIDE,
            "unsupported Side(54) (use 1 or 2)",
        )),
    }
}

/// An order's stop, iceberg and GTD fields as FIX carries them (each 0: absent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OrderExt {
    /// StopPx (99) in the instrument's units: a stop (OrdType 3) or stop-limit (4) order.
    pub stop_px: i64,
    /// MaxFloor (111): an iceberg's displayed quantity.
    pub max_floor: u64,
    /// ExpireTime (126) of a GTD order (TimeInForce 6), ns since the epoch.
    pub expire_time_ns: u64,
}

/// NewOrderSingle (35=D).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewOrderSingle<'a> {
    pub cl_ord_id: &'a [u8],
    pub symbol: InstrumentRef,
    pub side: Side,
    /// Market for OrdType 1 and 3 (stop), Limit for 2 and 4 (stop limit): a stop is the
    /// order it becomes when triggered, with `ext.stop_px`.
    pub ord_type: OrdType,
    /// DAY when absent, as FIX specifies.
    pub time_in_force: TimeInForce,
    /// In the instrument's units; 0 for a market or stop order.
    pub price: i64,
    pub order_qty: u64,
    /// Account (1), if given.
    pub account: Option<u32>,
    /// ExecInst (18) contains `6` (participate don't initiate).
    pub post_only: bool,
    /// StopPx (99), MaxFloor (111), ExpireTime (126).
    pub ext: OrderExt,
}

impl<'a> NewOrderSingle<'a> {
    /// Reads the fields in this order: ClOrdID, Symbol, Side, OrdType, TimeInForce, Price,
    /// StopPx, OrderQty, MaxFloor, ExpireDate and ExpireTime, Account.
    pub fn read<I: Instruments>(
        msg: &Message<'a>,
        instruments: &I,
    ) -> Result<NewOrderSingle<'a>, Refusal> {
        let cl_ord_id = id(msg, tags::CL_ORD_ID)?;
        let symbol = symbol(msg, instruments)?;
        let side = side(msg)?;
        let (ord_type, stop) = match msg.get(tags::ORD_TYPE) {
            Some(b"1") => (OrdType::Market, false),
            Some(b"2") => (OrdType::Limit, false),
            Some(b"3") => (OrdType::Market, true),
            Some(b"4") => (OrdType::Limit, true),
            None => return Err(Refusal::new(tags::ORD_TYPE, "missing OrdType(40)")),
            Some(_) => {
                return Err(Refusal::new(
                    tags::ORD_TYPE,
                    "unsupported OrdType(40) (use 1 market, 2 limit, 3 stop or 4 stop limit)",
                ))
            }
        };
        let time_in_force = match msg.get(tags::TIME_IN_FORCE) {
            None | Some(b"0") => TimeInForce::Day,
            Some(b"1") => TimeInForce::Gtc,
            Some(b"3") => TimeInForce::Ioc,
            Some(b"4") => TimeInForce::Fok,
            Some(b"6") => TimeInForce::Gtd,
            Some(_) => {
                return Err(Refusal::new(
                    tags::TIME_IN_FORCE,
                    "unsupported TimeInForce(59) (use 0, 1, 3, 4 or 6)",
                ))
            }
        };
        let price = match (ord_type, msg.get(tags::PRICE)) {
            (OrdType::Market, _) => 0,
            (OrdType::Limit, Some(p)) => price(msg, p, symbol)?,
            (OrdType::Limit, None) if stop => {
                return Err(Refusal::new(
                    tags::PRICE,
                    "stop limit order (OrdType 4) without Price(44)",
                ))
            }
            (OrdType::Limit, None) => {
                return Err(Refusal::new(tags::PRICE, "limit order without Price(44)"))
            }
        };
        let stop_px = match (stop, msg.get(tags::STOP_PX)) {
            (true, Some(p)) => stop_px(msg, p, symbol)?,
            (true, None) => {
                return Err(Refusal::new(
                    tags::STOP_PX,
                    "stop order (OrdType 3 or 4) without StopPx(99)",
                ))
            }
            (false, Some(_)) => {
                return Err(Refusal::new(
                    tags::STOP_PX,
                    "StopPx(99) is only for a stop order (OrdType 3 or 4)",
                ))
            }
            (false, None) => 0,
        };
        let order_qty = order_qty(msg)?;
        let max_floor = max_floor(msg)?;
        let expire_time_ns = expire_time(msg, time_in_force == TimeInForce::Gtd)?;
        let account = match msg.get(tags::ACCOUNT) {
            None => None,
            Some(a) => Some(
                parse_u64(a)
                    .filter(|&a| a <= u32::MAX as u64)
                    .ok_or_else(|| Refusal::new(tags::ACCOUNT, "Account(1) is not a number"))?
                    as u32,
            ),
        };
        let post_only = msg.get(tags::EXEC_INST).is_some_and(|v| v.contains(&b'6'));
        Ok(NewOrderSingle {
            cl_ord_id,
            symbol,
            side,
            ord_type,
            time_in_force,
            price,
            order_qty,
            account,
            post_only,
            ext: OrderExt {
                stop_px,
                max_floor,
                expire_time_ns,
            },
        })
    }
}

/// OrderCancelRequest (35=F).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderCancelRequest<'a> {
    pub cl_ord_id: &'a [u8],
    pub orig_cl_ord_id: &'a [u8],
}

impl<'a> OrderCancelRequest<'a> {
    pub fn read(msg: &Message<'a>) -> Result<OrderCancelRequest<'a>, Refusal> {
        Ok(OrderCancelRequest {
            cl_ord_id: id(msg, tags::CL_ORD_ID)?,
            orig_cl_ord_id: id(msg, tags::ORIG_CL_ORD_ID)?,
        })
    }
}

/// OrderCancelReplaceRequest (35=G): a new price and total quantity for a limit order, or
/// for a stop limit order (OrdType 4) whose StopPx stays what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderCancelReplaceRequest<'a> {
    pub cl_ord_id: &'a [u8],
    pub orig_cl_ord_id: &'a [u8],
    pub symbol: InstrumentRef,
    pub price: i64,
    /// The new total order quantity.
    pub order_qty: u64,
    /// StopPx (99) of a stop limit order (OrdType 4), in the instrument's units: the order's
    /// own (a stop price cannot be changed; the caller checks it is the order's).
    pub stop_px: Option<i64>,
}

impl<'a> OrderCancelReplaceRequest<'a> {
    pub fn read<I: Instruments>(
        msg: &Message<'a>,
        instruments: &I,
    ) -> Result<OrderCancelReplaceRequest<'a>, Refusal> {
        let cl_ord_id = id(msg, tags::CL_ORD_ID)?;
        let orig_cl_ord_id = id(msg, tags::ORIG_CL_ORD_ID)?;
        let symbol = symbol(msg, instruments)?;
        let stop = match msg.get(tags::ORD_TYPE) {
            None | Some(b"2") => false,
            Some(b"4") => true,
            Some(_) => {
                return Err(Refusal::new(
                    tags::ORD_TYPE,
                    "only limit and stop limit orders can be replaced (OrdType 2 or 4)",
                ))
            }
        };
        let price = match msg.get(tags::PRICE) {
            None => return Err(Refusal::new(tags::PRICE, "missing Price(44)")),
            Some(p) => price(msg, p, symbol)?,
        };
        let stop_px = match (stop, msg.get(tags::STOP_PX)) {
            (true, Some(p)) => Some(stop_px(msg, p, symbol)?),
            (true, None) => {
                return Err(Refusal::new(
                    tags::STOP_PX,
                    "replace of a stop limit order (OrdType 4) without StopPx(99)",
                ))
            }
            (false, Some(_)) => {
                return Err(Refusal::new(
                    tags::STOP_PX,
                    "StopPx(99) is only for a stop limit order (OrdType 4)",
                ))
            }
            (false, None) => None,
        };
        Ok(OrderCancelReplaceRequest {
            cl_ord_id,
            orig_cl_ord_id,
            symbol,
            price,
            order_qty: order_qty(msg)?,
            stop_px,
        })
    }
}

/// OrderMassCancelRequest (35=q).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderMassCancelRequest<'a> {
    pub cl_ord_id: &'a [u8],
    /// MassCancelRequestType (530), 0 to 9 as sent (Rialto carries out 1 and 7).
    pub request_type: u8,
    pub symbol: Option<u32>,
    pub side: Option<Side>,
}

impl<'a> OrderMassCancelRequest<'a> {
    pub fn read<I: Instruments>(
        msg: &Message<'a>,
        instruments: &I,
    ) -> Result<OrderMassCancelRequest<'a>, Refusal> {
        let cl_ord_id = id(msg, tags::CL_ORD_ID)?;
        let request_type = match msg.get(tags::MASS_CANCEL_REQUEST_TYPE).and_then(parse_u64) {
            Some(t) if t <= 9 => t as u8,
            _ => {
                return Err(Refusal::new(
                    tags::MASS_CANCEL_REQUEST_TYPE,
                    "MassCancelRequestType(530) missing or invalid",
                ))
            }
        };
        let symbol = match msg.get(tags::SYMBOL) {
            None => None,
            Some(_) => Some(symbol(msg, instruments)?.id),
        };
        let side = match msg.get(tags::SIDE) {
            None => None,
            Some(_) => Some(side(msg)?),
        };
        Ok(OrderMassCancelRequest {
            cl_ord_id,
            request_type,
            symbol,
            side,
        })
    }
}

/// OrderStatusRequest (35=H).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderStatusRequest<'a> {
    pub cl_ord_id: &'a [u8],
}

impl<'a> OrderStatusRequest<'a> {
    pub fn read(msg: &Message<'a>) -> Result<OrderStatusRequest<'a>, Refusal> {
        Ok(OrderStatusRequest {
            cl_ord_id: id(msg, tags::CL_ORD_ID)?,
        })
    }
}

/// TradingSessionID (336) of Rialto's one trading session: `1`, the day session (a value
/// FIX 5.0SP2 enumerates; FIX 4.2 and 4.4 leave the field free).
pub const TRADING_SESSION_DAY: &[u8] = b"1";

/// TradingSessionStatusRequest (35=g).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TradingSessionStatusRequest<'a> {
    /// TradSesReqID (335).
    pub req_id: &'a [u8],
    /// TradingSessionID (336), if given (the caller checks it names a session it has).
    pub trading_session_id: Option<&'a [u8]>,
    /// SubscriptionRequestType (263): 0 the status, 1 the status and every change, 2 no more
    /// changes.
    pub subscription: crate::md::SubscriptionType,
}

impl<'a> TradingSessionStatusRequest<'a> {
    pub fn read(msg: &Message<'a>) -> Result<TradingSessionStatusRequest<'a>, Refusal> {
        use crate::md::SubscriptionType as S;
        let req_id = id(msg, tags::TRAD_SES_REQ_ID)?;
        let trading_session_id = match msg.get(tags::TRADING_SESSION_ID) {
            None => None,
            Some(b"") => {
                return Err(Refusal::new(
                    tags::TRADING_SESSION_ID,
                    "TradingSessionID(336) empty",
                ))
            }
            Some(t) => Some(t),
        };
        let subscription = match msg.get(tags::SUBSCRIPTION_REQUEST_TYPE) {
            Some(b"0") => S::Snapshot,
            Some(b"1") => S::Subscribe,
            Some(b"2") => S::Unsubscribe,
            None => {
                return Err(Refusal::new(
                    tags::SUBSCRIPTION_REQUEST_TYPE,
                    "SubscriptionRequestType(263) missing",
                ))
            }
            Some(_) => {
                return Err(Refusal::new(
                    tags::SUBSCRIPTION_REQUEST_TYPE,
                    "unsupported SubscriptionRequestType(263): use 0, 1 or 2",
                ))
            }
        };
        Ok(TradingSessionStatusRequest {
            req_id,
            trading_session_id,
            subscription,
        })
    }
}

/// TradSesStatus (340) values Rialto sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TradSesStatus {
    /// 2.
    Open,
    /// 3.
    Closed,
}

impl TradSesStatus {
    /// Every status Rialto sends.
    pub const ALL: [TradSesStatus; 2] = [TradSesStatus::Open, TradSesStatus::Closed];

    pub fn code(self) -> u8 {
        match self {
            TradSesStatus::Open => b'2',
            TradSesStatus::Closed => b'3',
        }
    }
}

/// TradingSessionStatus (35=h) of the day session ([`TRADING_SESSION_DAY`]): the answer to a
/// TradingSessionStatusRequest (with its TradSesReqID) or, to a subscriber, a change
/// (UnsolicitedIndicator Y). The same fields in FIX 4.2, 4.4 and 5.0SP2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TradingSessionStatus<'a> {
    /// TradSesReqID (335) of the request answered, or of the subscription told of a change.
    pub req_id: Option<&'a [u8]>,
    pub status: TradSesStatus,
    /// UnsolicitedIndicator (325): sent on a change, not as an answer.
    pub unsolicited: bool,
}

impl AppMessage for TradingSessionStatus<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::TRADING_SESSION_STATUS
    }
    fn encode_body(&self, _version: FixVersion, enc: &mut Encoder) {
        if let Some(id) = self.req_id {
            enc.field(tags::TRAD_SES_REQ_ID, id);
        }
        enc.field(tags::TRADING_SESSION_ID, TRADING_SESSION_DAY);
        enc.field_char(
            tags::UNSOLICITED_INDICATOR,
            if self.unsolicited { b'Y' } else { b'N' },
        );
        enc.field_char(tags::TRAD_SES_STATUS, self.status.code());
    }
}

/// ExecType (150), FIX 4.4 names. FIX 4.2 encodings are chosen at write time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExecType {
    New,
    /// A fill (4.4 `F`; 4.2 `1` partial or `2` fill, from OrdStatus).
    Trade,
    Canceled,
    Replaced,
    Rejected,
    Expired,
    /// Answer to an OrderStatusRequest (4.4 `I`; 4.2 ExecTransType=3 and ExecType=OrdStatus).
    OrderStatus,
    /// A stop order was triggered (5.0SP2 `L`; 4.2 and 4.4, which lack it: `D` Restated).
    Triggered,
}

/// OrdStatus (39).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrdStatus {
    New,
    PartiallyFilled,
    Filled,
    Canceled,
    Rejected,
    Expired,
}

impl OrdStatus {
    /// Every status.
    pub const ALL: [OrdStatus; 6] = [
        OrdStatus::New,
        OrdStatus::PartiallyFilled,
        OrdStatus::Filled,
        OrdStatus::Canceled,
        OrdStatus::Rejected,
        OrdStatus::Expired,
    ];

    pub fn code(self) -> u8 {
        match self {
            OrdStatus::New => b'0',
            OrdStatus::PartiallyFilled => b'1',
            OrdStatus::Filled => b'2',
            OrdStatus::Canceled => b'4',
            OrdStatus::Rejected => b'8',
            OrdStatus::Expired => b'C',
        }
    }
}

impl ExecType {
    /// Every type.
    pub const ALL: [ExecType; 8] = [
        ExecType::New,
        ExecType::Trade,
        ExecType::Canceled,
        ExecType::Replaced,
        ExecType::Rejected,
        ExecType::Expired,
        ExecType::OrderStatus,
        ExecType::Triggered,
    ];

    /// The ExecType (150) character for `version`, given the order's status.
    pub fn code(self, version: FixVersion, status: OrdStatus) -> u8 {
        match self {
            ExecType::New => b'0',
            ExecType::Trade => match version {
                FixVersion::Fix42 if status == OrdStatus::Filled => b'2',
                FixVersion::Fix42 => b'1',
                _ => b'F',
            },
            ExecType::Canceled => b'4',
            ExecType::Replaced => b'5',
            ExecType::Rejected => b'8',
            ExecType::Expired => b'C',
            ExecType::OrderStatus => match version {
                FixVersion::Fix42 => status.code(),
                _ => b'I',
            },
            ExecType::Triggered => match version {
                FixVersion::Fix50Sp2 => b'L',
                _ => b'D',
            },
        }
    }
}

/// OrdRejReason (103) values. A version that lacks one gets Other (99) or, in FIX 4.2,
/// Broker option (0) instead ([`OrderlessReport`]).
pub mod ord_rej_reason {
    pub const BROKER_OPTION: u32 = 0;
    pub const UNKNOWN_SYMBOL: u32 = 1;
    pub const EXCHANGE_CLOSED: u32 = 2;
    pub const ORDER_EXCEEDS_LIMIT: u32 = 3;
    pub const UNKNOWN_ORDER: u32 = 5;
    pub const DUPLICATE_ORDER: u32 = 6;
    pub const UNSUPPORTED_ORDER_CHARACTERISTIC: u32 = 11;
    pub const INCORRECT_QUANTITY: u32 = 13;
    pub const INVALID_PRICE_INCREMENT: u32 = 18;
    pub const OTHER: u32 = 99;
    /// Every value above (tests drive each one through every version).
    pub const ALL: [u32; 10] = [
        BROKER_OPTION,
        UNKNOWN_SYMBOL,
        EXCHANGE_CLOSED,
        ORDER_EXCEEDS_LIMIT,
        UNKNOWN_ORDER,
        DUPLICATE_ORDER,
        UNSUPPORTED_ORDER_CHARACTERISTIC,
        INCORRECT_QUANTITY,
        INVALID_PRICE_INCREMENT,
        OTHER,
    ];
}

/// CxlRejReason (102) values. A version that lacks one gets Other (99) or, in FIX 4.2,
/// Broker option (2) instead ([`OrderCancelReject`]).
pub mod cxl_rej_reason {
    pub const TOO_LATE_TO_CANCEL: u32 = 0;
    pub const UNKNOWN_ORDER: u32 = 1;
    pub const BROKER_OPTION: u32 = 2;
    pub const ALREADY_PENDING: u32 = 3;
    pub const DUPLICATE_CL_ORD_ID: u32 = 6;
    pub const OTHER: u32 = 99;
    /// Every value above (tests drive each one through every version).
    pub const ALL: [u32; 6] = [
        TOO_LATE_TO_CANCEL,
        UNKNOWN_ORDER,
        BROKER_OPTION,
        ALREADY_PENDING,
        DUPLICATE_CL_ORD_ID,
        OTHER,
    ];
}

pub fn side_code(side: Side) -> u8 {
    match side {
        Side::Buy => b'1',
        Side::Sell => b'2',
    }
}

pub fn ord_type_code(t: OrdType) -> u8 {
    ord_type_code_of(t, false)
}

/// OrdType (40) of an order of type `t`, a stop (3 for a market, 4 for a limit order) if
/// `stop`.
pub fn ord_type_code_of(t: OrdType, stop: bool) -> u8 {
    match (t, stop) {
        (OrdType::Market, false) => b'1',
        (OrdType::Limit, false) => b'2',
        (OrdType::Market, true) => b'3',
        (OrdType::Limit, true) => b'4',
    }
}

/// ExpireTime (126) in the precision it needs to be exact (at least milliseconds).
fn expire_precision(ns: u64) -> TimePrecision {
    if ns.is_multiple_of(1_000_000) {
        TimePrecision::Millis
    } else if ns.is_multiple_of(1_000) {
        TimePrecision::Micros
    } else {
        TimePrecision::Nanos
    }
}

pub fn tif_code(t: TimeInForce) -> u8 {
    match t {
        TimeInForce::Day => b'0',
        TimeInForce::Gtc => b'1',
        TimeInForce::Ioc => b'3',
        TimeInForce::Fok => b'4',
        TimeInForce::Gtd => b'6',
    }
}

/// ExecutionReport (35=8) about an order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecutionReport<'a> {
    pub order_id: u64,
    pub cl_ord_id: &'a [u8],
    pub orig_cl_ord_id: Option<&'a [u8]>,
    /// ExecID (17) is `exec_id.0` `.` `exec_id.1`.
    pub exec_id: (u64, u32),
    pub exec_type: ExecType,
    pub ord_status: OrdStatus,
    pub account: u32,
    pub symbol: &'a [u8],
    pub side: Side,
    /// Market or Limit; with `ext.stop_px`, written as OrdType 3 (stop) or 4 (stop limit).
    pub ord_type: OrdType,
    /// The limit price in units of `10^-price_decimals` (written for limit orders only).
    pub price: i64,
    pub time_in_force: TimeInForce,
    pub order_qty: u64,
    /// StopPx (99), MaxFloor (111) and ExpireTime (126), each written if not 0.
    pub ext: OrderExt,
    /// LastPx (units) and LastQty (32) of a fill.
    pub last: Option<(i64, u64)>,
    pub leaves_qty: u64,
    pub cum_qty: u64,
    /// Sum of price * qty over the fills, in units: AvgPx (6) is `notional / cum_qty`.
    pub notional: i128,
    pub price_decimals: u32,
    pub text: Option<&'a [u8]>,
    pub transact_time_ns: u64,
}

impl AppMessage for ExecutionReport<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::EXECUTION_REPORT
    }
    fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        enc.field_u64(tags::ORDER_ID, self.order_id);
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        if let Some(orig) = self.orig_cl_ord_id {
            enc.field(tags::ORIG_CL_ORD_ID, orig);
        }
        exec_id(enc, self.exec_id);
        if version == FixVersion::Fix42 {
            let status = self.exec_type == ExecType::OrderStatus;
            enc.field_char(tags::EXEC_TRANS_TYPE, if status { b'3' } else { b'0' });
        }
        enc.field_char(
            tags::EXEC_TYPE,
            self.exec_type.code(version, self.ord_status),
        );
        enc.field_char(tags::ORD_STATUS, self.ord_status.code());
        enc.field_u64(tags::ACCOUNT, self.account as u64);
        enc.field(tags::SYMBOL, self.symbol);
        enc.field_char(tags::SIDE, side_code(self.side));
        let x = &self.ext;
        enc.field_char(
            tags::ORD_TYPE,
            ord_type_code_of(self.ord_type, x.stop_px != 0),
        );
        if self.ord_type == OrdType::Limit {
            enc.field_units(tags::PRICE, self.price, self.price_decimals);
        }
        if x.stop_px != 0 {
            enc.field_units(tags::STOP_PX, x.stop_px, self.price_decimals);
        }
        enc.field_char(tags::TIME_IN_FORCE, tif_code(self.time_in_force));
        if x.expire_time_ns != 0 {
            let precision = expire_precision(x.expire_time_ns);
            enc.field_timestamp(tags::EXPIRE_TIME, x.expire_time_ns, precision);
        }
        enc.field_u64(tags::ORDER_QTY, self.order_qty);
        if x.max_floor != 0 {
            enc.field_u64(tags::MAX_FLOOR, x.max_floor);
        }
        if let Some((px, qty)) = self.last {
            enc.field_units(tags::LAST_PX, px, self.price_decimals);
            enc.field_u64(tags::LAST_QTY, qty);
        }
        enc.field_u64(tags::LEAVES_QTY, self.leaves_qty);
        enc.field_u64(tags::CUM_QTY, self.cum_qty);
        if self.cum_qty == 0 {
            enc.field(tags::AVG_PX, b"0");
        } else {
            enc.field_ratio(
                tags::AVG_PX,
                self.notional,
                self.cum_qty,
                self.price_decimals,
            );
        }
        if let Some(t) = self.text {
            enc.field(tags::TEXT, t);
        }
        enc.field_timestamp(
            tags::TRANSACT_TIME,
            self.transact_time_ns,
            TimePrecision::Millis,
        );
    }
}

/// A drop copy of an ExecutionReport (`report`, an [`ExecutionReport`] or an
/// [`OrderlessReport`]) for a session that watches another one's orders: the same fields,
/// plus DeliverToCompID (128) naming the CompID the original was sent to and, in FIX 4.4 and
/// 5.0SP2, CopyMsgIndicator (797) `Y` (FIX 4.2 has no such field).
///
/// DeliverToCompID is a standard-header field in every version: it is written first, so it
/// directly follows the header the session wrote (SendingTime, or OrigSendingTime on a resend)
/// and stays in the header for every reader (QuickFIX/J and [`crate::Decoder`] take the
/// header to be the header tags before the first body tag).
#[derive(Clone, Copy, Debug)]
pub struct DropCopy<'a, M> {
    pub deliver_to_comp_id: &'a [u8],
    pub report: &'a M,
}

impl<M: AppMessage> AppMessage for DropCopy<'_, M> {
    fn msg_type(&self) -> &[u8] {
        self.report.msg_type()
    }
    fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::DELIVER_TO_COMP_ID, self.deliver_to_comp_id);
        self.report.encode_body(version, enc);
        if version != FixVersion::Fix42 {
            enc.field(tags::COPY_MSG_INDICATOR, b"Y");
        }
    }
}

fn exec_id(enc: &mut Encoder, (seq, n): (u64, u32)) {
    // `seq.n`, as one field without formatting it through a buffer.
    enc.raw(b"17=");
    enc.raw_u64(seq);
    // A record's reports are few: `n` is nearly always one digit.
    if n < 10 {
        enc.raw(&[b'.', b'0' + n as u8, crate::SOH]);
    } else {
        enc.raw(b".");
        enc.raw_u64(n as u64);
        enc.raw(b"\x01");
    }
}

/// ExecutionReport (35=8) about no order: a refused NewOrderSingle (ExecType 8) or the status
/// of an order the session does not have (ExecType I; FIX 4.2: 8 with ExecTransType 3).
/// OrderID is NONE, quantities zero, and the request's own fields are echoed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderlessReport<'a> {
    pub cl_ord_id: &'a [u8],
    /// ExecID (17) is `exec_id.0` `.` `exec_id.1`.
    pub exec_id: (u64, u32),
    /// An answer to an OrderStatusRequest (else a reject).
    pub status: bool,
    pub echo: &'a [u8],
    /// OrdRejReason (103) of a reject.
    pub ord_rej_reason: Option<u32>,
    pub text: &'a [u8],
    /// TransactTime (60), on a reject.
    pub transact_time_ns: Option<u64>,
}

impl AppMessage for OrderlessReport<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::EXECUTION_REPORT
    }
    fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::ORDER_ID, b"NONE");
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        exec_id(enc, self.exec_id);
        let fix42 = version == FixVersion::Fix42;
        if fix42 {
            enc.field_char(tags::EXEC_TRANS_TYPE, if self.status { b'3' } else { b'0' });
        }
        let exec_type = if self.status && !fix42 { b'I' } else { b'8' };
        enc.field_char(tags::EXEC_TYPE, exec_type);
        enc.field_char(tags::ORD_STATUS, OrdStatus::Rejected.code());
        enc.raw(self.echo);
        enc.field(tags::LEAVES_QTY, b"0");
        enc.field(tags::CUM_QTY, b"0");
        enc.field(tags::AVG_PX, b"0");
        if let Some(r) = self.ord_rej_reason {
            let r = crate::defined_or(version, tags::ORD_REJ_REASON, r as u64, &[99, 0]);
            enc.field_u64(tags::ORD_REJ_REASON, r);
        }
        enc.field(tags::TEXT, self.text);
        if let Some(ts) = self.transact_time_ns {
            enc.field_timestamp(tags::TRANSACT_TIME, ts, TimePrecision::Millis);
        }
    }
}

/// CxlRejResponseTo (434).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CxlRejResponseTo {
    CancelRequest,
    CancelReplaceRequest,
}

/// OrderCancelReject (35=9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderCancelReject<'a> {
    /// None writes `NONE`.
    pub order_id: Option<u64>,
    pub cl_ord_id: &'a [u8],
    pub orig_cl_ord_id: &'a [u8],
    /// The order's OrdStatus; `None` (no such order) writes 8.
    pub ord_status: Option<OrdStatus>,
    pub response_to: CxlRejResponseTo,
    pub reason: u32,
    pub text: &'a [u8],
}

impl AppMessage for OrderCancelReject<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::ORDER_CANCEL_REJECT
    }
    fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        match self.order_id {
            Some(id) => enc.field_u64(tags::ORDER_ID, id),
            None => enc.field(tags::ORDER_ID, b"NONE"),
        }
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        enc.field(tags::ORIG_CL_ORD_ID, self.orig_cl_ord_id);
        let status = self.ord_status.unwrap_or(OrdStatus::Rejected);
        enc.field_char(tags::ORD_STATUS, status.code());
        let to = match self.response_to {
            CxlRejResponseTo::CancelRequest => b'1',
            CxlRejResponseTo::CancelReplaceRequest => b'2',
        };
        enc.field_char(tags::CXL_REJ_RESPONSE_TO, to);
        let reason = crate::defined_or(version, tags::CXL_REJ_REASON, self.reason as u64, &[99, 2]);
        enc.field_u64(tags::CXL_REJ_REASON, reason);
        enc.field(tags::TEXT, self.text);
    }
}

/// OrderMassCancelReport (35=r).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderMassCancelReport<'a> {
    pub cl_ord_id: &'a [u8],
    /// Identifier of the mass cancel (OrderID 37, and MassActionReportID 1369 in FIX 5.0SP2).
    pub report_id: u64,
    /// MassCancelRequestType (530) as requested.
    pub request_type: u8,
    /// Carried out (MassCancelResponse 531 = the request type) or refused (0, with 532=99
    /// and this Text).
    pub rejected: Option<&'a [u8]>,
    pub total_affected_orders: u64,
    pub symbol: Option<&'a [u8]>,
    pub side: Option<Side>,
}

impl AppMessage for OrderMassCancelReport<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::ORDER_MASS_CANCEL_REPORT
    }
    fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        enc.field_u64(tags::ORDER_ID, self.report_id);
        enc.field_u64(tags::MASS_CANCEL_REQUEST_TYPE, self.request_type as u64);
        match self.rejected {
            None => enc.field_u64(tags::MASS_CANCEL_RESPONSE, self.request_type as u64),
            Some(_) => enc.field(tags::MASS_CANCEL_RESPONSE, b"0"),
        }
        enc.field_u64(tags::TOTAL_AFFECTED_ORDERS, self.total_affected_orders);
        if version == FixVersion::Fix50Sp2 {
            enc.field_u64(tags::MASS_ACTION_REPORT_ID, self.report_id);
        }
        if let Some(s) = self.symbol {
            enc.field(tags::SYMBOL, s);
        }
        if let Some(s) = self.side {
            enc.field_char(tags::SIDE, side_code(s));
        }
        if let Some(text) = self.rejected {
            enc.field(tags::MASS_CANCEL_REJECT_REASON, b"99");
            enc.field(tags::TEXT, text);
        }
    }
}

/// BusinessMessageReject (35=j).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusinessMessageReject<'a> {
    pub ref_seq_num: u64,
    pub ref_msg_type: &'a [u8],
    /// BusinessRejectRefID (379): the ClOrdID of the refused request, if any.
    pub business_reject_ref_id: Option<&'a [u8]>,
    pub reason: BusinessRejectReason,
    pub text: &'a [u8],
}

impl AppMessage for BusinessMessageReject<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::BUSINESS_MESSAGE_REJECT
    }
    fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        enc.field_u64(tags::REF_SEQ_NUM, self.ref_seq_num);
        enc.field(tags::REF_MSG_TYPE, self.ref_msg_type);
        if let Some(id) = self.business_reject_ref_id {
            enc.field(tags::BUSINESS_REJECT_REF_ID, id);
        }
        enc.field_u64(tags::BUSINESS_REJECT_REASON, self.reason.code_in(version));
        enc.field(tags::TEXT, self.text);
    }
}

/// A client's NewOrderSingle (load generator, tests, tools), for `Session::send_app` or an
/// `Encoder`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewOrder<'a> {
    pub cl_ord_id: &'a [u8],
    pub symbol: &'a [u8],
    pub side: Side,
    pub order_qty: u64,
    pub ord_type: OrdType,
    pub price: Option<Decimal>,
    pub time_in_force: TimeInForce,
    pub post_only: bool,
    /// TransactTime (60), ns since the epoch.
    pub transact_time_ns: u64,
}

impl AppMessage for NewOrder<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::NEW_ORDER_SINGLE
    }
    /// Every field each version's dictionary requires: HandlInst (21) = 1 (automated,
    /// private) in FIX 4.2, TransactTime (60) in all.
    fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        if version == FixVersion::Fix42 {
            enc.field(tags::HANDL_INST, b"1");
        }
        enc.field(tags::SYMBOL, self.symbol);
        enc.field_char(tags::SIDE, side_code(self.side));
        enc.field_u64(tags::ORDER_QTY, self.order_qty);
        enc.field_char(tags::ORD_TYPE, ord_type_code(self.ord_type));
        if let Some(p) = self.price {
            enc.field_decimal(tags::PRICE, p);
        }
        enc.field_char(tags::TIME_IN_FORCE, tif_code(self.time_in_force));
        if self.post_only {
            enc.field(tags::EXEC_INST, b"6");
        }
        enc.field_timestamp(
            tags::TRANSACT_TIME,
            self.transact_time_ns,
            TimePrecision::Millis,
        );
    }
}
