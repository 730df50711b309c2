//! Order-entry application messages: typed views of what clients send (NewOrderSingle,
//! OrderCancelRequest, OrderCancelReplaceRequest, OrderMassCancelRequest, OrderStatusRequest)
//! and builders of what Rialto answers (ExecutionReport, OrderCancelReject,
//! OrderMassCancelReport, BusinessMessageReject).
//!
//! Role: say exactly what the wire said, with FIX 4.4 tags, handling the FIX 4.2 differences
//! (ExecTransType 20, ExecType 1/2 for fills, status via ExecTransType=3) and FIX 5.0SP2 (same as
//! 4.4 here). Turning a view into a `types::Command` (symbol lookup, ticks, ownership) is the
//! gateway's job; `Decimal::to_ticks` is the price helper.
//!
//! Never: allocates (views borrow the inbound buffer, builders borrow their inputs and write
//! into the session's `Encoder`), uses floats, or decides business rules (a zero quantity or a
//! market order with a price is passed through for the engine to judge).
//!
//! Invariants: a view parsed without error has every field FIX requires of that message (and
//! Price when OrdType is limit); every parse error names the tag at fault.

use types::{OrdType, Side, TimeInForce};

use crate::decimal::Decimal;
use crate::decode::{FieldError, Message};
use crate::encode::Encoder;
use crate::tags::{self, msg_type};
use crate::time::TimePrecision;
use crate::{BusinessRejectReason, FixVersion};

/// An outbound application message the session can send.
pub trait AppMessage {
    fn msg_type(&self) -> &[u8];
    /// Writes the body fields (the session writes header and trailer).
    fn encode_body(&self, version: FixVersion, enc: &mut Encoder);
}

/// True for the inbound application MsgTypes Rialto handles; anything else deserves a
/// BusinessMessageReject with `UnsupportedMessageType`.
pub fn is_supported(msg_type: &[u8]) -> bool {
    matches!(msg_type, b"D" | b"F" | b"G" | b"H" | b"q")
}

fn parse_side(v: &[u8]) -> Result<Side, FieldError> {
    match v {
        b"1" => Ok(Side::Buy),
        b"2" => Ok(Side::Sell),
        _ => Err(FieldError::bad_value(tags::SIDE)),
    }
}

fn parse_ord_type(v: &[u8]) -> Result<OrdType, FieldError> {
    match v {
        b"1" => Ok(OrdType::Market),
        b"2" => Ok(OrdType::Limit),
        _ => Err(FieldError::bad_value(tags::ORD_TYPE)),
    }
}

fn parse_tif(v: &[u8]) -> Result<TimeInForce, FieldError> {
    match v {
        b"0" => Ok(TimeInForce::Day),
        b"1" => Ok(TimeInForce::Gtc),
        b"3" => Ok(TimeInForce::Ioc),
        b"4" => Ok(TimeInForce::Fok),
        _ => Err(FieldError::bad_value(tags::TIME_IN_FORCE)),
    }
}

/// ExecInst (18) is a space-separated list; `6` (participate don't initiate) means post-only.
fn parse_post_only(v: &[u8]) -> bool {
    v.split(|&c| c == b' ').any(|x| x == b"6")
}

/// A whole, non-negative quantity (`100` or `100.00`).
fn parse_qty(tag: u32, v: &[u8]) -> Result<u64, FieldError> {
    let d = Decimal::parse(v).map_err(|_| FieldError::bad_format(tag))?;
    let n = d.to_integer().map_err(|_| FieldError::bad_value(tag))?;
    u64::try_from(n).map_err(|_| FieldError::bad_value(tag))
}

fn parse_price(v: &[u8]) -> Result<Decimal, FieldError> {
    Decimal::parse(v).map_err(|_| FieldError::bad_format(tags::PRICE))
}

fn need<T>(v: Option<T>, tag: u32) -> Result<T, FieldError> {
    v.ok_or(FieldError::missing(tag))
}

/// NewOrderSingle (35=D).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewOrderSingle<'a> {
    pub cl_ord_id: &'a [u8],
    pub account: Option<&'a [u8]>,
    pub symbol: &'a [u8],
    pub side: Side,
    pub order_qty: u64,
    pub ord_type: OrdType,
    /// Present (required) for limit orders; passed through as sent for market orders.
    pub price: Option<Decimal>,
    /// DAY when absent, as FIX specifies.
    pub time_in_force: TimeInForce,
    /// ExecInst (18) contains `6`.
    pub post_only: bool,
    pub transact_time: Option<&'a [u8]>,
}

