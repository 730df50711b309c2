//! Unit tests for every rule of the engine's semantics. Invariants are checked after every
//! command.

use super::*;
use types::{CancelReason as CR, Event as E, RejectReason as RR};

const ACME: SymbolId = 0;
const TICKED: SymbolId = 1; // tick 5, lot 10

fn instruments() -> Vec<Instrument> {
    vec![
        Instrument {
            symbol: Symbol::new("ACME").unwrap(),
            tick: 1,
            lot: 1,
        },
        Instrument {
            symbol: Symbol::new("TCK").unwrap(),
            tick: 5,
            lot: 10,
        },
    ]
}

fn small_config() -> EngineConfig {
    EngineConfig {
        orders_max: 64,
        levels_initial: 64,
        levels_max: 1 << 12,
        ids_direct: 1000,
        ids_hashed_initial: 16,
    }
}

struct T {
    e: Engine,
}

fn new_engine() -> T {
    T {
        e: Engine::new(&instruments(), small_config()),
    }
}

fn limit(id: u64, account: u32, side: Side, price: i64, qty: u64) -> NewOrder {
    NewOrder {
        id,
        account,
        symbol: ACME,
        side,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Gtc,
        price,
        qty,
        post_only: false,
        stp: StpMode::CancelNewest,
        ..Default::default()
    }
}

impl T {
    fn run(&mut self, cmd: Command) -> Vec<Event> {
        let mut ev = Vec::new();
        self.e.apply(&cmd, &mut ev);
        assert!(!ev.is_empty(), "every command is answered");
        if let Err(why) = self.e.check_invariants() {
            panic!("invariant broken after {cmd:?}: {why}\nevents: {ev:?}");
        }
        ev
    }
    fn submit(&mut self, o: NewOrder) -> Vec<Event> {
        self.run(Command::New(o))
    }
    fn buy(&mut self, id: u64, account: u32, price: i64, qty: u64) -> Vec<Event> {
        self.submit(limit(id, account, Side::Buy, price, qty))
    }
    fn sell(&mut self, id: u64, account: u32, price: i64, qty: u64) -> Vec<Event> {
        self.submit(limit(id, account, Side::Sell, price, qty))
    }
    fn cancel(&mut self, id: u64, account: u32) -> Vec<Event> {
        self.run(Command::Cancel {
            id,
            account,
            symbol: ACME,
        })
    }
    fn replace(&mut self, id: u64, account: u32, price: i64, qty: u64) -> Vec<Event> {
        self.run(Command::Replace {
            id,
            account,
            symbol: ACME,
            price,
            qty,
        })
    }
    fn ids(&self, side: Side) -> Vec<(u64, i64, u64)> {
        self.e
            .resting(ACME, side)
            .map(|o| (o.id, o.price, o.qty))
            .collect()
    }
}

fn trades(ev: &[Event]) -> Vec<(u64, u64, i64, u64)> {
    ev.iter()
        .filter_map(|e| match *e {
            E::Trade {
                maker_id,
                taker_id,
                price,
                qty,
                ..
            } => Some((maker_id, taker_id, price, qty)),
            _ => None,
        })
        .collect()
}

fn kinds(ev: &[Event]) -> String {
    ev.iter()
        .map(|e| match e {
            E::Accepted { .. } => "A",
            E::Rejected { .. } => "R",
            E::Trade { .. } => "T",
            E::Canceled { .. } => "C",
            E::Replaced { .. } => "P",
            E::MassCanceled { .. } => "M",
            E::Level { .. } => "L",
            E::Triggered { .. } => "G",
            E::Uncrossed { .. } => "U",
        })
        .collect()
}

fn level(side: Side, price: i64, qty: u64, orders: u32) -> Event {
    E::Level {
        symbol: ACME,
        side,
        price,
        qty,
        orders,
    }
}

fn canceled(id: u64, account: u32, reason: CR, qty: u64) -> Event {
    E::Canceled {
        id,
        account,
        symbol: ACME,
        reason,
        qty,
    }
}

#[test]
fn resting_order_emits_accepted_then_level() {
    let mut t = new_engine();
    let ev = t.buy(1, 7, 100, 5);
    assert_eq!(
        ev,
        vec![
            E::Accepted {
                id: 1,
                account: 7,
                symbol: ACME,
                side: Side::Buy,
                price: 100,
                qty: 5
            },
            level(Side::Buy, 100, 5, 1)
        ]
    );
    assert_eq!(t.e.best_bid(ACME), Some((100, 5)));
    assert_eq!(t.e.best_ask(ACME), None);
    assert_eq!(t.e.depth_at(ACME, Side::Buy, 100), 5);
    assert_eq!(t.e.depth_at(ACME, Side::Buy, 101), 0);
    assert_eq!(t.e.order(1).unwrap().qty, 5);
}

