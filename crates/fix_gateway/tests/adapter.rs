//! `FixAdapter`: what a framed FIX message becomes before the journal. Client order ids and
//! symbols are checked from the bytes, prices are converted exactly to the instrument's
//! units, and each bad field gets a reject of its own kind with its own reason.

use exchange::{ClOrdId, Reject};
use fix::app::Echo;
use fix::{Decoder, Encoder, FixVersion, Inbound, Malformed, SessionRejectReason, Text};
use fix_gateway::{AppMsg, ConnIds, FixAdapter, FixConfig, FixInput, InstrumentDef, InvalidKind};
use std::sync::Arc;
use types::{Side, Symbol};

/// ACME, BOLT and CRNK in cents; NICK in nickels (a tick of 5 cents); FINE with 4 decimals;
/// NANO with 9.
fn adapter() -> FixAdapter {
    let inst = |s: &str, tick: i64, price_decimals: u32| InstrumentDef {
        symbol: Symbol::new(s).expect("a symbol"),
        tick,
        lot: 1,
        price_decimals,
    };
    FixAdapter::new(Arc::new(FixConfig {
        sessions: Vec::new(),
        instruments: vec![
            inst("ACME", 1, 2),
            inst("BOLT", 1, 2),
            inst("CRNK", 1, 2),
            inst("NICK", 5, 2),
            inst("FINE", 1, 4),
            inst("NANO", 1, 9),
        ],
        resend_store_max: 100,
        heartbeat_min_s: 1,
        heartbeat_max_s: 3600,
        sending_time_window_ns: None,
    }))
}

/// A message of type `msg_type` from CLIENT1 (logged on) with `fields` after the header, as
/// `to_input` sees it.
fn convert(msg_type: &str, fields: &[(u32, &[u8])]) -> FixInput {
    let mut enc = Encoder::default();
    enc.begin(msg_type.as_bytes());
    enc.field(49, b"CLIENT1");
    enc.field(56, b"RIALTO");
    enc.field_u64(34, 2);
    enc.field(52, b"20260101-00:00:00.000");
    for (t, v) in fields {
        enc.field(*t, v);
    }
    let frame = enc.finish(FixVersion::Fix44).to_vec();
    let mut ids = Some(ConnIds {
        begin_string: Text::from("FIX.4.4"),
        sender: Text::from("CLIENT1"),
        target: Text::from("RIALTO"),
        // The readers' own checks (dictionary validation is tested in `fix` and the
        // conformance suite).
        validate: None,
    });
    adapter()
        .to_input(1, &mut ids, &mut Decoder::default(), &frame)
        .expect("not garbled")
}

/// A limit NewOrderSingle to buy 5.
fn order(cl: &[u8], symbol: &[u8], price: &[u8]) -> FixInput {
    convert(
        "D",
        &[
            (11, cl),
            (55, symbol),
            (54, b"1"),
            (38, b"5"),
            (40, b"2"),
            (44, price),
        ],
    )
}

/// What the adapter refused a message with: the kind of reject, the exchange's reason and the
/// reject's text.
fn refused(i: &FixInput) -> (InvalidKind, Reject, &str) {
    match &i.msg {
        Inbound::App(AppMsg::Invalid(inv)) => (inv.kind, inv.reject, inv.reason.as_str()),
        other => panic!("not refused: {other:?}"),
    }
}

/// The session-level Reject a message gets (its ClOrdID is unusable).
fn malformed(i: &FixInput) -> &Malformed {
    match &i.msg {
        Inbound::Malformed(m) => m,
        other => panic!("not malformed: {other:?}"),
    }
}

/// The price of a NewOrderSingle the adapter read, or the text of its reject (an
/// ExecutionReport with ExecType 8 for an invalid price).
fn price(symbol: &str, text: &str) -> Result<i64, String> {
    let i = order(b"p1", symbol.as_bytes(), text.as_bytes());
    match &i.msg {
        Inbound::App(AppMsg::New(n)) => Ok(n.price),
        _ => {
            let (kind, reject, reason) = refused(&i);
            assert_eq!((kind, reject), (InvalidKind::Order, Reject::InvalidPrice));
            Err(reason.to_string())
        }
    }
}

