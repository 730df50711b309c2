//! Protection: open-order limits per firm and account, a firm's share of the capacity, and
//! mass cancels and cancels on disconnect applied in bounded steps.

use super::*;

/// Firm 0 has accounts 1 and 2, firm 1 account 3; originator `n` trades for firm `n % 2`.
fn two_firms(f: impl FnOnce(&mut Config)) -> Exchange {
    let mut c = (*config()).clone();
    c.firms = vec![vec![1, 2], vec![3]];
    f(&mut c);
    Exchange::new(Arc::new(c))
}

fn who(originator: u16) -> Principal {
    Principal {
        originator,
        firm: originator % 2,
    }
}

/// An exchange and the next sequence number.
struct Mkt {
    x: Exchange,
    seq: u64,
}

impl Mkt {
    fn new(x: Exchange) -> Mkt {
        let seq = x.last_seq();
        Mkt { x, seq }
    }

    fn apply(&mut self, input: &Input<'_>) -> Vec<Seen> {
        self.seq += 1;
        let mut r = Recorder::default();
        self.x.apply(self.seq, 1_000 + self.seq, input, &mut r);
        r.0
    }

    /// A buy of 5 ACME at `price` on `account` (`None`: the firm's default).
    fn buy(
        &mut self,
        originator: u16,
        account: Option<AccountId>,
        cl: &str,
        price: i64,
        tif: TimeInForce,
    ) -> Vec<Seen> {
        self.order(originator, account, cl, Side::Buy, price, tif)
    }

    fn order(
        &mut self,
        originator: u16,
        account: Option<AccountId>,
        cl: &str,
        side: Side,
        price: i64,
        tif: TimeInForce,
    ) -> Vec<Seen> {
        let order = NewOrder {
            cl_ord_id: ClOrdId::from(cl),
            side,
            tif,
            price,
            qty: 5,
            account,
            ..NewOrder::BLANK
        };
        self.apply(&Input::New {
            who: who(originator),
            order: &order,
        })
    }

    fn mass(&mut self, originator: u16, cl: &str) -> Vec<Seen> {
        self.apply(&Input::MassCancel {
            who: who(originator),
            cl_ord_id: &ClOrdId::from(cl),
            symbol: None,
            side: None,
        })
    }

    fn cont(&mut self) -> Vec<Seen> {
        self.apply(&Input::Continue)
    }

    fn cancel(&mut self, originator: u16, cl: &str, orig: &str) -> Vec<Seen> {
        self.apply(&Input::Cancel {
            who: who(originator),
            cl_ord_id: &ClOrdId::from(cl),
            orig_cl_ord_id: &ClOrdId::from(orig),
        })
    }
}

fn refused(seen: &[Seen]) -> Option<Reject> {
    match seen {
        [Seen::NewRejected { reason, .. }] => Some(*reason),
        _ => None,
    }
}

fn accepted(seen: &[Seen]) -> bool {
    seen.iter().any(|s| {
        matches!(
            s,
            Seen::Report {
                kind: ReportKind::New,
                ..
            }
        )
    })
}

