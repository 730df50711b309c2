//! Order types II at the REST and WebSocket edge over real sockets on 127.0.0.1: stop and
//! stop-limit orders entered, shown, triggered (the `triggered` event) and filled; an iceberg
//! whose book shows only its peak, refilled after a fill; a GTD order that expires when the
//! server's clock passes its expire time, and one refused with its expire time past; each bad
//! field refused with its 4xx JSON error; a call auction driven through the operator's
//! endpoint: crossing orders rest, the REST and WebSocket tickers and the operator's state show
//! the indicative uncross, opening uncrosses at one price, market, IOC and FOK orders during the
//! call are refused; a breaker's reopening call set through the operator's endpoint.

use crate::api_common::{self, start, Api, TOKEN_A, TOKEN_B};
use crate::ws_api::Ws;
use serde_json::{json, Value};
use server::Server;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);
const OPS: &str = "op_test_token";

/// A server with alice's and bob's keys and an operator.
fn server(dir: &std::path::Path) -> Server {
    let mut cfg = api_common::config(dir, 100_000);
    cfg.operators = vec![http_gateway::OperatorDef {
        name: "ops".into(),
        sha256: http_gateway::keys::sha256(OPS),
    }];
    start(cfg)
}

fn get(api: &Api, token: Option<&str>, path: &str) -> Value {
    let (st, v, _) = api.call("GET", path, token, None, "");
    assert_eq!(st, 200, "{path}: {v}");
    v
}

fn order_path(o: &Value) -> String {
    format!("/api/v1/orders/{}", o["order_id"])
}

