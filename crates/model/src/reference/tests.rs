use super::*;
use types::Symbol;

fn insts() -> Vec<Instrument> {
    ["ACME", "BETA"]
        .map(|s| Instrument {
            symbol: Symbol::new(s).expect("valid"),
            tick: 1,
            lot: 1,
        })
        .to_vec()
}

fn limit(
    id: OrderId,
    account: AccountId,
    symbol: SymbolId,
    side: Side,
    price: i64,
    qty: u64,
) -> Command {
    Command::New(NewOrder {
        id,
        account,
        symbol,
        side,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Gtc,
        price,
        qty,
        post_only: false,
        stp: StpMode::CancelNewest,
        ..Default::default()
    })
}

fn trade_ids(events: &[Event]) -> Vec<TradeId> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Trade { trade_id, .. } => Some(*trade_id),
            _ => None,
        })
        .collect()
}

#[test]
fn trade_ids_count_from_one_across_symbols() {
    let mut r = Reference::new(&insts());
    let mut ev = Vec::new();
    for cmd in [
        limit(1, 1, 0, Side::Sell, 10, 2),
        limit(2, 1, 1, Side::Sell, 10, 1),
        limit(3, 2, 0, Side::Buy, 10, 2),
        limit(4, 2, 1, Side::Buy, 10, 1),
    ] {
        r.apply(&cmd, &mut ev);
    }
    assert_eq!(trade_ids(&ev), vec![1, 2]);
    assert_eq!(r.next_trade_id(), 3);
    assert!(r.check_invariants().is_ok());
}

#[test]
fn ledger_follows_fills_replaces_and_cancels() {
    let mut r = Reference::new(&insts());
    let mut ev = Vec::new();
    r.apply(&limit(1, 1, 0, Side::Buy, 10, 10), &mut ev);
    r.apply(&limit(2, 2, 0, Side::Sell, 10, 4), &mut ev);
    let replace = |qty| Command::Replace {
        id: 1,
        account: 1,
        symbol: 0,
        price: 10,
        qty,
    };
    r.apply(&replace(3), &mut ev);
    r.apply(&replace(9), &mut ev);
    r.apply(
        &Command::Cancel {
            id: 1,
            account: 1,
            symbol: 0,
        },
        &mut ev,
    );
    let l = r.ledger(1).expect("accepted");
    assert_eq!(
        l,
        OrderLedger {
            entered: 16,
            replaced_away: 3,
            filled: 4,
            canceled: 9,
            remaining: 0
        }
    );
    assert!(r.is_used(1) && r.find(1).is_none());
    assert!(r.check_invariants().is_ok());
}

#[test]
fn huge_quantities_do_not_panic() {
    let mut r = Reference::new(&insts());
    let mut ev = Vec::new();
    r.apply(&limit(1, 1, 0, Side::Buy, i64::MAX, u64::MAX), &mut ev);
    r.apply(&limit(2, 2, 0, Side::Buy, i64::MAX, u64::MAX), &mut ev);
    assert_eq!(r.levels(0, Side::Buy), vec![(i64::MAX, u64::MAX, 2)]);
    let mut fok = limit(3, 3, 0, Side::Sell, 1, u64::MAX);
    if let Command::New(o) = &mut fok {
        o.tif = TimeInForce::Fok;
    }
    ev.clear();
    r.apply(&fok, &mut ev);
    assert_eq!(trade_ids(&ev), vec![1]);
    assert_eq!(r.levels(0, Side::Buy), vec![(i64::MAX, u64::MAX, 1)]);
    assert!(r.check_invariants().is_ok());
}

mod order_types_ii;
