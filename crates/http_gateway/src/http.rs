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

use crate::config::{ApiConfig, InstrumentDef};
use crate::json::{self, Answer};
use crate::market::MarketView;
use crate::record::{ApiInput, ApiOp, Idem, OrderRef, ReqId};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use crossbeam_channel::{Receiver, Sender, TrySendError};
use exchange::{ClOrdId, NewOrder};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use types::{OrdType, Side, TimeInForce};

/// One request for the event loop, with the channel its answer goes back on.
pub struct ApiRequest {
    pub input: ApiInput,
    pub reply: tokio::sync::oneshot::Sender<Answer>,
}

/// The loop's end of the queue.
pub type ApiQueue = Receiver<ApiRequest>;

/// How the HTTP side is set up.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// Request bodies larger than this are refused (413).
    pub body_max: usize,
    /// Requests waiting for the loop at most; beyond, 503.
    pub queue_max: usize,
    /// Open WebSocket connections at most; beyond, an upgrade is answered 503.
    pub ws_connections_max: usize,
}

impl Default for HttpConfig {
    fn default() -> HttpConfig {
        HttpConfig {
            body_max: 16 << 10,
            queue_max: 4096,
            ws_connections_max: 1024,
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
        });
        (shared, rx)
    }
}

/// The router of every route.
pub fn router(shared: Arc<Shared>, http: &HttpConfig) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/ws", get(crate::ws::conn::upgrade))
        .route("/api/v1/instruments", get(instruments))
        .route("/api/v1/book/{symbol}", get(book))
        .route("/api/v1/ticker/{symbol}", get(ticker))
        .route("/api/v1/orders", post(new_order).get(list_or_find))
        .route("/api/v1/orders/cancel-all", post(cancel_all))
        .route(
            "/api/v1/orders/{id}",
            get(get_order).delete(cancel_order).patch(replace_order),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(http.body_max))
        .with_state(shared)
}

/// Serves `router` on `listener` until `stop` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(stop)
    .await
}

