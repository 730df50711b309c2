//! What the web dashboard reads, over real sockets: the WebSocket `stats` channel (its history,
//! then a sample a second with the rates, latency and connections the orders imply), trades
//! stamped with their journal time, the page and its files at `/`, and the benchmark runs of
//! `[http] bench_dir`. The page itself is driven in Chromium by `dashboard_browser.rs`.

use crate::api_common;
use crate::ws_api::Ws;

use api_common::{start, Api, TOKEN_A, TOKEN_B};
use fix::client::FixClient;
use serde_json::Value;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const T: Duration = Duration::from_secs(20);

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// Messages until one satisfies `until` (which gets each), within `T`.
fn until(ws: &mut Ws, mut until: impl FnMut(&Value) -> bool) -> Value {
    let deadline = Instant::now() + T;
    loop {
        if let Some(v) = ws.try_next() {
            if until(&v) {
                return v;
            }
        }
        assert!(Instant::now() < deadline, "no such WebSocket message");
    }
}

#[test]
fn the_stats_channel_shows_orders_latency_and_connections_each_second() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(api_common::config(dir.path(), 100_000));
    let api = Api::of(&s);
    let mut ws = Ws::connect(&s);
    ws.send(r#"{"op":"subscribe","channel":"stats"}"#);
    assert_eq!(
        ws.next(),
        serde_json::json!({"type": "subscribed", "channel": "stats"})
    );
    let history = ws.next();
    assert_eq!(history["type"], "stats_history", "{history}");
    assert!(history["samples"].is_array(), "{history}");

    // Orders over FIX and REST, some trading.
    let mut fix = FixClient::connect(s.addr, "CLIENT3", "RIALTO", 1).unwrap();
    fix.logon(30, true).unwrap();
    fix.expect("A", T).unwrap();
    for i in 0..20 {
        let px = format!("10.{:02}", 10 + i % 5);
        crate::common::new_order(&mut fix, &format!("f{i}"), "ACME", "2", &px, "1");
        fix.expect("8", T).unwrap();
    }
    let buy =
        r#"{"symbol":"ACME","side":"buy","price":"10.20","quantity":"8","time_in_force":"ioc"}"#;
    let (st, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_B), None, buy);
    assert_eq!(st, 201, "{v}");
    let mut alice = 0;
    for _ in 0..5 {
        let sell = r#"{"symbol":"BOLT","side":"sell","price":"20.00","quantity":"1"}"#;
        let (st, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_A), None, sell);
        assert_eq!(st, 201, "{v}");
        alice += 1;
    }

    // Samples come once a second; wait for one that has seen everything. Each sample's rates
    // are over its own second, so the orders show as a rate in one of them.
    let (mut orders_rate, mut trades_rate, mut latency, mut last_time) = (0, 0, false, 0);
    let sample = until(&mut ws, |v| {
        assert_eq!(v["type"], "stats", "{v}");
        let t = v["time_ns"].as_u64().unwrap();
        assert!(t > last_time, "samples in time order: {v}");
        last_time = t;
        orders_rate += v["rates"]["orders"].as_u64().unwrap();
        trades_rate += v["rates"]["trades"].as_u64().unwrap();
        if v["ack_latency_us"]["count"].as_u64().unwrap() > 0 {
            let p50 = v["ack_latency_us"]["p50"]
                .as_u64()
                .expect("a P50 when counted");
            let p999 = v["ack_latency_us"]["p999"]
                .as_u64()
                .expect("a P99.9 when counted");
            assert!(p50 <= p999, "{v}");
            latency = true;
        }
        v["totals"]["orders"].as_u64().unwrap() >= 21 + alice
            && v["connections"]["fix_sessions"].as_u64().unwrap() >= 1
            && orders_rate > 0
    });
    assert!(trades_rate > 0, "the buy traded: {sample}");
    assert!(latency, "the event loop's latency was sampled: {sample}");
    assert!(
        sample["totals"]["trades"].as_u64().unwrap() >= 8,
        "{sample}"
    );
    assert!(
        sample["totals"]["reports"].as_u64().unwrap() >= 21 + alice,
        "{sample}"
    );
    assert_eq!(sample["connections"]["ws"], 1, "{sample}");
    assert!(
        sample["connections"]["http"].as_u64().unwrap() >= 1,
        "{sample}"
    );
    assert!(
        sample["journal"]["last_seq"].as_u64().unwrap() >= 26,
        "{sample}"
    );
    assert!(sample["lag"]["market_data_records"].is_u64(), "{sample}");
    assert!(
        sample["lag"]["store_records"].is_u64(),
        "a store runs: {sample}"
    );
    assert_eq!(sample["interval_ms"].as_u64().map(|ms| ms > 0), Some(true));

    // A second subscriber gets the samples so far, oldest first, then the next.
    let mut late = Ws::connect(&s);
    late.send(r#"{"op":"subscribe","channel":"stats"}"#);
    assert_eq!(late.next()["type"], "subscribed");
    let h = late.next();
    let samples = h["samples"].as_array().unwrap();
    assert!(!samples.is_empty(), "{h}");
    let times: Vec<u64> = samples
        .iter()
        .map(|s| s["time_ns"].as_u64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    let next = late.next();
    assert_eq!(next["type"], "stats");
    assert!(next["time_ns"].as_u64().unwrap() > *times.last().unwrap());

    // Mistakes get errors; the connection lives on.
    late.send(r#"{"op":"subscribe","channel":"stats","symbol":"ACME"}"#);
    assert_eq!(
        until(&mut late, |v| v["type"] == "error")["code"],
        "unknown_field"
    );
    late.send(r#"{"op":"unsubscribe","channel":"stats"}"#);
    assert_eq!(
        until(&mut late, |v| v["type"] == "unsubscribed")["channel"],
        "stats"
    );
    late.send(r#"{"op":"unsubscribe","channel":"stats"}"#);
    assert_eq!(
        until(&mut late, |v| v["type"] == "error")["code"],
        "not_subscribed"
    );
    s.shutdown().unwrap();
}

#[test]
fn trades_on_the_websocket_carry_the_journal_time_the_store_has() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(api_common::config(dir.path(), 100_000));
    let api = Api::of(&s);
    let mut ws = Ws::connect(&s);
    ws.send(r#"{"op":"subscribe","channel":"trades","symbol":"ACME"}"#);
    assert_eq!(ws.next()["type"], "subscribed");
    ws.send(r#"{"op":"subscribe","channel":"book","symbol":"ACME"}"#);
    assert_eq!(ws.next()["type"], "subscribed");
    let snap = ws.next();
    assert_eq!(snap["type"], "book_snapshot");
    assert!(snap["time_ns"].is_u64(), "{snap}");
    let t0 = unix_ns();
    let sell = r#"{"symbol":"ACME","side":"sell","price":"10.25","quantity":"3"}"#;
    let (st, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_A), None, sell);
    assert_eq!(st, 201, "{v}");
    let buy = r#"{"symbol":"ACME","side":"buy","price":"10.25","quantity":"3"}"#;
    let (st, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_B), None, buy);
    assert_eq!(st, 201, "{v}");
    let t1 = unix_ns();
    let book = until(&mut ws, |v| v["type"] == "book");
    let bt = book["time_ns"].as_u64().unwrap();
    assert!((t0..=t1).contains(&bt), "{t0} <= {bt} <= {t1}");
    let trade = until(&mut ws, |v| v["type"] == "trade");
    let tt = trade["time_ns"].as_u64().unwrap();
    assert!((t0..=t1).contains(&tt), "{t0} <= {tt} <= {t1}");
    // The store's row of the same trade has the same time.
    let deadline = Instant::now() + T;
    let stored = loop {
        let (st, v, _) = api.call("GET", "/api/v1/trades/ACME?order=desc", None, None, "");
        if st == 200 && !v["trades"].as_array().unwrap().is_empty() {
            break v;
        }
        assert!(Instant::now() < deadline, "the store has no trade: {v}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(stored["trades"][0]["trade_id"], trade["trade_id"]);
    assert_eq!(stored["trades"][0]["time_ns"], trade["time_ns"]);
    s.shutdown().unwrap();
}

/// A GET: status, content type, cache control and body.
fn get(api: &Api, path: &str) -> (u16, String, String, Vec<u8>) {
    let mut r = api
        .agent
        .get(format!("{}{path}", api.base))
        .call()
        .expect("an answer");
    let header = |r: &ureq::http::Response<ureq::Body>, h: &str| {
        r.headers()
            .get(h)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let (ct, cc) = (header(&r, "content-type"), header(&r, "cache-control"));
    let body = r.body_mut().read_to_vec().expect("a body");
    (r.status().as_u16(), ct, cc, body)
}

fn json(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|e| panic!("{e}: {body:?}"))
}

#[test]
fn the_page_its_files_and_the_benchmark_runs_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let runs = tempfile::tempdir().unwrap();
    let csv = "rate_offered,rate_achieved,p50_us\n1000,1000,12.5\n";
    std::fs::write(runs.path().join("sweep-b.csv"), csv).unwrap();
    std::fs::write(runs.path().join("sweep-a.csv"), csv).unwrap();
    std::fs::write(runs.path().join(".hidden.csv"), csv).unwrap();
    std::fs::write(runs.path().join("notes.txt"), "not a run").unwrap();
    std::fs::create_dir(runs.path().join("dir.csv")).unwrap();
    let mut cfg = api_common::config(dir.path(), 100_000);
    cfg.http.as_mut().unwrap().bench_dir = Some(runs.path().to_path_buf());
    let s = start(cfg);
    let api = Api::of(&s);

    let (st, ct, cc, body) = get(&api, "/");
    assert_eq!((st, ct.as_str()), (200, "text/html; charset=utf-8"));
    assert_eq!(cc, "no-cache");
    let page = String::from_utf8(body).unwrap();
    assert!(page.contains("<html"), "{page}");
    if dashboard::BUILT {
        // The page's script and style are served from the binary, cacheable for good.
        let mut assets = 0;
        for part in page.split(['"', '\'']) {
            let Some(asset) = part.strip_prefix("./").filter(|p| p.starts_with("assets/")) else {
                continue;
            };
            let (st, ct, cc, body) = get(&api, &format!("/{asset}"));
            assert_eq!(st, 200, "{asset}");
            assert!(!body.is_empty(), "{asset}");
            assert!(
                ct.starts_with("text/javascript") || ct.starts_with("text/css"),
                "{asset}: {ct}"
            );
            assert_eq!(cc, "public, max-age=31536000, immutable");
            assets += 1;
        }
        assert!(assets >= 1, "the page names its assets: {page}");
    } else {
        assert!(
            page.contains("npm --prefix crates/dashboard/web ci"),
            "{page}"
        );
    }
    let (st, _, _, body) = get(&api, "/assets/nope.js");
    assert_eq!((st, json(&body)["code"].clone()), (404, "not_found".into()));

    let (st, _, _, body) = get(&api, "/api/v1/bench/runs");
    assert_eq!(st, 200);
    assert_eq!(json(&body)["configured"], true);
    let names: Vec<Value> = json(&body)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["bytes"], csv.len());
            assert!(r["modified_ns"].as_u64().unwrap() > 0);
            r["name"].clone()
        })
        .collect();
    assert_eq!(names, ["sweep-a", "sweep-b"]);
    let (st, ct, _, body) = get(&api, "/api/v1/bench/runs/sweep-a");
    assert_eq!((st, ct.as_str()), (200, "text/csv; charset=utf-8"));
    assert_eq!(body, csv.as_bytes());
    for (path, status, code) in [
        ("/api/v1/bench/runs/nope", 404, "unknown_run"),
        ("/api/v1/bench/runs/dir", 404, "unknown_run"),
        ("/api/v1/bench/runs/.hidden", 400, "invalid_name"),
        ("/api/v1/bench/runs/..%2Fsweep-a", 400, "invalid_name"),
        ("/api/v1/bench/runs/notes.txt", 404, "unknown_run"),
    ] {
        let (st, _, _, body) = get(&api, path);
        assert_eq!(
            (st, json(&body)["code"].clone()),
            (status, code.into()),
            "{path}"
        );
    }
    s.shutdown().unwrap();

    // Without a directory: no runs, and a run is 404 bench_off.
    let dir = tempfile::tempdir().unwrap();
    let s = start(api_common::config(dir.path(), 100_000));
    let api = Api::of(&s);
    let (st, _, _, body) = get(&api, "/api/v1/bench/runs");
    assert_eq!(
        (st, json(&body)),
        (200, serde_json::json!({"configured": false, "runs": []}))
    );
    let (st, _, _, body) = get(&api, "/api/v1/bench/runs/sweep-a");
    assert_eq!((st, json(&body)["code"].clone()), (404, "bench_off".into()));
    s.shutdown().unwrap();
}

#[test]
fn throttled_subscriptions_send_the_latest_book_and_every_trade_in_batches() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(api_common::config(dir.path(), 100_000));
    let api = Api::of(&s);
    let mut ws = Ws::connect(&s);
    for bad in [
        r#"{"op":"subscribe","channel":"book","symbol":"ACME","interval_ms":5}"#,
        r#"{"op":"subscribe","channel":"book","symbol":"ACME","interval_ms":"100"}"#,
        r#"{"op":"subscribe","channel":"book","symbol":"ACME","interval_ms":10001}"#,
    ] {
        ws.send(bad);
        assert_eq!(ws.next()["code"], "invalid_field", "{bad}");
    }
    ws.send(r#"{"op":"subscribe","channel":"stats","interval_ms":100}"#);
    assert_eq!(ws.next()["code"], "unknown_field");
    ws.send(r#"{"op":"subscribe","channel":"trades","symbol":"ACME","interval_ms":200}"#);
    assert_eq!(ws.next()["type"], "subscribed");
    ws.send(r#"{"op":"subscribe","channel":"book","symbol":"ACME","interval_ms":200}"#);
    assert_eq!(ws.next()["type"], "subscribed");
    assert_eq!(ws.next()["type"], "book_snapshot");

    // 30 resting sells, then 10 buys that each take one: 40 book changes, 10 trades.
    for i in 0..30 {
        let sell = format!(
            r#"{{"symbol":"ACME","side":"sell","price":"10.{:02}","quantity":"1"}}"#,
            10 + i
        );
        let (st, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_A), None, &sell);
        assert_eq!(st, 201, "{v}");
    }
    for _ in 0..10 {
        let buy = r#"{"symbol":"ACME","side":"buy","price":"10.50","quantity":"1","time_in_force":"ioc"}"#;
        let (st, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_B), None, buy);
        assert_eq!(st, 201, "{v}");
    }
    // The REST book (the market-data replica's, a moment behind the journal) once it has all.
    let deadline = Instant::now() + T;
    let book = loop {
        let (_, book, _) = api.call("GET", "/api/v1/book/ACME?depth=1000", None, None, "");
        if book["asks"].as_array().unwrap().len() == 20 {
            break book;
        }
        assert!(Instant::now() < deadline, "{book}");
        std::thread::sleep(Duration::from_millis(10));
    };

    // Every trade, in order, in `trades` batches; the book only as snapshots, the last one
    // the REST book.
    let (mut trades, mut snapshots, mut last) = (Vec::new(), 0, Value::Null);
    until(&mut ws, |v| {
        match v["type"].as_str().unwrap() {
            "trades" => {
                assert_eq!(v["symbol"], "ACME");
                for t in v["trades"].as_array().unwrap() {
                    assert_eq!(t["type"], "trade", "{t}");
                    trades.push(t["trade_id"].as_u64().unwrap());
                }
            }
            "book_snapshot" => {
                snapshots += 1;
                last = v.clone();
            }
            other => panic!("a throttled subscription sent {other}: {v}"),
        }
        last["rpt_seq"] == book["rpt_seq"] && trades.len() == 10
    });
    assert_eq!(
        (&last["bids"], &last["asks"]),
        (&book["bids"], &book["asks"])
    );
    let first = trades[0];
    assert_eq!(trades, (first..first + 10).collect::<Vec<_>>());
    assert!(snapshots < 40, "{snapshots} snapshots for 40 changes");
    s.shutdown().unwrap();
}
