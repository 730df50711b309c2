//! The history routes, answered from the trade store (`trade_store::History`), never the
//! event loop: `GET /api/v1/trades/{symbol}` (public), `GET /api/v1/fills` and
//! `GET /api/v1/orders?status=closed` (a key's own).
//!
//! Role: read the query (`since`, `limit`, `symbol`, `start`/`end`) with a precise error for
//! anything wrong, run the store's read off the async threads (`spawn_blocking`: it blocks),
//! and answer one page, with `next_since` (the key to ask for the next page; null on the last)
//! and `store` (how far the store is behind the journal: the store is a follower and may lag).
//! Pages go by keyset (rows after `since`, in key order), never by OFFSET.
//!
//! Without a store (`store = "off"`) these routes answer 404 `store_off`; a store that cannot
//! be read answers 503 `store_unavailable` with Retry-After.

use crate::config::InstrumentDef;
use crate::http::{answer, authenticate, ok_json, path_of, query_of, Params, Shared};
use crate::json::{self, names, Answer};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Serialize;
use std::sync::Arc;
use trade_store::{FillQuery, History, OrderQuery, OrderRow, Position, TradeQuery, PAGE_MAX};
use types::CancelReason;
use utoipa::ToSchema;

/// The page size when `limit` is not given.
pub const LIMIT_DEFAULT: u32 = 100;

/// Where the history routes read, and how far the journal is.
pub struct HistorySource {
    pub reader: Arc<dyn History>,
    /// The journal's last committed record.
    pub journal_seq: Box<dyn Fn() -> u64 + Send + Sync>,
}

/// How far the store is behind the journal when the page was read.
#[derive(Serialize, ToSchema)]
pub struct StoreLag {
    /// The last journal record the store holds.
    pub position: u64,
    /// The journal's last record.
    pub journal: u64,
    /// Records the store does not hold yet (their rows are missing from this answer).
    pub behind_records: u64,
    /// The time of the store's last record, ns UTC (0: none yet).
    pub as_of_ns: u64,
}

/// A trade of `GET /api/v1/trades/{symbol}`.
#[derive(Serialize, ToSchema)]
pub struct HistoryTrade {
    pub trade_id: u64,
    #[schema(example = "100.25")]
    pub price: String,
    #[schema(example = "10")]
    pub quantity: String,
    #[schema(value_type = names::Side)]
    pub aggressor_side: &'static str,
    /// The time of the journal record that made it, ns UTC.
    pub time_ns: u64,
}

/// `GET /api/v1/trades/{symbol}`: a page of an instrument's trades in id order (or newest
/// first).
#[derive(Serialize, ToSchema)]
pub struct TradesPage {
    #[schema(example = "ACME")]
    pub symbol: String,
    pub trades: Vec<HistoryTrade>,
    /// The `since` of the next page (null: this is the last, for now).
    pub next_since: Option<u64>,
    pub store: StoreLag,
}

/// A fill of `GET /api/v1/fills`.
#[derive(Serialize, ToSchema)]
pub struct HistoryFill {
    /// The journal record and the report's number within it: unique (FIX's ExecID).
    #[schema(example = "42.1")]
    pub fill_id: String,
    pub order_id: u64,
    pub client_order_id: Option<String>,
    #[schema(example = "ACME")]
    pub symbol: String,
    #[schema(value_type = names::Side)]
    pub side: &'static str,
    #[schema(example = "100.25")]
    pub price: String,
    #[schema(example = "10")]
    pub quantity: String,
    /// The order's filled quantity after this fill.
    pub filled_quantity: String,
    /// The order's open quantity after this fill.
    pub remaining_quantity: String,
    /// The trade it is one side of.
    pub trade_id: Option<u64>,
    /// `taker` or `maker` (null if unknown).
    #[schema(value_type = Option<names::Liquidity>)]
    pub liquidity: Option<&'static str>,
    pub time_ns: u64,
}

/// `GET /api/v1/fills`: a page of the key's fills in execution order.
#[derive(Serialize, ToSchema)]
pub struct FillsPage {
    pub fills: Vec<HistoryFill>,
    /// The `since` of the next page (null: this is the last, for now).
    #[schema(example = "42.1")]
    pub next_since: Option<String>,
    pub store: StoreLag,
}