fn answer(a: Answer) -> Response {
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

fn error(status: u16, code: &'static str, message: impl Into<String>) -> Answer {
    Answer::error(status, code, message)
}

fn fail(status: u16, code: &'static str, message: impl Into<String>) -> Response {
    answer(Answer::error(status, code, message))
}

fn ok_json(v: &impl Serialize) -> Response {
    answer(Answer::json(200, v))
}

async fn health() -> Response {
    ok_json(&serde_json::json!({ "status": "ok" }))
}

async fn ready(State(s): State<Arc<Shared>>) -> Response {
    if s.ready.load(Ordering::Relaxed) {
        ok_json(&serde_json::json!({ "status": "ready" }))
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

#[derive(Serialize)]
struct InstrumentJson {
    symbol: String,
    tick_size: String,
    lot_size: String,
    price_decimals: u32,
}

async fn instruments(State(s): State<Arc<Shared>>) -> Response {
    let list: Vec<InstrumentJson> = s
        .cfg
        .instruments
        .iter()
        .map(|i| InstrumentJson {
            symbol: i.symbol.as_str().to_owned(),
            tick_size: json::price(i.tick, i),
            lot_size: i.lot.to_string(),
            price_decimals: i.price_decimals,
        })
        .collect();
    ok_json(&serde_json::json!({ "instruments": list }))
}

fn instrument<'s>(s: &'s Shared, symbol: &str) -> Result<(u32, &'s InstrumentDef), Answer> {
    s.cfg
        .symbol_id(symbol)
        .map(|i| (i, &s.cfg.instruments[i as usize]))
        .ok_or_else(|| error(404, "unknown_symbol", format!("no instrument {symbol:?}")))
}

fn level_json(l: &crate::market::LevelView, def: &InstrumentDef) -> Value {
    serde_json::json!([json::price(l.0, def), l.1.to_string(), l.2])
}

async fn book(
    State(s): State<Arc<Shared>>,
    Path(symbol): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
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
    ok_json(&serde_json::json!({
        "symbol": def.symbol.as_str(),
        "rpt_seq": v.rpt_seq,
        "bids": v.bids.iter().map(|l| level_json(l, def)).collect::<Vec<_>>(),
        "asks": v.asks.iter().map(|l| level_json(l, def)).collect::<Vec<_>>(),
        "updated_ns": v.updated_ns,
    }))
}

async fn ticker(State(s): State<Arc<Shared>>, Path(symbol): Path<String>) -> Response {
    let (id, def) = match instrument(&s, &symbol) {
        Ok(i) => i,
        Err(a) => return answer(a),
    };
    let v = s.market.book(id, 1).unwrap_or_default();
    let best = |l: Option<&crate::market::LevelView>| {
        l.map(
            |l| serde_json::json!({ "price": json::price(l.0, def), "quantity": l.1.to_string() }),
        )
    };
    ok_json(&serde_json::json!({
        "symbol": def.symbol.as_str(),
        "rpt_seq": v.rpt_seq,
        "best_bid": best(v.bids.first()),
        "best_ask": best(v.asks.first()),
        "last_trade": v.last_trade.map(|t| serde_json::json!({
            "price": json::price(t.price, def),
            "quantity": t.qty.to_string(),
            "aggressor_side": json::side(t.aggressor),
            "trade_id": t.trade_id,
        })),
        "updated_ns": v.updated_ns,
    }))
}

/// The key a request authenticates as, after its throttle.
fn authenticate(s: &Shared, headers: &HeaderMap) -> Result<u16, Answer> {
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
async fn submit(s: &Shared, key: u16, idem: Option<Idem>, op: ApiOp) -> Response {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let req: ReqId = s.next_req.fetch_add(1, Ordering::Relaxed);
    let input = ApiInput { req, key, idem, op };
    match s.queue.try_send(ApiRequest { input, reply: tx }) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => {
            return fail(
                503,
                "overloaded",
                "the exchange's request queue is full; retry",
            )
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
fn object(body: &[u8]) -> Result<Map<String, Value>, Answer> {
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
fn only(m: &Map<String, Value>, known: &[&str]) -> Result<(), Answer> {
    match m.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(error(
            400,
            "unknown_field",
            format!("unknown field {k:?} (known: {})", known.join(", ")),
        )),
        None => Ok(()),
    }
}

fn string<'m>(m: &'m Map<String, Value>, name: &str) -> Result<Option<&'m str>, Answer> {
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

fn required<'m>(m: &'m Map<String, Value>, name: &str) -> Result<&'m str, Answer> {
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

fn symbol_of<'s>(s: &'s Shared, v: &str) -> Result<(u32, &'s InstrumentDef), Answer> {
    s.cfg
        .symbol_id(v)
        .map(|i| (i, &s.cfg.instruments[i as usize]))
        .ok_or_else(|| error(400, "unknown_symbol", format!("unknown symbol {v:?}")))
}

/// A price in `def`'s units, with the reason it is not one.
fn price_of(v: &str, def: &InstrumentDef) -> Result<i64, Answer> {
    use types::decimal::PriceError as E;
    types::decimal::parse_price(v.as_bytes(), def.price_decimals, def.tick).map_err(|e| {
        let sym = def.symbol.as_str();
        let msg = match e {
            E::OffTick => format!(
                "price {v} is not a multiple of {sym}'s tick {}",
                json::price(def.tick, def)
            ),
            E::NotPositive => format!("price {v} must be positive"),
            E::OutOfRange => format!("price {v} is out of range"),
            E::NotDecimal => format!("price {v:?} is not a decimal like \"10.25\""),
        };
        error(400, "invalid_price", msg)
    })
}

/// A whole, positive quantity.
fn whole(v: &str) -> Result<u64, Answer> {
    let bad = |why: String| error(400, "invalid_quantity", why);
    let d = types::decimal::Decimal::parse(v.as_bytes())
        .map_err(|_| bad(format!("quantity {v:?} is not a decimal like \"100\"")))?;
    let n = d
        .to_integer()
        .map_err(|_| bad(format!("quantity {v} is not a whole number")))?;
    if n <= 0 {
        return Err(bad(format!("quantity {v} must be positive")));
    }
    Ok(n as u64)
}

/// A quantity: a whole, positive number of units, a multiple of `def`'s lot.
fn qty_of(v: &str, def: &InstrumentDef) -> Result<u64, Answer> {
    let n = whole(v)?;
    if def.lot > 1 && n % def.lot != 0 {
        return Err(error(
            400,
            "invalid_quantity",
            format!(
                "quantity {v} is not a multiple of {}'s lot {}",
                def.symbol.as_str(),
                def.lot
            ),
        ));
    }
    Ok(n)
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

async fn new_order(
    State(s): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = match authenticate(&s, &headers) {
        Ok(k) => k,
        Err(a) => return answer(a),
    };
    let parsed = (|| {
        let idem = idempotency(&headers, &method, &uri, &body)?;
        let m = object(&body)?;
        only(
            &m,
            &[
                "symbol",
                "side",
                "type",
                "time_in_force",
                "price",
                "quantity",
                "post_only",
                "client_order_id",
            ],
        )?;
        let (symbol, def) = symbol_of(&s, required(&m, "symbol")?)?;
        let side = side_of(required(&m, "side")?)?;
        let ord_type = match string(&m, "type")?.unwrap_or("limit") {
            "limit" => OrdType::Limit,
            "market" => OrdType::Market,
            t => {
                return Err(error(
                    400,
                    "invalid_type",
                    format!("type must be limit or market, got {t:?}"),
                ))
            }
        };
        let tif = match string(&m, "time_in_force")?.unwrap_or(match ord_type {
            OrdType::Limit => "gtc",
            OrdType::Market => "ioc",
        }) {
            "gtc" => TimeInForce::Gtc,
            "day" => TimeInForce::Day,
            "ioc" => TimeInForce::Ioc,
            "fok" => TimeInForce::Fok,
            t => {
                return Err(error(
                    400,
                    "invalid_time_in_force",
                    format!("time_in_force must be gtc, day, ioc or fok, got {t:?}"),
                ))
            }
        };
        let price = match (ord_type, string(&m, "price")?) {
            (OrdType::Limit, Some(p)) => price_of(p, def)?,
            (OrdType::Limit, None) => {
                return Err(error(
                    400,
                    "missing_field",
                    "price is required for a limit order",
                ))
            }
            (OrdType::Market, Some(_)) => {
                return Err(error(400, "invalid_field", "a market order has no price"))
            }
            (OrdType::Market, None) => 0,
        };
        let qty = qty_of(required(&m, "quantity")?, def)?;
        let post_only = flag(&m, "post_only")?;
        let cl_ord_id = match string(&m, "client_order_id")? {
            Some(c) => client_id(c)?,
            None => ClOrdId::EMPTY,
        };
        Ok((
            idem,
            ApiOp::New(NewOrder {
                cl_ord_id,
                symbol,
                side,
                ord_type,
                tif,
                price,
                qty,
                account: None,
                post_only,
            }),
        ))
    })();
    match parsed {
        Ok((idem, op)) => submit(&s, key, idem, op).await,
        Err(a) => answer(a),
    }
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

async fn get_order(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let key = match authenticate(&s, &headers) {
        Ok(k) => k,
        Err(a) => return answer(a),
    };
    match order_ref(&id) {
        Ok(r) => submit(&s, key, None, ApiOp::Get(r)).await,
        Err(a) => answer(a),
    }
}

/// `GET /api/v1/orders?status=open[&symbol=S]` or `?client_order_id=X`.
async fn list_or_find(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let key = match authenticate(&s, &headers) {
        Ok(k) => k,
        Err(a) => return answer(a),
    };
    if let Some(k) = q
        .keys()
        .find(|k| !["status", "symbol", "client_order_id"].contains(&k.as_str()))
    {
        return fail(400, "unknown_parameter", format!("unknown parameter {k:?}"));
    }
    if let Some(c) = q.get("client_order_id") {
        return match client_id(c) {
            Ok(c) => submit(&s, key, None, ApiOp::Get(OrderRef::Client(c))).await,
            Err(a) => answer(a),
        };
    }
    match q.get("status").map(String::as_str) {
        Some("open") => {}
        other => {
            return fail(
                400,
                "invalid_status",
                format!("status must be open (or give client_order_id), got {other:?}"),
            )
        }
    }
    let symbol = match q.get("symbol") {
        None => None,
        Some(sym) => match symbol_of(&s, sym) {
            Ok((i, _)) => Some(i),
            Err(a) => return answer(a),
        },
    };
    submit(&s, key, None, ApiOp::ListOpen { symbol }).await
}

async fn cancel_order(
    State(s): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let key = match authenticate(&s, &headers) {
        Ok(k) => k,
        Err(a) => return answer(a),
    };
    let parsed = (|| Ok((idempotency(&headers, &method, &uri, &[])?, order_ref(&id)?)))();
    match parsed {
        Ok((idem, r)) => submit(&s, key, idem, ApiOp::Cancel(r)).await,
        Err(a) => answer(a),
    }
}

async fn replace_order(
    State(s): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let key = match authenticate(&s, &headers) {
        Ok(k) => k,
        Err(a) => return answer(a),
    };
    let parsed = (|| {
        let idem = idempotency(&headers, &method, &uri, &body)?;
        let order = order_ref(&id)?;
        let m = object(&body)?;
        only(&m, &["symbol", "price", "quantity", "client_order_id"])?;
        let (price, qty) = (string(&m, "price")?, string(&m, "quantity")?);
        if price.is_none() && qty.is_none() {
            return Err(error(
                400,
                "missing_field",
                "give price, quantity or both (and symbol when giving a price)",
            ));
        }
        // A price is read in the order's instrument: the symbol says which (the exchange
        // refuses one that is not the order's).
        let def = match string(&m, "symbol")? {
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
        // Without the symbol the exchange checks the lot.
        let qty = match (qty, def) {
            (Some(q), Some(def)) => Some(qty_of(q, def)?),
            (Some(q), None) => Some(whole(q)?),
            (None, _) => None,
        };
        let cl_ord_id = string(&m, "client_order_id")?.map(client_id).transpose()?;
        Ok((
            idem,
            ApiOp::Replace {
                order,
                price,
                qty,
                cl_ord_id,
            },
        ))
    })();
    match parsed {
        Ok((idem, op)) => submit(&s, key, idem, op).await,
        Err(a) => answer(a),
    }
}

async fn cancel_all(
    State(s): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = match authenticate(&s, &headers) {
        Ok(k) => k,
        Err(a) => return answer(a),
    };
    let parsed = (|| {
        let idem = idempotency(&headers, &method, &uri, &body)?;
        let m = object(&body)?;
        only(&m, &["symbol", "side"])?;
        let symbol = match string(&m, "symbol")? {
            Some(sym) => Some(symbol_of(&s, sym)?.0),
            None => None,
        };
        let side = string(&m, "side")?.map(side_of).transpose()?;
        Ok((idem, ApiOp::CancelAll { symbol, side }))
    })();
    match parsed {
        Ok((idem, op)) => submit(&s, key, idem, op).await,
        Err(a) => answer(a),
    }
}
