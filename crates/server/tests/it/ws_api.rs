//! The WebSocket endpoint `/ws` end to end over real sockets on 127.0.0.1: books rebuilt from
//! a snapshot and deltas (a subscriber from the start and one joining half-way) equal the REST
//! book and the engine's while REST and FIX orders flow; a key's private order events, never
//! another key's; bad messages answered with errors on a connection that lives on.

use crate::api_common;

use api_common::{start, Api, TOKEN_A, TOKEN_B};
use fix::client::FixClient;
use serde_json::{json, Value};
use server::{Config, Server};
use std::collections::BTreeMap;
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tungstenite::Message;
use types::Side;

const T: Duration = Duration::from_secs(20);

fn config(dir: &Path) -> Config {
    api_common::config(dir, 100_000)
}

/// A new order of `token`'s; it must be accepted.
/// A WebSocket client.
pub(crate) struct Ws {
    ws: tungstenite::WebSocket<TcpStream>,
}

impl Ws {
    pub(crate) fn connect(s: &Server) -> Ws {
        let addr = s.http_addr().expect("HTTP is on");
        let stream = TcpStream::connect(addr).unwrap();
        let (ws, _) = tungstenite::client(format!("ws://{addr}/ws"), stream).expect("upgrade");
        ws.get_ref()
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        Ws { ws }
    }

    pub(crate) fn send(&mut self, text: &str) {
        self.ws.send(Message::text(text)).unwrap();
    }

    /// The next message (a close as `{"type":"close",...}`), or none within the read timeout.
    pub(crate) fn try_next(&mut self) -> Option<Value> {
        match self.ws.read() {
            Ok(Message::Text(t)) => Some(serde_json::from_str(&t).unwrap()),
            Ok(Message::Close(f)) => Some(match f {
                Some(f) => {
                    json!({"type": "close", "code": u16::from(f.code), "reason": f.reason.as_str()})
                }
                None => json!({"type": "close"}),
            }),
            Ok(_) => None,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                Some(json!({"type": "closed"}))
            }
            Err(e) => panic!("WebSocket read: {e}"),
        }
    }

    pub(crate) fn next(&mut self) -> Value {
        let deadline = Instant::now() + T;
        loop {
            if let Some(v) = self.try_next() {
                return v;
            }
            assert!(Instant::now() < deadline, "no WebSocket message");
        }
    }
}

type Side_ = BTreeMap<String, (String, u64)>;

/// A book rebuilt from `book_snapshot` and `book` messages.
#[derive(Debug, Default)]
struct Rebuilt {
    rpt_seq: Option<u64>,
    bids: Side_,
    asks: Side_,
    snapshots: u32,
    deltas: u32,
    gaps: u32,
}

fn levels(v: &Value) -> Side_ {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l[0].as_str().unwrap().to_owned(),
                (l[1].as_str().unwrap().to_owned(), l[2].as_u64().unwrap()),
            )
        })
        .collect()
}

impl Rebuilt {
    fn apply(&mut self, v: &Value) {
        match v["type"].as_str() {
            Some("book_snapshot") => {
                self.bids = levels(&v["bids"]);
                self.asks = levels(&v["asks"]);
                self.rpt_seq = v["rpt_seq"].as_u64();
                self.snapshots += 1;
            }
            Some("book") => {
                let first = v["first_rpt_seq"].as_u64().unwrap();
                if self.rpt_seq.map(|r| r + 1) != Some(first) {
                    self.gaps += 1;
                }
                for (side, book) in [("bids", &mut self.bids), ("asks", &mut self.asks)] {
                    for (px, (qty, n)) in levels(&v[side]) {
                        if qty == "0" {
                            book.remove(&px);
                        } else {
                            book.insert(px, (qty, n));
                        }
                    }
                }
                self.rpt_seq = v["rpt_seq"].as_u64();
                self.deltas += 1;
            }
            _ => {}
        }
    }
}

/// A book subscriber of ACME.
struct Subscriber {
    ws: Ws,
    book: Rebuilt,
    ticker: Option<Value>,
}

