//! The reference's accessors and invariants for stops, icebergs, GTD orders and call auctions
//! (their event rules are pinned by `scenarios/{stops,iceberg,gtd,auction}.scn`).

use super::*;

fn order(id: OrderId, side: Side, price: i64, qty: u64) -> NewOrder {
    NewOrder {
        id,
        account: id as AccountId,
        symbol: 0,
        side,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Gtc,
        price,
        qty,
        ..Default::default()
    }
}

fn apply(r: &mut Reference, cmd: Command) -> Vec<Event> {
    let mut ev = Vec::new();
    r.apply(&cmd, &mut ev);
    assert_eq!(r.check_invariants(), Ok(()), "after {cmd:?}");
    ev
}

#[test]
fn pending_stops_are_listed_in_acceptance_order_and_count_as_live() {
    let mut r = Reference::new(&insts());
    let stop = |id, side, stop_price, qty| {
        Command::New(NewOrder {
            ord_type: OrdType::Market,
            price: 0,
            stop_price,
            ..order(id, side, 0, qty)
        })
    };
    apply(&mut r, stop(9, Side::Sell, 90, 3));
    apply(&mut r, stop(4, Side::Buy, 110, 2));
    apply(
        &mut r,
        Command::Replace {
            id: 9,
            account: 9,
            symbol: 0,
            price: 0,
            qty: 5,
        },
    );
    let pending: Vec<(OrderId, u64, i64)> = r
        .pending_stops(0)
        .iter()
        .map(|o| (o.id, o.qty, o.stop_price))
        .collect();
    assert_eq!(pending, vec![(9, 5, 90), (4, 2, 110)]);
    assert!(r.pending_stops(1).is_empty() && r.pending_stops(7).is_empty());
    assert_eq!(r.find_pending(4).map(|o| o.side), Some(Side::Buy));
    assert!(r.find(4).is_none() && r.levels(0, Side::Buy).is_empty());
    let l = r.ledger(9).expect("accepted");
    assert_eq!((l.entered, l.remaining), (5, 5));
    assert!(r.is_used(4));
}

#[test]
fn next_expiry_is_the_earliest_live_gtd_order_resting_or_pending() {
    let mut r = Reference::new(&insts());
    assert_eq!(r.next_expiry(), None);
    let gtd = |o: NewOrder, expire_ns| {
        Command::New(NewOrder {
            tif: TimeInForce::Gtd,
            expire_ns,
            ..o
        })
    };
    apply(&mut r, gtd(order(1, Side::Buy, 100, 1), 50));
    apply(
        &mut r,
        gtd(
            NewOrder {
                stop_price: 120,
                ..order(2, Side::Buy, 121, 1)
            },
            30,
        ),
    );
    apply(&mut r, Command::New(order(3, Side::Sell, 130, 1)));
    assert_eq!(r.next_expiry(), Some(30));
    assert!(apply(&mut r, Command::Expire { now_ns: 29 }).is_empty());
    let ev = apply(&mut r, Command::Expire { now_ns: 30 });
    assert!(matches!(
        ev[..],
        [Event::Canceled {
            id: 2,
            reason: CancelReason::Expired,
            qty: 1,
            ..
        }]
    ));
    assert_eq!(r.next_expiry(), Some(50));
    apply(&mut r, Command::Expire { now_ns: 50 });
    assert_eq!(r.next_expiry(), None);
    assert_eq!(r.resting(0, Side::Sell).len(), 1);
}

#[test]
fn levels_count_only_the_shown_part_of_icebergs() {
    let mut r = Reference::new(&insts());
    let iceberg = |id, qty, display_qty| {
        Command::New(NewOrder {
            display_qty,
            ..order(id, Side::Sell, 100, qty)
        })
    };
    apply(&mut r, iceberg(1, 10, 3));
    apply(&mut r, iceberg(2, 2, 5));
    apply(&mut r, Command::New(order(3, Side::Sell, 100, 4)));
    assert_eq!(r.levels(0, Side::Sell), vec![(100, 3 + 2 + 4, 3)]);
    let o = r.find(1).expect("rests").1;
    assert_eq!((o.qty, o.shown, o.display_qty), (10, 3, 3));
}

