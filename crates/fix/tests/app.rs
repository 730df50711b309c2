//! Order-entry messages: reading what clients send (every `Refusal` a reader gives, with its
//! tag and text), and the exact bytes of what Rialto answers in each FIX version.

mod common;
use common::{encode, pipes, with, with_bytes, T0};

use fix::app::{
    cxl_rej_reason, ord_rej_reason, BusinessMessageReject, CxlRejResponseTo, Echo, ExecType,
    ExecutionReport, InstrumentRef, Instruments, NewOrder, NewOrderSingle, OrdStatus,
    OrderCancelReject, OrderCancelReplaceRequest, OrderCancelRequest, OrderExt,
    OrderMassCancelReport, OrderMassCancelRequest, OrderStatusRequest, OrderlessReport, Refusal,
    TradSesStatus, TradingSessionStatus, TradingSessionStatusRequest, ECHO_MAX,
};
use fix::md::SubscriptionType;
use fix::{BusinessRejectReason, Decimal, FixVersion};
use types::{OrdType, Side, TimeInForce};

/// ACME: prices in cents, any cent. BOLT: prices in cents, a tick of 0.05 (5 units).
struct Table;

const ACME: InstrumentRef = InstrumentRef {
    id: 1,
    decimals: 2,
    tick: 1,
};
const BOLT: InstrumentRef = InstrumentRef {
    id: 2,
    decimals: 2,
    tick: 5,
};

impl Instruments for Table {
    fn find(&self, symbol: &[u8]) -> Option<InstrumentRef> {
        match symbol {
            b"ACME" => Some(ACME),
            b"BOLT" => Some(BOLT),
            _ => None,
        }
    }
}

/// What the reader of `msg_type` says about `body`: `Ok(())` or its refusal.
fn read(msg_type: &str, body: &[u8]) -> Result<(), Refusal> {
    with_bytes(msg_type, body, |m| match msg_type {
        "D" => NewOrderSingle::read(m, &Table).map(drop),
        "F" => OrderCancelRequest::read(m).map(drop),
        "G" => OrderCancelReplaceRequest::read(m, &Table).map(drop),
        "q" => OrderMassCancelRequest::read(m, &Table).map(drop),
        "H" => OrderStatusRequest::read(m).map(drop),
        _ => unreachable!("no reader for {msg_type}"),
    })
}

#[test]
fn new_order_single_full() {
    let body = "11=ORD1|1=9|55=ACME|54=2|38=250|40=2|44=101.25|59=1|18=6|60=20231114-22:13:20.000|";
    with("D", body, |m| {
        let o = NewOrderSingle::read(m, &Table).unwrap();
        assert_eq!(
            o,
            NewOrderSingle {
                cl_ord_id: b"ORD1",
                symbol: ACME,
                side: Side::Sell,
                ord_type: OrdType::Limit,
                time_in_force: TimeInForce::Gtc,
                price: 10125,
                order_qty: 250,
                account: Some(9),
                post_only: true,
                ext: OrderExt::default(),
            }
        );
    });
}

#[test]
fn new_order_single_defaults_and_variants() {
    // A market order: no price read (even a bad one: the exchange judges), DAY by default.
    with("D", "11=M|55=ACME|54=1|38=10.000|40=1|44=abc|", |m| {
        let o = NewOrderSingle::read(m, &Table).unwrap();
        assert_eq!(o.ord_type, OrdType::Market);
        assert_eq!(o.price, 0);
        assert_eq!(
            o.time_in_force,
            TimeInForce::Day,
            "absent TimeInForce is DAY"
        );
        assert!(!o.post_only);
        assert_eq!(o.order_qty, 10);
        assert_eq!(o.account, None);
    });
    for (tif, want) in [
        ("0", TimeInForce::Day),
        ("1", TimeInForce::Gtc),
        ("3", TimeInForce::Ioc),
        ("4", TimeInForce::Fok),
    ] {
        let body = format!("11=X|55=BOLT|54=1|38=1|40=2|44=1.05|59={tif}|18=1 6|");
        with("D", &body, |m| {
            let o = NewOrderSingle::read(m, &Table).unwrap();
            assert_eq!(o.time_in_force, want);
            assert_eq!((o.symbol, o.price), (BOLT, 105));
            assert!(o.post_only, "ExecInst list containing 6");
        });
    }
    // Account at the top of its range; a price with trailing zeros past the decimals.
    with(
        "D",
        "11=X|1=4294967295|55=ACME|54=1|38=1|40=2|44=1.5000|",
        |m| {
            let o = NewOrderSingle::read(m, &Table).unwrap();
            assert_eq!((o.account, o.price), (Some(u32::MAX), 150));
        },
    );
}