impl Subscriber {
    fn start(s: &Server, ticker: bool) -> Subscriber {
        let mut ws = Ws::connect(s);
        ws.send(r#"{"op":"subscribe","channel":"book","symbol":"ACME"}"#);
        assert_eq!(
            ws.next(),
            json!({"type": "subscribed", "channel": "book", "symbol": "ACME"})
        );
        if ticker {
            ws.send(r#"{"op":"subscribe","channel":"ticker","symbol":"ACME"}"#);
        }
        Subscriber {
            ws,
            book: Rebuilt::default(),
            ticker: None,
        }
    }

    /// Applies what has arrived.
    fn drain(&mut self) {
        while let Some(v) = self.ws.try_next() {
            match v["type"].as_str() {
                Some("ticker") => self.ticker = Some(v),
                Some("book" | "book_snapshot") => self.book.apply(&v),
                Some("subscribed") => {}
                _ => panic!("unexpected {v}"),
            }
        }
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// Where the traders are: how many have done half their orders, and whether the late
/// subscriber has joined (they wait for it, so that it joins half-way).
#[derive(Default)]
struct Progress {
    halfway: AtomicUsize,
    joined: AtomicBool,
}

impl Progress {
    fn at(&self, i: usize, n: usize) {
        if i != n / 2 {
            return;
        }
        self.halfway.fetch_add(1, Ordering::AcqRel);
        let deadline = Instant::now() + T;
        while !self.joined.load(Ordering::Acquire) {
            assert!(
                Instant::now() < deadline,
                "the late subscriber never joined"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// `n` random ACME orders (limit, some IOC) and cancels of `token`'s.
fn rest_trader(api: &Api, token: &str, seed: u64, n: usize, p: &Progress) {
    let mut rng = Rng(seed);
    let mut open: Vec<u64> = Vec::new();
    for i in 0..n {
        p.at(i, n);
        if !open.is_empty() && rng.below(5) == 0 {
            let id = open.swap_remove(rng.below(open.len() as u64) as usize);
            let (st, v, _) = api.call(
                "DELETE",
                &format!("/api/v1/orders/{id}"),
                Some(token),
                None,
                "",
            );
            // A cancel may meet its order filled meanwhile: a 4xx, never a 5xx.
            assert!(st == 200 || (400..500).contains(&st), "{v}");
        } else {
            let side = if rng.below(2) == 0 { "buy" } else { "sell" };
            let px = format!("10.{:02}", 40 + rng.below(20));
            let tif = if rng.below(6) == 0 { "ioc" } else { "gtc" };
            let v = api.accepted(
                token,
                json!({"symbol": "ACME", "side": side, "price": px,
                       "quantity": (1 + rng.below(9)).to_string(), "time_in_force": tif}),
            );
            if v["status"] == "new" || v["status"] == "partially_filled" {
                open.push(v["order_id"].as_u64().unwrap());
            }
        }
    }
}

/// `n` random ACME limit orders over FIX from CLIENT3.
fn fix_trader(s: &Server, seed: u64, n: usize, p: &Progress) {
    let mut c = FixClient::connect(s.addr, "CLIENT3", "RIALTO", 1).unwrap();
    c.logon(30, true).unwrap();
    c.expect("A", T).unwrap();
    let mut rng = Rng(seed);
    for i in 0..n {
        p.at(i, n);
        let px = format!("10.{:02}", 40 + rng.below(20));
        let qty = (1 + rng.below(9)).to_string();
        let side = if rng.below(2) == 0 { "1" } else { "2" };
        c.send(
            "D",
            &[
                (11, &format!("f{i}")),
                (55, "ACME"),
                (54, side),
                (38, &qty),
                (40, "2"),
                (44, &px),
                (59, "1"),
                (60, "20260101-00:00:00.000"),
            ],
        )
        .unwrap();
        // Its first report (more follow for fills; later expects read them).
        c.expect("8", T).unwrap();
    }
}

fn rest_book(api: &Api) -> (u64, Side_, Side_) {
    let (st, v, _) = api.call("GET", "/api/v1/book/ACME?depth=1000", None, None, "");
    assert_eq!(st, 200);
    (
        v["rpt_seq"].as_u64().unwrap(),
        levels(&v["bids"]),
        levels(&v["asks"]),
    )
}

fn wait_applied(s: &Server) {
    let md = s.market_data_counters().unwrap();
    let deadline = Instant::now() + T;
    while md.applied_seq.load(Ordering::Acquire) < s.counters.last_seq.load(Ordering::Acquire) {
        assert!(Instant::now() < deadline, "market data did not catch up");
        std::thread::yield_now();
    }
}

#[test]
fn books_from_snapshot_and_deltas_equal_rest_and_engine_for_early_and_late_subscribers() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path());
    let s = start(cfg.clone());
    let api = Api::of(&s);
    let mut early = Subscriber::start(&s, false);
    let mut late: Option<Subscriber> = None;
    const N: usize = 300;
    let progress = Progress::default();
    std::thread::scope(|sc| {
        let mut traders = Vec::new();
        for (token, seed) in [(TOKEN_A, 7), (TOKEN_B, 11)] {
            let (api, p) = (&api, &progress);
            traders.push(sc.spawn(move || rest_trader(api, token, seed, N, p)));
        }
        let (s, p) = (&s, &progress);
        traders.push(sc.spawn(move || fix_trader(s, 13, N, p)));
        while !traders.iter().all(|t| t.is_finished()) {
            early.drain();
            match &mut late {
                Some(l) => l.drain(),
                None if p.halfway.load(Ordering::Acquire) == traders.len() => {
                    late = Some(Subscriber::start(s, true));
                    p.joined.store(true, Ordering::Release);
                }
                None => {}
            }
        }
    });
    let mut late = late.expect("the late subscriber joined");
    wait_applied(&s);
    let (rpt_seq, bids, asks) = rest_book(&api);
    let deadline = Instant::now() + T;
    while early.book.rpt_seq != Some(rpt_seq) || late.book.rpt_seq != Some(rpt_seq) {
        early.drain();
        late.drain();
        assert!(
            Instant::now() < deadline,
            "the subscribers did not reach RptSeq {rpt_seq}: {:?} {:?}",
            early.book.rpt_seq,
            late.book.rpt_seq
        );
    }
    for (who, sub) in [("early", &early), ("late", &late)] {
        let b = &sub.book;
        assert_eq!(b.gaps, 0, "{who}: an RptSeq gap");
        assert!(b.snapshots >= 1 && b.deltas > 10, "{who}: {b:?}");
        assert_eq!((&b.bids, &b.asks), (&bids, &asks));
    }
    assert!(
        !bids.is_empty() && !asks.is_empty(),
        "a book worth comparing"
    );
    // The late subscriber's ticker follows the best levels.
    let deadline = Instant::now() + T;
    loop {
        late.drain();
        let best = |side: &Side_, high: bool| {
            let l = if high {
                side.iter().next_back()
            } else {
                side.iter().next()
            };
            l.map(|(p, (q, _))| json!({"price": p, "quantity": q}))
        };
        if let Some(t) = &late.ticker {
            let want = (best(&bids, true).unwrap(), best(&asks, false).unwrap());
            if (t["best_bid"].clone(), t["best_ask"].clone()) == want {
                assert!(t["last_trade"]["trade_id"].as_u64().is_some(), "{t}");
                break;
            }
        }
        assert!(Instant::now() < deadline, "ticker {:?}", late.ticker);
    }
    s.shutdown().unwrap();

    // The engine's book, by a full replay of the journal.
    let (node, _) = server::recover(&Arc::new(cfg.clone()), dir.path(), false, |_| {}).unwrap();
    let def = cfg.api_config().instruments[0];
    for (side, want) in [(Side::Buy, &bids), (Side::Sell, &asks)] {
        let mut engine: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for o in node.exchange.engine().resting(0, side) {
            let l = engine
                .entry(http_gateway::json::price(o.price, &def))
                .or_default();
            l.0 += o.qty;
            l.1 += 1;
        }
        let engine: Side_ = engine
            .into_iter()
            .map(|(p, (q, n))| (p, (q.to_string(), n)))
            .collect();
        assert_eq!(&engine, want, "{side:?}");
    }
}

/// Reads order events until `until` holds for the ones read so far.
fn events_until(ws: &mut Ws, until: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let mut got = Vec::new();
    let deadline = Instant::now() + T;
    while !until(&got) {
        if let Some(v) = ws.try_next() {
            assert_eq!(v["type"], "order", "{v}");
            got.push(v);
        }
        assert!(Instant::now() < deadline, "events so far: {got:?}");
    }
    got
}

fn has(events: &[Value], what: &str, id: u64) -> bool {
    events
        .iter()
        .any(|e| e["event"] == what && e["order"]["order_id"] == id)
}

#[test]
fn a_keys_orders_channel_shows_its_own_events_and_never_another_keys() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(config(dir.path()));
    let api = Api::of(&s);
    let mut wa = Ws::connect(&s);
    let mut wb = Ws::connect(&s);
    for (ws, token, name) in [(&mut wa, TOKEN_A, "alice"), (&mut wb, TOKEN_B, "bob")] {
        ws.send(&json!({"op": "auth", "token": token}).to_string());
        assert_eq!(ws.next(), json!({"type": "authenticated", "key": name}));
        ws.send(r#"{"op":"subscribe","channel":"orders"}"#);
        assert_eq!(
            ws.next(),
            json!({"type": "subscribed", "channel": "orders"})
        );
    }
    let a1 = api.accepted(TOKEN_A,
        json!({"symbol":"ACME","side":"sell","price":"10.25","quantity":"10","client_order_id":"a-1"}),
    )["order_id"]
        .as_u64()
        .unwrap();
    let a2 = api.accepted(
        TOKEN_A,
        json!({"symbol":"ACME","side":"buy","price":"9","quantity":"1"}),
    )["order_id"]
        .as_u64()
        .unwrap();
    let b1 = api.accepted(
        TOKEN_B,
        json!({"symbol":"ACME","side":"buy","price":"10.30","quantity":"4","time_in_force":"ioc"}),
    );
    assert_eq!(b1["status"], "filled", "{b1}");
    let b1 = b1["order_id"].as_u64().unwrap();
    let (st, _, _) = api.call(
        "DELETE",
        &format!("/api/v1/orders/{a2}"),
        Some(TOKEN_A),
        None,
        "",
    );
    assert_eq!(st, 200);
    let b2 = api.accepted(
        TOKEN_B,
        json!({"symbol":"ACME","side":"buy","price":"9.5","quantity":"2"}),
    )["order_id"]
        .as_u64()
        .unwrap();
    // Alice's last order: every event before it has arrived once it has.
    let a3 = api.accepted(
        TOKEN_A,
        json!({"symbol":"BOLT","side":"buy","price":"5","quantity":"3"}),
    )["order_id"]
        .as_u64()
        .unwrap();

    let ea = events_until(&mut wa, |e| has(e, "new", a3));
    assert!(has(&ea, "new", a1) && has(&ea, "new", a2), "{ea:?}");
    assert!(has(&ea, "canceled", a2), "{ea:?}");
    let fill = ea
        .iter()
        .find(|e| e["event"] == "fill")
        .unwrap_or_else(|| panic!("no fill in {ea:?}"));
    assert_eq!(fill["order"]["order_id"], a1);
    assert_eq!(fill["order"]["client_order_id"], "a-1");
    assert_eq!(fill["order"]["status"], "partially_filled");
    assert_eq!(fill["order"]["fills"][0]["quantity"], "4");
    assert_eq!(fill["order"]["fills"][0]["price"], "10.25");
    assert_eq!(fill["order"]["fills"][0]["liquidity"], "maker");
    for e in &ea {
        let id = e["order"]["order_id"].as_u64().unwrap();
        assert!([a1, a2, a3].contains(&id), "alice saw {e}");
    }
    let eb = events_until(&mut wb, |e| has(e, "new", b2));
    assert!(has(&eb, "fill", b1), "{eb:?}");
    for e in &eb {
        let id = e["order"]["order_id"].as_u64().unwrap();
        assert!([b1, b2].contains(&id), "bob saw {e}");
    }
    s.shutdown().unwrap();
}

#[test]
fn bad_messages_get_errors_and_the_connection_lives_on() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(config(dir.path()));
    let mut ws = Ws::connect(&s);
    let cases = [
        ("not json", "invalid_json"),
        ("[1,2]", "invalid_message"),
        (r#"{"channel":"book"}"#, "missing_field"),
        (r#"{"op":"dance"}"#, "unknown_op"),
        (
            r#"{"op":"subscribe","channel":"gossip","symbol":"ACME"}"#,
            "unknown_channel",
        ),
        (
            r#"{"op":"subscribe","channel":"book","symbol":"NOPE"}"#,
            "unknown_symbol",
        ),
        (r#"{"op":"subscribe","channel":"book"}"#, "missing_field"),
        (
            r#"{"op":"subscribe","channel":"book","symbol":"ACME","depth":5}"#,
            "unknown_field",
        ),
        (
            r#"{"op":"subscribe","channel":"book","symbol":5}"#,
            "invalid_field",
        ),
        (
            r#"{"op":"subscribe","channel":"orders"}"#,
            "unauthenticated",
        ),
        (
            r#"{"op":"unsubscribe","channel":"trades","symbol":"ACME"}"#,
            "not_subscribed",
        ),
        (r#"{"op":"auth","token":"rk_nobody"}"#, "unauthenticated"),
        (r#"{"op":"auth"}"#, "missing_field"),
    ];
    for (text, code) in cases {
        ws.send(text);
        let v = ws.next();
        assert_eq!(
            (v["type"].as_str(), v["code"].as_str()),
            (Some("error"), Some(code)),
            "{text}: {v}"
        );
        assert!(!v["message"].as_str().unwrap().is_empty());
    }
    ws.ws.send(Message::binary(vec![1u8, 2, 3])).unwrap();
    assert_eq!(ws.next()["code"], "invalid_message");
    // Still served.
    ws.send(r#"{"op":"subscribe","channel":"trades","symbol":"BOLT"}"#);
    assert_eq!(ws.next()["type"], "subscribed");
    ws.send(r#"{"op":"subscribe","channel":"book","symbol":"ACME"}"#);
    assert_eq!(ws.next()["type"], "subscribed");
    let snap = ws.next();
    assert_eq!(
        (snap["type"].as_str(), snap["symbol"].as_str()),
        (Some("book_snapshot"), Some("ACME"))
    );
    ws.send(r#"{"op":"unsubscribe","channel":"trades","symbol":"BOLT"}"#);
    assert_eq!(
        ws.next(),
        json!({"type": "unsubscribed", "channel": "trades", "symbol": "BOLT"})
    );

    // A message over the limit closes the connection with 1009.
    let mut big = Ws::connect(&s);
    big.send(&format!(
        r#"{{"op":"auth","token":"{}"}}"#,
        "x".repeat(8 << 10)
    ));
    assert_eq!(big.next()["code"], 1009);
    // Guessing tokens: closed with 1008 after a few.
    let mut guess = Ws::connect(&s);
    let close = loop {
        guess.send(r#"{"op":"auth","token":"rk_guess"}"#);
        let v = guess.next();
        if v["type"] == "close" {
            break v;
        }
        assert_eq!(v["code"], "unauthenticated");
    };
    assert_eq!(close["code"], 1008, "{close}");
    s.shutdown().unwrap();
}

/// `[http] ws_connections_max`: an upgrade beyond it is answered 503 (the others live on), and
/// `/metrics` counts it with the open connections; the event loop's latency histogram counts
/// the batches that traded, the FIX gauges the session logged on.
#[test]
fn ws_connections_max_refuses_upgrades_beyond_it_and_metrics_count_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    let text = "http_listen = \"127.0.0.1:0\"\n[http]\nws_connections_max = 2\nws_buffer = 64\n";
    let http = Config::from_toml(text).expect("config").http;
    assert_eq!(
        http.as_ref().map(|h| (h.ws_connections_max, h.ws_buffer)),
        Some((2, 64))
    );
    cfg.http = http;
    let s = start(cfg);
    let api = Api::of(&s);
    let mut a = Ws::connect(&s);
    let _b = Ws::connect(&s);
    let addr = s.http_addr().unwrap();
    let refused = tungstenite::client(format!("ws://{addr}/ws"), TcpStream::connect(addr).unwrap());
    match refused {
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(r))) => {
            assert_eq!(r.status().as_u16(), 503)
        }
        Err(e) => panic!("upgrade beyond ws_connections_max: {e}"),
        Ok(_) => panic!("upgrade beyond ws_connections_max accepted"),
    }
    a.send(r#"{"op":"subscribe","channel":"ticker","symbol":"ACME"}"#);
    assert_eq!(a.next()["type"], "subscribed");
    api.accepted(TOKEN_A,
        json!({"symbol": "ACME", "side": "buy", "type": "limit", "price": "10.40", "quantity": "5"}),
    );
    let mut fix = FixClient::connect(s.addr, "CLIENT3", "RIALTO", 1).unwrap();
    fix.logon(30, true).unwrap();
    fix.expect("A", T).unwrap();
    // The FIX gauges are updated each second.
    let deadline = Instant::now() + T;
    let metrics = loop {
        let m = api
            .agent
            .get(format!("{}/metrics", api.base))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap();
        if m.lines().any(|l| l == "rialto_fix_sessions_logged_on 1") {
            break m;
        }
        assert!(
            Instant::now() < deadline,
            "no FIX session in /metrics:\n{m}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let value = |name: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /metrics:\n{metrics}"))
    };
    assert_eq!(value("rialto_fix_connections_open"), 1.0);
    // The snapshot replica follows the journal (periodic snapshots, the default): at most the
    // records journaled behind.
    assert!(value("rialto_snapshot_replica_lag_records") <= value("rialto_journal_last_seq"));
    assert_eq!(value("rialto_ws_connections_open"), 2.0);
    assert_eq!(value("rialto_ws_refused_connections_total"), 1.0);
    assert_eq!(value("rialto_ws_connections_total"), 2.0);
    assert!(value("rialto_loop_iteration_seconds_count") >= 1.0);
    assert!(value("rialto_journal_commit_seconds_count") >= 1.0);
    assert_eq!(
        value("rialto_loop_iteration_seconds_bucket{le=\"+Inf\"}"),
        value("rialto_loop_iteration_seconds_count")
    );
    assert_eq!(
        value(
            "rialto_http_request_duration_seconds_count{route=\"/api/v1/orders\",method=\"POST\"}"
        ),
        1.0
    );
}