/// ClOrdID and Symbol are read from the bytes: a valid order converts, and each bad one gets
/// its own reason (a ClOrdID that cannot be answered per order: a session-level Reject; a
/// symbol: an order reject, echoing the order's fields).
#[test]
fn client_order_ids_and_symbols_are_checked_from_the_bytes() {
    match order("é-1".as_bytes(), b"BOLT", b"10.25").msg {
        Inbound::App(AppMsg::New(n)) => {
            assert_eq!(n.cl_ord_id.as_str(), "é-1");
            assert_eq!(n.symbol, 1, "BOLT is the second instrument");
            assert_eq!((n.side, n.qty, n.price), (Side::Buy, 5, 1025));
        }
        other => panic!("{other:?}"),
    }
    let bad_id = |cl: &[u8]| malformed(&order(cl, b"ACME", b"1")).clone();
    let m = bad_id(b"ab\xff");
    assert_eq!(
        (m.reason, m.ref_tag, m.text.as_bytes()),
        (
            SessionRejectReason::IncorrectDataFormat,
            Some(11),
            &b"tag 11 is not UTF-8"[..]
        )
    );
    let m = bad_id(&[b'x'; 65]);
    assert_eq!(
        (m.reason, m.ref_tag, m.text.as_bytes()),
        (
            SessionRejectReason::ValueIncorrect,
            Some(11),
            &b"tag 11 longer than 64"[..]
        )
    );
    // The longest accepted.
    assert!(matches!(
        order(&[b'x'; 64], b"ACME", b"1").msg,
        Inbound::App(AppMsg::New(n)) if n.cl_ord_id == ClOrdId::from("x".repeat(64).as_str())
    ));
    // Missing altogether, or present without a value (which the decoder refuses first).
    let m = malformed(&convert(
        "D",
        &[(55, b"ACME"), (54, b"1"), (38, b"5"), (40, b"1")],
    ))
    .clone();
    assert_eq!(
        (m.reason, m.ref_tag, m.text.as_bytes()),
        (
            SessionRejectReason::RequiredTagMissing,
            Some(11),
            &b"missing tag 11"[..]
        )
    );
    let m = bad_id(b"");
    assert_eq!(
        (m.reason, m.ref_tag),
        (SessionRejectReason::TagSpecifiedWithoutValue, Some(11))
    );

    let bad_symbol = |sym: &[u8]| {
        let i = order(b"a1", sym, b"1");
        let (kind, reject, reason) = refused(&i);
        assert_eq!((kind, reject), (InvalidKind::Order, Reject::UnknownSymbol));
        reason.to_string()
    };
    assert_eq!(bad_symbol(b"ZZZ"), "unknown symbol ZZZ");
    assert_eq!(bad_symbol(b"AC\xffME"), "unknown symbol AC\u{fffd}ME");
    assert_eq!(bad_symbol(b"acme"), "unknown symbol acme");
    // Symbols are looked up as packed words: a trailing NUL or a longer name is not ACME.
    assert_eq!(bad_symbol(b"ACME\0"), "unknown symbol ACME\0");
    assert_eq!(
        bad_symbol(b"ACMEACMEACMEACMEA"),
        "unknown symbol ACMEACMEACMEACMEA"
    );
    assert_eq!(bad_symbol(b"ACM"), "unknown symbol ACM");
    match order(b"a1", b"ZZZ", b"1").msg {
        Inbound::App(AppMsg::Invalid(inv)) => {
            assert_eq!(inv.cl_ord_id, ClOrdId::from("a1"));
            assert_eq!(inv.msg_type, Text::from("D"));
            assert_eq!(
                inv.echo,
                Echo::from("55=ZZZ\x0154=1\x0138=5\x0140=2\x0144=1\x01")
            );
        }
        other => panic!("{other:?}"),
    }
    // A replace's bad price is a cancel reject for a replace, naming both ClOrdIDs.
    let i = convert(
        "G",
        &[
            (11, b"c3"),
            (41, b"a"),
            (55, b"ACME"),
            (54, b"1"),
            (38, b"5"),
            (40, b"2"),
            (44, b"12.345"),
        ],
    );
    assert_eq!(
        refused(&i),
        (
            InvalidKind::CancelReject { replace: true },
            Reject::InvalidPrice,
            "Price 12.345 is not a multiple of ACME's tick 0.01"
        )
    );
    match &i.msg {
        Inbound::App(AppMsg::Invalid(inv)) => {
            assert_eq!(
                (inv.cl_ord_id, inv.orig_cl_ord_id),
                (ClOrdId::from("c3"), ClOrdId::from("a"))
            );
        }
        other => panic!("{other:?}"),
    }
}

