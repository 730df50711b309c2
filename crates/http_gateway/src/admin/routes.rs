//! `/admin/v1/...`'s routes (see `admin`): authentication, parsing, the hand-off to the loop.

use super::notional_decimals;
use crate::config::ApiConfig;
use crate::http::{
    answer, body_of, error, object, only, path_of, price_of, required, string, submit, symbol_of,
    whole, Shared,
};
use crate::json::Answer;
use crate::record::ApiOp;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::Response;
use axum::routing::{get, post, put};
use axum::Router;
use exchange::{AdminAction, Breaker, InstrumentRisk, InstrumentStatus};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/admin/v1/state", get(state_route))
        .route("/admin/v1/kill", post(kill))
        .route("/admin/v1/unblock", post(unblock))
        .route("/admin/v1/instruments/{symbol}/status", post(set_status))
        .route("/admin/v1/instruments/{symbol}/limits", put(set_limits))
}

/// The operator a request authenticates as.
fn operator(s: &Shared, headers: &HeaderMap) -> Result<String, Answer> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .ok_or_else(|| {
            error(
                401,
                "unauthenticated",
                "missing Authorization: Bearer <operator token>",
            )
        })?;
    let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    s.cfg
        .operators
        .iter()
        .find(|o| o.sha256 == digest)
        .map(|o| o.name.clone())
        .ok_or_else(|| error(401, "unauthenticated", "unknown operator token"))
}

/// An operator's request: authenticated, its body read as a JSON object, `parse` making the
/// action of it; then handed to the loop.
async fn act(
    s: &Shared,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    parse: impl FnOnce(&Map<String, Value>) -> Result<AdminAction, Answer>,
) -> Response {
    let parsed = operator(s, headers).and_then(|name| {
        let body = body_of(body)?;
        let m = object(&body)?;
        Ok((name, parse(&m)?))
    });
    match parsed {
        Ok((operator, action)) => submit(s, 0, None, ApiOp::Admin { operator, action }).await,
        Err(a) => answer(a),
    }
}

/// The firm (index) and account an operator names: `{"firm": "F", "account": "7"}`.
fn firm_of(cfg: &ApiConfig, m: &Map<String, Value>) -> Result<(u16, Option<u32>), Answer> {
    only(m, &["firm", "account"])?;
    let name = required(m, "firm")?;
    let f = cfg
        .firms
        .iter()
        .position(|f| f.name == name)
        .ok_or_else(|| error(404, "unknown_firm", format!("no firm {name:?}")))?;
    let account = match string(m, "account")? {
        None => None,
        Some(a) => {
            let n = whole(a).map_err(|_| {
                error(
                    400,
                    "invalid_account",
                    format!("account {a:?} is not a number"),
                )
            })?;
            let n = u32::try_from(n)
                .ok()
                .filter(|n| cfg.firms[f].accounts.contains(n));
            Some(n.ok_or_else(|| {
                error(
                    404,
                    "unknown_account",
                    format!("firm {name} has no account {a}"),
                )
            })?)
        }
    };
    Ok((f as u16, account))
}

async fn kill(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let cfg = s.cfg.clone();
    act(&s, &headers, body, |m| {
        let (firm, account) = firm_of(&cfg, m)?;
        Ok(AdminAction::Kill { firm, account })
    })
    .await
}

async fn unblock(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let cfg = s.cfg.clone();
    act(&s, &headers, body, |m| {
        let (firm, account) = firm_of(&cfg, m)?;
        Ok(AdminAction::Unblock { firm, account })
    })
    .await
}

async fn set_status(
    State(s): State<Arc<Shared>>,
    symbol: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let symbol = match path_of(symbol).and_then(|v| symbol_of(&s, &v).map(|(i, _)| i)) {
        Ok(i) => i,
        Err(a) => return answer(a),
    };
    act(&s, &headers, body, |m| {
        only(m, &["status"])?;
        let v = required(m, "status")?;
        let status = InstrumentStatus::parse(v).ok_or_else(|| {
            error(
                400,
                "invalid_status",
                format!("status must be open, halted, closed, preopen or preclose, got {v:?}"),
            )
        })?;
        Ok(AdminAction::SetStatus { symbol, status })
    })
    .await
}

