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
        Reject::InvalidField(types::Field::StopPrice),
        Reject::InvalidField(types::Field::DisplayQty),
        Reject::InvalidField(types::Field::ExpireTime),
        Reject::AuctionCall,
        Reject::ExpireTimePast,
        Reject::Blocked { account: None },
        Reject::InstrumentNotOpen {
            status: exchange::InstrumentStatus::Halted,
        },
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

#[test]
fn expire_times_are_rfc_3339_utc() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(951_782_400_000_000_000), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(1_795_918_961_500_000_000), "2026-11-29T02:22:41.5Z");
    assert_eq!(
        rfc3339(4_107_542_399_000_000_001),
        "2100-02-28T23:59:59.000000001Z"
    );
}

/// Against the `time` crate's parser (the one `POST /api/v1/orders` reads `expire_time` with).
#[cfg(feature = "server")]
#[test]
fn expire_times_parse_back_to_the_same_nanosecond() {
    let rfc = &time::format_description::well_known::Rfc3339;
    let mut ns: u64 = 1;
    while ns < u64::MAX / 7 {
        let back = time::OffsetDateTime::parse(&rfc3339(ns), rfc).unwrap();
        assert_eq!(
            back.unix_timestamp_nanos(),
            i128::from(ns),
            "{}",
            rfc3339(ns)
        );
        ns = ns * 7 + 12_345;
    }
}

#[test]
fn stops_have_their_own_types_and_the_new_fields_their_own_codes() {
    use types::Field;
    let stop = OrderExt {
        stop_price: 5,
        ..OrderExt::default()
    };
    let plain = OrderExt::default();
    assert_eq!(ord_type(OrdType::Limit, &stop), "stop_limit");
    assert_eq!(ord_type(OrdType::Market, &stop), "stop");
    assert_eq!(ord_type(OrdType::Limit, &plain), "limit");
    assert_eq!(ord_type(OrdType::Market, &plain), "market");
    for (f, code, words) in [
        (Field::StopPrice, "invalid_stop_price", "stop price"),
        (
            Field::DisplayQty,
            "invalid_display_quantity",
            "display quantity",
        ),
        (Field::ExpireTime, "invalid_expire_time", "expire time"),
    ] {
        let a = reject_answer(Reject::InvalidField(f));
        let v: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
        assert_eq!((a.status, v["code"].as_str()), (400, Some(code)));
        assert!(v["message"].as_str().unwrap().contains(words), "{v}");
    }
}