/// Prices through the adapter, exactly, in the instrument's units (the cases of the old
/// gateway's price tests that `crates/fix/tests/decimal.rs` does not have).
#[test]
fn prices_convert_exactly_to_the_instruments_units() {
    assert_eq!(price("ACME", "12.34"), Ok(1234));
    assert_eq!(price("ACME", "12.3"), Ok(1230));
    assert_eq!(price("ACME", "12"), Ok(1200));
    assert_eq!(price("ACME", "12.340000"), Ok(1234));
    assert_eq!(price("ACME", "00000000000000000012.34"), Ok(1234));
    assert_eq!(
        price("ACME", "999999999999999.99"),
        Ok(99_999_999_999_999_999)
    );
    // Past 15 significant digits of whole part: still exact while the units fit 64 bits.
    assert_eq!(
        price("ACME", "1234567890123456"),
        Ok(123_456_789_012_345_600)
    );
    assert_eq!(
        price("ACME", "1234567890123456.5"),
        Ok(123_456_789_012_345_650)
    );
    assert_eq!(
        price("ACME", "1234567890123456x"),
        Err("Price(44) is not a decimal number, got 1234567890123456x".into())
    );
    assert_eq!(
        price("ACME", "12.345"),
        Err("Price 12.345 is not a multiple of ACME's tick 0.01".into())
    );
    assert_eq!(
        price("ACME", "0"),
        Err("Price(44) must be positive, got 0".into())
    );
    assert_eq!(
        price("ACME", "1e5"),
        Err("Price(44) is not a decimal number, got 1e5".into())
    );
    assert_eq!(
        price("ACME", "1 2"),
        Err("Price(44) is not a decimal number, got 1 2".into())
    );
    assert_eq!(
        price("ACME", "1é"),
        Err("Price(44) is not a decimal number, got 1é".into())
    );
    // The sum of the whole and fractional parts overflowing is out of range (not wrapped).
    assert_eq!(price("FINE", "922337203685477.5807"), Ok(i64::MAX));
    assert_eq!(
        price("FINE", "922337203685477.9999"),
        Err("Price(44) is out of range, got 922337203685477.9999".into())
    );
    assert_eq!(price("NICK", "0.05"), Ok(5));
    assert_eq!(
        price("NICK", "0.07"),
        Err("Price 0.07 is not a multiple of NICK's tick 0.05".into())
    );
    assert_eq!(price("NANO", "0.000000001"), Ok(1));
    assert_eq!(price("NANO", "1.5"), Ok(1_500_000_000));
    assert_eq!(
        price("NANO", "0.0000000015"),
        Err("Price 0.0000000015 is not a multiple of NANO's tick 0.000000001".into())
    );
}

/// `to_input` of `35=...|` fields (`|` for SOH) framed in FIX 4.4 from CLIENT1, logged on
/// with dictionary validation `validate`.
fn convert_raw(body: &str, validate: Option<FixVersion>) -> Option<FixInput> {
    let mut frame = Vec::new();
    fix::wrap_body(
        FixVersion::Fix44,
        body.replace('|', "\x01").as_bytes(),
        &mut frame,
    );
    let mut ids = Some(ConnIds {
        begin_string: Text::from("FIX.4.4"),
        sender: Text::from("CLIENT1"),
        target: Text::from("RIALTO"),
        validate,
    });
    adapter().to_input(1, &mut ids, &mut Decoder::default(), &frame)
}

const RAW_HEADER: &str = "49=CLIENT1|56=RIALTO|34=2|52=20260101-00:00:00.000|";

