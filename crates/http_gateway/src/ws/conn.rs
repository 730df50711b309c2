//! One WebSocket connection: the client's JSON messages in (subscribe, unsubscribe, auth),
//! acks, errors, snapshots and the subscribed channels out.
//!
//! Messages from the client: `{"op":"subscribe","channel":"book"|"trades"|"ticker",
//! "symbol":"ACME"}`, `{"op":"unsubscribe",...}` (same fields), `{"op":"auth","token":"..."}`,
//! then `{"op":"subscribe","channel":"orders"}`; `{"op":"subscribe","channel":"stats"}` for the
//! exchange's vital signs (`crate::stats`: the samples kept, then one a second; a reader that
//! falls behind skips samples). Each gets an ack (`subscribed`,
//! `unsubscribed`, `authenticated`) or `{"type":"error","code":...,"message":...}`, and the
//! connection lives on. A subscription to `book` (again: a fresh one) is answered with a
//! `book_snapshot`, to `ticker` with the current `ticker`.
//!
//! Throttled subscriptions (`"interval_ms": 20..=10000` on a public channel, for a screen that
//! draws a few times a second): at most one message per channel and instrument each interval,
//! and only if something changed: the book as a fresh `book_snapshot`, the ticker as the
//! current `ticker`, the interval's trades in one `{"type":"trades","symbol":..,"trades":[..]}`
//! (each element a `trade` message). Without it (or 0), every update as it comes.
//!
//! Never: more than one message of the client read at a time (4 KiB at most), nor a
//! subscription beyond one per channel and instrument; an order event of another key; a
//! connection kept once its client has taken nothing for `SEND_STALL_MAX` (30 s).

use super::{snapshot_json, ticker_json, Channel, MarketMsg, OrderMsg};
use crate::http::Shared;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::broadcast::Receiver;

/// A client message larger than this closes the connection (1009).
const MESSAGE_MAX: usize = 4 << 10;
/// Bytes a connection's socket writer may hold beyond what the socket takes.
const WRITE_BUFFER_MAX: usize = 1 << 20;
/// The most one read of the client's socket takes. tungstenite zero-fills this much before
/// every read attempt, and a connection attempts one each time it wakes for a market message
/// (snapview/tungstenite-rs#547): with its 128 KiB default that memset was the biggest cost
/// of the fan-out. A client's message is at most `MESSAGE_MAX` anyway.
const READ_CHUNK: usize = MESSAGE_MAX;
/// Failed `auth` messages before the connection is closed (1008).
const AUTH_FAILURES_MAX: u32 = 5;
/// How long a closing connection waits for the client's close frame.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// A client that takes nothing of one message for this long is dropped (it has stopped
/// reading; a close frame could not reach it).
const SEND_STALL_MAX: Duration = Duration::from_secs(30);

/// Policy violation: too slow, or too many failed authentications.
const CLOSE_POLICY: u16 = 1008;
const CLOSE_TOO_BIG: u16 = 1009;
const CLOSE_GOING_AWAY: u16 = 1001;

/// `GET /ws`: upgrades, unless the server holds `ws_connections_max` already (503).
pub(crate) async fn upgrade(State(s): State<Arc<Shared>>, ws: WebSocketUpgrade) -> Response {
    let stats = &s.market.ws().stats;
    if stats.connections.fetch_add(1, Ordering::AcqRel) >= s.ws_connections_max {
        stats.connections.fetch_sub(1, Ordering::AcqRel);
        stats.refused.fetch_add(1, Ordering::Relaxed);
        let body = crate::json::Answer::error(
            503,
            "too_many_connections",
            "the server holds its most WebSocket connections; retry",
        );
        let mut r = (StatusCode::SERVICE_UNAVAILABLE, body.body).into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    }
    stats.accepted.fetch_add(1, Ordering::Relaxed);
    // Counted until the connection ends (or the upgrade fails and the closure is dropped).
    let counted = Counted(s.clone());
    ws.max_message_size(MESSAGE_MAX)
        .max_frame_size(MESSAGE_MAX)
        .read_buffer_size(READ_CHUNK)
        .max_write_buffer_size(WRITE_BUFFER_MAX)
        .on_upgrade(move |socket| async move {
            let conn = Conn::new(counted.0.clone());
            conn.run(socket).await;
            drop(counted);
        })
}