#[test]
fn indicative_is_what_the_uncross_then_does() {
    let mut r = Reference::new(&insts());
    assert!(!r.in_call(0) && !r.in_call(9));
    apply(&mut r, Command::CallStart { symbol: 0 });
    assert!(r.in_call(0) && !r.in_call(1));
    assert_eq!(r.indicative(0, 0), None);
    apply(&mut r, Command::New(order(1, Side::Sell, 99, 4)));
    apply(&mut r, Command::New(order(2, Side::Buy, 102, 4)));
    // Volume 4 and imbalance 0 at both prices: the reference decides, else the lowest.
    assert_eq!(r.indicative(0, 0), Some((99, 4)));
    assert_eq!(r.indicative(0, 101), Some((102, 4)));
    assert_eq!(r.indicative(0, -1000), Some((99, 4)));
    assert_eq!(r.indicative(7, 0), None);
    let ev = apply(
        &mut r,
        Command::Uncross {
            symbol: 0,
            reference: 101,
        },
    );
    assert_eq!(
        ev[0],
        Event::Uncrossed {
            symbol: 0,
            price: 102,
            qty: 4
        }
    );
    assert!(!r.in_call(0));
    assert_eq!(r.indicative(0, 0), None);
}

#[test]
fn a_crossed_book_breaks_the_invariants_only_outside_a_call() {
    let mut r = Reference::new(&insts());
    apply(&mut r, Command::CallStart { symbol: 1 });
    let on_beta = |o: NewOrder| Command::New(NewOrder { symbol: 1, ..o });
    apply(&mut r, on_beta(order(1, Side::Buy, 101, 1)));
    apply(&mut r, on_beta(order(2, Side::Sell, 100, 1)));
    r.books[1].in_call = false;
    let e = r.check_invariants().expect_err("crossed outside a call");
    assert!(e.contains("crossed at rest"), "{e}");
}

#[test]
fn invariants_catch_a_bad_shown_part_and_a_resting_pending_stop() {
    let mut r = Reference::new(&insts());
    apply(
        &mut r,
        Command::New(NewOrder {
            display_qty: 3,
            ..order(1, Side::Buy, 100, 10)
        }),
    );
    let mut shown_too_big = r.clone();
    shown_too_big.books[0].bids[0].shown = 4;
    let e = shown_too_big
        .check_invariants()
        .expect_err("shown above peak");
    assert!(e.contains("showing 4 of 10"), "{e}");
    let mut twice = r.clone();
    twice.books[0].stops.push(NewOrder {
        stop_price: 90,
        ..order(1, Side::Buy, 100, 10)
    });
    let e = twice.check_invariants().expect_err("pending and resting");
    assert!(e.contains("both pending and live"), "{e}");
}

#[test]
fn an_uncross_beyond_u64_volume_saturates_its_report_and_does_not_panic() {
    let mut r = Reference::new(&insts());
    apply(&mut r, Command::CallStart { symbol: 0 });
    for (id, side) in [
        (1, Side::Buy),
        (2, Side::Buy),
        (3, Side::Sell),
        (4, Side::Sell),
    ] {
        apply(&mut r, Command::New(order(id, side, 100, u64::MAX)));
    }
    assert_eq!(r.indicative(0, 0), Some((100, u64::MAX)));
    let ev = apply(
        &mut r,
        Command::Uncross {
            symbol: 0,
            reference: 0,
        },
    );
    assert!(matches!(ev[0], Event::Uncrossed { qty: u64::MAX, .. }));
    assert_eq!(trade_ids(&ev), vec![1, 2]);
    assert!(r.resting(0, Side::Buy).is_empty() && r.resting(0, Side::Sell).is_empty());
}
