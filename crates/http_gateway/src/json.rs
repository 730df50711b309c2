//! The JSON the API answers with: order objects, fills, errors, and the stable error code and
//! HTTP status of each of the exchange's refusals (`exchange::Reject`).
//!
//! Prices and quantities are decimal strings, exact to the instrument's units (never a
//! float); order ids are numbers; times are nanoseconds since the epoch (UTC), the record's.

use crate::config::InstrumentDef;
use exchange::{OrderRecord, OrderStatus, Reject, RiskKind};
use serde::Serialize;
use types::{CancelReason, OrdType, Side, TimeInForce};
use utoipa::ToSchema;

/// An error body: `{"code": "...", "message": "..."}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct ErrorBody {
    /// Stable, machine-readable: `invalid_price`, `unknown_order`, `throttled`... (docs/api.md).
    #[schema(value_type = String, example = "invalid_price")]
    pub code: &'static str,
    /// What is wrong, in words, with the values involved.
    #[schema(example = "price 100.001 is not a multiple of ACME's tick 0.01")]
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
        Reject::PriceBand { .. } => (422, "price_band"),
        Reject::Blocked { .. } => (422, "blocked"),
        Reject::InstrumentNotOpen { .. } => (422, "instrument_not_open"),
        Reject::RiskLimit { kind, .. } => (
            422,
            match kind {
                RiskKind::OrderQty => "order_quantity_limit",
                RiskKind::OrderNotional => "order_notional_limit",
                RiskKind::OpenNotional => "open_notional_limit",
                RiskKind::NetPosition => "position_limit",
            },
        ),
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

/// The names the API uses for sides, order types, times in force, statuses and liquidity
/// (for the OpenAPI document: the fields that hold them are `&'static str`).
pub mod names {
    use utoipa::ToSchema;

    /// The side of an order.
    #[derive(ToSchema)]
    #[schema(rename_all = "snake_case")]
    pub enum Side {
        Buy,
        Sell,
    }

    /// The type of an order: `limit` has a price, `market` none.
    #[derive(ToSchema)]
    #[schema(rename_all = "snake_case")]
    pub enum OrderType {
        Limit,
        Market,
    }

    /// How long an order may rest: `gtc` until canceled, `day` until the trading day ends,
    /// `ioc` trades what it can at once, `fok` all at once or nothing.
    #[derive(ToSchema)]
    #[schema(rename_all = "snake_case")]
    pub enum TimeInForce {
        Gtc,
        Day,
        Ioc,
        Fok,
    }

    /// The state of an order.
    #[derive(ToSchema)]
    #[schema(rename_all = "snake_case")]
    pub enum OrderStatus {
        New,
        PartiallyFilled,
        Filled,
        Canceled,
        Expired,
    }

    /// Which orders `GET /api/v1/orders` lists.
    #[derive(ToSchema)]
    #[schema(rename_all = "snake_case")]
    pub enum ListStatus {
        Open,
        Closed,
    }

    /// `taker`: the order traded on arrival or replace; `maker`: it rested.
    #[derive(ToSchema)]
    #[schema(rename_all = "snake_case")]
    pub enum Liquidity {
        Taker,
        Maker,
    }
}

/// One fill of an order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct FillJson {
    /// The journal record and the report's number within it: unique.
    #[schema(example = "42.0")]
    pub fill_id: String,
    #[schema(example = "100.25")]
    pub price: String,
    #[schema(example = "10")]
    pub quantity: String,
    /// `taker` (the order traded on arrival or replace) or `maker` (it rested).
    #[schema(value_type = names::Liquidity)]
    pub liquidity: &'static str,
}

