//! Order types II through the exchange: stops and their triggered reports, icebergs, GTD
//! expiry on the input clock, call auctions driven by the instrument status (the operator's
//! and a breaker's reopening), the indicative uncross, and all of it across a snapshot.

use super::*;
use crate::{Breaker, InstrumentRisk};
use types::OrdType;

const T0: u64 = 1_800_000_000_000_000_000;

/// Inputs at chosen times, one a record.
struct Clocked {
    x: Exchange,
    seq: u64,
}

impl Clocked {
    fn new() -> Clocked {
        Clocked {
            x: Exchange::new(two_firms(vec![InstrumentRisk::default(); 2])),
            seq: 0,
        }
    }

    fn at(&mut self, ts: u64, input: &Input<'_>) -> All {
        self.seq += 1;
        let mut r = All::default();
        self.x.apply(self.seq, ts, input, &mut r);
        r
    }

    /// Buys come from firm 0 (originator 0), sells from firm 1 (originator 1), so that
    /// they trade rather than meet self-trade prevention.
    fn order(&mut self, ts: u64, o: NewOrder) -> Vec<Seen> {
        self.at(
            ts,
            &Input::New {
                who: who(o.side),
                order: &o,
            },
        )
        .0
    }

    fn status(&mut self, ts: u64, status: InstrumentStatus) -> All {
        self.at(
            ts,
            &Input::Admin(&AdminAction::SetStatus { symbol: 0, status }),
        )
    }
}

/// ACME and BOLT; firm 0 trades on account 1, firm 1 on account 2.
fn two_firms(risk: Vec<InstrumentRisk>) -> Arc<Config> {
    let mut c = (*config()).clone();
    c.firms = vec![vec![1], vec![2]];
    c.instrument_risk = risk;
    Arc::new(c)
}

fn who(side: Side) -> Principal {
    let n = match side {
        Side::Buy => 0,
        Side::Sell => 1,
    };
    Principal {
        originator: n,
        firm: n,
    }
}

fn order(cl: &str, side: Side, price: i64, qty: u64) -> NewOrder {
    NewOrder {
        cl_ord_id: ClOrdId::from(cl),
        side,
        price,
        qty,
        tif: TimeInForce::Gtc,
        ..NewOrder::BLANK
    }
}

/// The reports of `seen` as (client order id, kind).
fn reports(seen: &[Seen]) -> Vec<(String, ReportKind)> {
    seen.iter()
        .filter_map(|s| match s {
            Seen::Report { cl, kind, .. } => Some((cl.clone(), *kind)),
            _ => None,
        })
        .collect()
}

fn r(cl: &str, kind: ReportKind) -> (String, ReportKind) {
    (cl.to_string(), kind)
}

fn fill(price: i64, qty: u64) -> ReportKind {
    ReportKind::Fill { price, qty }
}

#[test]
fn a_stop_limit_waits_off_the_book_then_a_trade_through_its_stop_triggers_it() {
    let mut c = Clocked::new();
    let stop = NewOrder {
        stop_price: 105,
        ..order("stop", Side::Buy, 106, 4)
    };
    assert_eq!(reports(&c.order(T0, stop)), [r("stop", ReportKind::New)]);
    // Pending: not in the book, but live (and cancelable, see below).
    assert_eq!(c.x.engine().best_bid(0), None);
    assert_eq!(c.x.live_orders(), 1);
    c.order(T0 + 1, order("ask1", Side::Sell, 105, 2));
    c.order(T0 + 2, order("ask2", Side::Sell, 106, 9));
    // A trade at 105 triggers the stop: it buys the rest of 105 (none) and 4 at 106.
    let seen = c.order(T0 + 3, order("lift", Side::Buy, 105, 2));
    assert_eq!(
        reports(&seen),
        [
            r("lift", ReportKind::New),
            r("ask1", fill(105, 2)),
            r("lift", fill(105, 2)),
            r("stop", ReportKind::Triggered),
            r("ask2", fill(106, 4)),
            r("stop", fill(106, 4)),
        ]
    );
    let id = c.x.order_of(0, b"stop").expect("remembered");
    assert_eq!(c.x.order(id).map(|o| o.status()), Some(OrderStatus::Filled));
}

