use super::*;

/// Kill switches, instrument statuses, the operator's limits.
mod admin;
/// Stops, icebergs, GTD and call auctions.
mod orders2;
/// Open-order limits and chunked mass cancels.
mod protect;
/// Price bands, collars, order, open notional and position limits.
mod risk;
use crate::day::NS_PER_DAY;
use index::CL_ORD_IDS_MAX;
use orders::{DONE_INDEX_LAG, DONE_ORDERS_MAX};
use types::{CancelReason, Side, Symbol, TimeInForce};

/// One output, owned: what a recording `Outputs` keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Report {
        id: OrderId,
        kind: ReportKind,
        status: OrderStatus,
        cl: String,
        orig: Option<String>,
        leaves: u64,
        cum: u64,
    },
    NewRejected {
        cl: String,
        reason: Reject,
    },
    CancelRejected {
        cl: String,
        orig: String,
        reason: Reject,
        order: Option<(OrderId, OrderStatus)>,
    },
    MassCanceled {
        count: u64,
    },
    Indicative {
        symbol: u32,
        price: i64,
        qty: u64,
    },
    StatusUnknown {
        cl: String,
    },
}

#[derive(Default)]
struct Recorder(Vec<Seen>);

impl Outputs for Recorder {
    fn output(&mut self, o: &Output<'_>) {
        let s = |b: &[u8]| String::from_utf8(b.to_vec()).expect("UTF-8");
        self.0.push(match *o {
            Output::Report(r) => Seen::Report {
                id: r.id,
                kind: r.kind,
                status: r.order.status(),
                cl: s(r.cl_ord_id),
                orig: r.orig_cl_ord_id.map(s),
                leaves: r.order.leaves_qty,
                cum: r.order.cum_qty,
            },
            Output::NewRejected { order, reason, .. } => Seen::NewRejected {
                cl: order.cl_ord_id.to_string(),
                reason,
            },
            Output::CancelRejected {
                cl_ord_id,
                orig_cl_ord_id,
                reason,
                order,
                ..
            } => Seen::CancelRejected {
                cl: cl_ord_id.to_string(),
                orig: orig_cl_ord_id.to_string(),
                reason,
                order,
            },
            Output::MassCanceled { count, .. } => Seen::MassCanceled { count },
            Output::StatusUnknown { cl_ord_id, .. } => Seen::StatusUnknown {
                cl: cl_ord_id.to_string(),
            },
            Output::Indicative { symbol, price, qty } => Seen::Indicative { symbol, price, qty },
            Output::Market(_) | Output::TradingStatus(_) | Output::InstrumentStatus { .. } => {
                return
            }
        });
    }
}

/// Everything an input caused, with the instrument statuses the recorder drops.
#[derive(Default)]
struct All(Vec<Seen>, Vec<(types::SymbolId, InstrumentStatus)>);

impl Outputs for All {
    fn output(&mut self, o: &Output<'_>) {
        if let Output::InstrumentStatus { symbol, status } = *o {
            self.1.push((symbol, status));
        }
        let mut r = Recorder::default();
        r.output(o);
        self.0.extend(r.0);
    }
}

const WHO: Principal = Principal {
    originator: 0,
    firm: 0,
};

fn config() -> Arc<Config> {
    let inst = |s: &str| Instrument {
        symbol: Symbol::new(s).expect("a symbol"),
        tick: 1,
        lot: 1,
    };
    Arc::new(Config::new(
        vec![inst("ACME"), inst("BOLT")],
        vec![vec![1]],
        1 << 16,
    ))
}

/// One originator's requests, applied one input a record.
struct Driver {
    x: Exchange,
    seq: u64,
}

impl Driver {
    fn new(x: Exchange) -> Driver {
        let seq = x.last_seq();
        Driver { x, seq }
    }

    fn apply(&mut self, input: &Input<'_>) -> Vec<Seen> {
        self.seq += 1;
        let mut r = Recorder::default();
        self.x.apply(
            self.seq,
            1_800_000_000_000_000_000 + self.seq,
            input,
            &mut r,
        );
        r.0
    }

    /// A limit order for 5 of instrument 0.
    fn limit(&mut self, cl: &str, side: Side, price: i64, tif: TimeInForce) -> Vec<Seen> {
        let order = NewOrder {
            cl_ord_id: ClOrdId::from(cl),
            side,
            tif,
            price,
            qty: 5,
            ..NewOrder::BLANK
        };
        self.apply(&Input::New {
            who: WHO,
            order: &order,
        })
    }