#[test]
fn price_time_priority_and_maker_price() {
    let mut t = new_engine();
    t.sell(1, 1, 101, 5);
    t.sell(2, 2, 100, 5);
    t.sell(3, 3, 100, 5);
    t.sell(4, 4, 102, 5);
    let ev = t.buy(9, 9, 101, 12);
    assert_eq!(
        trades(&ev),
        vec![(2, 9, 100, 5), (3, 9, 100, 5), (1, 9, 101, 2)]
    );
    assert_eq!(kinds(&ev), "ATLTLTL");
    assert_eq!(ev[2], level(Side::Sell, 100, 5, 1));
    assert_eq!(ev[4], level(Side::Sell, 100, 0, 0));
    assert_eq!(ev[6], level(Side::Sell, 101, 3, 1));
    assert_eq!(t.ids(Side::Sell), vec![(1, 101, 3), (4, 102, 5)]);
    // Trade ids increase from 1, leaves are exact.
    let ids: Vec<(u64, u64, u64)> = ev
        .iter()
        .filter_map(|e| match *e {
            E::Trade {
                trade_id,
                maker_leaves,
                taker_leaves,
                ..
            } => Some((trade_id, maker_leaves, taker_leaves)),
            _ => None,
        })
        .collect();
    assert_eq!(ids, vec![(1, 0, 7), (2, 0, 2), (3, 3, 0)]);
    assert_eq!(t.e.next_trade_id(), 4);
}

#[test]
fn partial_fill_keeps_maker_priority() {
    let mut t = new_engine();
    t.sell(1, 1, 100, 10);
    t.sell(2, 2, 100, 10);
    t.buy(3, 3, 100, 4);
    assert_eq!(t.ids(Side::Sell), vec![(1, 100, 6), (2, 100, 10)]);
    let ev = t.buy(4, 4, 100, 7);
    assert_eq!(trades(&ev), vec![(1, 4, 100, 6), (2, 4, 100, 1)]);
    assert_eq!(t.ids(Side::Sell), vec![(2, 100, 9)]);
}

#[test]
fn aggressor_remainder_rests_after_sweeping() {
    let mut t = new_engine();
    t.sell(1, 1, 100, 3);
    let ev = t.buy(2, 2, 101, 5);
    assert_eq!(kinds(&ev), "ATLL");
    assert_eq!(ev[3], level(Side::Buy, 101, 2, 1));
    assert_eq!(t.e.best_bid(ACME), Some((101, 2)));
    assert_eq!(t.e.best_ask(ACME), None);
}

#[test]
fn market_order_never_rests() {
    let mut t = new_engine();
    let mut m = limit(1, 1, Side::Buy, 0, 5);
    m.ord_type = OrdType::Market;
    let ev = t.submit(m);
    assert_eq!(kinds(&ev), "AC");
    assert!(matches!(
        ev[0],
        E::Accepted {
            price: 0,
            qty: 5,
            ..
        }
    ));
    assert_eq!(ev[1], canceled(1, 1, CR::NoLiquidity, 5));
    t.sell(2, 2, 100, 2);
    t.sell(3, 2, 105, 2);
    let mut m = limit(4, 1, Side::Buy, -7, 5); // price ignored
    m.ord_type = OrdType::Market;
    m.tif = TimeInForce::Ioc;
    let ev = t.submit(m);
    assert_eq!(trades(&ev), vec![(2, 4, 100, 2), (3, 4, 105, 2)]);
    assert_eq!(*ev.last().unwrap(), canceled(4, 1, CR::NoLiquidity, 1));
    assert_eq!(t.e.resting_count(), 0);
}

#[test]
fn ioc_remainder_canceled() {
    let mut t = new_engine();
    t.sell(1, 1, 100, 3);
    let mut o = limit(2, 2, Side::Buy, 100, 5);
    o.tif = TimeInForce::Ioc;
    let ev = t.submit(o);
    assert_eq!(kinds(&ev), "ATLC");
    assert_eq!(ev[3], canceled(2, 2, CR::Ioc, 2));
    let mut o = limit(3, 2, Side::Buy, 100, 5);
    o.tif = TimeInForce::Ioc;
    assert_eq!(kinds(&t.submit(o)), "AC");
    assert_eq!(t.e.resting_count(), 0);
}

#[test]
fn fok_exactly_fillable_and_one_lot_short() {
    let mut t = new_engine();
    t.sell(1, 1, 100, 3);
    t.sell(2, 1, 101, 4);
    t.sell(3, 1, 103, 9);
    let mut short = limit(4, 2, Side::Buy, 101, 8);
    short.tif = TimeInForce::Fok;
    let ev = t.submit(short);
    assert_eq!(kinds(&ev), "AC");
    assert_eq!(ev[1], canceled(4, 2, CR::Fok, 8));
    assert_eq!(t.ids(Side::Sell).len(), 3);
    let mut exact = limit(5, 2, Side::Buy, 101, 7);
    exact.tif = TimeInForce::Fok;
    let ev = t.submit(exact);
    assert_eq!(kinds(&ev), "ATLTL");
    assert_eq!(t.ids(Side::Sell), vec![(3, 103, 9)]);
    // A market FOK has no limit.
    let mut m = limit(6, 2, Side::Buy, 0, 10);
    m.ord_type = OrdType::Market;
    m.tif = TimeInForce::Fok;
    assert_eq!(kinds(&t.submit(m)), "AC");
    let mut m = limit(7, 2, Side::Buy, 0, 9);
    m.ord_type = OrdType::Market;
    m.tif = TimeInForce::Fok;
    assert_eq!(kinds(&t.submit(m)), "ATL");
}

