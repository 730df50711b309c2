use super::*;
use exchange::codec::{Dec, Enc};
use types::{OrdType, TimeInForce};

fn round_trip(i: &ApiInput) {
    let mut buf = Vec::new();
    i.encode(&mut Enc(&mut buf));
    let mut d = Dec(&buf);
    let back = ApiInput::decode(&mut d).expect("decodes");
    d.end().expect("nothing left");
    assert_eq!(&back, i);
    // Every shorter prefix is an error, never a panic.
    for n in 0..buf.len() {
        let mut d = Dec(&buf[..n]);
        assert!(ApiInput::decode(&mut d).and_then(|_| d.end()).is_err());
    }
}

#[test]
fn every_request_round_trips() {
    let cl = ClOrdId::new("abc-1").unwrap();
    let ops = [
        ApiOp::New(NewOrder {
            cl_ord_id: cl,
            symbol: 2,
            side: Side::Sell,
            ord_type: OrdType::Limit,
            tif: TimeInForce::Ioc,
            price: 1025,
            qty: 7,
            account: Some(4),
            post_only: true,
            ..Default::default()
        }),
        ApiOp::Cancel(OrderRef::Id(17)),
        ApiOp::Cancel(OrderRef::Client(cl)),
        ApiOp::Replace {
            order: OrderRef::Id(3),
            price: Some(-5),
            qty: None,
            cl_ord_id: Some(cl),
            stop_price: None,
        },
        ApiOp::Replace {
            order: OrderRef::Client(cl),
            price: None,
            qty: Some(9),
            cl_ord_id: None,
            stop_price: None,
        },
        ApiOp::CancelAll {
            symbol: Some(1),
            side: Some(Side::Buy),
        },
        ApiOp::CancelAll {
            symbol: None,
            side: None,
        },
        ApiOp::Get(OrderRef::Id(u64::MAX)),
        ApiOp::ListOpen { symbol: None },
        ApiOp::ListOpen { symbol: Some(0) },
        ApiOp::New(NewOrder {
            cl_ord_id: cl,
            symbol: 1,
            side: Side::Buy,
            ord_type: OrdType::Limit,
            tif: TimeInForce::Gtd,
            price: 1025,
            qty: 10,
            account: None,
            post_only: false,
            stop_price: 1030,
            display_qty: 2,
            expire_ns: u64::MAX,
        }),
        ApiOp::New(NewOrder {
            ord_type: OrdType::Market,
            stop_price: -1,
            post_only: true,
            ..NewOrder::default()
        }),
        ApiOp::Replace {
            order: OrderRef::Id(3),
            price: None,
            qty: Some(4),
            cl_ord_id: None,
            stop_price: Some(1030),
        },
        ApiOp::Replace {
            order: OrderRef::Id(3),
            price: Some(7),
            qty: None,
            cl_ord_id: None,
            stop_price: Some(8),
        },
    ];
    for (n, op) in ops.into_iter().enumerate() {
        round_trip(&ApiInput {
            req: n as u64,
            key: 3,
            idem: (n % 2 == 0).then(|| Idem {
                key: format!("k{n}"),
                fingerprint: 0xdead_beef,
            }),
            op,
        });
    }
}

/// A plain new order and a replace without a stop price are encoded as before stop, iceberg
/// and GTD orders existed: journals written then read back the same.
#[test]
fn plain_requests_keep_their_earlier_encoding() {
    let cl = ClOrdId::new("abc-1").unwrap();
    let encode = |op: ApiOp| {
        let mut buf = Vec::new();
        ApiInput {
            req: 1,
            key: 0,
            idem: None,
            op,
        }
        .encode(&mut Enc(&mut buf));
        buf
    };
    let new = encode(ApiOp::New(NewOrder {
        cl_ord_id: cl,
        post_only: true,
        qty: 3,
        ..NewOrder::default()
    }));
    // ..., account (none), then post only as one byte 1: the last byte.
    assert_eq!(new.last(), Some(&1));
    let replace = encode(ApiOp::Replace {
        order: OrderRef::Id(3),
        price: Some(9),
        qty: None,
        cl_ord_id: None,
        stop_price: None,
    });
    let mut earlier = Vec::new();
    let mut e = Enc(&mut earlier);
    e.u64(1);
    e.u32(0);
    e.u8(0);
    e.u8(3);
    e.u8(1);
    e.u64(3);
    e.u8(1);
    e.i64(9);
    e.opt_u64(None);
    e.cl(&ClOrdId::EMPTY);
    assert_eq!(replace, earlier);
    // Flags past the known bits are refused.
    let mut bad = new.clone();
    *bad.last_mut().unwrap() = 4;
    assert!(ApiInput::decode(&mut Dec(&bad)).is_err());
}
