use super::*;
use crate::OrderStatus;
use types::{Field, OrdType, TimeInForce};

fn cl(s: &str) -> ClOrdId {
    ClOrdId::from(s)
}

fn encoded(f: impl FnOnce(&mut Enc<'_>)) -> Vec<u8> {
    let mut b = Vec::new();
    f(&mut Enc(&mut b));
    b
}

/// A command as its only content: decoded, then nothing left.
fn decode_command(b: &[u8]) -> Result<Command, DecodeError> {
    let mut d = Dec(b);
    let c = Command::decode(&mut d)?;
    d.end()?;
    Ok(c)
}

fn decode_sent(b: &[u8]) -> Result<Sent, DecodeError> {
    let mut d = Dec(b);
    let s = Sent::decode(&mut d)?;
    d.end()?;
    Ok(s)
}

fn sent_bytes(s: &Sent) -> Vec<u8> {
    encoded(|e| s.encode(e))
}

fn outcome_bytes(o: &Outcome) -> Vec<u8> {
    let mut b = Vec::new();
    o.encode(&mut b);
    b
}

const WHOS: [Principal; 3] = [
    Principal {
        originator: 0,
        firm: 0,
    },
    Principal {
        originator: 1025,
        firm: 7,
    },
    Principal {
        originator: u16::MAX,
        firm: u16::MAX,
    },
];

fn commands() -> Vec<Command> {
    let long = "x".repeat(64);
    let mut v = Vec::new();
    for (k, who) in WHOS.into_iter().enumerate() {
        v.push(Command::New {
            who,
            order: NewOrder {
                cl_ord_id: cl(["A1", "", long.as_str()][k]),
                symbol: [0, 2, u32::MAX][k],
                side: [Side::Buy, Side::Sell, Side::Buy][k],
                ord_type: [OrdType::Limit, OrdType::Market, OrdType::Limit][k],
                tif: [TimeInForce::Day, TimeInForce::Ioc, TimeInForce::Fok][k],
                price: [100, i64::MIN, i64::MAX][k],
                qty: [1, 0, u64::MAX][k],
                account: [None, Some(0), Some(u32::MAX)][k],
                post_only: k == 2,
                stop_price: [0, 95, i64::MAX][k],
                display_qty: [0, 3, u64::MAX][k],
                expire_ns: [0, 1, u64::MAX][k],
            },
        });
        v.push(Command::Cancel {
            who,
            cl_ord_id: cl("C1"),
            orig_cl_ord_id: cl(["A1", "é", long.as_str()][k]),
        });
        v.push(Command::Replace {
            who,
            replace: Replace {
                cl_ord_id: cl("R1"),
                orig_cl_ord_id: cl("A1"),
                symbol: [1, 0, u32::MAX][k],
                price: [101, -1, i64::MAX][k],
                qty: [7, 0, u64::MAX][k],
                stop_price: [0, 95, i64::MAX][k],
            },
        });
        for own in [false, true] {
            v.push(Command::MassCancel {
                who,
                cl_ord_id: cl("M1"),
                symbol: [None, Some(0), Some(u32::MAX)][k],
                side: [None, Some(Side::Buy), Some(Side::Sell)][k],
                own,
            });
        }
        v.push(Command::Status {
            who,
            cl_ord_id: cl(["A1", "", long.as_str()][k]),
        });
        v.push(Command::Disconnected { who });
    }
    v.push(Command::Tick);
    v.push(Command::Continue);
    v
}

/// Every command round-trips through its bytes, and through the `Input` it stands for.
#[test]
fn every_command_round_trips() {
    let tags: std::collections::BTreeSet<u8> = commands()
        .iter()
        .map(|c| encoded(|e| c.encode(e))[0])
        .collect();
    assert_eq!(tags, (1..=9).collect(), "every variant is covered");
    for c in commands() {
        let b = encoded(|e| c.encode(e));
        assert_eq!(decode_command(&b), Ok(c), "{c:?}");
        assert_eq!(c.with(Command::of), Some(c), "{c:?} through its input");
    }
}

/// A command cut anywhere, with a byte more, or with a bad tag or field is refused.
#[test]
fn bad_command_bytes_are_errors() {
    for c in commands() {
        let mut b = encoded(|e| c.encode(e));
        for cut in 0..b.len() {
            assert!(decode_command(&b[..cut]).is_err(), "{c:?} cut at {cut}");
        }
        b.push(0);
        assert_eq!(
            decode_command(&b),
            Err(DecodeError("trailing bytes")),
            "{c:?}"
        );
    }
    for tag in [0, 10, 255] {
        assert_eq!(decode_command(&[tag]), Err(DecodeError("bad command tag")));
    }
    let who = |o: u32, f: u32| {
        encoded(|e| {
            e.u8(6);
            e.u32(o);
            e.u32(f);
        })
    };
    assert!(decode_command(&who(65_535, 65_535)).is_ok());
    assert_eq!(
        decode_command(&who(65_536, 0)),
        Err(DecodeError("bad originator"))
    );
    assert_eq!(
        decode_command(&who(0, 65_536)),
        Err(DecodeError("bad firm"))
    );
    // A mass cancel's side 3 and bool 2.
    let mass = Command::MassCancel {
        who: WHOS[1],
        cl_ord_id: cl("M1"),
        symbol: None,
        side: None,
        own: false,
    };
    let b = encoded(|e| mass.encode(e));
    let (side_at, own_at) = (b.len() - 2, b.len() - 1);
    for (at, v, what) in [(side_at, 3, "bad side"), (own_at, 2, "bad bool")] {
        let mut x = b.clone();
        x[at] = v;
        assert_eq!(decode_command(&x), Err(DecodeError(what)));
    }
}

/// A cause's gateway and index are u16s on the wire as u32s: a larger one is refused.
#[test]
fn causes_round_trip_and_out_of_range_is_an_error() {
    for c in [
        Cause::default(),
        Cause {
            gateway: u16::MAX,
            record: u64::MAX,
            index: u16::MAX,
        },
    ] {
        let b = encoded(|e| c.encode(e));
        let mut d = Dec(&b);
        assert_eq!(Cause::decode(&mut d), Ok(c));
        assert!(d.end().is_ok());
    }
    let raw = |g: u32, i: u32| {
        encoded(|e| {
            e.u32(g);
            e.u64(1);
            e.u32(i);
        })
    };
    assert_eq!(
        Cause::decode(&mut Dec(&raw(65_536, 0))),
        Err(DecodeError("bad gateway"))
    );
    assert_eq!(
        Cause::decode(&mut Dec(&raw(0, 65_536))),
        Err(DecodeError("bad command index"))
    );
}

fn record(k: usize) -> OrderRecord {
    OrderRecord {
        owner: [0, 1025, u16::MAX][k % 3],
        account: [1, 0, u32::MAX][k % 3],
        symbol: [0, 1, u32::MAX][k % 3],
        side: [Side::Buy, Side::Sell][k % 2],
        ord_type: [OrdType::Limit, OrdType::Market][k / 2 % 2],
        tif: [
            TimeInForce::Day,
            TimeInForce::Gtc,
            TimeInForce::Ioc,
            TimeInForce::Fok,
        ][k % 4],
        price: [100, i64::MIN, i64::MAX, 0][k % 4],
        cl_ord_id: cl(["A1", "", &"é".repeat(32)][k % 3]),
        order_qty: [10, u64::MAX][k % 2],
        cum_qty: [0, 3, u64::MAX][k % 3],
        leaves_qty: [10, 7, 0][k % 3],
        notional: [0, i128::MIN, i128::MAX, -5][k % 4],
        state: [
            OrderState::Live,
            OrderState::Filled,
            OrderState::Canceled,
            OrderState::Expired,
        ][k % 4],
    }
}

const REASONS: [CancelReason; 9] = [
    CancelReason::User,
    CancelReason::Ioc,
    CancelReason::Fok,
    CancelReason::Stp,
    CancelReason::NoLiquidity,
    CancelReason::Expired,
    CancelReason::Disconnect,
    CancelReason::Collar,
    CancelReason::Operator,
];

fn rejects() -> Vec<Reject> {
    vec![
        Reject::UnknownSymbol,
        Reject::DuplicateClOrdId,
        Reject::UnknownOrder,
        Reject::InvalidField(Field::Stp),
        Reject::MarketClosed { opens_at_s: 86_399 },
        Reject::FirmOpenOrderLimit { limit: u64::MAX },
        Reject::AccountOpenOrderLimit {
            account: 3,
            limit: 9,
        },
        Reject::StopPriceChange,
        Reject::InvalidField(Field::ExpireTime),
    ]
}

fn sents() -> Vec<Sent> {
    let mut kinds = vec![
        ReportKind::New,
        ReportKind::Fill {
            price: i64::MIN,
            qty: u64::MAX,
        },
        ReportKind::Replaced,
        ReportKind::Status,
        ReportKind::Triggered,
    ];
    kinds.extend(REASONS.map(ReportKind::Canceled));
    let mut v = Vec::new();
    for (k, kind) in kinds.into_iter().enumerate() {
        v.push(Sent::Owned(OwnedOutput::Report {
            id: [1, 0, u64::MAX][k % 3],
            order: record(k),
            n: [0, 1, u32::MAX][k % 3],
            kind,
            cl_ord_id: cl(["A1", "C2", ""][k % 3]),
            orig_cl_ord_id: [None, Some(cl("A1")), Some(cl(""))][k % 3],
            ext: crate::OrderExt {
                stop_price: [0, 95, i64::MAX][k % 3],
                display_qty: [0, 3, u64::MAX][k % 3],
                expire_ns: [0, 1, u64::MAX][k % 3],
                triggered: k % 2 == 1,
            },
        }));
    }
    for (k, reason) in rejects().into_iter().enumerate() {
        v.push(Sent::Owned(OwnedOutput::NewRejected {
            to: [0, 1025, u16::MAX][k % 3],
            order: NewOrder {
                cl_ord_id: cl("N1"),
                qty: k as u64,
                account: Some(k as u32),
                ..NewOrder::BLANK
            },
            reason,
            n: k as u32,
        }));
    }
    let statuses = [
        OrderStatus::New,
        OrderStatus::PartiallyFilled,
        OrderStatus::Filled,
        OrderStatus::Canceled,
        OrderStatus::Expired,
    ];
    let orders = std::iter::once(None).chain(statuses.map(|s| Some((u64::MAX, s))));
    for (k, order) in orders.enumerate() {
        v.push(Sent::Owned(OwnedOutput::CancelRejected {
            to: [0, 1025, u16::MAX][k % 3],
            cl_ord_id: cl("X1"),
            orig_cl_ord_id: cl(["A1", ""][k % 2]),
            replace: k % 2 == 1,
            reason: rejects()[k % rejects().len()],
            order,
        }));
    }
    for (k, (symbol, side)) in [
        (None, None),
        (Some(0), Some(Side::Buy)),
        (Some(u32::MAX), Some(Side::Sell)),
    ]
    .into_iter()
    .enumerate()
    {
        v.push(Sent::Owned(OwnedOutput::MassCanceled {
            to: [0, 1025, u16::MAX][k],
            cl_ord_id: cl("M1"),
            symbol,
            side,
            request_seq: [0, 5, u64::MAX][k],
            count: [0, 2, u64::MAX][k],
        }));
    }
    v.push(Sent::Owned(OwnedOutput::StatusUnknown {
        to: u16::MAX,
        cl_ord_id: cl("S1"),
        n: u32::MAX,
    }));
    v.push(Sent::TradingStatus(TradingStatus::Open));
    v.push(Sent::TradingStatus(TradingStatus::Closed));
    for taker_side in [Side::Buy, Side::Sell] {
        v.push(Sent::Market(Event::Trade {
            trade_id: u64::MAX,
            symbol: 2,
            price: i64::MIN,
            qty: 5,
            maker_id: 7,
            taker_id: 9,
            maker_account: 1,
            taker_account: u32::MAX,
            taker_side,
            maker_leaves: 0,
            taker_leaves: u64::MAX,
        }));
        v.push(Sent::Market(Event::Level {
            symbol: u32::MAX,
            side: taker_side,
            price: 100,
            qty: 0,
            orders: u32::MAX,
        }));
    }
    v
}

/// Every output round-trips (its bytes and its value), and every variant is covered.
#[test]
fn every_sent_round_trips() {
    let tags: std::collections::BTreeSet<u8> = sents().iter().map(|s| sent_bytes(s)[0]).collect();
    assert_eq!(tags, (1..=8).collect(), "every variant is covered");
    for s in sents() {
        let b = sent_bytes(&s);
        let back = decode_sent(&b).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        assert_eq!(format!("{back:?}"), format!("{s:?}"));
        assert_eq!(sent_bytes(&back), b, "{s:?}");
    }
}

/// An output cut anywhere, with a byte more, or with a bad tag or code is refused.
#[test]
fn bad_sent_bytes_are_errors() {
    for s in sents() {
        let mut b = sent_bytes(&s);
        for cut in 0..b.len() {
            assert!(decode_sent(&b[..cut]).is_err(), "{s:?} cut at {cut}");
        }
        b.push(0);
        assert_eq!(decode_sent(&b).err(), Some(DecodeError("trailing bytes")));
    }
    for tag in [0, 10, 255] {
        assert_eq!(
            decode_sent(&[tag, 1]).err(),
            Some(DecodeError("bad output tag"))
        );
    }
    // Only trades and levels are market data: any other event has no encoding.
    let other = Sent::Market(Event::MassCanceled {
        account: 1,
        count: 2,
    });
    assert_eq!(
        decode_sent(&sent_bytes(&other)).err(),
        Some(DecodeError("bad output tag"))
    );
    assert_eq!(
        decode_sent(&[6, 3]).err(),
        Some(DecodeError("bad trading status"))
    );
    // A report: its fixed fields are at known places after the tag and the id.
    let report = Sent::Owned(OwnedOutput::Report {
        id: 1,
        order: record(0),
        n: 0,
        kind: ReportKind::Canceled(CancelReason::User),
        cl_ord_id: cl("A1"),
        orig_cl_ord_id: None,
        ext: Default::default(),
    });
    let b = sent_bytes(&report);
    // tag 1, id 8, owner 4, account 4, symbol 4, side 1, ord type 1, tif 1, price 8,
    // ClOrdID 2 + 2, qtys 24, notional 2 + 16, state 1, n 4, kind 1, reason 1, ClOrdID 2 + 2,
    // has orig 1.
    let owner = 9;
    let side = 21;
    let notional_len = 24 + 8 + 4 + 24;
    let state = notional_len + 2 + 16;
    let kind = state + 1 + 4;
    let reason = kind + 1;
    let has_orig = b.len() - 1;
    let put = |at: usize, v: &[u8]| {
        let mut x = b.clone();
        x[at..at + v.len()].copy_from_slice(v);
        decode_sent(&x).err()
    };
    assert_eq!(put(owner, &[0, 0, 1, 0]), Some(DecodeError("bad owner")));
    assert_eq!(put(side, &[0]), Some(DecodeError("bad side")));
    assert_eq!(put(side + 1, &[3]), Some(DecodeError("bad ord type")));
    assert_eq!(put(side + 2, &[2]), Some(DecodeError("bad tif")));
    assert_eq!(put(state, &[4]), Some(DecodeError("bad order state")));
    assert_eq!(put(kind, &[7]), Some(DecodeError("bad report kind")));
    assert_eq!(put(reason, &[0]), Some(DecodeError("bad cancel reason")));
    assert_eq!(put(reason, &[10]), Some(DecodeError("bad cancel reason")));
    assert_eq!(put(has_orig, &[2]), Some(DecodeError("bad bool")));
    // A notional of another length than 16 bytes (the record made longer to match).
    let mut x = b[..notional_len].to_vec();
    x.extend_from_slice(&15u16.to_le_bytes());
    x.extend_from_slice(&b[notional_len + 2..notional_len + 17]);
    x.extend_from_slice(&b[notional_len + 18..]);
    assert_eq!(decode_sent(&x).err(), Some(DecodeError("bad notional")));
    // A cancel reject's order status.
    let rejected = Sent::Owned(OwnedOutput::CancelRejected {
        to: 1,
        cl_ord_id: cl("X1"),
        orig_cl_ord_id: cl("A1"),
        replace: false,
        reason: Reject::UnknownOrder,
        order: Some((3, OrderStatus::New)),
    });
    let mut x = sent_bytes(&rejected);
    let at = x.len() - 1;
    for bad in [0, 6] {
        x[at] = bad;
        assert_eq!(decode_sent(&x).err(), Some(DecodeError("bad order status")));
    }
    // `to` beyond a u16.
    let unknown = Sent::Owned(OwnedOutput::StatusUnknown {
        to: 1,
        cl_ord_id: cl("S1"),
        n: 0,
    });
    let mut x = sent_bytes(&unknown);
    x[1..5].copy_from_slice(&65_536u32.to_le_bytes());
    assert_eq!(decode_sent(&x).err(), Some(DecodeError("bad to")));
}

fn outcome(outputs: Vec<Sent>) -> Outcome {
    Outcome {
        epoch: 3,
        offset: 1 << 40,
        ts_ns: 1_800_000_000_000_000_000,
        part: 0,
        last: true,
        cause: Cause {
            gateway: 2,
            record: 99,
            index: 4,
        },
        outputs,
    }
}

/// An outcome with no output, one, and every kind round-trips; cut anywhere or with a byte
/// more it is refused.
#[test]
fn outcomes_round_trip_and_bad_bytes_are_errors() {
    let all = sents();
    for outputs in [Vec::new(), all[..1].to_vec(), all] {
        let o = outcome(outputs);
        let mut b = outcome_bytes(&o);
        let back = Outcome::decode(&b).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        assert_eq!(format!("{back:?}"), format!("{o:?}"));
        assert_eq!(outcome_bytes(&back), b);
        for cut in 0..b.len() {
            assert!(Outcome::decode(&b[..cut]).is_err(), "cut at {cut}");
        }
        b.push(0);
        assert_eq!(
            Outcome::decode(&b).err(),
            Some(DecodeError("trailing bytes"))
        );
    }
}

/// An output count beyond what the record could hold is refused before anything is
/// allocated for it; a count that disagrees with the outputs is refused too.
#[test]
fn outcome_output_counts_must_fit_the_record() {
    let o = outcome(vec![
        Sent::TradingStatus(TradingStatus::Closed),
        Sent::TradingStatus(TradingStatus::Open),
    ]);
    let b = outcome_bytes(&o);
    // epoch 4, offset 8, ts 8, part 4, last 1, cause 4 + 8 + 4.
    let count_at = 41;
    assert_eq!(b[count_at..count_at + 4], 2u32.to_le_bytes());
    let with_count = |n: u32| {
        let mut x = b.clone();
        x[count_at..count_at + 4].copy_from_slice(&n.to_le_bytes());
        Outcome::decode(&x).err()
    };
    for huge in [u32::MAX, 1 << 30, b.len() as u32 / 2 + 1] {
        assert_eq!(with_count(huge), Some(DecodeError("bad output count")));
    }
    assert_eq!(with_count(3), Some(DecodeError("short record")));
    assert_eq!(with_count(1), Some(DecodeError("trailing bytes")));
    assert_eq!(with_count(0), Some(DecodeError("trailing bytes")));
    // The header alone with the largest count.
    let mut x = b[..count_at].to_vec();
    x.extend_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        Outcome::decode(&x).err(),
        Some(DecodeError("bad output count"))
    );
}