#[test]
fn a_pending_stop_cancels_and_a_sell_stop_market_fires_on_a_trade_at_or_below() {
    let mut c = Clocked::new();
    let gone = NewOrder {
        stop_price: 90,
        ..order("gone", Side::Sell, 0, 1)
    };
    let stop = NewOrder {
        ord_type: OrdType::Market,
        stop_price: 95,
        ..order("sstop", Side::Sell, 0, 3)
    };
    c.order(
        T0,
        NewOrder {
            ord_type: OrdType::Market,
            ..gone
        },
    );
    c.order(T0, stop);
    let cancel = c.at(
        T0 + 1,
        &Input::Cancel {
            who: who(Side::Sell),
            cl_ord_id: &ClOrdId::from("c1"),
            orig_cl_ord_id: &ClOrdId::from("gone"),
        },
    );
    assert_eq!(
        reports(&cancel.0),
        [r("c1", ReportKind::Canceled(CancelReason::User))]
    );
    c.order(T0 + 2, order("bid1", Side::Buy, 95, 1));
    c.order(T0 + 2, order("bid2", Side::Buy, 94, 5));
    let seen = c.order(T0 + 3, order("hit", Side::Sell, 95, 1));
    assert_eq!(
        reports(&seen),
        [
            r("hit", ReportKind::New),
            r("bid1", fill(95, 1)),
            r("hit", fill(95, 1)),
            r("sstop", ReportKind::Triggered),
            r("bid2", fill(94, 3)),
            r("sstop", fill(94, 3)),
        ]
    );
}

#[test]
fn an_iceberg_shows_its_peak_and_refills_from_the_hidden_rest() {
    let mut c = Clocked::new();
    let ice = NewOrder {
        display_qty: 2,
        ..order("ice", Side::Sell, 100, 5)
    };
    assert_eq!(reports(&c.order(T0, ice)), [r("ice", ReportKind::New)]);
    assert_eq!(c.x.engine().best_ask(0), Some((100, 2)));
    let seen = c.order(T0 + 1, order("b", Side::Buy, 100, 3));
    assert_eq!(
        reports(&seen),
        [
            r("b", ReportKind::New),
            r("ice", fill(100, 2)),
            r("b", fill(100, 2)),
            r("ice", fill(100, 1)),
            r("b", fill(100, 1)),
        ]
    );
    // 2 left: the refill shows min(peak, rest) = 1 after the second fill took 1 of 2.
    assert_eq!(c.x.engine().best_ask(0), Some((100, 1)));
    let id = c.x.order_of(1, b"ice").expect("live");
    assert_eq!(c.x.order(id).map(|o| o.leaves_qty), Some(2));
}

#[test]
fn gtd_orders_expire_on_the_input_clock_and_one_already_past_is_refused() {
    let mut c = Clocked::new();
    let gtd = NewOrder {
        tif: TimeInForce::Gtd,
        expire_ns: T0 + 1_000,
        ..order("gtd", Side::Buy, 99, 1)
    };
    assert_eq!(reports(&c.order(T0, gtd)), [r("gtd", ReportKind::New)]);
    // The server journals a Tick at the expiry time.
    assert!(c.x.next_day_change_ns() <= T0 + 1_000);
    assert!(reports(&c.at(T0 + 999, &Input::Tick).0).is_empty());
    assert_eq!(
        reports(&c.at(T0 + 1_000, &Input::Tick).0),
        [r("gtd", ReportKind::Canceled(CancelReason::Expired))]
    );
    let id = c.x.order_of(0, b"gtd");
    assert!(
        id.is_none() || c.x.order(id.unwrap()).map(|o| o.status()) == Some(OrderStatus::Expired)
    );
    let late = NewOrder {
        tif: TimeInForce::Gtd,
        expire_ns: T0 + 5,
        ..order("late", Side::Buy, 99, 1)
    };
    let seen = c.order(T0 + 2_000, late);
    assert!(
        matches!(
            seen.as_slice(),
            [Seen::NewRejected {
                reason: Reject::ExpireTimePast,
                ..
            }]
        ),
        "{seen:?}"
    );
}

