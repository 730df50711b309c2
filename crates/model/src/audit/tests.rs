use super::*;

fn accepted(id: OrderId, side: Side, price: PriceTicks, qty: QtyLots) -> Event {
    Event::Accepted {
        id,
        account: 1,
        symbol: 0,
        side,
        price,
        qty,
    }
}

fn level(side: Side, price: PriceTicks, qty: QtyLots, orders: u32) -> Event {
    Event::Level {
        symbol: 0,
        side,
        price,
        qty,
        orders,
    }
}

fn trade(trade_id: TradeId, qty: QtyLots, maker_leaves: QtyLots, taker_leaves: QtyLots) -> Event {
    Event::Trade {
        trade_id,
        symbol: 0,
        price: 10,
        qty,
        maker_id: 1,
        taker_id: 2,
        maker_account: 1,
        taker_account: 2,
        taker_side: Side::Sell,
        maker_leaves,
        taker_leaves,
    }
}

#[test]
fn accepts_a_consistent_stream_and_book() {
    let mut a = Auditor::new();
    a.on_events(&[
        accepted(1, Side::Buy, 10, 5),
        level(Side::Buy, 10, 5, 1),
        accepted(2, Side::Sell, 10, 3),
        trade(1, 3, 2, 0),
        level(Side::Buy, 10, 2, 1),
    ])
    .expect("consistent");
    let book = |_, side| match side {
        Side::Buy => vec![(1, 10, 2)],
        Side::Sell => vec![],
    };
    assert_eq!(a.check_book(1, book), Ok(()));
}

#[test]
fn catches_bad_streams_and_books() {
    let mut a = Auditor::new();
    a.on_events(&[
        accepted(1, Side::Buy, 10, 5),
        accepted(2, Side::Sell, 10, 3),
    ])
    .expect("consistent");
    assert!(a
        .clone()
        .on_event(&trade(2, 3, 2, 0))
        .unwrap_err()
        .contains("trade id 2 follows 0"));
    assert!(a
        .clone()
        .on_event(&trade(1, 3, 1, 0))
        .unwrap_err()
        .contains("reported leaves 1"));
    assert!(a
        .clone()
        .on_event(&accepted(1, Side::Buy, 10, 5))
        .unwrap_err()
        .contains("accepted twice"));
    // The book misses order 1's level event and reports a wrong quantity.
    a.on_events(&[Event::Canceled {
        id: 2,
        account: 1,
        symbol: 0,
        reason: types::CancelReason::Ioc,
        qty: 3,
    }])
    .expect("consistent");
    let wrong_qty = |_, side| match side {
        Side::Buy => vec![(1, 10, 4)],
        Side::Sell => vec![],
    };
    assert!(a
        .check_book(1, wrong_qty)
        .unwrap_err()
        .contains("events say 5@10"));
    let right = |_, side| match side {
        Side::Buy => vec![(1, 10, 5)],
        Side::Sell => vec![],
    };
    assert!(a
        .check_book(1, right)
        .unwrap_err()
        .contains("Level events disagree"));
    let empty = |_, _| vec![];
    assert!(a
        .check_book(1, empty)
        .unwrap_err()
        .contains("does not rest"));
}

fn new_order(id: OrderId, side: Side, price: PriceTicks, qty: QtyLots) -> types::NewOrder {
    types::NewOrder {
        id,
        account: id as AccountId,
        side,
        price,
        qty,
        ..Default::default()
    }
}

fn book_of(r: &crate::Reference) -> impl Fn(SymbolId, Side) -> Vec<RestingView> + '_ {
    |s, d| {
        r.resting(s, d)
            .iter()
            .map(|o| (o.id, o.price, o.qty))
            .collect()
    }
}

#[test]
fn follows_stops_icebergs_and_calls_through_their_commands() {
    use types::Matcher;
    let insts = [types::Instrument {
        symbol: types::Symbol::new("ACME").expect("valid"),
        tick: 1,
        lot: 1,
    }];
    let mut r = crate::Reference::new(&insts);
    let mut a = Auditor::new();
    let cmds = [
        Command::New(types::NewOrder {
            display_qty: 2,
            ..new_order(1, Side::Sell, 100, 5)
        }),
        Command::New(new_order(2, Side::Sell, 100, 1)),
        Command::New(types::NewOrder {
            stop_price: 100,
            ..new_order(3, Side::Buy, 101, 4)
        }),
        // Trades 2 (the peak: refill, requeue) + 1 + 2, then triggers 3, which takes the last 1.
        Command::New(new_order(4, Side::Buy, 100, 5)),
        Command::CallStart { symbol: 0 },
        Command::New(types::NewOrder {
            display_qty: 1,
            ..new_order(5, Side::Buy, 102, 3)
        }),
        Command::New(new_order(6, Side::Sell, 101, 2)),
        Command::Uncross {
            symbol: 0,
            reference: 0,
        },
    ];
    for cmd in &cmds {
        let mut ev = Vec::new();
        r.apply(cmd, &mut ev);
        a.on_command(cmd, &ev)
            .and_then(|()| a.check_book(1, book_of(&r)))
            .unwrap_or_else(|e| panic!("{cmd:?}: {e}\n{ev:?}"));
    }
    // Order 1's refill queued it behind order 2.
    assert!(a.orders()[&1].queued_at > a.orders()[&2].queued_at);
    assert!(!a.orders()[&3].pending);
    assert_eq!(a.levels().len(), 2);
}