#[test]
fn fok_with_stp_counts_only_what_it_may_fill() {
    let mut t = new_engine();
    t.sell(1, 2, 100, 3);
    t.sell(2, 1, 100, 5); // own
    t.sell(3, 2, 101, 4);
    let fok = |id, qty, stp| NewOrder {
        tif: TimeInForce::Fok,
        stp,
        ..limit(id, 1, Side::Buy, 101, qty)
    };
    // cancel_newest / cancel_both: only the 3 ahead of the own order count.
    for (id, stp) in [(10, StpMode::CancelNewest), (11, StpMode::CancelBoth)] {
        let ev = t.submit(fok(id, 4, stp));
        assert_eq!(kinds(&ev), "AC", "{stp:?}");
        assert_eq!(t.ids(Side::Sell).len(), 3, "a failed FOK changes nothing");
    }
    // cancel_oldest: own orders are skipped: 3 + 4 = 7 fillable.
    let ev = t.submit(fok(12, 8, StpMode::CancelOldest));
    assert_eq!(kinds(&ev), "AC");
    // none: all 12 count.
    let ev = t.submit(fok(13, 12, StpMode::None));
    assert_eq!(kinds(&ev), "ATLTLTL");
    assert_eq!(trades(&ev)[1], (2, 13, 100, 5));
    assert!(t.ids(Side::Sell).is_empty());
    // cancel_oldest success cancels the own order on the way.
    t.sell(20, 2, 100, 3);
    t.sell(21, 1, 100, 5);
    t.sell(22, 2, 101, 4);
    let ev = t.submit(fok(23, 7, StpMode::CancelOldest));
    assert_eq!(kinds(&ev), "ATLCLTL");
    assert_eq!(ev[3], canceled(21, 1, CR::Stp, 5));
    assert_eq!(ev[4], level(Side::Sell, 100, 0, 0));
    // cancel_newest success when filled before reaching the own order.
    t.sell(30, 2, 100, 3);
    t.sell(31, 1, 100, 5);
    let ev = t.submit(fok(32, 3, StpMode::CancelNewest));
    assert_eq!(kinds(&ev), "ATL");
    assert_eq!(t.ids(Side::Sell), vec![(31, 100, 5)]);
}

#[test]
fn stp_cancel_newest_default() {
    let mut t = new_engine();
    t.sell(1, 2, 100, 3);
    t.sell(2, 1, 100, 5);
    t.sell(3, 2, 100, 5);
    let ev = t.buy(4, 1, 100, 10);
    assert_eq!(kinds(&ev), "ATLC");
    assert_eq!(ev[3], canceled(4, 1, CR::Stp, 7));
    assert_eq!(t.ids(Side::Sell), vec![(2, 100, 5), (3, 100, 5)]);
    assert!(t.ids(Side::Buy).is_empty(), "the remainder never rests");
}

#[test]
fn stp_cancel_oldest_goes_on() {
    let mut t = new_engine();
    t.sell(1, 1, 100, 5);
    t.sell(2, 2, 100, 5);
    let o = NewOrder {
        stp: StpMode::CancelOldest,
        ..limit(3, 1, Side::Buy, 100, 8)
    };
    let ev = t.submit(o);
    assert_eq!(kinds(&ev), "ACLTLL");
    assert_eq!(ev[1], canceled(1, 1, CR::Stp, 5));
    assert_eq!(ev[2], level(Side::Sell, 100, 5, 1));
    assert_eq!(ev[5], level(Side::Buy, 100, 3, 1));
    assert_eq!(t.ids(Side::Buy), vec![(3, 100, 3)]);
}

#[test]
fn stp_cancel_both() {
    let mut t = new_engine();
    t.sell(1, 2, 100, 2);
    t.sell(2, 1, 100, 5);
    t.sell(3, 2, 100, 5);
    let o = NewOrder {
        stp: StpMode::CancelBoth,
        ..limit(4, 1, Side::Buy, 100, 8)
    };
    let ev = t.submit(o);
    assert_eq!(kinds(&ev), "ATLCLC");
    assert_eq!(ev[3], canceled(2, 1, CR::Stp, 5));
    assert_eq!(ev[4], level(Side::Sell, 100, 5, 1));
    assert_eq!(ev[5], canceled(4, 1, CR::Stp, 6));
    assert_eq!(t.ids(Side::Sell), vec![(3, 100, 5)]);
}

#[test]
fn stp_none_trades_with_itself() {
    let mut t = new_engine();
    t.sell(1, 1, 100, 5);
    let o = NewOrder {
        stp: StpMode::None,
        ..limit(2, 1, Side::Buy, 100, 5)
    };
    let ev = t.submit(o);
    assert_eq!(trades(&ev), vec![(1, 2, 100, 5)]);
}