struct Counted(Arc<Shared>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0
            .market
            .ws()
            .stats
            .connections
            .fetch_sub(1, Ordering::AcqRel);
    }
}

/// The shortest and longest `interval_ms` of a throttled subscription.
const INTERVAL_MS: std::ops::RangeInclusive<u64> = 20..=10_000;
/// Trades a throttled subscription holds for one interval at most; beyond, the connection is
/// closed as too slow (1008): that is more than the rings hold.
const TRADES_HELD_MAX: usize = 65_536;

/// One instrument's subscriptions of a connection.
#[derive(Clone, Copy, Debug, Default)]
struct Subs {
    /// `book`: the RptSeq the client's book is at (its snapshot's, then its last update's).
    book: Option<u64>,
    trades: bool,
    /// `ticker`: the `(rpt_seq, ticker_rev)` of the last ticker sent (a status or indicative
    /// change comes at the same RptSeq with a greater `ticker_rev`).
    ticker: Option<(u64, u64)>,
    /// Each channel's `interval_ms` (0: every update as it comes).
    every: [u16; 3],
    /// Throttled channels with a change not sent yet.
    dirty: [bool; 3],
}

fn slot(ch: Channel) -> usize {
    match ch {
        Channel::Book => 0,
        Channel::Trades => 1,
        Channel::Ticker => 2,
    }
}

impl Subs {
    fn any(&self) -> bool {
        self.book.is_some() || self.trades || self.ticker.is_some()
    }
}

/// What to do after an event.
enum Step {
    Go,
    Close(u16, String),
    End,
}

enum Ev {
    Client(Option<Result<Message, axum::Error>>),
    Market(Result<MarketMsg, RecvError>),
    Order(Result<OrderMsg, RecvError>),
    Stats(Result<super::Text, RecvError>),
    Tick,
}

struct Conn {
    s: Arc<Shared>,
    /// By instrument.
    subs: Vec<Subs>,
    /// The public ring, while any public channel is subscribed.
    market: Option<Receiver<MarketMsg>>,
    /// The order events' ring, while `orders` is subscribed.
    orders: Option<Receiver<OrderMsg>>,
    /// The samples' ring, while `stats` is subscribed.
    stats: Option<Receiver<super::Text>>,
    /// The throttled subscriptions' clock: ticks at the shortest interval among them.
    tick: Option<tokio::time::Interval>,
    /// By instrument: the trades a throttled `trades` subscription holds for its next message,
    /// and when each channel last sent one.
    held: Vec<Vec<super::Text>>,
    sent_at: Vec<[tokio::time::Instant; 3]>,
    key: Option<u16>,
    auth_failures: u32,
    /// Messages to send after the event at hand, in order.
    out: Vec<Message>,
}

async fn tick_opt(tick: &mut Option<tokio::time::Interval>) {
    match tick {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

async fn recv_opt<T: Clone>(rx: &mut Option<Receiver<T>>) -> Result<T, RecvError> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

#[derive(Serialize)]
struct ErrorJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    code: &'static str,
    message: &'a str,
}

#[derive(Serialize)]
struct AckJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    channel: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    symbol: Option<&'a str>,
}

/// `{"type":"trades","symbol":..,"trades":[..]}` of `held` (each a `trade` message's JSON).
fn trades_json(symbol: &str, held: &[super::Text]) -> super::Text {
    let mut out = Vec::with_capacity(64 + held.iter().map(|t| t.len() + 1).sum::<usize>());
    out.extend_from_slice(br#"{"type":"trades","symbol":"#);
    out.extend_from_slice(serde_json::to_string(symbol).unwrap_or_default().as_bytes());
    out.extend_from_slice(br#","trades":["#);
    for (i, t) in held.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(t);
    }
    out.extend_from_slice(b"]}");
    super::Text::from(out)
}

/// A published message's text as the WebSocket's (no copy; the publisher wrote JSON).
fn utf8(t: super::Text) -> Utf8Bytes {
    Utf8Bytes::try_from(t).unwrap_or_else(|_| Utf8Bytes::from_static("{}"))
}

fn message(v: &impl Serialize) -> Message {
    Message::Text(Utf8Bytes::from(
        serde_json::to_string(v).expect("plain data serializes"),
    ))
}

fn error(code: &'static str, text: &str) -> Message {
    message(&ErrorJson {
        kind: "error",
        code,
        message: text,
    })
}

/// A refusal of a client message: its code and words.
type Refusal = (&'static str, String);

fn refuse<T>(code: &'static str, text: impl Into<String>) -> Result<T, Refusal> {
    Err((code, text.into()))
}

fn string<'m>(m: &'m Map<String, Value>, name: &str) -> Result<Option<&'m str>, Refusal> {
    match m.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => refuse("invalid_field", format!("{name} must be a string")),
    }
}

