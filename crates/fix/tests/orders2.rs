//! Order types II at the FIX edge: stop (OrdType 3) and stop limit (4) orders with StopPx
//! (99), icebergs (MaxFloor 111) and GTD orders (TimeInForce 6 with ExpireTime 126) as the
//! readers take them and refuse them (each refusal's tag and Text), and as every
//! ExecutionReport of such an order writes them back, a stop's trigger included (ExecType L
//! in FIX 5.0SP2, D Restated in 4.2 and 4.4).

mod common;
use common::{encode, pipes, with, T0};

use fix::app::{
    Echo, ExecType, ExecutionReport, InstrumentRef, Instruments, NewOrderSingle, OrdStatus,
    OrderCancelReplaceRequest, OrderExt, Refusal,
};
use fix::FixVersion;
use types::{OrdType, Side, TimeInForce};

/// ACME: prices in cents, a tick of 0.05 (5 units).
struct Table;

const ACME: InstrumentRef = InstrumentRef {
    id: 1,
    decimals: 2,
    tick: 5,
};

impl Instruments for Table {
    fn find(&self, symbol: &[u8]) -> Option<InstrumentRef> {
        (symbol == b"ACME").then_some(ACME)
    }
}

fn new_order(body: &str) -> Result<(OrdType, TimeInForce, i64, OrderExt), Refusal> {
    with("D", body, |m| {
        NewOrderSingle::read(m, &Table).map(|n| (n.ord_type, n.time_in_force, n.price, n.ext))
    })
}

const BASE: &str = "11=X|55=ACME|54=1|38=100|";

#[test]
fn stop_iceberg_and_gtd_orders_read() {
    let ok = |extra: &str| new_order(&format!("{BASE}{extra}")).unwrap();
    let ext = |stop_px, max_floor, expire_time_ns| OrderExt {
        stop_px,
        max_floor,
        expire_time_ns,
    };
    // A stop: a market order with a stop price; no Price read.
    assert_eq!(
        ok("40=3|99=10.05|"),
        (OrdType::Market, TimeInForce::Day, 0, ext(1005, 0, 0))
    );
    // A stop limit: both prices.
    assert_eq!(
        ok("40=4|44=10.10|99=10.05|59=1|"),
        (OrdType::Limit, TimeInForce::Gtc, 1010, ext(1005, 0, 0))
    );
    // An iceberg: MaxFloor, whole (100.00 reads as 100); 0 means none.
    assert_eq!(
        ok("40=2|44=10|111=10.00|"),
        (OrdType::Limit, TimeInForce::Day, 1000, ext(0, 10, 0))
    );
    assert_eq!(ok("40=2|44=10|111=0|").3, ext(0, 0, 0));
    // GTD: ExpireTime in any precision the parser reads.
    let at = T0 + 3_600_000_000_000;
    assert_eq!(
        ok("40=2|44=10|59=6|126=20231114-23:13:20|"),
        (OrdType::Limit, TimeInForce::Gtd, 1000, ext(0, 0, at))
    );
    assert_eq!(
        ok("40=2|44=10|59=6|126=20231114-23:13:20.000000123|").3,
        ext(0, 0, at + 123)
    );
    // All three at once.
    assert_eq!(
        ok("40=4|44=10|99=9.95|111=5|59=6|126=20231114-23:13:20.000|"),
        (OrdType::Limit, TimeInForce::Gtd, 1000, ext(995, 5, at))
    );
}

