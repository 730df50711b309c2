use super::*;
use crate::decode::Decoder;
use crate::wrap_body;

fn with_msg<R>(body: &str, f: impl FnOnce(&Message<'_>) -> R) -> R {
    let mut buf = Vec::new();
    let body = format!("35={body}").replace('|', "\x01");
    wrap_body(FixVersion::Fix44, body.as_bytes(), &mut buf);
    let mut d = Decoder::default();
    let m = d.decode(&buf).expect("decodes");
    f(&m)
}

const HEADER: &str = "49=C|56=R|34=2|52=20261127-10:00:00|";

#[test]
fn reads_a_market_data_request_with_several_symbols() {
    let body =
        format!("V|{HEADER}262=r1|263=1|264=5|265=1|267=3|269=0|269=1|269=2|146=2|55=AAA|55=BBB|");
    let r = with_msg(&body, |m| {
        MarketDataRequest::read(m).map(|r| {
            (
                r.md_req_id.to_vec(),
                r.subscription,
                r.depth,
                r.incremental,
                r.entry_types,
                r.symbols.iter().map(|s| s.to_vec()).collect::<Vec<_>>(),
            )
        })
    });
    let (id, sub, depth, inc, types, syms) = r.unwrap();
    assert_eq!(id, b"r1");
    assert_eq!(sub, SubscriptionType::Subscribe);
    assert_eq!((depth, inc), (5, true));
    assert_eq!(
        types,
        EntryTypes {
            bids: true,
            offers: true,
            trades: true,
            indicative: false,
        }
    );
    assert_eq!(syms, vec![b"AAA".to_vec(), b"BBB".to_vec()]);
}

#[test]
fn refuses_what_it_cannot_serve_with_the_right_message() {
    let cases: &[(&str, Result<MdRejectReason, SessionRejectReason>)] = &[
        // No MDReqID: nothing to reject with a Y.
        (
            "263=1|264=0|267=1|269=0|146=1|55=A|",
            Err(SessionRejectReason::RequiredTagMissing),
        ),
        (
            "262=a|263=7|264=0|267=1|269=0|146=1|55=A|",
            Ok(MdRejectReason::UnsupportedSubscriptionRequestType),
        ),
        (
            "262=a|263=1|264=x|267=1|269=0|146=1|55=A|",
            Ok(MdRejectReason::UnsupportedMarketDepth),
        ),
        (
            "262=a|263=1|264=0|265=3|267=1|269=0|146=1|55=A|",
            Ok(MdRejectReason::UnsupportedMdUpdateType),
        ),
        (
            "262=a|263=1|264=0|267=1|269=4|146=1|55=A|",
            Ok(MdRejectReason::UnsupportedMdEntryType),
        ),
        (
            "262=a|263=1|264=0|266=N|267=1|269=0|146=1|55=A|",
            Ok(MdRejectReason::UnsupportedAggregatedBook),
        ),
        (
            "262=a|263=1|264=0|267=2|269=0|146=1|55=A|",
            Err(SessionRejectReason::IncorrectNumInGroupCount),
        ),
        (
            "262=a|263=1|264=0|267=1|269=0|",
            Err(SessionRejectReason::RequiredTagMissing),
        ),
        (
            "262=a|263=1|267=1|269=0|146=1|55=A|",
            Err(SessionRejectReason::RequiredTagMissing),
        ),
    ];
    for (fields, want) in cases {
        let body = format!("V|{HEADER}{fields}");
        let got = with_msg(&body, |m| MarketDataRequest::read(m).map(|_| ()));
        match (got, want) {
            (Err(MdRefusal::Reject { reason, .. }), Ok(w)) => assert_eq!(reason, *w, "{fields}"),
            (Err(MdRefusal::Session { reason, .. }), Err(w)) => assert_eq!(reason, *w, "{fields}"),
            (g, w) => panic!("{fields}: got {g:?}, want {w:?}"),
        }
    }
    // An unsubscribe needs its MDReqID only.
    let body = format!("V|{HEADER}262=a|263=2|");
    let r = with_msg(&body, |m| {
        MarketDataRequest::read(m).map(|r| r.subscription)
    });
    assert_eq!(r, Ok(SubscriptionType::Unsubscribe));
}

fn entries() -> Vec<MdEntry<'static>> {
    vec![
        MdEntry {
            symbol: b"AAA",
            price_decimals: 2,
            action: b'0',
            entry_type: MdEntryType::Bid,
            price: 10050,
            size: 30,
            orders: Some(2),
            trade_id: None,
            aggressor: None,
            rpt_seq: 7,
        },
        MdEntry {
            symbol: b"AAA",
            price_decimals: 2,
            action: b'0',
            entry_type: MdEntryType::Trade,
            price: 10100,
            size: 5,
            orders: None,
            trade_id: Some(42),
            aggressor: Some(Side::Sell),
            rpt_seq: 8,
        },
    ]
}

fn encode(version: FixVersion, f: impl FnOnce(&mut Encoder)) -> String {
    let mut e = Encoder::default();
    e.begin_body();
    f(&mut e);
    let _ = version;
    String::from_utf8(e.body().to_vec())
        .unwrap()
        .replace('\x01', "|")
}