/// An order as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct OrderJson {
    /// The exchange's id of the order.
    pub order_id: u64,
    /// The id the key gave the order, if it gave one.
    pub client_order_id: Option<String>,
    #[schema(example = "ACME")]
    pub symbol: String,
    #[schema(value_type = names::Side)]
    pub side: &'static str,
    #[serde(rename = "type")]
    #[schema(value_type = names::OrderType)]
    pub ord_type: &'static str,
    #[schema(value_type = names::TimeInForce)]
    pub time_in_force: &'static str,
    /// The limit price (null for a market order).
    #[schema(example = "100.25")]
    pub price: Option<String>,
    #[schema(example = "10")]
    pub quantity: String,
    pub filled_quantity: String,
    pub remaining_quantity: String,
    /// The average price of its fills (null before the first).
    pub average_price: Option<String>,
    #[schema(value_type = names::OrderStatus)]
    pub status: &'static str,
    /// Why it left the book early (canceled or expired), in words.
    #[schema(value_type = Option<String>)]
    pub cancel_reason: Option<&'static str>,
    /// The time of the record that last changed it (or that this answer is about), ns UTC.
    pub updated_ns: u64,
    /// The fills this answer is about (a new order's immediate fills; an event's fill);
    /// absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(required = false)]
    pub fills: Vec<FillJson>,
}

/// The answer to a list of open orders.
#[derive(Serialize, ToSchema)]
pub struct OrderList {
    pub orders: Vec<OrderJson>,
}

/// The answer to a cancel of all open orders: how many it canceled.
#[derive(Serialize, ToSchema)]
pub struct Canceled {
    pub canceled: u64,
}

/// An instrument as `GET /api/v1/instruments` lists it.
#[derive(Serialize, ToSchema)]
pub struct InstrumentJson {
    #[schema(example = "ACME")]
    pub symbol: String,
    /// Prices are multiples of it.
    #[schema(example = "0.01")]
    pub tick_size: String,
    /// Quantities are multiples of it.
    #[schema(example = "1")]
    pub lot_size: String,
    /// Digits after the point in prices.
    pub price_decimals: u32,
}

/// `GET /api/v1/instruments`.
#[derive(Serialize, ToSchema)]
pub struct Instruments {
    pub instruments: Vec<InstrumentJson>,
}

/// A price level: `[price, quantity, orders]`.
#[derive(Serialize)]
pub struct Level(pub String, pub String, pub u32);

impl utoipa::PartialSchema for Level {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ArrayBuilder, ArrayItems, ObjectBuilder, Type};
        let string = |d: &str| {
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some(d))
        };
        ArrayBuilder::new()
            .description(Some("[price, quantity, orders]"))
            .prefix_items([
                string("price").build(),
                string("total quantity").build(),
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(0))
                    .description(Some("orders"))
                    .build(),
            ])
            .items(ArrayItems::False)
            .min_items(Some(3))
            .max_items(Some(3))
            .into()
    }
}

impl ToSchema for Level {}

/// `GET /api/v1/book/{symbol}`: the book by level, best first, as the market-data feed has
/// it.
#[derive(Serialize, ToSchema)]
pub struct BookJson {
    pub symbol: String,
    /// The instrument's feed sequence number of the last change included (the FIX feed's
    /// RptSeq).
    pub rpt_seq: u64,
    pub bids: Vec<Level>,
    pub asks: Vec<Level>,
    /// Record time of the last change, ns UTC (0: none yet).
    pub updated_ns: u64,
}

/// The best price of one side.
#[derive(Serialize, ToSchema)]
pub struct BestJson {
    pub price: String,
    pub quantity: String,
}

/// The last trade of an instrument.
#[derive(Serialize, ToSchema)]
pub struct TradeJson {
    pub price: String,
    pub quantity: String,
    #[schema(value_type = names::Side)]
    pub aggressor_side: &'static str,
    pub trade_id: u64,
}

/// `GET /api/v1/ticker/{symbol}`.
#[derive(Serialize, ToSchema)]
pub struct TickerJson {
    pub symbol: String,
    pub rpt_seq: u64,
    pub best_bid: Option<BestJson>,
    pub best_ask: Option<BestJson>,
    pub last_trade: Option<TradeJson>,
    /// open, halted or closed.
    #[schema(example = "open")]
    pub status: &'static str,
    pub updated_ns: u64,
}

/// `/health` and `/ready`.
#[derive(Serialize, ToSchema)]
pub struct StatusJson {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
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