const NOS: &str = "55=ACME|54=1|38=1|40=2|44=1|";

/// Every refusal of NewOrderSingle: the tag at fault, the text a reject carries, and whether
/// it is session level (the ClOrdID is unusable, so no ExecutionReport can answer it).
#[test]
fn new_order_single_refusals() {
    let long_id = format!("11={}|{NOS}", "X".repeat(65));
    let mut not_utf8 = b"11=\xff\xfe|".to_vec();
    not_utf8.extend_from_slice(NOS.as_bytes());
    let cases: Vec<(Vec<u8>, u32, &str)> = vec![
        (NOS.into(), 11, "missing tag 11"),
        (long_id.into(), 11, "tag 11 longer than 64"),
        (not_utf8, 11, "tag 11 is not UTF-8"),
        ("11=X|54=1|38=1|40=2|44=1|".into(), 55, "missing Symbol(55)"),
        (
            "11=X|55=NOPE|54=1|38=1|40=2|44=1|".into(),
            55,
            "unknown symbol NOPE",
        ),
        (
            "11=X|55=ACME|38=1|40=2|44=1|".into(),
            54,
            "missing Side(54)",
        ),
        (
            "11=X|55=ACME|54=5|38=1|40=2|44=1|".into(),
            54,
            "unsupported Side(54) (use 1 or 2)",
        ),
        (
            "11=X|55=ACME|54=1|38=1|44=1|".into(),
            40,
            "missing OrdType(40)",
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=5|44=1|".into(),
            40,
            "unsupported OrdType(40) (use 1 market, 2 limit, 3 stop or 4 stop limit)",
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=2|44=1|59=2|".into(),
            59,
            "unsupported TimeInForce(59) (use 0, 1, 3, 4 or 6)",
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=2|".into(),
            44,
            "limit order without Price(44)",
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=2|44=1,5|".into(),
            44,
            "Price(44) is not a decimal number, got 1,5",
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=2|44=0|".into(),
            44,
            "Price(44) must be positive, got 0",
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=2|44=-1|".into(),
            44,
            "Price(44) must be positive, got -1",
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=2|44=10.005|".into(),
            44,
            "Price 10.005 is not a multiple of ACME's tick 0.01",
        ),
        (
            "11=X|55=BOLT|54=1|38=1|40=2|44=1.03|".into(),
            44,
            "Price 1.03 is not a multiple of BOLT's tick 0.05",
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=2|44=99999999999999999999|".into(),
            44,
            "Price(44) is out of range, got 99999999999999999999",
        ),
        (
            "11=X|55=ACME|54=1|40=2|44=1|".into(),
            38,
            "missing OrderQty(38)",
        ),
        (
            "11=X|55=ACME|54=1|38=1.5|40=2|44=1|".into(),
            38,
            "OrderQty(38) must be a whole number, got 1.5",
        ),
        (
            "11=X|55=ACME|54=1|38=0|40=2|44=1|".into(),
            38,
            "OrderQty(38) must be positive, got 0",
        ),
        (
            "11=X|55=ACME|54=1|38=0.00|40=2|44=1|".into(),
            38,
            "OrderQty(38) must be positive, got 0.00",
        ),
        (
            "11=X|55=ACME|54=1|38=-1|40=2|44=1|".into(),
            38,
            "OrderQty(38) must be positive, got -1",
        ),
        (
            "11=X|55=ACME|54=1|38=abc|40=2|44=1|".into(),
            38,
            "OrderQty(38) is not a number, got abc",
        ),
        (
            "11=X|1=ACC|55=ACME|54=1|38=1|40=2|44=1|".into(),
            1,
            "Account(1) is not a number",
        ),
        (
            "11=X|1=4294967296|55=ACME|54=1|38=1|40=2|44=1|".into(),
            1,
            "Account(1) is not a number",
        ),
        // The first problem in the reader's order is the one reported.
        ("11=X|54=9|40=9|38=0|".into(), 55, "missing Symbol(55)"),
        (
            "11=X|55=ACME|54=1|40=2|44=0|38=0|".into(),
            44,
            "Price(44) must be positive, got 0",
        ),
    ];
    for (body, tag, text) in cases {
        let e = read("D", &body).unwrap_err();
        let shown = pipes(&body);
        assert_eq!((e.tag, e.text.as_str()), (tag, text), "{shown}");
        assert_eq!(e.is_session_level(), tag == 11, "{shown}");
    }
}