    fn replace(&mut self, cl: &str, orig: &str, price: i64) -> Vec<Seen> {
        let replace = Replace {
            cl_ord_id: ClOrdId::from(cl),
            orig_cl_ord_id: ClOrdId::from(orig),
            symbol: 0,
            price,
            qty: 5,
            stop_price: 0,
        };
        self.apply(&Input::Replace {
            who: WHO,
            replace: &replace,
        })
    }

    fn cancel(&mut self, cl: &str, orig: &str) -> Vec<Seen> {
        self.apply(&Input::Cancel {
            who: WHO,
            cl_ord_id: &ClOrdId::from(cl),
            orig_cl_ord_id: &ClOrdId::from(orig),
        })
    }

    fn status(&mut self, cl: &str) -> Vec<Seen> {
        self.apply(&Input::Status {
            who: WHO,
            cl_ord_id: &ClOrdId::from(cl),
        })
    }

    /// IOC sells far above any bid, `f{from}` on: each is finished (canceled) as soon as
    /// it arrives.
    fn iocs(&mut self, from: usize, n: usize) {
        for j in from..from + n {
            let seen = self.limit(&format!("f{j}"), Side::Sell, 5000, TimeInForce::Ioc);
            assert!(
                matches!(
                    seen.last(),
                    Some(Seen::Report {
                        kind: ReportKind::Canceled(CancelReason::Ioc),
                        ..
                    })
                ),
                "f{j}: {seen:?}"
            );
        }
    }
}