#[test]
fn a_call_auction_collects_crossed_orders_publishes_the_indicative_and_uncrosses_on_open() {
    let mut c = Clocked::new();
    let pre = c.status(T0, InstrumentStatus::PreOpen);
    assert_eq!(pre.1, [(0, InstrumentStatus::PreOpen)]);
    assert!(c.x.engine().in_call(0));
    assert!(reports(&c.order(T0 + 1, order("b1", Side::Buy, 102, 5))).len() == 1);
    let seen = c.order(T0 + 2, order("s1", Side::Sell, 100, 3));
    // Crossed, nothing traded; the uncross would trade 3 at 100..102: the buy side has
    // more, so the lowest imbalance is any price with 3 on both; nearest the reference
    // (none) then lowest: 100.
    assert_eq!(reports(&seen), [r("s1", ReportKind::New)]);
    assert!(
        seen.contains(&Seen::Indicative {
            symbol: 0,
            price: 100,
            qty: 3
        }),
        "{seen:?}"
    );
    assert_eq!(c.x.indicative(0), (100, 3));
    let market = NewOrder {
        ord_type: OrdType::Market,
        ..order("m", Side::Buy, 0, 1)
    };
    let refused = c.order(T0 + 3, market);
    assert!(
        matches!(
            refused.as_slice(),
            [Seen::NewRejected {
                reason: Reject::AuctionCall,
                ..
            }]
        ),
        "{refused:?}"
    );
    let open = c.status(T0 + 4, InstrumentStatus::Open);
    assert_eq!(
        reports(&open.0),
        [r("s1", fill(100, 3)), r("b1", fill(100, 3))]
    );
    assert!(open.0.contains(&Seen::Indicative {
        symbol: 0,
        price: 0,
        qty: 0
    }));
    assert_eq!(open.1, [(0, InstrumentStatus::Open)]);
    assert!(!c.x.engine().in_call(0));
    assert_eq!(c.x.engine().best_bid(0), Some((102, 2)));
    assert_eq!(c.x.reference_price(0), 100);
}

#[test]
fn a_closing_call_uncrosses_when_the_instrument_closes() {
    let mut c = Clocked::new();
    c.order(T0, order("b", Side::Buy, 100, 1));
    c.status(T0 + 1, InstrumentStatus::PreClose);
    c.order(T0 + 2, order("s", Side::Sell, 99, 1));
    let closed = c.status(T0 + 3, InstrumentStatus::Closed);
    // 99 and 100 trade 1 with no imbalance; no reference yet: the lowest.
    assert_eq!(
        reports(&closed.0),
        [r("s", fill(99, 1)), r("b", fill(99, 1))]
    );
    assert_eq!(closed.1, [(0, InstrumentStatus::Closed)]);
}

#[test]
fn a_breakers_halt_ends_in_a_reopening_call_then_an_uncross() {
    let cfg = two_firms(vec![
        InstrumentRisk {
            breaker: Some(Breaker {
                bps: 500,
                window_ns: 1_000_000,
                halt_ns: 1_000,
                auction_ns: 500,
            }),
            ..InstrumentRisk::default()
        },
        InstrumentRisk::default(),
    ]);
    let mut c = Clocked {
        x: Exchange::new(cfg),
        seq: 0,
    };
    c.order(T0, order("a1", Side::Sell, 100, 1));
    c.order(T0, order("b1", Side::Buy, 100, 1));
    c.order(T0 + 1, order("a2", Side::Sell, 110, 1));
    let trip = c.order(T0 + 2, order("b2", Side::Buy, 110, 1));
    assert_eq!(reports(&trip).len(), 3, "{trip:?}");
    assert_eq!(c.x.instrument_status(0), InstrumentStatus::Halted);
    // Halted: refused. At the halt's end: the reopening call.
    let call = c.at(T0 + 2 + 1_000, &Input::Tick);
    assert_eq!(call.1, [(0, InstrumentStatus::PreOpen)]);
    c.order(T0 + 1_100, order("b3", Side::Buy, 110, 2));
    c.order(T0 + 1_100, order("a3", Side::Sell, 109, 2));
    assert!(c.x.next_day_change_ns() <= T0 + 2 + 1_500);
    let open = c.at(T0 + 2 + 1_500, &Input::Tick);
    assert_eq!(open.1, [(0, InstrumentStatus::Open)]);
    // 109 and 110 both trade 2 with no imbalance: the one nearest the reference (110, the
    // last trade).
    assert_eq!(
        reports(&open.0),
        [r("a3", fill(110, 2)), r("b3", fill(110, 2))]
    );
}