#[test]
fn unknown_symbol_text_is_cut_to_64_bytes() {
    let body = format!("11=X|55={}|54=1|38=1|40=2|44=1|", "S".repeat(100));
    let e = read("D", body.as_bytes()).unwrap_err();
    assert_eq!(e.tag, 55);
    assert_eq!(e.text, format!("unknown symbol {}", "S".repeat(64)));
}

/// Refusals of the other readers, and what each reads when nothing is wrong.
#[test]
fn cancel_replace_mass_cancel_and_status_refusals() {
    let long = "Y".repeat(65);
    let cases: Vec<(&str, String, u32, &str)> = vec![
        ("F", "41=ORD1|".into(), 11, "missing tag 11"),
        ("F", "11=C1|".into(), 41, "missing tag 41"),
        (
            "F",
            format!("11=C1|41={long}|"),
            41,
            "tag 41 longer than 64",
        ),
        ("G", "41=O|55=ACME|38=1|44=1|".into(), 11, "missing tag 11"),
        ("G", "11=R|55=ACME|38=1|44=1|".into(), 41, "missing tag 41"),
        ("G", "11=R|41=O|38=1|44=1|".into(), 55, "missing Symbol(55)"),
        (
            "G",
            "11=R|41=O|55=NOPE|38=1|44=1|".into(),
            55,
            "unknown symbol NOPE",
        ),
        (
            "G",
            "11=R|41=O|55=ACME|40=1|38=1|44=1|".into(),
            40,
            "only limit and stop limit orders can be replaced (OrdType 2 or 4)",
        ),
        (
            "G",
            "11=R|41=O|55=ACME|38=1|".into(),
            44,
            "missing Price(44)",
        ),
        (
            "G",
            "11=R|41=O|55=BOLT|38=1|44=1.01|".into(),
            44,
            "Price 1.01 is not a multiple of BOLT's tick 0.05",
        ),
        (
            "G",
            "11=R|41=O|55=ACME|38=1|44=x|".into(),
            44,
            "Price(44) is not a decimal number, got x",
        ),
        (
            "G",
            "11=R|41=O|55=ACME|44=1|".into(),
            38,
            "missing OrderQty(38)",
        ),
        (
            "G",
            "11=R|41=O|55=ACME|38=0|44=1|".into(),
            38,
            "OrderQty(38) must be positive, got 0",
        ),
        ("q", "530=7|".into(), 11, "missing tag 11"),
        (
            "q",
            "11=MC1|".into(),
            530,
            "MassCancelRequestType(530) missing or invalid",
        ),
        (
            "q",
            "11=MC1|530=10|".into(),
            530,
            "MassCancelRequestType(530) missing or invalid",
        ),
        (
            "q",
            "11=MC1|530=x|".into(),
            530,
            "MassCancelRequestType(530) missing or invalid",
        ),
        (
            "q",
            "11=MC1|530=1|55=NOPE|".into(),
            55,
            "unknown symbol NOPE",
        ),
        (
            "q",
            "11=MC1|530=7|54=3|".into(),
            54,
            "unsupported Side(54) (use 1 or 2)",
        ),
        ("H", "37=5|".into(), 11, "missing tag 11"),
        ("H", format!("11={long}|"), 11, "tag 11 longer than 64"),
    ];
    for (msg_type, body, tag, text) in cases {
        let e = read(msg_type, body.as_bytes()).unwrap_err();
        assert_eq!(
            (e.tag, e.text.as_str()),
            (tag, text),
            "35={msg_type} {body}"
        );
        assert_eq!(
            e.is_session_level(),
            tag == 11 || tag == 41,
            "35={msg_type} {body}"
        );
    }
}

