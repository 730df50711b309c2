//! Operator controls: kill switches, instrument statuses and run-time limits, and their state
//! across a snapshot.

use super::*;
use crate::codec::{Dec, Enc};

/// ACME and BOLT (tick 1, 2 decimals); firm 0 has accounts 1 and 2, firm 1 account 3;
/// originator `n` trades for firm `n % 2` on account `account` (`None`: the default).
fn market(chunk: usize) -> Exchange {
    let mut c = (*config()).clone();
    c.firms = vec![vec![1, 2], vec![3]];
    c.price_decimals = vec![2, 2];
    c.mass_cancel_chunk = chunk;
    Exchange::new(Arc::new(c))
}

struct Mkt {
    x: Exchange,
    seq: u64,
}

impl Mkt {
    fn apply(&mut self, input: &Input<'_>) -> All {
        self.seq += 1;
        let mut r = All::default();
        self.x.apply(self.seq, 1_000 + self.seq, input, &mut r);
        r
    }

    fn admin(&mut self, a: AdminAction) -> All {
        self.apply(&Input::Admin(&a))
    }

    fn buy(&mut self, originator: u16, account: Option<u32>, cl: &str, symbol: u32) -> Vec<Seen> {
        let order = NewOrder {
            cl_ord_id: ClOrdId::from(cl),
            symbol,
            side: Side::Buy,
            tif: TimeInForce::Gtc,
            price: 100,
            qty: 1,
            account,
            ..NewOrder::BLANK
        };
        self.apply(&Input::New {
            who: Principal {
                originator,
                firm: originator % 2,
            },
            order: &order,
        })
        .0
    }
}

fn reason(seen: &[Seen]) -> Option<Reject> {
    match seen {
        [Seen::NewRejected { reason, .. }] | [Seen::CancelRejected { reason, .. }] => Some(*reason),
        _ => None,
    }
}