/// Polls `read` until `done` holds for what it read (within `T`); the last read.
fn until(what: &str, mut read: impl FnMut() -> Value, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + T;
    loop {
        let v = read();
        if done(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: still {v}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A WebSocket on `token`'s orders channel.
fn orders_ws(s: &Server, token: &str) -> Ws {
    let mut ws = Ws::connect(s);
    ws.send(&json!({"op": "auth", "token": token}).to_string());
    assert_eq!(ws.next()["type"], "authenticated");
    ws.send(r#"{"op":"subscribe","channel":"orders"}"#);
    assert_eq!(
        ws.next(),
        json!({"type": "subscribed", "channel": "orders"})
    );
    ws
}

/// Reads order events of order `id` from `ws` until one is `event`; the events of `id` read.
fn events_until(ws: &mut Ws, id: &Value, event: &str) -> Vec<Value> {
    let deadline = Instant::now() + T;
    let mut got = Vec::new();
    loop {
        if let Some(v) = ws.try_next() {
            assert_eq!(v["type"], "order", "{v}");
            if v["order"]["order_id"] == *id {
                let done = v["event"] == event;
                got.push(v);
                if done {
                    return got;
                }
            }
        }
        assert!(Instant::now() < deadline, "no {event} event: {got:?}");
    }
}

#[test]
fn stop_and_stop_limit_orders_rest_unseen_trigger_and_fill() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let api = Api::of(&s);
    let mut ws = orders_ws(&s, TOKEN_A);

    // A stop-limit buy: waits for a trade at 10.10 or above, then buys up to 10.20.
    let stop = api.accepted(
        TOKEN_A,
        json!({"symbol": "ACME", "side": "buy", "type": "stop_limit", "price": "10.20",
               "stop_price": "10.10", "quantity": "5", "client_order_id": "stop-1"}),
    );
    assert_eq!(
        (
            stop["type"].as_str(),
            stop["status"].as_str(),
            stop["price"].as_str(),
            stop["stop_price"].as_str(),
            stop["triggered"].as_bool(),
            stop["time_in_force"].as_str()
        ),
        (
            Some("stop_limit"),
            Some("new"),
            Some("10.2"),
            Some("10.1"),
            Some(false),
            Some("gtc")
        ),
        "{stop}"
    );
    let id = &stop["order_id"];
    let shown = get(&api, Some(TOKEN_A), &order_path(&stop));
    assert_eq!(
        (shown["type"].as_str(), shown["stop_price"].as_str()),
        (Some("stop_limit"), Some("10.1")),
        "{shown}"
    );
    let open = get(&api, Some(TOKEN_A), "/api/v1/orders?status=open");
    assert_eq!(open["orders"][0]["stop_price"], "10.1", "{open}");

    // Replaced: a new quantity with the same stop price; another stop price is refused.
    let patch = |body: Value| {
        let (st, v, _) = api.call(
            "PATCH",
            &order_path(&stop),
            Some(TOKEN_A),
            None,
            &body.to_string(),
        );
        (st, v)
    };
    let (st, v) = patch(json!({"symbol": "ACME", "quantity": "6", "stop_price": "10.10"}));
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        (v["quantity"].as_str(), v["stop_price"].as_str()),
        (Some("6"), Some("10.1"))
    );
    let (st, v) = patch(json!({"symbol": "ACME", "quantity": "6", "stop_price": "10.20"}));
    assert_eq!(
        (st, v["code"].as_str()),
        (422, Some("stop_price_not_replaceable")),
        "{v}"
    );
    assert!(v["message"]
        .as_str()
        .unwrap()
        .starts_with("stop_price cannot be changed"));
    let (st, v) = patch(json!({"quantity": "7", "stop_price": "10.10"}));
    assert_eq!(
        (st, v["code"].as_str()),
        (400, Some("missing_field")),
        "{v}"
    );

    // Not in the book until it triggers.
    api.accepted(
        TOKEN_B,
        json!({"symbol": "ACME", "side": "sell", "price": "10.10", "quantity": "4"}),
    );
    let book = until(
        "the book with bob's ask",
        || get(&api, None, "/api/v1/book/ACME"),
        |b| b["asks"] == json!([["10.1", "4", 1]]),
    );
    assert_eq!(book["bids"], json!([]), "a pending stop is in no book");

    // A trade at 10.10 triggers it: it buys the 3 left at 10.10 and rests 3 at 10.20.
    let taker = api.accepted(
        TOKEN_A,
        json!({"symbol": "ACME", "side": "buy", "price": "10.10", "quantity": "1"}),
    );
    assert_eq!(taker["status"], "filled", "{taker}");
    assert!(taker.get("stop_price").is_none(), "{taker}");
    let events = events_until(&mut ws, id, "fill");
    let triggered = events
        .iter()
        .find(|e| e["event"] == "triggered")
        .unwrap_or_else(|| panic!("no triggered event: {events:?}"));
    assert_eq!(triggered["order"]["triggered"], true, "{triggered}");
    assert_eq!(triggered["order"]["type"], "stop_limit");
    assert_eq!(triggered["order"]["stop_price"], "10.1");
    let fill = events.last().unwrap();
    assert_eq!(fill["order"]["fills"][0]["price"], "10.1", "{fill}");
    assert_eq!(fill["order"]["fills"][0]["quantity"], "3");
    assert_eq!(fill["order"]["fills"][0]["liquidity"], "taker");
    let now = get(&api, Some(TOKEN_A), &order_path(&stop));
    assert_eq!(
        (
            now["status"].as_str(),
            now["filled_quantity"].as_str(),
            now["type"].as_str(),
            now["stop_price"].as_str(),
            now["triggered"].as_bool()
        ),
        (
            Some("partially_filled"),
            Some("3"),
            Some("stop_limit"),
            Some("10.1"),
            Some(true)
        ),
        "{now}"
    );
    until(
        "the triggered stop-limit in the book",
        || get(&api, None, "/api/v1/book/ACME"),
        |b| b["bids"] == json!([["10.2", "3", 1]]),
    );

    // Its rest fills when bob sells into it.
    api.accepted(
        TOKEN_B,
        json!({"symbol": "ACME", "side": "sell", "price": "10.20", "quantity": "3"}),
    );
    let last = events_until(&mut ws, id, "fill").pop().unwrap();
    assert_eq!(
        (
            last["order"]["status"].as_str(),
            last["order"]["fills"][0]["liquidity"].as_str()
        ),
        (Some("filled"), Some("maker")),
        "{last}"
    );

    // A stop market sell: triggered by a trade at 9.90 or below, it sells at the market.
    let stop_market = api.accepted(
        TOKEN_A,
        json!({"symbol": "ACME", "side": "sell", "type": "stop", "stop_price": "9.90",
               "quantity": "2"}),
    );
    assert_eq!(
        (
            stop_market["type"].as_str(),
            stop_market["price"].clone(),
            stop_market["stop_price"].as_str(),
            stop_market["time_in_force"].as_str()
        ),
        (Some("stop"), Value::Null, Some("9.9"), Some("gtc")),
        "{stop_market}"
    );
    for (px, qty) in [("9.90", "1"), ("9.80", "2")] {
        api.accepted(
            TOKEN_B,
            json!({"symbol": "ACME", "side": "buy", "price": px, "quantity": qty}),
        );
    }
    api.accepted(
        TOKEN_A,
        json!({"symbol": "ACME", "side": "sell", "price": "9.90", "quantity": "1"}),
    );
    let events = events_until(&mut ws, &stop_market["order_id"], "fill");
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["new", "triggered", "fill"], "{events:?}");
    let fill = events.last().unwrap();
    assert_eq!(
        (
            fill["order"]["status"].as_str(),
            fill["order"]["fills"][0]["price"].as_str(),
            fill["order"]["type"].as_str()
        ),
        (Some("filled"), Some("9.8"), Some("stop")),
        "{fill}"
    );
    let done = get(&api, Some(TOKEN_A), &order_path(&stop_market));
    assert_eq!(
        (
            done["type"].as_str(),
            done["stop_price"].as_str(),
            done["triggered"].as_bool()
        ),
        (Some("stop"), Some("9.9"), Some(true)),
        "a finished stop is still shown as one: {done}"
    );
    s.shutdown().unwrap();
}

#[test]
fn an_iceberg_shows_only_its_peak_in_the_book_and_refills_it() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let api = Api::of(&s);
    // Every ask update on the WebSocket book, from before the iceberg to the end.
    let mut book_ws = Ws::connect(&s);
    book_ws.send(r#"{"op":"subscribe","channel":"book","symbol":"ACME"}"#);
    assert_eq!(book_ws.next()["type"], "subscribed");
    let ice = api.accepted(
        TOKEN_B,
        json!({"symbol": "ACME", "side": "sell", "price": "10.50", "quantity": "10",
               "display_quantity": "3"}),
    );
    assert_eq!(
        (
            ice["display_quantity"].as_str(),
            ice["type"].as_str(),
            ice["remaining_quantity"].as_str()
        ),
        (Some("3"), Some("limit"), Some("10")),
        "{ice}"
    );
    // The book once it has changed past `after` (a record's changes come in whole).
    let depth = |after: u64, want: Value| {
        until(
            "the book",
            || get(&api, None, "/api/v1/book/ACME?depth=5"),
            |b| b["rpt_seq"].as_u64().unwrap() > after && b["asks"] == want,
        )["rpt_seq"]
            .as_u64()
            .unwrap()
    };
    let at = depth(0, json!([["10.5", "3", 1]]));

    // Alice takes the peak: the book shows a new peak of 3, 7 remain.
    let taker = api.accepted(
        TOKEN_A,
        json!({"symbol": "ACME", "side": "buy", "price": "10.50", "quantity": "3"}),
    );
    assert_eq!(taker["status"], "filled", "{taker}");
    let at = depth(at, json!([["10.5", "3", 1]]));
    let now = get(&api, Some(TOKEN_B), &order_path(&ice));
    assert_eq!(
        (
            now["remaining_quantity"].as_str(),
            now["display_quantity"].as_str()
        ),
        (Some("7"), Some("3")),
        "{now}"
    );
    // 5 more: the peak of 3, then 2 of the next peak of 3 (the last 3 refilled from the 4
    // hidden): 2 remain, 1 shown and 1 hidden.
    api.accepted(
        TOKEN_A,
        json!({"symbol": "ACME", "side": "buy", "price": "10.50", "quantity": "5"}),
    );
    depth(at, json!([["10.5", "1", 1]]));
    let now = get(&api, Some(TOKEN_B), &order_path(&ice));
    assert_eq!(now["remaining_quantity"], "2", "{now}");
    let ticker = get(&api, None, "/api/v1/ticker/ACME");
    assert_eq!(
        ticker["best_ask"],
        json!({"price": "10.5", "quantity": "1"}),
        "{ticker}"
    );

    // The WebSocket book never showed more than the peak either.
    let mut seen = Vec::new();
    let deadline = Instant::now() + T;
    while seen.last().map(String::as_str) != Some("1") {
        if let Some(v) = book_ws.try_next() {
            for l in v["asks"].as_array().into_iter().flatten() {
                seen.push(l[1].as_str().unwrap().to_owned());
            }
        }
        assert!(Instant::now() < deadline, "asks seen: {seen:?}");
    }
    assert!(
        seen.iter().all(|q| q.parse::<u64>().unwrap() <= 3),
        "{seen:?}"
    );
    s.shutdown().unwrap();
}

#[test]
fn a_gtd_order_expires_when_the_clock_passes_its_expire_time() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let api = Api::of(&s);
    let mut ws = orders_ws(&s, TOKEN_A);
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    // Whole seconds: the answer shows the time as it was given.
    let at_ns = (now_ns / 1_000_000_000 + 2) * 1_000_000_000;
    let at = http_gateway::json::rfc3339(at_ns);
    let gtd = api.accepted(
        TOKEN_A,
        json!({"symbol": "ACME", "side": "buy", "price": "9.00", "quantity": "1",
               "time_in_force": "gtd", "expire_time": at}),
    );
    assert_eq!(
        (
            gtd["time_in_force"].as_str(),
            gtd["expire_time"].as_str(),
            gtd["status"].as_str()
        ),
        (Some("gtd"), Some(at.as_str()), Some("new")),
        "{gtd}"
    );
    let shown = get(&api, Some(TOKEN_A), &order_path(&gtd));
    assert_eq!(shown["expire_time"], at.as_str(), "{shown}");
    // The event, made by the first record (a clock tick) at or after its expire time.
    let expired = events_until(&mut ws, &gtd["order_id"], "expired");
    let expired = &expired.last().unwrap()["order"];
    assert_eq!(
        (
            expired["status"].as_str(),
            expired["remaining_quantity"].as_str(),
            expired["expire_time"].as_str()
        ),
        (Some("expired"), Some("0"), Some(at.as_str())),
        "{expired}"
    );
    assert!(
        expired["updated_ns"].as_u64().unwrap() >= at_ns,
        "expired at or after its time: {expired}"
    );
    let shown = get(&api, Some(TOKEN_A), &order_path(&gtd));
    assert_eq!(shown["status"], "expired", "{shown}");

    // One whose time has passed (by the server's clock): refused.
    let past = http_gateway::json::rfc3339(now_ns - 60_000_000_000);
    let (st, v) = api.post_order(
        TOKEN_A,
        &json!({"symbol": "ACME", "side": "buy", "price": "9.00", "quantity": "1",
                "time_in_force": "gtd", "expire_time": past}),
    );
    assert_eq!(
        (st, v["code"].as_str()),
        (422, Some("expire_time_passed")),
        "{v}"
    );
    assert_eq!(v["message"], "expire time already passed");
    s.shutdown().unwrap();
}