#[test]
fn cancel_replace_mass_cancel_and_status_read() {
    with("F", "41=ORD1|11=CXL1|55=ACME|54=1|37=77|", |m| {
        assert_eq!(
            OrderCancelRequest::read(m).unwrap(),
            OrderCancelRequest {
                cl_ord_id: b"CXL1",
                orig_cl_ord_id: b"ORD1",
            }
        );
    });
    with(
        "G",
        "41=ORD1|11=R1|55=ACME|54=1|38=50.0|40=2|44=99.5|59=0|",
        |m| {
            assert_eq!(
                OrderCancelReplaceRequest::read(m, &Table).unwrap(),
                OrderCancelReplaceRequest {
                    cl_ord_id: b"R1",
                    orig_cl_ord_id: b"ORD1",
                    symbol: ACME,
                    price: 9950,
                    order_qty: 50,
                    stop_px: None,
                }
            );
        },
    );
    // Without OrdType: a replace of a limit order is assumed.
    with("G", "41=O|11=R|55=BOLT|38=5|44=2|", |m| {
        let r = OrderCancelReplaceRequest::read(m, &Table).unwrap();
        assert_eq!((r.symbol, r.price, r.order_qty), (BOLT, 200, 5));
    });
    with("q", "11=MC1|530=7|", |m| {
        assert_eq!(
            OrderMassCancelRequest::read(m, &Table).unwrap(),
            OrderMassCancelRequest {
                cl_ord_id: b"MC1",
                request_type: 7,
                symbol: None,
                side: None,
            }
        );
    });
    with("q", "11=MC1|530=1|55=BOLT|54=2|", |m| {
        let q = OrderMassCancelRequest::read(m, &Table).unwrap();
        assert_eq!(
            (q.request_type, q.symbol, q.side),
            (1, Some(2), Some(Side::Sell))
        );
    });
    // Any type 0..=9 is read as sent; which ones are carried out is the exchange's call.
    with("q", "11=MC1|530=9|", |m| {
        assert_eq!(
            OrderMassCancelRequest::read(m, &Table)
                .unwrap()
                .request_type,
            9
        );
    });
    with("H", "11=ORD1|37=77|55=ACME|54=1|", |m| {
        assert_eq!(
            OrderStatusRequest::read(m).unwrap(),
            OrderStatusRequest { cl_ord_id: b"ORD1" }
        );
    });
    assert!(fix::app::is_supported(b"D") && !fix::app::is_supported(b"V"));
    for t in ["D", "F", "G", "H", "q", "g"] {
        assert!(fix::app::is_supported(t.as_bytes()), "{t}");
    }
}

/// `Echo::of` keeps Symbol, Side, OrderQty, OrdType, Price and StopPx in that order whatever
/// the message's order, each only if present, printable and at most 32 bytes.
#[test]
fn echo_of_an_order() {
    with("D", "11=X|44=10.5|40=2|38=100|54=1|55=ACME|", |m| {
        let e = Echo::of(m);
        assert_eq!(
            e.as_str(),
            "55=ACME\x0154=1\x0138=100\x0140=2\x0144=10.5\x01"
        );
        assert_eq!(
            format!("{e:?}"),
            "\"55=ACME\\u{1}54=1\\u{1}38=100\\u{1}40=2\\u{1}44=10.5\\u{1}\""
        );
    });
    let long = "9".repeat(33);
    let body = format!("11=X|55=A B|54=2|38={long}|");
    with("D", &body, |m| {
        let e = Echo::of(m);
        assert_eq!(
            pipes(e.as_bytes()),
            "54=2|",
            "a space or 33 bytes: left out"
        );
    });
    let max = "9".repeat(32);
    let body = format!("55={max}|54={max}|38={max}|40={max}|44={max}|99={max}|");
    with("D", &body, |m| {
        let e = Echo::of(m);
        assert_eq!(
            e.as_bytes().len(),
            ECHO_MAX,
            "six longest fields fit exactly"
        );
    });
    with("H", "11=X|", |m| assert!(Echo::of(m).is_empty()));
}

#[test]
fn echo_push_and_from_bytes() {
    let mut e = Echo::EMPTY;
    assert!(e.is_empty());
    assert!(e.push_field(b"55=", b"ACME"));
    assert!(!e.push_field(b"54=", b""), "empty value");
    assert!(!e.push_field(b"54=", b"\x01"), "not printable");
    assert!(!e.push_field(b"38=", "é".as_bytes()), "not ASCII");
    assert_eq!(pipes(e.as_bytes()), "55=ACME|");
    let big = [b'7'; ECHO_MAX];
    assert!(!e.push_field(b"38=", &big), "does not fit: unchanged");
    assert_eq!(pipes(e.as_bytes()), "55=ACME|");
    assert_eq!(Echo::from_bytes(e.as_bytes()), Some(e));
    assert_eq!(Echo::from_bytes("é".as_bytes()), None);
    assert_eq!(Echo::from_bytes(&[b'a'; ECHO_MAX + 1]), None);
    assert_eq!(Echo::from("55=X\x01").as_bytes(), b"55=X\x01");
    assert_eq!(Echo::default(), Echo::EMPTY);
}

