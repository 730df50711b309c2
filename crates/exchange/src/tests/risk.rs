//! Pre-trade risk: price bands and market collars, order quantity and notional limits, open
//! notional and net position per account, and their state across a snapshot.

use super::*;
use types::OrdType;

/// ACME and BOLT at 2 decimals (tick 0.01); firm 0 has account 1, firm 1 account 3;
/// originator `n` trades for firm `n % 2`.
fn market(f: impl FnOnce(&mut Config)) -> Exchange {
    let mut c = (*config()).clone();
    c.firms = vec![vec![1], vec![3]];
    c.price_decimals = vec![2, 2];
    f(&mut c);
    Exchange::new(Arc::new(c))
}

/// ACME's band: 10% around 100.00 before the first trade.
fn band(c: &mut Config) {
    c.instrument_risk = vec![InstrumentRisk {
        band_bps: Some(1_000),
        reference_price: Some(10_000),
        ..InstrumentRisk::default()
    }];
}

struct Mkt {
    x: Exchange,
    seq: u64,
}

impl Mkt {
    fn new(x: Exchange) -> Mkt {
        Mkt { x, seq: 0 }
    }

    fn apply(&mut self, input: &Input<'_>) -> Vec<Seen> {
        self.seq += 1;
        let mut r = Recorder::default();
        self.x.apply(self.seq, 1_000 + self.seq, input, &mut r);
        r.0
    }

    fn new_order(&mut self, originator: u16, cl: &str, o: NewOrder) -> Vec<Seen> {
        let order = NewOrder {
            cl_ord_id: ClOrdId::from(cl),
            ..o
        };
        self.apply(&Input::New {
            who: Principal {
                originator,
                firm: originator % 2,
            },
            order: &order,
        })
    }

    fn limit(&mut self, originator: u16, cl: &str, side: Side, price: i64, qty: u64) -> Vec<Seen> {
        self.new_order(originator, cl, limit(side, price, qty))
    }

    fn replace(
        &mut self,
        originator: u16,
        cl: &str,
        orig: &str,
        price: i64,
        qty: u64,
    ) -> Vec<Seen> {
        let r = Replace {
            cl_ord_id: ClOrdId::from(cl),
            orig_cl_ord_id: ClOrdId::from(orig),
            symbol: 0,
            price,
            qty,
            stop_price: 0,
        };
        self.apply(&Input::Replace {
            who: Principal {
                originator,
                firm: originator % 2,
            },
            replace: &r,
        })
    }

    fn cancel(&mut self, originator: u16, cl: &str, orig: &str) -> Vec<Seen> {
        self.apply(&Input::Cancel {
            who: Principal {
                originator,
                firm: originator % 2,
            },
            cl_ord_id: &ClOrdId::from(cl),
            orig_cl_ord_id: &ClOrdId::from(orig),
        })
    }
}

fn limit(side: Side, price: i64, qty: u64) -> NewOrder {
    NewOrder {
        side,
        price,
        qty,
        tif: TimeInForce::Gtc,
        ..NewOrder::BLANK
    }
}

fn refused(seen: &[Seen]) -> Reject {
    match seen {
        [Seen::NewRejected { reason, .. }] => *reason,
        other => panic!("not refused: {other:?}"),
    }
}

fn cancel_refused(seen: &[Seen]) -> Reject {
    match seen {
        [Seen::CancelRejected { reason, .. }] => *reason,
        other => panic!("not refused: {other:?}"),
    }
}

fn accepted(seen: &[Seen]) {
    assert!(
        matches!(
            seen.first(),
            Some(Seen::Report {
                kind: ReportKind::New | ReportKind::Replaced,
                ..
            })
        ),
        "not accepted: {seen:?}"
    );
}

fn text(r: Reject) -> String {
    let mut buf = [0u8; DESCRIBE_MAX];
    r.describe(&mut buf).to_string()
}

