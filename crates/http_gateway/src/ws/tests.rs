use super::*;
use crate::config::{ApiConfig, InstrumentDef};
use types::{Event, Symbol};

fn setup() -> (WsPublisher, Arc<MarketView>, Feed) {
    let cfg = ApiConfig {
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
    };
    let view = Arc::new(MarketView::with_ws_buffer(1, 64));
    (
        WsPublisher::new(Arc::new(cfg), view.clone()),
        view,
        Feed::new(1),
    )
}

fn level(side: Side, price: i64, qty: u64, orders: u32) -> Event {
    Event::Level {
        symbol: 0,
        side,
        price,
        qty,
        orders,
    }
}

fn trade(id: u64, price: i64, qty: u64) -> Event {
    Event::Trade {
        trade_id: id,
        symbol: 0,
        price,
        qty,
        maker_id: 1,
        taker_id: 2,
        maker_account: 1,
        taker_account: 2,
        taker_side: Side::Buy,
        maker_leaves: 0,
        taker_leaves: 0,
    }
}

/// Applies one batch of `events` as the market-data thread does: feed, view, then publish.
fn batch(p: &mut WsPublisher, view: &MarketView, feed: &mut Feed, events: &[Event]) {
    let mut last = None;
    for e in events {
        feed.on_event(e);
        for en in feed.entries() {
            p.on_entry(en, 7);
            if let EntryKind::Trade(t) = en.kind {
                last = Some(t);
            }
        }
        feed.clear_entries();
    }
    view.update(0, feed.book(0), feed.rpt_seq(0), last, 1);
    p.publish(feed);
}

fn drain(rx: &mut broadcast::Receiver<MarketMsg>) -> Vec<(Channel, u64, u64, serde_json::Value)> {
    let mut out = Vec::new();
    while let Ok(m) = rx.try_recv() {
        let v = serde_json::from_str(std::str::from_utf8(&m.text).unwrap()).unwrap();
        out.push((m.channel, m.first_rpt_seq, m.rpt_seq, v));
    }
    out
}

#[test]
fn a_batch_is_one_book_update_its_trades_and_a_ticker_when_it_changed() {
    let (mut p, view, mut feed) = setup();
    let mut rx = view.ws().market.subscribe();
    batch(
        &mut p,
        &view,
        &mut feed,
        &[level(Side::Buy, 1000, 5, 1), level(Side::Sell, 1025, 3, 2)],
    );
    let got = drain(&mut rx);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!((got[0].0, got[0].1, got[0].2), (Channel::Book, 1, 2));
    assert_eq!(
        got[0].3,
        serde_json::json!({"type": "book", "symbol": "ACME", "first_rpt_seq": 1, "rpt_seq": 2,
            "bids": [["10", "5", 1]], "asks": [["10.25", "3", 2]], "time_ns": 7})
    );
    assert_eq!(view.ws().stats.published.load(Ordering::Relaxed), 2);
    assert_eq!(got[1].0, Channel::Ticker);
    assert_eq!(got[1].3["best_ask"]["price"], "10.25");
    assert_eq!(got[1].3["last_trade"], serde_json::Value::Null);

    // A trade, the level it took from, and a level away from the top: the ticker changes.
    batch(
        &mut p,
        &view,
        &mut feed,
        &[
            trade(9, 1025, 3),
            level(Side::Sell, 1025, 0, 0),
            level(Side::Sell, 1100, 1, 1),
        ],
    );
    let got = drain(&mut rx);
    let kinds: Vec<_> = got.iter().map(|g| g.0).collect();
    assert_eq!(kinds, [Channel::Book, Channel::Trades, Channel::Ticker]);
    assert_eq!((got[0].1, got[0].2), (3, 5));
    assert_eq!(
        got[0].3["asks"],
        serde_json::json!([["10.25", "0", 0], ["11", "1", 1]])
    );
    assert_eq!(
        got[1].3,
        serde_json::json!({"type": "trade", "symbol": "ACME", "rpt_seq": 3, "trade_id": 9,
            "price": "10.25", "quantity": "3", "aggressor_side": "buy", "time_ns": 7})
    );
    assert_eq!(got[2].3["last_trade"]["trade_id"], 9);
    assert_eq!(got[2].3["best_ask"]["price"], "11");

    // Deeper than the top: no ticker.
    batch(&mut p, &view, &mut feed, &[level(Side::Buy, 900, 1, 1)]);
    let got = drain(&mut rx);
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].0, got[0].1, got[0].2), (Channel::Book, 6, 6));
}