#[test]
fn stp_only_applies_to_crossing_orders() {
    let mut t = new_engine();
    t.sell(1, 2, 100, 5);
    t.sell(2, 1, 101, 5); // own but beyond the limit
    let ev = t.buy(3, 1, 100, 8);
    assert_eq!(kinds(&ev), "ATLL");
    assert_eq!(t.ids(Side::Buy), vec![(3, 100, 3)]);
}

#[test]
fn post_only() {
    let mut t = new_engine();
    t.sell(1, 1, 100, 5);
    let po = |id, price| NewOrder {
        post_only: true,
        ..limit(id, 1, Side::Buy, price, 5)
    };
    // Crossing, even against its own account.
    assert_eq!(
        t.submit(po(2, 100)),
        vec![E::Rejected {
            id: 2,
            reason: RR::PostOnlyWouldCross
        }]
    );
    assert!(!t.e.id_used(2), "a rejected order does not use its id");
    assert_eq!(kinds(&t.submit(po(2, 99))), "AL");
    // Replace of a post-only order that would cross: rejected, unchanged.
    let ev = t.replace(2, 1, 100, 5);
    assert_eq!(
        ev,
        vec![E::Rejected {
            id: 2,
            reason: RR::PostOnlyWouldCross
        }]
    );
    assert_eq!(t.ids(Side::Buy), vec![(2, 99, 5)]);
    // Not crossing: fine.
    assert_eq!(kinds(&t.replace(2, 1, 98, 6)), "PLL");
    // Post-only market crosses any non-empty opposite side.
    let mut m = po(3, 0);
    m.ord_type = OrdType::Market;
    assert_eq!(kinds(&t.submit(m)), "R");
}

#[test]
fn cancel_rules() {
    let mut t = new_engine();
    t.buy(1, 1, 100, 5);
    assert_eq!(
        t.cancel(1, 2),
        vec![E::Rejected {
            id: 1,
            reason: RR::UnknownOrder
        }],
        "another account's order"
    );
    let ev = t.run(Command::Cancel {
        id: 1,
        account: 1,
        symbol: TICKED,
    });
    assert_eq!(kinds(&ev), "R", "wrong symbol is unknown order");
    assert_eq!(
        t.run(Command::Cancel {
            id: 1,
            account: 1,
            symbol: 9
        }),
        vec![E::Rejected {
            id: 1,
            reason: RR::Invalid(Field::Symbol)
        }]
    );
    assert_eq!(
        t.cancel(1, 1),
        vec![canceled(1, 1, CR::User, 5), level(Side::Buy, 100, 0, 0)]
    );
    assert_eq!(kinds(&t.cancel(1, 1)), "R", "already canceled");
    assert_eq!(kinds(&t.cancel(77, 1)), "R", "never seen");
}

#[test]
fn cancel_after_fill_and_after_partial_fill() {
    let mut t = new_engine();
    t.sell(1, 1, 100, 5);
    t.sell(2, 1, 100, 5);
    t.buy(3, 2, 100, 7);
    assert_eq!(
        t.cancel(1, 1),
        vec![E::Rejected {
            id: 1,
            reason: RR::UnknownOrder
        }]
    );
    assert_eq!(
        t.cancel(2, 1),
        vec![canceled(2, 1, CR::User, 3), level(Side::Sell, 100, 0, 0)]
    );
}

#[test]
fn replace_keeps_priority_on_same_price_smaller_or_equal_qty() {
    let mut t = new_engine();
    t.buy(1, 1, 100, 10);
    t.buy(2, 2, 100, 10);
    let ev = t.replace(1, 1, 100, 4);
    assert_eq!(
        ev,
        vec![
            E::Replaced {
                id: 1,
                account: 1,
                symbol: ACME,
                price: 100,
                qty: 4,
                lost_priority: false
            },
            level(Side::Buy, 100, 14, 2)
        ]
    );
    assert_eq!(t.ids(Side::Buy), vec![(1, 100, 4), (2, 100, 10)]);
    assert_eq!(t.e.order(1).unwrap().orig_qty, 4);
    let ev = t.replace(1, 1, 100, 4);
    assert_eq!(kinds(&ev), "PL", "an unchanged replace still reports");
    assert_eq!(t.ids(Side::Buy), vec![(1, 100, 4), (2, 100, 10)]);
}

#[test]
fn replace_loses_priority_on_increase_or_price_change() {
    let mut t = new_engine();
    t.buy(1, 1, 100, 10);
    t.buy(2, 2, 100, 10);
    let ev = t.replace(1, 1, 100, 11);
    assert_eq!(
        ev,
        vec![
            E::Replaced {
                id: 1,
                account: 1,
                symbol: ACME,
                price: 100,
                qty: 11,
                lost_priority: true
            },
            level(Side::Buy, 100, 10, 1),
            level(Side::Buy, 100, 21, 2)
        ]
    );
    assert_eq!(t.ids(Side::Buy), vec![(2, 100, 10), (1, 100, 11)]);
    t.replace(2, 2, 99, 10);
    assert_eq!(t.ids(Side::Buy), vec![(1, 100, 11), (2, 99, 10)]);
    t.replace(2, 2, 100, 10);
    assert_eq!(t.ids(Side::Buy), vec![(1, 100, 11), (2, 100, 10)]);
}