impl<'a> NewOrderSingle<'a> {
    pub fn parse(msg: &Message<'a>) -> Result<NewOrderSingle<'a>, FieldError> {
        let (mut cl, mut acct, mut sym, mut side, mut qty, mut ot, mut px) =
            (None, None, None, None, None, None, None);
        let (mut tif, mut post_only, mut tt) = (TimeInForce::Day, false, None);
        for (tag, v) in msg.body() {
            match tag {
                tags::CL_ORD_ID => cl = Some(v),
                tags::ACCOUNT => acct = Some(v),
                tags::SYMBOL => sym = Some(v),
                tags::SIDE => side = Some(parse_side(v)?),
                tags::ORDER_QTY => qty = Some(parse_qty(tag, v)?),
                tags::ORD_TYPE => ot = Some(parse_ord_type(v)?),
                tags::PRICE => px = Some(parse_price(v)?),
                tags::TIME_IN_FORCE => tif = parse_tif(v)?,
                tags::EXEC_INST => post_only = parse_post_only(v),
                tags::TRANSACT_TIME => tt = Some(v),
                _ => {}
            }
        }
        let ord_type = need(ot, tags::ORD_TYPE)?;
        if ord_type == OrdType::Limit && px.is_none() {
            return Err(FieldError::missing(tags::PRICE));
        }
        Ok(NewOrderSingle {
            cl_ord_id: need(cl, tags::CL_ORD_ID)?,
            account: acct,
            symbol: need(sym, tags::SYMBOL)?,
            side: need(side, tags::SIDE)?,
            order_qty: need(qty, tags::ORDER_QTY)?,
            ord_type,
            price: px,
            time_in_force: tif,
            post_only,
            transact_time: tt,
        })
    }
}

/// OrderCancelRequest (35=F).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderCancelRequest<'a> {
    pub orig_cl_ord_id: &'a [u8],
    pub cl_ord_id: &'a [u8],
    pub order_id: Option<&'a [u8]>,
    pub account: Option<&'a [u8]>,
    pub symbol: &'a [u8],
    pub side: Side,
}

impl<'a> OrderCancelRequest<'a> {
    pub fn parse(msg: &Message<'a>) -> Result<OrderCancelRequest<'a>, FieldError> {
        let (mut orig, mut cl, mut oid, mut acct, mut sym, mut side) =
            (None, None, None, None, None, None);
        for (tag, v) in msg.body() {
            match tag {
                tags::ORIG_CL_ORD_ID => orig = Some(v),
                tags::CL_ORD_ID => cl = Some(v),
                tags::ORDER_ID => oid = Some(v),
                tags::ACCOUNT => acct = Some(v),
                tags::SYMBOL => sym = Some(v),
                tags::SIDE => side = Some(parse_side(v)?),
                _ => {}
            }
        }
        Ok(OrderCancelRequest {
            orig_cl_ord_id: need(orig, tags::ORIG_CL_ORD_ID)?,
            cl_ord_id: need(cl, tags::CL_ORD_ID)?,
            order_id: oid,
            account: acct,
            symbol: need(sym, tags::SYMBOL)?,
            side: need(side, tags::SIDE)?,
        })
    }
}

/// OrderCancelReplaceRequest (35=G).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderCancelReplaceRequest<'a> {
    pub orig_cl_ord_id: &'a [u8],
    pub cl_ord_id: &'a [u8],
    pub order_id: Option<&'a [u8]>,
    pub account: Option<&'a [u8]>,
    pub symbol: &'a [u8],
    pub side: Side,
    pub order_qty: u64,
    pub ord_type: OrdType,
    pub price: Option<Decimal>,
    pub time_in_force: Option<TimeInForce>,
    pub post_only: bool,
}