/// 500 to buy at 10.01; 100 filled at 10.00, then 200 at 10.01.
fn partial_fill() -> ExecutionReport<'static> {
    ExecutionReport {
        order_id: 1001,
        cl_ord_id: b"ORD1",
        orig_cl_ord_id: None,
        exec_id: (5001, 2),
        exec_type: ExecType::Trade,
        ord_status: OrdStatus::PartiallyFilled,
        account: 9,
        symbol: b"ACME",
        side: Side::Buy,
        ord_type: OrdType::Limit,
        price: 1001,
        time_in_force: TimeInForce::Day,
        order_qty: 500,
        ext: Default::default(),
        last: Some((1001, 200)),
        leaves_qty: 200,
        cum_qty: 300,
        notional: 1000 * 100 + 1001 * 200,
        price_decimals: 2,
        text: None,
        transact_time_ns: T0,
    }
}

#[test]
fn execution_report_fix44_bytes() {
    assert_eq!(
        encode(&partial_fill(), FixVersion::Fix44),
        "8=FIX.4.4|9=208|35=8|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|37=1001|\
11=ORD1|17=5001.2|150=F|39=1|1=9|55=ACME|54=1|40=2|44=10.01|59=0|38=500|31=10.01|32=200|\
151=200|14=300|6=10.0066666667|60=20231114-22:13:20.000|10=143|"
    );
}

#[test]
fn execution_report_fix42_bytes() {
    assert_eq!(
        encode(&partial_fill(), FixVersion::Fix42),
        "8=FIX.4.2|9=213|35=8|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|37=1001|\
11=ORD1|17=5001.2|20=0|150=1|39=1|1=9|55=ACME|54=1|40=2|44=10.01|59=0|38=500|31=10.01|\
32=200|151=200|14=300|6=10.0066666667|60=20231114-22:13:20.000|10=068|"
    );
}

#[test]
fn execution_report_version_differences() {
    let mut er = partial_fill();
    er.ord_status = OrdStatus::Filled;
    assert!(encode(&er, FixVersion::Fix42).contains("|20=0|150=2|39=2|"));
    let v50 = encode(&er, FixVersion::Fix50Sp2);
    assert!(v50.starts_with("8=FIXT.1.1|"));
    assert!(v50.contains("|150=F|39=2|") && !v50.contains("|20="));
    // An answer to an OrderStatusRequest.
    er.exec_type = ExecType::OrderStatus;
    er.last = None;
    let v44 = encode(&er, FixVersion::Fix44);
    assert!(v44.contains("|150=I|39=2|"), "{v44}");
    assert!(!v44.contains("|31=") && !v44.contains("|32="));
    assert!(encode(&er, FixVersion::Fix42).contains("|20=3|150=2|39=2|"));
    // A replace, with OrigClOrdID after ClOrdID, and a Text.
    er.exec_type = ExecType::Replaced;
    er.ord_status = OrdStatus::New;
    er.orig_cl_ord_id = Some(b"ORD0");
    er.text = Some(b"replaced");
    let r = encode(&er, FixVersion::Fix44);
    assert!(r.contains("|11=ORD1|41=ORD0|17=5001.2|150=5|39=0|"), "{r}");
    assert!(r.contains("|6=10.0066666667|58=replaced|60="), "{r}");
    // A market order carries no Price.
    er.ord_type = OrdType::Market;
    let mkt = encode(&er, FixVersion::Fix44);
    assert!(
        mkt.contains("|40=1|59=0|") && !mkt.contains("|44="),
        "{mkt}"
    );
}