fn operator_cancels(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .filter_map(|s| match s {
            Seen::Report {
                cl,
                kind: ReportKind::Canceled(CancelReason::Operator),
                ..
            } => Some(cl.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_kill_switch_blocks_the_firm_and_cancels_its_orders_in_steps_and_no_one_elses() {
    let mut m = Mkt {
        x: market(2),
        seq: 0,
    };
    for i in 0..3 {
        m.buy(0, Some(1), &format!("a{i}"), 0);
        m.buy(2, Some(2), &format!("b{i}"), 1);
        m.buy(1, None, &format!("c{i}"), 0);
    }
    let first = m.admin(AdminAction::Kill {
        firm: 0,
        account: None,
    });
    assert_eq!(operator_cancels(&first.0), ["a0", "b0"]);
    assert!(m.x.blocked(0, None));
    assert!(m.x.has_pending_work());
    // Blocked at once, although orders are still being canceled.
    assert_eq!(
        reason(&m.buy(0, Some(2), "late", 0)),
        Some(Reject::Blocked { account: None })
    );
    let mut rest = Vec::new();
    while m.x.has_pending_work() {
        rest.extend(operator_cancels(&m.apply(&Input::Continue).0));
    }
    assert_eq!(rest, ["a1", "b1", "a2", "b2"]);
    assert_eq!(m.x.open_orders_of_firm(0), 0);
    assert_eq!(m.x.open_orders_of_firm(1), 3, "the other firm is untouched");
    assert!(m.buy(1, None, "c-new", 0)[0].is_report());
    m.admin(AdminAction::Unblock {
        firm: 0,
        account: None,
    });
    assert!(!m.x.blocked(0, None));
    assert!(m.buy(0, Some(1), "again", 0)[0].is_report());
}

#[test]
fn an_account_kill_switch_leaves_the_firms_other_accounts_trading() {
    let mut m = Mkt {
        x: market(1_000),
        seq: 0,
    };
    m.buy(0, Some(1), "a", 0);
    m.buy(0, Some(2), "b", 0);
    let k = m.admin(AdminAction::Kill {
        firm: 0,
        account: Some(2),
    });
    assert_eq!(operator_cancels(&k.0), ["b"]);
    assert!(m.x.blocked(0, Some(2)) && !m.x.blocked(0, None));
    let r = reason(&m.buy(0, Some(2), "b2", 0)).unwrap();
    assert_eq!(r, Reject::Blocked { account: Some(2) });
    assert_eq!(r.text(), "account blocked by the exchange operator");
    assert!(m.buy(0, Some(1), "a2", 0)[0].is_report());
    // An account of another firm, or a firm out of range, changes nothing.
    m.admin(AdminAction::Kill {
        firm: 0,
        account: Some(3),
    });
    m.admin(AdminAction::Kill {
        firm: 9,
        account: None,
    });
    assert!(!m.x.blocked(1, None) && !m.x.blocked(1, Some(3)));
    assert_eq!(m.x.open_orders_of_firm(0), 2);
}

#[test]
fn a_halted_instrument_refuses_orders_and_replaces_takes_cancels_and_says_so_once() {
    let mut m = Mkt {
        x: market(1_000),
        seq: 0,
    };
    m.buy(0, None, "a", 0);
    let h = m.admin(AdminAction::SetStatus {
        symbol: 0,
        status: InstrumentStatus::Halted,
    });
    assert_eq!(h.1, [(0, InstrumentStatus::Halted)]);
    let again = m.admin(AdminAction::SetStatus {
        symbol: 0,
        status: InstrumentStatus::Halted,
    });
    assert!(again.1.is_empty(), "no change, no output");
    let r = reason(&m.buy(0, None, "b", 0)).unwrap();
    assert_eq!(
        r,
        Reject::InstrumentNotOpen {
            status: InstrumentStatus::Halted
        }
    );
    assert_eq!(r.text(), "instrument halted");
    assert!(m.buy(0, None, "bolt", 1)[0].is_report(), "BOLT trades on");
    let replace = Replace {
        cl_ord_id: ClOrdId::from("a2"),
        orig_cl_ord_id: ClOrdId::from("a"),
        symbol: 0,
        price: 101,
        qty: 1,
        stop_price: 0,
    };
    let who = Principal {
        originator: 0,
        firm: 0,
    };
    let seen = m.apply(&Input::Replace {
        who,
        replace: &replace,
    });
    assert_eq!(reason(&seen.0), Some(r));
    let seen = m.apply(&Input::Cancel {
        who,
        cl_ord_id: &ClOrdId::from("a3"),
        orig_cl_ord_id: &ClOrdId::from("a"),
    });
    assert!(seen.0[0].is_report(), "{:?}", seen.0);
    m.admin(AdminAction::SetStatus {
        symbol: 0,
        status: InstrumentStatus::Closed,
    });
    assert_eq!(
        reason(&m.buy(0, None, "c", 0)).unwrap().text(),
        "instrument closed"
    );
    let o = m.admin(AdminAction::SetStatus {
        symbol: 0,
        status: InstrumentStatus::Open,
    });
    assert_eq!(o.1, [(0, InstrumentStatus::Open)]);
    assert!(m.buy(0, None, "d", 0)[0].is_report());
}

#[test]
fn the_operators_limits_replace_the_configurations_and_set_the_reference() {
    let mut m = Mkt {
        x: market(1_000),
        seq: 0,
    };
    assert_eq!(m.x.price_band(0), None);
    m.admin(AdminAction::SetRisk {
        symbol: 0,
        risk: InstrumentRisk {
            band_bps: Some(100),
            reference_price: Some(10_000),
            max_order_qty: Some(5),
            max_order_notional: None,
            breaker: None,
        },
    });
    assert_eq!(m.x.price_band(0), Some((9_900, 10_100)));
    assert_eq!(m.x.reference_price(0), 10_000);
    assert!(matches!(
        reason(&m.buy(0, None, "far", 0)),
        Some(Reject::PriceBand { price: 100, .. })
    ));
    assert_eq!(m.x.instrument_risk(0).unwrap().max_order_qty, Some(5));
}

#[test]
fn statuses_kill_switches_and_operator_limits_survive_a_snapshot() {
    let mut m = Mkt {
        x: market(1),
        seq: 0,
    };
    for i in 0..3 {
        m.buy(0, Some(1), &format!("a{i}"), 0);
    }
    m.admin(AdminAction::Kill {
        firm: 0,
        account: Some(1),
    });
    m.admin(AdminAction::SetStatus {
        symbol: 1,
        status: InstrumentStatus::Halted,
    });
    let risk = InstrumentRisk {
        band_bps: Some(250),
        reference_price: Some(100),
        max_order_qty: Some(7),
        max_order_notional: Some(123_456_789_012_345_678_901),
        breaker: Some(Breaker {
            bps: 300,
            window_ns: 5_000,
            halt_ns: 9_000,
            auction_ns: 0,
        }),
    };
    m.admin(AdminAction::SetRisk { symbol: 0, risk });
    assert!(m.x.has_pending_work());
    let mut bytes = Vec::new();
    let hash = m.x.snapshot_and_hash(&mut bytes);
    let (mut y, _) = Exchange::restore(m.x.config().clone(), &bytes, Backing::Resident).unwrap();
    assert_eq!(y.state_hash(), hash);
    assert!(y.blocked(0, Some(1)) && !y.blocked(0, None));
    assert_eq!(y.instrument_status(1), InstrumentStatus::Halted);
    assert_eq!(y.instrument_risk(0), Some(risk));
    // The kill switch's steps go on alike in both.
    let mut a = Recorder::default();
    let mut b = Recorder::default();
    m.x.apply(m.seq + 1, 9_999, &Input::Continue, &mut a);
    y.apply(m.seq + 1, 9_999, &Input::Continue, &mut b);
    assert_eq!(a.0, b.0);
    assert_eq!(operator_cancels(&a.0), ["a1"]);
    assert_eq!(m.x.state_hash(), y.state_hash());
}

#[test]
fn admin_actions_and_their_rejects_round_trip_the_codec() {
    let actions = [
        AdminAction::Kill {
            firm: 3,
            account: None,
        },
        AdminAction::Kill {
            firm: u16::MAX,
            account: Some(u32::MAX),
        },
        AdminAction::Unblock {
            firm: 0,
            account: Some(7),
        },
        AdminAction::SetStatus {
            symbol: 2,
            status: InstrumentStatus::Closed,
        },
        AdminAction::SetRisk {
            symbol: 1,
            risk: InstrumentRisk::default(),
        },
        AdminAction::SetRisk {
            symbol: 1,
            risk: InstrumentRisk {
                band_bps: Some(1),
                reference_price: Some(-1),
                max_order_qty: Some(u64::MAX),
                max_order_notional: Some(i128::MIN),
                breaker: Some(Breaker {
                    bps: u32::MAX,
                    window_ns: 1,
                    halt_ns: u64::MAX,
                    auction_ns: 0,
                }),
            },
        },
    ];
    for a in actions {
        let mut b = Vec::new();
        a.encode(&mut Enc(&mut b));
        let mut d = Dec(&b);
        assert_eq!(AdminAction::decode(&mut d), Ok(a));
        assert_eq!(d.end(), Ok(()));
        assert!(AdminAction::decode(&mut Dec(&b[..b.len() - 1])).is_err());
    }
    assert!(AdminAction::decode(&mut Dec(&[9])).is_err());
    assert!(AdminAction::decode(&mut Dec(&[3, 0, 0, 0, 0, 5])).is_err());
    for r in [
        Reject::Blocked { account: None },
        Reject::Blocked { account: Some(9) },
        Reject::InstrumentNotOpen {
            status: InstrumentStatus::Halted,
        },
        Reject::InstrumentNotOpen {
            status: InstrumentStatus::Closed,
        },
    ] {
        let mut b = Vec::new();
        r.encode(&mut Enc(&mut b));
        assert_eq!(Reject::decode(&mut Dec(&b)), Ok(r));
    }
}

impl Seen {
    fn is_report(&self) -> bool {
        matches!(self, Seen::Report { .. })
    }
}

/// ACME's breaker: 5% within 10 s halts it for 60 s.
fn breaker_market() -> Exchange {
    let mut c = (*config()).clone();
    c.firms = vec![vec![1, 2], vec![3]];
    c.price_decimals = vec![2, 2];
    c.instrument_risk = vec![InstrumentRisk {
        breaker: Some(Breaker {
            bps: 500,
            window_ns: 10 * S,
            halt_ns: 60 * S,
            auction_ns: 0,
        }),
        ..InstrumentRisk::default()
    }];
    Exchange::new(Arc::new(c))
}

const S: u64 = 1_000_000_000;

/// A cross of 1 ACME at `price` between firm 1 (resting sell) and firm 0, at `t` seconds.
fn cross(x: &mut Exchange, seq: &mut u64, t: u64, price: i64) -> All {
    let mut all = All::default();
    for (originator, side) in [(1u16, Side::Sell), (0, Side::Buy)] {
        *seq += 1;
        let order = NewOrder {
            cl_ord_id: ClOrdId::from(format!("{seq}").as_str()),
            side,
            tif: TimeInForce::Gtc,
            price,
            qty: 1,
            ..NewOrder::BLANK
        };
        let who = Principal {
            originator,
            firm: originator % 2,
        };
        x.apply(*seq, t * S, &Input::New { who, order: &order }, &mut all);
    }
    all
}

#[test]
fn a_move_past_the_breaker_within_its_window_halts_the_instrument_until_its_time_is_up() {
    let mut x = breaker_market();
    let mut seq = 0;
    assert!(
        cross(&mut x, &mut seq, 1, 10_000).1.is_empty(),
        "the window's first trade"
    );
    assert!(
        cross(&mut x, &mut seq, 2, 10_400).1.is_empty(),
        "4%: within the breaker"
    );
    let tripped = cross(&mut x, &mut seq, 3, 10_600);
    assert_eq!(tripped.1, [(0, InstrumentStatus::Halted)], "6% within 10 s");
    assert!(
        tripped.0.iter().any(|s| matches!(
            s,
            Seen::Report {
                kind: ReportKind::Fill { price: 10_600, .. },
                ..
            }
        )),
        "the trade that tripped it stands"
    );
    assert_eq!(x.instrument_status(0), InstrumentStatus::Halted);
    assert_eq!(
        x.next_day_change_ns(),
        63 * S,
        "the loop journals a tick then"
    );
    let refused = cross(&mut x, &mut seq, 30, 10_600);
    assert!(refused.0.iter().all(|s| matches!(
        s,
        Seen::NewRejected {
            reason: Reject::InstrumentNotOpen {
                status: InstrumentStatus::Halted
            },
            ..
        }
    )));
    let mut all = All::default();
    seq += 1;
    x.apply(seq, 63 * S - 1, &Input::Tick, &mut all);
    assert!(all.1.is_empty());
    x.apply(seq, 63 * S, &Input::Tick, &mut all);
    assert_eq!(all.1, [(0, InstrumentStatus::Open)]);
    assert_eq!(x.next_day_change_ns(), u64::MAX);
    // A fresh window after the halt: the next trade is its first, wherever it is.
    assert!(cross(&mut x, &mut seq, 64, 12_000).1.is_empty());
    // Past the window, a move is measured from the new window's first trade.
    assert!(
        cross(&mut x, &mut seq, 80, 12_500).1.is_empty(),
        "a new window"
    );
    assert_eq!(
        cross(&mut x, &mut seq, 81, 13_200).1,
        [(0, InstrumentStatus::Halted)]
    );
    // The operator's word ends a breaker's halt at once.
    let mut all = All::default();
    seq += 1;
    x.apply(
        seq,
        82 * S,
        &Input::Admin(&AdminAction::SetStatus {
            symbol: 0,
            status: InstrumentStatus::Open,
        }),
        &mut all,
    );
    assert_eq!(all.1, [(0, InstrumentStatus::Open)]);
    seq += 1;
    x.apply(seq, 200 * S, &Input::Tick, &mut all);
    assert_eq!(all.1.len(), 1, "no second reopening");
}

#[test]
fn a_breaker_halt_survives_a_snapshot_and_ends_on_time_after_it() {
    let mut x = breaker_market();
    let mut seq = 0;
    cross(&mut x, &mut seq, 1, 10_000);
    cross(&mut x, &mut seq, 2, 9_000);
    assert_eq!(x.instrument_status(0), InstrumentStatus::Halted);
    let mut bytes = Vec::new();
    let hash = x.snapshot_and_hash(&mut bytes);
    let (mut y, _) = Exchange::restore(x.config().clone(), &bytes, Backing::Resident).unwrap();
    assert_eq!(y.state_hash(), hash);
    assert_eq!(y.next_day_change_ns(), 62 * S);
    let (mut a, mut b) = (All::default(), All::default());
    x.apply(seq + 1, 62 * S, &Input::Tick, &mut a);
    y.apply(seq + 1, 62 * S, &Input::Tick, &mut b);
    assert_eq!((a.1.clone(), b.1), (vec![(0, InstrumentStatus::Open)], a.1));
    assert_eq!(x.state_hash(), y.state_hash());
}
