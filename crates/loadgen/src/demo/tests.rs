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
    r.on_report(&report(b'8', b'8', b"Nabc0006.0", b"unknown order"));
    assert_eq!(r.total(), 6);
    // A cancel or replace of an order that finished meanwhile is a race, counted apart; a
    // new order refused for any reason is a reject.
    assert_eq!(r.raced(), 4);
    assert_eq!(
        r.lines(),
        [
            "new order: post-only order would cross: 1",
            "new order: unknown order: 1",
        ]
    );
}

#[test]
fn makers_quote_both_sides_and_takers_cross() {
    let market = Market::default_contract();
    let mut orders = BotOrders::new(Trader::maker_window(market.symbols.len()));
    let floor = Trader::floor(market.symbols.len());
    let mut m = Trader::maker(1, 0, floor.clone());
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
    // Once every position is quoted, the maker replaces (nothing is on its way: the floor is
    // settled).
    assert!(matches!(
        m.next(&mut orders, &market),
        Action::Replace { .. }
    ));
    let mut t = Trader::taker(2, 0, floor.clone());
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

#[test]
fn makers_replace_above_the_filled_quantity_and_only_where_settled() {
    let market = Market::default_contract();
    let floor = Trader::floor(market.symbols.len());
    let mut orders = BotOrders::new(Trader::maker_window(market.symbols.len()));
    let mut m = Trader::maker(1, 0, floor.clone());
    let mut k = 0;
    // Quote every position; each quote is filled but for one lot.
    for _ in 0..12 {
        let Action::New {
            slot,
            side,
            symbol,
            price_ticks,
            qty,
            ..
        } = m.next(&mut orders, &market)
        else {
            panic!("expected a new quote");
        };
        orders.on_new_sent(slot, k, symbol, side, price_ticks, qty);
        orders.on_new_ack(slot, k);
        orders.on_leaves(slot, k, 1);
        k += 1;
    }
    // A taker order on its way on BOLT: its quotes are left alone, the others replaced.
    floor.borrow_mut().taker_sent(0, 1);
    let mut replaced = 0;
    loop {
        match m.next(&mut orders, &market) {
            Action::Replace {
                slot,
                price_ticks,
                qty,
            } => {
                let s = *orders.slot(slot).unwrap();
                assert_ne!(s.symbol, 1, "replaced a quote of an unsettled instrument");
                assert!(qty > s.filled_qty(), "{qty} <= filled {}", s.filled_qty());
                assert!(
                    (50..=500).contains(&(qty - s.filled_qty())),
                    "new remainder"
                );
                orders.on_request_sent(slot, k, Some((price_ticks, qty)));
                k += 1;
                replaced += 1;
            }
            Action::Idle => break,
            other => panic!("maker sent {other:?}"),
        }
    }
    assert_eq!(replaced, 8);
}

#[test]
fn a_quote_filled_ten_thousand_is_canceled() {
    let market = Market::default_contract();
    let floor = Trader::floor(market.symbols.len());
    let mut orders = BotOrders::new(Trader::maker_window(market.symbols.len()));
    let mut m = Trader::maker(1, 0, floor);
    // Position 0 is ACME's first bid level.
    assert!(orders.alloc_at(1));
    orders.on_new_sent(1, 0, 0, Side::Buy, 9_990, 20_000);
    orders.on_new_ack(1, 0);
    orders.on_leaves(1, 0, 20_000 - REQUOTE_FILLED);
    assert_eq!(m.next(&mut orders, &market), Action::Cancel { slot: 1 });
}