/// A well-framed message with a field that does not split becomes a session Reject of its
/// MsgSeqNum (373=0 with RefMsgType and a Text quoting the field; RefTagID when the tag has
/// a number), never a dropped message.
#[test]
fn malformed_fields_are_rejected_under_their_msg_seq_num() {
    let r = SessionRejectReason::InvalidTagNumber;
    for (field, ref_tag, text) in [
        ("abc", None, "field 'abc' has no '='"),
        ("=5", None, "field '=5' has an empty tag"),
        ("x1=5", None, "field 'x1=5' has a tag that is not a number"),
        ("0=5", Some(0), "field '0=5' has tag 0"),
        ("-1=5", Some(-1), "field '-1=5' has a negative tag"),
        (
            "055=ACME",
            Some(55),
            "field '055=ACME' has a tag with a leading zero",
        ),
        (
            "12345678901=x",
            None,
            "field '12345678901=x' has a tag of more than 9 digits",
        ),
    ] {
        let i = convert_raw(&format!("35=D|{RAW_HEADER}11=a|{field}|"), None)
            .unwrap_or_else(|| panic!("{field}: dropped"));
        assert_eq!(i.header.msg_seq_num, 2, "{field}");
        let m = malformed(&i);
        assert_eq!(
            (m.reason, m.ref_tag, m.msg_type, m.text.to_str_lossy()),
            (r, ref_tag, Text::from("D"), text.into()),
            "{field}"
        );
    }
    // A long field is quoted in part.
    let long = format!("{}|", "z".repeat(100));
    let i = convert_raw(&format!("35=1|{RAW_HEADER}{long}"), None).expect("not dropped");
    assert_eq!(
        malformed(&i).text.to_str_lossy(),
        format!("field '{}...' has no '='", "z".repeat(20))
    );
    // The longest text fits a Text whole; bytes that are not printable are shown as '?'.
    let i = convert_raw(
        &format!("35=1|{RAW_HEADER}\x7fz{}=1|", "y".repeat(30)),
        None,
    )
    .expect("not dropped");
    assert_eq!(
        malformed(&i).text.to_str_lossy(),
        format!(
            "field '?z{}...' has a tag that is not a number",
            "y".repeat(18)
        )
    );
    // An empty value: 373=4 naming the tag.
    let i = convert_raw(&format!("35=1|{RAW_HEADER}112=|"), None).expect("not dropped");
    let m = malformed(&i);
    assert_eq!(
        (m.reason, m.ref_tag, m.text.to_str_lossy()),
        (
            SessionRejectReason::TagSpecifiedWithoutValue,
            Some(112),
            "tag 112 has an empty value".into()
        )
    );
}

/// Without a readable MsgSeqNum the input still reaches the session (MsgSeqNum 0: it logs
/// out); a field that contradicts the frame (a data field's length) is garbled: `None`.
#[test]
fn malformed_without_msg_seq_num_is_not_dropped() {
    for header in [
        "49=CLIENT1|56=RIALTO|52=20260101-00:00:00.000|",
        "49=CLIENT1|56=RIALTO|34=x|52=20260101-00:00:00.000|",
    ] {
        let i = convert_raw(&format!("35=1|{header}112=t|abc|"), None).expect("not dropped");
        assert_eq!(i.header.msg_seq_num, 0);
        assert_eq!(malformed(&i).reason, SessionRejectReason::InvalidTagNumber);
    }
    // RawDataLength 5 but 3 bytes of RawData before the trailer.
    assert!(convert_raw(&format!("35=1|{RAW_HEADER}112=t|95=5|96=abc|"), None).is_none());
}

/// A tag repeated outside a repeating group is 373=13, with or without dictionary
/// validation (never "first value wins"); repeats inside a group still convert.
#[test]
fn repeated_tags_are_rejected_outside_groups() {
    let nos = "11=r1|55=ACME|54=1|38=5|40=2|44=1|60=20260101-00:00:00.000|";
    for validate in [None, Some(FixVersion::Fix44)] {
        for (body, tag) in [
            (format!("35=D|{RAW_HEADER}{nos}55=BOLT|"), 55),
            (format!("35=D|{RAW_HEADER}34=3|{nos}"), 34),
            (format!("35=1|{RAW_HEADER}49=X|112=t|"), 49),
            (format!("35=1|{RAW_HEADER}112=t|112=u|"), 112),
        ] {
            let i = convert_raw(&body, validate).expect("not dropped");
            assert_eq!(i.header.msg_seq_num, 2);
            let m = malformed(&i);
            assert_eq!(
                (m.reason, m.ref_tag, m.msg_type.as_bytes()),
                (
                    SessionRejectReason::TagAppearsMoreThanOnce,
                    Some(tag),
                    &body.as_bytes()[3..4]
                ),
                "{validate:?} {body}"
            );
            assert!(
                m.text.to_str_lossy().ends_with("appears more than once"),
                "{:?}",
                m.text
            );
        }
        let grouped = format!("35=D|{RAW_HEADER}{nos}78=2|79=A1|80=1|79=A2|80=4|");
        assert!(
            matches!(
                convert_raw(&grouped, validate).expect("converts").msg,
                Inbound::App(AppMsg::New(_))
            ),
            "{validate:?}"
        );
    }
}
