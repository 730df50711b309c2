//! The operator's endpoint: `/admin/v1/...` on the HTTP listener, for `rialto admin`.
//!
//! Role: authenticate an operator (`Authorization: Bearer <token>`, its SHA-256 in
//! `[[operators]]`), read the request into an `exchange::AdminAction` with a precise error for
//! anything wrong, and hand it to the event loop like any request (`ApiOp::Admin`, journaled
//! with the operator's name); the edge applies it and answers what it did
//! (`ApiEdge::on_admin`, with `done` and `state` here).
//!
//! Routes: `GET /admin/v1/state`; `POST /admin/v1/kill` and `/admin/v1/unblock` with
//! `{"firm": "F", "account": "7"}` (account optional); `POST
//! /admin/v1/instruments/{symbol}/status` with `{"status": "halted"}` (open, halted, closed, and the
//! call auctions preopen and preclose);
//! `PUT /admin/v1/instruments/{symbol}/limits` with any of `band_bps`, `reference_price`,
//! `max_order_qty`, `max_order_notional`, the breaker's `breaker_bps`, `breaker_window_secs`,
//! `breaker_halt_secs` and `breaker_auction_secs` (decimal strings; a field left out is no
//! limit).
//!
//! Never: takes an API key's token for an operator's, or the reverse; answers 500.

use crate::config::ApiConfig;
use crate::json;
use exchange::{AdminAction, Exchange};
use serde::Serialize;

#[cfg(feature = "server")]
mod routes;
#[cfg(feature = "server")]
pub(crate) use routes::routes;

pub(crate) fn notional_decimals(cfg: &ApiConfig) -> u32 {
    cfg.instruments
        .iter()
        .map(|i| i.price_decimals)
        .max()
        .unwrap_or(0)
}

/// An instrument as the operator sees it.
#[derive(Serialize)]
pub(crate) struct InstrumentState {
    symbol: String,
    status: &'static str,
    /// The last trade's price, or the configured reference before the first.
    reference_price: Option<String>,
    band: Option<[String; 2]>,
    band_bps: Option<u32>,
    max_order_qty: Option<String>,
    max_order_notional: Option<String>,
    /// The circuit breaker: basis points, window, halt and reopening call in seconds.
    breaker: Option<BreakerJson>,
    /// In a call auction: the uncross price and quantity now (none: not in a call, or
    /// nothing would trade).
    indicative: Option<json::IndicativeJson>,
}

#[derive(Serialize)]
pub(crate) struct BreakerJson {
    bps: u32,
    window_secs: u64,
    halt_secs: u64,
    /// The call auction it reopens through after the halt (0: it reopens at once).
    auction_secs: u64,
}

#[derive(Serialize)]
pub(crate) struct Blocked {
    firm: String,
    account: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct AdminState {
    instruments: Vec<InstrumentState>,
    /// The kill switches that are on.
    blocked: Vec<Blocked>,
}

/// `GET /admin/v1/state`'s answer: each instrument's status, reference, band and limits, and
/// the kill switches that are on.
pub(crate) fn state(cfg: &ApiConfig, x: &Exchange) -> AdminState {
    let nd = notional_decimals(cfg);
    let instruments = cfg
        .instruments
        .iter()
        .enumerate()
        .map(|(i, def)| {
            let s = i as u32;
            let r = x.instrument_risk(s).unwrap_or_default();
            let px = |p: i64| json::price(p, def);
            let reference = x.reference_price(s);
            InstrumentState {
                symbol: def.symbol.as_str().to_string(),
                status: x.instrument_status(s).as_str(),
                reference_price: (reference > 0).then(|| px(reference)),
                band: x.price_band(s).map(|(lo, hi)| [px(lo), px(hi)]),
                band_bps: r.band_bps,
                max_order_qty: r.max_order_qty.map(|q| q.to_string()),
                max_order_notional: r.max_order_notional.map(|n| notional(n, nd)),
                breaker: r.breaker.map(|b| BreakerJson {
                    bps: b.bps,
                    window_secs: b.window_ns / 1_000_000_000,
                    halt_secs: b.halt_ns / 1_000_000_000,
                    auction_secs: b.auction_ns / 1_000_000_000,
                }),
                indicative: Some(x.indicative(s))
                    .filter(|&(_, q)| q != 0)
                    .map(|(p, q)| json::IndicativeJson {
                        price: px(p),
                        quantity: q.to_string(),
                    }),
            }
        })
        .collect();
    let mut blocked = Vec::new();
    for (f, firm) in cfg.firms.iter().enumerate() {
        let f16 = f as u16;
        if x.blocked(f16, None) {
            blocked.push(Blocked {
                firm: firm.name.clone(),
                account: None,
            });
        }
        for &a in &firm.accounts {
            if x.blocked(f16, Some(a)) {
                blocked.push(Blocked {
                    firm: firm.name.clone(),
                    account: Some(a.to_string()),
                });
            }
        }
    }
    AdminState {
        instruments,
        blocked,
    }
}

/// A notional of `decimals` decimals as a decimal string.
fn notional(n: i128, decimals: u32) -> String {
    let mut v = Vec::new();
    match i64::try_from(n) {
        Ok(n) => types::decimal::write_units(&mut v, n, decimals),
        Err(_) => return format!("{n}e-{decimals}"),
    }
    String::from_utf8(v).expect("digits")
}

/// The open orders an action will cancel (a kill switch's), before it is applied.
pub(crate) fn open_orders(cfg: &ApiConfig, x: &Exchange, a: &AdminAction) -> u64 {
    match *a {
        AdminAction::Kill {
            account: Some(acc), ..
        } => x.open_orders_of_account(acc),
        AdminAction::Kill {
            firm,
            account: None,
        } => cfg.firms.get(firm as usize).map_or(0, |f| {
            f.accounts
                .iter()
                .map(|&a| x.open_orders_of_account(a))
                .sum()
        }),
        _ => 0,
    }
}

/// What an operator's action did.
#[derive(Serialize)]
pub(crate) struct Done {
    operator: String,
    action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    firm: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    account: Option<String>,
    /// A kill switch: the open orders it cancels (now, or in the next steps).
    #[serde(skip_serializing_if = "Option::is_none")]
    canceling: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instrument: Option<InstrumentState>,
}

pub(crate) fn done(
    cfg: &ApiConfig,
    x: &Exchange,
    operator: &str,
    a: &AdminAction,
    open_before: u64,
) -> Done {
    let firm_name = |f: u16| cfg.firms.get(f as usize).map(|f| f.name.clone());
    let mut d = Done {
        operator: operator.to_string(),
        action: "",
        firm: None,
        account: None,
        canceling: None,
        instrument: None,
    };
    match *a {
        AdminAction::Kill { firm, account } | AdminAction::Unblock { firm, account } => {
            let kill = matches!(a, AdminAction::Kill { .. });
            d.action = if kill { "kill" } else { "unblock" };
            d.firm = firm_name(firm);
            d.account = account.map(|a| a.to_string());
            d.canceling = kill.then_some(open_before);
        }
        AdminAction::SetStatus { symbol, .. } | AdminAction::SetRisk { symbol, .. } => {
            d.action = if matches!(a, AdminAction::SetStatus { .. }) {
                "status"
            } else {
                "limits"
            };
            d.instrument = state(cfg, x).instruments.into_iter().nth(symbol as usize);
        }
    }
    d
}