#[test]
fn replace_reevaluates_as_aggressor() {
    let mut t = new_engine();
    t.sell(1, 1, 105, 4);
    t.sell(2, 1, 106, 4);
    t.buy(3, 2, 100, 10);
    let ev = t.replace(3, 2, 105, 10);
    assert_eq!(kinds(&ev), "PLTLL");
    assert_eq!(ev[1], level(Side::Buy, 100, 0, 0));
    assert_eq!(trades(&ev), vec![(1, 3, 105, 4)]);
    assert_eq!(ev[4], level(Side::Buy, 105, 6, 1));
    assert_eq!(t.e.order(3).unwrap().orig_qty, 10);
    // Fully filled by a replace: gone, no new level.
    let ev = t.replace(3, 2, 106, 4);
    assert_eq!(kinds(&ev), "PLTL");
    assert!(t.e.order(3).is_none());
    assert_eq!(kinds(&t.cancel(3, 2)), "R");
    // STP on a replace cancels the replaced order (cancel_newest).
    t.sell(4, 1, 110, 4);
    t.buy(5, 1, 100, 4);
    let ev = t.replace(5, 1, 110, 4);
    assert_eq!(kinds(&ev), "PLC");
    assert_eq!(ev[2], canceled(5, 1, CR::Stp, 4));
    assert!(t.e.order(5).is_none());
}

#[test]
fn replace_rejections() {
    let mut t = new_engine();
    t.buy(1, 1, 100, 10);
    let rej = |id, reason| vec![E::Rejected { id, reason }];
    assert_eq!(t.replace(1, 1, 100, 0), rej(1, RR::Invalid(Field::Qty)));
    assert_eq!(t.replace(1, 1, 0, 5), rej(1, RR::Invalid(Field::Price)));
    assert_eq!(t.replace(1, 2, 100, 5), rej(1, RR::UnknownOrder));
    assert_eq!(t.replace(9, 1, 100, 5), rej(9, RR::UnknownOrder));
    assert_eq!(t.ids(Side::Buy), vec![(1, 100, 10)]);
}

#[test]
fn modify_requeue_always_loses_priority() {
    let mut t = new_engine();
    t.buy(1, 1, 100, 10);
    t.buy(2, 2, 100, 10);
    let mut ev = Vec::new();
    t.e.modify_requeue(1, 1, ACME, 100, 5, &mut ev);
    t.e.check_invariants().unwrap();
    assert!(matches!(
        ev[0],
        E::Replaced {
            lost_priority: true,
            ..
        }
    ));
    assert_eq!(t.ids(Side::Buy), vec![(2, 100, 10), (1, 100, 5)]);
    let mut ev = Vec::new();
    t.e.modify_requeue(3, 1, ACME, 100, 5, &mut ev);
    assert_eq!(kinds(&ev), "R");
}

#[test]
fn validation_order_and_grid() {
    let mut t = new_engine();
    let rej = |id, reason| vec![E::Rejected { id, reason }];
    let o = |id, price, qty| NewOrder {
        symbol: TICKED,
        ..limit(id, 1, Side::Buy, price, qty)
    };
    assert_eq!(
        t.submit(NewOrder {
            symbol: 2,
            qty: 0,
            ..o(1, 0, 0)
        }),
        rej(1, RR::Invalid(Field::Symbol))
    );
    assert_eq!(t.submit(o(1, 0, 0)), rej(1, RR::Invalid(Field::Qty)));
    assert_eq!(t.submit(o(1, 0, 15)), rej(1, RR::Invalid(Field::Qty)));
    assert_eq!(t.submit(o(1, 0, 20)), rej(1, RR::Invalid(Field::Price)));
    assert_eq!(t.submit(o(1, -5, 20)), rej(1, RR::Invalid(Field::Price)));
    assert_eq!(t.submit(o(1, 12, 20)), rej(1, RR::Invalid(Field::Price)));
    assert_eq!(kinds(&t.submit(o(1, 15, 20))), "AL");
    assert_eq!(t.submit(o(1, 15, 20)), rej(1, RR::DuplicateId));
    // Field errors come before the duplicate check.
    assert_eq!(t.submit(o(1, 15, 0)), rej(1, RR::Invalid(Field::Qty)));
    // Market orders ignore the price but not the lot.
    let m = NewOrder {
        ord_type: OrdType::Market,
        ..o(2, 3, 20)
    };
    assert_eq!(kinds(&t.submit(m)), "AC");
    assert_eq!(
        t.run(Command::Replace {
            id: 1,
            account: 1,
            symbol: TICKED,
            price: 17,
            qty: 20
        }),
        rej(1, RR::Invalid(Field::Price))
    );
    assert_eq!(
        t.run(Command::Replace {
            id: 1,
            account: 1,
            symbol: TICKED,
            price: 20,
            qty: 25
        }),
        rej(1, RR::Invalid(Field::Qty))
    );
    assert_eq!(t.e.depth_at(TICKED, Side::Buy, 15), 20);
}

