//! The JSON the API answers with: order objects, fills, errors, and the stable error code and
//! HTTP status of each of the exchange's refusals (`exchange::Reject`).
//!
//! Prices and quantities are decimal strings, exact to the instrument's units (never a
//! float); order ids are numbers; times are nanoseconds since the epoch (UTC), the record's.

use crate::config::InstrumentDef;
use exchange::{OrderRecord, OrderStatus, Reject};
use serde::Serialize;
use types::{CancelReason, OrdType, Side, TimeInForce};

/// An error body: `{"code": "...", "message": "..."}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ErrorBody {
    pub code: &'static str,
    pub message: String,
}

/// An answer: its HTTP status and JSON body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(status: u16, v: &impl Serialize) -> Answer {
        Answer {
            status,
            body: serde_json::to_vec(v).expect("plain data serializes"),
        }
    }

    pub fn error(status: u16, code: &'static str, message: impl Into<String>) -> Answer {
        Answer::json(
            status,
            &ErrorBody {
                code,
                message: message.into(),
            },
        )
    }
}

/// The HTTP status and stable code of a refusal by the exchange.
pub fn reject_code(r: Reject) -> (u16, &'static str) {
    match r {
        Reject::UnknownSymbol => (400, "unknown_symbol"),
        Reject::UnknownAccount => (400, "unknown_account"),
        Reject::DuplicateClOrdId => (409, "duplicate_client_order_id"),
        Reject::UnknownOrder => (404, "unknown_order"),
        Reject::InvalidPrice => (400, "invalid_price"),
        Reject::InvalidQty => (400, "invalid_quantity"),
        Reject::InvalidField(_) => (400, "invalid_field"),
        Reject::DuplicateOrderId => (409, "duplicate_order_id"),
        Reject::PostOnlyWouldCross => (422, "post_only_would_cross"),
        Reject::CapacityExceeded => (422, "capacity_exceeded"),
        Reject::FirmOpenOrderLimit { .. } => (422, "firm_open_order_limit"),
        Reject::AccountOpenOrderLimit { .. } => (422, "account_open_order_limit"),
        Reject::ReplaceSymbolDiffers => (400, "symbol_differs"),
        Reject::ReplaceQtyAtOrBelowFilled => (422, "quantity_at_or_below_filled"),
        Reject::ReplaceMarketOrder => (422, "market_order_not_replaceable"),
        Reject::ExchangeBusy => (503, "exchange_busy"),
        Reject::MarketClosed { .. } => (422, "market_closed"),
    }
}

/// The answer to a refusal: its status, code, and the exchange's words with their detail.
pub fn reject_answer(r: Reject) -> Answer {
    let (status, code) = reject_code(r);
    let mut buf = [0u8; exchange::DESCRIBE_MAX];
    Answer::error(status, code, r.describe(&mut buf))
}

/// `units` of a price written as a decimal string.
pub fn price(units: i64, def: &InstrumentDef) -> String {
    let mut v = Vec::with_capacity(24);
    types::decimal::write_units(&mut v, units, def.price_decimals);
    String::from_utf8(v).expect("digits")
}

/// A ratio `num / den` of price units as a decimal string (an average price).
pub fn ratio(num: i128, den: u64, def: &InstrumentDef) -> String {
    let mut v = Vec::with_capacity(32);
    types::decimal::write_ratio(&mut v, num, den, def.price_decimals);
    String::from_utf8(v).expect("digits")
}

pub fn side(s: Side) -> &'static str {
    match s {
        Side::Buy => "buy",
        Side::Sell => "sell",
    }
}

pub fn ord_type(t: OrdType) -> &'static str {
    match t {
        OrdType::Limit => "limit",
        OrdType::Market => "market",
    }
}

pub fn tif(t: TimeInForce) -> &'static str {
    match t {
        TimeInForce::Day => "day",
        TimeInForce::Gtc => "gtc",
        TimeInForce::Ioc => "ioc",
        TimeInForce::Fok => "fok",
    }
}

pub fn status(s: OrderStatus) -> &'static str {
    match s {
        OrderStatus::New => "new",
        OrderStatus::PartiallyFilled => "partially_filled",
        OrderStatus::Filled => "filled",
        OrderStatus::Canceled => "canceled",
        OrderStatus::Expired => "expired",
    }
}

/// The client order id a key sees: what it gave the order (the part before `~`, which the
/// edge appends to ids it makes for cancels and replaces), or none if the edge made it.
pub fn client_order_id(cl: &str) -> Option<String> {
    let base = cl.split('~').next().unwrap_or("");
    (!base.is_empty()).then(|| base.to_owned())
}

/// One fill of an order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FillJson {
    /// The journal record and the report's number within it: unique.
    pub fill_id: String,
    pub price: String,
    pub quantity: String,
    /// `taker` (the order traded on arrival or replace) or `maker` (it rested).
    pub liquidity: &'static str,
}

/// An order as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OrderJson {
    pub order_id: u64,
    pub client_order_id: Option<String>,
    pub symbol: String,
    pub side: &'static str,
    #[serde(rename = "type")]
    pub ord_type: &'static str,
    pub time_in_force: &'static str,
    pub price: Option<String>,
    pub quantity: String,
    pub filled_quantity: String,
    pub remaining_quantity: String,
    pub average_price: Option<String>,
    pub status: &'static str,
    /// Why it left the book early (canceled or expired), in words.
    pub cancel_reason: Option<&'static str>,
    /// The time of the record that last changed it (or that this answer is about), ns UTC.
    pub updated_ns: u64,
    /// The fills this answer is about (a new order's immediate fills; an event's fill).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fills: Vec<FillJson>,
}

impl OrderJson {
    pub fn of(
        id: u64,
        o: &OrderRecord,
        def: &InstrumentDef,
        cancel: Option<CancelReason>,
        ts: u64,
    ) -> OrderJson {
        let status = if cancel == Some(CancelReason::Expired) {
            OrderStatus::Expired
        } else {
            o.status()
        };
        OrderJson {
            order_id: id,
            client_order_id: client_order_id(o.cl_ord_id.as_str()),
            symbol: def.symbol.as_str().to_owned(),
            side: side(o.side),
            ord_type: ord_type(o.ord_type),
            time_in_force: tif(o.tif),
            price: (o.ord_type == OrdType::Limit).then(|| price(o.price, def)),
            quantity: o.order_qty.to_string(),
            filled_quantity: o.cum_qty.to_string(),
            remaining_quantity: o.leaves_qty.to_string(),
            average_price: (o.cum_qty > 0).then(|| ratio(o.notional, o.cum_qty, def)),
            status: self::status(status),
            cancel_reason: cancel
                .filter(|c| *c != CancelReason::User)
                .map(|c| c.text()),
            updated_ns: ts,
            fills: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests;