#[test]
fn a_firm_or_account_at_its_limit_is_refused_and_other_firms_are_not() {
    let mut m = Mkt::new(two_firms(|c| {
        c.firm_limits = vec![FirmLimits {
            max_open_orders: Some(3),
            max_open_orders_per_account: Some(2),
            ..FirmLimits::default()
        }];
    }));
    let gtc = TimeInForce::Gtc;
    assert!(accepted(&m.buy(0, Some(1), "a1", 100, gtc)));
    assert!(accepted(&m.buy(0, Some(1), "a2", 100, TimeInForce::Day)));
    let account_full = Reject::AccountOpenOrderLimit {
        account: 1,
        limit: 2,
    };
    assert_eq!(
        refused(&m.buy(0, Some(1), "a3", 100, gtc)),
        Some(account_full)
    );
    assert!(accepted(&m.buy(0, Some(2), "b1", 100, gtc)));
    let firm_full = Reject::FirmOpenOrderLimit { limit: 3 };
    assert_eq!(refused(&m.buy(0, Some(2), "b2", 100, gtc)), Some(firm_full));
    let mut buf = [0u8; DESCRIBE_MAX];
    assert_eq!(
        firm_full.describe(&mut buf),
        "firm has 3 open orders, its limit"
    );
    assert_eq!(
        account_full.describe(&mut buf),
        "account 1 has 2 open orders, its limit"
    );
    assert_eq!(m.x.open_orders_of_firm(0), 3);
    assert_eq!(m.x.open_orders_of_account(1), 2);
    // The other firm has no limit of its own.
    for i in 0..10 {
        assert!(accepted(&m.buy(1, None, &format!("o{i}"), 90, gtc)));
    }
    assert_eq!(m.x.open_orders_of_firm(1), 10);
    // An order that cannot rest does not count: an IOC passes (and is canceled).
    let ioc = m.buy(0, Some(1), "ioc", 50, TimeInForce::Ioc);
    assert_eq!(kinds(&ioc)[1], ReportKind::Canceled(CancelReason::Ioc));
    // A replace is the same order: the count stays.
    assert_eq!(
        kinds(&m.apply(&Input::Replace {
            who: who(0),
            replace: &Replace {
                cl_ord_id: ClOrdId::from("a1r"),
                orig_cl_ord_id: ClOrdId::from("a1"),
                symbol: 0,
                price: 101,
                qty: 5,
                stop_price: 0,
            },
        })),
        [ReportKind::Replaced]
    );
    assert_eq!(m.x.open_orders_of_firm(0), 3);
    // A cancel frees a place.
    assert_eq!(
        kinds(&m.cancel(0, "c1", "a1r")),
        [ReportKind::Canceled(CancelReason::User)]
    );
    assert_eq!(
        (m.x.open_orders_of_firm(0), m.x.open_orders_of_account(1)),
        (2, 1)
    );
    assert!(accepted(&m.buy(0, Some(1), "a4", 100, gtc)));
    // A fill frees one: firm 1 sells 5 at 100 against a2 (the oldest bid at 100).
    let fill = m.order(1, None, "s1", Side::Sell, 100, gtc);
    assert_eq!(kinds(&fill).len(), 3, "new, two fills: {fill:?}");
    assert_eq!(m.x.open_orders_of_firm(0), 2);
    assert_eq!(m.x.open_orders_of_firm(1), 10, "the sell never rested");
    assert_eq!(m.x.open_orders_of_account(1), 1);
}

#[test]
fn one_firm_takes_at_most_its_share_of_the_capacity() {
    let mut m = Mkt::new(two_firms(|c| {
        c.orders_max = 40;
        c.firm_capacity_percent = 25;
        c.cancel_on_disconnect = vec![true];
    }));
    for i in 0..10 {
        assert!(accepted(&m.buy(
            0,
            None,
            &format!("a{i}"),
            100,
            TimeInForce::Gtc
        )));
    }
    assert_eq!(
        refused(&m.buy(0, None, "a10", 100, TimeInForce::Gtc)),
        Some(Reject::FirmOpenOrderLimit { limit: 10 })
    );
    for i in 0..10 {
        assert!(accepted(&m.buy(
            1,
            None,
            &format!("b{i}"),
            100,
            TimeInForce::Gtc
        )));
    }
    // Cancel on disconnect gives the places back.
    let gone = m.apply(&Input::Disconnected { who: who(0) });
    assert_eq!(kinds(&gone).len(), 10);
    assert_eq!(
        (m.x.open_orders_of_firm(0), m.x.open_orders_of_firm(1)),
        (0, 10)
    );
    assert!(accepted(&m.buy(0, None, "a11", 100, TimeInForce::Gtc)));
}

#[test]
fn expiry_at_the_end_of_the_day_gives_the_places_back() {
    let mut m = Mkt::new(two_firms(|c| {
        c.firm_limits = vec![FirmLimits {
            max_open_orders: Some(2),
            max_open_orders_per_account: None,
            ..FirmLimits::default()
        }];
        c.trading_day_end_ns = Some(NS_PER_DAY / 2);
    }));
    // The first input finds out when the day ends; the orders are stamped in the morning.
    let day = 20_000 * NS_PER_DAY;
    let at = |m: &mut Mkt, ts: u64, cl: &str| {
        m.seq += 1;
        let mut r = Recorder::default();
        let order = NewOrder {
            cl_ord_id: ClOrdId::from(cl),
            price: 100,
            qty: 5,
            ..NewOrder::BLANK
        };
        m.x.apply(
            m.seq,
            ts,
            &Input::New {
                who: who(0),
                order: &order,
            },
            &mut r,
        );
        r.0
    };
    assert!(accepted(&at(&mut m, day + 1, "a")));
    assert!(accepted(&at(&mut m, day + 2, "b")));
    assert!(refused(&at(&mut m, day + 3, "c")).is_some());
    // The next input after the end of the day expires both: room again.
    let d = at(&mut m, day + NS_PER_DAY / 2 + 1, "d");
    assert!(accepted(&d), "{d:?}");
    assert_eq!(m.x.open_orders_of_firm(0), 1);
}