#[test]
fn duplicate_id_covers_live_and_past_orders() {
    let mut t = new_engine();
    t.buy(1, 1, 100, 5);
    let rej = |id| {
        vec![E::Rejected {
            id,
            reason: RR::DuplicateId,
        }]
    };
    assert_eq!(t.sell(1, 2, 200, 5), rej(1), "live");
    t.cancel(1, 1);
    assert_eq!(t.buy(1, 1, 100, 5), rej(1), "canceled");
    let mut ioc = limit(2, 1, Side::Buy, 100, 5);
    ioc.tif = TimeInForce::Ioc;
    t.submit(ioc);
    assert_eq!(t.buy(2, 1, 100, 5), rej(2), "IOC that never rested");
    // Ids beyond the direct table go through the hash table.
    let big = 1u64 << 50;
    assert_eq!(kinds(&t.buy(big, 1, 100, 5)), "AL");
    assert_eq!(t.buy(big, 1, 100, 5), rej(big));
    assert_eq!(kinds(&t.cancel(big, 1)), "CL");
    assert_eq!(t.buy(big, 1, 100, 5), rej(big));
    assert_eq!(kinds(&t.buy(0, 1, 100, 5)), "AL", "id 0 is an ordinary id");
    assert_eq!(kinds(&t.buy(u64::MAX, 1, 100, 5)), "AL");
}

