//! Market data end to end over real sockets: subscribers rebuild the book from W and X alone
//! and must equal the engine's book, trade for trade, with no RptSeq gap; a subscriber that
//! stops reading is conflated then logged out without hurting anyone else.

use fix::client::{FixClient, Msg};
use fix::md::{MdView, SymbolView, VIEW_PRICE_DECIMALS};
use fix::{Decoder, FixVersion};
use server::{Config, Server};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use types::{Side, XorShift64};

const T: Duration = Duration::from_secs(10);

fn config(dir: &Path) -> Config {
    let mut c = Config::defaults();
    c.listen = "127.0.0.1:0".parse().unwrap();
    c.data_dir = dir.to_path_buf();
    c.journal_segment_bytes = 1 << 20;
    c.orders_max = 1 << 16;
    c
}

fn start(cfg: Config) -> Server {
    Server::start(cfg, Arc::new(|_: &str| {})).expect("server starts")
}

fn trader(server: &Server, who: &str) -> FixClient {
    let mut c = FixClient::connect(server.addr, who, "RIALTO", 1).unwrap();
    c.logon(30, true).unwrap();
    c.expect("A", T).unwrap();
    c
}

struct Subscriber {
    c: FixClient,
    view: MdView,
    decoder: Decoder,
    next: u32,
}

impl Subscriber {
    fn connect(server: &Server, who: &str, version: FixVersion) -> Subscriber {
        let addr = server.market_data_addr().expect("market data is on");
        let mut c = FixClient::connect(addr, who, "RIALTO", 1)
            .unwrap()
            .with_version(version);
        c.logon(30, true).unwrap();
        c.expect("A", T).unwrap();
        Subscriber {
            c,
            view: MdView::new(0),
            decoder: Decoder::default(),
            next: 0,
        }
    }

    fn subscribe(&mut self, symbols: &[&str], depth: u32) -> String {
        self.next += 1;
        let id = format!("md{}", self.next);
        let depth = depth.to_string();
        let n = symbols.len().to_string();
        let mut body: Vec<(u32, &str)> = vec![
            (262, &id),
            (263, "1"),
            (264, &depth),
            (265, "1"),
            (267, "3"),
            (269, "0"),
            (269, "1"),
            (269, "2"),
            (146, &n),
        ];
        for s in symbols {
            body.push((55, s));
        }
        self.c.send("V", &body).unwrap();
        id
    }

    fn apply(&mut self, m: &Msg) {
        let msg = self.decoder.decode(&m.raw).unwrap();
        self.view.apply(&msg).unwrap();
    }

    /// Reads until a snapshot of `symbol` answers a snapshot-only request sent now: every
    /// update queued before it has then been read.
    fn sync(&mut self, symbol: &str) {
        self.next += 1;
        let id = format!("sync{}", self.next);
        self.c
            .send(
                "V",
                &[
                    (262, &id),
                    (263, "0"),
                    (264, "1"),
                    (267, "1"),
                    (269, "0"),
                    (146, "1"),
                    (55, symbol),
                ],
            )
            .unwrap();
        loop {
            let m = self.c.next_app(T).unwrap();
            assert!(
                m.msg_type() == "W" || m.msg_type() == "X",
                "unexpected {}",
                m.text()
            );
            if m.get(262) == Some(id.as_str()) {
                return;
            }
            self.apply(&m);
        }
    }

    fn symbol(&self, s: &str) -> SymbolView {
        self.view
            .symbols
            .get(s.as_bytes())
            .cloned()
            .unwrap_or_default()
    }
}

/// The engine's aggregated book of `symbol` in the view's units (price -> (size, orders)).
fn engine_book(node: &server::Node, symbol: u32, side: Side) -> BTreeMap<i64, (u64, u64)> {
    let scale = 10i64.pow(VIEW_PRICE_DECIMALS - 2);
    let mut b = BTreeMap::new();
    for o in node.exchange.engine().resting(symbol, side) {
        let l = b.entry(o.price * scale).or_insert((0, 0));
        l.0 += o.qty;
        l.1 += 1;
    }
    b
}

fn view_book(v: &SymbolView, side: Side) -> BTreeMap<i64, (u64, u64)> {
    let levels = match side {
        Side::Buy => &v.bids,
        Side::Sell => &v.asks,
    };
    levels
        .iter()
        .map(|(p, l)| (*p, (l.size, l.orders)))
        .collect()
}