#[test]
fn each_bad_field_is_refused_with_its_4xx_json_error() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let api = Api::of(&s);
    let base = json!({"symbol": "ACME", "side": "buy", "quantity": "5"});
    let with = |extra: Value| {
        let mut b = base.clone();
        for (k, v) in extra.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };
    // (body, status, code, words the message holds)
    let cases = [
        (json!({"type": "stop"}), 400, "missing_field", "stop_price"),
        (
            json!({"type": "stop_limit", "stop_price": "10"}),
            400,
            "missing_field",
            "price",
        ),
        (
            json!({"type": "stop", "stop_price": "10", "price": "10"}),
            400,
            "invalid_field",
            "price",
        ),
        (
            json!({"price": "10", "stop_price": "10"}),
            400,
            "invalid_field",
            "stop_price",
        ),
        (
            json!({"type": "stop", "stop_price": "10.001"}),
            400,
            "invalid_stop_price",
            "stop_price 10.001",
        ),
        (
            json!({"type": "stop", "stop_price": "0"}),
            400,
            "invalid_stop_price",
            "stop_price",
        ),
        (
            json!({"type": "stop", "stop_price": 10}),
            400,
            "invalid_field",
            "stop_price",
        ),
        (
            json!({"type": "stop_limit", "price": "10", "stop_price": "10", "post_only": true}),
            400,
            "invalid_stop_price",
            "stop price",
        ),
        (
            json!({"type": "trailing_stop"}),
            400,
            "invalid_type",
            "type",
        ),
        (
            json!({"price": "10", "display_quantity": "0"}),
            400,
            "invalid_display_quantity",
            "display_quantity",
        ),
        (
            json!({"price": "10", "display_quantity": "1.5"}),
            400,
            "invalid_display_quantity",
            "display_quantity",
        ),
        (
            json!({"type": "market", "display_quantity": "1"}),
            400,
            "invalid_display_quantity",
            "display quantity",
        ),
        (
            json!({"price": "10", "time_in_force": "gtd"}),
            400,
            "missing_field",
            "expire_time",
        ),
        (
            json!({"price": "10", "expire_time": "2099-01-01T00:00:00Z"}),
            400,
            "invalid_field",
            "expire_time",
        ),
        (
            json!({"price": "10", "time_in_force": "gtd", "expire_time": "tomorrow"}),
            400,
            "invalid_expire_time",
            "expire_time",
        ),
        (
            json!({"price": "10", "time_in_force": "gtd", "expire_time": "1970-01-01T00:00:00Z"}),
            400,
            "invalid_expire_time",
            "expire_time",
        ),
        (
            json!({"price": "10", "time_in_force": "gtx"}),
            400,
            "invalid_time_in_force",
            "gtd",
        ),
    ];
    for (extra, status, code, words) in cases {
        let body = with(extra);
        let (st, v) = api.post_order(TOKEN_A, &body);
        assert_eq!(
            (st, v["code"].as_str()),
            (status, Some(code)),
            "{body}: {v}"
        );
        let message = v["message"].as_str().unwrap();
        assert!(message.contains(words), "{body}: {message:?}");
    }
    // Nothing of it was accepted.
    let open = get(&api, Some(TOKEN_A), "/api/v1/orders?status=open");
    assert_eq!(open["orders"], json!([]));
    s.shutdown().unwrap();
}

