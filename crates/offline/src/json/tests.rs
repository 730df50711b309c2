use super::*;
use types::{CancelReason, Field, Symbol};

fn table() -> SymbolTable {
    let mut t = SymbolTable::new();
    t.intern(Symbol::new("ACME").unwrap()).unwrap();
    t.intern(Symbol::new("Q\"\\").unwrap()).unwrap();
    t
}

fn line(e: Event, levels: bool) -> String {
    let mut out = Vec::new();
    push_event(&mut out, &e, &table(), levels);
    String::from_utf8(out).unwrap()
}

#[test]
fn events_match_the_documented_lines() {
    assert_eq!(
        line(
            Event::Accepted {
                id: 1,
                account: 2,
                symbol: 0,
                side: Side::Buy,
                price: 5,
                qty: 1
            },
            false
        ),
        "{\"type\":\"accepted\",\"id\":1}\n"
    );
    assert_eq!(
        line(
            Event::Rejected {
                id: 1,
                reason: RejectReason::DuplicateId
            },
            false
        ),
        "{\"type\":\"rejected\",\"id\":1,\"reason\":\"duplicate_id\"}\n"
    );
    assert_eq!(
        line(
            Event::Rejected {
                id: 2,
                reason: RejectReason::Invalid(Field::Price)
            },
            false
        ),
        "{\"type\":\"rejected\",\"id\":2,\"reason\":\"invalid\",\"field\":\"price\"}\n"
    );
    assert_eq!(
        line(
            Event::Trade {
                trade_id: 1,
                symbol: 0,
                price: 10000,
                qty: 5,
                maker_id: 3,
                taker_id: 9,
                maker_account: 1,
                taker_account: 2,
                taker_side: Side::Buy,
                maker_leaves: 0,
                taker_leaves: 0
            },
            false
        ),
        "{\"type\":\"trade\",\"symbol\":\"ACME\",\"price\":10000,\"qty\":5,\"maker_id\":3,\
         \"taker_id\":9,\"taker_side\":\"B\"}\n"
    );
    assert_eq!(
        line(
            Event::Canceled {
                id: 9,
                account: 1,
                symbol: 0,
                reason: CancelReason::Ioc,
                qty: 12
            },
            false
        ),
        "{\"type\":\"canceled\",\"id\":9,\"reason\":\"ioc\",\"qty\":12}\n"
    );
    assert_eq!(
        line(
            Event::Replaced {
                id: 4,
                account: 1,
                symbol: 0,
                price: -10001,
                qty: 20,
                lost_priority: true
            },
            false
        ),
        "{\"type\":\"replaced\",\"id\":4,\"price\":-10001,\"qty\":20}\n"
    );
    assert_eq!(
        line(
            Event::MassCanceled {
                account: 7,
                count: 3
            },
            false
        ),
        "{\"type\":\"mass_canceled\",\"account\":7,\"count\":3}\n"
    );
    let level = Event::Level {
        symbol: 1,
        side: Side::Sell,
        price: 7,
        qty: 0,
        orders: 0,
    };
    assert_eq!(line(level, false), "");
    assert_eq!(
        line(level, true),
        "{\"type\":\"level\",\"symbol\":\"Q\\\"\\\\\",\"side\":\"S\",\"price\":7,\"qty\":0,\
         \"orders\":0}\n"
    );
}

#[test]
fn book_lines_and_integers() {
    let mut out = Vec::new();
    push_book(&mut out, "ACME", [(1, 10, 5), (2, 9, 1)], []);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"type\":\"book\",\"symbol\":\"ACME\",\"bids\":[[1,10,5],[2,9,1]],\"asks\":[]}\n"
    );
    let mut out = Vec::new();
    push_i64(&mut out, i64::MIN);
    out.push(b' ');
    push_u64(&mut out, u64::MAX);
    out.push(b' ');
    push_u64(&mut out, 0);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "-9223372036854775808 18446744073709551615 0"
    );
}
