use super::*;

#[test]
fn thousands_are_grouped() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(1_234_567), "1,234,567");
}

fn report<'a>(msg_type: u8, exec_type: u8, cl: &'a [u8], text: &'a [u8]) -> Report<'a> {
    Report {
        msg_type,
        cl_ord_id: cl,
        orig_cl_ord_id: None,
        exec_type,
        symbol: b"ACME",
        side: b'1',
        leaves_qty: None,
        last_qty: None,
        last_px: None,
        text: Some(text),
        exec_id: b"",
    }
}

#[test]
fn rejects_are_counted_by_request_and_reason() {
    let mut r = RejectReasons::default();
    for _ in 0..3 {
        r.on_report(&report(b'9', 0, b"Rabc0001.4", b"unknown order"));
    }
    r.on_report(&report(b'9', 0, b"Cabc0002.1", b"unknown order"));
    r.on_report(&report(
        b'8',
        b'8',
        b"Nabc0003.0",
        b"post-only order would cross",
    ));
    // Not rejects: load shedding, an ack, a fill.
    r.on_report(&report(b'8', b'8', b"Nabc0004.0", b"exchange busy"));
    r.on_report(&report(b'8', b'0', b"Nabc0005.0", b""));
    r.on_report(&report(b'8', b'F', b"Nabc0005.0", b""));
    assert_eq!(r.total(), 5);
    assert_eq!(
        r.lines(),
        [
            "replace of an order already filled or canceled (\"unknown order\"): 3",
            "cancel of an order already filled or canceled (\"unknown order\"): 1",
            "new order: post-only order would cross: 1",
        ]
    );
}

#[test]
fn makers_quote_both_sides_and_takers_cross() {
    let market = Market::default_contract();
    let mut orders = BotOrders::new(Trader::maker_window(market.symbols.len()));
    let mut m = Trader::maker(1);
    let mut sides = [0, 0];
    for k in 0..12 {
        match m.next(&mut orders, &market) {
            Action::New {
                slot,
                side,
                symbol,
                price_ticks,
                qty,
                ..
            } => {
                let mid = market.symbols[symbol as usize].mid_ticks;
                match side {
                    Side::Buy => assert!(price_ticks < mid),
                    Side::Sell => assert!(price_ticks > mid),
                }
                sides[side as usize] += 1;
                orders.on_new_sent(slot, k, symbol, side, price_ticks, qty);
                orders.on_new_ack(slot, k);
            }
            other => panic!("expected a new quote, got {other:?}"),
        }
    }
    assert_eq!(sides, [6, 6]);
    // Once every position is quoted, the maker replaces.
    assert!(matches!(
        m.next(&mut orders, &market),
        Action::Replace { .. }
    ));
    let mut t = Trader::taker(2);
    for _ in 0..100 {
        match t.next(&mut orders, &market) {
            Action::New {
                ord_type: OrdType::Limit,
                tif,
                side,
                price_ticks,
                symbol,
                ..
            } => {
                assert_eq!(tif, TimeInForce::Ioc);
                let mid = market.symbols[symbol as usize].mid_ticks;
                match side {
                    Side::Buy => assert!(price_ticks > mid + HALF_SPREAD_TICKS),
                    Side::Sell => assert!(price_ticks < mid - HALF_SPREAD_TICKS),
                }
            }
            Action::New {
                ord_type: OrdType::Market,
                slot,
                ..
            } => assert_eq!(slot, 0),
            other => panic!("taker sent {other:?}"),
        }
    }
}