/// AvgPx is the notional over CumQty in price units: exact when the fills were at one price,
/// else with up to 8 more digits than the price's, rounded half away from zero; 0 before any
/// fill.
#[test]
fn avg_px_is_notional_over_cum_qty() {
    let avg = |notional: i128, cum_qty: u64, decimals: u32| {
        let er = ExecutionReport {
            notional,
            cum_qty,
            price_decimals: decimals,
            ..partial_fill()
        };
        let text = encode(&er, FixVersion::Fix44);
        let at = text.find("|6=").unwrap() + 3;
        text[at..at + text[at..].find('|').unwrap()].to_string()
    };
    assert_eq!(avg(0, 0, 2), "0");
    assert_eq!(avg(1001 * 300, 300, 2), "10.01");
    assert_eq!(avg(1000 * 300, 300, 2), "10");
    assert_eq!(avg(1000 * 100 + 1001 * 200, 300, 2), "10.0066666667");
    assert_eq!(avg(1000 + 1001, 2, 2), "10.005");
    assert_eq!(avg(100, 3, 2), "0.3333333333");
    assert_eq!(avg(2, 3, 2), "0.0066666667");
    assert_eq!(avg(12_345 * 7, 7, 4), "1.2345");
    assert_eq!(avg(5 * 3, 3, 0), "5");
}

#[test]
fn exec_type_codes_per_version() {
    use ExecType as E;
    use OrdStatus as S;
    for (t, status, v42, v44) in [
        (E::New, S::New, b'0', b'0'),
        (E::Trade, S::PartiallyFilled, b'1', b'F'),
        (E::Trade, S::Filled, b'2', b'F'),
        (E::Canceled, S::Canceled, b'4', b'4'),
        (E::Replaced, S::New, b'5', b'5'),
        (E::Rejected, S::Rejected, b'8', b'8'),
        (E::Expired, S::Expired, b'C', b'C'),
        (E::OrderStatus, S::PartiallyFilled, b'1', b'I'),
        (E::OrderStatus, S::Canceled, b'4', b'I'),
    ] {
        assert_eq!(t.code(FixVersion::Fix42, status), v42, "{t:?} {status:?}");
        assert_eq!(t.code(FixVersion::Fix44, status), v44, "{t:?} {status:?}");
        assert_eq!(
            t.code(FixVersion::Fix50Sp2, status),
            v44,
            "{t:?} {status:?}"
        );
    }
}

fn orderless(status: bool) -> OrderlessReport<'static> {
    OrderlessReport {
        cl_ord_id: b"ORD9",
        exec_id: (if status { 78 } else { 77 }, 0),
        status,
        echo: b"55=ACME\x0154=1\x0138=100\x0140=2\x0144=10.005\x01",
        ord_rej_reason: (!status).then_some(ord_rej_reason::INVALID_PRICE_INCREMENT),
        text: if status {
            b"unknown order"
        } else {
            b"price is off the tick"
        },
        transact_time_ns: (!status).then_some(T0),
    }
}

/// OrdRejReason 18 (invalid price increment) exists in FIX 5.0SP2 only: FIX 4.4 says Other
/// (99), FIX 4.2 (which has no 99) Broker option (0), and the Text says why.
#[test]
fn orderless_reject_bytes() {
    assert_eq!(
        encode(&orderless(false), FixVersion::Fix44),
        "8=FIX.4.4|9=198|35=8|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|37=NONE|\
11=ORD9|17=77.0|150=8|39=8|55=ACME|54=1|38=100|40=2|44=10.005|151=0|14=0|6=0|103=99|\
58=price is off the tick|60=20231114-22:13:20.000|10=225|"
    );
    assert_eq!(
        encode(&orderless(false), FixVersion::Fix42),
        "8=FIX.4.2|9=202|35=8|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|37=NONE|\
11=ORD9|17=77.0|20=0|150=8|39=8|55=ACME|54=1|38=100|40=2|44=10.005|151=0|14=0|6=0|103=0|\
58=price is off the tick|60=20231114-22:13:20.000|10=095|"
    );
}

#[test]
fn orderless_status_bytes() {
    assert_eq!(
        encode(&orderless(true), FixVersion::Fix44),
        "8=FIX.4.4|9=158|35=8|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|37=NONE|\
11=ORD9|17=78.0|150=I|39=8|55=ACME|54=1|38=100|40=2|44=10.005|151=0|14=0|6=0|\
58=unknown order|10=166|"
    );
    assert_eq!(
        encode(&orderless(true), FixVersion::Fix42),
        "8=FIX.4.2|9=163|35=8|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|37=NONE|\
11=ORD9|17=78.0|20=3|150=8|39=8|55=ACME|54=1|38=100|40=2|44=10.005|151=0|14=0|6=0|\
58=unknown order|10=098|"
    );
}