#[test]
fn a_limit_order_outside_the_band_is_refused_with_the_band_and_the_band_follows_trades() {
    let mut m = Mkt::new(market(band));
    assert_eq!(m.x.price_band(0), Some((9_000, 11_000)));
    let r = refused(&m.limit(0, "hi", Side::Buy, 11_001, 1));
    assert_eq!(
        r,
        Reject::PriceBand {
            price: 11_001,
            low: 9_000,
            high: 11_000,
            decimals: 2
        }
    );
    assert_eq!(
        text(r),
        "price 110.01 outside the price band 90.00 to 110.00"
    );
    assert_eq!(
        refused(&m.limit(0, "lo", Side::Sell, 8_999, 1)),
        Reject::PriceBand {
            price: 8_999,
            low: 9_000,
            high: 11_000,
            decimals: 2
        }
    );
    accepted(&m.limit(0, "edge", Side::Sell, 11_000, 1));
    // A trade at 110.00 moves the reference there: the band is now 99.00 to 121.00.
    accepted(&m.limit(1, "take", Side::Buy, 11_000, 1));
    assert_eq!(m.x.reference_price(0), 11_000);
    assert_eq!(m.x.price_band(0), Some((9_900, 12_100)));
    accepted(&m.limit(0, "now-in", Side::Sell, 12_100, 1));
    // BOLT has no band.
    accepted(&m.new_order(
        0,
        "bolt",
        NewOrder {
            symbol: 1,
            ..limit(Side::Buy, 1, 1)
        },
    ));
}

#[test]
fn a_market_order_fills_inside_the_band_and_the_rest_is_canceled_by_the_collar() {
    let mut m = Mkt::new(market(band));
    accepted(&m.limit(0, "edge", Side::Sell, 11_000, 2));
    // A trade at 110.00 widens the band to 121.00: an order rests at 120.00; one at 100.00
    // brings the band back to 90.00-110.00, with 120.00 still resting outside it.
    accepted(&m.limit(1, "t1", Side::Buy, 11_000, 1));
    accepted(&m.limit(0, "far", Side::Sell, 12_000, 5));
    accepted(&m.limit(1, "t2", Side::Buy, 10_000, 1));
    accepted(&m.limit(0, "t3", Side::Sell, 10_000, 1));
    accepted(&m.limit(0, "in", Side::Sell, 10_500, 5));
    assert_eq!(m.x.price_band(0), Some((9_000, 11_000)));
    let seen = m.new_order(
        1,
        "mkt",
        NewOrder {
            ord_type: OrdType::Market,
            tif: TimeInForce::Ioc,
            ..limit(Side::Buy, 0, 10)
        },
    );
    let fills: Vec<_> = seen
        .iter()
        .filter_map(|s| match s {
            Seen::Report {
                cl,
                kind: ReportKind::Fill { price, qty },
                ..
            } if cl == "mkt" => Some((*price, *qty)),
            _ => None,
        })
        .collect();
    assert_eq!(fills, [(10_500, 5), (11_000, 1)]);
    assert!(
        seen.iter().any(|s| matches!(
            s,
            Seen::Report { cl, kind: ReportKind::Canceled(CancelReason::Collar), leaves: 0, cum: 6, .. }
                if cl == "mkt"
        )),
        "{seen:?}"
    );
    assert_eq!(
        CancelReason::Collar.text(),
        "market order collar: no liquidity within the price band"
    );
    // Without a band, a market order with nothing to take is canceled for no liquidity.
    let mut open = Mkt::new(market(|_| {}));
    let seen = open.new_order(
        1,
        "mkt",
        NewOrder {
            ord_type: OrdType::Market,
            tif: TimeInForce::Ioc,
            ..limit(Side::Buy, 0, 10)
        },
    );
    assert!(
        seen.iter().any(|s| matches!(
            s,
            Seen::Report {
                kind: ReportKind::Canceled(CancelReason::NoLiquidity),
                cum: 0,
                ..
            }
        )),
        "{seen:?}"
    );
}

