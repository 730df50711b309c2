//! Order-entry messages: parsing what clients send, and the exact bytes of what Rialto answers
//! in each FIX version.

use fix::app::{
    cxl_rej_reason, ord_rej_reason, AppMessage, BusinessMessageReject, CxlRejResponseTo, ExecType,
    ExecutionReport, MassCancelRequestType, MassCancelResponse, NewOrderSingle, OrdStatus,
    OrderCancelReject, OrderCancelReplaceRequest, OrderCancelRequest, OrderMassCancelReport,
    OrderMassCancelRequest, OrderStatusRequest,
};
use fix::{
    avg_px, BusinessRejectReason, Decimal, Decoder, Encoder, FieldErrorKind, FixVersion, Header,
    Limits, TimePrecision,
};
use types::{OrdType, Side, TimeInForce};

const T0: u64 = 1_700_000_000_000_000_000;

fn framed(msg_type: &str, body: &str) -> Vec<u8> {
    let text = format!("35={msg_type}|49=CLIENT1|56=RIALTO|34=2|52=20231114-22:13:20.000|{body}");
    let mut out = Vec::new();
    fix::wrap_body(
        FixVersion::Fix44,
        text.replace('|', "\x01").as_bytes(),
        &mut out,
    );
    out
}

fn pipes(b: &[u8]) -> String {
    String::from_utf8_lossy(b).replace('\x01', "|")
}