/// An orderless report echoes what `Echo::of` kept of the request.
#[test]
fn orderless_report_echoes_the_request() {
    with("D", "11=ORD9|55=ACME|54=1|38=100|40=2|44=10.005|", |m| {
        let echo = Echo::of(m);
        let r = OrderlessReport {
            echo: echo.as_bytes(),
            ..orderless(false)
        };
        assert_eq!(
            encode(&r, FixVersion::Fix44),
            encode(&orderless(false), FixVersion::Fix44)
        );
    });
}

#[test]
fn order_cancel_reject_bytes() {
    let r = OrderCancelReject {
        order_id: None,
        cl_ord_id: b"CXL1",
        orig_cl_ord_id: b"ORD1",
        ord_status: None,
        response_to: CxlRejResponseTo::CancelRequest,
        reason: cxl_rej_reason::UNKNOWN_ORDER,
        text: b"unknown order",
    };
    assert_eq!(
        encode(&r, FixVersion::Fix44),
        "8=FIX.4.4|9=114|35=9|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|37=NONE|\
11=CXL1|41=ORD1|39=8|434=1|102=1|58=unknown order|10=228|"
    );
    let r = OrderCancelReject {
        order_id: Some(77),
        ord_status: Some(OrdStatus::Filled),
        response_to: CxlRejResponseTo::CancelReplaceRequest,
        reason: cxl_rej_reason::TOO_LATE_TO_CANCEL,
        text: b"too late",
        ..r
    };
    assert!(encode(&r, FixVersion::Fix42)
        .contains("|37=77|11=CXL1|41=ORD1|39=2|434=2|102=0|58=too late|"));
}

fn mass_cancel_report() -> OrderMassCancelReport<'static> {
    OrderMassCancelReport {
        cl_ord_id: b"MC1",
        report_id: 42,
        request_type: 1,
        rejected: None,
        total_affected_orders: 3,
        symbol: Some(b"ACME"),
        side: None,
    }
}

/// FIX 5.0SP2 adds MassActionReportID (1369) after TotalAffectedOrders; 4.4 has none.
#[test]
fn mass_cancel_report_bytes() {
    assert_eq!(
        encode(&mass_cancel_report(), FixVersion::Fix50Sp2),
        "8=FIXT.1.1|9=103|35=r|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|11=MC1|37=42|\
530=1|531=1|533=3|1369=42|55=ACME|10=250|"
    );
    assert_eq!(
        encode(&mass_cancel_report(), FixVersion::Fix44),
        "8=FIX.4.4|9=95|35=r|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|11=MC1|37=42|\
530=1|531=1|533=3|55=ACME|10=015|"
    );
    let refused = OrderMassCancelReport {
        cl_ord_id: b"MC2",
        report_id: 43,
        rejected: Some(b"unknown symbol"),
        total_affected_orders: 0,
        side: Some(Side::Sell),
        ..mass_cancel_report()
    };
    assert_eq!(
        encode(&refused, FixVersion::Fix50Sp2),
        "8=FIXT.1.1|9=133|35=r|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|11=MC2|37=43|\
530=1|531=0|533=0|1369=43|55=ACME|54=2|532=99|58=unknown symbol|10=144|"
    );
}

#[test]
fn business_message_reject_bytes() {
    let j = BusinessMessageReject {
        ref_seq_num: 12,
        ref_msg_type: b"V",
        business_reject_ref_id: Some(b"ORD5"),
        reason: BusinessRejectReason::UnsupportedMessageType,
        text: b"unsupported",
    };
    assert_eq!(
        encode(&j, FixVersion::Fix44),
        "8=FIX.4.4|9=98|35=j|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|45=12|372=V|\
379=ORD5|380=3|58=unsupported|10=119|"
    );
    let j = BusinessMessageReject {
        business_reject_ref_id: None,
        ..j
    };
    assert!(encode(&j, FixVersion::Fix42).contains("|45=12|372=V|380=3|58=unsupported|10="));
}

