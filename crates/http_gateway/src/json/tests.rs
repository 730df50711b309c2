use super::*;
use types::Symbol;

fn acme() -> InstrumentDef {
    InstrumentDef {
        symbol: Symbol::new("ACME").unwrap(),
        tick: 1,
        lot: 1,
        price_decimals: 2,
    }
}

#[test]
fn prices_are_exact_decimal_strings() {
    let d = acme();
    assert_eq!(price(1025, &d), "10.25");
    assert_eq!(price(1000, &d), "10");
    assert_eq!(price(5, &d), "0.05");
    // 3 fills: 10.00 x1 + 10.01 x2 = 30.02 / 3
    assert_eq!(ratio(1000 + 2 * 1001, 3, &d), "10.0066666667");
}

#[test]
fn client_order_ids_hide_what_the_edge_appended() {
    assert_eq!(client_order_id("abc"), Some("abc".into()));
    assert_eq!(client_order_id("abc~c17"), Some("abc".into()));
    assert_eq!(client_order_id("~n5"), None);
}

#[test]
fn every_refusal_has_a_stable_code_and_a_4xx_or_503() {
    let all = [
        Reject::UnknownSymbol,
        Reject::UnknownAccount,
        Reject::DuplicateClOrdId,
        Reject::UnknownOrder,
        Reject::InvalidPrice,
        Reject::InvalidQty,
        Reject::InvalidField(types::Field::Qty),
        Reject::DuplicateOrderId,
        Reject::PostOnlyWouldCross,
        Reject::CapacityExceeded,
        Reject::FirmOpenOrderLimit { limit: 3 },
        Reject::AccountOpenOrderLimit {
            account: 1,
            limit: 3,
        },
        Reject::ReplaceSymbolDiffers,
        Reject::ReplaceQtyAtOrBelowFilled,
        Reject::ReplaceMarketOrder,
        Reject::ExchangeBusy,
        Reject::MarketClosed { opens_at_s: 3600 },
    ];
    let mut codes = std::collections::HashSet::new();
    for r in all {
        let (status, code) = reject_code(r);
        assert!((400..500).contains(&status) || status == 503, "{r:?}");
        assert!(codes.insert(code), "{code} used twice");
        let a = reject_answer(r);
        let v: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
        assert_eq!(v["code"], code);
        assert!(!v["message"].as_str().unwrap().is_empty());
    }
    let a = reject_answer(Reject::MarketClosed { opens_at_s: 3600 });
    assert!(String::from_utf8(a.body)
        .unwrap()
        .contains("until 01:00:00 UTC"));
}