/// Runs `f` on the decoded message of `msg_type` with `body`.
fn with<R>(msg_type: &str, body: &str, f: impl FnOnce(&fix::Message<'_>) -> R) -> R {
    let bytes = framed(msg_type, body);
    let mut d = Decoder::new(Limits::default());
    let m = d.decode(&bytes).unwrap();
    f(&m)
}

#[test]
fn new_order_single_full() {
    let body =
        "11=ORD1|1=ACC9|55=ACME|54=2|38=250|40=2|44=101.25|59=1|18=6|60=20231114-22:13:20.000|";
    with("D", body, |m| {
        let o = NewOrderSingle::parse(m).unwrap();
        assert_eq!(o.cl_ord_id, b"ORD1");
        assert_eq!(o.account, Some(&b"ACC9"[..]));
        assert_eq!(o.symbol, b"ACME");
        assert_eq!(o.side, Side::Sell);
        assert_eq!(o.order_qty, 250);
        assert_eq!(o.ord_type, OrdType::Limit);
        assert_eq!(o.price, Some(Decimal::new(10125, 2)));
        assert_eq!(o.price.unwrap().to_ticks(Decimal::new(1, 2)), Ok(10125));
        assert_eq!(o.time_in_force, TimeInForce::Gtc);
        assert!(o.post_only);
        assert_eq!(o.transact_time, Some(&b"20231114-22:13:20.000"[..]));
    });
}

#[test]
fn new_order_single_defaults_and_variants() {
    with("D", "11=M|55=ACME|54=1|38=10.000|40=1|", |m| {
        let o = NewOrderSingle::parse(m).unwrap();
        assert_eq!(o.ord_type, OrdType::Market);
        assert_eq!(o.price, None);
        assert_eq!(
            o.time_in_force,
            TimeInForce::Day,
            "absent TimeInForce is DAY"
        );
        assert!(!o.post_only);
        assert_eq!(o.order_qty, 10);
    });
    for (tif, want) in [
        ("0", TimeInForce::Day),
        ("1", TimeInForce::Gtc),
        ("3", TimeInForce::Ioc),
        ("4", TimeInForce::Fok),
    ] {
        let body = format!("11=X|55=ACME|54=1|38=1|40=2|44=1|59={tif}|18=1 6|");
        with("D", &body, |m| {
            let o = NewOrderSingle::parse(m).unwrap();
            assert_eq!(o.time_in_force, want);
            assert!(o.post_only, "ExecInst list containing 6");
        });
    }
}

#[test]
fn new_order_single_errors_name_the_tag() {
    for (body, tag, kind) in [
        ("55=ACME|54=1|38=1|40=2|44=1|", 11, FieldErrorKind::Missing),
        ("11=X|54=1|38=1|40=2|44=1|", 55, FieldErrorKind::Missing),
        ("11=X|55=ACME|38=1|40=2|44=1|", 54, FieldErrorKind::Missing),
        ("11=X|55=ACME|54=1|40=2|44=1|", 38, FieldErrorKind::Missing),
        ("11=X|55=ACME|54=1|38=1|44=1|", 40, FieldErrorKind::Missing),
        ("11=X|55=ACME|54=1|38=1|40=2|", 44, FieldErrorKind::Missing),
        (
            "11=X|55=ACME|54=5|38=1|40=2|44=1|",
            54,
            FieldErrorKind::BadValue,
        ),
        (
            "11=X|55=ACME|54=1|38=1.5|40=2|44=1|",
            38,
            FieldErrorKind::BadValue,
        ),
        (
            "11=X|55=ACME|54=1|38=-1|40=2|44=1|",
            38,
            FieldErrorKind::BadValue,
        ),
        (
            "11=X|55=ACME|54=1|38=abc|40=2|44=1|",
            38,
            FieldErrorKind::BadFormat,
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=3|44=1|",
            40,
            FieldErrorKind::BadValue,
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=2|44=1,5|",
            44,
            FieldErrorKind::BadFormat,
        ),
        (
            "11=X|55=ACME|54=1|38=1|40=2|44=1|59=6|",
            59,
            FieldErrorKind::BadValue,
        ),
    ] {
        with("D", body, |m| {
            let e = NewOrderSingle::parse(m).unwrap_err();
            assert_eq!((e.tag, e.kind), (tag, kind), "{body}");
        });
    }
    // Off-tick prices are the gateway's call, with the exact helper.
    with("D", "11=X|55=ACME|54=1|38=1|40=2|44=10.005|", |m| {
        let o = NewOrderSingle::parse(m).unwrap();
        assert_eq!(
            o.price.unwrap().to_ticks(Decimal::new(1, 2)),
            Err(fix::DecimalError::TooManyDecimals)
        );
    });
}

#[test]
fn cancel_replace_mass_cancel_status() {
    with("F", "41=ORD1|11=CXL1|55=ACME|54=1|37=77|", |m| {
        let c = OrderCancelRequest::parse(m).unwrap();
        assert_eq!(
            (c.orig_cl_ord_id, c.cl_ord_id, c.order_id),
            (&b"ORD1"[..], &b"CXL1"[..], Some(&b"77"[..]))
        );
        assert_eq!(c.side, Side::Buy);
    });
    with("F", "11=CXL1|55=ACME|54=1|", |m| {
        assert_eq!(OrderCancelRequest::parse(m).unwrap_err().tag, 41);
    });
    with(
        "G",
        "41=ORD1|11=R1|55=ACME|54=1|38=50|40=2|44=99.5|59=0|",
        |m| {
            let r = OrderCancelReplaceRequest::parse(m).unwrap();
            assert_eq!(r.order_qty, 50);
            assert_eq!(r.price, Some(Decimal::new(995, 1)));
            assert_eq!(r.time_in_force, Some(TimeInForce::Day));
        },
    );
    with("G", "41=ORD1|11=R1|55=ACME|54=1|38=50|40=2|", |m| {
        assert_eq!(OrderCancelReplaceRequest::parse(m).unwrap_err().tag, 44);
    });
    with("q", "11=MC1|530=7|", |m| {
        let q = OrderMassCancelRequest::parse(m).unwrap();
        assert_eq!(q.request_type, MassCancelRequestType::All);
        assert_eq!((q.symbol, q.side), (None, None));
    });
    with("q", "11=MC1|530=1|55=ACME|54=2|", |m| {
        let q = OrderMassCancelRequest::parse(m).unwrap();
        assert_eq!(q.request_type, MassCancelRequestType::BySymbol);
        assert_eq!(q.symbol, Some(&b"ACME"[..]));
        assert_eq!(q.side, Some(Side::Sell));
    });
    with("q", "11=MC1|530=1|", |m| {
        let e = OrderMassCancelRequest::parse(m).unwrap_err();
        assert_eq!((e.tag, e.kind), (55, FieldErrorKind::Missing));
    });
    with("q", "11=MC1|530=3|", |m| {
        let e = OrderMassCancelRequest::parse(m).unwrap_err();
        assert_eq!((e.tag, e.kind), (530, FieldErrorKind::BadValue));
    });
    with("H", "11=ORD1|37=77|55=ACME|54=1|", |m| {
        let s = OrderStatusRequest::parse(m).unwrap();
        assert_eq!((s.cl_ord_id, s.order_id), (&b"ORD1"[..], Some(&b"77"[..])));
    });
    assert!(fix::app::is_supported(b"D") && !fix::app::is_supported(b"V"));
}

/// Encodes `msg` as RIALTO -> CLIENT1 seq 9 at T0 in `version`.
fn encode(msg: &impl AppMessage, version: FixVersion) -> String {
    let mut e = Encoder::default();
    e.begin(msg.msg_type());
    e.header(&Header {
        sender_comp_id: b"RIALTO",
        target_comp_id: b"CLIENT1",
        msg_seq_num: 9,
        sending_time_ns: T0,
        poss_dup: false,
        orig_sending_time: None,
        time_precision: TimePrecision::Millis,
    });
    msg.encode_body(version, &mut e);
    let bytes = e.finish(version).to_vec();
    // Everything we write decodes.
    Decoder::new(Limits::default()).decode(&bytes).unwrap();
    pipes(&bytes)
}

fn partial_fill() -> ExecutionReport<'static> {
    let cent = Decimal::new(1, 2);
    ExecutionReport {
        order_id: Some(1001),
        cl_ord_id: b"ORD1",
        orig_cl_ord_id: None,
        exec_id: 5001,
        exec_type: ExecType::Trade,
        ord_status: OrdStatus::PartiallyFilled,
        account: Some(b"ACC9"),
        symbol: b"ACME",
        side: Side::Buy,
        ord_type: Some(OrdType::Limit),
        time_in_force: Some(TimeInForce::Day),
        order_qty: 500,
        price: Some(Decimal::from_ticks(1001, cent).unwrap()),
        last: Some((200, Decimal::from_ticks(1001, cent).unwrap())),
        leaves_qty: 200,
        cum_qty: 300,
        // 100 @ 10.00 then 200 @ 10.01.
        avg_px: avg_px(1000 * 100 + 1001 * 200, 300, cent, 4).unwrap(),
        ord_rej_reason: None,
        text: None,
        transact_time_ns: T0,
        time_precision: TimePrecision::Millis,
    }
}

