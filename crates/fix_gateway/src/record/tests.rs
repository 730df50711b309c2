use super::*;
use fix::app::ECHO_MAX;
use types::{OrdType, TimeInForce};

fn encoded(i: &FixInput) -> Vec<u8> {
    let mut b = Vec::new();
    i.encode(&mut Enc(&mut b));
    b
}

/// A whole record: the input and nothing after it.
fn decode(b: &[u8]) -> Result<FixInput, DecodeError> {
    let mut d = Dec(b);
    let f = FixInput::decode(&mut d)?;
    d.end()?;
    Ok(f)
}

fn decode_into(slot: &mut FixInput, b: &[u8]) -> Result<(), DecodeError> {
    let mut d = Dec(b);
    slot.decode_into(&mut d)?;
    d.end()
}

fn cl(s: &str) -> ClOrdId {
    ClOrdId::new(s).expect("short enough")
}

const REASONS: [SessionRejectReason; 15] = [
    SessionRejectReason::InvalidTagNumber,
    SessionRejectReason::RequiredTagMissing,
    SessionRejectReason::TagNotDefinedForMessageType,
    SessionRejectReason::UndefinedTag,
    SessionRejectReason::TagSpecifiedWithoutValue,
    SessionRejectReason::ValueIncorrect,
    SessionRejectReason::IncorrectDataFormat,
    SessionRejectReason::CompIdProblem,
    SessionRejectReason::SendingTimeAccuracyProblem,
    SessionRejectReason::InvalidMsgType,
    SessionRejectReason::TagAppearsMoreThanOnce,
    SessionRejectReason::TagSpecifiedOutOfRequiredOrder,
    SessionRejectReason::RepeatingGroupFieldsOutOfOrder,
    SessionRejectReason::IncorrectNumInGroupCount,
    SessionRejectReason::Other,
];