async fn set_limits(
    State(s): State<Arc<Shared>>,
    symbol: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let (symbol, def) = match path_of(symbol).and_then(|v| symbol_of(&s, &v)) {
        Ok((i, d)) => (i, *d),
        Err(a) => return answer(a),
    };
    let nd = notional_decimals(&s.cfg);
    act(&s, &headers, body, |m| {
        only(
            m,
            &[
                "band_bps",
                "reference_price",
                "max_order_qty",
                "max_order_notional",
                "breaker_bps",
                "breaker_window_secs",
                "breaker_halt_secs",
                "breaker_auction_secs",
            ],
        )?;
        let band_bps = bps_of(m, "band_bps", "invalid_band")?;
        let reference_price = string(m, "reference_price")?
            .map(|v| price_of(v, &def))
            .transpose()?;
        let max_order_qty = string(m, "max_order_qty")?.map(whole).transpose()?;
        let max_order_notional = match string(m, "max_order_notional")? {
            None => None,
            Some(v) => {
                let units = types::decimal::Decimal::parse(v.as_bytes())
                    .and_then(|d| d.to_units(def.price_decimals))
                    .ok()
                    .filter(|&u| u > 0)
                    .ok_or_else(|| {
                        error(
                            400,
                            "invalid_notional",
                            format!(
                                "max_order_notional must be a positive decimal of at most {} \
                                 decimals, got {v:?}",
                                def.price_decimals
                            ),
                        )
                    })?;
                Some(i128::from(units) * 10i128.pow(nd - def.price_decimals))
            }
        };
        let secs = |name: &str| -> Result<Option<u64>, Answer> {
            match string(m, name)? {
                None => Ok(None),
                Some(v) => whole(v)
                    .ok()
                    .filter(|&s| s <= 86_400)
                    .map(Some)
                    .ok_or_else(|| {
                        error(
                            400,
                            "invalid_breaker",
                            format!("{name} must be 1 to 86400 seconds, got {v:?}"),
                        )
                    }),
            }
        };
        // The reopening call auction after a breaker's halt: 0 (or none) reopens at once.
        let auction_secs = match string(m, "breaker_auction_secs")? {
            None | Some("0") => 0,
            Some(_) => secs("breaker_auction_secs")?.unwrap_or(0),
        };
        let bps = bps_of(m, "breaker_bps", "invalid_breaker")?;
        let breaker = match (
            bps,
            secs("breaker_window_secs")?,
            secs("breaker_halt_secs")?,
        ) {
            (None, None, None) => None,
            (Some(bps), Some(window), Some(halt)) => Some(Breaker {
                bps,
                window_ns: window * 1_000_000_000,
                halt_ns: halt * 1_000_000_000,
                auction_ns: auction_secs * 1_000_000_000,
            }),
            _ => {
                return Err(error(
                    400,
                    "invalid_breaker",
                    "give breaker_bps, breaker_window_secs and breaker_halt_secs together",
                ))
            }
        };
        if breaker.is_none() && m.contains_key("breaker_auction_secs") {
            return Err(error(
                400,
                "invalid_breaker",
                "breaker_auction_secs goes with breaker_bps, breaker_window_secs and \
                 breaker_halt_secs",
            ));
        }
        Ok(AdminAction::SetRisk {
            symbol,
            risk: InstrumentRisk {
                band_bps,
                reference_price,
                max_order_qty,
                max_order_notional,
                breaker,
            },
        })
    })
    .await
}

/// Field `name` of `m`, basis points 1 to 10,000, if given (`code`: its error's).
fn bps_of(m: &Map<String, Value>, name: &str, code: &'static str) -> Result<Option<u32>, Answer> {
    let Some(v) = string(m, name)? else {
        return Ok(None);
    };
    whole(v)
        .ok()
        .filter(|&b| b <= 10_000)
        .map(|b| Some(b as u32))
        .ok_or_else(|| {
            error(
                400,
                code,
                format!("{name} must be 1 to 10000 (100 is 1%), got {v:?}"),
            )
        })
}

async fn state_route(State(s): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    match operator(&s, &headers) {
        Ok(_) => submit(&s, 0, None, ApiOp::AdminState).await,
        Err(a) => answer(a),
    }
}