/// The ids of the orders canceled in `seen`, and the mass cancel's total if it ended.
fn mass_seen(seen: &[Seen]) -> (Vec<OrderId>, Option<u64>) {
    let ids = canceled(seen).into_iter().map(|(id, _)| id).collect();
    let end = seen.iter().find_map(|s| match s {
        Seen::MassCanceled { count } => Some(*count),
        _ => None,
    });
    (ids, end)
}

#[test]
fn a_mass_cancel_goes_in_chunks_and_ends_with_the_total() {
    let mut m = Mkt::new(two_firms(|c| c.mass_cancel_chunk = 3));
    for i in 0..10u32 {
        let account = Some(1 + i % 2);
        assert!(accepted(&m.buy(
            0,
            account,
            &format!("a{i}"),
            100,
            TimeInForce::Gtc
        )));
    }
    assert!(accepted(&m.buy(1, None, "b0", 90, TimeInForce::Gtc)));
    assert_eq!(mass_seen(&m.mass(0, "m1")), (vec![1, 2, 3], None));
    assert!(m.x.has_pending_work());
    assert_eq!(m.x.pending_work_originator(), Some(0));
    // Ids 4 to 11 left to look at (11, firm 1's, too: ids are looked at, not orders).
    assert_eq!(m.x.pending_work_ids(), 8);
    assert_eq!(mass_seen(&m.cont()), (vec![4, 5, 6], None));
    assert_eq!(mass_seen(&m.cont()), (vec![7, 8, 9], None));
    let last = m.cont();
    assert_eq!(mass_seen(&last), (vec![10], Some(10)));
    assert!(
        matches!(last.last(), Some(Seen::MassCanceled { .. })),
        "after the reports"
    );
    assert!(!m.x.has_pending_work());
    assert_eq!(m.x.live_orders(), 1, "the other firm's order stays");
    assert_eq!(m.cont(), [], "a Continue with nothing pending does nothing");
    // One that fits in a chunk ends in its own input, as does one with nothing to cancel.
    assert_eq!(mass_seen(&m.mass(1, "m2")), (vec![11], Some(1)));
    assert_eq!(mass_seen(&m.mass(1, "m3")), (vec![], Some(0)));
}

#[test]
fn orders_entered_or_canceled_during_a_mass_cancel() {
    let mut m = Mkt::new(two_firms(|c| c.mass_cancel_chunk = 2));
    for i in 1..=6 {
        assert!(accepted(&m.buy(
            0,
            None,
            &format!("a{i}"),
            100,
            TimeInForce::Gtc
        )));
    }
    assert_eq!(mass_seen(&m.mass(0, "m")), (vec![1, 2], None));
    // Entered after the request: not canceled by it.
    assert!(accepted(&m.buy(0, None, "a7", 100, TimeInForce::Gtc)));
    // Canceled by its owner meanwhile: skipped, and not counted.
    assert_eq!(
        kinds(&m.cancel(0, "c5", "a5")),
        [ReportKind::Canceled(CancelReason::User)]
    );
    // Filled meanwhile: skipped too (firm 1 sells 5 at 100 against a3, the oldest bid).
    let fill = m.order(1, None, "s", Side::Sell, 100, TimeInForce::Gtc);
    assert_eq!(kinds(&fill).len(), 3, "{fill:?}");
    // A chunk bounds the cancels, not the ids looked at: 3 and 5 are no longer live.
    assert_eq!(mass_seen(&m.cont()), (vec![4, 6], Some(4)));
    assert_eq!(m.x.live_orders(), 1);
    assert!(m
        .x
        .order_of(0, b"a7")
        .is_some_and(|id| m.x.order(id).is_some_and(|o| o.is_live())));
    assert_eq!(m.x.open_orders_of_firm(0), 1);
}

