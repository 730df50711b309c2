//! The HTTP server: REST routes on axum/hyper over tokio, on a thread of its own.
//!
//! Role: authenticate a request (`Authorization: Bearer <token>`, checked by its SHA-256),
//! throttle its key, read its JSON into a typed request in the instrument's units with a
//! precise error for anything wrong, and hand it to the event loop through a bounded queue
//! (then wake the loop); the loop sequences, journals and applies it and sends the answer back
//! to the waiting request. Public requests (instruments, book, ticker) are answered from the
//! market-data replica's view, never the loop; so is the WebSocket endpoint `/ws` (`ws`).
//!
//! Never: blocks the event loop (a full queue is answered 503 with Retry-After; the loop only
//! ever `try_send`s answers into one-shot channels); answers 500 to any input; keeps a token.
//!
//! Limits: bodies over `HttpConfig::body_max` are refused (413), JSON nesting is bounded by
//! serde_json's recursion limit, numbers must be decimal strings (no exponent, NaN or float).
//!
//! Also served: `/api/v1/openapi.json` (`openapi`: generated from the `#[utoipa::path]`
//! annotations here, which list every status a route answers), `/metrics` (`metrics`: the
//! requests counted here by route and status, and the server's counters), and the web
//! dashboard at `/` with the benchmark runs it draws (`web`).

use crate::config::{ApiConfig, InstrumentDef};
use crate::json::{self, Answer};
use crate::link::{ApiQueue, ApiRequest};
use crate::market::MarketView;
use crate::metrics::{HttpMetrics, RequestLabels, RouteLabels, Source};
use crate::openapi::{NotReady, PublicErrors, ReadErrors, WriteErrors};
use crate::record::{ApiInput, ApiOp, Idem, OrderRef, ReqId};
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, MatchedPath, Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use crossbeam_channel::{Sender, TrySendError};
use exchange::{ClOrdId, NewOrder};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use types::{OrdType, Side, TimeInForce};

/// How the HTTP side is set up.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// Request bodies larger than this are refused (413).
    pub body_max: usize,
    /// Requests waiting for the loop at most; beyond, 503.
    pub queue_max: usize,
    /// Open WebSocket connections at most; beyond, an upgrade is answered 503.
    pub ws_connections_max: usize,
    /// The directory of `rialto bench sweep` CSV files the dashboard's Benchmarks view lists
    /// (`GET /api/v1/bench/runs`); `None`: 404 `bench_off`.
    pub bench_dir: Option<std::path::PathBuf>,
}

impl Default for HttpConfig {
    fn default() -> HttpConfig {
        HttpConfig {
            body_max: 16 << 10,
            queue_max: 4096,
            ws_connections_max: 1024,
            bench_dir: None,
        }
    }
}

/// A key's throttle: a token bucket of `requests_per_sec`, in thousandths of a request.
struct Bucket {
    milli: u64,
    at: Instant,
}

/// What every handler shares.
pub struct Shared {
    pub(crate) cfg: Arc<ApiConfig>,
    /// Key by the SHA-256 of its token.
    pub(crate) tokens: HashMap<[u8; 32], u16>,
    queue: Sender<ApiRequest>,
    wake: Box<dyn Fn() + Send + Sync>,
    next_req: AtomicU64,
    pub(crate) market: Arc<MarketView>,
    pub(crate) ws_connections_max: usize,
    buckets: Mutex<Vec<Bucket>>,
    /// Recovered and taking requests (false while stopping).
    pub ready: AtomicBool,
    /// The HTTP side's counters (`/metrics`).
    pub metrics: HttpMetrics,
    /// The trade store the history routes read (unset: `store = "off"`).
    pub(crate) history: OnceLock<crate::history::HistorySource>,
    pub(crate) bench_dir: Option<std::path::PathBuf>,
}

impl Shared {
    /// The shared state and the loop's end of its queue. `wake` wakes the event loop.
    pub fn new(
        cfg: Arc<ApiConfig>,
        http: &HttpConfig,
        market: Arc<MarketView>,
        wake: Box<dyn Fn() + Send + Sync>,
    ) -> (Arc<Shared>, ApiQueue) {
        let (tx, rx) = crossbeam_channel::bounded(http.queue_max.max(1));
        let tokens = cfg
            .keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.sha256, i as u16))
            .collect();
        let now = Instant::now();
        let buckets = cfg
            .keys
            .iter()
            .map(|k| Bucket {
                milli: u64::from(k.requests_per_sec) * 1000,
                at: now,
            })
            .collect();
        let shared = Arc::new(Shared {
            cfg,
            tokens,
            queue: tx,
            wake,
            next_req: AtomicU64::new(1),
            market,
            ws_connections_max: http.ws_connections_max,
            buckets: Mutex::new(buckets),
            ready: AtomicBool::new(true),
            metrics: HttpMetrics::default(),
            history: OnceLock::new(),
            bench_dir: http.bench_dir.clone(),
        });
        (shared, rx)
    }

    /// Serves the history routes from `source` (once; later calls are ignored).
    pub fn set_history(&self, source: crate::history::HistorySource) {
        let _ = self.history.set(source);
    }
}