impl<'a> OrderCancelReplaceRequest<'a> {
    pub fn parse(msg: &Message<'a>) -> Result<OrderCancelReplaceRequest<'a>, FieldError> {
        let (mut orig, mut cl, mut oid, mut acct, mut sym, mut side) =
            (None, None, None, None, None, None);
        let (mut qty, mut ot, mut px, mut tif, mut post_only) = (None, None, None, None, false);
        for (tag, v) in msg.body() {
            match tag {
                tags::ORIG_CL_ORD_ID => orig = Some(v),
                tags::CL_ORD_ID => cl = Some(v),
                tags::ORDER_ID => oid = Some(v),
                tags::ACCOUNT => acct = Some(v),
                tags::SYMBOL => sym = Some(v),
                tags::SIDE => side = Some(parse_side(v)?),
                tags::ORDER_QTY => qty = Some(parse_qty(tag, v)?),
                tags::ORD_TYPE => ot = Some(parse_ord_type(v)?),
                tags::PRICE => px = Some(parse_price(v)?),
                tags::TIME_IN_FORCE => tif = Some(parse_tif(v)?),
                tags::EXEC_INST => post_only = parse_post_only(v),
                _ => {}
            }
        }
        let ord_type = need(ot, tags::ORD_TYPE)?;
        if ord_type == OrdType::Limit && px.is_none() {
            return Err(FieldError::missing(tags::PRICE));
        }
        Ok(OrderCancelReplaceRequest {
            orig_cl_ord_id: need(orig, tags::ORIG_CL_ORD_ID)?,
            cl_ord_id: need(cl, tags::CL_ORD_ID)?,
            order_id: oid,
            account: acct,
            symbol: need(sym, tags::SYMBOL)?,
            side: need(side, tags::SIDE)?,
            order_qty: need(qty, tags::ORDER_QTY)?,
            ord_type,
            price: px,
            time_in_force: tif,
            post_only,
        })
    }
}

/// MassCancelRequestType (530) values Rialto supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MassCancelRequestType {
    /// 1: every order of the account on `symbol`.
    BySymbol,
    /// 7: every order of the account.
    All,
}

impl MassCancelRequestType {
    pub fn code(self) -> u8 {
        match self {
            MassCancelRequestType::BySymbol => b'1',
            MassCancelRequestType::All => b'7',
        }
    }
}

/// OrderMassCancelRequest (35=q).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderMassCancelRequest<'a> {
    pub cl_ord_id: &'a [u8],
    pub request_type: MassCancelRequestType,
    pub account: Option<&'a [u8]>,
    /// Required when `request_type` is `BySymbol`.
    pub symbol: Option<&'a [u8]>,
    pub side: Option<Side>,
}

impl<'a> OrderMassCancelRequest<'a> {
    pub fn parse(msg: &Message<'a>) -> Result<OrderMassCancelRequest<'a>, FieldError> {
        let (mut cl, mut rt, mut acct, mut sym, mut side) = (None, None, None, None, None);
        for (tag, v) in msg.body() {
            match tag {
                tags::CL_ORD_ID => cl = Some(v),
                tags::MASS_CANCEL_REQUEST_TYPE => {
                    rt = Some(match v {
                        b"1" => MassCancelRequestType::BySymbol,
                        b"7" => MassCancelRequestType::All,
                        _ => return Err(FieldError::bad_value(tag)),
                    })
                }
                tags::ACCOUNT => acct = Some(v),
                tags::SYMBOL => sym = Some(v),
                tags::SIDE => side = Some(parse_side(v)?),
                _ => {}
            }
        }
        let request_type = need(rt, tags::MASS_CANCEL_REQUEST_TYPE)?;
        if request_type == MassCancelRequestType::BySymbol && sym.is_none() {
            return Err(FieldError::missing(tags::SYMBOL));
        }
        Ok(OrderMassCancelRequest {
            cl_ord_id: need(cl, tags::CL_ORD_ID)?,
            request_type,
            account: acct,
            symbol: sym,
            side,
        })
    }
}

/// OrderStatusRequest (35=H).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderStatusRequest<'a> {
    pub cl_ord_id: &'a [u8],
    pub order_id: Option<&'a [u8]>,
    pub account: Option<&'a [u8]>,
    pub symbol: &'a [u8],
    pub side: Side,
}