/// A trade of `qty` at 10 between resting `maker` (a buy) and aggressor `taker`.
fn sell_trade(maker: OrderId, taker: OrderId, qty: QtyLots, maker_leaves: QtyLots) -> Event {
    Event::Trade {
        trade_id: 1,
        symbol: 0,
        price: 10,
        qty,
        maker_id: maker,
        taker_id: taker,
        maker_account: maker as AccountId,
        taker_account: taker as AccountId,
        taker_side: Side::Sell,
        maker_leaves,
        taker_leaves: 0,
    }
}

#[test]
fn catches_order_types_ii_faults() {
    let stop = Command::New(types::NewOrder {
        stop_price: 90,
        ..new_order(1, Side::Sell, 0, 5)
    });
    let mut a = Auditor::new();
    a.on_command(&stop, &[accepted(1, Side::Sell, 0, 5)])
        .expect("consistent");
    assert!(a.orders()[&1].pending);
    // A pending stop must not rest, and a replace of it keeps priority.
    let resting = |_, side| match side {
        Side::Sell => vec![(1, 0, 5)],
        Side::Buy => vec![],
    };
    assert!(a
        .check_book(1, resting)
        .unwrap_err()
        .contains("rests while a pending stop"));
    assert_eq!(a.check_book(1, |_, _| vec![]), Ok(()));
    let lost = Event::Replaced {
        id: 1,
        account: 1,
        symbol: 0,
        price: 0,
        qty: 6,
        lost_priority: true,
    };
    assert!(a
        .clone()
        .on_event(&lost)
        .unwrap_err()
        .contains("lost_priority=true"));
    // An iceberg trades no more than its shown part.
    let iceberg = Command::New(types::NewOrder {
        display_qty: 2,
        ..new_order(2, Side::Buy, 10, 5)
    });
    a.on_command(
        &iceberg,
        &[accepted(2, Side::Buy, 10, 5), level(Side::Buy, 10, 2, 1)],
    )
    .expect("consistent");
    let taker = Command::New(new_order(3, Side::Sell, 10, 3));
    let over_peak = [accepted(3, Side::Sell, 10, 3), sell_trade(2, 3, 3, 2)];
    assert!(a
        .clone()
        .on_command(&taker, &over_peak)
        .unwrap_err()
        .contains("traded 3 while showing 2"));
    // Nothing trades in a call but its uncross; a book in a call may be crossed at rest.
    a.on_command(&Command::CallStart { symbol: 0 }, &[])
        .expect("silent");
    let taker = Command::New(new_order(3, Side::Sell, 10, 1));
    let in_call = [accepted(3, Side::Sell, 10, 1), sell_trade(2, 3, 1, 4)];
    assert!(a
        .clone()
        .on_command(&taker, &in_call)
        .unwrap_err()
        .contains("which is in a call"));
    let ask = Command::New(new_order(4, Side::Sell, 9, 1));
    a.on_command(
        &ask,
        &[accepted(4, Side::Sell, 9, 1), level(Side::Sell, 9, 1, 1)],
    )
    .expect("rests");
    let crossed = |_, side| match side {
        Side::Buy => vec![(2, 10, 5)],
        Side::Sell => vec![(4, 9, 1)],
    };
    assert_eq!(a.check_book(1, crossed), Ok(()));
    let mut after_call = a.clone();
    after_call
        .on_command(
            &Command::Uncross {
                symbol: 0,
                reference: 0,
            },
            &[],
        )
        .expect("an uncross without events is consistent here");
    assert!(after_call
        .check_book(1, crossed)
        .unwrap_err()
        .contains("crossed at rest"));
    // A trigger names a pending stop.
    let bogus = Event::Triggered {
        id: 2,
        account: 2,
        symbol: 0,
        side: Side::Buy,
        price: 10,
        qty: 5,
    };
    assert!(a
        .clone()
        .on_command(&Command::Expire { now_ns: 1 }, &[bogus])
        .unwrap_err()
        .contains("not a pending stop"));
}
