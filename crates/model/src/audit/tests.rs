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