impl<'a> OrderStatusRequest<'a> {
    pub fn parse(msg: &Message<'a>) -> Result<OrderStatusRequest<'a>, FieldError> {
        let (mut cl, mut oid, mut acct, mut sym, mut side) = (None, None, None, None, None);
        for (tag, v) in msg.body() {
            match tag {
                tags::CL_ORD_ID => cl = Some(v),
                tags::ORDER_ID => oid = Some(v),
                tags::ACCOUNT => acct = Some(v),
                tags::SYMBOL => sym = Some(v),
                tags::SIDE => side = Some(parse_side(v)?),
                _ => {}
            }
        }
        Ok(OrderStatusRequest {
            cl_ord_id: need(cl, tags::CL_ORD_ID)?,
            order_id: oid,
            account: acct,
            symbol: need(sym, tags::SYMBOL)?,
            side: need(side, tags::SIDE)?,
        })
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
    PendingCancel,
    PendingReplace,
    Rejected,
    Expired,
    /// Answer to an OrderStatusRequest (4.4 `I`; 4.2 ExecTransType=3 and ExecType=OrdStatus).
    OrderStatus,
}

/// OrdStatus (39).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrdStatus {
    New,
    PartiallyFilled,
    Filled,
    Canceled,
    /// FIX 4.2 only; 4.4 reports a replaced order as New or PartiallyFilled.
    Replaced,
    PendingCancel,
    Rejected,
    Expired,
    PendingReplace,
}

impl OrdStatus {
    pub fn code(self) -> u8 {
        match self {
            OrdStatus::New => b'0',
            OrdStatus::PartiallyFilled => b'1',
            OrdStatus::Filled => b'2',
            OrdStatus::Canceled => b'4',
            OrdStatus::Replaced => b'5',
            OrdStatus::PendingCancel => b'6',
            OrdStatus::Rejected => b'8',
            OrdStatus::Expired => b'C',
            OrdStatus::PendingReplace => b'E',
        }
    }
}

impl ExecType {
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
            ExecType::PendingCancel => b'6',
            ExecType::PendingReplace => b'E',
            ExecType::Rejected => b'8',
            ExecType::Expired => b'C',
            ExecType::OrderStatus => match version {
                FixVersion::Fix42 => status.code(),
                _ => b'I',
            },
        }
    }
}

/// OrdRejReason (103) values.
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
}

/// CxlRejReason (102) values.
pub mod cxl_rej_reason {
    pub const TOO_LATE_TO_CANCEL: u32 = 0;
    pub const UNKNOWN_ORDER: u32 = 1;
    pub const BROKER_OPTION: u32 = 2;
    pub const ALREADY_PENDING: u32 = 3;
    pub const DUPLICATE_CL_ORD_ID: u32 = 6;
    pub const OTHER: u32 = 99;
}

fn side_code(side: Side) -> u8 {
    match side {
        Side::Buy => b'1',
        Side::Sell => b'2',
    }
}

fn ord_type_code(t: OrdType) -> u8 {
    match t {
        OrdType::Market => b'1',
        OrdType::Limit => b'2',
    }
}

fn tif_code(t: TimeInForce) -> u8 {
    match t {
        TimeInForce::Day => b'0',
        TimeInForce::Gtc => b'1',
        TimeInForce::Ioc => b'3',
        TimeInForce::Fok => b'4',
    }
}

fn write_order_id(enc: &mut Encoder, order_id: Option<u64>) {
    match order_id {
        Some(id) => enc.field_u64(tags::ORDER_ID, id),
        None => enc.field(tags::ORDER_ID, b"NONE"),
    }
}

/// ExecutionReport (35=8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecutionReport<'a> {
    /// None for an order that never existed (written as `NONE`).
    pub order_id: Option<u64>,
    pub cl_ord_id: &'a [u8],
    pub orig_cl_ord_id: Option<&'a [u8]>,
    pub exec_id: u64,
    pub exec_type: ExecType,
    pub ord_status: OrdStatus,
    pub account: Option<&'a [u8]>,
    pub symbol: &'a [u8],
    pub side: Side,
    pub ord_type: Option<OrdType>,
    pub time_in_force: Option<TimeInForce>,
    pub order_qty: u64,
    pub price: Option<Decimal>,
    /// LastQty (32) and LastPx (31), written for fills.
    pub last: Option<(u64, Decimal)>,
    pub leaves_qty: u64,
    pub cum_qty: u64,
    pub avg_px: Decimal,
    pub ord_rej_reason: Option<u32>,
    pub text: Option<&'a [u8]>,
    pub transact_time_ns: u64,
    pub time_precision: TimePrecision,
}

