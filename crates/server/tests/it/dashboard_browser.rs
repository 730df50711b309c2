//! The web dashboard in a real browser: Debian's Chromium, headless, driven by playwright-core
//! (`crates/dashboard/web/e2e/driver.mjs`, one JSON command a line) against a real server.
//! After orders entered over FIX and REST, the page's ladder, tape and 1 s candles show what
//! the REST book and trades say; the exchange view charts non-zero rates; the benchmark view
//! draws the published sweeps; a server restart shows the stale banner, then the page
//! reconnects by itself and follows the new server; the keyboard reaches the views and the
//! selectors; the console stays clean. Screenshots of each view go to target/test-logs/.
//!
//! Needs the dashboard built into the binary (`npm run build` in crates/dashboard/web, which
//! `scripts/test.sh` runs first), Node with that directory's `npm ci`, and /usr/bin/chromium
//! (`.ci/run` installs it; `CHROMIUM` names another).

use crate::api_common;

use api_common::{start, Api, TOKEN_A, TOKEN_B};
use fix::client::FixClient;
use serde_json::{json, Value};
use server::Server;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The browser, behind the driver script.
struct Browser {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
}

impl Browser {
    fn start() -> Browser {
        let web = repo().join("crates/dashboard/web");
        assert!(
            web.join("node_modules/playwright-core").is_dir(),
            "run `npm ci` in {} first (scripts/test.sh does)",
            web.display()
        );
        let mut child = Command::new("node")
            .arg(web.join("e2e/driver.mjs"))
            .current_dir(&web)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs (Node.js 20 or later)");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, answers) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Browser {
            child,
            stdin,
            answers,
        }
    }

    /// One command; its answer (a driver's error fails the test).
    fn cmd(&mut self, c: Value) -> Value {
        writeln!(self.stdin, "{c}").expect("the driver reads");
        let line = self
            .answers
            .recv_timeout(Duration::from_secs(90))
            .unwrap_or_else(|e| panic!("no answer to {c}: {e}"));
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if let Some(e) = v.get("error") {
            panic!("{c}: {e}");
        }
        v
    }

    /// Waits until `js` is truthy in the page; its value.
    fn wait(&mut self, js: &str) -> Value {
        self.cmd(json!({"cmd": "wait", "js": js, "timeout_ms": T.as_millis() as u64}))["value"]
            .clone()
    }

    fn eval(&mut self, js: &str) -> Value {
        self.cmd(json!({"cmd": "eval", "js": js}))["value"].clone()
    }

    fn screenshot(&mut self, name: &str) {
        let dir = repo().join("target/test-logs");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("dashboard-{name}.png"));
        self.cmd(json!({"cmd": "screenshot", "path": path}));
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({"cmd": "close"}));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn fix_sell(c: &mut FixClient, id: &str, qty: &str, px: &str) {
    crate::common::new_order(c, id, "ACME", "2", px, qty);
    c.expect("8", T).unwrap();
}

fn rest_order(api: &Api, token: &str, body: &str) {
    let (st, v, _) = api.call("POST", "/api/v1/orders", Some(token), None, body);
    assert_eq!(st, 201, "{body}: {v}");
}

/// The REST book's levels as the ladder's rows are read: "side,price,qty,orders", sorted.
fn rest_ladder(api: &Api) -> Vec<String> {
    let (st, v, _) = api.call("GET", "/api/v1/book/ACME?depth=15", None, None, "");
    assert_eq!(st, 200, "{v}");
    let mut rows = Vec::new();
    for (side, key) in [("bid", "bids"), ("ask", "asks")] {
        for l in v[key].as_array().unwrap() {
            rows.push(format!(
                "{side},{},{},{}",
                l[0].as_str().unwrap(),
                l[1].as_str().unwrap(),
                l[2]
            ));
        }
    }
    rows.sort();
    rows
}