/// The router of every route; `/metrics` shows the HTTP side's counters and `source`'s.
pub fn router(shared: Arc<Shared>, http: &HttpConfig, source: Option<Box<dyn Source>>) -> Router {
    let registry = Arc::new(crate::metrics::registry(
        &shared.metrics,
        Some(shared.market.clone()),
        source,
    ));
    let document = Bytes::from(crate::openapi::document());
    Router::new()
        .route(
            "/metrics",
            get(move || async move {
                let mut r = crate::metrics::render(&registry).into_response();
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
                );
                r
            }),
        )
        .route(
            "/api/v1/openapi.json",
            get(move || async move {
                let mut r = document.into_response();
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                r
            }),
        )
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/ws", get(crate::ws::conn::upgrade))
        .route("/api/v1/instruments", get(instruments))
        .route("/api/v1/book/{symbol}", get(book))
        .route("/api/v1/ticker/{symbol}", get(ticker))
        .route("/api/v1/trades/{symbol}", get(crate::history::trades))
        .route("/api/v1/fills", get(crate::history::fills))
        .route("/api/v1/bench/runs", get(crate::web::runs))
        .route("/api/v1/bench/runs/{name}", get(crate::web::run))
        .route("/", get(crate::web::file))
        .route("/assets/{*file}", get(crate::web::file))
        .route("/api/v1/orders", post(new_order).get(list_or_find))
        .route("/api/v1/orders/cancel-all", post(cancel_all))
        .route(
            "/api/v1/orders/{id}",
            get(get_order).delete(cancel_order).patch(replace_order),
        )
        .merge(crate::admin::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(http.body_max))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), count))
        .with_state(shared)
}

/// Counts each request by route, method and status (`/metrics`).
async fn count(State(s): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
    let method = req.method().as_str().to_owned();
    let t0 = Instant::now();
    let r = next.run(req).await;
    let labels = RouteLabels { route, method };
    s.metrics
        .durations
        .get_or_create(&labels)
        .observe(t0.elapsed().as_secs_f64());
    s.metrics
        .requests
        .get_or_create(&RequestLabels {
            route: labels.route,
            method: labels.method,
            status: r.status().as_u16(),
        })
        .inc();
    r
}

pub(crate) fn answer(a: Answer) -> Response {
    let status = StatusCode::from_u16(a.status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut r = (status, a.body).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::TOO_MANY_REQUESTS {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    r
}

pub(crate) fn error(status: u16, code: &'static str, message: impl Into<String>) -> Answer {
    Answer::error(status, code, message)
}

pub(crate) fn fail(status: u16, code: &'static str, message: impl Into<String>) -> Response {
    answer(Answer::error(status, code, message))
}

pub(crate) fn ok_json(v: &impl Serialize) -> Response {
    answer(Answer::json(200, v))
}

/// The JSON error of a request axum could not take apart (a path segment or query string
/// that is not valid UTF-8 or percent-encoding, a body it could not read or too large).
fn rejected(status: StatusCode, code: &'static str, why: String) -> Answer {
    error(status.as_u16(), code, why)
}

pub(crate) fn path_of(p: Result<Path<String>, PathRejection>) -> Result<String, Answer> {
    p.map(|Path(v)| v)
        .map_err(|e| rejected(StatusCode::BAD_REQUEST, "invalid_path", e.body_text()))
}

pub(crate) type Params = HashMap<String, String>;

pub(crate) fn query_of(q: Result<Query<Params>, QueryRejection>) -> Result<Params, Answer> {
    q.map(|Query(v)| v)
        .map_err(|e| rejected(StatusCode::BAD_REQUEST, "invalid_query", e.body_text()))
}

pub(crate) fn body_of(b: Result<Bytes, BytesRejection>) -> Result<Bytes, Answer> {
    b.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => rejected(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            e.body_text(),
        ),
        _ => rejected(StatusCode::BAD_REQUEST, "invalid_body", e.body_text()),
    })
}

