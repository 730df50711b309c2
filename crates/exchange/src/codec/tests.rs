use super::*;
use crate::{Checkpoint, NewOrder, Reject, Replace};

fn encoded(f: impl FnOnce(&mut Enc<'_>)) -> Vec<u8> {
    let mut b = Vec::new();
    f(&mut Enc(&mut b));
    b
}

/// ClOrdIDs of other lengths (ASCII and not), so that decoding in place overwrites longer
/// and shorter ones.
fn cl_ord_ids() -> Vec<ClOrdId> {
    let mut v = Vec::new();
    for len in [64usize, 17, 9, 8, 1, 0] {
        v.push(ClOrdId::from("x".repeat(len).as_str()));
        v.push(ClOrdId::from("é".repeat(len / 2).as_str()));
    }
    v
}

fn orders() -> Vec<NewOrder> {
    let mut v = Vec::new();
    let ids = cl_ord_ids();
    for (k, cl) in ids.iter().enumerate() {
        let k = k as u64;
        v.push(NewOrder {
            cl_ord_id: *cl,
            symbol: k as u32 * 7,
            side: [Side::Buy, Side::Sell][k as usize % 2],
            ord_type: [OrdType::Limit, OrdType::Market][k as usize / 2 % 2],
            tif: [
                TimeInForce::Day,
                TimeInForce::Gtc,
                TimeInForce::Ioc,
                TimeInForce::Fok,
            ][k as usize % 4],
            price: [1234, -5, i64::MAX, i64::MIN, 0][k as usize % 5],
            qty: [5, u64::MAX, 1][k as usize % 3],
            account: [None, Some(0), Some(3), Some(u32::MAX)][k as usize % 4],
            post_only: k % 3 == 1,
            ..Default::default()
        });
    }
    v.push(NewOrder::BLANK);
    v
}

fn replaces() -> Vec<Replace> {
    let ids = cl_ord_ids();
    ids.iter()
        .zip(ids.iter().rev())
        .enumerate()
        .map(|(k, (cl, orig))| Replace {
            cl_ord_id: *cl,
            orig_cl_ord_id: *orig,
            symbol: u32::MAX - k as u32,
            price: [100, -1, i64::MIN][k % 3],
            qty: [5, 0, u64::MAX][k % 3],
            stop_price: 0,
        })
        .collect()
}

fn decode_order(b: &[u8], into: NewOrder) -> Result<NewOrder, DecodeError> {
    let mut d = Dec(b);
    let mut n = into;
    n.decode_into(&mut d)?;
    d.end()?;
    Ok(n)
}

fn decode_replace(b: &[u8], into: Replace) -> Result<Replace, DecodeError> {
    let mut d = Dec(b);
    let mut r = into;
    r.decode_into(&mut d)?;
    d.end()?;
    Ok(r)
}

/// Every new order round-trips, decoding into a slot that held any other one gives the
/// same as a fresh decode, and a record cut anywhere or with a byte more is refused.
#[test]
fn new_orders_round_trip_also_decoded_in_place() {
    let all = orders();
    let bytes: Vec<Vec<u8>> = all.iter().map(|n| encoded(|e| n.encode(e))).collect();
    for (b, want) in bytes.iter().zip(&all) {
        assert_eq!(decode_order(b, NewOrder::BLANK).as_ref(), Ok(want));
        for prev in &all {
            assert_eq!(decode_order(b, *prev).as_ref(), Ok(want), "over {prev:?}");
        }
        for cut in 0..b.len() {
            assert!(
                decode_order(&b[..cut], NewOrder::BLANK).is_err(),
                "cut at {cut}"
            );
        }
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(
            decode_order(&longer, NewOrder::BLANK),
            Err(DecodeError("trailing bytes"))
        );
    }
}

/// The same for replaces.
#[test]
fn replaces_round_trip_also_decoded_in_place() {
    let all = replaces();
    let blank = Replace {
        cl_ord_id: ClOrdId::EMPTY,
        orig_cl_ord_id: ClOrdId::EMPTY,
        symbol: 0,
        price: 0,
        qty: 0,
        stop_price: 0,
    };
    for r in &all {
        let b = encoded(|e| r.encode(e));
        assert_eq!(decode_replace(&b, blank).as_ref(), Ok(r));
        for prev in &all {
            assert_eq!(decode_replace(&b, *prev).as_ref(), Ok(r), "over {prev:?}");
        }
        for cut in 0..b.len() {
            assert!(decode_replace(&b[..cut], blank).is_err(), "cut at {cut}");
        }
    }
}

/// Out-of-range codes, over-long and non-UTF-8 ClOrdIDs are refused, each with its reason.
#[test]
fn garbage_and_over_long_client_order_ids_are_refused() {
    let n = NewOrder {
        cl_ord_id: ClOrdId::from("a"),
        account: Some(3),
        ..NewOrder::BLANK
    };
    let good = encoded(|e| n.encode(e));
    // ClOrdID "a": 2 bytes of length, 1 byte; then symbol u32, side, ord type, tif, price
    // i64, qty u64, has account, account u32, post only.
    let at = 3;
    let with = |offset: usize, v: u8| {
        let mut b = good.clone();
        b[at + offset] = v;
        decode_order(&b, NewOrder::BLANK)
    };
    assert_eq!(with(4, 0), Err(DecodeError("bad side")));
    assert_eq!(with(4, 3), Err(DecodeError("bad side")));
    assert_eq!(with(5, 0), Err(DecodeError("bad ord type")));
    assert_eq!(with(5, 3), Err(DecodeError("bad ord type")));
    assert_eq!(with(6, 2), Err(DecodeError("bad tif")));
    assert_eq!(with(6, 6), Err(DecodeError("bad tif")));
    assert_eq!(with(23, 2), Err(DecodeError("bad bool")));
    assert_eq!(with(28, 4), Err(DecodeError("bad order flags")));
    assert_eq!(with(23, 0).map(|n| n.account), Ok(None), "no account");

    // A ClOrdID longer than 64 bytes is refused (no edge produces one), also in place.
    let cl = |b: &[u8]| {
        let mut v = (b.len() as u16).to_le_bytes().to_vec();
        v.extend_from_slice(b);
        v
    };
    let mut over = cl(&[b'x'; 65]);
    over.extend_from_slice(&good[at..]);
    assert_eq!(
        decode_order(&over, NewOrder::BLANK),
        Err(DecodeError("ClOrdID longer than 64 bytes"))
    );
    assert_eq!(
        decode_order(&over, orders()[0]),
        Err(DecodeError("ClOrdID longer than 64 bytes"))
    );
    let mut not_utf8 = cl(&[b'a', 0xC3]);
    not_utf8.extend_from_slice(&good[at..]);
    assert_eq!(
        decode_order(&not_utf8, NewOrder::BLANK),
        Err(DecodeError("string is not UTF-8"))
    );
    // A replace's OrigClOrdID likewise.
    let mut r = cl(b"b");
    r.extend_from_slice(&cl(&[b'y'; 65]));
    r.extend_from_slice(&[0; 20]);
    assert_eq!(
        decode_replace(&r, replaces()[0]),
        Err(DecodeError("ClOrdID longer than 64 bytes"))
    );
    let mut d = Dec(&[0xFF, 0xFF, b'z']);
    assert_eq!(d.cl(), Err(DecodeError("ClOrdID longer than 64 bytes")));
    assert_eq!(Dec(&[]).cl(), Err(DecodeError("short record")));
}

#[test]
fn checkpoints_round_trip() {
    for cp in [
        Checkpoint::default(),
        Checkpoint {
            next_order_id: 12_345,
            next_trade_id: u64::MAX,
        },
    ] {
        let b = encoded(|e| cp.encode(e));
        let mut d = Dec(&b);
        assert_eq!(Checkpoint::decode(&mut d), Ok(cp));
        assert_eq!(d.end(), Ok(()));
        for cut in 0..b.len() {
            assert!(
                Checkpoint::decode(&mut Dec(&b[..cut])).is_err(),
                "cut at {cut}"
            );
        }
    }
}

/// Every reject reason (every field of `InvalidField`) round-trips in two bytes; other
/// codes are refused.
#[test]
fn reject_reasons_round_trip_and_unknown_codes_are_refused() {
    let mut all = vec![
        Reject::UnknownSymbol,
        Reject::UnknownAccount,
        Reject::DuplicateClOrdId,
        Reject::UnknownOrder,
        Reject::InvalidPrice,
        Reject::InvalidQty,
        Reject::DuplicateOrderId,
        Reject::PostOnlyWouldCross,
        Reject::CapacityExceeded,
        Reject::ReplaceSymbolDiffers,
        Reject::ReplaceQtyAtOrBelowFilled,
        Reject::ReplaceMarketOrder,
        Reject::ExchangeBusy,
        Reject::AuctionCall,
        Reject::ExpireTimePast,
        Reject::StopPriceChange,
    ];
    all.extend(FIELDS.iter().map(|&f| Reject::InvalidField(f)));
    let mut seen = std::collections::HashSet::new();
    // MarketClosed carries its opening time in four more bytes.
    for opens_at_s in [0, 8 * 3600, 86_399] {
        let r = Reject::MarketClosed { opens_at_s };
        let b = encoded(|e| r.encode(e));
        assert_eq!(b.len(), 6);
        let mut d = Dec(&b);
        assert_eq!(Reject::decode(&mut d), Ok(r));
        assert_eq!(d.end(), Ok(()));
        assert!(Reject::decode(&mut Dec(&b[..5])).is_err());
    }
    let late = encoded(|e| {
        e.u8(15);
        e.u8(0);
        e.u32(86_400);
    });
    assert!(Reject::decode(&mut Dec(&late)).is_err());
    // The open-order limits carry the limit (and the account) after the two bytes.
    for r in [
        Reject::FirmOpenOrderLimit { limit: 10_000 },
        Reject::AccountOpenOrderLimit {
            account: 7,
            limit: u64::MAX,
        },
    ] {
        let b = encoded(|e| r.encode(e));
        let mut d = Dec(&b);
        assert_eq!(Reject::decode(&mut d), Ok(r));
        assert_eq!(d.end(), Ok(()));
        assert!(Reject::decode(&mut Dec(&b[..b.len() - 1])).is_err());
    }
    for r in all {
        let b = encoded(|e| r.encode(e));
        assert_eq!(b.len(), 2);
        assert!(seen.insert(b.clone()), "{r:?} has a code of its own");
        let mut d = Dec(&b);
        assert_eq!(Reject::decode(&mut d), Ok(r));
        assert_eq!(d.end(), Ok(()));
        assert!(Reject::decode(&mut Dec(&b[..1])).is_err());
    }
    let decode = |b: [u8; 2]| Reject::decode(&mut Dec(&b));
    assert_eq!(decode([0, 0]), Err(DecodeError("bad reject reason")));
    assert_eq!(decode([25, 0]), Err(DecodeError("bad reject reason")));
    assert_eq!(decode([19, 0]), Err(DecodeError("bad risk limit kind")));
    assert_eq!(decode([255, 0]), Err(DecodeError("bad reject reason")));
    assert_eq!(decode([3, 1]), Err(DecodeError("bad reject field")));
    assert_eq!(
        decode([7, FIELDS.len() as u8]),
        Err(DecodeError("bad reject field"))
    );
}