/// `rest_ladder` once it equals `want` (what the orders imply).
fn rest_ladder_once(api: &Api, want: &[&str]) -> Vec<String> {
    let deadline = std::time::Instant::now() + T;
    loop {
        let got = rest_ladder(api);
        if got == want {
            return got;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the REST book {got:?} is not {want:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The ladder's rows in the page, as `rest_ladder` writes them.
const PAGE_LADDER: &str = r#"JSON.stringify([...document.querySelectorAll('tr[data-side][data-price]')].map(r => [r.dataset.side, r.dataset.price, r.querySelector('[data-col="qty"]').textContent.trim(), r.querySelector('[data-col="orders"]').textContent.trim()].join(',')).sort())"#;

/// Waits until the page's ladder rows are `want` (`rest_ladder`'s rows as JSON).
fn wait_ladder(b: &mut Browser, want: &str) {
    b.wait(&format!(
        "{PAGE_LADDER} === {}",
        serde_json::to_string(want).unwrap()
    ));
}

/// The store's trades, oldest first, once it holds `n`.
fn rest_trades(api: &Api, n: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + T;
    loop {
        let (st, v, _) = api.call("GET", "/api/v1/trades/ACME?limit=1000", None, None, "");
        if st == 200 && v["trades"].as_array().unwrap().len() >= n {
            return v["trades"].as_array().unwrap().clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the store lacks trades: {v}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// 1 s candles of `trades` (oldest first) as the page's hook gives them.
fn candles(trades: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for t in trades {
        let sec = t["time_ns"].as_u64().unwrap() / 1_000_000_000;
        let px: f64 = t["price"].as_str().unwrap().parse().unwrap();
        let qty: f64 = t["quantity"].as_str().unwrap().parse().unwrap();
        match out.last_mut() {
            Some(c) if c["time"] == sec => {
                c["high"] = json!(c["high"].as_f64().unwrap().max(px));
                c["low"] = json!(c["low"].as_f64().unwrap().min(px));
                c["close"] = json!(px);
                c["volume"] = json!(c["volume"].as_f64().unwrap() + qty);
            }
            _ => out.push(
                json!({"time": sec, "open": px, "high": px, "low": px, "close": px, "volume": qty}),
            ),
        }
    }
    out
}

fn same_candles(page: &Value, want: &[Value]) -> bool {
    let Some(got) = page.as_array() else {
        return false;
    };
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| {
            ["time", "open", "high", "low", "close", "volume"]
                .iter()
                .all(|k| g[k].as_f64() == w[k].as_f64())
        })
}

#[test]
fn the_dashboard_shows_the_market_and_the_exchange_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = api_common::config(dir.path(), 100_000);
    cfg.http.as_mut().unwrap().bench_dir = Some(repo().join("docs/bench"));
    let s = start(cfg.clone());
    let api = Api::of(&s);
    let http = s.http_addr().unwrap();

    // Before the page: a resting book and one trade, over FIX and REST.
    let mut fix = FixClient::connect(s.addr, "CLIENT3", "RIALTO", 1).unwrap();
    fix.logon(30, true).unwrap();
    fix.expect("A", T).unwrap();
    fix_sell(&mut fix, "s1", "2", "10.50");
    fix_sell(&mut fix, "s2", "3", "10.55");
    rest_order(
        &api,
        TOKEN_A,
        r#"{"symbol":"ACME","side":"buy","price":"10.40","quantity":"4"}"#,
    );
    rest_order(
        &api,
        TOKEN_B,
        r#"{"symbol":"ACME","side":"buy","price":"10.50","quantity":"1"}"#,
    );
    rest_ladder_once(&api, &["ask,10.5,1,1", "ask,10.55,3,1", "bid,10.4,4,1"]);

    let mut b = Browser::start();
    b.cmd(json!({"cmd": "open", "url": format!("http://{http}/#/market")}));
    b.wait("window.__rialto && window.__rialto.connected && window.__rialto.symbol === 'ACME'");
    // The keyboard reaches the views and the market's selectors, and Enter follows a view.
    let mut focused = Vec::new();
    for _ in 0..12 {
        b.cmd(json!({"cmd": "press", "key": "Tab"}));
        let at = b.eval("(e => e.id || e.textContent.trim())(document.activeElement)");
        focused.push(at.as_str().unwrap_or_default().to_owned());
    }
    for want in ["Market", "Exchange", "Benchmarks", "symbol", "interval"] {
        assert!(
            focused.iter().any(|f| f == want),
            "{want} not reached by Tab: {focused:?}"
        );
    }
    b.eval("location.hash = '#/market'");
    for _ in 0..12 {
        b.cmd(json!({"cmd": "press", "key": "Tab"}));
        if b.eval("document.activeElement.textContent.trim()") == "Exchange" {
            break;
        }
    }
    b.cmd(json!({"cmd": "press", "key": "Enter"}));
    b.wait("location.hash === '#/exchange'");
    b.eval("location.hash = '#/market'");
    let want = serde_json::to_string(&rest_ladder(&api)).unwrap();
    wait_ladder(&mut b, &want);

    // With the page open: more orders over both edges, two more trades.
    fix_sell(&mut fix, "s3", "5", "10.60");
    rest_order(
        &api,
        TOKEN_B,
        r#"{"symbol":"ACME","side":"buy","price":"10.55","quantity":"2","time_in_force":"ioc"}"#,
    );
    rest_order(
        &api,
        TOKEN_A,
        r#"{"symbol":"ACME","side":"buy","price":"10.45","quantity":"2"}"#,
    );
    rest_order(
        &api,
        TOKEN_A,
        r#"{"symbol":"ACME","side":"buy","price":"10.40","quantity":"1"}"#,
    );
    // The REST book (the market-data replica's, a moment behind the journal) with this book.
    let ladder = rest_ladder_once(
        &api,
        &[
            "ask,10.55,2,1",
            "ask,10.6,5,1",
            "bid,10.4,5,2",
            "bid,10.45,2,1",
        ],
    );
    let want = serde_json::to_string(&ladder).unwrap();
    wait_ladder(&mut b, &want);
    // The model behind the ladder is the REST book's, every level.
    let (_, book, _) = api.call("GET", "/api/v1/book/ACME?depth=1000", None, None, "");
    let model = b.eval("window.__rialto.book()");
    assert_eq!(
        (&model["bids"], &model["asks"]),
        (&book["bids"], &book["asks"]),
        "{model}"
    );

    // The tape: the store's three trades, newest first.
    let trades = rest_trades(&api, 3);
    assert_eq!(trades.len(), 3);
    let tape: Vec<String> = trades
        .iter()
        .rev()
        .map(|t| {
            format!(
                "{},{},{}",
                t["trade_id"],
                t["price"].as_str().unwrap(),
                t["quantity"].as_str().unwrap()
            )
        })
        .collect();
    let want = serde_json::to_string(&tape).unwrap();
    b.wait(&format!(
        r#"JSON.stringify([...document.querySelectorAll('tr[data-trade-id]')].map(r => [r.dataset.tradeId, r.querySelector('[data-col="price"]').textContent.trim(), r.querySelector('[data-col="qty"]').textContent.trim()].join(','))) === {}"#,
        serde_json::to_string(&want).unwrap()
    ));
    // The 1 s candles: the trades' open, high, low, close and volume by second.
    let want = candles(&trades);
    let deadline = std::time::Instant::now() + T;
    loop {
        let got = b.eval("window.__rialto.candles('1s')");
        if same_candles(&got, &want) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "candles {got} are not {want:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    b.screenshot("market");

    // The exchange view: rates charted from the stats channel, non-zero.
    b.eval("location.hash = '#/exchange'");
    b.wait("window.__rialto.stats().some(s => s.rates.orders > 0)");
    b.wait("document.querySelector('#rates-chart canvas') !== null");
    b.wait(r#"Number(document.querySelector('[data-stat="fix_sessions"]')?.textContent.replace(/[^0-9]/g, '')) >= 1"#);
    b.screenshot("exchange");

    // The benchmark view: the published sweeps, drawn.
    b.eval("location.hash = '#/bench'");
    b.wait("document.querySelector('#bench-chart canvas') !== null");
    b.screenshot("bench");
    b.eval("location.hash = '#/market'");

    // No console error or warning so far.
    let errors = b.cmd(json!({"cmd": "errors"}))["value"].clone();
    assert_eq!(errors, json!([]), "console errors");

    // A restart: the banner while the server is down, then the page follows the new one.
    drop(fix);
    s.shutdown().unwrap();
    b.wait("!window.__rialto.connected && !document.querySelector('#stale-banner').hidden");
    b.screenshot("stale");
    let mut again = cfg;
    again.http.as_mut().unwrap().listen = Some(http);
    let s = start(again);
    b.wait("window.__rialto.connected && document.querySelector('#stale-banner').hidden");
    rest_order(
        &api,
        TOKEN_A,
        r#"{"symbol":"ACME","side":"buy","price":"10.35","quantity":"7"}"#,
    );
    let mut after = ladder.clone();
    after.push("bid,10.35,7,1".into());
    after.sort();
    let after: Vec<&str> = after.iter().map(String::as_str).collect();
    let want = serde_json::to_string(&rest_ladder_once(&api, &after)).unwrap();
    wait_ladder(&mut b, &want);

    // Nothing went wrong in the page (the failed reconnects while the server was down are the
    // browser's network errors, not the page's).
    let errors = b.cmd(json!({"cmd": "errors"}))["value"].clone();
    let own: Vec<&Value> = errors
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            let e = e.as_str().unwrap_or("");
            !(e.contains("WebSocket connection to") || e.contains("net::ERR_CONNECTION_REFUSED"))
        })
        .collect();
    assert!(own.is_empty(), "console errors: {own:?}");
    drop(b);
    Server::shutdown(s).unwrap();
}