/// Alive.
#[utoipa::path(get, path = "/health", tag = "service",
    responses((status = 200, description = "The process serves requests", body = json::StatusJson)))]
pub(crate) async fn health() -> Response {
    ok_json(&json::StatusJson { status: "ok" })
}

/// Recovered and taking requests.
#[utoipa::path(get, path = "/ready", tag = "service",
    responses((status = 200, description = "Taking requests", body = json::StatusJson), NotReady))]
pub(crate) async fn ready(State(s): State<Arc<Shared>>) -> Response {
    if s.ready.load(Ordering::Relaxed) {
        ok_json(&json::StatusJson { status: "ready" })
    } else {
        fail(503, "not_ready", "the exchange is stopping")
    }
}

async fn not_found(uri: Uri) -> Response {
    fail(404, "not_found", format!("no route {}", uri.path()))
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    fail(
        405,
        "method_not_allowed",
        format!("{method} is not allowed on {}", uri.path()),
    )
}

/// The instruments traded, with their tick and lot.
#[utoipa::path(get, path = "/api/v1/instruments", tag = "market",
    responses((status = 200, description = "Every instrument", body = json::Instruments)))]
pub(crate) async fn instruments(State(s): State<Arc<Shared>>) -> Response {
    let instruments = s
        .cfg
        .instruments
        .iter()
        .map(|i| json::InstrumentJson {
            symbol: i.symbol.as_str().to_owned(),
            tick_size: json::price(i.tick, i),
            lot_size: i.lot.to_string(),
            price_decimals: i.price_decimals,
        })
        .collect();
    ok_json(&json::Instruments { instruments })
}

fn instrument<'s>(s: &'s Shared, symbol: &str) -> Result<(u32, &'s InstrumentDef), Answer> {
    s.cfg
        .symbol_id(symbol)
        .map(|i| (i, &s.cfg.instruments[i as usize]))
        .ok_or_else(|| error(404, "unknown_symbol", format!("no instrument {symbol:?}")))
}

fn level_json(l: &crate::market::LevelView, def: &InstrumentDef) -> json::Level {
    json::Level(json::price(l.0, def), l.1.to_string(), l.2)
}

/// An instrument's book by price level, best first, with the market-data feed's RptSeq.
#[utoipa::path(get, path = "/api/v1/book/{symbol}", tag = "market",
    params(("symbol" = String, Path, description = "The instrument", example = "ACME"), crate::openapi::BookQuery),
    responses((status = 200, description = "The book", body = json::BookJson), PublicErrors))]
pub(crate) async fn book(
    State(s): State<Arc<Shared>>,
    symbol: Result<Path<String>, PathRejection>,
    q: Result<Query<Params>, QueryRejection>,
) -> Response {
    let (symbol, q) = match (path_of(symbol), query_of(q)) {
        (Ok(s), Ok(q)) => (s, q),
        (Err(a), _) | (_, Err(a)) => return answer(a),
    };
    let (id, def) = match instrument(&s, &symbol) {
        Ok(i) => i,
        Err(a) => return answer(a),
    };
    let depth = match q.get("depth").map(|d| d.parse::<usize>()) {
        None => 50,
        Some(Ok(d)) if (1..=crate::market::DEPTH_MAX).contains(&d) => d,
        Some(_) => {
            return fail(
                400,
                "invalid_depth",
                format!("depth must be 1 to {}", crate::market::DEPTH_MAX),
            )
        }
    };
    if let Some(k) = q.keys().find(|k| k.as_str() != "depth") {
        return fail(400, "unknown_parameter", format!("unknown parameter {k:?}"));
    }
    let v = s.market.book(id, depth).unwrap_or_default();
    ok_json(&json::BookJson {
        symbol: def.symbol.as_str().to_owned(),
        rpt_seq: v.rpt_seq,
        bids: v.bids.iter().map(|l| level_json(l, def)).collect(),
        asks: v.asks.iter().map(|l| level_json(l, def)).collect(),
        updated_ns: v.updated_ns,
    })
}

/// An instrument's best bid and ask and last trade.
#[utoipa::path(get, path = "/api/v1/ticker/{symbol}", tag = "market",
    params(("symbol" = String, Path, description = "The instrument", example = "ACME")),
    responses((status = 200, description = "The ticker", body = json::TickerJson), PublicErrors))]