fn required<'m>(m: &'m Map<String, Value>, name: &str) -> Result<&'m str, Refusal> {
    string(m, name)?.map_or_else(
        || refuse("missing_field", format!("{name} is required")),
        Ok,
    )
}

fn only(m: &Map<String, Value>, known: &[&str]) -> Result<(), Refusal> {
    match m.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => refuse(
            "unknown_field",
            format!("unknown field {k:?} (known: {})", known.join(", ")),
        ),
        None => Ok(()),
    }
}

/// `reason` cut to what a close frame holds (123 bytes), on a character boundary.
fn close_reason(mut reason: String) -> String {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    reason.truncate(end);
    reason
}

impl Conn {
    fn new(s: Arc<Shared>) -> Conn {
        let n = s.cfg.instruments.len();
        Conn {
            s,
            subs: vec![Subs::default(); n],
            market: None,
            orders: None,
            stats: None,
            tick: None,
            held: vec![Vec::new(); n],
            sent_at: vec![[tokio::time::Instant::now(); 3]; n],
            key: None,
            auth_failures: 0,
            out: Vec::new(),
        }
    }

    async fn run(mut self, mut socket: WebSocket) {
        let step = loop {
            let ev = tokio::select! {
                m = socket.recv() => Ev::Client(m),
                m = recv_opt(&mut self.market) => Ev::Market(m),
                m = recv_opt(&mut self.orders) => Ev::Order(m),
                m = recv_opt(&mut self.stats) => Ev::Stats(m),
                () = tick_opt(&mut self.tick) => Ev::Tick,
            };
            let step = match ev {
                Ev::Client(None) => Step::End,
                Ev::Client(Some(Err(_))) => Step::Close(
                    CLOSE_TOO_BIG,
                    format!("a message unreadable or over {MESSAGE_MAX} bytes"),
                ),
                Ev::Client(Some(Ok(m))) => self.on_client(m),
                Ev::Market(m) => self.on_market(m),
                Ev::Order(m) => self.on_order(m),
                Ev::Stats(Ok(t)) => {
                    self.out.push(Message::Text(utf8(t)));
                    Step::Go
                }
                // Samples are conflatable: the next one is as good as a missed one.
                Ev::Stats(Err(RecvError::Lagged(_))) => Step::Go,
                Ev::Stats(Err(RecvError::Closed)) => {
                    self.stats = None;
                    Step::Go
                }
                Ev::Tick => self.flush(),
            };
            for m in self.out.drain(..) {
                match tokio::time::timeout(SEND_STALL_MAX, socket.send(m)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => return,
                    Err(_) => {
                        let stats = &self.s.market.ws().stats;
                        stats.slow_closes.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                }
            }
            match step {
                Step::Go => {}
                other => break other,
            }
        };
        if let Step::Close(code, reason) = step {
            let frame = CloseFrame {
                code,
                reason: Utf8Bytes::from(close_reason(reason)),
            };
            if socket.send(Message::Close(Some(frame))).await.is_err() {
                return;
            }
            // Until the client's close frame, so that nothing it sent meets a reset.
            let _ = tokio::time::timeout(CLOSE_GRACE, async {
                while let Some(Ok(m)) = socket.recv().await {
                    if matches!(m, Message::Close(_)) {
                        break;
                    }
                }
            })
            .await;
        }
    }

    fn on_client(&mut self, m: Message) -> Step {
        let text = match m {
            Message::Text(t) => t,
            Message::Binary(_) => {
                self.out.push(error(
                    "invalid_message",
                    "binary messages are not served; send JSON text",
                ));
                return Step::Go;
            }
            Message::Close(_) => return Step::End,
            Message::Ping(_) | Message::Pong(_) => return Step::Go,
        };
        match self.on_text(&text) {
            Ok(step) => step,
            Err((code, why)) => {
                self.out.push(error(code, &why));
                if code == "unauthenticated" && self.auth_failures >= AUTH_FAILURES_MAX {
                    return Step::Close(CLOSE_POLICY, "too many failed authentications".into());
                }
                Step::Go
            }
        }
    }

    fn on_text(&mut self, text: &str) -> Result<Step, Refusal> {
        let m = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => {
                return refuse(
                    "invalid_message",
                    r#"a message is a JSON object like {"op":"subscribe","channel":"book","symbol":"ACME"}"#,
                )
            }
            Err(e) => return refuse("invalid_json", format!("not valid JSON: {e}")),
        };
        match required(&m, "op")? {
            "auth" => {
                only(&m, &["op", "token"])?;
                self.auth(required(&m, "token")?)
            }
            op @ ("subscribe" | "unsubscribe") => {
                let on = op == "subscribe";
                let channel = required(&m, "channel")?;
                let symbol = string(&m, "symbol")?;
                let public = matches!(channel, "book" | "trades" | "ticker");
                if on && public {
                    only(&m, &["op", "channel", "symbol", "interval_ms"])?;
                } else {
                    only(&m, &["op", "channel", "symbol"])?;
                }
                let every = match m.get("interval_ms") {
                    None => 0,
                    Some(v) => match v.as_u64() {
                        Some(ms) if ms == 0 || INTERVAL_MS.contains(&ms) => ms as u16,
                        _ => {
                            return refuse(
                                "invalid_field",
                                format!(
                                    "interval_ms must be 0 (every update) or {} to {}, got {v}",
                                    INTERVAL_MS.start(),
                                    INTERVAL_MS.end()
                                ),
                            )
                        }
                    },
                };
                match channel {
                    "orders" => {
                        if symbol.is_some() {
                            return refuse("unknown_field", "the orders channel takes no symbol");
                        }
                        self.orders_channel(on)
                    }
                    "stats" => {
                        if symbol.is_some() {
                            return refuse("unknown_field", "the stats channel takes no symbol");
                        }
                        self.stats_channel(on)
                    }
                    "book" | "trades" | "ticker" => {
                        let ch = match channel {
                            "book" => Channel::Book,
                            "trades" => Channel::Trades,
                            _ => Channel::Ticker,
                        };
                        let symbol = symbol.map_or_else(
                            || refuse("missing_field", format!("symbol is required for {channel}")),
                            Ok,
                        )?;
                        let Some(sym) = self.s.cfg.symbol_id(symbol) else {
                            return refuse("unknown_symbol", format!("no instrument {symbol:?}"));
                        };
                        self.public(on, ch, channel, sym, every)
                    }
                    _ => refuse(
                        "unknown_channel",
                        format!("no channel {channel:?} (book, trades, ticker, orders, stats)"),
                    ),
                }
            }
            op => refuse(
                "unknown_op",
                format!("no op {op:?} (subscribe, unsubscribe, auth)"),
            ),
        }
    }