/// Every message kind, and each value of every field that is coded.
fn messages() -> Vec<Inbound<AppMsg>> {
    let mut msgs = vec![
        Inbound::Logon(Box::new(Logon {
            begin_string: Text::from("FIX.4.4"),
            sender_comp_id: Text::from("C"),
            target_comp_id: Text::from("R"),
            heart_bt_int: Some(30),
            reset: true,
            username: None,
            password: None,
            credentials: Credentials::Accepted,
            has_default_appl_ver_id: true,
        })),
        Inbound::Logon(Box::new(Logon {
            credentials: Credentials::Refused,
            ..Logon::default()
        })),
        Inbound::Logon(Box::default()),
        Inbound::Heartbeat {
            test_req_id: Text::from("x"),
        },
        Inbound::TestRequest {
            test_req_id: Some(Text::from("y")),
        },
        Inbound::TestRequest { test_req_id: None },
        Inbound::ResendRequest {
            begin: Some(3),
            end: Some(0),
        },
        Inbound::ResendRequest {
            begin: None,
            end: None,
        },
        Inbound::SequenceReset {
            new_seq: Some(9),
            gap_fill: true,
        },
        Inbound::SequenceReset {
            new_seq: None,
            gap_fill: false,
        },
        Inbound::Logout {
            text: Text::from("bye"),
        },
        Inbound::Reject { ref_seq_num: 17 },
        Inbound::App(AppMsg::New(NewOrder {
            cl_ord_id: cl("a"),
            symbol: 2,
            side: Side::Sell,
            ord_type: OrdType::Market,
            tif: TimeInForce::Ioc,
            price: -5,
            qty: 7,
            account: Some(3),
            post_only: true,
            ..Default::default()
        })),
        // A stop limit GTD iceberg: StopPx, MaxFloor and ExpireTime are journaled.
        Inbound::App(AppMsg::New(NewOrder {
            cl_ord_id: cl("x"),
            symbol: 1,
            side: Side::Buy,
            ord_type: OrdType::Limit,
            tif: TimeInForce::Gtd,
            price: 1010,
            qty: 30,
            account: None,
            post_only: false,
            stop_price: 1005,
            display_qty: 10,
            expire_ns: 1_800_000_000_000_000_123,
        })),
        Inbound::App(AppMsg::Cancel {
            cl_ord_id: cl("b"),
            orig_cl_ord_id: cl("a"),
        }),
        Inbound::App(AppMsg::Replace(Replace {
            cl_ord_id: cl("c"),
            orig_cl_ord_id: cl("b"),
            symbol: 1,
            price: 100,
            qty: 5,
            stop_price: 0,
        })),
        Inbound::App(AppMsg::Replace(Replace {
            cl_ord_id: cl("s"),
            orig_cl_ord_id: cl("c"),
            symbol: 1,
            price: 100,
            qty: 5,
            stop_price: 95,
        })),
        Inbound::App(AppMsg::MassCancel {
            cl_ord_id: cl("m"),
            request_type: 1,
            symbol: Some(0),
            side: Some(Side::Buy),
        }),
        Inbound::App(AppMsg::MassCancel {
            cl_ord_id: cl("m2"),
            request_type: 7,
            symbol: None,
            side: None,
        }),
        Inbound::App(AppMsg::Status {
            cl_ord_id: cl("a"),
            echo: Echo::from("55=X\x01"),
        }),
    ];
    for subscription in 0..=2 {
        msgs.push(Inbound::App(AppMsg::TradingStatus {
            req_id: Text::from("t1"),
            subscription,
        }));
    }
    msgs.push(Inbound::App(AppMsg::Invalid(Box::new(Invalid {
        kind: InvalidKind::Business { unsupported: false },
        msg_type: Text::from("D"),
        reject: Reject::MarketClosed {
            opens_at_s: 8 * 3600,
        },
        reason: "market closed".into(),
        cl_ord_id: cl("c"),
        orig_cl_ord_id: ClOrdId::EMPTY,
        echo: Echo::EMPTY,
    }))));
    for (k, reason) in REASONS.into_iter().enumerate() {
        msgs.push(Inbound::Malformed(Box::new(Malformed {
            reason,
            ref_tag: match k % 3 {
                0 => Some(k as i64 + 30),
                1 => Some(-1),
                _ => None,
            },
            msg_type: Text::from("D"),
            text: Text::from("value is incorrect"),
        })));
    }
    for (k, kind) in [
        InvalidKind::Business { unsupported: false },
        InvalidKind::Business { unsupported: true },
        InvalidKind::Order,
        InvalidKind::CancelReject { replace: false },
        InvalidKind::CancelReject { replace: true },
    ]
    .into_iter()
    .enumerate()
    {
        msgs.push(Inbound::App(AppMsg::Invalid(Box::new(Invalid {
            kind,
            msg_type: Text::from(["j", "ZZ", "D", "F", "G"][k]),
            reject: [
                Reject::InvalidField(types::Field::Id),
                Reject::InvalidField(types::Field::Tif),
                Reject::InvalidPrice,
                Reject::UnknownOrder,
                Reject::UnknownSymbol,
            ][k],
            reason: ["off tick", "", "ünknown", "x", "y"][k].to_string(),
            cl_ord_id: cl("c"),
            orig_cl_ord_id: [cl("d"), ClOrdId::EMPTY][k % 2],
            echo: [Echo::EMPTY, Echo::from("54=1\x01")][k % 2],
        }))));
    }
    let whys = [
        BusyWhy::Overload,
        BusyWhy::Orders(5),
        BusyWhy::Cancels(6),
        BusyWhy::Messages(7),
        BusyWhy::Overload,
    ];
    for (t, why) in b"DFGqH".iter().zip(whys) {
        msgs.push(Inbound::App(AppMsg::Busy(Box::new(Busy {
            msg_type: *t,
            cl_ord_id: cl("z"),
            orig_cl_ord_id: if *t == b'F' { cl("y") } else { ClOrdId::EMPTY },
            echo: Echo::from("54=1\x01"),
            why,
        }))));
    }
    msgs
}