fn kinds(seen: &[Seen]) -> Vec<ReportKind> {
    seen.iter()
        .filter_map(|s| match s {
            Seen::Report { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect()
}

/// A resting order replaced many times keeps only its current ClOrdID once the others
/// leave the window; the index stays within the window plus the live orders, each new
/// ClOrdID moves at most `ROTATIONS_MAX` entries, and the order can still be canceled by
/// its current ClOrdID (and not by a forgotten one).
#[test]
fn a_long_lived_order_replaced_many_times_keeps_one_clordid_beyond_the_window() {
    let mut x = Exchange::with_backing(config(), Backing::Lazy);
    x.set_cl_window(64);
    let mut d = Driver::new(x);
    // Ten resting bids, each replaced 100 times; between replaces, IOC sells far above
    // that never trade (finished at once).
    for i in 0..10 {
        let seen = d.limit(&format!("q{i}-0"), Side::Buy, 1000 + i, TimeInForce::Day);
        assert_eq!(kinds(&seen), [ReportKind::New], "{seen:?}");
    }
    let mut longest = 0;
    for r in 1..=100 {
        for i in 0..10 {
            let cl = format!("q{i}-{r}");
            let orig = format!("q{i}-{}", r - 1);
            let seen = d.replace(&cl, &orig, 1000 + i);
            assert_eq!(
                seen,
                [Seen::Report {
                    id: i as u64 + 1,
                    kind: ReportKind::Replaced,
                    status: OrderStatus::New,
                    cl,
                    orig: Some(orig),
                    leaves: 5,
                    cum: 0,
                }],
                "replace {i}/{r}"
            );
            let seen = d.limit(&format!("f{r}-{i}"), Side::Sell, 5000, TimeInForce::Ioc);
            assert_eq!(
                kinds(&seen),
                [ReportKind::New, ReportKind::Canceled(CancelReason::Ioc)]
            );
            longest = longest.max(d.x.cl_len());
        }
    }
    // 64 + the 10 current ClOrdIDs at most, plus what one call may leave over.
    assert!(longest <= 64 + 10 + 1, "the index held {longest} entries");
    for i in 0..10 {
        assert_eq!(
            d.x.order_of(0, format!("q{i}-100").as_bytes()),
            Some(i + 1),
            "q{i}-100"
        );
        assert_eq!(
            d.x.order_of(0, format!("q{i}-1").as_bytes()),
            None,
            "q{i}-1 is forgotten"
        );
    }
    let seen = d.cancel("x1", "q3-100");
    assert_eq!(
        kinds(&seen),
        [ReportKind::Canceled(CancelReason::User)],
        "canceled by its current ClOrdID: {seen:?}"
    );
    let seen = d.cancel("x2", "q4-2");
    assert_eq!(
        seen,
        [Seen::CancelRejected {
            cl: "x2".into(),
            orig: "q4-2".into(),
            reason: Reject::UnknownOrder,
            order: None,
        }],
        "a forgotten ClOrdID is unknown"
    );
    assert_eq!(d.x.live_orders(), 9);
}

/// A resting order finishes after more orders than the finished-order index has cells:
/// a newer finished order holds its cell, so one of the two goes to the index's overflow;
/// both still answer an OrderStatusRequest, also after a snapshot and restore; once
/// `DONE_ORDERS_MAX` more orders have finished, both are forgotten ("unknown order") and
/// the overflow is empty again.
#[test]
fn finished_orders_that_share_an_index_cell_answer_status_until_forgotten() {
    let cfg = config();
    let mut d = Driver::new(Exchange::with_backing(cfg.clone(), Backing::Lazy));
    let seen = d.limit("old", Side::Buy, 1000, TimeInForce::Day);
    assert_eq!(kinds(&seen), [ReportKind::New]);
    let cells = d.x.orders.done_ix.cells.len();
    assert!(cells > DONE_ORDERS_MAX && cells + 300 + DONE_ORDERS_MAX < CL_ORD_IDS_MAX);
    // The IOC numbered `cells - 1` has the id `cells` above the resting order's.
    d.iocs(0, cells + 100);
    let twin = format!("f{}", cells - 1);
    let (old_id, twin_id) = (1, cells as u64 + 1);
    assert_eq!(d.x.order_of(0, twin.as_bytes()), Some(twin_id));
    let seen = d.cancel("old-x", "old");
    assert_eq!(kinds(&seen), [ReportKind::Canceled(CancelReason::User)]);
    // Past the index's lag, so the canceled order is in the index itself.
    d.iocs(cells + 100, DONE_INDEX_LAG + 4);
    assert_eq!(
        d.x.orders.done_ix.overflow.len, 1,
        "one of the two overflowed"
    );
    let status = |cl: &str, id: OrderId| {
        vec![Seen::Report {
            id,
            kind: ReportKind::Status,
            status: OrderStatus::Canceled,
            cl: cl.to_string(),
            orig: None,
            leaves: 0,
            cum: 0,
        }]
    };
    for (cl, id) in [("old", old_id), (twin.as_str(), twin_id)] {
        assert_eq!(d.status(cl), status(cl, id), "status of {cl}");
    }
    // The same from a snapshot.
    let mut snap = Vec::new();
    let hash = d.x.snapshot_and_hash(&mut snap);
    let (y, rest) = Exchange::restore(cfg.clone(), &snap, Backing::Lazy).expect("restores");
    assert!(rest.is_empty());
    assert_eq!(y.state_hash(), hash);
    assert_eq!(y.orders.done_ix.overflow.len, 1);
    let mut e = Driver::new(y);
    for (cl, id) in [("old", old_id), (twin.as_str(), twin_id)] {
        assert_eq!(e.x.order_of(0, cl.as_bytes()), Some(id));
        let o = e.x.order(id).expect("a finished order is found");
        assert_eq!((o.state, o.leaves_qty), (OrderState::Canceled, 0), "{cl}");
        assert_eq!(
            e.status(cl),
            status(cl, id),
            "status of {cl} after a restore"
        );
    }
    // More finished orders than are remembered: both are forgotten.
    d.iocs(cells + 200, DONE_ORDERS_MAX + 1);
    for cl in ["old", twin.as_str()] {
        assert_eq!(
            d.status(cl),
            [Seen::StatusUnknown { cl: cl.to_string() }],
            "status of {cl}"
        );
    }
    assert_eq!(d.x.orders.done_ix.overflow.len, 0);
}

/// A limit order of originator `who` for 5 of ACME at `price`, stamped `ts`.
fn order_at(
    x: &mut Exchange,
    seq: u64,
    ts: u64,
    who: u16,
    cl: &str,
    tif: TimeInForce,
) -> Vec<Seen> {
    let order = NewOrder {
        cl_ord_id: ClOrdId::from(cl),
        side: Side::Buy,
        tif,
        price: 100,
        qty: 5,
        ..NewOrder::BLANK
    };
    let who = Principal {
        originator: who,
        firm: 0,
    };
    let mut r = Recorder::default();
    x.apply(seq, ts, &Input::New { who, order: &order }, &mut r);
    r.0
}

fn canceled(seen: &[Seen]) -> Vec<(OrderId, ReportKind)> {
    seen.iter()
        .filter_map(|s| match s {
            Seen::Report {
                id,
                kind: k @ ReportKind::Canceled(_),
                ..
            } => Some((*id, *k)),
            _ => None,
        })
        .collect()
}

#[test]
fn day_orders_expire_at_the_first_input_at_or_after_the_end_of_the_day() {
    const DAY: u64 = NS_PER_DAY;
    let end = 21 * 3600 * 1_000_000_000;
    let mut cfg = (*config()).clone();
    cfg.trading_day_end_ns = Some(end);
    let mut x = Exchange::new(Arc::new(cfg));
    let day0 = 20_000 * DAY;
    let tick = |x: &mut Exchange, seq, ts| {
        let mut r = Recorder::default();
        x.apply(seq, ts, &Input::Tick, &mut r);
        canceled(&r.0)
    };
    assert_eq!(x.next_day_end_ns(), 0, "unknown before the first input");
    order_at(&mut x, 1, day0 + 1, 0, "d1", TimeInForce::Day);
    order_at(&mut x, 2, day0 + 2, 0, "g1", TimeInForce::Gtc);
    assert_eq!(x.next_day_end_ns(), day0 + end);
    assert_eq!(tick(&mut x, 3, day0 + end - 1), vec![]);
    assert_eq!(
        tick(&mut x, 4, day0 + end),
        vec![(1, ReportKind::Canceled(CancelReason::Expired))]
    );
    assert_eq!(x.next_day_end_ns(), day0 + DAY + end);
    // An order after the end belongs to the next day; the next end comes a day later.
    order_at(&mut x, 5, day0 + end + 1, 0, "d2", TimeInForce::Day);
    assert_eq!(tick(&mut x, 6, day0 + DAY + end - 1), vec![]);
    // Any input ends the day, before it is applied: d2 expires, d3 rests.
    let seen = order_at(&mut x, 7, day0 + 3 * DAY, 0, "d3", TimeInForce::Day);
    assert_eq!(
        canceled(&seen),
        vec![(3, ReportKind::Canceled(CancelReason::Expired))]
    );
    assert_eq!(x.live_orders(), 2, "g1 and d3");
    // The next end survives a snapshot.
    let mut bytes = Vec::new();
    x.snapshot_and_hash(&mut bytes);
    let (y, _) = Exchange::restore(x.config().clone(), &bytes, Backing::Resident).unwrap();
    assert_eq!(y.next_day_end_ns(), x.next_day_end_ns());
    // Without an end of day, DAY orders rest.
    let mut z = Exchange::new(config());
    order_at(&mut z, 1, day0, 0, "d1", TimeInForce::Day);
    assert_eq!(z.next_day_end_ns(), u64::MAX);
    let mut r = Recorder::default();
    z.apply(2, day0 + 5 * DAY, &Input::Tick, &mut r);
    assert!(r.0.is_empty());
}

/// The status changes and expiries an input causes, in order (other outputs left out).
#[derive(Default)]
struct DayLog(Vec<String>);

impl Outputs for DayLog {
    fn output(&mut self, o: &Output<'_>) {
        match *o {
            Output::TradingStatus(s) => self.0.push(format!("{s:?}")),
            Output::Report(r) if r.kind == ReportKind::Canceled(CancelReason::Expired) => {
                self.0.push(format!("expired {}", r.id))
            }
            Output::NewRejected { reason, .. } | Output::CancelRejected { reason, .. } => {
                let mut buf = [0u8; DESCRIBE_MAX];
                self.0.push(reason.describe(&mut buf).to_string())
            }
            _ => {}
        }
    }
}

#[test]
fn the_market_closes_at_the_end_of_the_day_and_opens_at_the_start_of_the_next() {
    const H: u64 = 3600 * 1_000_000_000;
    let day0 = 20_000 * NS_PER_DAY;
    let mut cfg = (*config()).clone();
    cfg.trading_day_end_ns = Some(21 * H);
    cfg.trading_day_start_ns = Some(8 * H);
    let cfg = Arc::new(cfg);
    let mut x = Exchange::new(cfg.clone());
    let mut seq = 0;
    let mut at = |x: &mut Exchange, ts: u64, input: &Input<'_>| {
        seq += 1;
        let mut log = DayLog::default();
        x.apply(seq, ts, input, &mut log);
        log.0
    };
    let d1 = NewOrder {
        cl_ord_id: ClOrdId::from("d1"),
        price: 100,
        qty: 5,
        ..NewOrder::BLANK
    };
    let new = |o| Input::New { who: WHO, order: o };
    // The first input, at 10:00, finds the market open: no change reported.
    assert!(at(&mut x, day0 + 10 * H, &new(&d1)).is_empty());
    assert_eq!(x.trading_status(), TradingStatus::Open);
    assert_eq!(x.next_day_change_ns(), day0 + 21 * H);
    // 21:00: d1 expires, then the market closes until 08:00.
    assert_eq!(
        at(&mut x, day0 + 21 * H, &Input::Tick),
        ["expired 1", "Closed"]
    );
    assert_eq!(x.closed_until_ns(), Some(day0 + NS_PER_DAY + 8 * H));
    assert_eq!(x.next_day_change_ns(), day0 + NS_PER_DAY + 8 * H);
    let d2 = NewOrder {
        cl_ord_id: ClOrdId::from("d2"),
        ..d1
    };
    assert_eq!(
        at(&mut x, day0 + 23 * H, &new(&d2)),
        ["market closed until 08:00:00 UTC"]
    );
    // The snapshot keeps the closed market.
    let mut bytes = Vec::new();
    let h = x.snapshot_and_hash(&mut bytes);
    let (mut y, _) = Exchange::restore(cfg.clone(), &bytes, Backing::Resident).unwrap();
    assert_eq!(y.state_hash(), h);
    assert_eq!(y.trading_status(), TradingStatus::Closed);
    // 08:00 the next day: open again, and d2 rests.
    for z in [&mut x, &mut y] {
        let t = day0 + NS_PER_DAY + 8 * H;
        assert_eq!(at(z, t, &new(&d2)), ["Open"]);
        assert_eq!(z.trading_status(), TradingStatus::Open);
        assert_eq!(z.live_orders(), 1);
    }
    // A gap over several days: the day ends (d2 expires) and, its start passed, the market
    // opens in the same input.
    assert_eq!(
        at(&mut x, day0 + 4 * NS_PER_DAY + 12 * H, &Input::Tick),
        ["expired 2", "Closed", "Open"]
    );
    // A first input inside the closed hours finds the market closed, says nothing and
    // refuses the order.
    let mut z = Exchange::new(cfg);
    let t = day0 + 2 * H;
    assert_eq!(
        at(&mut z, t, &new(&d1)),
        ["market closed until 08:00:00 UTC"]
    );
    assert_eq!(z.closed_until_ns(), Some(day0 + 8 * H));
    // Without a start the next day opens as the last one ends.
    let mut cfg = (*config()).clone();
    cfg.trading_day_end_ns = Some(21 * H);
    let mut w = Exchange::new(Arc::new(cfg));
    assert!(at(&mut w, day0 + 22 * H, &new(&d1)).is_empty());
    assert_eq!(
        at(&mut w, day0 + NS_PER_DAY + 21 * H, &Input::Tick),
        ["expired 1", "Closed", "Open"]
    );
    assert_eq!(w.trading_status(), TradingStatus::Open);
}

#[test]
fn a_disconnected_originator_loses_its_orders_only_if_it_asked() {
    let mut cfg = (*config()).clone();
    cfg.cancel_on_disconnect = vec![false, true];
    let mut x = Exchange::new(Arc::new(cfg));
    order_at(&mut x, 1, 1, 1, "a", TimeInForce::Gtc);
    order_at(&mut x, 2, 2, 0, "b", TimeInForce::Gtc);
    order_at(&mut x, 3, 3, 1, "c", TimeInForce::Day);
    order_at(&mut x, 4, 4, 2, "d", TimeInForce::Gtc);
    let gone = |x: &mut Exchange, seq, originator| {
        let mut r = Recorder::default();
        let who = Principal {
            originator,
            firm: 0,
        };
        x.apply(seq, 5, &Input::Disconnected { who }, &mut r);
        canceled(&r.0)
    };
    assert_eq!(gone(&mut x, 5, 0), vec![], "originator 0 did not ask");
    assert_eq!(gone(&mut x, 6, 2), vec![], "originator 2 is past the list");
    let c = ReportKind::Canceled(CancelReason::Disconnect);
    assert_eq!(
        gone(&mut x, 7, 1),
        vec![(1, c), (3, c)],
        "in order id order"
    );
    assert_eq!(x.live_orders(), 2);
    assert_eq!(gone(&mut x, 8, 1), vec![], "nothing left");
}