#[test]
fn order_quantity_and_notional_limits_take_the_smaller_of_instrument_and_firm() {
    let mut m = Mkt::new(market(|c| {
        c.instrument_risk = vec![InstrumentRisk {
            max_order_qty: Some(100),
            max_order_notional: Some(500_000),
            ..InstrumentRisk::default()
        }];
        c.firm_limits = vec![FirmLimits {
            max_order_qty: Some(50),
            max_order_notional: Some(100_000),
            ..FirmLimits::default()
        }];
    }));
    let r = refused(&m.limit(0, "q", Side::Buy, 100, 51));
    assert_eq!(text(r), "order quantity 51 over the limit 50");
    // Firm 1 has no limit of its own: the instrument's.
    accepted(&m.limit(1, "q", Side::Buy, 100, 51));
    assert_eq!(
        text(refused(&m.limit(1, "q2", Side::Buy, 100, 101))),
        "order quantity 101 over the limit 100"
    );
    // 11 × 100.00 = 1100.00 over firm 0's 1000.00.
    let r = refused(&m.limit(0, "n", Side::Buy, 10_000, 11));
    assert_eq!(
        r,
        Reject::RiskLimit {
            kind: RiskKind::OrderNotional,
            value: 110_000,
            limit: 100_000,
            decimals: 2
        }
    );
    assert_eq!(text(r), "order notional 1100.00 over the limit 1000.00");
    accepted(&m.limit(0, "n", Side::Buy, 10_000, 10));
    // A replace that raises the quantity past the limit is refused; one that lowers it is not.
    let r = cancel_refused(&m.replace(0, "n2", "n", 10_000, 11));
    assert_eq!(text(r), "order notional 1100.00 over the limit 1000.00");
    accepted(&m.replace(0, "n3", "n", 10_000, 9));
}

#[test]
fn open_notional_counts_resting_orders_only_and_frees_what_leaves_the_book() {
    let mut m = Mkt::new(market(|c| {
        c.firm_limits = vec![FirmLimits {
            max_open_notional_per_account: Some(200_000),
            ..FirmLimits::default()
        }];
    }));
    accepted(&m.limit(0, "a", Side::Buy, 10_000, 10));
    accepted(&m.limit(0, "b", Side::Sell, 20_000, 5));
    assert_eq!(m.x.open_notional(1), 200_000);
    let r = refused(&m.limit(0, "c", Side::Buy, 100, 1));
    assert_eq!(
        text(r),
        "account open notional 2001.00 over the limit 2000.00"
    );
    // An IOC never rests: not counted.
    accepted(&m.new_order(
        0,
        "ioc",
        NewOrder {
            tif: TimeInForce::Ioc,
            ..limit(Side::Buy, 100, 1)
        },
    ));
    // A fill frees what it took: 4 of b at 200.00.
    accepted(&m.limit(1, "take", Side::Buy, 20_000, 4));
    assert_eq!(m.x.open_notional(1), 120_000);
    accepted(&m.limit(0, "c", Side::Buy, 10_000, 8));
    assert_eq!(m.x.open_notional(1), 200_000);
    // A replace that raises it is refused, a cancel frees it.
    let r = cancel_refused(&m.replace(0, "a2", "a", 10_100, 10));
    assert_eq!(
        text(r),
        "account open notional 2010.00 over the limit 2000.00"
    );
    accepted(&m.replace(0, "a3", "a", 9_000, 10));
    assert_eq!(m.x.open_notional(1), 190_000);
    assert!(matches!(
        m.cancel(0, "x", "c").first(),
        Some(Seen::Report {
            kind: ReportKind::Canceled(CancelReason::User),
            ..
        })
    ));
    assert_eq!(m.x.open_notional(1), 110_000);
}