#[test]
fn mass_cancel_filters_and_order() {
    let mut t = new_engine();
    t.buy(1, 1, 99, 1);
    t.buy(2, 1, 100, 1);
    t.buy(3, 2, 100, 1);
    t.sell(4, 1, 102, 1);
    t.sell(5, 1, 101, 1);
    t.submit(NewOrder {
        symbol: TICKED,
        ..limit(6, 1, Side::Buy, 100, 10)
    });
    let ev = t.run(Command::MassCancel {
        account: 1,
        symbol: Some(ACME),
        side: Some(Side::Sell),
    });
    let ids: Vec<u64> = ev
        .iter()
        .filter_map(|e| match *e {
            E::Canceled { id, reason, .. } => {
                assert_eq!(reason, CR::User);
                Some(id)
            }
            _ => None,
        })
        .collect();
    assert_eq!(ids, vec![5, 4]);
    assert_eq!(
        *ev.last().unwrap(),
        E::MassCanceled {
            account: 1,
            count: 2
        }
    );
    let ev = t.run(Command::MassCancel {
        account: 1,
        symbol: None,
        side: None,
    });
    assert_eq!(kinds(&ev), "CLCLCLM");
    let ids: Vec<u64> = ev
        .iter()
        .filter_map(|e| match *e {
            E::Canceled { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    assert_eq!(ids, vec![2, 1, 6]);
    assert_eq!(t.ids(Side::Buy), vec![(3, 100, 1)]);
    assert_eq!(
        t.run(Command::MassCancel {
            account: 1,
            symbol: None,
            side: None
        }),
        vec![E::MassCanceled {
            account: 1,
            count: 0
        }]
    );
    assert_eq!(
        t.run(Command::MassCancel {
            account: 1,
            symbol: Some(5),
            side: None
        }),
        vec![E::Rejected {
            id: 0,
            reason: RR::Invalid(Field::Symbol)
        }]
    );
}

#[test]
fn expire_day_cancels_only_day_orders() {
    let mut t = new_engine();
    t.submit(NewOrder {
        tif: TimeInForce::Day,
        ..limit(1, 1, Side::Buy, 100, 1)
    });
    t.buy(2, 1, 100, 1);
    t.submit(NewOrder {
        tif: TimeInForce::Day,
        ..limit(3, 2, Side::Sell, 101, 1)
    });
    let ev = t.run(Command::ExpireDay { symbol: None });
    assert_eq!(
        ev,
        vec![
            canceled(1, 1, CR::Expired, 1),
            level(Side::Buy, 100, 1, 1),
            canceled(3, 2, CR::Expired, 1),
            level(Side::Sell, 101, 0, 0)
        ]
    );
    assert_eq!(t.ids(Side::Buy), vec![(2, 100, 1)]);
}

#[test]
fn capacity_limits_reject_cleanly() {
    let mut t = new_engine();
    for i in 0..64 {
        t.buy(i + 1, 1, 100 - (i as i64 % 10), 1);
    }
    assert_eq!(
        t.buy(100, 1, 50, 1),
        vec![E::Rejected {
            id: 100,
            reason: RR::CapacityExceeded
        }]
    );
    // An IOC needs no slot.
    let mut ioc = limit(101, 2, Side::Sell, 100, 1);
    ioc.tif = TimeInForce::Ioc;
    assert_eq!(kinds(&t.submit(ioc)), "ATL");
    // Price beyond the ladder limit (4096 ticks wide).
    t.cancel(2, 1);
    assert_eq!(kinds(&t.buy(102, 1, 100 + 5000, 1)), "R");
    assert_eq!(kinds(&t.buy(103, 1, 100 + 3000, 1)), "AL");
}

#[test]
fn ladder_window_grows_and_recenters() {
    let mut t = new_engine();
    let prices = [
        1_000_000i64,
        1_000_050,
        999_990,
        1_001_000,
        998_000,
        1_002_000,
    ];
    for (i, p) in prices.iter().enumerate() {
        t.buy(i as u64 + 1, 1, *p, 1);
    }
    assert_eq!(t.e.best_bid(ACME), Some((1_002_000, 1)));
    let mut sorted: Vec<i64> = prices.to_vec();
    sorted.sort_by(|a, b| b.cmp(a));
    let got: Vec<i64> = t.e.resting(ACME, Side::Buy).map(|o| o.price).collect();
    assert_eq!(got, sorted);
    for (i, _) in prices.iter().enumerate() {
        t.cancel(i as u64 + 1, 1);
    }
    // Empty side re-anchors anywhere.
    t.sell(50, 1, 7, 1);
    t.sell(51, 1, 1, 1);
    assert_eq!(t.e.best_ask(ACME), Some((1, 1)));
    t.buy(52, 2, 10, 2);
    assert!(t.ids(Side::Sell).is_empty());
}

#[test]
fn snapshot_restore_round_trip() {
    let mut t = new_engine();
    t.buy(1, 1, 100, 5);
    t.buy(2, 2, 100, 7);
    t.sell(3, 1, 103, 2);
    t.submit(NewOrder {
        tif: TimeInForce::Day,
        post_only: true,
        stp: StpMode::CancelBoth,
        ..limit(4, 3, Side::Sell, 104, 9)
    });
    t.sell(5, 4, 100, 1);
    t.buy(1u64 << 40, 4, 90, 1);
    t.cancel(1u64 << 40, 4);
    let mut snap = Vec::new();
    t.e.snapshot(&mut snap);
    let r = Engine::restore(&snap).unwrap();
    assert_eq!(r.state_hash(), t.e.state_hash());
    assert!(r.id_used(1u64 << 40));
    // Same future behaviour.
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut r = r;
    for cmd in [
        Command::New(limit(6, 5, Side::Buy, 104, 20)),
        Command::New(limit(5, 5, Side::Buy, 104, 20)),
        Command::Cancel {
            id: 2,
            account: 2,
            symbol: ACME,
        },
    ] {
        t.e.apply(&cmd, &mut a);
        r.apply(&cmd, &mut b);
    }
    assert_eq!(a, b);
    assert_eq!(r.state_hash(), t.e.state_hash());
    // A second snapshot of the restored engine is byte-identical.
    let mut s1 = Vec::new();
    let mut s2 = Vec::new();
    t.e.snapshot(&mut s1);
    r.snapshot(&mut s2);
    assert_eq!(s1, s2);
}

#[test]
fn snapshot_rejects_corruption() {
    let mut t = new_engine();
    t.buy(1, 1, 100, 5);
    let mut snap = Vec::new();
    t.e.snapshot(&mut snap);
    assert_eq!(
        Engine::restore(&snap[..snap.len() - 1]).unwrap_err(),
        SnapshotError::Truncated("checksum")
    );
    let mut bad = snap.clone();
    bad[0] = b'X';
    assert_eq!(Engine::restore(&bad).unwrap_err(), SnapshotError::BadMagic);
    let mut bad = snap.clone();
    let n = bad.len();
    bad[n - 20] ^= 1;
    assert_eq!(
        Engine::restore(&bad).unwrap_err(),
        SnapshotError::ChecksumMismatch
    );
    let mut bad = snap.clone();
    bad[8] = 9;
    assert_eq!(
        Engine::restore(&bad).unwrap_err(),
        SnapshotError::UnsupportedVersion(9)
    );
    for cut in 0..snap.len() {
        assert!(Engine::restore(&snap[..cut]).is_err());
    }
}

#[test]
fn state_hash_sees_every_field() {
    let mut a = new_engine();
    let mut b = new_engine();
    a.buy(1, 1, 100, 5);
    b.buy(1, 1, 100, 5);
    assert_eq!(a.e.state_hash(), b.e.state_hash());
    a.replace(1, 1, 100, 4);
    assert_ne!(a.e.state_hash(), b.e.state_hash());
    let mut c = new_engine();
    c.buy(1, 2, 100, 5);
    assert_ne!(c.e.state_hash(), b.e.state_hash());
    let mut d = new_engine();
    d.buy(1, 1, 100, 5);
    d.cancel(9, 1);
    assert_eq!(
        d.e.state_hash(),
        b.e.state_hash(),
        "a rejected command changes nothing"
    );
    let mut ioc = limit(9, 1, Side::Sell, 200, 5);
    ioc.tif = TimeInForce::Ioc;
    d.submit(ioc);
    assert_ne!(
        d.e.state_hash(),
        b.e.state_hash(),
        "used ids are part of the state"
    );
}

#[test]
fn bad_instruments_are_errors() {
    let mut i = instruments();
    i[1].symbol = i[0].symbol;
    assert!(matches!(
        Engine::try_new(&i, small_config()),
        Err(ConfigError::DuplicateSymbol(_))
    ));
    let mut i = instruments();
    i[0].tick = 0;
    assert!(matches!(
        Engine::try_new(&i, small_config()),
        Err(ConfigError::BadGrid(_))
    ));
    let huge = EngineConfig {
        levels_max: 1 << 40,
        ..small_config()
    };
    assert_eq!(
        Engine::try_new(&instruments(), huge).unwrap_err(),
        ConfigError::Limit("levels_max", 1 << 30)
    );
    let huge = EngineConfig {
        orders_max: u32::MAX as usize,
        ..small_config()
    };
    assert_eq!(
        Engine::try_new(&instruments(), huge).unwrap_err(),
        ConfigError::TooMany
    );
    let e = Engine::new(&instruments(), small_config());
    assert_eq!(e.symbol_id("TCK"), Some(1));
    assert_eq!(e.symbol_id("ACME"), Some(0));
    assert_eq!(e.symbol_id("NOPE"), None);
    assert_eq!(e.instruments().len(), 2);
}

#[test]
fn level_aggregate_overflow_is_refused_not_wrapped() {
    let mut t = new_engine();
    let big = u64::MAX / 2 + 1;
    assert_eq!(kinds(&t.buy(1, 1, 100, big)), "AL");
    assert_eq!(
        t.buy(2, 2, 100, big),
        vec![E::Rejected {
            id: 2,
            reason: RR::CapacityExceeded
        }]
    );
    assert!(!t.e.id_used(2));
    // An IOC never rests, so it is not limited; nor is another price.
    assert_eq!(kinds(&t.buy(3, 2, 99, big)), "AL");
    assert_eq!(
        t.replace(3, 2, 100, big),
        vec![E::Rejected {
            id: 3,
            reason: RR::CapacityExceeded
        }]
    );
    // Replacing the order with itself at the same price is fine.
    assert_eq!(kinds(&t.replace(1, 1, 100, u64::MAX)), "PLL");
    let ev = t.sell(4, 3, 99, u64::MAX);
    assert_eq!(trades(&ev), vec![(1, 4, 100, u64::MAX)]);
    assert_eq!(t.ids(Side::Sell), vec![]);
    assert_eq!(t.ids(Side::Buy), vec![(3, 99, big)]);
}

#[test]
fn ladder_recentres_in_place_as_the_market_trends() {
    // A market that trends far beyond the window, with a few orders always resting: the window
    // re-centres (same width) many times; priority and aggregates survive every move.
    let mut t = new_engine();
    let mut id = 1;
    for step in 0..400i64 {
        let p = 10_000 + step * 7;
        t.buy(id, 1, p, 2);
        t.buy(id + 1, 2, p, 3);
        t.sell(id + 2, 3, p + 50, 1);
        if step >= 3 {
            // Keep about three steps of orders resting.
            t.cancel(id - 9, 1);
            t.cancel(id - 8, 2);
            t.cancel(id - 7, 3);
        }
        id += 3;
    }
    let bids = t.ids(Side::Buy);
    assert_eq!(bids.len(), 6);
    assert_eq!(bids[0], (id - 3, 10_000 + 399 * 7, 2));
    assert_eq!(bids[1], (id - 2, 10_000 + 399 * 7, 3));
    assert_eq!(t.e.depth_at(ACME, Side::Buy, 10_000 + 398 * 7), 5);
}

/// A sink that declines `Level`s gets every other event of the same commands, in the same
/// order, and the engine ends in the same state.
#[test]
fn a_sink_without_levels_gets_every_other_event() {
    struct NoLevels(Vec<Event>);
    impl EventSink for NoLevels {
        const LEVELS: bool = false;
        fn on_event(&mut self, event: &Event) {
            assert!(!matches!(event, Event::Level { .. }), "a level was sent");
            self.0.push(*event);
        }
    }
    let mut with = new_engine();
    let mut without = new_engine();
    let mut levels = 0;
    let cmds = [
        Command::New(limit(1, 1, Side::Buy, 100, 10)),
        Command::New(limit(2, 2, Side::Buy, 101, 5)),
        Command::New(limit(3, 3, Side::Sell, 102, 7)),
        Command::New(limit(4, 4, Side::Sell, 100, 12)),
        Command::Replace {
            id: 3,
            account: 3,
            symbol: ACME,
            price: 99,
            qty: 9,
        },
        Command::Cancel {
            id: 1,
            account: 1,
            symbol: ACME,
        },
        Command::New(limit(5, 5, Side::Buy, 105, 3)),
    ];
    for cmd in cmds {
        let all = with.run(cmd);
        let mut sink = NoLevels(Vec::new());
        without.e.apply(&cmd, &mut sink);
        let want: Vec<Event> = all
            .iter()
            .copied()
            .filter(|e| !matches!(e, Event::Level { .. }))
            .collect();
        assert_eq!(sink.0, want, "{cmd:?}");
        levels += all.len() - want.len();
    }
    assert!(levels > 5, "{levels}");
    assert_eq!(with.e.state_hash(), without.e.state_hash());
}