fn wait_applied(server: &Server) {
    let md = server.market_data_counters().unwrap();
    let deadline = Instant::now() + T;
    while md.applied_seq.load(Ordering::Acquire) < server.counters.last_seq.load(Ordering::Acquire)
    {
        assert!(Instant::now() < deadline, "market data did not catch up");
        std::thread::yield_now();
    }
}

const SYMBOLS: [&str; 2] = ["ACME", "BOLT"];

/// Random orders and cancels from two traders; returns every fill as (symbol, px, qty).
fn trade_randomly(
    a: &mut FixClient,
    b: &mut FixClient,
    rng: &mut XorShift64,
    n: usize,
    tag: &str,
) -> Vec<(String, String, u64)> {
    let mut fills = Vec::new();
    let mut live: Vec<(bool, String, String)> = Vec::new();
    for i in 0..n {
        let r = rng.next_u64();
        let use_a = r.is_multiple_of(2);
        if r.is_multiple_of(7) && !live.is_empty() {
            let k = (r / 7) as usize % live.len();
            let (on_a, cl, sym) = live.swap_remove(k);
            let c = if on_a { &mut *a } else { &mut *b };
            let id = format!("{tag}c{i}");
            c.send(
                "F",
                &[
                    (11, &id),
                    (41, &cl),
                    (55, &sym),
                    (54, "1"),
                    (60, "20260101-00:00:00"),
                ],
            )
            .unwrap();
            // A cancel of a filled order is refused (9); either way one answer.
            let m = c.next_app(T).unwrap();
            assert!(m.msg_type() == "8" || m.msg_type() == "9", "{}", m.text());
            continue;
        }
        let sym = SYMBOLS[(r >> 8) as usize % 2];
        let side = if (r >> 12).is_multiple_of(2) {
            "1"
        } else {
            "2"
        };
        let px = format!("10.{:02}", 90 + (r >> 16) % 10);
        let qty = (1 + (r >> 24) % 9).to_string();
        let cl = format!("{tag}o{i}");
        let c = if use_a { &mut *a } else { &mut *b };
        c.send(
            "D",
            &[
                (11, &cl),
                (55, sym),
                (54, side),
                (38, &qty),
                (40, "2"),
                (44, &px),
                (59, "1"),
                (60, "20260101-00:00:00"),
            ],
        )
        .unwrap();
        let ack = c.next_app(T).unwrap();
        assert_eq!(ack.get(150), Some("0"), "{}", ack.text());
        live.push((use_a, cl, sym.to_string()));
        // Fills of both traders arrive in any order: read until quiet on both.
        for c in [&mut *a, &mut *b] {
            while let Some(m) = c.recv(Duration::from_millis(20)).unwrap() {
                if m.msg_type() == "8" && m.get(150) == Some("F") {
                    fills.push((
                        m.get(55).unwrap().to_string(),
                        m.get(31).unwrap().to_string(),
                        m.u64(32).unwrap(),
                    ));
                }
            }
        }
    }
    fills
}