/// The client-side builder writes what the server-side reader reads back.
#[test]
fn new_order_round_trips_through_the_reader() {
    let o = NewOrder {
        cl_ord_id: b"N1",
        symbol: b"BOLT",
        side: Side::Sell,
        order_qty: 7,
        ord_type: OrdType::Limit,
        price: Some(Decimal::new(1995, 2)),
        time_in_force: TimeInForce::Ioc,
        post_only: true,
        transact_time_ns: 1_700_000_000_000_000_000,
    };
    let text = encode(&o, FixVersion::Fix44);
    assert!(
        text.contains(
            "|11=N1|55=BOLT|54=2|38=7|40=2|44=19.95|59=3|18=6|60=20231114-22:13:20.000|10="
        ),
        "{text}"
    );
    let body = &text[text.find("|11=").unwrap() + 1..text.rfind("10=").unwrap()];
    with("D", body, |m| {
        assert_eq!(
            NewOrderSingle::read(m, &Table).unwrap(),
            NewOrderSingle {
                cl_ord_id: b"N1",
                symbol: BOLT,
                side: Side::Sell,
                ord_type: OrdType::Limit,
                time_in_force: TimeInForce::Ioc,
                price: 1995,
                order_qty: 7,
                account: None,
                post_only: true,
                ext: OrderExt::default(),
            }
        )
    });
    let market = NewOrder {
        ord_type: OrdType::Market,
        price: None,
        time_in_force: TimeInForce::Day,
        post_only: false,
        ..o
    };
    let text = encode(&market, FixVersion::Fix44);
    assert!(
        text.contains("|40=1|59=0|60=20231114-22:13:20.000|10="),
        "{text}"
    );
    let body = &text[text.find("|11=").unwrap() + 1..text.rfind("10=").unwrap()];
    with("D", body, |m| {
        let r = NewOrderSingle::read(m, &Table).unwrap();
        assert_eq!(
            (r.ord_type, r.price, r.post_only),
            (OrdType::Market, 0, false)
        );
    });
}

/// TradingSessionStatusRequest: TradSesReqID and SubscriptionRequestType required,
/// TradingSessionID optional (as sent; the caller checks it); every refusal names its tag.
#[test]
fn trading_session_status_request_read_and_refusals() {
    with("g", "335=T1|336=1|263=1|", |m| {
        assert_eq!(
            TradingSessionStatusRequest::read(m).unwrap(),
            TradingSessionStatusRequest {
                req_id: b"T1",
                trading_session_id: Some(b"1"),
                subscription: SubscriptionType::Subscribe,
            }
        );
    });
    for (body, sub) in [
        ("335=T2|263=0|", SubscriptionType::Snapshot),
        ("263=2|335=T2|", SubscriptionType::Unsubscribe),
    ] {
        with("g", body, |m| {
            let g = TradingSessionStatusRequest::read(m).unwrap();
            assert_eq!(
                (g.req_id, g.trading_session_id, g.subscription),
                (&b"T2"[..], None, sub)
            );
        });
    }
    let refusal = |body: &str| {
        with("g", body, |m| {
            TradingSessionStatusRequest::read(m).unwrap_err()
        })
    };
    let long = format!("335={}|263=0|", "x".repeat(65));
    for (body, tag, text) in [
        ("263=0|", 335, "missing tag 335"),
        (long.as_str(), 335, "tag 335 longer than 64"),
        ("335=T|", 263, "SubscriptionRequestType(263) missing"),
        (
            "335=T|263=3|",
            263,
            "unsupported SubscriptionRequestType(263): use 0, 1 or 2",
        ),
    ] {
        let r = refusal(body);
        assert_eq!((r.tag, r.text.as_str()), (tag, text), "{body}");
        assert!(!r.is_session_level());
    }
}

/// TradingSessionStatus: the answer (TradSesReqID, UnsolicitedIndicator N) and a change to a
/// subscriber (Y), the same fields in every version.
#[test]
fn trading_session_status_bytes() {
    let h = TradingSessionStatus {
        req_id: Some(b"T1"),
        status: TradSesStatus::Open,
        unsolicited: false,
    };
    assert_eq!(
        encode(&h, FixVersion::Fix44),
        "8=FIX.4.4|9=81|35=h|34=9|49=RIALTO|56=CLIENT1|52=20231114-22:13:20.000|335=T1|336=1|\
325=N|340=2|10=078|"
    );
    let h = TradingSessionStatus {
        status: TradSesStatus::Closed,
        unsolicited: true,
        ..h
    };
    for v in [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2] {
        let text = encode(&h, v);
        assert!(text.contains("|35=h|"), "{text}");
        assert!(text.contains("|335=T1|336=1|325=Y|340=3|10="), "{text}");
    }
}