#[test]
fn net_position_counts_fills_and_resting_orders_on_the_side_of_the_order() {
    let mut m = Mkt::new(market(|c| {
        c.firm_limits = vec![FirmLimits {
            max_net_position_per_account: Some(10),
            ..FirmLimits::default()
        }];
    }));
    accepted(&m.limit(0, "b1", Side::Buy, 100, 6));
    let r = refused(&m.limit(0, "b2", Side::Buy, 100, 5));
    assert_eq!(text(r), "account net position 11 over the limit 10");
    // Selling is allowed up to 10 short, whatever rests on the buy side.
    accepted(&m.limit(0, "s1", Side::Sell, 200, 10));
    assert_eq!(
        text(refused(&m.limit(0, "s2", Side::Sell, 200, 1))),
        "account net position -11 over the limit 10"
    );
    // Firm 1 (no limit) sells 6 into b1: account 1 is long 6, b1 is gone.
    accepted(&m.limit(1, "hit", Side::Sell, 100, 6));
    assert_eq!((m.x.position(1, 0), m.x.position(3, 0)), (6, -6));
    accepted(&m.limit(0, "b3", Side::Buy, 100, 4));
    assert_eq!(
        text(refused(&m.limit(0, "b4", Side::Buy, 100, 1))),
        "account net position 11 over the limit 10"
    );
    // Other instruments have their own position.
    accepted(&m.new_order(
        0,
        "bolt",
        NewOrder {
            symbol: 1,
            ..limit(Side::Buy, 100, 10)
        },
    ));
}

#[test]
fn references_and_positions_survive_a_snapshot_and_open_notionals_are_recounted() {
    let mut m = Mkt::new(market(|c| {
        band(c);
        c.firm_limits = vec![FirmLimits {
            max_open_notional_per_account: Some(1_000_000),
            max_net_position_per_account: Some(100),
            ..FirmLimits::default()
        }];
    }));
    accepted(&m.limit(0, "s", Side::Sell, 10_200, 5));
    accepted(&m.limit(1, "b", Side::Buy, 10_200, 3));
    accepted(&m.limit(0, "r", Side::Buy, 10_000, 7));
    let mut bytes = Vec::new();
    let hash = m.x.snapshot_and_hash(&mut bytes);
    let (y, _) = Exchange::restore(m.x.config().clone(), &bytes, Backing::Resident).unwrap();
    assert_eq!(y.state_hash(), hash);
    for x in [&m.x, &y] {
        assert_eq!(x.reference_price(0), 10_200);
        assert_eq!((x.position(1, 0), x.position(3, 0)), (-3, 3));
        assert_eq!(x.open_notional(1), 2 * 10_200 + 7 * 10_000);
    }
    // A different position is a different state.
    let mut other = Mkt::new(market(|c| {
        band(c);
    }));
    accepted(&other.limit(0, "s", Side::Sell, 10_200, 5));
    accepted(&other.limit(1, "b", Side::Buy, 10_200, 2));
    accepted(&other.limit(0, "r", Side::Buy, 10_000, 7));
    assert_ne!(other.x.state_hash(), hash);
}

#[test]
fn every_risk_reject_round_trips_the_codec() {
    use crate::codec::{Dec, Enc};
    let mut all = vec![Reject::PriceBand {
        price: -5,
        low: 1,
        high: i64::MAX,
        decimals: 9,
    }];
    all.extend(RiskKind::ALL.map(|kind| Reject::RiskLimit {
        kind,
        value: i128::MIN,
        limit: i128::MAX,
        decimals: 18,
    }));
    for r in all {
        let mut b = Vec::new();
        r.encode(&mut Enc(&mut b));
        let mut d = Dec(&b);
        assert_eq!(Reject::decode(&mut d), Ok(r));
        assert!(Reject::decode(&mut Dec(&b[..b.len() - 1])).is_err());
        // The longest texts fit the buffer.
        assert!(text(r).contains("over the limit") || text(r).contains("band"));
    }
}