    fn auth(&mut self, token: &str) -> Result<Step, Refusal> {
        if self.key.is_some() {
            return refuse(
                "already_authenticated",
                "this connection is authenticated already",
            );
        }
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let Some(&key) = self.s.tokens.get(&digest) else {
            self.auth_failures += 1;
            return refuse("unauthenticated", "unknown API key");
        };
        self.key = Some(key);
        let name = &self.s.cfg.keys[key as usize].name;
        self.out.push(message(&serde_json::json!({
            "type": "authenticated",
            "key": name,
        })));
        Ok(Step::Go)
    }

    fn ack(&mut self, on: bool, channel: &str, symbol: Option<&str>) {
        self.out.push(message(&AckJson {
            kind: if on { "subscribed" } else { "unsubscribed" },
            channel,
            symbol,
        }));
    }

    fn orders_channel(&mut self, on: bool) -> Result<Step, Refusal> {
        if on {
            if self.key.is_none() {
                return refuse(
                    "unauthenticated",
                    r#"authenticate first: {"op":"auth","token":"<API key>"}"#,
                );
            }
            if self.orders.is_none() {
                self.orders = Some(self.s.market.ws().orders.subscribe());
            }
        } else if self.orders.take().is_none() {
            return refuse("not_subscribed", "not subscribed to orders");
        }
        self.ack(on, "orders", None);
        Ok(Step::Go)
    }

