//! The JSON the API answers with: order objects, fills, errors, and the stable error code and
//! HTTP status of each of the exchange's refusals (`exchange::Reject`).
//!
//! Prices and quantities are decimal strings, exact to the instrument's units (never a
//! float); order ids are numbers; times are nanoseconds since the epoch (UTC), the record's,
//! except a GTD order's `expire_time`, an RFC 3339 time as the client gave it (`rfc3339`).

use crate::config::InstrumentDef;
use exchange::{OrderExt, OrderRecord, OrderStatus, Reject, RiskKind};
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
        Reject::InvalidField(types::Field::StopPrice) => (400, "invalid_stop_price"),
        Reject::InvalidField(types::Field::DisplayQty) => (400, "invalid_display_quantity"),
        Reject::InvalidField(types::Field::ExpireTime) => (400, "invalid_expire_time"),
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
        Reject::AuctionCall => (422, "auction_call"),
        Reject::ExpireTimePast => (422, "expire_time_passed"),
        Reject::StopPriceChange => (422, "stop_price_not_replaceable"),
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

/// The type an order shows: `limit` or `market`, and for a stop order (`ext.stop_price`
/// set) `stop_limit` or `stop` (a stop market order).
pub fn ord_type(t: OrdType, ext: &OrderExt) -> &'static str {
    match (t, ext.stop_price != 0) {
        (OrdType::Limit, false) => "limit",
        (OrdType::Market, false) => "market",
        (OrdType::Limit, true) => "stop_limit",
        (OrdType::Market, true) => "stop",
    }
}

pub fn tif(t: TimeInForce) -> &'static str {
    match t {
        TimeInForce::Day => "day",
        TimeInForce::Gtc => "gtc",
        TimeInForce::Ioc => "ioc",
        TimeInForce::Fok => "fok",
        TimeInForce::Gtd => "gtd",
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

/// `ns` since the epoch as an RFC 3339 UTC time: `2026-11-30T16:00:00Z`, with a fraction of
/// a second only when there is one (`...:00.25Z`, trailing zeros cut).
pub fn rfc3339(ns: u64) -> String {
    let (secs, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let t = secs % 86_400;
    let mut s = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        t / 3600,
        t / 60 % 60,
        t % 60
    );
    if frac != 0 {
        let digits = format!("{frac:09}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
    s.push('Z');
    s
}

/// The proleptic Gregorian date of day `z` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
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

    /// The type of an order: `limit` has a price, `market` none; `stop` (a stop market
    /// order) and `stop_limit` wait until a trade at or through their `stop_price` triggers
    /// them, then work as a market or limit order.
    #[derive(ToSchema)]
    #[schema(rename_all = "snake_case")]
    pub enum OrderType {
        Limit,
        Market,
        Stop,
        StopLimit,
    }

    /// How long an order may rest: `gtc` until canceled, `day` until the trading day ends,
    /// `ioc` trades what it can at once, `fok` all at once or nothing, `gtd` until its
    /// `expire_time`.
    #[derive(ToSchema)]
    #[schema(rename_all = "snake_case")]
    pub enum TimeInForce {
        Gtc,
        Day,
        Ioc,
        Fok,
        Gtd,
    }

    /// An instrument's trading status: `open`; `halted` or `closed` (no new order or
    /// replace); `preopen` or `preclose`, a call auction (orders collect, nothing trades
    /// until the uncross when it opens or closes; no market, IOC or FOK order).
    #[derive(ToSchema)]
    #[schema(rename_all = "snake_case")]
    pub enum InstrumentStatus {
        Open,
        Halted,
        Closed,
        Preopen,
        Preclose,
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
    /// A GTD order's expire time, RFC 3339 UTC (absent on other orders).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, example = "2026-11-30T16:00:00Z")]
    pub expire_time: Option<String>,
    /// The limit price (null for a market or stop market order).
    #[schema(example = "100.25")]
    pub price: Option<String>,
    /// A stop or stop-limit order's trigger price (absent on other orders).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, example = "101.5")]
    pub stop_price: Option<String>,
    /// A stop or stop-limit order: whether a trade has triggered it (absent on other
    /// orders).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub triggered: Option<bool>,
    #[schema(example = "10")]
    pub quantity: String,
    /// An iceberg order's peak: the most the book shows of it at a time (absent: all of it
    /// is shown).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, example = "2")]
    pub display_quantity: Option<String>,
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

/// During a call auction, what the uncross would trade now.
#[derive(Serialize, ToSchema)]
pub struct IndicativeJson {
    /// The uncross price: the most volume, then the least imbalance, then nearest the
    /// reference price.
    #[schema(example = "100.25")]
    pub price: String,
    /// The volume it would trade.
    #[schema(example = "40")]
    pub quantity: String,
}

/// `GET /api/v1/ticker/{symbol}`.
#[derive(Serialize, ToSchema)]
pub struct TickerJson {
    pub symbol: String,
    pub rpt_seq: u64,
    pub best_bid: Option<BestJson>,
    pub best_ask: Option<BestJson>,
    pub last_trade: Option<TradeJson>,
    /// The instrument's trading status.
    #[schema(value_type = names::InstrumentStatus, example = "open")]
    pub status: &'static str,
    /// During a call auction (`preopen`, `preclose`): the price and quantity the uncross
    /// would trade now; null otherwise, or while nothing would trade.
    pub indicative: Option<IndicativeJson>,
    pub updated_ns: u64,
}

/// `/health` and `/ready`.
#[derive(Serialize, ToSchema)]
pub struct StatusJson {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
}

impl OrderJson {
    /// Order `id` as `o` and its stop, iceberg and GTD attributes `ext` say, at `ts`.
    pub fn of(
        id: u64,
        o: &OrderRecord,
        ext: &OrderExt,
        def: &InstrumentDef,
        cancel: Option<CancelReason>,
        ts: u64,
    ) -> OrderJson {
        let stop = ext.stop_price != 0;
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
            ord_type: ord_type(o.ord_type, ext),
            time_in_force: tif(o.tif),
            expire_time: (ext.expire_ns != 0).then(|| rfc3339(ext.expire_ns)),
            price: (o.ord_type == OrdType::Limit).then(|| price(o.price, def)),
            stop_price: stop.then(|| price(ext.stop_price, def)),
            triggered: stop.then_some(ext.triggered),
            quantity: o.order_qty.to_string(),
            display_quantity: (ext.display_qty != 0).then(|| ext.display_qty.to_string()),
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