#[test]
fn subscribers_rebuild_the_engines_book_and_trades_from_w_and_x_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path());
    let server = start(cfg.clone());
    let mut a = trader(&server, "CLIENT1");
    let mut b = trader(&server, "CLIENT2");
    // One subscriber from the start, one that joins half way, one on the top of book.
    let mut early = Subscriber::connect(&server, "MD1", FixVersion::Fix44);
    early.subscribe(&SYMBOLS, 0);
    let mut rng = XorShift64::new(7);
    let mut fills = trade_randomly(&mut a, &mut b, &mut rng, 150, "x");
    let mut late = Subscriber::connect(&server, "MD2", FixVersion::Fix44);
    late.subscribe(&SYMBOLS, 0);
    let mut top = Subscriber::connect(&server, "MD3", FixVersion::Fix44);
    top.subscribe(&["ACME"], 1);
    fills.extend(trade_randomly(&mut a, &mut b, &mut rng, 150, "y"));
    wait_applied(&server);
    for s in [&mut early, &mut late, &mut top] {
        s.sync("ACME");
    }
    drop((a, b));
    server.shutdown().unwrap();

    let (node, _) = server::recover(&Arc::new(cfg), dir.path(), false, |_| {}).unwrap();
    for (i, sym) in SYMBOLS.iter().enumerate() {
        for s in [&early, &late] {
            let v = s.symbol(sym);
            for side in [Side::Buy, Side::Sell] {
                assert_eq!(
                    view_book(&v, side),
                    engine_book(&node, i as u32, side),
                    "{sym} {side:?}"
                );
            }
            assert_eq!(v.rpt_seq_gaps, 0, "{sym}: RptSeq gap");
            assert_eq!(v.misfits, 0, "{sym}: an entry did not fit");
            assert!(v.rpt_seq.unwrap() > 0);
        }
        assert_eq!(early.symbol(sym).rpt_seq, late.symbol(sym).rpt_seq);
    }
    let top_acme = top.symbol("ACME");
    let best = |b: BTreeMap<i64, (u64, u64)>, side| match side {
        Side::Buy => b.into_iter().next_back(),
        Side::Sell => b.into_iter().next(),
    };
    for side in [Side::Buy, Side::Sell] {
        let v = view_book(&top_acme, side);
        assert!(v.len() <= 1);
        assert_eq!(best(v, side), best(engine_book(&node, 0, side), side));
    }
    // Every trade once, as the traders' fills (two per trade) say.
    let mut want: Vec<(String, i64, u64)> = fills
        .iter()
        .map(|(s, px, q)| {
            (
                s.clone(),
                fix::parse_price(px.as_bytes(), 9, 1).unwrap(),
                *q,
            )
        })
        .collect();
    want.sort();
    let mut got: Vec<(String, i64, u64)> = Vec::new();
    let mut ids = Vec::new();
    for sym in SYMBOLS {
        for t in &early.symbol(sym).trades {
            got.push((sym.to_string(), t.price, t.size));
            got.push((sym.to_string(), t.price, t.size));
            ids.push(t.id.unwrap());
            assert!(t.aggressor.is_some(), "MD sessions carry AggressorSide");
        }
    }
    got.sort();
    assert!(!got.is_empty(), "the stream traded");
    assert_eq!(got, want);
    ids.sort();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
}

#[test]
fn rpt_seq_on_every_entry_and_requests_answered_or_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(config(dir.path()));
    let mut a = trader(&server, "CLIENT1");
    let mut s = Subscriber::connect(&server, "MD4", FixVersion::Fix44);
    s.subscribe(&["ACME"], 0);
    let (w, _) = s.c.expect("W", T).unwrap();
    assert!(
        w.text().contains("|268=1|269=J|83=0|"),
        "an empty book says its RptSeq: {}",
        w.text()
    );
    a.send(
        "D",
        &[
            (11, "o1"),
            (55, "ACME"),
            (54, "1"),
            (38, "5"),
            (40, "2"),
            (44, "10.5"),
            (59, "1"),
            (60, "20260101-00:00:00"),
        ],
    )
    .unwrap();
    let (x, _) = s.c.expect("X", T).unwrap();
    assert!(
        x.text()
            .contains("|279=0|269=0|55=ACME|270=10.5|271=5|346=1|83=1|"),
        "{}",
        x.text()
    );
    // Unknown symbol, an order on the market-data port.
    s.c.send(
        "V",
        &[
            (262, "bad"),
            (263, "1"),
            (264, "0"),
            (267, "1"),
            (269, "0"),
            (146, "1"),
            (55, "NOPE"),
        ],
    )
    .unwrap();
    let (y, _) = s.c.expect("Y", T).unwrap();
    assert_eq!(y.get(281), Some("0"));
    assert!(y.get(58).unwrap().contains("NOPE"));
    s.c.send("x", &[(320, "l"), (559, "4")]).unwrap();
    let (list, _) = s.c.expect("y", T).unwrap();
    assert_eq!(list.get(146), Some("3"));
    // A market-data-only session cannot log on at the order-entry port.
    let mut md_on_orders = FixClient::connect(server.addr, "MD5", "RIALTO", 1).unwrap();
    md_on_orders.logon(30, true).unwrap();
    let (lo, _) = md_on_orders.expect("5", T).unwrap();
    assert!(
        lo.get(58).unwrap().contains("market-data only"),
        "{}",
        lo.text()
    );
    server.shutdown().unwrap();
}

