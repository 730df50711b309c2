//! `rialto bench http`: the order mix of `bench fix` over the REST API, open loop over N
//! keep-alive connections (one API key each), latency from each request's intended send time
//! to its whole answer in an HdrHistogram; the seeds' percentile table and one parseable
//! summary line (`rate_offered=.. rate_achieved=.. p50_us=.. ... ok=.. rejects=.. shed=..
//! errors=..`).
//!
//! Role: the REST edge's figures beside the FIX edge's, with the same generator
//! (`mix::MixGenerator`: limit orders around the mid with a standard deviation in ticks, some
//! IOC and market orders, cancels and replaces of the connection's own resting orders within
//! its active-orders window, `orders::BotOrders`). Request `j` of the run is due at
//! `j / rate` and goes to connection `j mod N`. HTTP/1.1 has one request in flight per
//! connection: an answer that comes late delays that connection's next request, which is
//! still timed from its own intended time (the wait is counted: no coordinated omission).
//!
//! How answers count: 2xx is `ok` (201 for a new order), 429 and 503 are `shed` (throttled,
//! queue full: timed apart), other 4xx are `rejects` (by code in the report: e.g. a cancel of
//! an order that filled meanwhile, 409), anything else (another 5xx, a lost connection, no
//! answer before the end of the drain) is an `error`. A connection still behind half-way
//! through the drain stops sending: what it had left is counted `unsent`.
//!
//! Never: counts a request outside the measured period; times a shed answer with the accepted
//! ones; leaves the connections' orders in the book (each cancels all its orders at the end,
//! unmeasured).

use crate::bench::on_placed_thread;
use crate::clock::Timer;
use crate::clock::{mono_ns, process_cpu_ns};
use crate::http::{Answer, HttpConn};
use crate::mix::{Action, Market, MixConfig, MixGenerator, Strategy};
use crate::orders::BotOrders;
use crate::stats::{at, new_histogram, percentile_table, us, ERROR_NOTES_MAX};
use bytes::Bytes;
use hdrhistogram::Histogram;
use hyper::Method;
use std::cell::RefCell;
use std::fmt::Write as _;
use std::io::Write;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use types::{OrdType, Side, TimeInForce};

/// `rialto bench http` settings.
#[derive(Clone, Debug)]
pub struct HttpBench {
    /// The REST API's address.
    pub addr: SocketAddr,
    /// API tokens: connection `i` uses `tokens[i % len]`.
    pub tokens: Vec<String>,
    pub connections: usize,
    /// Requests per second over all connections.
    pub rate: u64,
    pub warmup: Duration,
    pub duration: Duration,
    /// Resting orders each connection keeps at most.
    pub window: usize,
    pub seed: u64,
    pub mix: MixConfig,
    pub stop: Arc<AtomicBool>,
    /// Pin the generator's thread to this CPU / run it at this nice value (see
    /// `bench::place_generator`).
    pub cpu: Option<usize>,
    pub nice: Option<i32>,
    /// How long after the measured period the last answers are waited for.
    pub drain: Duration,
}

impl HttpBench {
    pub fn new(addr: SocketAddr, tokens: Vec<String>) -> HttpBench {
        HttpBench {
            addr,
            tokens,
            connections: 10,
            rate: 10_000,
            warmup: Duration::from_secs(2),
            duration: Duration::from_secs(10),
            window: 100,
            seed: 1,
            mix: MixConfig::default(),
            stop: Arc::new(AtomicBool::new(false)),
            cpu: None,
            nice: None,
            drain: Duration::from_secs(10),
        }
    }
}