#[test]
fn several_pending_mass_cancels_are_served_oldest_first_and_a_restore_continues_alike() {
    let mut m = Mkt::new(two_firms(|c| c.mass_cancel_chunk = 2));
    for i in 0..5 {
        assert!(accepted(&m.buy(
            0,
            None,
            &format!("a{i}"),
            100,
            TimeInForce::Gtc
        )));
        assert!(accepted(&m.buy(
            1,
            None,
            &format!("b{i}"),
            90,
            TimeInForce::Gtc
        )));
    }
    // Firm 0 has the odd ids, firm 1 the even ones.
    assert_eq!(mass_seen(&m.mass(0, "m0")), (vec![1, 3], None));
    assert_eq!(mass_seen(&m.mass(1, "m1")), (vec![2, 4], None));
    // Firm 0's stopped at id 5, firm 1's at 6, both before 11.
    assert_eq!(m.x.pending_work_ids(), 6 + 5);
    // A snapshot mid-way restores the same state, and both go on alike.
    let mut bytes = Vec::new();
    let hash = m.x.snapshot_and_hash(&mut bytes);
    let (y, rest) =
        Exchange::restore(m.x.config().clone(), &bytes, Backing::Resident).expect("restores");
    assert!(rest.is_empty());
    assert_eq!(y.state_hash(), hash);
    assert_eq!(hash, m.x.state_hash());
    let mut n = Mkt::new(y);
    assert_eq!(n.x.open_orders_of_firm(0), 3);
    assert_eq!(n.x.pending_work_ids(), 11);
    // A replay of the same inputs from the start reaches the same state as well.
    let mut r = Mkt::new(two_firms(|c| c.mass_cancel_chunk = 2));
    for i in 0..5 {
        r.buy(0, None, &format!("a{i}"), 100, TimeInForce::Gtc);
        r.buy(1, None, &format!("b{i}"), 90, TimeInForce::Gtc);
    }
    r.mass(0, "m0");
    r.mass(1, "m1");
    assert_eq!(r.x.state_hash(), hash);
    let mut steps = Vec::new();
    while m.x.has_pending_work() {
        let a = m.cont();
        assert_eq!(n.cont(), a);
        assert_eq!(n.x.state_hash(), m.x.state_hash());
        steps.push(mass_seen(&a));
    }
    assert_eq!(
        steps,
        [(vec![5, 7, 6, 8], None), (vec![9, 10], Some(5)),],
        "firm 0's chunk, then firm 1's; firm 0 ends first and firm 1 in the same input"
    );
    // The hash without pending work differs from the one with.
    assert_ne!(m.x.state_hash(), hash);
}

/// The ids of `n` new GTC buys, one after the other, of originator `originator`.
fn buys(m: &mut Mkt, originator: u16, prefix: &str, n: usize) -> Vec<OrderId> {
    (0..n)
        .map(|i| {
            let cl = format!("{prefix}{i}");
            assert!(accepted(&m.buy(
                originator,
                None,
                &cl,
                100 - i64::from(originator),
                TimeInForce::Gtc
            )));
            m.x.order_of(originator, cl.as_bytes()).expect("accepted")
        })
        .collect()
}

#[test]
fn a_step_looks_at_a_bounded_number_of_ids_from_the_firms_first_live_order() {
    let mut m = Mkt::new(two_firms(|c| c.mass_cancel_scan = 4));
    // Firm 1 first (ids 1 to 6), then both firms alternately: firm 0 has 7, 9, ..., 17.
    buys(&mut m, 1, "early", 6);
    let mut mine = Vec::new();
    for i in 0..6 {
        mine.extend(buys(&mut m, 0, &format!("a{i}-"), 1));
        buys(&mut m, 1, &format!("b{i}-"), 1);
    }
    assert_eq!(mine, [7, 9, 11, 13, 15, 17]);
    // The request starts at firm 0's first live order (7, not 1) and looks at 4 ids.
    assert_eq!(mass_seen(&m.mass(0, "m")), (vec![7, 9], None));
    assert_eq!(m.x.pending_work_ids(), 19 - 11);
    // Entered after the request (id 19): out of its range.
    let late = buys(&mut m, 0, "late", 1);
    assert_eq!(late, [19]);
    assert_eq!(mass_seen(&m.cont()), (vec![11, 13], None));
    assert_eq!(mass_seen(&m.cont()), (vec![15, 17], Some(6)));
    assert!(!m.x.has_pending_work());
    assert_eq!(m.x.open_orders_of_firm(0), 1, "the late order stays");
    assert_eq!(m.x.open_orders_of_firm(1), 12);
    // Firm 0's first live order is now 19: a new request looks at 19 and 20 only.
    buys(&mut m, 1, "c", 1);
    assert_eq!(mass_seen(&m.mass(0, "m2")), (vec![19], Some(1)));
    // A firm with no live order looks at nothing and ends at once.
    assert_eq!(mass_seen(&m.mass(0, "m3")), (vec![], Some(0)));
}