pub(crate) async fn ticker(
    State(s): State<Arc<Shared>>,
    symbol: Result<Path<String>, PathRejection>,
) -> Response {
    let symbol = match path_of(symbol) {
        Ok(s) => s,
        Err(a) => return answer(a),
    };
    let (id, def) = match instrument(&s, &symbol) {
        Ok(i) => i,
        Err(a) => return answer(a),
    };
    let v = s.market.book(id, 1).unwrap_or_default();
    let best = |l: Option<&crate::market::LevelView>| {
        l.map(|l| json::BestJson {
            price: json::price(l.0, def),
            quantity: l.1.to_string(),
        })
    };
    ok_json(&json::TickerJson {
        symbol: def.symbol.as_str().to_owned(),
        rpt_seq: v.rpt_seq,
        best_bid: best(v.bids.first()),
        best_ask: best(v.asks.first()),
        last_trade: v.last_trade.map(|t| json::TradeJson {
            price: json::price(t.price, def),
            quantity: t.qty.to_string(),
            aggressor_side: json::side(t.aggressor),
            trade_id: t.trade_id,
        }),
        status: v.status.as_str(),
        indicative: v.indicative.map(|(p, q)| json::IndicativeJson {
            price: json::price(p, def),
            quantity: q.to_string(),
        }),
        updated_ns: v.updated_ns,
    })
}

/// The key a request authenticates as, after its throttle.
pub(crate) fn authenticate(s: &Shared, headers: &HeaderMap) -> Result<u16, Answer> {
    let Some(v) = headers.get(header::AUTHORIZATION) else {
        return Err(error(
            401,
            "unauthenticated",
            "missing Authorization: Bearer <API key>",
        ));
    };
    let token = v
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .unwrap_or("");
    let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    let Some(&key) = s.tokens.get(&digest) else {
        return Err(error(401, "unauthenticated", "unknown API key"));
    };
    let per_sec = u64::from(s.cfg.keys[key as usize].requests_per_sec);
    let mut buckets = s.buckets.lock().unwrap_or_else(|e| e.into_inner());
    let b = &mut buckets[key as usize];
    let now = Instant::now();
    let refill = now.duration_since(b.at).as_micros() as u64 * per_sec / 1000;
    b.milli = (b.milli + refill).min(per_sec * 1000);
    b.at = now;
    if b.milli < 1000 {
        s.metrics.throttled.inc();
        return Err(error(
            429,
            "throttled",
            format!("over {per_sec} requests a second for this key"),
        ));
    }
    b.milli -= 1000;
    Ok(key)
}

/// The Idempotency-Key of a request, with its fingerprint.
fn idempotency(
    headers: &HeaderMap,
    method: &Method,
    uri: &Uri,
    body: &[u8],
) -> Result<Option<Idem>, Answer> {
    let Some(v) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = v.to_str().unwrap_or("");
    if key.is_empty() || key.len() > 64 || !key.bytes().all(|c| c.is_ascii_graphic()) {
        return Err(error(
            400,
            "invalid_idempotency_key",
            "Idempotency-Key must be 1 to 64 printable ASCII characters",
        ));
    }
    let mut h = Sha256::new();
    h.update(method.as_str().as_bytes());
    h.update(b" ");
    h.update(uri.path().as_bytes());
    h.update(b" ");
    h.update(body);
    let d = h.finalize();
    let fingerprint = u64::from_le_bytes(d[..8].try_into().expect("8 bytes"));
    Ok(Some(Idem {
        key: key.to_owned(),
        fingerprint,
    }))
}

/// Hands `op` to the event loop and waits for its answer.
pub(crate) async fn submit(s: &Shared, key: u16, idem: Option<Idem>, op: ApiOp) -> Response {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let req: ReqId = s.next_req.fetch_add(1, Ordering::Relaxed);
    let input = ApiInput { req, key, idem, op };
    match s.queue.try_send(ApiRequest { input, reply: tx }) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => {
            s.metrics.shed.inc();
            return fail(
                503,
                "overloaded",
                "the exchange's request queue is full; retry",
            );
        }
        Err(TrySendError::Disconnected(_)) => {
            return fail(503, "stopping", "the exchange is stopping")
        }
    }
    (s.wake)();
    match rx.await {
        Ok(a) => answer(a),
        Err(_) => fail(503, "stopping", "the exchange stopped before answering"),
    }
}

/// A JSON object body, or the error that says what is wrong with it.
pub(crate) fn object(body: &[u8]) -> Result<Map<String, Value>, Answer> {
    if body.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(error(400, "invalid_body", "the body must be a JSON object")),
        Err(e) => Err(error(
            400,
            "invalid_json",
            format!("the body is not valid JSON: {e}"),
        )),
    }
}