/// What happened to the requests of a run (or of one second of it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HttpCounters {
    /// Requests sent: new orders, cancels, replaces.
    pub sent: u64,
    pub sent_new: u64,
    pub sent_cancel: u64,
    pub sent_replace: u64,
    /// 2xx answers; `created`: 201 (a new order accepted).
    pub ok: u64,
    pub created: u64,
    /// Fills in the answers (a new order's or a replace's immediate fills).
    pub fills: u64,
    /// New orders the exchange canceled at once (IOC and market remainders).
    pub exchange_cancels: u64,
    /// 4xx other than 429.
    pub rejects: u64,
    /// 429 (throttled) and 503 (the exchange's queue full).
    pub shed: u64,
    /// Other answers, lost connections, requests unanswered at the end.
    pub errors: u64,
    /// Requests due in the measured period that were never sent: their connection was still
    /// waiting for earlier answers half-way through the drain (the server fell behind).
    pub unsent: u64,
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct HttpResult {
    pub rate_offered: u64,
    /// Measured requests sent per second of the measured period.
    pub rate_achieved: f64,
    pub connections: usize,
    pub measured_secs: f64,
    pub counters: HttpCounters,
    /// Intended send time -> whole answer (ns), shed answers excluded.
    pub latency: Histogram<u64>,
    pub shed_latency: Histogram<u64>,
    /// How late requests were sent after their intended time (ns): a late answer on the
    /// connection, or the generator's own delay. Included in `latency`.
    pub send_lag: Histogram<u64>,
    /// Actual send -> whole answer (ns): the server's and the network's share.
    pub after_send: Histogram<u64>,
    /// Rejects by (status, code), most frequent first.
    pub reject_codes: Vec<(u16, String, u64)>,
    pub error_notes: Vec<String>,
    pub generator_cpu_secs: f64,
    pub wall_secs: f64,
    pub host_steal_ms: Option<u64>,
}

impl HttpResult {
    pub fn counters_text(&self) -> String {
        let c = &self.counters;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "offered {} req/s, achieved {:.0} req/s over {:.1} s ({} connections)",
            self.rate_offered, self.rate_achieved, self.measured_secs, self.connections
        );
        let _ = writeln!(
            s,
            "sent {} (new {}, cancel {}, replace {}), ok {} (201 created {}), fills {}, exchange cancels {}, rejects {}, shed {} (429/503), errors {}",
            c.sent, c.sent_new, c.sent_cancel, c.sent_replace, c.ok, c.created, c.fills,
            c.exchange_cancels, c.rejects, c.shed, c.errors
        );
        if c.unsent > 0 {
            let _ = writeln!(
                s,
                "unsent {}: due in the measured period, not sent by half-way through the drain (the connections were behind)",
                c.unsent
            );
        }
        if !self.reject_codes.is_empty() {
            let codes: Vec<String> = self
                .reject_codes
                .iter()
                .map(|(st, code, n)| format!("{st} {code}: {n}"))
                .collect();
            let _ = writeln!(s, "rejects by code: {}", codes.join(", "));
        }
        crate::stats::send_lines(
            &mut s,
            c.shed,
            &self.shed_latency,
            (
                &self.send_lag,
                "a late answer on the connection, or the generator",
            ),
            &self.after_send,
        );
        if self.wall_secs > 0.0 {
            let _ = writeln!(
                s,
                "generator CPU {:.2} s over {:.1} s ({:.0}% of one core)",
                self.generator_cpu_secs,
                self.wall_secs,
                self.generator_cpu_secs * 100.0 / self.wall_secs
            );
        }
        if let Some(steal) = self.host_steal_ms {
            let _ = writeln!(s, "host steal {steal} ms over the run");
        }
        for e in &self.error_notes {
            let _ = writeln!(s, "error: {e}");
        }
        s
    }

    /// The last line of a run, for scripts.
    pub fn summary_line(&self) -> String {
        let h = &self.latency;
        let c = &self.counters;
        format!(
            "rate_offered={} rate_achieved={:.0} {} ok={} created={} fills={} rejects={} shed={} errors={} unsent={} send_lag_p99_us={} after_send_p50_us={} after_send_p99_us={} connections={}",
            self.rate_offered,
            self.rate_achieved,
            crate::stats::latency_fields(h),
            c.ok,
            c.created,
            c.fills,
            c.rejects,
            c.shed,
            c.errors,
            c.unsent,
            us(at(&self.send_lag, 99.0)),
            us(at(&self.after_send, 50.0)),
            us(at(&self.after_send, 99.0)),
            self.connections
        )
    }

    /// Table, counters and summary line.
    pub fn report(&self) -> String {
        format!(
            "{}{}{}\n",
            percentile_table(&self.latency),
            self.counters_text(),
            self.summary_line()
        )
    }
}

