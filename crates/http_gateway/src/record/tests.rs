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
        }),
        ApiOp::Cancel(OrderRef::Id(17)),
        ApiOp::Cancel(OrderRef::Client(cl)),
        ApiOp::Replace {
            order: OrderRef::Id(3),
            price: Some(-5),
            qty: None,
            cl_ord_id: Some(cl),
        },
        ApiOp::Replace {
            order: OrderRef::Client(cl),
            price: None,
            qty: Some(9),
            cl_ord_id: None,
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