/// The `cluster_wire` fuzz target's body on every encoding above, and on each with any one
/// byte changed (a few values) or cut.
#[test]
fn the_fuzz_body_holds_on_encodings_and_their_mutations() {
    let mut inputs: Vec<Vec<u8>> = commands()
        .iter()
        .map(|c| encoded(|e| c.encode(e)))
        .collect();
    inputs.extend(sents().iter().map(sent_bytes));
    inputs.push(outcome_bytes(&outcome(sents())));
    inputs.push(outcome_bytes(&outcome(sents()[..3].to_vec())));
    for b in inputs {
        fuzz_decode(&b);
        for at in 0..b.len() {
            fuzz_decode(&b[..at]);
            for v in [0, 1, 2, 0xff, b[at] ^ 0x80] {
                let mut x = b.clone();
                x[at] = v;
                fuzz_decode(&x);
            }
        }
    }
}

/// An outcome too large for one record splits into parts under the limit, numbered in order,
/// the last marked, whose outputs together are the outcome's; a small one is one part, its
/// plain encoding.
#[test]
fn large_outcomes_split_into_parts() {
    let small = outcome(sents());
    assert_eq!(
        small.encode_parts(PART_BYTES_MAX),
        vec![outcome_bytes(&small)]
    );
    let many: Vec<Sent> = (0..3000).flat_map(|_| sents()).collect();
    let big = outcome(many.clone());
    assert!(outcome_bytes(&big).len() > 3 * PART_BYTES_MAX);
    let parts = big.encode_parts(PART_BYTES_MAX);
    assert!(parts.len() >= 4, "{} parts", parts.len());
    let mut outputs = Vec::new();
    for (k, p) in parts.iter().enumerate() {
        assert!(p.len() <= PART_BYTES_MAX, "part {k}: {} bytes", p.len());
        let o = Outcome::decode(p).unwrap();
        assert_eq!((o.part, o.last), (k as u32, k + 1 == parts.len()));
        assert_eq!(
            Outcome::position(p),
            Some((big.epoch, big.offset, k as u32, k + 1 == parts.len()))
        );
        assert_eq!(
            (o.offset, o.cause, o.ts_ns),
            (big.offset, big.cause, big.ts_ns)
        );
        outputs.extend(o.outputs);
    }
    let bytes = |v: &[Sent]| v.iter().map(sent_bytes).collect::<Vec<_>>();
    assert_eq!(bytes(&outputs), bytes(&many));
    assert_eq!(
        big.encode_parts(PART_BYTES_MAX),
        parts,
        "the same split every time"
    );
    assert_eq!(Outcome::position(&[1, 2, 3]), None);
}