/// Refuses any field of `m` not in `known`.
pub(crate) fn only(m: &Map<String, Value>, known: &[&str]) -> Result<(), Answer> {
    match m.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(error(
            400,
            "unknown_field",
            format!("unknown field {k:?} (known: {})", known.join(", ")),
        )),
        None => Ok(()),
    }
}

pub(crate) fn string<'m>(m: &'m Map<String, Value>, name: &str) -> Result<Option<&'m str>, Answer> {
    match m.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(error(
            400,
            "invalid_field",
            format!("{name} must be a string"),
        )),
    }
}

pub(crate) fn required<'m>(m: &'m Map<String, Value>, name: &str) -> Result<&'m str, Answer> {
    string(m, name)?.ok_or_else(|| error(400, "missing_field", format!("{name} is required")))
}

fn side_of(v: &str) -> Result<Side, Answer> {
    match v {
        "buy" => Ok(Side::Buy),
        "sell" => Ok(Side::Sell),
        _ => Err(error(
            400,
            "invalid_side",
            format!("side must be buy or sell, got {v:?}"),
        )),
    }
}

pub(crate) fn symbol_of<'s>(s: &'s Shared, v: &str) -> Result<(u32, &'s InstrumentDef), Answer> {
    s.cfg
        .symbol_id(v)
        .map(|i| (i, &s.cfg.instruments[i as usize]))
        .ok_or_else(|| error(400, "unknown_symbol", format!("unknown symbol {v:?}")))
}

/// A price in `def`'s units, with the reason it is not one.
pub(crate) fn price_of(v: &str, def: &InstrumentDef) -> Result<i64, Answer> {
    price_as(v, def, "price", "invalid_price")
}

/// Field `name`'s price in `def`'s units, or the error `code` that says why it is not one.
fn price_as(v: &str, def: &InstrumentDef, name: &str, code: &'static str) -> Result<i64, Answer> {
    use types::decimal::PriceError as E;
    types::decimal::parse_price(v.as_bytes(), def.price_decimals, def.tick).map_err(|e| {
        let sym = def.symbol.as_str();
        let msg = match e {
            E::OffTick => format!(
                "{name} {v} is not a multiple of {sym}'s tick {}",
                json::price(def.tick, def)
            ),
            E::NotPositive => format!("{name} {v} must be positive"),
            E::OutOfRange => format!("{name} {v} is out of range"),
            E::NotDecimal => format!("{name} {v:?} is not a decimal like \"10.25\""),
        };
        error(400, code, msg)
    })
}

/// A whole, positive quantity.
pub(crate) fn whole(v: &str) -> Result<u64, Answer> {
    whole_as(v, "quantity", "invalid_quantity")
}

/// Field `name`'s whole, positive quantity, or the error `code` that says why it is not one.
fn whole_as(v: &str, name: &str, code: &'static str) -> Result<u64, Answer> {
    let bad = |why: String| error(400, code, why);
    let d = types::decimal::Decimal::parse(v.as_bytes())
        .map_err(|_| bad(format!("{name} {v:?} is not a decimal like \"100\"")))?;
    let n = d
        .to_integer()
        .map_err(|_| bad(format!("{name} {v} is not a whole number")))?;
    if n <= 0 {
        return Err(bad(format!("{name} {v} must be positive")));
    }
    Ok(n as u64)
}

/// A quantity: a whole, positive number of units, a multiple of `def`'s lot.
fn qty_of(v: &str, def: &InstrumentDef) -> Result<u64, Answer> {
    qty_as(v, def, "quantity", "invalid_quantity")
}

/// Field `name`'s quantity (whole, positive, a multiple of `def`'s lot), or error `code`.
fn qty_as(v: &str, def: &InstrumentDef, name: &str, code: &'static str) -> Result<u64, Answer> {
    let n = whole_as(v, name, code)?;
    if def.lot > 1 && n % def.lot != 0 {
        return Err(error(
            400,
            code,
            format!(
                "{name} {v} is not a multiple of {}'s lot {}",
                def.symbol.as_str(),
                def.lot
            ),
        ));
    }
    Ok(n)
}

/// A GTD order's `expire_time`: an RFC 3339 time (`2026-11-30T16:00:00Z`, or with an offset),
/// in ns since the epoch.
fn expire_of(v: &str) -> Result<u64, Answer> {
    let bad = |why: String| error(400, "invalid_expire_time", why);
    let t = time::OffsetDateTime::parse(v, &time::format_description::well_known::Rfc3339)
        .map_err(|e| {
            bad(format!(
                "expire_time must be an RFC 3339 time like 2026-11-30T16:00:00Z, got {v:?}: {e}"
            ))
        })?;
    u64::try_from(t.unix_timestamp_nanos())
        .ok()
        .filter(|&ns| ns > 0)
        .ok_or_else(|| bad(format!("expire_time {v} is not after 1970")))
}