/// Every message with a header of its own (each header problem, PossDup or not).
fn inputs() -> Vec<FixInput> {
    let header = |k: usize| InHeader {
        msg_seq_num: k as u64 + 1,
        poss_dup: k.is_multiple_of(2),
        poss_resend: k % 4 == 1,
        route: (k % 5 == 2).then(|| {
            Box::new(Route {
                on_behalf_of: [Text::from("JCD"), Text::EMPTY, Text::from("CHI")],
                deliver_to: [Text::EMPTY, Text::from("CS"), Text::EMPTY],
            })
        }),
        sending_time_ns: 1_800_000_000_000_000_000 + k as u64,
        orig_sending_time_ns: if k.is_multiple_of(3) {
            0
        } else {
            1_700_000_000_000_000_000
        },
        problem: [
            HeaderProblem::None,
            HeaderProblem::BeginString,
            HeaderProblem::CompId { tag: 56 },
            HeaderProblem::BadTime { tag: 122 },
            HeaderProblem::Missing { tag: 56 },
        ][k % 5],
    };
    let mut inputs: Vec<FixInput> = messages()
        .into_iter()
        .enumerate()
        .map(|(k, msg)| FixInput {
            conn: k as u64 * 1_000_003,
            header: header(k),
            msg,
        })
        .collect();
    // Order-entry messages with ClOrdIDs of other lengths, so that decoding in place
    // overwrites longer and shorter ones.
    for (k, len) in [64usize, 17, 9, 8, 1, 0].into_iter().enumerate() {
        let a = ClOrdId::from("x".repeat(len).as_str());
        let b = ClOrdId::from("é".repeat(len / 2).as_str());
        let msg = if k.is_multiple_of(2) {
            AppMsg::Replace(Replace {
                cl_ord_id: a,
                orig_cl_ord_id: b,
                symbol: 1,
                price: 1,
                qty: 1,
                stop_price: 0,
            })
        } else {
            AppMsg::Cancel {
                cl_ord_id: b,
                orig_cl_ord_id: a,
            }
        };
        inputs.push(FixInput {
            conn: 2,
            header: header(k),
            msg: Inbound::App(msg),
        });
        inputs.push(FixInput {
            conn: u64::MAX,
            header: header(k + 1),
            msg: Inbound::App(AppMsg::New(NewOrder {
                cl_ord_id: a,
                ..NewOrder::BLANK
            })),
        });
    }
    inputs
}