#[test]
fn a_call_auction_collects_orders_shows_the_indicative_and_uncrosses_at_one_price() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path());
    let api = Api::of(&s);
    let mut ticker_ws = Ws::connect(&s);
    ticker_ws.send(r#"{"op":"subscribe","channel":"ticker","symbol":"ACME"}"#);
    assert_eq!(ticker_ws.next()["type"], "subscribed");
    assert_eq!(ticker_ws.next()["status"], "open");
    let mut bob_ws = orders_ws(&s, TOKEN_B);
    let status = |to: &str| {
        let (st, v, _) = api.call(
            "POST",
            "/admin/v1/instruments/ACME/status",
            Some(OPS),
            None,
            &json!({ "status": to }).to_string(),
        );
        assert_eq!(st, 200, "{v}");
        assert_eq!(v["instrument"]["status"], to, "{v}");
    };
    status("preopen");
    let ticker = until(
        "the ticker in preopen",
        || get(&api, None, "/api/v1/ticker/ACME"),
        |t| t["status"] == "preopen",
    );
    assert_eq!(ticker["indicative"], Value::Null, "{ticker}");

    // Crossing orders rest; nothing trades.
    let buy = api.accepted(
        TOKEN_A,
        json!({"symbol": "ACME", "side": "buy", "price": "10.05", "quantity": "10"}),
    );
    let sells: Vec<Value> = [("10.00", "6"), ("10.05", "4")]
        .into_iter()
        .map(|(px, qty)| {
            api.accepted(
                TOKEN_B,
                json!({"symbol": "ACME", "side": "sell", "price": px, "quantity": qty}),
            )
        })
        .collect();
    for o in std::iter::once(&buy).chain(&sells) {
        assert_eq!(
            (o["status"].as_str(), o.get("fills")),
            (Some("new"), None),
            "{o}"
        );
    }
    // Market, IOC and FOK orders are refused during the call.
    for extra in [
        json!({"type": "market"}),
        json!({"price": "10.05", "time_in_force": "ioc"}),
        json!({"price": "10.05", "time_in_force": "fok"}),
    ] {
        let mut body = json!({"symbol": "ACME", "side": "buy", "quantity": "1"});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (st, v) = api.post_order(TOKEN_A, &body);
        assert_eq!((st, v["code"].as_str()), (422, Some("auction_call")), "{v}");
    }

    // The indicative uncross: 10 at 10.05 (6 at 10.00 is less volume), on REST and WS.
    let want = json!({"price": "10.05", "quantity": "10"});
    let ticker = until(
        "the indicative on the REST ticker",
        || get(&api, None, "/api/v1/ticker/ACME"),
        |t| t["indicative"] == want,
    );
    assert_eq!(ticker["status"], "preopen");
    let state = get(&api, Some(OPS), "/admin/v1/state");
    assert_eq!(state["instruments"][0]["indicative"], want, "{state}");
    let book = get(&api, None, "/api/v1/book/ACME");
    assert_eq!(book["bids"], json!([["10.05", "10", 1]]), "{book}");
    assert_eq!(
        book["asks"],
        json!([["10", "6", 1], ["10.05", "4", 1]]),
        "{book}"
    );
    let deadline = Instant::now() + T;
    let mut tickers = Vec::new();
    while !tickers.iter().any(|t: &Value| t["indicative"] == want) {
        if let Some(t) = ticker_ws.try_next() {
            tickers.push(t);
        }
        assert!(Instant::now() < deadline, "WS tickers: {tickers:?}");
    }
    assert!(
        tickers.iter().any(|t| t["status"] == "preopen"),
        "the status change came as a ticker: {tickers:?}"
    );

    // Opening uncrosses at one price: every fill at 10.05, both sides filled.
    status("open");
    let bought = until(
        "alice's buy filled",
        || get(&api, Some(TOKEN_A), &order_path(&buy)),
        |o| o["status"] == "filled",
    );
    assert_eq!(bought["average_price"], "10.05", "{bought}");
    for o in &sells {
        let sold = get(&api, Some(TOKEN_B), &order_path(o));
        assert_eq!(
            (sold["status"].as_str(), sold["average_price"].as_str()),
            (Some("filled"), Some("10.05")),
            "{sold}"
        );
        let fills = events_until(&mut bob_ws, &o["order_id"], "fill");
        let fill = &fills.last().unwrap()["order"]["fills"][0];
        assert_eq!(fill["price"], "10.05", "{fill}");
    }
    let ticker = until(
        "the ticker after the uncross",
        || get(&api, None, "/api/v1/ticker/ACME"),
        |t| t["status"] == "open" && t["last_trade"]["price"] == "10.05",
    );
    assert_eq!(ticker["indicative"], Value::Null, "{ticker}");
    // A breaker that reopens through a call auction of 15 s after its halt.
    let (st, v, _) = api.call(
        "PUT",
        "/admin/v1/instruments/ACME/limits",
        Some(OPS),
        None,
        r#"{"breaker_bps":"500","breaker_window_secs":"60","breaker_halt_secs":"30","breaker_auction_secs":"15"}"#,
    );
    assert_eq!(st, 200, "{v}");
    let state = get(&api, Some(OPS), "/admin/v1/state");
    assert_eq!(
        state["instruments"][0]["breaker"],
        json!({"bps": 500, "window_secs": 60, "halt_secs": 30, "auction_secs": 15}),
        "{state}"
    );
    assert_eq!(state["instruments"][0]["indicative"], Value::Null);
    let (st, v, _) = api.call(
        "PUT",
        "/admin/v1/instruments/ACME/limits",
        Some(OPS),
        None,
        r#"{"breaker_auction_secs":"15"}"#,
    );
    assert_eq!(
        (st, v["code"].as_str()),
        (400, Some("invalid_breaker")),
        "{v}"
    );
    let deadline = Instant::now() + T;
    loop {
        if let Some(t) = ticker_ws.try_next() {
            if t["status"] == "open" && t["indicative"].is_null() {
                break;
            }
        }
        assert!(Instant::now() < deadline, "no open ticker on the WebSocket");
    }
    s.shutdown().unwrap();
}