/// Each refusal names its field and says what was wrong, in the reader's fixed order.
#[test]
fn stop_iceberg_and_gtd_refusals() {
    let cases: &[(&str, u32, &str)] = &[
        (
            "40=3|",
            99,
            "stop order (OrdType 3 or 4) without StopPx(99)",
        ),
        (
            "40=4|99=10|",
            44,
            "stop limit order (OrdType 4) without Price(44)",
        ),
        (
            "40=4|44=10|",
            99,
            "stop order (OrdType 3 or 4) without StopPx(99)",
        ),
        (
            "40=3|99=10.01|",
            99,
            "StopPx 10.01 is not a multiple of ACME's tick 0.05",
        ),
        ("40=3|99=0|", 99, "StopPx(99) must be positive, got 0"),
        ("40=3|99=-1|", 99, "StopPx(99) must be positive, got -1"),
        (
            "40=3|99=ten|",
            99,
            "StopPx(99) is not a decimal number, got ten",
        ),
        (
            "40=2|44=10|99=10|",
            99,
            "StopPx(99) is only for a stop order (OrdType 3 or 4)",
        ),
        (
            "40=1|99=10|",
            99,
            "StopPx(99) is only for a stop order (OrdType 3 or 4)",
        ),
        (
            "40=2|44=10|111=-5|",
            111,
            "MaxFloor(111) must not be negative, got -5",
        ),
        (
            "40=2|44=10|111=2.5|",
            111,
            "MaxFloor(111) must be a whole number, got 2.5",
        ),
        (
            "40=2|44=10|111=lots|",
            111,
            "MaxFloor(111) is not a number, got lots",
        ),
        (
            "40=2|44=10|59=6|",
            126,
            "GTD order (TimeInForce 6) without ExpireTime(126)",
        ),
        (
            "40=2|44=10|59=6|432=20231115|",
            432,
            "ExpireDate(432) is not supported: a GTD order (TimeInForce 6) gives \
             ExpireTime(126), a UTCTimestamp",
        ),
        (
            "40=2|44=10|59=6|126=20231114-23:13:20|432=20231115|",
            432,
            "ExpireDate(432) is not supported: a GTD order (TimeInForce 6) gives \
             ExpireTime(126), a UTCTimestamp",
        ),
        (
            "40=2|44=10|59=1|126=20231114-23:13:20|",
            126,
            "ExpireTime(126) is only for a GTD order (TimeInForce 6)",
        ),
        (
            "40=2|44=10|126=20231114-23:13:20|",
            126,
            "ExpireTime(126) is only for a GTD order (TimeInForce 6)",
        ),
        (
            "40=2|44=10|59=6|126=20231115|",
            126,
            "ExpireTime(126) is not a UTCTimestamp (YYYYMMDD-HH:MM:SS[.sss]), got 20231115",
        ),
        (
            "40=2|44=10|59=6|126=20231314-23:13:20|",
            126,
            "ExpireTime(126) is not a UTCTimestamp (YYYYMMDD-HH:MM:SS[.sss]), got \
             20231314-23:13:20",
        ),
        // The first problem in the reader's order: Price before StopPx before OrderQty.
        (
            "40=4|44=10.01|99=1.01|",
            44,
            "Price 10.01 is not a multiple of ACME's tick 0.05",
        ),
    ];
    for (extra, tag, text) in cases {
        let body = format!("{BASE}{extra}");
        let e = new_order(&body).unwrap_err();
        assert_eq!((e.tag, e.text.as_str()), (*tag, *text), "{body}");
        assert!(!e.is_session_level());
    }
    // OrderQty is read after both prices.
    let e = new_order("11=X|55=ACME|54=1|40=3|99=10|").unwrap_err();
    assert_eq!((e.tag, e.text.as_str()), (38, "missing OrderQty(38)"));
}

/// A replace of a stop limit order (OrdType 4) carries its StopPx (required; the caller
/// checks it is the order's); a stop (3) or market order cannot be replaced.
#[test]
fn replace_of_a_stop_limit_order() {
    let read = |body: &str| {
        with("G", body, |m| {
            OrderCancelReplaceRequest::read(m, &Table).map(|r| (r.price, r.order_qty, r.stop_px))
        })
    };
    let g = "11=R|41=O|55=ACME|38=50|44=10|";
    assert_eq!(
        read(&format!("{g}40=4|99=9.95|")),
        Ok((1000, 50, Some(995)))
    );
    assert_eq!(read(&format!("{g}40=2|")), Ok((1000, 50, None)));
    assert_eq!(read(g), Ok((1000, 50, None)));
    let refused = |extra: &str| {
        let e = read(&format!("{g}{extra}")).unwrap_err();
        (e.tag, e.text)
    };
    let only = "only limit and stop limit orders can be replaced (OrdType 2 or 4)";
    assert_eq!(refused("40=3|99=10|"), (40, only.to_string()));
    assert_eq!(refused("40=1|"), (40, only.to_string()));
    assert_eq!(
        refused("40=4|"),
        (
            99,
            "replace of a stop limit order (OrdType 4) without StopPx(99)".to_string()
        )
    );
    assert_eq!(
        refused("40=4|99=9.99|"),
        (
            99,
            "StopPx 9.99 is not a multiple of ACME's tick 0.05".to_string()
        )
    );
    assert_eq!(
        refused("40=2|99=10|"),
        (
            99,
            "StopPx(99) is only for a stop limit order (OrdType 4)".to_string()
        )
    );
}

/// The body from ExecID to TransactTime, as `encode` wrote it.
fn body(text: &str) -> &str {
    &text[text.find("|17=").unwrap() + 1..text.find("|60=").unwrap() + 1]
}

fn stop_limit() -> ExecutionReport<'static> {
    ExecutionReport {
        order_id: 7,
        cl_ord_id: b"S1",
        orig_cl_ord_id: None,
        exec_id: (70, 1),
        exec_type: ExecType::New,
        ord_status: OrdStatus::New,
        account: 9,
        symbol: b"ACME",
        side: Side::Buy,
        ord_type: OrdType::Limit,
        price: 1010,
        time_in_force: TimeInForce::Gtc,
        order_qty: 100,
        ext: OrderExt {
            stop_px: 1005,
            ..OrderExt::default()
        },
        last: None,
        leaves_qty: 100,
        cum_qty: 0,
        notional: 0,
        price_decimals: 2,
        text: None,
        transact_time_ns: T0,
    }
}

