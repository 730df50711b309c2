//! WebSocket clients that stop reading, over real sockets on 127.0.0.1: a `book` subscriber is
//! conflated (a fresh snapshot, then updates with no gap), a `trades` subscriber is closed
//! with code 1008 and a reason, and the server holds a bounded number of messages meanwhile
//! (the rings' capacity) while 100,000 batches go by.
//!
//! The market-data side is driven here as the server's market-data thread drives it: feed,
//! then view, then `WsPublisher::publish`.

use http_gateway::config::{ApiConfig, InstrumentDef};
use http_gateway::http::{router, HttpConfig, Shared};
use http_gateway::market::MarketView;
use http_gateway::serve::{serve, ConnCounters, Limits};
use http_gateway::ws::WsPublisher;
use market_data::{EntryKind, Feed};
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tungstenite::Message;
use types::{Event, Side, Symbol};

const RING: usize = 64;
const T: Duration = Duration::from_secs(30);

fn cfg() -> Arc<ApiConfig> {
    Arc::new(ApiConfig {
        keys: Vec::new(),
        instruments: vec![InstrumentDef {
            symbol: Symbol::new("ACME").unwrap(),
            tick: 1,
            lot: 1,
            price_decimals: 2,
        }],
        originator_base: 1,
        idempotency_max: 10,
        idempotency_ttl_ns: 1,
        operators: Vec::new(),
        firms: Vec::new(),
    })
}

struct Client(tungstenite::WebSocket<TcpStream>);

impl Client {
    fn connect(addr: std::net::SocketAddr, subscribe: &str) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        let (mut ws, _) = tungstenite::client(format!("ws://{addr}/ws"), stream).unwrap();
        ws.get_ref()
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        ws.send(Message::text(subscribe)).unwrap();
        let mut c = Client(ws);
        assert_eq!(c.next()["type"], "subscribed");
        c
    }

    fn next(&mut self) -> Value {
        let deadline = Instant::now() + T;
        loop {
            match self.0.read() {
                Ok(Message::Text(t)) => return serde_json::from_str(&t).unwrap(),
                Ok(Message::Close(Some(f))) => {
                    return serde_json::json!({"type": "close", "code": u16::from(f.code),
                        "reason": f.reason.as_str()})
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("read: {e}"),
            }
            assert!(Instant::now() < deadline, "no message");
        }
    }
}

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

type Book = BTreeMap<String, String>;

fn apply(book: &mut Book, levels: &Value) {
    for l in levels.as_array().unwrap() {
        let (px, qty) = (l[0].as_str().unwrap(), l[1].as_str().unwrap());
        if qty == "0" {
            book.remove(px);
        } else {
            book.insert(px.to_owned(), qty.to_owned());
        }
    }
}

#[test]
fn a_reader_that_stops_is_conflated_on_book_and_closed_on_trades() {
    let cfg = cfg();
    let view = Arc::new(MarketView::with_ws_buffer(1, RING));
    let http = HttpConfig::default();
    let (shared, _queue) = Shared::new(cfg.clone(), &http, view.clone(), Box::new(|| {}));
    let app = router(shared, &http, None);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(listener).unwrap();
            let counters = Arc::new(ConnCounters::default());
            serve(l, app, Limits::default(), counters, None, async move {
                let _ = stop_rx.await;
            })
            .await;
        });
    });

    let mut book_client = Client::connect(
        addr,
        r#"{"op":"subscribe","channel":"book","symbol":"ACME"}"#,
    );
    let first = book_client.next();
    assert_eq!(first["type"], "book_snapshot");
    let mut trades_client = Client::connect(
        addr,
        r#"{"op":"subscribe","channel":"trades","symbol":"ACME"}"#,
    );

    // Neither reads now. 100,000 batches: a level moves on each side and a trade.
    let mut publisher = WsPublisher::new(cfg.clone(), view.clone());
    let mut feed = Feed::new(1);
    let rss_before = rss_kib();
    let mut buffered_max = 0;
    for k in 0..100_000u64 {
        let events = [
            Event::Level {
                symbol: 0,
                side: Side::Buy,
                price: 1000 + (k % 40) as i64,
                qty: k % 7,
                orders: 1,
            },
            Event::Level {
                symbol: 0,
                side: Side::Sell,
                price: 1100 + (k % 40) as i64,
                qty: k % 5,
                orders: 1,
            },
            Event::Trade {
                trade_id: k + 1,
                symbol: 0,
                price: 1050,
                qty: 1,
                maker_id: 1,
                taker_id: 2,
                maker_account: 1,
                taker_account: 2,
                taker_side: Side::Buy,
                maker_leaves: 0,
                taker_leaves: 0,
            },
        ];
        let mut last = None;
        for e in &events {
            feed.on_event(e);
            for en in feed.entries() {
                publisher.on_entry(en, 7);
                if let EntryKind::Trade(t) = en.kind {
                    last = Some(t);
                }
            }
            feed.clear_entries();
        }
        view.update(0, feed.book(0), feed.rpt_seq(0), last, k);
        publisher.publish(&feed);
        buffered_max = buffered_max.max(view.ws().buffered());
    }
    let rss_growth_kib = rss_kib().saturating_sub(rss_before);
    assert!(buffered_max <= 2 * RING, "{buffered_max}");
    // About 30 MB of updates went by; the process kept a bounded part of them.
    assert!(rss_growth_kib < 16 << 10, "RSS grew {rss_growth_kib} KiB");

    // The book reader catches up: what was in flight, a fresh snapshot, and no gap.
    let mut book = Book::new();
    apply(&mut book, &first["bids"]);
    apply(&mut book, &first["asks"]);
    let mut at = first["rpt_seq"].as_u64().unwrap();
    let mut conflated = 0;
    let end = feed.rpt_seq(0);
    while at < end {
        let v = book_client.next();
        match v["type"].as_str().unwrap() {
            "book_snapshot" => {
                conflated += 1;
                book.clear();
                apply(&mut book, &v["bids"]);
                apply(&mut book, &v["asks"]);
                at = v["rpt_seq"].as_u64().unwrap();
            }
            "book" => {
                assert_eq!(v["first_rpt_seq"].as_u64(), Some(at + 1), "a gap: {v}");
                apply(&mut book, &v["bids"]);
                apply(&mut book, &v["asks"]);
                at = v["rpt_seq"].as_u64().unwrap();
            }
            other => panic!("{other}: {v}"),
        }
    }
    assert!(conflated >= 1, "never conflated");
    let want: Book = [Side::Buy, Side::Sell]
        .into_iter()
        .flat_map(|s| feed.book(0).levels(s).collect::<Vec<_>>())
        .map(|(p, l)| {
            (
                http_gateway::json::price(p, &cfg.instruments[0]),
                l.qty.to_string(),
            )
        })
        .collect();
    assert_eq!(book, want);
    assert!(view.ws().stats.conflations.load(Ordering::Relaxed) >= 1);

    // The trades reader: what was in flight, then the close.
    let close = loop {
        let v = trades_client.next();
        if v["type"] == "close" {
            break v;
        }
        assert_eq!(v["type"], "trade");
    };
    assert_eq!(close["code"], 1008, "{close}");
    assert!(
        close["reason"].as_str().unwrap().contains("slow consumer"),
        "{close}"
    );
    assert_eq!(view.ws().stats.slow_closes.load(Ordering::Relaxed), 1);
    drop((book_client, trades_client));
    let _ = stop_tx.send(());
    server.join().unwrap();
}