/// A run's accounting while it runs (the connections' tasks share it on the one thread).
struct Tally {
    measure_from: u64,
    totals: HttpCounters,
    second: HttpCounters,
    latency: Histogram<u64>,
    shed_latency: Histogram<u64>,
    second_latency: Histogram<u64>,
    send_lag: Histogram<u64>,
    after_send: Histogram<u64>,
    reject_codes: Vec<(u16, String, u64)>,
    notes: Vec<String>,
}

/// How an answer counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Ok,
    Reject,
    Shed,
    Error,
}

fn class(status: u16) -> Class {
    match status {
        200..=299 => Class::Ok,
        429 | 503 => Class::Shed,
        400..=499 => Class::Reject,
        _ => Class::Error,
    }
}

impl Tally {
    fn both(&mut self, measured: bool, f: impl Fn(&mut HttpCounters)) {
        f(&mut self.second);
        if measured {
            f(&mut self.totals);
        }
    }

    fn note(&mut self, n: String) {
        if self.notes.len() < ERROR_NOTES_MAX {
            self.notes.push(n);
        }
    }

    /// A request due at `intended`, sent at `sent`, answered (or failed) at `done`.
    fn answered(&mut self, intended: u64, sent: u64, done: u64, a: &Result<Answer, String>) {
        let measured = intended >= self.measure_from;
        let latency = done.saturating_sub(intended).max(1);
        let c = match a {
            Ok(a) => class(a.status),
            Err(_) => Class::Error,
        };
        match (c, a) {
            (Class::Ok, _) => self.both(measured, |t| t.ok += 1),
            (Class::Reject, Ok(a)) => {
                self.both(measured, |t| t.rejects += 1);
                if measured {
                    let code = a.error_code().unwrap_or_else(|| "-".into());
                    let codes = &mut self.reject_codes;
                    match codes
                        .iter()
                        .position(|(s, c, _)| *s == a.status && *c == code)
                    {
                        Some(i) => codes[i].2 += 1,
                        None if codes.len() < 32 => codes.push((a.status, code, 1)),
                        None => {}
                    }
                }
            }
            (Class::Shed, _) => self.both(measured, |t| t.shed += 1),
            (_, Ok(a)) => {
                self.both(measured, |t| t.errors += 1);
                self.note(format!("answer {}: {}", a.status, a.text()));
            }
            (_, Err(e)) => {
                self.both(measured, |t| t.errors += 1);
                self.note(e.clone());
            }
        }
        if c == Class::Shed {
            if measured {
                self.shed_latency.saturating_record(latency);
            }
            return;
        }
        if c == Class::Error {
            return;
        }
        self.second_latency.saturating_record(latency);
        if measured {
            self.latency.saturating_record(latency);
            self.send_lag
                .saturating_record(sent.saturating_sub(intended).max(1));
            self.after_send
                .saturating_record(done.saturating_sub(sent).max(1));
        }
    }
}

/// What a new order's, a cancel's or a replace's 2xx answer says of the order.
#[derive(serde::Deserialize)]
struct OrderAnswer {
    order_id: u64,
    status: String,
    remaining_quantity: String,
    #[serde(default)]
    fills: Vec<serde::de::IgnoredAny>,
}