#[test]
fn with_nobody_listening_nothing_is_sent_yet_the_ticker_stays_true() {
    let (mut p, view, mut feed) = setup();
    batch(&mut p, &view, &mut feed, &[level(Side::Buy, 1000, 5, 1)]);
    batch(&mut p, &view, &mut feed, &[level(Side::Buy, 1000, 0, 0)]);
    assert_eq!(view.ws().buffered(), 0);
    let mut rx = view.ws().market.subscribe();
    // Back to the first state: a change from the last state, so a ticker.
    batch(&mut p, &view, &mut feed, &[level(Side::Buy, 1000, 5, 1)]);
    let got = drain(&mut rx);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[1].3["best_bid"]["quantity"], "5");
    assert_eq!(got[1].2, 3);
}

#[test]
fn a_snapshot_and_a_ticker_from_the_view() {
    let (mut p, view, mut feed) = setup();
    batch(
        &mut p,
        &view,
        &mut feed,
        &[level(Side::Buy, 1000, 5, 1), level(Side::Buy, 990, 2, 1)],
    );
    let def = p.cfg.instruments[0];
    let v = view.book(0, crate::market::DEPTH_MAX).unwrap();
    let snap: serde_json::Value = serde_json::from_slice(&snapshot_json(&def, &v)).unwrap();
    assert_eq!(
        snap,
        serde_json::json!({"type": "book_snapshot", "symbol": "ACME", "rpt_seq": 2,
            "bids": [["10", "5", 1], ["9.9", "2", 1]], "asks": [], "time_ns": 1})
    );
    let t: serde_json::Value = serde_json::from_slice(&ticker_json(&def, &v)).unwrap();
    assert_eq!(
        t["best_bid"],
        serde_json::json!({"price": "10", "quantity": "5"})
    );
    assert_eq!(t["best_ask"], serde_json::Value::Null);
}

#[test]
fn order_events_are_moved_and_the_source_left_empty() {
    let (mut p, view, _) = setup();
    let mut rx = view.ws().orders.subscribe();
    let mut events = vec![(1u16, br#"{"type":"order"}"#.to_vec()), (0, b"{}".to_vec())];
    p.publish_orders(&mut events);
    assert!(events.is_empty());
    let m = rx.try_recv().unwrap();
    assert_eq!(
        (m.key, std::str::from_utf8(&m.text).unwrap()),
        (1, r#"{"type":"order"}"#)
    );
    assert_eq!(rx.try_recv().unwrap().key, 0);
}

#[test]
fn a_call_auctions_status_and_indicative_come_as_tickers_ordered_after_the_last() {
    use exchange::InstrumentStatus as S;
    let (mut p, view, mut feed) = setup();
    let mut rx = view.ws().market.subscribe();
    batch(&mut p, &view, &mut feed, &[level(Side::Buy, 1000, 5, 1)]);
    let first = rx.try_recv().unwrap();
    let first = rx
        .try_recv()
        .map(|t| (t.rpt_seq, t.ticker_rev))
        .unwrap_or_else(|_| {
            panic!("a ticker after the book {:?}", first.channel);
        });
    // Into the call: its status; then an indicative, then none; no feed entry in between.
    view.set_status(0, S::PreOpen);
    p.on_status(&feed, 0, S::PreOpen, 8);
    p.on_indicatives(&feed, |_| (1010, 40), 9);
    p.on_indicatives(&feed, |_| (1010, 40), 10);
    p.on_indicatives(&feed, |_| (1010, 0), 11);
    let mut got = Vec::new();
    while let Ok(m) = rx.try_recv() {
        assert_eq!(m.channel, Channel::Ticker);
        let v: serde_json::Value = serde_json::from_slice(&m.text).unwrap();
        got.push(((m.rpt_seq, m.ticker_rev), v));
    }
    assert_eq!(got.len(), 3, "one ticker per change: {got:?}");
    let mut at = first;
    for (t, _) in &got {
        assert!(*t > at, "{t:?} after {at:?}");
        assert_eq!(t.0, first.0, "the same RptSeq");
        at = *t;
    }
    assert_eq!(
        (got[0].1["status"].as_str(), got[0].1["indicative"].clone()),
        (Some("preopen"), serde_json::Value::Null)
    );
    assert_eq!(
        got[1].1["indicative"],
        serde_json::json!({"price": "10.1", "quantity": "40"})
    );
    assert_eq!(got[2].1["indicative"], serde_json::Value::Null);
    // The view (REST ticker, a new subscriber's first ticker) has each change too.
    p.on_indicatives(&feed, |_| (1005, 7), 12);
    let v = view.book(0, 1).unwrap();
    assert_eq!((v.status, v.indicative), (S::PreOpen, Some((1005, 7))));
    assert_eq!((v.rpt_seq, v.ticker_rev), view.ticker_at(0));
    let t: serde_json::Value =
        serde_json::from_slice(&ticker_json(&p.cfg.instruments[0], &v)).unwrap();
    assert_eq!(
        t["indicative"],
        serde_json::json!({"price": "10.05", "quantity": "7"})
    );
}