/// Every input round-trips; one cut anywhere or with a byte more is refused.
#[test]
fn every_variant_round_trips_and_garbage_is_refused() {
    for i in inputs() {
        let b = encoded(&i);
        assert_eq!(decode(&b).as_ref(), Ok(&i));
        for cut in 0..b.len() {
            assert!(decode(&b[..cut]).is_err(), "{i:?} cut at {cut}");
        }
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(decode(&longer), Err(DecodeError("trailing bytes")), "{i:?}");
    }
    // A header and a Reject, to build broken records from.
    let good = encoded(&FixInput {
        conn: 5,
        header: InHeader::default(),
        msg: Inbound::Reject { ref_seq_num: 1 },
    });
    let head = &good[..34];
    let with = |tag: u8, rest: &[u8]| {
        let mut b = head.to_vec();
        b.push(tag);
        b.extend_from_slice(rest);
        decode(&b)
    };
    assert_eq!(decode(&[]), Err(DecodeError("short record")));
    assert_eq!(decode(head), Err(DecodeError("short record")));
    assert_eq!(with(0, &[]), Err(DecodeError("unknown message tag")));
    assert_eq!(with(19, &[]), Err(DecodeError("unknown message tag")));
    // A TradingSessionStatusRequest's SubscriptionRequestType beyond 2.
    assert_eq!(with(16, &[0, 0, 2]).map(|_| ()), Ok(()));
    assert_eq!(
        with(16, &[0, 0, 3]),
        Err(DecodeError("bad SubscriptionRequestType"))
    );
    assert_eq!(with(99, &[]), Err(DecodeError("unknown message tag")));
    let mut b = good.clone();
    b[33] = 5;
    assert_eq!(decode(&b), Err(DecodeError("bad header problem")));
    let mut b = good.clone();
    b[16] = 8;
    assert_eq!(
        decode(&b),
        Err(DecodeError("bad header flags")),
        "PossDupFlag"
    );
    // A Heartbeat's TestReqID longer than a `Text`.
    let mut t = 65u16.to_le_bytes().to_vec();
    t.extend_from_slice(&[b't'; 65]);
    assert_eq!(with(2, &t), Err(DecodeError("text longer than 64 bytes")));
    // A session reject reason without a code.
    assert_eq!(
        with(15, &[7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        Err(DecodeError("bad session reject reason"))
    );
    // An Invalid of no kind, a Busy of a message type that is never shed.
    assert_eq!(with(13, &[0]), Err(DecodeError("bad invalid kind")));
    assert_eq!(with(13, &[6]), Err(DecodeError("bad invalid kind")));
    assert_eq!(with(14, b"D\0\0\0\0\0\0").map(|_| ()), Ok(()));
    assert_eq!(
        with(14, b"X\0\0\0\0\0\0"),
        Err(DecodeError("bad shed message type"))
    );
}

/// A Logon is journaled with its verdict and without its Username and Password: neither
/// is in the bytes, and the decoded Logon has none.
#[test]
fn a_logon_is_journaled_without_its_credentials() {
    let logon = FixInput {
        conn: 3,
        header: InHeader::default(),
        msg: Inbound::Logon(Box::new(Logon {
            sender_comp_id: Text::from("C"),
            username: Some(Text::from("trader-name")),
            password: Some(Text::from("hunter2-secret")),
            credentials: Credentials::Refused,
            ..Logon::default()
        })),
    };
    let b = encoded(&logon);
    for secret in [&b"trader-name"[..], b"hunter2-secret"] {
        assert!(!b.windows(secret.len()).any(|w| w == secret));
    }
    let Inbound::Logon(l) = decode(&b).expect("decodes").msg else {
        panic!("not a Logon");
    };
    assert_eq!((l.username, l.password), (None, None));
    assert_eq!(l.credentials, Credentials::Refused);
    assert_eq!(l.sender_comp_id, Text::from("C"));
    // An unknown verdict code is refused.
    let mut bad = b.clone();
    let at = b.len() - 2;
    assert_eq!(bad[at], Credentials::Refused.code());
    bad[at] = 9;
    assert_eq!(
        decode(&bad),
        Err(DecodeError("unknown Logon credentials code"))
    );
}

/// Decoding into a slot that held any other input gives the same as a fresh decode
/// (a ClOrdID written in place has no bytes of a longer one left after it).
#[test]
fn decoding_in_place_over_any_other_input_gives_a_fresh_decode() {
    let inputs = inputs();
    let encoded: Vec<Vec<u8>> = inputs.iter().map(encoded).collect();
    for prev in &encoded {
        for (next, want) in encoded.iter().zip(&inputs) {
            let mut slot = decode(prev).expect("decodes");
            decode_into(&mut slot, next).expect("decodes in place");
            assert_eq!(&slot, want);
            if let Inbound::App(AppMsg::Cancel {
                cl_ord_id,
                orig_cl_ord_id,
            }) = &slot.msg
            {
                assert_eq!(*cl_ord_id, cl(cl_ord_id.as_str()));
                assert_eq!(*orig_cl_ord_id, cl(orig_cl_ord_id.as_str()));
            }
        }
    }
}

/// A ClOrdID longer than 64 bytes (the adapter never produces one) or not UTF-8 is
/// refused in every message that carries one, decoded fresh or in place.
#[test]
fn over_long_client_order_ids_are_refused() {
    let head = &encoded(&FixInput {
        conn: 5,
        header: InHeader::default(),
        msg: Inbound::Reject { ref_seq_num: 1 },
    })[..34];
    let id = |b: &[u8]| {
        let mut v = (b.len() as u16).to_le_bytes().to_vec();
        v.extend_from_slice(b);
        v
    };
    let long = id(&[b'x'; 65]);
    let not_utf8 = id(&[b'a', 0xC3]);
    let ok = id(b"ok");
    // Each message that carries ClOrdIDs: its tag, the bytes before them, and how many
    // it carries (ClOrdID, and OrigClOrdID after it).
    let cases: [(u8, Vec<u8>, usize); 7] = [
        (8, vec![], 1),
        (9, vec![], 2),
        (10, vec![], 2),
        (11, vec![], 1),
        (12, vec![], 1),
        (
            13,
            {
                // Kind, MsgType, reason (2 bytes), Text.
                let mut v = vec![3];
                v.extend_from_slice(&id(b"D"));
                v.extend_from_slice(&[5, 0]);
                v.extend_from_slice(&id(b"why"));
                v
            },
            2,
        ),
        (14, vec![b'D'], 2),
    ];
    let mut slots: Vec<FixInput> = inputs();
    for (tag, before, ids) in &cases {
        for (bad, why) in [
            (&long, "ClOrdID longer than 64 bytes"),
            (&not_utf8, "string is not UTF-8"),
        ] {
            for at in 0..*ids {
                let mut b = head.to_vec();
                b.push(*tag);
                b.extend_from_slice(before);
                for k in 0..*ids {
                    b.extend_from_slice(if k == at { bad } else { &ok });
                }
                // Enough for any fields after them.
                b.extend_from_slice(&[0; 64]);
                let what = format!("tag {tag}, ClOrdID {at}");
                assert_eq!(decode(&b).map(|_| ()), Err(DecodeError(why)), "{what}");
                for slot in &mut slots {
                    assert_eq!(decode_into(slot, &b), Err(DecodeError(why)), "{what}");
                }
            }
        }
    }
}

/// An OrderStatusRequest's echo (and the echo of a refused or shed message) is at most
/// `ECHO_MAX` bytes of ASCII; anything else is refused.
#[test]
fn echoed_fields_are_limited_to_what_an_echo_holds() {
    let status = |echo: &[u8]| {
        let head = &encoded(&FixInput {
            conn: 5,
            header: InHeader::default(),
            msg: Inbound::Reject { ref_seq_num: 1 },
        })[..34];
        let mut b = head.to_vec();
        b.push(12);
        b.extend_from_slice(&1u16.to_le_bytes());
        b.push(b'c');
        b.extend_from_slice(&(echo.len() as u16).to_le_bytes());
        b.extend_from_slice(echo);
        decode(&b)
    };
    let longest = [b'7'; ECHO_MAX];
    assert!(matches!(
        status(&longest),
        Ok(FixInput { msg: Inbound::App(AppMsg::Status { echo, .. }), .. })
            if echo.as_bytes() == longest
    ));
    assert_eq!(
        status(&[b'7'; ECHO_MAX + 1]),
        Err(DecodeError("echoed fields longer than 216 bytes"))
    );
    assert_eq!(
        status("55=Ä\x01".as_bytes()),
        Err(DecodeError("echoed fields are not ASCII"))
    );
    // The same limit for a shed message's echo.
    let mut busy = encoded(&FixInput {
        conn: 5,
        header: InHeader::default(),
        msg: Inbound::App(AppMsg::Busy(Box::new(Busy {
            msg_type: b'D',
            cl_ord_id: cl("z"),
            orig_cl_ord_id: ClOrdId::EMPTY,
            echo: Echo::EMPTY,
            why: BusyWhy::Overload,
        }))),
    });
    busy.truncate(busy.len() - 2);
    busy.extend_from_slice(&(ECHO_MAX as u16 + 1).to_le_bytes());
    busy.extend_from_slice(&[b'7'; ECHO_MAX + 1]);
    assert_eq!(
        decode(&busy),
        Err(DecodeError("echoed fields longer than 216 bytes"))
    );
}