#[test]
fn a_cancel_on_disconnect_goes_in_steps_and_a_restore_continues_alike() {
    let mut m = Mkt::new(two_firms(|c| {
        c.mass_cancel_chunk = 2;
        c.cancel_on_disconnect = vec![true, false, true];
    }));
    // Originators 0 and 2 both trade for firm 0; only 0's orders go when it disconnects.
    let mut gone = buys(&mut m, 0, "a", 3);
    let stay = buys(&mut m, 2, "b", 2);
    gone.extend(buys(&mut m, 0, "c", 2));
    assert_eq!((gone.clone(), stay), (vec![1, 2, 3, 6, 7], vec![4, 5]));
    let first = m.apply(&Input::Disconnected { who: who(0) });
    let reason = ReportKind::Canceled(CancelReason::Disconnect);
    assert_eq!(canceled(&first), [(1, reason), (2, reason)]);
    assert!(m.x.has_pending_work());
    let mut bytes = Vec::new();
    let hash = m.x.snapshot_and_hash(&mut bytes);
    let (y, _) =
        Exchange::restore(m.x.config().clone(), &bytes, Backing::Resident).expect("restores");
    assert_eq!(y.state_hash(), hash);
    let mut n = Mkt::new(y);
    let mut steps = Vec::new();
    while m.x.has_pending_work() {
        let a = m.cont();
        assert_eq!(n.cont(), a);
        assert_eq!(n.x.state_hash(), m.x.state_hash());
        assert!(
            !a.iter().any(|s| matches!(s, Seen::MassCanceled { .. })),
            "no report at the end: {a:?}"
        );
        steps.push(canceled(&a));
    }
    assert_eq!(steps, [vec![(3, reason), (6, reason)], vec![(7, reason)]]);
    assert_eq!(m.x.live_orders(), 2, "originator 2's orders stay");
    assert_eq!(m.x.open_orders_of_firm(0), 2);
}

#[test]
fn a_snapshot_with_a_bad_pending_range_is_refused() {
    let mut m = Mkt::new(two_firms(|c| c.mass_cancel_chunk = 1));
    buys(&mut m, 0, "a", 3);
    m.mass(0, "m");
    let mut bytes = Vec::new();
    m.x.snapshot_and_hash(&mut bytes);
    let cfg = m.x.config().clone();
    assert!(Exchange::restore(cfg.clone(), &bytes, Backing::Resident).is_ok());
    // The exchange part ends with the pending mass cancel (`next`, then the ids left: 2)
    // after the hints (account 1: 1; account 2 and 3: 0), then the risk state (2 instruments,
    // each with no reference price, open, no breaker window or halt, no operator's limits: 6
    // zeros; 2 firms and 3 accounts without a kill switch; no position). Patch them in place.
    let risk: Vec<u8> = [
        vec![2],
        vec![0; 12],
        vec![2, 0, 0],
        vec![3, 0, 0, 0],
        vec![0],
    ]
    .concat();
    let own_len = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")) as usize;
    let end = 16 + own_len - risk.len();
    assert_eq!(&bytes[end..end + risk.len()], risk);
    assert_eq!(&bytes[end - 2..end], [2, 2], "next id 2, 2 ids left");
    let mut wide = bytes.clone();
    wide[end - 1] = 9;
    assert_eq!(
        Exchange::restore(cfg.clone(), &wide, Backing::Resident).err(),
        Some("snapshot: pending mass cancel past the next order id".to_string())
    );
    let mut empty = bytes.clone();
    empty[end - 1] = 0;
    assert!(Exchange::restore(cfg, &empty, Backing::Resident)
        .err()
        .is_some_and(|e| e.contains("range")));
}