impl OrderAnswer {
    fn parse(a: &Answer) -> Option<OrderAnswer> {
        serde_json::from_slice(&a.body).ok()
    }
    fn open(&self) -> bool {
        matches!(self.status.as_str(), "new" | "partially_filled")
    }
    fn leaves(&self) -> u64 {
        self.remaining_quantity.parse().unwrap_or(0)
    }
}

/// Price ticks as the API's decimal string.
pub fn price_text(ticks: i64, decimals: u8) -> String {
    let mut v = Vec::with_capacity(24);
    types::decimal::write_units(&mut v, ticks, u32::from(decimals));
    String::from_utf8(v).expect("digits")
}

fn side_text(s: Side) -> &'static str {
    match s {
        Side::Buy => "buy",
        Side::Sell => "sell",
    }
}

/// The REST request of `action`: method, path, body.
fn request_of(
    action: &Action,
    market: &Market,
    orders: &BotOrders,
    ids: &[u64],
) -> Option<(Method, String, Option<Bytes>)> {
    match *action {
        Action::New {
            symbol,
            side,
            ord_type,
            tif,
            price_ticks,
            qty,
            ..
        } => {
            let s = market.symbols.get(symbol as usize)?;
            let body = match ord_type {
                OrdType::Market => format!(
                    r#"{{"symbol":"{}","side":"{}","type":"market","quantity":"{qty}"}}"#,
                    s.name,
                    side_text(side)
                ),
                OrdType::Limit => format!(
                    r#"{{"symbol":"{}","side":"{}","type":"limit","time_in_force":"{}","price":"{}","quantity":"{qty}"}}"#,
                    s.name,
                    side_text(side),
                    match tif {
                        TimeInForce::Ioc => "ioc",
                        TimeInForce::Fok => "fok",
                        TimeInForce::Gtc => "gtc",
                        TimeInForce::Day => "day",
                        TimeInForce::Gtd => "gtd",
                    },
                    price_text(price_ticks, s.price_decimals)
                ),
            };
            Some((Method::POST, "/api/v1/orders".into(), Some(body.into())))
        }
        Action::Cancel { slot } => {
            let id = *ids.get(slot as usize)?;
            Some((Method::DELETE, format!("/api/v1/orders/{id}"), None))
        }
        Action::Replace {
            slot,
            price_ticks,
            qty,
        } => {
            let id = *ids.get(slot as usize)?;
            let o = orders.slot(slot)?;
            let s = market.symbols.get(o.symbol as usize)?;
            let body = format!(
                r#"{{"symbol":"{}","price":"{}","quantity":"{qty}"}}"#,
                s.name,
                price_text(price_ticks, s.price_decimals)
            );
            Some((
                Method::PATCH,
                format!("/api/v1/orders/{id}"),
                Some(body.into()),
            ))
        }
        Action::Idle => None,
    }
}

/// Updates a connection's window from the answer to request `k` (`action`).
fn settle(
    action: &Action,
    k: u64,
    a: &Result<Answer, String>,
    orders: &mut BotOrders,
    ids: &mut [u64],
) -> (u64, bool) {
    let ok = a
        .as_ref()
        .ok()
        .filter(|a| class(a.status) == Class::Ok)
        .and_then(OrderAnswer::parse);
    let fills = ok.as_ref().map_or(0, |o| o.fills.len() as u64);
    let mut exchange_cancel = false;
    match *action {
        Action::New { slot, .. } => match &ok {
            Some(o) if slot > 0 && o.open() => {
                ids[slot as usize] = o.order_id;
                orders.on_new_ack(slot, k);
                orders.on_leaves(slot, k, o.leaves());
            }
            Some(o) => {
                exchange_cancel = o.status == "canceled";
                if slot > 0 {
                    orders.on_gone(slot, k);
                }
            }
            None if slot > 0 => orders.on_gone(slot, k),
            None => {}
        },
        Action::Cancel { slot } => match a {
            Ok(a) if class(a.status) == Class::Ok || class(a.status) == Class::Reject => {
                // Canceled, or no longer open (filled meanwhile): gone either way.
                orders.on_gone(slot, k)
            }
            _ => orders.on_cancel_rejected(slot, k),
        },
        Action::Replace { slot, .. } => match (&ok, a) {
            (Some(o), _) if o.open() => orders.on_replaced(slot, k, Some(o.leaves())),
            (Some(_), _) => orders.on_gone(slot, k),
            (None, Ok(a)) if matches!(a.status, 404 | 409) => orders.on_gone(slot, k),
            _ => orders.on_cancel_rejected(slot, k),
        },
        Action::Idle => {}
    }
    (fills, exchange_cancel)
}