/// A client order id a key may give: 1 to 36 of letters, digits and `-_.:`.
fn client_id(v: &str) -> Result<ClOrdId, Answer> {
    let ok = !v.is_empty()
        && v.len() <= 36
        && v.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.:".contains(&c));
    ok.then(|| ClOrdId::new(v)).flatten().ok_or_else(|| {
        error(
            400,
            "invalid_client_order_id",
            "client_order_id must be 1 to 36 letters, digits or -_.:",
        )
    })
}

fn flag(m: &Map<String, Value>, name: &str) -> Result<bool, Answer> {
    match m.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(error(
            400,
            "invalid_field",
            format!("{name} must be true or false"),
        )),
    }
}

/// Enters an order; answers once it is journaled and applied, with its state and the fills
/// it made at once.
#[utoipa::path(post, path = "/api/v1/orders", tag = "orders", security(("bearer" = [])),
    params(crate::openapi::IdempotencyKey),
    request_body = crate::openapi::NewOrderRequest,
    responses((status = 201, description = "The order after its arrival, with its immediate fills",
        body = json::OrderJson), WriteErrors))]
pub(crate) async fn new_order(
    State(s): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    write(&s, &method, &uri, &headers, body, |m| new_order_of(&s, m)).await
}

/// The fields `POST /api/v1/orders` takes.
pub(crate) const NEW_ORDER_FIELDS: [&str; 11] = [
    "symbol",
    "side",
    "type",
    "time_in_force",
    "expire_time",
    "price",
    "stop_price",
    "quantity",
    "display_quantity",
    "post_only",
    "client_order_id",
];

/// A new order's body read into the instrument's units: each field's format and whether it
/// goes with the order's type and time in force (the exchange checks the rest).
fn new_order_of(s: &Shared, m: &Map<String, Value>) -> Result<ApiOp, Answer> {
    only(m, &NEW_ORDER_FIELDS)?;
    let (symbol, def) = symbol_of(s, required(m, "symbol")?)?;
    let side = side_of(required(m, "side")?)?;
    let type_name = string(m, "type")?.unwrap_or("limit");
    let (ord_type, stop) = match type_name {
        "limit" => (OrdType::Limit, false),
        "market" => (OrdType::Market, false),
        "stop" => (OrdType::Market, true),
        "stop_limit" => (OrdType::Limit, true),
        t => {
            return Err(error(
                400,
                "invalid_type",
                format!("type must be limit, market, stop or stop_limit, got {t:?}"),
            ))
        }
    };
    // A market order trades at once or not at all; a stop waits for its trigger.
    let default_tif = if ord_type == OrdType::Market && !stop {
        "ioc"
    } else {
        "gtc"
    };
    let tif = match string(m, "time_in_force")?.unwrap_or(default_tif) {
        "gtc" => TimeInForce::Gtc,
        "day" => TimeInForce::Day,
        "ioc" => TimeInForce::Ioc,
        "fok" => TimeInForce::Fok,
        "gtd" => TimeInForce::Gtd,
        t => {
            return Err(error(
                400,
                "invalid_time_in_force",
                format!("time_in_force must be gtc, day, ioc, fok or gtd, got {t:?}"),
            ))
        }
    };
    let expire_ns = match (tif, string(m, "expire_time")?) {
        (TimeInForce::Gtd, Some(t)) => expire_of(t)?,
        (TimeInForce::Gtd, None) => {
            return Err(error(
                400,
                "missing_field",
                "expire_time is required with time_in_force gtd",
            ))
        }
        (_, Some(_)) => {
            return Err(error(
                400,
                "invalid_field",
                "expire_time goes only with time_in_force gtd",
            ))
        }
        (_, None) => 0,
    };
    let price = match (ord_type, string(m, "price")?) {
        (OrdType::Limit, Some(p)) => price_of(p, def)?,
        (OrdType::Limit, None) => {
            return Err(error(
                400,
                "missing_field",
                format!("price is required for a {type_name} order"),
            ))
        }
        (OrdType::Market, Some(_)) => {
            return Err(error(
                400,
                "invalid_field",
                format!("a {type_name} order has no price"),
            ))
        }
        (OrdType::Market, None) => 0,
    };
    let stop_price = match (stop, string(m, "stop_price")?) {
        (true, Some(p)) => price_as(p, def, "stop_price", "invalid_stop_price")?,
        (true, None) => {
            return Err(error(
                400,
                "missing_field",
                format!("stop_price is required for a {type_name} order"),
            ))
        }
        (false, Some(_)) => {
            return Err(error(
                400,
                "invalid_field",
                format!("a {type_name} order has no stop_price (only stop and stop_limit orders)"),
            ))
        }
        (false, None) => 0,
    };
    let qty = qty_of(required(m, "quantity")?, def)?;
    let display_qty = match string(m, "display_quantity")? {
        Some(q) => qty_as(q, def, "display_quantity", "invalid_display_quantity")?,
        None => 0,
    };
    let post_only = flag(m, "post_only")?;
    let cl_ord_id = match string(m, "client_order_id")? {
        Some(c) => client_id(c)?,
        None => ClOrdId::EMPTY,
    };
    Ok(ApiOp::New(NewOrder {
        cl_ord_id,
        symbol,
        side,
        ord_type,
        tif,
        price,
        qty,
        account: None,
        post_only,
        stop_price,
        display_qty,
        expire_ns,
    }))
}