    /// `stats`: the samples kept (`stats_history`), then each new one.
    fn stats_channel(&mut self, on: bool) -> Result<Step, Refusal> {
        if on {
            let (rx, history) = self.s.market.ws().stats_hub.subscribe();
            self.stats = Some(rx);
            self.ack(true, "stats", None);
            self.out.push(Message::Text(utf8(history)));
        } else {
            if self.stats.take().is_none() {
                return refuse("not_subscribed", "not subscribed to stats");
            }
            self.ack(false, "stats", None);
        }
        Ok(Step::Go)
    }

    fn public(
        &mut self,
        on: bool,
        ch: Channel,
        name: &str,
        sym: u32,
        every: u16,
    ) -> Result<Step, Refusal> {
        let def = self.s.cfg.instruments[sym as usize];
        let symbol = def.symbol.as_str();
        let sub = &mut self.subs[sym as usize];
        sub.every[slot(ch)] = if on { every } else { 0 };
        sub.dirty[slot(ch)] = false;
        if ch == Channel::Trades {
            self.held[sym as usize].clear();
        }
        self.retime();
        if !on {
            let sub = &mut self.subs[sym as usize];
            let was = match ch {
                Channel::Book => sub.book.take().is_some(),
                Channel::Trades => std::mem::take(&mut sub.trades),
                Channel::Ticker => sub.ticker.take().is_some(),
            };
            if !was {
                return refuse(
                    "not_subscribed",
                    format!("not subscribed to {name} {symbol}"),
                );
            }
            if !self.subs.iter().any(Subs::any) {
                self.market = None;
            }
            self.ack(false, name, Some(symbol));
            return Ok(Step::Go);
        }
        // On the ring before the snapshot is read: no update between them is missed.
        if self.market.is_none() {
            self.market = Some(self.s.market.ws().market.subscribe());
        }
        self.ack(true, name, Some(symbol));
        match ch {
            Channel::Book => self.snapshot(sym),
            Channel::Trades => self.subs[sym as usize].trades = true,
            Channel::Ticker => self.ticker(sym),
        }
        Ok(Step::Go)
    }

    /// Sends `sym`'s book as the view has it; its stream continues after it.
    fn snapshot(&mut self, sym: u32) {
        let def = self.s.cfg.instruments[sym as usize];
        let v = self
            .s
            .market
            .book(sym, crate::market::DEPTH_MAX)
            .unwrap_or_default();
        self.out.push(Message::Text(utf8(snapshot_json(&def, &v))));
        self.subs[sym as usize].book = Some(v.rpt_seq);
    }

    fn ticker(&mut self, sym: u32) {
        let def = self.s.cfg.instruments[sym as usize];
        let v = self.s.market.book(sym, 1).unwrap_or_default();
        self.out.push(Message::Text(utf8(ticker_json(&def, &v))));
        self.subs[sym as usize].ticker = Some((v.rpt_seq, v.ticker_rev));
    }

    fn on_market(&mut self, m: Result<MarketMsg, RecvError>) -> Step {
        let m = match m {
            Ok(m) => m,
            Err(RecvError::Closed) => {
                return Step::Close(CLOSE_GOING_AWAY, "the server is stopping".into())
            }
            Err(RecvError::Lagged(n)) => return self.lagged(n),
        };
        let Some(sub) = self.subs.get_mut(m.symbol as usize) else {
            return Step::Go;
        };
        if sub.every[slot(m.channel)] > 0 {
            let subscribed = match m.channel {
                Channel::Book => sub.book.is_some(),
                Channel::Trades => sub.trades,
                Channel::Ticker => sub.ticker.is_some(),
            };
            if !subscribed {
                return Step::Go;
            }
            sub.dirty[slot(m.channel)] = true;
            if m.channel == Channel::Trades {
                let held = &mut self.held[m.symbol as usize];
                if held.len() >= TRADES_HELD_MAX {
                    return self.too_slow(format!(
                        "slow consumer: over {TRADES_HELD_MAX} trades in one interval"
                    ));
                }
                held.push(m.text);
            }
            return Step::Go;
        }
        match m.channel {
            Channel::Book => match sub.book {
                Some(at) if m.rpt_seq <= at => {}
                Some(at) if m.first_rpt_seq == at + 1 => {
                    sub.book = Some(m.rpt_seq);
                    self.out.push(Message::Text(utf8(m.text)));
                }
                Some(_) => {
                    // An update the publisher made before this connection listened: a
                    // snapshot (the view has this update already) instead of a gap.
                    self.s
                        .market
                        .ws()
                        .stats
                        .conflations
                        .fetch_add(1, Ordering::Relaxed);
                    self.snapshot(m.symbol);
                }
                None => {}
            },
            Channel::Trades if sub.trades => self.out.push(Message::Text(utf8(m.text))),
            Channel::Ticker => {
                let m_at = (m.rpt_seq, m.ticker_rev);
                if sub.ticker.is_some_and(|at| m_at > at) {
                    sub.ticker = Some(m_at);
                    self.out.push(Message::Text(utf8(m.text)));
                }
            }
            Channel::Trades => {}
        }
        Step::Go
    }