#[test]
fn execution_report_fix44_golden() {
    assert_eq!(
        encode(&partial_fill(), FixVersion::Fix44),
        "8=FIX.4.4|9=203|35=8|49=RIALTO|56=CLIENT1|34=9|52=20231114-22:13:20.000|37=1001|\
11=ORD1|17=5001|150=F|39=1|1=ACC9|55=ACME|54=1|38=500|40=2|44=10.01|59=0|32=200|\
31=10.01|151=200|14=300|6=10.0067|60=20231114-22:13:20.000|10=173|"
    );
}

#[test]
fn execution_report_version_differences() {
    let mut er = partial_fill();
    let v42 = encode(&er, FixVersion::Fix42);
    assert!(v42.contains("|20=0|150=1|39=1|"), "{v42}");
    er.ord_status = OrdStatus::Filled;
    assert!(encode(&er, FixVersion::Fix42).contains("|20=0|150=2|39=2|"));
    let v50 = encode(&er, FixVersion::Fix50Sp2);
    assert!(v50.starts_with("8=FIXT.1.1|"));
    assert!(v50.contains("|150=F|39=2|") && !v50.contains("|20="));
    er.exec_type = ExecType::OrderStatus;
    er.last = None;
    assert!(encode(&er, FixVersion::Fix44).contains("|150=I|39=2|"));
    assert!(encode(&er, FixVersion::Fix42).contains("|20=3|150=2|39=2|"));
    // A reject of an order that never existed.
    er.order_id = None;
    er.exec_type = ExecType::Rejected;
    er.ord_status = OrdStatus::Rejected;
    er.ord_rej_reason = Some(ord_rej_reason::UNKNOWN_SYMBOL);
    er.text = Some(b"unknown symbol");
    let rej = encode(&er, FixVersion::Fix44);
    assert!(rej.contains("|37=NONE|") && rej.contains("|150=8|39=8|103=1|"));
    assert!(rej.contains("|58=unknown symbol|"));
}