impl AppMessage for ExecutionReport<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::EXECUTION_REPORT
    }
    fn encode_body(&self, version: FixVersion, enc: &mut Encoder) {
        write_order_id(enc, self.order_id);
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        if let Some(orig) = self.orig_cl_ord_id {
            enc.field(tags::ORIG_CL_ORD_ID, orig);
        }
        enc.field_u64(tags::EXEC_ID, self.exec_id);
        if version == FixVersion::Fix42 {
            let status = self.exec_type == ExecType::OrderStatus;
            enc.field_char(tags::EXEC_TRANS_TYPE, if status { b'3' } else { b'0' });
        }
        enc.field_char(
            tags::EXEC_TYPE,
            self.exec_type.code(version, self.ord_status),
        );
        enc.field_char(tags::ORD_STATUS, self.ord_status.code());
        if let Some(r) = self.ord_rej_reason {
            enc.field_u64(tags::ORD_REJ_REASON, r as u64);
        }
        if let Some(a) = self.account {
            enc.field(tags::ACCOUNT, a);
        }
        enc.field(tags::SYMBOL, self.symbol);
        enc.field_char(tags::SIDE, side_code(self.side));
        enc.field_u64(tags::ORDER_QTY, self.order_qty);
        if let Some(t) = self.ord_type {
            enc.field_char(tags::ORD_TYPE, ord_type_code(t));
        }
        if let Some(p) = self.price {
            enc.field_decimal(tags::PRICE, p);
        }
        if let Some(t) = self.time_in_force {
            enc.field_char(tags::TIME_IN_FORCE, tif_code(t));
        }
        if let Some((qty, px)) = self.last {
            enc.field_u64(tags::LAST_QTY, qty);
            enc.field_decimal(tags::LAST_PX, px);
        }
        enc.field_u64(tags::LEAVES_QTY, self.leaves_qty);
        enc.field_u64(tags::CUM_QTY, self.cum_qty);
        enc.field_decimal(tags::AVG_PX, self.avg_px);
        enc.field_timestamp(
            tags::TRANSACT_TIME,
            self.transact_time_ns,
            self.time_precision,
        );
        if let Some(t) = self.text {
            enc.field(tags::TEXT, t);
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
    pub order_id: Option<u64>,
    pub cl_ord_id: &'a [u8],
    /// None writes `NONE` (41 is required).
    pub orig_cl_ord_id: Option<&'a [u8]>,
    pub ord_status: OrdStatus,
    pub account: Option<&'a [u8]>,
    pub response_to: CxlRejResponseTo,
    pub reason: Option<u32>,
    pub text: Option<&'a [u8]>,
}

impl AppMessage for OrderCancelReject<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::ORDER_CANCEL_REJECT
    }
    fn encode_body(&self, _version: FixVersion, enc: &mut Encoder) {
        write_order_id(enc, self.order_id);
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        enc.field(tags::ORIG_CL_ORD_ID, self.orig_cl_ord_id.unwrap_or(b"NONE"));
        enc.field_char(tags::ORD_STATUS, self.ord_status.code());
        if let Some(a) = self.account {
            enc.field(tags::ACCOUNT, a);
        }
        let to = match self.response_to {
            CxlRejResponseTo::CancelRequest => b'1',
            CxlRejResponseTo::CancelReplaceRequest => b'2',
        };
        enc.field_char(tags::CXL_REJ_RESPONSE_TO, to);
        if let Some(r) = self.reason {
            enc.field_u64(tags::CXL_REJ_REASON, r as u64);
        }
        if let Some(t) = self.text {
            enc.field(tags::TEXT, t);
        }
    }
}

/// MassCancelResponse (531).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MassCancelResponse {
    Rejected,
    Accepted(MassCancelRequestType),
}

/// OrderMassCancelReport (35=r).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderMassCancelReport<'a> {
    pub cl_ord_id: &'a [u8],
    /// Identifier of the mass cancel (37 is required).
    pub order_id: u64,
    pub request_type: MassCancelRequestType,
    pub response: MassCancelResponse,
    /// MassCancelRejectReason (532) when rejected.
    pub reject_reason: Option<u32>,
    pub total_affected_orders: Option<u64>,
    pub symbol: Option<&'a [u8]>,
    pub side: Option<Side>,
    pub text: Option<&'a [u8]>,
}