#[test]
fn stops_icebergs_gtd_and_a_call_survive_a_snapshot() {
    let mut c = Clocked::new();
    c.order(
        T0,
        NewOrder {
            stop_price: 120,
            ..order("stop", Side::Buy, 121, 1)
        },
    );
    c.order(
        T0,
        NewOrder {
            display_qty: 1,
            tif: TimeInForce::Gtd,
            expire_ns: T0 + 10_000,
            ..order("ice", Side::Sell, 120, 3)
        },
    );
    c.status(T0 + 1, InstrumentStatus::PreOpen);
    c.order(T0 + 2, order("b", Side::Buy, 125, 2));
    let mut bytes = Vec::new();
    let hash = c.x.snapshot_and_hash(&mut bytes);
    let (y, _) = Exchange::restore(c.x.config().clone(), &bytes, Backing::Resident).unwrap();
    assert_eq!(y.state_hash(), hash);
    let mut d = Clocked { x: y, seq: c.seq };
    // Both open alike: the uncross at 120 (nearest the last... no trade yet: lowest of the
    // best-volume prices) triggers the stop, which buys the iceberg's last lot.
    let a = c.status(T0 + 3, InstrumentStatus::Open);
    let b = d.status(T0 + 3, InstrumentStatus::Open);
    assert_eq!(a.0, b.0);
    assert_eq!(
        reports(&a.0),
        [
            r("ice", fill(120, 1)),
            r("b", fill(120, 1)),
            r("ice", fill(120, 1)),
            r("b", fill(120, 1)),
            r("stop", ReportKind::Triggered),
            r("ice", fill(120, 1)),
            r("stop", fill(120, 1)),
        ]
    );
    assert_eq!(c.x.state_hash(), d.x.state_hash());
    // And the GTD attributes came through: nothing is left to expire, the iceberg is done.
    assert_eq!(
        d.x.engine().next_expiry().map(|t| t <= T0 + 10_000),
        Some(true)
    );
}

#[test]
fn a_stop_limits_replace_keeps_its_stop_price_or_is_refused() {
    let mut c = Clocked::new();
    c.order(
        T0,
        NewOrder {
            stop_price: 105,
            ..order("stop", Side::Buy, 106, 4)
        },
    );
    let replace = |cl: &str, orig: &str, stop_price| Replace {
        cl_ord_id: ClOrdId::from(cl),
        orig_cl_ord_id: ClOrdId::from(orig),
        symbol: 0,
        price: 107,
        qty: 6,
        stop_price,
    };
    let refused = c.at(
        T0 + 1,
        &Input::Replace {
            who: who(Side::Buy),
            replace: &replace("r1", "stop", 104),
        },
    );
    assert!(
        matches!(
            refused.0.as_slice(),
            [Seen::CancelRejected {
                reason: Reject::StopPriceChange,
                ..
            }]
        ),
        "{:?}",
        refused.0
    );
    // The same stop price, or none named: the limit and quantity change in place.
    for (cl, orig, stop) in [("r2", "stop", 105), ("r3", "r2", 0)] {
        let done = c.at(
            T0 + 2,
            &Input::Replace {
                who: who(Side::Buy),
                replace: &replace(cl, orig, stop),
            },
        );
        assert_eq!(reports(&done.0), [r(cl, ReportKind::Replaced)]);
    }
    let id = c.x.order_of(0, b"r3").expect("live");
    assert_eq!(c.x.order_ext(id).stop_price, 105);
    assert_eq!(
        c.x.order(id).map(|o| (o.price, o.leaves_qty)),
        Some((107, 6))
    );
}