#[test]
fn order_cancel_reject_golden() {
    let r = OrderCancelReject {
        order_id: None,
        cl_ord_id: b"CXL1",
        orig_cl_ord_id: Some(b"ORD1"),
        ord_status: OrdStatus::Rejected,
        account: None,
        response_to: CxlRejResponseTo::CancelRequest,
        reason: Some(cxl_rej_reason::UNKNOWN_ORDER),
        text: Some(b"unknown order"),
    };
    assert_eq!(
        encode(&r, FixVersion::Fix44),
        "8=FIX.4.4|9=114|35=9|49=RIALTO|56=CLIENT1|34=9|52=20231114-22:13:20.000|37=NONE|\
11=CXL1|41=ORD1|39=8|434=1|102=1|58=unknown order|10=228|"
    );
}

#[test]
fn mass_cancel_report_and_business_reject() {
    let r = OrderMassCancelReport {
        cl_ord_id: b"MC1",
        order_id: 42,
        request_type: MassCancelRequestType::BySymbol,
        response: MassCancelResponse::Accepted(MassCancelRequestType::BySymbol),
        reject_reason: None,
        total_affected_orders: Some(3),
        symbol: Some(b"ACME"),
        side: None,
        text: None,
    };
    let s = encode(&r, FixVersion::Fix44);
    assert!(s.contains("|35=r|") && s.contains("|11=MC1|37=42|530=1|531=1|533=3|55=ACME|"));
    let j = BusinessMessageReject {
        ref_seq_num: Some(12),
        ref_msg_type: b"V",
        business_reject_ref_id: None,
        reason: BusinessRejectReason::UnsupportedMessageType,
        text: Some(b"unsupported"),
    };
    let s = encode(&j, FixVersion::Fix44);
    assert!(s.contains("|35=j|") && s.contains("|45=12|372=V|380=3|58=unsupported|"));
}

#[test]
fn client_side_builders_round_trip_through_the_parsers() {
    let o = NewOrderSingle {
        cl_ord_id: b"N1",
        account: Some(b"A"),
        symbol: b"BOLT",
        side: Side::Sell,
        order_qty: 7,
        ord_type: OrdType::Limit,
        price: Some(Decimal::new(1999, 2)),
        time_in_force: TimeInForce::Ioc,
        post_only: true,
        transact_time: Some(b"20231114-22:13:20.000"),
    };
    let text = encode(&o, FixVersion::Fix44);
    let body = &text[text.find("|11=").unwrap() + 1..text.rfind("10=").unwrap()];
    with("D", body, |m| {
        assert_eq!(NewOrderSingle::parse(m).unwrap(), o)
    });
    let c = OrderCancelRequest {
        orig_cl_ord_id: b"N1",
        cl_ord_id: b"C1",
        order_id: Some(b"5"),
        account: None,
        symbol: b"BOLT",
        side: Side::Sell,
    };
    let text = encode(&c, FixVersion::Fix44);
    let body = &text[text.find("|41=").unwrap() + 1..text.rfind("10=").unwrap()];
    with("F", body, |m| {
        assert_eq!(OrderCancelRequest::parse(m).unwrap(), c)
    });
    let r = OrderCancelReplaceRequest {
        orig_cl_ord_id: b"N1",
        cl_ord_id: b"R1",
        order_id: None,
        account: None,
        symbol: b"BOLT",
        side: Side::Sell,
        order_qty: 9,
        ord_type: OrdType::Limit,
        price: Some(Decimal::new(2, 0)),
        time_in_force: None,
        post_only: false,
    };
    let text = encode(&r, FixVersion::Fix44);
    let body = &text[text.find("|41=").unwrap() + 1..text.rfind("10=").unwrap()];
    with("G", body, |m| {
        assert_eq!(OrderCancelReplaceRequest::parse(m).unwrap(), r)
    });
}