/// `GET /api/v1/orders?status=closed`: a page of the key's closed orders in id order.
#[derive(Serialize, ToSchema)]
pub struct ClosedOrdersPage {
    pub orders: Vec<json::OrderJson>,
    /// The `since` of the next page (null: this is the last, for now).
    pub next_since: Option<u64>,
    pub store: StoreLag,
}

fn history(s: &Shared) -> Result<&HistorySource, Answer> {
    s.history.get().ok_or_else(|| {
        Answer::error(
            404,
            "store_off",
            "this exchange runs without a trade store (store = \"off\"): no history",
        )
    })
}

/// Runs `f` on the store off the async threads; a store error is 503 `store_unavailable`.
async fn read<T: Send + 'static>(
    h: &HistorySource,
    f: impl FnOnce(&dyn History) -> Result<T, trade_store::StoreError> + Send + 'static,
) -> Result<(T, StoreLag), Answer> {
    let reader = h.reader.clone();
    let journal = (h.journal_seq)();
    let r = tokio::task::spawn_blocking(move || {
        let pos = reader.position()?;
        Ok::<_, trade_store::StoreError>((f(&*reader)?, pos))
    })
    .await;
    let unavailable = |why: String| {
        Answer::error(
            503,
            "store_unavailable",
            format!("the trade store cannot be read now: {why}"),
        )
    };
    match r {
        Ok(Ok((v, Position { seq, ts_ns }))) => Ok((
            v,
            StoreLag {
                position: seq,
                journal: journal.max(seq),
                behind_records: journal.saturating_sub(seq),
                as_of_ns: ts_ns,
            },
        )),
        Ok(Err(e)) => Err(unavailable(e.0)),
        Err(e) => Err(unavailable(e.to_string())),
    }
}

/// Refuses a parameter not in `known`.
fn only(q: &Params, known: &[&str]) -> Result<(), Answer> {
    match q.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(Answer::error(
            400,
            "unknown_parameter",
            format!("unknown parameter {k:?} (known: {})", known.join(", ")),
        )),
        None => Ok(()),
    }
}

fn limit(q: &Params) -> Result<u32, Answer> {
    match q.get("limit") {
        None => Ok(LIMIT_DEFAULT),
        Some(v) => match v.parse::<u32>() {
            Ok(n) if (1..=PAGE_MAX).contains(&n) => Ok(n),
            _ => Err(Answer::error(
                400,
                "invalid_limit",
                format!("limit must be 1 to {PAGE_MAX}, got {v:?}"),
            )),
        },
    }
}

/// A `since` that is an id (a number; absent: 0, from the first).
fn since_id(q: &Params, what: &str) -> Result<u64, Answer> {
    match q.get("since") {
        None => Ok(0),
        Some(v) => v.parse::<u64>().map_err(|_| {
            Answer::error(
                400,
                "invalid_since",
                format!("since must be a {what} id (a whole number), got {v:?}"),
            )
        }),
    }
}

fn symbol_param<'s>(s: &'s Shared, q: &Params) -> Result<Option<(u32, &'s InstrumentDef)>, Answer> {
    match q.get("symbol") {
        None => Ok(None),
        Some(sym) => s
            .cfg
            .symbol_id(sym)
            .map(|i| Some((i, &s.cfg.instruments[i as usize])))
            .ok_or_else(|| Answer::error(400, "unknown_symbol", format!("unknown symbol {sym:?}"))),
    }
}

/// A time bound: nanoseconds since the epoch (digits), or an RFC 3339 time
/// (`2026-11-29T07:00:00Z`, `2026-11-29T08:00:00.5+01:00`).
pub fn time_ns(name: &str, v: &str) -> Result<u64, Answer> {
    if !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit()) {
        return v.parse::<u64>().map_err(|_| {
            Answer::error(400, "invalid_time", format!("{name} {v} is out of range"))
        });
    }
    let t = time::OffsetDateTime::parse(v, &time::format_description::well_known::Rfc3339)
        .map_err(|e| {
            Answer::error(
                400,
                "invalid_time",
                format!(
                    "{name} must be an RFC 3339 time like 2026-11-29T07:00:00Z or nanoseconds \
                     since 1970, got {v:?}: {e}"
                ),
            )
        })?;
    u64::try_from(t.unix_timestamp_nanos())
        .map_err(|_| Answer::error(400, "invalid_time", format!("{name} {v} is before 1970")))
}