/// An order named in a path: its exchange id (a number).
fn order_ref(id: &str) -> Result<OrderRef, Answer> {
    id.parse::<u64>().map(OrderRef::Id).map_err(|_| {
        error(
            400,
            "invalid_order_id",
            format!("order id {id:?} is not a number"),
        )
    })
}

/// One of the key's orders, by the exchange's id.
#[utoipa::path(get, path = "/api/v1/orders/{id}", tag = "orders", security(("bearer" = [])),
    params(("id" = u64, Path, description = "The exchange's order id", example = 1)),
    responses((status = 200, description = "The order", body = json::OrderJson), ReadErrors))]
pub(crate) async fn get_order(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
) -> Response {
    keyed(&s, &headers, |_| {
        Ok((None, ApiOp::Get(order_ref(&path_of(id)?)?)))
    })
    .await
}

/// `GET /api/v1/orders?status=open[&symbol=S]` (from the exchange), `?client_order_id=X`, or
/// `?status=closed[&symbol=S][&start=T][&end=T][&since=ID][&limit=N]` (from the trade store).
#[utoipa::path(get, path = "/api/v1/orders", tag = "orders", security(("bearer" = [])),
    params(crate::openapi::OrdersQuery),
    responses((status = 200, description = "With `status=open`, the key's open orders \
        (`OrderList`); with `client_order_id`, that order (`OrderJson`); with `status=closed`, \
        a page of its closed orders from the trade store (`ClosedOrdersPage`)",
        body = crate::openapi::OrdersAnswer), crate::openapi::HistoryPrivateErrors))]
pub(crate) async fn list_or_find(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    q: Result<Query<Params>, QueryRejection>,
) -> Response {
    if let Ok(Query(q)) = &q {
        if q.get("status").map(String::as_str) == Some("closed") {
            return crate::history::closed_orders(&s, &headers, q).await;
        }
    }
    keyed(&s, &headers, |s| {
        let q = query_of(q)?;
        if let Some(k) = q
            .keys()
            .find(|k| !["status", "symbol", "client_order_id"].contains(&k.as_str()))
        {
            return Err(error(
                400,
                "unknown_parameter",
                format!(
                    "unknown parameter {k:?} (since, limit, start and end go with status=closed)"
                ),
            ));
        }
        if let Some(c) = q.get("client_order_id") {
            return Ok((None, ApiOp::Get(OrderRef::Client(client_id(c)?))));
        }
        match q.get("status").map(String::as_str) {
            Some("open") => {}
            other => {
                return Err(error(
                    400,
                    "invalid_status",
                    format!(
                        "status must be open or closed (or give client_order_id), got {other:?}"
                    ),
                ))
            }
        }
        let symbol = match q.get("symbol") {
            None => None,
            Some(sym) => Some(symbol_of(s, sym)?.0),
        };
        Ok((None, ApiOp::ListOpen { symbol }))
    })
    .await
}

/// Cancels one of the key's open orders.
#[utoipa::path(delete, path = "/api/v1/orders/{id}", tag = "orders", security(("bearer" = [])),
    params(("id" = u64, Path, description = "The exchange's order id", example = 1), crate::openapi::IdempotencyKey),
    responses((status = 200, description = "The order, canceled", body = json::OrderJson), WriteErrors))]
pub(crate) async fn cancel_order(
    State(s): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
) -> Response {
    keyed(&s, &headers, |_| {
        let r = order_ref(&path_of(id)?)?;
        Ok((idempotency(&headers, &method, &uri, &[])?, ApiOp::Cancel(r)))
    })
    .await
}