    /// Fell `n` messages behind the public ring: fresh books and tickers, or a close if it
    /// takes trades (they cannot be made up).
    fn lagged(&mut self, n: u64) -> Step {
        if self.subs.iter().any(|s| s.trades) {
            return self.too_slow(format!(
                "slow consumer: {n} updates missed, trades are not conflated"
            ));
        }
        let stats = &self.s.market.ws().stats;
        stats.conflations.fetch_add(1, Ordering::Relaxed);
        for sym in 0..self.subs.len() as u32 {
            let sub = &mut self.subs[sym as usize];
            if sub.book.is_some() {
                if sub.every[0] > 0 {
                    sub.dirty[0] = true;
                } else {
                    self.snapshot(sym);
                }
            }
            let sub = &mut self.subs[sym as usize];
            if sub.ticker.is_some() {
                if sub.every[2] > 0 {
                    sub.dirty[2] = true;
                } else {
                    self.ticker(sym);
                }
            }
        }
        Step::Go
    }

    fn too_slow(&mut self, why: String) -> Step {
        let stats = &self.s.market.ws().stats;
        stats.slow_closes.fetch_add(1, Ordering::Relaxed);
        Step::Close(CLOSE_POLICY, why)
    }

    /// The throttled subscriptions' clock, at the shortest interval among them (none: off).
    fn retime(&mut self) {
        let shortest = self
            .subs
            .iter()
            .flat_map(|s| s.every)
            .filter(|&ms| ms > 0)
            .min();
        let Some(ms) = shortest else {
            self.tick = None;
            return;
        };
        let period = Duration::from_millis(u64::from(ms));
        if self.tick.as_ref().is_some_and(|t| t.period() == period) {
            return;
        }
        let mut t = tokio::time::interval(period);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        self.tick = Some(t);
    }

    /// Sends each throttled subscription's change whose interval has passed.
    fn flush(&mut self) -> Step {
        let now = tokio::time::Instant::now();
        for sym in 0..self.subs.len() {
            for ch in [Channel::Book, Channel::Trades, Channel::Ticker] {
                let i = slot(ch);
                let sub = self.subs[sym];
                let due = self.sent_at[sym][i]
                    + Duration::from_millis(u64::from(sub.every[i]).saturating_sub(1));
                if sub.every[i] == 0 || !sub.dirty[i] || now < due {
                    continue;
                }
                self.subs[sym].dirty[i] = false;
                self.sent_at[sym][i] = now;
                match ch {
                    Channel::Book => self.snapshot(sym as u32),
                    Channel::Ticker => self.ticker(sym as u32),
                    Channel::Trades => {
                        let def = self.s.cfg.instruments[sym];
                        let text = trades_json(def.symbol.as_str(), &self.held[sym]);
                        self.held[sym].clear();
                        self.out.push(Message::Text(utf8(text)));
                    }
                }
            }
        }
        Step::Go
    }

    fn on_order(&mut self, m: Result<OrderMsg, RecvError>) -> Step {
        match m {
            Ok(m) if Some(m.key) == self.key => {
                self.out.push(Message::Text(utf8(m.text)));
                Step::Go
            }
            Ok(_) => Step::Go,
            Err(RecvError::Closed) => {
                Step::Close(CLOSE_GOING_AWAY, "the server is stopping".into())
            }
            Err(RecvError::Lagged(n)) => {
                self.s
                    .market
                    .ws()
                    .stats
                    .slow_closes
                    .fetch_add(1, Ordering::Relaxed);
                Step::Close(
                    CLOSE_POLICY,
                    format!("slow consumer: {n} order events missed"),
                )
            }
        }
    }
}