/// The page's `next_since`: the last row's key when the page is full.
fn next<T, K>(rows: &[T], limit: u32, key: impl Fn(&T) -> K) -> Option<K> {
    (rows.len() as u32 >= limit)
        .then(|| rows.last().map(key))
        .flatten()
}

/// An instrument's trades in id order (`order=desc`: newest first), from the trade store.
#[utoipa::path(get, path = "/api/v1/trades/{symbol}", tag = "history",
    params(("symbol" = String, Path, description = "The instrument", example = "ACME"),
        crate::openapi::TradesQuery),
    responses((status = 200, description = "A page of trades", body = TradesPage),
        crate::openapi::HistoryPublicErrors))]
pub(crate) async fn trades(
    State(s): State<Arc<Shared>>,
    symbol: Result<Path<String>, PathRejection>,
    q: Result<Query<Params>, QueryRejection>,
) -> Response {
    let r = async {
        let (symbol, q) = (path_of(symbol)?, query_of(q)?);
        let id = s.cfg.symbol_id(&symbol).ok_or_else(|| {
            Answer::error(404, "unknown_symbol", format!("no instrument {symbol:?}"))
        })?;
        only(&q, &["since", "limit", "order"])?;
        let newest_first = match q.get("order").map(String::as_str) {
            None | Some("asc") => false,
            Some("desc") => true,
            Some(v) => {
                return Err(Answer::error(
                    400,
                    "invalid_order",
                    format!("order must be asc (oldest first) or desc (newest first), got {v:?}"),
                ))
            }
        };
        let query = TradeQuery {
            instrument_id: id,
            since: since_id(&q, "trade")?,
            limit: limit(&q)?,
            newest_first,
        };
        let h = history(&s)?;
        let (rows, store) = read(h, move |r| r.trades(&query)).await?;
        let def = &s.cfg.instruments[id as usize];
        Ok::<_, Answer>(TradesPage {
            symbol: def.symbol.as_str().to_owned(),
            next_since: next(&rows, query.limit, |t| t.trade_id),
            trades: rows
                .iter()
                .map(|t| HistoryTrade {
                    trade_id: t.trade_id,
                    price: json::price(t.price, def),
                    quantity: t.qty.to_string(),
                    aggressor_side: t.taker_side,
                    time_ns: t.ts_ns,
                })
                .collect(),
            store,
        })
    };
    match r.await {
        Ok(page) => ok_json(&page),
        Err(a) => answer(a),
    }
}

/// The statics of the names the store holds.
fn name(v: &str, names: &[&'static str]) -> &'static str {
    names
        .iter()
        .find(|n| **n == v)
        .copied()
        .unwrap_or("unknown")
}

const SIDES: &[&str] = &["buy", "sell"];

/// The key's fills in execution order, from the trade store.
#[utoipa::path(get, path = "/api/v1/fills", tag = "history", security(("bearer" = [])),
    params(crate::openapi::FillsQuery),
    responses((status = 200, description = "A page of the key's fills", body = FillsPage),
        crate::openapi::HistoryPrivateErrors))]
pub(crate) async fn fills(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    q: Result<Query<Params>, QueryRejection>,
) -> Response {
    let r = async {
        let key = authenticate(&s, &headers)?;
        let q = query_of(q)?;
        only(&q, &["since", "limit", "symbol"])?;
        let since = match q.get("since") {
            None => (0, 0),
            Some(v) => trade_store::parse_exec_id(v).ok_or_else(|| {
                Answer::error(
                    400,
                    "invalid_since",
                    format!("since must be a fill id like \"42.1\", got {v:?}"),
                )
            })?,
        };
        let query = FillQuery {
            owner: s.cfg.originator(key),
            instrument_id: symbol_param(&s, &q)?.map(|(i, _)| i),
            since,
            limit: limit(&q)?,
        };
        let h = history(&s)?;
        let (rows, store) = read(h, move |r| r.fills(&query)).await?;
        let mut fills = Vec::with_capacity(rows.len());
        for f in &rows {
            let Some(def) = s.cfg.instruments.get(f.instrument_id as usize) else {
                continue;
            };
            fills.push(HistoryFill {
                fill_id: f.exec_id(),
                order_id: f.order_id,
                client_order_id: json::client_order_id(&f.cl_ord_id),
                symbol: def.symbol.as_str().to_owned(),
                side: name(&f.side, SIDES),
                price: json::price(f.price, def),
                quantity: f.qty.to_string(),
                filled_quantity: f.cum_qty.to_string(),
                remaining_quantity: f.leaves_qty.to_string(),
                trade_id: f.trade_id,
                liquidity: f.liquidity.as_deref().map(|l| name(l, &["maker", "taker"])),
                time_ns: f.ts_ns,
            });
        }
        Ok::<_, Answer>(FillsPage {
            next_since: next(&rows, query.limit, |f| f.exec_id()),
            fills,
            store,
        })
    };
    match r.await {
        Ok(page) => ok_json(&page),
        Err(a) => answer(a),
    }
}