/// The run's clock: where it starts, where measuring starts, where it ends (monotonic ns).
#[derive(Clone, Copy)]
struct Span {
    start: u64,
    measure_from: u64,
    end: u64,
    /// No request is sent from here on; answers are waited for until `drain_until`.
    send_until: u64,
    drain_until: u64,
    rate: u64,
    connections: u64,
}

impl Span {
    /// Intended send time of request `k` of connection `c`.
    fn intended(&self, c: u64, k: u64) -> u64 {
        let j = u128::from(k) * u128::from(self.connections) + u128::from(c);
        self.start + (j * 1_000_000_000 / u128::from(self.rate.max(1))) as u64
    }

    /// Requests of connection `c` due before the end.
    fn due(&self, c: u64) -> u64 {
        let j_end = (u128::from(self.end - self.start) * u128::from(self.rate))
            .div_ceil(1_000_000_000) as u64;
        j_end.saturating_sub(c).div_ceil(self.connections.max(1))
    }
}

/// One connection's loop.
async fn connection(
    c: usize,
    mut conn: HttpConn,
    token: String,
    b: Arc<HttpBench>,
    span: Span,
    tally: Rc<RefCell<Tally>>,
) {
    let mut timer = match Timer::new() {
        Ok(t) => t,
        Err(e) => return tally.borrow_mut().note(e),
    };
    let mut gen = MixGenerator::new(
        b.mix.clone(),
        b.seed.wrapping_mul(1_000_003).wrapping_add(c as u64),
    );
    let mut orders = BotOrders::new(b.window);
    let mut ids = vec![0u64; orders.window() + 1];
    let market = Market::default_contract();
    let mut k = 0u64;
    loop {
        let intended = span.intended(c as u64, k);
        if intended >= span.end || b.stop.load(Ordering::Relaxed) {
            break;
        }
        if let Err(e) = timer.sleep_until(intended).await {
            tally.borrow_mut().note(e);
            break;
        }
        if mono_ns() >= span.send_until {
            let unsent = span.due(c as u64).saturating_sub(k);
            tally.borrow_mut().totals.unsent += unsent;
            break;
        }
        let action = gen.next(&mut orders, &market);
        let Some((method, path, body)) = request_of(&action, &market, &orders, &ids) else {
            if let Action::New { slot, .. } = action {
                if slot > 0 {
                    orders.release(slot);
                }
            }
            k += 1;
            continue;
        };
        match action {
            Action::New {
                slot,
                symbol,
                side,
                price_ticks,
                qty,
                ..
            } if slot > 0 => orders.on_new_sent(slot, k, symbol, side, price_ticks, qty),
            Action::Cancel { slot } => orders.on_request_sent(slot, k, None),
            Action::Replace {
                slot,
                price_ticks,
                qty,
            } => orders.on_request_sent(slot, k, Some((price_ticks, qty))),
            _ => {}
        }
        let measured = intended >= span.measure_from;
        tally.borrow_mut().both(measured, |t| {
            t.sent += 1;
            match action {
                Action::New { .. } => t.sent_new += 1,
                Action::Cancel { .. } => t.sent_cancel += 1,
                _ => t.sent_replace += 1,
            }
        });
        let sent = mono_ns();
        let deadline = tokio::time::Instant::now()
            + Duration::from_nanos(span.drain_until.saturating_sub(sent).max(1_000_000));
        let a = match tokio::time::timeout_at(deadline, conn.request(method, &path, body)).await {
            Ok(r) => r,
            Err(_) => Err(format!(
                "connection {c}: no answer to {path} by the end of the drain"
            )),
        };
        let done = mono_ns();
        let (fills, exchange_cancel) = settle(&action, k, &a, &mut orders, &mut ids);
        {
            let mut t = tally.borrow_mut();
            t.answered(intended, sent, done, &a);
            t.both(measured, |t| {
                t.fills += fills;
                if let Action::New { .. } = action {
                    t.created += u64::from(a.as_ref().is_ok_and(|a| a.status == 201));
                    t.exchange_cancels += u64::from(exchange_cancel);
                }
            });
        }
        k += 1;
        if a.is_err() {
            // A lost connection (or one that stopped answering): start a new one.
            if done >= span.drain_until {
                break;
            }
            match HttpConn::connect(b.addr, Some(&token)).await {
                Ok(n) => conn = n,
                Err(e) => {
                    tally.borrow_mut().note(format!("connection {c}: {e}"));
                    return;
                }
            }
        }
    }
    // Leave nothing in the book (unmeasured).
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        conn.request(
            Method::POST,
            "/api/v1/orders/cancel-all",
            Some(Bytes::from_static(b"{}")),
        ),
    )
    .await;
}