impl AppMessage for OrderMassCancelReport<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::ORDER_MASS_CANCEL_REPORT
    }
    fn encode_body(&self, _version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        enc.field_u64(tags::ORDER_ID, self.order_id);
        enc.field_char(tags::MASS_CANCEL_REQUEST_TYPE, self.request_type.code());
        let resp = match self.response {
            MassCancelResponse::Rejected => b'0',
            MassCancelResponse::Accepted(t) => t.code(),
        };
        enc.field_char(tags::MASS_CANCEL_RESPONSE, resp);
        if let Some(r) = self.reject_reason {
            enc.field_u64(tags::MASS_CANCEL_REJECT_REASON, r as u64);
        }
        if let Some(n) = self.total_affected_orders {
            enc.field_u64(tags::TOTAL_AFFECTED_ORDERS, n);
        }
        if let Some(s) = self.symbol {
            enc.field(tags::SYMBOL, s);
        }
        if let Some(s) = self.side {
            enc.field_char(tags::SIDE, side_code(s));
        }
        if let Some(t) = self.text {
            enc.field(tags::TEXT, t);
        }
    }
}

/// BusinessMessageReject (35=j).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusinessMessageReject<'a> {
    pub ref_seq_num: Option<u64>,
    pub ref_msg_type: &'a [u8],
    pub business_reject_ref_id: Option<&'a [u8]>,
    pub reason: BusinessRejectReason,
    pub text: Option<&'a [u8]>,
}

impl AppMessage for BusinessMessageReject<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::BUSINESS_MESSAGE_REJECT
    }
    fn encode_body(&self, _version: FixVersion, enc: &mut Encoder) {
        if let Some(s) = self.ref_seq_num {
            enc.field_u64(tags::REF_SEQ_NUM, s);
        }
        enc.field(tags::REF_MSG_TYPE, self.ref_msg_type);
        if let Some(id) = self.business_reject_ref_id {
            enc.field(tags::BUSINESS_REJECT_REF_ID, id);
        }
        enc.field_u64(tags::BUSINESS_REJECT_REASON, self.reason.code());
        if let Some(t) = self.text {
            enc.field(tags::TEXT, t);
        }
    }
}

/// Outbound NewOrderSingle, for clients written with this crate (load generator, tests).
impl AppMessage for NewOrderSingle<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::NEW_ORDER_SINGLE
    }
    fn encode_body(&self, _version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        if let Some(a) = self.account {
            enc.field(tags::ACCOUNT, a);
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
        if let Some(t) = self.transact_time {
            enc.field(tags::TRANSACT_TIME, t);
        }
    }
}

/// Outbound OrderCancelRequest, for clients written with this crate.
impl AppMessage for OrderCancelRequest<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::ORDER_CANCEL_REQUEST
    }
    fn encode_body(&self, _version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::ORIG_CL_ORD_ID, self.orig_cl_ord_id);
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        if let Some(id) = self.order_id {
            enc.field(tags::ORDER_ID, id);
        }
        if let Some(a) = self.account {
            enc.field(tags::ACCOUNT, a);
        }
        enc.field(tags::SYMBOL, self.symbol);
        enc.field_char(tags::SIDE, side_code(self.side));
    }
}

/// Outbound OrderCancelReplaceRequest, for clients written with this crate.
impl AppMessage for OrderCancelReplaceRequest<'_> {
    fn msg_type(&self) -> &[u8] {
        msg_type::ORDER_CANCEL_REPLACE_REQUEST
    }
    fn encode_body(&self, _version: FixVersion, enc: &mut Encoder) {
        enc.field(tags::ORIG_CL_ORD_ID, self.orig_cl_ord_id);
        enc.field(tags::CL_ORD_ID, self.cl_ord_id);
        if let Some(id) = self.order_id {
            enc.field(tags::ORDER_ID, id);
        }
        if let Some(a) = self.account {
            enc.field(tags::ACCOUNT, a);
        }
        enc.field(tags::SYMBOL, self.symbol);
        enc.field_char(tags::SIDE, side_code(self.side));
        enc.field_u64(tags::ORDER_QTY, self.order_qty);
        enc.field_char(tags::ORD_TYPE, ord_type_code(self.ord_type));
        if let Some(p) = self.price {
            enc.field_decimal(tags::PRICE, p);
        }
        if let Some(t) = self.time_in_force {
            enc.field_char(tags::TIME_IN_FORCE, tif_code(t));
        }
        if self.post_only {
            enc.field(tags::EXEC_INST, b"6");
        }
    }
}