/// The words of a cancel reason the store holds (`None`: canceled on request).
fn cancel_text(reason: &str) -> Option<&'static str> {
    let r = match reason {
        "ioc" => CancelReason::Ioc,
        "fok" => CancelReason::Fok,
        "stp" => CancelReason::Stp,
        "no_liquidity" => CancelReason::NoLiquidity,
        "expired" => CancelReason::Expired,
        "disconnect" => CancelReason::Disconnect,
        "price_band" => CancelReason::Collar,
        "operator" => CancelReason::Operator,
        _ => return None,
    };
    Some(r.text())
}

fn order_json(o: &OrderRow, def: &InstrumentDef) -> json::OrderJson {
    json::OrderJson {
        order_id: o.order_id,
        client_order_id: json::client_order_id(&o.cl_ord_id),
        symbol: def.symbol.as_str().to_owned(),
        side: name(&o.side, SIDES),
        ord_type: name(&o.ord_type, &["limit", "market"]),
        time_in_force: name(&o.tif, &["gtc", "day", "ioc", "fok", "gtd"]),
        // The store keeps no stop price, peak or expire time: a closed order shows none.
        expire_time: None,
        price: o.price.map(|p| json::price(p, def)),
        stop_price: None,
        triggered: None,
        quantity: o.order_qty.to_string(),
        display_quantity: None,
        filled_quantity: o.cum_qty.to_string(),
        remaining_quantity: o.leaves_qty.to_string(),
        average_price: (o.cum_qty > 0).then(|| json::ratio(o.notional, o.cum_qty, def)),
        status: name(
            &o.status,
            &["new", "partially_filled", "filled", "canceled", "expired"],
        ),
        cancel_reason: o.cancel_reason.as_deref().and_then(cancel_text),
        updated_ns: o.updated_ts_ns,
        fills: Vec::new(),
    }
}

/// `GET /api/v1/orders?status=closed`: the key's closed orders created in `[start, end)`,
/// from the trade store (the caller checked `status`).
pub(crate) async fn closed_orders(s: &Shared, headers: &HeaderMap, q: &Params) -> Response {
    let r = async {
        let key = authenticate(s, headers)?;
        only(q, &["status", "symbol", "since", "limit", "start", "end"])?;
        let from_ns = q.get("start").map(|v| time_ns("start", v)).transpose()?;
        let to_ns = q.get("end").map(|v| time_ns("end", v)).transpose()?;
        let query = OrderQuery {
            owner: s.cfg.originator(key),
            instrument_id: symbol_param(s, q)?.map(|(i, _)| i),
            since: since_id(q, "order")?,
            from_ns: from_ns.unwrap_or(0),
            to_ns: to_ns.unwrap_or(u64::MAX),
            limit: limit(q)?,
        };
        if query.from_ns >= query.to_ns {
            return Err(Answer::error(
                400,
                "invalid_time",
                "start must be before end",
            ));
        }
        let h = history(s)?;
        let (rows, store) = read(h, move |r| r.closed_orders(&query)).await?;
        let orders = rows
            .iter()
            .filter_map(|o| {
                let def = s.cfg.instruments.get(o.instrument_id as usize)?;
                Some(order_json(o, def))
            })
            .collect();
        Ok::<_, Answer>(ClosedOrdersPage {
            next_since: next(&rows, query.limit, |o| o.order_id),
            orders,
            store,
        })
    };
    match r.await {
        Ok(page) => ok_json(&page),
        Err(a) => answer(a),
    }
}