/// Connects connection `c` and checks that the server takes its API key.
async fn open(addr: SocketAddr, token: &str, c: usize) -> Result<HttpConn, String> {
    let mut conn = HttpConn::connect(addr, Some(token)).await?;
    let a = conn
        .request(Method::GET, "/api/v1/orders?status=open", None)
        .await?;
    if a.status != 200 {
        return Err(format!(
            "connection {c}: the server refused its API key ({} {})",
            a.status,
            a.text()
        ));
    }
    Ok(conn)
}

/// Runs `b`; progress lines once a second to `progress`. With `cpu` or `nice` set the run
/// happens on a thread of its own placed there (`bench::on_placed_thread`).
pub fn run_http(b: &HttpBench, progress: &mut (dyn Write + Send)) -> Result<HttpResult, String> {
    b.mix.validate()?;
    if b.connections == 0 || b.tokens.is_empty() {
        return Err("bench http needs at least one connection and one API token".into());
    }
    if b.rate == 0 || b.duration.is_zero() {
        return Err("--rate and --duration must be more than 0".into());
    }
    on_placed_thread(b.cpu, b.nice, || run_here(b, progress))
}

fn run_here(b: &HttpBench, progress: &mut dyn Write) -> Result<HttpResult, String> {
    let rt = crate::http::runtime()?;
    let local = tokio::task::LocalSet::new();
    let b = Arc::new(b.clone());
    local.block_on(&rt, async move {
        let mut conns = Vec::with_capacity(b.connections);
        for c in 0..b.connections {
            let token = &b.tokens[c % b.tokens.len()];
            conns.push(open(b.addr, token, c).await?);
        }
        let cpu0 = process_cpu_ns();
        let steal0 = crate::noise::steal_ms();
        let now = mono_ns();
        let start = now + 10_000_000;
        let measure_from = start + b.warmup.as_nanos() as u64;
        let end = measure_from + b.duration.as_nanos() as u64;
        let span = Span {
            start,
            measure_from,
            end,
            send_until: end + b.drain.as_nanos() as u64 / 2,
            drain_until: end + b.drain.as_nanos() as u64,
            rate: b.rate,
            connections: b.connections as u64,
        };
        let tally = Rc::new(RefCell::new(Tally {
            measure_from,
            totals: HttpCounters::default(),
            second: HttpCounters::default(),
            latency: new_histogram(),
            shed_latency: new_histogram(),
            second_latency: new_histogram(),
            send_lag: new_histogram(),
            after_send: new_histogram(),
            reject_codes: Vec::new(),
            notes: Vec::new(),
        }));
        let mut set = tokio::task::JoinSet::new();
        for (c, conn) in conns.into_iter().enumerate() {
            let token = b.tokens[c % b.tokens.len()].clone();
            set.spawn_local(connection(c, conn, token, b.clone(), span, tally.clone()));
        }
        let mut tick = tokio::time::interval_at(
            tokio::time::Instant::now() + Duration::from_secs(1),
            Duration::from_secs(1),
        );
        let mut elapsed_s = 0u64;
        let mut stopped_at = None;
        loop {
            tokio::select! {
                r = set.join_next() => match r {
                    None => break,
                    Some(Err(e)) => tally.borrow_mut().note(format!("a connection's task failed: {e}")),
                    Some(Ok(())) => {}
                },
                _ = tick.tick() => {
                    elapsed_s += 1;
                    let mut t = tally.borrow_mut();
                    let now = mono_ns();
                    if stopped_at.is_none() && b.stop.load(Ordering::Relaxed) {
                        stopped_at = Some(now);
                    }
                    let phase = if now < measure_from { "warm-up" } else if now < end { "measuring" } else { "draining" };
                    let s = t.second;
                    let _ = writeln!(
                        progress,
                        "[{elapsed_s:>4} s] {phase:<9} sent {:>7}/s  ok {:>7}/s  fills {:>6}/s  rejects {:>5}/s  shed {:>5}/s  errors {}  p50 {} µs  p99 {} µs",
                        s.sent, s.ok, s.fills, s.rejects, s.shed, t.totals.errors,
                        us(at(&t.second_latency, 50.0)), us(at(&t.second_latency, 99.0)),
                    );
                    let _ = progress.flush();
                    t.second = HttpCounters::default();
                    t.second_latency.reset();
                }
            }
        }
        let wall = mono_ns().saturating_sub(start);
        let measured_end = stopped_at.map_or(end, |s| s.clamp(measure_from, end));
        let measured_secs = measured_end.saturating_sub(measure_from) as f64 / 1e9;
        let t = Rc::try_unwrap(tally)
            .map_err(|_| "the connections' tasks outlived the run".to_string())?
            .into_inner();
        let mut reject_codes = t.reject_codes;
        reject_codes.sort_by_key(|r| std::cmp::Reverse(r.2));
        Ok(HttpResult {
            rate_offered: b.rate,
            rate_achieved: if measured_secs > 0.0 {
                t.totals.sent as f64 / measured_secs
            } else {
                0.0
            },
            connections: b.connections,
            measured_secs,
            counters: t.totals,
            latency: t.latency,
            shed_latency: t.shed_latency,
            send_lag: t.send_lag,
            after_send: t.after_send,
            reject_codes,
            error_notes: t.notes,
            generator_cpu_secs: process_cpu_ns().saturating_sub(cpu0) as f64 / 1e9,
            wall_secs: wall as f64 / 1e9,
            host_steal_ms: match (steal0, crate::noise::steal_ms()) {
                (Some(a), Some(z)) => Some(z.saturating_sub(a)),
                _ => None,
            },
        })
    })
}

/// `[[api_keys]]` entries for `tokens` (key `i` on account `101 + i mod 64`, the accounts of
/// the default contract's BOT1..BOT64 firms, with a throttle no bench reaches): the
/// configuration a spawned server gets.
pub fn api_keys_config(tokens: &[String]) -> String {
    let mut s = String::new();
    for (i, t) in tokens.iter().enumerate() {
        s.push_str(&crate::http::api_key_entry(
            &format!("bench{}", i + 1),
            101 + (i % 64) as u32,
            t,
            100_000_000,
        ));
    }
    s
}

#[cfg(test)]
mod tests;