#[test]
fn reports_of_a_stop_limit_order_in_each_version() {
    let new = stop_limit();
    assert_eq!(
        body(&encode(&new, FixVersion::Fix44)),
        "17=70.1|150=0|39=0|1=9|55=ACME|54=1|40=4|44=10.1|99=10.05|59=1|38=100|151=100|14=0|6=0|"
    );
    // Triggered: ExecType L in FIX 5.0SP2; FIX 4.2 and 4.4 lack it and say D (Restated).
    let triggered = ExecutionReport {
        exec_type: ExecType::Triggered,
        exec_id: (71, 0),
        ..new
    };
    for (v, want) in [
        (
            FixVersion::Fix42,
            "17=71.0|20=0|150=D|39=0|1=9|55=ACME|54=1|40=4|44=10.1|99=10.05|59=1|38=100|",
        ),
        (
            FixVersion::Fix44,
            "17=71.0|150=D|39=0|1=9|55=ACME|54=1|40=4|44=10.1|99=10.05|59=1|38=100|",
        ),
        (
            FixVersion::Fix50Sp2,
            "17=71.0|150=L|39=0|1=9|55=ACME|54=1|40=4|44=10.1|99=10.05|59=1|38=100|",
        ),
    ] {
        let text = encode(&triggered, v);
        assert!(body(&text).starts_with(want), "{v:?}: {text}");
    }
    // Its fill still says OrdType 4 and StopPx.
    let fill = ExecutionReport {
        exec_type: ExecType::Trade,
        ord_status: OrdStatus::Filled,
        last: Some((1010, 100)),
        leaves_qty: 0,
        cum_qty: 100,
        notional: 1010 * 100,
        ..triggered
    };
    assert!(encode(&fill, FixVersion::Fix42)
        .contains("|20=0|150=2|39=2|1=9|55=ACME|54=1|40=4|44=10.1|99=10.05|"));
    // A stop (market) order: OrdType 3, StopPx, no Price.
    let stop = ExecutionReport {
        ord_type: OrdType::Market,
        price: 0,
        ..new
    };
    let text = encode(&stop, FixVersion::Fix50Sp2);
    assert!(text.contains("|40=3|99=10.05|59=1|38=100|"), "{text}");
    assert!(!text.contains("|44="), "{text}");
}

#[test]
fn reports_of_icebergs_and_gtd_orders() {
    let iceberg = ExecutionReport {
        ext: OrderExt {
            max_floor: 10,
            ..OrderExt::default()
        },
        ..stop_limit()
    };
    assert!(body(&encode(&iceberg, FixVersion::Fix42))
        .contains("|40=2|44=10.1|59=1|38=100|111=10|151=100|"));
    // ExpireTime in milliseconds, or finer when it needs to be exact.
    for (expire, shown) in [
        (T0 + 3_600_000_000_000, "126=20231114-23:13:20.000"),
        (T0 + 1_500_000, "126=20231114-22:13:20.001500"),
        (T0 + 7, "126=20231114-22:13:20.000000007"),
    ] {
        let gtd = ExecutionReport {
            time_in_force: TimeInForce::Gtd,
            ext: OrderExt {
                expire_time_ns: expire,
                ..OrderExt::default()
            },
            ..stop_limit()
        };
        for v in [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2] {
            let text = encode(&gtd, v);
            assert!(
                text.contains(&format!("|40=2|44=10.1|59=6|{shown}|38=100|")),
                "{v:?}: {text}"
            );
        }
    }
    // A plain order writes none of them.
    let plain = ExecutionReport {
        ext: OrderExt::default(),
        ..stop_limit()
    };
    let text = encode(&plain, FixVersion::Fix44);
    for tag in ["|99=", "|111=", "|126="] {
        assert!(!text.contains(tag), "{text}");
    }
}

#[test]
fn echo_of_a_refused_stop_order() {
    let e = Echo::of_order(b"ACME", Side::Sell, 5, OrdType::Limit, (1010, 1005), 2);
    assert_eq!(
        pipes(e.as_bytes()),
        "55=ACME|54=2|38=5|40=4|44=10.1|99=10.05|"
    );
    let e = Echo::of_order(b"ACME", Side::Sell, 5, OrdType::Market, (0, 1005), 2);
    assert_eq!(pipes(e.as_bytes()), "55=ACME|54=2|38=5|40=3|99=10.05|");
    with("D", "11=X|99=10.05|40=3|38=5|54=2|55=ACME|", |m| {
        assert_eq!(
            pipes(Echo::of(m).as_bytes()),
            "55=ACME|54=2|38=5|40=3|99=10.05|"
        );
    });
}