/// Replaces the price and/or quantity of one of the key's open orders (a stop-limit order's
/// too, before or after it triggers; its stop price stays).
#[utoipa::path(patch, path = "/api/v1/orders/{id}", tag = "orders", security(("bearer" = [])),
    params(("id" = u64, Path, description = "The exchange's order id", example = 1), crate::openapi::IdempotencyKey),
    request_body = crate::openapi::ReplaceRequest,
    responses((status = 200, description = "The order after the replace, with the fills it made at once",
        body = json::OrderJson), WriteErrors))]
pub(crate) async fn replace_order(
    State(s): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    write(&s, &method, &uri, &headers, body, |m| {
        let order = order_ref(&path_of(id)?)?;
        only(
            m,
            &[
                "symbol",
                "price",
                "quantity",
                "client_order_id",
                "stop_price",
            ],
        )?;
        let (price, qty) = (string(m, "price")?, string(m, "quantity")?);
        let stop_price = string(m, "stop_price")?;
        if price.is_none() && qty.is_none() {
            return Err(error(
                400,
                "missing_field",
                "give price, quantity or both (and symbol when giving a price)",
            ));
        }
        // A price is read in the order's instrument: the symbol says which (the exchange
        // refuses one that is not the order's).
        let def = match string(m, "symbol")? {
            Some(sym) => Some(symbol_of(&s, sym)?.1),
            None => None,
        };
        let price = match (price, def) {
            (Some(p), Some(def)) => Some(price_of(p, def)?),
            (Some(_), None) => {
                return Err(error(
                    400,
                    "missing_field",
                    "symbol is required with a price",
                ))
            }
            (None, _) => None,
        };
        // A stop price cannot change: one given must be the order's (the edge checks).
        let stop_price = match (stop_price, def) {
            (Some(p), Some(def)) => Some(price_as(p, def, "stop_price", "invalid_stop_price")?),
            (Some(_), None) => {
                return Err(error(
                    400,
                    "missing_field",
                    "symbol is required with a stop_price",
                ))
            }
            (None, _) => None,
        };
        // Without the symbol the exchange checks the lot.
        let qty = match (qty, def) {
            (Some(q), Some(def)) => Some(qty_of(q, def)?),
            (Some(q), None) => Some(whole(q)?),
            (None, _) => None,
        };
        let cl_ord_id = string(m, "client_order_id")?.map(client_id).transpose()?;
        Ok(ApiOp::Replace {
            order,
            price,
            qty,
            cl_ord_id,
            stop_price,
        })
    })
    .await
}

/// Cancels the key's open orders (of one symbol or side if given).
#[utoipa::path(post, path = "/api/v1/orders/cancel-all", tag = "orders", security(("bearer" = [])),
    params(crate::openapi::IdempotencyKey),
    request_body = crate::openapi::CancelAllRequest,
    responses((status = 200, description = "How many orders it canceled", body = json::Canceled),
        WriteErrors))]
pub(crate) async fn cancel_all(
    State(s): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    write(&s, &method, &uri, &headers, body, |m| {
        only(m, &["symbol", "side"])?;
        let symbol = match string(m, "symbol")? {
            Some(sym) => Some(symbol_of(&s, sym)?.0),
            None => None,
        };
        let side = string(m, "side")?.map(side_of).transpose()?;
        Ok(ApiOp::CancelAll { symbol, side })
    })
    .await
}

/// A request that changes something: authenticated, its body read as a JSON object and its
/// Idempotency-Key taken, `parse` making the request of the object; then handed to the loop.
async fn write(
    s: &Shared,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    parse: impl FnOnce(&Map<String, Value>) -> Result<ApiOp, Answer>,
) -> Response {
    keyed(s, headers, |_| {
        let body = body_of(body)?;
        let idem = idempotency(headers, method, uri, &body)?;
        let m = object(&body)?;
        Ok((idem, parse(&m)?))
    })
    .await
}

/// A private route: the key of the bearer token, then what `parse` makes of the request
/// (its Idempotency-Key and operation), submitted to the event loop; the first refusal
/// answers instead (an unknown key before anything about the request).
async fn keyed(
    s: &Shared,
    headers: &HeaderMap,
    parse: impl FnOnce(&Shared) -> Result<(Option<Idem>, ApiOp), Answer>,
) -> Response {
    let parsed = authenticate(s, headers).and_then(|key| Ok((key, parse(s)?)));
    match parsed {
        Ok((key, (idem, op))) => submit(s, key, idem, op).await,
        Err(a) => answer(a),
    }
}