#[test]
fn a_subscriber_that_stops_reading_is_conflated_then_logged_out_and_others_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    let md = cfg.market_data.as_mut().unwrap();
    md.conflate_bytes = 16 << 10;
    md.logout_bytes = 64 << 10;
    md.behind_logout_ms = 1_000;
    let server = start(cfg);
    let mut a = trader(&server, "CLIENT1");
    let mut good = Subscriber::connect(&server, "MD1", FixVersion::Fix44);
    good.subscribe(&["ACME"], 0);
    let mut stuck = Subscriber::connect(&server, "MD2", FixVersion::Fix44);
    // Its 64 subscriptions make 64 X of each order: the kernel's buffers fill soon.
    for _ in 0..64 {
        stuck.subscribe(&["ACME"], 0);
    }
    let counters = server.market_data_counters().unwrap();
    // Orders that rest at ever new prices: every one is a new level, an X to each
    // subscriber; the stuck one never reads.
    let mut n = 0u64;
    let deadline = Instant::now() + Duration::from_secs(60);
    while counters.slow_logouts.load(Ordering::Relaxed) == 0 {
        assert!(
            Instant::now() < deadline,
            "the stuck subscriber was never logged out"
        );
        n += 1;
        let px = format!("{}.{:02}", 1 + n / 100, n % 100);
        let cl = format!("o{n}");
        a.send(
            "D",
            &[
                (11, &cl),
                (55, "ACME"),
                (54, "1"),
                (38, "1"),
                (40, "2"),
                (44, &px),
                (59, "1"),
                (60, "20260101-00:00:00"),
            ],
        )
        .unwrap();
        a.next_app(T).unwrap();
        // The good subscriber keeps up.
        while let Some(m) = good.c.recv(Duration::from_millis(1)).unwrap() {
            good.apply(&m);
        }
    }
    assert!(counters.conflations.load(Ordering::Relaxed) >= 1);
    wait_applied(&server);
    good.sync("ACME");
    let v = good.symbol("ACME");
    assert_eq!(v.rpt_seq_gaps, 0);
    assert_eq!(
        v.bids.len() as u64,
        n,
        "the good subscriber saw every level"
    );
    // The stuck one finds, after what the kernel had taken, its connection closed (the Logout
    // saying why was queued behind what it did not read, so it may not arrive).
    let mut saw_logout = None;
    let end = loop {
        match stuck.c.recv(Duration::from_secs(5)) {
            Ok(Some(m)) => {
                if m.msg_type() == "5" {
                    saw_logout = m.get(58).map(str::to_string);
                }
            }
            other => break other,
        }
    };
    assert!(end.is_err(), "the stuck connection is closed: {end:?}");
    if let Some(text) = saw_logout {
        assert!(text.contains("slow consumer"), "{text}");
    }
    server.shutdown().unwrap();
}

#[test]
fn after_a_restart_the_feed_resumes_where_the_journal_left_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path());
    let server = start(cfg.clone());
    let mut a = trader(&server, "CLIENT1");
    let mut b = trader(&server, "CLIENT2");
    let mut rng = XorShift64::new(11);
    trade_randomly(&mut a, &mut b, &mut rng, 80, "p");
    let mut s = Subscriber::connect(&server, "MD1", FixVersion::Fix44);
    s.subscribe(&SYMBOLS, 0);
    wait_applied(&server);
    s.sync("ACME");
    let before: Vec<SymbolView> = SYMBOLS.iter().map(|x| s.symbol(x)).collect();
    drop((a, b, s));
    server.shutdown().unwrap();

    let server = start(cfg);
    let mut s = Subscriber::connect(&server, "MD1", FixVersion::Fix44);
    s.subscribe(&SYMBOLS, 0);
    wait_applied(&server);
    s.sync("ACME");
    for (i, sym) in SYMBOLS.iter().enumerate() {
        let v = s.symbol(sym);
        assert_eq!(v.bids, before[i].bids, "{sym}");
        assert_eq!(v.asks, before[i].asks, "{sym}");
        assert_eq!(v.rpt_seq, before[i].rpt_seq, "{sym}: RptSeq continues");
    }
    // New entries continue the count.
    let mut a = trader(&server, "CLIENT3");
    a.send(
        "D",
        &[
            (11, "n1"),
            (55, "ACME"),
            (54, "1"),
            (38, "1"),
            (40, "2"),
            (44, "1.01"),
            (59, "1"),
            (60, "20260101-00:00:00"),
        ],
    )
    .unwrap();
    let (x, _) = s.c.expect("X", T).unwrap();
    let want = before[0].rpt_seq.unwrap() + 1;
    assert_eq!(x.u64(83), Some(want), "{}", x.text());
    server.shutdown().unwrap();
}