#[test]
fn incremental_fields_follow_each_versions_dictionary() {
    let es = entries();
    let x = |v, extensions| {
        encode(v, |e| {
            MarketDataIncremental {
                md_req_id: b"r1",
                extensions,
                entries: &es,
            }
            .encode_body(v, e)
        })
    };
    assert_eq!(
        x(FixVersion::Fix44, false),
        "262=r1|268=2|279=0|269=0|55=AAA|270=100.5|271=30|346=2|279=0|269=2|278=42|55=AAA|270=101|271=5|"
    );
    assert_eq!(x(FixVersion::Fix42, false), x(FixVersion::Fix44, false));
    assert_eq!(
        x(FixVersion::Fix50Sp2, false),
        "262=r1|268=2|279=0|269=0|55=AAA|270=100.5|271=30|346=2|83=7|279=0|269=2|278=42|55=AAA|270=101|271=5|1003=42|83=8|"
    );
    assert_eq!(
        x(FixVersion::Fix44, true),
        "262=r1|268=2|279=0|269=0|55=AAA|270=100.5|271=30|346=2|83=7|279=0|269=2|278=42|55=AAA|270=101|271=5|83=8|2446=2|"
    );
}

#[test]
fn an_empty_snapshot_says_its_rpt_seq_where_rpt_seq_is_written() {
    let w = |v| {
        encode(v, |e| {
            MarketDataSnapshot {
                md_req_id: b"r1",
                symbol: b"AAA",
                extensions: false,
                entries: &[],
                rpt_seq: 9,
            }
            .encode_body(v, e)
        })
    };
    assert_eq!(w(FixVersion::Fix44), "262=r1|55=AAA|268=0|");
    assert_eq!(w(FixVersion::Fix50Sp2), "262=r1|55=AAA|268=1|269=J|83=9|");
    let ext = encode(FixVersion::Fix44, |e| {
        MarketDataSnapshot {
            md_req_id: b"r1",
            symbol: b"AAA",
            extensions: true,
            entries: &[],
            rpt_seq: 9,
        }
        .encode_body(FixVersion::Fix44, e)
    });
    assert_eq!(
        ext, "262=r1|55=AAA|268=1|269=J|83=9|",
        "extensions carry it too"
    );
}

#[test]
fn a_subscriber_reads_back_what_was_written() {
    for v in [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2] {
        let es = entries();
        let body = encode(v, |e| {
            MarketDataIncremental {
                md_req_id: b"r1",
                extensions: true,
                entries: &es,
            }
            .encode_body(v, e)
        });
        let msg = format!("X|{HEADER}{body}");
        let got = with_msg(&msg, |m| {
            let mut got = Vec::new();
            let n = read_entries(m, |req, e| {
                assert_eq!(req, b"r1");
                got.push((
                    e.action,
                    e.entry_type,
                    e.symbol.to_vec(),
                    e.price.to_vec(),
                    e.size,
                    e.orders,
                    e.rpt_seq,
                    e.id,
                    e.aggressor,
                ));
            });
            (n, got)
        });
        assert_eq!(got.0, Ok(2));
        assert_eq!(
            got.1,
            vec![
                (
                    Some(b'0'),
                    b'0',
                    b"AAA".to_vec(),
                    b"100.5".to_vec(),
                    30,
                    Some(2),
                    Some(7),
                    None,
                    None
                ),
                (
                    Some(b'0'),
                    b'2',
                    b"AAA".to_vec(),
                    b"101".to_vec(),
                    5,
                    None,
                    Some(8),
                    Some(42),
                    Some(b'2')
                ),
            ]
        );
        let snap = encode(v, |e| {
            MarketDataSnapshot {
                md_req_id: b"r1",
                symbol: b"AAA",
                extensions: true,
                entries: &es[..1],
                rpt_seq: 7,
            }
            .encode_body(v, e)
        });
        let msg = format!("W|{HEADER}{snap}");
        let got = with_msg(&msg, |m| {
            let mut got = Vec::new();
            read_entries(m, |_, e| {
                got.push((e.action, e.symbol.to_vec(), e.size, e.rpt_seq))
            })
            .unwrap();
            got
        });
        assert_eq!(got, vec![(None, b"AAA".to_vec(), 30, Some(7))]);
    }
}

#[test]
fn reads_security_requests() {
    let body = format!("x|{HEADER}320=s1|559=4|");
    let r = with_msg(&body, |m| {
        SecurityListRequest::read(m).map(|r| r.scope.is_ok())
    });
    assert_eq!(r, Ok(true));
    let body = format!("x|{HEADER}320=s1|559=1|");
    let r = with_msg(&body, |m| {
        SecurityListRequest::read(m).map(|r| r.scope.is_err())
    });
    assert_eq!(r, Ok(true));
    let body = format!("e|{HEADER}324=q|55=AAA|263=0|");
    let r = with_msg(&body, |m| {
        SecurityStatusRequest::read(m).map(|r| (r.symbol.to_vec(), r.subscription))
    });
    assert_eq!(r, Ok((b"AAA".to_vec(), SubscriptionType::Snapshot)));
    let body = format!("e|{HEADER}324=q|263=0|");
    assert!(with_msg(&body, |m| SecurityStatusRequest::read(m).is_err()));
}

#[test]
fn security_list_fields_follow_each_versions_dictionary() {
    let ins = [ListedInstrument {
        symbol: b"AAA",
        lot: 10,
        tick: 5,
        price_decimals: 2,
    }];
    let y = |v| {
        encode(v, |e| {
            SecurityList {
                security_req_id: b"s1",
                security_response_id: 3,
                result: b'0',
                instruments: &ins,
            }
            .encode_body(v, e)
        })
    };
    assert_eq!(
        y(FixVersion::Fix44),
        "320=s1|322=3|560=0|393=1|146=1|55=AAA|561=10|"
    );
    assert_eq!(
        y(FixVersion::Fix50Sp2),
        "320=s1|322=3|560=0|393=1|146=1|55=AAA|969=0.05|561=10|"
    );
}
